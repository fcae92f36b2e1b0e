"""Hierarchies built from a column's values.

Every builder takes the attribute's name and its values (a column, a list,
an array) and returns a :class:`~hieranon.hierarchies.readers.Hierarchy` whose leaves
are the column's distinct values **as their text** -- the text a table
cell is looked up by (:func:`~hieranon.hierarchies.readers.value_to_label`), so
``184.46946422249852`` stays ``184.46946422249852`` -- and whose inner
labels never misstate a value under them:

* :func:`intervals` -- numbers (integers or decimals) in nested half-open
  bins ``[25, 50)``, aligned at an origin as ARX aligns them;
* :func:`masking` -- fixed-length codes, ``4351 -> 435* -> 43** -> 4*** -> *``;
* :func:`suppression` -- ``value -> *``;
* :func:`grouping` -- categories grouped by a mapping (value -> group, or
  value -> [group, supergroup...]; a dict or a CSV file);
* :func:`ordered` -- categories in a given order grouped into consecutive
  blocks of N, then of M... (ARX's order-based builder);
* :func:`dates` -- dates and timestamps (ISO 8601 with or without a time and
  a zone, or a ``strftime`` format) by day, week, month, quarter, year,
  decade; one label format per level (``2017-01-31``, ``2017-W05``,
  ``2017-01``, ``2017-Q1``, ``2017``, ``2010s``).

With ``missing_leaf=True`` a column's missing cells get a leaf of their own,
:data:`MISSING_LABEL` (``missing``), repeated on every level below the root
(ARX's way): they are then a value like any other, generalised to ``*`` only
when the anonymisation needs it.

:func:`node_bounds` reads the numeric range every node of a hierarchy with
numeric leaves stands for, from the leaves under it (used by
:mod:`hieranon.io` for typed and numeric output).

The trees are built level by level from arrays of labels
(:func:`from_levels`), one pass per level, not one Python object per cell.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.cells import MISSING_LABEL, is_missing, normalise_text, value_to_label
from ..core.files import MAX_HIERARCHY_BYTES, excerpt, read_text_file
from ..core.tree import ROOT_LABEL, Hierarchy, HierarchyError

__all__ = ["MISSING_LABEL", "DATE_LEVELS", "intervals", "masking", "suppression", "grouping", "ordered", "dates",
           "from_levels", "interval_label", "node_bounds", "NodeBounds", "leaf_values", "read_mapping", "as_floats"]

#: Levels of a date hierarchy, finest first.
DATE_LEVELS = ("day", "week", "month", "quarter", "year", "decade")
#: The date orders of earlier versions (``dates: dmy``), as strptime formats.
DATE_ORDERS = {"dmy": "%d/%m/%Y", "mdy": "%m/%d/%Y", "ymd": "%Y-%m-%d"}


# ------------------------------------------------------------------ common
def _is_missing(x) -> bool:
    if isinstance(x, str):
        return not x.strip()
    return x is None or bool(np.ndim(x) == 0 and pd.isna(x))


def _distinct(values) -> tuple[np.ndarray, bool]:
    """The distinct non-missing values (an object array, in first-seen order)
    and whether a missing cell (None, NaN, blank text) was among them."""
    if isinstance(values, (pd.Series, pd.Index)):
        uniq = pd.Series(values).drop_duplicates().array  # Timestamps stay Timestamps
    else:
        uniq = pd.unique(pd.Series(values if isinstance(values, np.ndarray) else list(values), dtype=object))
    out = np.empty(len(uniq), dtype=object)
    out[:] = list(uniq)  # Timestamps stay Timestamps (np.asarray would give their nanoseconds)
    missing = np.fromiter((_is_missing(x) for x in out), dtype=bool, count=len(out))
    return out[~missing], bool(missing.any())


def _texts(values) -> tuple[np.ndarray, bool]:
    """Distinct leaf texts (:func:`value_to_label`, deduplicated) and whether a cell was missing."""
    uniq, has_missing = _distinct(values)
    texts = pd.unique(pd.Series([value_to_label(x) for x in uniq], dtype=object))
    return np.asarray(texts, dtype=object), has_missing


def from_levels(name: str, levels: Sequence[np.ndarray]) -> Hierarchy:
    """A hierarchy from equal-length label arrays, leaves first: row ``i``
    is the path ``levels[0][i] -> levels[1][i] -> ... -> *``.

    A label identifies a node on its level; a label given two different
    parents is refused naming both. Nodes are numbered root first, then
    level by level in the order of first appearance, so the rows' order
    (sorted values) is the children's order."""
    n = len(levels[0])
    labels: list[str] = [ROOT_LABEL]
    parent: list[np.ndarray] = [np.array([-1])]
    parent_of_row = np.zeros(n, dtype=np.int64)
    for col in reversed(levels):
        col = np.asarray(col, dtype=object)
        codes, uniques = pd.factorize(col, sort=False)
        first = np.full(len(uniques), n, dtype=np.int64)
        np.minimum.at(first, codes, np.arange(n))
        p = parent_of_row[first]
        clash = np.flatnonzero(p[codes] != parent_of_row)
        if len(clash):
            i = clash[0]
            raise HierarchyError(
                f"hierarchy of attribute {name!r}: value {excerpt(col[i])} has two parents "
                f"({excerpt(labels[p[codes[i]]])} and {excerpt(labels[parent_of_row[i]])})")
        ids = len(labels) + np.arange(len(uniques))
        labels.extend(str(u) for u in uniques)
        parent.append(p)
        parent_of_row = ids[codes]
    return Hierarchy(name, labels, np.concatenate(parent).astype(np.int32))


