"""Lower the distortion of an output that meets its privacy models, keeping them.

The privacy repair (:mod:`hieranon.algorithms.privacy_merge`) only ever adds
distortion: it merges classes, moves and swaps records until every class
satisfies every model, and records it imported to fix one class often force
a wide tuple on it, or leave their old class wider than it needs to be.
:func:`improve` is a local search run after it: a record ``r`` of class
``D`` is

* **moved** to another class ``E``, or
* **swapped** with a record ``s`` of ``E`` (``s`` joins ``D``),

when the total distortion falls, both classes keep ``>= k`` records (a class
emptied by a move disappears), and both still satisfy every privacy model
afterwards (checked on their histograms, :meth:`~hieranon.privacy.BoundModel.ok_hist`).
A class's tuple is always the closest common generalisation of its members'
original values (Li et al. 2006, Def. 8), so a class that loses an outlier
record is printed lower; the distortion of a class is its records times the
cost of its tuple, in :class:`~hieranon.core.cost.CostModel`'s exact integers.
It is the relocation/exchange local search of clustering (and of KACA+'s
step 4) with the models as a side condition.

Search: rows in order; for row ``r``, every other class ``E`` is priced for a
move, and the :data:`SWAP_CLASSES` classes nearest to ``r`` (least cost of
``lca(t_E, r)`` over ``t_E``) for swaps with each of their records. The
classes are found by a best-first branch-and-bound over the trie of the
class tuples (KACA's, :mod:`hieranon.algorithms.kaca_core`): the same moves
and nearest classes as pricing every class, reading only the subtrees whose
bound leaves room for them (Adult, 8 QIs, distinct 2-diversity, k = 2: the
scans took 4.9 s instead of 25 s, the same output). The
improving candidates (at most :data:`MAX_CANDIDATES`, best first) go to the
models' check -- moves through per-class tables of which sensitive values a
class may lose or gain, swaps of rows with other sensitive values through
the histograms; the best one that keeps every model is made. Passes repeat
until one changes nothing (at most :data:`MAX_PASSES`). Every
step lowers an integer total, so the search ends; every class keeps ``>= k``
records and every model at every step, so the output satisfies everything
its input did. Records the input suppressed (and every record of a class
holding one) are left alone. Deterministic: the rows are scanned a block at
a time in numba's threads (a scan changes nothing; the first row of the
block with a candidate is taken, as a scan row by row would, whatever the
number of threads); the search returns to Python after :data:`CHUNK_ROWS`
rows (:func:`hieranon.algorithms.kaca_core.chunk_done`).

Measured on Adult (k = 10, kaca+ then the repair, distortion ratio before ->
after): 8 QIs, sensitive salary-class, 0.2-closeness 0.2451 -> 0.2351,
distinct 2-diversity 0.1495 -> 0.1464; 7 QIs, sensitive occupation,
0.2-closeness 0.3943 -> 0.3341 (about a quarter more CPU time than the
repair's). Tried and dropped: re-clustering each class of ``>= 2k`` records
on its own (KACA+ then the repair on its rows, kept when cheaper) gained
0.0015 on salary-class and nothing on occupation at twice this search's
time; swaps for every row, not only rows that widen their class, ran more
than ten times longer; 16 swap classes instead of 8 gained 0.0002. After the
first pass only the rows of classes changed by the previous pass are
scanned (every pass over all rows: within 0.0001, twice the time).

Only classes a step touched are reprinted (at their members' closest common
generalisation); a reprinted class whose tuple equals another's is one class
for the verifier, which keeps ``k`` and every model (the union of classes
satisfying a model satisfies it: Machanavajjhala et al. 2007, Sec. 5;
Li et al. 2007, Sec. 4.1).
"""

from __future__ import annotations

import time

import numpy as np
from numba import get_num_threads, prange

from ..core.jit import kernel
from ..core.table import group
from . import kaca_core as K
from .base import Problem, log

__all__ = ["improve", "MAX_PASSES", "SWAP_CLASSES", "MAX_CANDIDATES", "CHUNK_ROWS", "TABLED_NODES"]

#: Passes over the rows at most.
MAX_PASSES = 6
#: Classes nearest to a row whose records are tried as swap partners.
SWAP_CLASSES = 8
#: Improving candidates of one row handed to the models' check.
MAX_CANDIDATES = 16
#: Rows one call of the kernel scans before returning to Python.
CHUNK_ROWS = 2_000
#: A row's scan reads ``g(lca(x, r's value))`` for the nodes ``x`` of the
#: class tuples it prices: for an attribute of at most this many nodes it is
#: tabled for every node first (one look-up per read after), for a larger one
#: computed where it is read (tabling every node of a numeric attribute of
#: thousands of values made each scan cost the hierarchy's size: ISLR-like
#: tables of 9,000 rows spent 3.8 s of 5.3 there). Same values either way.
TABLED_NODES = 512
#: Rows scanned at once in numba's threads: this many per thread after a
#: step, doubling while no row has a candidate, up to MAX_SCAN_BLOCK (a
#: block's rows past the first with a candidate are scanned for nothing).
SCAN_BLOCK_PER_THREAD = 2
MAX_SCAN_BLOCK = 64


