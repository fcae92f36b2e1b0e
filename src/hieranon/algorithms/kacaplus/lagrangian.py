"""An output built from the prices of the lower bound: a Lagrangian heuristic.

With the t-closeness of a two-valued sensitive attribute (equal or ordered
distance: the EMD is the difference of the shares, Li, Li &
Venkatasubramanian 2007) every class must hold a share of one value within
``t`` of the table's. KACA+ clusters for ``k`` first and the privacy repair
then merges, moves and swaps records until each class holds that share;
where the value is rare (or common) in a whole region of the table, the
repair imports records from far away and generalises every class it touches.

The lower bound of :mod:`hieranon.bounds` already solves, node by node, the
problem with the share in it: its multipliers (prices) say what each record
may pay for its class in a good output. A Lagrangian heuristic (Fisher 1981,
sec. 7; Beasley 1990 for set covering) turns them into an output:

1. the prices of the best relaxed value, found by subgradient ascent
   (:func:`hieranon.bounds.relaxed_prices`); its candidate nodes are walked
   ahead, in a thread of their own, while kaca+ repairs its clustering
   (:class:`ProgramAhead`);
2. greedily, the candidate node whose best selection of records still
   unplaced -- at least ``k`` of them, the share kept, least total reduced
   cost (node cost minus the records' prices) -- has the least reduced cost
   per record becomes a class of those records; selections are re-priced
   lazily as records are placed (:func:`_greedy`);
3. records left over (no node gathers ``k`` of them with the share) become
   classes of one record, merged KACA-style until each class has ``k``
   (:func:`~hieranon.algorithms.kacaplus.finishing.complete_classes`);
4. the privacy repair and the model-preserving local search
   (:mod:`hieranon.algorithms.privacy_merge`, :mod:`hieranon.algorithms.privacy_refine`)
   make every class meet every model and lower the distortion.

On UCI Adult (8 QIs, k = 10, salary-class 0.2-closeness) it gives a
distortion ratio of 0.198, against 0.235 from clustering then repairing
(the bound: 0.165). :class:`~hieranon.algorithms.kacaplus.KACAPlus` runs
both and keeps the lower distortion.
"""

from __future__ import annotations

import contextvars
import threading
import time

import numpy as np
from numba import prange

from ...bounds import RelaxedPrices, RelaxedProgram, balanced_choice, relaxed_prices, relaxed_program
from ...core.jit import kernel
from ...core.progress import logged_only
from ...core.progress import stage as progress_stage
from .. import kaca_core as K
from ..base import Problem, log
from ..privacy_merge import repair_and_improve
from .finishing import class_codes, complete_classes

__all__ = ["GREEDY_WORK", "KEY_NODES", "MAX_INCIDENCES", "PRICES_LABEL", "ProgramAhead", "greedy_classes",
           "lagrangian_output"]

#: (unit, node) pairs the greedy reads before returning to Python, and nodes
#: priced per call at its start (about 0.3 s each on UCI Adult).
GREEDY_WORK = 5_000_000
KEY_NODES = 100_000
#: The prices are not computed (:class:`~hieranon.bounds.BoundTooLarge`) past
#: this many (unit, candidate node) pairs: UCI Adult, 8 QIs, salary-class
#: 0.2-closeness, has 141 million at k = 10 (152 at k = 5, 164 at k = 2).
MAX_INCIDENCES = 150_000_000
#: What the progress display calls the prices' work.
PRICES_LABEL = "kaca+: prices of the share-constrained bound"


