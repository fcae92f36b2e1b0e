"""Re-identification risk of a table as it is (prosecutor model).

Under the prosecutor model an attacker who knows a person is in the table
re-identifies them with probability ``1/|E|``, ``E`` their equivalence class
over the quasi-identifiers (El Emam; ARX's risk analysis).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from ..core.requirements import Requirement
from ..core.table import EncodedTable, group

#: Prosecutor risk above which a record counts as "at risk" when there is no
#: requirement to derive it from (see :func:`default_threshold`).
DEFAULT_THRESHOLD = 0.2


def default_threshold(k_max: int | None) -> float:
    """The risk threshold used unless one is given: ``1/k`` for the largest
    ``k`` of the requirements, so that a class of exactly ``k`` records (risk
    ``1/k``) is not "at risk" and a k-anonymous release shows none;
    :data:`DEFAULT_THRESHOLD` without requirements."""
    if k_max is None or k_max < 1:
        return DEFAULT_THRESHOLD
    return 1.0 / int(k_max)


def check_threshold(value, what: str = "risk_threshold") -> float:
    """``value`` as a risk threshold in (0, 1]; a ValueError naming ``what`` otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not (0 < float(value) <= 1):
        raise ValueError(f"{what}: expected a number in (0, 1] (a prosecutor risk 1/|class|, e.g. 0.2 = classes of "
                         f"fewer than 5 records), got {value!r}")
    return float(value)


def _count(n: int, one: str, many: str | None = None) -> str:
    """``1 class``, ``2 classes``: a count with its noun in the right number."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def size_bins(k: int | None = None) -> list[tuple[int, int | None]]:
    """Class-size bins ``[(low, high or None), ...]``: 1, 2, 3-4, 5-9, 10-19,
    20+ (roughly doubling), with ``k`` and ``2k`` as extra bin boundaries so
    that the classes below ``k`` are never binned with those that reach it."""
    edges = {1, 2, 3, 5, 10, 20}
    if k is not None and k > 1:
        edges |= {k, 2 * k}
    edges = sorted(edges)
    return [(lo, hi - 1) for lo, hi in zip(edges, edges[1:])] + [(edges[-1], None)]


@dataclass
class RiskReport:
    """Risk figures and requirement status of one table.

    Attributes
    ----------
    n_records, n_classes : int
    achieved_k : int
        Smallest class size over all QIs.
    risk_max, risk_mean : float
        Highest and average prosecutor risk ``1/|E|`` over records.
    records_at_risk : int
        Records whose risk exceeds ``threshold``.
    sample_uniques : float
        Fraction of records alone in their class.
    class_size_histogram : dict[int, int]
        Class size -> number of classes.
    requirements : list[dict]
        Per requirement: achieved k, classes and records below its k.
    """

    n_records: int
    n_classes: int
    achieved_k: int
    risk_max: float
    risk_mean: float
    threshold: float
    records_at_risk: int
    sample_uniques: float
    class_size_histogram: dict
    requirements: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r["classes_below_k"] == 0 for r in self.requirements)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["ok"] = self.ok
        return d

    def size_distribution(self, k: int | None = None) -> list[dict]:
        """Classes and records per class-size bin (:func:`size_bins`), from
        size 1 up to the bin holding the largest class; empty bins included.
        ``below_k`` marks the bins whose classes are all smaller than ``k``."""
        hist = self.class_size_histogram
        largest = max(hist, default=0)
        out = []
        for lo, hi in size_bins(k):
            if lo > largest:
                break
            inside = {s: c for s, c in hist.items() if s >= lo and (hi is None or s <= hi)}
            label = str(lo) if hi == lo else (f"{lo}+" if hi is None else f"{lo}-{hi}")
            out.append({"sizes": label, "min": lo, "max": hi, "classes": int(sum(inside.values())),
                        "records": int(sum(s * c for s, c in inside.items())),
                        "below_k": bool(k is not None and hi is not None and hi < k)})
        return out

    def rows(self, k: int | None = None, distribution: bool = False) -> list[tuple[str, str]]:
        """(label, value) rows for a console table; with ``distribution``,
        one row per class-size bin (bins chosen relative to ``k``)."""
        out = [
            ("records", str(self.n_records)), ("equivalence classes", str(self.n_classes)),
            ("k achieved (smallest class)", str(self.achieved_k)),
            ("prosecutor risk, highest", f"{self.risk_max:.4f}"),
            ("prosecutor risk, average", f"{self.risk_mean:.4f}"),
            (f"records at risk (risk above {self.threshold:.3g})", str(self.records_at_risk)),
            ("sample uniques", f"{self.sample_uniques:.2%}"),
        ]
        for r in self.requirements:
            out.append((f"{r['requirement']}: achieved k", str(r["achieved_k"])))
            out.append((f"{r['requirement']}: classes / records below k",
                        f"{r['classes_below_k']} / {r['records_below_k']}"))
        if distribution:
            for b in self.size_distribution(k):
                out.append((f"classes of size {b['sizes']}" + (" (below k)" if b["below_k"] else ""),
                            f"{_count(b['classes'], 'class', 'classes')} / {_count(b['records'], 'record')}"))
        return out


def class_sizes(codes: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(class sizes, size of each row's class)."""
    ec = group(codes, counts)
    return ec.sizes, ec.sizes[ec.row_class]


