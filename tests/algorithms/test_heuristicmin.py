"""HeuristicMin (seed 003): SPEC section 5 items 7 and 8, Case 1, and the
search's own guarantees (optimal row count, requirements hold)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hieranon.algorithms import contract
from hieranon.algorithms.base import Problem
from hieranon.algorithms.heuristicmin import HeuristicMin, SearchLimitError, SearchLimitWarning, _Space
from hieranon.algorithms.tags import get_tags
from hieranon.core.cost import CostModel
from hieranon.core.requirements import Requirement
from hieranon.core.table import decode, encode, group
from hieranon.evaluation.metrics import precision
from hieranon.hierarchies import readers as H

# the paper tables are typed once in hieranon.io.datasets.paper_tables (also used by
# `hieranon experiments`) and re-exported here for test_mingen.py and test_tds_bug.py
from hieranon.io.datasets.paper_tables import FIGURE_16A, arca_hewett_case1, arca_hewett_case2, arca_hewett_figure4  # noqa: F401


def problem_of(df, hs, reqs, qis=("edu", "sex", "hrs"), labels=None):
    t = encode(df, list(qis), hs, counts="count" if "count" in df else None)
    return Problem(t, list(reqs), CostModel.build(t.hierarchies), class_labels=labels)


def table_rows(problem, codes) -> set[tuple]:
    """The generalised table as a set of (labels..., records) rows."""
    t = problem.table
    ec = group(codes, t.counts)
    d = decode(ec.keys, t.hierarchies, t.qi_names)
    return {tuple(r) + (int(n),) for r, n in zip(d.itertuples(index=False), ec.sizes)}


def satisfies(problem, codes) -> bool:
    """Every requirement of ``problem`` holds on ``codes`` (all rows counted)."""
    return contract.satisfies(problem.table, codes, problem.requirements)


@pytest.fixture
def fig4_problem():
    df, hs = arca_hewett_figure4()
    return problem_of(df, hs, [Requirement(("edu", "sex", "hrs"), 4)])


# ------------------------------------------------------ SPEC 5, item 7
def test_section_4_3_returns_T1_after_nine_tables(fig4_problem):
    sol = HeuristicMin().solve(fig4_problem)
    # Figure 5: T1..T9 as (violations, rows), in generation order
    assert sol.details.trace == [(0, 4), (2, 6), (3, 7), (0, 4), (2, 6), (1, 4), (0, 2), (0, 2), (0, 3)]
    assert sol.details.generated == 9
    assert sol.details.result_index == 1          # T1, not the equally large T4
    assert sol.details.rows == 4
    # T1 (Figure 10(b) / 9(a)): education generalised to High, 4 rows, 0 violations
    assert table_rows(fig4_problem, sol.codes) == {
        ("High", "M", "40", 20), ("High", "M", "30", 6), ("High", "F", "30", 6), ("High", "F", "40", 8)}
    contract.check_solution(fig4_problem, sol)
    t = fig4_problem.table
    prec = precision(t.codes, sol.codes, t.hierarchies, t.counts)
    assert prec == pytest.approx(8 / 9)
    assert round(prec, 2) == 0.89
    # every input row keeps its sex and hours, education one step up
    assert (sol.codes[:, 1:] == t.codes[:, 1:]).all()
    assert not sol.suppressed.any()


def test_section_4_3_search_tree(fig4_problem):
    """Figure 5's tree: T1-T3 from T, T4-T6 from T3, T7 from T2 (its hours
    child is T5, a duplicate), T8-T9 from T5."""
    sol = HeuristicMin().solve(fig4_problem)
    assert sol.details.tree == [(0, "edu"), (0, "sex"), (0, "hrs"), (3, "edu"), (3, "sex"), (3, "hrs"),
                                (2, "edu"), (5, "edu"), (5, "hrs")]
    assert sol.details.expanded == 4               # T, T3, T2, T5; T6 (1,4) pruned
    assert sol.details.complete is True


def test_section_4_3_through_the_api():
    from hieranon.job.pipeline import anonymize

    df, hs = arca_hewett_figure4()
    res = anonymize(df, ["edu", "sex", "hrs"], hs, requirements=["edu,sex,hrs:4"], method="heuristicmin",
                    count_column="count")
    assert list(res.data["edu"]) == ["High"] * 7
    assert list(res.data["count"]) == list(df["count"])
    assert res.metrics.distinct_rows_output == 4
    assert round(res.metrics.precision, 2) == 0.89
    assert res.info["generated"] == 9


# -------------------------------------------------------------- Case 1
def test_case1_figure_11b():
    df, hs = arca_hewett_case1()
    p = problem_of(df, hs, [Requirement(("edu", "sex", "hrs"), 4)], labels=df["cls"].to_numpy())
    sol = HeuristicMin().solve(p)
    assert table_rows(p, sol.codes) == {
        ("High", "M", "40", 20), ("High", "M", "30", 6), ("High", "F", "30", 6), ("High", "F", "40", 8)}
    assert sol.details.generated == 9


# ------------------------------------------------------ SPEC 5, item 8
def case2_problem():
    df, hs, reqs = arca_hewett_case2()
    return problem_of(df, hs, reqs, labels=df["cls"].to_numpy())


def test_case2_hierarchy_is_unbalanced():
    _df, hs, _r = arca_hewett_case2()
    assert not hs["hrs"].is_balanced
    assert hs["edu"].is_balanced is False  # Bachelors is a leaf one level above Masters/Doctorate


def test_case2_figure_16a_with_the_papers_reading():
    """Figure 16(a) is HeuristicMin's result when 'v and its siblings' means
    only the siblings that literally occur (a sibling's deeper values stay)
    and equally large satisfying tables are ranked by fewest generalisation
    steps -- the paper's stated reason for taking the first one found."""
    p = case2_problem()
    sol = HeuristicMin(siblings="occurring", ties="steps").solve(p)
    assert table_rows(p, sol.codes) == FIGURE_16A
    assert sol.details.rows == 5
    contract.check_solution(p, sol)


def test_case2_default_reproduces_figure_16a():
    """SPEC 5 item 8 with the default settings (the paper's reading)."""
    p = case2_problem()
    sol = HeuristicMin().solve(p)
    assert table_rows(p, sol.codes) == FIGURE_16A
    assert sol.details.fallback is False


def test_case2_cut_reading_finds_a_larger_table_than_figure_16a():
    """With the SPEC's rules read as cuts (siblings='subtree'), the search also generates
    Figure 16(a), but it finds a satisfying table with 6 distinct rows first:
    hours generalised to the root twice, sex kept. By HeuristicMin's own
    criterion (most distinct rows) that table is the better one, so the
    paper's Case 2 claim does not follow from its algorithm as specified."""
    p = case2_problem()
    sol = HeuristicMin(siblings="subtree", ties="first").solve(p)
    six = {("Junior", "M", "[1-99)", 7), ("11th", "M", "[1-99)", 5), ("12th", "F", "[1-99)", 4),
           ("Bachelors", "F", "[1-99)", 10), ("Grad", "M", "[1-99)", 4), ("Grad", "F", "[1-99)", 4)}
    assert table_rows(p, sol.codes) == six
    contract.check_solution(p, sol)
    assert sol.details.rows == 6 > len(FIGURE_16A)
    assert (0, 5) in sol.details.trace          # 5-row satisfying tables are generated too
    # Figure 16(a) satisfies R: check it directly
    t = p.table
    fig = t.codes.copy()
    hs = t.hierarchies
    lab = {h.name: {label: i for i, label in enumerate(h.labels)} for h in hs}
    edu_map = {"9th": "Junior", "10th": "Junior", "Masters": "Grad", "Doctorate": "Grad"}
    df = arca_hewett_case2()[0]
    for i, (e, hrs) in enumerate(zip(df["edu"], df["hrs"])):
        fig[i, 0] = lab["edu"][edu_map.get(e, e)]
        fig[i, 1] = lab["sex"]["ANY"]
        fig[i, 2] = lab["hrs"]["[1-37)" if int(hrs) < 37 else "[37-99)"]
    assert table_rows(p, fig) == FIGURE_16A
    assert satisfies(p, fig)


@pytest.mark.parametrize("siblings", ["subtree", "occurring"])
def test_case2_figure_15_path(siblings):
    """The operator reproduces Figure 15 step by step: (b) education (only the
    rows violating <{edu,sex},4>), (c) hours, (d) sex, then hours on rows 1-3
    gives Figure 16(a); the violating rows after each step are as in the text."""
    p = case2_problem()
    algo = HeuristicMin(siblings=siblings)
    space = _Space(p)
    state = [v.astype(np.int64) for v in space.values]
    names = p.table.qi_names
    expected = [
        ("edu", {("Junior", "M", "30", 3), ("Junior", "M", "32", 4), ("11th", "M", "35", 5), ("12th", "F", "37", 4),
                 ("Bachelors", "F", "42", 6), ("Bachelors", "F", "44", 4), ("Grad", "M", "44", 4),
                 ("Grad", "F", "44", 4)}),
        ("hrs", {("Junior", "M", "[1-35)", 7), ("11th", "M", "[35-37)", 5), ("12th", "F", "[37-99)", 4),
                 ("Bachelors", "F", "[37-99)", 10), ("Grad", "M", "[37-99)", 4), ("Grad", "F", "[37-99)", 4)}),
        ("sex", {("Junior", "ANY", "[1-35)", 7), ("11th", "ANY", "[35-37)", 5), ("12th", "ANY", "[37-99)", 4),
                 ("Bachelors", "ANY", "[37-99)", 10), ("Grad", "ANY", "[37-99)", 8)}),
        ("hrs", FIGURE_16A),
    ]
    for attr, rows in expected:
        codes = space.codes(state)
        ev = space.evaluate(codes)
        state = algo._generalise(space, state, codes, ev.viol, ev.any_viol, names.index(attr))
        out = space.codes(state)[space.row_class]
        assert table_rows(p, out) == rows, attr
    assert space.evaluate(space.codes(state)).n_viol == 0


def test_case2_violations_relevant_vs_any():
    """Figure 15(b): generalising education touches only the rows violating
    the requirement on {edu, sex}; with violations='any' every row violates
    <{sex,hrs},11>, so every education value moves up."""
    p = case2_problem()
    space = _Space(p)
    state = [v.astype(np.int64) for v in space.values]
    codes = space.codes(state)
    ev = space.evaluate(codes)
    viol, any_viol = ev.viol, ev.any_viol
    h = p.table.hierarchies[0]

    def edu_after(**kw):
        new = HeuristicMin(**kw)._generalise(space, state, codes, viol, any_viol, 0)
        return {h.labels[v] for v in new[0][space.inv[0]]}

    assert edu_after() == {"Junior", "11th", "12th", "Bachelors", "Grad"}            # Figure 15(b)
    assert edu_after(violations="any") == {"Junior", "Senior", "University"}
    # the literal reading leaves Bachelors' sibling Grad's values one level lower
    assert edu_after(violations="any", siblings="occurring") == {"Junior", "Senior", "University", "Grad"}


# ------------------------------------------------------- search behaviour
def test_input_already_satisfying_is_returned(fig4_problem):
    p = fig4_problem
    p2 = Problem(p.table, [Requirement(("edu", "sex", "hrs"), 2)], p.cost)
    sol = HeuristicMin().solve(p2)
    assert sol.details.generated == 0 and sol.details.result_index == 0
    assert (sol.codes == p.table.codes).all()


def test_wide_tables_fall_back_to_row_sorting(monkeypatch, fig4_problem):
    """When node ids of all QIs do not fit one 64-bit key, rows are grouped by
    sorting code rows instead: same search, same result."""
    import hieranon.algorithms.heuristicmin as hm

    fast = HeuristicMin().solve(fig4_problem)
    init = hm._Space.__init__

    def narrow(self, problem):
        init(self, problem)
        self.radix_ok = False
        self.req_mult = [None] * len(self.reqs)

    monkeypatch.setattr(hm._Space, "__init__", narrow)
    slow = HeuristicMin().solve(fig4_problem)
    assert slow.details.trace == fast.details.trace and (slow.codes == fast.codes).all()
    p = case2_problem()
    monkeypatch.setattr(hm._Space, "__init__", init)
    a = HeuristicMin().solve(p)
    monkeypatch.setattr(hm._Space, "__init__", narrow)
    b = HeuristicMin().solve(p)
    assert a.details.trace == b.details.trace and (a.codes == b.codes).all()


def test_limit_warns_when_a_solution_exists(fig4_problem):
    with pytest.warns(SearchLimitWarning, match="max_tables=2"):
        sol = HeuristicMin(max_tables=2).solve(fig4_problem)
    assert sol.details.complete is False
    assert sol.details.rows == 4 and satisfies(fig4_problem, sol.codes)


def test_limit_raises_without_a_solution():
    with pytest.raises(SearchLimitError, match="max_tables=3"):
        HeuristicMin(max_tables=3).solve(case2_problem())


@pytest.mark.parametrize("kw", [dict(max_tables=0), dict(violations="some"), dict(siblings="all"),
                                dict(ties="last"), dict(max_tables=True)])
def test_bad_parameters(kw):
    with pytest.raises(ValueError):
        HeuristicMin(**kw)


def test_registered_in_api():
    from hieranon.job.pipeline import make_algorithm

    algo = make_algorithm("heuristicmin", max_tables=10)
    assert isinstance(algo, HeuristicMin) and get_tags(algo).several_requirements


# --------------------------------------------- optimality on random tables
def _random_problem(rng, n_req_max=2):
    hs = {
        "a": H.from_mapping("a", {"*": {"x": ["a1", "a2"], "y": ["a3", "a4"]}}),
        "b": H.from_mapping("b", {"*": ["b1", "b2", "b3"]}),
        "c": H.from_mapping("c", {"*": {"p": {"q": ["c1", "c2"], "c3": []}, "c4": []}}),   # unbalanced
    }
    n = int(rng.integers(4, 9))
    df = pd.DataFrame({
        "a": rng.choice(["a1", "a2", "a3", "a4"], n),
        "b": rng.choice(["b1", "b2", "b3"], n),
        "c": rng.choice(["c1", "c2", "c3", "c4"], n),
        "count": rng.integers(1, 5, n),
    })
    qis = ["a", "b", "c"]
    total = int(df["count"].sum())
    reqs = []
    for _ in range(int(rng.integers(1, n_req_max + 1))):
        size = int(rng.integers(1, 4))
        attrs = tuple(sorted(rng.choice(qis, size, replace=False)))
        reqs.append(Requirement(attrs, int(rng.integers(2, min(6, total) + 1))))
    reqs = list({r.attributes: r for r in reqs}.values())
    t = encode(df, qis, hs, counts="count")
    return Problem(t, reqs, CostModel.build(t.hierarchies), class_labels=rng.choice(["A", "B"], n))


def _random_problem_with_inner_cells(rng, n_req_max=2):
    """:func:`_random_problem` with some cells missing (read as the root,
    missing='root') or already inner nodes of their hierarchy."""
    p = _random_problem(rng, n_req_max)
    t = p.table
    df = decode(t.codes, t.hierarchies, t.qi_names).astype(object)
    inner = {"a": ["x", "y"], "b": [], "c": ["p", "q"]}
    for q in t.qi_names:
        hit = rng.random(len(df)) < 0.3
        choices = np.array(inner[q] + [None], dtype=object)
        df.loc[hit, q] = rng.choice(choices, int(hit.sum()))
    df["count"] = t.counts
    t2 = encode(df, t.qi_names, t.hierarchies, counts="count", missing="root", generalised=True)
    return Problem(t2, p.requirements, CostModel.build(t2.hierarchies), class_labels=p.class_labels)


def _exhaustive_best_rows(problem, algo: HeuristicMin) -> int:
    """Every table reachable with the same operator, no pruning: the largest
    satisfying one."""
    space = _Space(problem)
    start = [v.astype(np.int64) for v in space.values]
    todo = [start]
    seen = set()
    best = -1
    while todo:
        state = todo.pop()
        codes = space.codes(state)
        ev = space.evaluate(codes)
        rows, nv, viol, any_viol, digest = ev.rows, ev.n_viol, ev.viol, ev.any_viol, ev.digest
        if digest in seen:
            continue
        seen.add(digest)
        if nv == 0:
            best = max(best, rows)
            continue
        for j in space.shield:
            new = algo._generalise(space, state, codes, viol, any_viol, j)
            if new is not None:
                todo.append(new)
    return best


@pytest.mark.parametrize("seed", range(25))
def test_pruned_search_is_optimal_and_satisfies(seed):
    rng = np.random.default_rng(1000 + seed)
    p = _random_problem(rng)
    contract.check_solution(p, HeuristicMin().solve(p))  # the paper's reading, with its fallback
    for kw in (dict(siblings="subtree"), dict(siblings="subtree", violations="any")):
        algo = HeuristicMin(**kw)
        sol = algo.solve(p)
        contract.check_solution(p, sol)
        assert sol.details.rows == group(sol.codes).n_classes
        assert sol.details.rows == _exhaustive_best_rows(p, algo)
        # output generalises the input, cut per attribute (one node per original value)
        t = p.table
        for j, h in enumerate(t.hierarchies):
            assert h.is_ancestor_or_self(sol.codes[:, j], t.codes[:, j]).all()
            pairs = {(int(a), int(b)) for a, b in zip(t.codes[:, j], sol.codes[:, j])}
            assert len(pairs) == len({a for a, _ in pairs})


# ------------------------------------------- missing cells read as the root
def test_violating_root_row_is_joined_by_generalising_the_others():
    """When only a row already at the root violates, the other rows are
    generalised until they join it (an all-* table satisfies k)."""
    from hieranon.job.pipeline import anonymize

    h = H.from_mapping("x", {"*": {"A": {"A1": ["a"]}, "B": {"B1": ["b"]}}})
    for counts in ([1, 2], [1, 1], [2, 1]):
        for siblings in ("paper", "subtree", "occurring"):
            res = anonymize(pd.DataFrame({"x": [None, "a"], "n": counts}), ["x"], {"x": h}, k=2,
                            method="heuristicmin", missing="root", count_column="n", siblings=siblings)
            assert list(res.data.x) == ["*", "*"]
    # two attributes: the root row joins the others once both are generalised
    hx, hy = H.suppression("x", ["a", "b"]), H.suppression("y", ["p", "q"])
    df = pd.DataFrame({"x": [None, "a", "a"], "y": [None, "p", "p"]})
    res = anonymize(df, ["x", "y"], {"x": hx, "y": hy}, k=2, method="heuristicmin", missing="root")
    assert res.data[["x", "y"]].values.tolist() == [["*", "*"]] * 3
    # the largest satisfying table: the root row joins the b rows, the a rows stay
    h = H.from_mapping("x", {"*": {"A": ["a1", "a2"], "B": ["b1"]}})
    df = pd.DataFrame({"x": [None, "a1", "a1", "b1", "b1"], "y": [None, "p", "p", "q", "q"]})
    res = anonymize(df, ["x", "y"], {"x": h, "y": hy}, k=3, method="heuristicmin", missing="root")
    assert res.data.groupby(["x", "y"]).size().min() >= 3 and res.metrics.achieved_k >= 3


@pytest.mark.parametrize("seed", range(20))
def test_missing_and_inner_cells_search_is_optimal_and_satisfies(seed):
    p = _random_problem_with_inner_cells(np.random.default_rng(2000 + seed))
    contract.check_solution(p, HeuristicMin().solve(p))
    for kw in (dict(siblings="subtree"), dict(siblings="occurring"), dict(siblings="subtree", violations="any")):
        algo = HeuristicMin(**kw)
        sol = algo.solve(p)
        contract.check_solution(p, sol)
        assert sol.details.rows == _exhaustive_best_rows(p, algo)
        for j, h in enumerate(p.table.hierarchies):
            assert h.is_ancestor_or_self(sol.codes[:, j], p.table.codes[:, j]).all()


@pytest.mark.parametrize("siblings", ["subtree", "occurring"])
def test_dead_end_message(monkeypatch, siblings):
    monkeypatch.setattr(HeuristicMin, "_generalise", lambda *a, **k: None)
    with pytest.raises(RuntimeError, match="without a table that satisfies") as err:
        HeuristicMin(siblings=siblings).solve(case2_problem())
    assert ("use siblings='subtree'" in str(err.value)) == (siblings == "occurring")
    assert "siblings='subtree' can dead-end" not in str(err.value)
