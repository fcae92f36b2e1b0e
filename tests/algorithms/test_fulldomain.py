"""Full-domain baselines: FullDomain (optimal lattice node), AllMin, Datafly.

Every optimum is checked against an independent brute force over the whole
lattice (generalise, group, measure), written here without the library's
lattice code.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hieranon.algorithms.base import Problem
from hieranon.algorithms.contract import check_result, check_solution
from hieranon.algorithms.fulldomain import DEFAULT_TIME_LIMIT, AllMin, Datafly, FullDomain, FullDomainTimeout
from hieranon.algorithms.lattice import apply_node
from hieranon.core.requirements import Requirement
from hieranon.core.table import encode, group
from hieranon.evaluation import metrics as M
from hieranon.hierarchies import readers as H
from random_tables import private_problems

ADULT_QI = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]


def make_problem(df, qis, hierarchies, k=None, requirements=(), scheme="uniform", counts=None):
    table = encode(df, qis, hierarchies, counts=counts)
    reqs = [Requirement(tuple(qis), k)] if k is not None else []
    reqs += [Requirement(tuple(a), kk) for a, kk in requirements]
    return Problem(table, reqs, M.CostModel.build(table.hierarchies, scheme))


# ----------------------------------------------------------- brute force
def brute_force(problem: Problem, limit: float = 0.0, objective: str = "distortion"):
    """Every lattice node: (node, feasible, value) with the value computed
    from the generalised table by the metrics module."""
    t = problem.table
    n = t.n_records
    max_sup = int(np.floor(limit * n + 1e-9))
    out = []
    for node in itertools.product(*[range(h.height) for h in t.hierarchies]):
        gen = np.stack([h.ancestors[t.codes[:, j], np.maximum(h.depth[t.codes[:, j]] - s, 0)]
                        for j, (h, s) in enumerate(zip(t.hierarchies, node))], axis=1)
        sup = np.zeros(t.n_rows, bool)
        kmax = max((r.k for r in problem.requirements), default=1)
        while True:
            sup = _violators(problem, gen, sup)
            n_sup = int(t.counts[sup].sum())
            if max_sup == 0 or not 0 < n_sup < kmax or sup.all():
                break
            sup = _top_up(problem, gen, sup, kmax - n_sup, objective)
        final = gen.copy()
        final[sup] = 0
        if objective == "distortion":
            value = M.distortion(t.codes, final, problem.cost, t.counts)
        elif objective == "prec":
            value = 1 - M.precision(t.codes, final, t.hierarchies, t.counts)
        else:
            ec = group(gen[~sup], t.counts[~sup])
            value = M.discernibility(ec.sizes, n_sup, n)
        out.append((list(node), n_sup <= max_sup, value))
    return out


def _violators(problem, gen, sup):
    """``sup`` and the rows of every group violating a requirement, until none does."""
    t = problem.table
    sup = sup.copy()
    while True:
        viol = np.zeros(t.n_rows, bool)
        for r in problem.requirements:
            cols = r.indices(t.qi_names)
            _, inv = np.unique(gen[:, cols], axis=0, return_inverse=True)
            inv = inv.ravel()
            sizes = np.bincount(inv, weights=t.counts * ~sup)
            viol |= ~sup & (sizes[inv] < r.k)
        if not viol.any():
            return sup
        sup |= viol


def _top_up(problem, gen, sup, need, objective):
    """``sup`` and the smallest other classes (then the cheapest to suppress
    under ``objective``, then by generalised tuple) until ``need`` more records."""
    t = problem.table
    rest = np.flatnonzero(~sup)
    keys, inv = np.unique(gen[rest], axis=0, return_inverse=True)
    inv = inv.ravel()
    sizes = np.bincount(inv, weights=t.counts[rest]).astype(np.int64)
    if objective == "distortion":
        per = sum(problem.cost.int_costs[j][0] - problem.cost.int_costs[j][keys[:, j]] for j in range(gen.shape[1]))
    elif objective == "prec":
        per = sum((h.level_from_leaf[0] - h.level_from_leaf[keys[:, j]]) / max(h.height - 1, 1)
                  for j, h in enumerate(t.hierarchies))
    else:
        per = np.zeros(len(keys))
    extra = per * sizes
    order = sorted(range(len(keys)), key=lambda c: (sizes[c], extra[c], tuple(keys[c])))
    out = sup.copy()
    taken = 0
    for c in order:
        if taken >= need:
            break
        out[rest[inv == c]] = True
        taken += sizes[c]
    return out


def brute_best(rows):
    feas = [(v, sum(nd), nd) for nd, f, v in rows if f]
    best = min(feas, key=lambda x: x[0])[0]
    tied = sorted([x for x in feas if abs(x[0] - best) <= 1e-9 * max(1.0, abs(best))], key=lambda x: (x[1], x[2]))
    return best, [x[2] for x in tied]


def assert_satisfies(problem, sol):
    """The output contract, suppressed records exempt from k (see test_contract
    for the '*' class they leave below k)."""
    check_solution(problem, sol, exempt_suppressed=True)


# ------------------------------------------------ seed 000 worked example
def test_seed000_table1c_least_distortion_node(seed000_table1a, paper_hierarchies):
    """SPEC 5 item 1: the least-distortion full-domain node costs 7.5 (Table 1c:
    Gender suppressed, Postcode 435*), tied with suppressing Age instead."""
    p = make_problem(seed000_table1a, ["Gender", "Age", "Postcode"], paper_hierarchies, k=2)
    sol = FullDomain().solve(p)
    info = sol.info
    assert info["cost"] == pytest.approx(7.5)
    assert sorted(info["optimal_nodes"]) == [[0, 1, 1], [1, 0, 1]]
    # both are minimal feasible nodes, and nothing cheaper is feasible
    assert [0, 1, 1] in info["minimal_nodes"] and [1, 0, 1] in info["minimal_nodes"]
    assert info["minimal_nodes_complete"]
    # ties go to the lowest height, then the lexicographically smallest node
    assert info["node"] == [0, 1, 1]
    assert M.distortion(p.table.codes, sol.codes, p.cost) == pytest.approx(7.5)
    assert not sol.suppressed.any()
    assert_satisfies(p, sol)
    # the Table 1c node itself (Gender -> *, Postcode -> 435*)
    table1c = apply_node(p.table, [1, 0, 1])
    labels = [[p.table.hierarchies[j].labels[c] for j, c in enumerate(row)] for row in table1c]
    assert labels[0] == ["*", "middle", "435*"] and labels[3] == ["*", "young", "435*"]
    assert M.distortion(p.table.codes, table1c, p.cost) == pytest.approx(7.5)
    best, tied = brute_best(brute_force(p))
    assert best == pytest.approx(7.5) and sorted(tied) == [[0, 1, 1], [1, 0, 1]]


def test_seed000_other_objectives(seed000_table1a, paper_hierarchies):
    p = make_problem(seed000_table1a, ["Gender", "Age", "Postcode"], paper_hierarchies, k=2)
    for obj in ("prec", "dm"):
        sol = FullDomain(objective=obj).solve(p)
        best, tied = brute_best(brute_force(p, objective=obj))
        assert sol.details.node == tied[0]
        assert sorted(sol.details.optimal_nodes) == sorted(tied)
        if obj == "prec":  # cost = summed cell loss; brute force gives 1 - Prec
            assert sol.details.cost == pytest.approx(best * p.table.n_records * 3)
            assert sol.details.precision == pytest.approx(1 - best)
        else:
            assert sol.details.cost == best


# ------------------------------------------------ seed 003 worked example
@pytest.fixture
def arca_hewett_table():
    """seed 003, Figure 4 / 6(a): distinct rows with their record counts."""
    df = pd.DataFrame({
        "edu": ["10th", "10th", "9th", "9th", "9th", "12th", "12th"],
        "sex": ["M", "M", "M", "F", "F", "F", "F"],
        "hrs": [40, 30, 30, 30, 40, 30, 40],
        "count": [20, 4, 2, 4, 6, 2, 2],
    })
    hs = {
        "edu": H.from_paths("edu", [[e, "High", "Secondary", "Any"] for e in ["9th", "10th", "11th", "12th"]]),
        "sex": H.from_paths("sex", [["M", "Any"], ["F", "Any"]]),
        "hrs": H.from_paths("hrs", [["30", "[1,40)", "Any"], ["40", "[40,99)", "Any"]]),
    }
    return df, hs


def test_allmin_arca_hewett_returns_100(arca_hewett_table):
    """SPEC 5 item 7: AllMin returns lattice node [1, 0, 0] (education -> High)."""
    df, hs = arca_hewett_table
    p = make_problem(df, ["edu", "sex", "hrs"], hs, k=4, counts="count")
    sol = AllMin().solve(p)
    assert sol.details.node == [1, 0, 0]
    assert sol.details.nodes == [[1, 0, 0]]  # the only feasible node of height 1 (Figure 9)
    assert sol.details.height == 1
    assert_satisfies(p, sol)
    labels = {tuple(p.table.hierarchies[j].labels[c] for j, c in enumerate(row)) for row in sol.codes}
    assert labels == {("High", "M", "40"), ("High", "M", "30"), ("High", "F", "30"), ("High", "F", "40")}
    # seed 003 sec. 5.1.2: at height 2, [1,1,0], [1,0,1], [2,0,0] satisfy R, [0,1,1], [0,0,2] do not
    rows = {tuple(nd): f for nd, f, _ in brute_force(p)}
    assert all(rows[x] for x in [(1, 1, 0), (1, 0, 1), (2, 0, 0)])
    assert not any(rows[x] for x in [(0, 1, 1), (0, 0, 2), (0, 1, 0), (0, 0, 1), (0, 0, 0)])
    # Prec 0.89 of the [1,0,0] table (Figure 10c)
    assert M.precision(p.table.codes, sol.codes, p.table.hierarchies, p.table.counts) == pytest.approx(0.89, abs=0.005)


def test_fulldomain_arca_hewett_and_datafly(arca_hewett_table):
    df, hs = arca_hewett_table
    p = make_problem(df, ["edu", "sex", "hrs"], hs, k=4, counts="count")
    assert FullDomain(objective="prec").solve(p).details.node == [1, 0, 0]
    sol = Datafly().solve(p)
    assert_satisfies(p, sol)


# ------------------------------------------- random tables vs brute force
@st.composite
def random_problems(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    m = draw(st.integers(1, 3))
    n = draw(st.integers(1, 40))
    cols, hs = {}, {}
    for j in range(m):
        name = f"a{j}"
        kind = draw(st.sampled_from(["mask", "flat", "unbalanced"]))
        if kind == "mask":
            vals = sorted({f"{x:03d}" for x in rng.integers(0, 60, size=6)})
            h = H.masking(name, vals)
        elif kind == "flat":
            vals = [f"v{i}" for i in range(rng.integers(2, 5))]
            h = H.suppression(name, vals)
        else:
            vals = ["x1", "x2", "y1", "z"]
            h = H.from_mapping(name, {"*": {"X": ["x1", "x2"], "Y": {"YY": ["y1"]}, "z": []}})
        cols[name] = rng.choice(vals, size=n)
        hs[name] = h
    df = pd.DataFrame(cols)
    counts = rng.integers(1, 4, size=n) if draw(st.booleans()) else None
    qis = list(cols)
    total = int(counts.sum()) if counts is not None else n
    k = draw(st.integers(1, max(1, min(6, total))))
    reqs = []
    if m >= 2 and draw(st.booleans()):
        reqs = [((qis[0],), min(total, k + 2))]
    scheme = draw(st.sampled_from(["uniform", "height"]))
    limit = draw(st.sampled_from([0.0, 0.0, 0.1, 0.3]))
    objective = draw(st.sampled_from(["distortion", "prec", "dm"]))
    return make_problem(df, qis, hs, k=k, requirements=reqs, scheme=scheme, counts=counts), limit, objective


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_problems())
def test_fulldomain_matches_brute_force(case):
    p, limit, objective = case
    rows = brute_force(p, limit, objective)
    best, tied = brute_best(rows)
    for algo in (FullDomain(objective, suppression_limit=limit),
                 FullDomain(objective, suppression_limit=limit, all_minimal=False),
                 FullDomain(objective, suppression_limit=limit, exhaustive=True)):
        sol = algo.solve(p)
        assert sol.details.node == tied[0], (algo, sol.info, tied)
        assert_satisfies(p, sol)
        assert int(p.table.counts[sol.suppressed].sum()) <= limit * p.table.n_records + 1e-9
        assert sorted(sol.details.optimal_nodes) == sorted(tied)
    feasible = {tuple(nd) for nd, f, _ in rows if f}
    minimal = sorted(list(nd) for nd in feasible
                     if not any(tuple(nd[:j] + (nd[j] - 1,) + nd[j + 1:]) in feasible for j in range(len(nd))))
    sol = FullDomain(objective, suppression_limit=limit, all_minimal=True).solve(p)
    assert sorted(sol.details.minimal_nodes) == minimal
    # AllMin: every feasible node of the least height. Its suppression tops up to k with the classes
    # cheapest in distortion, so with suppression its feasible nodes are the distortion top-up's
    if objective != "distortion" and limit > 0:
        feasible = {tuple(nd) for nd, f, _ in brute_force(p, limit, "distortion") if f}
    h = min(sum(nd) for nd in feasible)
    am = AllMin(suppression_limit=limit).solve(p)
    assert sorted(am.details.nodes) == sorted(list(nd) for nd in feasible if sum(nd) == h)
    assert_satisfies(p, am)
    df = Datafly(suppression_limit=limit).solve(p)
    assert_satisfies(p, df)


def test_multiple_requirements_with_suppression_iterate():
    """Suppressing the rows that violate <{a,b},2> shrinks the a=x group below
    the 3 that <{a},3> asks for, so those rows are suppressed too."""
    df = pd.DataFrame({"a": ["x", "x", "x", "y", "y", "y"], "b": ["u", "u", "v", "u", "u", "u"]})
    hs = {"a": H.suppression("a", ["x", "y"]), "b": H.suppression("b", ["u", "v"])}
    p = make_problem(df, ["a", "b"], hs, k=2, requirements=[(("a",), 3)])
    sol = FullDomain(suppression_limit=0.5).solve(p)
    # node [0,0] suppressing 3 rows costs 3 * 2 = 6, as much as [0,1]; the lower node wins
    assert sol.details.node == [0, 0] and sol.details.cost == 6
    assert sol.suppressed.tolist() == [True, True, True, False, False, False]
    assert_satisfies(p, sol)
    rows = brute_force(p, 0.5)
    assert brute_best(rows) == (6.0, [[0, 0], [0, 1]])
    assert FullDomain().solve(p).details.node == [0, 1]
    ds = Datafly(suppression_limit=0.5).solve(p)
    assert_satisfies(p, ds)


def test_parameters_validated():
    with pytest.raises(ValueError, match="objective"):
        FullDomain(objective="speed")
    with pytest.raises(ValueError, match="suppression_limit"):
        FullDomain(suppression_limit=1.5)
    with pytest.raises(ValueError, match="suppression_limit"):
        Datafly(suppression_limit=-0.1)


# ------------------------------------------------------------------ Adult
@pytest.fixture(scope="module")
def adult_problem_factory(adult_path):
    from hieranon.io.datasets import load_adult

    data = load_adult(adult_path, download=False)
    df, hs = data.frame, data.hierarchies
    assert len(df) == 45222
    cache = {}

    def make(k, q=8):
        if q not in cache:
            cache[q] = encode(df, ADULT_QI[:q], hs)
        t = cache[q]
        return Problem(t, [Requirement(tuple(ADULT_QI[:q]), k)], M.CostModel.build(t.hierarchies))
    return make


def adult_brute_force_min_class(problem: Problem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Smallest class size and distortion of every one of the lattice's nodes,
    vectorised per node (distinct rows, mixed-radix keys, np.unique)."""
    t = problem.table
    ec = group(t.codes, t.counts)
    base, w = ec.keys, ec.sizes
    hs = t.hierarchies
    nodes = np.array(list(itertools.product(*[range(h.height) for h in hs])))
    # per attribute and step: generalised code of each distinct row, and its distortion
    gen = [[h.ancestors[base[:, j], np.maximum(h.depth[base[:, j]] - s, 0)] for s in range(h.height)]
           for j, h in enumerate(hs)]
    step_cost = [[float(((problem.cost.costs[j][g] - problem.cost.costs[j][base[:, j]]) * w).sum()) for g in gen[j]]
                 for j in range(len(hs))]
    minsize = np.empty(len(nodes), dtype=np.int64)
    cost = np.zeros(len(nodes))
    for i, node in enumerate(nodes):
        key = np.zeros(len(base), dtype=np.int64)
        for j, s in enumerate(node):
            key = key * hs[j].n_nodes + gen[j][s]
            cost[i] += step_cost[j][s]
        _, inv = np.unique(key, return_inverse=True)
        minsize[i] = np.bincount(inv.ravel(), weights=w).min()
    return nodes, minsize, cost


