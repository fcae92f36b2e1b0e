"""KACA+: lower-distortion local recoding in KACA's terms (issue 10).

KACA1 (seed 004, Algorithm 1) grows one random small class at a time by its
nearest class; on Adult (8 QIs, k = 10) that leaves a distortion ratio of
about 0.147. KACA+ keeps KACA's cost model -- the closest common
generalisation (Def. 8), the class distance of Def. 10 and the stub/trunk
split of Def. 14, in the exact integer costs of
:class:`~hieranon.metrics.CostModel` -- and searches better, in four steps:

1. **Sweep of common generalisations, cheapest first.** Every record's class
   will print a common generalisation (a node of the product of the
   hierarchies). The sweep visits the *depth vectors* of that product (one
   depth per attribute) in increasing cost of their nodes -- the records'
   cost of being printed there -- and, at each, groups the records not yet
   in a class by their generalisation at that depth vector; every group of
   ``>= k`` records becomes a class. So each record gets the cheapest node
   that still gathers ``k`` unplaced records, and the dense regions settle
   first, at low cost (the agglomerative "cheapest merge first" order, done
   on nodes instead of pairs of classes).
2. **Stubs for the groups that fall short** (second sweep). A group of
   ``t < k`` records at node ``w`` may take a *stub* of ``k - t`` records
   lying under ``w`` from classes already formed whose *trunk* keeps ``>= k``
   records (Def. 14), when the estimated saving for its ``t`` records (their
   cost in the first sweep minus the cost at ``w``) exceeds ``stub_weight``
   times the extra cost of the stub records. With ``stub_rows`` (default) the
   stub may be any records under ``w`` of any class with a surplus (the
   donor's node need not lie under ``w``; its trunk can only get cheaper);
   without, only records of classes whose node lies under ``w``. Donor
   classes are tried from the most expensive down, and only while their
   node's cost leaves the group's saving above ``stub_weight`` times the
   stub's mean extra cost. Besides lowering distortion it trims oversized
   classes (lower DM, CAVG).
3. **KACA finishing.** Records left when the sweep stops (fewer than ``k``
   under the root, or the ``max_vectors`` budget reached) are merged as KACA
   does -- nearest class by the Def. 10 distance with the stub rule -- growing
   each small class until it reaches ``k``, the cheapest-to-complete classes
   first.
4. **Refinement** (local search, ``refine``): for each class and each of its
   distinct tuples (a *unit*), the class where the unit fits best (least
   Def. 10 distance of the unit to the whole class, by KACA's exact
   branch-and-bound over the class trie); the unit moves there, or is
   swapped with a unit of that class, when total distortion falls (or stays
   and DM falls) and both classes keep ``>= k`` records. Moves repeat until
   none improves (or the ``refine_budget`` of searches is spent). On tables
   of up to 1,000 rows every other class is tried as a partner.

``restarts`` runs steps 1-4 with different tie orders of equal-cost depth
vectors (derived from the seed), every other run without stubs, and keeps
the least distortion: 8 runs by default on tables of up to 2,000 rows, one
above. The output is deterministic for a seed; no step depends on timing.
Measurements: ``benchmarks/results/kacaplus_trials.md`` (Adult) and
``benchmarks/results/gap_summary.csv`` (gap to the exact optimum).

Limits: the sweep enumerates depth vectors lazily, in a heap, and stops after
``max_vectors`` of them (50,000 when the product of the hierarchy heights
exceeds ``2**22``); step 3 finishes what is left. When that product exceeds
``2**62`` the sweep is skipped (step 3 does everything). With unbalanced
hierarchies depth stands for level (SPEC section 1), as in the cost model;
the order key of a depth is then the largest cost of a node at that depth.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from numba import njit

from ..metrics import CostModel
from ..table import group
from . import kaca_core as K
from .details import KACAPlusDetails
from .base import Algorithm, Problem, Solution, log
from .params import Interval, NoneValue, Options

__all__ = ["CONSTRUCTIONS", "KACAPlus", "auto_row_stub_weight", "auto_stub_weight", "kacaplus_codes"]

#: Weight that makes every class look small enough for a whole merge in
#: :func:`hieranon.algorithms.kaca._nearest_fast` (the refinement's searches).
_BIG = 1 << 40
_W_MAX = np.iinfo(np.int32).max
#: Smallest size of the sweep's hash table of groups (a power of two).
_MIN_TABLE = 16
#: Depth vectors a sweep visits at most when the product of the heights exceeds 2**22.
_SPARSE_MAX_VECTORS = 50_000
#: Default number of runs (``restarts=None``) on tables of at most AUTO_RESTARTS_ROWS rows.
AUTO_RESTARTS = 8
AUTO_RESTARTS_ROWS = 2_000
#: First steps that can be chosen (the last two are the earlier trials of issue 10).
CONSTRUCTIONS = ("sweep", "growth", "cheapest")


# =====================================================================
# step 1-2: the sweep
# =====================================================================
@njit(cache=True)
def _mix(h, x):
    return h ^ (x + 0x9E3779B97F4A7C15 + (h << 6) + (h >> 2))


@njit(cache=True)
def _vec_less(a0, a1, a2, b0, b1, b2):
    return a0 < b0 or (a0 == b0 and (a1 < b1 or (a1 == b1 and a2 < b2)))


@njit(cache=True)
def _vheap_push(hk, hn, k0, k1, k2):
    i = hn
    while i > 0:
        p = (i - 1) >> 1
        if not _vec_less(k0, k1, k2, hk[p, 0], hk[p, 1], hk[p, 2]):
            break
        hk[i, 0] = hk[p, 0]
        hk[i, 1] = hk[p, 1]
        hk[i, 2] = hk[p, 2]
        i = p
    hk[i, 0] = k0
    hk[i, 1] = k1
    hk[i, 2] = k2
    return hn + 1


@njit(cache=True)
def _vheap_pop(hk, hn):
    hn -= 1
    if hn > 0:
        a0 = hk[hn, 0]
        a1 = hk[hn, 1]
        a2 = hk[hn, 2]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= hn:
                break
            if c + 1 < hn and _vec_less(hk[c + 1, 0], hk[c + 1, 1], hk[c + 1, 2], hk[c, 0], hk[c, 1], hk[c, 2]):
                c += 1
            if not _vec_less(hk[c, 0], hk[c, 1], hk[c, 2], a0, a1, a2):
                break
            hk[i, 0] = hk[c, 0]
            hk[i, 1] = hk[c, 1]
            hk[i, 2] = hk[c, 2]
            i = c
        hk[i, 0] = a0
        hk[i, 1] = a1
        hk[i, 2] = a2
    return hn


@njit(cache=True)
def _seen_add(code, seen, dense):
    """Mark a depth vector visited; False if it already was."""
    if dense:
        if seen[code] != 0:
            return False
        seen[code] = 1
        return True
    mask = seen.shape[0] - 1
    s = _mix(0, code) & mask
    while seen[s] != -1:
        if seen[s] == code:
            return False
        s = (s + 1) & mask
    seen[s] = code
    return True


@njit(cache=True)
def _generalise(codes, base, up, gt):
    """Write into ``gt`` the ancestors of ``codes`` at the depth vector whose
    per-attribute offsets into ``up`` are ``base``; return their hash."""
    h = 0
    for j in range(gt.shape[0]):
        g = up[base[j] + codes[j]]
        gt[j] = g
        h = _mix(h, g)
    return h


@njit(cache=True)
def _find_group(tab, h, gt, stamp, tmask):
    """Slot of the group printed as ``gt`` (hash ``h``) in the sweep's table
    of the current depth vector (rows stamped ``stamp``), or -1."""
    s = h & tmask
    while tab[s, 0] == stamp:
        if tab[s, 9] == h:
            eq = True
            for j in range(gt.shape[0]):
                if tab[s, 10 + j] != gt[j]:
                    eq = False
                    break
            if eq:
                return s
        s = (s + 1) & tmask
    return -1


@njit(cache=True)
def _donor_append(tab, s, x, dnext):
    """Append ``x`` (a donor class, or a donor record) to group ``s``'s donor list."""
    dnext[x] = -1
    if tab[s, 6] < 0:
        tab[s, 6] = x
    else:
        dnext[tab[s, 8]] = x
    tab[s, 8] = x


