"""Lower bounds of the distortion of every k-anonymous local recoding (bounds).

* the candidate nodes are exactly the nodes with >= k records under them
  (brute force over every unit's ancestor tuples, unbalanced hierarchies and
  internal-node inputs included);
* on random tables the bound lies between the simple bound and the exact
  optimum (MinGen, record-level, distortion objective), and below every
  k-anonymous output kaca+ finds;
* k = n (a single class) and k = 1 (nothing to generalise) are solved exactly
  and flagged optimal;
* bad parameters and oversized relaxations are refused with a clear message.
"""

from __future__ import annotations

import itertools
import threading
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hieranon.algorithms.kacaplus import KACAPlus
from hieranon.algorithms.mingen import MinGen, MinGenTimeout
from hieranon.bounds import (
    BoundTooLarge,
    Cancelled,
    candidate_nodes,
    distinct_member_sets,
    distortion_lower_bound,
    relaxed_prices,
    relaxed_program,
)
from hieranon.core import table
from hieranon.core.tree import Hierarchy
from hieranon.evaluation import metrics
from random_tables import balanced, make_problem, private_problems, random_tables, set_partitions


def unbalanced() -> Hierarchy:
    """* -> {a -> {a1, a2 -> {a21, a22}}, b}: leaves at depths 1, 2 and 3."""
    labels = ["*", "a", "b", "a1", "a2", "a21", "a22"]
    parent = np.array([-1, 0, 0, 1, 1, 4, 4], dtype=np.int32)
    return Hierarchy("u", labels, parent)


def brute_force_nodes(units, weights, hierarchies, int_costs, k):
    """{(node tuple): (sorted member units, cost)} over every ancestor tuple of every unit."""
    under: dict[tuple, set] = {}
    for t, row in enumerate(units):
        chains = [[int(v) for v in h.ancestors[row[j], : h.depth[row[j]] + 1]] for j, h in enumerate(hierarchies)]
        for node in itertools.product(*chains):
            under.setdefault(node, set()).add(t)
    return {node: (sorted(ts), sum(int(int_costs[j][v]) for j, v in enumerate(node)))
            for node, ts in under.items() if weights[sorted(ts)].sum() >= k}


def nodes_found(members, starts, node_cost):
    return sorted((sorted(members[starts[g]:starts[g + 1]].tolist()), int(node_cost[g])) for g in range(len(node_cost)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=40, counts=True))
def test_candidate_nodes_are_every_node_with_k_records(case):
    enc, k, _ = case
    cost = metrics.CostModel.build(enc.hierarchies)
    units, inv = np.unique(enc.codes, axis=0, return_inverse=True)
    weights = np.bincount(inv.ravel(), weights=enc.counts).astype(np.int64)
    got = nodes_found(*candidate_nodes(units, weights, enc.hierarchies, cost.int_costs, k))
    want = sorted(brute_force_nodes(units, weights, enc.hierarchies, cost.int_costs, k).values())
    assert got == want


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=40, counts=True))
def test_distinct_member_sets_keep_the_cheapest_node_of_each_set(case):
    """Of the nodes sharing one set of records, only the cheapest is kept:
    every set of the brute force once, at its least cost."""
    enc, k, _ = case
    cost = metrics.CostModel.build(enc.hierarchies)
    units, inv = np.unique(enc.codes, axis=0, return_inverse=True)
    weights = np.bincount(inv.ravel(), weights=enc.counts).astype(np.int64)
    cheapest: dict[tuple, int] = {}
    for ts, c in brute_force_nodes(units, weights, enc.hierarchies, cost.int_costs, k).values():
        cheapest[tuple(ts)] = min(c, cheapest.get(tuple(ts), c))
    kept = nodes_found(*distinct_member_sets(*candidate_nodes(units, weights, enc.hierarchies, cost.int_costs, k)))
    assert kept == sorted((list(ts), c) for ts, c in cheapest.items())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=40, counts=True), st.integers(1, 3))
