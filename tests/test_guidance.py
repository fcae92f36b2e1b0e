"""Guidance for the custodian: `hieranon methods`, `--version`, one set of
configuration keys, every hierarchy builder from `--qi`, and the wording of
user-facing text (papers by authors and year, counts in the right number)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import hieranon
from hieranon import cli
from hieranon.algorithms.registry import METHOD_INFO, METHODS, available_methods, method_info
from hieranon.cli.options import build_spec
from hieranon.io import read_table
from hieranon.io.datasets import example_path
from hieranon.job.config import TEMPLATE, load
from hieranon.job.spec import AnonymizationSpec

EXAMPLE = example_path("patients.csv")
EXAMPLE_CFG = example_path("patients.yaml")
SRC = Path(hieranon.__file__).parent
README = SRC.parents[1] / "README.md"


def run(*args):
    return CliRunner().invoke(cli.app, [str(a) for a in args], env={"COLUMNS": "220"})


# ---------------------------------------------------------------- methods
def test_every_method_has_guidance_declared_once():
    assert set(METHOD_INFO) == set(METHODS)
    for m in METHODS:
        info = method_info(m)
        assert info["family"] and info["paper"], m
        assert re.search(r"(19|20)\d\d|Arca & Hewett", info["paper"]), m  # authors and year
        klass_multi = info["several_requirements"]
        assert isinstance(klass_multi, bool) and info["privacy_models"] in (True, False, None)
    assert method_info("heuristicmin")["several_requirements"] is True
    assert method_info("kaca1")["several_requirements"] is True
    assert method_info("mondrian")["several_requirements"] is False
    assert method_info("kaca1")["suppression"] == "suppression_threshold"
    for m in ("tds", "bug", "dbca-cm"):
        assert "class column" in METHOD_INFO[m]["needs"]
    assert "max_records" in METHOD_INFO["mingen"]["needs"]
    assert "block" in METHOD_INFO["partitioned"]["notes"]


def test_methods_command_table_and_json():
    r = run("methods", "--json")
    assert r.exit_code == 0
    got = json.loads(r.stdout)
    assert [m["method"] for m in got] == available_methods()
    assert [m for m in got if m["default"]] == [method_info(hieranon.job.pipeline.DEFAULT_METHOD)]
    r = run("methods")
    assert r.exit_code == 0
    for text in ("kaca+", "(default)", "Sun, Wang & Li 2008", "several requirements", "privacy models",
                 "Fung, Wang & Yu 2005", "suppression_threshold", "class column", "randomised", "no (exact)"):
        assert text in r.stdout
    # one column per capability, read from the tags: tds's row says it needs a class column, kaca+'s that it is seeded
    rows = {line.split("│")[1].strip(): line for line in r.stdout.splitlines() if line.count("│") > 5}
    assert "needed" in rows["tds"] and "needed" not in rows["kaca+"] and "randomised" in rows["kaca+"]
    assert all(set(m) >= {"class_column", "randomised", "exact"} for m in got)


def test_version():
    r = run("--version")
    assert r.exit_code == 0 and r.stdout.strip() == f"hieranon {hieranon.__version__}"


# ------------------------------------------------------------ config keys
def test_the_shipped_configuration_and_the_readme_use_the_canonical_keys():
    raw = yaml.safe_load(EXAMPLE_CFG.read_text())
    assert "identifiers" in raw and "class_column" in raw and "identifying" not in raw and "class" not in raw
    cfg = load(EXAMPLE_CFG)
    assert cfg.identifiers == ["id"] and cfg.class_column == "readmitted"
    template = yaml.safe_load(TEMPLATE)
    assert "identifiers" in template and "class_column" in template
    readme = README.read_text(encoding="utf-8")
    block = readme.split("this configuration (`patients.yaml`):")[1].split("```yaml")[1].split("```")[0]
    keys = set(yaml.safe_load(block))
    assert {"identifiers", "class_column"} <= keys and not keys & {"identifying", "class"}
    assert "`identifying`" in readme and "`class`" in readme  # the aliases are documented


# ----------------------------------------------------------- --qi builders
@pytest.mark.parametrize("option, key", [
    ("gender=suppress", {"suppress": True}),
    ("age=intervals:5,10,20", {"intervals": [5, 10, 20]}),
    ("postcode=mask:4", {"mask": 4}),
    ("date_of_birth=dates:dmy", {"dates": "dmy"}),
])
def test_qi_option_builds_the_same_hierarchy_as_the_configuration(tmp_path, option, key):
    name = option.split("=")[0]
    data = read_table(EXAMPLE)
    from_cli = build_spec(None, [option]).build_hierarchies(data)[name]
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"quasi_identifiers": {name: key}, "k": 2}))
    from_config = AnonymizationSpec.from_config(load(cfg)).build_hierarchies(data)[name]
    assert from_cli.to_arx_csv(";") == from_config.to_arx_csv(";")


def test_qi_builders_anonymize_and_an_existing_file_wins(tmp_path, monkeypatch):
    out = tmp_path / "o.csv"
    r = run("anonymize", EXAMPLE, "-o", out, "--qi", "gender=suppress", "--qi", "age=intervals:5,10,20",
            "--qi", "postcode=mask:4", "--qi", "date_of_birth=dates:dmy", "-k", 3, "-q", "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["metrics"]["achieved_k"] >= 3
    # a file named like a builder is read as a file
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suppress").write_text(
        (EXAMPLE.parent / "patients_hierarchy_gender.csv").read_text())
    spec = build_spec(None, ["gender=suppress"])
    assert spec.hierarchies["gender"].file == Path("suppress")


@pytest.mark.parametrize("option, fragment", [
    ("gender=mask:x", "code length"), ("gender=dates:xyz", "dmy, mdy, ymd"),
    ("gender=intervals:", "intervals:5,10,20"), ("gender=intervals:a,b", "comma-separated numbers"),
])
def test_bad_qi_builder_is_one_line_exit_2(tmp_path, option, fragment):
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "o.csv", "--qi", option, "-k", 2)
    assert r.exit_code == 2 and fragment in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()


# ---------------------------------------------------------------- wording
def test_user_facing_text_cites_papers_not_project_names():
    from hieranon import report

    texts = [" ".join(v) for v in report.METRIC_TEXT.values()] + [TEMPLATE]
    texts += [run(*c, "--help").stdout for c in (("anonymize",), ("check",), ("evaluate",), ("report",),
                                                   ("experiments",))]
    for t in texts:
        assert not re.search(r"seed 00\d|\(seed|issue \d", t), t[:200]
    assert "Li et al. 2008, Def. 12" in report.METRIC_TEXT["inconsistency"][1]


def test_check_pluralises_and_evaluate_says_verified_once(tmp_path):
    out = tmp_path / "o.csv"
    assert run("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "-q").exit_code == 0
    r = run("check", EXAMPLE, "--config", EXAMPLE_CFG)
    assert not re.search(r"\b1 classes\b|\b1 records\b", r.stdout)
    assert re.search(r"\b\d+ classes / \d+ records\b", r.stdout)
    from hieranon.evaluation.risk import _count
    assert _count(1, "class", "classes") == "1 class" and _count(2, "record") == "2 records"
    r = run("evaluate", EXAMPLE, out, "--config", EXAMPLE_CFG)
    assert r.exit_code == 0 and "VERIFIED: " in r.stdout and "verified" not in r.stdout.lower().replace(
        "verified: ", "", 1).replace("(verified", "")


def test_json_per_attribute_metrics_are_named(tmp_path):
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "o.csv", "--config", EXAMPLE_CFG, "--json")
    m = json.loads(r.stdout)["metrics"]
    qis = list(yaml.safe_load(EXAMPLE_CFG.read_text())["quasi_identifiers"])
    for key in ("inconsistency_per_attribute", "generalisation_portion_per_attribute"):
        assert isinstance(m[key], dict) and list(m[key]) == qis
    assert max(m["inconsistency_per_attribute"].values()) == pytest.approx(m["inconsistency"])
