"""Re-identification risk of a table as it is (prosecutor model).

Under the prosecutor model an attacker who knows a person is in the table
re-identifies them with probability ``1/|E|``, ``E`` their equivalence class
over the quasi-identifiers (El Emam; ARX's risk analysis).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from .requirements import Requirement
from .table import EncodedTable, group


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

    def rows(self) -> list[tuple[str, str]]:
        out = [
            ("records", str(self.n_records)), ("equivalence classes", str(self.n_classes)),
            ("k achieved (smallest class)", str(self.achieved_k)),
            ("prosecutor risk, highest", f"{self.risk_max:.4f}"),
            ("prosecutor risk, average", f"{self.risk_mean:.4f}"),
            (f"records at risk > {self.threshold:g}", str(self.records_at_risk)),
            ("sample uniques", f"{self.sample_uniques:.2%}"),
        ]
        for r in self.requirements:
            out.append((f"{r['requirement']}: achieved k", str(r["achieved_k"])))
            out.append((f"{r['requirement']}: classes / records below k",
                        f"{r['classes_below_k']} / {r['records_below_k']}"))
        return out


def class_sizes(codes: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(class sizes, size of each row's class)."""
    ec = group(codes, counts)
    return ec.sizes, ec.sizes[ec.row_class]


def assess(table: EncodedTable, requirements: list[Requirement], codes: np.ndarray | None = None,
           threshold: float = 0.2) -> RiskReport:
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