@njit(cache=True)
def _unlink_row(r, q, cnt, csize, chead, ctail, rnext, rprev):
    """Take row ``r`` out of class ``q`` (member list and size)."""
    _detach(r, q, chead, ctail, rnext, rprev)
    csize[q] -= cnt[r]


@njit(cache=True)
def _append_row(r, c, cnt, csize, cls, chead, ctail, rnext, rprev):
    """Put row ``r`` at the end of class ``c`` (member list, size, row -> class)."""
    _append(r, c, chead, ctail, rnext, rprev)
    csize[c] += cnt[r]
    cls[r] = c


@njit(cache=True)
def _sweep_kernel(R, cnt, k, up, off, nn, hh, dep, dc, dcmin, exact_dc, gfl, goff, est, beta, tie, maxvec,
                  cls, csize, cg, CT, chead, ctail, rnext, rprev, U, out_n,
                  seen, dense, hk, tab, dnext,
                  rowslot, gt, sur, rowd, tk):
    """Steps 1 (and 2 when ``beta >= 0``). ``U[:out_n[0]]`` are the rows not in a
    class on entry and on exit; ``out_n[1]`` the number of classes; returns the
    number of depth vectors visited."""
    _n, m = R.shape
    radix = np.ones(m, np.int64)
    tot = 1
    for j in range(m - 1, -1, -1):
        radix[j] = tot
        tot *= hh[j]
    code0 = 0
    c0 = 0
    for j in range(m):
        code0 += (hh[j] - 1) * radix[j]
        c0 += dc[j, hh[j] - 1]
    hn = _vheap_push(hk, 0, c0, 0, code0)
    _seen_add(code0, seen, dense)
    nU = out_n[0]
    ncls = out_n[1]
    dvec = np.zeros(m, np.int64)
    base = np.zeros(m, np.int64)
    stamp = 0
    nvec = 0
    nsur = 0
    ncls_start = ncls
    while hn > 0 and nU > 0 and nvec < maxvec:
        vc = hk[0, 0]
        vs = hk[0, 1]
        code = hk[0, 2]
        hn = _vheap_pop(hk, hn)
        x = code
        for j in range(m):
            dvec[j] = x // radix[j]
            x -= dvec[j] * radix[j]
        for j in range(m):  # successors: one attribute one level up
            if dvec[j] > 0 and hn < hk.shape[0]:
                nc = code - radix[j]
                if _seen_add(nc, seen, dense):
                    k1 = vs + 1 if tie == 0 else _mix(tie, nc) & 0xFFFFFFFF
                    hn = _vheap_push(hk, hn, vc - dc[j, dvec[j]] + dc[j, dvec[j] - 1], k1, nc)
        nvec += 1
        stamp += 1
        ncls_start = ncls
        # group the rows not in a class by their generalisation here
        tsz = _MIN_TABLE
        while tsz < 2 * nU:
            tsz *= 2
        tmask = tsz - 1
        for j in range(m):
            base[j] = off[j] + dvec[j] * nn[j]
        for ii in range(nU):
            r = U[ii]
            h = _generalise(R[r], base, up, gt)
            s = h & tmask
            while True:
                if tab[s, 0] != stamp:
                    tab[s, 0] = stamp
                    tab[s, 1] = r
                    tab[s, 2] = 0
                    tab[s, 3] = -1
                    tab[s, 4] = 0
                    tab[s, 5] = 0
                    tab[s, 6] = -1
                    tab[s, 7] = -1
                    tab[s, 9] = h
                    for j in range(m):
                        tab[s, 10 + j] = gt[j]
                    break
                if tab[s, 9] == h:
                    eq = True
                    for j in range(m):
                        if tab[s, 10 + j] != gt[j]:
                            eq = False
                            break
                    if eq:
                        break
                s = (s + 1) & tmask
            tab[s, 2] += cnt[r]
            tab[s, 4] += cnt[r] * est[r]
            rowslot[ii] = s
        promising = False
        cgmin = 1e300
        if beta >= 0:
            vcmin = 0
            for j in range(m):
                vcmin += dcmin[j, dvec[j]]
            for ii in range(nU):
                s = rowslot[ii]
                if tab[s, 2] < k and tab[s, 1] == U[ii] and tab[s, 4] > tab[s, 2] * vcmin:
                    if exact_dc:
                        gw = vc
                    else:
                        gw = 0
                        for j in range(m):
                            gw += gfl[goff[j] + up[off[j] + dvec[j] * nn[j] + R[U[ii], j]]]
                    tab[s, 7] = gw
                    if tab[s, 4] > tab[s, 2] * gw:
                        promising = True
                        # a donor whose node costs less than this cannot pay off here
                        # (single-record stubs: a donor whose cost gap exceeds the mean
                        # the stub can afford per record)
                        div = beta * (k - tab[s, 2]) if rowd else beta
                        lim = gw - (tab[s, 4] - tab[s, 2] * gw) / div if beta > 0 else -1e300
                        cgmin = min(cgmin, lim)
        if promising:
            out_n[2] += 1
            # stub donors: classes with a surplus whose node lies under a short group's node
            ns = 0
            for i in range(nsur):
                c = sur[i]
                if csize[c] <= k:
                    continue
                sur[ns] = c
                ns += 1
            nsur = ns
            # classes were formed in order of node cost: walking the list
            # backwards puts each group's donors closest (most expensive) first
            for i in range(nsur - 1, -1, -1):
                c = sur[i]
                if cg[c] < cgmin:
                    break  # classes come in order of node cost: the rest are cheaper still
                if rowd:
                    # single records of any class with a surplus that lie under a short group's node
                    rr = ctail[c]
                    while rr >= 0:
                        out_n[4] += 1
                        s = _find_group(tab, _generalise(R[rr], base, up, gt), gt, stamp, tmask)
                        if s >= 0 and tab[s, 2] < k and tab[s, 7] >= 0:
                            tab[s, 5] += cnt[rr]
                            _donor_append(tab, s, rr, dnext)
                        rr = rprev[rr]
                    continue
                ok = True
                for j in range(m):
                    if dep[j, CT[c, j]] < dvec[j]:
                        ok = False
                        break
                if not ok:
                    continue
                out_n[4] += 1
                s = _find_group(tab, _generalise(CT[c], base, up, gt), gt, stamp, tmask)
                if s >= 0 and tab[s, 2] < k:
                    tab[s, 5] += csize[c] - k
                    _donor_append(tab, s, c, dnext)
        w = 0
        for ii in range(nU):
            r = U[ii]
            s = rowslot[ii]
            tc = tab[s, 2]
            ok = tc >= k or tab[s, 3] >= 0
            if not ok and promising and tab[s, 7] >= 0 and tab[s, 3] == -1 and tab[s, 6] >= 0 and tc + tab[s, 5] >= k:
                gw = tab[s, 7]
                ben = tab[s, 4] - tc * gw
                need = k - tc
                cst = 0
                q = tab[s, 6]
                if rowd:
                    rr = q
                    while need > 0 and rr >= 0:
                        q = cls[rr]
                        if q < ncls_start and csize[q] - tk[q] - cnt[rr] >= k:
                            tk[q] += cnt[rr]
                            cst += cnt[rr] * (gw - cg[q])
                            need -= cnt[rr]
                        rr = dnext[rr]
                    rr = tab[s, 6]
                    while rr >= 0:
                        q = cls[rr]
                        if q >= 0:
                            tk[q] = 0
                        rr = dnext[rr]
                    q = -1
                while need > 0 and q >= 0:
                    rr = ctail[q]
                    left = csize[q]
                    while need > 0 and rr >= 0 and left - cnt[rr] >= k:
                        left -= cnt[rr]
                        cst += cnt[rr] * (gw - cg[q])
                        need -= cnt[rr]
                        rr = rprev[rr]
                    q = dnext[q]
                if need <= 0 and ben > beta * cst:
                    ok = True
                else:
                    tab[s, 3] = -2  # decided: no stub for this group
            if ok:
                if tab[s, 3] < 0:
                    c = ncls
                    ncls += 1
                    tab[s, 3] = c
                    csize[c] = 0
                    chead[c] = -1
                    ctail[c] = -1
                    gw = 0
                    for j in range(m):
                        v = up[off[j] + dvec[j] * nn[j] + R[r, j]]
                        CT[c, j] = v
                        gw += gfl[goff[j] + v]
                    cg[c] = gw
                    if tc < k:
                        # the stub: rows from the end of each donor's list (Def. 14)
                        need = k - tc
                        q = tab[s, 6]
                        if rowd:
                            rr = q
                            while need > 0 and rr >= 0:
                                q = cls[rr]
                                nx = dnext[rr]
                                if q < ncls_start and csize[q] - cnt[rr] >= k:
                                    _unlink_row(rr, q, cnt, csize, chead, ctail, rnext, rprev)
                                    _append_row(rr, c, cnt, csize, cls, chead, ctail, rnext, rprev)
                                    need -= cnt[rr]
                                rr = nx
                            q = -1
                        while need > 0 and q >= 0:
                            while need > 0 and ctail[q] >= 0 and csize[q] - cnt[ctail[q]] >= k:
                                rr = ctail[q]
                                _unlink_row(rr, q, cnt, csize, chead, ctail, rnext, rprev)
                                _append_row(rr, c, cnt, csize, cls, chead, ctail, rnext, rprev)
                                need -= cnt[rr]
                            q = dnext[q]
                _append_row(r, tab[s, 3], cnt, csize, cls, chead, ctail, rnext, rprev)
            else:
                U[w] = r
                w += 1
        nU = w
        if beta >= 0:
            for c in range(ncls_start, ncls):
                if csize[c] > k:
                    sur[nsur] = c
                    nsur += 1
    out_n[0] = nU
    out_n[1] = ncls
    return nvec


