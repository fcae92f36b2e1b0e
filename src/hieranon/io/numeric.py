"""Typed output of generalised numbers: a numeric quasi-identifier written as
its label, its range, its midpoint or its bounds (``--numeric-output``), and
read back from any of those forms."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..core.cells import MISSING_LABEL, is_missing, value_to_label
from ..core.files import excerpt
from ..core.tree import Hierarchy
from ..hierarchies.builders import as_floats, leaf_values, node_bounds
from .errors import InputError

#: The forms a generalised number can be written in (``--numeric-output``).
NUMERIC_OUTPUTS = ("label", "range", "midpoint", "bounds")


def hierarchy_map(hierarchies) -> dict[str, Hierarchy]:
    """Attribute name -> hierarchy from a mapping or from a sequence of
    hierarchies (what a result holds: ``result.hierarchies``)."""
    if isinstance(hierarchies, Mapping):
        return dict(hierarchies)
    return {h.name: h for h in hierarchies}


def _numeric_hierarchies(hierarchies, columns) -> dict:
    """QI name -> (hierarchy, NodeBounds) for the QIs among ``columns`` whose leaves are numbers."""
    out = {}
    for q, h in hierarchy_map(hierarchies).items():
        if q in columns:
            nb = node_bounds(h)
            if nb is not None:
                out[q] = (h, nb)
    return out


def numeric_columns(columns, hierarchies, mode: str) -> dict:
    """QI name -> (hierarchy, NodeBounds) of the quasi-identifiers that
    numeric output ``mode`` writes as numbers: those whose leaves (other
    than ``missing``) are all numbers; the others (text values) stay labels.

    Raises :class:`InputError` (naming the column) before any work when
    ``mode`` cannot be honoured: a quasi-identifier mixes numbers and text,
    no quasi-identifier holds numbers, or (``bounds``) the table already has
    a column ``NAME_lower`` / ``NAME_upper`` the output would write."""
    if mode not in NUMERIC_OUTPUTS:
        raise InputError(f"--numeric-output {mode!r}: expected one of {', '.join(NUMERIC_OUTPUTS)}")
    hs = {q: h for q, h in hierarchy_map(hierarchies).items() if q in columns}
    if mode == "label" or not hs:
        return {}
    text = []
    for q, h in hs.items():
        leaves, vals = leaf_values(h)
        bad = np.isnan(vals)
        if bad.all():
            text.append(q)
        elif bad.any():
            raise InputError(f"--numeric-output {mode}: column {q!r} mixes numbers and text (value "
                             f"{excerpt(h.labels[leaves[np.argmax(bad)]])} is not a number); correct that value "
                             "or write the column as labels (--numeric-output label)")
    numeric = _numeric_hierarchies({q: h for q, h in hs.items() if q not in text}, columns)
    if not numeric:
        raise InputError(f"--numeric-output {mode}: no quasi-identifier holds numbers ({', '.join(text)} hold "
                         "text); use --numeric-output label")
    if mode == "bounds":
        for q in numeric:
            for c in (f"{q}_lower", f"{q}_upper"):
                if c in columns:
                    raise InputError(f"--numeric-output bounds writes {q!r} as {q}_lower and {q}_upper, but the "
                                     f"table already has a column {c!r}; rename that column or choose another "
                                     "--numeric-output")
    return numeric


def _node_of_cells(col: pd.Series, h: Hierarchy) -> np.ndarray:
    """Per cell, a node printed as the cell (-1: missing or not a label).
    Labels repeated along a chain name the same values: any of them serves."""
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    by_label = {}
    for v in range(h.n_nodes - 1, -1, -1):
        by_label[h.labels[v]] = v
    node_u = np.array([by_label.get(value_to_label(x), -1) for x in uniques], dtype=np.int64)
    node_u = np.append(node_u, -1)
    return node_u[codes]


def typed_numeric_qis(df: pd.DataFrame, hierarchies: Mapping[str, Hierarchy]) -> pd.DataFrame:
    """``df`` with every numeric quasi-identifier (a hierarchy whose leaves
    are numbers and whose inner labels write ranges or numbers) as an **ordered pandas Categorical** of its labels: the
    categories are all the labels of the hierarchy, ordered by the range they
    stand for (lower bound, then upper bound: ``*`` first, ``missing``
    last), so ``[25, 50)`` sorts before ``[50, 75)`` and the exact value
    ``37`` after ``[25, 50)``. A cell that is missing stays missing. Other
    columns keep their dtype. :func:`numeric_output` turns the labels into
    ranges, midpoints or lower/upper bounds."""
    out = df.copy()
    for q, (h, nb) in _numeric_hierarchies(hierarchies, df.columns).items():
        if not nb.ranged:
            continue  # codes (a masked 435*) or values without ranges: they stay as they are
        node = _node_of_cells(df[q], h)
        known = node >= 0
        if not (known | is_missing(df[q])).all():
            continue  # not this hierarchy's labels: left as it is
        order = np.lexsort((np.arange(h.n_nodes), np.nan_to_num(nb.upper, nan=np.inf),
                            np.nan_to_num(nb.lower, nan=np.inf)))
        cats = pd.unique(pd.Series(np.asarray(h.labels, dtype=object)[order]))
        rank = {label: i for i, label in enumerate(cats)}
        node_rank = np.array([rank[x] for x in h.labels], dtype=np.int64)
        codes = np.where(known, node_rank[np.maximum(node, 0)], -1)
        out[q] = pd.Categorical.from_codes(codes, categories=list(cats), ordered=True)
    return out


def numeric_output(df: pd.DataFrame, hierarchies, mode: str = "label") -> pd.DataFrame:
    """The numeric quasi-identifiers of an anonymised table written as ``mode``:

    * ``label`` -- the hierarchy's labels (``37``, ``[25, 50)``, ``*``);
    * ``range`` -- the range as text: the value, ``[25, 50)`` (a node
      labelled by that interval), ``[25, 49]`` (closed: the least and
      greatest value under a node whose label is not an interval, such as
      ARX's ``25-49`` or ``25..49``), ``*``;
    * ``midpoint`` -- the middle of the range, a number (empty for ``*`` and
      for a missing cell: this form cannot be verified against the original);
    * ``bounds`` -- two numeric columns ``age_lower``, ``age_upper`` in place
      of ``age``, closed: every original value ``x`` of the row satisfies
      ``lower <= x <= upper`` (an interval label's end points, else the
      least and greatest value under the node; ``lower == upper`` for an
      exact value), ``-inf``/``inf`` for ``*``, empty for a missing cell
      (``missing`` when it is a value of its own: its label stays in
      ``label`` and ``range`` forms).

    A quasi-identifier is numeric when the leaves of its hierarchy (file,
    builder or API; whatever the inner labels) are numbers; one whose values
    are text stays as labels (:func:`numeric_columns` refuses a column that
    mixes both, and a table with no numeric one). ``hierarchies``: a mapping
    name -> hierarchy or the sequence a result holds (``result.hierarchies``).
    Other columns are untouched. :func:`read_numeric_output` reads the
    ``label``, ``range`` and ``bounds`` forms back to labels."""
    numeric = numeric_columns(df.columns, hierarchies, mode)
    if mode == "label":
        return df
    out = df.copy()
    for q, (h, nb) in numeric.items():
        node = _node_of_cells(df[q], h)
        known = node >= 0
        v = np.maximum(node, 0)
        if mode == "range":
            text = nb.range_text(h)
            out[q] = pd.Series(np.where(known, text[v], None), index=df.index, dtype=object)
            continue
        lo = np.where(known, nb.lower[v], np.nan)
        hi = np.where(known, nb.upper[v], np.nan)
        if mode == "midpoint":
            with np.errstate(invalid="ignore"):
                mid = np.where(np.isfinite(lo) & np.isfinite(hi), (lo + hi) / 2, np.nan)
            out[q] = pd.Series(mid, index=df.index)
            continue
        at = list(out.columns).index(q)
        out = out.drop(columns=q)
        out.insert(at, f"{q}_upper", pd.Series(hi, index=df.index))
        out.insert(at, f"{q}_lower", pd.Series(lo, index=df.index))
    return out


def read_numeric_output(df: pd.DataFrame, hierarchies) -> pd.DataFrame:
    """An anonymised table written by :func:`numeric_output` with its numeric
    quasi-identifiers back as labels, so that it can be verified: a pair of
    columns ``age_lower``/``age_upper`` (and no ``age``) becomes ``age`` at
    their place, and ``range`` texts become the labels they write. Labels
    are left as they are; midpoints are not read (no range can be told from
    its middle)."""
    out = df
    for q, h in hierarchy_map(hierarchies).items():
        lo_col, hi_col = f"{q}_lower", f"{q}_upper"
        nb = node_bounds(h)
        if nb is None:
            continue
        if q not in out.columns and lo_col in out.columns and hi_col in out.columns:
            lo, hi = as_floats(out[lo_col]), as_floats(out[hi_col])
            pairs = {}
            for v in range(h.n_nodes - 1, -1, -1):
                pairs[(nb.lower[v], nb.upper[v])] = h.labels[v]
            missing = MISSING_LABEL if MISSING_LABEL in h.leaf_index else None
            keys, inv = np.unique(np.column_stack([lo, hi]), axis=0, return_inverse=True)
            texts = np.array([missing if np.isnan(a) and np.isnan(b) else pairs.get((a, b), f"[{a:g}, {b:g}]")
                              for a, b in keys], dtype=object)
            at = list(out.columns).index(lo_col)
            out = out.drop(columns=[lo_col, hi_col])
            out.insert(at, q, pd.Series(texts[inv.ravel()], index=out.index, dtype=object))
        elif q in out.columns:
            labels = set(h.labels)
            codes, uniq = pd.factorize(out[q])
            texts = [value_to_label(x) for x in uniq]
            if all(t in labels for t in texts):
                continue
            ranges = dict(zip(nb.range_text(h), h.labels))
            new = np.array([t if t in labels else ranges.get(t, x) for t, x in zip(texts, uniq)] + [None],
                           dtype=object)
            out = out.copy()
            out[q] = pd.Series(new[codes], index=out.index, dtype=object)
    return out
