"""Enforce privacy models on a local-recoding output by merging classes.

Given an output meeting one k over all QIs, :func:`enforce` repairs every
equivalence class violating a privacy model of ``problem.privacy``
(l-diversity, t-closeness; :mod:`hieranon.privacy`). The suppressed records
(every cell the root) form one more class, checked like every other.

While some class violates a model, the violating class ``C`` with the fewest
records (ties: lowest id) is repaired by the cheapest of four kinds of step,
costs being the distortion added under ``problem.cost`` (exact integers,
additive along hierarchy paths):

* **merge** ``C`` with another class ``C'``: the merged class takes, per
  attribute, the lowest common ancestor of both tuples (the closest common
  generalisation, Li et al. 2006, Def. 8), costing
  ``|C| (g(lca) - g(t_C)) + |C'| (g(lca) - g(t_C'))``; a merge with another
  violating class that repairs both counts half its cost;
* **move** one record ``r`` into ``C`` from a nearby class ``D`` (among the
  :data:`NEAR` cheapest merge partners) that keeps ``>= k`` records and every
  model without it (a "stub" of ``D``, as Li et al. 2008, Def. 14, take
  records for k); ``C``'s tuple becomes ``lca(t_C, r's original values)``,
  costing ``|C| (g(new) - g(t_C)) + |r| (g(new) - g(t_D))`` -- negative when
  ``r``'s values already lie under ``t_C``;
* **swap** a record ``r`` of a nearby class ``D`` for a record ``o`` of
  ``C`` (both classes keep their sizes, so ``D`` need not have a record to
  spare): ``C`` takes ``lca(t_C, r)``, ``D`` takes ``lca(t_D, o)``; ``D``
  must keep every model;
* **dissolve** ``C`` (at most :data:`MAX_DISSOLVE` rows): every record of
  ``C`` joins one of the classes nearest to it (per record), each receiving
  class keeping every model with all it receives; ``C`` disappears.

A move or swap must keep every model ``C`` satisfies and improve (never
worsen) those it violates. Preference: the cheapest step that makes ``C``
satisfy every model (a move, swap or dissolution when it costs no more than
the cheapest such merge); else the cheapest improving move or swap; else the
cheapest merge, ``C`` being repaired again next. For t-closeness, a move or swap
that only brings ``C`` closer to the table's distribution is priced at its
cost times the steps like it still needed (``C``'s EMD above ``t`` over the
step's reduction of it, rounded up) and is taken when that estimate is below
every one-step repair: a class far from the table's distribution then trades
records one at a time instead of being merged whole (on Adult, sensitive
``occupation``, k = 10, t = 0.2: distortion ratio 0.427 -> 0.394). A step whose tuple equals another
class's tuple joins that class. At the end, classes that gave records are
lowered to the lowest common ancestor of their members' original values
(:func:`tighten`), never above their tuple; suppressed records stay ``*``.

Why it ends and keeps what holds: every class keeps ``>= k`` records (merges
and moves only add to ``C``; donors and swap partners are checked) and a
satisfied class stays satisfied (donors are checked; a merge unites classes,
and the union of two classes satisfying a model satisfies it --
Machanavajjhala et al. 2007, Sec. 5; Li et al. 2007, Sec. 4.1). Each step
removes a class, or removes a violation, or strictly improves a violating
class's measure, so the loop ends (past ``4 (rows + classes)`` steps, as a
guard, only merges are made, each removing a class); the whole table
satisfies every model (:meth:`~hieranon.privacy.BoundModel.check_feasible`,
checked before any work), so it ends with no violation.

Several requirements over different attribute sets are not supported (a
merge can empty the group a class leaves on a subset of the attributes).

:func:`repair_solution` then lowers the distortion again with the
model-preserving local search of :mod:`hieranon.algorithms.privacy_refine`
(record moves and swaps between classes, each keeping ``k`` and every model).
"""

from __future__ import annotations

import heapq
import time

import numpy as np
from numba import get_num_threads, prange

from ..core.jit import kernel
from ..core.table import group
from ..core.tree import Hierarchy
from ..privacy import classes_ok
from . import kaca_core as K
from .base import Problem, Solution, log
from .privacy_refine import improve

#: Histogram cells (candidates x sensitive values) one repair step may judge,
#: and the fewest candidates it judges whatever the number of values.
MAX_CANDIDATE_CELLS = 4_000_000
MIN_CANDIDATES = 2_000
#: A swap sample of a large class leaves room for this many partners per row.
MIN_PARTNERS = 16
#: Merge partners of a violating class checked against the models first
#: (the cheapest); the others only when none of them repairs it.
MERGE_BATCH = 64
#: A repair step prices its merge partners in several threads from this many on.
PARALLEL_PARTNERS = 1_024

__all__ = ["enforce", "enforce_checked", "enforce_info", "repair_and_improve", "repair_solution", "tighten", "NEAR",
           "MAX_DISSOLVE"]

#: Moves draw on this many nearest classes (swaps on a third, dissolutions on twice as many).
NEAR = 48
#: Classes of at most this many rows may be dissolved into their neighbours.
MAX_DISSOLVE = 64


