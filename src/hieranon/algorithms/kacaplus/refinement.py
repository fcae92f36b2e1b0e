"""KACA+ step 4: the refinement, a local search that moves or swaps units
(distinct tuples of a class) between classes while total distortion falls
(see :mod:`hieranon.algorithms.kacaplus`).
"""

from __future__ import annotations

import numpy as np

from ...core.jit import kernel
from ...core.table import group
from .. import kaca_core as K
from .finishing import grow_state, kaca_args, kaca_state, state_codes
from .sweep import append_member, detach_member

#: Weight that makes every class look small enough for a whole merge in
#: :func:`hieranon.algorithms.kaca_core.nearest_fast` (the refinement's searches).
_BIG = 1 << 40
_W_MAX = np.iinfo(np.int32).max
#: Searches, node expansions and candidate partners of one call of the
#: refinement's kernel: between calls the driver is back in Python, where a
#: Ctrl-C can land.
CHUNK_WORK = 200_000


# =====================================================================
# step 4: refinement (unit relocations and swaps)
# =====================================================================
@kernel
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


@kernel
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


@kernel
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


@kernel
def _pair_tables(tu, ta, hd, gu, gra):
    """For every attribute with a dense LCA table and every node ``x`` of it:
    ``gu[x]`` = cost of lca(``tu``'s value, x), ``gra[x]`` = cost of
    lca(``ta``'s value, x) -- one look-up each in the searches below."""
    lca_flat, lca_off, nn, anc_flat, anc_off, hh, depth_flat, nd_off, g_flat = hd
    for j in range(tu.shape[0]):
        lo = lca_off[j]
        if lo < 0:
            continue
        go = nd_off[j]
        ru = lo + tu[j] * nn[j]
        ra = lo + ta[j] * nn[j]
        for x in range(nn[j]):
            gu[go + x] = g_flat[go + lca_flat[ru + x]]
            gra[go + x] = g_flat[go + lca_flat[ra + x]]


@kernel
def _glca(j, a, b, hd):
    return hd[8][hd[7][j] + K.lca_code(j, a, b, hd)]


@kernel
def _refine_kernel(k, R, uid, cnt, T, size, alive, head, tail, nxt, prv, hd, perm, tr, class_leaf, st, hp, stk,
                   xa, xb, ea, eb, ties, S, queue, inq, qstate, budget, all_units, exhaustive, cands,
                   bufA, ubA, ucA, bufB, ubB, ucB, preA, sufA, restA, preB, sufB, restB, newA, newB, stats, work,
                   allbuf, allub, alluc, allrest, cofs, gu, gra):
    """Process queued classes: for each unit of the class, the class where it
    fits best (least Def. 10 distance to the whole class); the best improving
    relocation or swap of the class is applied, and both classes queued again.
    ``stats`` = (searches, relocations, swaps). Returns 0 when the queue is
    empty, 1 when the search budget is spent, 2 when the trie needs room, 3
    after about ``work`` searches, node expansions and candidate partners
    (call again: the queue holds the state). With ``exhaustive`` the units of
    every other class and their rest-LCAs are worked out once per class
    ``A`` (``all*``, ``cofs`` = row offset, unit offset, units), not once per
    unit of ``A``: nothing changes until ``A``'s best move is applied."""
    m = T.shape[1]
    g_flat = hd[8]
    nd_off = hd[7]
    lca_off = hd[1]
    qcap = queue.shape[0]
    w0 = stats[0] + st[K.S_EXPAND] + stats[3]
    while qstate[0] != qstate[1]:
        if stats[0] >= budget:
            return 1
        if st[K.S_TUSED] + 4 * (m + 1) > tr[0].shape[0]:
            return 2
        if stats[0] + st[K.S_EXPAND] + stats[3] - w0 >= work:
            return 3
        A = queue[qstate[0]]
        qstate[0] = (qstate[0] + 1) % qcap
        inq[A] = False
        if not alive[A] or size[A] < k:
            continue
        qA = _units(A, head, nxt, uid, cnt, bufA, ubA, ucA)
        if qA < 2:
            continue
        _rest_lcas(R, bufA, ubA, qA, hd, preA, sufA, restA)
        baseA = size[A] * K.tuple_cost(T[A], hd)
        if exhaustive:
            pr = 0
            pu = 0
            for c in range(S):
                if alive[c] and c != A:
                    q = _units(c, head, nxt, uid, cnt, allbuf[pr:], allub[pu:], alluc[pu:])
                    if q >= 2:
                        _rest_lcas(R, allbuf[pr:], allub[pu:], q, hd, preB, sufB, allrest[pu:])
                    cofs[c, 0] = pr
                    cofs[c, 1] = pu
                    cofs[c, 2] = q
                    pr += allub[pu + q]
                    pu += q + 1
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
                stats[3] += nb
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
            _pair_tables(R[u], restA[iu], hd, gu, gra)
            for ib in range(nb):
                B = cands[ib]
                baseB = size[B] * K.tuple_cost(T[B], hd)
                if size[A] - nU >= k:  # relocation
                    gr = 0
                    gb = 0
                    for j in range(m):
                        gr += g_flat[nd_off[j] + restA[iu, j]]
                        if lca_off[j] >= 0:
                            gb += gu[nd_off[j] + T[B, j]]
                        else:
                            gb += _glca(j, T[B, j], R[u, j], hd)
                    d = (size[A] - nU) * gr + (size[B] + nU) * gb - baseA - baseB
                    dm = (size[A] - nU) ** 2 + (size[B] + nU) ** 2 - size[A] ** 2 - size[B] ** 2
                    if d < best_d or (d == best_d and dm < best_dm):
                        best_d, best_dm, best_kind, best_U, best_B = d, dm, 1, iu, B
                if exhaustive:
                    pr = cofs[B, 0]
                    pu = cofs[B, 1]
                    qB = cofs[B, 2]
                else:
                    pr = 0
                    pu = 0
                    qB = _units(B, head, nxt, uid, cnt, allbuf, allub, alluc)
                    if qB >= 2:
                        _rest_lcas(R, allbuf, allub, qB, hd, preB, sufB, allrest)
                for iv in range(qB):  # swaps with the units of B
                    nV = alluc[pu + iv]
                    if size[A] - nU + nV < k or size[B] - nV + nU < k:
                        continue
                    v = allbuf[pr + allub[pu + iv]]
                    ga = 0
                    gb = 0
                    for j in range(m):
                        if lca_off[j] >= 0:
                            ga += gra[nd_off[j] + R[v, j]]
                            gb += gu[nd_off[j] + allrest[pu + iv, j]] if qB >= 2 else g_flat[nd_off[j] + R[u, j]]
                        else:
                            ga += _glca(j, restA[iu, j], R[v, j], hd)
                            gb += _glca(j, allrest[pu + iv, j], R[u, j], hd) if qB >= 2 else g_flat[nd_off[j] + R[u, j]]
                    d = (size[A] - nU + nV) * ga + (size[B] - nV + nU) * gb - baseA - baseB
                    dm = (size[A] - nU + nV) ** 2 + (size[B] - nV + nU) ** 2 - size[A] ** 2 - size[B] ** 2
                    if d < best_d or (d == best_d and dm < best_dm):
                        best_d, best_dm, best_kind, best_U, best_B, best_V = d, dm, 2, iu, B, iv
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
                detach_member(bufB[i2], B, head, tail, nxt, prv)
                append_member(bufB[i2], A, head, tail, nxt, prv)
            size[B] -= nV
            size[A] += nV
            stats[2] += 1
        else:
            for j in range(m):
                newA[j] = restA[iu, j]
                newB[j] = K.lca_code(j, T[B, j], R[u, j], hd)
            stats[1] += 1
        for i2 in range(ubA[iu], ubA[iu + 1]):
            detach_member(bufA[i2], A, head, tail, nxt, prv)
            append_member(bufA[i2], B, head, tail, nxt, prv)
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


