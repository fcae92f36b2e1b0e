"""The :class:`~hieranon.job.result.AnonymizationResult` of an existing (original,
anonymised) pair, so that a table anonymised elsewhere gets the same report
(``hieranon report ORIGINAL ANONYMISED``).

This builds a result from two tables: a step of the job pipeline rather than
of the page, kept beside the report that is its only user for now."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..bounds import BOUND_ITERATIONS, check_iterations, problem_lower_bound
from ..core.requirements import RequirementError
from ..core.table import encode_generalised, group
from ..evaluation import metrics as M
from ..evaluation.verify import verify
from ..job.problem import build_problem, measure
from ..job.result import AnonymizationResult
from ..job.spec import AnonymizationSpec
from ..privacy import sensitive_columns

__all__ = ["evaluate_pair"]


def evaluate_pair(original: pd.DataFrame, anonymised: pd.DataFrame, quasi_identifiers: Sequence[str] | None = None,
                  hierarchies=None, requirements=None, k: int | None = None, *, spec=None, counts: str | None = None,
                  weights: str = "uniform", beta: float = 1.0, priorities=None, class_column: str | None = None,
                  missing: str = "error", identifiers: Sequence[str] = (), method: str = "existing table",
                  params: Mapping | None = None, lower_bound: bool = False,
                  built: Mapping | None = None, suppressed_records: str = "class",
                  bound_iterations: int = BOUND_ITERATIONS):
    """An :class:`~hieranon.job.result.AnonymizationResult` for an anonymised table
    made elsewhere, so that :func:`render_report` can describe it.

    The job is ``spec`` (an :class:`~hieranon.job.spec.AnonymizationSpec`), or
    the keyword arguments (``counts`` the count column) as in
    :func:`hieranon.anonymize`. The original is encoded once
    (:func:`hieranon.job.problem.build_problem`); the pair is verified with
    :func:`hieranon.evaluation.verify.verify` (which never raises on a failed check) and
    measured with :func:`hieranon.job.problem.measure` under the spec's cost
    model. When some output cell does not generalise its original value the
    codes and metrics cannot be computed: they are ``None`` and the report
    says so. Identifier columns of ``original`` absent from ``anonymised``
    are taken as dropped. ``lower_bound`` also bounds every local recoding's
    distortion from below (:mod:`hieranon.bounds`; ``result.lower_bound``,
    when the metrics exist), in ``bound_iterations`` subgradient iterations.
    ``built``: the spec's hierarchies, already built.
    ``suppressed_records``: rows of ``*`` are a class of their own
    (``"class"``, the library's convention) or left out as ARX publishes them
    (``"removed"``); the verdict and the metrics' achieved k follow it alike.
    """

    bound_iterations = check_iterations(bound_iterations)  # before any work
    if spec is None:
        spec = AnonymizationSpec.from_arguments(
            quasi_identifiers, hierarchies, k, requirements=requirements, count_column=counts, weights=weights,
            beta=beta, priorities=priorities, class_column=class_column, missing=missing, identifiers=identifiers,
            params=params)
    qis = spec.quasi_identifiers
    dropped = [c for c in spec.identifiers if c in original.columns and c not in anonymised.columns]
    orig = original.drop(columns=dropped) if dropped else original
    timings: dict[str, float] = {}
    t = time.perf_counter()
    prepared = build_problem(orig, spec, hierarchies=built)
    problem, enc = prepared.problem, prepared.table
    reqs = problem.requirements
    if not reqs:
        raise RequirementError("no anonymity requirement: give k or at least one requirement")
    timings["encode"] = time.perf_counter() - t
    t = time.perf_counter()
    report = verify(orig, anonymised, qis, prepared.hierarchies, reqs, missing=spec.missing, encoded=enc,
                    privacy=problem.privacy, suppressed_records=suppressed_records)
    timings["verify"] = time.perf_counter() - t
    codes = metrics = None
    suppressed = np.zeros(enc.n_rows, dtype=bool)
    decodable = not ({"rows", "columns", "not_generalisation"} & report.kinds)
    if decodable:
        t = time.perf_counter()
        codes = encode_generalised(enc, anonymised.reset_index(drop=True))
        if (codes < 0).any():
            codes = None
        else:
            all_root = M.suppressed_mask(codes)
            metrics = measure(problem, codes, all_root)
            if suppressed_records == "class" and all_root.any():  # the rows of '*' are a class: k counts it
                metrics = dataclasses.replace(
                    metrics, achieved_k=int(group(codes, enc.counts).sizes.min()),
                    achieved_k_per_requirement={**metrics.achieved_k_per_requirement, **report.achieved_k})
            suppressed = all_root
        timings["metrics"] = time.perf_counter() - t
    result = AnonymizationResult(anonymised, metrics, report, method, dict(params or spec.params), reqs, suppressed,
                                 timings, {}, codes, enc.codes, enc.hierarchies, spec=spec, counts=enc.counts,
                                 weights=problem.weights,
                                 privacy_models=list(problem.privacy), risk_models=list(problem.risk),
                                 sensitive=sensitive_columns(orig, spec.sensitive, enc.counts))
    if lower_bound and metrics is not None:

        t = time.perf_counter()
        result.lower_bound = problem_lower_bound(problem, upper=metrics.distortion, start=codes,
                                                  iterations=bound_iterations)
        timings["lower_bound"] = time.perf_counter() - t
    return result
