"""KACA+ step 3: KACA finishing -- the records the sweep left are merged as
KACA does (nearest class by the class distance of Li et al. 2008, Def. 10,
with the stub rule of Def. 14), cheapest-to-complete classes first; also the
earlier constructions "growth" and "cheapest" (see
:mod:`hieranon.algorithms.kacaplus`).
"""

from __future__ import annotations

import numpy as np

from ...core.jit import kernel
from ...core.table import group
from .. import kaca_core as K

#: Node expansions (and merges) of one call of a finishing kernel: between
#: calls the driver is back in Python, where a Ctrl-C can land.
CHUNK_WORK = 200_000


# =====================================================================
# class state shared with KACA's kernels
# =====================================================================
def kaca_state(codes: np.ndarray, counts: np.ndarray, k: int, hd, perm, whole: bool = False, spare: int = 0):
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


def grow_state(S, m):
    S["tr"], S["hp"], S["stk"] = K.grow_trie(S["tr"], S["hp"], S["stk"], int(S["st"][K.S_TUSED]), m)


def state_codes(S, n, m):
    out = np.zeros((n, m), dtype=np.int32)
    K.rows_to_codes(S["T"], S["alive"], S["head"], S["nxt"], out)
    return out


# =====================================================================
# step 3: KACA finishing (and the "growth"/"cheapest" constructions)
# =====================================================================
@kernel
def _nearest_all(k, T, size, alive, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st, xa, xb, ea, eb,
                 class_leaf, stk, out, tgt, start, work):
    """Def. 10 distance (stub rule) from every small class to its nearest
    class, from class ``start`` on; returns after about ``work`` node
    expansions with the next class to do (``T.shape[0]`` when done)."""
    e0 = st[K.S_EXPAND]
    for C in range(start, T.shape[0]):
        if st[K.S_EXPAND] - e0 + C - start >= work:
            return C
        out[C] = -1
        tgt[C] = -1
        if alive[C] and size[C] < k:
            best, nt = K.nearest_fast(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st,
                                       xa, xb, ea, eb, class_leaf, stk)
            if nt > 0:
                out[C] = best
                tgt[C] = ties[0]
    return T.shape[0]


@kernel
def _growth_loop(k, order, pos, T, size, alive, head, tail, nxt, prv, cnt, unit, hd, perm, tr, class_leaf, st,
                 hp, stk, xa, xb, ea, eb, ties, newtup, work):
    """Take the small classes in ``order``; grow each by its nearest class (or
    that class's stub, Def. 14) until it holds ``>= k`` records. Returns 2 when
    the trie needs room, 1 after about ``work`` node expansions and merges
    (call again: ``pos`` says where it stopped), 0 when done."""
    m = T.shape[1]
    e0 = st[K.S_EXPAND]
    merges = 0
    while pos[0] < order.shape[0]:
        C = pos[1] if pos[1] >= 0 else order[pos[0]]
        if not alive[C] or size[C] >= k:
            pos[0] += 1
            pos[1] = -1
            continue
        if st[K.S_TUSED] + m + 1 > tr[0].shape[0]:
            pos[1] = C
            return 2
        if st[K.S_EXPAND] - e0 + merges >= work:
            pos[1] = C
            return 1
        merges += 1
        _best, nt = K.nearest_fast(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st,
                                   xa, xb, ea, eb, class_leaf, stk)
        if nt == 0:  # a single class in the table: nothing to merge with
            pos[0] += 1
            pos[1] = -1
            continue
        dist, _kind, e = K.merge_classes(C, ties[0], k, T, size, alive, head, tail, nxt, prv, cnt, unit, hd, perm,
                                         tr, st, class_leaf, newtup)
        st[K.S_MERGES] += 1
        st[K.S_DSUM] += dist
        pos[1] = e
    return 0


@kernel
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
    return K.heap_push(hk, hc, hv, hn, best / max(w, 1), C, ver[C])


