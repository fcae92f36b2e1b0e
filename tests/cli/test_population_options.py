"""--sampling-fraction / --population on check, evaluate and anonymize, and the risk estimates in --json."""
import json

import pytest
from typer.testing import CliRunner

from hieranon import cli
from hieranon.io.datasets import example_path

EXAMPLE, CFG = example_path("patients.csv"), example_path("patients.yaml")
KEYS = {"prosecutor", "journalist", "marketer", "pitman", "zayatz", "snb", "dankar"}


def run(*args):
    return CliRunner().invoke(cli.app, [str(a) for a in args], env={"COLUMNS": "200"})


def test_check_json_risk_object():
    r = run("check", EXAMPLE, "-c", CFG, "--json", "--sampling-fraction", "0.2")
    risk = json.loads(r.stdout)["risk"]
    assert KEYS <= set(risk) and all(isinstance(risk[k], float) and 0 <= risk[k] <= 1 for k in KEYS)
    assert (risk["population_size"], risk["sampling_fraction_assumed"]) == (400, False)
    assert "risk_mean" in json.loads(r.stdout)  # the keys of before stay
    r = run("check", EXAMPLE, "-c", CFG, "--json", "--population", "8000")
    risk = json.loads(r.stdout)["risk"]
    assert risk["population_size"] == 8000 and risk["sampling_fraction"] == 0.01
    assert json.loads(run("check", EXAMPLE, "-c", CFG, "--json").stdout)["risk"]["sampling_fraction_assumed"]


def test_check_prints_the_models():
    r = run("check", EXAMPLE, "-c", CFG)
    assert "journalist" in r.stdout and "Dankar" in r.stdout and "(assumed)" in r.stdout


def test_anonymize_and_evaluate_json(tmp_path):
    out = tmp_path / "out.csv"
    r = run("anonymize", EXAMPLE, "-o", out, "-c", CFG, "--json", "--population", "1600")
    assert r.exit_code == 0, r.stderr
    risk = json.loads(r.stdout)["risk"]
    assert KEYS <= set(risk) and risk["after"]["models"]["population_size"] == 1600
    assert risk["before"]["risk_mean"] > risk["prosecutor"] == risk["after"]["models"]["prosecutor"]
    r = run("evaluate", EXAMPLE, out, "-c", CFG, "--json", "--sampling-fraction", "0.05")
    risk = json.loads(r.stdout)["risk"]
    assert KEYS <= set(risk) and risk["before"]["models"]["population_size"] == 1600


@pytest.mark.parametrize("args, words", [
    (("--sampling-fraction", "2"), "--sampling-fraction 2: expected a number in (0, 1]"),
    (("--sampling-fraction", "0.1", "--population", "100"), "give one of them"),
    (("--population", "pop.csv"), "--population pop.csv: expected a whole number of people (at least 1); a table "
                                   "of the population goes to --population-table FILE"),
    (("--population-table", "no-such-population.csv"), "no-such-population.csv"),
    (("--population", "2.5"), "--population 2.5: expected a whole number"),
    (("--population", "10"), "at least the sample's 80 records"),
])
def test_bad_population_options(args, words, tmp_path):
    r = run("check", EXAMPLE, "-c", CFG, *args)
    assert r.exit_code == 2 and words in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    out = tmp_path / "o.csv"
    r = run("anonymize", EXAMPLE, "-o", out, "-c", CFG, *args)
    assert r.exit_code == 2 and not out.exists()


def test_a_population_table_gives_the_population_size(tmp_path):
    """``--population-table FILE`` is a population table (k-map,
    delta-presence); for the risk estimates its number of records is the
    population's size."""
    import pandas as pd

    population = pd.concat([pd.read_csv(EXAMPLE)] * 5, ignore_index=True)
    path = tmp_path / "population.csv"
    population.to_csv(path, index=False)

    r = run("check", EXAMPLE, "-c", CFG, "--json", "--population-table", path)

    assert r.exit_code == 1 and "Traceback" not in r.stderr  # 1: the raw example is not 3-anonymous
    risk = json.loads(r.stdout)["risk"]
    assert risk["population_size"] == len(population) and risk["sampling_fraction_assumed"] is False
