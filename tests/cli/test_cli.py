"""End-to-end tests of the command line (SPEC section 7).

Most tests run the Typer app in-process (``typer.testing.CliRunner``, fast);
a few run ``python -m hieranon`` in a subprocess to exercise the real entry
point (exit status 3, lazy imports).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from hieranon import cli
from hieranon.cli.errors import known_errors
from hieranon.evaluation.verify import verify
from hieranon.hierarchies import readers as H
from hieranon.io import read_table
from hieranon.io.datasets import example_path
from hieranon.job.pipeline import DEFAULT_METHOD
from hieranon.report import SECTIONS
from main_runner import run_main

EXAMPLE = example_path("patients.csv")
EXAMPLE_CFG = example_path("patients.yaml")
DATA = EXAMPLE.parent
QIS = ["gender", "age", "postcode", "date_of_birth"]
QI_OPTS = [x for q in QIS for x in ("--qi", f"{q}={DATA / f'patients_hierarchy_{q}.csv'}")]


def run(*args, input_text: str | None = None):
    """Invoke the CLI in-process; stdout and stderr are kept apart."""
    return CliRunner().invoke(cli.app, [str(a) for a in args], input=input_text)


def run_subprocess(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "hieranon", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, **(env or {})})


def example_hierarchies():
    return {q: H.from_arx_csv(DATA / f"patients_hierarchy_{q}.csv", q) for q in QIS}


def assert_verifies(out_path: Path, k: int, drop=("id",), requirements=None):
    original = read_table(EXAMPLE).drop(columns=list(drop))
    out = read_table(out_path)
    report = verify(original, out, QIS, example_hierarchies(), requirements, k=k)
    assert report.ok, report.summary()
    return report


def assert_report_complete(path: Path):
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    for sid in SECTIONS:
        assert f'<section id="{sid}">' in text, f"report lacks section {sid}"
    assert text.count("data:image/png;base64,") >= 2  # generalisation bars and class-size histogram
    assert "<script" not in text.lower()
    assert "http://" not in text and "https://" not in text  # self-contained
    return text


# --------------------------------------------------------------- happy paths
def test_anonymize_example_with_config_report_and_json(tmp_path):
    out, rep = tmp_path / "out.csv", tmp_path / "report.html"
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--report", rep, "--json")
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)  # --json: only JSON on stdout
    assert summary["verified"] is True
    assert summary["metrics"]["achieved_k"] >= 3
    assert summary["method"] == DEFAULT_METHOD == "kaca+"  # the default method
    assert "id" not in read_table(out).columns  # the example's direct identifier is dropped
    assert_verifies(out, k=3)
    text = assert_report_complete(rep)
    assert "patients.csv" in text and "kaca+" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "report.html"]  # no temp files left


def test_anonymize_example_with_qi_options_and_method(tmp_path):
    out = tmp_path / "out.csv"
    r = run("anonymize", EXAMPLE, "-o", out, *QI_OPTS, "-k", 4, "--method", "fulldomain", "--seed", 1, "-q")
    assert r.exit_code == 0, r.stderr
    # -q silences progress and tables; only the warning about the columns without a role remains
    assert r.stdout == "" and r.stderr.startswith("hieranon: warning: 3 column(s) have no role")
    assert len(r.stderr.splitlines()) == 1 and "id (100.0% unique values)" in r.stderr
    assert_verifies(out, k=4, drop=())
    assert list(read_table(out).columns) == list(read_table(EXAMPLE).columns)


def test_anonymize_prints_metrics_table(tmp_path):
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "o.csv", "--config", EXAMPLE_CFG)
    assert r.exit_code == 0, r.stderr
    assert "k achieved" in r.stdout and "verified" in r.stdout


def test_anonymize_bound_prints_and_reports_the_gap_to_the_optimum(tmp_path):
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "o.csv", "--config", EXAMPLE_CFG, "--bound", "--json")
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    bound = summary["lower_bound"]
    assert 0 < bound["distortion_ratio"] <= summary["metrics"]["distortion_ratio"]
    assert bound["output_over_bound"] == pytest.approx(summary["metrics"]["distortion"] / bound["distortion"])
    rep = tmp_path / "r.html"
    table = run("anonymize", EXAMPLE, "-o", tmp_path / "o.csv", "--config", EXAMPLE_CFG, "--bound", "--force",
                "--report", rep)
    assert table.exit_code == 0, table.stderr
    assert "lower bound of any output's distortion ratio" in table.stdout and "output / lower bound" in table.stdout
    assert f"{bound['output_over_bound']:.4f}" in table.stdout  # same run, same numbers
    text = assert_report_complete(rep)
    assert "lower bound of any output&#x27;s distortion ratio" in text or "lower bound of any output's" in text
    plain = run("anonymize", EXAMPLE, "-o", tmp_path / "o.csv", "--config", EXAMPLE_CFG, "--json", "--force")
    assert "lower_bound" not in json.loads(plain.stdout)  # only on request (it takes minutes on large tables)


def test_evaluate_bound_measures_a_table_made_elsewhere(tmp_path):
    out = tmp_path / "o.csv"
    assert run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--method", "fulldomain", "-q").exit_code == 0
    r = run("evaluate", EXAMPLE, out, "--config", EXAMPLE_CFG, "--bound", "--json")
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    bound = summary["lower_bound"]
    assert bound["distortion_ratio"] <= summary["metrics"]["distortion_ratio"]
    assert bound["output_over_bound"] > 1  # a global recoding is far from the best local one
    table = run("evaluate", EXAMPLE, out, "--config", EXAMPLE_CFG, "--bound")
    assert "output / lower bound" in table.stdout and f"{bound['output_over_bound']:.4f}" in table.stdout
    assert "lower_bound" not in json.loads(run("evaluate", EXAMPLE, out, "--config", EXAMPLE_CFG, "--json").stdout)
    rep = tmp_path / "r.html"
    r = run("report", EXAMPLE, out, "--config", EXAMPLE_CFG, "-o", rep, "--bound")
    assert r.exit_code == 0, r.stderr
    assert f"output / lower bound: {bound['output_over_bound']:.4f}" in r.stdout
    assert f"{bound['output_over_bound']:.4f}" in assert_report_complete(rep)


def test_bound_iterations_imply_the_bound_and_set_its_length(tmp_path):
    out = tmp_path / "o.csv"
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--bound-iterations", "2", "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["lower_bound"]["iterations"] <= 2  # the default runs far longer here
    r = run("evaluate", EXAMPLE, out, "--config", EXAMPLE_CFG, "--bound-iterations", "2", "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["lower_bound"]["iterations"] <= 2
    r = run("report", EXAMPLE, out, "--config", EXAMPLE_CFG, "-o", tmp_path / "r.html", "--bound-iterations", "2")
    assert r.exit_code == 0, r.stderr
    assert "output / lower bound" in r.stdout
    bad = run("anonymize", EXAMPLE, "-o", tmp_path / "p.csv", "--config", EXAMPLE_CFG, "--bound-iterations", "0")
    assert bad.exit_code == 2 and "--bound-iterations" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "p.csv").exists()


def test_anonymize_bound_with_distributed_is_bad_input(tmp_path):
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "o.csv", "--config", EXAMPLE_CFG, "--bound", "--distributed")
    assert r.exit_code == 2
    assert "--bound" in r.stderr and "--distributed" in r.stderr
    assert not (tmp_path / "o.csv").exists()


def test_anonymize_force_overwrites(tmp_path):
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--force", "-q")
    assert r.exit_code == 0, r.stderr
    assert_verifies(out, k=3)


def test_anonymize_parquet_output(tmp_path):
    out = tmp_path / "out.parquet"
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "-q")
    assert r.exit_code == 0, r.stderr
    assert_verifies(out, k=3)


def test_require_repeated_with_heuristicmin(tmp_path):
    out = tmp_path / "out.csv"
    reqs = ["gender,age:5", "postcode:8"]
    r = run("anonymize", EXAMPLE, "-o", out, *QI_OPTS, "--require", reqs[0], "--require", reqs[1],
            "--method", "heuristicmin", "--json")
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    assert len(summary["requirements"]) == 2
    assert_verifies(out, k=None, drop=(), requirements=reqs)


def test_require_repeated_rejected_by_single_k_method(tmp_path):
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "o.csv", *QI_OPTS, "--require", "gender,age:5",
            "--require", "postcode:8", "--method", "mondrian")
    assert r.exit_code == 2
    assert "heuristicmin" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_check_and_evaluate(tmp_path):
    r = run("check", EXAMPLE, "--config", EXAMPLE_CFG, "--json")
    assert r.exit_code == 1  # the raw table is not 3-anonymous
    assert json.loads(r.stdout)["ok"] is False
    r = run("check", EXAMPLE, "--config", EXAMPLE_CFG, "-k", 1)
    assert r.exit_code == 0 and "k achieved" in r.stdout
    r = run("check", EXAMPLE, "--config", EXAMPLE_CFG, "-k", 1000)
    assert r.exit_code == 1 and "k = 1000 exceeds the 80 records of the table" in r.stderr
    out = tmp_path / "out.csv"
    assert run("anonymize", EXAMPLE, "-o", out, *QI_OPTS, "-k", 3, "-q").exit_code == 0
    r = run("evaluate", EXAMPLE, out, *QI_OPTS, "-k", 3, "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["verified"] is True


def test_evaluate_and_report_take_the_roles_anonymize_took(tmp_path):
    """A release made with --identifier (dropped), --sensitive and
    --insensitive on the command line is verified and reported with the same
    options, no configuration needed; without --identifier the dropped
    column is named."""
    out, rep = tmp_path / "out.csv", tmp_path / "r.html"
    roles = ["--identifier", "id", "--sensitive", "diagnosis", "--insensitive", "readmitted"]
    assert run("anonymize", EXAMPLE, "-o", out, *QI_OPTS, "-k", 3, *roles, "-q").exit_code == 0
    assert "id" not in read_table(out).columns
    r = run("evaluate", EXAMPLE, out, *QI_OPTS, "-k", 3, *roles, "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["verified"] is True
    r = run("report", EXAMPLE, out, *QI_OPTS, "-k", 3, *roles, "-o", rep, "-q")
    assert r.exit_code == 0, r.stderr
    assert "Verified" in assert_report_complete(rep)
    r = run("evaluate", EXAMPLE, out, *QI_OPTS, "-k", 3, "-q")
    assert r.exit_code == 1 and "'id'" in r.stderr


def test_config_template_parses_and_methods_lists_default():
    from hieranon.job import config as C
    r = run("config-template")
    assert r.exit_code == 0
    cfg = C.parse(yaml.safe_load(r.stdout))
    assert cfg.k == 5 and set(cfg.quasi_identifiers) == {"age", "gender", "postcode", "date_of_birth"}
    r = run("methods")
    assert r.exit_code == 0 and "kaca+" in r.stdout and "(default)" in r.stdout
    default = [m["method"] for m in json.loads(run("methods", "--json").stdout) if m["default"]]
    assert default == ["kaca+"]


# ----------------------------------------------------------------- report
# --------------------------------------------------------------- risk threshold, class sizes
def wide(*args):
    """run() with a wide console, so rich does not wrap the table's labels."""
    return CliRunner().invoke(cli.app, [str(a) for a in args], env={"COLUMNS": "200"})


