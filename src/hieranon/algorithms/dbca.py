"""DBCA and DBCA:CM -- density-based KNN clustering with attribute priorities (Sun, Wang & Li 2008).

The method (Sun, Wang & Li 2008, section 3):

* **Distance.** ``Dist(t1, t2) = Distortion(t1, t12) + Distortion(t2, t12)``
  with ``t12`` the closest common generalisation (per attribute the lowest
  common ancestor, Sun, Wang & Li 2008 Def. 7/8 = Li et al. 2006 Def. 8/9), measured with the
  problem's cost model (:class:`~hieranon.core.cost.CostModel`; attribute
  priorities are already folded into its per-node costs). Per attribute that
  is ``2*g[lca(a, b)] - g[a] - g[b]``.
* **Density.** ``DistKNN(t)`` is the mean distance from record ``t`` to its
  k nearest *other* records (Def. 10), ``Density(t) = 1/DistKNN(t)`` (Def. 11).
  Identical records are at distance 0, so a record with k or more copies
  has ``DistKNN = 0`` and infinite density: points are therefore *ranked by
  DistKNN ascending* (equivalently, density descending, infinity first); no
  division is ever made. Densities are computed once, on the whole table
  (with only k records in all, over the k-1 others there are).
* **Clustering.** The densest remaining record is the first centre; it
  takes its k-1 nearest remaining records and the cluster leaves the pool.
  The next centre ``c'`` is the densest remaining record with
  ``Dist(c, c') > DistKNN(c) + DistKNN(c')`` (Def. 12, ``c`` the previous
  centre); when none qualifies, the densest remaining record (counted in
  ``details.centre_fallbacks``). This repeats while at least k records remain.
* **Leftovers.** Each of the (fewer than k) remaining records joins the
  cluster whose distortion grows least: ``|C| * (g(G') - g(G)) + g(G') - g(t)``
  where ``G`` is the cluster's closest common generalisation and
  ``G' = lca(G, t)``.
* **Output.** Every record is generalised to the closest common
  generalisation of its cluster.
* **DBCA:CM** adds ``penalty`` (in distortion units, the same units as
  ``Dist``) to the distance of every candidate whose class label differs from
  the centre's when the k-1 nearest records are chosen, and to the growth of
  a cluster whose centre's label differs from a leftover record's. Densities
  are not penalised.

Cluster sizes (Sun, Wang & Li 2008, end of section 3): every cluster is formed with
exactly k records, and fewer than k records are left over, so even if every
leftover joined the same cluster it would hold at most ``k + (k-1) = 2k-1``
records. The leftover step nevertheless only considers clusters that stay
below 2k (a cap that cannot bind when every row is one record). With a
count column an input row of ``c`` records is indivisible (it has one output
row); a cluster then takes whole rows, may overshoot k, and the upper bound
``2k-1`` holds only when every row is one record. Every cluster always holds
at least k records. ``details.cluster_sizes`` lists the clusters' record
counts and ``details.cluster_of_row`` (an array) each row's cluster.

Implementation.

* Records with identical QI codes (and, for DBCA:CM, the same class label)
  form one *point* weighted by its record count, so duplicates cost nothing
  quadratic: the kNN of a record of a point of weight ``w`` starts with its
  ``w-1`` copies at distance 0, and a cluster takes records from a point
  (its rows in input order) without re-scanning. The pair work is
  ``O(points^2)`` for the densities (numba, parallel over points) plus
  ``O(points)`` per cluster.
* Distances are exact integers (the cost model's scaled ``int_costs``), so
  DistKNN comparisons and ties are exact; DistKNN is kept as the sum of the
  k smallest distances (``k * Dist > S(c) + S(c')`` is Def. 12 times k).
* Distances are computed on the fly (no point x point matrix). Attributes
  with at most :data:`DENSE_MAX_VALUES` values present get a dense value x
  value distance table, and are merged into groups of at most
  :data:`GROUP_MAX_COMBOS` present value combinations whose tables hold the
  summed distances, so a pair costs one look-up per group (full Adult,
  8 QIs: 4 look-ups). Attributes with more values present walk their values'
  ancestor paths to the LCA instead.
* **Tie-breaks are seeded**: each point gets a rank from a random
  permutation drawn with ``np.random.default_rng(problem.seed)``. Centres are
  ordered by (DistKNN, rank); a centre's own remaining copies come first
  among its neighbours, then other points by (distance [+ penalty], rank);
  rows of a point are taken in input order. Leftover ties go to the cluster
  formed first (deterministic by index). Same seed, same output.
* **Chunks.** Both compiled loops (the densities, the clustering) return to
  Python after about :data:`CHUNK_WORK` distance evaluations per thread and
  resume where they stopped, so a Ctrl-C stops a run within a fraction of a
  second; the output does not depend on the chunk size.

Privacy models (``problem.privacy``): the clusters are formed for k, then the
class-merging repair of :mod:`hieranon.algorithms.privacy_merge` enforces the
models. DBCA is local recoding by clustering like KACA, so the same repair
applies unchanged (classes keep ``>= k`` records, a class meeting a model keeps
meeting it); weaving the models into the density-based growth would change
its centre and leftover rules, which the papers fix.
"""