# =====================================================================
# numba kernels
# =====================================================================
@kernel
def _class_lca(c, skip, orig, head, nxt, out, hd):
    """``out`` = closest common generalisation of class ``c``'s members
    except row ``skip``; False when no other member."""
    m = orig.shape[1]
    lca_flat, lca_off, nn = hd[0], hd[1], hd[2]  # the dense tables read in place: a call per look-up costs more
    r = head[c]
    first = True
    while r >= 0:
        if r != skip:
            if first:
                for j in range(m):
                    out[j] = orig[r, j]
                first = False
            else:
                for j in range(m):
                    x, y = out[j], orig[r, j]
                    if x != y:
                        x = lca_flat[lca_off[j] + x * nn[j] + y] if lca_off[j] >= 0 else K.lca_code(j, x, y, hd)
                    out[j] = x
        r = nxt[r]
    return not first


@kernel(inline="always")
def _after(delta, kind, e, delta_i, kind_i, e_i):
    """Does the candidate ``(delta, kind, e)`` go after the entry ``(delta_i,
    kind_i, e_i)``? Least ``delta`` first; among equal ones, moves by class
    id and then the rest in the order they came (so the moves of a row may
    be priced in any order). Scalars only: an inlined call taking arrays
    still pays their reference counts."""
    if delta != delta_i:
        return delta > delta_i
    if kind == 0 and kind_i == 0:
        return e > e_i
    return True


@kernel
def _push(delta, kind, e, s, c_delta, c_kind, c_e, c_s, n):
    """Insert a candidate into the best-first lists of length ``n``; returns the new length."""
    cap = c_delta.shape[0]
    if n == cap and _after(delta, kind, e, c_delta[n - 1], c_kind[n - 1], c_e[n - 1]):
        return n
    i = n if n < cap else cap - 1
    while i > 0 and not _after(delta, kind, e, c_delta[i - 1], c_kind[i - 1], c_e[i - 1]):
        if i < cap:
            c_delta[i] = c_delta[i - 1]
            c_kind[i] = c_kind[i - 1]
            c_e[i] = c_e[i - 1]
            c_s[i] = c_s[i - 1]
        i -= 1
    c_delta[i] = delta
    c_kind[i] = kind
    c_e[i] = e
    c_s[i] = s
    return min(n + 1, cap)


@kernel(inline="always")
def _row_cost(j, x, r, orig, hd, rowcost, tabled):
    """``g(lca(x, orig[r, j]))``: from row ``r``'s table of attribute ``j``
    when it has at most ``tabled`` nodes (:data:`TABLED_NODES`), else computed."""
    o = hd[7][j]
    if hd[2][j] <= tabled:
        return rowcost[o + x]
    a = orig[r, j]
    if x != a:
        lca_off = hd[1][j]
        x = hd[0][lca_off + a * hd[2][j] + x] if lca_off >= 0 else K.lca_code(j, x, a, hd)
    return hd[8][o + x]


@kernel
def _swaps(r, d, e, w, kr, rest, lo, orig, cnt, key, head, nxt, W, gT, k, hd, rowcost, tabled,
           c_delta, c_kind, c_e, c_s, n):
    """Price every swap of row ``r`` (class ``d``, ``lo`` the generalisation
    of ``d`` without it) with a row ``s`` of class ``e``, pushing the
    improving ones; ``e`` without ``s`` is generalised from prefix and suffix
    common generalisations of its members. Returns the candidates' count."""
    m = orig.shape[1]
    g_flat = hd[8]
    nd_off = hd[7]
    lca_flat, lca_off, nn = hd[0], hd[1], hd[2]  # the dense tables read in place: a call per look-up costs more
    size = 0
    s = head[e]
    while s >= 0:
        size += 1
        s = nxt[s]
    rows = np.empty(size, dtype=np.int64)
    s = head[e]
    for i in range(size):
        rows[i] = s
        s = nxt[s]
    pre = np.empty((size, m), dtype=np.int32)
    suf = np.empty((size, m), dtype=np.int32)
    for j in range(m):
        pre[0, j] = orig[rows[0], j]
        suf[size - 1, j] = orig[rows[size - 1], j]
        for i in range(1, size):
            x, y = pre[i - 1, j], orig[rows[i], j]
            if x != y:
                x = lca_flat[lca_off[j] + x * nn[j] + y] if lca_off[j] >= 0 else K.lca_code(j, x, y, hd)
            pre[i, j] = x
            x, y = suf[size - i, j], orig[rows[size - 1 - i], j]
            if x != y:
                x = lca_flat[lca_off[j] + x * nn[j] + y] if lca_off[j] >= 0 else K.lca_code(j, x, y, hd)
            suf[size - 1 - i, j] = x
    old = W[d] * gT[d] + W[e] * gT[e]
    for i in range(size):
        s = rows[i]
        ws = cnt[s]
        if rest + ws < k or W[e] - ws + w < k:
            continue
        gd = 0
        for j in range(m):
            x, y = lo[j], orig[s, j]
            if x != y:
                x = lca_flat[lca_off[j] + x * nn[j] + y] if lca_off[j] >= 0 else K.lca_code(j, x, y, hd)
            gd += g_flat[nd_off[j] + x]
        ge2 = 0
        for j in range(m):
            if size == 1:
                x = orig[r, j]
            elif i == 0:
                x = suf[1, j]
            elif i == size - 1:
                x = pre[size - 2, j]
            else:
                x, y = pre[i - 1, j], suf[i + 1, j]
                if x != y:
                    x = lca_flat[lca_off[j] + x * nn[j] + y] if lca_off[j] >= 0 else K.lca_code(j, x, y, hd)
            ge2 += _row_cost(j, x, r, orig, hd, rowcost, tabled)
        delta = (rest + ws) * gd + (W[e] - ws + w) * ge2 - old
        if delta < 0:
            n = _push(delta, 1 if key[s] == kr else 2, e, s, c_delta, c_kind, c_e, c_s, n)
    return n