def test_check_risk_threshold_and_class_size_rows(tmp_path):
    r = run("check", EXAMPLE, "--config", EXAMPLE_CFG, "--json")
    default = json.loads(r.stdout)
    assert default["threshold"] == pytest.approx(1 / 3)  # 1/k of the configuration's k = 3
    hist = {int(s): c for s, c in default["class_size_histogram"].items()}
    r = run("check", EXAMPLE, "--config", EXAMPLE_CFG, "--json", "--risk-threshold", 0.5)
    got = json.loads(r.stdout)
    assert got["threshold"] == 0.5
    # records at risk above 0.5 are those in classes of size 1 (risk 1); above 1/3 also size 2
    assert got["records_at_risk"] == hist.get(1, 0)
    assert default["records_at_risk"] == sum(s * c for s, c in hist.items() if s < 3)
    assert got["records_at_risk"] < default["records_at_risk"]
    # the class-size distribution in JSON: every record in exactly one bin
    dist = got["class_size_distribution"]
    assert sum(b["records"] for b in dist) == got["n_records"] and sum(b["classes"] for b in dist) == got["n_classes"]
    # ... and in the console table, with the threshold in the risk row
    r = wide("check", EXAMPLE, "--config", EXAMPLE_CFG, "--risk-threshold", 0.5)
    assert r.exit_code == 1
    assert f"records at risk (risk above 0.5) | {hist.get(1, 0)}" in " | ".join(
        " ".join(x.split()) for x in r.stdout.replace("│", "|").split("|"))
    one = f"{hist[1]} class{'es' if hist[1] != 1 else ''} / {hist[1]} record{'s' if hist[1] != 1 else ''}"
    assert "classes of size 1 (below k)" in r.stdout and one in r.stdout
    # the threshold from the configuration
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(EXAMPLE_CFG.read_text().replace("k: 3", "k: 3\nrisk_threshold: 0.5")
                   .replace("patients_hierarchy", str(DATA / "patients_hierarchy")))
    r = run("check", EXAMPLE, "--config", cfg, "--json")
    assert json.loads(r.stdout)["threshold"] == 0.5
    r = run("check", EXAMPLE, "--config", cfg, "--json", "--risk-threshold", 1)  # the option overrides it
    assert json.loads(r.stdout)["threshold"] == 1 and json.loads(r.stdout)["records_at_risk"] == 0


def test_check_class_size_bins_follow_k(tmp_path):
    """On an anonymised table (classes of 3 and more) the bins split at k."""
    out = tmp_path / "out.csv"
    assert run("anonymize", EXAMPLE, "-o", out, *QI_OPTS, "-k", 3, "--method", "fulldomain", "-q").exit_code == 0
    r = run("check", out, *QI_OPTS, "-k", 7, "--json")
    got = json.loads(r.stdout)
    labels = [b["sizes"] for b in got["class_size_distribution"]]
    assert labels[:6] == ["1", "2", "3-4", "5-6", "7-9", "10-13"]  # 7 = k and 14 = 2k are bin edges
    hist = {int(s): c for s, c in got["class_size_histogram"].items()}
    below = sum(s * c for s, c in hist.items() if s < 7)
    assert sum(b["records"] for b in got["class_size_distribution"] if b["below_k"]) == below
    assert got["requirements"][0]["records_below_k"] == below
    r = wide("check", out, *QI_OPTS, "-k", 7)
    assert "classes of size 5-6 (below k)" in r.stdout and "classes of size 7-9 " in r.stdout


@pytest.mark.parametrize("bad", ["0", "1.5", "-0.1"])
def test_risk_threshold_out_of_range_is_bad_input(tmp_path, bad):
    for args in (("check", EXAMPLE), ("anonymize", EXAMPLE, "-o", tmp_path / "o.csv"),
                 ("report", EXAMPLE, EXAMPLE, "-o", tmp_path / "r.html")):
        r = run(*args, "--config", EXAMPLE_CFG, "--risk-threshold", bad)
        assert r.exit_code == 2, (args, r.stderr)
        assert "--risk-threshold" in r.stderr and "(0, 1]" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_anonymize_and_report_pass_the_risk_threshold(tmp_path):
    out, rep = tmp_path / "out.csv", tmp_path / "r.html"
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--report", rep, "--json",
            "--risk-threshold", 0.3)
    assert r.exit_code == 0, r.stderr
    risk = json.loads(r.stdout)["risk"]
    assert risk["threshold"] == 0.3
    before = json.loads(run("check", EXAMPLE, "--config", EXAMPLE_CFG, "--json", "--risk-threshold", 0.3).stdout)
    assert risk["before"]["records_at_risk"] == before["records_at_risk"] > 0
    after = json.loads(run("check", out, *QI_OPTS, "-k", 3, "--json", "--risk-threshold", 0.3).stdout)
    assert risk["after"]["records_at_risk"] == after["records_at_risk"]  # classes of 3 (risk 0.33) are at risk
    assert after["records_at_risk"] == sum(int(s) * c for s, c in after["class_size_histogram"].items()
                                           if 1 / int(s) > 0.3)
    assert "risk &gt; 0.3" in rep.read_text(encoding="utf-8")
    # console table
    r = wide("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--force", "--risk-threshold", 0.3)
    assert r.exit_code == 0, r.stderr
    assert "records at risk (risk above 0.3) before / after" in r.stdout
    # the report command, from the option and from the default
    r = run("report", EXAMPLE, out, "--config", EXAMPLE_CFG, "-o", rep, "--force", "--json", "--risk-threshold", 0.3)
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["risk"]["after"]["records_at_risk"] == after["records_at_risk"]
    assert "risk &gt; 0.3" in rep.read_text(encoding="utf-8")
    r = run("report", EXAMPLE, out, "--config", EXAMPLE_CFG, "-o", rep, "--force")
    assert r.exit_code == 0 and "records at risk (risk above 0.333) before / after" in r.stdout
    assert "risk &gt; 0.333" in rep.read_text(encoding="utf-8")
    assert "before / after: " in r.stdout and r.stdout.split("before / after: ")[1].split()[2] == "0"


def test_default_risk_threshold_is_one_over_k(tmp_path):
    """A k-anonymous release never reads as "all records at risk": the default
    threshold is 1/k of the largest k required; an explicit one still wins."""
    out = tmp_path / "out.csv"
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--json")
    risk = json.loads(r.stdout)["risk"]
    assert risk["threshold"] == pytest.approx(1 / 3) and risk["after"]["records_at_risk"] == 0
    assert risk["before"]["records_at_risk"] > 0
    r = run("anonymize", EXAMPLE, "-o", out, *QI_OPTS, "-k", 4,
            "--require", "gender,age:6", "--method", "heuristicmin", "--json", "--force")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["risk"]["threshold"] == pytest.approx(1 / 6)
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--json", "--force", "--risk-threshold", 0.2)
    assert json.loads(r.stdout)["risk"]["threshold"] == 0.2