@pytest.mark.adult
@pytest.mark.slow
def test_adult_optimum_equals_brute_force(adult_problem_factory):
    """Adult, 8 QIs: the searched optimum is the best of all 6,480 nodes for
    k in {2, 5, 10, 50}; k-anonymous with no suppression."""
    nodes, minsize, cost = adult_brute_force_min_class(adult_problem_factory(2))
    assert len(nodes) == 6480
    heights = nodes.sum(axis=1)
    for k in (2, 5, 10, 50):
        p = adult_problem_factory(k)
        sol = FullDomain().solve(p)
        feas = minsize >= k
        best = cost[feas].min()
        tied = [list(map(int, nodes[i])) for i in np.flatnonzero(feas & np.isclose(cost, best, rtol=1e-12))]
        tied.sort(key=lambda nd: (sum(nd), nd))
        assert sol.details.node == tied[0], k
        assert sorted(sol.details.optimal_nodes) == sorted(tied)
        assert sol.details.cost == pytest.approx(best, rel=1e-12)
        assert not sol.suppressed.any()
        assert_satisfies(p, sol)
        assert np.array_equal(sol.codes, apply_node(p.table, sol.details.node))
        assert M.distortion(p.table.codes, sol.codes, p.cost) == pytest.approx(best, rel=1e-9)
        # the search settles far fewer nodes than the brute force checks
        assert sol.details.nodes_checked < len(nodes) // 4
        # AllMin's nodes are the feasible nodes of least height
        am = AllMin().solve(p)
        hmin = heights[feas].min()
        lowest = np.flatnonzero(feas & (heights == hmin))
        assert sorted(am.details.nodes) == sorted(list(map(int, nodes[i])) for i in lowest)