# ------------------------------------------------------------- the class trie
# The alive classes in KACA's trie (hieranon.algorithms.kaca_core): a leaf is
# a tuple; classes printing the same tuple (the search keeps them apart) hang
# from it in a chain (``chain[c]``: the next one, -1 at the end), the leaf's
# weight the least of theirs. ``Tin[c]``: the tuple ``c`` went in with.
@kernel
def _leaf_min(first, W, chain):
    """The least weight of the classes chained from ``first`` (capped as the trie keeps it)."""
    best = K.TRIE_NO_W
    c = first
    while c >= 0:
        wc = min(W[c], K.TRIE_NO_W - 1)
        if wc < best:
            best = wc
        c = chain[c]
    return best


@kernel
def _trie_put(c, tup, W, perm, tr, st, leaf, chain, Tin, hd):
    """Class ``c`` (not in the trie) goes in as ``tup``."""
    hot = tr[0]
    for j in range(tup.shape[0]):
        Tin[c, j] = tup[j]
    first = K.trie_lookup(tup, perm, hot)
    if first < 0:
        chain[c] = -1
        K.trie_insert(c, tup, min(W[c], K.TRIE_NO_W - 1), perm, tr, st, leaf, hd)
        return
    x = leaf[first]
    chain[c] = first
    hot[x, K.TRIE_FIRST] = c
    leaf[c] = x
    K.trie_refresh(c, _leaf_min(c, W, chain), tr, leaf)


@kernel
def _trie_take(c, W, tr, st, leaf, chain):
    """Class ``c`` leaves the trie."""
    hot = tr[0]
    x = leaf[c]
    first = hot[x, K.TRIE_FIRST]
    if first == c and chain[c] < 0:
        K.trie_remove(c, tr, st, leaf)
        return
    if first == c:
        first = chain[c]
        hot[x, K.TRIE_FIRST] = first
    else:
        b = first
        while chain[b] != c:
            b = chain[b]
        chain[b] = chain[c]
    chain[c] = -1
    leaf[c] = -1
    K.trie_refresh(first, _leaf_min(first, W, chain), tr, leaf)


@kernel
def _trie_renew(c, T, W, alive, perm, tr, st, leaf, chain, Tin, hd):
    """Class ``c`` changed (members, tuple, weight, or it died): its place in the trie follows."""
    if leaf[c] < 0:
        return
    if not alive[c]:
        _trie_take(c, W, tr, st, leaf, chain)
        return
    same = True
    for j in range(T.shape[1]):
        if T[c, j] != Tin[c, j]:
            same = False
            break
    if same:
        K.trie_refresh(c, _leaf_min(tr[0][leaf[c], K.TRIE_FIRST], W, chain), tr, leaf)
        return
    _trie_take(c, W, tr, st, leaf, chain)
    _trie_put(c, T[c], W, perm, tr, st, leaf, chain, Tin, hd)


@kernel
def _trie_fill(alive, T, W, perm, tr, st, leaf, chain, Tin, hd):
    """Every alive class into an empty trie."""
    for c in range(T.shape[0]):
        leaf[c] = -1
        chain[c] = -1
    for c in range(T.shape[0]):
        if alive[c]:
            _trie_put(c, T[c], W, perm, tr, st, leaf, chain, Tin, hd)


@kernel(inline="always")
def _nearer(dist, e, dist_i, e_i):
    """Does class ``e`` at ``dist`` come before class ``e_i`` at ``dist_i`` (least distance, then id)?"""
    return dist < dist_i or (dist == dist_i and e < e_i)


