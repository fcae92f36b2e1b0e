"""hieranon.anonymize takes the population, a weight column and the SUDA
size as the command line does (--sampling-fraction, --weight,
--suda-max-size), and the risk figures of the result use them."""

import numpy as np
import pandas as pd
import pytest

import hieranon
from hieranon import builders as B
from hieranon.io.datasets import example_path
from hieranon.risk import AverageRisk, PopulationModel


def _patients():
    df = pd.read_csv(example_path("patients.csv"), dtype=str)
    df["weight"] = np.linspace(10, 200, len(df))
    hierarchies = {"gender": B.suppression("gender", df["gender"]),
                   "age": B.intervals("age", df["age"], [5, 10, 20]),
                   "postcode": B.masking("postcode", df["postcode"])}
    roles = dict(identifiers=["id"], sensitive=["diagnosis"], insensitive=["date_of_birth", "readmitted"])
    return df, hierarchies, roles


def test_the_population_weights_and_suda_size_reach_the_risk_figures():
    df, hierarchies, roles = _patients()
    result = hieranon.anonymize(df, hierarchies=hierarchies, k=3, privacy=[AverageRisk(0.1)],
                                population=PopulationModel(sampling_fraction=0.05), weight_column="weight",
                                suda_max_size=2, **roles)
    before, after, _ = result.risk()
    assert after.models.sampling_fraction == 0.05 and not after.models.sampling_fraction_assumed
    assert after.models.population_size == round(len(df) / 0.05)
    assert after.individual_risk.weights == "column 'weight'"
    assert before.suda.max_size == 2
    assert result.data["weight"].equals(df["weight"])  # published unchanged
    assert result.statement().holds == ["k = 3, average risk <= 0.1: verified"]
    plain = hieranon.anonymize(df.drop(columns=["weight"]), hierarchies=hierarchies, k=3, **roles)
    assert plain.risk()[1].models.sampling_fraction_assumed


def test_a_bad_weight_column_is_named():
    df, hierarchies, roles = _patients()
    df.loc[3, "weight"] = -1
    with pytest.raises(ValueError, match="weight"):
        hieranon.anonymize(df, hierarchies=hierarchies, k=3, weight_column="weight", **roles)