def test_candidate_walk_split_into_threads_is_the_serial_walk(case, split_level):
    """The subtrees handed to threads are spliced back in place: the same
    arrays, node for node, as the walk in one thread."""
    enc, k, _ = case
    cost = metrics.CostModel.build(enc.hierarchies)
    units, inv = np.unique(enc.codes, axis=0, return_inverse=True)
    weights = np.bincount(inv.ravel(), weights=enc.counts).astype(np.int64)
    serial = candidate_nodes(units, weights, enc.hierarchies, cost.int_costs, k, split_level=-1)
    split = candidate_nodes(units, weights, enc.hierarchies, cost.int_costs, k, split_level=split_level)
    one_thread = candidate_nodes(units, weights, enc.hierarchies, cost.int_costs, k, split_level=split_level,
                                 threads=1, cancel=threading.Event())
    for got, alone, want in zip(split, one_thread, serial):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(alone, want)
    assume(len(serial[2]) > 0)
    for limit, small in (("max_incidences", len(serial[0]) - 1), ("max_vectors", 0)):
        with pytest.raises(BoundTooLarge, match=f"raise {limit}"):
            candidate_nodes(units, weights, enc.hierarchies, cost.int_costs, k, split_level=split_level,
                            **{limit: small})


@pytest.mark.parametrize("threads", [1, 2])
def test_a_cancelled_walk_begins_no_subtree(threads):
    """Once its event is set, the walk stops before its next subtree and
    raises Cancelled (here: set before the walk, with subtrees below the
    first refinement)."""
    hx, hy = balanced("x", [3, 3]), balanced("y", [3, 3])
    rng = np.random.default_rng(0)
    leaves_x = np.flatnonzero(hx.depth == 2)
    leaves_y = np.flatnonzero(hy.depth == 2)
    units = np.unique(np.stack([rng.choice(leaves_x, 300), rng.choice(leaves_y, 300)], axis=1), axis=0)
    weights = np.full(len(units), 2, dtype=np.int64)
    cost = metrics.CostModel.build([hx, hy])
    called_off = threading.Event()
    called_off.set()
    with pytest.raises(Cancelled):
        candidate_nodes(units, weights, [hx, hy], cost.int_costs, 2, split_level=1, threads=threads,
                        cancel=called_off)
    whole = candidate_nodes(units, weights, [hx, hy], cost.int_costs, 2, split_level=1, threads=threads,
                            cancel=threading.Event())
    assert len(whole[2]) == len(brute_force_nodes(units, weights, [hx, hy], cost.int_costs, 2))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=40, counts=True), st.data())
def test_a_program_built_ahead_gives_the_same_bound_and_prices(case, data):
    """relaxed_prices over a relaxed_program built beforehand, whole or only
    walked (as kaca+ walks it in a thread), is relaxed_prices building its
    own, bit for bit; a program of another k or share is refused."""
    enc, k, _ = case
    cost = metrics.CostModel.build(enc.hierarchies)
    n = int(enc.counts.sum())
    flags = np.asarray(data.draw(st.lists(st.booleans(), min_size=enc.n_rows, max_size=enc.n_rows)))
    share = data.draw(st.sampled_from([None, (flags, 0.2, 0.8)]))
    iterations = data.draw(st.integers(0, 40))
    own = relaxed_prices(enc, cost, k, share=share, iterations=iterations)
    walked = relaxed_program(enc, cost, k, share=share, walk_only=True)
    assert walked.relaxation is None
    for program in (relaxed_program(enc, cost, k, share=share), walked):
        ahead = relaxed_prices(enc, cost, k, share=share, iterations=iterations, program=program)
        assert program.relaxation is not None and program.walked is None
        assert ahead.bound.ratio == own.bound.ratio and ahead.bound.nodes == own.bound.nodes
        for name in ("price", "unit_of_row", "weights", "members", "starts", "node_cost"):
            np.testing.assert_array_equal(getattr(ahead, name), getattr(own, name))
    if k < n:
        with pytest.raises(ValueError, match="another table, k"):
            relaxed_prices(enc, cost, k + 1, share=share, program=program)
    other = None if share is not None else (flags, 0.2, 0.8)
    with pytest.raises(ValueError, match="another table, k"):
        relaxed_prices(enc, cost, k, share=other, program=program)


