"""TDS and BUG (seed 003 sec. 5.2): Case 1 (Figure 11), Case 2 (Figures 14
and 16), and their guarantees with several requirements."""

from __future__ import annotations

import numpy as np
import pytest

from hieranon.algorithms.base import Problem
from hieranon.algorithms.bug import BUG
from hieranon.algorithms.contract import check_result, check_solution
from hieranon.algorithms.tags import get_tags
from hieranon.algorithms.tds import TDS, entropy, info_gain
from hieranon.core.cost import CostModel
from hieranon.core.requirements import Requirement
from hieranon.core.table import encode
from test_heuristicmin import (
    FIGURE_16A,
    _random_problem,
    _random_problem_with_inner_cells,
    arca_hewett_case1,
    arca_hewett_case2,
    problem_of,
    table_rows,
)


def case1_problem():
    df, hs = arca_hewett_case1()
    return problem_of(df, hs, [Requirement(("edu", "sex", "hrs"), 4)], labels=df["cls"].to_numpy())


def case2_problem():
    df, hs, reqs = arca_hewett_case2()
    return problem_of(df, hs, reqs, labels=df["cls"].to_numpy())


def is_cut(problem, codes) -> bool:
    """Global recoding: every original value is printed as one node."""
    t = problem.table
    for j in range(t.codes.shape[1]):
        pairs = {(int(a), int(b)) for a, b in zip(t.codes[:, j], codes[:, j])}
        if len(pairs) != len({a for a, _ in pairs}):
            return False
    return True


# ------------------------------------------------------------------- TDS
def test_tds_case1_figure_11c():
    p = case1_problem()
    sol = TDS().solve(p)
    assert table_rows(p, sol.codes) == {
        ("Any", "M", "[40,99)", 20), ("Any", "M", "[1,40)", 6), ("Any", "F", "[1,40)", 6), ("Any", "F", "[40,99)", 8)}
    # sex, then hours; education gains nothing (one child per level), 30 and 40 split no class
    assert [s[:2] for s in sol.details.specialisations] == [("sex", "Any"), ("hrs", "Any")]
    check_solution(p, sol)


def test_tds_case1_scores():
    """Score = InfoGain / (AnonyLoss + 1) from the most general table (40
    records, 20 A / 20 B): sex splits 26 (20A 6B) / 14 (14B), anonymity 40 -> 14;
    hours splits 28 (20A 8B) / 12 (12B), anonymity 40 -> 12."""
    p = case1_problem()
    sol = TDS().solve(p)
    _attr, _v, score, gain, loss = sol.details.specialisations[0]
    h26 = float(entropy(np.array([20, 6]))[0])
    assert gain == pytest.approx(1 - 26 / 40 * h26)
    assert loss == 26 and score == pytest.approx(gain / 27)
    h28 = float(entropy(np.array([20, 8]))[0])
    assert score > (1 - 28 / 40 * h28) / 29


def test_tds_case2_figure_14f_equals_16a():
    p = case2_problem()
    sol = TDS().solve(p)
    assert table_rows(p, sol.codes) == FIGURE_16A
    specs = [s[:2] for s in sol.details.specialisations]
    # Figure 14: WorkHrs first, then education, secondary; senior and university
    # (the paper lists senior before university; Score ranks university first,
    # AnonyLoss 0 against 3 for senior -- the final table is the same)
    assert specs[:3] == [("hrs", "[1-99)"), ("edu", "ANY"), ("edu", "Secondary")]
    assert set(specs[3:]) == {("edu", "Senior"), ("edu", "University")}
    check_solution(p, sol)
    assert is_cut(p, sol.codes)


def test_tds_case2_no_further_specialisation_is_valid():
    """Figure 14(g)-(i): specialising junior, sex or [1-37) violates R; grad is
    a single class (no information gain)."""
    p = case2_problem()
    sol = TDS().solve(p)
    more = TDS(max_steps=len(sol.details.specialisations) + 1).solve(p)
    assert (more.codes == sol.codes).all()


def test_tds_needs_class_labels():
    df, hs = arca_hewett_case1()
    p = problem_of(df, hs, [Requirement(("edu", "sex", "hrs"), 4)])
    with pytest.raises(ValueError, match="class column"):
        TDS().solve(p)
    with pytest.raises(ValueError, match="class column"):
        BUG().solve(p)


def test_info_gain_helper():
    lab = np.array([0, 0, 1, 1])
    assert info_gain(lab, np.array([0, 0, 1, 1]), np.ones(4), 2) == pytest.approx(1.0)
    assert info_gain(lab, np.array([0, 1, 0, 1]), np.ones(4), 2) == pytest.approx(0.0)


# ------------------------------------------------------------------- BUG
def test_bug_case1():
    """Not printed in the paper: BUG's first (and only) generalisation is
    education to High -- no class is mixed (10th/9th/8th with 30 and 40 keep
    their classes apart), and it lifts the anonymity from 2 to 4 at once."""
    p = case1_problem()
    sol = BUG().solve(p)
    assert table_rows(p, sol.codes) == {
        ("High", "M", "40", 20), ("High", "M", "30", 6), ("High", "F", "30", 6), ("High", "F", "40", 8)}
    assert [g[:2] for g in sol.details.generalisations] == [("edu", "High")]
    assert sol.details.generalisations[0][5] == "critical"
    check_solution(p, sol)
    assert is_cut(p, sol.codes)