@kernel
def _near_insert(dist, e, near_e, near_d, n_near, n_swap):
    """Keep the ``n_swap`` nearest classes by ``(distance, id)``; returns their new count."""
    if n_near < n_swap:
        p = n_near
        n_near += 1
    elif _nearer(dist, e, near_d[n_near - 1], near_e[n_near - 1]):
        p = n_near - 1
    else:
        return n_near
    while p > 0 and _nearer(dist, e, near_d[p - 1], near_e[p - 1]):
        near_d[p] = near_d[p - 1]
        near_e[p] = near_e[p - 1]
        p -= 1
    near_d[p] = dist
    near_e[p] = e
    return n_near


@kernel
def _grown(a, size):
    """``a`` with room for ``size`` rows (doubled when full), its rows kept."""
    if size < a.shape[0]:
        return a
    bigger = np.empty((2 * a.shape[0],) + a.shape[1:], dtype=a.dtype)
    bigger[:a.shape[0]] = a
    return bigger


@kernel
def _trie_search(r, d, w, kr, saving, can_move, swaps, n_swap, orig, W, can_gain, hd, rowcost, tabled, perm, tr,
                 chain, c_delta, c_kind, c_e, c_s, near_e, near_d):
    """Row ``r``'s improving moves (at most the candidate lists' length,
    best first by ``(delta, class)``) and, with ``swaps``, its ``n_swap``
    nearest classes by ``(distance, class)``, by a best-first
    branch-and-bound over the class trie: the classes every scan of them
    would find. For a class ``E`` (tuple ``t_E``, weight ``W_E``) and
    ``l_j = lca(t_E[j], r[j])``, the distance is ``sum_j g(l_j) - g(t_E[j])``
    and the move's change ``W_E * distance + w * sum_j g(l_j) - saving``.
    Below a trie node, every attribute the path fixes adds its exact terms
    and every other one at least what its span gives: when ``r[j]`` is not
    under the span ``s`` (a common ancestor of the values below),
    ``l_j = lca(s, r[j])`` for every class there, so ``g(l_j) - g(t_E[j]) >=
    g(lca(s, r[j])) - g(s)``; else both are ``>= 0``. The node's least
    weight bounds ``W_E``. A node is expanded while it may hold a move that
    enters the lists or, with ``swaps``, one of the nearest classes (ties
    included: a class of lower id enters at an equal value). Returns
    ``(moves, nearest)``, their counts."""
    hot, cold, span = tr
    g_flat = hd[8]
    nd_off = hd[7]
    m = perm.shape[0]
    cap = c_delta.shape[0]
    n = 0
    n_near = 0
    # the heap holds (key, node, entry); an entry's sums and bounds: (s_a, s_b, move bound, distance bound)
    hk, hc, hv = np.empty(64, dtype=np.int64), np.empty(64, dtype=np.int64), np.empty(64, dtype=np.int64)
    entry = np.empty((64, 4), dtype=np.int64)
    entry[0, 0], entry[0, 1], entry[0, 2], entry[0, 3] = 0, 0, -1, 0
    hn = K.heap_push(hk, hc, hv, 0, 0, 0, 0)
    n_entries = 1
    while hn > 0:
        x, e_top = hc[0], hv[0]
        hn = K.heap_pop(hk, hc, hv, hn)
        s_a, s_b, mb, db = entry[e_top, 0], entry[e_top, 1], entry[e_top, 2], entry[e_top, 3]
        keep_m = can_move and mb < 0 and (n < cap or mb <= c_delta[cap - 1])
        keep_s = swaps and (n_near < n_swap or db <= near_d[n_near - 1])
        if not (keep_m or keep_s):
            if not swaps:  # the heap is in move-bound order: no later node can hold a move either
                break
            continue
        depth = cold[x, K.TRIE_DEPTH] if x != 0 else 0
        j = perm[depth]
        o = nd_off[j]
        ch = hot[x, K.TRIE_FIRST]
        while ch >= 0:
            v = hot[ch, K.TRIE_VALUE]
            gl = _row_cost(j, v, r, orig, hd, rowcost, tabled)
            a2 = s_a + gl - g_flat[o + v]
            b2 = s_b + gl
            if depth + 1 == m:  # a leaf: its classes, exactly
                e = hot[ch, K.TRIE_FIRST]
                while e >= 0:
                    if e != d:
                        if can_move and can_gain[e, kr]:
                            delta = W[e] * a2 + w * b2 - saving
                            if delta < 0:
                                n = _push(delta, 0, e, -1, c_delta, c_kind, c_e, c_s, n)
                        if swaps:
                            n_near = _near_insert(a2, e, near_e, near_d, n_near, n_swap)
                    e = chain[e]
            else:
                ea = a2
                eb = b2
                for q in range(depth + 1, m):
                    jq = perm[q]
                    sp = span[ch, q]
                    gs = _row_cost(jq, sp, r, orig, hd, rowcost, tabled)
                    extra = gs - g_flat[nd_off[jq] + sp]
                    if extra > 0:  # r[jq] lies outside the span: every class below meets it at lca(span, r[jq])
                        ea += extra
                        eb += gs
                mb2 = hot[ch, K.TRIE_MIN_W] * ea + w * eb - saving
                keep_m = can_move and mb2 < 0 and (n < cap or mb2 <= c_delta[cap - 1])
                keep_s = swaps and (n_near < n_swap or ea <= near_d[n_near - 1])
                if keep_m or keep_s:
                    entry = _grown(entry, n_entries)
                    hk, hc, hv = _grown(hk, hn), _grown(hc, hn), _grown(hv, hn)
                    entry[n_entries, 0], entry[n_entries, 1], entry[n_entries, 2], entry[n_entries, 3] = \
                        a2, b2, mb2, ea
                    hn = K.heap_push(hk, hc, hv, hn, ea if swaps else mb2, ch, n_entries)
                    n_entries += 1
            ch = hot[ch, K.TRIE_NEXT]
    return n, n_near