def _up_tables(hierarchies):
    """Ancestor of every node at every depth, flattened ``[off[j] + d*nn[j] + v]``."""
    m = len(hierarchies)
    nn = np.array([h.n_nodes for h in hierarchies], dtype=np.int64)
    hh = np.array([h.height for h in hierarchies], dtype=np.int64)
    off = np.zeros(m, dtype=np.int64)
    parts = []
    pos = 0
    for j, h in enumerate(hierarchies):
        a = np.ascontiguousarray(h.ancestors[:, : h.height].T, dtype=np.int32).ravel()
        off[j] = pos
        parts.append(a)
        pos += a.size
    dep = np.zeros((m, int(nn.max())), dtype=np.int64)
    for j, h in enumerate(hierarchies):
        dep[j, : h.n_nodes] = h.depth
    return np.concatenate(parts), off, nn, hh, dep


def _depth_costs(hierarchies, cost: CostModel, lowest: bool = False) -> np.ndarray:
    """Order key of a depth per attribute: the largest (``lowest``: smallest)
    integer cost of a node at that depth (for leaf-balanced WHD all nodes at a
    depth cost the same)."""
    hmax = max(h.height for h in hierarchies)
    out = np.zeros((len(hierarchies), hmax), dtype=np.int64)
    for j, h in enumerate(hierarchies):
        g = np.asarray(cost.int_costs[j], dtype=np.int64)
        for d in range(h.height):
            sel = h.depth == d
            out[j, d] = (int(g[sel].min()) if lowest else int(g[sel].max())) if sel.any() else 0
    return out


class _SweepData:
    """Arrays of the sweep that do not change between runs."""

    def __init__(self, codes, counts, hierarchies, cost, max_vectors):
        self.codes = codes
        self.counts = counts
        self.n, self.m = codes.shape
        self.up, self.off, self.nn, self.hh, self.dep = _up_tables(hierarchies)
        self.dc = _depth_costs(hierarchies, cost)
        self.dcmin = _depth_costs(hierarchies, cost, lowest=True)
        # every node at a depth costs the same (leaf-balanced WHD, priorities)
        self.exact_dc = bool(np.array_equal(self.dc, self.dcmin))
        self.hd = K.hierarchy_data(hierarchies, cost)
        prod = 1.0
        for h in self.hh:
            prod *= float(h)
        self.total = prod
        self.ok = prod < 2.0**62
        self.dense = prod <= 2**22
        # beyond a dense visited-set the heap and the hash set grow with the
        # vectors visited: cap them (step 3 finishes what is left)
        self.maxvec = int(max_vectors) if self.dense else min(int(max_vectors), _SPARSE_MAX_VECTORS)
        self.stats = {"vectors_with_short_groups": 0, "donor_checks": 0}
        size = _MIN_TABLE  # as the kernel sizes its table: at least this, at least 2n
        while size < 2 * max(self.n, 1):
            size *= 2
        self.tsize = size


