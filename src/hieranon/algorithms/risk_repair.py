"""Enforce the risk-based models (:mod:`hieranon.privacy.risk_models`: k-map,
delta-presence, average risk) on any method's output by merging classes.

One step after the method's solution, the same for every method: while some
model fails, two classes are merged into one whose tuple takes, per
attribute, the lowest common ancestor of both tuples (the closest common
generalisation, Li et al. 2006, Def. 8), costing the distortion added under
the problem's cost, ``|C| (g(lca) - g(t_C)) + |D| (g(lca) - g(t_D))`` (exact
integers, as :mod:`hieranon.algorithms.privacy_merge` prices its merges):

* while a class violates a per-class model (k-map, delta-presence), the
  smallest such class is merged with the partner that makes the merged class
  satisfy every per-class model at the least cost, else with the cheapest
  partner (and repaired again next);
* then, while a global model (average risk) fails, the cheapest pair of
  classes of the whole release is merged (each class keeps its cheapest
  partner; only the partners of the merged classes are searched again).

A merged tuple equal to another class's tuple joins that class (the verifier
groups classes by their printed tuples). Merging only generalises, so every
k-anonymity requirement over all QIs and every l-diversity / t-closeness
model that held still holds (Machanavajjhala et al. 2007, Sec. 5; Li et al.
2007, Sec. 4.1). Each step removes a class, and the whole table taken as one
class with every cell the root satisfies every model (checked before any
work), so the repair ends with every model met.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from ..core.table import group
from .kaca_core import hierarchy_data, merge_costs

__all__ = ["enforce_risk"]

log = logging.getLogger("hieranon.algorithms")


class _Classes:
    def __init__(self, problem, codes: np.ndarray):
        t = problem.table
        ec = group(codes, t.counts)
        self.T = np.asarray(ec.keys, dtype=np.int64).copy()
        self.size = ec.sizes.astype(np.int64).copy()
        self.rc = ec.row_class.astype(np.int64).copy()
        self.alive = np.ones(len(self.size), dtype=bool)
        self.hs = t.hierarchies
        self.g = [np.asarray(c, dtype=np.int64) for c in problem.cost.int_costs]
        self.hd = hierarchy_data(t.hierarchies, problem.cost)
        self.gT = self.cost_of(self.T)
        self.by_tuple = {self.T[c].tobytes(): c for c in range(len(self.size))}
        self.added = 0
        self.merges = 0

    def cost_of(self, T: np.ndarray) -> np.ndarray:
        out = np.zeros(len(T), dtype=np.int64)
        for j, g in enumerate(self.g):
            out += g[T[:, j]]
        return out

    def costs(self, c: int) -> tuple[np.ndarray, np.ndarray]:
        """Every other alive class and what merging it with ``c`` adds (the
        kernel :func:`~hieranon.algorithms.kaca_core.merge_costs`)."""
        cand = np.flatnonzero(self.alive)
        cand = cand[cand != c]
        g_merged = np.empty(len(cand), dtype=np.int64)
        added = np.empty(len(cand), dtype=np.int64)
        merge_costs(c, cand, self.T, self.gT, self.size, self.hd, g_merged, added)
        return cand, added

    def merged(self, c: int, others: np.ndarray) -> np.ndarray:
        """The merged tuples of ``c`` with each of ``others``: per attribute
        the lowest common ancestor."""
        L = np.empty((len(others), self.T.shape[1]), dtype=np.int64)
        for j, h in enumerate(self.hs):
            L[:, j] = h.lca(np.full(len(others), self.T[c, j], dtype=np.int32), self.T[others, j].astype(np.int32))
        return L

    def options(self, c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every other alive class: ids, merged tuples, costs."""
        cand, added = self.costs(c)
        return cand, self.merged(c, cand), added

    def merge(self, c: int, d: int, tup: np.ndarray, cost: int) -> int:
        """Merge ``d`` into ``c`` under ``tup``; returns the surviving class."""
        del self.by_tuple[self.T[d].tobytes()]
        self._absorb(c, d)
        self.merges += 1
        self.added += int(cost)
        old, key = self.T[c].tobytes(), tup.tobytes()
        if key == old:
            return c
        del self.by_tuple[old]
        self.T[c] = tup
        self.gT[c] = self.cost_of(tup[None, :])[0]
        e = self.by_tuple.get(key)
        if e is not None:  # identical tuples are one class
            self._absorb(e, c)
            return e
        self.by_tuple[key] = c
        return c

    def _absorb(self, c: int, d: int) -> None:
        self.size[c] += self.size[d]
        self.alive[d] = False
        self.rc[self.rc == d] = c


def _per_class_bad(models, s: _Classes) -> np.ndarray:
    ids = np.flatnonzero(s.alive)
    ok = np.ones(len(ids), dtype=bool)
    for b in models:
        ok &= b.classes_ok(s.T[ids], s.size[ids])
    return ids[~ok]


