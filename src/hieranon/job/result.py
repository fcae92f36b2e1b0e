"""What an anonymisation (or the evaluation of an existing pair) leaves
behind: :class:`AnonymizationResult`.

A result keeps everything the later steps need -- the spec it was made
with, the encoded original (codes, record counts, hierarchies), the output
codes and which rows were suppressed -- so that the risk figures
(:func:`hieranon.evaluation.risk.assess_result`, computed once and cached here) and the
HTML report (:mod:`hieranon.report`) read the result only, never the input
table or the configuration again.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.requirements import Requirement
from ..core.tree import Hierarchy
from ..evaluation.risk import assess_result as assess_risk
from ..evaluation.risk import default_threshold
from ..evaluation.statement import assess_statement
from ..privacy import assess_privacy

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
        Every quality measure (:mod:`hieranon.evaluation.metrics`).
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
    risk_models : list[BoundRiskModel]
        The risk-based privacy models of the job (k-map, delta-presence,
        average risk, population uniqueness), bound to the input table.
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
    #: sampling weight of each row (the spec's weight column), for the individual risk; None: 1/f each
    weights: np.ndarray | None = field(default=None, repr=False)
    output: Path | None = None
    privacy_models: list = field(default_factory=list, repr=False)
    risk_models: list = field(default_factory=list, repr=False)
    sensitive: dict = field(default_factory=dict, repr=False)
    #: with ``shuffle``: output row ``i`` is input row ``row_order[i]`` (never written unless asked)
    row_order: np.ndarray | None = field(default=None, repr=False)
    #: the columns' roles (:class:`hieranon.evaluation.roles.RoleReport`): unclassified columns, linkage risks
    roles: object = field(default=None, repr=False)
    #: how the run was executed (:class:`hieranon.algorithms.partition.RunPlan` as a dict): whole table or
    #: partitioned blocks, why, and the expected seconds
    plan: dict | None = None
    #: risk figures by threshold, filled by :func:`hieranon.evaluation.risk.assess_result`
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
        (:meth:`hieranon.job.spec.AnonymizationSpec.threshold_for`)."""
        if self.spec is not None:
            return self.spec.threshold_for(self.requirements)
        return default_threshold(max((r.k for r in self.requirements), default=None))

    @property
    def population_model(self):
        """The spec's population model (None: the default sampling fraction, assumed)."""
        return getattr(self.spec, "population", None) if self.spec is not None else None

    def risk(self, threshold: float | None = None, population=None):
        """``(before, after, suppressed_records)`` risk figures
        (:func:`hieranon.evaluation.risk.assess_result`), computed once per threshold
        and population model (a :class:`hieranon.evaluation.risk.PopulationModel`;
        default: the sampling fraction it assumes)."""
        return assess_risk(self, threshold=threshold, population=population)

    def privacy(self):
        """The privacy figures before and after
        (:class:`hieranon.privacy.PrivacyAssessment`), computed once."""
        if "privacy" not in self.risk_cache:
            self.risk_cache["privacy"] = assess_privacy(
                self.privacy_models, self.original_codes, self.codes, self.record_counts, list(self.sensitive),
                risk=self.risk_models)
        return self.risk_cache["privacy"]

    def statement(self):
        """What the release protects and what it does not
        (:class:`hieranon.evaluation.statement.ReleaseStatement`), computed once."""
        if "statement" not in self.risk_cache:
            self.risk_cache["statement"] = assess_statement(self)
        return self.risk_cache["statement"]

    def utility(self, target: str | None = None, *, original: pd.DataFrame | None = None, **options):
        """The utility report of the release (:func:`hieranon.evaluation.utility.assess_result`):
        per-attribute loss, associations between quasi-identifiers and, with
        ``target``, the accuracy (R^2 for a numeric target) of models trained on
        the anonymised against the original quasi-identifiers. Computed once per
        set of arguments; the last one is shown in the HTML report."""
        key = ("utility", target, tuple(sorted((k, tuple(v) if isinstance(v, (list, set)) else v)
                                               for k, v in options.items())))
        if key not in self.risk_cache or original is not None:
            from ..evaluation.utility import assess_result  # scipy.sparse (~0.1 s) loads only when utility is measured
            self.risk_cache[key] = assess_result(self, target, original=original, **options)
        self.risk_cache["utility:last"] = self.risk_cache[key]
        return self.risk_cache[key]

    # ------------------------------------------------------------ display
    def _short_facts(self) -> list[tuple[str, str]]:
        """(label, value) pairs of the short summary (``__repr__`` and ``_repr_html_``)."""
        m = self.metrics
        ok = getattr(self.verification, "ok", None)
        facts = [("method", str(self.method)),
                 ("requirements", ", ".join(str(r) for r in self.requirements) or "-"),
                 ("verified", "yes" if ok else ("no" if ok is not None else "-"))]
        if m is not None:
            facts += [("records", f"{m.n_records:,}"), ("k achieved", f"{m.achieved_k:,}"),
                      ("equivalence classes", f"{m.n_classes:,}"),
                      ("suppressed records", f"{int(m.suppressed_records):,}"),
                      ("cells generalised to * (records not suppressed)",
                       "-" if self.statement().star_cells_total is None else f"{self.statement().star_cells_total:,}"),
                      ("distortion ratio", f"{m.distortion_ratio:.4f}"), ("precision", f"{m.precision:.4f}")]
        u = self.risk_cache.get("utility:last")
        for ms in (u.models if u is not None else []):
            relative = "-" if ms.relative is None else f"{ms.relative:.3f}"
            if ms.score == "accuracy":  # the gain over the majority-class baseline beside the raw ratio
                gain = "-" if ms.normalised is None else f"{ms.normalised:.3f}"
                facts.append((f"{ms.model}: relative accuracy / gain over the baseline", f"{relative} / {gain}"))
            else:
                facts.append((f"{ms.model}: relative R^2", relative))
        statement = self.statement()
        facts += [("holds" if ok else "does not hold", text) for ok, text in statement.lines()]
        return facts

    def __repr__(self) -> str:
        facts = dict(self._short_facts())
        keep = ("method", "requirements", "verified", "records", "k achieved", "suppressed records",
                "distortion ratio")
        shape = "" if self.data is None else f", data={self.data.shape[0]}x{self.data.shape[1]}"
        return "AnonymizationResult(" + ", ".join(f"{k.replace(' ', '_')}={facts[k]}" for k in keep
                                                  if k in facts) + shape + ")"

    def _repr_html_(self) -> str:
        """A short HTML summary for Jupyter: the key facts, the QIs' share of
        cells kept / generalised / suppressed, and the first rows."""

        e = html.escape
        rows = "".join(f"<tr><th style='text-align:left'>{e(k)}</th><td>{e(v)}</td></tr>"
                       for k, v in self._short_facts())
        qi_rows = ""
        if self.codes is not None and self.original_codes is not None:
            w = self.record_counts.astype(float)
            for j, name in enumerate(self.qi_names):
                orig, gen = self.original_codes[:, j], self.codes[:, j]
                share = [float(w[mask].sum() / w.sum()) for mask in (
                    (gen == orig) & (orig != 0), (gen != orig) & (gen != 0), (gen == 0) & (orig != 0), orig == 0)]
                qi_rows += f"<tr><td>{e(str(name))}</td>" + "".join(f"<td>{x:.1%}</td>" for x in share) + "</tr>"
        qis = ("<table><thead><tr><th>QI</th><th>kept</th><th>generalised</th><th>suppressed</th>"
               f"<th>missing in input</th></tr></thead><tbody>{qi_rows}</tbody></table>") if qi_rows else ""
        head = self.data.head(5).to_html(max_cols=12, notebook=False) if self.data is not None else ""
        return (f"<div class='hieranon-result'><b>AnonymizationResult</b>"
                f"<table><tbody>{rows}</tbody></table>{qis}{head}</div>")

    def summary(self) -> dict:
        """Plain-dict summary for printing or JSON."""
        return {
            "method": self.method, "params": self.params,
            "requirements": [str(r) for r in self.requirements],
            "metrics": self.metrics.as_dict(), "verified": bool(self.verification.ok),
            "suppressed_records": int(self.metrics.suppressed_records),
            **({"suppression": dict(self.info["suppression"])} if "suppression" in self.info else {}),
            # what really ran (params say what was asked: one block runs serially, not on the executor asked)
            **({"execution": {"blocks": self.info["blocks"], "executor": self.info["executor"]}}
               if "executor" in self.info else {}),
            "timings": self.timings,
            "privacy": self.privacy().as_dict(),
            **({"output": str(self.output)} if self.output is not None else {}),
            **(self.roles.as_dict() if self.roles is not None else {}),
            "shuffled": self.row_order is not None,
            # what holds and what does not, beside it; records suppressed and cells generalised to * apart
            "statement": self.statement().as_dict(),
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
                                "iterations": b.iterations, "output_over_bound": self.gap_to_bound(),
                                "privacy_models": list(b.models)}}

    def gap_to_bound(self) -> float | None:
        """The output's distortion over the lower bound (>= 1; 1 = provably
        optimal); None without a bound, inf when the bound is 0 but the output
        is not."""
        if self.lower_bound is None:
            return None
        if self.lower_bound.distortion <= 0:
            return 1.0 if self.metrics.distortion <= 1e-12 else float("inf")
        return self.metrics.distortion / self.lower_bound.distortion
