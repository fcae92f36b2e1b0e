"""The public entry points of the lower bound: :func:`distortion_lower_bound`
for one requirement, :func:`relaxed_prices` for its multipliers too (the
prices of kaca+'s Lagrangian heuristic, Fisher 1981) and
:func:`problem_lower_bound` for a whole problem. The method is described in
:mod:`hieranon.bounds`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..core.cost import CostModel, full_distortion
from ..core.progress import stage as progress_stage
from ..core.table import EncodedTable
from .ascent import ascend
from .candidates import candidate_nodes
from .distinct import distinct_member_sets
from .relaxation import Relaxation
from .share import tightest_share

log = logging.getLogger(__name__)

__all__ = ["MARGIN_LEVELS", "DistortionBound", "RelaxedPrices", "RelaxedProgram", "distortion_lower_bound",
           "problem_lower_bound", "relaxed_prices", "relaxed_program"]


#: Screening margin of the relaxation, in units of a whole attribute generalised
#: to its root: members less than this above a node's cost are counted as it
#: is scanned from the units' side (a speed setting; the bound is the same).
MARGIN_LEVELS = 0.5


@dataclass
class DistortionBound:
    """A lower bound of the distortion of every k-anonymous local recoding.

    Attributes
    ----------
    ratio : float
        Lower bound of the distortion ratio (distortion over that of the fully
        generalised table, Li et al. 2006, sec. 6).
    distortion : float
        The same bound in distortion units (Li et al. 2006, Def. 7).
    simple_ratio : float
        The starting bound: each record alone at the cheapest node above it
        with ``>= k`` records under it.
    optimal : bool
        True when the relaxed solution is itself a k-anonymous assignment: the
        bound is then the exact optimum.
    iterations : int
        Subgradient iterations run.
    nodes : int
        Candidate nodes (``>= k`` records under them), one per distinct set
        of records (:func:`~hieranon.bounds.distinct.distinct_member_sets`).
    incidences : int
        Pairs (distinct row, candidate node above it).
    seconds : float
        Wall time.
    stage_seconds : dict
        Wall time of each stage: ``"candidates"`` (the walk over the
        hierarchies), ``"distinct"`` (one node per set of records),
        ``"setup"`` (the units' node lists) and ``"ascent"``.
    models : tuple of str
        The privacy models the bound honours besides k (descriptions); the
        bound holds for every output meeting them and the requirement.
    """

    ratio: float
    distortion: float
    simple_ratio: float
    optimal: bool
    iterations: int
    nodes: int
    incidences: int
    seconds: float
    stage_seconds: dict = field(default_factory=dict)
    models: tuple = ()


#: Subgradient iterations of a lower bound when none are asked for.
BOUND_ITERATIONS = 400


def check_iterations(iterations, name: str = "bound_iterations", least: int = 1) -> int:
    """``iterations`` as an int when it is a whole number ``>= least``
    (numpy integers accepted), else a ValueError naming ``name``."""
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < least:
        raise ValueError(f"{name} must be a whole number >= {least}, got {iterations!r}")
    return int(iterations)


def distortion_lower_bound(table: EncodedTable, cost: CostModel, k: int, *, columns: Sequence[int] | None = None,
                           upper: float | None = None, start: np.ndarray | None = None,
                           iterations: int = BOUND_ITERATIONS, max_incidences: int = 400_000_000,
                           max_vectors: int = 2_000_000,
                           share: tuple[np.ndarray, float, float] | None = None) -> DistortionBound:
    """Lower bound of the distortion of every k-anonymous local recoding of ``table``.

    Parameters
    ----------
    table : EncodedTable
        The original table (codes and record counts).
    cost : CostModel
        The distortion measure (its node costs).
    k : int
        Required class size over the quasi-identifiers ``columns``.
    columns : sequence of int, optional
        Indices of the QIs of the requirement (default: all). The bound is on
        the distortion of the whole table; other QIs are counted at zero cost.
    upper : float, optional
        The distortion (in distortion units) of a known k-anonymous output:
        the target of the Polyak steps; without it the target is 5 % above
        the best bound so far (slower to converge). Each step aims
        :data:`~hieranon.bounds.ascent.TARGET_SHARE` of the way from the best bound to it.
    start : ndarray, optional
        The codes of a known k-anonymous output, row for row with ``table``:
        each record's multiplier starts halfway between the simple bound's
        and the cost the record pays there (the bound is valid from any
        start; a good one takes fewer steps).
    iterations : int
        Maximum subgradient iterations.
    max_incidences, max_vectors : int
        Refuse (``BoundTooLarge``) beyond this many (row, node) pairs, or
        depth vectors of the hierarchies holding candidate nodes.
    share : (flags, low, high), optional
        Every class must also hold a share in ``[low, high]`` of the records
        flagged (a bool per row): the t-closeness of a two-valued sensitive
        attribute, whose EMD is the difference of the shares (Li, Li &
        Venkatasubramanian 2007), is ``[p - t, p + t]`` with ``p`` the
        table's share. The bound is then on outputs meeting it too.
    """
    return relaxed_prices(table, cost, k, columns=columns, upper=upper, start=start, iterations=iterations,
                          max_incidences=max_incidences, max_vectors=max_vectors, share=share).bound


@dataclass
class RelaxedPrices:
    """The multipliers of the best relaxed value found, with the program they price.

    Attributes
    ----------
    bound : DistortionBound
        The lower bound (:func:`distortion_lower_bound`).
    price : ndarray of float
        Per unit, its multiplier plus its own cost: what a record of the unit
        may pay at a node (a node's reduced cost for it is the node's cost minus this).
    unit_of_row : ndarray of int
        Each row's unit (distinct QI tuple, and flag with ``share``).
    weights : ndarray of int
        Records per unit.
    flags : ndarray of int8
        Per unit, its share flag (all 0 without ``share``).
    low, high : float
        The share's interval ((0, 1): none).
    members, starts, node_cost : ndarray
        The candidate nodes: node ``g``'s units are ``members[starts[g]:starts[g + 1]]``,
        its cost ``node_cost[g]`` (float, in the cost model's integer scale).
    value : float
        The relaxed value at ``price``, in the cost model's integer scale
        (the bound before it is rounded up to whole units).
    step : float
        The share of the Polyak step the ascent had reached.
    program : RelaxedProgram or None
        The program priced, kept for an ascent resumed from here
        (:func:`relaxed_prices` with ``resume``).
    """

    bound: DistortionBound
    price: np.ndarray
    unit_of_row: np.ndarray
    weights: np.ndarray
    flags: np.ndarray
    low: float
    high: float
    members: np.ndarray
    starts: np.ndarray
    node_cost: np.ndarray
    value: float = 0.0
    step: float = 1.0
    program: RelaxedProgram | None = field(default=None, repr=False)


@dataclass
class RelaxedProgram:
    """The relaxed program of one requirement, before any multiplier is
    priced: what :func:`relaxed_prices` ascends over, built apart by
    :func:`relaxed_program` so that it can be built ahead (kaca+ walks its
    candidate nodes in a thread while it repairs its clustering).

    Attributes
    ----------
    k : int
        The requirement's class size.
    columns : list of int
        Indices of its QIs.
    share : (flags, low, high) or None
        The share constraint it was built with.
    units_of_row : ndarray of int
        Each row's unit (distinct QI tuple, and flag with ``share``).
    weights, own : ndarray
        Records per unit and the cost of a unit's own values.
    full : float
        The distortion of the fully generalised table (the ratio's denominator).
    relaxation : Relaxation or None
        The program over the candidate nodes, one per distinct set of
        records; None while only the walk is done (``walk_only``), until
        :meth:`complete`.
    candidates : int
        Candidate nodes before those with the same records were dropped.
    stage_seconds : dict
        Wall time of ``"candidates"``, ``"distinct"`` and ``"setup"``.
    walked : tuple or None
        The walk's nodes ``(members, starts, node_cost)``, kept until :meth:`complete`.
    unit_share : (flags per unit, low, high) or None
        ``share`` per unit, as the relaxation reads it.
    margin : float
        The relaxation's screening margin (:data:`MARGIN_LEVELS` in the cost's integer units).
    """

    k: int
    columns: list
    share: tuple | None
    units_of_row: np.ndarray
    weights: np.ndarray
    own: np.ndarray
    full: float
    relaxation: Relaxation | None
    candidates: int
    stage_seconds: dict
    walked: tuple | None = field(default=None, repr=False)
    unit_share: tuple | None = field(default=None, repr=False)
    margin: float = 0.0

    def complete(self, label: str = "lower bound") -> Relaxation:
        """The relaxation, built from the walk's nodes if not yet: one node
        per distinct set of records (:func:`~hieranon.bounds.distinct.distinct_member_sets`)
        and each unit's nodes. Its parallel kernels hold the interpreter, so
        this step runs where the ascent will."""
        if self.relaxation is None:
            members, starts, node_cost = self.walked
            t = time.perf_counter()
            with progress_stage(f"{label}, k = {self.k}: the relaxed program",
                                detail=f"{self.candidates} nodes, {len(members)} (row, node) pairs"):
                members, starts, node_cost = distinct_member_sets(members, starts, node_cost)
                self.stage_seconds["distinct"], t = time.perf_counter() - t, time.perf_counter()
                log.info("lower bound, k = %d: %d candidate nodes (%d with distinct records), %d (row, node) pairs",
                         self.k, self.candidates, len(node_cost), len(members))
                self.relaxation = Relaxation(members, starts, node_cost, self.own, self.weights, self.k,
                                             self.margin, self.unit_share)
            self.stage_seconds["setup"] = time.perf_counter() - t
            self.walked = None
        return self.relaxation

    def matches(self, table: EncodedTable, k: int, columns: Sequence[int] | None, share) -> bool:
        """Was this program built for ``table``'s rows, ``k``, ``columns`` and ``share``?"""
        cols = list(range(table.codes.shape[1])) if columns is None else [int(c) for c in columns]
        return (self.k == int(k) and self.columns == cols and len(self.units_of_row) == table.n_rows
                and (self.share is None) == (share is None)
                and (share is None or (self.share[1:] == tuple(share[1:])
                                       and np.array_equal(self.share[0], share[0]))))


def relaxed_program(table: EncodedTable, cost: CostModel, k: int, *, columns: Sequence[int] | None = None,
                    max_incidences: int = 400_000_000, max_vectors: int = 2_000_000,
                    share: tuple[np.ndarray, float, float] | None = None, label: str = "lower bound",
                    threads: int | None = None, cancel: threading.Event | None = None,
                    walk_only: bool = False) -> RelaxedProgram:
    """The relaxed program of :func:`relaxed_prices` (same parameters), its
    multipliers not yet priced: the candidate nodes
    (:func:`~hieranon.bounds.candidates.candidate_nodes`, walked in
    ``threads`` threads, stopped when ``cancel`` is set), then, unless
    ``walk_only`` (:meth:`RelaxedProgram.complete` does it later), one node
    per distinct set of records and each unit's nodes. The walk's kernel
    releases the interpreter: ``walk_only`` is the part worth running in
    another thread. Raises :class:`BoundTooLarge` past the limits, as
    :func:`relaxed_prices` does."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    cols = list(range(table.codes.shape[1])) if columns is None else [int(c) for c in columns]
    full = full_distortion(table.codes, cost, table.counts)
    keys = table.codes[:, cols]
    if share is not None:  # units of one QI tuple and one flag
        keys = np.column_stack([keys, np.asarray(share[0], dtype=bool).astype(keys.dtype)])
    units, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    weights = np.bincount(inverse, weights=table.counts, minlength=len(units)).astype(np.int64)
    unit_share = None if share is None else (units[:, -1], float(share[1]), float(share[2]))
    units = units[:, :len(cols)]
    hs = [table.hierarchies[j] for j in cols]
    int_costs = [np.asarray(cost.int_costs[j], dtype=np.int64) for j in cols]
    own = sum(int_costs[i][units[:, i]] for i in range(len(cols))).astype(np.float64)
    n = int(weights.sum())
    if k > n:
        raise ValueError(f"k = {k} exceeds the {n} records of the table: no k-anonymous output exists")
    t = time.perf_counter()
    walked = candidate_nodes(units, weights, hs, int_costs, int(k), max_incidences, max_vectors, label=label,
                             threads=threads, cancel=cancel)
    program = RelaxedProgram(int(k), cols, share, inverse, weights, own, full, None, len(walked[2]),
                             {"candidates": time.perf_counter() - t}, walked, unit_share,
                             float(MARGIN_LEVELS * cost.scale))
    if not walk_only:
        program.complete(label)
    return program


def relaxed_prices(table: EncodedTable, cost: CostModel, k: int, *, columns: Sequence[int] | None = None,
                   upper: float | None = None, start: np.ndarray | None = None,
                   iterations: int = BOUND_ITERATIONS, max_incidences: int = 400_000_000,
                   max_vectors: int = 2_000_000,
                   share: tuple[np.ndarray, float, float] | None = None, label: str = "lower bound",
                   program: RelaxedProgram | None = None, resume: RelaxedPrices | None = None) -> RelaxedPrices:
    """:func:`distortion_lower_bound` (same parameters), also returning the
    best multipliers and the candidate nodes: the prices a Lagrangian
    heuristic builds an output from (Fisher 1981). ``label`` names the work
    in the progress display; ``program``, when given, is the
    :func:`relaxed_program` of the same table, ``k``, ``columns`` and
    ``share``, built ahead (its time counts in the bound's ``seconds``).
    ``resume``: the prices of an earlier ascent over the same program
    (kaca+'s Lagrangian output computes them); the ascent goes on from its
    best multipliers and step for ``iterations`` more over its program
    (``start`` and ``program`` are then not read), the bound's iterations and
    seconds counting both."""
    check_iterations(iterations, "iterations", least=0)
    t0 = time.perf_counter()
    if resume is not None:
        program = resume.program
        if program is None or program.relaxation is None:
            raise ValueError("the prices to resume from keep no relaxed program")
    ahead = 0.0 if program is None else sum(program.stage_seconds.values())  # what complete() adds is timed here
    if program is None:
        program = relaxed_program(table, cost, k, columns=columns, max_incidences=max_incidences,
                                  max_vectors=max_vectors, share=share, label=label)
    elif not program.matches(table, k, columns, share):
        raise ValueError("the relaxed program given was built for another table, k, columns or share")
    full_program = program.complete(label)
    weights = program.weights
    stages = dict(program.stage_seconds)
    simple_price = full_program.cheapest()  # each unit's cheapest node: the simple bound
    simple = float(((simple_price - program.own) * weights).sum())
    if resume is None:
        price, best, best_price, step, done = _start_price(program, table, cost, start), simple, simple_price, 1.0, 0
    else:
        price, best, best_price, step = resume.price, resume.value, resume.price, resume.step
        done, ahead = resume.bound.iterations, resume.bound.seconds
    target = None if upper is None else float(upper) * cost.scale
    t = time.perf_counter()
    n_nodes, n_pairs = len(full_program.node_cost), len(full_program.members)
    with progress_stage(f"{label}, k = {k}", total=iterations,
                        detail=f"{n_nodes} nodes, {n_pairs} (row, node) pairs") as stage:
        value, best_price, optimal, it, step = ascend(full_program, price, weights, best, best_price, target,
                                                      float(cost.scale), iterations, stage, step)
    stages["ascent"] = time.perf_counter() - t + (0.0 if resume is None else resume.bound.stage_seconds["ascent"])
    best = value
    if cost.exact:  # every distortion is a whole number of 1/scale units: so is the optimum
        best = float(np.ceil(best - 1e-7 * max(1.0, abs(best))))
    seconds = time.perf_counter() - t0 + ahead
    full = program.full
    ratio = best / cost.scale / full if full > 0 else 0.0  # full = 0: every QI cell is a root already
    log.info("lower bound, k = %d: ratio %.5f after %d iterations (%.1fs)", k, ratio, done + it, seconds)
    bound = DistortionBound(ratio=ratio, distortion=best / cost.scale,
                            simple_ratio=simple / cost.scale / full if full > 0 else 0.0, optimal=optimal,
                            iterations=done + it, nodes=n_nodes, incidences=n_pairs, seconds=seconds,
                            stage_seconds=stages)
    flags, low, high = full_program.share
    return RelaxedPrices(bound, best_price, program.units_of_row, weights, flags, low, high, full_program.members,
                         full_program.starts, full_program.node_cost, value, step, program)


def _start_price(program: RelaxedProgram, table: EncodedTable, cost: CostModel, start: np.ndarray | None):
    """The ascent's first multipliers: each unit's cheapest node's cost (the
    simple bound), or, with the codes ``start`` of a known output, halfway
    from there to what each record pays in it (fewer steps to the same bound)."""
    price = program.relaxation.cheapest()
    if start is None:
        return price
    paid = sum(np.asarray(cost.int_costs[c], dtype=np.int64)[np.asarray(start)[:, c]]
               for c in program.columns).astype(np.float64)
    paid = np.bincount(program.units_of_row, weights=paid * table.counts, minlength=len(program.weights))
    return 0.5 * (price + np.maximum(paid / program.weights, price))


def problem_lower_bound(problem, *, upper: float | None = None, start: np.ndarray | None = None,
                        iterations: int = BOUND_ITERATIONS, max_incidences: int = 400_000_000,
                        max_vectors: int = 2_000_000, resume: RelaxedPrices | None = None) -> DistortionBound:
    """Lower bound of the distortion of every local recoding meeting all of
    ``problem``'s requirements and privacy models: the largest of the bounds
    of its requirements (each alone is a relaxation of the whole), each with
    the share constraint of the privacy models of a two-valued attribute
    that have one (t-closeness, l-diversity:
    :func:`~hieranon.bounds.share.share_constraint`; those of other
    attributes and other models are left out, which only lowers the bound).
    ``upper`` and ``start``: the distortion and the codes of a known output
    meeting them (:func:`distortion_lower_bound`). ``resume``: prices an
    earlier ascent reached (kaca+'s Lagrangian output); the bound of the
    requirement whose program they price goes on from them
    (:func:`relaxed_prices`), tighter for the same iterations."""
    names = list(problem.table.qi_names)
    models, share = tightest_share(getattr(problem, "privacy", ()) or ())
    best = None
    for req in problem.requirements:
        cols = [names.index(a) for a in req.attributes]
        program = None if resume is None else resume.program
        if program is not None and program.matches(problem.table, req.k, cols, share):
            b = relaxed_prices(problem.table, problem.cost, req.k, columns=cols, upper=upper, share=share,
                               iterations=iterations, resume=resume).bound
        else:
            b = distortion_lower_bound(problem.table, problem.cost, req.k, columns=cols, upper=upper,
                                       start=start, iterations=iterations, max_incidences=max_incidences,
                                       max_vectors=max_vectors, share=share)
        if best is None or b.ratio > best.ratio:
            best = b
    if best is not None and models:
        best.models = tuple(m.describe() for m in models)
    return best
