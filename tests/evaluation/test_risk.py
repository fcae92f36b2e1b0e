"""Risk models of a table: prosecutor, journalist, marketer and population uniqueness."""
import numpy as np
import pytest

import hieranon
from hieranon.evaluation import risk as R
from hieranon.hierarchies import readers as H
from hieranon.io.datasets import example_path
from hieranon.privacy import population as P

#: Classes of 1, 2, 3 and 4 records: n = 10, u = 4.
SIZES = np.array([1, 2, 3, 4])


def test_attacker_models_by_hand():
    """Threshold 0.3: 1/|E| exceeds it for |E| = 1, 2, 3 (1/3 > 0.3), 6 records of 10.
    Prosecutor: highest 1/1, average u/n = 4/10. Without a population table the
    journalist sees the same classes and the marketer sum(f/F)/n = 4/10."""
    m = R.risk_models(SIZES, 0.3, R.PopulationModel(sampling_fraction=0.5))
    assert (m.prosecutor_highest, m.prosecutor, m.prosecutor_at_risk) == (1.0, 0.4, 0.6)
    assert (m.journalist_highest, m.journalist, m.journalist_at_risk, m.marketer) == (1.0, 0.4, 0.6, 0.4)
    assert m.journalist_population == "sample" and m.sample_uniques == pytest.approx(0.1)


def test_journalist_and_marketer_with_population_classes():
    """Population classes F = 2, 4, 3, 8 for the sample's 1, 2, 3, 4:
    sum f/F = 1/2 + 2/4 + 3/3 + 4/8 = 2.5, marketer 2.5/10 = 0.25;
    journalist average max(u / sum F, 0.25) = max(4/17, 0.25) = 0.25, highest 1/2,
    at risk: 1/F > 0.3 for F = 2, 3, i.e. 1 + 3 = 4 records of 10."""
    m = R.risk_models(SIZES, 0.3, population_class_sizes=[2, 4, 3, 8])
    assert (m.journalist_highest, m.journalist, m.journalist_at_risk, m.marketer) == (0.5, 0.25, 0.4, 0.25)
    assert m.prosecutor == 0.4 and m.journalist_population == "population table"


def test_population_estimates_and_assumptions():
    m = R.risk_models(SIZES, 0.3, R.PopulationModel(sampling_fraction=0.5))
    assert (m.population_size, m.sampling_fraction, m.sampling_fraction_assumed) == (20, 0.5, False)
    assert m.zayatz == P.zayatz(SIZES, 20) and m.pitman == P.pitman(SIZES, 20) and m.snb == P.snb(SIZES, 20)
    assert (m.dankar, m.dankar_model) == P.dankar(SIZES, 20)
    d = R.risk_models(SIZES, 0.3)  # nothing given: the default fraction, said to be assumed
    assert d.sampling_fraction_assumed and d.population_size == round(10 / R.DEFAULT_SAMPLING_FRACTION)
    n = R.risk_models(SIZES, 0.3, R.PopulationModel(population=1000))
    assert (n.population_size, n.sampling_fraction, n.sampling_fraction_assumed) == (1000, 0.01, False)


def test_population_model_checks():
    with pytest.raises(ValueError, match="not both"):
        R.PopulationModel(sampling_fraction=0.1, population=100)
    with pytest.raises(ValueError, match="sampling fraction"):
        R.PopulationModel(sampling_fraction=1.5)
    with pytest.raises(ValueError, match="population"):
        R.PopulationModel(population=0)


@pytest.fixture(scope="module")
def result():
    import pandas as pd
    df = pd.read_csv(example_path("patients.csv"))
    qis = ["gender", "age", "postcode", "date_of_birth"]
    hs = {q: H.from_arx_csv(example_path(f"patients_hierarchy_{q}.csv"), q) for q in qis}
    return hieranon.anonymize(df.drop(columns=["id"]), qis, hs, k=3)


def test_release_keeps_the_population_of_its_original(result):
    """The release is measured against the population of the original: same N."""
    model = R.PopulationModel(sampling_fraction=0.05)
    before, after, _ = result.risk(population=model)
    assert before.models.population_size == after.models.population_size == round(80 / 0.05)
    assert before.models.prosecutor == pytest.approx(before.risk_mean)
    assert after.models.prosecutor_highest == pytest.approx(after.risk_max) and after.models.dankar == 0.0
    assert before.models.dankar > 0.5  # 76 of the 80 records are sample uniques
    default_before, _, _ = result.risk()
    assert default_before.models.sampling_fraction_assumed and not before.models.sampling_fraction_assumed
    assert "risk" in before.as_dict() and before.as_dict()["risk"]["dankar"] == before.models.dankar
