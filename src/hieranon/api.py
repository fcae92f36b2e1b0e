"""The pandas-facing entry point: :func:`anonymize`.

It validates everything up front, encodes the QI columns to integer codes,
runs the chosen algorithm, decodes, and verifies the output independently
(:mod:`hieranon.verify`) before returning it: an output that fails the
anonymity check is never returned.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import metrics as M
from .algorithms.base import Problem, Solution
from .algorithms.registry import (  # noqa: F401 - re-exported for users of hieranon.api
    DEFAULT_METHOD, METHODS, available_methods, make_algorithm, method_parameters, methods_accepting)
from .hierarchy import Hierarchy
from .requirements import Requirement, normalise
from .table import DataError, EncodedTable, apply_codes, check_columns, encode

log = logging.getLogger("hieranon")

class AnonymizationError(RuntimeError):
    """The algorithm's output failed verification (never returned to the caller)."""


@dataclass
class AnonymizationResult:
    """The outcome of :func:`anonymize`.

    Attributes
    ----------
    data : DataFrame
        The anonymised table: one row per input row, in order, same columns
        (identifiers dropped or masked if asked); only QI cells changed.
    metrics : Metrics
        Every quality measure (:mod:`hieranon.metrics`).
    verification : VerificationReport
        The independent check of the output (always ``ok`` when returned).
    method : str
        Method used, with ``params`` its parameters.
    requirements : list[Requirement]
    suppressed : ndarray of bool
        Rows suppressed (all QI cells ``*``).
    timings : dict
        Seconds spent encoding, solving, decoding, verifying, measuring.
    info : dict
        Algorithm-specific details (lattice node, merges, search trace...).
    lower_bound : DistortionBound or None
        With ``anonymize(..., lower_bound=True)``: a lower bound of the
        distortion of every local recoding meeting the requirements
        (:mod:`hieranon.bounds`); ``metrics.distortion_ratio / lower_bound.ratio``
        bounds how far the output is from the optimum.
    """

    data: pd.DataFrame
    metrics: M.Metrics
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

    def summary(self) -> dict:
        """Plain-dict summary for printing or JSON."""
        return {
            "method": self.method, "params": self.params,
            "requirements": [str(r) for r in self.requirements],
            "metrics": self.metrics.as_dict(), "verified": bool(self.verification.ok),
            "suppressed_records": int(self.metrics.suppressed_records),
            "timings": self.timings,
            **self.bound_summary(),
        }

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


def resolve_priorities(priorities, qi_names: Sequence[str]):
    """Priorities as given (mapping attribute -> weight) or a ranking turned
    into equally scaled priorities (seed 002; SPEC section 2)."""
    if priorities is None:
        return None
    if isinstance(priorities, Mapping):
        for a, w in priorities.items():
            if isinstance(w, (bool, str)) or not isinstance(w, (int, float, np.integer, np.floating)) \
                    or not (0 <= w < float("inf")):
                raise ValueError(f"priorities: the weight of {a!r} must be a number >= 0, got {w!r}")
        return dict(priorities)
    if isinstance(priorities, str):
        raise ValueError(f"priorities: expected a ranking list or a mapping attribute -> weight, got {priorities!r}")
    ranking = list(priorities)
    unknown = [a for a in ranking if a not in qi_names]
    if unknown:
        raise ValueError(f"priority ranking names {unknown}, which are not quasi-identifiers {list(qi_names)}")
    pri = M.equal_priorities(ranking)
    return {a: pri.get(a, 0) for a in qi_names}


MISSING_MODES = ("error", "root")


def check_special_columns(quasi_identifiers: Sequence[str], count_column: str | None = None,
                          class_column: str | None = None) -> None:
    """The count and class columns must be columns of their own: not a
    quasi-identifier (it would be generalised) and not each other."""
    qis = set(quasi_identifiers)
    for what, col in (("count column", count_column), ("class column", class_column)):
        if col is not None and col in qis:
            raise DataError(f"the {what} {col!r} is a quasi-identifier; name a separate column "
                            f"(quasi-identifiers: {list(quasi_identifiers)})")
    if count_column is not None and count_column == class_column:
        raise DataError(f"the count column and the class column are both {count_column!r}; the record counts "
                        "and the class labels must be separate columns")


def check_missing_mode(missing) -> str:
    if missing not in MISSING_MODES:
        raise ValueError(f"missing must be one of {', '.join(MISSING_MODES)}, got {missing!r}")
    return missing