def _sweep(data: _SweepData, k: int, est: np.ndarray | None, beta: float, tie: int, rowd: bool = False):
    """One sweep. Returns (row -> class id or -1, number of classes, vectors visited)."""
    n, m = data.n, data.m
    cls = np.full(n, -1, dtype=np.int64)
    if not data.ok or n == 0:
        return cls, 0, 0
    csize = np.zeros(n + 1, dtype=np.int64)
    cg = np.zeros(n + 1, dtype=np.int64)
    CT = np.zeros((n + 1, m), dtype=np.int32)
    chead = np.full(n + 1, -1, dtype=np.int64)
    ctail = np.full(n + 1, -1, dtype=np.int64)
    rnext = np.full(n, -1, dtype=np.int64)
    rprev = np.full(n, -1, dtype=np.int64)
    U = np.arange(n, dtype=np.int64)
    out_n = np.array([n, 0, 0, 0, 0], dtype=np.int64)
    cap = int(min(data.total, data.maxvec * m + 1)) + 1
    if data.dense:
        seen = np.zeros(int(data.total), dtype=np.int8)
    else:
        sz = 1
        while sz < 2 * cap:
            sz *= 2
        seen = np.full(sz, -1, dtype=np.int64)
    hk = np.zeros((cap, 3), dtype=np.int64)
    ts = data.tsize
    est = np.zeros(n, dtype=np.int64) if est is None else np.ascontiguousarray(est, dtype=np.int64)
    nvec = _sweep_kernel(data.codes, data.counts, int(k), data.up, data.off, data.nn, data.hh, data.dep, data.dc,
                         data.dcmin, data.exact_dc,
                         data.hd[8], data.hd[7], est, float(beta), int(tie), data.maxvec,
                         cls, csize, cg, CT, chead, ctail, rnext, rprev, U, out_n,
                         seen, bool(data.dense), hk, np.zeros((ts, 10 + m), dtype=np.int64),
                         np.full(n + 1, -1, dtype=np.int64), np.zeros(n, dtype=np.int64),
                         np.zeros(m, dtype=np.int64), np.zeros(n + 1, dtype=np.int64), bool(rowd),
                         np.zeros(n + 1, dtype=np.int64))
    data.stats = {"vectors_with_short_groups": int(out_n[2]), "donor_checks": int(out_n[4])}
    return cls, int(out_n[1]), int(nvec)


# =====================================================================
# class state shared with KACA's kernels
# =====================================================================
def _kaca_state(codes: np.ndarray, counts: np.ndarray, k: int, hd, perm, whole: bool = False, spare: int = 0):
    """KACA's arrays for the classes of a code matrix (identical tuples are one
    class): tuples, sizes, member lists, the class trie. ``whole`` builds the
    trie with every class's true size as its weight (whole merges, for the
    refinement); ``spare`` adds unused class slots at the end."""
    n, m = codes.shape
    ec = group(codes, counts)
    ncls = ec.n_classes
    T = np.zeros((ncls + spare, m), dtype=np.int32)
    T[:ncls] = ec.keys
    size = np.zeros(ncls + spare, dtype=np.int64)
    size[:ncls] = ec.sizes
    alive = np.zeros(ncls + spare, dtype=np.bool_)
    alive[:ncls] = True
    rc = ec.row_class.astype(np.int64)
    order = np.argsort(rc, kind="stable")
    nxt = np.full(n, -1, dtype=np.int64)
    prv = np.full(n, -1, dtype=np.int64)
    same = rc[order[:-1]] == rc[order[1:]]
    nxt[order[:-1][same]] = order[1:][same]
    prv[order[1:][same]] = order[:-1][same]
    head = np.full(ncls + spare, -1, dtype=np.int64)
    tail = np.full(ncls + spare, -1, dtype=np.int64)
    if n:
        b = np.flatnonzero(np.r_[True, ~same])
        head[rc[order[b]]] = order[b]
        e = np.r_[b[1:] - 1, n - 1]
        tail[rc[order[e]]] = order[e]
    tr, used, class_leaf = K.build_trie(T[:ncls], size[:ncls], (1 << 30) if whole else k, perm, hd)
    if spare:
        class_leaf = np.r_[class_leaf, np.full(spare, -1, dtype=np.int32)].astype(np.int32)
    cap = len(tr[0])
    st = np.zeros(K.S_LEN, dtype=np.int64)
    st[K.S_TUSED] = used
    st[K.S_TFREE] = -1
    tot = int(hd[2].sum())
    return {
        "T": T, "size": size, "alive": alive, "head": head, "tail": tail, "nxt": nxt, "prv": prv,
        "tr": tr, "class_leaf": class_leaf, "st": st, "hp": np.zeros((cap, 4), dtype=np.int64),
        "stk": np.zeros((cap, 3), dtype=np.int64), "xa": np.zeros(tot, dtype=np.int64),
        "xb": np.zeros(tot, dtype=np.int64), "ea": np.zeros(tot, dtype=np.int64),
        "eb": np.zeros(tot, dtype=np.int64), "ties": np.zeros(max(ncls + spare, 1), dtype=np.int64),
        "newtup": np.zeros(m, dtype=np.int32), "ncls": ncls,
    }


def _grow_state(S, m):
    S["tr"], S["hp"], S["stk"] = K.grow_trie(S["tr"], S["hp"], S["stk"], int(S["st"][K.S_TUSED]), m)


def _state_codes(S, n, m):
    out = np.zeros((n, m), dtype=np.int32)
    K.rows_to_codes(S["T"], S["alive"], S["head"], S["nxt"], out)
    return out


# =====================================================================
# step 3: KACA finishing (and the "growth"/"cheapest" constructions)
# =====================================================================
@njit(cache=True)
def _nearest_all(k, T, size, alive, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st, xa, xb, ea, eb,
                 class_leaf, stk, out, tgt):
    """Def. 10 distance (stub rule) from every small class to its nearest class."""
    for C in range(T.shape[0]):
        out[C] = -1
        tgt[C] = -1
        if alive[C] and size[C] < k:
            best, nt = K.nearest_fast(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st,
                                       xa, xb, ea, eb, class_leaf, stk)
            if nt > 0:
                out[C] = best
                tgt[C] = ties[0]


@njit(cache=True)
def _growth_loop(k, order, pos, T, size, alive, head, tail, nxt, prv, cnt, unit, hd, perm, tr, class_leaf, st,
                 hp, stk, xa, xb, ea, eb, ties, newtup):
    """Take the small classes in ``order``; grow each by its nearest class (or
    that class's stub, Def. 14) until it holds ``>= k`` records. Returns 2 when
    the trie needs room (call again), 0 when done."""
    m = T.shape[1]
    while pos[0] < order.shape[0]:
        C = pos[1] if pos[1] >= 0 else order[pos[0]]
        if not alive[C] or size[C] >= k:
            pos[0] += 1
            pos[1] = -1
            continue
        if st[K.S_TUSED] + m + 1 > tr[0].shape[0]:
            pos[1] = C
            return 2
        _best, nt = K.nearest_fast(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st,
                                   xa, xb, ea, eb, class_leaf, stk)
        if nt == 0:  # a single class in the table: nothing to merge with
            pos[0] += 1
            pos[1] = -1
            continue
        dist, _kind, e = K.merge_classes(C, ties[0], k, T, size, alive, head, tail, nxt, prv, cnt, unit, hd, perm, tr, st,
                                 class_leaf, newtup)
        st[K.S_MERGES] += 1
        st[K.S_DSUM] += dist
        pos[1] = e
    return 0


@njit(cache=True)
def _hpush_f(hk, hc, hv, n, key, c, v):
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] < key or (hk[p] == key and hc[p] <= c):
            break
        hk[i] = hk[p]
        hc[i] = hc[p]
        hv[i] = hv[p]
        i = p
    hk[i] = key
    hc[i] = c
    hv[i] = v
    return n + 1


@njit(cache=True)
def _hpop_f(hk, hc, hv, n):
    n -= 1
    if n > 0:
        key = hk[n]
        c = hc[n]
        v = hv[n]
        i = 0
        while True:
            a = 2 * i + 1
            if a >= n:
                break
            if a + 1 < n and (hk[a + 1] < hk[a] or (hk[a + 1] == hk[a] and hc[a + 1] < hc[a])):
                a += 1
            if hk[a] > key or (hk[a] == key and hc[a] >= c):
                break
            hk[i] = hk[a]
            hc[i] = hc[a]
            hv[i] = hv[a]
            i = a
        hk[i] = key
        hc[i] = c
        hv[i] = v
    return n


