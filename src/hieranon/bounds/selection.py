"""The best selection of records at one node under a share constraint: the
t-closeness of a two-valued sensitive attribute, whose EMD is the difference
of a class's and the table's shares of one value (Li, Li & Venkatasubramanian
2007).

:func:`balanced_choice` is the node subproblem of the Lagrangian relaxation
of the lower bound (Fisher 1981) with that constraint, and kaca+'s Lagrangian
heuristic builds its classes with it too
(:mod:`hieranon.algorithms.kacaplus.lagrangian`).
"""

from __future__ import annotations

import numpy as np

from ..core.jit import kernel

__all__ = ["FLOOR_ROUNDING", "INSERTION_SORT_MAX", "balanced_choice", "balanced_node", "share_floor"]

#: :func:`balanced_node` leaves a node closed when :func:`share_floor` exceeds
#: this share of the magnitudes summed: well above the rounding of any sum.
FLOOR_ROUNDING = 1e-9


@kernel
def _cheapest_records(cum_weight, cum_cost, red, x):
    """The reduced cost of the ``x`` cheapest records of units sorted by
    reduced cost ``red`` (cumulative weights and costs, 0 first)."""
    j = np.searchsorted(cum_weight, x, side="right") - 1
    if j >= len(red):
        return cum_cost[len(red)]
    return cum_cost[j] + (x - cum_weight[j]) * red[j]


@kernel
def _split_members(g, c, price, members, starts, weights, positive):
    """Node ``g``'s members of some weight, in member order, split by their
    ``positive`` flag (index 1: flagged): per side the units, their reduced
    costs, the weight of those of negative reduced cost and the weight of all."""
    m = starts[g + 1] - starts[g]
    red = np.empty((2, m))
    unit = np.empty((2, m), dtype=np.int64)
    n = np.zeros(2, dtype=np.int64)
    negative = np.zeros(2, dtype=np.int64)
    total = np.zeros(2, dtype=np.int64)
    for i in range(starts[g], starts[g + 1]):
        t = members[i]
        if weights[t] == 0:
            continue
        s = 1 if positive[t] else 0
        r = c - price[t]
        red[s, n[s]] = r
        unit[s, n[s]] = t
        total[s] += weights[t]
        if r < 0:
            negative[s] += weights[t]
        n[s] += 1
    return (unit[0, :n[0]], unit[1, :n[1]]), (red[0, :n[0]], red[1, :n[1]]), negative, total


