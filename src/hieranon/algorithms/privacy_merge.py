"""Enforce privacy models on a local-recoding output by merging classes.

Given an output meeting one k over all QIs, :func:`enforce` repairs every
equivalence class violating a privacy model of ``problem.privacy``
(l-diversity, t-closeness; :mod:`hieranon.privacy`). The suppressed records
(every cell the root) form one more class, checked like every other.

While some class violates a model, the violating class ``C`` with the fewest
records (ties: lowest id) is repaired by the cheapest of two kinds of step,
costs being the distortion added under ``problem.cost`` (exact integers,
additive along hierarchy paths):

* **merge** ``C`` with another class ``C'``: the merged class takes, per
  attribute, the lowest common ancestor of both tuples (the closest common
  generalisation, Li et al. 2006, Def. 8), costing
  ``|C| (g(lca) - g(t_C)) + |C'| (g(lca) - g(t_C'))``;
* **move** one record ``r`` into ``C`` from a nearby class ``D`` (one of the
  :data:`NEAR` cheapest merge partners) that keeps ``>= k`` records and every
  model without it; ``C``'s tuple becomes ``lca(t_C, r's original values)``,
  costing ``|C| (g(new) - g(t_C)) + |r| (g(new) - g(t_D))`` (negative when
  ``r``'s values already lie under ``t_C``). A move must keep every model
  ``C`` satisfies and improve (never worsen) those it violates -- the "stub"
  of a neighbouring class, as in Li et al. 2008 (Def. 14) for k.

Order of preference: the cheapest step that makes ``C`` satisfy every model
(a move when it costs no more than the cheapest such merge); else the
cheapest improving move; else the cheapest merge, ``C`` being repaired again
next. A merge whose tuple equals another class's tuple joins that class.

Why it ends and keeps what holds: class sizes only grow, except donors, which
keep ``>= k`` records and every model; a satisfied class is never merged or
given records unless it is the partner of a violating one, and the union of
two classes satisfying a model satisfies it (Machanavajjhala et al. 2007,
Sec. 5; Li et al. 2007, Sec. 4.1). Each step removes a class, removes a
violation, or adds a record to a violating class, so the loop ends; the whole
table satisfies every model (:meth:`~hieranon.privacy.BoundModel.check_feasible`,
checked before any work), so it ends with no violation.

Several requirements over different attribute sets are not supported (a
merge can empty the group a class leaves on a subset of the attributes).
"""

from __future__ import annotations

import time

import numpy as np

from ..hierarchy import Hierarchy
from ..table import group
from .base import Problem, log

__all__ = ["enforce", "enforce_info", "NEAR"]

#: Record moves are drawn from this many cheapest merge partners of a class.
NEAR = 24


def _lca_fn(h: Hierarchy):
    if h._dense_ok:
        table = h.lca_table
        return lambda a, b: table[a, b]
    return h.lca


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
        self.T = np.ascontiguousarray(ec.keys, dtype=np.int32).copy()
        self.size = ec.sizes.astype(np.int64).copy()
        self.models = list(problem.privacy)
        self.hist = [b.histogram(self.rc, n) for b in self.models]
        self.g = [np.asarray(c, dtype=np.int64) for c in problem.cost.int_costs]
        self.lca = [_lca_fn(h) for h in t.hierarchies]
        self.gT = self.tuple_cost(self.T)
        self.alive = np.ones(n, dtype=bool)
        self.ok = self.ok_all([h for h in self.hist])
        self.by_tuple = {self.T[c].tobytes(): c for c in range(n)}
        self.merges = self.moves = 0
        self.added = 0

    def tuple_cost(self, T: np.ndarray) -> np.ndarray:
        out = np.zeros(len(T), dtype=np.int64)
        for j, g in enumerate(self.g):
            out += g[T[:, j]]
        return out

    def lca_rows(self, tup: np.ndarray, others: np.ndarray) -> np.ndarray:
        L = np.empty(others.shape, dtype=np.int32)
        for j, lca in enumerate(self.lca):
            L[:, j] = lca(tup[j], others[:, j])
        return L

    def ok_all(self, hists: list[np.ndarray]) -> np.ndarray:
        ok = np.ones(len(hists[0]), dtype=bool)
        for b, h in zip(self.models, hists):
            ok &= b.ok_hist(h)
        return ok

    # ------------------------------------------------------------ merges
    def merge_options(self, c: int):
        """Every other alive class: ids, merged tuples, costs, and whether the
        merge satisfies every model."""
        cand = np.flatnonzero(self.alive)
        cand = cand[cand != c]
        L = self.lca_rows(self.T[c], self.T[cand])
        gL = self.tuple_cost(L)
        inc = self.size[c] * (gL - self.gT[c]) + self.size[cand] * (gL - self.gT[cand])
        fixes = self.ok_all([h[c] + h[cand] for h in self.hist])
        return cand, L, inc, fixes

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
        self.rc[self.rc == d] = c

    def _retuple(self, c: int, tup: np.ndarray) -> None:
        """Class ``c`` takes tuple ``tup``, joining the class that has it."""
        old = self.T[c].tobytes()
        key = tup.tobytes()
        if key != old:
            if self.by_tuple.get(old) == c:
                del self.by_tuple[old]
            self.T[c] = tup
            self.gT[c] = self.tuple_cost(tup[None, :])[0]
            e = self.by_tuple.get(key)
            if e is not None and e != c:  # identical tuples are one class
                self._absorb(e, c)
                c = e
            self.by_tuple[key] = c
        self.ok[c] = self.ok_all([h[c:c + 1] for h in self.hist])[0]

    # ------------------------------------------------------------- moves
    def move_options(self, c: int, near: np.ndarray):
        """Rows of the ``near`` classes that may move into ``c``: row ids,
        new tuples of ``c``, costs, fixes-``c`` flags (only valid, improving
        moves are returned)."""
        if len(near) == 0:
            return None
        rows = np.flatnonzero(np.isin(self.rc, near))
        d = self.rc[rows]
        w = self.cnt[rows]
        valid = self.size[d] - w >= self.k
        improves = np.zeros(len(rows), dtype=bool)
        fixes = valid.copy()
        for b, h in zip(self.models, self.hist):
            v = b.values[rows]
            hc = np.repeat(h[c][None, :], len(rows), axis=0)
            hc[np.arange(len(rows)), v] += w
            hd = h[d].copy()
            hd[np.arange(len(rows)), v] -= w
            valid &= b.ok_hist(hd)
            ok_new = b.ok_hist(hc)
            fixes &= ok_new
            if b.ok_hist(h[c:c + 1])[0]:
                valid &= ok_new
            else:
                old = b.measure_hist(h[c:c + 1])
                new = b.measure_hist(hc)
                valid &= ok_new | ~b.better(old, new)  # never worse
                improves |= ok_new | b.better(new, old)
        keep = np.flatnonzero(valid & improves)
        if len(keep) == 0:
            return None
        rows, d, w, fixes = rows[keep], d[keep], w[keep], fixes[keep]
        N = self.lca_rows(self.T[c], self.orig[rows])
        gN = self.tuple_cost(N)
        cost = self.size[c] * (gN - self.gT[c]) + w * (gN - self.gT[d])
        return rows, N, cost, fixes

    def move(self, c: int, r: int, tup: np.ndarray, cost: int) -> None:
        d = int(self.rc[r])
        w = int(self.cnt[r])
        self.rc[r] = c
        self.size[c] += w
        self.size[d] -= w
        for b, h in zip(self.models, self.hist):
            h[c, b.values[r]] += w
            h[d, b.values[r]] -= w
        self.moves += 1
        self.added += cost
        self.ok[d] = self.ok_all([h[d:d + 1] for h in self.hist])[0]
        self._retuple(c, tup)