@njit(cache=True)
def _requery(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st, xa, xb, ea, eb, class_leaf, stk,
             ver, tgt, tver, hk, hc, hv, hn):
    best, nt = K.nearest_fast(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st,
                               xa, xb, ea, eb, class_leaf, stk)
    if nt == 0:
        return hn
    c2 = ties[0]
    tgt[C] = c2
    tver[C] = ver[c2]
    ver[C] += 1
    w = min(size[c2], k - size[C])
    return _hpush_f(hk, hc, hv, hn, best / max(w, 1), C, ver[C])


@njit(cache=True)
def _cheapest_loop(k, T, size, alive, head, tail, nxt, prv, cnt, unit, hd, perm, tr, class_leaf, st, hp, stk,
                   xa, xb, ea, eb, ties, newtup, ver, tgt, tver, hk, hc, hv, hstate):
    """Agglomerative order (an issue-10 trial): always the small class whose
    nearest merge costs least per record it gains, with lazy re-evaluation."""
    m = T.shape[1]
    hn = hstate[0]
    if hstate[1] == 0:
        for C in range(T.shape[0]):
            if alive[C] and size[C] < k:
                hn = _requery(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st, xa, xb, ea, eb,
                              class_leaf, stk, ver, tgt, tver, hk, hc, hv, hn)
        hstate[1] = 1
    while hn > 0:
        if st[K.S_TUSED] + m + 1 > tr[0].shape[0]:
            hstate[0] = hn
            return 2
        C = hc[0]
        v = hv[0]
        hn = _hpop_f(hk, hc, hv, hn)
        if not alive[C] or v != ver[C] or size[C] >= k:
            continue
        c2 = tgt[C]
        if c2 < 0 or not alive[c2] or tver[C] != ver[c2]:
            hn = _requery(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st, xa, xb, ea, eb,
                          class_leaf, stk, ver, tgt, tver, hk, hc, hv, hn)
            continue
        dist, _kind, e = K.merge_classes(C, c2, k, T, size, alive, head, tail, nxt, prv, cnt, unit, hd, perm, tr, st,
                                 class_leaf, newtup)
        st[K.S_MERGES] += 1
        st[K.S_DSUM] += dist
        ver[C] += 1
        ver[c2] += 1
        ver[e] += 1
        for x in (C, c2, e):
            if alive[x] and size[x] < k and hv.shape[0] - hn > 1:
                hn = _requery(x, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st, xa, xb, ea, eb,
                              class_leaf, stk, ver, tgt, tver, hk, hc, hv, hn)
    hstate[0] = hn
    return 0


def _kaca_args(S):
    return (S["T"], S["size"], S["alive"], S["head"], S["tail"], S["nxt"], S["prv"])


def _complete(codes, counts, hierarchies, cost, k, hd, perm, order_kind="dense", rng=None):
    """Merge every class of size < k, KACA-style (step 3, and the "growth"
    and "cheapest" constructions). Returns the codes."""
    n, m = codes.shape
    unit = bool((counts == 1).all())
    S = _kaca_state(codes, counts, k, hd, perm)
    ncls = S["ncls"]
    T, size, alive, head, tail, nxt, prv = _kaca_args(S)
    if not (size[:ncls] < k).any():
        return codes
    if order_kind == "cheapest":
        ver = np.zeros(ncls, dtype=np.int64)
        tgt = np.full(ncls, -1, dtype=np.int64)
        tver = np.zeros(ncls, dtype=np.int64)
        cap = 8 * ncls + 16
        hk = np.zeros(cap)
        hc = np.zeros(cap, dtype=np.int64)
        hv = np.zeros(cap, dtype=np.int64)
        hstate = np.zeros(2, dtype=np.int64)
        while True:
            status = _cheapest_loop(k, T, size, alive, head, tail, nxt, prv, counts, unit, hd, perm, S["tr"],
                                    S["class_leaf"], S["st"], S["hp"], S["stk"], S["xa"], S["xb"], S["ea"], S["eb"],
                                    S["ties"], S["newtup"], ver, tgt, tver, hk, hc, hv, hstate)
            if status != 2:
                break
            _grow_state(S, m)
    else:
        small = np.flatnonzero(size[:ncls] < k)
        if order_kind == "random":
            order = (rng or np.random.default_rng(0)).permutation(small)
        else:
            d = np.zeros(ncls, dtype=np.int64)
            tg = np.zeros(ncls, dtype=np.int64)
            _nearest_all(k, T, size, alive, unit, tail, prv, counts, hd, perm, S["tr"], S["hp"], S["ties"], S["st"],
                         S["xa"], S["xb"], S["ea"], S["eb"], S["class_leaf"], S["stk"], d, tg)
            # cost per record still needed: the cheapest to complete first
            key = d[small] / np.maximum(k - size[small], 1)
            order = small[np.argsort(key, kind="stable")]
        while len(order):
            pos = np.array([0, -1], dtype=np.int64)
            while True:
                status = _growth_loop(k, order.astype(np.int64), pos, *_kaca_args(S), counts, unit, hd, perm,
                                      S["tr"], S["class_leaf"], S["st"], S["hp"], S["stk"], S["xa"], S["xb"],
                                      S["ea"], S["eb"], S["ties"], S["newtup"])
                if status != 2:
                    break
                _grow_state(S, m)
            # a stub of indivisible counted rows may leave its trunk below k: grow those too
            T, size, alive = S["T"], S["size"], S["alive"]
            order = np.flatnonzero(alive & (size < k))
            if len(order) and alive.sum() == 1:
                break
    return _state_codes(S, n, m)


# =====================================================================
# step 4: refinement (unit relocations and swaps)
# =====================================================================
@njit(cache=True)
def _tuple_cost(tup, hd):
    g_flat = hd[8]
    nd_off = hd[7]
    s = 0
    for j in range(tup.shape[0]):
        s += g_flat[nd_off[j] + tup[j]]
    return s


@njit(cache=True)
def _detach(r, c, head, tail, nxt, prv):
    p = prv[r]
    q = nxt[r]
    if p >= 0:
        nxt[p] = q
    else:
        head[c] = q
    if q >= 0:
        prv[q] = p
    else:
        tail[c] = p
    nxt[r] = -1
    prv[r] = -1


@njit(cache=True)
def _append(r, c, head, tail, nxt, prv):
    prv[r] = tail[c]
    nxt[r] = -1
    if tail[c] >= 0:
        nxt[tail[c]] = r
    else:
        head[c] = r
    tail[c] = r


@njit(cache=True)
def _retuple(c, tup, T, size, alive, head, tail, nxt, prv, perm, tr, st, class_leaf, hd):
    """Class ``c`` now prints ``tup``: update the trie; a class already printing
    ``tup`` absorbs it (Def. 2). Returns the class holding ``c``'s rows."""
    m = T.shape[1]
    same = True
    for j in range(m):
        if T[c, j] != tup[j]:
            same = False
            break
    if same:
        K.trie_refresh(c, min(size[c], _W_MAX), tr, class_leaf)
        return c
    K.trie_remove(c, tr, st, class_leaf)
    e = K.trie_lookup(tup, perm, tr[0])
    if e >= 0:
        if head[c] >= 0:
            if tail[e] >= 0:
                nxt[tail[e]] = head[c]
                prv[head[c]] = tail[e]
            else:
                head[e] = head[c]
            tail[e] = tail[c]
        head[c] = -1
        tail[c] = -1
        size[e] += size[c]
        size[c] = 0
        alive[c] = False
        K.trie_refresh(e, min(size[e], _W_MAX), tr, class_leaf)
        return e
    for j in range(m):
        T[c, j] = tup[j]
    K.trie_insert(c, tup, min(size[c], _W_MAX), perm, tr, st, class_leaf, hd)
    return c