def assess(table: EncodedTable, requirements: list[Requirement], codes: np.ndarray | None = None,
           threshold: float = DEFAULT_THRESHOLD) -> RiskReport:
    """Risk of ``codes`` (default: the table as it is) and each requirement's status."""
    codes = table.codes if codes is None else codes
    counts = table.counts
    sizes, row_size = class_sizes(codes, counts)
    n = int(counts.sum())
    risk = 1.0 / row_size
    hist_sizes, hist_counts = np.unique(sizes, return_counts=True)
    reqs = []
    for r in requirements:
        idx = r.indices(table.qi_names)
        if set(idx) == set(range(codes.shape[1])):  # every QI: the classes above
            rs, rrow = sizes, row_size
        else:
            rs, rrow = class_sizes(codes[:, idx], counts)
        below = rs < r.k
        reqs.append({"requirement": str(r), "k": r.k, "achieved_k": int(rs.min()),
                     "classes_below_k": int(below.sum()), "records_below_k": int(counts[rrow < r.k].sum())})
    return RiskReport(
        n_records=n, n_classes=len(sizes), achieved_k=int(sizes.min()),
        risk_max=float(risk.max()), risk_mean=float((risk * counts).sum() / n), threshold=threshold,
        records_at_risk=int(counts[risk > threshold].sum()),
        sample_uniques=float(counts[row_size == 1].sum() / n),
        class_size_histogram={int(s): int(c) for s, c in zip(hist_sizes, hist_counts)},
        requirements=reqs,
    )


def assess_result(result, counts: np.ndarray | None = None, threshold: float | None = None):
    """Risk of an :class:`~hieranon.job.result.AnonymizationResult` before and after:
    ``(before, after, suppressed_records)``, from the result alone (its
    original and output codes, record counts and suppressed rows).

    ``after`` covers the records not suppressed (None when every record was
    suppressed or there are no output codes); ``before`` is None without the
    original codes. ``threshold`` defaults to the result's spec's
    ``risk_threshold``; the figures are computed once per threshold and kept
    on the result (``counts`` overrides the result's record counts and is
    not cached)."""
    if threshold is None:
        threshold = getattr(result, "risk_threshold", DEFAULT_THRESHOLD)
    cache = getattr(result, "risk_cache", None)
    if counts is None and cache is not None and threshold in cache:
        return cache[threshold]
    figures = _assess_result(result, counts, threshold)
    if counts is None and cache is not None:
        cache[threshold] = figures
    return figures


def _assess_result(result, counts, threshold: float):
    if result.original_codes is None:
        return None, None, 0
    n_rows = result.original_codes.shape[0]
    if counts is None:
        counts = getattr(result, "counts", None)
    counts = np.ones(n_rows, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    qi_names = [h.name for h in result.hierarchies]
    before = assess(EncodedTable(result.original_codes, result.hierarchies, qi_names, counts),
                    result.requirements, threshold=threshold)
    if result.codes is None:
        return before, None, 0
    sup = np.zeros(n_rows, dtype=bool) if result.suppressed is None else np.asarray(result.suppressed, dtype=bool)
    keep = ~sup
    if not keep.any():
        return before, None, int(counts[sup].sum())
    after = assess(EncodedTable(result.original_codes[keep], result.hierarchies, qi_names, counts[keep]),
                   result.requirements, codes=result.codes[keep], threshold=threshold)
    return before, after, int(counts[sup].sum())
