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