@kernel
def _insert(values, buf, m, i):
    """Put position ``i`` into ``buf[:m]`` (positions ascending by ``values``,
    ties by position; full at ``len(buf)``: the last one drops out, the
    caller having checked ``values[i]`` goes in); returns the new count."""
    v = values[i]
    if m == len(buf):
        m -= 1
    t = m - 1
    while t >= 0 and values[buf[t]] > v:
        buf[t + 1] = buf[t]
        t -= 1
    buf[t + 1] = i
    return m + 1


@kernel(inline="always")
def _offer(values, buf, n, i):
    """Offer position ``i`` to the selection ``buf[:n]`` (:func:`_insert`):
    it enters while the selection is not full, or below its last. Inlined:
    a call taking arrays costs more than the test."""
    if len(buf) and (n < len(buf) or values[i] < values[buf[n - 1]]):
        return _insert(values, buf, n, i)
    return n


@kernel(parallel=True)
def _merge_partners(c, cand, T, gT, size, ok, k, hd, n_chunks, gL, inc, per_fix, dkey, head, move, swap, dis):
    """Class ``c``'s merges with each of ``cand`` priced, and the selections
    of a repair step among them, in numba's threads. Per partner ``i``:
    ``gL[i]`` the cost of the closest common generalisation of both tuples,
    ``inc[i]`` the distortion the merge adds (``|c| (gL - g(t_c)) + |e| (gL
    - g(t_e))``), ``per_fix[i]`` its price if it repairs (``inc`` halved for
    a violating partner), ``dkey[i]`` the distance per record (``2 gL -
    g(t_c) - g(t_e)``). The selections are each the head of a stable sort
    (ties by position), the order ``np.argsort(key[mask],
    kind="stable")[:n]`` gives: ``head`` of the merges by ``per_fix``;
    ``move`` of the partners that may give a record (they meet every model
    and hold more than ``k``) and ``swap`` of those meeting every model, both
    by ``inc``; ``dis`` of all by ``dkey``. Each of ``n_chunks`` runs of
    ``cand`` keeps its own selections; they are then offered run after run,
    each in its order, which gives what one pass over every position gives
    on any number of threads. Returns the four counts."""
    lca_flat, lca_off, nn, g_flat, nd_off = hd[0], hd[1], hd[2], hd[8], hd[7]
    n = len(cand)
    width = max(len(head), len(move), len(swap), len(dis), 1)
    local = np.empty((n_chunks, 4, width), dtype=np.int64)
    found = np.zeros((n_chunks, 4), dtype=np.int64)
    for chunk in prange(n_chunks):
        own_head, own_move = local[chunk, 0, :len(head)], local[chunk, 1, :len(move)]
        own_swap, own_dis = local[chunk, 2, :len(swap)], local[chunk, 3, :len(dis)]
        n_head = n_move = n_swap = n_dis = 0
        for i in range(n * chunk // n_chunks, n * (chunk + 1) // n_chunks):
            e = cand[i]
            g = K.merged_cost(T, c, e, hd, lca_flat, lca_off, nn, g_flat, nd_off)
            gL[i] = g
            inc[i] = size[c] * (g - gT[c]) + size[e] * (g - gT[e])
            good = ok[e]
            per_fix[i] = inc[i] / (1.0 if good else 2.0)
            dkey[i] = 2 * g - gT[c] - gT[e]
            n_head = _offer(per_fix, own_head, n_head, i)
            if good:
                n_swap = _offer(inc, own_swap, n_swap, i)
                if size[e] > k:
                    n_move = _offer(inc, own_move, n_move, i)
            n_dis = _offer(dkey, own_dis, n_dis, i)
        found[chunk, 0], found[chunk, 1], found[chunk, 2], found[chunk, 3] = n_head, n_move, n_swap, n_dis
    n_head = n_move = n_swap = n_dis = 0
    for chunk in range(n_chunks):
        for t in range(found[chunk, 0]):
            n_head = _offer(per_fix, head, n_head, local[chunk, 0, t])
        for t in range(found[chunk, 1]):
            n_move = _offer(inc, move, n_move, local[chunk, 1, t])
        for t in range(found[chunk, 2]):
            n_swap = _offer(inc, swap, n_swap, local[chunk, 2, t])
        for t in range(found[chunk, 3]):
            n_dis = _offer(dkey, dis, n_dis, local[chunk, 3, t])
    return n_head, n_move, n_swap, n_dis


@kernel
def _lca_cost_matrix(A, B, hd, gL):
    """``gL[i, t]``: the cost of the closest common generalisation of
    ``A[i]`` and ``B[t]``."""
    lca_flat, lca_off, nn, g_flat, nd_off = hd[0], hd[1], hd[2], hd[8], hd[7]
    for i in range(A.shape[0]):
        for t in range(B.shape[0]):
            g = 0
            for j in range(A.shape[1]):
                a, b = A[i, j], B[t, j]
                if a == b:  # the dense table read here: a call per look-up costs more than the look-up
                    x = a
                elif lca_off[j] >= 0:
                    x = lca_flat[lca_off[j] + a * nn[j] + b]
                else:
                    x = K.lca_code(j, a, b, hd)
                g += g_flat[nd_off[j] + x]
            gL[i, t] = g


@kernel
def _lca_each(A, B, hd, L, gL):
    """``L[i]``: per attribute, the lowest common ancestor of ``A[i]`` (of
    ``A[0]`` when ``A`` has one row) and ``B[i]``; ``gL[i]``: its cost."""
    lca_flat, lca_off, nn, g_flat, nd_off = hd[0], hd[1], hd[2], hd[8], hd[7]
    for i in range(B.shape[0]):
        a = A[min(i, A.shape[0] - 1)]
        g = 0
        for j in range(B.shape[1]):
            u, v = a[j], B[i, j]
            if u == v:
                x = u
            elif lca_off[j] >= 0:
                x = lca_flat[lca_off[j] + u * nn[j] + v]
            else:
                x = K.lca_code(j, u, v, hd)
            L[i, j] = x
            g += g_flat[nd_off[j] + x]
        gL[i] = g


def _judge(b, h_c: np.ndarray, hc: np.ndarray, hd: np.ndarray, valid: np.ndarray, fixes: np.ndarray,
           improves: np.ndarray) -> np.ndarray:
    """Judge candidate changes of class ``c`` for model ``b``, in place:
    ``h_c`` its histogram now, ``hc`` / ``hd`` the histograms of ``c`` and of
    the donor class after each candidate. A donor must keep satisfying the
    model (``valid``); ``fixes`` keeps the candidates after which ``c``
    satisfies it; a class that satisfies it must keep doing so, one that
    does not may never get worse and ``improves`` marks those that help.

    Returns how many steps like each candidate ``c`` would need to meet
    ``b``: 1 when it meets ``b`` after the candidate; for a violating class
    and t-closeness, the EMD still above ``t`` over the candidate's
    reduction of it, rounded up; else (no reduction, or another model)
    infinity. Each histogram is measured once (an EMD over many candidates
    and sensitive values is most of a step's time)."""
    valid &= b.ok_hist(hd)
    old, ok_c = b.measure_and_ok(h_c)
    if ok_c[0]:
        ok_new = b.ok_hist(hc)
        fixes &= ok_new
        valid &= ok_new
        return np.ones(len(hc))
    new, ok_new = b.measure_and_ok(hc)
    fixes &= ok_new
    valid &= ok_new | ~b.better(old, new)  # never worse
    improves |= ok_new | b.better(new, old)
    t = getattr(b.model, "t", None)
    if t is None:
        return np.where(ok_new, 1.0, np.inf)
    gain = float(old[0]) - new
    n = np.full(len(hc), np.inf)
    pos = gain > 0
    n[pos] = np.ceil((float(old[0]) - t) / gain[pos])
    return np.where(ok_new, 1.0, n)


class _State:
    """Alive classes (tuples, sizes, per-model histograms, cost per record)
    and the class of every row."""

    def __init__(self, problem: Problem, codes: np.ndarray):
        t = problem.table
        ec = group(codes, t.counts)
        n = ec.n_classes
        self.k = problem.k
        self.orig = t.codes
        self.cnt = t.counts
        self.rc = ec.row_class.astype(np.int64).copy()
        self.rows = np.split(np.argsort(self.rc, kind="stable"), np.cumsum(np.bincount(self.rc, minlength=n))[:-1])
        self.T = np.ascontiguousarray(ec.keys, dtype=np.int32).copy()
        self.size = ec.sizes.astype(np.int64).copy()
        self.models = list(problem.privacy)
        self.hist = [b.histogram(self.rc, n) for b in self.models]
        self.g = [np.asarray(c, dtype=np.int64) for c in problem.cost.int_costs]
        self.hd = K.hierarchy_data(t.hierarchies, problem.cost)
        self.gT = self.tuple_cost(self.T)
        self.alive = np.ones(n, dtype=bool)
        self.ok = self.ok_all(self.hist)
        self.by_tuple = {self.T[c].tobytes(): c for c in range(n)}
        # (size, id) of the violating classes, smallest first; entries gone stale are dropped as they surface
        self.queue = [(int(self.size[c]), int(c)) for c in np.flatnonzero(~self.ok)]
        heapq.heapify(self.queue)
        self.merges = self.moves = self.swaps = self.dissolved = 0
        self.donors: set[int] = set()
        self.added = 0

    def next_violating(self) -> int:
        """The alive class violating a model with the fewest records, the
        lowest id among ties (-1: none) -- the class the repair takes next.
        Every step ends by judging again each class whose records it changed
        (:meth:`_rejudge`), which queues it when it violates, so the first
        entry that still describes its class is the answer."""
        q = self.queue
        while q:
            size, c = q[0]
            if self.alive[c] and not self.ok[c] and self.size[c] == size:
                return c
            heapq.heappop(q)
        return -1

    def _rejudge(self, c: int) -> None:
        """Class ``c``'s records changed: its verdict from its histograms, and
        a place in the queue (its size now) when it violates a model."""
        self.ok[c] = self.ok_all([h[c:c + 1] for h in self.hist])[0]
        if not self.ok[c]:
            heapq.heappush(self.queue, (int(self.size[c]), int(c)))

    def tuple_cost(self, T: np.ndarray) -> np.ndarray:
        out = np.zeros(len(T), dtype=np.int64)
        for j, g in enumerate(self.g):
            out += g[T[:, j]]
        return out

    def lca_rows(self, tup: np.ndarray, others: np.ndarray) -> np.ndarray:
        """The closest common generalisation of ``tup`` (one tuple, or one per
        row) with each row of ``others``."""
        return self.lca_costs(tup, others)[0]

    def lca_costs(self, tup: np.ndarray, others: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`lca_rows` and the cost of each tuple (:meth:`tuple_cost`), in one kernel."""
        tup = np.ascontiguousarray(np.atleast_2d(tup), dtype=np.int32)
        others = np.ascontiguousarray(others, dtype=np.int32)
        L = np.empty(others.shape, dtype=np.int32)
        gL = np.empty(len(others), dtype=np.int64)
        _lca_each(tup, others, self.hd, L, gL)
        return L, gL

    def ok_all(self, hists: list[np.ndarray]) -> np.ndarray:
        ok = np.ones(len(hists[0]), dtype=bool)
        for b, h in zip(self.models, hists):
            ok &= b.ok_hist(h)
        return ok

    # ------------------------------------------------------------ merges
    def merge_fixes(self, c: int, cand: np.ndarray) -> np.ndarray:
        """Does the merge of ``c`` with each of ``cand`` satisfy every model?"""
        return self.ok_all([h[c] + h[cand] for h in self.hist])

    def partners(self, c: int, n_near: int):
        """Every other alive class (``cand``) and the selections of a repair
        step among them (positions into ``cand``, each the head of a stable
        sort), in one pass in numba's threads (:func:`_merge_partners`):
        ``(cand, gL, inc, per_fix, head, move, swap, dis)`` -- the costs of
        the merged tuples (the merged tuple of ``cand[i]``:
        :meth:`merged_tuple`) and of the merges, the price of each merge if
        it repairs (``inc`` halved for a violating partner), the
        :data:`MERGE_BATCH` cheapest by it, the ``n_near`` cheapest partners
        that may give a record (moves), the ``n_near // 3`` (at least 1)
        cheapest meeting every model (swaps) and the ``2 n_near`` nearest
        per record (dissolution targets); the last three empty when
        ``n_near`` is 0."""
        cand = np.flatnonzero(self.alive)
        cand = cand[cand != c]
        gL, inc, dkey = (np.empty(len(cand), dtype=np.int64) for _ in range(3))
        per_fix = np.empty(len(cand))
        sizes = (MERGE_BATCH, n_near, max(1, n_near // 3) if n_near else 0, 2 * n_near)
        head, move, swap, dis = (np.empty(min(n, len(cand)), dtype=np.int64) for n in sizes)
        n_chunks = get_num_threads() if len(cand) >= PARALLEL_PARTNERS else 1
        counts = _merge_partners(c, cand, self.T, self.gT, self.size, self.ok, self.k, self.hd, n_chunks, gL, inc,
                                 per_fix, dkey, head, move, swap, dis)
        return (cand, gL, inc, per_fix, *(x[:n] for x, n in zip((head, move, swap, dis), counts)))

    def best_merge(self, c: int, cand: np.ndarray, per_fix: np.ndarray, head: np.ndarray) -> tuple[int, float]:
        """The merge that repairs ``c`` at the least cost per violation it
        repairs (a merge with another violating class that fixes both
        repairs two: half its cost), ties by position: ``(index into cand,
        cost per violation)``, or ``(-1, inf)`` when no merge repairs ``c``;
        ``per_fix`` and ``head`` from :meth:`partners` (each merge's price
        if it repairs; the cheapest). Only those cheapest are checked
        against the models, the others only when none of them repairs ``c``:
        whether a candidate repairs decides its price only by ruling it out."""
        fixes = self.merge_fixes(c, cand[head])
        if fixes.any():
            i = int(head[np.argmax(fixes)])
            return i, float(per_fix[i])
        if len(head) == len(cand):
            return -1, np.inf
        fixes = self.merge_fixes(c, cand)
        if not fixes.any():
            return -1, np.inf
        i = int(np.flatnonzero(fixes)[np.argmin(per_fix[fixes])])
        return i, float(per_fix[i])

    def merged_tuple(self, c: int, e: int) -> np.ndarray:
        """The closest common generalisation of the tuples of ``c`` and ``e``."""
        return self.lca_rows(self.T[c], self.T[e][None, :])[0]

    def merge(self, c: int, d: int, tup: np.ndarray, cost: int) -> None:
        del self.by_tuple[self.T[d].tobytes()]
        self._absorb(c, d)
        self.merges += 1
        self.added += cost
        self._retuple(c, tup)

    def _absorb(self, c: int, d: int) -> None:
        self.size[c] += self.size[d]
        for h in self.hist:
            h[c] += h[d]
        self.alive[d] = False
        self.ok[d] = True
        self.rc[self.rows[d]] = c
        self.rows[c] = np.sort(np.concatenate([self.rows[c], self.rows[d]]))
        self.rows[d] = self.rows[d][:0]

    def _retuple(self, c: int, tup: np.ndarray) -> None:
        """Class ``c`` takes tuple ``tup``, joining the class that has it."""
        old = self.T[c].tobytes()
        key = tup.tobytes()
        if key != old:
            if self.by_tuple.get(old) == c:
                del self.by_tuple[old]
            self.T[c] = tup
            self.gT[c] = K.tuple_cost(np.ascontiguousarray(tup), self.hd)
            e = self.by_tuple.get(key)
            if e is not None and e != c:  # identical tuples are one class
                self._absorb(e, c)
                c = e
            self.by_tuple[key] = c
        self._rejudge(c)

    def members(self, classes: np.ndarray) -> np.ndarray:
        """Rows of the given classes, in row order."""
        if len(classes) == 1:
            return self.rows[classes[0]].copy()
        return np.sort(np.concatenate([self.rows[x] for x in classes]))

    def _relabel(self, r: int, c: int) -> None:
        """Row ``r`` leaves its class for class ``c`` (``rc`` and the row lists)."""
        d = self.rc[r]
        self.rows[d] = self.rows[d][self.rows[d] != r]
        self.rows[c] = np.insert(self.rows[c], np.searchsorted(self.rows[c], r), r)
        self.rc[r] = c

    def candidate_budget(self) -> int:
        """How many moves or swaps one step judges at most: each costs a
        histogram row per model, so the budget shrinks as the sensitive
        values grow many (bounded memory and time per step)."""
        return max(MIN_CANDIDATES, MAX_CANDIDATE_CELLS // max(h.shape[1] for h in self.hist))

    def near_rows(self, near: np.ndarray, budget: int) -> np.ndarray:
        """Rows of the ``near`` classes (nearest first), at most ``budget``:
        those of the nearest classes that fit, in row order."""
        rows = self.members(near)
        if len(rows) <= budget:
            return rows
        per_class = np.bincount(self.rc[rows], minlength=len(self.size))[near]
        take = max(1, int(np.searchsorted(np.cumsum(per_class), budget, side="right")))
        return self.members(near[:take])[:budget]

    # ------------------------------------------------------------- moves
    def move_options(self, c: int, near: np.ndarray):
        """Rows of the ``near`` classes that may move into ``c``: row ids,
        new tuples of ``c``, costs, fixes-``c`` flags (only valid, improving
        moves are returned)."""
        if len(near) == 0:
            return None
        rows = self.near_rows(near, self.candidate_budget())
        d = self.rc[rows]
        w = self.cnt[rows]
        valid = self.size[d] - w >= self.k
        improves = np.zeros(len(rows), dtype=bool)
        fixes = valid.copy()
        steps = np.ones(len(rows))
        for b, h in zip(self.models, self.hist):
            v = b.values[rows]
            hc = np.repeat(h[c][None, :], len(rows), axis=0)
            hc[np.arange(len(rows)), v] += w
            hd = h[d].copy()
            hd[np.arange(len(rows)), v] -= w
            steps = np.maximum(steps, _judge(b, h[c:c + 1], hc, hd, valid, fixes, improves))
        keep = np.flatnonzero(valid & improves)
        if len(keep) == 0:
            return None
        rows, d, w, fixes, steps = rows[keep], d[keep], w[keep], fixes[keep], steps[keep]
        N, gN = self.lca_costs(self.T[c], self.orig[rows])
        cost = self.size[c] * (gN - self.gT[c]) + w * (gN - self.gT[d])
        return rows, N, cost, fixes, steps

    def swap_options(self, c: int, near: np.ndarray):
        """Pairs (row ``r`` of a ``near`` class ``D``, row ``o`` of ``c``) that
        may trade places: ``C`` takes ``lca(t_C, r)``, ``D`` takes
        ``lca(t_D, o)``; both keep ``>= k`` records, ``D`` every model, and
        ``C`` improves as for a move. Returns ``(r, o, new t_C, new t_D,
        cost, fixes)`` of the valid, improving pairs, or None."""
        if len(near) == 0:
            return None
        budget = self.candidate_budget()
        outs = self.rows[c]
        if len(outs) > budget // MIN_PARTNERS:  # a large class: an even sample of its rows
            outs = outs[np.linspace(0, len(outs) - 1, budget // MIN_PARTNERS).astype(np.int64)]
        rows = self.near_rows(near, max(1, budget // len(outs)))
        r = np.repeat(rows, len(outs))
        o = np.tile(outs, len(rows))
        d = self.rc[r]
        wr, wo = self.cnt[r], self.cnt[o]
        valid = (self.size[c] - wo + wr >= self.k) & (self.size[d] - wr + wo >= self.k)
        improves = np.zeros(len(r), dtype=bool)
        fixes = valid.copy()
        steps = np.ones(len(r))
        idx = np.arange(len(r))
        for b, h in zip(self.models, self.hist):
            vr, vo = b.values[r], b.values[o]
            valid &= vr != vo  # a trade of equal values changes nothing for this model
            hc = np.repeat(h[c][None, :], len(r), axis=0)
            hc[idx, vr] += wr  # one cell per row: plain fancy indexing adds exactly
            hc[idx, vo] -= wo
            hd = h[d].copy()
            hd[idx, vr] -= wr
            hd[idx, vo] += wo
            steps = np.maximum(steps, _judge(b, h[c:c + 1], hc, hd, valid, fixes, improves))
        keep = np.flatnonzero(valid & improves)
        if len(keep) == 0:
            return None
        r, o, d, wr, wo, fixes, steps = r[keep], o[keep], d[keep], wr[keep], wo[keep], fixes[keep], steps[keep]
        Nc, gc = self.lca_costs(self.T[c], self.orig[r])
        Nd, gd = self.lca_costs(self.T[d], self.orig[o])
        cost = ((self.size[c] - wo) * (gc - self.gT[c]) + wr * (gc - self.gT[d])
                + (self.size[d] - wr) * (gd - self.gT[d]) + wo * (gd - self.gT[c]))
        return r, o, Nc, Nd, cost, fixes, steps

    def swap(self, c: int, r: int, o: int, tc: np.ndarray, td: np.ndarray, cost: int) -> None:
        d = int(self.rc[r])
        wr, wo = int(self.cnt[r]), int(self.cnt[o])
        self._relabel(r, c)
        self._relabel(o, d)
        self.size[c] += wr - wo
        self.size[d] += wo - wr
        for b, h in zip(self.models, self.hist):
            h[c, b.values[r]] += wr
            h[c, b.values[o]] -= wo
            h[d, b.values[r]] -= wr
            h[d, b.values[o]] += wo
        self.swaps += 1
        self.donors.add(d)
        self.added += cost
        self._retuple(d, td)
        if self.alive[c]:
            self._retuple(c, tc)
        else:  # D took C's tuple and absorbed it
            self._retuple(int(self.rc[o]), tc)

    def move(self, c: int, r: int, tup: np.ndarray, cost: int) -> None:
        d = int(self.rc[r])
        w = int(self.cnt[r])
        self._relabel(r, c)
        self.size[c] += w
        self.size[d] -= w
        for b, h in zip(self.models, self.hist):
            h[c, b.values[r]] += w
            h[d, b.values[r]] -= w
        self.moves += 1
        self.donors.add(d)
        self.added += cost
        self._rejudge(d)
        self._retuple(c, tup)


    def dissolve_plan(self, c: int, targets: np.ndarray):
        """Spread every record of ``c`` over the classes ``targets``, each
        target keeping every model with all it receives: ``(plan, cost)`` with
        ``plan`` a list of (row, target class), or None. The cost estimate
        takes each target's current tuple."""
        targets = targets[self.ok[targets]]
        rows = self.members(np.array([c]))
        if len(targets) == 0 or len(rows) > MAX_DISSOLVE:
            return None
        gN = np.empty((len(rows), len(targets)), dtype=np.int64)  # g(lca(record, target tuple))
        _lca_cost_matrix(np.ascontiguousarray(self.orig[rows], dtype=np.int32),
                         np.ascontiguousarray(self.T[targets]), self.hd, gN)
        cost = self.size[targets][None, :] * (gN - self.gT[targets][None, :]) + \
            self.cnt[rows][:, None] * (gN - self.gT[c])
        hs = [h[targets].copy() for h in self.hist]
        plan, total = [], 0
        for i in np.argsort(cost.min(axis=1), kind="stable"):
            r, w = int(rows[i]), int(self.cnt[rows[i]])
            valid = np.ones(len(targets), dtype=bool)
            for b, h in zip(self.models, hs):
                hh = h.copy()
                hh[:, b.values[r]] += w
                valid &= b.ok_hist(hh)
            if not valid.any():
                return None
            j = int(np.flatnonzero(valid)[np.argmin(cost[i][valid])])
            for b, h in zip(self.models, hs):
                h[j, b.values[r]] += w
            plan.append((r, int(targets[j])))
            total += int(cost[i, j])
        return plan, total

    def dissolve(self, c: int, plan: list[tuple[int, int]]) -> None:
        """Carry out a :meth:`dissolve_plan`: ``c`` ends empty and is removed.
        ``c`` gives up its tuple first: a target generalised to that very
        tuple must not join ``c`` (it would leave rows in a removed class)."""
        if self.by_tuple.get(self.T[c].tobytes()) == c:
            del self.by_tuple[self.T[c].tobytes()]
        moved_to: dict[int, int] = {}
        for r, e in plan:
            while e in moved_to:  # the target joined another class on the way
                e = moved_to[e]
            tups, gs = self.lca_costs(self.orig[r], self.T[e][None, :])
            tup, g = tups[0], int(gs[0])
            cost = int(self.size[e] * (g - self.gT[e]) + self.cnt[r] * (g - self.gT[c]))
            self.move(e, r, tup, cost)
            if not self.alive[e]:
                moved_to[e] = int(self.rc[r])
        self.moves -= len(plan)
        self.dissolved += 1
        self.donors.discard(c)
        self.alive[c] = False
        self.ok[c] = True


def _best(s: _State, c: int, n_near: int = NEAR) -> tuple[float, tuple]:
    """The repair step of the violating class ``c`` (see the module
    docstring): ``(cost per violation it repairs, action)``."""
    cand, _, inc, per_fix, head, move_near, swap_near, dissolve_near = s.partners(c, n_near)
    best_merge, merge_price = s.best_merge(c, cand, per_fix, head)
    options = []  # (cost, fixes, action of index i)
    if n_near:
        mv = s.move_options(c, cand[move_near])
        if mv is not None:
            rows, N, cost, mfix, msteps = mv
            options.append((cost, mfix, msteps, lambda i, rows=rows, N=N, cost=cost:
                            ("move", c, int(rows[i]), N[i].copy(), int(cost[i]))))
        sw = s.swap_options(c, cand[swap_near])
        if sw is not None:
            r, o, Nc, Nd, cost, sfix, ssteps = sw
            options.append((cost, sfix, ssteps, lambda i, r=r, o=o, Nc=Nc, Nd=Nd, cost=cost:
                            ("swap", c, (int(r[i]), int(o[i])), (Nc[i].copy(), Nd[i].copy()), int(cost[i]))))
    fixing = [(float(cost[f][np.argmin(cost[f])]), act, int(np.flatnonzero(f)[np.argmin(cost[f])]))
              for cost, f, _, act in options if f.any()]
    if n_near:
        # targets: the classes whose tuples are nearest per record (not per class)
        plan = s.dissolve_plan(c, cand[dissolve_near])
        if plan is not None:
            fixing.append((float(plan[1]), lambda i, plan=plan: ("dissolve", c, plan[0], None, plan[1]), 0))
    partial = _partial(options)
    if partial is not None:  # the cost of an improving step times the steps like it still needed
        one = [x[0] for x in fixing] + ([merge_price] if best_merge >= 0 else [])
        if not one or partial[0] < min(one):
            return partial[0], partial[1](partial[2])
    if fixing:
        cost, act, i = min(fixing, key=lambda x: x[0])
        if best_merge < 0 or cost <= merge_price:
            return cost, act(i)
    elif best_merge < 0 and options:
        cost, act, i = min(((float(cost.min()), act, int(np.argmin(cost))) for cost, _, _, act in options),
                           key=lambda x: x[0])
        return cost, act(i)
    if best_merge < 0:  # no merge repairs c: the cheapest, c is repaired again next
        best_merge = int(np.argmin(inc))
        merge_price = float(inc[best_merge])
    i = best_merge
    return merge_price, ("merge", c, int(cand[i]), s.merged_tuple(c, int(cand[i])), int(inc[i]))


def _partial(options: list) -> tuple | None:
    """The improving, not repairing, move or swap of least estimated total
    cost: its cost (at least 0) times the steps :func:`_judge` estimates; ``(estimate, action,
    index)``, or None when no such step has a finite estimate."""
    best = None
    for cost, fixes, steps, act in options:
        ok = ~fixes & np.isfinite(steps)
        if not ok.any():
            continue
        est = np.where(ok, np.maximum(cost, 0) * np.where(ok, steps, 0), np.inf)
        i = int(np.argmin(est))
        if best is None or est[i] < best[0]:
            best = (float(est[i]), act, i)
    return best


def tighten(codes: np.ndarray, orig: np.ndarray, hierarchies: list[Hierarchy]) -> np.ndarray:
    """Every class's tuple lowered, per attribute, to the lowest common
    ancestor of its members' original values (never more general than
    before; a class whose tightened tuple equals another's joins it, which
    keeps k and every monotone model)."""
    ec = group(codes)
    order = np.argsort(ec.row_class, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(ec.row_class[order]) != 0])
    out = ec.keys.copy()
    for j, h in enumerate(hierarchies):
        o = orig[order, j]
        best = np.zeros(len(starts), dtype=np.int64)  # depth of the lowest shared ancestor
        for d in range(1, h.height):
            a = h.ancestors[o, np.minimum(d, h.depth[o])].astype(np.int64)
            deep = (h.depth[o] >= d).astype(np.int64)
            same = (np.minimum.reduceat(a, starts) == np.maximum.reduceat(a, starts)) & \
                (np.minimum.reduceat(deep, starts) == 1)
            best = np.where(same, d, best)
        rep = orig[order[starts], j]
        lca = h.ancestors[rep, best]
        # never above the current tuple (a tuple may sit on an unbalanced path)
        cur = ec.keys[:, j]
        out[:, j] = np.where(h.depth[lca] >= h.depth[cur], lca, cur)
    return out[ec.row_class]


def _do(s: _State, action: tuple) -> None:
    kind, c, x, tup, cost = action
    if kind == "dissolve":
        s.dissolve(c, x)
    elif kind == "swap":
        s.swap(c, x[0], x[1], tup[0], tup[1], cost)
    elif kind == "move":
        s.move(c, x, tup, cost)
    else:
        s.merge(c, x, tup, cost)


def enforce_info(problem: Problem, codes: np.ndarray, suppressed: np.ndarray, *,
                 moves: bool = True) -> tuple[np.ndarray, np.ndarray, dict]:
    """:func:`enforce`, also returning ``info``: the steps made
    (``privacy_merges``, ``privacy_moves``, ``privacy_swaps``,
    ``privacy_dissolved``), ``privacy_classes_in``/``_out``,
    ``privacy_violating_in`` (classes violating some model before),
    ``privacy_distortion_added`` (distortion units) and ``privacy_time``.
    ``moves=False`` merges whole classes only."""
    t0 = time.perf_counter()
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    suppressed = np.asarray(suppressed, dtype=bool)
    info = {"privacy_merges": 0, "privacy_moves": 0, "privacy_swaps": 0, "privacy_dissolved": 0, "privacy_time": 0.0}
    if not problem.privacy:
        return codes, suppressed, info
    if not problem.single_full_requirement:
        raise ValueError("the privacy repair supports one k over all quasi-identifiers, not several requirements "
                         "over different attribute sets")
    for b in problem.privacy:
        b.check_feasible()
    s = _State(problem, codes)
    info["privacy_classes_in"] = int(s.alive.sum())
    info["privacy_violating_in"] = int((~s.ok).sum())
    n_near = NEAR if moves else 0
    guard = 4 * (problem.table.n_rows + len(s.size))  # beyond this many steps, merges only (each ends a class)
    steps = 0
    while True:
        c = s.next_violating()
        if c < 0:
            break
        steps += 1
        _do(s, _best(s, c, n_near if steps <= guard else 0)[1])
    out = s.T[s.rc]
    donors = np.zeros(len(s.size), dtype=bool)
    donors[list(s.donors)] = True
    donors[s.rc[suppressed]] = False  # suppressed records stay '*'
    rows = np.flatnonzero(donors[s.rc] & s.alive[s.rc])
    if len(rows):  # a class that gave records may now fit under a more specific tuple
        out[rows] = tighten(out[rows], s.orig[rows], problem.table.hierarchies)
    # the suppressed records are the rows printed all '*': a suppressed record moved into a class is
    # released, and a class merged up to the root joins the suppressed records (one class, as the verifier sees it)
    sup = (out == 0).all(axis=1)
    added = (problem.cost.cell_costs(out).sum(axis=1) - problem.cost.cell_costs(codes).sum(axis=1)) @ s.cnt
    info.update(privacy_merges=s.merges, privacy_moves=s.moves, privacy_swaps=s.swaps,
                privacy_dissolved=s.dissolved, privacy_classes_out=int(s.alive.sum()),
                privacy_distortion_added=float(added), privacy_time=time.perf_counter() - t0)
    log.info("privacy repair: %d merges, %d record moves, %d swaps, %d classes dissolved, %d -> %d classes "
             "(%d violating), distortion +%.4f, %.2f s", s.merges, s.moves, s.swaps, s.dissolved,
             info["privacy_classes_in"], info["privacy_classes_out"],
             info["privacy_violating_in"], info["privacy_distortion_added"], info["privacy_time"])
    return out, sup, info


def enforce(problem: Problem, codes: np.ndarray, suppressed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Repair ``codes`` (a local recoding meeting ``problem``'s single k over
    all QIs) so that every class, the suppressed records one more, satisfies
    every model of ``problem.privacy``; returns ``(codes, suppressed)``.
    Raises :class:`~hieranon.privacy.PrivacyError` before any work when the
    whole table cannot satisfy a model. See the module docstring."""
    out, sup, _ = enforce_info(problem, codes, suppressed)
    return out, sup


def enforce_checked(problem: Problem, codes: np.ndarray, suppressed: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """:func:`enforce_info`, then every class checked from scratch, as the
    verifier groups them (every all-``*`` row in one class). The repair ends
    only when no class of its state violates a model and the output prints
    each class's tuple, so a violation here is a bookkeeping bug: it raises
    instead of being patched over."""
    codes, sup, info = enforce_info(problem, codes, suppressed)
    if problem.privacy and _violating(problem, codes):
        raise RuntimeError("privacy repair: a class of the output still violates a model (a bug; please report it)")
    return codes, sup, info


def repair_and_improve(problem: Problem, codes: np.ndarray, suppressed: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, dict]:
    """:func:`enforce_checked`, then, when the repair changed something, the
    model-preserving local search of
    :func:`hieranon.algorithms.privacy_refine.improve`: ``(codes,
    suppressed, info)``."""
    out, sup, info = enforce_checked(problem, codes, suppressed)
    if info["privacy_violating_in"]:  # an output the models leave alone stays the method's own
        # the records the method suppressed stay put; a class the repair merged up to the root may shrink again
        out, sup, more = improve(problem, out, suppressed)
        info.update(more)
    if info.get("privacy_refine_moves", 0) + info.get("privacy_refine_swaps", 0) and _violating(problem, out):
        raise RuntimeError("privacy refinement: a class of the output violates a model (a bug; please report it)")
    return out, sup, info


def repair_solution(problem: Problem, solution: Solution) -> Solution:
    """``solution`` with :func:`enforce` applied when ``problem`` has privacy
    models (unchanged otherwise), then, when the repair changed something, the
    distortion lowered again by the model-preserving local search of
    :func:`hieranon.algorithms.privacy_refine.improve`;
    the repair's and the search's ``info`` go to
    ``solution.details.privacy`` when the details have that field."""
    if not problem.privacy:
        return solution
    codes, sup, info = repair_and_improve(problem, solution.codes, solution.suppressed)
    details = solution.details
    if details is not None and hasattr(details, "privacy"):
        details.privacy = info
    return Solution(codes, sup, details)


def _violating(problem: Problem, codes: np.ndarray) -> bool:
    """Does some class of ``codes`` (grouped by their printed tuples, the
    all-``*`` rows one class) violate a model?"""
    ec = group(codes, problem.table.counts)
    return not classes_ok(problem.privacy, ec.row_class.astype(np.int64), ec.n_classes)