@pytest.mark.adult
def test_adult_fulldomain_and_datafly(adult_problem_factory):
    """The optimal node on Adult at k = 10 (its time is measured by benchmarks/, not asserted here)."""
    p = adult_problem_factory(10)
    sol = FullDomain().solve(p)
    assert sol.details.node == [4, 2, 3, 1, 2, 0, 0, 2]
    assert_satisfies(p, sol)
    df = Datafly().solve(p)
    assert not df.suppressed.any()
    assert_satisfies(p, df)
    # Datafly is a heuristic: never better than the optimum
    assert M.distortion(p.table.codes, df.codes, p.cost) >= sol.details.cost - 1e-6
    ds = Datafly(suppression_limit=0.01).solve(p)
    assert_satisfies(p, ds)
    # fewer than k records violate; the smallest classes join them so that the '*' class holds k
    assert 10 <= ds.details.suppressed <= 0.01 * p.table.n_records


def test_through_api(seed000_table1a, paper_hierarchies):
    """The methods run end to end: encoded, solved, verified, decoded."""
    from hieranon.job.pipeline import anonymize

    for method in ("fulldomain", "allmin", "datafly"):
        r = anonymize(seed000_table1a, ["Gender", "Age", "Postcode"], paper_hierarchies, k=2, method=method)
        check_result(seed000_table1a, r, {q: paper_hierarchies[q] for q in ("Gender", "Age", "Postcode")}, k=2)
    r = anonymize(seed000_table1a, ["Gender", "Age", "Postcode"], paper_hierarchies, k=2, method="fulldomain")
    assert r.metrics.distortion == pytest.approx(7.5)
    assert list(r.data["Gender"]) == ["male"] * 3 + ["female"] * 3  # node [0,1,1]: Age -> *, Postcode -> 435*
    assert set(r.data["Age"]) == {"*"} and set(r.data["Postcode"]) == {"435*"}