def test_report_command_on_existing_pair(tmp_path):
    out = tmp_path / "out.csv"
    assert run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "-q").exit_code == 0
    rep = tmp_path / "r.html"
    r = run("report", EXAMPLE, out, "--config", EXAMPLE_CFG, "-o", rep, "--method", "kaca1")
    assert r.exit_code == 0, r.stderr
    text = assert_report_complete(rep)
    assert "Verified" in text
    r = run("report", EXAMPLE, out, "--config", EXAMPLE_CFG, "-o", rep)
    assert r.exit_code == 2 and "already exists" in r.stderr
    r = run("report", EXAMPLE, out, "--config", EXAMPLE_CFG, "-o", rep, "--force", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["verified"] is True


def test_report_command_on_failing_pair_writes_report_exit_1(tmp_path):
    # the original itself as the "anonymised" table: fails k = 3
    rep = tmp_path / "r.html"
    r = run("report", EXAMPLE, EXAMPLE, *QI_OPTS, "-k", 3, "-o", rep)
    assert r.exit_code == 1
    assert "VERIFICATION FAILED" in r.stderr
    text = assert_report_complete(rep)
    assert "FAILED" in text


def test_report_command_on_non_generalising_pair(tmp_path):
    out = tmp_path / "out.csv"
    assert run("anonymize", EXAMPLE, "-o", out, *QI_OPTS, "-k", 3, "-q").exit_code == 0
    df = read_table(out)
    df.loc[0, "gender"] = "robot"
    df.to_csv(out, index=False)
    rep = tmp_path / "r.html"
    r = run("report", EXAMPLE, out, *QI_OPTS, "-k", 3, "-o", rep)
    assert r.exit_code == 1
    text = rep.read_text()
    assert "robot" in text and "Not available" in text


# -------------------------------------------------------------- hierarchy
@pytest.mark.parametrize("builder, column, height", [
    (["--intervals", "5,10,20"], "age", 5),
    (["--mask", "4"], "postcode", 5),
    (["--dates", "dmy"], "date_of_birth", 4),
    (["--suppress"], "gender", 2),
])
def test_hierarchy_build_and_check(tmp_path, builder, column, height):
    out = tmp_path / f"{column}.csv"
    r = run("hierarchy", "build", "--column", column, "--input", EXAMPLE, *builder, "-o", out)
    assert r.exit_code == 0, r.stderr
    h = H.from_arx_csv(out, column)
    assert h.height == height
    data = read_table(EXAMPLE)
    assert set(data[column].unique()) <= set(h.leaf_index)
    r = run("hierarchy", "check", EXAMPLE, "--qi", f"{column}={out}")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert f"{column}: ok" in r.stdout
    # stdout when no -o
    r = run("hierarchy", "build", "--column", column, "--input", EXAMPLE, *builder)
    assert r.exit_code == 0 and r.stdout == out.read_text()


def test_hierarchy_build_intervals_match_arx_alignment(tmp_path):
    r = run("hierarchy", "build", "--column", "age", "--input", EXAMPLE, "--intervals", "5,10")
    first = {line.split(";")[0]: line.split(";") for line in r.stdout.splitlines()}
    assert first["26"] == ["26", "[25, 30)", "[20, 30)", "*"]


@pytest.mark.parametrize("args, message", [
    ([], "exactly one of"),
    (["--mask", "4", "--suppress"], "exactly one of"),
    (["--intervals", "5,x"], "comma-separated numbers"),
    (["--intervals", "5,7"], "multiple"),
    (["--mask", "0"], "length"),
    (["--dates", "ydm"], "dmy"),
])
def test_hierarchy_build_bad_options(tmp_path, args, message):
    r = run("hierarchy", "build", "--column", "age", "--input", EXAMPLE, *args, "-o", tmp_path / "h.csv")
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, message)
    assert list(tmp_path.iterdir()) == []


def test_hierarchy_build_bad_data(tmp_path):
    r = run("hierarchy", "build", "--column", "gender", "--input", EXAMPLE, "--intervals", "5",
            "-o", tmp_path / "h.csv")
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, "'gender'")
    r = run("hierarchy", "build", "--column", "nosuch", "--input", EXAMPLE, "--suppress", "-o", tmp_path / "h.csv")
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, "nosuch")
    r = run("hierarchy", "build", "--column", "date_of_birth", "--input", EXAMPLE, "--dates", "ymd")
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, "not a date")
    assert list(tmp_path.iterdir()) == []


def test_hierarchy_build_refuses_existing_output(tmp_path):
    out = tmp_path / "h.csv"
    out.write_text("keep\n")
    r = run("hierarchy", "build", "--column", "gender", "--input", EXAMPLE, "--suppress", "-o", out)
    assert r.exit_code == 2 and "already exists" in r.stderr
    assert out.read_text() == "keep\n"


def test_hierarchy_check_lists_missing_values(tmp_path):
    short = tmp_path / "postcode.csv"
    lines = (DATA / "patients_hierarchy_postcode.csv").read_text().splitlines()
    short.write_text("\n".join(line for line in lines if not line.startswith(("4699", "4301"))) + "\n")
    r = run("hierarchy", "check", EXAMPLE, "--qi", f"postcode={short}",
            "--qi", f"gender={DATA / 'patients_hierarchy_gender.csv'}")
    assert r.exit_code == 1
    assert "postcode: 2 value(s) missing from the hierarchy: '4301', '4699'" in r.stdout
    assert "gender: ok" in r.stdout
    r = run("hierarchy", "check", EXAMPLE, "--qi", f"postcode={short}", "--json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["ok"] is False and doc["attributes"]["postcode"]["missing"] == ["4301", "4699"]
    r = run("hierarchy", "check", EXAMPLE, "--config", EXAMPLE_CFG)
    assert r.exit_code == 0


def test_hierarchy_check_absent_column(tmp_path):
    r = run("hierarchy", "check", EXAMPLE, "--qi", f"nosuch={DATA / 'patients_hierarchy_gender.csv'}")
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, "nosuch")


# -------------------------------------------------------------- bad input
def assert_one_line_error(stderr: str, *fragments: str):
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got: {stderr!r}"
    assert lines[0].startswith("hieranon: error: "), lines[0]
    assert "Traceback" not in stderr
    for f in fragments:
        assert f.lower() in lines[0].lower(), f"{f!r} not in {lines[0]!r}"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _bad_config_key(d: Path) -> list:
    cfg = yaml.safe_load(EXAMPLE_CFG.read_text())
    cfg["quasi_identifiers"] = {q: str(DATA / f) for q, f in cfg["quasi_identifiers"].items()}
    cfg["methdo"] = "kaca1"
    return ["--config", _write(d / "cfg" / "bad.yaml", yaml.safe_dump(cfg))]


def _missing_value_hierarchy(d: Path) -> list:
    lines = (DATA / "patients_hierarchy_postcode.csv").read_text().splitlines()
    h = _write(d / "cfg" / "postcode.csv", "\n".join(x for x in lines if not x.startswith("4699")) + "\n")
    return [*QI_OPTS[:4], "--qi", f"postcode={h}", "-k", "3"]


BAD_INPUTS = {
    # name: (args after INPUT given a scratch dir, input path or None for the example, expected fragments)
    "missing input": (lambda d: [*QI_OPTS, "-k", "3"], lambda d: d / "cfg" / "nosuch.csv",
                      ["nosuch.csv", "does not exist"]),
    "binary garbage": (lambda d: [*QI_OPTS, "-k", "3"],
                       lambda d: (d / "cfg" / "garbage.csv").write_bytes(bytes(range(256)) * 40)
                       and d / "cfg" / "garbage.csv",
                       ["garbage.csv", "utf-8"]),
    "wrong encoding": (lambda d: [*QI_OPTS, "-k", "3"],
                       lambda d: (d / "cfg" / "latin.csv").write_bytes(
                           EXAMPLE.read_text().replace("stress", "stréss").encode("latin-1"))
                       and d / "cfg" / "latin.csv",
                       ["latin.csv", "--encoding"]),
    "config key misspelt": (_bad_config_key, None, ["methdo", "did you mean 'method'"]),
    "hierarchy missing a value": (_missing_value_hierarchy, None, ["postcode", "4699"]),
    "QI column absent": (lambda d: [*QI_OPTS, "--qi", f"nosuch={DATA / 'patients_hierarchy_gender.csv'}", "-k", "3"],
                         None, ["nosuch", "not in the table"]),
    "k below 1": (lambda d: [*QI_OPTS, "-k", "0"], None, ["k", ">= 1"]),
    "k above rows": (lambda d: [*QI_OPTS, "-k", "1000"], None, ["k=1000", "80 records"]),
    "k in config below 1": (lambda d: ["--config", _write(d / "cfg" / "k0.yaml", yaml.safe_dump(
        {"quasi_identifiers": {q: str(DATA / f"patients_hierarchy_{q}.csv") for q in QIS}, "k": 0}))],
        None, ["k:", ">= 1"]),
    "unknown method": (lambda d: [*QI_OPTS, "-k", "3", "--method", "kaka1"], None, ["kaka1"]),
    "bad requirement": (lambda d: [*QI_OPTS, "--require", "gender,salary:3"], None, ["salary"]),
    "no quasi-identifiers": (lambda d: ["-k", "3"], None, ["quasi-identifiers"]),
    "config file missing": (lambda d: ["--config", d / "cfg" / "none.yaml"], None, ["none.yaml", "does not exist"]),
    "hierarchy file missing": (lambda d: ["--qi", f"age={d / 'cfg' / 'none.csv'}", "-k", "3"], None, ["none.csv"]),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, case):
    make_args, make_input, fragments = BAD_INPUTS[case]
    (tmp_path / "cfg").mkdir()
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    args = make_args(tmp_path)
    inp = make_input(tmp_path) if make_input else EXAMPLE
    r = run("anonymize", inp, "-o", out_dir / "out.csv", *args, "--report", out_dir / "r.html")
    assert r.exit_code == 2, (r.exit_code, r.stderr, r.exception)
    assert_one_line_error(r.stderr, *fragments)
    assert r.stdout == ""
    assert list(out_dir.iterdir()) == []  # no output, no report, no temp files


def test_output_in_missing_directory(tmp_path):
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "nodir" / "out.csv", "--config", EXAMPLE_CFG)
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, "nodir", "does not exist")
    assert list(tmp_path.iterdir()) == []


def test_report_in_missing_directory(tmp_path):
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "out.csv", "--config", EXAMPLE_CFG,
            "--report", tmp_path / "nodir" / "r.html")
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, "nodir")
    assert list(tmp_path.iterdir()) == []


def test_existing_output_without_force(tmp_path):
    out = tmp_path / "out.csv"
    out.write_text("precious\n")
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG)
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, "already exists", "--force")
    assert out.read_text() == "precious\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_existing_report_without_force(tmp_path):
    rep = tmp_path / "r.html"
    rep.write_text("precious\n")
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "out.csv", "--config", EXAMPLE_CFG, "--report", rep)
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, "already exists")
    assert rep.read_text() == "precious\n"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]


def test_output_equals_input(tmp_path):
    inp = tmp_path / "patients.csv"
    shutil.copy(EXAMPLE, inp)
    before = inp.read_bytes()
    for extra in ([], ["--force"]):
        r = run("anonymize", inp, "-o", inp, *QI_OPTS, "-k", 3, *extra)
        assert r.exit_code == 2
        assert_one_line_error(r.stderr, "overwrite the input")
        assert inp.read_bytes() == before
    r = run("anonymize", inp, "-o", tmp_path / "o.csv", *QI_OPTS, "-k", 3, "--report", inp, "--force")
    assert r.exit_code == 2 and inp.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["patients.csv"]


