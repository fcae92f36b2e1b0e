"""The pandas-facing entry point: :func:`anonymize` (keyword arguments) and
:func:`run` (an :class:`~hieranon.spec.AnonymizationSpec`).

Both validate everything up front (the spec), encode the QI columns to
integer codes (:func:`hieranon.spec.build_problem`), run the chosen
algorithm, decode, and verify the output independently
(:mod:`hieranon.verify`) before returning it: an output that fails the
anonymity check is never returned.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Mapping, Sequence

import pandas as pd

from . import metrics as M
from .algorithms.base import Problem, Solution
from .algorithms.registry import (  # noqa: F401 - re-exported for users of hieranon.api
    DEFAULT_METHOD, METHODS, available_methods, make_algorithm, method_parameters, methods_accepting)
from .config import HierarchySpec
from .privacy import check_feasible, sensitive_columns
from .hierarchy import Hierarchy
from .result import AnonymizationError, AnonymizationResult  # noqa: F401 - re-exported
from .spec import MISSING_MODES, AnonymizationSpec, build_problem, check_special_columns  # noqa: F401
from .table import EncodedTable, apply_codes, check_columns

log = logging.getLogger("hieranon")

def resolve_priorities(priorities, qi_names: Sequence[str]):
    """Priorities as given (mapping attribute -> weight) or a ranking turned
    into equally scaled priorities (seed 002; SPEC section 2); see
    :meth:`AnonymizationSpec.priority_weights`, which this calls."""
    if priorities is None:
        return None
    hs = {q: HierarchySpec(q, builder="suppress") for q in qi_names}
    return AnonymizationSpec(hierarchies=hs, priorities=priorities).priority_weights()


def check_missing_mode(missing) -> str:
    if missing not in MISSING_MODES:
        raise ValueError(f"missing must be one of {', '.join(MISSING_MODES)}, got {missing!r}")
    return missing


def prepare(df: pd.DataFrame, quasi_identifiers, hierarchies, k=None, *, requirements=None,
            weights: str = "uniform", beta: float = 1.0, priorities=None, seed: int | None = 0,
            count_column: str | None = None, class_column: str | None = None,
            missing: str = "error") -> Problem:
    """Validate inputs and build the :class:`Problem` an algorithm solves
    (keyword arguments as in :func:`anonymize`; see :func:`hieranon.spec.build_problem`)."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError("anonymize expects a pandas DataFrame")
    spec = AnonymizationSpec.from_arguments(
        quasi_identifiers, hierarchies, k, requirements=requirements, weights=weights, beta=beta,
        priorities=priorities, seed=seed, count_column=count_column, class_column=class_column, missing=missing)
    return build_problem(df, spec).problem


def anonymize(df: pd.DataFrame, quasi_identifiers: Sequence[str] | None = None, hierarchies=None,
              k: int | None = None, *, requirements=None, method: str | None = None,
              weights: str = "uniform", beta: float = 1.0, priorities=None, seed: int | None = 0,
              count_column: str | None = None, class_column: str | None = None, missing: str = "error",
              identifiers: Sequence[str] = (), identifier_action: str = "drop",
              params: Mapping | None = None, lower_bound: bool = False, privacy: Sequence = (),
              sensitive: Sequence[str] = (), **method_params) -> AnonymizationResult:
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
    privacy : list of privacy models
        l-diversity / t-closeness of sensitive attributes
        (:mod:`hieranon.privacy`, e.g. ``[DistinctLDiversity("salary-class", 2)]``):
        every equivalence class of the output, the suppressed records one
        more, satisfies each (Machanavajjhala et al. 2007; Li et al. 2007).
        A model the whole table cannot satisfy raises
        :class:`~hieranon.privacy.PrivacyError` before any work.
    sensitive : list of str
        Sensitive columns (published unchanged, reported); every privacy
        model's attribute is one.
    lower_bound : bool
        Also bound the distortion of every local recoding meeting the
        requirements from below (:mod:`hieranon.bounds`; about a minute on
        45,000 records with 8 QIs): ``result.lower_bound``.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError("anonymize expects a pandas DataFrame")
    spec = AnonymizationSpec.from_arguments(
        quasi_identifiers, hierarchies, k, requirements=requirements, method=method, weights=weights, beta=beta,
        priorities=priorities, seed=seed, count_column=count_column, class_column=class_column, missing=missing,
        identifiers=identifiers, identifier_action=identifier_action, params={**(params or {}), **method_params},
        privacy=tuple(privacy or ()), sensitive=tuple(sensitive or ()))
    return run(df, spec, lower_bound=lower_bound)