@njit(cache=True)
def _units(X, head, nxt, uid, cnt, buf, ubeg, ucnt):
    """Rows of class ``X`` grouped by distinct tuple (unit): unit ``i`` is
    ``buf[ubeg[i]:ubeg[i+1]]`` with ``ucnt[i]`` records. Returns the number of units."""
    p = 0
    r = head[X]
    while r >= 0:
        buf[p] = r
        p += 1
        r = nxt[r]
    if p < 48:
        for i in range(1, p):
            x = buf[i]
            ux = uid[x]
            j = i - 1
            while j >= 0 and (uid[buf[j]] > ux or (uid[buf[j]] == ux and buf[j] > x)):
                buf[j + 1] = buf[j]
                j -= 1
            buf[j + 1] = x
    else:
        keys = np.empty(p, dtype=np.int64)
        for i in range(p):
            keys[i] = uid[buf[i]]
        o = np.argsort(keys, kind="mergesort")
        cp = buf[:p].copy()
        for i in range(p):
            buf[i] = cp[o[i]]
    q = 0
    for i in range(p):
        if i == 0 or uid[buf[i]] != uid[buf[i - 1]]:
            ubeg[q] = i
            ucnt[q] = 0
            q += 1
        ucnt[q - 1] += cnt[buf[i]]
    ubeg[q] = p
    return q


@njit(cache=True)
def _rest_lcas(R, buf, ubeg, q, hd, pre, suf, rest):
    """``rest[i]`` = closest common generalisation of the class without unit ``i``."""
    m = R.shape[1]
    for i in range(q):
        r = buf[ubeg[i]]
        for j in range(m):
            pre[i + 1, j] = R[r, j] if i == 0 else K.lca_code(j, pre[i, j], R[r, j], hd)
    for i in range(q - 1, -1, -1):
        r = buf[ubeg[i]]
        for j in range(m):
            suf[i, j] = R[r, j] if i == q - 1 else K.lca_code(j, suf[i + 1, j], R[r, j], hd)
    for i in range(q):
        for j in range(m):
            if i == 0:
                rest[i, j] = suf[1, j]
            elif i == q - 1:
                rest[i, j] = pre[i, j]
            else:
                rest[i, j] = K.lca_code(j, pre[i, j], suf[i + 1, j], hd)


@njit(cache=True)
def _glca(j, a, b, hd):
    return hd[8][hd[7][j] + K.lca_code(j, a, b, hd)]


@njit(cache=True)
def _refine_kernel(k, R, uid, cnt, T, size, alive, head, tail, nxt, prv, hd, perm, tr, class_leaf, st, hp, stk,
                   xa, xb, ea, eb, ties, S, queue, inq, qstate, budget, all_units, exhaustive, cands,
                   bufA, ubA, ucA, bufB, ubB, ucB, preA, sufA, restA, preB, sufB, restB, newA, newB, stats):
    """Process queued classes: for each unit of the class, the class where it
    fits best (least Def. 10 distance to the whole class); the best improving
    relocation or swap of the class is applied, and both classes queued again.
    ``stats`` = (searches, relocations, swaps). Returns 0 when the queue is
    empty, 1 when the search budget is spent, 2 when the trie needs room."""
    m = T.shape[1]
    g_flat = hd[8]
    nd_off = hd[7]
    qcap = queue.shape[0]
    while qstate[0] != qstate[1]:
        if stats[0] >= budget:
            return 1
        if st[K.S_TUSED] + 4 * (m + 1) > tr[0].shape[0]:
            return 2
        A = queue[qstate[0]]
        qstate[0] = (qstate[0] + 1) % qcap
        inq[A] = False
        if not alive[A] or size[A] < k:
            continue
        qA = _units(A, head, nxt, uid, cnt, bufA, ubA, ucA)
        if qA < 2:
            continue
        _rest_lcas(R, bufA, ubA, qA, hd, preA, sufA, restA)
        baseA = size[A] * _tuple_cost(T[A], hd)
        best_d = 0
        best_dm = 0
        best_kind = 0
        best_U = -1
        best_B = -1
        best_V = -1
        for iu in range(qA):
            u = bufA[ubA[iu]]
            if not all_units:
                ess = False
                for j in range(m):
                    if restA[iu, j] != T[A, j]:
                        ess = True
                        break
                if not ess:
                    continue
            nU = ucA[iu]
            if exhaustive:  # every other class is a candidate partner
                nb = 0
                for c in range(S):
                    if alive[c] and c != A:
                        cands[nb] = c
                        nb += 1
                stats[0] += 1
            else:
                # the class where the unit fits best (A itself left out of the trie)
                K.trie_remove(A, tr, st, class_leaf)
                B = K.trie_lookup(R[u], perm, tr[0])
                if B < 0:
                    for j in range(m):
                        T[S, j] = R[u, j]
                    size[S] = nU
                    K.trie_insert(S, R[u], min(nU, _W_MAX), perm, tr, st, class_leaf, hd)
                    _bd, nt = K.nearest_fast(S, _BIG, T, size, True, tail, prv, cnt, hd, perm, tr, hp, ties, st,
                                             xa, xb, ea, eb, class_leaf, stk)
                    K.trie_remove(S, tr, st, class_leaf)
                    B = ties[0] if nt > 0 else -1
                K.trie_insert(A, T[A], min(size[A], _W_MAX), perm, tr, st, class_leaf, hd)
                stats[0] += 1
                if B < 0:
                    continue
                cands[0] = B
                nb = 1
            for ib in range(nb):
                B = cands[ib]
                baseB = size[B] * _tuple_cost(T[B], hd)
                if size[A] - nU >= k:  # relocation
                    gr = 0
                    gb = 0
                    for j in range(m):
                        gr += g_flat[nd_off[j] + restA[iu, j]]
                        gb += _glca(j, T[B, j], R[u, j], hd)
                    d = (size[A] - nU) * gr + (size[B] + nU) * gb - baseA - baseB
                    dm = (size[A] - nU) ** 2 + (size[B] + nU) ** 2 - size[A] ** 2 - size[B] ** 2
                    if d < best_d or (d == best_d and dm < best_dm):
                        best_d = d
                        best_dm = dm
                        best_kind = 1
                        best_U = iu
                        best_B = B
                qB = _units(B, head, nxt, uid, cnt, bufB, ubB, ucB)
                if qB >= 2:
                    _rest_lcas(R, bufB, ubB, qB, hd, preB, sufB, restB)
                for iv in range(qB):  # swaps with the units of B
                    nV = ucB[iv]
                    if size[A] - nU + nV < k or size[B] - nV + nU < k:
                        continue
                    v = bufB[ubB[iv]]
                    ga = 0
                    gb = 0
                    for j in range(m):
                        ga += _glca(j, restA[iu, j], R[v, j], hd)
                        gb += _glca(j, restB[iv, j], R[u, j], hd) if qB >= 2 else g_flat[nd_off[j] + R[u, j]]
                    d = (size[A] - nU + nV) * ga + (size[B] - nV + nU) * gb - baseA - baseB
                    dm = (size[A] - nU + nV) ** 2 + (size[B] - nV + nU) ** 2 - size[A] ** 2 - size[B] ** 2
                    if d < best_d or (d == best_d and dm < best_dm):
                        best_d = d
                        best_dm = dm
                        best_kind = 2
                        best_U = iu
                        best_B = B
                        best_V = iv
        if best_kind == 0:
            continue
        B = best_B
        iu = best_U
        u = bufA[ubA[iu]]
        nU = ucA[iu]
        # A's new tuple equal to B's current one would make A join B before B
        # changes: such (rare) moves are left out
        if best_kind == 1:
            clash = True
            for j in range(m):
                if restA[iu, j] != T[B, j]:
                    clash = False
                    break
            if clash:
                continue
        if best_kind == 2:
            qB = _units(B, head, nxt, uid, cnt, bufB, ubB, ucB)
            if qB >= 2:
                _rest_lcas(R, bufB, ubB, qB, hd, preB, sufB, restB)
            iv = best_V
            v = bufB[ubB[iv]]
            nV = ucB[iv]
            for j in range(m):
                newA[j] = K.lca_code(j, restA[iu, j], R[v, j], hd)
                newB[j] = K.lca_code(j, restB[iv, j], R[u, j], hd) if qB >= 2 else R[u, j]
            clash = True
            same_ab = True
            for j in range(m):
                if newA[j] != T[B, j]:
                    clash = False
                if newA[j] != newB[j]:
                    same_ab = False
            if clash and not same_ab:
                continue
            for i2 in range(ubB[iv], ubB[iv + 1]):
                _detach(bufB[i2], B, head, tail, nxt, prv)
                _append(bufB[i2], A, head, tail, nxt, prv)
            size[B] -= nV
            size[A] += nV
            stats[2] += 1
        else:
            for j in range(m):
                newA[j] = restA[iu, j]
                newB[j] = K.lca_code(j, T[B, j], R[u, j], hd)
            stats[1] += 1
        for i2 in range(ubA[iu], ubA[iu + 1]):
            _detach(bufA[i2], A, head, tail, nxt, prv)
            _append(bufA[i2], B, head, tail, nxt, prv)
        size[A] -= nU
        size[B] += nU
        st[K.S_DSUM] += best_d
        a2 = _retuple(A, newA, T, size, alive, head, tail, nxt, prv, perm, tr, st, class_leaf, hd)
        b2 = _retuple(B, newB, T, size, alive, head, tail, nxt, prv, perm, tr, st, class_leaf, hd)
        for x in (a2, b2):
            if alive[x] and not inq[x]:
                inq[x] = True
                queue[qstate[1]] = x
                qstate[1] = (qstate[1] + 1) % qcap
    return 0


