"""The pandas-facing entry point: :func:`anonymize` (keyword arguments) and
:func:`run` (an :class:`~hieranon.job.spec.AnonymizationSpec`).

Both validate everything up front (the spec), encode the QI columns to
integer codes (:func:`hieranon.job.problem.build_problem`), run the chosen
algorithm, decode, and verify the output independently
(:mod:`hieranon.evaluation.verify`) before returning it: an output that fails the
anonymity check is never returned.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..algorithms.base import Problem, Solution
from ..algorithms.partition import RunPlan, plan_run
from ..algorithms.registry import (  # noqa: F401 - re-exported for users of hieranon.job.pipeline
    DEFAULT_METHOD,
    METHODS,
    available_methods,
    make_algorithm,
    method_parameters,
    methods_accepting,
)
from ..bounds import BOUND_ITERATIONS, BoundTooLarge, check_iterations, problem_lower_bound
from ..core.cells import cells_equal
from ..core.progress import ProgressEvent, reporting
from ..core.progress import stage as progress_stage
from ..core.table import EncodedTable, apply_codes, check_columns
from ..core.tree import Hierarchy
from ..evaluation import metrics as M
from ..evaluation.roles import check_roles, without_index
from ..evaluation.verify import verify_codes
from ..io import typed_numeric_qis
from ..io.pseudonyms import new_key, protective_rng, pseudonyms
from ..privacy import check_feasible, risk_feasible, sensitive_columns
from .result import AnonymizationError, AnonymizationResult  # noqa: F401 - re-exported
from .problem import build_algorithm, build_problem, measure, run_method  # noqa: F401 - run_method re-exported
from .spec import (  # noqa: F401 - MISSING_MODES, check_special_columns re-exported
    MISSING_MODES,
    AnonymizationSpec,
    check_special_columns,
)

log = logging.getLogger("hieranon")


def prepare(df: pd.DataFrame, quasi_identifiers, hierarchies, k=None, *, requirements=None,
            weights: str = "uniform", beta: float = 1.0, priorities=None, seed: int | None = None,
            count_column: str | None = None, class_column: str | None = None,
            missing: str = "error") -> Problem:
    """Validate inputs and build the :class:`Problem` an algorithm solves
    (keyword arguments as in :func:`anonymize`; see :func:`hieranon.job.problem.build_problem`)."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError("anonymize expects a pandas DataFrame")
    spec = AnonymizationSpec.from_arguments(
        quasi_identifiers, hierarchies, k, requirements=requirements, weights=weights, beta=beta,
        priorities=priorities, seed=seed, count_column=count_column, class_column=class_column, missing=missing)
    return build_problem(df, spec).problem


