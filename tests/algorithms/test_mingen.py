"""MinGen, the exact integer program: SPEC section 5 item 7 (14 steps and T9
with rows as units, 12 with record-level recoding), each checked against an
independent brute force, and MinGen as the optimality oracle of every other
method on random small tables."""

from __future__ import annotations

import importlib
import itertools
import math
from functools import cache

import numpy as np
import pandas as pd
import pytest

from hieranon.algorithms.base import Problem
from hieranon.algorithms.contract import check_output, check_solution
from hieranon.algorithms.mingen import MinGen, MinGenTooLarge, candidate_tuples, expand_records
from hieranon.core.cost import CostModel
from hieranon.core.requirements import Requirement
from hieranon.core.table import encode, group
from hieranon.evaluation.metrics import precision
from hieranon.hierarchies import readers as H
from random_tables import set_partitions
from test_heuristicmin import arca_hewett_figure4, table_rows


def fig4():
    df, hs = arca_hewett_figure4()
    t = encode(df, ["edu", "sex", "hrs"], hs, counts="count")
    return Problem(t, [Requirement(("edu", "sex", "hrs"), 4)], CostModel.build(t.hierarchies))


def cell_steps(orig, gen, hierarchies, counts) -> int:
    d = sum((h.depth[orig[:, j]] - h.depth[gen[:, j]]).astype(np.int64) for j, h in enumerate(hierarchies))
    return int(d @ np.asarray(counts, dtype=np.int64))


def int_distortion(problem, gen, counts=None, orig=None) -> int:
    orig = problem.table.codes if orig is None else orig
    counts = problem.table.counts if counts is None else counts
    ic = problem.cost.int_costs
    d = sum(ic[j][gen[:, j]] - ic[j][orig[:, j]] for j in range(orig.shape[1]))
    return int(np.asarray(d, dtype=np.int64) @ np.asarray(counts, dtype=np.int64))


T9 = {("10th", "M", "40", 20), ("High", "M", "30", 6), ("9th", "F", "30", 4), ("9th", "F", "40", 6),
      ("12th", "F", "Any", 4)}
T10 = {("10th", "M", "40", 20), ("10th", "M", "30", 4), ("9th", "Any", "30", 6), ("9th", "F", "40", 6),
       ("12th", "F", "Any", 4)}


# ------------------------------------------------- independent brute forces
def _lca_tuple(hs, tuples):
    out = []
    for j, h in enumerate(hs):
        v = tuples[0][j]
        for t in tuples[1:]:
            v = int(h.lca(np.array([v]), np.array([t[j]]))[0])
        out.append(v)
    return tuple(out)


def _steps_to(hs, leaf, gen):
    return sum(int(h.depth[a] - h.depth[b]) for h, a, b in zip(hs, leaf, gen))


def _prec_loss(hs, leaf, gen):
    return sum((h.depth[a] - h.depth[b]) / (h.height - 1) for h, a, b in zip(hs, leaf, gen) if h.height > 1)


def brute_force_rows(units, counts, hs, k):
    """Every partition of the distinct rows into classes of >= k records, each
    class printed as the closest common generalisation of its rows: the
    minimum steps and all tables reaching it with their precision loss."""
    best, tables = None, []
    for part in set_partitions(list(range(len(units)))):
        if any(sum(counts[u] for u in blk) < k for blk in part):
            continue
        cost, loss, rows = 0, 0.0, []
        for blk in part:
            g = _lca_tuple(hs, [units[u] for u in blk])
            cost += sum(counts[u] * _steps_to(hs, units[u], g) for u in blk)
            loss += sum(counts[u] * _prec_loss(hs, units[u], g) for u in blk)
            rows.append((g, sum(counts[u] for u in blk)))
        if best is None or cost < best:
            best, tables = cost, []
        if cost == best:
            tables.append((loss, rows))
    return best, tables