def _finish(name: str, leaves: np.ndarray, upper: list[np.ndarray], missing_leaf: bool, has_missing: bool,
            what: str) -> Hierarchy:
    """Append the ``missing`` leaf's chain when asked and needed, then build."""
    if len(leaves) == 0 and not (missing_leaf and has_missing):
        raise HierarchyError(f"attribute {name!r}: no values to build {what} from")
    levels = [np.asarray(leaves, dtype=object)] + [np.asarray(u, dtype=object) for u in upper]
    if missing_leaf and has_missing:
        taken = [lv for lv in levels if MISSING_LABEL in set(lv)]
        if taken:
            raise HierarchyError(f"attribute {name!r}: the value {MISSING_LABEL!r} is in the column (or is a label "
                                 "of its hierarchy) and there are empty cells; rename that value so that empty "
                                 "cells can be told apart")
        levels = [np.append(lv, MISSING_LABEL) for lv in levels]
    return from_levels(name, levels)


def _fmt(d: Decimal) -> str:
    """A bound as plain decimal text: ``25``, ``0.5``, ``-2.25`` (no exponent, no trailing zeros)."""
    s = format(d.normalize(), "f")
    return "0" if s in ("-0", "0") else s


def interval_label(lower: Decimal | float, upper: Decimal | float) -> str:
    """The label of the half-open interval ``lower <= x < upper``: ``[25, 50)``."""
    lo = lower if isinstance(lower, Decimal) else Decimal(repr(float(lower)))
    hi = upper if isinstance(upper, Decimal) else Decimal(repr(float(upper)))
    return f"[{_fmt(lo)}, {_fmt(hi)})"


_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
#: An interval label, half-open (``[25, 50)``, ARX's ``[25, 50[``) or closed
#: (``[25, 49]``): its end points and closing bracket.
_INTERVAL_PARTS = rf"^\[({_NUM}), ?({_NUM})([)\[\]])$"
#: Any label a numeric hierarchy's inner node may carry: an interval (open or
#: closed), an older ``25-49``, or a number (a value kept on a higher level).
_NUMERIC_LABEL = re.compile(rf"^(?:\[{_NUM}, ?{_NUM}[)\[\]]|{_NUM} ?- ?{_NUM}|{_NUM})$")


def as_floats(values) -> np.ndarray:
    """Each value as a float, NaN where it is no number; text is read with
    correct rounding (``pandas.to_numeric`` may be one unit in the last place off)."""
    arr = np.asarray(values, dtype=object)
    # copy=True: the array is written below, and pandas 3 may hand out a read-only view
    nums = pd.to_numeric(pd.Series(arr, dtype=object), errors="coerce").to_numpy(dtype=float, copy=True)
    ok = ~np.isnan(nums)
    if ok.any():
        nums[ok] = arr[ok].astype(float)
    return nums