def test_bug_case2_reaches_figure_16a():
    """Not printed in the paper for Case 2; BUG ends at the same table as TDS."""
    p = case2_problem()
    sol = BUG().solve(p)
    assert table_rows(p, sol.codes) == FIGURE_16A
    check_solution(p, sol)
    assert is_cut(p, sol.codes)


# ------------------------------------------ guarantees on random problems
@pytest.mark.parametrize("seed", range(30))
def test_requirements_hold_and_recoding_is_global(seed):
    rng = np.random.default_rng(500 + seed)
    p = _random_problem(rng, n_req_max=3)
    t = p.table
    for algo in (TDS(), BUG()):
        sol = algo.solve(p)
        assert sol.codes.shape == t.codes.shape and not sol.suppressed.any()
        check_solution(p, sol)
        assert is_cut(p, sol.codes), algo.name


def test_bug_with_a_missing_cell():
    """A row already at the root (missing='root') does not block generalising
    the other rows to the root."""
    import pandas as pd

    from hieranon.hierarchies import readers as H
    from hieranon.job.pipeline import anonymize

    deep = H.from_mapping("x", {"*": {"G": {"H": ["a"]}, "K": {"L": ["b"]}}})
    for h in (H.suppression("x", ["a", "b"]), deep):
        res = anonymize(pd.DataFrame({"x": ["a", None], "c": ["y", "y"]}), ["x"], {"x": h}, k=2, method="bug",
                        missing="root", class_column="c")
        assert list(res.data.x) == ["*", "*"]
    # a row printed as an inner node p is part of p's records, not a blocker
    h = H.from_mapping("x", {"*": {"A": ["a1", "a2"], "B": ["b1", "b2"]}})
    df = pd.DataFrame({"x": ["A", "a1", "a2", "b1", "b1", "b2", "b2"], "c": list("uvuvvuu")})
    t = encode(df, ["x"], {"x": h}, generalised=True)
    p = Problem(t, [Requirement(("x",), 2)], CostModel.build(t.hierarchies), class_labels=df["c"].to_numpy())
    sol = BUG().solve(p)
    assert [h.labels[c] for c in sol.codes[:, 0]] == ["A"] * 3 + ["b1", "b1", "b2", "b2"]
    assert [g[:2] for g in sol.details.generalisations] == [("x", "A")]


@pytest.mark.parametrize("seed", range(30))
def test_bug_with_missing_and_inner_cells_ends_satisfied(seed):
    p = _random_problem_with_inner_cells(np.random.default_rng(900 + seed), n_req_max=3)
    t = p.table
    sol = BUG().solve(p)
    check_solution(p, sol)
    assert is_cut(p, sol.codes)
    for j, h in enumerate(t.hierarchies):
        assert h.is_ancestor_or_self(sol.codes[:, j], t.codes[:, j]).all()


def test_tds_stops_at_a_fixpoint_and_bug_as_soon_as_r_holds():
    rng = np.random.default_rng(7)
    for _ in range(10):
        p = _random_problem(rng)
        t = TDS().solve(p)
        again = TDS(max_steps=t.details.n_steps + 1).solve(p)
        assert (again.codes == t.codes).all()          # no valid, beneficial specialisation left
        b = BUG().solve(p)
        n = b.details.n_steps
        if n:
            with pytest.raises(RuntimeError, match="max_steps"):
                BUG(max_steps=n - 1).solve(p)          # one step fewer still violates R


def test_most_general_table_must_satisfy():
    df, hs = arca_hewett_case1()
    t = encode(df, ["edu", "sex", "hrs"], hs, counts="count")
    p = Problem(t, [Requirement(("sex",), 41)], CostModel.build(t.hierarchies), class_labels=df["cls"].to_numpy())
    with pytest.raises(ValueError, match="most general"):
        TDS().solve(p)


@pytest.mark.parametrize("name, cls", [("tds", TDS), ("bug", BUG)])
def test_registered_in_api(name, cls):
    from hieranon.job.pipeline import make_algorithm

    algo = make_algorithm(name)
    assert isinstance(algo, cls) and get_tags(algo).several_requirements and get_tags(algo).needs_class_column


def test_through_the_api_with_a_class_column():
    from hieranon.job.pipeline import anonymize

    df, hs, reqs = arca_hewett_case2()
    for method in ("tds", "bug", "heuristicmin"):
        res = anonymize(df, ["edu", "sex", "hrs"], hs, requirements=reqs, method=method, count_column="count",
                        class_column="cls")
        check_result(df, res, hs, requirements=reqs, count_column="count")
        assert res.metrics.distinct_rows_output == 5  # Figure 16(a) for all three (SPEC 5 item 8)


@pytest.mark.parametrize("kw", [dict(max_steps=-1), dict(max_steps=1.5)])
def test_bad_parameters(kw):
    with pytest.raises(ValueError):
        TDS(**kw)
    with pytest.raises(ValueError):
        BUG(**kw)