def brute_force_records(units, counts, hs, k, budget):
    """Record-level optimum if it is <= budget (else None). Records staying
    at their original tuple form classes of 0 or >= k per row; every other
    record costs >= 1 step, so at most ``budget`` of them move; they are
    partitioned into classes of >= k, each printed as the closest common
    generalisation of its records' rows (memoised over count vectors)."""
    n = len(units)

    @cache
    def group_cost(g):
        support = [u for u in range(n) if g[u]]
        lca = _lca_tuple(hs, [units[u] for u in support])
        return sum(g[u] * _steps_to(hs, units[u], lca) for u in support)

    @cache
    def partition(r):
        if not any(r):
            return 0
        i = next(u for u in range(n) if r[u])
        best = math.inf
        ranges = [range(1, r[u] + 1) if u == i else range(0, r[u] + 1) for u in range(n)]
        for g in itertools.product(*ranges):
            if sum(g) < k:
                continue
            rest = tuple(a - b for a, b in zip(r, g))
            best = min(best, group_cost(g) + partition(rest))
        return best

    choices = []
    for c in counts:
        stay = [0] + list(range(k, c + 1))
        choices.append(sorted({c - s for s in stay if c - s <= budget}))
    best = math.inf
    for r in itertools.product(*choices):
        if sum(r) > budget:
            continue
        best = min(best, partition(tuple(r)))
    return None if best > budget else best


# ------------------------------------------------------ SPEC 5, item 7
def test_rows_as_units_fourteen_steps_and_T9():
    p = fig4()
    sol = MinGen().solve(p)
    t = p.table
    assert sol.details.steps == 14
    assert cell_steps(t.codes, sol.codes, t.hierarchies, t.counts) == 14
    assert table_rows(p, sol.codes) == T9
    prec = precision(t.codes, sol.codes, t.hierarchies, t.counts)
    assert round(prec, 2) == 0.95 and prec == pytest.approx(1 - 6 / 120)
    check_solution(p, sol)
    assert sol.details.optimal and sol.details.mode == "rows"


def test_T10_also_takes_fourteen_steps_but_is_less_precise():
    p = fig4()
    t = p.table
    hs = t.hierarchies
    t10 = t.codes.copy()
    any_sex = hs[1].labels.index("Any")
    any_hrs = hs[2].labels.index("Any")
    t10[[2, 3], 1] = any_sex          # rows 3, 4: (9th, Any, 30)
    t10[[5, 6], 2] = any_hrs          # rows 6, 7: (12th, F, Any)
    assert table_rows(p, t10) == T10
    check_output(t, t10, p.requirements)
    assert cell_steps(t.codes, t10, hs, t.counts) == 14
    prec10 = precision(t.codes, t10, hs, t.counts)
    assert round(prec10, 2) == 0.92
    assert prec10 < precision(t.codes, MinGen().solve(p).codes, hs, t.counts)


def test_rows_brute_force_agrees():
    p = fig4()
    t = p.table
    units = [tuple(int(v) for v in r) for r in t.codes]
    best, tables = brute_force_rows(units, [int(c) for c in t.counts], t.hierarchies, 4)
    assert best == 14
    top = min(loss for loss, _ in tables)
    winners = {frozenset((tuple(t.hierarchies[j].labels[v] for j, v in enumerate(g)), n) for g, n in rows)
               for loss, rows in tables if loss == pytest.approx(top)}
    assert winners == {frozenset((r[:3], r[3]) for r in T9)}     # T9 is the unique most precise optimum