class ProgramAhead:
    """The walk of step 1's candidate nodes
    (:func:`hieranon.bounds.relaxed_program` with ``walk_only``), made in a
    thread of its own while the caller goes on (kaca+ repairs its clustering
    meanwhile, mostly in Python on one core): the walk then costs no wall
    time, and a walk that ends refused (the relaxation does not fit: small
    k) costs none either. The walk's kernel runs on one core, without the
    interpreter's lock and without a parallel kernel (a threading layer may
    not take two callers at once); the rest of the program is built by the caller
    (:meth:`~hieranon.bounds.RelaxedProgram.complete`). The thread runs in
    the caller's context (kernels interpreted or compiled alike) but reports
    its progress to the log only, and stops before its next subtree once
    :meth:`close` is called."""

    def __init__(self, problem: Problem, share: tuple[np.ndarray, float, float]):
        self._cancel = threading.Event()
        self._outcome: tuple = (None, None)
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=context.run, args=(self._build, problem, share), daemon=True,
                                        name="hieranon candidate walk")
        self._thread.start()

    def _build(self, problem: Problem, share) -> None:
        try:
            with logged_only():
                program = relaxed_program(problem.table, problem.cost, int(problem.k), share=share,
                                          max_incidences=MAX_INCIDENCES, label=PRICES_LABEL, threads=1,
                                          cancel=self._cancel, walk_only=True)
            self._outcome = (program, None)
        except Exception as e:  # raised where the program is asked for (result), as if built there
            self._outcome = (None, e)

    def result(self) -> RelaxedProgram:
        """The program, once walked (waiting in short spells, so that Ctrl-C
        stays prompt); raises what the walk raised
        (:class:`~hieranon.bounds.BoundTooLarge` when it does not fit,
        :class:`~hieranon.bounds.Cancelled` after :meth:`close`)."""
        if self._thread.is_alive():
            with progress_stage("kaca+: candidate nodes, walked beside the repair"):
                while self._thread.is_alive():
                    self._thread.join(0.1)
        program, error = self._outcome
        if error is not None:
            raise error
        return program

    def close(self) -> None:
        """Call the walk off (it stops before its next subtree)."""
        self._cancel.set()


@kernel(parallel=True)
def _initial_keys(lo, hi, price, members, starts, node_cost, rem, flags, k, low, high, key):
    """Per node ``lo <= g < hi``, the reduced cost per record of its best
    selection (inf when it has none)."""
    for g in prange(lo, hi):
        best, h, n_other, _, _ = balanced_choice(g, node_cost[g], price, members, starts, rem, flags, k, low,
                                                  high, np.inf)
        key[g] = best / (h + n_other) if h >= 0 else np.inf


@kernel
def _take(units, x, rem, out_unit, out_take, out_class, n_out, c):
    """Place the ``x`` first records of ``units`` (cheapest first) in class ``c``."""
    for u in units:
        if x <= 0:
            break
        take = min(x, rem[u])
        if take > 0:
            out_unit[n_out] = u
            out_take[n_out] = take
            out_class[n_out] = c
            n_out += 1
            rem[u] -= take
            x -= take
    return n_out


@kernel
def _greedy(price, members, starts, node_cost, rem, flags, k, low, high, hk, hc, hv, state, out_unit, out_take,
            out_class, budget):
    """Step 2, for at most ``budget`` (unit, node) pairs read: pop the node of
    least key; re-price its selection over the records still unplaced
    (``rem`` per unit); if it is still no dearer than the next node's key,
    its records become a class (entries ``out_*``), else it goes back with
    its new key. ``state``: heap size, entries, classes. Returns True
    when the heap is empty."""
    n_heap, n_out, n_cls = state[0], state[1], state[2]
    work = 0
    while n_heap > 0 and work < budget:
        g = hc[0]
        n_heap = K.heap_pop(hk, hc, hv, n_heap)
        work += starts[g + 1] - starts[g]
        best, h, n_other, uh, ul = balanced_choice(g, node_cost[g], price, members, starts, rem, flags, k, low,
                                                    high, np.inf)
        if h < 0:
            continue
        key = best / (h + n_other)
        if n_heap > 0 and key > hk[0]:
            n_heap = K.heap_push(hk, hc, hv, n_heap, key, g, 0)
            continue
        n_out = _take(uh, h, rem, out_unit, out_take, out_class, n_out, n_cls)
        n_out = _take(ul, n_other, rem, out_unit, out_take, out_class, n_out, n_cls)
        n_cls += 1
    state[0], state[1], state[2] = n_heap, n_out, n_cls
    return n_heap == 0


def _row_classes(prices, counts: np.ndarray, out_unit, out_take, out_class) -> np.ndarray:
    """Each row's class (-1: unplaced). The records of the units are laid
    end to end (unit by unit, rows in order); a unit's entries take its
    records in the order the classes were made, and a row of several records
    goes to the entry holding its first one."""
    rows = np.argsort(prices.unit_of_row, kind="stable")
    first = np.cumsum(counts[rows]) - counts[rows]
    unit_first = np.cumsum(prices.weights) - prices.weights
    order = np.lexsort((out_class, out_unit))
    unit, taken = out_unit[order], out_take[order]
    before = np.cumsum(taken) - taken  # records of earlier entries, all units
    new_unit = np.ones(len(unit), dtype=bool)
    new_unit[1:] = unit[1:] != unit[:-1]
    within = before - np.maximum.accumulate(np.where(new_unit, before, 0))
    entry_first = unit_first[unit] + within
    at = np.searchsorted(entry_first, first, side="right") - 1
    placed = at >= 0
    placed[placed] = first[placed] < entry_first[at[placed]] + taken[at[placed]]
    cls = np.full(len(rows), -1, dtype=np.int64)
    cls[rows[placed]] = out_class[order][at[placed]]
    return cls