from __future__ import annotations

import time
from dataclasses import replace
from numbers import Real

import numpy as np
import pandas as pd
from numba import get_num_threads, prange

from ..core.jit import kernel
from ..core.table import row_keys
from . import kaca_core
from .base import Algorithm, Problem, Solution, log
from .details import DBCADetails
from .params import Interval
from .privacy_merge import repair_solution
from .tags import Tags

__all__ = ["DBCA", "DBCACM", "DENSE_MAX_VALUES", "GROUP_MAX_COMBOS", "cluster_lca"]

#: Per attribute, above this many distinct values present in the data no dense
#: value x value distance table is built (ancestor paths are walked instead).
DENSE_MAX_VALUES = 2048
#: Attributes are merged into groups of at most this many present value
#: combinations, each with one dense distance table (fewer look-ups per pair).
GROUP_MAX_COMBOS = 512
#: Each compiled kernel call does about this many distance evaluations per
#: thread (a tenth of a second or so), then returns to Python, where a Ctrl-C
#: lands (:func:`hieranon.algorithms.kaca_core.chunk_done` is called between calls).
CHUNK_WORK = 10_000_000


# --------------------------------------------------------------------------
# numba kernels
# --------------------------------------------------------------------------
# Distance data (built by _distance_data): attributes with few values present
# are merged into groups; each group has a dense (combo x combo) table TG of
# summed per-attribute distances and every point a combo index PG[i, g], so
# Dist is a handful of table look-ups. Attributes with many values present
# keep their ancestor paths (PP[i, a] value index, PA node ids, PC costs along
# the path, PD depths) and their LCA is found by walking the paths.
@kernel(inline="always")
def _row_base(PG, i, tg_off, tg_size, base):
    for g in range(PG.shape[1]):
        base[g] = tg_off[g] + PG[i, g] * tg_size[g]


@kernel(inline="always")
def _dist(base, PG, TG, PP, PA, PC, PD, p_off, p_h, pd_off, i, l):
    """Exact integer Dist between point i (its table rows in ``base``) and point l."""
    s = 0
    for g in range(PG.shape[1]):
        s += TG[base[g] + PG[l, g]]
    for j in range(PP.shape[1]):
        a = PP[i, j]
        b = PP[l, j]
        if a == b:
            continue
        H = p_h[j]
        ba = p_off[j] + a * H
        bb = p_off[j] + b * H
        da = PD[pd_off[j] + a]
        db = PD[pd_off[j] + b]
        dm = min(da, db)
        d = 0
        while d < dm and PA[ba + d + 1] == PA[bb + d + 1]:
            d += 1
        s += 2 * PC[ba + d] - PC[ba + da] - PC[bb + db]
    return s


