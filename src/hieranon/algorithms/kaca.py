"""KACA1 and KACA2: k-anonymisation by clustering in attribute hierarchies.

Local recoding by agglomerative clustering of equivalence classes, after
Li, Wong, Fu and Pei (seed 000, DaWaK 2006, Algorithm 1 "KACA"; seed 004,
TKDE 2008, Algorithm 1 "KACA1" and Algorithm 2 "KACA2"), with the exact
semantics fixed by SPEC section 3:

* classes are the distinct code tuples (seed 004, Def. 2); a class's tuple may
  already be generalised;
* while a class of size ``< k`` exists, one such class ``C`` is chosen
  uniformly at random (``numpy.random.default_rng(problem.seed)``);
* the distance from ``C`` to every other class ``C'`` is the class distance of
  Def. 10 (``|C| * Distortion(t, t12) + |C'| * Distortion(t', t12)``, ``t12``
  the closest common generalisation of Def. 8) -- except when
  ``|C| + |C'| >= 2k``, where it is the distance to the *stub* of ``C'``
  (Def. 14): ``k - |C|`` of its records;
* ``C`` is generalised with the nearest class (exact integer distances; ties
  broken with the seeded RNG among *all* nearest classes in class-id order):
  with the whole of ``C'``, or with its stub, the *trunk* of
  ``|C| + |C'| - k`` records keeping ``C'``'s tuple;
* a merge whose resulting tuple equals another class's tuple joins that class
  (classes with identical tuples are one class, Def. 2).

Distances are computed with the integer costs of
:class:`hieranon.metrics.CostModel` (``int_costs[j][v] - int_costs[j][u]`` is
the cost of generalising attribute ``j`` from ``u`` to its ancestor ``v``), so
ties are real ties. By Lemma 2 of seed 004 the total distortion of the output
equals the sum of the merge distances (``details.distance_sum``).

Two interchangeable search paths find the nearest classes:

``fast=False`` (plain)
    the paper's scan of every class per chosen class, ``O(|E| * |E_s| * m)``;
``fast=True`` (default)
    an exact best-first branch-and-bound over a trie of the alive class
    tuples (one level per attribute, fewest distinct values first), kept up
    to date merge by merge. A trie node's lower bound is
    ``|C| * A + min(W, k - |C|) * B``: ``A``/``B`` are the costs of ``C``'s
    side and the candidate's side -- exact over the attributes fixed by the
    path, and for the others bounded through a per-node *span* (a common
    ancestor of the values below: when ``C``'s value is not under the span,
    every class below has the same LCA with it); every attribute adds
    ``>= 0``. ``W`` is the smallest ``min(|C'|, 2k)`` below the node (under
    the stub rule ``C'`` weighs ``>= min(|C'|, k - |C|)``). A small
    depth-first search among the classes sharing ``C``'s longest trie prefix
    gives a first upper bound. Nodes whose bound *equals* the best distance
    are still expanded, so *all* tied nearest classes are found; they are
    then sorted by class id. Both paths consume the same random numbers in
    the same way and return exactly the same merges (checked by the tests).

The clustering loop runs in numba-compiled kernels over class arrays (tuple
matrix, sizes, alive mask, per-class linked lists of member rows) and dense
per-attribute LCA tables (:attr:`hieranon.hierarchy.Hierarchy.lca_table`, or an
ancestor-table walk for hierarchies above
:data:`hieranon.hierarchy.DENSE_LCA_MAX_NODES` nodes).

Optional outlier suppression (seed 000, sec. 5): with
``suppression_threshold`` set, a chosen class whose nearest distance exceeds
the threshold (in distortion units, the float scale of the cost model) is
suppressed instead of merged: all its QI cells become the root, its rows are
flagged in :attr:`Solution.suppressed` and counted in
``details.suppressed_records``.

The stub is taken from the end of ``C'``'s member list (its last rows in
input order for an original class). Rows with record counts > 1 are
indivisible: a stub takes whole rows until it holds at least ``k - |C|``
records, and the distance uses the records actually taken, so Lemma 2 still
holds exactly.
"""