def test_candidate_nodes_unbalanced_and_internal_values():
    h = unbalanced()
    leaf = {lab: i for i, lab in enumerate(h.labels)}
    col = [leaf[v] for v in ["a1", "a21", "a22", "a22", "b", "b", "a", "*", "a21", "a1"]]
    other = [1, 1, 2, 2, 1, 2, 1, 2, 2, 1]
    h2 = Hierarchy("v", ["*", "x", "y"], np.array([-1, 0, 0], dtype=np.int32))
    codes = np.stack([col, other], axis=1).astype(np.int32)
    enc = table.EncodedTable(codes, [h, h2], ["u", "v"], np.ones(len(codes), dtype=np.int64))
    cost = metrics.CostModel.build(enc.hierarchies)
    units, inv = np.unique(codes, axis=0, return_inverse=True)
    weights = np.bincount(inv.ravel()).astype(np.int64)
    for k in (1, 2, 3, 5):
        got = nodes_found(*candidate_nodes(units, weights, enc.hierarchies, cost.int_costs, k))
        assert got == sorted(brute_force_nodes(units, weights, enc.hierarchies, cost.int_costs, k).values())


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=24))
def test_bound_is_below_the_optimum_and_every_output(case):
    enc, k, seed = case
    prob = make_problem(enc, k, seed)
    b = distortion_lower_bound(enc, prob.cost, k, iterations=200)
    assert b.simple_ratio <= b.ratio + 1e-12
    out = KACAPlus().solve(prob).codes
    found = metrics.distortion(enc.codes, out, prob.cost)
    assert b.distortion <= found + 1e-7
    warm = distortion_lower_bound(enc, prob.cost, k, iterations=200, upper=found, start=out)
    assert warm.distortion <= found + 1e-7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            opt = MinGen(mode="records", objective="distortion", time_limit=10).solve(prob)
        except MinGenTimeout:  # a busy machine: no optimum to compare with
            return
    if opt.details.optimal:
        optimum = metrics.distortion(enc.codes, opt.codes, prob.cost)
        assert max(b.distortion, warm.distortion) <= optimum + 1e-7


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=30, counts=True))
def test_one_class_and_k1_are_solved_exactly(case):
    enc, _, _ = case
    cost = metrics.CostModel.build(enc.hierarchies)
    n = int(enc.counts.sum())
    whole = distortion_lower_bound(enc, cost, n)
    lca = enc.codes[0]
    for row in enc.codes[1:]:
        lca = metrics.lca_tuple(lca, row, enc.hierarchies)[0]
    assert whole.optimal
    assert whole.distortion == pytest.approx(metrics.distortion(enc.codes, np.tile(lca, (len(enc.codes), 1)),
                                                                cost, enc.counts))
    one = distortion_lower_bound(enc, cost, 1)
    assert one.optimal and one.distortion == 0.0


def test_bound_rises_above_the_simple_bound():
    """p1, p1, p2, q1, q1 with k = 2. Alone, p2 costs 0.5 (node p) and the
    others 0: the simple bound 0.5. But the p1 pair cannot keep cost 0 and
    lend p2 a partner: the optimum is 1.5 ({p1, p1, p2} at p), and the
    relaxation (whose value tends to its LP bound, 1.0: half of each p1 at
    p1, the other halves with p2 at p) lies in between."""
    h = Hierarchy("a", ["*", "p", "q", "p1", "p2", "q1", "q2"], np.array([-1, 0, 0, 1, 1, 2, 2], dtype=np.int32))
    lab = {v: i for i, v in enumerate(h.labels)}
    codes = np.array([[lab[v]] for v in ["p1", "p1", "p2", "q1", "q1"]], dtype=np.int32)
    enc = table.EncodedTable(codes, [h], ["a"], np.ones(5, dtype=np.int64))
    cost = metrics.CostModel.build(enc.hierarchies)
    b = distortion_lower_bound(enc, cost, 2)
    assert b.simple_ratio == pytest.approx(0.5 / 5)
    assert 0.95 <= b.distortion <= 1.0 + 1e-9