# ------------------------------------------------------------ privacy models
def private_nodes_brute_force(problem):
    """Every lattice node whose full-domain output (no suppression) satisfies
    k and every privacy model, with its distortion: plain loops, no tagging."""
    from hieranon.evaluation.verify import verify_codes

    t = problem.table
    out = {}
    for node in itertools.product(*[range(h.height) for h in t.hierarchies]):
        codes = apply_node(t, node)
        if verify_codes(t, codes, problem.requirements, np.zeros(t.n_rows, dtype=bool), privacy=problem.privacy).ok:
            out[node] = M.distortion(t.codes, codes, problem.cost, t.counts)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(private_problems(max_rows=30))
def test_fulldomain_with_privacy_is_the_optimal_private_node(case):
    """The privacy models are monotone in the lattice, so predictive tagging
    stays exact: the node found is the cheapest node meeting k and the models."""
    problem, _, _ = case
    best = min(private_nodes_brute_force(problem).values())
    sol = FullDomain().solve(problem)
    assert M.distortion(problem.table.codes, sol.codes, problem.cost, problem.table.counts) == pytest.approx(best)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(private_problems(max_rows=30))
def test_allmin_and_datafly_with_privacy(case):
    """AllMin's nodes all meet the models at the least such height; Datafly's node meets them."""
    from hieranon.evaluation.verify import verify_codes

    problem, _, _ = case
    t = problem.table
    private = private_nodes_brute_force(problem)
    least = min(sum(v) for v in private)
    sol = AllMin().solve(problem)
    assert sol.details.height == least
    assert sorted(map(tuple, sol.details.nodes)) == sorted(v for v in private if sum(v) == least)
    sol = Datafly().solve(problem)
    assert tuple(sol.details.node) in private
    assert verify_codes(t, sol.codes, problem.requirements, sol.suppressed, privacy=problem.privacy).ok


