"""The generalisation lattice of full-domain recoding and its vectorised node check.

A *node* is a vector ``s`` with one entry per quasi-identifier: the number of
steps every value of that attribute is generalised up its hierarchy
(Samarati 2001; LeFevre et al. 2005, Incognito). Generalising a leaf by ``s``
steps gives ``Hierarchy.ancestors[leaf, max(depth - s, 0)]``.

Checking a node is a group-by on integer keys built per attribute from
precomputed rank columns (mixed radix), with ``np.bincount`` when the key
space is small and a hash factorisation otherwise: no Python loop over rows.
A node's classes are rolled up from those of a more specific node already
checked. :class:`Classifier` settles feasibility with predictive tagging
(k-anonymity is monotone in the lattice), as OLA and Flash do.

Privacy models (``privacy``, bound models of :mod:`hieranon.privacy`) are
checked per node too: every class, the suppressed records one more, must
satisfy each. Without suppression they are monotone as well -- a class of a
more general node is a union of classes of a more specific one, and
l-diversity (distinct, entropy, recursive; Machanavajjhala et al. 2007,
Sec. 5) and t-closeness with the EMD (Li et al. 2007, Sec. 4.1) hold on a
union of classes that satisfy them -- so predictive tagging stays valid. With
suppression they are not (a class may lose the suppressed records that made
the suppressed set diverse), so the lattice is then marked non-monotone
(:attr:`Lattice.monotone`) and :class:`Classifier` checks every node it
settles, tagging nothing.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.requirements import Requirement
from ..core.table import EncodedTable, group
from ..core.tree import Hierarchy
from ..privacy import classes_ok

#: largest lattice the full-domain methods enumerate
MAX_LATTICE_NODES = 2_000_000
#: key spaces up to this size are grouped with a dense bincount
_DENSE_MAX = 1 << 15


def generalise_steps(h: Hierarchy, codes: np.ndarray, steps: int) -> np.ndarray:
    """Generalise node codes ``steps`` steps up (capped at the root)."""
    codes = np.asarray(codes)
    return h.ancestors[codes, np.maximum(h.depth[codes] - int(steps), 0)]


def apply_node(table: EncodedTable, node) -> np.ndarray:
    """The code matrix of ``table`` generalised to lattice ``node``."""
    out = np.empty_like(table.codes)
    for j, (h, s) in enumerate(zip(table.hierarchies, node)):
        out[:, j] = generalise_steps(h, table.codes[:, j], s)
    return out


@dataclass
class NodeCheck:
    """Result of checking one lattice node."""

    feasible: bool
    n_suppressed: int
    n_classes: int
    dm: int
    suppression_extra: int  # additive-objective cost of suppressing (see Lattice.check)


class Lattice:
    """The generalisation lattice of an encoded table and a fast node checker.

    Parameters
    ----------
    table : EncodedTable
    requirements : list[Requirement]
    suppression_limit : float
        Fraction of the records that may be suppressed (rows of classes that
        still violate a requirement become all-root).
    node_costs : list of int64 arrays, optional
        Additive per-node costs ``g_j[v]`` (scaled integers) of the
        objective; when given, :attr:`base_cost` holds every node's cost and
        :meth:`check` reports the extra cost of its suppressed rows.
    cache_elements : int
        Budget (class representatives) of the roll-up cache.
    privacy : list of bound privacy models
        Every class of a feasible node, the suppressed records one more, satisfies each.
    """

    def __init__(self, table: EncodedTable, requirements: list[Requirement], suppression_limit: float = 0.0,
                 node_costs: list[np.ndarray] | None = None, cache_elements: int = 6_000_000,
                 privacy: list | None = None):
        self.table = table
        self.hierarchies = table.hierarchies
        m = len(self.hierarchies)
        self.m = m
        self.max_steps = np.array([h.height - 1 for h in self.hierarchies], dtype=np.int64)
        dims = tuple(int(s) + 1 for s in self.max_steps)
        self.dims = dims
        size = math.prod(dims)
        if size > MAX_LATTICE_NODES:
            raise ValueError(
                f"the generalisation lattice of {m} quasi-identifiers has {size:,} nodes (heights "
                f"{[h.height for h in self.hierarchies]}), more than the {MAX_LATTICE_NODES:,} full-domain "
                "methods handle; use fewer quasi-identifiers or levels, or 'mondrian' / a local-recoding method"
            )
        self.nodes = np.indices(dims).reshape(m, -1).T.astype(np.int64)  # lexicographic order
        self.n_nodes = len(self.nodes)
        self.heights = self.nodes.sum(axis=1)
        self.strides = np.array([int(np.prod(dims[j + 1:])) for j in range(m)], dtype=np.int64)
        # distinct leaf rows (the roll-up base)
        ec = group(table.codes, table.counts)
        self.base = ec.keys
        self.base_counts = ec.sizes.astype(np.int64)
        self.row_base = ec.row_class
        self.n_records = int(self.base_counts.sum())
        # gen[j][s]: node -> node generalised s more steps; R[j][s]: rank column on the base rows
        self.gen: list[list[np.ndarray]] = []
        self.rank: list[list[np.ndarray]] = []
        self.radix: list[list[int]] = []
        for j, h in enumerate(self.hierarchies):
            allv = np.arange(h.n_nodes)
            ucol, inv = np.unique(self.base[:, j], return_inverse=True)
            g_j, r_j, x_j = [], [], []
            for s in range(dims[j]):
                g = h.ancestors[allv, np.maximum(h.depth - s, 0)].astype(np.int32)
                uu, rk = np.unique(g[ucol], return_inverse=True)
                g_j.append(g)
                r_j.append(rk.ravel().astype(np.int64)[inv.ravel()])
                x_j.append(len(uu))
            self.gen.append(g_j)
            self.rank.append(r_j)
            self.radix.append(x_j)
        self.requirements = list(requirements)
        names = table.qi_names
        self.req_cols = [sorted(r.indices(names)) for r in self.requirements]
        self.req_k = [r.k for r in self.requirements]
        self.req_full = [len(c) == m for c in self.req_cols]
        if not 0 <= suppression_limit <= 1:
            raise ValueError(f"suppression_limit must be a fraction in [0, 1], got {suppression_limit}")
        self.suppression_limit = float(suppression_limit)
        self.max_suppressed = int(math.floor(self.suppression_limit * self.n_records + 1e-9))
        # additive objective
        self.node_costs = node_costs
        if node_costs is not None:
            per_step = []
            for j in range(len(self.hierarchies)):
                g = np.asarray(node_costs[j], dtype=np.int64)
                leaf = self.base[:, j]
                per_step.append(np.array([int(((g[self.gen[j][s][leaf]] - g[leaf]) * self.base_counts).sum())
                                          for s in range(dims[j])], dtype=np.int64))
            self.step_costs = per_step
            self.base_cost = sum(per_step[j][self.nodes[:, j]] for j in range(m)).astype(np.int64)
        else:
            self.step_costs = None
            self.base_cost = None
        # roll-up cache: node index -> (representative base rows, class sizes)
        self._cache: OrderedDict[int, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._cache_elements = 0
        self._cache_budget = int(cache_elements)
        self._cached = np.zeros(self.n_nodes, dtype=bool)
        self._cached_len = np.zeros(self.n_nodes, dtype=np.int64)
        self.n_checked = 0
        self.n_rolled_up = 0
        self.results: dict[int, NodeCheck] = {}
        self.privacy = list(privacy or [])
        #: False when feasibility is not monotone: with suppression, privacy models
        #: (the suppressed set may lose diversity up the lattice) or k > 1 (the
        #: smallest classes suppressed to reach k records may outgrow the limit)
        self.monotone = not (self.max_suppressed > 0 and (self.privacy or max(self.req_k, default=1) > 1))

    # ------------------------------------------------------------ utilities
    def index(self, node) -> int:
        return int(np.dot(np.asarray(node, dtype=np.int64), self.strides))

    def node(self, idx: int) -> list[int]:
        return [int(x) for x in self.nodes[idx]]

    def successors_mask(self, idx: int) -> np.ndarray:
        """Nodes >= node ``idx`` (componentwise), itself included."""
        return (self.nodes >= self.nodes[idx]).all(axis=1)

    def predecessors_mask(self, idx: int) -> np.ndarray:
        """Nodes <= node ``idx`` (componentwise), itself included."""
        return (self.nodes <= self.nodes[idx]).all(axis=1)

    def apply(self, node) -> np.ndarray:
        return apply_node(self.table, node)

    # -------------------------------------------------------------- group-by
    def _keys(self, node: np.ndarray, reps: np.ndarray, cols) -> tuple[np.ndarray, int]:
        key = None
        radix = 1
        for j in cols:
            s = int(node[j])
            col = self.rank[j][s][reps]
            r = self.radix[j][s]
            if key is None:
                key, radix = col.copy(), r
                continue
            if radix * r >= 2 ** 62:  # re-rank the partial key to keep it small
                codes, uniq = pd.factorize(key)
                key, radix = codes.astype(np.int64), len(uniq)
            key = key * r + col
            radix *= r
        if key is None:
            return np.zeros(len(reps), dtype=np.int64), 1
        return key, radix

    @staticmethod
    def _group(key: np.ndarray, radix: int, weights: np.ndarray, reps: np.ndarray | None):
        """Group ``key``: (class index per element, class sizes, one rep per class)."""
        if radix <= max(_DENSE_MAX, 2 * len(key)):
            sizes = np.bincount(key, weights=weights, minlength=radix)
            occupied = np.zeros(radix, dtype=bool)
            occupied[key] = True
            present = np.flatnonzero(occupied)
            pos = np.empty(radix, dtype=np.int64)
            pos[present] = np.arange(len(present))
            cls = pos[key]
            sizes = sizes[present]
        else:
            cls, uniq = pd.factorize(key)
            cls = cls.astype(np.int64)
            sizes = np.bincount(cls, weights=weights, minlength=len(uniq))
        rep = None
        if reps is not None:
            rep = np.empty(len(sizes), dtype=np.int64)
            rep[cls] = reps
        return cls, np.rint(sizes).astype(np.int64), rep

    def _source(self, idx: int) -> tuple[np.ndarray, np.ndarray]:
        """Smallest cached class table of a node <= ``idx`` (else the base rows)."""
        if self._cache:
            cand = np.flatnonzero(self._cached)
            ok = (self.nodes[cand] <= self.nodes[idx]).all(axis=1)
            if ok.any():
                cand = cand[ok]
                best = int(cand[int(np.argmin(self._cached_len[cand]))])
                self.n_rolled_up += 1
                return self._cache[best]
        return np.arange(len(self.base), dtype=np.int64), self.base_counts

    def classes(self, idx: int) -> tuple[np.ndarray, np.ndarray]:
        """Equivalence classes of node ``idx``: (representative base row, size) per class."""
        hit = self._cache.get(idx)
        if hit is not None:
            return hit
        reps, sizes = self._source(idx)
        node = self.nodes[idx]
        key, radix = self._keys(node, reps, range(self.m))
        _, new_sizes, new_reps = self._group(key, radix, sizes, reps)
        self._cache[idx] = (new_reps, new_sizes)
        self._cached[idx] = True
        self._cached_len[idx] = len(new_reps)
        self._cache_elements += len(new_reps)
        while self._cache_elements > self._cache_budget and len(self._cache) > 1:
            old, (r, _) = self._cache.popitem(last=False)
            self._cached[old] = False
            self._cache_elements -= len(r)
        return new_reps, new_sizes

    # ----------------------------------------------------------------- check
    def violating(self, idx: int, reps: np.ndarray, sizes: np.ndarray,
                  alive: np.ndarray | None = None) -> np.ndarray:
        """Classes suppressed at node ``idx`` because they violate a
        requirement, repeated until the rest satisfies all (several
        requirements may interact once rows are removed). ``alive``: the
        classes not suppressed already (default all)."""
        node = self.nodes[idx]
        alive = np.ones(len(sizes), dtype=bool) if alive is None else alive.copy()
        while True:
            viol = np.zeros(len(sizes), dtype=bool)
            for cols, k, full in zip(self.req_cols, self.req_k, self.req_full):
                if full:
                    viol |= alive & (sizes < k)
                else:
                    key, radix = self._keys(node, reps, cols)
                    cls, sub, _ = self._group(key, radix, (sizes * alive).astype(np.float64), None)
                    viol |= alive & (sub[cls] < k)
            if not viol.any():
                return ~alive
            alive &= ~viol
            if self.max_suppressed == 0 or len(self.requirements) == 1:
                return ~alive

    def suppressed_classes(self, idx: int, reps: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Classes suppressed at node ``idx``: the violating ones
        (:meth:`violating`) and, when they hold fewer than k records, the
        smallest other classes too, so that the suppressed records -- which
        print one ``*`` tuple, a class of their own -- number 0 or at least
        the largest k (Samarati 2001 counts them against MaxSup alike)."""
        sup = self.violating(idx, reps, sizes)
        if self.max_suppressed == 0:
            return sup
        k = max(self.req_k, default=1)
        n_sup = int(sizes[sup].sum())
        extra = None
        while 0 < n_sup < k and not sup.all():
            if extra is None:
                extra = self.class_extra(idx, reps, sizes)
            rest = np.flatnonzero(~sup)
            node = self.nodes[idx]
            tuples = [self.gen[j][int(node[j])][self.base[reps[rest], j]] for j in range(self.m)]
            # smallest first, then the cheapest to suppress, then by generalised tuple
            order = rest[np.lexsort((*tuples[::-1], extra[rest], sizes[rest]))]
            take = int(np.searchsorted(np.cumsum(sizes[order]), k - n_sup)) + 1
            sup = sup.copy()
            sup[order[:take]] = True
            sup = self.violating(idx, reps, sizes, alive=~sup)  # other requirements may now fail
            n_sup = int(sizes[sup].sum())
        return sup

    def check(self, idx: int) -> NodeCheck:
        """Check node ``idx`` against every requirement (memoised)."""
        done = self.results.get(idx)
        if done is not None:
            return done
        reps, sizes = self.classes(idx)
        self.n_checked += 1
        sup = self.suppressed_classes(idx, reps, sizes)
        n_sup = int(sizes[sup].sum())
        feasible = n_sup <= self.max_suppressed
        if feasible and self.privacy:
            feasible = self.private(idx, reps, sup)
        kept = sizes[~sup]
        dm = int((kept ** 2).sum()) + n_sup * self.n_records
        extra = int(self.class_extra(idx, reps[sup], sizes[sup]).sum()) if n_sup else 0
        res = NodeCheck(bool(feasible), n_sup, int((~sup).sum()), dm, extra)
        self.results[idx] = res
        return res

    def class_extra(self, idx: int, reps: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Per class of node ``idx`` (representatives ``reps``, ``sizes``
        records): the additive objective's extra cost of suppressing it (its
        cells raised from the node to the root); zeros without costs."""
        extra = np.zeros(len(reps), dtype=np.int64)
        if self.node_costs is None:
            return extra
        node = self.nodes[idx]
        for j in range(self.m):
            g = np.asarray(self.node_costs[j], dtype=np.int64)
            gen = self.gen[j][int(node[j])][self.base[reps, j]]
            extra += (g[0] - g[gen]) * sizes
        return extra

    def row_classes(self, idx: int, reps: np.ndarray, sup: np.ndarray) -> tuple[np.ndarray, int]:
        """Class of every input row at node ``idx`` (``0..n-1``; the suppressed
        rows -- classes ``sup`` of ``reps`` -- form class ``n - 1`` when there are any)."""
        node = self.nodes[idx]
        key, _ = self._keys(node, np.arange(len(self.base)), range(self.m))
        cls_base, uniq = pd.factorize(key)
        cls = cls_base.astype(np.int64)[self.row_base]
        n = len(uniq)
        if sup.any():
            rep_key, _ = self._keys(node, reps, range(self.m))
            cls[np.isin(key, rep_key[sup])[self.row_base]] = n
            n += 1
        return cls, n

    def private(self, idx: int, reps: np.ndarray, sup: np.ndarray) -> bool:
        """Does every class of node ``idx`` (the suppressed records one more)
        satisfy every privacy model?"""
        cls, n = self.row_classes(idx, reps, sup)
        return classes_ok(self.privacy, cls, n)

    def solution_codes(self, idx: int) -> tuple[np.ndarray, np.ndarray]:
        """Generalised codes of every input row at node ``idx`` and the suppressed mask."""
        codes = self.apply(self.nodes[idx])
        reps, sizes = self.classes(idx)
        sup_cls = self.suppressed_classes(idx, reps, sizes)
        suppressed = np.zeros(self.table.n_rows, dtype=bool)
        if sup_cls.any():
            node = self.nodes[idx]
            key, radix = self._keys(node, np.arange(len(self.base)), range(self.m))
            rep_key, _ = self._keys(node, reps, range(self.m))
            bad_keys = rep_key[sup_cls]
            sup_base = np.isin(key, bad_keys)
            suppressed = sup_base[self.row_base]
            codes[suppressed] = 0
        return codes, suppressed


# ====================================================================== search
UNKNOWN, FEASIBLE, INFEASIBLE = 0, 1, -1


class Classifier:
    """Feasibility of lattice nodes with predictive tagging (monotonicity).

    ``status[v]`` is FEASIBLE / INFEASIBLE once known, checked or tagged:
    a feasible node makes every successor feasible, an infeasible node every
    predecessor infeasible. :meth:`resolve` settles a node by a binary search
    on a chain of unknown nodes from it towards the top (the greedy path
    raises the attribute least generalised relative to its height, so the
    chain climbs the lattice diagonally and each check tags a large cone), as
    OLA and Flash do.
    """

    def __init__(self, lattice: Lattice):
        self.L = lattice
        self.status = np.zeros(lattice.n_nodes, dtype=np.int8)
        self._rel = lattice.max_steps.astype(float)
        self._rel[self._rel == 0] = 1.0

    def check(self, idx: int) -> bool:
        res = self.L.check(idx)
        if self.L.monotone:  # predictive tagging
            mask = self.L.successors_mask(idx) if res.feasible else self.L.predecessors_mask(idx)
            self.status[mask & (self.status == UNKNOWN)] = FEASIBLE if res.feasible else INFEASIBLE
        self.status[idx] = FEASIBLE if res.feasible else INFEASIBLE
        return res.feasible

    def _chain(self, idx: int) -> list[int]:
        L = self.L
        chain = [idx]
        cur = L.nodes[idx].copy()
        while True:
            open_ = np.flatnonzero(cur < L.max_steps)
            if len(open_) == 0:
                break
            rel = cur[open_] / self._rel[open_]
            j = int(open_[int(np.argmin(rel))])
            cur[j] += 1
            nxt = int(np.dot(cur, L.strides))
            if self.status[nxt] != UNKNOWN:
                break
            chain.append(nxt)
        return chain

    def resolve(self, idx: int) -> int:
        """Settle node ``idx`` (and tag what the checks imply); returns its status."""
        if not self.L.monotone and self.status[idx] == UNKNOWN:
            self.check(idx)
        while self.status[idx] == UNKNOWN:
            chain = self._chain(idx)
            lo, hi = 0, len(chain) - 1
            while lo <= hi and self.status[idx] == UNKNOWN:
                mid = (lo + hi) // 2
                if self.status[chain[mid]] == UNKNOWN:
                    self.check(chain[mid])
                if self.status[chain[mid]] == FEASIBLE:
                    hi = mid - 1
                else:
                    lo = mid + 1
        return int(self.status[idx])

    def classify_all(self, candidates: np.ndarray | None = None, stop=None) -> bool:
        """Settle every node (or every node of ``candidates``), in the order
        given; ``stop()`` true ends the work early. Returns True when every
        node was settled."""
        order = np.arange(self.L.n_nodes) if candidates is None else candidates
        for v in order:
            if self.status[v] == UNKNOWN:
                if stop is not None and stop():
                    return False
                self.resolve(int(v))
        return True

    def minimal_feasible(self) -> np.ndarray:
        """Feasible nodes whose direct predecessors are all known infeasible
        (exactly the minimal feasible nodes once the lattice is classified)."""
        L = self.L
        infeas = self.status == INFEASIBLE
        minimal = self.status == FEASIBLE
        for j in range(L.m):
            has_pred = L.nodes[:, j] > 0
            pred = np.where(has_pred, np.arange(L.n_nodes) - L.strides[j], 0)
            minimal &= ~has_pred | infeas[pred]
        return np.flatnonzero(minimal)
