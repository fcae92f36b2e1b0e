"""--weight and --suda-max-size: the individual risk with sampling weights and SUDA in check, evaluate and
anonymize, and the refusals of a bad weight column."""
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from hieranon import cli
from hieranon.io.datasets import example_path

EXAMPLE, CFG = example_path("patients.csv"), example_path("patients.yaml")
INDIVIDUAL = {"highest", "mean", "at_risk", "global_expected", "global_share"}
SUDA = {"max_size", "dis", "records_with_msu", "highest_dis_suda", "mean_dis_suda"}


def run(*args):
    return CliRunner().invoke(cli.app, [str(a) for a in args], env={"COLUMNS": "200"})


@pytest.fixture()
def weighted(tmp_path):
    df = pd.read_csv(EXAMPLE)
    df["w"] = np.linspace(20, 300, len(df)).round(1)
    path = tmp_path / "weighted.csv"
    df.to_csv(path, index=False)
    return df, path


def test_check_json_keys(weighted):
    _, path = weighted
    r = run("check", path, "-c", CFG, "--weight", "w", "--insensitive", "readmitted", "--json")
    out = json.loads(r.stdout)
    assert INDIVIDUAL <= set(out["individual_risk"]) and SUDA <= set(out["suda"])
    assert out["individual_risk"]["weights"] == "column 'w'"
    assert out["individual_risk"]["global_expected"] == pytest.approx(
        out["individual_risk"]["global_share"] * out["n_records"])
    assert out["suda"]["max_size"] == 3 and out["suda"]["dis_assumed"]
    r = run("check", path, "-c", CFG, "--weight", "w", "--suda-max-size", "1", "--json")
    assert json.loads(r.stdout)["suda"]["max_size"] == 1


def test_weights_change_the_risk(weighted):
    """Records standing for more people are at lower risk than with 1/f = 100 each (weights 20 to 300)."""
    _, path = weighted
    with_w = json.loads(run("check", path, "-c", CFG, "--weight", "w", "--json").stdout)["individual_risk"]
    without = json.loads(run("check", path, "-c", CFG, "--json").stdout)["individual_risk"]
    assert without["weights"].startswith("1/f") and without["sampling_fraction_assumed"]
    assert with_w["global_expected"] != pytest.approx(without["global_expected"])


def test_weight_from_the_configuration(weighted, tmp_path):
    _, path = weighted
    cfg = tmp_path / "cfg.yaml"
    text = CFG.read_text().replace("patients_hierarchy", str(CFG.parent / "patients_hierarchy"))
    cfg.write_text(text + "\nweight: w\nsuda_max_size: 2\n")
    out = json.loads(run("check", path, "-c", cfg, "--json").stdout)
    assert out["individual_risk"]["weights"] == "column 'w'" and out["suda"]["max_size"] == 2


@pytest.mark.parametrize("bad", [0, -3, "many", None])
def test_bad_weight_is_one_line(weighted, tmp_path, bad):
    df, _ = weighted
    df = df.astype({"w": object})
    df.loc[4, "w"] = bad
    path = tmp_path / "bad.csv"
    df.to_csv(path, index=False)
    r = run("check", path, "-c", CFG, "--weight", "w")
    assert r.exit_code == 2 and "Traceback" not in r.output
    line = r.stderr.strip()
    assert "\n" not in line and "'w'" in line and "record 5" in line and "> 0" in line


def test_weight_column_conflicts_and_absence(weighted):
    _, path = weighted
    r = run("check", path, "-c", CFG, "--weight", "age")
    assert r.exit_code == 2 and "weight column" in r.stderr and "--weight" in r.stderr
    r = run("check", path, "-c", CFG, "--weight", "nope")
    assert r.exit_code == 2 and "nope" in r.stderr and "Traceback" not in r.output
    r = run("check", path, "-c", CFG, "--suda-max-size", "0")
    assert r.exit_code == 2 and "--suda-max-size" in r.output


def test_anonymize_and_evaluate_json(weighted, tmp_path):
    _, path = weighted
    out = tmp_path / "out.csv"
    r = run("anonymize", path, "-o", out, "-c", CFG, "--weight", "w", "--insensitive", "readmitted")
    assert r.exit_code == 0, r.stderr
    assert "w" in pd.read_csv(out).columns  # published unchanged
    r = run("evaluate", path, out, "-c", CFG, "--weight", "w", "--json")
    risk = json.loads(r.stdout)["risk"]
    assert INDIVIDUAL <= set(risk["individual_risk"]) and SUDA <= set(risk["suda"])
    assert risk["after"]["individual_risk"]["global_expected"] <= risk["before"]["individual_risk"]["global_expected"]
    r = run("evaluate", path, out, "-c", CFG, "--weight", "w")
    assert "expected re-identifications" in r.stdout and "SUDA" in r.stdout