def test_refusals():
    h = unbalanced()
    enc = table.EncodedTable(np.array([[3], [5], [6]], dtype=np.int32), [h], ["u"], np.ones(3, dtype=np.int64))
    cost = metrics.CostModel.build(enc.hierarchies)
    with pytest.raises(ValueError, match="k = 4 exceeds the 3 records"):
        distortion_lower_bound(enc, cost, 4)
    with pytest.raises(ValueError, match="k must be a whole number"):
        distortion_lower_bound(enc, cost, 0)
    with pytest.raises(ValueError, match="iterations must be"):
        distortion_lower_bound(enc, cost, 2, iterations=-1)
    with pytest.raises(BoundTooLarge, match="raise max_incidences"):
        distortion_lower_bound(enc, cost, 1, max_incidences=2)


# ------------------------------------------------------------ through the API
def patients():
    import pandas as pd

    from hieranon.hierarchies import readers as H
    from hieranon.io.datasets import example_path

    data = example_path("patients.csv").parent
    qis = ["gender", "age", "postcode"]
    df = pd.read_csv(example_path("patients.csv"), dtype=str)
    return df, qis, {q: H.from_arx_csv(data / f"patients_hierarchy_{q}.csv", q) for q in qis}


def test_anonymize_lower_bound_is_below_the_output_and_the_strongest_requirement():
    from hieranon.job import pipeline as api

    df, qis, hs = patients()
    reqs = ["gender,age:4", "age,postcode:3"]
    res = api.anonymize(df, qis, hs, requirements=reqs, method="heuristicmin", lower_bound=True)
    assert res.lower_bound is not None and res.lower_bound.ratio <= res.metrics.distortion_ratio + 1e-12
    assert res.gap_to_bound() >= 1 - 1e-9 and res.summary()["lower_bound"]["output_over_bound"] == res.gap_to_bound()
    prob = api.prepare(df, qis, hs, requirements=reqs)
    each = [distortion_lower_bound(prob.table, prob.cost, r.k, columns=[qis.index(a) for a in r.attributes],
                                   upper=res.metrics.distortion).ratio for r in prob.requirements]
    assert res.lower_bound.ratio == pytest.approx(max(each))
    assert api.anonymize(df, qis, hs, k=3).lower_bound is None  # only on request


def test_bound_iterations_tighten_the_certificate_and_are_checked_before_any_work():
    """More subgradient iterations give a bound at least as high (the same
    ascent, run longer: its best value can only rise), never above the
    output; a count that is not a whole number >= 1 is refused by name
    before the table is read."""
    from hieranon.job import pipeline as api
    from hieranon.report import evaluate_pair

    df, qis, hs = patients()
    short = api.anonymize(df, qis, hs, k=3, lower_bound=True, bound_iterations=np.int64(2))
    long = api.anonymize(df, qis, hs, k=3, lower_bound=True, bound_iterations=60)
    assert short.lower_bound.iterations <= 2 < long.lower_bound.iterations <= 60
    assert short.lower_bound.ratio <= long.lower_bound.ratio <= long.metrics.distortion_ratio + 1e-12
    assert long.lower_bound.ratio > short.lower_bound.ratio  # on this table the longer ascent gets higher
    pair = evaluate_pair(df, long.data, qis, hs, k=3, lower_bound=True, bound_iterations=2)
    assert pair.lower_bound.iterations <= 2
    for bad in (0, -1, 2.5, True, "400"):
        with pytest.raises(ValueError, match="bound_iterations must be a whole number >= 1"):
            api.anonymize(df.iloc[:0], qis, hs, k=3, lower_bound=True, bound_iterations=bad)
        with pytest.raises(ValueError, match="bound_iterations"):
            evaluate_pair(df, long.data, qis, hs, k=3, lower_bound=True, bound_iterations=bad)