@kernel
def _scan_row(i, order, orig, cnt, rc, key, head, nxt, W, gT, alive, can_lose, can_gain, k, hd, n_swap,
              c_delta, c_kind, c_e, c_s, by_cost, lo, near_e, near_d, rowcost, tabled, perm, tr, chain):
    """The improving candidates of row ``order[i]``, written best first to
    the candidate lists; returns their number (0: none). Moves are filtered
    by ``can_lose[d, key[r]]`` and ``can_gain[e, key[r]]`` (the models hold
    after them); a swap of two rows of one key changes no histogram; other
    swaps are left to the caller's check. A row that does not widen its
    class (no swaps) and whose saving no class's tuple cost leaves room for
    (``by_cost``: every class, by tuple cost) has none. The classes are
    found in the class trie (:func:`_trie_search`, ``perm``, ``tr``,
    ``chain``). ``lo``, ``near_e``, ``near_d``, ``rowcost``: work space;
    ``tabled``: :data:`TABLED_NODES`."""
    m = orig.shape[1]
    n_cls = W.shape[0]
    g_flat = hd[8]
    nd_off = hd[7]
    nn = hd[2]
    r = order[i]
    d = rc[r]
    if d < 0:
        return 0
    w = cnt[r]
    kr = key[r]
    rest = W[d] - w
    if rest > 0:
        if not _class_lca(d, r, orig, head, nxt, lo, hd):
            rest = 0
    g_lo = K.tuple_cost(lo, hd) if rest > 0 else 0
    saving = W[d] * gT[d] - rest * g_lo
    can_move = (rest == 0 or rest >= k) and (rest == 0 or can_lose[d, kr])
    swaps = n_swap > 0 and rest > 0 and saving > w * gT[d]  # r widens D: try swapping it out
    if not (can_move or swaps):
        return 0
    if not swaps:  # moves only: some class must be cheaper than r's saving
        p = 0
        while p < n_cls and (not alive[by_cost[p]] or by_cost[p] == d):
            p += 1
        if p == n_cls or w * gT[by_cost[p]] >= saving:
            return 0
    # g(lca(x, r's value)) for every node x of every attribute: one look-up per attribute below
    lca_flat, lca_off = hd[0], hd[1]
    for j in range(m):
        if nn[j] > tabled:  # computed where read (_row_cost)
            continue
        o = nd_off[j]
        a = orig[r, j]
        if lca_off[j] >= 0:  # the dense table's row of a, read in place: a call per look-up costs more than it
            row = lca_off[j] + a * nn[j]
            for x in range(nn[j]):
                rowcost[o + x] = g_flat[o + lca_flat[row + x]]
        else:
            for x in range(nn[j]):
                rowcost[o + x] = g_flat[o + K.lca_code(j, x, a, hd)]
    n, n_near = _trie_search(r, d, w, kr, saving, can_move, swaps, n_swap, orig, W, can_gain, hd, rowcost, tabled,
                             perm, tr, chain, c_delta, c_kind, c_e, c_s, near_e, near_d)
    if swaps:
        for q in range(n_near):
            e = near_e[q]
            n = _swaps(r, d, e, w, kr, rest, lo, orig, cnt, key, head, nxt, W, gT, k, hd, rowcost, tabled,
                       c_delta, c_kind, c_e, c_s, n)
    return n