def refine_classes(codes_out, R, counts, hd, perm, k, budget, all_units, exhaustive=False):
    """Step 4 on the classes of ``codes_out``. Returns (codes, stats)."""
    n, m = R.shape
    S = kaca_state(codes_out, counts, k, hd, perm, whole=True, spare=1)
    ncls = S["ncls"]
    uid = group(R).row_class.astype(np.int64)
    queue = np.zeros(ncls + 2, dtype=np.int64)
    queue[:ncls] = np.arange(ncls)
    inq = np.zeros(ncls + 1, dtype=np.bool_)
    inq[:ncls] = True
    qstate = np.array([0, ncls], dtype=np.int64)
    bufs = [np.zeros(n + 1, dtype=np.int64) for _ in range(6)]
    mats = [np.zeros((n + 2, m), dtype=np.int32) for _ in range(6)]
    stats = np.zeros(4, dtype=np.int64)  # searches, relocations, swaps, partners tried
    cands = np.zeros(ncls + 1, dtype=np.int64)
    new = np.zeros(m, dtype=np.int32), np.zeros(m, dtype=np.int32)
    # every class's units (exhaustive partners) or one partner's, and their rest-LCAs
    cache = (np.zeros(n + 1, dtype=np.int64), np.zeros(n + ncls + 2, dtype=np.int64),
             np.zeros(n + ncls + 2, dtype=np.int64), np.zeros((n + ncls + 2, m), dtype=np.int32),
             np.zeros((ncls + 1, 3), dtype=np.int64), np.zeros(int(hd[2].sum()), dtype=np.int64),
             np.zeros(int(hd[2].sum()), dtype=np.int64))
    status = 2
    while status in (2, 3):  # chunks: a KeyboardInterrupt lands between them
        status = _refine_kernel(k, R, uid, counts, *kaca_args(S), hd, perm, S["tr"], S["class_leaf"], S["st"],
                                S["hp"], S["stk"], S["xa"], S["xb"], S["ea"], S["eb"], S["ties"], ncls, queue, inq,
                                qstate, int(budget), bool(all_units or exhaustive), bool(exhaustive),
                                cands, *bufs, *mats, *new, stats, CHUNK_WORK, *cache)
        K.chunk_done("refinement")
        if status == 2:
            grow_state(S, m)
    info = {"searches": int(stats[0]), "relocations": int(stats[1]), "swaps": int(stats[2]),
            "converged": status == 0, "delta_int": int(S["st"][K.S_DSUM])}
    return state_codes(S, n, m), info