def anonymize(df: pd.DataFrame, quasi_identifiers: Sequence[str] | None = None, hierarchies=None,
              k: int | None = None, *, requirements=None, method: str | None = None,
              weights: str = "uniform", beta: float = 1.0, priorities=None, seed: int | None = None,
              count_column: str | None = None, class_column: str | None = None, missing: str = "error",
              identifiers: Sequence[str] = (), identifier_action: str = "drop", pseudonym_key=None,
              params: Mapping | None = None, lower_bound: bool = False, bound_iterations: int = BOUND_ITERATIONS,
              privacy: Sequence = (),
              sensitive: Sequence[str] = (), insensitive: Sequence[str] = (), strict_roles: bool = False,
              shuffle: bool = False, risk_threshold: float | None = None, max_suppression=None,
              population=None, weight_column: str | None = None, suda_max_size: int | None = None,
              execution: str = "auto", progress: Callable[[ProgressEvent], None] | None = None,
              **method_params) -> AnonymizationResult:
    """k-anonymise ``df`` by generalising its quasi-identifiers.

    The result's table (``result.data``) has the input's columns and
    dtypes, except the quasi-identifiers: a numeric one (its hierarchy's
    leaves are numbers) is an **ordered pandas Categorical** whose categories
    are its hierarchy's labels (``37``, ``[25, 50)``, ``*``) ordered by the
    range they stand for (:func:`hieranon.io.typed_numeric_qis`;
    :func:`hieranon.io.numeric_output` gives ranges, midpoints or
    lower/upper bounds), any other one text labels.

    Parameters
    ----------
    df : DataFrame
        One row per record, or distinct rows with ``count_column``.
    quasi_identifiers : list of str
        QI columns (default: the keys of ``hierarchies``).
    hierarchies : mapping column -> Hierarchy, or list in QI order
        A hierarchy, a hierarchy file's path, or a builder written as on the
        command line (``"intervals:5,10,20"``, ``"suppress"``,
        ``"dates:month,quarter,year"``, ``"groups:2,4"``, ``"mask:5"``,
        ``"mapping:FILE"``: :mod:`hieranon.hierarchies.builders`, built from ``df``).
    missing : str
        Empty QI cells: ``"error"`` (refused), ``"root"`` (already suppressed:
        they stay empty in the output and count as missing, not as
        generalised) or ``"value"`` (a value of their own: the builders' leaf
        ``missing`` under the root, generalised like any other).
    k : int
        One requirement over all QIs; ``requirements`` adds ``(attributes, k)``
        pairs or ``"A,B:K"`` strings (Arca & Hewett).
    method : str
        ``kaca1``, ``kaca2``, ``fulldomain``, ``allmin``, ``datafly``,
        ``mondrian``... (default: :data:`DEFAULT_METHOD`).
    weights, beta, priorities
        Distortion measure the method minimises: WHD ``uniform`` or ``height``
        (``beta``) weights (Li et al. 2006, Def. 5), MAGE; priorities per attribute
        (mapping) or a ranking (Sun et al. 2008).
    seed : int or None
        Repeat a run exactly: the seed of the method's random choices (default
        a fixed one, so outputs are reproducible) and of the shuffled row
        order (default fresh randomness from the operating system). Never
        written to the result's table or report.
    identifiers, identifier_action, pseudonym_key
        Direct identifiers are dropped (``"drop"``, default), masked with
        ``*`` (``"mask"``) or replaced by a keyed pseudonym per value
        (``"pseudonym"``: HMAC-SHA256 under ``pseudonym_key``, bytes or a key
        file's path, by default a fresh random key per run;
        :mod:`hieranon.io.pseudonyms`).
    sensitive, insensitive : list of str
        The other roles. The table's index is never published: a
        non-default one is dropped with a logged warning (an error with
        ``strict_roles``; ``df.reset_index()`` makes it a column). A column with no role (not a QI, identifier,
        sensitive or insensitive, class or count column) is named in one
        :class:`~hieranon.evaluation.roles.UnclassifiedColumnsWarning`; with
        ``strict_roles`` (the configuration's ``strict``, ``--strict``) it is a
        :class:`~hieranon.core.table.DataError` instead (``strict`` itself is
        Mondrian's parameter). Columns published
        unchanged that are near-unique or nearly copy a QI are logged as
        linkage risks (``result.roles``). A column has one role (the class
        column may also be sensitive or insensitive): two that contradict
        each other raise :class:`~hieranon.evaluation.roles.RoleConflictError` naming
        the column and both roles. Columns are named by the frame's labels
        (text, or e.g. the integer ``0``); MultiIndex columns are refused.
    shuffle : bool
        Release the rows in a random order (fresh unless ``seed`` is given);
        ``result.row_order[i]`` is the input row of output row ``i``.
    risk_threshold : float
        Prosecutor risk above which a record is "at risk" (default ``1/k``
        of the largest k required).
    population : PopulationModel
        The population the table was sampled from
        (:class:`hieranon.risk.PopulationModel`: a sampling fraction or a
        size) for the journalist, marketer, population-uniqueness and
        individual risk (default: a 1 % sample, assumed and said so).
    weight_column : str
        A column of sampling weights (how many people each record stands
        for), published unchanged, for the individual risk (Benedetti &
        Franconi 1998); default: every record weighs 1 / sampling fraction.
    suda_max_size : int
        Largest set of quasi-identifiers searched for special uniques
        (:func:`hieranon.risk.special_uniques`; default 3).
    max_suppression : str, float or int
        Suppress at most this share (``"5%"``, ``0.05``) or number (``120``)
        of records, each only where that lowers the total distortion
        (:mod:`hieranon.algorithms.suppression`); ``result.info["suppression"]``
        says how many and why.
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
        requirements from below (:mod:`hieranon.bounds`; about 10 s on
        45,000 records with 8 QIs on 2 cores): ``result.lower_bound``.
    bound_iterations : int
        Subgradient iterations of that bound (default 400): more give a
        tighter bound in proportionally more time (UCI Adult, 8 QIs, k = 10,
        0.2-closeness of salary-class: 0.165 at 400, 0.172 at 1,600).
    execution : {"auto", "whole", "partitioned"}
        How to run: chosen from the table's size and shape (``auto``,
        recorded in ``result.plan``), or forced (see :func:`run`).
    progress : callable
        Called with a :class:`~hieranon.core.progress.ProgressEvent` at every step
        of every long stage, with an estimate of the time left (default: the
        stages are logged on the ``hieranon.progress`` logger).
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError("anonymize expects a pandas DataFrame")
    spec = AnonymizationSpec.from_arguments(
        quasi_identifiers, hierarchies, k, requirements=requirements, method=method, weights=weights, beta=beta,
        priorities=priorities, seed=seed, count_column=count_column, class_column=class_column, missing=missing,
        identifiers=identifiers, identifier_action=identifier_action, pseudonym_key=pseudonym_key,
        params={**(params or {}), **method_params},
        privacy=tuple(privacy or ()), sensitive=sensitive or (), insensitive=insensitive or (),
        strict=strict_roles, shuffle=shuffle, risk_threshold=risk_threshold, max_suppression=max_suppression,
        population=population, weight_column=weight_column, suda_max_size=suda_max_size, execution=execution)
    return run(df, spec, lower_bound=lower_bound, bound_iterations=bound_iterations, progress=progress)


def run(df: pd.DataFrame, spec: AnonymizationSpec, *, lower_bound: bool = False,
        bound_iterations: int = BOUND_ITERATIONS, hierarchies: Mapping[str, Hierarchy] | None = None,
        progress: Callable[[ProgressEvent], None] | None = None) -> AnonymizationResult:
    """Anonymise ``df`` as ``spec`` says: build the problem
    (:func:`hieranon.job.problem.build_problem`), choose how to run it
    (``spec.execution``, :func:`hieranon.algorithms.partition.plan_run`:
    recorded as ``result.plan``), solve, decode, verify and measure.
    ``hierarchies``: the spec's, already built (else built here).
    ``progress``: called with a :class:`~hieranon.core.progress.ProgressEvent` at
    every step of every long stage (else the stages are logged on
    ``hieranon.progress``). ``lower_bound``, ``bound_iterations``: as in
    :func:`anonymize`."""
    iterations = check_iterations(bound_iterations)  # before any work
    with reporting(progress):
        return _run(df, spec, iterations if lower_bound else 0, hierarchies)


def _run(df: pd.DataFrame, spec: AnonymizationSpec, bound_iterations: int,
         hierarchies: Mapping[str, Hierarchy] | None) -> AnonymizationResult:
    """:func:`run`; a lower bound of ``bound_iterations`` iterations when positive."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    algo = build_algorithm(spec)  # bad parameters (and a budget the method cannot spend): refused before any work
    if not isinstance(df, pd.DataFrame):
        raise TypeError("anonymize expects a pandas DataFrame")
    df = without_index(df, strict=spec.strict)
    check_columns(df, list(spec.identifiers), "identifier")
    with progress_stage("encoding", detail=f"{len(df)} rows, {len(spec.hierarchies)} QIs"):
        prepared = build_problem(df, spec, hierarchies=hierarchies)  # checks the table's columns first
        roles = check_roles(df, spec)  # DataError when strict and a column has no role
    problem = prepared.problem
    check_feasible(problem.privacy)  # PrivacyError before any work
    risk_feasible(problem.risk)
    plan = choose_plan(problem, spec)
    if plan.mode != "whole":  # the spec's method runs in each block
        algo = build_algorithm(spec, plan)
    algo.check_problem(problem)
    timings["encode"] = time.perf_counter() - t0

    t = time.perf_counter()
    log.info("running %s on %d rows, %d QIs, requirements %s; plan: %s", algo.name, problem.table.n_rows,
             len(problem.table.qi_names), [str(r) for r in problem.requirements], plan.describe())
    with progress_stage(f"solving with {spec.method}", expected_seconds=plan.estimated_seconds,
                        detail=plan.describe()):
        solution: Solution = algo.solve_checked(problem)  # checked above, before any work
    timings["solve"] = time.perf_counter() - t
    relaxed = solution.relaxed if bound_iterations else None  # the bound's alone: its program is large
    solution.relaxed = None
    result = finish(df, problem, solution, algo.name, algo.run_params(), timings, spec.identifiers,
                    spec.identifier_action, spec=spec)
    warn_if_useless(problem, solution, algo.name)
    result.roles = roles
    result.plan = plan.as_dict()
    if bound_iterations:
        t = time.perf_counter()
        try:
            result.lower_bound = problem_lower_bound(problem, upper=result.metrics.distortion,
                                                      start=solution.codes, iterations=bound_iterations,
                                                      resume=relaxed)
        except BoundTooLarge as exc:  # the output stands; only its certificate is missing
            warnings.warn(f"no lower bound: {exc}", stacklevel=2)
        timings["lower_bound"] = time.perf_counter() - t
    return result