def greedy_classes(prices, counts: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Step 2 on the prices of :func:`hieranon.bounds.relaxed_prices` (with
    the share constraint, if any, they were computed under): each row's class
    (-1: unplaced) and the number of classes. Every class holds ``>= k``
    records and the share (rows of several records: their first record's
    class, see :func:`_row_classes`)."""
    rem = prices.weights.copy()
    args = (prices.price, prices.members, prices.starts, prices.node_cost, rem, prices.flags, int(k), prices.low,
            prices.high)
    n_nodes = len(prices.node_cost)
    key = np.empty(n_nodes)
    total = int(prices.weights.sum())
    with progress_stage(f"kaca+: classes from the prices, k = {k}", total=total,
                        detail=f"{n_nodes} nodes") as stage:
        for lo in range(0, n_nodes, KEY_NODES):
            _initial_keys(lo, min(lo + KEY_NODES, n_nodes), *args, key)
            K.chunk_done("lagrangian keys")
        open_nodes = np.flatnonzero(np.isfinite(key))
        order = open_nodes[np.argsort(key[open_nodes], kind="stable")]  # a sorted array is a heap
        hk, hc = key[order].copy(), order.astype(np.int64)
        hv = np.zeros(len(order), dtype=np.int64)
        size = len(prices.weights) + 2 * (total // k + 1)
        out_unit, out_take, out_class = (np.zeros(size, dtype=np.int64) for _ in range(3))
        state = np.array([len(order), 0, 0], dtype=np.int64)
        while not _greedy(*args, hk, hc, hv, state, out_unit, out_take, out_class, GREEDY_WORK):
            K.chunk_done("lagrangian greedy")
            stage.update(total - int(rem.sum()))
    n_out, n_cls = int(state[1]), int(state[2])
    return _row_classes(prices, counts, out_unit[:n_out], out_take[:n_out], out_class[:n_out]), n_cls


def lagrangian_output(problem: Problem, share: tuple[np.ndarray, float, float], *, iterations: int,
                      upper: float | None = None, start: np.ndarray | None = None,
                      ahead: ProgramAhead | None = None) -> tuple[np.ndarray, np.ndarray, dict, RelaxedPrices]:
    """Steps 1-4 (module docstring) on ``problem`` (one k over every QI) with
    the share constraint ``share`` (:func:`hieranon.bounds.share_constraint`
    of one of its models). ``upper``, ``start``: the distortion and codes of
    a known output meeting the models (the ascent's target and start);
    ``ahead``: step 1's candidate nodes for the same problem and share, being walked.
    Returns ``(codes, suppressed, info, prices)``, every model met, and the
    prices of step 1 (a lower bound may go on from them); raises
    :class:`hieranon.bounds.BoundTooLarge` when the relaxation does not fit."""
    t0 = time.perf_counter()
    table, k = problem.table, int(problem.k)
    program = None if ahead is None else ahead.result()
    prices = relaxed_prices(table, problem.cost, k, share=share, upper=upper, start=start, iterations=iterations,
                            max_incidences=MAX_INCIDENCES, label=PRICES_LABEL, program=program)
    t_prices = time.perf_counter() - t0
    cls, n_cls = greedy_classes(prices, table.counts, k)
    left = np.flatnonzero(cls < 0)
    cls[left] = n_cls + np.arange(len(left))
    R = np.ascontiguousarray(table.codes, dtype=np.int32)
    hd = K.hierarchy_data(table.hierarchies, problem.cost)
    codes = class_codes(R, cls, n_cls + len(left), hd)
    codes = complete_classes(codes, table.counts, table.hierarchies, problem.cost, k, hd,
                             K.choose_trie_order(R, hd[2]))
    codes, sup, info = repair_and_improve(problem, codes, np.zeros(table.n_rows, dtype=bool))
    info.update(lagrangian_bound=prices.bound.ratio, lagrangian_classes=n_cls,
                lagrangian_unplaced=int(table.counts[left].sum()), lagrangian_time_prices=t_prices,
                lagrangian_time=time.perf_counter() - t0)
    log.info("kaca+ Lagrangian output: %d classes from the prices, %d records left to the finishing, %.1f s",
             n_cls, info["lagrangian_unplaced"], info["lagrangian_time"])
    return codes, sup, info, prices
