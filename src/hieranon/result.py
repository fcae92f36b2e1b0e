"""What an anonymisation (or the evaluation of an existing pair) leaves
behind: :class:`AnonymizationResult`.

A result keeps everything the later steps need -- the spec it was made
with, the encoded original (codes, record counts, hierarchies), the output
codes and which rows were suppressed -- so that the risk figures
(:func:`hieranon.risk.assess_result`, computed once and cached here) and the
HTML report (:mod:`hieranon.report`) read the result only, never the input
table or the configuration again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .hierarchy import Hierarchy
from .requirements import Requirement

__all__ = ["AnonymizationError", "AnonymizationResult"]


class AnonymizationError(RuntimeError):
    """The algorithm's output failed verification (never returned to the caller)."""


@dataclass
class AnonymizationResult:
    """The outcome of :func:`hieranon.anonymize`.

    Attributes
    ----------
    data : DataFrame or None
        The anonymised table: one row per input row, in order (or shuffled,
        see ``row_order``), same columns
        (identifiers dropped or masked if asked); only QI cells changed.
        None for a Parquet dataset anonymised batch by batch (then ``output``
        is the directory written).
    metrics : Metrics
        Every quality measure (:mod:`hieranon.metrics`).
    verification : VerificationReport or StreamReport
        The independent check of the output (always ``ok`` when returned by
        an anonymisation).
    method : str
        Method used, with ``params`` its parameters.
    requirements : list[Requirement]
    suppressed : ndarray of bool
        Rows suppressed (all QI cells ``*``).
    timings : dict
        Seconds spent encoding, solving, decoding, verifying, measuring.
    info : dict
        Algorithm-specific details (lattice node, merges, search trace...).
    codes, original_codes : ndarray (n_rows, n_qis)
        Output node codes and the original leaf codes.
    hierarchies : list[Hierarchy]
        One per QI, in column order.
    lower_bound : DistortionBound or None
        With ``anonymize(..., lower_bound=True)``: a lower bound of the
        distortion of every local recoding meeting the requirements
        (:mod:`hieranon.bounds`).
    spec : AnonymizationSpec or None
        The job the result was made with (settings shown in the report).
    counts : ndarray of int64 or None
        Records each row stands for (None: one each).
    output : Path or None
        Where the output was written, when the library wrote it.
    privacy_models : list[BoundModel]
        The privacy models of the job, bound to the input table.
    sensitive : dict
        Sensitive attribute -> its value codes per row (a bound model,
        :func:`hieranon.privacy.sensitive_columns`), for the report's plots.
    """

    data: pd.DataFrame | None
    metrics: object
    verification: object
    method: str
    params: dict
    requirements: list[Requirement]
    suppressed: np.ndarray
    timings: dict
    info: dict = field(default_factory=dict)
    codes: np.ndarray | None = field(default=None, repr=False)
    original_codes: np.ndarray | None = field(default=None, repr=False)
    hierarchies: list[Hierarchy] = field(default_factory=list, repr=False)
    lower_bound: object = None
    spec: object = field(default=None, repr=False)
    counts: np.ndarray | None = field(default=None, repr=False)
    output: Path | None = None
    privacy_models: list = field(default_factory=list, repr=False)
    sensitive: dict = field(default_factory=dict, repr=False)
    #: with ``shuffle``: output row ``i`` is input row ``row_order[i]`` (never written unless asked)
    row_order: np.ndarray | None = field(default=None, repr=False)
    #: the columns' roles (:class:`hieranon.roles.RoleReport`): unclassified columns, linkage risks
    roles: object = field(default=None, repr=False)
    #: how the run was executed (:class:`hieranon.algorithms.partition.RunPlan` as a dict): whole table or
    #: partitioned blocks, why, and the expected seconds
    plan: dict | None = None
    #: risk figures by threshold, filled by :func:`hieranon.risk.assess_result`
    risk_cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def qi_names(self) -> list[str]:
        return [h.name for h in self.hierarchies]

    @property
    def record_counts(self) -> np.ndarray:
        """Records per row (ones when the table had no count column)."""
        if self.counts is not None:
            return self.counts
        n = self.original_codes.shape[0] if self.original_codes is not None else len(self.suppressed)
        return np.ones(n, dtype=np.int64)

    @property
    def risk_threshold(self) -> float:
        """The spec's risk threshold, else 1/k of the largest k required
        (:meth:`hieranon.spec.AnonymizationSpec.threshold_for`)."""
        if self.spec is not None:
            return self.spec.threshold_for(self.requirements)
        from .risk import default_threshold
        return default_threshold(max((r.k for r in self.requirements), default=None))

    def risk(self, threshold: float | None = None):
        """``(before, after, suppressed_records)`` risk figures
        (:func:`hieranon.risk.assess_result`), computed once per threshold."""
        from .risk import assess_result
        return assess_result(self, threshold=threshold)

    def privacy(self):
        """The privacy figures before and after
        (:class:`hieranon.privacy.PrivacyAssessment`), computed once."""
        if "privacy" not in self.risk_cache:
            from .privacy import assess_privacy
            self.risk_cache["privacy"] = assess_privacy(
                self.privacy_models, self.original_codes, self.codes, self.record_counts, list(self.sensitive))
        return self.risk_cache["privacy"]

    def summary(self) -> dict:
        """Plain-dict summary for printing or JSON."""
        return {
            "method": self.method, "params": self.params,
            "requirements": [str(r) for r in self.requirements],
            "metrics": self.metrics.as_dict(), "verified": bool(self.verification.ok),
            "suppressed_records": int(self.metrics.suppressed_records),
            "timings": self.timings,
            "privacy": self.privacy().as_dict(),
            **({"output": str(self.output)} if self.output is not None else {}),
            **(self.roles.as_dict() if self.roles is not None else {}),
            "shuffled": self.row_order is not None,
            **({"plan": self.plan} if self.plan is not None else {}),
            **self.bound_summary(),
        }

    def order_map(self) -> pd.DataFrame | None:
        """With ``shuffle``: the two columns ``input_row, output_row`` (0-based), else None."""
        if self.row_order is None:
            return None
        return pd.DataFrame({"input_row": self.row_order, "output_row": np.arange(len(self.row_order))})

    def bound_summary(self) -> dict:
        """``{"lower_bound": {...}}`` for JSON when a bound was computed, else ``{}``."""
        b = self.lower_bound
        if b is None:
            return {}
        return {"lower_bound": {"distortion_ratio": b.ratio, "distortion": b.distortion, "optimal": b.optimal,
                                "iterations": b.iterations, "output_over_bound": self.gap_to_bound()}}

    def gap_to_bound(self) -> float | None:
        """The output's distortion over the lower bound (>= 1; 1 = provably
        optimal); None without a bound, inf when the bound is 0 but the output
        is not."""
        if self.lower_bound is None:
            return None
        if self.lower_bound.distortion <= 0:
            return 1.0 if self.metrics.distortion <= 1e-12 else float("inf")
        return self.metrics.distortion / self.lower_bound.distortion