def _refine(codes_out, R, counts, hd, perm, k, budget, all_units, exhaustive=False):
    """Step 4 on the classes of ``codes_out``. Returns (codes, stats)."""
    n, m = R.shape
    S = _kaca_state(codes_out, counts, k, hd, perm, whole=True, spare=1)
    ncls = S["ncls"]
    uid = group(R).row_class.astype(np.int64)
    queue = np.zeros(ncls + 2, dtype=np.int64)
    queue[:ncls] = np.arange(ncls)
    inq = np.zeros(ncls + 1, dtype=np.bool_)
    inq[:ncls] = True
    qstate = np.array([0, ncls], dtype=np.int64)
    bufs = [np.zeros(n + 1, dtype=np.int64) for _ in range(6)]
    mats = [np.zeros((n + 2, m), dtype=np.int32) for _ in range(6)]
    stats = np.zeros(3, dtype=np.int64)
    status = 2
    while status == 2:
        status = _refine_kernel(k, R, uid, counts, *_kaca_args(S), hd, perm, S["tr"], S["class_leaf"], S["st"],
                                S["hp"], S["stk"], S["xa"], S["xb"], S["ea"], S["eb"], S["ties"], ncls, queue, inq,
                                qstate, int(budget), bool(all_units or exhaustive), bool(exhaustive),
                                np.zeros(ncls + 1, dtype=np.int64), *bufs, *mats, np.zeros(m, dtype=np.int32),
                                np.zeros(m, dtype=np.int32), stats)
        if status == 2:
            _grow_state(S, m)
    info = {"searches": int(stats[0]), "relocations": int(stats[1]), "swaps": int(stats[2]),
            "converged": status == 0, "delta_int": int(S["st"][K.S_DSUM])}
    return _state_codes(S, n, m), info


# =====================================================================
# driver
# =====================================================================
def _row_costs(orig, out, cost: CostModel) -> np.ndarray:
    g = np.zeros(len(orig), dtype=np.int64)
    for j, c in enumerate(cost.int_costs):
        g += c[out[:, j]] - c[orig[:, j]]
    return g


def _class_codes(R, cls, ncls, hd):
    """Each row printed as the closest common generalisation of its class; rows
    with ``cls < 0`` keep their codes."""
    out = R.copy()
    if ncls:
        T = _class_lcas(R, cls, ncls, hd)
        sel = cls >= 0
        out[sel] = T[cls[sel]]
    return out


@njit(cache=True)
def _class_lcas(R, cls, ncls, hd):
    n, m = R.shape
    T = np.full((ncls, m), -1, dtype=np.int32)
    for r in range(n):
        c = cls[r]
        if c < 0:
            continue
        for j in range(m):
            T[c, j] = R[r, j] if T[c, j] < 0 else K.lca_code(j, T[c, j], R[r, j], hd)
    return T


def auto_stub_weight(k: int) -> float:
    """Default ``stub_weight``: ``min(1, 0.15 k)``. Small k takes more stubs:
    there a class of ``k+1..2k-1`` records weighs most in DM and CAVG. Chosen on
    Adult (issue 10) so that DM and CAVG stay at or below faithful KACA1's at
    k = 2, 5, 10, 50 while distortion stays lowest."""
    return min(1.0, 0.15 * k)


def auto_row_stub_weight(k: int) -> float:
    """Default ``stub_weight`` with single-record stubs (``stub_rows``):
    ``min(2, 0.2 k)``, chosen on Adult like :func:`auto_stub_weight` (DM and
    CAVG at or below KACA1's at k = 2, 5, 10, 50, distortion lowest)."""
    return min(2.0, 0.2 * k)


