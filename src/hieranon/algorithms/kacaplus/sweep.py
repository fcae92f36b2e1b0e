"""KACA+ steps 1 and 2: the sweep of common generalisations, cheapest depth
vector first, and the stubs taken for the groups that fall short (see
:mod:`hieranon.algorithms.kacaplus`).
"""

from __future__ import annotations

import numpy as np

from ...core.cost import CostModel
from ...core.jit import kernel
from .. import kaca_core as K

#: Smallest size of the sweep's hash table of groups (a power of two).
_MIN_TABLE = 16
#: Depth vectors a sweep visits at most when the product of the heights exceeds 2**22.
_SPARSE_MAX_VECTORS = 50_000
#: Row visits of one call of the sweep's kernel: between calls the driver is
#: back in Python, where a Ctrl-C (KeyboardInterrupt) can land (about 0.1 s).
CHUNK_WORK = 2_000_000
# slots of the sweep kernel's resumable state
_K_STARTED, _K_HN, _K_STAMP, _K_NVEC, _K_NSUR, _K_DONE = range(6)


# =====================================================================
# step 1-2: the sweep
# =====================================================================
#: 0x9E3779B97F4A7C15 (the golden ratio's hash constant) as a signed 64-bit integer.
_GOLDEN = np.int64(-7046029254386353131)


@kernel
def _mix(h, x):
    """Hash ``x`` into ``h`` in wrapping 64-bit arithmetic (the same when the
    kernel runs as Python on numpy integers, :func:`hieranon.core.jit.interpreted`)."""
    h = np.int64(h)
    return h ^ (np.int64(x) + _GOLDEN + (h << 6) + (h >> 2))


@kernel
def _vec_less(a0, a1, a2, b0, b1, b2):
    return a0 < b0 or (a0 == b0 and (a1 < b1 or (a1 == b1 and a2 < b2)))


@kernel
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


@kernel
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


@kernel
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


@kernel
def _generalise(codes, base, up, gt):
    """Write into ``gt`` the ancestors of ``codes`` at the depth vector whose
    per-attribute offsets into ``up`` are ``base``; return their hash."""
    h = 0
    for j in range(gt.shape[0]):
        g = up[base[j] + codes[j]]
        gt[j] = g
        h = _mix(h, g)
    return h


@kernel
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


@kernel
def _donor_append(tab, s, x, dnext):
    """Append ``x`` (a donor class, or a donor record) to group ``s``'s donor list."""
    dnext[x] = -1
    if tab[s, 6] < 0:
        tab[s, 6] = x
    else:
        dnext[tab[s, 8]] = x
    tab[s, 8] = x


@kernel
def _unlink_row(r, q, cnt, csize, chead, ctail, rnext, rprev):
    """Take row ``r`` out of class ``q`` (member list and size)."""
    detach_member(r, q, chead, ctail, rnext, rprev)
    csize[q] -= cnt[r]


@kernel
def _append_row(r, c, cnt, csize, cls, chead, ctail, rnext, rprev):
    """Put row ``r`` at the end of class ``c`` (member list, size, row -> class)."""
    append_member(r, c, chead, ctail, rnext, rprev)
    csize[c] += cnt[r]
    cls[r] = c


@kernel
def _quotas(pos, other, k, lo, hi):
    """The largest selection of a group of ``pos`` positive and ``other``
    records (weights) whose share of positive ones lies in ``[lo, hi]``:
    ``(positive, other)`` records to take, ``(0, 0)`` when it has fewer than
    ``k``. Too many positive records: every other one and as many positive
    as the share allows; too few: every positive one and as many others."""
    n = pos + other
    if n < k:
        return 0, 0
    if pos > hi * n:
        other_take = other
        pos_take = min(pos, int(np.floor(hi * other / (1.0 - hi)))) if hi < 1.0 else pos
        # the quotient's rounding settled by the test the share itself is checked with
        while pos_take < pos and pos_take + 1 <= hi * (pos_take + 1 + other):
            pos_take += 1
        while pos_take > 0 and pos_take > hi * (pos_take + other):
            pos_take -= 1
    elif pos < lo * n:
        pos_take = pos
        other_take = min(other, int(np.floor(pos * (1.0 - lo) / lo)))
        while other_take < other and pos >= lo * (pos + other_take + 1):
            other_take += 1
        while other_take > 0 and pos < lo * (pos + other_take):
            other_take -= 1
    else:
        return pos, other
    total = pos_take + other_take
    if total < k or pos_take < lo * total or pos_take > hi * total:
        return 0, 0
    return pos_take, other_take