def _best(s: _State, c: int, n_near: int = NEAR) -> tuple[float, tuple]:
    """The repair step of the violating class ``c`` (see the module
    docstring): ``(cost per violation it repairs, action)``."""
    cand, L, inc, fixes = s.merge_options(c)
    spare = s.ok[cand] & (s.size[cand] > s.k)  # classes that may give a record
    near = cand[spare][np.argsort(inc[spare], kind="stable")[:n_near]]
    mv = s.move_options(c, near) if n_near else None
    # a merge with another violating class that fixes both repairs two at once
    per_fix = inc / np.where(fixes & ~s.ok[cand], 2.0, 1.0)
    best_merge = int(np.flatnonzero(fixes)[np.argmin(per_fix[fixes])]) if fixes.any() else -1
    if mv is not None:
        rows, N, cost, mfix = mv
        if mfix.any():
            i = int(np.flatnonzero(mfix)[np.argmin(cost[mfix])])
            if best_merge < 0 or cost[i] <= per_fix[best_merge]:
                return float(cost[i]), ("move", c, int(rows[i]), N[i].copy(), int(cost[i]))
        elif best_merge < 0:
            i = int(np.argmin(cost))
            return float(cost[i]), ("move", c, int(rows[i]), N[i].copy(), int(cost[i]))
    i = best_merge if best_merge >= 0 else int(np.argmin(inc))
    return float(per_fix[i]), ("merge", c, int(cand[i]), L[i].copy(), int(inc[i]))


def _do(s: _State, action: tuple) -> None:
    kind, c, x, tup, cost = action
    if kind == "move":
        s.move(c, x, tup, cost)
    else:
        s.merge(c, x, tup, cost)


def _step(s: _State, c: int, n_near: int) -> None:
    _do(s, _best(s, c, n_near)[1])


def enforce_info(problem: Problem, codes: np.ndarray, suppressed: np.ndarray, *,
                 moves: bool = True) -> tuple[np.ndarray, np.ndarray, dict]:
    """:func:`enforce`, also returning ``info``: ``privacy_merges`` and
    ``privacy_moves`` (steps made), ``privacy_classes_in``/``_out``,
    ``privacy_violating_in`` (classes violating some model before),
    ``privacy_distortion_added`` (distortion units) and ``privacy_time``.
    ``moves=False`` merges whole classes only."""
    t0 = time.perf_counter()
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    suppressed = np.asarray(suppressed, dtype=bool)
    info = {"privacy_merges": 0, "privacy_moves": 0, "privacy_time": 0.0}
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
    while True:
        bad = np.flatnonzero(s.alive & ~s.ok)
        if len(bad) == 0:
            break
        _step(s, int(bad[np.argmin(s.size[bad])]), n_near)  # the smallest violating class (ties: lowest id)
    out = s.T[s.rc]
    sup = suppressed & (out == 0).all(axis=1)  # a suppressed record moved into a class is released
    info.update(privacy_merges=s.merges, privacy_moves=s.moves, privacy_classes_out=int(s.alive.sum()),
                privacy_distortion_added=s.added / problem.cost.scale, privacy_time=time.perf_counter() - t0)
    log.info("privacy repair: %d merges, %d record moves, %d -> %d classes (%d violating), distortion +%.4f, "
             "%.2f s", s.merges, s.moves, info["privacy_classes_in"], info["privacy_classes_out"],
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