def test_report_same_as_output(tmp_path):
    out = tmp_path / "o.csv"
    r = run("anonymize", EXAMPLE, "-o", out, *QI_OPTS, "-k", 3, "--report", out)
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, "same file")
    assert list(tmp_path.iterdir()) == []


def _anonymize_exit(monkeypatch, tmp_path, run) -> int:
    """The exit status of ``hieranon anonymize`` (the example) when the
    API's ``run``, what the CLI calls, is ``run``."""
    import hieranon.job.pipeline

    monkeypatch.setattr(hieranon.job.pipeline, "run", run)
    monkeypatch.delenv("HIERANON_DEBUG", raising=False)
    monkeypatch.setattr(sys, "argv", ["hieranon", "anonymize", str(EXAMPLE), "-o", str(tmp_path / "o.csv"),
                                      "--config", str(EXAMPLE_CFG), "-q"])
    with pytest.raises(SystemExit) as exc:
        cli.main()
    return exc.value.code


def test_internal_error_exit_3(monkeypatch, capsys, tmp_path):
    def boom(*a, **kw):
        raise RuntimeError("simulated bug\nsecond line")

    assert _anonymize_exit(monkeypatch, tmp_path, boom) == 3
    err = capsys.readouterr().err
    assert "internal error" in err and "RuntimeError" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_inside_a_compiled_kernel_is_an_interrupt(monkeypatch, capsys, tmp_path):
    """A Ctrl-C that lands in a numba kernel run in threads comes back as a
    SystemError raised from the KeyboardInterrupt: the CLI says it was
    interrupted (exit 130), not that it has a bug."""
    def kernel(*a, **kw):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise SystemError("CPUDispatcher(<function _relaxed>) returned a result with an exception set") \
                from interrupt

    assert _anonymize_exit(monkeypatch, tmp_path, kernel) == 130
    assert capsys.readouterr().err.strip() == "hieranon: interrupted; nothing was written"
    assert list(tmp_path.iterdir()) == []


def test_each_command_lives_in_its_own_small_module():
    """The CLI is a package with one module per command (or group), none over 700 lines."""
    import typer.main

    group = typer.main.get_command(cli.app)
    modules = {name: command.callback.__module__ for name, command in group.commands.items()
               if command.callback is not None}
    hierarchy = group.commands["hierarchy"]
    modules.update({f"hierarchy {name}": command.callback.__module__
                    for name, command in hierarchy.commands.items()})
    assert modules == {
        "anonymize": "hieranon.cli.anonymize", "check": "hieranon.cli.check", "evaluate": "hieranon.cli.evaluate",
        "report": "hieranon.cli.report", "hierarchy build": "hieranon.cli.hierarchy",
        "hierarchy check": "hieranon.cli.hierarchy", "config-template": "hieranon.cli.info",
        "methods": "hieranon.cli.info", "experiments": "hieranon.cli.info",
        "prepare-kernels": "hieranon.cli.kernels", "app": "hieranon.cli.workbench"}
    package = Path(cli.__file__).parent
    sizes = {p.name: len(p.read_text().splitlines()) for p in package.glob("*.py")}
    assert Path(cli.__file__).name == "__init__.py" and len(sizes) > 1
    assert all(n <= 700 for n in sizes.values()), sizes


def test_exit_codes_documented():
    doc = cli.__doc__
    for code in ("0 --", "1 --", "2 --", "3 --"):
        assert code in doc


