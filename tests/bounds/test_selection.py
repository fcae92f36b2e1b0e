"""The node subproblem under a share constraint: the shortcuts of
:func:`hieranon.bounds.selection.balanced_node` against the full search of
:func:`~hieranon.bounds.selection.balanced_choice`, and its lower bound
:func:`~hieranon.bounds.selection.share_floor` against brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hieranon.bounds.selection import balanced_choice, balanced_node, share_floor

#: wide, narrow (few feasible counts), one-sided and empty share intervals
SHARES = [(0.0, 1.0), (0.05, 0.9), (0.2, 0.5), (0.0, 0.3), (0.4, 1.0), (0.33, 0.34), (0.24, 0.26), (0.41, 0.42),
          (0.5, 0.5), (0.45, 0.3), (0.0, 0.0), (0.048, 0.448)]


@st.composite
def nodes(draw):
    """One node: its members (a subset of the units, in any order), the
    units' weights, flags and prices, the node's cost, k and the share."""
    n = draw(st.integers(1, 40))
    weights = np.asarray(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int64)
    positive = np.asarray(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.int8)
    # whole and fractional prices: ties, zero and tiny reduced costs
    price = np.asarray(draw(st.lists(st.integers(0, 48), min_size=n, max_size=n)), dtype=np.float64) / 4
    members = np.asarray(draw(st.permutations(range(n))), dtype=np.int32)[:draw(st.integers(1, n))]
    starts = np.array([0, len(members)], dtype=np.int64)
    c = draw(st.integers(0, 12)) * 1.0
    k = draw(st.integers(1, 10))
    lo, hi = draw(st.sampled_from(SHARES))
    return c, price, members, starts, weights, positive, k, lo, hi


@settings(max_examples=400, deadline=None)
@given(nodes())
def test_balanced_node_is_the_full_search(node):
    """Whatever shortcut it takes, the node's value (to the bit) and the
    records it places are those of the full search's selection, cheapest
    records of each side first."""
    c, price, members, starts, weights, positive, k, lo, hi = node
    assigned = np.zeros(len(weights), dtype=np.int64)
    value = balanced_node(0, c, price, members, starts, weights, positive, k, lo, hi, assigned)

    best, h, n_other, uh, ul = balanced_choice(0, c, price, members, starts, weights, positive, k, lo, hi, 0.0)
    expected = np.zeros(len(weights), dtype=np.int64)
    for units, x in ((uh, h), (ul, n_other)):
        for u in units if h >= 0 else []:
            take = min(x, weights[u])
            expected[u] += take
            x -= take
    assert value == best
    assert np.array_equal(assigned, expected)


@settings(max_examples=400, deadline=None)
@given(nodes())
def test_share_floor_is_a_lower_bound(node):
    """The floor from each side's aggregates is never above the best
    selection over every number of flagged and other records (brute force),
    and is infinite exactly when the share allows no selection."""
    c, price, members, starts, weights, positive, k, lo, hi = node
    red = c - price
    kept = [np.array([u for u in members if weights[u] > 0 and positive[u] == s], dtype=np.int64) for s in (0, 1)]
    neg = np.array([weights[u][red[u] < 0].sum() for u in kept], dtype=np.int64)
    neg_sum = np.array([(weights[u] * red[u])[red[u] < 0].sum() for u in kept])
    least = np.array([red[u][red[u] >= 0].min(initial=np.inf) for u in kept])
    top = np.array([red[u][red[u] < 0].max(initial=-np.inf) for u in kept])
    total = np.array([weights[u].sum() for u in kept], dtype=np.int64)
    floor = share_floor(k, lo, hi, neg, neg_sum, least, top, total)

    def cheapest(side, x):  # the x cheapest records of a side
        costs = sorted(c - price[u] for u in members if positive[u] == side for _ in range(weights[u]))
        return sum(costs[:x])

    values = [cheapest(1, a) + cheapest(0, b) for a in range(total[1] + 1) for b in range(total[0] + 1)
              if a + b >= k and lo - 1e-9 <= a / (a + b) <= hi + 1e-9]
    if not values:
        assert floor == np.inf
        return
    assert floor <= min(values) + 1e-9


@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=80), st.data())
def test_kth_smallest_is_the_partition_value(values, data):
    """The in-place selection finds the value numpy's partition finds."""
    from hieranon.bounds.selection import _kth_smallest

    x = data.draw(st.integers(0, len(values) - 1))
    a = np.array(values)
    assert _kth_smallest(a.copy(), x) == np.partition(a, x)[x]


@given(st.lists(st.integers(-3, 3), min_size=0, max_size=150), st.integers(0, 160))
def test_sorted_prefix_orders_as_a_stable_sort(costs, extra):
    """Short sides sorted by insertion, long ones by merge sort: both put
    equal costs in member order, as a stable sort of the whole side does."""
    from hieranon.bounds.selection import _sorted_prefix

    red = np.array(costs, dtype=np.float64) / 2
    unit = np.arange(len(red), dtype=np.int64) * 3
    weights = np.ones(3 * len(red) + 1, dtype=np.int64)
    got_unit, got_red, cum_weight, _, complete = _sorted_prefix(unit, red, weights, extra)
    order = np.argsort(red, kind="stable")
    assert got_unit.tolist() == unit[order][:len(got_unit)].tolist()
    assert got_red.tolist() == red[order][:len(got_red)].tolist()
    assert complete == (int((red >= 0).sum()) <= extra)
    assert len(got_unit) >= min(len(red), int((red < 0).sum()) + extra)