def choose_plan(problem: Problem, spec: AnonymizationSpec) -> RunPlan:
    """How to run ``spec`` on ``problem``'s table, chosen once
    (:func:`~hieranon.algorithms.partition.plan_run`): as ``spec.execution``
    asks, with the options of a partitioned run in ``spec.partition``
    (``block_size``, ``executor``, ``n_workers``, ``scheduler``, ``whole_seconds``)."""
    options = spec.partition
    plan = plan_run(problem.table, spec.method, spec.execution, block_size=options.get("block_size"),
                    workers=options.get("n_workers"), scheduler=options.get("scheduler"),
                    executor=options.get("executor"),
                    **({"whole_seconds": options["whole_seconds"]} if "whole_seconds" in options else {}))
    log.info("plan: %s", plan.describe())
    return plan


#: Distortion ratio above which an output has lost nearly everything.
USELESS_RATIO = 0.9
#: Rows up to which a useless output is compared with Mondrian's (LeFevre et al. 2006), which solves the
#: problem again: a fraction of a second on 45,000 records, but a second solve all the same, so larger
#: tables get the general advice only.
COMPARE_MAX_ROWS = 50_000


def warn_if_useless(problem: Problem, solution: Solution, method: str) -> float | None:
    """Log a warning when ``solution`` has generalised nearly everything
    (distortion ratio above :data:`USELESS_RATIO`): the output is k-anonymous
    but of little use. Only then, and only on a table of at most
    :data:`COMPARE_MAX_ROWS` rows, Mondrian (fast) is tried on the same
    problem; when its verified output keeps much more, the warning names it.
    Returns the alternative's ratio, if one was computed."""
    table = problem.table
    ratio = M.distortion_ratio(table.codes, solution.codes, problem.cost, table.counts)
    if not ratio > USELESS_RATIO:
        return None
    better = None
    if method != "mondrian" and table.n_rows <= COMPARE_MAX_ROWS:
        better = _mondrian_ratio(problem)
    if better is not None and better < ratio - 0.2:
        log.warning("%s's output has lost nearly everything (distortion ratio %.2f); mondrian keeps much more "
                    "on this table (ratio %.2f): try --method mondrian (or fulldomain)", method, ratio, better)
    else:
        looser = ", looser privacy models (a larger t, a smaller l)" if problem.privacy else ""
        log.warning("%s's output has lost nearly everything (distortion ratio %.2f): the requirements may be too "
                    "strict for this table (fewer quasi-identifiers, a smaller k%s, or finer hierarchies help)",
                    method, ratio, looser)
    return better


