"""The relaxed program's kernels (hieranon.bounds.relaxation): the single
pass that lists the touched nodes of every node range gives what one pass per
range gave (the same lists, in the same order, and the same sums, so the same
prices on every machine)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hieranon.bounds.relaxation import _touch


def touch_one_range(lo, hi, price, ustart, unodes, ucost, weights, margin, cnt, val, near, near_val, touched):
    """The scan of the nodes ``lo <= g < hi`` alone (one pass over the units per range)."""
    m = lo
    for t in range(len(price)):
        for i in range(ustart[t], ustart[t + 1]):
            red = ucost[i] - price[t]
            if red >= margin:
                break
            g = unodes[i]
            if g < lo or g >= hi:
                continue
            if cnt[g] == 0 and near[g] == 0:
                touched[m] = g
                m += 1
            if red < 0:
                cnt[g] += weights[t]
                val[g] += red * weights[t]
            else:
                near[g] += weights[t]
                near_val[g] += red * weights[t]
    return m - lo


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_one_pass_touch_is_the_pass_per_node_range(data):
    n_nodes = data.draw(st.integers(1, 40))
    n_units = data.draw(st.integers(1, 12))
    node_cost = np.array(data.draw(st.lists(st.integers(0, 30), min_size=n_nodes, max_size=n_nodes)), dtype=np.int64)
    lists = [sorted(data.draw(st.sets(st.integers(0, n_nodes - 1), max_size=n_nodes)), key=lambda g: node_cost[g])
             for _ in range(n_units)]
    ustart = np.zeros(n_units + 1, dtype=np.int64)
    ustart[1:] = np.cumsum([len(x) for x in lists])
    unodes = np.array([g for x in lists for g in x], dtype=np.int32)
    ucost = node_cost[unodes].astype(np.int16)
    price = np.array(data.draw(st.lists(st.floats(0, 35, allow_nan=False), min_size=n_units, max_size=n_units)))
    weights = np.array(data.draw(st.lists(st.integers(1, 4), min_size=n_units, max_size=n_units)), dtype=np.int64)
    margin = data.draw(st.sampled_from([0.0, 2.5, 10.0]))
    n_chunks = data.draw(st.integers(1, min(5, n_nodes)))

    def work():
        return (np.zeros(n_nodes, dtype=np.int64), np.zeros(n_nodes), np.zeros(n_nodes, dtype=np.int64),
                np.zeros(n_nodes), np.full(n_nodes, -1, dtype=np.int64))

    want, got = work(), work()
    want_n = [touch_one_range(n_nodes * c // n_chunks, n_nodes * (c + 1) // n_chunks, price, ustart, unodes, ucost,
                              weights, margin, *want) for c in range(n_chunks)]
    got_n = np.zeros(n_chunks, dtype=np.int64)
    _touch(n_chunks, price, ustart, unodes, ucost, weights, margin, *got, got_n)
    assert got_n.tolist() == want_n
    for a, b in zip(want, got):
        assert np.array_equal(a, b)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_relaxed_value_does_not_depend_on_the_pieces(data):
    """The touched nodes are settled in pieces (numba's threads); the value,
    the records placed and the nodes opened are the same, bit for bit, for
    any number of pieces, with and without a share constraint."""
    from hieranon.bounds.relaxation import Relaxation

    n_units = data.draw(st.integers(1, 12))
    k = data.draw(st.integers(1, 4))
    n_nodes = data.draw(st.integers(1, 30))
    sets = [sorted(data.draw(st.sets(st.integers(0, n_units - 1), min_size=1, max_size=n_units)))
            for _ in range(n_nodes)]
    members = np.array([t for s in sets for t in s], dtype=np.int64)
    starts = np.zeros(n_nodes + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(s) for s in sets])
    node_cost = np.array(data.draw(st.lists(st.integers(0, 30), min_size=n_nodes, max_size=n_nodes)), dtype=np.int64)
    weights = np.array(data.draw(st.lists(st.integers(1, 4), min_size=n_units, max_size=n_units)), dtype=np.int64)
    own = np.zeros(n_units)
    share = None
    if data.draw(st.booleans()):
        flags = np.array(data.draw(st.lists(st.booleans(), min_size=n_units, max_size=n_units)), dtype=np.int8)
        share = (flags, data.draw(st.sampled_from([0.0, 0.2, 0.4])), data.draw(st.sampled_from([0.6, 0.8, 1.0])))
    price = np.array(data.draw(st.lists(st.floats(0, 35, allow_nan=False), min_size=n_units, max_size=n_units)))
    relaxation = Relaxation(members, starts, node_cost, own, weights, k, data.draw(st.sampled_from([0.0, 3.0])), share)
    outcomes = []
    for pieces in (1, 3, 64):
        relaxation.pieces = pieces
        value, assigned, opened = relaxation(price)
        outcomes.append((value, assigned.tolist(), opened.tolist()))
    assert outcomes[1] == outcomes[0]
    assert outcomes[2] == outcomes[0]
