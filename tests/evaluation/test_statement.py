"""The release statement: what holds (the verified requirements and models)
and what does not (homogeneous sensitive columns without a model, linkage
risks, the row order kept), records suppressed and cells generalised to *
counted apart."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import hieranon
from hieranon.evaluation import statement as S
from hieranon.hierarchies import readers as H
from hieranon.io.datasets import example_path
from hieranon.privacy import sensitive_columns


def test_homogeneous_classes_counted_by_hand():
    # classes: rows {0, 1, 2} (diag a, a, a), {3, 4} (a, b), {5} alone (c, 3 records)
    df = pd.DataFrame({"diag": list("aaaabc"), "other": list("xyxyxy")})
    counts = np.array([1, 1, 1, 1, 1, 3])
    codes = np.array([[1], [1], [1], [2], [2], [3]])
    cols = sensitive_columns(df, ["diag", "other"], counts)
    found = S.homogeneous_findings(cols, {"other"}, codes, counts)  # 'other' has a model: not listed
    assert [(f.column, f.detail) for f in found] == [("diag", {"classes": 2, "of_classes": 3, "records": 6})]
    assert "2 of 3 classes (6 records)" in found[0].text and "--l-diversity diag=2" in found[0].text
    assert S.homogeneous_findings(cols, {"diag", "other"}, codes, counts) == []
    assert S.homogeneous_findings(cols, set(), None, counts) == []  # no output codes: nothing claimed


def test_star_cells_leave_out_suppressed_rows_and_missing_cells():
    original = np.array([[3, 4], [3, 0], [5, 6], [5, 6]])
    codes = np.array([[0, 4], [0, 0], [0, 0], [1, 2]])  # row 2 suppressed; row 1's second cell was missing
    suppressed = np.array([False, False, True, False])
    counts = np.array([2, 1, 5, 1])
    assert S.star_cells(codes, original, suppressed, counts, ["a", "b"]) == {"a": 3, "b": 0}


def _patients():
    df = pd.read_csv(example_path("patients.csv"), dtype=str)
    hs = {"gender": H.suppression("gender", df["gender"]),
          "age": H.intervals("age", df["age"].astype(int), [5, 10, 20]),
          "postcode": H.masking("postcode", df["postcode"])}
    return df, hs


def test_the_api_result_names_what_holds_and_what_does_not():
    df, hs = _patients()
    # date_of_birth, unique per patient, is published unchanged
    df["flag"] = np.where(np.arange(len(df)) < 5, "yes", "no")  # rare: most classes show only "no"
    roles = dict(identifiers=["id"], sensitive=["diagnosis", "flag"], insensitive=["readmitted", "date_of_birth"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every column has a role: the gaps are no warnings but the statement
        plain = hieranon.anonymize(df, hierarchies=hs, k=3, seed=0, **roles)
    st = plain.statement()
    assert st.holds == ["k = 3: verified"]
    kinds = {f.kind: f for f in st.does_not_hold}
    assert "row_order_kept" in kinds and kinds["row_order_kept"].column is None
    # date_of_birth: a linkage risk of the release
    assert kinds["near_unique"].column == "date_of_birth"
    # a sensitive column without a model that takes one value in some classes of the output, as counted there
    found = {f.column: f.detail for f in st.does_not_hold if f.kind == "homogeneous_sensitive"}
    for column in ("diagnosis", "flag"):
        by = plain.data.groupby(["gender", "age", "postcode"])[column]
        homogeneous = by.nunique() == 1
        expected = {"classes": int(homogeneous.sum()), "of_classes": len(homogeneous),
                    "records": int(by.size()[homogeneous].sum())}
        assert found.get(column) == (expected if homogeneous.any() else None), column
    assert "flag" in found
    # in the summary (JSON), the notebook display and beside the suppressed records
    summary = json.loads(json.dumps(plain.summary(), default=str))
    assert summary["statement"]["holds"] == st.holds
    assert [f["kind"] for f in summary["statement"]["does_not_hold"]] == [f.kind for f in st.does_not_hold]
    facts = dict(plain._short_facts())
    assert facts["holds"] == "k = 3: verified" and "does not hold" in facts
    assert facts["cells generalised to * (records not suppressed)"] == f"{st.star_cells_total:,}"
    # shuffled: the order is no gap any more
    shuffled = hieranon.anonymize(df, hierarchies=hs, k=3, shuffle=True, **roles)
    assert "row_order_kept" not in {f.kind for f in shuffled.statement().does_not_hold}


def test_strict_error_is_one_line_naming_the_first_gap_and_how_many_more():
    a = S.Finding("row_order_kept", None, "rows kept")
    b = S.Finding("near_unique", "x", "x is near-unique")
    st = S.ReleaseStatement(["k = 2: verified"], [a, b], 0, {"q": 0}, 10)
    assert st.strict_error() == "strict: rows kept (and 1 more: see without --strict)"
    assert S.ReleaseStatement(["k = 2: verified"], [], 0, None, 10).strict_error() is None
    assert st.lines() == [(True, "k = 2: verified"), (False, "rows kept"), (False, "x is near-unique")]


@pytest.mark.parametrize("suppressed, stars, text", [
    (0, {"age": 31, "sex": 0}, "0 records suppressed (every quasi-identifier *); 31 more cells generalised to * in "
                               "records not suppressed (age 31.0% of the records)"),
    (4, None, "4 records suppressed (every quasi-identifier *)")])
def test_cells_text_keeps_suppressed_records_and_star_cells_apart(suppressed, stars, text):
    assert S.ReleaseStatement([], [], suppressed, stars, 100).cells_text() == text
