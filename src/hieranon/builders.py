"""Hierarchies built from a column's values: numeric intervals, masking of
fixed-length codes, suppression only, dates.

Each builder takes the attribute's name and its values and returns a
:class:`~hieranon.hierarchy.Hierarchy` (through
:func:`~hieranon.hierarchy.from_paths`, one leaf-to-root path per distinct
value).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import date, datetime

from .files import excerpt
from .hierarchy import ROOT_LABEL, Hierarchy, HierarchyError, from_paths, value_to_label


def _interval_label(lo: float, width: float) -> str:
    hi = lo + width - 1 if float(width).is_integer() and float(lo).is_integer() else lo + width
    fmt = (lambda x: str(int(x))) if float(lo).is_integer() and float(width).is_integer() else (lambda x: f"{x:g}")
    return f"{fmt(lo)}-{fmt(hi)}"


def intervals(name: str, values: Iterable, widths: Sequence[float], *, origin: float = 0) -> Hierarchy:
    """Numeric interval hierarchy: value -> ``widths[0]``-wide bin -> ... -> ``*``.

    Bins are aligned at ``origin`` like ARX's (``0-4``, ``5-9`` for width 5);
    each width must be a multiple of the previous one so bins nest.
    """
    widths = [float(w) for w in widths]
    if not widths or not all(math.isfinite(w) and w > 0 for w in widths):
        raise HierarchyError(f"attribute {name!r}: interval widths must be positive finite numbers, got "
                             f"{[value_to_label(w) for w in widths]}")
    if not math.isfinite(origin):
        raise HierarchyError(f"attribute {name!r}: the interval origin must be a finite number, got {origin}")
    for a, b_ in zip(widths, widths[1:]):
        if b_ < a or not math.isclose(b_ / a, round(b_ / a)):
            raise HierarchyError(
                f"attribute {name!r}: interval widths {widths} must each be a multiple of the previous one"
            )
    vals = sorted({float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))})
    if not vals:
        raise HierarchyError(f"attribute {name!r}: no values to build intervals from")
    if not (math.isfinite(vals[0]) and math.isfinite(vals[-1])):
        bad = vals[0] if not math.isfinite(vals[0]) else vals[-1]
        raise HierarchyError(f"attribute {name!r}: intervals need finite numbers, found {bad}")
    rows = []
    for v in vals:
        row = [value_to_label(v)]
        for w in widths:
            lo = origin + math.floor((v - origin) / w) * w
            row.append(_interval_label(lo, w))
        row.append(ROOT_LABEL)
        rows.append(row)
    return from_paths(name, rows)


def masking(name: str, values: Iterable, length: int | None = None, *, mask_char: str = "*") -> Hierarchy:
    """Masking of fixed-length codes: ``4351 -> 435* -> 43** -> 4*** -> *``."""
    vals = sorted({value_to_label(v) for v in values})
    if not vals:
        raise HierarchyError(f"attribute {name!r}: no values to build a masking hierarchy from")
    lengths = {len(v) for v in vals}
    if length is None:
        if len(lengths) > 1:
            raise HierarchyError(
                f"attribute {name!r}: codes have different lengths {sorted(lengths)}; pad them or give length"
            )
        length = lengths.pop()
    bad = [v for v in vals if len(v) != length]
    if bad:
        shown = ", ".join(excerpt(x) for x in bad[:5])
        raise HierarchyError(f"attribute {name!r}: code(s) {shown} are not {length} characters long")
    rows = [[v[: length - i] + mask_char * i for i in range(length)] + [ROOT_LABEL] for v in vals]
    return from_paths(name, rows)


def suppression(name: str, values: Iterable) -> Hierarchy:
    """Suppression only: every value -> ``*``."""
    vals = sorted({value_to_label(v) for v in values})
    if not vals:
        raise HierarchyError(f"attribute {name!r}: no values to build a hierarchy from")
    return from_paths(name, [[v, ROOT_LABEL] for v in vals])


_DATE_FORMATS = {"dmy": "%d/%m/%Y", "mdy": "%m/%d/%Y", "ymd": "%Y-%m-%d"}


def dates(name: str, values: Iterable, order: str = "dmy") -> Hierarchy:
    """Dates: ``D/M/Y -> M/Y -> Y -> *``. ``values`` are strings in ``order``
    (``dmy``, ``mdy`` or ``ymd``) or date objects; leaves keep their text.
    The hierarchy remembers the format, so date objects (``date``,
    ``datetime``, ``pd.Timestamp``) are found whatever the order."""
    if order not in _DATE_FORMATS:
        raise HierarchyError(f"attribute {name!r}: date order must be one of {sorted(_DATE_FORMATS)}, got {order!r}")
    fmt = _DATE_FORMATS[order]
    rows = []
    for v in sorted({value_to_label(v) if not isinstance(v, (date, datetime)) else v.strftime(fmt) for v in values}):
        try:
            d = datetime.strptime(v, fmt)
        except ValueError:
            raise HierarchyError(f"attribute {name!r}: {excerpt(v)} is not a date in format {fmt}") from None
        rows.append([v, f"{d.month:02d}/{d.year}", str(d.year), ROOT_LABEL])
    if not rows:
        raise HierarchyError(f"attribute {name!r}: no dates to build a hierarchy from")
    h = from_paths(name, rows)
    h.date_format = fmt
    return h