# --------------------------------------------------------------- intervals
def _widths(name: str, widths: Sequence) -> list[Decimal]:
    try:
        ws = [Decimal(str(w)) for w in widths]
    except (InvalidOperation, ValueError):
        ws = []
    if not widths or len(ws) != len(widths) or not all(w.is_finite() and w > 0 for w in ws):
        raise HierarchyError(f"attribute {name!r}: interval widths must be positive finite numbers, got "
                             f"{[value_to_label(w) for w in widths]}")
    for a, b in zip(ws, ws[1:]):
        if b < a or b % a != 0:
            raise HierarchyError(f"attribute {name!r}: interval widths {[_fmt(w) for w in ws]} must each be a "
                                 "multiple of the previous one")
    return ws


def _bin_index(text: np.ndarray, nums: np.ndarray, origin: Decimal, width: Decimal) -> np.ndarray:
    """``floor((v - origin) / width)`` per value: in floating point, then
    exactly (decimal arithmetic on the value's text) where a value lies
    within rounding distance of a bin edge."""
    q = (nums - float(origin)) / float(width)
    idx = np.floor(q)
    frac = q - idx
    tol = np.maximum(1e-9, np.abs(q) * 1e-13)  # well above the rounding error of q
    near = np.flatnonzero((frac < tol) | (frac > 1 - tol))
    if len(near):
        o, w = Fraction(origin), Fraction(width)
        for i in near:  # exact: a fraction of the value's decimal text
            idx[i] = math.floor((Fraction(Decimal(str(text[i]))) - o) / w)
    return idx


#: The largest magnitude up to which every integer is a distinct 64-bit float (2**53).
EXACT_FLOAT_LIMIT = 2.0**53


def intervals(name: str, values: Iterable, widths: Sequence[float], *, origin: float | str = 0,
              missing_leaf: bool = False) -> Hierarchy:
    """Numeric intervals: value -> ``[lo, lo + widths[0])`` -> ... -> ``*``.

    Bins are half-open, ``[25, 50)`` holds 25 <= x < 50, and aligned at
    ``origin`` as ARX aligns them (``[0, 5)``, ``[5, 10)`` for width 5);
    each width must be a multiple of the previous one so that bins nest.
    Integers and decimals alike: a value is placed by exact decimal
    arithmetic on its text, so ``0.3`` falls in ``[0.3, 0.4)`` and 49.56 in
    ``[25, 50)``. Leaves are the values' text as a table cell prints it.
    """
    ws = _widths(name, widths)
    try:
        o = Decimal(str(origin))
    except InvalidOperation:
        o = Decimal("nan")
    if not o.is_finite():
        raise HierarchyError(f"attribute {name!r}: the interval origin must be a finite number, got {origin}")
    texts, has_missing = _texts(values)
    nums = as_floats(texts)
    bad = np.flatnonzero(~np.isfinite(nums))
    if len(bad):
        raise HierarchyError(f"attribute {name!r}: intervals need finite numbers, found {excerpt(texts[bad[0]])}")
    inexact = np.flatnonzero(np.abs(nums) > EXACT_FLOAT_LIMIT)
    if len(inexact):  # above it, neighbouring integers share a float: a label would misstate the value
        raise HierarchyError(f"attribute {name!r}: {excerpt(texts[inexact[0]])} is beyond 2**53, where intervals "
                             "cannot place numbers exactly; such values are codes: use mask or groups")
    order = np.lexsort((texts.astype(str), nums))
    texts, nums = texts[order], nums[order]
    upper = []
    for w in ws:
        idx = _bin_index(texts, nums, o, w)
        bins, inv = np.unique(idx, return_inverse=True)
        labels = np.array([interval_label(o + Decimal(int(b)) * w, o + Decimal(int(b) + 1) * w) for b in bins],
                          dtype=object)
        upper.append(labels[inv.ravel()])
    return _finish(name, texts, upper, missing_leaf, has_missing, "intervals")


# ------------------------------------------------------- masking, suppression
def masking(name: str, values: Iterable, length: int | None = None, *, mask_char: str = "*",
            missing_leaf: bool = False) -> Hierarchy:
    """Masking of fixed-length codes: ``4351 -> 435* -> 43** -> 4*** -> *``."""
    texts, has_missing = _texts(values)
    texts = np.sort(texts.astype(str)).astype(object)
    lengths = {len(v) for v in texts}
    if length is None:
        if len(lengths) > 1:
            raise HierarchyError(
                f"attribute {name!r}: codes have different lengths {sorted(lengths)}; pad them or give length")
        length = lengths.pop() if lengths else 1
    bad = [v for v in texts if len(v) != length]
    if bad:
        shown = ", ".join(excerpt(x) for x in bad[:5])
        raise HierarchyError(f"attribute {name!r}: code(s) {shown} are not {length} characters long")
    upper = [np.array([v[: length - i] + mask_char * i for v in texts], dtype=object) for i in range(1, length)]
    return _finish(name, texts, upper, missing_leaf, has_missing, "a masking hierarchy")


