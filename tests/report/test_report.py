"""The HTML report: sections, figures, escaping, atomic writing, existing pairs."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hieranon import report as R
from hieranon.core.table import EncodedTable
from hieranon.evaluation.risk import assess
from hieranon.hierarchies import readers as H
from hieranon.io import InputError, read_table
from hieranon.io.datasets import example_path
from hieranon.job import config as C
from hieranon.job.pipeline import anonymize
from hieranon.report.page import fmt, pct
from hieranon.report.sections.classes import size_bins
from hieranon.report.sections.measures import SKIP_METRICS

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def example():
    cfg = C.load(example_path("patients.yaml"))
    df = read_table(example_path())
    hs = cfg.hierarchies(df)
    result = anonymize(df, list(hs), hs, cfg.k, method="fulldomain", seed=0,
                                    identifiers=cfg.identifiers, class_column=cfg.class_column)
    return df, cfg, hs, result


def sections(html: str) -> dict[str, str]:
    """Section id -> its HTML."""
    parts = re.findall(r'<section id="([^"]+)">(.*?)</section>', html, flags=re.S)
    return dict(parts)


def images(html: str) -> list[bytes]:
    return [base64.b64decode(x) for x in re.findall(r'src="data:image/png;base64,([^"]+)"', html)]


def test_every_section_in_order(example):
    df, cfg, hs, result = example
    html = R.render_report(df, result, cfg, input_name="patients.csv", output_name="out.csv")
    assert list(sections(html)) == list(R.SECTIONS)
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert "<style>" in html and "<link" not in html and "<script" not in html
    pngs = images(html)
    # generalisation bars, class sizes; the utility section's marginals and Cramér's V maps
    assert len(pngs) == 4 and all(p.startswith(b"\x89PNG") for p in pngs)
    assert "patients.csv" in html and "out.csv" in html


def test_configuration_section(example):
    df, cfg, hs, result = example
    sec = sections(R.render_report(df, result, cfg))["configuration"]
    assert "fulldomain" in sec
    assert "&lt;{gender, age, postcode, date_of_birth}, 3&gt;" in sec  # the requirement, escaped
    for name, h in hs.items():
        row = re.search(rf"<tr><td>{name}</td><td class=\"num\">(\d+)</td>", sec)
        assert row and int(row.group(1)) == h.height
    for text in ("uniform", "id (dropped)", "diagnosis", "readmitted", "patients.yaml",
                 "patients_hierarchy_age.csv"):
        assert text in sec


def test_metrics_section_lists_every_metric(example):
    df, cfg, hs, result = example
    sec = sections(R.render_report(df, result, cfg))["metrics"]
    for key, value in result.metrics.as_dict().items():
        if key in SKIP_METRICS or value is None:
            continue
        assert R.METRIC_TEXT[key][0] in sec, key
    assert fmt(result.metrics.discernibility) in sec


def test_risk_before_and_after_match_risk_module(example):
    df, cfg, hs, result = example
    sec = sections(R.render_report(df, result, cfg))["risk"]
    qis = list(hs)
    counts = np.ones(len(df), dtype=np.int64)
    table = EncodedTable(result.original_codes, result.hierarchies, qis, counts)
    before = assess(table, result.requirements)
    keep = ~result.suppressed
    after = assess(EncodedTable(result.original_codes[keep], result.hierarchies, qis, counts[keep]),
                   result.requirements, codes=result.codes[keep])
    row = re.search(r"prosecutor risk, highest</td><td class=\"num\">([^<]+)</td><td class=\"num\">([^<]+)<", sec)
    assert row.groups() == (fmt(before.risk_max), fmt(after.risk_max))
    row = re.search(r"sample uniques</td><td class=\"num\">([^<]+)</td><td class=\"num\">([^<]+)<", sec)
    assert row.groups() == (pct(before.sample_uniques), pct(after.sample_uniques))
    assert "records at risk" in sec and "average" in sec
    assert after.achieved_k >= 3 > before.achieved_k


def test_generalisation_section_shares(example):
    df, cfg, hs, result = example
    sec = sections(R.render_report(df, result, cfg))["generalisation"]
    assert len(images(sec)) == 1
    from hieranon.evaluation.metrics import level_fractions
    for j, h in enumerate(result.hierarchies):
        fr = level_fractions(result.codes[:, j], h)
        shares = " / ".join(pct(fr[d]) for d in range(h.height - 1, -1, -1))
        assert shares in sec, h.name


def test_class_size_histogram_and_bins(example):
    df, cfg, hs, result = example
    sec = sections(R.render_report(df, result, cfg))["class-sizes"]
    assert len(images(sec)) == 1 and "k = 3" not in sec  # the k marker is drawn in the plot
    for max_size, k in [(1, 1), (100, 5), (45222, 10), (7, 50), (3, 3)]:
        bins = size_bins(max_size, k)
        assert bins[0][0] == 1
        assert all(b[0] == a[1] + 1 for a, b in zip(bins, bins[1:]))  # contiguous
        assert bins[-1][1] >= max_size
        if k > 1:
            assert any(lo == k for lo, _ in bins)  # a bin starts at k


def test_verification_timings_and_sample(example):
    df, cfg, hs, result = example
    secs = sections(R.render_report(df, result, cfg))
    assert "Verified" in secs["verification"]
    for step in result.timings:
        assert f"<td>{step}</td>" in secs["timings"]
    rows = re.findall(r"<tr>", secs["sample"].split("<tbody>")[1])
    assert len(rows) == 20
    assert 'class="gen"' in secs["sample"]  # generalised cells are highlighted
    assert "Dropped direct identifier column(s): id" in secs["sample"]


def test_values_are_html_escaped():
    evil = "<script>alert(1)</script>"
    df = pd.DataFrame({"q": ["a&b", "a&b", "<u>", "<u>"], "note": [evil, "x", "y", '"quoted"']})
    hs = {"q": H.suppression("q", df["q"])}
    result = anonymize(df, ["q"], hs, 2, method="fulldomain")
    html = R.render_report(df, result, None)
    assert "<script" not in html and "<u>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "a&amp;b" in html and "&lt;u&gt;" in html


def test_counts_and_suppression_reported():
    df = pd.DataFrame({"g": ["m", "f", "f", "x"], "a": ["1", "2", "2", "9"], "n": ["5", "3", "4", "1"]})
    hs = {"g": H.suppression("g", df["g"]), "a": H.suppression("a", df["a"])}
    result = anonymize(df, ["g", "a"], hs, 4, method="kaca1", count_column="n",
                                    suppression_threshold=0.5)
    html = R.render_report(df, result, {"count_column": "n"})
    risk = sections(html)["risk"]
    # the lone 'x' record, and (so that the suppressed rows are a class of >= k
    # records) the 3 records of row 1, which its class {f, 2} of 7 can spare
    assert result.suppressed.tolist() == [False, True, False, True]
    # records are counted with their counts; the suppressed records are left out after
    assert re.search(r"<td>records</td><td class=\"num\">13</td><td class=\"num\">9</td>", risk)
    assert "The 4 suppressed record(s)" in risk
    summary = sections(html)["summary"]
    assert re.search(r'<div class="v">4</div><div class="l">suppressed records', summary)


def test_write_report_atomic(example, tmp_path):
    df, cfg, hs, result = example
    path = R.write_report(tmp_path / "r.html", df, result, cfg)
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    with pytest.raises(InputError, match="does not exist"):
        R.write_report(tmp_path / "missing" / "r.html", df, result, cfg)
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]


def test_evaluate_pair_matches_anonymize(example):
    df, cfg, hs, result = example
    pair = R.evaluate_pair(df, result.data, list(hs), hs, k=3, identifiers=["id"], class_column="readmitted")
    assert pair.verification.ok
    assert pair.metrics.distortion == pytest.approx(result.metrics.distortion)
    assert pair.metrics.achieved_k == result.metrics.achieved_k
    assert np.array_equal(pair.codes, result.codes)
    html = R.render_report(df.drop(columns=["id"]), pair, cfg)
    assert list(sections(html)) == list(R.SECTIONS)


def test_evaluate_pair_failing_pairs(example):
    df, cfg, hs, result = example
    raw = df.drop(columns=["id"])
    pair = R.evaluate_pair(raw, raw, list(hs), hs, k=3)  # unchanged: fails k
    assert not pair.verification.ok and pair.metrics is not None
    assert "FAILED" in sections(R.render_report(raw, pair, None))["verification"]
    bad = result.data.copy()
    bad.loc[3, "postcode"] = "9999"
    pair = R.evaluate_pair(raw, bad, list(hs), hs, k=3)
    assert pair.metrics is None and pair.codes is None
    html = R.render_report(raw, pair, None)
    assert list(sections(html)) == list(R.SECTIONS)
    assert "9999" in sections(html)["verification"]
    assert "Not available" in sections(html)["metrics"]


def test_screenshot_script(tmp_path, chromium):
    out = tmp_path / "shot.png"
    proc = subprocess.run(["bash", str(REPO / "scripts" / "screenshot_report.sh"), str(out)], capture_output=True,
                          text=True, env={**os.environ, "CHROMIUM": chromium})
    assert proc.returncode == 0, proc.stderr
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) < 500_000


# ------------------------------------------------------------ sensitive attributes
def _anonymised_example(**kw):
    cfg = C.load(example_path("patients.yaml"))
    df = read_table(example_path())
    hs = cfg.hierarchies(df)
    return df, hs, anonymize(df, list(hs), hs, cfg.k, seed=0, identifiers=cfg.identifiers, **kw)


def _homogeneous(frame: pd.DataFrame, qis: list, attr: str) -> tuple[int, int, int]:
    """(classes, homogeneous classes, records in them), computed with pandas."""
    g = frame.groupby(qis, dropna=False, observed=True)[attr]  # numeric QIs are categoricals
    distinct, size = g.nunique(dropna=False), g.size()
    return len(size), int((distinct == 1).sum()), int(size[distinct == 1].sum())


def test_sensitive_section_shows_models_before_and_after():
    from hieranon.privacy import DistinctLDiversity, TCloseness

    df, hs, result = _anonymised_example(method="mondrian", privacy=[DistinctLDiversity("diagnosis", 3),
                                                                     TCloseness("diagnosis", 0.4)])
    sec = sections(R.render_report(None, result))["sensitive"]
    qis = list(hs)
    before = df.groupby(qis)["diagnosis"].nunique()
    after = result.data.groupby(qis, observed=True)["diagnosis"].nunique()  # numeric QIs are categoricals
    assert "<h3>diagnosis</h3>" in sec
    assert "distinct 3-diversity of &#x27;diagnosis&#x27;" in sec and "0.4-closeness" in sec
    assert f"{before.min():.4g} → " in sec and after.min() >= 3
    assert f'<b class="okv">{after.min():.4g}</b>' in sec  # the worst output class, marked as meeting the model
    assert f"{int((before < 3).sum())} of {len(before)} → 0 of {len(after)}" in sec
    (png,) = images(sec)
    assert png.startswith(b"\x89PNG")
    m = result.privacy().models[0]
    assert (m.before.achieved, m.after.achieved) == (before.min(), after.min())
    assert m.after.records_violating == 0 and m.before.records_violating == int(
        df.groupby(qis).size()[before < 3].sum())


def test_sensitive_section_states_the_share_of_empty_cells():
    """Empty sensitive cells count as one value of their own: the section says
    how many records have one, only where there are some."""
    from hieranon.privacy import DistinctLDiversity

    cfg = C.load(example_path("patients.yaml"))
    df = read_table(example_path())
    hs = cfg.hierarchies(df)
    df.loc[df.index[::4], "diagnosis"] = ""
    result = anonymize(df, list(hs), hs, cfg.k, seed=0, identifiers=cfg.identifiers,
                       privacy=[DistinctLDiversity("diagnosis", 2)])
    sec = sections(R.render_report(None, result))["sensitive"]
    share = (df["diagnosis"] == "").mean()
    assert f"{share:.1%} of the records have an empty cell here" in sec
    _, _, plain = _anonymised_example(method="mondrian", privacy=[DistinctLDiversity("diagnosis", 2)])
    assert "empty cell" not in sections(R.render_report(None, plain))["sensitive"]


def test_sensitive_section_without_models_plots_the_declared_columns():
    """A sensitive column with no model: its distribution is drawn and the
    homogeneous classes counted, before and after."""
    df, hs, result = _anonymised_example(method="fulldomain", sensitive=["diagnosis"])
    assert result.privacy().models == []
    sec = sections(R.render_report(None, result))["sensitive"]
    assert "No privacy model set" in sec and len(images(sec)) == 1
    qis = list(hs)
    n, hom, rec = _homogeneous(result.data, qis, "diagnosis")
    assert f"{n:,} output classes; {hom:,} of them ({rec:,} records) are homogeneous" in sec
    n0, hom0, _ = _homogeneous(df, qis, "diagnosis")
    assert f"Before anonymisation, {hom0:,} of the original&#x27;s {n0:,} classes" in sec


def test_sensitive_section_when_nothing_is_sensitive(example):
    df, cfg, hs, result = example
    sec = sections(R.render_report(df, result, cfg))["sensitive"]
    assert "No sensitive attribute declared" in sec and not images(sec)


def test_api_privacy_argument_is_verified_and_infeasible_is_refused():
    from hieranon.privacy import DistinctLDiversity, PrivacyError

    df, hs, result = _anonymised_example(method="mondrian", privacy=[DistinctLDiversity("diagnosis", 2)])
    assert result.verification.achieved_privacy["distinct 2-diversity of 'diagnosis'"] >= 2
    assert result.summary()["privacy"]["models"][0]["after"]["classes_violating"] == 0
    n = df["diagnosis"].nunique()
    with pytest.raises(PrivacyError, match=f"l = {n} distinct"):
        _anonymised_example(privacy=[DistinctLDiversity("diagnosis", n + 1)])


# ------------------------------------------------------------------ utility section
def test_utility_section_without_target_shows_losses_and_pairs(example):
    df, cfg, hs, result = example
    sec = sections(R.render_report(df, result, cfg))["utility"]
    u = result.utility()
    assert "No target column" in sec and len(images(sec)) == 2
    for a in u.attributes:
        assert f"<td>{a.name}</td><td class=\"num\">{a.kept:.1%}</td>" in sec
        assert f"{a.entropy_loss:.3f}" in sec and f"{a.granularity_loss:.3f}" in sec
    assert "Cramér" in sec and "Iyengar 2002" in sec


def test_utility_section_numbers_are_the_api_s(example):
    df, cfg, hs, result = example
    u = result.utility("readmitted")
    sec = sections(R.render_report(df, result, cfg))["utility"]
    assert "predicting <code>readmitted</code> (classification)" in sec and len(images(sec)) == 3
    for m in u.models:
        assert f"<td>{m.model}</td><td class=\"num\">{m.original:.4f}</td><td class=\"num\">{m.anonymised:.4f}</td>" \
               f"<td class=\"num\">{m.relative:.4f}</td>" in sec
    assert "held-out" in sec and "majority-class" in sec.lower()


def test_utility_section_left_out_of_a_public_report_and_on_request(example):
    df, cfg, hs, result = example
    assert "Left out of a public report" in sections(R.render_report(df, result, cfg, public=True))["utility"]
    sec = sections(R.render_report(df, result, cfg, utility=False))["utility"]
    assert "Not computed" in sec and not images(sec)


def test_report_command_utility_json_and_html_agree(tmp_path):
    from hieranon.io.datasets import example_path as ep

    out_csv, html = tmp_path / "anon.csv", tmp_path / "rep.html"
    # the interpreter running the suite (not whatever `python` or .venv is about): the stack under test
    cli = [sys.executable, "-m", "hieranon"]
    subprocess.run([*cli, "anonymize", str(ep()), "-c", str(ep("patients.yaml")), "-o", str(out_csv), "-q"],
                   check=True)
    proc = subprocess.run([*cli, "report", str(ep()), str(out_csv), "-c", str(ep("patients.yaml")), "-o", str(html),
                           "--utility", "--target", "readmitted", "--json"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import json
    models = json.loads(proc.stdout)["utility"]["models"]
    sec = sections(html.read_text())["utility"]
    for m in models:
        assert f"<td class=\"num\">{m['relative']:.4f}</td>" in sec
