"""The one normalisation of cell text (hieranon.core.cells) and where it applies:
QI and sensitive values, hierarchy leaves, the verifier reading released
cells exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import hieranon
from hieranon.core.cells import normalise_text, normalise_texts, released_text, value_to_label
from hieranon.core.table import DataError, encode
from hieranon.evaluation.verify import verify
from hieranon.hierarchies import readers as H
from hieranon.privacy import DistinctLDiversity, TCloseness

#: Leading/trailing whitespace a spreadsheet or a copy from a web page leaves.
SPACES = [" ", "  ", "\t", "\u00a0", "\u202f", "\u2009", "\u3000", "\u2007"]


def test_normalise_text_strips_unicode_spaces_and_composes():
    for s in SPACES:
        assert normalise_text(f"{s}flu{s}") == "flu"
    assert normalise_text("e\u0301") == "\u00e9"  # NFC: combining accent composed
    assert normalise_text(" new  york\u00a0") == "new  york"  # inner spaces are kept
    assert normalise_text("\u200bflu") == "\u200bflu"  # a zero-width space is not whitespace
    assert list(normalise_texts(np.array(["a ", "\u00a0b"], dtype=object))) == ["a", "b"]
    assert value_to_label(" 12\u00a0") == "12" and value_to_label(12.0) == "12"


def test_released_text_is_exact():
    assert released_text(" *") == " *" and released_text("*\u00a0") == "*\u00a0"
    assert released_text(None) is None and released_text(float("nan")) is None
    assert released_text(5.0) == "5"


def hierarchy():
    return H.from_arx_csv("a;x;*\nb;x;*\nc;y;*\nd;y;*\n", "q")


def test_hierarchy_file_leaves_are_normalised_like_the_data():
    """A leaf written with a no-break space or in decomposed form matches
    the data written otherwise."""
    h = H.from_arx_csv("caf\u00e9\u00a0;x;*\ne\u0301t\u00e9;x;*\n", "q")
    df = pd.DataFrame({"q": ["cafe\u0301", " \u00e9t\u00e9 "]})
    enc = encode(df, ["q"], {"q": h})
    assert [h.labels[c] for c in enc.codes[:, 0]] == ["caf\u00e9", "\u00e9t\u00e9"]
    assert H.from_mapping("q", {"*\u00a0": {" X": ["a\u3000", "b"]}}).labels == ["*", "X", "a", "b"]


def test_sensitive_values_are_one_value_once_normalised():
    """'flu', 'flu ', ' flu' and 'flu' after an ideographic space are one
    value: a class of them is 1-diverse, not 4-diverse."""
    df = pd.DataFrame({"s": ["flu", "flu ", " flu", "\u3000flu", "cold"]})
    m = DistinctLDiversity("s", 2).bind(df)
    assert list(m.labels) == ["flu", "cold"]
    assert m.measure(np.array([0, 0, 0, 0, 1]), 2).tolist() == [1.0, 1.0]


def test_blank_sensitive_cells_are_missing_like_empty_ones():
    df = pd.DataFrame({"s": ["flu", " ", None, "\u00a0"]})
    m = DistinctLDiversity("s", 2).bind(df)
    assert m.values.tolist() == [0, 1, 1, 1]


@pytest.mark.parametrize("cell", [" *", "* ", "*\u00a0", "\u3000*", "  *"])
def test_verifier_refuses_a_padded_ancestor_label(cell):
    df = pd.DataFrame({"q": ["a", "b", "c", "d"], "s": ["1", "2", "3", "4"]})
    anon = pd.DataFrame({"q": ["*", cell, "*", "*"], "s": df["s"]})
    rep = verify(df, anon, ["q"], {"q": hierarchy()}, k=2)
    assert not rep.ok
    (bad,) = rep.by_kind("not_generalisation")
    assert bad.column == "q" and bad.row == 1
    assert repr(cell) in bad.message and "'*'" in bad.message and "surrounding spaces" in bad.message
    assert verify(df, anon.assign(q="*"), ["q"], {"q": hierarchy()}, k=2).ok


def test_verifier_reads_padded_original_values_as_their_normalised_labels():
    """The original may be padded (it is normalised); the release must print
    the normalised value exactly."""
    df = pd.DataFrame({"q": [" a", "a\u00a0", "b ", "b"], "s": ["1", "2", "3", "4"]})
    assert verify(df, df.assign(q=["a", "a", "b", "b"]), ["q"], {"q": hierarchy()}, k=2).ok
    rep = verify(df, df.copy(), ["q"], {"q": hierarchy()}, k=1)
    assert not rep.ok and {v.row for v in rep.by_kind("not_generalisation")} == {0, 1, 2}


def test_verifier_compares_non_qi_text_exactly():
    df = pd.DataFrame({"q": ["a", "b"], "s": ["5", "flu"]})
    anon = pd.DataFrame({"q": ["x", "x"], "s": [" 5", "flu\u00a0"]})
    rep = verify(df, anon, ["q"], {"q": hierarchy()}, k=2)
    (changed,) = rep.by_kind("non_qi_changed")
    assert changed.column == "s" and "2 row(s) differ" in changed.message


def test_check_reads_a_published_table_exactly():
    pub = pd.DataFrame({"q": ["x", "x ", "y", "y"]})
    with pytest.raises(DataError, match=r"column 'q', record 2 .*cell 'x '"):
        encode(pub, ["q"], {"q": hierarchy()}, generalised=True)
    assert encode(pub.assign(q=["x", "x", "y", "y"]), ["q"], {"q": hierarchy()}, generalised=True).n_rows == 4


def test_anonymiser_publishes_kept_qi_values_normalised():
    """A QI column left ungeneralised prints its normalised values, so the
    published classes are the ones the verifier checked; the sensitive column
    is published byte for byte."""
    df = pd.DataFrame({"q": [" a", "a\u00a0", "b ", "b"], "s": ["flu ", " cold", "flu", "cold\u3000"]})
    r = hieranon.anonymize(df, hierarchies={"q": hierarchy()}, k=2, sensitive=["s"],
                           privacy=[DistinctLDiversity("s", 2)])
    assert r.data["q"].tolist() == ["a", "a", "b", "b"]
    assert r.data["s"].tolist() == df["s"].tolist()
    assert verify(df, r.data, ["q"], {"q": hierarchy()}, k=2, privacy=[DistinctLDiversity("s", 2)]).ok


def test_anonymiser_l_diversity_holds_on_normalised_sensitive_values():
    """Before, 'flu', 'flu ' and ' flu' counted as three values and kept
    {a} and {b} apart as 2-diverse classes."""
    df = pd.DataFrame({"q": ["a", "a", "b", "b"], "s": ["flu", "flu ", " flu", "cold"]})
    r = hieranon.anonymize(df, hierarchies={"q": hierarchy()}, k=2, sensitive=["s"],
                           privacy=[DistinctLDiversity("s", 2)])
    assert r.data["q"].tolist() == ["x", "x", "x", "x"]


def test_t_closeness_measures_normalised_values():
    df = pd.DataFrame({"s": ["flu", "flu ", "cold", "cold\u00a0"]})
    m = TCloseness("s", 0.1, distance="equal").bind(df)
    assert m.n_values == 2
    assert m.measure(np.array([0, 0, 1, 1]), 2).tolist() == [0.5, 0.5]