@kernel(parallel=True)
def _scan_block(pos, count, order, orig, cnt, rc, key, head, nxt, W, gT, alive, can_lose, can_gain, k, hd,
                n_swap, c_delta, c_kind, c_e, c_s, by_cost, found, tabled, perm, tr, chain):
    """:func:`_scan_row` of rows ``order[pos:pos + count]`` in numba's
    threads (a scan changes nothing but its own work space and candidate
    lists: row ``pos + b`` writes row ``b`` of ``c_delta``, ``c_kind``,
    ``c_e``, ``c_s`` and ``found[b]``, its number of candidates)."""
    for b in prange(count):
        lo, near_e, near_d, rowcost = _work_space(orig.shape[1], n_swap, hd)
        found[b] = _scan_row(pos + b, order, orig, cnt, rc, key, head, nxt, W, gT, alive, can_lose, can_gain, k,
                             hd, n_swap, c_delta[b], c_kind[b], c_e[b], c_s[b], by_cost, lo, near_e, near_d,
                             rowcost, tabled, perm, tr, chain)


@kernel
def _work_space(m, n_swap, hd):
    return (np.empty(m, dtype=np.int32), np.empty(n_swap, dtype=np.int64), np.empty(n_swap, dtype=np.int64),
            np.empty(hd[8].shape[0], dtype=np.int64))


@kernel
def _detach(r, c, head, nxt, prv):
    if prv[r] >= 0:
        nxt[prv[r]] = nxt[r]
    else:
        head[c] = nxt[r]
    if nxt[r] >= 0:
        prv[nxt[r]] = prv[r]
    nxt[r] = -1
    prv[r] = -1


@kernel
def _attach(r, c, head, nxt, prv):
    nxt[r] = head[c]
    prv[r] = -1
    if head[c] >= 0:
        prv[head[c]] = r
    head[c] = r


@kernel
def _relocate(r, e, orig, cnt, rc, head, nxt, prv, T, W, gT, alive, hd):
    """Row ``r`` joins class ``e``; both classes' tuples and costs are renewed."""
    d = rc[r]
    _detach(r, d, head, nxt, prv)
    _attach(r, e, head, nxt, prv)
    rc[r] = e
    W[d] -= cnt[r]
    W[e] += cnt[r]
    for c in (d, e):
        if head[c] < 0:
            alive[c] = False
            W[c] = 0
            gT[c] = 0
        else:
            _class_lca(c, -1, orig, head, nxt, T[c], hd)
            gT[c] = K.tuple_cost(T[c], hd)


@kernel
def _reposition(c, by_cost, where, gT):
    """Class ``c``'s tuple cost changed: move it to its place in ``by_cost``
    (classes by ``(gT, id)``; ``where`` the inverse)."""
    i = where[c]
    n = by_cost.shape[0]
    while i + 1 < n and (gT[by_cost[i + 1]] < gT[c] or (gT[by_cost[i + 1]] == gT[c] and by_cost[i + 1] < c)):
        by_cost[i] = by_cost[i + 1]
        where[by_cost[i]] = i
        i += 1
    while i > 0 and (gT[by_cost[i - 1]] > gT[c] or (gT[by_cost[i - 1]] == gT[c] and by_cost[i - 1] > c)):
        by_cost[i] = by_cost[i - 1]
        where[by_cost[i]] = i
        i -= 1
    by_cost[i] = c
    where[c] = i