from __future__ import annotations

import math
import time
from numbers import Real

import numpy as np
from numba import njit

from ..hierarchy import DENSE_LCA_MAX_NODES, Hierarchy
from ..metrics import CostModel, distortion, inconsistency
from ..table import group
from .details import KACA2Details, KACADetails
from .base import Algorithm, Problem, Solution, log
from .params import Interval

__all__ = ["KACA1", "KACA2", "kaca1_codes", "kaca2_global_levels", "kaca2_final_levels"]

_INF = np.iinfo(np.int64).max
_W_INF = np.iinfo(np.int32).max

# indices into the scalar state vector of the kernel
_S_NSMALL, _S_RPOS, _S_MERGES, _S_DSUM, _S_TUSED, _S_TFREE, _S_SUPP, _S_LOGN, _S_ITER, _S_EXPAND = range(10)
_S_LEN = 16
_RAND_BATCH_MIN = 1024
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
@njit(cache=True)
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


@njit(cache=True)
def _lca(j, a, b, hd):
    """Lowest common ancestor of nodes ``a`` and ``b`` of attribute ``j``: the
    closest common generalisation of one attribute (seed 004, Def. 8)."""
    lca_flat, lca_off, nn, anc_flat, anc_off, hh, depth_flat, nd_off, g_flat = hd
    if a == b:
        return a
    lo = lca_off[j]
    if lo >= 0:
        return lca_flat[lo + a * nn[j] + b]
    return _lca_walk(j, a, b, anc_flat, anc_off, hh, depth_flat, nd_off)


@njit(cache=True)
def _pair_slow(j, a, v, hd):
    """(C's side, other side) costs of attribute ``j`` for values ``a``, ``v``
    -- for attributes without per-query tables."""
    g_flat = hd[8]
    go = hd[7][j]
    if a == v:
        return 0, 0
    l = _lca(j, a, v, hd)
    gl = g_flat[go + l]
    return gl - g_flat[go + a], gl - g_flat[go + v]


@njit(cache=True)
def _span_slow(j, a, s, hd):
    """Bounds of attribute ``j``'s costs over classes whose values all lie below
    ``s`` -- for attributes without per-query tables."""
    g_flat = hd[8]
    go = hd[7][j]
    l = _lca(j, a, s, hd)
    if l == s:
        return 0, 0
    gl = g_flat[go + l]
    return gl - g_flat[go + a], gl - g_flat[go + s]


@njit(cache=True)
def _stub_records(c2, need, tail, prv, cnt):
    """Records a stub of class ``c2`` takes: whole rows from the end of its
    member list until at least ``need`` records (seed 004, Def. 14)."""
    taken = 0
    r = tail[c2]
    while taken < need and r >= 0:
        taken += cnt[r]
        r = prv[r]
    return taken