def suppression(name: str, values: Iterable, *, missing_leaf: bool = False) -> Hierarchy:
    """Suppression only: every value -> ``*``."""
    texts, has_missing = _texts(values)
    return _finish(name, np.sort(texts.astype(str)).astype(object), [], missing_leaf, has_missing, "a hierarchy")


# ----------------------------------------------------------------- grouping
def read_mapping(path) -> dict[str, list[str]]:
    """A mapping file: CSV rows ``value;group[;supergroup...]`` (separator
    ``;``, ``,``, tab or ``|``), no header, no root column."""
    path = Path(path)
    text = read_text_file(path, what="mapping file", max_bytes=MAX_HIERARCHY_BYTES, encoding="utf-8-sig",
                          error=HierarchyError)
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    sep = max(";,\t|", key=first.count)
    out: dict[str, list[str]] = {}
    for line, row in enumerate(csv.reader(io.StringIO(text), delimiter=sep), start=1):
        row = [normalise_text(c) for c in row]
        while row and not row[-1]:
            row.pop()
        if not row:
            continue
        if len(row) < 2:
            raise HierarchyError(f"mapping file {path}, line {line}: expected value{sep}group, got {excerpt(row[0])}")
        if row[0] in out:
            raise HierarchyError(f"mapping file {path}, line {line}: value {excerpt(row[0])} is mapped twice")
        out[row[0]] = row[1:]
    if not out:
        raise HierarchyError(f"mapping file {path} is empty")
    return out


def grouping(name: str, values: Iterable, mapping: Mapping | str | Path, *, missing_leaf: bool = False) -> Hierarchy:
    """Categories grouped by ``mapping``: value -> group, or value -> [group,
    supergroup, ...] (every value the same number of levels), or the path
    of a mapping file (:func:`read_mapping`). Every value of the column
    must be mapped; a group given two supergroups is refused."""
    if isinstance(mapping, (str, Path)):
        mapping = read_mapping(mapping)
    table = {}
    for k, v in mapping.items():
        label = value_to_label(k)
        if label in table:  # two keys that read as one value (M and M + no-break space): the later would win
            raise HierarchyError(f"attribute {name!r}: value {excerpt(label)} is mapped twice; map it once")
        table[label] = [v] if isinstance(v, str) or not isinstance(v, Sequence) else list(v)
    depths = {len(v) for v in table.values()}
    if len(depths) > 1 or 0 in depths:
        raise HierarchyError(f"attribute {name!r}: every value of the mapping needs the same number of groups "
                             f"(found {sorted(depths)})")
    texts, has_missing = _texts(values)
    absent = [t for t in texts if t not in table]
    if absent:
        shown = ", ".join(excerpt(x) for x in sorted(absent)[:10])
        raise HierarchyError(f"attribute {name!r}: value(s) {shown} are not in the mapping -- add them")
    texts = np.array([t for t in table if t in set(texts)], dtype=object)  # the mapping's order
    upper = [np.array([value_to_label(table[t][i]) for t in texts], dtype=object) for i in range(depths.pop())]
    return _finish(name, texts, upper, missing_leaf, has_missing, "groups")