def prepare(df: pd.DataFrame, quasi_identifiers, hierarchies, k=None, *, requirements=None,
            weights: str = "uniform", beta: float = 1.0, priorities=None, seed: int | None = 0,
            count_column: str | None = None, class_column: str | None = None,
            missing: str = "error") -> Problem:
    """Validate inputs and build the :class:`Problem` an algorithm solves."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError("anonymize expects a pandas DataFrame")
    if len(df) == 0:
        raise DataError("the table has no rows")
    if quasi_identifiers is None:
        if not isinstance(hierarchies, Mapping):
            raise ValueError("give quasi_identifiers, or hierarchies as a mapping column -> Hierarchy")
        quasi_identifiers = list(hierarchies)
    qi_names = list(quasi_identifiers)
    check_special_columns(qi_names, count_column, class_column)
    check_missing_mode(missing)
    if isinstance(hierarchies, Mapping):
        hierarchies = {q: (h if h.name == q else h.renamed(q)) for q, h in hierarchies.items() if q in qi_names} | {
            q: h for q, h in hierarchies.items() if q not in qi_names}
    table = encode(df, qi_names, hierarchies, counts=count_column, missing=missing)
    reqs = normalise(requirements, k, qi_names, table.n_records)
    model = M.CostModel.build(table.hierarchies, weights, beta, resolve_priorities(priorities, qi_names),
                              max_rows=max(table.n_records, 1))
    labels = None
    if class_column is not None:
        check_columns(df, [class_column], "class")
        labels = df[class_column].to_numpy()
    return Problem(table, reqs, model, seed, labels)


def anonymize(df: pd.DataFrame, quasi_identifiers: Sequence[str] | None = None, hierarchies=None,
              k: int | None = None, *, requirements=None, method: str | None = None,
              weights: str = "uniform", beta: float = 1.0, priorities=None, seed: int | None = 0,
              count_column: str | None = None, class_column: str | None = None, missing: str = "error",
              identifiers: Sequence[str] = (), identifier_action: str = "drop",
              params: Mapping | None = None, lower_bound: bool = False, **method_params) -> AnonymizationResult:
    """k-anonymise ``df`` by generalising its quasi-identifiers.

    Parameters
    ----------
    df : DataFrame
        One row per record, or distinct rows with ``count_column``.
    quasi_identifiers : list of str
        QI columns (default: the keys of ``hierarchies``).
    hierarchies : mapping column -> Hierarchy, or list in QI order
    k : int
        One requirement over all QIs; ``requirements`` adds ``(attributes, k)``
        pairs or ``"A,B:K"`` strings (seed 003).
    method : str
        ``kaca1``, ``kaca2``, ``fulldomain``, ``allmin``, ``datafly``,
        ``mondrian``... (default: :data:`DEFAULT_METHOD`).
    weights, beta, priorities
        Distortion measure the method minimises: WHD ``uniform`` or ``height``
        (``beta``) weights (seed 000, Def. 5), MAGE; priorities per attribute
        (mapping) or a ranking (seed 002).
    seed : int
        Seed of every random choice.
    identifiers, identifier_action
        Direct identifiers are dropped (default) or masked with ``*``.
    params / **method_params
        Parameters of the method (e.g. ``max_inconsistency=0.1`` for KACA2).
    lower_bound : bool
        Also bound the distortion of every local recoding meeting the
        requirements from below (:mod:`hieranon.bounds`; about a minute on
        45,000 records with 8 QIs): ``result.lower_bound``.
    """
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    method = method or DEFAULT_METHOD
    all_params = {**(params or {}), **method_params}
    algo = make_algorithm(method, **all_params)
    if identifier_action not in ("drop", "mask"):
        raise ValueError(f"identifier_action must be 'drop' or 'mask', got {identifier_action!r}")
    check_columns(df, list(identifiers), "identifier")
    problem = prepare(df, quasi_identifiers, hierarchies, k, requirements=requirements, weights=weights,
                      beta=beta, priorities=priorities, seed=seed, count_column=count_column,
                      class_column=class_column, missing=missing)
    algo.check_problem(problem)
    timings["encode"] = time.perf_counter() - t0

    t = time.perf_counter()
    log.info("running %s on %d rows, %d QIs, requirements %s", method, problem.table.n_rows,
             len(problem.table.qi_names), [str(r) for r in problem.requirements])
    solution: Solution = algo.solve(problem)
    timings["solve"] = time.perf_counter() - t
    result = finish(df, problem, solution, method, algo.get_params(), timings, identifiers, identifier_action)
    if lower_bound:
        from .bounds import BoundTooLarge, problem_lower_bound

        t = time.perf_counter()
        try:
            result.lower_bound = problem_lower_bound(problem, upper=result.metrics.distortion)
        except BoundTooLarge as exc:  # the output stands; only its certificate is missing
            warnings.warn(f"no lower bound: {exc}", stacklevel=2)
        timings["lower_bound"] = time.perf_counter() - t
    return result


def finish(df: pd.DataFrame, problem: Problem, solution: Solution, method: str, params: dict,
           timings: dict, identifiers: Sequence[str] = (), identifier_action: str = "drop") -> AnonymizationResult:
    """Decode, verify and measure an algorithm's solution."""
    from .verify import verify_codes

    table: EncodedTable = problem.table
    t = time.perf_counter()
    report = verify_codes(table, solution.codes, problem.requirements, solution.suppressed)
    timings["verify"] = time.perf_counter() - t
    if not report.ok:
        raise AnonymizationError(f"method {method!r} produced an output that fails verification: {report.summary()}")

    t = time.perf_counter()
    out = apply_codes(df, table, solution.codes)
    for c in identifiers:
        if identifier_action == "drop":
            out = out.drop(columns=c)
        else:
            out[c] = "*"
    timings["decode"] = time.perf_counter() - t

    t = time.perf_counter()
    metrics = M.compute(table.codes, solution.codes, table.hierarchies, problem.k, table.counts, problem.cost,
                        table.qi_names, problem.class_labels, suppressed=solution.suppressed,
                        requirements=problem.requirements)
    timings["metrics"] = time.perf_counter() - t
    return AnonymizationResult(out, metrics, report, method, params, problem.requirements, solution.suppressed,
                               timings, solution.info, solution.codes, table.codes, table.hierarchies)