def check_k(k: int, counts: np.ndarray) -> None:
    """``1 <= k <= records``, else a ValueError saying which."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    total = int(counts.sum())
    if total < k:
        raise ValueError(f"k={k} exceeds the {total} records of the table")


def _complete_suppression(out: np.ndarray, suppressed: np.ndarray, counts: np.ndarray, k: int, cost) -> int:
    """Suppressed records print ``*`` everywhere and so form a class of their
    own, which must hold >= k records like any other. When outlier suppression
    left 1..k-1 of them, suppress more: surplus rows of classes that keep >= k
    (the most generalised classes first: they lose least), else the smallest
    whole class. Updates ``out`` and ``suppressed``; returns the records added."""
    have = int(counts[suppressed].sum())
    if have == 0 or have >= k:
        return 0
    need = k - have
    rest = np.flatnonzero(~suppressed)
    ec = group(out[rest], counts[rest])
    tuple_cost = cost.cell_costs(ec.keys).sum(axis=1) if len(ec.keys) else np.zeros(0)
    members = [[] for _ in range(ec.n_classes)]
    for r, c in zip(rest, ec.row_class):
        members[c].append(r)
    taken: list[int] = []
    for c in np.argsort(-tuple_cost, kind="stable"):
        left = int(ec.sizes[c])
        for r in reversed(members[c]):  # rows from the end of the class, as a stub (Def. 14)
            if need <= 0:
                break
            if left - counts[r] >= k:
                taken.append(r)
                left -= int(counts[r])
                need -= int(counts[r])
        if need <= 0:
            break
    if need > 0:  # no surplus to take: the smallest class goes whole
        taken = members[int(np.argmin(ec.sizes))]
    taken = np.asarray(taken, dtype=np.int64)
    suppressed[taken] = True
    out[taken] = 0
    return int(counts[taken].sum())


@njit(cache=True)
def _merge_records(c2, n2, nc, k, unit, need, tail, prv, cnt):
    """Records of class ``c2`` (``n2`` of them) that a merge with a class of
    ``nc`` records generalises: all of them when ``nc + n2 < 2k``, else a
    stub (seed 004, Def. 14) -- exactly ``need`` records when rows are
    single records (``unit``), else whole rows from the end of its list."""
    if nc + n2 < 2 * k:
        return n2
    if unit:
        return need
    return _stub_records(c2, need, tail, prv, cnt)


@njit(cache=True)
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


@njit(cache=True)
def _trie_insert(c, tup, wc, perm, tr, st, class_leaf, hd):
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
            ch = st[_S_TFREE]
            if ch >= 0:
                st[_S_TFREE] = hot[ch, _N]
            else:
                ch = st[_S_TUSED]
                st[_S_TUSED] = ch + 1
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


@njit(cache=True)
def _trie_lookup(tup, perm, hot):
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


@njit(cache=True)
def _trie_remove(c, tr, st, class_leaf):
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
            hot[x, _N] = st[_S_TFREE]
            st[_S_TFREE] = x
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


@njit(cache=True)
def _trie_refresh(c, wc, tr, class_leaf):
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


@njit(cache=True)
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
@njit(cache=True)
def _nearest_plain(C, k, T, size, alive, unit, tail, prv, cnt, hd, xa, xb, ea, eb, ties):
    """Seed 004, Algorithm 1, lines 4-5, as the paper does it: the class
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


@njit(cache=True)
def _nearest_fast(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st, xa, xb, ea, eb,
                  class_leaf, stk):
    """The same minimum and the same tie set (in class-id order) as
    :func:`_nearest_plain`, by an exact best-first branch-and-bound over the
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
    st[_S_EXPAND] += expanded
    if nt > 1:
        ties[:nt].sort()
    return best, nt


# ------------------------------------------------------------- bookkeeping
@njit(cache=True)
def _set_small(c, k, size, alive, small_list, small_pos, st):
    """Keep ``c``'s membership of the list of classes of size < k in step."""
    is_small = alive[c] and size[c] < k
    p = small_pos[c]
    if is_small and p < 0:
        n = st[_S_NSMALL]
        small_list[n] = c
        small_pos[c] = n
        st[_S_NSMALL] = n + 1
    elif not is_small and p >= 0:
        n = st[_S_NSMALL] - 1
        last = small_list[n]
        small_list[p] = last
        small_pos[last] = p
        small_pos[c] = -1
        st[_S_NSMALL] = n


