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
    (("--population", "pop.csv"), "--population pop.csv: expected a whole number of people or the file of a "
                                   "population table, and there is no file 'pop.csv'"),
    (("--population", EXAMPLE, "--population-table", EXAMPLE), "give the population table once"),
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


def _population_file(tmp_path):
    import pandas as pd

    population = pd.concat([pd.read_csv(EXAMPLE)] * 2, ignore_index=True)
    path = tmp_path / "population.csv"
    population.to_csv(path, index=False)
    return path, population


def _min_population_matches(out, population) -> int:
    """The fewest population records any class of the release matches,
    counted here from the printed values: a population record matches a
    class when each of its values lies under the class's value in the
    example's hierarchy."""
    import numpy as np
    import pandas as pd

    from hieranon.hierarchies.readers import from_file

    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    qis = ["gender", "age", "postcode", "date_of_birth"]
    trees = {q: from_file(example_path(f"patients_hierarchy_{q}.csv"), q) for q in qis}
    leaves = {q: t.codes_of(population[q].astype(str)) for q, t in trees.items()}
    classes = released[qis].drop_duplicates()
    nodes = {q: t.codes_of(classes[q], generalised=True) for q, t in trees.items()}
    matches = [np.all([trees[q].is_ancestor_or_self(np.full(len(population), nodes[q][i]), leaves[q]) for q in qis],
                      axis=0).sum() for i in range(len(classes))]
    return int(min(matches))


def test_population_file_and_config_risk_models_are_met_and_named(tmp_path):
    """``--population FILE`` is the population table; the configuration's
    ``risk_models`` are enforced like the options, and both appear in the
    JSON privacy list and in what holds."""
    path, population = _population_file(tmp_path)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CFG.read_text() + "\nrisk_models:\n  average_risk: 0.08\n", encoding="utf-8")
    for name in [p.name for p in CFG.parent.glob("patients_hierarchy_*.csv")]:
        (tmp_path / name).write_bytes((CFG.parent / name).read_bytes())
    out = tmp_path / "out.csv"

    r = run("anonymize", EXAMPLE, "-o", out, "-c", cfg, "--k-map", "7", "--population", path, "--json")

    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)
    models = {m["kind"]: m for m in report["privacy"]["models"]}
    assert set(models) == {"k-map", "average-risk"}
    released = json.loads(r.stdout)
    import pandas as pd
    sizes = pd.read_csv(out).groupby(["gender", "age", "postcode", "date_of_birth"], dropna=False).size()
    assert models["average-risk"]["after"]["achieved"] == pytest.approx(len(sizes) / sizes.sum())
    assert models["average-risk"]["after"]["table_ok"] is True and models["average-risk"]["ok"]
    assert len(sizes) / sizes.sum() <= 0.08
    assert models["k-map"]["after"]["achieved"] == _min_population_matches(out, population) >= 7
    assert models["k-map"]["before"]["classes_violating"] > 0  # the raw table's classes match 2 records each
    holds = released["statement"]["holds"][0]
    assert "7-map" in holds and "average risk <= 0.08" in holds and holds.endswith("verified")


def test_check_shows_the_configuration_risk_models(tmp_path):
    path, _ = _population_file(tmp_path)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CFG.read_text() + f"\npopulation:\n  table: {path.name}\nrisk_models:\n  k_map: 3\n"
                   "  population_uniqueness: {threshold: 0.05, estimator: zayatz}\n", encoding="utf-8")
    for name in [p.name for p in CFG.parent.glob("patients_hierarchy_*.csv")]:
        (tmp_path / name).write_bytes((CFG.parent / name).read_bytes())

    r = run("check", EXAMPLE, "-c", cfg, "--json")

    assert r.exit_code == 1, r.stderr
    report = json.loads(r.stdout)
    models = {m["kind"]: m for m in report["privacy"]["models"]}
    assert models["k-map"]["before"]["achieved"] == 2 and not models["k-map"]["ok"]  # each row twice in the population
    assert models["population-uniqueness"]["before"]["table_ok"] is False
    assert report["risk"]["population_size"] == 160  # the configuration's table gives the size