def test_anonymize_keeps_its_output_when_the_bound_is_too_large(monkeypatch):
    from hieranon.bounds import lower_bound
    from hieranon.job import pipeline as api

    def too_large(*args, **kwargs):
        raise BoundTooLarge("the lower bound needs more than 1 (row, node) pairs")

    monkeypatch.setattr(lower_bound, "candidate_nodes", too_large)
    df, qis, hs = patients()
    with pytest.warns(UserWarning, match="no lower bound"):
        res = api.anonymize(df, qis, hs, k=3, lower_bound=True)
    assert res.lower_bound is None and res.gap_to_bound() is None


def test_too_many_depth_vectors_is_refused():
    h = unbalanced()
    enc = table.EncodedTable(np.array([[3, 5], [5, 6], [6, 3]], dtype=np.int32), [h, h], ["u", "w"],
                             np.ones(3, dtype=np.int64))
    cost = metrics.CostModel.build(enc.hierarchies)
    units = np.unique(enc.codes, axis=0)
    with pytest.raises(BoundTooLarge, match="raise max_vectors"):
        candidate_nodes(units, np.ones(3, dtype=np.int64), enc.hierarchies, cost.int_costs, 1, max_vectors=3)
    members, starts, node_cost = candidate_nodes(units, np.ones(3, dtype=np.int64), enc.hierarchies,
                                                 cost.int_costs, 1)
    assert len(node_cost) > 3  # the limit, not the table, stopped the walk


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=60, counts=True))
def test_screening_margin_changes_speed_not_the_bound(case):
    """Nodes left unread because their near members already make them
    non-negative would not have opened: the bound is the one of a full scan."""
    import hieranon.bounds.lower_bound as B

    enc, k, _ = case
    cost = metrics.CostModel.build(enc.hierarchies)
    screened = distortion_lower_bound(enc, cost, k, iterations=60)
    original = B.MARGIN_LEVELS
    try:
        B.MARGIN_LEVELS = 0.0  # no near members: every node with a negative member is read
        full_scan = distortion_lower_bound(enc, cost, k, iterations=60)
    finally:
        B.MARGIN_LEVELS = original
    assert screened.distortion == full_scan.distortion
    assert screened.iterations == full_scan.iterations


def test_a_table_of_roots_has_bound_zero():
    """Every QI cell already '*' (nothing left to generalise): the bound and its ratio are 0, and optimal."""
    h = unbalanced()
    enc = table.EncodedTable(np.zeros((4, 1), dtype=np.int32), [h], ["u"], np.ones(4, dtype=np.int64))
    b = distortion_lower_bound(enc, metrics.CostModel.build(enc.hierarchies), 2)
    assert (b.ratio, b.distortion, b.optimal) == (0.0, 0.0, True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=30, counts=True), st.data())
def test_generalised_inputs_candidate_nodes_and_bound(case, data):
    """Input cells already generalised (an ancestor, the root included, as
    with --missing root): the candidate nodes are still exactly the brute
    force's, and the bound stays below kaca+'s output."""
    enc, k, seed = case
    codes = enc.codes.copy()
    for i in range(len(codes)):
        for j, h in enumerate(enc.hierarchies):
            up = data.draw(st.integers(0, 3))
            codes[i, j] = h.ancestors[codes[i, j], max(0, int(h.depth[codes[i, j]]) - up)]
    enc = table.EncodedTable(codes, enc.hierarchies, enc.qi_names, enc.counts)
    cost = metrics.CostModel.build(enc.hierarchies)
    units, inv = np.unique(codes, axis=0, return_inverse=True)
    weights = np.bincount(inv.ravel(), weights=enc.counts).astype(np.int64)
    got = nodes_found(*candidate_nodes(units, weights, enc.hierarchies, cost.int_costs, k))
    assert got == sorted(brute_force_nodes(units, weights, enc.hierarchies, cost.int_costs, k).values())
    prob = make_problem(enc, k, seed)
    found = metrics.distortion(codes, KACAPlus().solve(prob).codes, prob.cost, enc.counts)
    assert distortion_lower_bound(enc, cost, k, iterations=100).distortion <= found + 1e-7