@njit(cache=True)
def _merge(C, c2, k, T, size, alive, head, tail, nxt, prv, cnt, unit, hd, perm, tr, st, class_leaf, newtup):
    """Seed 004, Algorithm 1, line 6: generalise ``C`` with ``C'`` -- with its
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
        l = _lca(j, a, b, hd)
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
        _trie_remove(C, tr, st, class_leaf)
        head[C] = -1
        tail[C] = -1
        alive[C] = False
        size[C] = 0
        size[c2] = n2 + nc
        _trie_refresh(c2, min(size[c2], 2 * k), tr, class_leaf)
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
        _trie_refresh(c2, min(size[c2], 2 * k), tr, class_leaf)
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
        _trie_remove(c2, tr, st, class_leaf)
        alive[c2] = False
        size[c2] = 0
        size[C] = nc + n2
    if eq_c:
        _trie_refresh(C, min(size[C], 2 * k), tr, class_leaf)
        return dist, kind, C
    _trie_remove(C, tr, st, class_leaf)
    e = _trie_lookup(newtup, perm, hot)
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
        _trie_refresh(e, min(size[e], 2 * k), tr, class_leaf)
        return dist, kind, e
    for j in range(m):
        T[C, j] = newtup[j]
    _trie_insert(C, newtup, min(size[C], 2 * k), perm, tr, st, class_leaf, hd)
    return dist, kind, C


@njit(cache=True)
def _kaca_loop(fast, k, thr, rand, st, T, size, alive, head, tail, nxt, prv, cnt, unit, small_list, small_pos,
               hd, perm, tr, class_leaf, hp, stk, ties, newtup, suppressed, xa, xb, ea, eb,
               log_c, log_c2, log_d, log_nt, log_kind, log_exp):
    """Seed 004, Algorithm 1, lines 2-7. Returns 0 when no class is smaller
    than k, 1 when the random numbers ran out (the caller appends more to
    the unused ones, ``rand[st[_S_RPOS]:]``), 2 when the trie may not have room
    for one more insert (the caller grows it); it then calls again: all state
    lives in the arrays, and an interrupted iteration is redone from its
    start, so the output does not depend on where the batches end."""
    nr = rand.shape[0]
    m = T.shape[1]
    while st[_S_NSMALL] > 0:
        if st[_S_RPOS] >= nr:
            return 1
        if st[_S_TUSED] + m + 1 > tr[0].shape[0]:
            return 2
        # line 3: a class of size < k, uniformly at random
        u = rand[st[_S_RPOS]]
        st[_S_RPOS] += 1
        ns = st[_S_NSMALL]
        p = int(u * ns)
        if p >= ns:
            p = ns - 1
        C = small_list[p]
        # lines 4-5: the nearest classes
        li = st[_S_LOGN]
        log_exp[li] = st[_S_EXPAND]
        if fast:
            best, nt = _nearest_fast(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st,
                                     xa, xb, ea, eb, class_leaf, stk)
        else:
            best, nt = _nearest_plain(C, k, T, size, alive, unit, tail, prv, cnt, hd, xa, xb, ea, eb, ties)
        if nt > 1 and st[_S_RPOS] >= nr:
            st[_S_RPOS] -= 1  # redo this iteration with the next batch
            return 1
        st[_S_ITER] += 1
        if nt == 0 or (thr >= 0 and best > thr):
            # outlier suppression (seed 000, sec. 5): C's rows go to the root
            r = head[C]
            while r >= 0:
                suppressed[r] = True
                r = nxt[r]
            st[_S_SUPP] += size[C]
            head[C] = -1
            tail[C] = -1
            _trie_remove(C, tr, st, class_leaf)
            alive[C] = False
            size[C] = 0
            _set_small(C, k, size, alive, small_list, small_pos, st)
            log_c[li] = C
            log_c2[li] = -1
            log_d[li] = best if nt > 0 else -1
            log_nt[li] = nt
            log_kind[li] = 2
            st[_S_LOGN] = li + 1
            continue
        pick = 0
        if nt > 1:
            # random tie-break among all nearest classes (in class-id order)
            u = rand[st[_S_RPOS]]
            st[_S_RPOS] += 1
            pick = int(u * nt)
            if pick >= nt:
                pick = nt - 1
        c2 = ties[pick]
        # line 6: generalise C with C' (or its stub)
        dist, kind, e = _merge(C, c2, k, T, size, alive, head, tail, nxt, prv, cnt, unit, hd, perm, tr, st,
                               class_leaf, newtup)
        st[_S_MERGES] += 1
        st[_S_DSUM] += dist
        _set_small(C, k, size, alive, small_list, small_pos, st)
        _set_small(c2, k, size, alive, small_list, small_pos, st)
        _set_small(e, k, size, alive, small_list, small_pos, st)
        log_c[li] = C
        log_c2[li] = c2
        log_d[li] = dist
        log_nt[li] = nt
        log_kind[li] = kind
        st[_S_LOGN] = li + 1
    return 0


def _rand_batch(n_small: int) -> int:
    """Random numbers drawn at a time: enough for every iteration when record
    counts are 1 (each iteration removes a class of size < k)."""
    return max(2 * n_small + 16, _RAND_BATCH_MIN)


def _trie_capacity(used: int, m: int) -> int:
    """Node capacity to allocate for ``used`` nodes (room for merges to insert)."""
    return used + max(used // 4, 64 * (m + 1), 1024)


def _new_trie(cap: int, m: int, span_dtype):
    hot = np.full((cap, 4), -1, dtype=np.int32)
    hot[:, _W] = _W_INF
    cold = np.zeros((cap, 4), dtype=np.int32)
    span = np.full((cap, max(m, 1)), -1, dtype=span_dtype)
    return hot, cold, span


def _grow(tr, hp, stk, used: int, m: int):
    """Larger copies of the trie, heap and stack arrays (the kernel asked for room)."""
    cap = 2 * _trie_capacity(used, m)
    new = _new_trie(cap, m, tr[2].dtype)
    for old, arr in zip(tr, new):
        arr[: len(old)] = old
    return new, np.zeros((cap, 4), dtype=np.int64), np.zeros((cap, 3), dtype=np.int64)


def _build_trie(T: np.ndarray, size: np.ndarray, k: int, perm: np.ndarray, hd):
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


@njit(cache=True)
def _rows_to_codes(T, alive, head, nxt, out):
    for c in range(T.shape[0]):
        if alive[c]:
            r = head[c]
            while r >= 0:
                out[r, :] = T[c, :]
                r = nxt[r]


# =====================================================================
# Python side
# =====================================================================
def _hierarchy_data(hierarchies: list[Hierarchy], cost: CostModel):
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


def _trie_order(codes: np.ndarray, n_nodes: np.ndarray) -> np.ndarray:
    """Attribute order of the search trie (any order gives the same result):
    fewest distinct values first, so the nodes expanded most often (near the
    root) have few children and the wide attributes sit near the leaves."""
    distinct = [int(np.count_nonzero(np.bincount(codes[:, j], minlength=int(n_nodes[j]))))
                for j in range(codes.shape[1])]
    return np.argsort(np.asarray(distinct), kind="stable").astype(np.int64)


def kaca1_codes(codes: np.ndarray, counts: np.ndarray, hierarchies: list[Hierarchy], cost: CostModel, k: int,
                rng: np.random.Generator, *, fast: bool = True, threshold: float | None = None,
                record: bool = False, trie_order=None) -> tuple[np.ndarray, np.ndarray, dict]:
    """KACA1 (seed 004, Algorithm 1) on a code matrix whose cells may already
    be generalised. Returns ``(codes, suppressed, info)``.

    ``info`` holds ``merges``, ``distance_sum`` (float distortion units, equal
    to the distortion added, Lemma 2), ``distance_sum_int``,
    ``suppressed_records``, ``iterations``, ``classes_in``/``classes_out`` and,
    with ``record``, ``merge_log`` (per iteration: chosen class, partner class
    or -1 when suppressed, integer distance, number of tied nearest classes,
    kind 0 whole / 1 stub / 2 suppressed, and the search's cumulative node
    expansions before it) and ``initial_classes`` (tuples and sizes, whose
    row index is the class id of the log).

    ``trie_order`` overrides the attribute order of the fast path's trie
    (a permutation of the columns); every order gives the same output.
    """
    t0 = time.perf_counter()
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    n, m = codes.shape
    check_k(k, counts)
    ec = group(codes, counts)
    ncls = ec.n_classes
    T = np.ascontiguousarray(ec.keys, dtype=np.int32).copy()
    size = ec.sizes.astype(np.int64).copy()
    alive = np.ones(ncls, dtype=np.bool_)
    # member rows of each class as linked lists in row order
    rc = ec.row_class.astype(np.int64)
    order = np.argsort(rc, kind="stable")
    nxt = np.full(n, -1, dtype=np.int64)
    same = rc[order[:-1]] == rc[order[1:]]
    nxt[order[:-1][same]] = order[1:][same]
    prv = np.full(n, -1, dtype=np.int64)
    prv[order[1:][same]] = order[:-1][same]
    head = np.full(ncls, -1, dtype=np.int64)
    tail = np.full(ncls, -1, dtype=np.int64)
    bounds = np.flatnonzero(np.r_[True, ~same]) if n else np.zeros(0, np.int64)
    head[rc[order[bounds]]] = order[bounds]
    ends = np.r_[bounds[1:] - 1, n - 1] if n else np.zeros(0, np.int64)
    tail[rc[order[ends]]] = order[ends]
    unit = bool((counts == 1).all())

    hd = _hierarchy_data(hierarchies, cost)
    perm = _trie_order(codes, hd[2]) if trie_order is None else np.asarray(trie_order, dtype=np.int64)
    if sorted(perm.tolist()) != list(range(m)):
        raise ValueError(f"trie_order must be a permutation of range({m}), got {list(perm)}")
    tr, used, class_leaf = _build_trie(T, size, k, perm, hd)
    cap = len(tr[0])
    st = np.zeros(_S_LEN, dtype=np.int64)
    st[_S_TUSED] = used
    st[_S_TFREE] = -1
    hp = np.zeros((cap, 4), dtype=np.int64)
    stk = np.zeros((cap, 3), dtype=np.int64)
    tot = int(hd[2].sum())
    xa, xb, ea, eb = (np.zeros(tot, dtype=np.int64) for _ in range(4))
    ties = np.zeros(max(ncls, 1), dtype=np.int64)
    newtup = np.zeros(m, dtype=np.int32)
    suppressed = np.zeros(n, dtype=np.bool_)
    small_list = np.zeros(max(ncls, 1), dtype=np.int64)
    small_pos = np.full(ncls, -1, dtype=np.int64)
    small = np.flatnonzero(size < k)
    small_list[: len(small)] = small
    small_pos[small] = np.arange(len(small))
    st[_S_NSMALL] = len(small)
    thr = -1
    if threshold is not None:
        if threshold < 0:
            raise ValueError(f"suppression_threshold must be >= 0, got {threshold}")
        thr = int(math.floor(threshold * cost.scale + 1e-9))

    logs = []
    batch = _rand_batch(len(small))
    rand = np.zeros(0)
    lg = ()
    t_loop = time.perf_counter()
    status = 1
    while status != 0:
        if status == 1:  # a fresh batch of random numbers (and of log space)
            if record and st[_S_LOGN]:
                logs.append(np.stack([a[: st[_S_LOGN]] for a in lg], axis=1))
            rand = np.concatenate([rand[st[_S_RPOS]:], rng.random(batch)])
            lg = tuple(np.zeros(len(rand), dtype=np.int64) for _ in range(6))
            st[_S_RPOS] = 0
            st[_S_LOGN] = 0
        else:  # status 2: the trie needs room for another insert
            tr, hp, stk = _grow(tr, hp, stk, int(st[_S_TUSED]), m)
        status = _kaca_loop(bool(fast), int(k), int(thr), rand, st, T, size, alive, head, tail, nxt, prv, counts,
                            unit, small_list, small_pos, hd, perm, tr, class_leaf, hp, stk, ties, newtup, suppressed,
                            xa, xb, ea, eb, *lg)
    if record and st[_S_LOGN]:
        logs.append(np.stack([a[: st[_S_LOGN]] for a in lg], axis=1))
    t_end = time.perf_counter()
    out = np.zeros_like(codes)
    _rows_to_codes(T, alive, head, nxt, out)
    out[suppressed] = 0
    topped_up = _complete_suppression(out, suppressed, counts, k, cost)
    info = {
        "merges": int(st[_S_MERGES]),
        "distance_sum": float(st[_S_DSUM]) / cost.scale,
        "distance_sum_int": int(st[_S_DSUM]),
        "suppressed_records": int(st[_S_SUPP]) + topped_up,
        "suppressed_to_reach_k": topped_up,
        "iterations": int(st[_S_ITER]),
        "classes_in": int(ncls),
        "classes_out": int(alive.sum()),
        "nodes_expanded": int(st[_S_EXPAND]),
        "fast": bool(fast),
        "time_loop": t_end - t_loop,
        "time_total": t_end - t0,
    }
    if record:
        info["merge_log"] = np.concatenate(logs, axis=0) if logs else np.zeros((0, 6), np.int64)
        info["initial_classes"] = (ec.keys.copy(), ec.sizes.copy())
    return out, suppressed, info


# ---------------------------------------------------------------- KACA2 steps
#: Tolerance of the float comparisons with max_inconsist (a fraction equal to
#: the threshold counts as reaching it).
_EPS = 1e-12


def _freq_lower_bound(col: np.ndarray, counts: np.ndarray, k: int) -> float:
    """Seed 004, Lemma 4: ``(sum of f_j over values with f_j < k) / |D|``."""
    uniq, inv = np.unique(col, return_inverse=True)
    f = np.bincount(inv.ravel(), weights=counts, minlength=len(uniq))
    total = counts.sum()
    return float(f[f < k].sum() / total) if total else 0.0


def kaca2_global_levels(codes: np.ndarray, counts: np.ndarray, hierarchies: list[Hierarchy], k: int,
                        max_inconsistency: float) -> tuple[np.ndarray, list[int]]:
    """Seed 004, Algorithm 2, lines 1-3: per attribute, while the Lemma 4
    lower bound of the generalisation portion is ``>= max_inconsist``,
    globally generalise the attribute one level (every value to its ancestor
    at the next shallower depth; on unbalanced trees shallower leaves stay).
    Returns the codes and the number of levels each attribute went up."""
    out = np.array(codes, dtype=np.int32, copy=True)
    steps = []
    for j, h in enumerate(hierarchies):
        d = int(h.depth[out[:, j]].max()) if len(out) else 0
        s = 0
        while d > 0 and _freq_lower_bound(out[:, j], counts, k) >= max_inconsistency - _EPS:
            d -= 1
            out[:, j] = h.ancestor_at_depth(out[:, j], d)
            s += 1
        steps.append(s)
    return out, steps


def kaca2_final_levels(codes: np.ndarray, counts: np.ndarray, hierarchies: list[Hierarchy],
                       max_inconsistency: float) -> tuple[np.ndarray, list[int]]:
    """Seed 004, Algorithm 2, lines 5-9 (with SPEC's reading: *while*
    ``inconsist_i >= max_inconsist``): generalise every cell of the attribute
    at the most specific level present one level up. A function of the value,
    so classes only merge and k-anonymity is kept. Returns the codes and the
    number of rounds per attribute."""
    out = np.array(codes, dtype=np.int32, copy=True)
    rounds = []
    for j, h in enumerate(hierarchies):
        r = 0
        while len(out) and inconsistency(out[:, j:j + 1], [h], counts)[0] >= max_inconsistency - _EPS:
            dep = h.depth[out[:, j]]
            dmax = int(dep.max())
            if dmax == 0:
                break
            sel = dep == dmax
            out[sel, j] = h.parent[out[sel, j]]
            r += 1
        rounds.append(r)
    return out, rounds


# ---------------------------------------------------------------- classes
class KACA1(Algorithm):
    """KACA1: k-anonymisation by clustering in attribute hierarchies
    (seed 004, Algorithm 1; seed 000, Algorithm 1 "KACA").

    Parameters
    ----------
    fast : bool
        Use the exact branch-and-bound nearest-class search (default) instead
        of the paper's full scan; both return identical output for a seed.
    suppression_threshold : float, optional
        Outlier suppression (seed 000, sec. 5): a chosen class whose nearest
        class distance (Def. 10, distortion units) exceeds this is suppressed.
    """

    name = "kaca1"
    parameters = {"fast": bool, "suppression_threshold": Interval(Real, 0, None) | None}

    def __init__(self, fast: bool = True, suppression_threshold: float | None = None):
        self.fast = fast
        self.suppression_threshold = suppression_threshold

    def _run_kaca1(self, problem: Problem, codes: np.ndarray, rng: np.random.Generator):
        t = problem.table
        return kaca1_codes(codes, t.counts, t.hierarchies, problem.cost, problem.k, rng,
                           fast=self.fast, threshold=self.suppression_threshold)

    def _solve(self, problem: Problem) -> Solution:
        rng = np.random.default_rng(problem.seed)
        codes, sup, info = self._run_kaca1(problem, problem.table.codes, rng)
        log.info("kaca1: %d merges, distortion %.4f, %d suppressed records", info["merges"],
                 info["distance_sum"], info["suppressed_records"])
        return Solution(codes, sup, KACADetails(**info))


class KACA2(KACA1):
    """KACA2: KACA1 under a maximum inconsistency (seed 004, Algorithm 2).

    1. per attribute, global recoding one level at a time while the Lemma 4
       lower bound of the generalisation portion is ``>= max_inconsistency``;
    2. KACA1 (seed 004, Algorithm 1);
    3. per attribute, while its inconsistency (Def. 12) is
       ``>= max_inconsistency``, the cells at the most specific level present
       go one level up.

    The output's inconsistency is below ``max_inconsistency`` on every attribute.
    """

    name = "kaca2"
    parameters = {**KACA1.parameters, "max_inconsistency": Interval(Real, 0, 1, closed="right")}

    def __init__(self, fast: bool = True, suppression_threshold: float | None = None,
                 max_inconsistency: float = 0.10):
        super().__init__(fast, suppression_threshold)
        self.max_inconsistency = max_inconsistency

    def _solve(self, problem: Problem) -> Solution:
        t = problem.table
        rng = np.random.default_rng(problem.seed)
        g1, steps = kaca2_global_levels(t.codes, t.counts, t.hierarchies, problem.k, self.max_inconsistency)
        codes, sup, info = self._run_kaca1(problem, g1, rng)
        g3, rounds = kaca2_final_levels(codes, t.counts, t.hierarchies, self.max_inconsistency)
        g3[sup] = 0
        cost = problem.cost
        d1 = distortion(t.codes, g1, cost, t.counts)
        d3 = distortion(t.codes, g3, cost, t.counts)
        details = KACA2Details(**info, distortion_global_step=d1, distortion_final_step=d3 - d1 - info["distance_sum"],
                               distortion_total=d3, global_levels=dict(zip(t.qi_names, steps)),
                               final_rounds=dict(zip(t.qi_names, rounds)), max_inconsistency=self.max_inconsistency)
        log.info("kaca2: global levels %s, %d merges, final rounds %s", steps, info["merges"], rounds)
        return Solution(g3, sup, details)
