"""The report as guidance: parameters as the user wrote them, the method's
details in a sentence, "Reading the metrics", the roles of the columns, and
the public report that leaves out everything computed on the original."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

import hieranon
from hieranon import cli
from hieranon import report as R
from hieranon.io import read_table
from hieranon.io.datasets import example_path
from hieranon.job.config import load

EXAMPLE_CFG = example_path("patients.yaml")


def sections(html: str) -> dict[str, str]:
    return dict(re.findall(r'<section id="([^"]+)">(.*?)</section>', html, flags=re.S))


def text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)


@pytest.fixture(scope="module")
def result():
    cfg = load(EXAMPLE_CFG)
    df = read_table(example_path())
    hs = cfg.hierarchies(df)
    return hieranon.anonymize(df, hierarchies=hs, k=3, method="kaca1", seed=0, identifiers=["id"],
                              class_column="readmitted", params={"fast": True}, insensitive=["diagnosis"])


def test_method_parameters_as_written(result):
    sec = text(sections(R.render_report(None, result))["configuration"])
    row = re.search(r"method parameters\s+(.*?)\s{2,}", sec).group(1)
    assert row == "fast=yes"  # what the user gave; no placeholders of unset parameters
    assert "–" not in row and "suppression_threshold" not in row


def test_details_in_a_sentence_and_reading_the_metrics(result):
    html = R.render_report(None, result)
    timings = sections(html)["timings"]
    merges = result.info["merges"]
    assert "kaca1 " in timings and f"{merges:,} merges of classes" in timings
    assert "<details><summary>All details</summary>" in timings  # the raw details, folded
    reading = text(sections(html)["reading"])
    for metric in ("k achieved", "records at risk", "distortion ratio", "discernibility DM", "inconsistency"):
        assert metric in reading
    assert list(sections(html)).index("reading") == list(sections(html)).index("metrics") - 1


def test_roles_and_linkage_risks_in_the_risk_section():
    df = read_table(example_path())
    cfg = load(EXAMPLE_CFG)
    res = hieranon.anonymize(df, hierarchies=cfg.hierarchies(df), k=3, identifiers=["id"])
    sec = sections(R.render_report(None, res))["risk"]
    assert "Columns published unchanged" in sec and "diagnosis" in sec and "no role" in sec
    assert "Columns published unchanged" not in sections(R.render_report(None, res, public=True))["risk"]


def test_public_report_leaves_out_the_original(result):
    full, public = R.render_report(None, result), R.render_report(None, result, public=True)
    fs, ps = sections(full), sections(public)
    assert list(ps) == list(R.SECTIONS)
    assert "before (input)" in fs["risk"] and "before (input)" not in ps["risk"]
    assert "sample uniques" in fs["risk"] and "sample uniques" not in ps["risk"]
    assert "sample uniques" not in ps["summary"] and "before" not in text(ps["summary"])
    assert "distinct rows, input" in fs["metrics"] and "distinct rows, input" not in ps["metrics"]
    before = result.risk()[0]
    assert before.records_at_risk > 0
    assert "classes before (input)" in fs["class-sizes"] and "before (input)" not in ps["class-sizes"]
    assert "(public)" in public.split("</h1>")[0]


def test_report_command_public_and_order_map(tmp_path):
    out, amap, rep = tmp_path / "o.csv", tmp_path / "m.csv", tmp_path / "r.html"
    run = CliRunner().invoke
    r = run(cli.app, ["anonymize", str(example_path()), "-o", str(out), "--config", str(EXAMPLE_CFG), "--shuffle",
                      "--keep-order-map", str(amap), "-q"])
    assert r.exit_code == 0, r.stderr
    r = run(cli.app, ["report", str(example_path()), str(out), "--config", str(EXAMPLE_CFG), "-o", str(rep),
                      "--order-map", str(amap), "--public"])
    assert r.exit_code == 0, r.stderr
    html = rep.read_text(encoding="utf-8")
    assert "before (input)" not in sections(html)["risk"] and "VERIFIED: " in r.stdout


def test_sample_of_a_shuffled_release_highlights_its_own_rows():
    df = read_table(example_path())
    cfg = load(EXAMPLE_CFG)
    res = hieranon.anonymize(df, hierarchies=cfg.hierarchies(df), k=3, identifiers=["id"], shuffle=True, seed=2,
                             sensitive=["diagnosis"], insensitive=["readmitted"])
    sec = sections(R.render_report(None, res))["sample"]
    rows = re.findall(r"<tr>(.*?)</tr>", sec.split("<tbody>")[1], flags=re.S)
    qis = list(cfg.quasi_identifiers)
    for i, row in enumerate(rows):
        cells = re.findall(r"<td( class=\"gen\")?>(.*?)</td>", row)
        src = df.iloc[res.row_order[i]]
        for q, (gen, shown) in zip(res.data.columns, cells):
            if q in qis:  # highlighted exactly when the cell differs from its own input row's value
                assert bool(gen) == (shown != str(src[q])), (i, q, shown, src[q])