# ---------------------------------------------------- real entry point
def test_subprocess_entry_point_and_lazy_imports(tmp_path):
    out = tmp_path / "o.csv"
    p = run_subprocess("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["verified"] is True
    p = run_subprocess("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    # the CLI and the report module import no plotting or ML library until they need it
    code = ("import sys, hieranon.cli, hieranon.report, hieranon.job.pipeline, hieranon.job.config, hieranon.io; "
            "print(sorted(m for m in ('matplotlib', 'sklearn') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stdout + p.stderr


# ------------------------------------------------------------------- Adult
@pytest.mark.adult
@pytest.mark.slow
@pytest.mark.parametrize("method", ["fulldomain", "kaca1"])
def test_adult_end_to_end(adult_path, tmp_path, method):
    from hieranon.io.datasets import load_adult

    adult = load_adult(adult_path, hierarchies=False, download=False)
    qis = ["age", "workclass", "education", "marital-status", "race", "sex"]
    frame = adult.frame if method == "fulldomain" else adult.frame.iloc[:6000]
    inp = tmp_path / "adult.csv"
    frame.to_csv(inp, index=False)
    cfg_path = tmp_path / "adult.yaml"
    cfg_path.write_text(yaml.safe_dump({
        "quasi_identifiers": {q: str(adult_path / "hierarchies" / f"adult_hierarchy_{q}.csv") for q in qis},
        "k": 10, "method": method, "class_column": "salary-class", "seed": 3,
    }))
    out, rep = tmp_path / "adult-anon.csv", tmp_path / "adult.html"
    r = run("anonymize", inp, "-o", out, "--config", cfg_path, "--report", rep, "--json")
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["verified"] and summary["metrics"]["achieved_k"] >= 10
    hs = {q: H.from_arx_csv(adult_path / "hierarchies" / f"adult_hierarchy_{q}.csv", q) for q in qis}
    report = verify(read_table(inp), read_table(out), qis, hs, k=10)
    assert report.ok, report.summary()
    text = assert_report_complete(rep)
    assert method in text and "salary-class" in text
    assert len(text) < 2_000_000  # the sample is 20 rows, not the table


# ---------------------------------------------------------- counted rows
def test_count_column_keeps_counts_and_requirements_are_reported(tmp_path):
    """seed 003 Figure 4 written as distinct rows with a count column: the CLI
    anonymises it with two requirements, keeps each row's count, and reports
    the k achieved per requirement."""
    from hieranon.io.datasets.paper_tables import arca_hewett_figure4

    df, hs = arca_hewett_figure4()
    table = tmp_path / "fig4.csv"
    df.to_csv(table, index=False)
    qi_opts = []
    for name, h in hs.items():
        (tmp_path / f"{name}.csv").write_text(h.to_arx_csv())
        qi_opts += ["--qi", f"{name}={tmp_path / f'{name}.csv'}"]
    out = tmp_path / "out.csv"
    reqs = ["edu,sex,hrs:4", "sex:10"]
    r = run("anonymize", table, "-o", out, *qi_opts, "--require", reqs[0], "--require", reqs[1],
            "--count-column", "count", "--method", "heuristicmin", "--json")
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    got = read_table(out)
    assert list(got["count"].astype(int)) == list(df["count"])  # each row keeps its count, in order
    report = verify(df, got, list(hs), hs, reqs, counts=df["count"].to_numpy())
    assert report.ok, report.summary()
    per_req = summary["metrics"]["achieved_k_per_requirement"]
    assert set(per_req) == {"<{edu, sex, hrs}, 4>", "<{sex}, 10>"}
    assert per_req["<{edu, sex, hrs}, 4>"] >= 4 and per_req["<{sex}, 10>"] >= 10
    # without the count column every row is one record: the table cannot meet sex:10 as it is
    r = run("check", table, *qi_opts, "--require", reqs[1])
    assert r.exit_code == 1
    r = run("check", table, *qi_opts, "--require", reqs[1], "--count-column", "count")
    assert r.exit_code == 0, r.stdout + r.stderr


# ------------------------------------------------- audit: input validation
def _cfg_with(d: Path, **changes) -> Path:
    """The example configuration with absolute hierarchy paths and ``changes``."""
    cfg = yaml.safe_load(EXAMPLE_CFG.read_text())
    cfg["quasi_identifiers"] = {q: str(DATA / f) for q, f in cfg["quasi_identifiers"].items()}
    cfg.pop("input", None)
    cfg.update(changes)
    return _write(d / "cfg.yaml", yaml.safe_dump(cfg))


def _bad_anonymize(tmp_path, *args, fragments=(), config=None):
    """anonymize the example with ``args``: exit 2, one line naming ``fragments``, nothing written."""
    out_dir = tmp_path / "out"
    out_dir.mkdir(exist_ok=True)
    r = run("anonymize", EXAMPLE, "-o", out_dir / "o.csv", *(["--config", config] if config else QI_OPTS),
            *args, "--report", out_dir / "r.html")
    assert r.exit_code == 2, (r.exit_code, r.stderr, r.exception)
    assert_one_line_error(r.stderr, *fragments)
    assert list(out_dir.iterdir()) == []
    return r


@pytest.mark.parametrize("args, fragments", [
    (["--count-column", "age"], ["count column", "'age'", "quasi-identifier"]),
    (["--class-column", "postcode"], ["class column", "'postcode'", "quasi-identifier"]),
    (["--count-column", "diagnosis", "--class-column", "diagnosis"], ["count column", "class column", "'diagnosis'"]),
])
def test_count_or_class_column_must_not_be_a_qi_or_each_other(tmp_path, args, fragments):
    _bad_anonymize(tmp_path, "-k", "3", *args, fragments=fragments)


def test_config_class_naming_a_qi_is_bad_input(tmp_path):
    _bad_anonymize(tmp_path, config=_cfg_with(tmp_path, class_column="age"),
                   fragments=["class_column", "'age'", "quasi-identifier"])
    # the alias 'class' (ARX's name) is read the same way
    cfg = yaml.safe_load(_cfg_with(tmp_path).read_text())
    cfg["class"] = cfg.pop("class_column")
    cfg["class"] = "age"
    _bad_anonymize(tmp_path, config=_write(tmp_path / "alias.yaml", yaml.safe_dump(cfg)),
                   fragments=["class_column", "'age'", "quasi-identifier"])
    # a QI added with --qi after the config was read is caught by the API
    cfg = _cfg_with(tmp_path, class_column="diagnosis")
    _bad_anonymize(tmp_path, "--qi", f"diagnosis={DATA / 'patients_hierarchy_gender.csv'}", config=cfg,
                   fragments=["the class column", "'diagnosis'", "quasi-identifier (--qi)"])


def test_api_rejects_count_or_class_column_among_the_qis():
    """Library users get the same check (a ValueError subclass, exit 2 in the CLI)."""
    from hieranon.core.table import DataError
    from hieranon.job import pipeline as api
    df = read_table(EXAMPLE)
    hs = example_hierarchies()
    for kw, name in (({"count_column": "age"}, "age"), ({"class_column": "gender"}, "gender"),
                     ({"count_column": "diagnosis", "class_column": "diagnosis"}, "diagnosis")):
        with pytest.raises(DataError, match=f"'{name}'") as exc:
            api.anonymize(df, QIS, hs, 3, method="kaca1", **kw)
        assert isinstance(exc.value, ValueError) and isinstance(exc.value, known_errors())
    with pytest.raises(ValueError, match="missing.*'foo'"):
        api.anonymize(df, QIS, hs, 3, method="kaca1", missing="foo")


@pytest.mark.parametrize("command", ["anonymize", "check", "evaluate", "report"])
def test_missing_option_is_validated(tmp_path, command):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    extra = {"anonymize": ["-o", out_dir / "o.csv"], "check": [], "evaluate": [EXAMPLE],
             "report": [EXAMPLE, "-o", out_dir / "r.html"]}[command]
    r = run(command, EXAMPLE, *extra, *QI_OPTS, "-k", "3", "--missing", "foo")
    assert r.exit_code == 2, (r.exit_code, r.stderr, r.exception)
    assert_one_line_error(r.stderr, "--missing", "'foo'", "error, root")
    assert list(out_dir.iterdir()) == []


def _example_with_empty_age(d: Path) -> Path:
    lines = EXAMPLE.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[1].split(",")
    cells[header.index("age")] = ""
    return _write(d / "gaps.csv", "\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")


def test_evaluate_has_missing_root(tmp_path):
    gaps = _example_with_empty_age(tmp_path)
    out = tmp_path / "o.csv"
    r = run("anonymize", gaps, "-o", out, *QI_OPTS, "-k", "3", "--missing", "root", "-q")
    assert r.exit_code == 0, r.stderr
    r = run("evaluate", gaps, out, *QI_OPTS, "-k", "3")
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, "age", "--missing root")
    r = run("evaluate", gaps, out, *QI_OPTS, "-k", "3", "--missing", "root", "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["verified"] is True


@pytest.mark.parametrize("value", ["x=[", "x={a", "x=: :"])
def test_param_value_not_yaml_is_bad_input(tmp_path, value):
    _bad_anonymize(tmp_path, "-k", "3", "-p", value, fragments=["--param", "parameter x", "yaml"])


@pytest.mark.parametrize("args, fragments", [
    (["--seed", "-5"], ["--seed -5", ">= 0"]),
    (["--method", "kaca2", "-p", "max_inconsistency=abc"], ["max_inconsistency", "number", "'abc'"]),
    (["-p", "no_such_param=1"], ["no_such_param", "kaca+"]),
    (["--qi", "gender="], ["--qi", "gender", "hierarchy is empty"]),
    (["--qi", "=x.csv"], ["--qi", "column name is empty"]),
    (["--qi", f"gender={DATA / 'patients_hierarchy_gender.csv'}"], ["--qi", "'gender'", "more than once"]),
])
def test_bad_option_values_name_the_option(tmp_path, args, fragments):
    _bad_anonymize(tmp_path, "-k", "3", *args, fragments=fragments)


def test_config_priorities_weight_not_a_number(tmp_path):
    _bad_anonymize(tmp_path, config=_cfg_with(tmp_path, priorities={"gender": "abc"}),
                   fragments=["priorities.gender", "number"])


def test_config_intervals_origin_not_a_number(tmp_path):
    cfg = _cfg_with(tmp_path, quasi_identifiers={"age": {"intervals": [5, 10], "origin": "abc"}})
    _bad_anonymize(tmp_path, config=cfg, fragments=["quasi_identifiers.age.origin", "number"])


def test_config_requirement_attributes_not_names(tmp_path):
    cfg = _cfg_with(tmp_path, requirements=[{"attributes": [1, 2], "k": 3}])
    _bad_anonymize(tmp_path, config=cfg, fragments=["requirements[0].attributes", "list of column names"])


def test_check_header_only_table(tmp_path):
    empty = _write(tmp_path / "empty.csv", EXAMPLE.read_text().splitlines()[0] + "\n")
    for command, extra in (("check", []), ("evaluate", [EXAMPLE])):
        r = run(command, empty, *extra, "--config", EXAMPLE_CFG)
        assert r.exit_code == 2, (command, r.stderr)
        assert_one_line_error(r.stderr, "empty.csv", "no rows")


def test_suppression_threshold_only_for_methods_that_take_it(tmp_path):
    cfg = _cfg_with(tmp_path, suppression_threshold=0.5)
    for method in ([], ["--method", "mondrian"]):  # the default (kaca+) and mondrian do not take it
        _bad_anonymize(tmp_path, *method, config=cfg, fragments=["suppression_threshold", "kaca1", "kaca2"])
    out = tmp_path / "o.csv"
    r = run("anonymize", EXAMPLE, "-o", out, "--config", cfg, "--method", "kaca1", "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["params"]["suppression_threshold"] == 0.5
    _bad_anonymize(tmp_path, "--method", "kaca1", config=_cfg_with(tmp_path, suppression_threshold=True),
                   fragments=["suppression_threshold", "number"])


# ------------------------------------------- audit: usage errors via main()
@pytest.mark.parametrize("args, fragments", [
    (["anonymize", EXAMPLE, "-o", "o.csv", "--config", EXAMPLE_CFG, "--seed", "abc"], ["--seed", "integer"]),
    (["anonymize", EXAMPLE, "-o", "o.csv", "--config", EXAMPLE_CFG, "-k", "abc"], ["-k", "integer"]),
    (["anonymize", EXAMPLE, "--config", EXAMPLE_CFG], ["no -o OUTPUT", "output:"]),  # the example names no output
    (["anonymize", EXAMPLE, "-o", "o.csv", "--bogus"], ["no such option", "--bogus"]),
    (["nosuch"], ["no such command", "nosuch"]),
    (["hierarchy", "nosuch"], ["no such command", "nosuch"]),
    (["check"], ["no INPUT", "input:"]),
])
def test_click_usage_errors_are_one_line_exit_2(monkeypatch, capsys, tmp_path, args, fragments):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(monkeypatch, capsys, *args)
    assert code == 2, (code, err)
    assert_one_line_error(err, *fragments)
    assert "╭" not in err and out == ""
    assert list(tmp_path.iterdir()) == []


def test_main_keeps_help_and_exit_codes(monkeypatch, capsys, tmp_path):
    code, out, err = run_main(monkeypatch, capsys, "--help")
    assert code == 0 and "anonymize" in out
    code, out, err = run_main(monkeypatch, capsys, "anonymize", "--help")
    assert code == 0 and "--count-column" in out
    code, out, _ = run_main(monkeypatch, capsys, "methods")
    assert code == 0 and "kaca+" in out
    code, _, _ = run_main(monkeypatch, capsys, "check", EXAMPLE, "--config", EXAMPLE_CFG, "-q")
    assert code == 1  # typer.Exit(1): the raw table fails k = 3
    out_path = tmp_path / "o.csv"
    code, _, err = run_main(monkeypatch, capsys, "anonymize", EXAMPLE, "-o", out_path, "--config", EXAMPLE_CFG, "-q")
    assert code == 0 and out_path.exists(), err
    code, _, err = run_main(monkeypatch, capsys, "anonymize", EXAMPLE, "-o", out_path, "--config", EXAMPLE_CFG)
    assert code == 2  # typer.Exit(2) from a bad-input error keeps its code
    assert_one_line_error(err, "already exists")
    code, out, err = run_main(monkeypatch, capsys)  # no command: the help, as before
    assert code == 2 and "anonymize" in out + err


def test_subprocess_usage_error_is_one_line():
    p = run_subprocess("anonymize", EXAMPLE, "-o", "x.csv", "--seed", "abc")
    assert p.returncode == 2
    assert_one_line_error(p.stderr, "--seed", "integer")


def test_distributed_on_a_single_file(tmp_path):
    """--distributed on one CSV file: the partitioned method on a local Dask
    cluster, the inner method taken from --method."""
    out = tmp_path / "out.csv"
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--distributed", "--method", "kaca2",
            "--block-size", "40", "--workers", "1", "--json")
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["method"] == "partitioned" and summary["params"]["inner_method"] == "kaca2"
    assert_verifies(out, k=3)


# ------------------------------------------------- one job, every path (the spec)
JOB = """\
quasi_identifiers:
  age: {intervals: [10, 20]}
  sex: {suppress: true}
  zip: {mask: 4}
k: 4
identifying: [id]
class: diagnosis
count_column: n
missing: root
priorities: [age, zip, sex]
method: kaca1
params: {fast: false}
suppression_threshold: 3
"""


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """A table with an identifier, empty QI cells, a count column and a class
    column, as a CSV file and as a two-file Parquet dataset, with its config."""
    import numpy as np
    import pandas as pd

    root = tmp_path_factory.mktemp("job")
    rng = np.random.default_rng(3)
    n = 90
    df = pd.DataFrame({"id": [f"p{i:03d}" for i in range(n)], "age": rng.integers(20, 70, n),
                       "sex": rng.choice(["male", "female"], n), "zip": rng.choice(["4350", "4351", "4352"], n),
                       "n": rng.integers(1, 4, n), "diagnosis": rng.choice(["flu", "cold", "none"], n)})
    df.loc[[3, 17, 40], "sex"] = None
    df.to_csv(root / "people.csv", index=False)
    (root / "ds").mkdir()
    df.iloc[:50].to_parquet(root / "ds" / "part-0.parquet", index=False)
    df.iloc[50:].to_parquet(root / "ds" / "part-1.parquet", index=False)
    (root / "job.yaml").write_text(JOB, encoding="utf-8")
    return root, df


def test_one_config_through_every_command(job, tmp_path):
    """anonymize, anonymize --distributed (CSV and Parquet dataset), check,
    evaluate and report read the same job from one config: identifiers
    dropped, empty cells as '*', records counted, the method and its
    parameters recorded, a priorities ranking accepted, reports written."""
    import pandas as pd

    root, df = job
    cfg = root / "job.yaml"
    dist = ["--distributed", "--workers", "1", "--block-size", "60"]
    r = run("anonymize", root / "people.csv", "-o", tmp_path / "plain.csv", "--config", cfg, "--json",
            "--report", tmp_path / "plain.html")
    assert r.exit_code == 0, r.stderr
    plain = json.loads(r.stdout)
    r = run("anonymize", root / "people.csv", "-o", tmp_path / "dist.csv", "--config", cfg, "--json",
            "--report", tmp_path / "dist.html", *dist)
    assert r.exit_code == 0, r.stderr
    dist_csv = json.loads(r.stdout)
    # the dataset run in a process of its own: dask must not print on a successful run
    p = run_subprocess("anonymize", root / "ds", "-o", tmp_path / "ds_out", "--config", cfg, "--json",
                       "--report", tmp_path / "ds.html", *dist)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and "INFO" not in p.stderr, p.stderr
    dist_ds = json.loads(p.stdout)

    records = int(df["n"].sum())
    for summary in (plain, dist_csv, dist_ds):
        assert summary["verified"] is True
        assert summary["metrics"]["n_records"] == records and summary["metrics"]["n_rows"] == len(df)
        assert summary["metrics"]["classification_metric"] is not None  # the class column was read
        assert summary["risk"]["before"]["records"] == records
    assert plain["method"] == "kaca1" and plain["params"] == {"fast": False, "suppression_threshold": 3.0}
    for summary in (dist_csv, dist_ds):
        assert summary["method"] == "partitioned"
        assert summary["params"]["inner_method"] == "kaca1"
        assert summary["params"]["method_params"] == {"fast": False, "suppression_threshold": 3.0}
    assert dist_csv["params"] == dist_ds["params"]

    outputs = [read_table(tmp_path / "plain.csv"), read_table(tmp_path / "dist.csv"),
               pd.read_parquet(tmp_path / "ds_out")]
    for out in outputs:
        assert list(out.columns) == ["age", "sex", "zip", "n", "diagnosis"]  # the identifier is gone
        # empty cells are read as the root (already suppressed): they stay empty ("was missing") unless their
        # class also has suppressed cells of the column, then '*' (so the printed classes are the verified ones)
        assert set(out.loc[[3, 17, 40], "sex"].fillna("(empty)")) <= {"*", "(empty)"}
        assert not out["sex"].drop(index=[3, 17, 40]).isna().any()
        assert out["n"].astype(int).tolist() == df["n"].tolist()
    pd.testing.assert_frame_equal(outputs[1].fillna("").astype(str), outputs[2].fillna("").astype(str))  # same blocks
    for html in ("plain.html", "dist.html", "ds.html"):
        assert_report_complete(tmp_path / html)

    r = run("check", root / "people.csv", "--config", cfg, "--json")
    assert r.exit_code == 1, r.stderr  # the original is not 4-anonymous
    assert json.loads(r.stdout)["n_records"] == records
    for made in ("plain.csv", "dist.csv"):
        r = run("evaluate", root / "people.csv", tmp_path / made, "--config", cfg, "--json")
        assert r.exit_code == 0, r.stderr
        assert json.loads(r.stdout)["metrics"]["n_records"] == records
        r = run("report", root / "people.csv", tmp_path / made, "--config", cfg, "-o", tmp_path / f"{made}.html",
                "--json")
        assert r.exit_code == 0, r.stderr
    evaluated = json.loads(r.stdout)["metrics"]
    assert evaluated["distortion"] == pytest.approx(dist_csv["metrics"]["distortion"])


def test_shared_options_have_one_help_text():
    """anonymize, check, evaluate and report take the shared options alike."""
    import typer.main

    shared = ["--config", "--qi", "-k", "--require", "--count-column", "--class-column", "--missing", "--weights",
              "--beta", "--encoding", "--risk-threshold", "--l-diversity", "--t-closeness", "--sensitive-hierarchy"]
    group = typer.main.get_command(cli.app)
    helps = {}
    for name in ("anonymize", "check", "evaluate", "report"):
        command = group.commands[name]
        for option in shared:
            found = [p for p in command.params if option in getattr(p, "opts", [])]
            assert found, f"{name} lacks {option}"
            helps.setdefault(option, set()).add(found[0].help)
    assert all(len(h) == 1 for h in helps.values()), helps


# ------------------------------------------------- sensitive attributes (privacy models)
DIAGNOSIS_TREE = {"circulatory": ["hypertension", "heart disease"], "respiratory": ["asthma", "influenza"],
                  "metabolic": ["obesity", "diabetes"], "mental": ["stress", "depression"],
                  "other": ["migraine", "back pain", "eczema", "arthritis"]}


def _diagnosis_hierarchy(d: Path) -> Path:
    path = d / "diagnosis.csv"
    path.write_text("".join(f"{leaf};{group};*\n" for group, leaves in DIAGNOSIS_TREE.items() for leaf in leaves))
    return path


@pytest.mark.parametrize("options, described", [
    (["--l-diversity", "diagnosis=3"], "distinct 3-diversity of 'diagnosis'"),
    (["--l-diversity", "diagnosis=entropy:2.5"], "entropy 2.5-diversity of 'diagnosis'"),
    (["--l-diversity", "diagnosis=recursive:3,2"], "recursive (3, 2)-diversity of 'diagnosis'"),
    (["--t-closeness", "diagnosis=0.4"], "0.4-closeness of 'diagnosis' (equal distance)"),
    (["--t-closeness", "diagnosis=0.4:equal"], "0.4-closeness of 'diagnosis' (equal distance)"),
    (["--t-closeness", "age=0.5"], None),  # age is a QI: refused (below)
    (["--t-closeness", "diagnosis=0.35", "--sensitive-hierarchy", "diagnosis={hier}"],
     "0.35-closeness of 'diagnosis' (hierarchical distance)"),
    (["--t-closeness", "diagnosis=0.35:hierarchical", "--sensitive-hierarchy", "diagnosis={hier}"],
     "0.35-closeness of 'diagnosis' (hierarchical distance)"),
])
def test_privacy_option_forms(tmp_path, options, described):
    """Each form of --l-diversity / --t-closeness: the output verifies against
    the model, the JSON's privacy block shows it before and after."""
    hier = _diagnosis_hierarchy(tmp_path)
    options = [o.replace("{hier}", str(hier)) for o in options]
    out = tmp_path / "out.csv"
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--method", "mondrian", "--json", *options)
    if described is None:
        assert r.exit_code == 2 and "'age' is a quasi-identifier" in r.stderr and not out.exists()
        return
    assert r.exit_code == 0, r.stderr
    block = json.loads(r.stdout)["privacy"]
    assert block["ok"] is True and "diagnosis" in block["sensitive"]
    (model,) = block["models"]
    assert model["model"] == described and model["attribute"] == "diagnosis"
    assert model["after"]["classes_violating"] == 0 and model["after"]["records_violating"] == 0
    assert model["before"]["classes_violating"] > 0  # the original's classes are mostly single records
    hs = {"diagnosis": H.from_file(hier, "diagnosis")} if "--sensitive-hierarchy" in options else {}
    from hieranon.privacy import parse_l_diversity, parse_t_closeness
    opt, text = options[0], options[1]
    unbound = parse_l_diversity(text) if opt == "--l-diversity" else parse_t_closeness(text, hierarchies=hs)
    original = read_table(EXAMPLE).drop(columns=["id"])
    report = verify(original, read_table(out), QIS, example_hierarchies(), k=3, privacy=[unbound])
    assert report.ok, report.summary()
    assert report.achieved_privacy[described] == pytest.approx(model["after"]["achieved"])


@pytest.mark.parametrize("options, fragments", [
    (["--l-diversity", "diagnosis"], ["--l-diversity", "'diagnosis'", "ATTR=L"]),
    (["--l-diversity", "diagnosis=two"], ["--l-diversity", "'diagnosis=two'", "not a number", "ATTR=entropy:L"]),
    (["--l-diversity", "diagnosis=0"], ["--l-diversity", "'diagnosis=0'", ">= 1"]),
    (["--l-diversity", "diagnosis=2.5"], ["--l-diversity", "'diagnosis=2.5'", "whole number"]),
    (["--l-diversity", "diagnosis=shannon:2"], ["--l-diversity", "'shannon'", "ATTR=recursive:C,L"]),
    (["--l-diversity", "diagnosis=recursive:3"], ["--l-diversity", "'diagnosis=recursive:3'", "C,L"]),
    (["--t-closeness", "diagnosis=1.5"], ["--t-closeness", "'diagnosis=1.5'", "< 1", "ATTR=T"]),
    (["--t-closeness", "diagnosis=0.2:manhattan"], ["--t-closeness", "'manhattan'", "equal|ordered|hierarchical"]),
    (["--t-closeness", "diagnosis=0.2:hierarchical"], ["--t-closeness", "hierarchy", "--sensitive-hierarchy"]),
    (["--sensitive-hierarchy", "diagnosis"], ["--sensitive-hierarchy", "'diagnosis'", "ATTR=FILE"]),
    (["--l-diversity", "nosuchcol=2"], ["'nosuchcol'", "the table"]),
])
@pytest.mark.parametrize("command", ["anonymize", "check", "evaluate", "report"])
def test_privacy_bad_forms_exit_2(tmp_path, options, fragments, command):
    out = tmp_path / "out.csv"
    args = {"anonymize": [EXAMPLE, "-o", out], "check": [EXAMPLE], "evaluate": [EXAMPLE, EXAMPLE],
            "report": [EXAMPLE, EXAMPLE, "-o", out]}[command]
    r = run(command, *args, "--config", EXAMPLE_CFG, *options)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert_one_line_error(r.stderr, *fragments)
    assert not out.exists()


def test_infeasible_model_exit_2_names_the_largest_value(tmp_path):
    """The example has 12 distinct diagnoses: 13-diversity is refused before
    any work, naming the attribute, the model and the largest l possible."""
    out, rep = tmp_path / "out.csv", tmp_path / "r.html"
    import pandas as pd
    n_values = pd.read_csv(EXAMPLE)["diagnosis"].nunique()
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--report", rep,
            "--l-diversity", f"diagnosis={n_values + 1}")
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, f"distinct {n_values + 1}-diversity of 'diagnosis'", f"l = {n_values}")
    assert not out.exists() and not rep.exists()


@pytest.mark.adult
@pytest.mark.parametrize("form, fragments", [
    ("salary-class=entropy:2", ["entropy 2-diversity of 'salary-class'", "1.75"]),
    ("salary-class=recursive:3,2", ["recursive (3, 2)-diversity of 'salary-class'", "3.03"]),
    ("salary-class=3", ["distinct 3-diversity of 'salary-class'", "l = 2"]),
])
def test_adult_infeasible_models_exit_2(adult_path, tmp_path, form, fragments):
    """Adult's salary-class: 34,014 '<=50K' and 11,208 '>50K' records; the
    table's entropy l is 1.75 and r_1 / r_2 = 3.03."""
    from hieranon.io.datasets import load_adult

    inp = tmp_path / "adult.csv"
    frame = load_adult(adult_path, hierarchies=False, download=False).frame
    frame.to_csv(inp, index=False)
    counts = frame["salary-class"].value_counts()
    assert round(counts.iloc[0] / counts.iloc[1], 2) == 3.03  # the figure the message must show
    qis = ["age", "sex", "race"]
    qi = [x for q in qis for x in ("--qi", f"{q}={adult_path / 'hierarchies' / f'adult_hierarchy_{q}.csv'}")]
    out = tmp_path / "out.csv"
    r = run("anonymize", inp, "-o", out, "-k", "5", *qi, "--l-diversity", form)
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, *fragments)
    assert not out.exists()