def best_balanced_recoding(enc, cost, k, flags, low, high) -> int:
    """The least integer distortion of a record-level local recoding whose
    classes hold >= k records and a share of flagged records in [low, high]
    (brute force: a class prints its rows' common ancestor, the cheapest
    tuple above them; classes printing the same tuple can be merged, shares
    staying in range)."""
    rows = [r for r, c in enumerate(enc.counts) for _ in range(int(c))]
    own = [sum(int(cost.int_costs[j][enc.codes[r, j]]) for j in range(enc.codes.shape[1])) for r in rows]
    best = None
    for part in set_partitions(list(range(len(rows)))):
        total = 0
        for block in part:
            share = sum(bool(flags[rows[i]]) for i in block) / len(block)
            if len(block) < k or not low - 1e-9 <= share <= high + 1e-9:
                break
            top = 0
            for j, h in enumerate(enc.hierarchies):
                node = enc.codes[rows[block[0]], j]
                for i in block[1:]:
                    node = h.lca(np.array([node]), np.array([enc.codes[rows[i], j]]))[0]
                top += int(cost.int_costs[j][node])
            total += sum(top - own[i] for i in block)
        else:
            best = total if best is None else min(best, total)
    return best


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=7), st.data())
def test_share_constrained_bound_is_below_the_balanced_optimum(case, data):
    """With the share constraint of a two-valued sensitive attribute's
    t-closeness, the bound stays below the least distortion of every local
    recoding whose classes meet it (brute force over set partitions), with
    and without a target."""
    enc, k, _ = case
    n = int(enc.counts.sum())
    assume(n <= 7)
    flags = np.asarray(data.draw(st.lists(st.booleans(), min_size=len(enc.codes), max_size=len(enc.codes))))
    p = float((flags * enc.counts).sum() / n)
    t = data.draw(st.sampled_from([0.0, 0.1, 0.25, 0.5]))
    cost = metrics.CostModel.build(enc.hierarchies)
    optimum = best_balanced_recoding(enc, cost, k, flags, p - t, p + t)
    assert optimum is not None  # the whole table as one class always qualifies
    for upper in (None, optimum / cost.scale):
        b = distortion_lower_bound(enc, cost, k, iterations=150, upper=upper, share=(flags, p - t, p + t))
        assert b.distortion <= optimum / cost.scale + 1e-7


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=7), st.data())
def test_a_resumed_ascent_never_falls_and_stays_below_the_optimum(case, data):
    """An ascent resumed from the prices of an earlier one (the job's bound
    goes on from those of kaca+'s Lagrangian output) starts at that bound:
    it never ends lower, stays below the least distortion of every local
    recoding whose classes meet the share (brute force) and counts both
    ascents' iterations; prices of another k or share are refused."""
    enc, k, _ = case
    n = int(enc.counts.sum())
    assume(n <= 7)
    flags = np.asarray(data.draw(st.lists(st.booleans(), min_size=len(enc.codes), max_size=len(enc.codes))))
    p = float((flags * enc.counts).sum() / n)
    t = data.draw(st.sampled_from([0.1, 0.25, 0.5]))
    share = (flags, p - t, p + t)
    cost = metrics.CostModel.build(enc.hierarchies)
    optimum = best_balanced_recoding(enc, cost, k, flags, p - t, p + t)
    first = relaxed_prices(enc, cost, k, share=share, iterations=data.draw(st.integers(1, 20)))
    more = data.draw(st.integers(1, 40))
    resumed = relaxed_prices(enc, cost, k, share=share, iterations=more, resume=first)
    assert first.bound.distortion <= resumed.bound.distortion <= optimum / cost.scale + 1e-7
    assert first.bound.iterations < resumed.bound.iterations <= first.bound.iterations + more
    assert resumed.program is first.program and resumed.value >= first.value
    if k < n:
        with pytest.raises(ValueError, match="another table, k"):
            relaxed_prices(enc, cost, k + 1, share=share, resume=first)
    with pytest.raises(ValueError, match="another table, k"):
        relaxed_prices(enc, cost, k, share=None, resume=first)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(private_problems(max_rows=30))