def _repair_classes(models, s: _Classes) -> None:
    while True:
        bad = _per_class_bad(models, s)
        if not len(bad):
            return
        c = int(bad[np.argmin(s.size[bad])])
        if s.alive.sum() == 1:  # one class left: the whole table under the root (feasible, checked before)
            tup = np.zeros(s.T.shape[1], dtype=np.int64)
            s.added += int(s.size[c] * (s.cost_of(tup[None, :])[0] - s.gT[c]))
            del s.by_tuple[s.T[c].tobytes()]
            s.T[c] = tup
            s.gT[c] = s.cost_of(tup[None, :])[0]
            s.by_tuple[tup.tobytes()] = c
            continue
        cand, L, inc = s.options(c)
        fixes = np.ones(len(cand), dtype=bool)
        for b in models:
            fixes &= b.classes_ok(L, s.size[c] + s.size[cand])
        pick = np.flatnonzero(fixes) if fixes.any() else np.arange(len(cand))
        i = int(pick[np.argmin(inc[pick])])
        s.merge(c, int(cand[i]), L[i], inc[i])


def _movers_below(models) -> int | None:
    """Classes below this size are the only ones whose merging can help every
    global model (population uniqueness: the sample uniques), or None: any."""
    limits = [getattr(b, "merge_classes_below", None) for b in models]
    return None if any(limit is None for limit in limits) else max(limits)


def _repair_global(models, s: _Classes) -> None:
    def ok() -> bool:
        sizes = s.size[s.alive]
        return all(b.table_ok(sizes) for b in models)

    if ok():
        return
    below = _movers_below(models)
    n = len(s.size)
    none = np.iinfo(np.int64).max
    best_cost = np.full(n, none, dtype=np.int64)
    best = np.full(n, -1, dtype=np.int64)

    def mover(c) -> bool:
        return below is None or s.size[c] < below

    def search(c: int) -> None:
        if not mover(c):
            best_cost[c], best[c] = none, -1
            return
        cand, inc = s.costs(c)
        if len(cand):
            i = int(np.argmin(inc))
            best_cost[c], best[c] = inc[i], cand[i]
        else:
            best_cost[c], best[c] = none, -1

    for c in np.flatnonzero(s.alive):
        search(int(c))
    # an estimate of population uniqueness solves equations (tens of milliseconds): it is checked after
    # batches of merges of 0.5 % of the classes that can move, which may merge up to that many too many
    batch = 1 if below is None else max(1, int(0.005 * np.count_nonzero(s.alive & (s.size < below))))
    merged = 0
    while merged % batch or not ok():
        merged += 1
        alive = np.flatnonzero(s.alive)
        c = int(alive[np.argmin(best_cost[alive])])
        if best_cost[c] == none:  # nothing left that can help (the whole table is one class: feasible, checked)
            return
        d = int(best[c])
        # the tuples of c and d are those best[c] was priced on: a class whose best partner or own
        # tuple changed searched again, so the merged tuple is built only for the merge made
        kept = s.merge(c, d, s.merged(c, np.array([d]))[0], best_cost[c])
        gone = {c, d} - {kept}
        best_cost[list(gone)] = none
        search(kept)
        # classes whose best partner was merged search again; the new class may be cheaper for the others
        stale = np.flatnonzero(s.alive & np.isin(best, [c, d]))
        for e in stale:
            if e != kept:
                search(int(e))
        cand, inc = s.costs(kept)
        better = inc < best_cost[cand]
        if below is not None:
            better &= s.size[cand] < below
        best_cost[cand[better]], best[cand[better]] = inc[better], kept


def enforce_risk(problem, codes: np.ndarray, suppressed: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """Merge classes of ``codes`` until every risk model of ``problem.risk``
    holds (see the module docstring); returns ``(codes, suppressed, info)``,
    ``info`` holding ``risk_merges``, ``risk_classes_in``/``_out``,
    ``risk_distortion_added`` (distortion units) and ``risk_time``."""
    models = list(getattr(problem, "risk", ()) or ())
    if not models:
        return codes, suppressed, {}
    t0 = time.perf_counter()
    s = _Classes(problem, np.asarray(codes))
    info = {"risk_classes_in": int(s.alive.sum())}
    _repair_classes([b for b in models if not b.is_global], s)
    _repair_global([b for b in models if b.is_global], s)
    # a global merge never breaks a per-class model that only grows with merging (k-map), but
    # delta-presence is not monotone: repair the classes again (each step still removes a class)
    _repair_classes([b for b in models if not b.is_global], s)
    out = s.T[s.rc].astype(np.int32)
    sup = (out == 0).all(axis=1)
    info.update(risk_merges=s.merges, risk_classes_out=int(s.alive.sum()),
                risk_distortion_added=float(s.added), risk_time=time.perf_counter() - t0)
    log.info("risk repair: %d merges, %d -> %d classes, distortion +%d units, %.2f s", s.merges,
             info["risk_classes_in"], info["risk_classes_out"], s.added, info["risk_time"])
    return out, sup, info