def _homogeneous_table(d: Path) -> tuple[Path, Path]:
    """A table whose (sex, zip) classes include homogeneous ones, and its hierarchies."""
    import pandas as pd

    df = pd.DataFrame({"sex": ["m", "m", "m", "f", "f", "f", "f", "m", "f", "m"],
                       "zip": ["10", "10", "10", "10", "10", "11", "11", "11", "11", "11"],
                       "disease": ["flu", "flu", "flu", "flu", "cold", "hiv", "flu", "cold", "hiv", "cold"]})
    path = d / "t.csv"
    df.to_csv(path, index=False)
    (d / "sex.csv").write_text("m;*\nf;*\n")
    (d / "zip.csv").write_text("10;1*;*\n11;1*;*\n")
    return path, df


def test_check_fails_on_a_homogeneous_class(tmp_path):
    """check: (sex=m, zip=10) holds three 'flu' records: 2-diversity fails
    (exit 1), the counts are the table's own."""
    path, df = _homogeneous_table(tmp_path)
    qi = ["--qi", f"sex={tmp_path / 'sex.csv'}", "--qi", f"zip={tmp_path / 'zip.csv'}"]
    r = run("check", path, "-k", "1", *qi, "--l-diversity", "disease=2", "--json")
    assert r.exit_code == 1, r.stderr
    (model,) = json.loads(r.stdout)["privacy"]["models"]
    per_class = df.groupby(["sex", "zip"])["disease"].nunique()
    sizes = df.groupby(["sex", "zip"]).size()
    assert model["before"]["achieved"] == per_class.min() == 1
    assert model["before"]["classes"] == len(per_class)
    assert model["before"]["classes_violating"] == int((per_class < 2).sum())
    assert model["before"]["records_violating"] == int(sizes[per_class < 2].sum())
    r = run("check", path, "-k", "1", *qi, "--l-diversity", "disease=1")
    assert r.exit_code == 0, r.stderr
    assert "distinct 1-diversity of 'disease'" in r.stdout