def run(df: pd.DataFrame, spec: AnonymizationSpec, *, lower_bound: bool = False,
        hierarchies: Mapping[str, Hierarchy] | None = None) -> AnonymizationResult:
    """Anonymise ``df`` as ``spec`` says: build the problem
    (:func:`hieranon.spec.build_problem`), solve, decode, verify and measure.
    ``hierarchies``: the spec's, already built (else built here)."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    algo = make_algorithm(spec.method, **spec.algorithm_params())
    if not isinstance(df, pd.DataFrame):
        raise TypeError("anonymize expects a pandas DataFrame")
    check_columns(df, list(spec.identifiers), "identifier")
    prepared = build_problem(df, spec, hierarchies=hierarchies)
    problem = prepared.problem
    check_feasible(problem.privacy)  # PrivacyError before any work
    algo.check_problem(problem)
    timings["encode"] = time.perf_counter() - t0

    t = time.perf_counter()
    log.info("running %s on %d rows, %d QIs, requirements %s", spec.method, problem.table.n_rows,
             len(problem.table.qi_names), [str(r) for r in problem.requirements])
    solution: Solution = algo.solve(problem)
    timings["solve"] = time.perf_counter() - t
    result = finish(df, problem, solution, spec.method, algo.get_params(), timings, spec.identifiers,
                    spec.identifier_action, spec=spec)
    warn_if_useless(problem, solution, spec.method)
    if lower_bound:
        from .bounds import BoundTooLarge, problem_lower_bound

        t = time.perf_counter()
        try:
            result.lower_bound = problem_lower_bound(problem, upper=result.metrics.distortion)
        except BoundTooLarge as exc:  # the output stands; only its certificate is missing
            warnings.warn(f"no lower bound: {exc}", stacklevel=2)
        timings["lower_bound"] = time.perf_counter() - t
    return result


#: Distortion ratio above which an output has lost nearly everything.
USELESS_RATIO = 0.9


def warn_if_useless(problem: Problem, solution: Solution, method: str) -> float | None:
    """Log a warning when ``solution`` has generalised nearly everything
    (distortion ratio above :data:`USELESS_RATIO`): the output is k-anonymous
    but of little use. Mondrian (fast) is tried on the same problem; when its
    verified output keeps much more, the warning names it. Returns the
    alternative's ratio, if one was computed."""
    from .algorithms.registry import make_algorithm
    from .verify import verify_codes

    table = problem.table
    ratio = M.distortion_ratio(table.codes, solution.codes, problem.cost, table.counts)
    if not ratio > USELESS_RATIO:
        return None
    better = None
    if method != "mondrian":
        try:
            alt = make_algorithm("mondrian")
            alt.check_problem(problem)
            alt_solution = alt.solve(problem)
            if verify_codes(table, alt_solution.codes, problem.requirements, alt_solution.suppressed).ok:
                better = M.distortion_ratio(table.codes, alt_solution.codes, problem.cost, table.counts)
        except (ValueError, RuntimeError, NotImplementedError) as exc:  # mondrian cannot take this problem
            log.debug("no comparison with mondrian: %s", exc)
    if better is not None and better < ratio - 0.2:
        log.warning("%s's output has lost nearly everything (distortion ratio %.2f); mondrian keeps much more "
                    "on this table (ratio %.2f): try --method mondrian (or fulldomain)", method, ratio, better)
    else:
        log.warning("%s's output has lost nearly everything (distortion ratio %.2f): the requirements may be too "
                    "strict for this table (fewer quasi-identifiers, a smaller k, or finer hierarchies help)",
                    method, ratio)
    return better


def finish(df: pd.DataFrame, problem: Problem, solution: Solution, method: str, params: dict,
           timings: dict, identifiers: Sequence[str] = (), identifier_action: str = "drop", *,
           spec: AnonymizationSpec | None = None) -> AnonymizationResult:
    """Decode, verify and measure an algorithm's solution."""
    from .verify import verify_codes

    table: EncodedTable = problem.table
    t = time.perf_counter()
    report = verify_codes(table, solution.codes, problem.requirements, solution.suppressed,
                          privacy=problem.privacy)
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
                               timings, solution.info, solution.codes, table.codes, table.hierarchies,
                               spec=spec, counts=table.counts, privacy_models=list(problem.privacy),
                               sensitive=sensitive_columns(df, spec.sensitive if spec is not None else
                                                           [getattr(b, "attribute", None) for b in problem.privacy],
                                                           table.counts))