def kacaplus_codes(codes: np.ndarray, counts: np.ndarray, hierarchies, cost: CostModel, k: int, seed=0, *,
                   construction: str = "sweep", stub_weight: float | str | None = "auto", refine: bool = True,
                   refine_all: bool | None = None, refine_budget: int | None = None, restarts: int | None = None,
                   max_vectors: int = 1_000_000, growth_order: str = "dense",
                   refine_exhaustive: bool | None = None, stub_rows: bool = True) -> tuple[np.ndarray, dict]:
    """KACA+ on a code matrix (module docstring). Returns ``(codes, info)``;
    ``details.distortion_int`` is the output's distortion in the cost model's
    integer scale."""
    t0 = time.perf_counter()
    R = np.ascontiguousarray(codes, dtype=np.int32)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    n, _m = R.shape
    K.check_k(k, counts)
    hd = K.hierarchy_data(hierarchies, cost)
    perm = K.choose_trie_order(R, hd[2])
    if refine_all is None:
        refine_all = n <= 20_000
    if refine_exhaustive is None:
        refine_exhaustive = n <= 1_000
    if refine_budget is None:
        refine_budget = 4 * n + 1000
    rng = np.random.default_rng(seed)
    if restarts is None:
        restarts = AUTO_RESTARTS if n <= AUTO_RESTARTS_ROWS and construction == "sweep" else 1
    # runs 0 and 1 keep the natural tie order, the others draw one from the seed;
    # odd runs make the second sweep without stubs (one sweep)
    ties = [0, 0] + [int(x) for x in rng.integers(1, 2**31, size=max(restarts, 2) - 2)]
    if stub_weight == "auto":
        stub_weight = auto_row_stub_weight(k) if stub_rows else auto_stub_weight(k)
    base_stub = stub_weight
    data = _SweepData(R, counts, hierarchies, cost, max_vectors) if construction == "sweep" else None
    best = None
    runs = []
    first: dict = {}
    for run, tie in enumerate(ties[:restarts]):
        t = time.perf_counter()
        stub_weight = None if run % 2 else base_stub
        info: dict = {"run": run, "tie_order": tie, "stub_weight": stub_weight}
        if construction == "sweep":
            if tie not in first:  # the first sweep (+ step 3) of a tie order, shared by its runs
                cls, ncls, nvec = _sweep(data, k, None, -1.0, tie)
                first[tie] = (_complete(_class_codes(R, cls, ncls, hd), counts, hierarchies, cost, k, hd, perm),
                              nvec, int(counts[cls < 0].sum()))
            out, info["vectors"], info["unplaced_after_sweep"] = first[tie]
            if stub_weight is not None and stub_weight >= 0:
                cls, ncls, nvec = _sweep(data, k, _row_costs(R, out, cost), float(stub_weight), tie, stub_rows)
                info["vectors_second"] = nvec
                info.update(data.stats)
                info["unplaced_after_sweep"] = int(counts[cls < 0].sum())
                out = _complete(_class_codes(R, cls, ncls, hd), counts, hierarchies, cost, k, hd, perm)
        elif construction in ("growth", "cheapest"):
            kind = "cheapest" if construction == "cheapest" else growth_order
            out = _complete(R, counts, hierarchies, cost, k, hd, perm, kind, np.random.default_rng(seed + run))
        else:
            raise ValueError(f"construction must be one of {CONSTRUCTIONS}, got {construction!r}")
        info["distortion_constructed_int"] = int((_row_costs(R, out, cost) * counts).sum())
        info["time_construct"] = time.perf_counter() - t
        if refine:
            t = time.perf_counter()
            out, rinfo = _refine(out, R, counts, hd, perm, k, refine_budget, refine_all, refine_exhaustive)
            info.update({f"refine_{a}": b for a, b in rinfo.items()})
            info["time_refine"] = time.perf_counter() - t
        d = int((_row_costs(R, out, cost) * counts).sum())
        info["distortion_int"] = d
        runs.append(info)
        if best is None or d < best[0]:
            best = (d, out, run)
    d, out, run = best
    info = {"distortion_int": d, "distortion": d / cost.scale, "best_run": run, "runs": runs,
            "time_total": time.perf_counter() - t0}
    return out, info


class KACAPlus(Algorithm):
    """KACA+: KACA's distance and stubs with a better search (module docstring).

    Parameters
    ----------
    stub_weight : float, ``"auto"`` or None
        Step 2: a short group takes a stub when its records' estimated saving
        exceeds ``stub_weight`` times the stub's extra cost. Lower values take
        more stubs (smaller classes: lower DM and CAVG, a little more
        distortion); ``None`` skips step 2 (one sweep); ``"auto"`` (default)
        is :func:`auto_row_stub_weight` of k (:func:`auto_stub_weight` without
        ``stub_rows``).
    refine : bool
        Step 4, the local search.
    refine_all : bool or None
        Search a new class for every unit (True) or only for the units whose
        removal lowers their class's generalisation (False); default True up to
        20,000 rows.
    refine_budget : int or None
        Maximum number of class searches of step 4 (default ``4n + 1000``).
    refine_exhaustive : bool or None
        Step 4 tries every other class as a partner of each unit, not only
        the one where it fits best; default True up to 1,000 rows.
    restarts : int or None
        Runs of steps 1-4, the least distortion kept: runs 0 and 1 in the
        natural tie order of equal-cost depth vectors, the others in orders
        drawn from the seed; odd runs skip the stubs (one sweep). Default:
        8 on tables of at most 2,000 rows, else 1.
    max_vectors : int
        Depth vectors the sweep may visit before step 3 takes over.
    stub_rows : bool
        Step 2 takes stub records from any class with a surplus whose records
        lie under the short group's node (default), not only from classes
        whose node lies under it; ``"auto"`` stub weight is then
        :func:`auto_row_stub_weight` instead of :func:`auto_stub_weight`. On
        Adult (k = 10) 0.1095 -> 0.1080 with DM and CAVG still below KACA1's.
    construction : ``"sweep"`` (default), ``"growth"`` or ``"cheapest"``
        The first step; the other two are the earlier trials of issue 10
        (KACA merging with one class grown to ``k`` at a time, cheapest to
        complete first -- ``growth_order`` ``"dense"``, ``"random"`` -- or the
        globally cheapest merge per record first).
    """

    name = "kaca+"
    parameters = {
        "stub_weight": Interval(Real, 0, None) | Options("auto") | None,
        "refine": bool,
        "refine_all": bool | NoneValue(),
        "refine_budget": Interval(Integral, 0, None) | None,
        "restarts": Interval(Integral, 1, None) | None,
        "max_vectors": Interval(Integral, 1, None),
        "construction": Options(*CONSTRUCTIONS),
        "growth_order": Options("dense", "random"),
        "refine_exhaustive": bool | NoneValue(),
        "stub_rows": bool,
    }

    def __init__(self, stub_weight: float | str | None = "auto", refine: bool = True, refine_all: bool | None = None,
                 refine_budget: int | None = None, restarts: int | None = None, max_vectors: int = 1_000_000,
                 construction: str = "sweep", growth_order: str = "dense", refine_exhaustive: bool | None = None,
                 stub_rows: bool = True):
        self.stub_weight = stub_weight
        self.refine = refine
        self.refine_all = refine_all
        self.refine_budget = refine_budget
        self.restarts = restarts
        self.max_vectors = max_vectors
        self.construction = construction
        self.growth_order = growth_order
        self.refine_exhaustive = refine_exhaustive
        self.stub_rows = stub_rows

    def _solve(self, problem: Problem) -> Solution:
        t = problem.table
        codes, info = kacaplus_codes(t.codes, t.counts, t.hierarchies, problem.cost, problem.k,
                                     0 if problem.seed is None else problem.seed,
                                     construction=self.construction, stub_weight=self.stub_weight,
                                     refine=self.refine, refine_all=self.refine_all,
                                     refine_budget=self.refine_budget, restarts=self.restarts,
                                     max_vectors=self.max_vectors, growth_order=self.growth_order,
                                     refine_exhaustive=self.refine_exhaustive, stub_rows=self.stub_rows)
        log.info("kaca+: distortion %.4f (run %d of %d)", info["distortion"], info["best_run"] + 1, len(info["runs"]))
        return Solution(codes, np.zeros(t.n_rows, dtype=bool), KACAPlusDetails(**info))