def _mondrian_ratio(problem: Problem) -> float | None:
    """The distortion ratio of Mondrian's verified output of ``problem``
    (None when Mondrian cannot take it)."""
    table = problem.table
    try:
        alt = make_algorithm("mondrian")
        alt.check_problem(problem)
        alt_solution = alt.solve(problem)
    except (ValueError, RuntimeError, NotImplementedError) as exc:  # mondrian cannot take this problem
        log.debug("no comparison with mondrian: %s", exc)
        return None
    if not verify_codes(table, alt_solution.codes, problem.requirements, alt_solution.suppressed).ok:
        return None
    return M.distortion_ratio(table.codes, alt_solution.codes, problem.cost, table.counts)


def shuffled(out: pd.DataFrame, seed: int | None) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows of ``out`` in a random order (:func:`hieranon.io.pseudonyms.protective_rng`:
    fresh unless ``seed`` is given) and the permutation: output row ``i`` is
    input row ``order[i]``."""
    order = protective_rng(seed).permutation(len(out))
    return out.iloc[order].reset_index(drop=True), order


def check_order(df: pd.DataFrame, out: pd.DataFrame, order: np.ndarray, skip: Sequence[str]) -> None:
    """The shuffled output checked against the input through the permutation:
    ``order`` permutes the rows, and every column published unchanged (all
    but ``skip``: the QIs, verified before, and the identifiers) equals the
    input's row ``order[i]`` in output row ``i``."""
    if not np.array_equal(np.sort(order), np.arange(len(df))):
        raise AnonymizationError("shuffle: the row order is not a permutation of the input's rows")
    src = df.iloc[order].reset_index(drop=True)
    for c in out.columns:
        if c not in skip and c in src.columns and not cells_equal(src[c], out[c]).all():
            raise AnonymizationError(f"shuffle: column {c!r} of the output does not match the input through "
                                     "the permutation")