@kernel(parallel=True)
def _knn_kernel(w, k, i0, i1, S, PG, TG, tg_off, tg_size, PP, PA, PC, PD, p_off, p_h, pd_off):
    """For the points ``i0 <= i < i1``, ``S[i]`` = the sum of the distances
    from one of its records to its k nearest other records (its own w-1
    copies at distance 0 first)."""
    N = PG.shape[0]
    for i in prange(i0, i1):
        need = k - (w[i] - 1)
        if need <= 0:
            continue
        base = np.empty(PG.shape[1], dtype=np.int64)
        _row_base(PG, i, tg_off, tg_size, base)
        bufd = np.empty(need + 1, dtype=np.int64)
        bufw = np.empty(need + 1, dtype=np.int64)
        cnt = 0
        tot = 0
        thr = np.iinfo(np.int64).max
        for l in range(N):
            d = _dist(base, PG, TG, PP, PA, PC, PD, p_off, p_h, pd_off, i, l)
            if d >= thr or l == i:
                continue
            p = cnt
            while p > 0 and bufd[p - 1] > d:
                bufd[p] = bufd[p - 1]
                bufw[p] = bufw[p - 1]
                p -= 1
            bufd[p] = d
            bufw[p] = w[l]
            cnt += 1
            tot += w[l]
            while cnt > 1 and tot - bufw[cnt - 1] >= need:
                cnt -= 1
                tot -= bufw[cnt]
            if tot >= need:
                thr = bufd[cnt - 1]
        s = 0
        left = need
        for e in range(cnt):
            take = bufw[e] if bufw[e] < left else left
            s += bufd[e] * take
            left -= take
            if left <= 0:
                break
        S[i] = s


