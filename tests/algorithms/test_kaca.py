"""KACA1 / KACA2 (seed 004, Algorithms 1 and 2; seed 000, Algorithm 1).

* SPEC 5 items 1 and 2: the papers' running examples, for every seed;
* properties on random balanced hierarchies and tables (hypothesis):
  k-anonymity, output cells generalise the input, Lemma 2 (distortion ==
  sum of merge distances), determinism, fast path == plain path, KACA2's
  inconsistency bound;
* an independent pure-Python replay of the merge log: every merge was made
  by a class of size < k with one of its nearest classes (Def. 10 with the
  stub rule of Def. 14), the tie count is right, and replaying the merges
  with the rules of SPEC section 3 gives the output's classes.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hieranon.algorithms.base import Problem
from hieranon.algorithms.contract import check_output
from hieranon.algorithms.kaca import KACA1, KACA2, kaca1_codes, kaca2_global_levels
from hieranon.core import table
from hieranon.core.requirements import Requirement
from hieranon.evaluation import metrics
from hieranon.hierarchies import readers as H
from random_tables import make_problem, private_problems, random_tables

QIS = ["Gender", "Age", "Postcode"]


# ------------------------------------------------------------------ helpers
def paper_problem(df, hierarchies, k, seed, scheme="uniform"):
    enc = table.encode(df, QIS, hierarchies)
    cost = metrics.CostModel.build(enc.hierarchies, scheme)
    return enc, Problem(enc, [Requirement(tuple(QIS), k)], cost, seed=seed)


def replay_check(enc, cost, k, out, info):
    """Independent replay of ``info['merge_log']`` in plain Python."""
    hs = enc.hierarchies
    g = cost.int_costs
    keys, sizes = info["initial_classes"]
    cls = {i: (tuple(int(x) for x in keys[i]), int(sizes[i])) for i in range(len(sizes))}

    def lca(t1, t2):
        return tuple(int(h.lca(np.array([a]), np.array([b]))[0]) for h, a, b in zip(hs, t1, t2))

    def dist(c, c2):
        (t1, n1), (t2, n2) = cls[c], cls[c2]
        t12 = lca(t1, t2)
        a = sum(int(g[j][t12[j]] - g[j][t1[j]]) for j in range(len(hs)))
        b = sum(int(g[j][t12[j]] - g[j][t2[j]]) for j in range(len(hs)))
        w = (k - n1) if n1 + n2 >= 2 * k else n2  # Def. 14 (unit record counts)
        return n1 * a + w * b

    for C, c2, d, nt, kind, _ in info["merge_log"].tolist():
        assert C in cls and cls[C][1] < k, "the chosen class must be smaller than k"
        dists = {o: dist(C, o) for o in cls if o != C}
        if kind == 2:  # suppressed
            assert d == -1 or d == min(dists.values())
            del cls[C]
            continue
        best = min(dists.values())
        ties = sorted(o for o, v in dists.items() if v == best)
        assert d == best and c2 in ties and nt == len(ties)
        (t1, n1), (t2, n2) = cls[C], cls[c2]
        t12 = lca(t1, t2)
        stub = n1 + n2 >= 2 * k
        moved = (k - n1) if stub else n2
        if t12 == t2:  # C' generalises C: C joins C'
            cls[c2] = (t2, n2 + n1)
            del cls[C]
            continue
        if stub:
            cls[c2] = (t2, n2 - moved)
        else:
            del cls[c2]
        del cls[C]
        same = [o for o, (t, _) in cls.items() if t == t12]
        if same:
            o = same[0]
            cls[o] = (t12, cls[o][1] + n1 + moved)
        else:
            cls[C] = (t12, n1 + moved)
    assert all(n >= k for _, n in cls.values())
    expected = Counter({t: n for t, n in cls.values()})
    sup = np.zeros(len(out), bool) if "suppressed" not in info else info["suppressed"]
    ec = table.group(out[~sup], enc.counts[~sup])
    got = Counter({tuple(int(x) for x in key): int(n) for key, n in zip(ec.keys, ec.sizes)})
    assert got == expected


# ------------------------------------------------------------------ SPEC 5 items 1 and 2
TABLE_1B = [["male", "middle", "4350"], ["male", "middle", "4350"], ["*", "young", "435*"],
            ["*", "young", "435*"], ["female", "old", "4353"], ["female", "old", "4353"]]
TABLE_1D = [["male", "middle", "4350"], ["male", "middle", "4350"], ["*", "middle", "435*"],
            ["*", "middle", "435*"], ["female", "old", "4353"], ["female", "old", "4353"]]


@pytest.mark.parametrize("fast", [True, False])
def test_seed000_table1b_every_seed(seed000_table1a, paper_hierarchies, fast):
    for seed in range(20):
        enc, prob = paper_problem(seed000_table1a, paper_hierarchies, 2, seed)
        sol = KACA1(fast=fast).solve(prob)
        out = table.decode(sol.codes, enc.hierarchies, QIS).values.tolist()
        assert out == TABLE_1B, seed
        assert metrics.distortion(enc.codes, sol.codes, prob.cost) == pytest.approx(2.5)
        assert sol.details.distance_sum == pytest.approx(2.5)
        assert sol.details.merges == 1 and not sol.suppressed.any()


@pytest.mark.parametrize("fast", [True, False])
def test_seed004_table1d_every_seed(seed004_table1a, paper_hierarchies, fast):
    for seed in range(20):
        enc, prob = paper_problem(seed004_table1a, paper_hierarchies, 2, seed)
        sol = KACA1(fast=fast).solve(prob)
        out = table.decode(sol.codes, enc.hierarchies, QIS).values.tolist()
        # tuple 3 (the stub of {male, middle, 4350}) joins tuple 4 as {*, middle, 435*}
        assert out == TABLE_1D, seed
        assert metrics.distortion(enc.codes, sol.codes, prob.cost) == pytest.approx(2.5)
        assert sol.details.distance_sum == pytest.approx(2.5)


def test_seed004_table1a_distance_is_def10_with_stub(seed004_table1a, paper_hierarchies):
    # the only small class {female, middle, 4352} picks the stub of {male, middle, 4350}
    # (|C| + |C'| = 4 >= 2k: distance 1 * 1.25 + 1 * 1.25 = 2.5) over {female, old, 4353}
    # (whole: 1 * 1.25 + 2 * 1.25 = 3.75)
    enc, prob = paper_problem(seed004_table1a, paper_hierarchies, 2, 0)
    out, sup, info = kaca1_codes(enc.codes, enc.counts, enc.hierarchies, prob.cost, 2,
                                 np.random.default_rng(0), record=True)
    C, c2, d, nt, kind, _ = info["merge_log"][0]
    assert d == 2.5 * prob.cost.scale and nt == 1 and kind == 1
    replay_check(enc, prob.cost, 2, out, info)


def test_kaca2_paper_table_is_consistent(seed004_table1a, paper_hierarchies):
    enc, prob = paper_problem(seed004_table1a, paper_hierarchies, 2, 0)
    sol = KACA2(max_inconsistency=0.1).solve(prob)
    check_output(enc, sol.codes, 2)
    assert (metrics.inconsistency(sol.codes, enc.hierarchies) < 0.1).all()
    assert sol.details.distortion_total == pytest.approx(metrics.distortion(enc.codes, sol.codes, prob.cost))


# ------------------------------------------------------------------ properties
PROP = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROP
@given(random_tables())
def test_kaca1_properties(case):
    enc, k, seed = case
    prob = make_problem(enc, k, seed)
    out, sup, info = kaca1_codes(enc.codes, enc.counts, enc.hierarchies, prob.cost, k,
                                 np.random.default_rng(seed), record=True)
    assert out.shape == enc.codes.shape and out.dtype == np.int32
    assert not sup.any()
    check_output(enc, out, k)
    # Lemma 2: the total distortion is the sum of the merge distances
    assert metrics.distortion(enc.codes, out, prob.cost) == pytest.approx(info["distance_sum"], abs=1e-9)
    assert info["merges"] == len(info["merge_log"])
    replay_check(enc, prob.cost, k, out, info)


@PROP
@given(random_tables())
def test_fast_equals_plain_and_deterministic(case):
    enc, k, seed = case
    prob = make_problem(enc, k, seed)
    runs = [kaca1_codes(enc.codes, enc.counts, enc.hierarchies, prob.cost, k, np.random.default_rng(seed),
                        fast=fast, record=True, trie_order=order)
            for fast, order in [(True, None), (False, None), (True, None),
                                (True, list(range(enc.codes.shape[1]))[::-1])]]
    ref_out, _, ref_info = runs[0]
    for out, _, info in runs[1:]:
        assert np.array_equal(out, ref_out)
        assert np.array_equal(info["merge_log"][:, :5], ref_info["merge_log"][:, :5])
        assert info["distance_sum_int"] == ref_info["distance_sum_int"]
    sol1 = KACA1().solve(prob)
    sol2 = KACA1(fast=False).solve(prob)
    assert np.array_equal(sol1.codes, ref_out) and np.array_equal(sol2.codes, ref_out)


@PROP
@given(random_tables(counts=True))
def test_record_counts_rows_are_indivisible(case):
    enc, k, seed = case
    prob = make_problem(enc, k, seed)
    fast = KACA1().solve(prob)
    plain = KACA1(fast=False).solve(prob)
    assert np.array_equal(fast.codes, plain.codes)
    check_output(enc, fast.codes, k)
    assert metrics.distortion(enc.codes, fast.codes, prob.cost, enc.counts) == pytest.approx(
        fast.details.distance_sum, abs=1e-9)


@PROP
@given(random_tables(), st.sampled_from([0.05, 0.1, 0.25]))
def test_kaca2_properties(case, max_inc):
    enc, k, seed = case
    prob = make_problem(enc, k, seed)
    sol = KACA2(max_inconsistency=max_inc).solve(prob)
    check_output(enc, sol.codes, k)
    assert (metrics.inconsistency(sol.codes, enc.hierarchies, enc.counts) < max_inc).all()
    assert sol.details.distortion_total == pytest.approx(metrics.distortion(enc.codes, sol.codes, prob.cost))
    again = KACA2(max_inconsistency=max_inc, fast=False).solve(prob)
    assert np.array_equal(sol.codes, again.codes)
    # step 1 leaves every attribute with a Lemma 4 bound below max_inconsist
    g1, _ = kaca2_global_levels(enc.codes, enc.counts, enc.hierarchies, k, max_inc)
    for j in range(g1.shape[1]):
        _, f = np.unique(g1[:, j], return_counts=True)
        assert f[f < k].sum() / len(g1) < max_inc or (g1[:, j] == 0).all()


@settings(max_examples=25, deadline=None)
@given(random_tables(max_rows=40))
def test_height_weights_and_priorities(case):
    enc, k, seed = case
    names = enc.qi_names
    prios = {a: 1 - i / max(len(names), 2) for i, a in enumerate(names)}
    for kw in ({"scheme": "height", "beta": 1}, {"scheme": "uniform", "priorities": prios},
               {"scheme": "height", "beta": 2, "priorities": prios}):
        prob = make_problem(enc, k, seed, **kw)
        out, _, info = kaca1_codes(enc.codes, enc.counts, enc.hierarchies, prob.cost, k,
                                   np.random.default_rng(seed), record=True)
        plain, _, _ = kaca1_codes(enc.codes, enc.counts, enc.hierarchies, prob.cost, k,
                                  np.random.default_rng(seed), fast=False)
        assert np.array_equal(out, plain)
        check_output(enc, out, k)
        assert metrics.distortion(enc.codes, out, prob.cost) == pytest.approx(info["distance_sum"], abs=1e-9)
        replay_check(enc, prob.cost, k, out, info)


def test_priorities_steer_generalisation():
    # Table 2a of seed 004 (racing attributes): with Gender free (priority 0)
    # every merge generalises Gender, never Marriage
    df = pd.DataFrame({"Gender": ["male", "male", "female", "female"] * 2,
                       "Marriage": ["married", "unmarried", "married", "unmarried",
                                    "divorced", "widowed", "divorced", "widowed"]})
    hs = {"Gender": H.suppression("Gender", ["male", "female"]),
          "Marriage": H.suppression("Marriage", ["married", "unmarried", "divorced", "widowed"])}
    enc = table.encode(df, ["Gender", "Marriage"], hs)
    for seed in range(10):
        prob = Problem(enc, [Requirement(("Gender", "Marriage"), 2)],
                       metrics.CostModel.build(enc.hierarchies, priorities={"Gender": 0, "Marriage": 1}), seed=seed)
        sol = KACA1().solve(prob)
        assert (sol.codes[:, 0] == 0).all() and np.array_equal(sol.codes[:, 1], enc.codes[:, 1])
        assert sol.details.distance_sum == 0


def test_unbalanced_and_large_hierarchies():
    # a flat hierarchy above DENSE_LCA_MAX_NODES (no dense LCA table) and an
    # unbalanced one (depth read as level)
    rng = np.random.default_rng(5)
    big = H.suppression("big", [f"v{i:04d}" for i in range(2100)])
    unb = H.from_paths("unb", [["a", "A", "*"], ["b", "A", "*"], ["c", "*"], ["d", "D", "*"], ["e", "*"]],
                       allow_unbalanced=True)
    n = 70
    codes = np.stack([big.leaves[rng.integers(0, 6, n)], unb.leaves[rng.integers(0, 5, n)]], axis=1)
    enc = table.EncodedTable(codes.astype(np.int32), [big, unb], ["big", "unb"], np.ones(n, np.int64))
    for k in (2, 3, 7):
        prob = make_problem(enc, k, k)
        out, _, info = kaca1_codes(enc.codes, enc.counts, enc.hierarchies, prob.cost, k,
                                   np.random.default_rng(k), record=True)
        plain, _, _ = kaca1_codes(enc.codes, enc.counts, enc.hierarchies, prob.cost, k,
                                  np.random.default_rng(k), fast=False)
        assert np.array_equal(out, plain)
        check_output(enc, out, k)
        replay_check(enc, prob.cost, k, out, info)
        sol = KACA2().solve(prob)
        assert (metrics.inconsistency(sol.codes, enc.hierarchies) < 0.1).all()


@settings(max_examples=25, deadline=None)
@given(st.booleans().flatmap(lambda with_counts: random_tables(counts=with_counts)))
def test_trie_growth_and_random_batches_keep_results(case):
    # start the trie with no spare node: the kernel must ask for room (status 2)
    import hieranon.algorithms.kaca as kaca_mod
    import hieranon.algorithms.kaca_core as core_mod

    enc, k, seed = case
    prob = make_problem(enc, k, seed)
    ref = kaca1_codes(enc.codes, enc.counts, enc.hierarchies, prob.cost, k, np.random.default_rng(seed), record=True)
    orig = core_mod._trie_capacity, kaca_mod._rand_batch
    # ... and draw one random number at a time: the interrupted iterations are
    # redone, so nothing depends on where the batches end
    core_mod._trie_capacity = lambda used, m: used
    kaca_mod._rand_batch = lambda n_small: 1
    try:
        got = kaca1_codes(enc.codes, enc.counts, enc.hierarchies, prob.cost, k, np.random.default_rng(seed),
                          record=True)
    finally:
        core_mod._trie_capacity, kaca_mod._rand_batch = orig
    assert np.array_equal(got[0], ref[0])
    assert np.array_equal(got[2]["merge_log"][:, :5], ref[2]["merge_log"][:, :5])


# ------------------------------------------------------------------ suppression
def outlier_problem(seed=0):
    df = pd.DataFrame({"Gender": ["male", "male", "male", "male", "female"],
                       "Age": ["middle", "middle", "young", "young", "old"],
                       "Postcode": ["4350", "4350", "4351", "4351", "4353"]})
    hs = {"Gender": H.suppression("Gender", ["male", "female"]),
          "Age": H.suppression("Age", ["young", "middle", "old"]),
          "Postcode": H.masking("Postcode", ["4350", "4351", "4352", "4353"])}
    return paper_problem(df, hs, 2, seed)


def test_suppression_threshold_suppresses_outlier():
    enc, prob = outlier_problem()
    # nearest class of the outlier {female, old, 4353}: {*, *, 435*} with either pair, 2.25 + 2 * 2.25
    sol = KACA1(suppression_threshold=2.0).solve(prob)
    # the outlier alone would print {*, *, *} once, a class below k: no class
    # has records to spare, so the smallest whole class is suppressed with it
    sup = sol.suppressed.tolist()
    assert sup in ([True, True, False, False, True], [False, False, True, True, True])
    assert (sol.codes[sol.suppressed] == 0).all()
    assert sol.details.suppressed_records == 3 and sol.details.suppressed_to_reach_k == 2
    assert sol.details.merges == 0
    assert np.array_equal(sol.codes[~sol.suppressed], enc.codes[~sol.suppressed])
    check_output(enc, sol.codes, 2)  # suppressed rows included
    # a threshold above the distance merges instead; without one nothing is suppressed
    for alg in (KACA1(suppression_threshold=6.75), KACA1()):
        sol = alg.solve(prob)
        assert not sol.suppressed.any() and sol.details.suppressed_records == 0
        assert sol.details.distance_sum == pytest.approx(6.75)
    # the plain path and KACA2 agree
    assert KACA1(fast=False, suppression_threshold=2.0).solve(prob).suppressed.tolist() == sup
    # KACA2's global step already hides this outlier (Age and Postcode go up
    # a level); a zero threshold suppresses every class that still needs a merge
    sol2 = KACA2(suppression_threshold=0.0).solve(prob)
    assert sol2.details.global_levels["Age"] == 1
    assert (sol2.codes[sol2.suppressed] == 0).all()
    assert sol2.details.suppressed_records == int(sol2.suppressed.sum())
    check_output(enc, sol2.codes, 2)


@settings(max_examples=30, deadline=None)
@given(random_tables(), st.sampled_from([0.0, 0.5, 1.5]))
def test_suppression_keeps_the_table_k_anonymous(case, thr):
    """Suppressed rows print {*, ..., *}: with the rest, every class, theirs
    included, holds >= k records."""
    enc, k, seed = case
    prob = make_problem(enc, k, seed)
    sol = KACA1(suppression_threshold=thr).solve(prob)
    plain = KACA1(suppression_threshold=thr, fast=False).solve(prob)
    assert np.array_equal(sol.codes, plain.codes) and np.array_equal(sol.suppressed, plain.suppressed)
    assert (sol.codes[sol.suppressed] == 0).all()
    assert sol.details.suppressed_records == int(enc.counts[sol.suppressed].sum())
    check_output(enc, sol.codes, k)
    assert sol.details.suppressed_records == 0 or sol.details.suppressed_records >= k


# ------------------------------------------------------------------ validation
def test_parameters_and_problem_are_validated(seed000_table1a, paper_hierarchies):
    with pytest.raises(ValueError):
        KACA1(suppression_threshold=-1)
    with pytest.raises(ValueError):
        KACA2(max_inconsistency=0)
    enc, prob = paper_problem(seed000_table1a, paper_hierarchies, 7, 0)
    with pytest.raises(ValueError, match="exceeds"):
        KACA1().solve(prob)
    multi = Problem(enc, [Requirement(("Gender", "Age"), 2), Requirement(("Postcode",), 2)], prob.cost)
    sol = KACA1().solve(multi)  # several requirements over different attribute sets
    check_output(enc, sol.codes, multi.requirements, sol.suppressed)
    # k = 1: nothing to do
    enc, prob = paper_problem(seed000_table1a, paper_hierarchies, 1, 0)
    sol = KACA1().solve(prob)
    assert np.array_equal(sol.codes, enc.codes) and sol.details.merges == 0


# ------------------------------------------------------------------ Adult
@pytest.mark.adult
@pytest.mark.parametrize("k", [3, 10])
def test_fast_equals_plain_on_adult_sample(adult_path, k):
    from hieranon.io.datasets import load_adult

    ad = load_adult(adult_path, download=False)
    qis = ad.qis(8)
    df = ad.frame.sample(3000, random_state=k)
    enc = table.encode(df, qis, ad.hierarchies_for(8))
    for scheme in ("uniform", "height"):
        cost = metrics.CostModel.build(enc.hierarchies, scheme)
        fast = kaca1_codes(enc.codes, enc.counts, enc.hierarchies, cost, k, np.random.default_rng(7), record=True)
        plain = kaca1_codes(enc.codes, enc.counts, enc.hierarchies, cost, k, np.random.default_rng(7),
                            fast=False, record=True)
        assert np.array_equal(fast[0], plain[0])
        assert np.array_equal(fast[2]["merge_log"][:, :5], plain[2]["merge_log"][:, :5])
        check_output(enc, fast[0], k)
        assert metrics.distortion(enc.codes, fast[0], cost) == pytest.approx(fast[2]["distance_sum"])


# ------------------------------------------------------------ privacy models
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(private_problems(max_rows=50), st.sampled_from([None, 0.3]))
def test_kaca1_output_satisfies_the_models(case, threshold):
    """KACA1 clusters for k, then the class-merging repair enforces the models
    (suppressed records one more class); the repair's steps are in the details."""
    from hieranon.evaluation.verify import verify_codes

    problem, _, _ = case
    sol = KACA1(suppression_threshold=threshold).solve(problem)
    assert verify_codes(problem.table, sol.codes, problem.requirements, sol.suppressed, privacy=problem.privacy).ok
    assert sol.details.privacy["privacy_classes_out"] <= sol.details.privacy["privacy_classes_in"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(private_problems(max_rows=50), st.sampled_from([0.05, 0.1, 0.3]))
def test_kaca2_keeps_max_inconsistency_with_the_models(case, bound):
    """The repair runs before KACA2's final level raises, which only unite
    classes: the output meets the models and stays below max_inconsistency."""
    from hieranon.evaluation.verify import verify_codes

    problem, _, _ = case
    t = problem.table
    sol = KACA2(max_inconsistency=bound).solve(problem)
    assert verify_codes(t, sol.codes, problem.requirements, sol.suppressed, privacy=problem.privacy).ok
    assert (metrics.inconsistency(sol.codes, t.hierarchies, t.counts) < bound + 1e-12).all()
    assert sol.details.privacy is not None


@pytest.mark.parametrize("method", [KACA1, KACA2])
def test_main_loop_returns_to_python_in_chunks_without_changing_the_output(monkeypatch, method):
    """KACA's kernel stops after a budget of iterations (so that Ctrl-C lands
    between calls) and resumes where it stopped: the same output either way."""
    from hieranon.algorithms import kaca

    rng = np.random.default_rng(5)
    hs = [H.intervals("a", range(64), [4, 16]), H.intervals("b", range(27), [3, 9])]
    df = pd.DataFrame({"a": rng.integers(0, 64, 300), "b": rng.integers(0, 27, 300)})
    enc = table.encode(df, ["a", "b"], hs)
    whole = method().solve(make_problem(enc, 4, 3)).codes
    calls = Counter()
    monkeypatch.setattr(kaca, "chunk_done", lambda stage: calls.update([stage]))
    monkeypatch.setattr(kaca, "CHUNK_ITERATIONS", 2)
    chunked = method().solve(make_problem(enc, 4, 3)).codes
    assert calls["kaca"] > 10
    np.testing.assert_array_equal(chunked, whole)