def test_records_twelve_steps_verified_by_brute_force():
    p = fig4()
    t = p.table
    with pytest.raises(ValueError, match="may split a counted row"):
        MinGen(mode="records").solve(p)
    sol = MinGen(mode="records").solve_expanded(p)
    assert sol.details.steps == 12 and sol.details.optimal
    # the optimum splits counted rows: output expanded to one row per record
    assert sol.details.expanded
    rec = expand_records(t)
    assert sol.codes.shape == (t.n_records, 3)
    assert (np.repeat(np.arange(t.n_rows), t.counts) == sol.details.record_row).all()
    assert cell_steps(rec.codes, sol.codes, t.hierarchies, rec.counts) == 12
    check_output(rec, sol.codes, p.requirements)
    # independent check: nothing below 12, and 12 is reached
    units = [tuple(int(v) for v in r) for r in t.codes]
    counts = [int(c) for c in t.counts]
    assert brute_force_records(units, counts, t.hierarchies, 4, budget=11) is None
    assert brute_force_records(units, counts, t.hierarchies, 4, budget=12) == 12


def test_records_mode_one_row_per_record_keeps_rows():
    """Without a count column (the API's normal input) record-level recoding
    returns one code row per input row; equal rows may differ."""
    df, hs = arca_hewett_figure4()
    flat = df.loc[df.index.repeat(df["count"])].drop(columns="count").reset_index(drop=True)
    t = encode(flat, ["edu", "sex", "hrs"], hs)
    p = Problem(t, [Requirement(("edu", "sex", "hrs"), 4)], CostModel.build(t.hierarchies))
    sol = MinGen(mode="records").solve(p)
    assert not sol.details.expanded and sol.codes.shape == t.codes.shape
    assert cell_steps(t.codes, sol.codes, t.hierarchies, t.counts) == 12
    check_solution(p, sol)
    MinGen(mode="records").check_problem(p)   # accepted by the API


def test_records_mode_through_the_api():
    from hieranon.job.pipeline import anonymize

    df, hs = arca_hewett_figure4()
    flat = df.loc[df.index.repeat(df["count"])].drop(columns="count").reset_index(drop=True)
    res = anonymize(flat, ["edu", "sex", "hrs"], hs, k=4, method="mingen", mode="records")
    assert len(res.data) == 40 and res.info["steps"] == 12
    with pytest.raises(ValueError, match="one row per record"):
        anonymize(df, ["edu", "sex", "hrs"], hs, k=4, method="mingen", mode="records", count_column="count")
    res = anonymize(df, ["edu", "sex", "hrs"], hs, k=4, method="mingen", count_column="count")
    assert res.info["steps"] == 14 and round(res.metrics.precision, 2) == 0.95


def test_distortion_objective():
    p = fig4()
    sol = MinGen(objective="distortion").solve(p)
    t = p.table
    # uniform WHD: a step costs 1/(h-1) of an attribute -- the same as Prec's loss here
    assert sol.details.distortion == pytest.approx(6.0)
    assert int_distortion(p, sol.codes) == sol.details.objective_value
    steps_sol = MinGen().solve(p)
    assert int_distortion(p, sol.codes) <= int_distortion(p, steps_sol.codes)
    rec = MinGen(mode="records", objective="distortion").solve_expanded(p)
    r = expand_records(t)
    assert int_distortion(p, rec.codes, r.counts, r.codes) <= sol.details.objective_value


def test_candidates_are_products_of_chains():
    p = fig4()
    hs = p.table.hierarchies
    c = candidate_tuples(p.table.codes[0], hs)
    assert len(c) == 4 * 2 * 3 and len({tuple(x) for x in c}) == 24
    assert tuple(c[0]) == tuple(p.table.codes[0])


def test_refuses_large_inputs():
    p = fig4()
    with pytest.raises(MinGenTooLarge, match="max_records=10"):
        MinGen(max_records=10).solve(p)
    with pytest.raises(MinGenTooLarge, match="max_variables=50"):
        MinGen(max_variables=50).solve(p)


@pytest.mark.parametrize("kw", [dict(mode="cells"), dict(objective="prec"), dict(max_records=0),
                                dict(time_limit=0)])
def test_bad_parameters(kw):
    with pytest.raises(ValueError):
        MinGen(**kw)