def ordered(name: str, values: Iterable, sizes: Sequence[int], *, order: Sequence | None = None,
            missing_leaf: bool = False) -> Hierarchy:
    """Categories in ``order`` (default: numeric order if every value is a
    number, else text order) grouped into consecutive blocks of ``sizes[0]``
    values, then of ``sizes[1]``... (each a multiple of the previous);
    a block is labelled by its first and last value, ``A..C``."""
    sizes = [int(s) for s in sizes]
    if not sizes or any(s < 1 for s in sizes) or any(b % a for a, b in zip(sizes, sizes[1:])):
        raise HierarchyError(f"attribute {name!r}: group sizes {sizes} must be whole numbers >= 1, each a "
                             "multiple of the previous one")
    texts, has_missing = _texts(values)
    if order is not None:
        labels = [value_to_label(v) for v in order]
        twice = [v for v in dict.fromkeys(labels) if labels.count(v) > 1]
        if twice:  # the later rank would silently win, and a group's label contradict the order given
            raise HierarchyError(f"attribute {name!r}: the order lists {twice[0]!r} twice; list each value once")
        rank = {label: i for i, label in enumerate(labels)}
        absent = [t for t in texts if t not in rank]
        if absent:
            raise HierarchyError(f"attribute {name!r}: value(s) {', '.join(excerpt(x) for x in absent[:10])} are "
                                 "not in the given order")
        texts = np.array(sorted(texts, key=rank.__getitem__), dtype=object)
    else:
        nums = as_floats(texts)
        key = nums if not np.isnan(nums).any() else texts.astype(str)
        texts = texts[np.argsort(key, kind="stable")]
    upper = []
    for s in sizes:
        block = np.arange(len(texts)) // s
        first = texts[block * s]
        last = texts[np.minimum(block * s + s - 1, len(texts) - 1)]
        upper.append(np.array([a if a == b else f"{a}..{b}" for a, b in zip(first, last)], dtype=object))
    return _finish(name, texts, upper, missing_leaf, has_missing, "groups")


# -------------------------------------------------------------------- dates
_ZONE = re.compile(r"(?<=\d)(?:Z|[+-]\d{2}(?::?\d{2})?)$")


def _parse_dates(name: str, texts: np.ndarray, date_format: str | None) -> pd.DatetimeIndex:
    """The dates and times the texts write, as wall-clock time in their own
    zone (a trailing ``Z`` or ``+01:00`` is dropped: a day is the day written)."""
    s = pd.Series(texts, dtype=object).astype(str)
    if date_format is None:
        has_time = s.str.contains(r"\d:\d", regex=True)
        s = s.where(~has_time, s.str.replace(_ZONE, "", regex=True))
        parsed = pd.to_datetime(s, format="ISO8601", errors="coerce")
        hint = "not an ISO 8601 date or timestamp (2017-01-31, 2017-01-31T06:00:42Z); give its format, e.g. " \
               "%d/%m/%Y: after the levels in --qi NAME=dates:month,year:%d/%m/%Y, as date_format in a " \
               "configuration, or --date-format of 'hieranon hierarchy'"
    else:
        parsed = pd.to_datetime(s, format=date_format, errors="coerce")
        hint = f"not a date in the format {date_format}"
    bad = np.flatnonzero(parsed.isna().to_numpy())
    if len(bad):
        raise HierarchyError(f"attribute {name!r}: {excerpt(texts[bad[0]])} is {hint}")
    if getattr(parsed.dt, "tz", None) is not None:
        parsed = parsed.dt.tz_localize(None)
    return pd.DatetimeIndex(parsed)


