"""Fuzz of cell text: whitespace, no-break and other Unicode spaces and
decomposed accents around quasi-identifier and sensitive cells.

* In the input, they are read by the one normalisation of cell text: the
  privacy models hold on the normalised values, which this module checks
  on its own (``unicodedata`` and pandas, not hieranon's code), and the
  release prints every QI cell as an exact label while the sensitive column
  is published byte for byte.
* In a release, a padded ancestor label is not the label: the verifier, and
  ``evaluate`` on the command line, refuse it, naming the column and row."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

import hieranon
from hieranon.evaluation.verify import verify
from hieranon.hierarchies import readers as H
from hieranon.privacy import DistinctLDiversity, PrivacyError, TCloseness
from test_fuzz import FUZZ, assert_contract, run_cli, workdir

#: Characters Unicode (and Python's str.isspace) call whitespace.
SPACES = [" ", "\t", "\u00a0", "\u202f", "\u2009", "\u3000", "\u2007", "\u1680", "\u205f"]
LEAVES = {"anna": "A", "berit": "A", "carl": "C", "d\u00e9sir\u00e9e": "C"}  # leaf -> group
DISEASES = ["flu", "cold", "hiv", "caf\u00e9 lung"]


def hierarchy_text() -> str:
    return "".join(f"{leaf};{group};*\n" for leaf, group in LEAVES.items())


def plain(text: str) -> str:
    """The rule, written independently of hieranon: NFC, then strip."""
    return unicodedata.normalize("NFC", text).strip()


@st.composite
def variants(draw, values: list[str]) -> str:
    """One of ``values``, maybe decomposed (NFD), maybe padded on either side."""
    v = draw(st.sampled_from(values))
    if draw(st.booleans()):
        v = unicodedata.normalize("NFD", v)
    pad = st.text(st.sampled_from(SPACES), max_size=3)
    return draw(pad) + v + draw(pad)


@st.composite
def padded_tables(draw):
    n = draw(st.integers(4, 24))
    return pd.DataFrame({"name": [draw(variants(list(LEAVES))) for _ in range(n)],
                         "disease": [draw(variants(DISEASES)) for _ in range(n)]})


def assert_private(df: pd.DataFrame, out: pd.DataFrame, k: int, l_div: int | None, t: float | None) -> None:
    """Independently: QI cells are exact labels, the sensitive column is
    unchanged, classes of the released text hold k records, l normalised
    values and an equal-distance EMD <= t."""
    labels = set(LEAVES) | set(LEAVES.values()) | {"*"}
    assert set(out["name"]) <= labels, set(out["name"]) - labels
    assert out["disease"].tolist() == df["disease"].tolist()
    sens = df["disease"].map(plain)
    q = sens.value_counts(normalize=True)
    for _, rows in out.groupby("name").groups.items():
        vals = sens.loc[rows]
        assert len(rows) >= k
        if l_div is not None:
            assert vals.nunique() >= l_div, vals.tolist()
        if t is not None:
            p = vals.value_counts(normalize=True).reindex(q.index, fill_value=0.0)
            assert 0.5 * float(np.abs(p - q).sum()) <= t + 1e-9


@FUZZ
@given(df=padded_tables(), k=st.integers(1, 3), model=st.sampled_from(["l2", "l3", "t0.4", "t0.25"]))
def test_fuzz_padded_input_cells_keep_the_privacy_models(df, k, model):
    h = H.from_arx_csv(hierarchy_text(), "name")
    l_, t_ = (int(model[1:]), None) if model[0] == "l" else (None, float(model[1:]))
    m = DistinctLDiversity("disease", l_) if l_ else TCloseness("disease", t_, distance="equal")
    try:
        r = hieranon.anonymize(df, hierarchies={"name": h}, k=k, sensitive=["disease"], privacy=[m],
                               method="kaca+")
    except PrivacyError:
        # refused only when the whole table, normalised, cannot meet the model
        sens = df["disease"].map(plain)
        if l_:
            assert sens.nunique() < l_
        return
    assert_private(df, r.data, k, l_, t_)


@st.composite
def padded_releases(draw):
    """A valid release of a small table and the same with some QI cells
    padded (an exact label with spaces around it)."""
    n = draw(st.integers(2, 12))
    df = pd.DataFrame({"name": draw(st.lists(st.sampled_from(list(LEAVES)), min_size=n, max_size=n)),
                       "disease": draw(st.lists(st.sampled_from(DISEASES), min_size=n, max_size=n))})
    level = draw(st.sampled_from(["leaf", "group", "root"]))
    out = df.copy()
    out["name"] = [v if level == "leaf" else LEAVES[v] if level == "group" else "*" for v in df["name"]]
    rows = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=n)))
    bad = out.copy()
    for r in rows:
        pad = st.text(st.sampled_from(SPACES), max_size=2)
        before, after = draw(pad), draw(pad)
        if not before and not after:
            after = draw(st.sampled_from(SPACES))
        bad.loc[r, "name"] = before + out.loc[r, "name"] + after
    return df, out, bad, rows


@FUZZ
@given(case=padded_releases())
def test_fuzz_verifier_refuses_padded_labels(case):
    df, out, bad, rows = case
    h = {"name": H.from_arx_csv(hierarchy_text(), "name")}
    assert verify(df, out, ["name"], h, k=1).ok
    rep = verify(df, bad, ["name"], h, k=1)
    assert not rep.ok
    flagged = rep.by_kind("not_generalisation")
    assert flagged and all(v.column == "name" for v in flagged)
    assert {v.row for v in flagged} <= set(rows) and flagged[0].row == rows[0]
    assert repr(bad.loc[rows[0], "name"]) in flagged[0].message


@FUZZ
@given(case=padded_releases())
def test_fuzz_evaluate_refuses_padded_labels(case):
    df, _, bad, rows = case
    with workdir() as d:
        (d / "h.csv").write_text(hierarchy_text(), encoding="utf-8")
        df.to_csv(d / "in.csv", index=False)
        bad.to_csv(d / "out.csv", index=False)
        inputs = {d / "h.csv", d / "in.csv", d / "out.csv"}
        code, out, err = run_cli("evaluate", d / "in.csv", d / "out.csv", "--qi", f"name={d / 'h.csv'}", "-k", "1")
        assert_contract(code, err, Path(d), inputs, [])
        assert code == 1, (out, err)
        assert f"row {rows[0]}" in out + err and "'name'" in out + err