# =====================================================================
# driver
# =====================================================================
class _Search:
    """The state of the local search: classes as linked lists of rows,
    tuples (closest common generalisations of the members), record weights,
    integer tuple costs and one histogram per model."""

    def __init__(self, problem: Problem, codes: np.ndarray, suppressed: np.ndarray):
        t = problem.table
        ec = group(codes, t.counts)
        n, n_cls = t.n_rows, ec.n_classes
        self.problem = problem
        self.models = list(problem.privacy)
        self.hd = K.hierarchy_data(t.hierarchies, problem.cost)
        self.orig = np.ascontiguousarray(t.codes, dtype=np.int32)
        self.cnt = np.ascontiguousarray(t.counts, dtype=np.int64)
        rc = ec.row_class.astype(np.int64)
        frozen = np.zeros(n_cls, dtype=bool)
        frozen[rc[np.asarray(suppressed, dtype=bool)]] = True
        self.hist = [b.histogram(rc, n_cls) for b in self.models]
        self.values = np.stack([b.values for b in self.models], axis=1) if self.models else np.zeros((n, 0), np.int64)
        self.rc = np.where(frozen[rc], -1, rc)
        self.alive = ~frozen
        self.head = np.full(n_cls, -1, dtype=np.int64)
        self.nxt = np.full(n, -1, dtype=np.int64)
        self.prv = np.full(n, -1, dtype=np.int64)
        for r in np.flatnonzero(self.rc >= 0)[::-1]:  # lists in row order
            c = self.rc[r]
            if self.head[c] >= 0:
                self.prv[self.head[c]] = r
            self.nxt[r] = self.head[c]
            self.head[c] = r
        self.W = np.bincount(rc, weights=self.cnt, minlength=n_cls).astype(np.int64)
        self.W[frozen] = 0
        self.T = np.zeros((n_cls, self.orig.shape[1]), dtype=np.int32)
        self.gT = np.zeros(n_cls, dtype=np.int64)
        for c in np.flatnonzero(self.alive):
            _class_lca(c, -1, self.orig, self.head, self.nxt, self.T[c], self.hd)
            self.gT[c] = K.tuple_cost(self.T[c], self.hd)
        self.by_cost = np.lexsort((np.arange(n_cls), self.gT)).astype(np.int64)
        self.where = np.empty(n_cls, dtype=np.int64)
        self.where[self.by_cost] = np.arange(n_cls)
        self.touched = np.zeros(n_cls, dtype=bool)
        self.dirty = np.zeros(n_cls, dtype=bool)
        self.moves = self.swaps = 0
        # rows of one key (sensitive values under every model, and weight) change histograms alike
        combo = np.column_stack([self.values, self.cnt])
        self.key_rows, key = np.unique(combo, axis=0, return_inverse=True)
        self.key = np.ascontiguousarray(key.ravel(), dtype=np.int64)
        self.can_lose = np.zeros((n_cls, len(self.key_rows)), dtype=np.bool_)
        self.can_gain = np.zeros((n_cls, len(self.key_rows)), dtype=np.bool_)
        self.refresh(np.flatnonzero(self.alive))
        self.perm = K.choose_trie_order(self.orig, self.hd[2])
        self.leaf = np.full(n_cls, -1, dtype=np.int32)
        self.chain = np.full(n_cls, -1, dtype=np.int64)
        self.Tin = np.zeros_like(self.T)
        self.index()

    def index(self) -> None:
        """The alive classes in a new trie (spans widened by removals made tight again)."""
        m = self.T.shape[1]
        self.tr, self.st = K.empty_trie(int(self.alive.sum()) * m + 1, m, self.hd[2])
        _trie_fill(self.alive, self.T, self.W, self.perm, self.tr, self.st, self.leaf, self.chain, self.Tin, self.hd)

    def scan(self, pos: int, count: int, order: np.ndarray, lists: tuple, found: np.ndarray, *,
             n_swap: int = SWAP_CLASSES, tabled: int = TABLED_NODES) -> None:
        """The candidates of rows ``order[pos:pos + count]`` (:func:`_scan_block`):
        row ``pos + b`` writes row ``b`` of the four candidate ``lists``
        (change, kind, class, swap partner) and ``found[b]``, their number."""
        _scan_block(pos, count, order, self.orig, self.cnt, self.rc, self.key, self.head, self.nxt, self.W,
                    self.gT, self.alive, self.can_lose, self.can_gain, self.problem.k, self.hd, n_swap, *lists,
                    self.by_cost, found, tabled, self.perm, self.tr, self.chain)

    def refresh(self, classes: np.ndarray) -> None:
        """``can_lose[c, x]`` / ``can_gain[c, x]``: does class ``c`` satisfy
        every model after losing / gaining one row of key ``x``?"""
        classes = np.asarray(classes, dtype=np.int64)
        if len(classes) == 0:
            return
        nk = len(self.key_rows)
        w = self.key_rows[:, -1]
        lose = np.ones((len(classes), nk), dtype=bool)
        gain = np.ones((len(classes), nk), dtype=bool)
        for i, (b, h) in enumerate(zip(self.models, self.hist)):
            v = self.key_rows[:, i]
            hc = h[classes]
            emptied = hc.sum(axis=1)[:, None] - w[None, :] == 0  # an emptied class is no class
            lose &= b.ok_after_change(hc, v, -w) | emptied
            gain &= b.ok_after_change(hc, v, w)
        self.can_lose[classes] = lose
        self.can_gain[classes] = gain

    def total(self) -> int:
        return int(self.W @ self.gT)

    def swap_ok(self, r: int, e: int, s: int) -> bool:
        """Do both classes satisfy every model after rows ``r`` (of class
        ``d``) and ``s`` (of ``e``) trade places?"""
        d = int(self.rc[r])
        for b, h in zip(self.models, self.hist):
            hd_ = h[[d, e]].copy()
            hd_[0, b.values[r]] -= self.cnt[r]
            hd_[0, b.values[s]] += self.cnt[s]
            hd_[1, b.values[s]] -= self.cnt[s]
            hd_[1, b.values[r]] += self.cnt[r]
            if not b.ok_hist(hd_).all():
                return False
        return True

    def relocate(self, r: int, e: int) -> None:
        d = int(self.rc[r])
        for b, h in zip(self.models, self.hist):
            h[d, b.values[r]] -= self.cnt[r]
            h[e, b.values[r]] += self.cnt[r]
        self.touched[d] = self.touched[e] = True
        self.dirty[d] = self.dirty[e] = True
        _relocate(r, e, self.orig, self.cnt, self.rc, self.head, self.nxt, self.prv, self.T, self.W, self.gT,
                  self.alive, self.hd)
        _reposition(d, self.by_cost, self.where, self.gT)
        _reposition(e, self.by_cost, self.where, self.gT)
        for c in (d, e):
            _trie_renew(c, self.T, self.W, self.alive, self.perm, self.tr, self.st, self.leaf, self.chain, self.Tin,
                        self.hd)
        self.refresh(np.array([d, e]))

    def run(self, max_passes: int) -> int:
        order = np.flatnonzero(self.rc >= 0).astype(np.int64)
        base = min(MAX_SCAN_BLOCK, SCAN_BLOCK_PER_THREAD * get_num_threads())  # the work arrays hold MAX_SCAN_BLOCK
        lists = tuple(np.zeros((MAX_SCAN_BLOCK, MAX_CANDIDATES), dtype=np.int64) for _ in range(4))
        _, c_kind, c_e, c_s = lists
        found = np.zeros(MAX_SCAN_BLOCK, dtype=np.int64)
        passes = 0
        for passes in range(1, max_passes + 1):
            if passes > 1:  # after the first pass, only the rows of classes the last pass changed
                order = np.flatnonzero((self.rc >= 0) & self.dirty[np.maximum(self.rc, 0)]).astype(np.int64)
                self.index()
            self.dirty[:] = False
            changed = 0
            pos = 0
            block = base
            while pos < len(order):
                stop = min(len(order), pos + CHUNK_ROWS)
                while pos < stop:
                    # the rows from pos are scanned a block at a time, in threads; the first with candidates
                    # is the one a scan row by row would stop at (scans change nothing), the rest are dropped
                    count = min(block, stop - pos)
                    self.scan(pos, count, order, lists, found)
                    hits = np.flatnonzero(found[:count])
                    if len(hits) == 0:
                        pos += count
                        block = min(2 * block, MAX_SCAN_BLOCK)  # long runs without a step: larger blocks
                        continue
                    b = int(hits[0])
                    pos += b + 1
                    block = base
                    changed += self._step(int(order[pos - 1]), int(found[b]), c_kind[b], c_e[b], c_s[b])
                K.chunk_done("privacy refinement")
            if not changed:
                break
        return passes

    def _step(self, r: int, n: int, c_kind: np.ndarray, c_e: np.ndarray, c_s: np.ndarray) -> int:
        """Make the first of row ``r``'s ``n`` candidates (best first) that
        keeps every model (moves and same-key swaps keep them); returns 1,
        or 0 when none does."""
        d = int(self.rc[r])
        for x in range(n):
            e, s = int(c_e[x]), int(c_s[x])
            if c_kind[x] == 2 and not self.swap_ok(r, e, s):
                continue
            self.relocate(r, e)
            if c_kind[x] == 0:
                self.moves += 1
            else:
                self.relocate(s, d)
                self.swaps += 1
            return 1
        return 0