def test_problem_bound_honours_a_two_valued_t_closeness(case):
    """A problem whose t-closeness (equal or ordered) or l-diversity is on a
    two-valued attribute is bounded with its share constraint and says so;
    the bound stays below kaca+'s output meeting every model; other models
    are left out of the bound (it stays valid, only lower)."""
    from hieranon.bounds import problem_lower_bound, share_constraint
    from hieranon.privacy import DistinctLDiversity, EntropyLDiversity

    problem, sens, models = case
    out = KACAPlus().solve(problem)
    found = metrics.distortion(problem.table.codes, out.codes, problem.cost, problem.table.counts)
    b = problem_lower_bound(problem, upper=found, start=out.codes, iterations=100)
    assert b.distortion <= found + 1e-7
    binary_t = [m for m in problem.privacy if share_constraint(m) is not None]
    assert bool(b.models) == bool(binary_t)
    m = models[0]
    trivial = (isinstance(m, DistinctLDiversity) and m.l < 2) or (isinstance(m, EntropyLDiversity) and m.l <= 1)
    expected = sens["s"].nunique() == 2 and not trivial
    assert (share_constraint(problem.privacy[0]) is not None) == expected


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["distinct", "entropy", "recursive", "t"]), st.integers(1, 40), st.integers(0, 40),
       st.data())
def test_a_two_valued_models_share_interval_holds_every_class_that_meets_it(kind, n_first, n_second, data):
    """Every class (counts of the two values) that meets the model has its
    share of the second value inside the model's interval, and every class
    outside the interval fails the model (the interval is a relaxation, and a
    tight one up to the closing of open ends)."""
    from hieranon.bounds import share_constraint
    from hieranon.privacy import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity, TCloseness

    table = pd.DataFrame({"s": ["a", "b"] * 30 + ["a"] * 20})  # 80 records: a class holds at most all of them
    model = {"distinct": DistinctLDiversity("s", 2), "entropy": EntropyLDiversity("s", data.draw(
                 st.sampled_from([1.2, 1.5, 1.9, 2]))),
             "recursive": RecursiveCLDiversity("s", data.draw(st.sampled_from([1.5, 2, 3.5])), 2),
             "t": TCloseness("s", data.draw(st.sampled_from([0.1, 0.3])), "equal")}[kind]
    bound = model.bind(table)
    _, low, high = share_constraint(bound)
    hist = np.array([[n_first, n_second]], dtype=np.float64)
    share = n_second / (n_first + n_second)
    if bound.ok_hist(hist)[0]:
        assert low - 1e-9 <= share <= high + 1e-9
    if not low - 1e-9 <= share <= high + 1e-9:
        assert not bound.ok_hist(hist)[0]


