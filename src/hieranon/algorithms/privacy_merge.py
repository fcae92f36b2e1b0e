"""Enforce privacy models on a local-recoding output by merging classes.

Given an output that meets its k-anonymity requirements, :func:`enforce`
repairs every equivalence class violating a privacy model of
``problem.privacy`` (l-diversity, t-closeness; :mod:`hieranon.privacy`):

* the suppressed records (all cells the root) form one more class, checked
  like every other;
* while some class violates a model, the violating class with the fewest
  records is merged with another class: the merged class takes, per
  attribute, the lowest common ancestor of both tuples (the closest common
  generalisation, Li et al. 2006, Def. 8), and costs the distortion
  ``|C| (g(lca) - g(t_C)) + |C'| (g(lca) - g(t_C'))`` under
  ``problem.cost`` (exact integer costs). The partner is the cheapest class
  whose merge satisfies every model; when none does, the cheapest class, and
  the merged class is repaired in turn;
* a merge whose tuple equals another class's tuple joins that class too.

Merging never breaks what holds: class sizes only grow (k is kept, also for
requirements over subsets of the QIs, which only see coarser groups), and every
model is monotone under the union of classes (Machanavajjhala et al. 2007,
Sec. 5; Li et al. 2007, Sec. 4.1), so a satisfied class stays satisfied. The
loop ends because the whole table satisfies every model
(:meth:`~hieranon.privacy.BoundModel.check_feasible` is checked first, before
any work).

The scan over candidate partners is vectorised (numpy over all alive
classes: one LCA look-up per attribute, summed histograms per model).
"""

from __future__ import annotations

import time

import numpy as np

from ..hierarchy import Hierarchy
from ..table import group
from .base import Problem, log

__all__ = ["enforce", "enforce_info"]


def _lca_fn(h: Hierarchy):
    if h._dense_ok:
        table = h.lca_table
        return lambda a, b: table[a, b]
    return h.lca


class _Classes:
    """Alive classes: tuples, sizes, per-model histograms, cost per record."""

    def __init__(self, problem: Problem, codes: np.ndarray):
        t = problem.table
        ec = group(codes, t.counts)
        self.row_class = ec.row_class
        self.T = np.ascontiguousarray(ec.keys, dtype=np.int32).copy()
        self.size = ec.sizes.astype(np.int64).copy()
        n = ec.n_classes
        self.models = problem.privacy
        self.hist = [b.histogram(ec.row_class, n) for b in self.models]
        self.g = [np.asarray(c, dtype=np.int64) for c in problem.cost.int_costs]
        self.lca = [_lca_fn(h) for h in t.hierarchies]
        self.gT = self._tuple_cost(self.T)
        self.alive = np.ones(n, dtype=bool)
        self.parent = np.arange(n, dtype=np.int64)
        self.ok = self._ok_all([h for h in self.hist])
        self.by_tuple = {self.T[c].tobytes(): c for c in range(n)}

    def _tuple_cost(self, T: np.ndarray) -> np.ndarray:
        out = np.zeros(len(T), dtype=np.int64)
        for j, g in enumerate(self.g):
            out += g[T[:, j]]
        return out

    def _ok_all(self, hists: list[np.ndarray]) -> np.ndarray:
        ok = np.ones(len(hists[0]), dtype=bool)
        for b, h in zip(self.models, hists):
            ok &= b.ok_hist(h)
        return ok

    def candidates(self, c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every other alive class: ids, merged tuples, merge costs, whether
        the merge satisfies every model."""
        cand = np.flatnonzero(self.alive)
        cand = cand[cand != c]
        L = np.empty((len(cand), self.T.shape[1]), dtype=np.int32)
        for j, lca in enumerate(self.lca):
            L[:, j] = lca(self.T[c, j], self.T[cand, j])
        gL = self._tuple_cost(L)
        inc = self.size[c] * (gL - self.gT[c]) + self.size[cand] * (gL - self.gT[cand])
        fixes = self._ok_all([h[c] + h[cand] for h in self.hist])
        return cand, L, inc, fixes

    def merge(self, c: int, d: int, tup: np.ndarray) -> int:
        """Merge class ``d`` into ``c`` under tuple ``tup`` (joining a third
        class that already has it); returns the surviving id."""
        for x in (c, d):
            del self.by_tuple[self.T[x].tobytes()]
        self._absorb(c, d)
        self.T[c] = tup
        self.gT[c] = self._tuple_cost(tup[None, :])[0]
        key = tup.tobytes()
        e = self.by_tuple.get(key)
        if e is not None:  # the merged tuple is another class's: one class (Def. 2)
            self._absorb(e, c)
            c = e
        self.by_tuple[key] = c
        self.ok[c] = self._ok_all([h[c:c + 1] for h in self.hist])[0]
        return c

    def _absorb(self, c: int, d: int) -> None:
        self.size[c] += self.size[d]
        for h in self.hist:
            h[c] += h[d]
        self.alive[d] = False
        self.ok[d] = True
        self.parent[d] = c

    def owners(self) -> np.ndarray:
        """The surviving class of every original class."""
        p = self.parent
        while True:
            q = p[p]
            if np.array_equal(q, p):
                return p
            p = q


def enforce_info(problem: Problem, codes: np.ndarray, suppressed: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """:func:`enforce`, also returning ``info``: ``privacy_merges`` (merges
    made), ``privacy_classes_in``/``privacy_classes_out``,
    ``privacy_violating_in`` (classes violating some model before),
    ``privacy_distortion_added`` (distortion units) and ``privacy_time``."""
    t0 = time.perf_counter()
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    suppressed = np.asarray(suppressed, dtype=bool)
    info = {"privacy_merges": 0, "privacy_time": 0.0}
    if not problem.privacy:
        return codes, suppressed, info
    for b in problem.privacy:
        b.check_feasible()
    cl = _Classes(problem, codes)
    info["privacy_classes_in"] = int(cl.alive.sum())
    info["privacy_violating_in"] = int((~cl.ok).sum())
    added = 0
    merges = 0
    while True:
        bad = np.flatnonzero(cl.alive & ~cl.ok)
        if len(bad) == 0:
            break
        c = int(bad[np.argmin(cl.size[bad])])  # the smallest violating class (ties: lowest id)
        cand, L, inc, fixes = cl.candidates(c)
        pool = np.flatnonzero(fixes) if fixes.any() else np.arange(len(cand))
        i = int(pool[np.argmin(inc[pool])])
        added += int(inc[i])
        cl.merge(c, int(cand[i]), L[i].copy())
        merges += 1
    owner = cl.owners()
    out = cl.T[owner[cl.row_class]]
    info.update(privacy_merges=merges, privacy_classes_out=int(cl.alive.sum()),
                privacy_distortion_added=added / problem.cost.scale, privacy_time=time.perf_counter() - t0)
    log.info("privacy repair: %d merges, %d -> %d classes (%d violating), distortion +%.4f, %.2f s",
             merges, info["privacy_classes_in"], info["privacy_classes_out"], info["privacy_violating_in"],
             info["privacy_distortion_added"], info["privacy_time"])
    return out, suppressed.copy(), info


def enforce(problem: Problem, codes: np.ndarray, suppressed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Repair ``codes`` (a local recoding meeting ``problem``'s requirements)
    so that every class, the suppressed records one more, satisfies every
    model of ``problem.privacy``; returns ``(codes, suppressed)``. Raises
    :class:`~hieranon.privacy.PrivacyError` before any work when the whole
    table cannot satisfy a model. See the module docstring."""
    out, sup, _ = enforce_info(problem, codes, suppressed)
    return out, sup