def test_check_l_agrees_with_pycanon(tmp_path):
    import numpy as np
    import pandas as pd

    from oracles import pycanon_l

    rng = np.random.default_rng(5)
    df = pd.DataFrame({"sex": rng.choice(["m", "f"], 60), "zip": rng.choice(["10", "11"], 60),
                       "disease": rng.choice(["flu", "cold", "hiv", "none"], 60, p=[0.55, 0.25, 0.1, 0.1])})
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    (tmp_path / "sex.csv").write_text("m;*\nf;*\n")
    (tmp_path / "zip.csv").write_text("10;1*;*\n11;1*;*\n")
    qi = ["--qi", f"sex={tmp_path / 'sex.csv'}", "--qi", f"zip={tmp_path / 'zip.csv'}"]
    r = run("check", path, "-k", "1", *qi, "--l-diversity", "disease=2", "--json")
    assert r.exit_code in (0, 1), r.stderr
    (model,) = json.loads(r.stdout)["privacy"]["models"]
    assert model["before"]["achieved"] == pycanon_l(df, ["sex", "zip"], ["disease"])


def test_evaluate_report_and_json_privacy_block(tmp_path):
    """A pair made with a model: evaluate and report show the model before and
    after; a model the pair violates fails the evaluation (exit 1)."""
    out, rep = tmp_path / "out.csv", tmp_path / "r.html"
    model = ["--l-diversity", "diagnosis=2"]
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--method", "mondrian", *model, "--json")
    assert r.exit_code == 0, r.stderr
    made = json.loads(r.stdout)["privacy"]["models"][0]
    r = run("evaluate", EXAMPLE, out, "--config", EXAMPLE_CFG, *model, "--json")
    assert r.exit_code == 0, r.stderr
    evaluated = json.loads(r.stdout)
    assert evaluated["verified"] is True
    (m,) = evaluated["privacy"]["models"]
    assert m["before"] == made["before"] and m["after"] == made["after"]
    r = run("evaluate", EXAMPLE, out, "--config", EXAMPLE_CFG, *model)
    assert r.exit_code == 0 and "distinct 2-diversity of 'diagnosis'" in r.stdout
    r = run("report", EXAMPLE, out, "--config", EXAMPLE_CFG, *model, "-o", rep, "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["privacy"]["models"][0]["after"] == made["after"]
    text = assert_report_complete(rep)
    assert '<section id="sensitive">' in text and "distinct 2-diversity of &#x27;diagnosis&#x27;" in text
    # the pair cannot be 20-diverse (12 values): the whole table can't either -> exit 2; 3-diverse may fail
    after_l = made["after"]["achieved"]
    r = run("evaluate", EXAMPLE, out, "--config", EXAMPLE_CFG, "--l-diversity", f"diagnosis={int(after_l) + 1}",
            "--json")
    assert r.exit_code == 1, r.stderr
    assert json.loads(r.stdout)["privacy"]["models"][0]["after"]["classes_violating"] > 0
    # quiet: no tables, but the failure and its reason still show
    r = run("evaluate", EXAMPLE, out, "--config", EXAMPLE_CFG, "--l-diversity", f"diagnosis={int(after_l) + 1}", "-q")
    assert r.exit_code == 1 and r.stdout == ""
    assert "VERIFICATION FAILED" in r.stderr and "diversity" in r.stderr


def test_config_privacy_key_through_anonymize(tmp_path):
    """privacy: and sensitive_hierarchies: in the config act as the options do,
    the option's models adding to the config's."""
    hier = _diagnosis_hierarchy(tmp_path)
    raw = yaml.safe_load(EXAMPLE_CFG.read_text())
    raw["quasi_identifiers"] = {q: str(DATA / f) for q, f in raw["quasi_identifiers"].items()}
    raw.pop("input", None)
    raw["privacy"] = {"diagnosis": [{"l_diversity": 2}, {"t_closeness": 0.4}]}
    raw["sensitive_hierarchies"] = {"diagnosis": hier.name}  # relative to the config file
    cfg = tmp_path / "job.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "o.csv", "--config", cfg, "--method", "mondrian", "--json",
            "--l-diversity", "readmitted=2")
    assert r.exit_code == 0, r.stderr
    names = [m["model"] for m in json.loads(r.stdout)["privacy"]["models"]]
    assert names == ["distinct 2-diversity of 'diagnosis'", "0.4-closeness of 'diagnosis' (hierarchical distance)",
                     "distinct 2-diversity of 'readmitted'"]


def test_distributed_dataset_binds_and_verifies_the_models(job, tmp_path):
    """--distributed on a Parquet dataset: the model is bound to the whole
    dataset; the output, if written, satisfies it; an infeasible one is refused."""
    import pandas as pd

    from hieranon.privacy import DistinctLDiversity, TCloseness

    root, df = job
    cfg = root / "job.yaml"
    dist = ["--distributed", "--workers", "1", "--block-size", "60"]
    r = run("anonymize", root / "ds", "-o", tmp_path / "bad", "--config", cfg, *dist, "--l-diversity", "diagnosis=4")
    assert r.exit_code == 2 and "distinct 4-diversity of 'diagnosis'" in r.stderr and "l = 3" in r.stderr
    assert not (tmp_path / "bad").exists()
    out = tmp_path / "ds_out"
    r = run("anonymize", root / "ds", "-o", out, "--config", cfg, *dist, "--l-diversity", "diagnosis=2",
            "--t-closeness", "diagnosis=0.45", "--json")
    assert r.exit_code in (0, 1), r.stderr  # 1: the block method could not keep the models; nothing written
    if r.exit_code == 1:
        assert not out.exists()
        return
    result = pd.read_parquet(out)
    original = df.drop(columns=["id"])
    from hieranon.job.config import load
    from hieranon.job.spec import AnonymizationSpec
    spec = AnonymizationSpec.from_config(load(cfg))
    hs = spec.build_hierarchies(original)
    report = verify(original, result, list(hs), hs, k=4, counts="n", missing="root",
                    privacy=[DistinctLDiversity("diagnosis", 2), TCloseness("diagnosis", 0.45)])
    assert not (report.kinds & {"l-diversity", "t-closeness"}), report.summary()