def _knn_sums(w: np.ndarray, k: int, *dd) -> np.ndarray:
    """Per point, the sum of the distances from one of its records to its k
    nearest other records, computed over ranges of points of about
    :data:`CHUNK_WORK` distance evaluations per thread each (a Ctrl-C lands
    between them)."""
    n = dd[0].shape[0]
    S = np.zeros(n, dtype=np.int64)
    step = max(1, int(CHUNK_WORK) * get_num_threads() // max(n, 1))
    for i0 in range(0, n, step):
        _knn_kernel(w, np.int64(k), np.int64(i0), np.int64(min(n, i0 + step)), S, *dd)
        kaca_core.chunk_done("dbca-knn")
    return S


@kernel
def _take(j, x, cid, r, ptr, prow_end, prow, row_count, row_cluster):
    """Move whole rows of point j (input order) into cluster cid until at
    least x records were taken or the point is exhausted; records taken."""
    taken = 0
    while taken < x and ptr[j] < prow_end[j]:
        row = prow[ptr[j]]
        row_cluster[row] = cid
        taken += row_count[row]
        ptr[j] += 1
    r[j] -= taken
    return taken


# State of the clustering loop between two calls of _cluster_kernel.
_ST_HEAD, _ST_PREV, _ST_CID, _ST_FALLBACK, _ST_DEAD, _ST_ACTIVE, _ST_ORD, _ST_REMAINING = range(8)


@kernel
def _cluster_kernel(PG, TG, tg_off, tg_size, PP, PA, PC, PD, p_off, p_h, pd_off,
                    label, S, rank, prow, row_count, k, penalty, use_penalty,
                    st, r, ptr, prow_end, row_cluster, centres, active, ordv, budget):
    """The DBCA clustering loop (everything but the leftovers), resumable.

    The loop's state is ``st`` (scalars, see ``_ST_*``) and the arrays
    ``r`` (records left per point), ``ptr``/``prow_end`` (next row of each
    point), ``row_cluster`` (leftover rows keep -1), ``centres``, ``active``
    and ``ordv`` (the scan lists). Clusters are formed until more than
    ``budget`` points were scanned or fewer than k records remain; returns
    True when the loop is finished (call again otherwise).
    """
    base = np.empty(PG.shape[1], dtype=np.int64)
    head = st[_ST_HEAD]
    prev = st[_ST_PREV]
    cid = st[_ST_CID]
    n_fallback = st[_ST_FALLBACK]
    dead = st[_ST_DEAD]
    n_active = st[_ST_ACTIVE]
    n_ord = st[_ST_ORD]
    remaining = st[_ST_REMAINING]
    bufk = np.empty(k + 1, dtype=np.int64)
    bufr = np.empty(k + 1, dtype=np.int64)
    bufj = np.empty(k + 1, dtype=np.int64)
    work = 0
    while remaining >= k and work <= budget:
        while r[ordv[head]] == 0:
            head += 1
        # ---- next centre (Def. 12)
        c = -1
        if prev >= 0:
            _row_base(PG, prev, tg_off, tg_size, base)
            for idx in range(head, n_ord):
                j = ordv[idx]
                if r[j] == 0:
                    continue
                d = _dist(base, PG, TG, PP, PA, PC, PD, p_off, p_h, pd_off, prev, j)
                if k * d > S[prev] + S[j]:
                    c = j
                    work += idx - head
                    break
            if c < 0:
                n_fallback += 1
                work += n_ord - head
        if c < 0:
            c = ordv[head]
        # ---- the centre and its own copies (distance 0, preferred)
        size = _take(c, 1, cid, r, ptr, prow_end, prow, row_count, row_cluster)
        if size < k and r[c] > 0:
            size += _take(c, k - size, cid, r, ptr, prow_end, prow, row_count, row_cluster)
        if r[c] == 0:
            dead += 1
        # ---- the nearest remaining records of other points
        if size < k:
            need = k - size
            cnt = 0
            work += n_active
            _row_base(PG, c, tg_off, tg_size, base)
            for a in range(n_active):
                j = active[a]
                if r[j] == 0:
                    continue
                d = _dist(base, PG, TG, PP, PA, PC, PD, p_off, p_h, pd_off, c, j)
                if use_penalty and label[j] != label[c]:
                    d += penalty
                rj = rank[j]
                if cnt == need:
                    if d > bufk[cnt - 1] or (d == bufk[cnt - 1] and rj > bufr[cnt - 1]):
                        continue
                    cnt -= 1
                p = cnt
                while p > 0 and (bufk[p - 1] > d or (bufk[p - 1] == d and bufr[p - 1] > rj)):
                    bufk[p] = bufk[p - 1]
                    bufr[p] = bufr[p - 1]
                    bufj[p] = bufj[p - 1]
                    p -= 1
                bufk[p] = d
                bufr[p] = rj
                bufj[p] = j
                cnt += 1
            for e in range(cnt):
                j = bufj[e]
                size += _take(j, k - size, cid, r, ptr, prow_end, prow, row_count, row_cluster)
                if r[j] == 0:
                    dead += 1
                if size >= k:
                    break
        remaining -= size
        centres[cid] = c
        cid += 1
        prev = c
        work += 1
        # ---- drop exhausted points from the scan lists now and then
        if dead * 2 > n_active:
            na = 0
            for a in range(n_active):
                if r[active[a]] > 0:
                    active[na] = active[a]
                    na += 1
            n_active = na
            no = 0
            for idx in range(head, n_ord):
                if r[ordv[idx]] > 0:
                    ordv[no] = ordv[idx]
                    no += 1
            n_ord = no
            head = 0
            dead = 0
    st[_ST_HEAD] = head
    st[_ST_PREV] = prev
    st[_ST_CID] = cid
    st[_ST_FALLBACK] = n_fallback
    st[_ST_DEAD] = dead
    st[_ST_ACTIVE] = n_active
    st[_ST_ORD] = n_ord
    st[_ST_REMAINING] = remaining
    return remaining < k


def _cluster_loop(dd, w, label, S, order, rank, prow_start, prow, row_count, k, penalty, use_penalty):
    """Run :func:`_cluster_kernel` to the end, in calls of about
    :data:`CHUNK_WORK` scanned points each (a Ctrl-C lands between them).

    Returns (row_cluster, centres, n_clusters, n_fallbacks); leftover rows
    have cluster -1.
    """
    n = w.shape[0]
    remaining = int(w.sum())
    st = np.zeros(8, dtype=np.int64)
    st[_ST_PREV] = -1
    st[_ST_ACTIVE] = st[_ST_ORD] = n
    st[_ST_REMAINING] = remaining
    r, ptr, prow_end = w.copy(), prow_start[:-1].copy(), prow_start[1:].copy()
    row_cluster = np.full(row_count.shape[0], -1, dtype=np.int64)
    centres = np.empty(remaining // k + 1, dtype=np.int64)
    active, ordv = np.arange(n, dtype=np.int64), order.astype(np.int64)
    done = False
    while not done:
        done = _cluster_kernel(*dd, label, S, rank, prow, row_count, np.int64(k), np.int64(penalty),
                               bool(use_penalty), st, r, ptr, prow_end, row_cluster, centres, active, ordv,
                               np.int64(CHUNK_WORK))
        kaca_core.chunk_done("dbca")
    cid = int(st[_ST_CID])
    return row_cluster, centres[:cid], cid, int(st[_ST_FALLBACK])


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def _present_combos(V: np.ndarray, cols: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct value combinations of columns ``cols`` of ``V``: (combos, index per row)."""
    key = row_keys(V[:, cols])
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return V[first][:, cols], inv.ravel()


def _attribute_groups(V: np.ndarray, dense: list[int], limit: int) -> list[list[int]]:
    """Merge attributes into groups whose number of present value combinations
    stays within ``limit`` (repeatedly the merge giving the fewest combinations)."""
    groups = [[j] for j in dense]
    size = {(j,): len(np.unique(V[:, j])) for j in dense}
    if len(groups) > 32:  # keep the search cheap on very wide tables
        groups.sort(key=lambda g: size[tuple(g)])
        out, cur = [], []
        for g in groups:
            if cur and len(_present_combos(V, cur + g)[0]) > limit:
                out.append(cur)
                cur = []
            cur = cur + g
        return out + ([cur] if cur else [])
    while len(groups) > 1:
        best = None
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                if size[tuple(groups[a])] * size[tuple(groups[b])] <= limit:
                    n = size[tuple(groups[a])] * size[tuple(groups[b])]
                else:
                    n = len(_present_combos(V, groups[a] + groups[b])[0])
                if n <= limit and (best is None or n < best[0]):
                    best = (n, a, b)
        if best is None:
            break
        n, a, b = best
        merged = groups[a] + groups[b]
        size[tuple(merged)] = n
        groups = [g for i, g in enumerate(groups) if i not in (a, b)] + [merged]
    return groups


def _distance_data(point_codes: np.ndarray, hierarchies, int_costs, dense_max: int, group_max: int):
    """Arrays for :func:`_dist`: grouped dense tables and ancestor paths."""
    n, m = point_codes.shape
    V = np.empty((n, m), dtype=np.int32)  # per attribute, index among the values present
    values, tabs = [], {}
    dense, paths = [], []
    for j, h in enumerate(hierarchies):
        u, inv = np.unique(point_codes[:, j], return_inverse=True)
        V[:, j] = inv.ravel()
        values.append(u)
        g = np.asarray(int_costs[j], dtype=np.int64)
        if len(u) <= dense_max:
            lca = h.lca(u[:, None], u[None, :])  # dense LCA table when the hierarchy is small
            tabs[j] = 2 * g[lca] - g[u][:, None] - g[u][None, :]
            dense.append(j)
        else:
            paths.append(j)
    groups = _attribute_groups(V, dense, group_max)
    PG = np.zeros((n, len(groups)), dtype=np.int32)
    tables, tg_off, tg_size, off = [], np.zeros(len(groups), np.int64), np.zeros(len(groups), np.int64), 0
    for gi, cols in enumerate(groups):
        combos, idx = _present_combos(V, cols)
        PG[:, gi] = idx
        c = len(combos)
        tab = np.zeros((c, c), dtype=np.int64)
        for t, j in enumerate(cols):
            tab += tabs[j][combos[:, t][:, None], combos[:, t][None, :]]
        tables.append(tab.ravel())
        tg_off[gi], tg_size[gi] = off, c
        off += c * c
    TG = np.concatenate(tables) if tables else np.zeros(1, np.int64)
    if TG.size and TG.max() < 2**31:
        TG = TG.astype(np.int32)
    PP = np.zeros((n, len(paths)), dtype=np.int32)
    pa, pc, pd_ = [], [], []
    p_off, p_h, pd_off = (np.zeros(len(paths), np.int64) for _ in range(3))
    off_p = off_d = 0
    for t, j in enumerate(paths):
        h, u = hierarchies[j], values[j]
        PP[:, t] = V[:, j]
        anc = h.ancestors[u]  # (values, height) node ids, the node itself below its depth
        pa.append(anc.ravel().astype(np.int32))
        pc.append(np.asarray(int_costs[j], np.int64)[anc].ravel())
        pd_.append(h.depth[u].astype(np.int32))
        p_off[t], p_h[t], pd_off[t] = off_p, anc.shape[1], off_d
        off_p += anc.size
        off_d += len(u)
    cat = lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(1, dt)  # noqa: E731
    return (np.ascontiguousarray(PG), TG, tg_off, tg_size, np.ascontiguousarray(PP), cat(pa, np.int32),
            cat(pc, np.int64), cat(pd_, np.int32), p_off, p_h, pd_off)


def _max_distance(int_costs) -> int:
    return int(sum(2 * int(np.max(g)) for g in int_costs if len(g)))


def cluster_lca(codes: np.ndarray, row_cluster: np.ndarray, n_clusters: int, hierarchies) -> np.ndarray:
    """Closest common generalisation (per attribute the LCA) of each cluster's rows."""
    order = np.argsort(row_cluster, kind="stable")
    rc = row_cluster[order]
    starts = np.flatnonzero(np.r_[True, rc[1:] != rc[:-1]])
    cl = rc[starts]
    out = np.zeros((n_clusters, codes.shape[1]), dtype=np.int32)
    for j, h in enumerate(hierarchies):
        col = codes[order, j]
        mindepth = np.minimum.reduceat(h.depth[col], starts)
        agree = np.ones(len(starts), dtype=bool)
        res = np.zeros(len(starts), dtype=np.int32)  # the root agrees always
        for d in range(1, h.height):
            a = h.ancestors[col, d]
            same = (np.minimum.reduceat(a, starts) == np.maximum.reduceat(a, starts)) & (mindepth >= d)
            agree &= same
            if not agree.any():
                break
            res = np.where(agree, a[starts], res)
        out[cl, j] = res
    return out


# --------------------------------------------------------------------------
# the algorithms
# --------------------------------------------------------------------------
class DBCA(Algorithm):
    """Density-based KNN clustering (Sun, Wang & Li 2008, section 3).

    Clusters of k records around the densest remaining records; leftovers
    join the cluster whose distortion grows least; each cluster is
    generalised to its closest common generalisation. Minimises the
    problem's cost model (priority-weighted WHD when priorities are given).
    See the module docstring for the exact rules and tie-breaks.
    """

    name = "dbca"
    tags = Tags(privacy_models=True, randomised=True)

    def _solve(self, problem: Problem) -> Solution:
        return repair_solution(problem, self._cluster(problem, None))

    # ------------------------------------------------------------------
    def _cluster(self, problem: Problem, penalty: float | None) -> Solution:
        t_start = time.perf_counter()
        table = problem.table
        codes = table.codes
        counts = np.asarray(table.counts, dtype=np.int64)
        hs = table.hierarchies
        k = int(problem.k)
        n_rows = codes.shape[0]
        model = problem.cost
        use_penalty = penalty is not None
        if int(counts.sum()) < k:
            raise ValueError(f"method {self.name!r}: k={k} exceeds the {int(counts.sum())} records of the table")

        # ---- points: distinct QI tuples (+ class label for DBCA:CM)
        if use_penalty:
            lab_codes, _ = pd.factorize(pd.Series(np.asarray(problem.class_labels)), use_na_sentinel=False)
            lab_codes = lab_codes.astype(np.int64)
            key = row_keys(np.column_stack([codes, lab_codes]))
        else:
            lab_codes = np.zeros(n_rows, dtype=np.int64)
            key = row_keys(codes)
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
        inv = inv.ravel()
        n_points = len(first)
        w = np.bincount(inv, weights=counts, minlength=n_points).astype(np.int64)
        prow = np.argsort(inv, kind="stable").astype(np.int64)
        prow_start = np.r_[0, np.cumsum(np.bincount(inv, minlength=n_points))].astype(np.int64)
        point_codes = codes[first]
        point_label = lab_codes[first]

        dd = _distance_data(point_codes, hs, model.int_costs, DENSE_MAX_VALUES, GROUP_MAX_COMBOS)
        max_dist = _max_distance(model.int_costs)
        pen_int = 0
        if use_penalty:
            cap = 2 * max_dist + 1  # any larger penalty ranks like an infinite one
            p = float(penalty) * model.scale
            pen_int = cap if p >= cap else int(round(p))

        rng = problem.rng()
        rank = rng.permutation(n_points).astype(np.int64)

        t0 = time.perf_counter()
        S = _knn_sums(w, k, *dd)
        t_knn = time.perf_counter() - t0
        log.debug("%s: densities (k nearest distances) of %d points in %.2fs", self.name, n_points, t_knn)
        order = np.lexsort((rank, S)).astype(np.int64)  # DistKNN ascending = density descending

        t0 = time.perf_counter()
        row_cluster, centres, n_clusters, n_fallback = _cluster_loop(
            dd, w, point_label, S, order, rank, prow_start, prow, counts, k, pen_int, use_penalty)
        t_cluster = time.perf_counter() - t0

        # ---- leftovers: fewer than k records, each to the least-growing cluster
        t0 = time.perf_counter()
        G = cluster_lca(codes, np.where(row_cluster < 0, n_clusters, row_cluster), n_clusters + 1, hs)[:n_clusters]
        sizes = np.bincount(row_cluster[row_cluster >= 0], weights=counts[row_cluster >= 0],
                            minlength=n_clusters).astype(np.int64)
        left = np.flatnonzero(row_cluster < 0)
        n_left_records = int(counts[left].sum())
        if len(left):
            pos = np.empty(n_points, dtype=np.int64)
            pos[order] = np.arange(n_points)
            left = left[np.lexsort((left, pos[inv[left]]))]  # densest point first, then row order
            gG = sum(np.asarray(model.int_costs[j], np.int64)[G[:, j]] for j in range(len(hs)))
            centre_label = point_label[centres]
            left_cap = min(4 * k * max_dist + 1, 2**62)
            left_pen = 0
            if use_penalty:
                p = float(penalty) * model.scale
                left_pen = left_cap if p >= left_cap else int(round(p))
            big = np.iinfo(np.int64).max
            for row in left:
                t = codes[row]
                Gn = np.stack([h.lca(G[:, j], np.full(n_clusters, t[j], np.int32)) for j, h in enumerate(hs)],
                              axis=1).astype(np.int32)
                gGn = sum(np.asarray(model.int_costs[j], np.int64)[Gn[:, j]] for j in range(len(hs)))
                gt = sum(int(model.int_costs[j][t[j]]) for j in range(len(hs)))
                c_r = int(counts[row])
                growth = sizes * (gGn - gG) + c_r * (gGn - gt)
                if use_penalty and left_pen:
                    growth = growth + min(left_pen * c_r, 2**62) * (centre_label != lab_codes[row])
                ok = sizes + c_r <= 2 * k - 1
                if ok.any() and not ok.all():
                    growth = np.where(ok, growth, big)
                best = int(np.argmin(growth))  # ties: the cluster formed first
                row_cluster[row] = best
                G[best] = Gn[best]
                gG[best] = gGn[best]
                sizes[best] += c_r
        t_left = time.perf_counter() - t0

        out = G[row_cluster]
        info = {
            "cluster_sizes": sizes.tolist(),
            "cluster_of_row": row_cluster,
            "n_clusters": int(n_clusters),
            "n_points": int(n_points),
            "centre_fallbacks": int(n_fallback),
            "leftover_records": n_left_records,
            "tie_break": "seeded random rank per point (np.random.default_rng(seed)); leftovers: first-formed cluster",
            "timings": {"knn": t_knn, "cluster": t_cluster, "leftovers": t_left,
                        "total": time.perf_counter() - t_start},
        }
        if use_penalty:
            info["penalty"] = float(penalty)
        log.info("%s: %d records in %d clusters (%d points, %d centre fallbacks) in %.2fs", self.name,
                 int(counts.sum()), n_clusters, n_points, n_fallback, info["timings"]["total"])
        return Solution(np.ascontiguousarray(out, dtype=np.int32), np.zeros(n_rows, dtype=bool), DBCADetails(**info))


class DBCACM(DBCA):
    """DBCA:CM (Sun, Wang & Li 2008): DBCA whose neighbour choice adds ``penalty`` to the
    distance of a candidate whose class label differs from the centre's, so
    clusters tend to be label-pure and the classification metric CM drops.

    Parameters
    ----------
    penalty : float
        Added distance, in distortion units (uniform WHD: generalising one
        cell leaf -> root costs 1). Default 1.0. Any value above twice the
        largest possible distance acts as "never mix labels unless forced".
        It trades distortion for CM; on full Adult (8 QIs, uniform WHD,
        k=10) DBCA gives distortion 74,120 and CM 0.159, DBCA:CM with
        penalty 0.1: 74,318 / 0.147, 0.5: 77,357 / 0.125, 1.0: 80,172 /
        0.088, 2.0: 82,628 / 0.057.
    """

    name = "dbca-cm"
    tags = replace(DBCA.tags, needs_class_column=True)

    parameters = {"penalty": Interval(Real, 0, None)}

    def __init__(self, penalty: float = 1.0):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""

    def _solve(self, problem: Problem) -> Solution:
        return repair_solution(problem, self._cluster(problem, self.penalty))