@kernel
def _sweep_kernel(R, cnt, k, up, off, nn, hh, dep, dc, dcmin, exact_dc, gfl, goff, est, beta, tie, maxvec,
                  cls, csize, cg, CT, chead, ctail, rnext, rprev, U, out_n,
                  seen, dense, hk, tab, dnext,
                  rowslot, gt, sur, rowd, tk, ks, work, shared, positive, share_lo, share_hi, quota):
    """Steps 1 (and 2 when ``beta >= 0``). ``U[:out_n[0]]`` are the rows not in a
    class on entry and on exit; ``out_n[1]`` the number of classes.

    ``shared``: every class must hold a share of ``positive`` records in
    ``[share_lo, share_hi]`` (:func:`_quotas`); a group takes, in row order,
    the records of the largest selection that does, when it has ``k``.
    ``quota``: work space, a row per slot of the group table; ``out_n[3]``
    counts the groups of ``k`` records or more that the share cut or held
    back (at every depth vector where it did).

    Resumable: the loop's scalars live in ``ks`` (zero on the first call;
    ``ks[_K_DONE]`` set when the sweep is over). A call returns after about
    ``work`` row visits, at the start of a depth vector, so that the caller
    regains control (a Ctrl-C lands) between chunks; calling it again goes
    on exactly where it stopped."""
    _n, m = R.shape
    radix = np.ones(m, np.int64)
    tot = 1
    for j in range(m - 1, -1, -1):
        radix[j] = tot
        tot *= hh[j]
    if ks[_K_STARTED] == 0:
        code0 = 0
        c0 = 0
        for j in range(m):
            code0 += (hh[j] - 1) * radix[j]
            c0 += dc[j, hh[j] - 1]
        ks[_K_HN] = _vheap_push(hk, 0, c0, 0, code0)
        _seen_add(code0, seen, dense)
        ks[_K_STARTED] = 1
    hn = ks[_K_HN]
    stamp = ks[_K_STAMP]
    nvec = ks[_K_NVEC]
    nsur = ks[_K_NSUR]
    nU = out_n[0]
    ncls = out_n[1]
    dvec = np.zeros(m, np.int64)
    base = np.zeros(m, np.int64)
    ncls_start = ncls
    done = 0
    while hn > 0 and nU > 0 and nvec < maxvec:
        if done >= work:
            break
        done += nU + 1
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
                    if shared:
                        quota[s, 0] = 0
                        quota[s, 1] = -1
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
            if shared and positive[r]:
                quota[s, 0] += cnt[r]
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
                        done += 1
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
                done += 1
                s = _find_group(tab, _generalise(CT[c], base, up, gt), gt, stamp, tmask)
                if s >= 0 and tab[s, 2] < k:
                    tab[s, 5] += csize[c] - k
                    _donor_append(tab, s, c, dnext)
        w = 0
        for ii in range(nU):
            r = U[ii]
            s = rowslot[ii]
            tc = tab[s, 2]
            if shared:
                if quota[s, 1] < 0:  # the group's selection, once
                    quota[s, 1], quota[s, 2] = _quotas(quota[s, 0], tc - quota[s, 0], k, share_lo, share_hi)
                    if tc >= k and quota[s, 1] + quota[s, 2] < tc:
                        out_n[3] += 1  # a group of k or more the share cuts or holds back
                col = 1 if positive[r] else 2
                ok = quota[s, col] >= cnt[r]
                if ok:
                    quota[s, col] -= cnt[r]
            else:
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
    ks[_K_HN] = hn
    ks[_K_STAMP] = stamp
    ks[_K_NVEC] = nvec
    ks[_K_NSUR] = nsur
    if not (hn > 0 and nU > 0 and nvec < maxvec):
        ks[_K_DONE] = 1
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


class SweepData:
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
        self.stats = {"vectors_with_short_groups": 0, "donor_checks": 0, "share_cut_groups": 0}
        size = _MIN_TABLE  # as the kernel sizes its table: at least this, at least 2n
        while size < 2 * max(self.n, 1):
            size *= 2
        self.tsize = size


def run_sweep(data: SweepData, k: int, est: np.ndarray | None, beta: float, tie: int, rowd: bool = False,
              share: tuple | None = None):
    """One sweep. Returns (row -> class id or -1, number of classes, vectors visited).
    ``share``: ``(positive flags per row, low, high)``, the share of positive
    records every class must hold (:func:`hieranon.bounds.share_constraint`);
    a group then becomes a class of its largest selection that holds it."""
    n, m = data.n, data.m
    cls = np.full(n, -1, dtype=np.int64)
    if not data.ok or n == 0:
        data.stats = {"vectors_with_short_groups": 0, "donor_checks": 0, "share_cut_groups": 0}
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
    work = (np.zeros((ts, 10 + m), dtype=np.int64), np.full(n + 1, -1, dtype=np.int64),
            np.zeros(n, dtype=np.int64), np.zeros(m, dtype=np.int64), np.zeros(n + 1, dtype=np.int64), bool(rowd),
            np.zeros(n + 1, dtype=np.int64))
    ks = np.zeros(8, dtype=np.int64)
    if share is None:
        shared = (False, np.zeros(1, dtype=np.bool_), 0.0, 1.0, np.zeros((1, 3), dtype=np.int64))
    else:
        shared = (True, np.ascontiguousarray(share[0], dtype=np.bool_), float(share[1]), float(share[2]),
                  np.zeros((ts, 3), dtype=np.int64))
    nvec = 0
    while not ks[_K_DONE]:  # chunks: a KeyboardInterrupt lands between them
        nvec = _sweep_kernel(data.codes, data.counts, int(k), data.up, data.off, data.nn, data.hh, data.dep,
                             data.dc, data.dcmin, data.exact_dc,
                             data.hd[8], data.hd[7], est, float(beta), int(tie), data.maxvec,
                             cls, csize, cg, CT, chead, ctail, rnext, rprev, U, out_n,
                             seen, bool(data.dense), hk, *work, ks, int(CHUNK_WORK), *shared)
        K.chunk_done("sweep")
    data.stats = {"vectors_with_short_groups": int(out_n[2]), "donor_checks": int(out_n[4]),
                  "share_cut_groups": int(out_n[3])}
    return cls, int(out_n[1]), int(nvec)


@kernel
def detach_member(r, c, head, tail, nxt, prv):
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


@kernel
def append_member(r, c, head, tail, nxt, prv):
    prv[r] = tail[c]
    nxt[r] = -1
    if tail[c] >= 0:
        nxt[tail[c]] = r
    else:
        head[c] = r
    tail[c] = r