@kernel
def _kth_smallest(values, x):
    """The ``x``-th smallest of ``values`` (from 0), selected in place
    (Hoare's quickselect; the value is the one any selection gives)."""
    lo, hi = 0, len(values) - 1
    while lo < hi:
        pivot = values[(lo + hi) // 2]
        i, j = lo, hi
        while i <= j:
            while values[i] < pivot:
                i += 1
            while values[j] > pivot:
                j -= 1
            if i <= j:
                values[i], values[j] = values[j], values[i]
                i += 1
                j -= 1
        if x <= j:
            hi = j
        elif x >= i:
            lo = i
        else:
            return values[x]
    return values[x]


#: :func:`_sorted_prefix` sorts at most this many units by insertion (in
#: place, stable), more with numpy's merge sort: both give the same order.
INSERTION_SORT_MAX = 64


@kernel
def _sorted_prefix(unit, red, weights, extra):
    """The units of negative reduced cost and the ``extra`` cheapest others
    (all of them when fewer; ties at the last one kept), sorted by reduced
    cost, ties in member order -- the first units of the whole side sorted
    so: (units, reduced costs, cumulative weights, cumulative costs, whether
    every unit is in)."""
    n_other = 0
    for i in range(len(red)):
        if red[i] >= 0:
            n_other += 1
    complete = n_other <= extra
    if complete:
        unit, red = unit.copy(), red.copy()
    else:
        others = np.empty(n_other)
        j = 0
        for i in range(len(red)):
            if red[i] >= 0:
                others[j] = red[i]
                j += 1
        cut = _kth_smallest(others, extra - 1) if extra > 0 else -1.0
        n_keep = 0
        for i in range(len(red)):
            if red[i] < 0 or red[i] <= cut:
                n_keep += 1
        kept_unit = np.empty(n_keep, dtype=unit.dtype)
        kept_red = np.empty(n_keep)
        j = 0
        for i in range(len(red)):
            if red[i] < 0 or red[i] <= cut:
                kept_unit[j] = unit[i]
                kept_red[j] = red[i]
                j += 1
        unit, red = kept_unit, kept_red
    n = len(red)
    if n <= INSERTION_SORT_MAX:  # stable: equal costs keep member order, as the merge sort keeps them
        for i in range(1, n):
            r, u = red[i], unit[i]
            j = i
            while j > 0 and red[j - 1] > r:
                red[j] = red[j - 1]
                unit[j] = unit[j - 1]
                j -= 1
            red[j] = r
            unit[j] = u
    else:
        order = np.argsort(red, kind="mergesort")
        red = red[order]
        unit = unit[order]
    cum_weight = np.zeros(n + 1, dtype=np.int64)
    cum_cost = np.zeros(n + 1)
    for i in range(n):
        cum_weight[i + 1] = cum_weight[i] + weights[unit[i]]
        cum_cost[i + 1] = cum_cost[i] + weights[unit[i]] * red[i]
    return unit, red, cum_weight, cum_cost, complete


@kernel
def _take_cheapest(unit, weights, x, assigned):
    for i in range(len(unit)):
        if x <= 0:
            break
        take = min(x, weights[unit[i]])
        assigned[unit[i]] += take
        x -= take


@kernel
def _best_counts(k, share_lo, share_hi, h_top, l_free, total_h, total_l, wh, ch, rh, all_h, wl, cl, rl, all_l, best):
    """The search of :func:`balanced_choice` over the number ``h`` of
    flagged records, on each side's sorted first units (cumulative weights
    and costs): ``(best, h, l, short)``, ``short`` when it needs records past
    a side's sorted units."""
    best_h, best_l = -1, -1
    for h in range(total_h + 1):
        if share_hi <= 0 and h > 0:
            break
        lo, hi = _other_range(h, k, share_lo, share_hi, total_l)
        if lo > hi:
            continue
        n_other = min(max(l_free, lo), hi)
        if (h > wh[len(rh)] and not all_h) or (n_other > wl[len(rl)] and not all_l):
            return best, best_h, best_l, True
        value = _cheapest_records(wh, ch, rh, h) + _cheapest_records(wl, cl, rl, n_other)
        if value < best:
            best, best_h, best_l = value, h, n_other
        if h >= h_top:  # the first feasible h from here on is the best of them
            break
    return best, best_h, best_l, False


@kernel
def balanced_choice(g, c, price, members, starts, weights, positive, k, share_lo, share_hi, best):
    """Node ``g``'s best selection of at least ``k`` records of which a share
    in ``[share_lo, share_hi]`` is ``positive`` -- a class meeting the
    t-closeness of a two-valued sensitive attribute (Li, Li &
    Venkatasubramanian 2007: the EMD of two values is the difference of the
    shares). With ``h`` positive and ``l`` other records, each side's cheapest
    are taken; for each ``h`` the best ``l`` is the unconstrained one (all the
    side's negative records) clamped into what the share allows, and past
    the negative positives, ``k`` and the share's need, the first ``h`` the
    share allows is the best of the larger ones. Only each side's negative
    records and its cheapest others up to what that search can reach are
    sorted (all of them when it reaches further). Returns the selection's
    reduced cost if below ``best`` (else ``best``), its ``h`` and ``l``
    (-1 when none is below ``best``) and each side's first units, cheapest first."""
    (ul, uh), (rl, rh), negative, total = _split_members(g, c, price, members, starts, weights, positive)
    neg_h, l_free = negative[1], negative[0]
    h_top = max(neg_h, k)
    if share_lo > 0:
        h_top = max(h_top, int(np.ceil(l_free * share_lo / (1 - share_lo))) if share_lo < 1 else total[1])
    reach_h = h_top + k  # positives the search reads before its first feasible h past h_top, as a rule
    reach_l = max(l_free, k)
    if 0 < share_hi < 1:
        reach_l = max(reach_l, int(np.ceil(reach_h * (1 - share_hi) / share_hi)))
    sh, srh, wh, ch, all_h = _sorted_prefix(uh, rh, weights, reach_h - neg_h)
    sl, srl, wl, cl, all_l = _sorted_prefix(ul, rl, weights, reach_l - l_free)
    found, h, n_other, short = _best_counts(k, share_lo, share_hi, h_top, l_free, total[1], total[0], wh, ch, srh,
                                            all_h, wl, cl, srl, all_l, best)
    if short:  # past the sorted units: sort every unit
        sh, srh, wh, ch, all_h = _sorted_prefix(uh, rh, weights, len(rh))
        sl, srl, wl, cl, all_l = _sorted_prefix(ul, rl, weights, len(rl))
        found, h, n_other, short = _best_counts(k, share_lo, share_hi, h_top, l_free, total[1], total[0], wh, ch,
                                                srh, all_h, wl, cl, srl, all_l, best)
    return found, h, n_other, sh, sl


@kernel
def _other_range(h, k, share_lo, share_hi, total_l):
    """The numbers of other records a selection of ``h`` flagged ones may
    hold: at least ``k`` in all, the share kept, at most ``total_l``
    (``lo > hi`` when none)."""
    lo = max(k - h, 0)
    if 0 < share_hi < 1:
        lo = max(lo, int(np.ceil(h * (1 - share_hi) / share_hi - 1e-9)))
    hi = total_l
    if share_lo > 0:
        hi = min(hi, int(np.floor(h * (1 - share_lo) / share_lo + 1e-9)) if share_lo < 1 else 0)
    return lo, hi


@kernel
def _share_allows(h, n_other, k, share_lo, share_hi, total_l):
    """Whether ``h`` positive and ``n_other`` other records make a selection
    :func:`_best_counts` accepts (at least ``k``, the share kept)."""
    if share_hi <= 0 and h > 0:
        return False
    lo, hi = _other_range(h, k, share_lo, share_hi, total_l)
    return lo <= n_other <= hi


@kernel
def _side_sum(g, c, price, members, starts, weights, positive, side, n_units):
    """The reduced cost of every negative record of one side of node ``g``,
    summed cheapest unit first (ties in member order), as
    :func:`_sorted_prefix` accumulates it."""
    unit = np.empty(n_units, dtype=np.int64)
    red = np.empty(n_units)
    j = 0
    for i in range(starts[g], starts[g + 1]):
        t = members[i]
        r = c - price[t]
        if weights[t] != 0 and r < 0 and (1 if positive[t] else 0) == side:
            unit[j] = t
            red[j] = r
            j += 1
    order = np.argsort(red, kind="mergesort")
    total = 0.0
    for i in order:
        total = total + weights[unit[i]] * red[i]
    return total


@kernel
def _side_stats(g, c, price, members, starts, weights, positive):
    """Per side of node ``g`` (index 1: flagged), over its members of some
    weight: the weight and sum of the reduced costs of those of negative
    reduced cost, the number of their units, the least other reduced cost
    (inf if none), the greatest negative one (-inf if none) and the weight of all."""
    neg = np.zeros(2, dtype=np.int64)
    neg_sum = np.zeros(2)
    n_units = np.zeros(2, dtype=np.int64)
    least = np.full(2, np.inf)
    top = np.full(2, -np.inf)
    total = np.zeros(2, dtype=np.int64)
    for i in range(starts[g], starts[g + 1]):
        t = members[i]
        w = weights[t]
        if w == 0:
            continue
        s = 1 if positive[t] else 0
        r = c - price[t]
        total[s] += w
        if r < 0:
            neg[s] += w
            neg_sum[s] += w * r
            n_units[s] += 1
            if r > top[s]:
                top[s] = r
        elif r < least[s]:
            least[s] = r
    return neg, neg_sum, n_units, least, top, total


@kernel
def _side_floor(x, neg, neg_sum, least, top):
    """A lower bound of the reduced cost of a side's ``x`` cheapest records
    (their sum is convex in ``x``): its negative records' sum, plus its least
    other reduced cost for each record past them, or minus its greatest
    negative one for each record short of them."""
    if x > neg:
        return neg_sum + (x - neg) * least
    if x < neg:
        return neg_sum - (neg - x) * top
    return neg_sum


@kernel
def share_floor(k, share_lo, share_hi, neg, neg_sum, least, top, total):
    """A lower bound of :func:`balanced_choice`'s value from each side's
    aggregates (:func:`_side_stats`, :func:`_side_floor`), minimised over
    the number ``h`` of flagged records the share allows and, for each,
    the other records nearest the negative ones (inf when the share allows
    none). Once ``h`` is past the negative flagged records and ``k``, and
    the share allows every negative other record, the bound no longer
    falls: the search stops at the first such ``h``."""
    best = np.inf
    for h in range(total[1] + 1):
        if share_hi <= 0 and h > 0:
            break
        lo, hi = _other_range(h, k, share_lo, share_hi, total[0])
        if lo <= hi:
            n_other = min(max(neg[0], lo), hi)
            value = (_side_floor(h, neg[1], neg_sum[1], least[1], top[1])
                     + _side_floor(n_other, neg[0], neg_sum[0], least[0], top[0]))
            best = min(best, value)
            if h >= max(neg[1], k) and hi >= neg[0]:
                break
    return best


@kernel
def balanced_node(g, c, price, members, starts, weights, positive, k, share_lo, share_hi, assigned):
    """:func:`balanced_choice` of a node in the relaxation
    (:mod:`hieranon.bounds.relaxation`): the best negative selection's
    reduced cost (0 if none), its records added to ``assigned`` (rounding
    lenient: the bound stays valid). Two shortcuts give the same answer
    first: where the node's negative records alone hold ``k`` records and
    the share, they are the selection (fewer flagged records drop negative
    ones, more add none of negative cost; same sum, same order); where
    :func:`share_floor` is non-negative (beyond :data:`FLOOR_ROUNDING` of
    the sums' magnitudes), the node stays closed."""
    neg, neg_sum, n_units, least, top, total = _side_stats(g, c, price, members, starts, weights, positive)
    h, n_other = neg[1], neg[0]
    if h + n_other >= k and _share_allows(h, n_other, k, share_lo, share_hi, total[0]):
        value = (_side_sum(g, c, price, members, starts, weights, positive, 1, n_units[1])
                 + _side_sum(g, c, price, members, starts, weights, positive, 0, n_units[0]))
        for i in range(starts[g], starts[g + 1]):
            t = members[i]
            if c - price[t] < 0:
                assigned[t] += weights[t]
        return value
    floor = share_floor(k, share_lo, share_hi, neg, neg_sum, least, top, total)
    if floor > FLOOR_ROUNDING * (abs(neg_sum[0]) + abs(neg_sum[1]) + abs(floor)):
        return 0.0
    best, best_h, best_l, uh, ul = balanced_choice(g, c, price, members, starts, weights, positive, k, share_lo,
                                                    share_hi, 0.0)
    if best_h >= 0:
        _take_cheapest(uh, weights, best_h, assigned)
        _take_cheapest(ul, weights, best_l, assigned)
    return best