def test_suppressed_records_must_meet_the_models_too():
    """'a00' records with s = x, y and 'a01' records with s = x, x, k = 2,
    distinct 2-diversity, up to 50 % suppressed: the a01 class violates the
    model and suppressing it leaves a suppressed class of one value, so
    the leaves are refused and the root is taken."""
    from hieranon.privacy import DistinctLDiversity

    h = H.Hierarchy("a0", ["*", "a00", "a01"], np.array([-1, 0, 0], dtype=np.int32))
    enc = encode(pd.DataFrame({"a0": ["a00", "a00", "a01", "a01"]}), ["a0"], [h])
    problem = Problem(enc, [Requirement(("a0",), 2)], M.CostModel.build(enc.hierarchies), seed=0)
    sens = pd.DataFrame({"s": ["x", "y", "x", "x"]})
    problem.privacy = [DistinctLDiversity("s", 2).bind(sens)]
    sol = FullDomain(suppression_limit=0.5).solve(problem)
    assert sol.details.node == [1] and not sol.suppressed.any()
    # without the model, the a01 class (two records) is kept as is
    problem.privacy = []
    assert FullDomain(suppression_limit=0.5).solve(problem).details.node == [0]


# ------------------------------------------------------------ search limits
def test_search_limits_are_declared_with_a_default():
    assert FullDomain().time_limit == DEFAULT_TIME_LIMIT and AllMin().time_limit == DEFAULT_TIME_LIMIT
    assert FullDomain().max_checks is None
    with pytest.raises(ValueError, match="time_limit"):
        FullDomain(time_limit=0)
    with pytest.raises(ValueError, match="max_checks"):
        AllMin(max_checks=0)