def test_distinct_two_diversity_bound_by_hand():
    """Four records, two per leaf of one attribute (a: both 'yes', b: both
    'no'): 2-anonymity costs nothing, but distinct 2-diversity forces one
    class of all four under the root: distortion 4 (uniform WHD, height 2)."""
    from hieranon.bounds import problem_lower_bound
    from hieranon.privacy import DistinctLDiversity

    h = balanced("q", [2])
    enc = table.EncodedTable(np.array([[h.leaves[0]]] * 2 + [[h.leaves[1]]] * 2, dtype=np.int32), [h], ["q"],
                             np.ones(4, dtype=np.int64))
    problem = make_problem(enc, 2, 0)
    plain = problem_lower_bound(problem, iterations=50)
    problem.privacy = [DistinctLDiversity("s", 2).bind(pd.DataFrame({"s": ["yes", "yes", "no", "no"]}))]
    diverse = problem_lower_bound(problem, iterations=50)
    assert plain.distortion == pytest.approx(0) and diverse.distortion == pytest.approx(4)
    assert diverse.models == ("distinct 2-diversity of 's'",)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_balanced_choice_is_the_best_share_keeping_selection(data):
    """A node's best selection under a share constraint (only each side's
    cheapest records sorted, all of them when the search reaches further)
    has the value of the best over every number of positive and other
    records, by brute force; its records are each side's cheapest."""
    from hieranon.bounds import balanced_choice

    m = data.draw(st.integers(1, 60))
    weights = np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=m, max_size=m)), dtype=np.int64)
    positive = np.asarray(data.draw(st.lists(st.integers(0, 1), min_size=m, max_size=m)), dtype=np.int8)
    price = np.asarray(data.draw(st.lists(st.integers(0, 12), min_size=m, max_size=m)), dtype=np.float64)
    c = float(data.draw(st.integers(0, 12)))
    k = data.draw(st.integers(1, 10))
    # wide, narrow (few feasible counts: the search may run past its sorted prefix) and empty intervals
    lo, hi = data.draw(st.sampled_from([(0.0, 1.0), (0.05, 0.9), (0.2, 0.5), (0.0, 0.3), (0.4, 1.0), (0.33, 0.34),
                                        (0.24, 0.26), (0.41, 0.42), (0.5, 0.5), (0.45, 0.3), (0.0, 0.0)]))
    members = np.arange(m, dtype=np.int32)
    starts = np.array([0, m], dtype=np.int64)
    best, h, n_other, uh, ul = balanced_choice(0, c, price, members, starts, weights, positive, k, lo, hi, np.inf)

    def cheapest(side, x):  # the x cheapest records of a side
        costs = sorted(c - price[i] for i in range(m) if positive[i] == side for _ in range(weights[i]))
        return sum(costs[:x]) if x <= len(costs) else None

    total_h, total_l = int(weights[positive == 1].sum()), int(weights[positive == 0].sum())
    values = [cheapest(1, a) + cheapest(0, b) for a in range(total_h + 1) for b in range(total_l + 1)
              if a + b >= k and lo - 1e-9 <= a / (a + b) <= hi + 1e-9]
    if not values:
        assert h == -1 and best == np.inf
        return
    assert h >= 0 and best == pytest.approx(min(values))
    assert h + n_other >= k and lo - 1e-9 <= h / (h + n_other) <= hi + 1e-9
    assert best == pytest.approx(cheapest(1, h) + cheapest(0, n_other))
    for units, side, x in ((uh, 1, h), (ul, 0, n_other)):  # the returned units, in order, start with the cheapest
        assert all(positive[u] == side for u in units)
        red = [c - price[u] for u in units]
        assert red == sorted(red) and sum(weights[units]) >= x


def test_balanced_choice_reads_past_its_sorted_prefix():
    """Shares in [0.41, 0.42]: no class of 1-4 positive records qualifies,
    the first is 5 positive and 7 other records -- past the records sorted
    first, so every record is sorted and the search goes on."""
    from hieranon.bounds import balanced_choice

    positive = np.array([1] * 5 + [0] * 7, dtype=np.int8)
    weights = np.ones(12, dtype=np.int64)
    members, starts = np.arange(12, dtype=np.int32), np.array([0, 12], dtype=np.int64)
    price = np.array([0.0, 0.1, 0.2, 0.3, 0.4] + [0.0] * 7)  # reduced costs 1, 0.9, ..., 0.6 and 1
    best, h, n_other, uh, ul = balanced_choice(0, 1.0, price, members, starts, weights, positive, 1, 0.41, 0.42,
                                                np.inf)
    assert (h, n_other) == (5, 7) and best == pytest.approx(11.0)
    assert sorted(uh) == [0, 1, 2, 3, 4] and sorted(ul) == list(range(5, 12))
