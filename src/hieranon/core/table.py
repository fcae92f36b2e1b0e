"""Integer encoding of quasi-identifier columns and equivalence classes.

A table's quasi-identifiers (QIs) become an ``int32`` matrix ``codes`` of
shape ``(n_rows, n_qis)`` whose entries are node ids in each attribute's
:class:`~hieranon.hierarchies.readers.Hierarchy` -- leaves for original data, inner
nodes once generalised. Every algorithm works on these codes; labels only
come back at :func:`decode`.

Equivalence classes (Li et al. 2006, Def. 2) are the distinct code rows with their
sizes (sums of record counts) and member row indices (:func:`group`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .cells import MISSING_LABEL, missing_values, normalise_texts, released_text
from .files import excerpt
from .tree import Hierarchy, HierarchyError

#: The most records a row (and a table) may stand for: counts are exact in a float up to 2**53.
MAX_COUNT = 2**53


class DataError(ValueError):
    """The data does not fit the configuration; the message names the column
    and the value."""


@dataclass
class EncodedTable:
    """The QI part of a table as integer node codes.

    Attributes
    ----------
    codes : ndarray (n_rows, n_qis) of int32
        Node id of every QI cell in its attribute's hierarchy.
    hierarchies : list[Hierarchy]
        One per QI column, in column order.
    qi_names : list[str]
        The QI column names.
    counts : ndarray (n_rows,) of int64
        Records each row stands for (1 unless a count column was given).
    """

    codes: np.ndarray
    hierarchies: list[Hierarchy]
    qi_names: list[str]
    counts: np.ndarray

    @property
    def n_rows(self) -> int:
        return self.codes.shape[0]

    @property
    def n_records(self) -> int:
        return int(self.counts.sum())

    def column(self, name: str) -> int:
        try:
            return self.qi_names.index(name)
        except ValueError:
            raise DataError(f"{name!r} is not a quasi-identifier (QIs: {self.qi_names})") from None

    def with_codes(self, codes: np.ndarray) -> EncodedTable:
        return EncodedTable(np.ascontiguousarray(codes, dtype=np.int32), self.hierarchies, self.qi_names, self.counts)


def _resolve_hierarchies(qi_names: Sequence[str], hierarchies) -> list[Hierarchy]:
    if isinstance(hierarchies, Mapping):
        missing = [q for q in qi_names if q not in hierarchies]
        if missing:
            raise DataError(f"no hierarchy given for quasi-identifier(s) {missing}")
        return [hierarchies[q] for q in qi_names]
    hierarchies = list(hierarchies)
    if len(hierarchies) != len(qi_names):
        raise DataError(f"{len(qi_names)} quasi-identifiers but {len(hierarchies)} hierarchies")
    names = [getattr(h, "name", None) for h in hierarchies]
    for q, name in zip(qi_names, names):
        if name != q and name in qi_names and q in names:  # the same attributes, another order
            raise DataError(f"the hierarchy in the place of quasi-identifier {q!r} is that of {name!r}: a list "
                            "of hierarchies is matched to the quasi-identifiers by position; list them in "
                            "the quasi-identifiers' order, or give a mapping {column: hierarchy}")
    return hierarchies


def check_column_names(df: pd.DataFrame) -> None:
    """A table's columns must be one level of names: a MultiIndex of
    columns is refused, saying how to flatten it. Column names are usually
    text; any other label (an integer ``0``) is a column's name as it is,
    named by the same label (:func:`check_columns` says so when a text name
    stands for it)."""
    if isinstance(df.columns, pd.MultiIndex):
        raise DataError(f"the table's columns are a MultiIndex ({df.columns.nlevels} levels of names, e.g. "
                        f"{excerpt(df.columns[0]) if len(df.columns) else '()'}); give them one level of names, "
                        "e.g. df.columns = ['_'.join(map(str, c)) for c in df.columns]")


def check_columns(df: pd.DataFrame, columns: Sequence[str], what: str = "quasi-identifier") -> None:
    """Every one of ``columns`` is a column of ``df`` (one level of names:
    :func:`check_column_names`); else a DataError naming the absent ones,
    and the column a text name was probably meant for when the table names
    it by another label (an integer ``0`` for ``'0'``)."""
    check_column_names(df)
    absent = [c for c in columns if c not in df.columns]
    if absent:
        by_text = {str(c): c for c in df.columns if not isinstance(c, str)}
        meant = [(a, by_text[str(a)]) for a in absent if str(a) in by_text]
        hint = ""
        if meant:
            a, c = meant[0]
            hint = (f"; the table names a column by the {type(c).__name__} {c!r}, not the text {str(a)!r}: give it "
                    f"as {c!r}, or rename the columns to text with df.columns = df.columns.astype(str)")
        raise DataError(
            f"{what} column(s) {absent} not in the table (its columns: {list(df.columns)[:20]}){hint}"
        )


def encode_column(values: pd.Series, hierarchy: Hierarchy, *, missing: str = "error",
                  generalised: bool = False) -> np.ndarray:
    """Leaf codes of one column; the work is per distinct value, not per cell.

    ``missing='error'`` (default) rejects NaN/empty cells naming the column and
    row; ``missing='root'`` reads them as already generalised to the root;
    ``missing='value'`` reads them as the hierarchy's leaf ``missing`` (a value
    of their own, as the builders make it with ``missing_leaf=True``).

    Text is looked up after the one normalisation of cell text
    (:func:`hieranon.core.cells.normalise_text`). With ``generalised`` (a published
    table, read as it is) a cell must print its value exactly: a cell that
    only matches once normalised (`` *``, ``*\u00a0``) is refused, naming it.
    """
    # the work is per distinct value: factorize, then look up each distinct label once
    uniq_idx, uniques = pd.factorize(values, sort=False, use_na_sentinel=False)
    missing_u = missing_values(uniques)
    if missing_u.any() and missing == "value" and MISSING_LABEL not in hierarchy.leaf_index:
        raise DataError(f"column {values.name!r} has missing values and its hierarchy no leaf {MISSING_LABEL!r}: "
                        f"build it from the data with missing_leaf=True (hieranon.hierarchies.builders), or add a row "
                        f"{MISSING_LABEL};...;{hierarchy.labels[0]} to the hierarchy file")
    if missing_u.any() and missing not in ("root", "value"):
        rows = np.flatnonzero(missing_u[uniq_idx])
        first = int(rows[0])
        value = values.iloc[first]
        shown = f"a blank cell ({excerpt(value)})" if isinstance(value, str) and value else \
            f"an empty cell ({value!r})"
        raise DataError(
            f"column {values.name!r} has {len(rows)} missing value(s), the first {shown} in record "
            f"{first + 1} (data row index {first}); "
            "fill them, or pass missing='value' (--missing value) to keep them as a value of their own, or "
            "missing='root' (--missing root) to count them as already suppressed"
        )
    leaf = np.zeros(len(uniques), dtype=np.int32)  # missing -> root (node 0)
    if missing == "value":
        leaf[missing_u] = hierarchy.leaf_index.get(MISSING_LABEL, 0)
    present = np.asarray(uniques, dtype=object)[~missing_u]
    try:
        leaf[~missing_u] = hierarchy.codes_of(present, generalised)
    except HierarchyError as exc:
        raise DataError(str(exc)) from None
    if generalised:
        _require_exact(values, uniq_idx, np.flatnonzero(~missing_u), present, hierarchy)
    return leaf[uniq_idx]


def _require_exact(values: pd.Series, uniq_idx: np.ndarray, which: np.ndarray, present: np.ndarray,
                   hierarchy: Hierarchy) -> None:
    """A published cell must print its label exactly: refuse the first text
    cell that differs from its normalised form (surrounding spaces, another
    Unicode form), naming the column, the row and the cell."""
    text = np.fromiter((isinstance(x, str) for x in present), dtype=bool, count=len(present))
    if not text.any():
        return
    loose = np.zeros(len(present), dtype=bool)
    loose[text] = normalise_texts(present[text]) != present[text]
    if not loose.any():
        return
    bad_u = np.zeros(int(uniq_idx.max()) + 1, dtype=bool)
    bad_u[which[loose]] = True
    rows = np.flatnonzero(bad_u[uniq_idx])
    first = int(rows[0])
    cell = values.iloc[first]
    raise DataError(
        f"column {values.name!r}, record {first + 1} (data row index {first}): cell {cell!r} is not exactly a "
        f"value of its hierarchy -- it reads as {hierarchy.label_of(cell)!r} only once surrounding spaces are "
        f"removed (or its Unicode form changed), and a reader of the published table sees a different value "
        f"({len(rows)} such cell(s)); write the labels exactly")


def encode(df: pd.DataFrame, qi_names: Sequence[str], hierarchies, *, counts: np.ndarray | str | None = None,
           missing: str = "error", generalised: bool = False) -> EncodedTable:
    """Encode the QI columns of ``df`` to leaf codes.

    ``hierarchies`` is a mapping from column to :class:`Hierarchy` or a list in
    ``qi_names`` order. With ``generalised=True`` cells may print inner nodes
    (reading a table that is already anonymised, e.g. for ``hieranon check``).
    ``counts`` is an array of record counts per row or the name of a count
    column (Arca & Hewett writes tables as distinct rows with counts); default one
    record per row.
    """
    qi_names = list(qi_names)
    if not qi_names:
        raise DataError("no quasi-identifiers given")
    if len(set(qi_names)) != len(qi_names):
        raise DataError(f"quasi-identifiers listed twice: {sorted({q for q in qi_names if qi_names.count(q) > 1})}")
    check_columns(df, qi_names)
    hs = _resolve_hierarchies(qi_names, hierarchies)
    codes = np.empty((len(df), len(qi_names)), dtype=np.int32)
    for j, (q, h) in enumerate(zip(qi_names, hs)):
        codes[:, j] = encode_column(df[q], h, missing=missing, generalised=generalised)
    return EncodedTable(codes, hs, qi_names, row_counts(df, counts))


def row_counts(df: pd.DataFrame, counts) -> np.ndarray:
    """Record count per row: ones, an explicit array, or a count column."""
    if counts is None:
        return np.ones(len(df), dtype=np.int64)
    if isinstance(counts, str):
        check_columns(df, [counts], "count")
        col = pd.to_numeric(df[counts], errors="coerce").astype(float)
        bad = col.isna() | (col < 1) | (col != col.round()) | (col > MAX_COUNT)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            value = df[counts].iloc[i]
            value = value.item() if isinstance(value, np.generic) else value  # not np.int64(0)
            raise DataError(f"count column {counts!r}: record {i + 1} (data row index {i}) has {excerpt(value)}; "
                            f"counts must be whole numbers >= 1 (and at most {MAX_COUNT})")
        if col.sum() > MAX_COUNT:
            raise DataError(f"count column {counts!r}: the counts add up to {col.sum():.3g} records, more than "
                            f"the {MAX_COUNT} a table may stand for")
        return col.to_numpy(dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape != (len(df),) or (counts < 1).any() or (counts > MAX_COUNT).any():
        raise DataError("counts must be one whole number >= 1 per row")
    return counts


def encode_generalised(original: EncodedTable, anonymised: pd.DataFrame) -> np.ndarray:
    """Node codes of an anonymised table's QI cells, read against the original.

    Each output cell must print the original value or one of its ancestors
    exactly (:func:`hieranon.core.cells.released_text`: `` *`` is not ``*``);
    it is decoded to the most specific such node on the original leaf's path
    (so a label repeated on two levels is read unambiguously). Cells that
    match no ancestor get ``-1`` (the verifier reports them).
    """
    check_columns(anonymised, original.qi_names)
    if len(anonymised) != original.n_rows:
        raise DataError(f"the anonymised table has {len(anonymised)} rows, the original {original.n_rows}")
    out = np.empty_like(original.codes)
    for j, (q, h) in enumerate(zip(original.qi_names, original.hierarchies)):
        col = anonymised[q]
        labels = np.array([released_text(x) or "" for x in pd.unique(col)], dtype=object)
        lab_idx = pd.Index(pd.unique(col)).get_indexer(col)
        leaf = original.codes[:, j]
        # decode per distinct (leaf, label) pair, not per cell
        pair = leaf.astype(np.int64) * (len(labels) + 1) + lab_idx
        upair, inv = np.unique(pair, return_inverse=True)
        u_leaf = (upair // (len(labels) + 1)).astype(np.int32)
        u_lab = labels[upair % (len(labels) + 1)]
        node = h.generalise_labels(u_leaf, u_lab)
        node[(u_leaf == 0) & (u_lab == "")] = 0  # a missing original read as the root may stay missing
        # a generalised original (e.g. missing -> root) may already sit above a leaf
        out[:, j] = node[inv.ravel()]
    return out


def decode(codes: np.ndarray, hierarchies: Sequence[Hierarchy], qi_names: Sequence[str]) -> pd.DataFrame:
    """Labels of a code matrix, one object column per QI."""
    if (np.asarray(codes) < 0).any():
        raise DataError("cannot decode code -1 (a cell that generalises no original value)")
    cols = {}
    for j, (q, h) in enumerate(zip(qi_names, hierarchies)):
        labels = np.asarray(h.labels, dtype=object)
        cols[q] = labels[codes[:, j]]
    return pd.DataFrame(cols)


def apply_codes(df: pd.DataFrame, table: EncodedTable, codes: np.ndarray,
                keep_missing: np.ndarray | None = None) -> pd.DataFrame:
    """A copy of ``df`` whose QI cells print ``codes``; every other column and
    the row order are untouched. A QI column keeps its dtype when no cell of it
    was generalised; a generalised one holds labels, in the dtype pandas
    infers for text (``str`` from pandas 3 on, a missing cell NaN; ``object``
    before, a missing cell None), as reading the written table back gives it.
    A missing cell read as the root (``missing='root'``:
    already suppressed) stays missing -- "was missing", not "was
    suppressed" -- when every cell of its equivalence class in that column
    was missing; in a class where the column also holds suppressed values it
    prints ``*`` like them, so that grouping the printed table gives the
    classes the verifier checked (:func:`missing_apart`; pass ``keep_missing``
    computed on the whole table when ``df`` is one batch of it). A cell kept
    as it was prints its value normalised (:func:`hieranon.core.cells.normalise_text`)
    like every label, so that it reads as the value the classes were made of."""
    out = df.copy()
    if keep_missing is None:
        keep_missing = missing_apart(table, codes)
    for j, (q, h) in enumerate(zip(table.qi_names, table.hierarchies)):
        col = codes[:, j]
        if np.array_equal(col, table.codes[:, j]) and _prints_normalised(df[q]):
            continue  # nothing generalised: every root cell was missing and stays so
        labels = np.asarray(h.labels, dtype=object)
        cells = labels[col]
        cells[keep_missing[:, j]] = None
        out[q] = pd.Series(cells, index=df.index)  # labels: the dtype pandas gives text
    return out


def _prints_normalised(values: pd.Series) -> bool:
    """Does every text cell of the column print as its normalised self?"""
    uniques = pd.unique(values.dropna())
    text = [x for x in uniques if isinstance(x, str)]
    return not text or bool((normalise_texts(text) == np.asarray(text, dtype=object)).all())


def missing_apart(table: EncodedTable, codes: np.ndarray) -> np.ndarray:
    """Per QI cell: it was missing (read as the root: its original code is
    the root), and every cell of its equivalence class (``codes``) in that
    column was missing too -- so it can be printed empty without splitting
    its class."""
    out = np.zeros(codes.shape, dtype=bool)
    at_root = (codes == 0) & (table.codes == 0)
    if not at_root.any():
        return out
    row_class = group(codes).row_class
    for j in range(codes.shape[1]):
        missing = at_root[:, j]
        if not missing.any():
            continue
        suppressed = (codes[:, j] == 0) & ~missing
        mixed = np.bincount(row_class, weights=suppressed, minlength=int(row_class.max()) + 1) > 0
        out[:, j] = missing & ~mixed[row_class]
    return out


@dataclass
class EquivalenceClasses:
    """Distinct QI code rows of a table.

    Attributes
    ----------
    keys : ndarray (n_classes, n_qis) of int32
        The code tuple of each class.
    sizes : ndarray (n_classes,) of int64
        Records in each class (sum of counts).
    row_class : ndarray (n_rows,) of int64
        Class index of every row.
    """

    keys: np.ndarray
    sizes: np.ndarray
    row_class: np.ndarray

    @property
    def n_classes(self) -> int:
        return len(self.sizes)

    def members(self) -> list[np.ndarray]:
        """Row indices of each class (in row order)."""
        if self.n_classes == 0:
            return []
        order = np.argsort(self.row_class, kind="stable")
        bounds = np.cumsum(np.bincount(self.row_class, minlength=self.n_classes))[:-1]
        return np.split(order, bounds)


def dense_rank(col: np.ndarray) -> tuple[np.ndarray, int]:
    """(rank of each value among the column's distinct values, number of
    distinct values) -- the dense codes joint counts and contingency tables
    of code columns are built on: ``np.unique(col, return_inverse=True)`` without the sort
    when ``col`` holds integers of a small range (node codes), by a lookup table."""
    n = len(col)
    if n and col.dtype.kind in "iu":
        lo, hi = int(col.min()), int(col.max())
        if hi - lo <= max(4 * n, 1 << 16) and hi < 2**63:
            shifted = col if lo == 0 else col.astype(np.int64) - lo  # int64: no wrap-around in small types
            present = np.zeros(hi - lo + 1, dtype=bool)
            present[shifted] = True
            rank = np.cumsum(present, dtype=np.int64) - 1
            return rank[shifted], int(rank[-1]) + 1
    uniq, inv = np.unique(col, return_inverse=True)
    return inv.ravel(), len(uniq)


def row_keys(codes: np.ndarray) -> np.ndarray:
    """One int64 per row identifying its code tuple (dense ranks per column,
    mixed radix when it fits, else a lexicographic group id)."""
    codes = np.asarray(codes)
    if codes.ndim != 2:
        raise ValueError("codes must be 2-D")
    n, m = codes.shape
    if m == 0:
        return np.zeros(n, dtype=np.int64)
    key = np.zeros(n, dtype=np.int64)
    radix = 1
    for j in range(m):
        inv, n_uniq = dense_rank(codes[:, j])
        if radix * n_uniq >= 2**62:  # re-rank the partial key to keep it small
            _, key = np.unique(key, return_inverse=True)
            key = key.astype(np.int64)
            radix = int(key.max()) + 1 if n else 1
        key = key * n_uniq + inv
        radix *= n_uniq
    return key


def group(codes: np.ndarray, counts: np.ndarray | None = None) -> EquivalenceClasses:
    """Equivalence classes of a code matrix (vectorised group-by)."""
    codes = np.asarray(codes)
    key = row_keys(codes)
    uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
    inv = inv.ravel()
    w = np.ones(len(key), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    sizes = np.bincount(inv, weights=w, minlength=len(uniq)).astype(np.int64)
    return EquivalenceClasses(codes[first], sizes, inv.astype(np.int64))


def class_sizes_of_rows(codes: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """Size of the equivalence class each row belongs to."""
    ec = group(codes, counts)
    return ec.sizes[ec.row_class]
