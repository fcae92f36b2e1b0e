"""The Lagrangian relaxation of record-level local recoding (Fisher 1981;
Beasley 1990 for the set-covering form it takes here).

Relaxing the "every record gets exactly one node" constraints with one
multiplier per record leaves one easy problem per candidate node: open it
with the records of most negative reduced cost (at least ``k`` of them, and
with a share constraint :func:`~hieranon.bounds.selection.balanced_choice`'s
selection) or leave it closed. :class:`Relaxation` evaluates that program at
given multipliers; only nodes cheaper than some member's price can open, so
most nodes are never read.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..core.jit import kernel
from .distinct import gather_nodes
from .selection import balanced_node

__all__ = ["PIECES_PER_THREAD", "RELAXATION_CHUNKS", "UNCONSTRAINED_SCREEN", "Relaxation"]


#: A node whose best selection without the share constraint costs more than
#: this share of its terms' magnitudes is left closed without the constrained
#: search (whose value is no lower): well above the rounding of either sum.
UNCONSTRAINED_SCREEN = 1e-9

#: The relaxation of more than 100,000 nodes sums its nodes' values in this
#: many node ranges, whatever the number of threads (the prices are then the
#: same on every machine).
RELAXATION_CHUNKS = 8

#: The touched nodes are settled in this many pieces per numba thread (the
#: nodes' costs vary: smaller pieces balance the threads' work).
PIECES_PER_THREAD = 4


@kernel
def _unit_nodes(members, starts, node_cost, n_units, ucost):
    """Per unit, its candidate nodes from the cheapest up: node ``unodes[i]``
    for ``i`` in ``ustart[t]:ustart[t + 1]``, its cost written to ``ucost[i]``."""
    ustart = np.zeros(n_units + 1, dtype=np.int64)
    for i in range(len(members)):
        ustart[members[i] + 1] += 1
    for t in range(n_units):
        ustart[t + 1] += ustart[t]
    fill = ustart[:-1].copy()
    unodes = np.empty(len(members), dtype=np.int32)
    for g in np.argsort(node_cost, kind="mergesort"):
        for i in range(starts[g], starts[g + 1]):
            t = members[i]
            unodes[fill[t]] = g
            ucost[fill[t]] = node_cost[g]
            fill[t] += 1
    return ustart, unodes


@kernel
def _touch(n_chunks, price, ustart, unodes, ucost, weights, margin, cnt, val, near, near_val, touched, n_touched):
    """The nodes cheaper than some member's price (the only ones that can
    open), listed per node range: those of chunk ``c`` (nodes ``lo <= g < hi``,
    ``lo = n c // n_chunks``) from ``touched[lo]`` on, ``n_touched[c]`` of
    them, in the order the units first reach them; with the count and reduced
    cost of those members in ``cnt`` and ``val``, and of the members within
    ``margin`` above (reduced cost in [0, margin)) in ``near`` and
    ``near_val``. Each unit's node list is sorted by cost (``ucost``: the
    costs of ``unodes``, read in order): its scan stops at its price plus the
    margin. One pass over the units for every chunk: each node's sums are
    made in unit order, as a pass per chunk would make them."""
    n = len(cnt)
    for c in range(n_chunks):
        n_touched[c] = 0
    for t in range(len(price)):
        p = price[t]
        w = weights[t]
        for i in range(ustart[t], ustart[t + 1]):
            red = ucost[i] - p
            if red >= margin:
                break
            g = unodes[i]
            if cnt[g] == 0 and near[g] == 0:
                c = g * n_chunks // n
                while c > 0 and n * c // n_chunks > g:
                    c -= 1
                while c + 1 < n_chunks and n * (c + 1) // n_chunks <= g:
                    c += 1
                touched[n * c // n_chunks + n_touched[c]] = g
                n_touched[c] += 1
            if red < 0:
                cnt[g] += w
                val[g] += red * w
            else:
                near[g] += w
                near_val[g] += red * w


@kernel
def _settle(lo, hi, touched, price, members, starts, node_cost, weights, k, margin, cnt, val, near, near_val,
            assigned, bufv, bufu, opened, positive, share_lo, share_hi, values):
    """Touched nodes ``touched[lo:hi]``: open each whose best selection (its
    negative members, topped up to ``k`` with the cheapest others) has a
    negative reduced cost, writing that to ``values[x]`` for the node at
    ``touched[x]`` (0 for the others); resets the work arrays.
    A node whose near members, and ``margin`` for each record still missing,
    already make the selection non-negative is left closed unread (a share
    constraint only raises a node's best value: the screen holds). With
    ``share_lo > 0`` or ``share_hi < 1`` a selection must also hold that
    share of ``positive`` records (:func:`balanced_node`), searched only where
    the best selection without it has a negative reduced cost."""
    balanced = share_lo > 0 or share_hi < 1
    for x in range(lo, hi):
        values[x] = 0.0
        g = touched[x]
        c = node_cost[g]
        neg = cnt[g]
        value = val[g]
        n_near = near[g]
        v_near = near_val[g]
        cnt[g] = 0
        val[g] = 0.0
        near[g] = 0
        near_val[g] = 0.0
        if neg == 0 or (neg + n_near < k and value + v_near + (k - neg - n_near) * margin >= 0):
            continue
        nbuf = 0
        spread = -value  # the sum of the selection's terms' magnitudes: what rounding is relative to
        if neg < k:
            # the k - neg cheapest other records (insertion into a sorted buffer)
            need = k - neg
            for i in range(starts[g], starts[g + 1]):
                t = members[i]
                red = c - price[t]
                if red >= 0 and (nbuf < need or red < bufv[nbuf - 1]):
                    j = nbuf if nbuf < need else nbuf - 1
                    while j > 0 and bufv[j - 1] > red:
                        bufv[j] = bufv[j - 1]
                        bufu[j] = bufu[j - 1]
                        j -= 1
                    bufv[j] = red
                    bufu[j] = t
                    if nbuf < need:
                        nbuf += 1
            left = need
            for j in range(nbuf):
                take = min(left, weights[bufu[j]])
                value += take * bufv[j]
                spread += take * bufv[j]
                left -= take
                if left == 0:
                    break
            if left > 0:
                continue
        if balanced:
            # the share only raises the best value: a node closed without it (beyond rounding) stays closed
            if value > UNCONSTRAINED_SCREEN * spread:
                continue
            best = balanced_node(g, c, price, members, starts, weights, positive, k, share_lo, share_hi, assigned)
            if best < 0:
                values[x] = best
                opened[g] = True
            continue
        if value >= 0:
            continue
        values[x] = value
        opened[g] = True
        for i in range(starts[g], starts[g + 1]):
            t = members[i]
            if c - price[t] < 0:
                assigned[t] += weights[t]
        left = k - neg
        for j in range(nbuf):
            if left <= 0:
                break
            take = min(left, weights[bufu[j]])
            assigned[bufu[j]] += take
            left -= take


@kernel(parallel=True)
def _relaxed(price, members, starts, node_cost, ustart, unodes, ucost, weights, k, margin, cnt, val, near, near_val,
             touched, n_chunks, opened, positive, share_lo, share_hi, values, n_pieces):
    """Optimum of the relaxed program at multipliers ``price - own cost``,
    ``sum_g min(0, best_g)``, and per unit the records the open nodes take
    (the open nodes marked in ``opened``). Only nodes cheaper than some
    member's price can open, so most nodes are never read. ``cnt``, ``val``
    (zero on entry and exit), ``touched``, ``values``: work space.

    The touched nodes are settled in ``n_pieces`` pieces in numba's threads
    (no two write the same node; each its own ``assigned``); each node's
    value is summed afterwards chunk by chunk in the order the units reached
    it, so the value does not depend on the pieces or the threads."""
    n = len(node_cost)
    n_touched = np.zeros(n_chunks, dtype=np.int64)
    _touch(n_chunks, price, ustart, unodes, ucost, weights, margin, cnt, val, near, near_val, touched, n_touched)
    # pieces: each chunk's touched list cut into ranges of about equal length
    total_touched = n_touched.sum()
    size = max(1, -(-total_touched // n_pieces))
    bounds = np.empty((n_chunks * (n_pieces + 1), 2), dtype=np.int64)
    n_b = 0
    for c in range(n_chunks):
        lo = n * c // n_chunks
        hi = lo + n_touched[c]
        a = lo
        while a < hi:
            b = min(hi, a + size)
            bounds[n_b, 0] = a
            bounds[n_b, 1] = b
            n_b += 1
            a = b
    parts = np.zeros((max(n_b, 1), len(price)), dtype=np.int64)
    for p in nb.prange(n_b):
        bufv = np.zeros(k + 1)
        bufu = np.zeros(k + 1, dtype=np.int64)
        _settle(bounds[p, 0], bounds[p, 1], touched, price, members, starts, node_cost, weights, k, margin, cnt, val,
                near, near_val, parts[p], bufv, bufu, opened, positive, share_lo, share_hi, values)
    totals = np.zeros(n_chunks)
    for c in range(n_chunks):
        lo = n * c // n_chunks
        total = 0.0
        for x in range(lo, lo + n_touched[c]):
            total += values[x]
        totals[c] = total
    return totals.sum(), parts.sum(axis=0)


class Relaxation:
    """The relaxed program over a set of candidate nodes: called with the
    units' prices, it returns the relaxed value, the records each unit has
    placed and the nodes that open (the program
    :func:`~hieranon.bounds.ascent.ascend` raises)."""

    def __init__(self, members: np.ndarray, starts: np.ndarray, node_cost: np.ndarray, own: np.ndarray,
                 weights: np.ndarray, k: int, margin: float, share: tuple | None = None):
        self.members, self.starts, self.own, self.weights = members, starts, own, weights
        self.k, self.margin = k, margin
        flags, low, high = (np.zeros(len(weights)), 0.0, 1.0) if share is None else share
        self.share = (np.asarray(flags, dtype=np.int8), float(low), float(high))  # (0, 1): no constraint
        self.int_cost = np.asarray(node_cost, dtype=np.int64)
        self.node_cost = self.int_cost.astype(np.float64)
        # the costs in the units' order, read as the lists are scanned: the smallest exact integer type
        top = int(self.int_cost.max()) if len(self.int_cost) else 0
        self.ucost = np.empty(len(members), dtype=np.int16 if top < 2**15 else np.int32 if top < 2**31 else np.int64)
        self.ustart, self.unodes = _unit_nodes(members, starts, self.int_cost, len(weights), self.ucost)
        n = len(self.node_cost)
        self.work = (np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n),
                     np.zeros(n, dtype=np.int64))
        self.values = np.zeros(n)
        self.pieces = PIECES_PER_THREAD * nb.get_num_threads()
        # a fixed number of chunks, not one per thread: the sums, and so the prices, are the same on every machine
        self.n_chunks = RELAXATION_CHUNKS if n > 100_000 else 1

    def cheapest(self) -> np.ndarray:
        """Each unit's cheapest node's cost (the prices of the simple bound)."""
        return self.node_cost[self.unodes[self.ustart[:-1]]]

    def __call__(self, price: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        opened = np.zeros(len(self.node_cost), dtype=np.bool_)
        relaxed, assigned = _relaxed(price, self.members, self.starts, self.node_cost, self.ustart, self.unodes,
                                     self.ucost, self.weights, self.k, self.margin, *self.work, self.n_chunks,
                                     opened, *self.share, self.values, self.pieces)
        return float(((price - self.own) * self.weights).sum()) + relaxed, assigned, opened

    def restricted(self, nodes: np.ndarray) -> Relaxation:
        """The same program over ``nodes`` only."""
        members, starts = gather_nodes(self.members, self.starts, nodes)
        return Relaxation(members, starts, self.int_cost[nodes], self.own, self.weights, self.k, self.margin,
                           self.share)