# ------------------------------------------------------- builders on the command line
def test_hierarchy_build_every_builder_and_missing_cells(tmp_path):
    import pandas as pd

    table = tmp_path / "t.csv"
    pd.DataFrame({"when": ["03.04.1980 10:15", "", "17.05.1980 09:00"], "grade": ["A", "C", ""],
                  "region": ["north", "south", "north"]}).to_csv(table, index=False)
    r = run("hierarchy", "build", "--input", table, "--column", "when", "--dates", "month,quarter",
            "--date-format", "%d.%m.%Y %H:%M")
    assert r.exit_code == 0, r.stderr
    assert "03.04.1980 10:15;1980-04;1980-Q2;*" in r.stdout.splitlines()
    assert "1 empty cell(s)" in r.stderr and "--missing value" in r.stderr  # not silently skipped
    r = run("hierarchy", "build", "--input", table, "--column", "grade", "--groups", "2", "--missing", "value")
    assert r.exit_code == 0 and r.stdout.splitlines() == ["A;A..C;*", "C;A..C;*", "missing;missing;*"]
    assert r.stderr == ""
    mapping = tmp_path / "regions.csv"
    mapping.write_text("north;N\nsouth;S\n")
    r = run("hierarchy", "build", "--input", table, "--column", "region", "--mapping", mapping)
    assert r.exit_code == 0 and r.stdout.splitlines() == ["north;N;*", "south;S;*"]


@pytest.mark.parametrize("args, message", [
    (["--column", "date_of_birth", "--date-format", "%d/%m/%Y", "--suppress"], "--date-format goes with --dates"),
    (["--column", "date_of_birth", "--dates", "week,year"], "week must be the last"),
    (["--column", "age", "--groups", "2,3"], "multiple"),
    (["--column", "gender", "--suppress", "--missing", "root"], "--missing 'root'"),
    (["--column", "gender", "--mapping", "nosuch.csv"], "nosuch.csv"),
])
def test_hierarchy_build_new_options_refuse_bad_values(tmp_path, args, message):
    r = run("hierarchy", "build", "--input", EXAMPLE, *args, "-o", tmp_path / "h.csv")
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, message)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("qi, message", [
    ("date_of_birth=dates:fortnight", "some of day, week"),
    ("age=groups:0", "positive"),
    ("age=intervals:", "needs a value"),
    ("gender=mapping:nosuch.csv", "nosuch.csv"),
])
def test_qi_builder_forms_refuse_bad_values(tmp_path, qi, message):
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "o.csv", "--qi", qi, "-k", 2)
    assert r.exit_code == 2
    assert_one_line_error(r.stderr, message)
    assert list(tmp_path.iterdir()) == []


def test_qi_date_builder_with_a_format_anonymizes_the_example(tmp_path):
    out = tmp_path / "o.csv"
    r = run("anonymize", EXAMPLE, "-o", out, "--qi", "date_of_birth=dates:month,quarter,year,decade:%d/%m/%Y",
            "--qi", "age=intervals:5,10,20", "-k", 3, "--method", "fulldomain", "-q")
    assert r.exit_code == 0, r.stderr
    dob = read_table(out)["date_of_birth"]
    assert dob.str.fullmatch(r"\d{4}-\d{2}|\d{4}-Q\d|\d{4}s?|\*").all()


def test_each_command_reads_the_configuration_once(tmp_path, monkeypatch):
    """One job per command: the YAML file is parsed once, and the method it
    names still reaches the report (the config's numeric_output: test_io)."""
    from hieranon.job import config

    calls = []
    real_load = config.load
    monkeypatch.setattr(config, "load", lambda path, *a, **kw: calls.append(path) or real_load(path, *a, **kw))
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(EXAMPLE_CFG.read_text().replace("input: patients.csv", "input: patients.csv\nmethod: mondrian")
                   .replace("patients_hierarchy", str(DATA / "patients_hierarchy")))
    out, rep = tmp_path / "o.csv", tmp_path / "r.html"
    r = run("anonymize", EXAMPLE, "-o", out, "--config", cfg, "--numeric-output", "range", "-q")
    assert r.exit_code == 0, r.stderr
    assert len(calls) == 1
    for command, extra in (("evaluate", ["--json"]), ("report", ["-o", rep])):
        calls.clear()
        r = run(command, EXAMPLE, out, "--config", cfg, *extra)
        assert r.exit_code == 0, r.stderr
        assert len(calls) == 1, command
    assert json.loads(run("evaluate", EXAMPLE, out, "--config", cfg, "--json").stdout)["verified"]
    assert "mondrian" in rep.read_text()  # the method the configuration names


def test_padded_cells_check_evaluate_and_report(tmp_path):
    """A release whose '*' cells carry spaces or a no-break space is not the
    release the classes were counted on: check refuses it (exit 2, one
    line naming column, record and cell), evaluate and report fail it
    (exit 1) naming the row and the cell; the exact release passes."""
    import pandas as pd

    path, df = _homogeneous_table(tmp_path)
    qi = ["--qi", f"sex={tmp_path / 'sex.csv'}", "--qi", f"zip={tmp_path / 'zip.csv'}"]
    exact = df.assign(sex="*", zip="1*")
    exact.to_csv(tmp_path / "exact.csv", index=False)
    padded = exact.copy()
    padded.loc[3, "sex"] = " *"
    padded.loc[6, "sex"] = "*\u00a0"
    padded.to_csv(tmp_path / "padded.csv", index=False)
    r = run("check", tmp_path / "padded.csv", "-k", "2", *qi)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "column 'sex', record 4" in r.stderr and "' *'" in r.stderr
    assert run("check", tmp_path / "exact.csv", "-k", "2", *qi).exit_code == 0
    r = run("evaluate", path, tmp_path / "padded.csv", *qi, "-k", "2", "--json")
    assert r.exit_code == 1, r.stderr
    text = json.loads(r.stdout)["verification"]
    assert "column 'sex', row 3: ' *'" in text and "column 'sex', row 6: '*\\xa0'" in text
    assert run("evaluate", path, tmp_path / "exact.csv", *qi, "-k", "2").exit_code == 0
    r = run("report", path, tmp_path / "padded.csv", *qi, "-k", "2", "-o", tmp_path / "r.html", "-q")
    assert r.exit_code == 1, r.stderr
    assert "column &#x27;sex&#x27;, row 3: &#x27; *&#x27;" in (tmp_path / "r.html").read_text(encoding="utf-8")
    assert pd.read_csv(tmp_path / "padded.csv", dtype=str, keep_default_na=False)["sex"][3] == " *"


def test_l_diversity_counts_padded_sensitive_values_once(tmp_path):
    """'flu', 'flu ' and ' flu' are one value: a class holding only them is
    1-diverse, for anonymize and for check alike."""
    import pandas as pd

    df = pd.DataFrame({"sex": ["m", "m", "m", "f", "f", "f"], "zip": ["10"] * 6,
                       "disease": ["flu", "flu ", " flu", "flu", "cold", "hiv"]})
    df.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "sex.csv").write_text("m;*\nf;*\n")
    (tmp_path / "zip.csv").write_text("10;1*;*\n")
    qi = ["--qi", f"sex={tmp_path / 'sex.csv'}", "--qi", f"zip={tmp_path / 'zip.csv'}"]
    r = run("check", tmp_path / "t.csv", "-k", "3", *qi, "--l-diversity", "disease=2", "--json")
    assert r.exit_code == 1, r.stderr
    assert json.loads(r.stdout)["privacy"]["models"][0]["before"]["achieved"] == 1
    out = tmp_path / "out.csv"
    r = run("anonymize", tmp_path / "t.csv", "-o", out, "-k", "3", *qi, "--l-diversity", "disease=2", "-q")
    assert r.exit_code == 0, r.stderr
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert released["sex"].nunique() == 1  # the m class alone would be 1-diverse
    assert released["disease"].tolist() == df["disease"].tolist()  # published byte for byte


# ------------------------------------------------------------ risk-based models
def _release_classes(out: Path) -> list[int]:
    df = read_table(out)
    return df.groupby(QIS, dropna=False).size().tolist()


def test_anonymize_with_average_risk_and_k_map_meets_both(tmp_path):
    out, pop = tmp_path / "out.csv", tmp_path / "pop.csv"
    example = read_table(EXAMPLE)
    example.to_csv(pop, index=False)  # the table is its own population: k-map K = classes of >= K records
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--average-risk", 0.1,
            "--k-map", 5, "--population-table", pop, "--json")
    assert r.exit_code == 0, r.stderr
    sizes = _release_classes(out)
    assert len(sizes) / sum(sizes) <= 0.1
    assert min(sizes) >= 5
    plain = tmp_path / "plain.csv"
    assert run("anonymize", EXAMPLE, "-o", plain, "--config", EXAMPLE_CFG).exit_code == 0
    assert len(_release_classes(plain)) / len(example) > 0.1  # the option changed the release


@pytest.mark.parametrize("options, message", [
    (["--average-risk", 0.001], "--average-risk 0.0125 or more"),
    (["--k-map", 3], "--k-map needs the population table: give --population-table FILE"),
    (["--delta-presence", "0.5", "--population-table", EXAMPLE], "--delta-presence '0.5': expected MIN,MAX"),
    (["--k-map", 1000, "--population-table", EXAMPLE], "use --k-map 80 or less"),
])
def test_anonymize_refuses_bad_risk_options_in_one_line_before_any_work(tmp_path, options, message):
    out = tmp_path / "out.csv"
    r = run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, *options)
    assert r.exit_code == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not out.exists()


def test_a_population_without_a_quasi_identifier_column_is_named(tmp_path):
    pop = tmp_path / "pop.csv"
    read_table(EXAMPLE).drop(columns=["postcode"]).to_csv(pop, index=False)
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "out.csv", "--config", EXAMPLE_CFG, "--k-map", 2,
            "--population-table", pop)
    assert r.exit_code == 2
    assert "population" in r.stderr and "postcode" in r.stderr and len(r.stderr.strip().splitlines()) == 1
