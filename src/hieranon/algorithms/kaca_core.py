"""KACA's shared kernels: closest common generalisations, the class trie,
the nearest-class search and the merge (Li et al. 2008, Def. 8, 10, 14).

numba-compiled kernels over class arrays (tuple matrix, sizes, alive mask,
per-class linked lists of member rows) and dense per-attribute LCA tables
(:attr:`hieranon.hierarchies.readers.Hierarchy.lca_table`, or an ancestor-table walk
for hierarchies above :data:`hieranon.hierarchies.readers.DENSE_LCA_MAX_NODES` nodes).
:mod:`hieranon.algorithms.kaca` (KACA1, KACA2) and
:mod:`hieranon.algorithms.kacaplus` (finishing and refinement) drive them;
the search paths (plain scan, trie branch-and-bound) are described in
:mod:`hieranon.algorithms.kaca`.

In numba every call of a compiled function with array arguments pays
reference-count updates, which cost more than the work of a look-up: the
hot loops therefore inline the dense-LCA look-ups and the heap operations
by hand and only call helpers per query or per merge.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..core.cost import CostModel
from ..core.jit import kernel
from ..core.tree import DENSE_LCA_MAX_NODES, Hierarchy

_INF = np.iinfo(np.int64).max
_W_INF = np.iinfo(np.int32).max

# indices into the scalar state vector of the kernel
S_NSMALL, S_RPOS, S_MERGES, S_DSUM, S_TUSED, S_TFREE, S_SUPP, S_LOGN, S_ITER, S_EXPAND = range(10)
S_LEN = 16
#: Node expansions of the depth-first search that seeds the upper bound.
_PRE_BUDGET = 64


# =====================================================================
# numba kernels
#
# A note on style: in numba every call of a compiled function with array
# arguments pays reference-count updates, which cost more than the work of a
# look-up. The hot loops below therefore inline the dense-LCA look-ups and the
# heap operations by hand and only call helpers per query or per merge.
# =====================================================================
@kernel
def _lca_walk(j, a, b, anc_flat, anc_off, hh, depth_flat, nd_off):
    """Lowest common ancestor by walking the ancestor table (hierarchies too
    large for a dense LCA table)."""
    if a == b:
        return a
    d = min(depth_flat[nd_off[j] + a], depth_flat[nd_off[j] + b])
    h = hh[j]
    ao = anc_off[j]
    while d > 0:
        x = anc_flat[ao + a * h + d]
        if x == anc_flat[ao + b * h + d]:
            return x
        d -= 1
    return 0


@kernel
def lca_code(j, a, b, hd):
    """Lowest common ancestor of nodes ``a`` and ``b`` of attribute ``j``: the
    closest common generalisation of one attribute (Li et al. 2006, Def. 8)."""
    lca_flat, lca_off, nn, anc_flat, anc_off, hh, depth_flat, nd_off, g_flat = hd
    if a == b:
        return a
    lo = lca_off[j]
    if lo >= 0:
        return lca_flat[lo + a * nn[j] + b]
    return _lca_walk(j, a, b, anc_flat, anc_off, hh, depth_flat, nd_off)


@kernel(inline="always")
def merged_cost(T, c, e, hd, lca_flat, lca_off, nn, g_flat, nd_off):
    """The cost of the closest common generalisation of the tuples ``T[c]``
    and ``T[e]`` (integer units); ``lca_flat`` ... ``nd_off``: the parts of
    ``hd`` it reads, unpacked once by the caller. Inlined where it is
    called: a call taking arrays costs more than its look-ups (reference
    counts), and the dense lca tables are read in place for the same reason."""
    g = 0
    for j in range(T.shape[1]):
        a, b = T[c, j], T[e, j]
        if a == b:
            x = a
        elif lca_off[j] >= 0:
            x = lca_flat[lca_off[j] + a * nn[j] + b]
        else:
            x = lca_code(j, a, b, hd)
        g += g_flat[nd_off[j] + x]
    return g


@kernel(parallel=True)
def merge_costs(c, cand, T, gT, size, hd, gL, inc):
    """For each class ``e = cand[i]``, the cost ``gL[i]`` of the closest
    common generalisation of the tuples of ``c`` and ``e`` and the distortion
    ``inc[i]`` their merge adds: ``|c| (gL - g(t_c)) + |e| (gL - g(t_e))``
    (in numba's threads, each entry written by one: the same on any number
    of threads; on ISLR Wage's 1,414 classes already faster than one thread)."""
    lca_flat, lca_off, nn, g_flat, nd_off = hd[0], hd[1], hd[2], hd[8], hd[7]
    for i in prange(len(cand)):
        e = cand[i]
        g = merged_cost(T, c, e, hd, lca_flat, lca_off, nn, g_flat, nd_off)
        gL[i] = g
        inc[i] = size[c] * (g - gT[c]) + size[e] * (g - gT[e])


@kernel
def tuple_cost(tup, hd):
    """The distortion of one record printed as ``tup`` (integer units):
    the sum of its cells' costs."""
    g_flat = hd[8]
    nd_off = hd[7]
    s = 0
    for j in range(tup.shape[0]):
        s += g_flat[nd_off[j] + tup[j]]
    return s


@kernel
def _pair_slow(j, a, v, hd):
    """(C's side, other side) costs of attribute ``j`` for values ``a``, ``v``
    -- for attributes without per-query tables."""
    g_flat = hd[8]
    go = hd[7][j]
    if a == v:
        return 0, 0
    l = lca_code(j, a, v, hd)
    gl = g_flat[go + l]
    return gl - g_flat[go + a], gl - g_flat[go + v]


@kernel
def _span_slow(j, a, s, hd):
    """Bounds of attribute ``j``'s costs over classes whose values all lie below
    ``s`` -- for attributes without per-query tables."""
    g_flat = hd[8]
    go = hd[7][j]
    l = lca_code(j, a, s, hd)
    if l == s:
        return 0, 0
    gl = g_flat[go + l]
    return gl - g_flat[go + a], gl - g_flat[go + s]


@kernel
def _stub_records(c2, need, tail, prv, cnt):
    """Records a stub of class ``c2`` takes: whole rows from the end of its
    member list until at least ``need`` records (Li et al. 2008, Def. 14)."""
    taken = 0
    r = tail[c2]
    while taken < need and r >= 0:
        taken += cnt[r]
        r = prv[r]
    return taken


def chunk_done(stage: str) -> None:
    """Called by the drivers between two chunks of a long kernel (``stage``
    names it): each compiled kernel returns to Python after a bounded amount
    of work, so that a Ctrl-C (KeyboardInterrupt) stops a run within a
    fraction of a second. A no-op; a hook for progress and for tests."""


def check_k(k: int, counts: np.ndarray) -> None:
    """``1 <= k <= records``, else a ValueError saying which."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    total = int(counts.sum())
    if total < k:
        raise ValueError(f"k={k} exceeds the {total} records of the table")


@kernel
def _merge_records(c2, n2, nc, k, unit, need, tail, prv, cnt):
    """Records of class ``c2`` (``n2`` of them) that a merge with a class of
    ``nc`` records generalises: all of them when ``nc + n2 < 2k``, else a
    stub (Li et al. 2008, Def. 14) -- exactly ``need`` records when rows are
    single records (``unit``), else whole rows from the end of its list."""
    if nc + n2 < 2 * k:
        return n2
    if unit:
        return need
    return _stub_records(c2, need, tail, prv, cnt)


@kernel
def _query_tables(C, T, hd, xa, xb, ea, eb):
    """Per-query cost tables over every node ``v`` of every attribute ``j``
    with a dense LCA table (``a`` = C's value, ``l = lca(a, v)``, Def. 8): the
    exact contributions to the class distance (Def. 10) ``xa = g[l] - g[a]``
    (C's side) and ``xb = g[l] - g[v]`` (the other side), and bounds for a set
    of classes whose values all lie below ``v``: ``ea``/``eb`` = the same when
    ``a`` is not below ``v`` (then every such class has ``lca = l``), else 0."""
    lca_flat, lca_off, nn, anc_flat, anc_off, hh, depth_flat, nd_off, g_flat = hd
    for j in range(T.shape[1]):
        lo = lca_off[j]
        if lo < 0:
            continue
        a = T[C, j]
        go = nd_off[j]
        ga = g_flat[go + a]
        row = lo + a * nn[j]
        for v in range(nn[j]):
            l = lca_flat[row + v]
            gl = g_flat[go + l]
            xa[go + v] = gl - ga
            xb[go + v] = gl - g_flat[go + v]
            if l == v:
                ea[go + v] = 0
                eb[go + v] = 0
            else:
                ea[go + v] = gl - ga
                eb[go + v] = gl - g_flat[go + v]


# ------------------------------------------------------------- trie
# The trie of the alive classes: level q (1..m) holds the values of attribute
# perm[q-1]; a leaf (depth m) is one alive class (tuples are unique, Def. 2).
# Node records are split for the search's sake:
#   hot[x]  = (value, next sibling, W, first child -- or the class at a leaf)
#   cold[x] = (parent, alive classes below, depth, unused)
#   span[x, q] (q >= depth) = a common ancestor of the values of attribute
#             perm[q] of every class below x (exact after inserts, possibly
#             more general after removals: still a valid bound)
# W = min(|C'|, 2k) minimised over the classes below (exact after every update).
_V, _N, _W, _FC = 0, 1, 2, 3
_P, _A, _D = 0, 1, 2
#: The trie's layout for its readers elsewhere: columns of ``hot`` (value,
#: next sibling, least weight below, first child or the leaf's class) and of
#: ``cold`` (parent, depth); the weight of an empty node.
TRIE_VALUE, TRIE_NEXT, TRIE_MIN_W, TRIE_FIRST = _V, _N, _W, _FC
TRIE_PARENT, TRIE_DEPTH = _P, _D
TRIE_NO_W = _W_INF


@kernel
def trie_insert(c, tup, wc, perm, tr, st, class_leaf, hd):
    hot, cold, span = tr
    lca_flat, lca_off, nn, anc_flat, anc_off, hh, depth_flat, nd_off, g_flat = hd
    m = perm.shape[0]
    node = 0
    for d in range(m):
        # widen the node's spans by the new tuple
        for q in range(d, m):
            j = perm[q]
            s = span[node, q]
            b = tup[j]
            if s < 0:
                span[node, q] = b
            elif s != b:
                lo = lca_off[j]
                if lo >= 0:
                    span[node, q] = lca_flat[lo + s * nn[j] + b]
                else:
                    span[node, q] = _lca_walk(j, s, b, anc_flat, anc_off, hh, depth_flat, nd_off)
        v = tup[perm[d]]
        ch = hot[node, _FC]
        while ch >= 0 and hot[ch, _V] != v:
            ch = hot[ch, _N]
        if ch < 0:
            # a new node (reuse a freed one), linked at the head of the child list
            ch = st[S_TFREE]
            if ch >= 0:
                st[S_TFREE] = hot[ch, _N]
            else:
                ch = st[S_TUSED]
                st[S_TUSED] = ch + 1
            hot[ch, _V] = v
            hot[ch, _W] = _W_INF
            hot[ch, _FC] = -1
            cold[ch, _P] = node
            cold[ch, _A] = 0
            cold[ch, _D] = d + 1
            for q in range(d + 1, m):
                span[ch, q] = -1
            hot[ch, _N] = hot[node, _FC]
            hot[node, _FC] = ch
        node = ch
    hot[node, _FC] = c
    class_leaf[c] = node
    x = node
    while x >= 0:
        cold[x, _A] += 1
        if wc < hot[x, _W]:
            hot[x, _W] = wc
        x = cold[x, _P]


@kernel
def trie_lookup(tup, perm, hot):
    """Class id of the alive class whose tuple is ``tup``, or -1."""
    node = 0
    for d in range(perm.shape[0]):
        v = tup[perm[d]]
        ch = hot[node, _FC]
        while ch >= 0 and hot[ch, _V] != v:
            ch = hot[ch, _N]
        if ch < 0:
            return -1
        node = ch
    return hot[node, _FC]


@kernel
def trie_remove(c, tr, st, class_leaf):
    hot, cold, span = tr
    x = class_leaf[c]
    class_leaf[c] = -1
    hot[x, _FC] = -1
    flag = False  # does the parent of x need its minimum recomputed?
    while x >= 0:
        p = cold[x, _P]
        cold[x, _A] -= 1
        if x != 0 and cold[x, _A] == 0:
            flag = hot[x, _W] == hot[p, _W]
            # unlink from the parent's child list and free
            ch = hot[p, _FC]
            if ch == x:
                hot[p, _FC] = hot[x, _N]
            else:
                while hot[ch, _N] != x:
                    ch = hot[ch, _N]
                hot[ch, _N] = hot[x, _N]
            hot[x, _N] = st[S_TFREE]
            st[S_TFREE] = x
        elif flag:
            old = hot[x, _W]
            best = _W_INF
            ch = hot[x, _FC]
            while ch >= 0:
                if hot[ch, _W] < best:
                    best = hot[ch, _W]
                ch = hot[ch, _N]
            hot[x, _W] = best
            flag = p >= 0 and best != old and old == hot[p, _W]
        x = p


@kernel
def trie_refresh(c, wc, tr, class_leaf):
    """Class ``c``'s ``min(|c|, 2k)`` changed to ``wc``: refresh the minima above it."""
    hot, cold, span = tr
    x = class_leaf[c]
    old = hot[x, _W]
    if old == wc:
        return
    hot[x, _W] = wc
    while x != 0:
        p = cold[x, _P]
        po = hot[p, _W]
        if hot[x, _W] < po:
            hot[p, _W] = hot[x, _W]
        elif old == po and hot[x, _W] > old:
            best = _W_INF
            ch = hot[p, _FC]
            while ch >= 0:
                if hot[ch, _W] < best:
                    best = hot[ch, _W]
                ch = hot[ch, _N]
            hot[p, _W] = best
        if hot[p, _W] == po:
            break
        old = po
        x = p


@kernel
def _trie_spans(T, perm, tr, class_leaf, hd):
    """Spans of the initial trie: every class widens the spans on its path."""
    hot, cold, span = tr
    lca_flat, lca_off, nn, anc_flat, anc_off, hh, depth_flat, nd_off, g_flat = hd
    m = perm.shape[0]
    for c in range(T.shape[0]):
        x = class_leaf[c]
        while x >= 0:
            for q in range(cold[x, _D], m):
                j = perm[q]
                s = span[x, q]
                b = T[c, j]
                if s < 0:
                    span[x, q] = b
                elif s != b:
                    lo = lca_off[j]
                    if lo >= 0:
                        span[x, q] = lca_flat[lo + s * nn[j] + b]
                    else:
                        span[x, q] = _lca_walk(j, s, b, anc_flat, anc_off, hh, depth_flat, nd_off)
            x = cold[x, _P]


# ------------------------------------------------------------- nearest
@kernel
def nearest_plain(C, k, T, size, alive, unit, tail, prv, cnt, hd, xa, xb, ea, eb, ties):
    """Li et al. 2008, Algorithm 1, lines 4-5, as the paper does it: the class
    distance (Def. 10, with the stub rule of Def. 14) from ``C`` to every
    other class. Returns the smallest distance and the number of classes at
    it, written to ``ties`` in class-id order."""
    lca_off = hd[1]
    nd_off = hd[7]
    ncls, m = T.shape
    _query_tables(C, T, hd, xa, xb, ea, eb)
    nc = size[C]
    need = k - nc
    best = _INF
    nt = 0
    for c2 in range(ncls):
        if not alive[c2] or c2 == C:
            continue
        sa = 0
        sb = 0
        for j in range(m):
            b = T[c2, j]
            if lca_off[j] >= 0:
                sa += xa[nd_off[j] + b]
                sb += xb[nd_off[j] + b]
            else:
                fa, fb = _pair_slow(j, T[C, j], b, hd)
                sa += fa
                sb += fb
        n2 = size[c2]
        w = _merge_records(c2, n2, nc, k, unit, need, tail, prv, cnt)
        d = nc * sa + w * sb
        if d < best:
            best = d
            ties[0] = c2
            nt = 1
        elif d == best:
            ties[nt] = c2
            nt += 1
    return best, nt


@kernel
def nearest_fast(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st, xa, xb, ea, eb,
                  class_leaf, stk):
    """The same minimum and the same tie set (in class-id order) as
    :func:`nearest_plain`, by an exact best-first branch-and-bound over the
    class trie.

    A node's bound is ``|C| * A + min(W, k - |C|) * B`` where ``A``/``B`` are
    the costs of ``C``'s side and the candidate's side: exact over the
    attributes fixed by the path, bounded through the node's spans for the
    others (every attribute adds ``>= 0``), and ``W`` the smallest
    ``min(|C'|, 2k)`` below (the stub rule gives ``C'`` a weight
    ``>= min(|C'|, k - |C|)``). Nodes whose bound *equals* the best distance
    are expanded too, so every tied class is found."""
    hot, cold, span = tr
    lca_off = hd[1]
    nd_off = hd[7]
    m = perm.shape[0]
    nc = size[C]
    need = k - nc
    _query_tables(C, T, hd, xa, xb, ea, eb)
    # An upper bound first: a small depth-first branch-and-bound below the
    # deepest trie ancestor of C holding another class (those classes share
    # C's longest prefix). Only the bound is kept; the search below finds
    # the same classes again.
    best = _INF
    x = class_leaf[C]
    while x != 0 and cold[x, _A] < 2:
        x = cold[x, _P]
    stk[0, 0] = x
    stk[0, 1] = 0
    stk[0, 2] = 0
    sp = 1
    budget = _PRE_BUDGET
    while sp > 0 and budget > 0:
        budget -= 1
        sp -= 1
        node = stk[sp, 0]
        sa0 = stk[sp, 1]
        sb0 = stk[sp, 2]
        d = cold[node, _D]
        j = perm[d]
        a = T[C, j]
        go = nd_off[j]
        tab = lca_off[j] >= 0
        ch = hot[node, _FC]
        while ch >= 0:
            v = hot[ch, _V]
            if tab:
                sa = sa0 + xa[go + v]
                sb = sb0 + xb[go + v]
            else:
                fa, fb = _pair_slow(j, a, v, hd)
                sa = sa0 + fa
                sb = sb0 + fb
            if d + 1 == m:
                c2 = hot[ch, _FC]
                if c2 != C:
                    n2 = hot[ch, _W]
                    w = _merge_records(c2, n2, nc, k, unit, need, tail, prv, cnt)
                    dist = nc * sa + w * sb
                    if dist < best:
                        best = dist
            else:
                wl = hot[ch, _W]
                if wl > need:
                    wl = need
                if nc * sa + wl * sb < best:
                    stk[sp, 0] = ch
                    stk[sp, 1] = sa
                    stk[sp, 2] = sb
                    sp += 1
            ch = hot[ch, _N]
    nt = 0
    hp[0, 0] = 0
    hp[0, 1] = 0
    hp[0, 2] = 0
    hp[0, 3] = 0
    hn = 1
    expanded = 0
    while hn > 0:
        if hp[0, 0] > best:
            break
        node = hp[0, 1]
        sa0 = hp[0, 2]
        sb0 = hp[0, 3]
        # pop the heap's root
        hn -= 1
        if hn > 0:
            key = hp[hn, 0]
            i = 0
            while True:
                c = 2 * i + 1
                if c >= hn:
                    break
                if c + 1 < hn and hp[c + 1, 0] < hp[c, 0]:
                    c += 1
                if hp[c, 0] >= key:
                    break
                hp[i, 0] = hp[c, 0]
                hp[i, 1] = hp[c, 1]
                hp[i, 2] = hp[c, 2]
                hp[i, 3] = hp[c, 3]
                i = c
            hp[i, 0] = key
            hp[i, 1] = hp[hn, 1]
            hp[i, 2] = hp[hn, 2]
            hp[i, 3] = hp[hn, 3]
        expanded += 1
        d = cold[node, _D]
        j = perm[d]
        a = T[C, j]
        go = nd_off[j]
        tab = lca_off[j] >= 0
        ch = hot[node, _FC]
        if d + 1 == m:
            # children are classes: exact distances
            while ch >= 0:
                c2 = hot[ch, _FC]
                if c2 != C:
                    v = hot[ch, _V]
                    if tab:
                        sa = sa0 + xa[go + v]
                        sb = sb0 + xb[go + v]
                    else:
                        fa, fb = _pair_slow(j, a, v, hd)
                        sa = sa0 + fa
                        sb = sb0 + fb
                    n2 = hot[ch, _W]  # min(|C'|, 2k): enough for the stub rule
                    w = _merge_records(c2, n2, nc, k, unit, need, tail, prv, cnt)
                    dist = nc * sa + w * sb
                    if dist < best:
                        best = dist
                        ties[0] = c2
                        nt = 1
                    elif dist == best:
                        ties[nt] = c2
                        nt += 1
                ch = hot[ch, _N]
            continue
        while ch >= 0:
            v = hot[ch, _V]
            if tab:
                sa = sa0 + xa[go + v]
                sb = sb0 + xb[go + v]
            else:
                fa, fb = _pair_slow(j, a, v, hd)
                sa = sa0 + fa
                sb = sb0 + fb
            wl = hot[ch, _W]
            if wl > need:
                wl = need
            if nc * sa + wl * sb <= best:
                ua = sa
                ub = sb
                for q in range(d + 1, m):
                    jq = perm[q]
                    s = span[ch, q]
                    if lca_off[jq] >= 0:
                        ua += ea[nd_off[jq] + s]
                        ub += eb[nd_off[jq] + s]
                    else:
                        fa, fb = _span_slow(jq, T[C, jq], s, hd)
                        ua += fa
                        ub += fb
                key = nc * ua + wl * ub
                if key <= best:
                    # push (key, ch, sa, sb)
                    i = hn
                    while i > 0:
                        p = (i - 1) >> 1
                        if hp[p, 0] <= key:
                            break
                        hp[i, 0] = hp[p, 0]
                        hp[i, 1] = hp[p, 1]
                        hp[i, 2] = hp[p, 2]
                        hp[i, 3] = hp[p, 3]
                        i = p
                    hp[i, 0] = key
                    hp[i, 1] = ch
                    hp[i, 2] = sa
                    hp[i, 3] = sb
                    hn += 1
            ch = hot[ch, _N]
    st[S_EXPAND] += expanded
    if nt > 1:
        ties[:nt].sort()
    return best, nt


# ------------------------------------------------------------- a heap
@kernel
def heap_push(hk, hc, hv, n, key, c, v):
    """Push ``(key, c, v)`` on the binary min-heap of keys ``hk`` (ties by
    ``c``), classes ``hc`` and versions ``hv`` holding ``n`` entries; returns
    the new size."""
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


@kernel
def heap_pop(hk, hc, hv, n):
    """Drop the top of the heap of :func:`heap_push` (read it first from
    ``hk[0]``, ``hc[0]``, ``hv[0]``); returns the new size."""
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


# ------------------------------------------------------------- bookkeeping
@kernel
def set_small(c, k, size, alive, small_list, small_pos, st):
    """Keep ``c``'s membership of the list of classes of size < k in step."""
    is_small = alive[c] and size[c] < k
    p = small_pos[c]
    if is_small and p < 0:
        n = st[S_NSMALL]
        small_list[n] = c
        small_pos[c] = n
        st[S_NSMALL] = n + 1
    elif not is_small and p >= 0:
        n = st[S_NSMALL] - 1
        last = small_list[n]
        small_list[p] = last
        small_pos[last] = p
        small_pos[c] = -1
        st[S_NSMALL] = n


@kernel
def merge_classes(C, c2, k, T, size, alive, head, tail, nxt, prv, cnt, unit, hd, perm, tr, st, class_leaf, newtup):
    """Li et al. 2008, Algorithm 1, line 6: generalise ``C`` with ``C'`` -- with its
    stub of ``k - |C|`` records when ``|C| + |C'| >= 2k`` (Def. 14), the trunk
    keeping ``C'``'s tuple -- to their closest common generalisation (Def. 8).
    A result equal to another class's tuple joins that class (Def. 2).
    Returns (distance, kind 0 whole / 1 stub, class now holding C's rows)."""
    g_flat = hd[8]
    nd_off = hd[7]
    m = T.shape[1]
    nc = size[C]
    n2 = size[c2]
    need = k - nc
    sa = 0
    sb = 0
    eq_c = True
    eq_c2 = True
    for j in range(m):
        a = T[C, j]
        b = T[c2, j]
        l = lca_code(j, a, b, hd)
        newtup[j] = l
        go = nd_off[j]
        sa += g_flat[go + l] - g_flat[go + a]
        sb += g_flat[go + l] - g_flat[go + b]
        if l != a:
            eq_c = False
        if l != b:
            eq_c2 = False
    stub = nc + n2 >= 2 * k
    s = n2
    if stub:
        s = need if unit else _stub_records(c2, need, tail, prv, cnt)
        if s >= n2:  # indivisible rows took all of C': a whole merge
            s = n2
            stub = False
    dist = nc * sa + s * sb
    kind = 1 if stub else 0
    hot = tr[0]
    if eq_c2:
        # C' generalises C: C joins C' (a stub of C' would keep its tuple)
        nxt[tail[c2]] = head[C]
        prv[head[C]] = tail[c2]
        tail[c2] = tail[C]
        trie_remove(C, tr, st, class_leaf)
        head[C] = -1
        tail[C] = -1
        alive[C] = False
        size[C] = 0
        size[c2] = n2 + nc
        trie_refresh(c2, min(size[c2], 2 * k), tr, class_leaf)
        return dist, kind, c2
    if stub:
        # detach the stub: whole rows from the end of C''s list
        taken = 0
        last_r = tail[c2]
        r = last_r
        first_r = r
        while taken < s:
            taken += cnt[r]
            first_r = r
            r = prv[r]
        tail[c2] = r
        nxt[r] = -1
        size[c2] = n2 - s
        trie_refresh(c2, min(size[c2], 2 * k), tr, class_leaf)
        nxt[tail[C]] = first_r
        prv[first_r] = tail[C]
        tail[C] = last_r
        size[C] = nc + s
    else:
        nxt[tail[C]] = head[c2]
        prv[head[c2]] = tail[C]
        tail[C] = tail[c2]
        head[c2] = -1
        tail[c2] = -1
        trie_remove(c2, tr, st, class_leaf)
        alive[c2] = False
        size[c2] = 0
        size[C] = nc + n2
    if eq_c:
        trie_refresh(C, min(size[C], 2 * k), tr, class_leaf)
        return dist, kind, C
    trie_remove(C, tr, st, class_leaf)
    e = trie_lookup(newtup, perm, hot)
    if e >= 0:
        # the result is an existing class's tuple: join it (Def. 2)
        nxt[tail[e]] = head[C]
        prv[head[C]] = tail[e]
        tail[e] = tail[C]
        head[C] = -1
        tail[C] = -1
        size[e] += size[C]
        alive[C] = False
        size[C] = 0
        trie_refresh(e, min(size[e], 2 * k), tr, class_leaf)
        return dist, kind, e
    for j in range(m):
        T[C, j] = newtup[j]
    trie_insert(C, newtup, min(size[C], 2 * k), perm, tr, st, class_leaf, hd)
    return dist, kind, C


def _trie_capacity(used: int, m: int) -> int:
    """Node capacity to allocate for ``used`` nodes (room for merges to insert)."""
    return used + max(used // 4, 64 * (m + 1), 1024)


def _new_trie(cap: int, m: int, span_dtype):
    hot = np.full((cap, 4), -1, dtype=np.int32)
    hot[:, _W] = _W_INF
    cold = np.zeros((cap, 4), dtype=np.int32)
    span = np.full((cap, max(m, 1)), -1, dtype=span_dtype)
    return hot, cold, span


def empty_trie(capacity: int, m: int, n_nodes: np.ndarray) -> tuple[tuple, np.ndarray]:
    """A trie of no class with room for ``capacity`` nodes (the root
    included), over ``m`` attributes of ``n_nodes`` nodes each; classes go in
    with :func:`trie_insert`. Returns ``(tr, state)``: the trie and a state
    vector whose :data:`S_TUSED` / :data:`S_TFREE` slots :func:`trie_insert`
    and :func:`trie_remove` keep. A trie of ``c`` classes uses at most
    ``c * m + 1`` nodes (freed ones are reused)."""
    span_dtype = np.int16 if int(np.max(n_nodes, initial=0)) < 2**15 else np.int32
    tr = _new_trie(max(int(capacity), 1), m, span_dtype)
    tr[1][0, _P] = -1
    state = np.zeros(S_LEN, dtype=np.int64)
    state[S_TUSED] = 1
    state[S_TFREE] = -1
    return tr, state


def grow_trie(tr, hp, stk, used: int, m: int):
    """Larger copies of the trie, heap and stack arrays (the kernel asked for room)."""
    cap = 2 * _trie_capacity(used, m)
    new = _new_trie(cap, m, tr[2].dtype)
    for old, arr in zip(tr, new):
        arr[: len(old)] = old
    return new, np.zeros((cap, 4), dtype=np.int64), np.zeros((cap, 3), dtype=np.int64)


def build_trie(T: np.ndarray, size: np.ndarray, k: int, perm: np.ndarray, hd):
    """The trie of the initial classes in breadth-first order (siblings are
    contiguous in memory). Returns ``(hot, cold, span)``, the number of nodes
    used and each class's leaf node."""
    ncls, m = T.shape
    span_dtype = np.int16 if int(hd[2].max(initial=0)) < 2**15 else np.int32
    w = np.minimum(size, 2 * k).astype(np.int32)
    class_leaf = np.full(ncls, -1, dtype=np.int32)
    if ncls == 0 or m == 0:
        tr = _new_trie(_trie_capacity(1, m), m, span_dtype)
        tr[1][0, _P] = -1
        return tr, 1, class_leaf
    P = T[:, perm]
    nn = hd[2][perm]
    if float(np.prod(nn.astype(np.float64))) < 2.0**62:
        key = np.zeros(ncls, dtype=np.int64)  # mixed radix: one sort instead of a lexsort
        for q in range(m):
            key = key * int(nn[q]) + P[:, q]
        order = np.argsort(key, kind="stable")
    else:
        order = np.lexsort(P.T[::-1])
    Ps = P[order]
    ws = w[order]
    new = np.zeros(ncls, dtype=bool)
    new[0] = True
    levels = []
    parent_of_row = np.zeros(ncls, dtype=np.int64)  # node of each sorted row at the previous depth
    base = 1
    for d in range(m):
        if ncls > 1:
            new[1:] |= Ps[1:, d] != Ps[:-1, d]
        starts = np.flatnonzero(new)
        node_of_row = base + np.cumsum(new) - 1
        levels.append((base, starts, parent_of_row[starts]))
        parent_of_row = node_of_row
        base += len(starts)
    tr = hot, cold, span = _new_trie(_trie_capacity(base, m), m, span_dtype)
    cold[0, _P] = -1
    cold[0, _A] = ncls
    hot[0, _W] = w.min()
    for d, (b0, starts, par) in enumerate(levels):
        ids = b0 + np.arange(len(starts))
        hot[ids, _V] = Ps[starts, d]
        cold[ids, _P] = par
        cold[ids, _D] = d + 1
        ends = np.r_[starts[1:], ncls]
        cold[ids, _A] = ends - starts
        hot[ids, _W] = np.minimum.reduceat(ws, starts)
        same_parent = np.r_[par[1:] == par[:-1], False]
        hot[ids[same_parent], _N] = ids[same_parent] + 1
        first = np.r_[True, par[1:] != par[:-1]]
        hot[par[first], _FC] = ids[first]
    hot[parent_of_row, _FC] = order
    class_leaf[order] = parent_of_row
    _trie_spans(T, perm, tr, class_leaf, hd)
    return tr, base, class_leaf


@kernel
def rows_to_codes(T, alive, head, nxt, out):
    for c in range(T.shape[0]):
        if alive[c]:
            r = head[c]
            while r >= 0:
                out[r, :] = T[c, :]
                r = nxt[r]


# =====================================================================
# Python side
# =====================================================================
def hierarchy_data(hierarchies: list[Hierarchy], cost: CostModel):
    """Flattened per-attribute arrays for the kernels: dense LCA tables (or
    ancestor tables), depths and integer node costs."""
    m = len(hierarchies)
    nn = np.array([h.n_nodes for h in hierarchies], dtype=np.int64)
    nd_off = np.zeros(m, dtype=np.int64)
    if m:
        nd_off[1:] = np.cumsum(nn)[:-1]
    g_flat = np.concatenate([np.asarray(c, dtype=np.int64) for c in cost.int_costs]) if m else np.zeros(0, np.int64)
    depth_flat = np.concatenate([h.depth.astype(np.int64) for h in hierarchies]) if m else np.zeros(0, np.int64)
    lca_parts, anc_parts = [], []
    lca_off = np.full(m, -1, dtype=np.int64)
    anc_off = np.full(m, -1, dtype=np.int64)
    hh = np.array([h.height for h in hierarchies], dtype=np.int64)
    pos_l = pos_a = 0
    for j, h in enumerate(hierarchies):
        if h.n_nodes <= DENSE_LCA_MAX_NODES:
            t = np.ascontiguousarray(h.lca_table, dtype=np.int32).ravel()
            lca_off[j] = pos_l
            lca_parts.append(t)
            pos_l += t.size
        else:
            a = np.ascontiguousarray(h.ancestors, dtype=np.int32).ravel()
            anc_off[j] = pos_a
            anc_parts.append(a)
            pos_a += a.size
    lca_flat = np.concatenate(lca_parts) if lca_parts else np.zeros(1, np.int32)
    anc_flat = np.concatenate(anc_parts) if anc_parts else np.zeros(1, np.int32)
    return (lca_flat, lca_off, nn, anc_flat, anc_off, hh, depth_flat, nd_off, g_flat)


def choose_trie_order(codes: np.ndarray, n_nodes: np.ndarray) -> np.ndarray:
    """Attribute order of the search trie (any order gives the same result):
    fewest distinct values first, so the nodes expanded most often (near the
    root) have few children and the wide attributes sit near the leaves."""
    distinct = [int(np.count_nonzero(np.bincount(codes[:, j], minlength=int(n_nodes[j]))))
                for j in range(codes.shape[1])]
    return np.argsort(np.asarray(distinct), kind="stable").astype(np.int64)