def _date_label(level: str, d: pd.DatetimeIndex) -> np.ndarray:
    if level == "day":
        out = d.strftime("%Y-%m-%d")
    elif level == "week":
        iso = d.isocalendar()
        out = iso["year"].astype(str).str.cat(iso["week"].astype(int).map("{:02d}".format), sep="-W")
    elif level == "month":
        out = d.strftime("%Y-%m")
    elif level == "quarter":
        out = pd.Series(d.year.astype(str)).str.cat(pd.Series(d.quarter.astype(str)), sep="-Q")
    elif level == "year":
        out = d.strftime("%Y")
    else:
        out = pd.Series(((d.year // 10) * 10).astype(str)) + "s"
    return np.asarray(out, dtype=object)


def date_levels(name: str, levels) -> list[str]:
    if isinstance(levels, str):
        levels = [x.strip() for x in levels.split(",") if x.strip()]
    levels = list(levels)
    unknown = [lv for lv in levels if lv not in DATE_LEVELS]
    if not levels or unknown:
        raise HierarchyError(f"attribute {name!r}: date levels must be some of {', '.join(DATE_LEVELS)} "
                             f"(finest first), got {unknown[0] if unknown else 'none'!r}")
    ranks = [DATE_LEVELS.index(lv) for lv in levels]
    if ranks != sorted(set(ranks)):
        raise HierarchyError(f"attribute {name!r}: date levels {levels} must go from finest to coarsest, each once "
                             f"(in the order {', '.join(DATE_LEVELS)})")
    if "week" in levels and levels[-1] != "week":
        raise HierarchyError(f"attribute {name!r}: a week can span two months or years, so week must be the "
                             "last date level (before *)")
    return levels


def dates(name: str, values: Iterable, levels: Sequence[str] | str = ("month", "year"), *,
          date_format: str | None = None, order: str | None = None, missing_leaf: bool = False) -> Hierarchy:
    """Dates and timestamps: value -> ``levels[0]`` -> ... -> ``*``.

    ``levels`` are some of ``day, week, month, quarter, year, decade``,
    finest first (a list or ``"month,quarter,year"``); their labels are
    ``2017-01-31``, ``2017-W05`` (ISO week), ``2017-01``, ``2017-Q1``,
    ``2017``, ``2010s``. A week can span two months, so week comes last.

    Values are text in ISO 8601 -- ``2017-01-31``, ``2017-01-31 06:00``,
    ``2017-01-31T06:00:42Z``, ``...+01:00`` (the date as written, in its own
    zone) -- or in ``date_format`` (``strftime`` codes, e.g. ``%d/%m/%Y``;
    ``order`` ``dmy``/``mdy``/``ymd`` is shorthand for the three usual
    ones), or date objects (``date``, ``datetime``, ``pd.Timestamp``).
    Leaves keep the text; date objects are written ``2017-01-31`` (with
    `` 06:00:42`` when any has a time), the hierarchy remembering that
    format so such objects are found in it.
    """
    if isinstance(levels, str) and levels in DATE_ORDERS:  # dates(name, values, "dmy") of earlier versions
        order, levels = levels, ("month", "year")
    if order is not None:
        if order not in DATE_ORDERS:
            raise HierarchyError(f"attribute {name!r}: date order must be one of {sorted(DATE_ORDERS)}, got "
                                 f"{order!r}")
        date_format = date_format or DATE_ORDERS[order]
    levels = date_levels(name, levels)
    uniq, has_missing = _distinct(values)
    leaf_format = None
    objects = np.fromiter((isinstance(x, (date, datetime)) for x in uniq), dtype=bool, count=len(uniq))
    if objects.any():
        stamps = pd.DatetimeIndex(pd.to_datetime(pd.Series(uniq[objects], dtype=object)))
        if stamps.tz is not None:
            stamps = stamps.tz_localize(None)
        has_time = bool((stamps != stamps.normalize()).any())
        leaf_format = date_format or ("%Y-%m-%d %H:%M:%S" if has_time else "%Y-%m-%d")
        uniq = uniq.copy()
        uniq[objects] = [x.strftime(leaf_format) for x in uniq[objects]]
        date_format = date_format if date_format is not None or objects.all() else None
    texts = np.asarray(pd.unique(pd.Series([value_to_label(x) for x in uniq], dtype=object)), dtype=object)
    parsed = _parse_dates(name, texts, date_format)
    order_ = np.lexsort((texts.astype(str), parsed.asi8))
    texts, parsed = texts[order_], parsed[order_]
    upper = [_date_label(lv, parsed) for lv in levels]
    h = _finish(name, texts, upper, missing_leaf, has_missing, "a date hierarchy")
    h.date_format = leaf_format or date_format
    return h


def missing_cells(result) -> dict[str, tuple[int, int]]:
    """Per quasi-identifier of an anonymisation result that had missing
    cells: (records whose cell was missing, of them those published as
    missing -- empty, or the leaf ``missing`` -- rather than ``*``). A cell
    was missing when its original code is the root (``missing='root'``:
    already suppressed) or the leaf ``missing`` (``missing='value'``); such
    cells are not generalisations the anonymisation made."""
    if result.original_codes is None or result.codes is None:
        return {}
    n = len(result.codes)
    counts = result.counts if result.counts is not None else np.ones(n, dtype=np.int64)
    out = {}
    for j, h in enumerate(result.hierarchies):
        orig, now = result.original_codes[:, j], result.codes[:, j]
        leaf = h.leaf_index.get(MISSING_LABEL, -1)
        was = (orig == 0) | (orig == leaf)
        if not was.any():
            continue
        if leaf >= 0 or result.data is None or h.name not in result.data:
            kept = np.asarray(h.labels, dtype=object)[now] == MISSING_LABEL if leaf >= 0 else np.zeros(n, dtype=bool)
        else:  # missing='root': published empty, in input row order
            col = result.data[h.name]
            shown = col.isna().to_numpy() | (is_missing(col) if col.dtype == object else False)
            kept = np.empty(n, dtype=bool)
            kept[result.row_order if result.row_order is not None else np.arange(n)] = shown
        out[h.name] = (int(counts[was].sum()), int(counts[was & kept].sum()))
    return out


# ---------------------------------------------------------- numeric ranges
@dataclass
class NodeBounds:
    """The numeric range each node of a hierarchy with numeric leaves stands for.

    Every original value ``x`` under a node ``v`` satisfies
    ``lower[v] <= x <= upper[v]`` (closed). An inner node labelled by an
    interval holding all its leaves (``[25, 50)``, ARX's ``[25, 50[``,
    ``[25, 49]``) has that interval's end points (``closed[v]`` False for a
    half-open one: the upper end point itself is not a value under it); any
    other inner node (ARX's ``25-49`` or ``25..29``, a masked ``43**``, a
    word) has the least and greatest numeric leaf below it. A leaf is its
    own value (``lower == upper``), the root ``-inf, inf``, the ``missing``
    leaf (and a node with only it below) NaN. ``ranged``: every inner label
    writes a range or a number, so the labels themselves read as numbers
    (typed output, :func:`hieranon.io.typed_numeric_qis`).
    """

    lower: np.ndarray
    upper: np.ndarray
    closed: np.ndarray
    ranged: bool = True

    def range_text(self, h: Hierarchy) -> np.ndarray:
        """Per node: the leaf's text, ``[lo, hi)``, ``[lo, hi]``, ``*`` or ``missing``."""
        out = np.asarray(h.labels, dtype=object).copy()
        for v in range(1, h.n_nodes):
            lo, hi = self.lower[v], self.upper[v]
            if np.isnan(lo) or lo == hi:
                continue
            if self.closed[v]:
                out[v] = f"[{_fmt(Decimal(repr(float(lo))))}, {_fmt(Decimal(repr(float(hi))))}]"
            else:
                out[v] = interval_label(lo, hi)
        return out


def leaf_values(h: Hierarchy) -> tuple[np.ndarray, np.ndarray]:
    """The leaves of ``h`` other than ``missing`` and their values as
    floats (NaN for a leaf that is not a number)."""
    labels = np.asarray(h.labels, dtype=object)
    leaves = h.leaves[labels[h.leaves] != MISSING_LABEL]
    return leaves, as_floats(labels[leaves])


def node_bounds(h: Hierarchy) -> NodeBounds | None:
    """The numeric range of every node (:class:`NodeBounds`), or None when
    some leaf (other than ``missing``) is not a number. Whatever the inner
    labels say, a node's range comes from the numeric leaves under it (the
    least and greatest, in one pass per level over the leaves' ancestors);
    an interval label holding them is kept as the tighter published form."""
    leaves, vals = leaf_values(h)
    if len(leaves) == 0 or np.isnan(vals).any():
        return None
    n = h.n_nodes
    lo_below, hi_below = np.full(n, np.inf), np.full(n, -np.inf)
    for d in range(h.height):  # min / max of the leaves below every node
        anc = h.ancestors[leaves, d]
        np.minimum.at(lo_below, anc, vals)
        np.maximum.at(hi_below, anc, vals)
    some = np.isfinite(lo_below)
    lower, upper = np.where(some, lo_below, np.nan), np.where(some, hi_below, np.nan)
    closed = np.ones(n, dtype=bool)
    inner = np.flatnonzero(~h.is_leaf)[1:]
    labels = pd.Series(np.asarray(h.labels, dtype=object)[inner], dtype=object)
    parts = labels.str.extract(_INTERVAL_PARTS)
    lo_l, hi_l = as_floats(parts[0]), as_floats(parts[1])
    shut = (parts[2] == "]").to_numpy()
    with np.errstate(invalid="ignore"):
        holds = (lo_l <= lo_below[inner]) & np.where(shut, hi_below[inner] <= hi_l, hi_below[inner] < hi_l)
    lower[inner[holds]], upper[inner[holds]], closed[inner[holds]] = lo_l[holds], hi_l[holds], shut[holds]
    lower[0], upper[0] = -np.inf, np.inf
    named = [x for x in labels if x != MISSING_LABEL]
    ranged = bool(named) and all(_NUMERIC_LABEL.match(x) for x in named)
    return NodeBounds(lower, upper, closed, ranged)