@kernel
def _cheapest_loop(k, T, size, alive, head, tail, nxt, prv, cnt, unit, hd, perm, tr, class_leaf, st, hp, stk,
                   xa, xb, ea, eb, ties, newtup, ver, tgt, tver, hk, hc, hv, hstate, work):
    """Agglomerative order (an earlier trial): always the small class whose
    nearest merge costs least per record it gains, with lazy re-evaluation.
    Returns 2 when the trie needs room, 1 after about ``work`` node
    expansions (call again), 0 when done; ``hstate`` = (heap size, classes
    queried so far + 1, or 0 before the first call)."""
    m = T.shape[1]
    hn = hstate[0]
    e0 = st[K.S_EXPAND]
    steps = 0
    if hstate[1] <= T.shape[0]:
        for C in range(max(hstate[1] - 1, 0), T.shape[0]):
            if st[K.S_EXPAND] - e0 + steps >= work:
                hstate[0] = hn
                hstate[1] = C + 1
                return 1
            steps += 1
            if alive[C] and size[C] < k:
                hn = _requery(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st, xa, xb, ea, eb,
                              class_leaf, stk, ver, tgt, tver, hk, hc, hv, hn)
        hstate[1] = T.shape[0] + 1
    while hn > 0:
        if st[K.S_TUSED] + m + 1 > tr[0].shape[0]:
            hstate[0] = hn
            return 2
        if st[K.S_EXPAND] - e0 + steps >= work:
            hstate[0] = hn
            return 1
        steps += 1
        C = hc[0]
        v = hv[0]
        hn = K.heap_pop(hk, hc, hv, hn)
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


def kaca_args(S):
    return (S["T"], S["size"], S["alive"], S["head"], S["tail"], S["nxt"], S["prv"])


def complete_classes(codes, counts, hierarchies, cost, k, hd, perm, order_kind="dense", rng=None):
    """Merge every class of size < k, KACA-style (step 3, and the "growth"
    and "cheapest" constructions). Returns the codes."""
    n, m = codes.shape
    unit = bool((counts == 1).all())
    S = kaca_state(codes, counts, k, hd, perm)
    ncls = S["ncls"]
    T, size, alive, head, tail, nxt, prv = kaca_args(S)
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
                                    S["ties"], S["newtup"], ver, tgt, tver, hk, hc, hv, hstate, CHUNK_WORK)
            K.chunk_done("finishing")
            if status == 0:
                break
            if status == 2:
                grow_state(S, m)
    else:
        small = np.flatnonzero(size[:ncls] < k)
        if order_kind == "random":
            order = (rng or np.random.default_rng(0)).permutation(small)
        else:
            d = np.zeros(ncls, dtype=np.int64)
            tg = np.zeros(ncls, dtype=np.int64)
            start = 0
            while start < ncls:  # chunks: a KeyboardInterrupt lands between them
                start = _nearest_all(k, T, size, alive, unit, tail, prv, counts, hd, perm, S["tr"], S["hp"],
                                     S["ties"], S["st"], S["xa"], S["xb"], S["ea"], S["eb"], S["class_leaf"],
                                     S["stk"], d, tg, start, CHUNK_WORK)
                K.chunk_done("finishing")
            # cost per record still needed: the cheapest to complete first
            key = d[small] / np.maximum(k - size[small], 1)
            order = small[np.argsort(key, kind="stable")]
        while len(order):
            pos = np.array([0, -1], dtype=np.int64)
            order = order.astype(np.int64)
            while True:
                status = _growth_loop(k, order, pos, *kaca_args(S), counts, unit, hd, perm,
                                      S["tr"], S["class_leaf"], S["st"], S["hp"], S["stk"], S["xa"], S["xb"],
                                      S["ea"], S["eb"], S["ties"], S["newtup"], CHUNK_WORK)
                K.chunk_done("finishing")
                if status == 0:
                    break
                if status == 2:
                    grow_state(S, m)
            # a stub of indivisible counted rows may leave its trunk below k: grow those too
            T, size, alive = S["T"], S["size"], S["alive"]
            order = np.flatnonzero(alive & (size < k))
            if len(order) and alive.sum() == 1:
                break
    return state_codes(S, n, m)


def class_codes(R, cls, ncls, hd):
    """Each row printed as the closest common generalisation of its class; rows
    with ``cls < 0`` keep their codes."""
    out = R.copy()
    if ncls:
        T = class_lcas(R, cls, ncls, hd)
        sel = cls >= 0
        out[sel] = T[cls[sel]]
    return out


@kernel
def class_lcas(R, cls, ncls, hd):
    n, m = R.shape
    T = np.full((ncls, m), -1, dtype=np.int32)
    for r in range(n):
        c = cls[r]
        if c < 0:
            continue
        for j in range(m):
            T[c, j] = R[r, j] if T[c, j] < 0 else K.lca_code(j, T[c, j], R[r, j], hd)
    return T