# ---------------------------------------- the oracle on random small tables
HIER = {
    "a": {"*": {"x": ["a1", "a2"], "y": ["a3", "a4"]}},
    "b": {"*": ["b1", "b2", "b3"]},
    "c": {"*": {"p": {"q": ["c1", "c2"], "c3": []}, "c4": []}},      # unbalanced
}


def random_problem(rng):
    hs = {a: H.from_mapping(a, tree) for a, tree in HIER.items()}
    n = int(rng.integers(6, 11))
    df = pd.DataFrame({
        "a": rng.choice(["a1", "a2", "a3", "a4"], n, p=[0.4, 0.3, 0.2, 0.1]),
        "b": rng.choice(["b1", "b2", "b3"], n, p=[0.5, 0.3, 0.2]),
        "c": rng.choice(["c1", "c2", "c3", "c4"], n, p=[0.4, 0.3, 0.2, 0.1]),
    })
    qis = ["a", "b", "c"]
    k = int(rng.integers(2, 4))
    if rng.random() < 0.5:
        reqs = [Requirement(tuple(qis), k)]
    else:
        reqs = [Requirement(("a", "b"), k), Requirement(("b", "c"), int(rng.integers(2, 5)))]
    t = encode(df, qis, hs)
    return Problem(t, reqs, CostModel.build(t.hierarchies), seed=int(rng.integers(1000)),
                   class_labels=rng.choice(["A", "B"], n))


def _heuristics():
    """(name, factory) of every other method installed; absent modules skipped."""
    out = []
    for name, target in [("heuristicmin", "hieranon.algorithms.heuristicmin:HeuristicMin"),
                         ("tds", "hieranon.algorithms.tds:TDS"), ("bug", "hieranon.algorithms.bug:BUG"),
                         ("kaca1", "hieranon.algorithms.kaca:KACA1"),
                         ("fulldomain", "hieranon.algorithms.fulldomain:FullDomain")]:
        module, cls = target.split(":")
        try:
            out.append((name, getattr(importlib.import_module(module), cls)))
        except (ImportError, AttributeError):
            continue
    return out


@pytest.mark.parametrize("seed", range(50))
def test_oracle_never_worse_than_any_heuristic(seed):
    rng = np.random.default_rng(seed)
    p = random_problem(rng)
    t = p.table
    opt = {(mode, obj): MinGen(mode=mode, objective=obj).solve_expanded(p)
           for mode in ("rows", "records") for obj in ("steps", "distortion")}
    for (mode, obj), s in opt.items():
        assert s.details.optimal and not s.details.expanded, (mode, obj)
        check_solution(p, s)
    steps = {m: cell_steps(t.codes, opt[(m, "steps")].codes, t.hierarchies, t.counts) for m in ("rows", "records")}
    dist = {m: int_distortion(p, opt[(m, "distortion")].codes) for m in ("rows", "records")}
    assert steps["records"] <= steps["rows"] and dist["records"] <= dist["rows"]
    assert steps["rows"] == opt[("rows", "steps")].info["steps"]
    compared = 0
    for name, factory in _heuristics():
        algo = factory()
        try:
            algo.check_problem(p)
        except ValueError:
            continue                     # e.g. one k over all QIs only
        sol = algo.solve(p)
        if sol.suppressed.any() or sol.codes.shape != t.codes.shape:
            continue
        check_solution(p, sol)
        h_steps = cell_steps(t.codes, sol.codes, t.hierarchies, t.counts)
        h_dist = int_distortion(p, sol.codes)
        assert steps["records"] <= h_steps, name
        assert dist["records"] <= h_dist, name
        # rows as units: comparable when equal input rows were generalised alike
        key = group(t.codes).row_class
        consistent = all(len({tuple(r) for r in sol.codes[key == c]}) == 1 for c in np.unique(key))
        if consistent:
            assert steps["rows"] <= h_steps, name
            assert dist["rows"] <= h_dist, name
        compared += 1
    assert compared >= 3    # at least HeuristicMin, TDS and BUG