def finish(df: pd.DataFrame, problem: Problem, solution: Solution, method: str, params: dict,
           timings: dict, identifiers: Sequence[str] = (), identifier_action: str = "drop", *,
           spec: AnonymizationSpec | None = None) -> AnonymizationResult:
    """Decode, verify and measure an algorithm's solution."""
    table: EncodedTable = problem.table
    t = time.perf_counter()
    with progress_stage("verifying", detail=f"{table.n_rows} rows"):
        report = verify_codes(table, solution.codes, problem.requirements, solution.suppressed,
                              privacy=problem.privacy, risk=problem.risk)
    timings["verify"] = time.perf_counter() - t
    if not report.ok:
        raise AnonymizationError(f"method {method!r} produced an output that fails verification: {report.summary()}")

    t = time.perf_counter()
    out = typed_numeric_qis(apply_codes(df, table, solution.codes), dict(zip(table.qi_names, table.hierarchies)))
    key = (spec.pseudonym_key if spec is not None else None) or new_key()
    for c in identifiers:
        if identifier_action == "drop":
            out = out.drop(columns=c)
        elif identifier_action == "pseudonym":
            out[c] = pseudonyms(out[c], key)
        else:
            out[c] = "*"
    order = None
    if spec is not None and spec.shuffle:
        out, order = shuffled(out, spec.seed)
        check_order(df, out, order, [*table.qi_names, *identifiers])
    timings["decode"] = time.perf_counter() - t

    t = time.perf_counter()
    with progress_stage("measuring"):
        metrics = measure(problem, solution.codes, solution.suppressed)
    timings["metrics"] = time.perf_counter() - t
    return AnonymizationResult(out, metrics, report, method, params, problem.requirements, solution.suppressed,
                               timings, solution.info, solution.codes, table.codes, table.hierarchies,
                               spec=spec, counts=table.counts, weights=problem.weights,
                               privacy_models=list(problem.privacy), risk_models=list(problem.risk),
                               sensitive=sensitive_columns(df, spec.sensitive if spec is not None else
                                                           [getattr(b, "attribute", None) for b in problem.privacy],
                                                           table.counts), row_order=order)
