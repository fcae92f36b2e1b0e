"""The privacy repair of local-recoding outputs
(hieranon.algorithms.privacy_merge): random tables (hypothesis) whose repaired
output satisfies every model by the verifier and by pycanon, k kept,
feasibility errors before any work, suppressed records as one class."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hieranon.algorithms.kaca import KACA1
from hieranon.algorithms.privacy_merge import _best, _do, _State, enforce, enforce_checked, enforce_info
from hieranon.core import table as T
from hieranon.core.requirements import Requirement
from hieranon.evaluation import metrics
from hieranon.evaluation.verify import verify_codes
from hieranon.privacy import DistinctLDiversity, EntropyLDiversity, PrivacyError, RecursiveCLDiversity, TCloseness
from oracles import pycanon_entropy_l, pycanon_l, pycanon_t
from random_tables import balanced, make_problem, one_column_problem, random_tables


def sensitive_frame(data, n: int, n_values: int, numeric: bool) -> pd.DataFrame:
    idx = data.draw(st.lists(st.integers(0, n_values - 1), min_size=n, max_size=n))
    return pd.DataFrame({"s": idx if numeric else [f"v{i}" for i in idx]})


def draw_model(data, numeric: bool):
    kind = data.draw(st.sampled_from(["distinct", "entropy", "recursive", "t"]))
    if kind == "distinct":
        return DistinctLDiversity("s", data.draw(st.integers(1, 3)))
    if kind == "entropy":
        return EntropyLDiversity("s", data.draw(st.sampled_from([1.5, 2, 2.5])))
    if kind == "recursive":
        return RecursiveCLDiversity("s", data.draw(st.sampled_from([1, 2, 3.5])), data.draw(st.integers(2, 3)))
    return TCloseness("s", data.draw(st.sampled_from([0.1, 0.2, 0.35])), "ordered" if numeric else "equal")


def released(problem, codes, sens: pd.DataFrame) -> pd.DataFrame:
    t = problem.table
    out = T.decode(codes, t.hierarchies, t.qi_names)
    out["s"] = sens["s"].to_numpy()
    return out


def private_problem(case, data):
    """A random table's problem with one or two drawn models of a drawn
    sensitive column ``s``: (encoded table, problem, sensitive frame)."""
    enc, k, seed = case
    problem = make_problem(enc, k, seed)
    numeric = data.draw(st.booleans())
    sens = sensitive_frame(data, enc.n_rows, data.draw(st.integers(1, 4)), numeric)
    models = [draw_model(data, numeric) for _ in range(data.draw(st.integers(1, 2)))]
    problem.privacy = [m.bind(sens, enc.counts) for m in models]
    return enc, problem, sens


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=60), st.data())
def test_repair_satisfies_every_model(case, data):
    enc, problem, sens = private_problem(case, data)
    # the k-anonymous start, without the models (KACA1 itself would apply the repair, or refuse)
    base = KACA1(suppression_threshold=data.draw(st.sampled_from([None, 0.3]))).solve(replace(problem, privacy=[]))
    feasible = all(b.ok_hist(b.table_hist())[0] for b in problem.privacy)
    if not feasible:
        with pytest.raises(PrivacyError):
            enforce(problem, base.codes, base.suppressed)
        return
    moves = data.draw(st.booleans())
    codes, sup, info = enforce_info(problem, base.codes, base.suppressed, moves=moves)
    rep = verify_codes(enc, codes, problem.requirements, sup, privacy=problem.privacy)
    assert rep.ok, rep.summary()
    assert min(rep.achieved_k.values()) >= problem.k
    # nothing changes when every class already satisfies the models
    before = verify_codes(enc, base.codes, problem.requirements, base.suppressed, privacy=problem.privacy)
    if before.ok:
        assert np.array_equal(codes, base.codes) and info["privacy_merges"] + info["privacy_moves"] == 0
    # pycanon, where it measures the same thing (its classes: the released QI columns)
    out = released(problem, codes, sens)
    qi = list(enc.qi_names)
    for m in (b.model for b in problem.privacy):
        if isinstance(m, DistinctLDiversity):
            assert pycanon_l(out, qi, ["s"]) >= m.l
        elif isinstance(m, EntropyLDiversity):
            # pycanon 1.3.6 truncates exp(entropy): exp(log 2) = 1.999... reads as 1
            assert pycanon_entropy_l(out, qi, ["s"]) >= int(m.l) - 1
        elif isinstance(m, TCloseness) and len(set(sens["s"])) > 1:
            # pycanon measures against the table it is given: the released
            # table's sensitive column is the original's, so the reference is the same
            assert pycanon_t(out, qi, ["s"]) <= m.t + 1e-9
        # recursive (c, l): pycanon 1.3.6 sorts the counts increasingly (r_1 the
        # rarest), not as Machanavajjhala et al. 2007 define it -- not compared


def adult_like_problem():
    """Two QIs, k = 2: classes {x1: a, a} (violating 2-diversity) and larger
    neighbours holding 'b'."""
    hx = balanced("x", [2, 2])
    hy = balanced("y", [2])
    leaves_x, leaves_y = hx.leaves, hy.leaves
    codes = np.array([[leaves_x[0], leaves_y[0]]] * 2 + [[leaves_x[1], leaves_y[0]]] * 3
                     + [[leaves_x[2], leaves_y[1]]] * 2, dtype=np.int32)
    enc = T.EncodedTable(codes, [hx, hy], ["x", "y"], np.ones(len(codes), dtype=np.int64))
    problem = make_problem(enc, 2, 0)
    sens = pd.DataFrame({"s": ["a", "a", "b", "b", "a", "a", "b"]})
    return problem, sens


def test_move_is_preferred_to_merge_when_cheaper():
    problem, sens = adult_like_problem()
    problem.privacy = [DistinctLDiversity("s", 2).bind(sens, problem.table.counts)]
    start = problem.table.codes.copy()
    codes, sup, info = enforce_info(problem, start, np.zeros(len(start), dtype=bool))
    assert verify_codes(problem.table, codes, problem.requirements, sup, privacy=problem.privacy).ok
    assert info["privacy_moves"] == 1 and info["privacy_merges"] == 0
    merged, sup2, info2 = enforce_info(problem, start, np.zeros(len(start), dtype=bool), moves=False)
    assert info2["privacy_merges"] >= 1
    d_move = metrics.distortion(problem.table.codes, codes, problem.cost)
    d_merge = metrics.distortion(problem.table.codes, merged, problem.cost)
    assert d_move < d_merge


def test_suppressed_records_are_one_more_class():
    """Three suppressed records all 'a' violate 2-diversity even though every
    other class is fine; the repair fixes that class too."""
    problem, sens = adult_like_problem()
    codes = problem.table.codes.copy()
    hx = problem.table.hierarchies[0]
    codes[2:5, 0] = hx.parent[codes[2:5, 0]]  # make the middle class {b, b, a} as is
    codes[[0, 1, 5], :] = 0  # suppress the two 'a' rows of class 0 and one 'a' of the last class
    sup = np.zeros(len(codes), dtype=bool)
    sup[[0, 1, 5]] = True
    problem.privacy = [DistinctLDiversity("s", 2).bind(sens, problem.table.counts)]
    rep = verify_codes(problem.table, codes, problem.requirements, sup, privacy=problem.privacy)
    assert not rep.ok and rep.by_kind("l-diversity")
    out, sup_out, info = enforce_info(problem, codes, sup)
    rep = verify_codes(problem.table, out, problem.requirements, sup_out, privacy=problem.privacy)
    assert rep.ok, rep.summary()
    assert info["privacy_violating_in"] >= 1


def test_class_merged_up_to_the_root_joins_the_suppressed_records():
    """The suppressed class {a, a, a} (rows 0, 1, 5) is repaired by merging
    row 6's class into it: row 6 then prints all '*' and is one class with
    the suppressed records, for the repair as for the verifier -- so it is
    reported suppressed too, and the final check from scratch agrees."""
    problem, sens = adult_like_problem()
    codes = problem.table.codes.copy()
    hx = problem.table.hierarchies[0]
    codes[2:5, 0] = hx.parent[codes[2:5, 0]]
    codes[[0, 1, 5], :] = 0
    sup = np.zeros(len(codes), dtype=bool)
    sup[[0, 1, 5]] = True
    problem.privacy = [DistinctLDiversity("s", 2).bind(sens, problem.table.counts)]
    out, sup_out, info = enforce_checked(problem, codes, sup)
    assert (out[6] == 0).all()  # row 6's class was merged up to the root
    assert np.array_equal(sup_out, (out == 0).all(axis=1))
    rep = verify_codes(problem.table, out, problem.requirements, sup_out, privacy=problem.privacy)
    assert rep.ok, rep.summary()
    assert rep.n_suppressed == int(problem.table.counts[sup_out].sum()) == 4
    assert "privacy_second_pass" not in info


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=60), st.data())
def test_the_queue_names_the_smallest_violating_class_at_every_step(case, data):
    """The repair's queue of violating classes gives, before every step, the
    class a scan of every class would: the alive class violating a model
    with the fewest records, the lowest id among ties."""
    enc, problem, sens = private_problem(case, data)
    assume(all(b.ok_hist(b.table_hist())[0] for b in problem.privacy))
    base = KACA1().solve(replace(problem, privacy=[]))
    s = _State(problem, base.codes)
    for _ in range(4 * enc.n_rows):
        violating = np.flatnonzero(s.alive & ~s.ok)
        expected = min(violating, key=lambda c: (s.size[c], c)) if len(violating) else -1
        assert s.next_violating() == expected
        if expected < 0:
            break
        _do(s, _best(s, int(expected))[1])
    assert s.next_violating() == -1


def test_a_class_still_violating_after_its_merge_is_taken_next():
    """Distinct 3-diversity; classes A = x0.0 'aa', B = x0.1 'bb', C = x1.0
    'ccccc'. No step repairs A, so it merges with B, its cheapest partner:
    the class AB of 4 records still violates, and being smaller than C it
    is the next class the queue names (a queue that kept only the classes
    it began with would name C)."""
    hx = balanced("x", [2, 2])
    x00, x01, x10 = (hx.node_of_label(v) for v in ("x0.0", "x0.1", "x1.0"))
    codes = [x00, x00, x01, x01] + [x10] * 5
    enc, problem = one_column_problem(hx, codes, "aabbccccc", DistinctLDiversity("s", 3))
    s = _State(problem, np.asarray(codes, dtype=np.int32).reshape(-1, 1))
    first = s.next_violating()
    assert s.size[first] == 2 and first != s.rc[4]
    _do(s, _best(s, first)[1])
    merged = int(s.rc[0])
    assert s.rc[2] == merged and s.size[merged] == 4 and not s.ok[merged]
    assert s.next_violating() == merged
    _do(s, _best(s, merged)[1])
    assert s.next_violating() == -1


def test_dissolved_class_leaves_no_row_behind():
    """Dissolving C (tuple x0: rows x0.0 'a', x0.1 'a') into E (tuple x0.0:
    'b', 'c'): E takes lca(x0.0, x0.1) = x0, C's own tuple. E must not join
    the class being dissolved: every row ends in a live class, whose
    histogram and size match its rows."""
    hx = balanced("x", [2, 2])
    x0, x00, x01 = (hx.node_of_label(v) for v in ("x0", "x0.0", "x0.1"))
    enc, problem = one_column_problem(hx, [x00, x01, x00, x00], "aabc", DistinctLDiversity("s", 2))
    s = _State(problem, np.array([[x0], [x0], [x00], [x00]], dtype=np.int32))
    c, e = int(s.rc[0]), int(s.rc[2])
    assert not s.ok[c] and s.ok[e]
    s.dissolve(c, [(1, e), (0, e)])  # row 1 first: E becomes x0
    assert s.alive[s.rc].all()
    live = np.flatnonzero(s.alive)
    assert len(live) == 1 and s.T[live[0], 0] == x0 and s.size[live[0]] == 4 and s.ok[live[0]]
    assert np.array_equal(s.hist[0][live], problem.privacy[0].histogram(np.zeros(4, dtype=np.int64), 1))


def test_infeasible_model_fails_before_any_work():
    problem, sens = adult_like_problem()
    problem.privacy = [DistinctLDiversity("s", 3).bind(sens, problem.table.counts)]
    with pytest.raises(PrivacyError, match="distinct 3-diversity of 's'"):
        enforce(problem, problem.table.codes, np.zeros(problem.table.n_rows, dtype=bool))


def test_no_models_no_change():
    problem, _ = adult_like_problem()
    codes, sup = enforce(problem, problem.table.codes, np.zeros(problem.table.n_rows, dtype=bool))
    assert np.array_equal(codes, problem.table.codes)


def test_several_requirements_are_refused():
    problem, sens = adult_like_problem()
    problem.requirements = [Requirement(("x",), 2), Requirement(("y",), 2)]
    problem.privacy = [DistinctLDiversity("s", 2).bind(sens, problem.table.counts)]
    with pytest.raises(ValueError, match="one k over all quasi-identifiers"):
        enforce(problem, problem.table.codes, np.zeros(problem.table.n_rows, dtype=bool))


@pytest.mark.adult
@pytest.mark.slow
def test_adult_kacaplus_repair(adult_path):
    """Adult, 8 QIs, k = 10, kaca+ then the repair: every model verified."""
    import hieranon
    from hieranon.io.datasets import load_adult

    ad = load_adult(adult_path, download=False)
    df, qis, hs = ad.frame, ad.qis(8), ad.hierarchies_for(8)
    res = hieranon.anonymize(df, qis, hs, k=10, method="kaca+")
    from hieranon.job.pipeline import prepare

    problem = prepare(df, qis, hs, 10)
    for model in (DistinctLDiversity("salary-class", 2), TCloseness("salary-class", 0.2, "equal")):
        problem.privacy = [model.bind(df, problem.table.counts)]
        codes, sup, info = enforce_info(problem, res.codes, res.suppressed)
        rep = verify_codes(problem.table, codes, problem.requirements, sup, privacy=problem.privacy)
        assert rep.ok, rep.summary()
        assert info["privacy_violating_in"] > 0


def test_swap_when_no_class_has_a_record_to_spare():
    """k = 2: class A (tuple x0, originals x0.0 and x0.1, values a, a) violates
    2-diversity; class B (tuple x0.1, values b, c) has no record to spare.
    Trading A's x0.1 row for one of B's costs nothing; a merge would
    generalise B."""
    hx = balanced("x", [2, 2])
    x0, x00, x01 = (hx.node_of_label(v) for v in ("x0", "x0.0", "x0.1"))
    enc, problem = one_column_problem(hx, [x00, x01, x01, x01], "aabc", DistinctLDiversity("s", 2))
    start = np.array([[x0], [x0], [x01], [x01]], dtype=np.int32)
    codes, sup, info = enforce_info(problem, start, np.zeros(4, dtype=bool))
    assert verify_codes(enc, codes, problem.requirements, sup, privacy=problem.privacy).ok
    assert (info["privacy_swaps"], info["privacy_moves"], info["privacy_merges"]) == (1, 0, 0)
    assert metrics.distortion(enc.codes, codes, problem.cost) == metrics.distortion(enc.codes, start, problem.cost)


# ------------------------------------------------------------ Mondrian
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=60), st.data())
def test_mondrian_cuts_keep_every_model(case, data):
    from hieranon.algorithms.mondrian import Mondrian

    enc, problem, sens = private_problem(case, data)
    algo = Mondrian(strict=data.draw(st.booleans()))
    if not all(b.ok_hist(b.table_hist())[0] for b in problem.privacy):
        with pytest.raises(PrivacyError):
            algo.solve(problem)
        return
    sol = algo.solve(problem)
    rep = verify_codes(enc, sol.codes, problem.requirements, sol.suppressed, privacy=problem.privacy)
    assert rep.ok, rep.summary()
    # a model every class satisfies changes nothing: the same partitions as without models
    problem.privacy = [DistinctLDiversity("s", 1).bind(sens, enc.counts)]
    with_trivial = algo.solve(problem)
    problem.privacy = []
    plain = algo.solve(problem)
    assert np.array_equal(with_trivial.codes, plain.codes)
    assert np.array_equal(with_trivial.info["partition"], plain.info["partition"])


def test_t_closeness_trades_records_rather_than_merging():
    """t = 0.2 (equal distance), the table half 'a', half 'b'. C (tuple x0)
    holds 4 'a' (EMD 0.5); E (tuple x0.0) 4 'a' and 6 'b'. No single step
    repairs C cheaply: merging C and E generalises E's 10 records to x0. Two
    trades of one of C's x0.0 'a' records for one of E's 'b' records cost
    nothing (each record stays under its class's tuple) and repair C: the
    first brings C only to EMD 0.25, so it is priced as one of the two such
    steps still needed."""
    hx = balanced("x", [2, 2])
    x0, x00, x01, x1, x10, x11 = (hx.node_of_label(v) for v in ("x0", "x0.0", "x0.1", "x1", "x1.0", "x1.1"))
    orig = np.array([x00, x01, x00, x01] + [x00] * 10 + [x10, x11, x10, x11, x10, x11], dtype=np.int32)[:, None]
    start = np.array([x0] * 4 + [x00] * 10 + [x1] * 6, dtype=np.int32)[:, None]
    sens = pd.DataFrame({"s": ["a"] * 4 + ["a"] * 4 + ["b"] * 6 + ["a", "a", "b", "b", "b", "b"]})
    enc = T.EncodedTable(orig, [hx], ["x"], np.ones(len(orig), dtype=np.int64))
    problem = make_problem(enc, 2, 0)
    problem.privacy = [TCloseness("s", 0.2, "equal").bind(sens, enc.counts)]
    codes, sup, info = enforce_info(problem, start, np.zeros(len(orig), dtype=bool))
    assert verify_codes(enc, codes, problem.requirements, sup, privacy=problem.privacy).ok
    assert (info["privacy_swaps"], info["privacy_merges"]) == (2, 0)
    assert metrics.distortion(orig, codes, problem.cost) == metrics.distortion(orig, start, problem.cost)


# ------------------------------------------------------------ smallest class, bounded steps
@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=4), st.data())
def test_no_class_below_the_smallest_class_size_satisfies_a_model(value_counts, data):
    """min_class_size is a true floor: no histogram of fewer records meets the
    model (every composition enumerated), and it is 1 when nothing forces more."""
    import itertools

    sens = pd.DataFrame({"s": [f"v{i}" for i, c in enumerate(value_counts) for _ in range(c)]})
    model = draw_model(data, numeric=False)
    b = model.bind(sens)
    m = b.n_values
    floor = b.min_class_size()
    assert floor >= 1
    for n in range(1, floor):
        hists = [h for h in itertools.product(range(n + 1), repeat=m) if sum(h) == n]
        assert not b.ok_hist(np.array(hists, dtype=np.int64)).any(), (model, n)


def test_smallest_class_sizes_of_each_model():
    sens = pd.DataFrame({"s": ["a"] * 5 + ["b"] * 3 + ["c"] * 2})  # q = .5, .3, .2
    assert DistinctLDiversity("s", 3).bind(sens).min_class_size() == 3
    assert EntropyLDiversity("s", 1.5).bind(sens).min_class_size() == 2
    assert RecursiveCLDiversity("s", 3, 2).bind(sens).min_class_size() == 2
    assert TCloseness("s", 0.3, "equal").bind(sens).min_class_size() == 2  # a + b reach 0.8 >= 0.7
    assert TCloseness("s", 0.1, "equal").bind(sens).min_class_size() == 3
    assert TCloseness("s", 0.5, "equal").bind(sens).min_class_size() == 1
    assert TCloseness("s", 0.1, "ordered").bind(pd.DataFrame({"s": [1, 2, 3, 4]})).min_class_size() == 1


def test_methods_cluster_at_the_smallest_class_size():
    """distinct 4-diversity asked with k = 2: no class of fewer than 4
    records can hold 4 values, so the method clusters at k = 4 from the start."""
    from hieranon.algorithms.base import with_smallest_class
    from hieranon.algorithms.kacaplus import KACAPlus

    rng = np.random.default_rng(5)
    hs = [balanced("a", [4, 4]), balanced("b", [3, 3])]
    codes = np.stack([h.leaves[rng.integers(0, len(h.leaves), 200)] for h in hs], axis=1).astype(np.int32)
    enc = T.EncodedTable(codes, hs, [h.name for h in hs], np.ones(200, np.int64))
    sens = pd.DataFrame({"s": rng.integers(0, 6, 200)})
    problem = make_problem(enc, 2, 0)
    problem.privacy = [DistinctLDiversity("s", 4).bind(sens)]
    assert with_smallest_class(problem).k == 4 and problem.k == 2
    sol = KACAPlus().solve(problem)
    rep = verify_codes(enc, sol.codes, problem.requirements, sol.suppressed, privacy=problem.privacy)
    assert rep.ok and min(rep.achieved_k.values()) >= 4
    several = replace(problem, requirements=[Requirement(("a",), 2), Requirement(("b",), 2)])
    assert with_smallest_class(several) is several


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=60), st.data())
def test_repair_with_a_tiny_candidate_budget_still_satisfies_every_model(monkeypatch_budget, case, data):
    """Each step judges a bounded number of moves and swaps (the nearest
    classes' rows, an even sample of a large class): with a budget of a few
    candidates the repair still ends with every model met."""
    enc, problem, sens = private_problem(case, data)
    if not all(b.ok_hist(b.table_hist())[0] for b in problem.privacy):
        return
    base = KACA1().solve(replace(problem, privacy=[]))
    codes, sup, _ = enforce_info(problem, base.codes, base.suppressed, moves=True)
    rep = verify_codes(enc, codes, problem.requirements, sup, privacy=problem.privacy)
    assert rep.ok, rep.summary()


@pytest.fixture(scope="module")
def monkeypatch_budget():
    from hieranon.algorithms import privacy_merge

    saved = privacy_merge.MAX_CANDIDATE_CELLS, privacy_merge.MIN_CANDIDATES, privacy_merge.MIN_PARTNERS
    privacy_merge.MAX_CANDIDATE_CELLS, privacy_merge.MIN_CANDIDATES, privacy_merge.MIN_PARTNERS = 6, 3, 2
    yield
    privacy_merge.MAX_CANDIDATE_CELLS, privacy_merge.MIN_CANDIDATES, privacy_merge.MIN_PARTNERS = saved


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=60), st.data())
def test_merge_options_price_every_merge_as_the_tuples_lca(case, data):
    """The merge costs (a kernel) are those of the closest common
    generalisation of both tuples, taken attribute by attribute in Python."""
    enc, problem, _ = private_problem(case, data)
    codes = KACA1().solve(replace(problem, privacy=[])).codes
    s = _State(problem, codes)
    c = data.draw(st.integers(0, len(s.size) - 1))
    cand, gL, inc, *_ = s.partners(c, 0)
    assert cand.tolist() == [e for e in range(len(s.size)) if e != c]
    L = s.lca_rows(s.T[c], s.T[cand])
    assert np.array_equal(gL, s.tuple_cost(L))
    assert np.array_equal(inc, s.size[c] * (gL - s.gT[c]) + s.size[cand] * (gL - s.gT[cand]))
    for i, e in enumerate(cand):
        assert np.array_equal(s.merged_tuple(c, int(e)), L[i])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=60), st.data(), st.integers(1, 4))
def test_best_merge_is_the_cheapest_repairing_merge_of_all(case, data, batch):
    """The best merge, found by checking the cheapest partners first, is
    the one a check of every partner finds: least cost per violation
    repaired (half for a violating partner both repair), ties by position."""
    from hieranon.algorithms import privacy_merge

    enc, problem, _ = private_problem(case, data)
    codes = KACA1().solve(replace(problem, privacy=[])).codes
    s = _State(problem, codes)
    c = data.draw(st.integers(0, len(s.size) - 1))
    cand, _, inc, *_ = s.partners(c, 0)
    fixes = s.ok_all([h[c] + h[cand] for h in s.hist])
    per_fix = inc / np.where(fixes & ~s.ok[cand], 2.0, 1.0)
    want = int(np.flatnonzero(fixes)[np.argmin(per_fix[fixes])]) if fixes.any() else -1
    saved = privacy_merge.MERGE_BATCH
    privacy_merge.MERGE_BATCH = batch  # small batches: the fall-back to every partner is taken too
    try:
        _, _, _, per_fix_k, head, *_ = s.partners(c, 0)
        got, price = s.best_merge(c, cand, per_fix_k, head)
    finally:
        privacy_merge.MERGE_BATCH = saved
    assert len(head) == min(batch, len(cand))
    assert got == want
    assert price == (per_fix[want] if want >= 0 else np.inf)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(random_tables(max_rows=60), st.data(), st.sampled_from([0, 1, 2, 5, 12]))
def test_partners_are_the_heads_of_stable_sorts(monkeypatch, case, data, n_near):
    """The one-pass selections of a repair step are those of sorting every
    partner (ties by position): merges by price if they repair, movers and
    swappers among the classes meeting every model, dissolution targets by
    the distance per record -- whether the partners are read in one run or
    in several (as threads read them) whose selections are merged."""
    enc, problem, _ = private_problem(case, data)
    codes = KACA1().solve(replace(problem, privacy=[])).codes
    s = _State(problem, codes)
    s.ok[data.draw(st.lists(st.integers(0, len(s.size) - 1), max_size=5))] ^= True  # both kinds of partner
    c = data.draw(st.integers(0, len(s.size) - 1))
    from hieranon.algorithms import privacy_merge
    runs = data.draw(st.sampled_from([1, 2, 3, 7]))
    with monkeypatch.context() as patch:  # the partners in one run, or in several runs merged (threads)
        patch.setattr(privacy_merge, "PARALLEL_PARTNERS", 0)
        patch.setattr(privacy_merge, "get_num_threads", lambda: runs)
        cand, gL, inc, per_fix, head, move, swap, dis = s.partners(c, n_near)

    def head_of(key, n, mask=None):
        idx = np.arange(len(key)) if mask is None else np.flatnonzero(mask)
        return idx[np.argsort(key[idx], kind="stable")][:n].tolist()

    from hieranon.algorithms.privacy_merge import MERGE_BATCH
    assert np.array_equal(per_fix, inc / np.where(s.ok[cand], 1.0, 2.0))
    assert head.tolist() == head_of(per_fix, MERGE_BATCH)
    if n_near == 0:
        assert len(move) == len(swap) == len(dis) == 0
        return
    assert move.tolist() == head_of(inc, n_near, s.ok[cand] & (s.size[cand] > s.k))
    assert swap.tolist() == head_of(inc, max(1, n_near // 3), s.ok[cand])
    assert dis.tolist() == head_of(2 * gL - s.gT[c] - s.gT[cand], 2 * n_near)