def improve(problem: Problem, codes: np.ndarray, suppressed: np.ndarray, *,
            max_passes: int = MAX_PASSES) -> tuple[np.ndarray, np.ndarray, dict]:
    """The local search of the module docstring on ``codes`` (every class of
    which has ``>= k`` records and satisfies every model of
    ``problem.privacy``); the rows ``suppressed`` (printed all ``*``), and
    every row printed like them, are left alone. Returns ``(codes,
    suppressed, info)``, ``suppressed`` now the rows printed all ``*``; ``info``
    holding ``privacy_refine_moves``, ``privacy_refine_swaps``,
    ``privacy_refine_passes``, ``privacy_refine_gain`` (distortion units
    removed) and ``privacy_refine_time``. Without models, or with several
    requirements, ``codes`` is returned unchanged."""
    t0 = time.perf_counter()
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    suppressed = np.asarray(suppressed, dtype=bool)
    info = {"privacy_refine_moves": 0, "privacy_refine_swaps": 0, "privacy_refine_passes": 0,
            "privacy_refine_gain": 0.0, "privacy_refine_time": 0.0}
    if not problem.privacy or not problem.single_full_requirement or problem.table.n_rows == 0:
        return codes, (codes == 0).all(axis=1), info
    s = _Search(problem, codes, suppressed)
    passes = s.run(max_passes)
    out = codes.copy()
    rows = np.flatnonzero(s.rc >= 0)
    rows = rows[s.touched[s.rc[rows]]]
    out[rows] = s.T[s.rc[rows]]
    sup = (out == 0).all(axis=1)
    cost = problem.cost
    gain = (cost.cell_costs(codes).sum(axis=1) - cost.cell_costs(out).sum(axis=1)) @ problem.table.counts
    info.update(privacy_refine_moves=s.moves, privacy_refine_swaps=s.swaps, privacy_refine_passes=passes,
                privacy_refine_gain=float(gain), privacy_refine_time=time.perf_counter() - t0)
    log.info("privacy refinement: %d moves, %d swaps in %d passes, distortion -%.4f, %.2f s",
             s.moves, s.swaps, passes, info["privacy_refine_gain"], info["privacy_refine_time"])
    return out, sup, info