def _chain_problem():
    """Three masked digits, k = 4: only the two top levels are k-anonymous."""
    df = pd.DataFrame({"a": ["111", "112", "121", "122", "211", "212", "221", "222"]})
    return make_problem(df, ["a"], {"a": H.masking("a", list(df["a"]))}, k=4)


def test_node_budget_returns_the_best_node_found_with_a_warning(caplog):
    p = _chain_problem()
    best = FullDomain().solve(p)
    assert best.details.search_complete and best.details.node == [2]
    # the brute force checks nodes by height: after three checks it has found [2], not yet [3]
    sol = FullDomain(exhaustive=True, max_checks=3).solve(p)
    assert_satisfies(p, sol)
    assert sol.details.node == [2] and not sol.details.search_complete and not sol.details.minimal_nodes_complete
    assert "stopped at its budget of 3 node checks" in caplog.text
    assert FullDomain(exhaustive=True, max_checks=4).solve(p).details.search_complete


def test_limit_before_any_feasible_node_stops_with_a_clear_message():
    p = _chain_problem()
    for algo in (FullDomain(max_checks=1), FullDomain(time_limit=1e-12), AllMin(max_checks=1), AllMin(time_limit=1e-12),
                 FullDomain(objective="dm", max_checks=1), FullDomain(exhaustive=True, max_checks=1)):
        with pytest.raises(FullDomainTimeout, match="without finding one that meets the requirements; raise it"):
            algo.solve(p)
