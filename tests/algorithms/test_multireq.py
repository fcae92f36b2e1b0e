"""Several requirements ``<A_i, k_i>`` over different attribute sets in the
KACA family (kaca+, kaca1, kaca2): the nested clustering and its repair.

Outputs are checked with :mod:`contract` (plain Python, no library code):
every requirement holds with the all-``*`` rows counted as one more group
(the library's convention) and, with privacy models, every class over all
QIs satisfies them (counted here from the sensitive column itself).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hieranon.algorithms import registry
from hieranon.algorithms.base import Problem
from hieranon.algorithms.contract import check_codes, check_frame, satisfies
from hieranon.algorithms.multireq import essential_requirements, merge_groups, single_problem
from hieranon.core.requirements import Requirement
from hieranon.evaluation import metrics
from hieranon.hierarchies import readers as H
from hieranon.io import read_table
from hieranon.job import pipeline as api
from random_tables import balanced, private_problems, random_tables

METHODS = ["kaca+", "kaca1", "kaca2"]
FAST = {"kaca+": {"restarts": 1}, "kaca1": {}, "kaca2": {}, "kaca1-suppression": {"suppression_threshold": 0.5}}


def solve(method, problem, **params):
    return registry.make_algorithm(method.split("-")[0], **{**FAST[method], **params}).solve(problem)


def check_solution(problem, sol):
    """Generalisation only, suppressed rows all-root, every requirement on the
    non-suppressed rows and on all rows (the '*' rows one more group)."""
    t = problem.table
    check_codes(t.codes, t.hierarchies, sol.codes, sol.suppressed, problem.requirements, t.counts, t.qi_names)
    assert satisfies(t, sol.codes, problem.requirements)


@st.composite
def random_requirements(draw, qi_names, total):
    """1-3 requirements over random non-empty subsets of the QIs, k 2..min(6, total)."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        attrs = draw(st.lists(st.sampled_from(qi_names), min_size=1, max_size=len(qi_names), unique=True))
        out.append(Requirement(tuple(attrs), draw(st.integers(2, max(2, min(6, total))))))
    return out


# ------------------------------------------------------------ requirements kept
def test_implied_requirements_are_dropped():
    a = Requirement(("x", "y", "z"), 5)
    assert essential_requirements([a, Requirement(("x", "y"), 3), Requirement(("w",), 1)]) == [a]
    b = Requirement(("x", "y"), 7)  # a larger k on fewer attributes is not implied
    assert essential_requirements([a, b]) == [a, b]
    c = Requirement(("y", "x"), 7)  # the same set twice: the first stays
    assert essential_requirements([b, c]) == [b]


@pytest.mark.parametrize("method", METHODS)
def test_implied_requirements_give_the_single_k_output(method):
    """<all QIs, 4> with <{a0, a1}, 3> beside it is the single-k problem: the
    same output, code for code, as <all QIs, 4> alone."""
    rng = np.random.default_rng(3)
    hs = [balanced(f"a{j}", [3, 2, 2]) for j in range(3)]
    codes = np.stack([h.leaves[rng.integers(0, len(h.leaves), 120)] for h in hs], axis=1).astype(np.int32)
    from hieranon.core.table import EncodedTable

    enc = EncodedTable(codes, hs, [h.name for h in hs], np.ones(120, dtype=np.int64))
    cost = metrics.CostModel.build(hs)
    full = Requirement(tuple(enc.qi_names), 4)
    alone = Problem(enc, [full], cost, seed=7)
    both = Problem(enc, [Requirement(("a0", "a1"), 3), full], cost, seed=7)
    assert single_problem(both).requirements == [full] and single_problem(alone) is alone
    assert np.array_equal(solve(method, alone).codes, solve(method, both).codes)


def test_merge_groups_unites_small_groups_only_upwards():
    h = balanced("a", [2, 2])  # leaves a0.0 a0.1 a1.0 a1.1 under a0, a1
    leaves = h.leaves
    out = np.array([[leaves[0]], [leaves[0]], [leaves[0]], [leaves[1]], [leaves[2]], [leaves[2]], [leaves[3]]],
                   dtype=np.int32)
    before = out.copy()
    cost = metrics.CostModel.build([h])
    n = merge_groups(out, np.ones(7, dtype=np.int64), [h], cost, np.array([0]), 2)
    assert n == 2
    assert all(h.is_ancestor_or_self(out[:, 0], before[:, 0]))
    sizes = Counter(out[:, 0].tolist())
    assert min(sizes.values()) >= 2
    # the lone a0.1 joins its sibling group under a0, the lone a1.1 under a1: nothing goes to the root
    assert 0 not in sizes and len(sizes) == 2


# ------------------------------------------------------------ property tests
@pytest.mark.parametrize("method", [*METHODS, "kaca1-suppression"])
def test_random_requirement_sets_hold(method):
    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(case=random_tables(max_rows=60, counts=True), data=st.data())
    def check(case, data):
        enc, _, seed = case
        reqs = data.draw(random_requirements(enc.qi_names, enc.n_records))
        assume(max(r.k for r in reqs) <= enc.n_records)
        problem = Problem(enc, reqs, metrics.CostModel.build(enc.hierarchies), seed=seed)
        sol = solve(method, problem)
        check_solution(problem, sol)
        assert np.array_equal(sol.codes, solve(method, problem).codes)  # deterministic for a seed

    check()


@pytest.mark.parametrize("method", METHODS)
def test_random_requirements_with_privacy_models(method):
    from hieranon.evaluation.verify import verify_codes

    @settings(max_examples=20, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
    @given(case=private_problems(max_rows=40), data=st.data())
    def check(case, data):
        problem, sens, models = case
        t = problem.table
        reqs = data.draw(random_requirements(t.qi_names, t.n_records))
        assume(max(r.k for r in reqs) <= t.n_records)
        problem.requirements = reqs
        sol = solve(method, problem)
        check_solution(problem, sol)
        _distinct_values_hold(problem, sens, models, sol.codes)
        assert verify_codes(t, sol.codes, reqs, sol.suppressed, privacy=problem.privacy).ok

    check()


def _distinct_values_hold(problem, sens, models, codes):
    """Distinct l-diversity counted in plain Python: every class over all QIs
    holds at least l different sensitive values."""
    values = defaultdict(set)
    for row, s in zip(map(tuple, codes), sens["s"]):
        values[row].add(s)
    for m in models:
        if type(m).__name__ == "DistinctLDiversity":
            assert min(len(v) for v in values.values()) >= m.l


# ------------------------------------------------------------ API and CLI
def wage_like(n=240, seed=0):
    """A small table shaped like ISLR Wage: age, maritl, race, education, jobclass."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "id": [f"p{i}" for i in range(n)],
        "age": rng.integers(18, 80, n),
        "maritl": rng.choice(["married", "never", "divorced", "widowed"], n, p=[.6, .25, .1, .05]),
        "race": rng.choice(["white", "black", "asian", "other"], n, p=[.8, .1, .07, .03]),
        "education": rng.choice(["hs", "college", "graduate"], n),
        "jobclass": rng.choice(["industrial", "information"], n),
    })
    hs = {"age": H.intervals("age", df["age"], [5, 10, 20]),
          **{c: H.suppression(c, df[c]) for c in ("maritl", "race", "education", "jobclass")}}
    return df, hs


REQS = ["age,race:10", "age,maritl,education,jobclass:3"]


@pytest.mark.parametrize("method", METHODS)
def test_api_two_overlapping_requirements(method):
    df, hs = wage_like()
    res = api.anonymize(df, list(hs), hs, requirements=REQS, method=method, identifiers=["id"],
                        params=FAST[method])
    assert res.verification.ok
    check_frame(df, res.data, hs, [(r.split(":")[0].split(","), int(r.split(":")[1])) for r in REQS],
                res.suppressed, None, ["id"], res.metrics.suppressed_records)
    single = api.anonymize(df, list(hs), hs, k=10, method=method, identifiers=["id"], params=FAST[method])
    # the two requirements ask less than k = 10 over every QI (which implies both)
    assert res.metrics.distortion_ratio <= single.metrics.distortion_ratio


def _write(tmp_path, df, hs):
    table = tmp_path / "wage.csv"
    df.to_csv(table, index=False)
    opts = []
    for name, h in hs.items():
        (tmp_path / f"h_{name}.csv").write_text(h.to_arx_csv())
        opts += ["--qi", f"{name}={tmp_path / f'h_{name}.csv'}"]
    return table, opts


def test_cli_require_twice_with_the_default_method(tmp_path, monkeypatch, capsys):
    from main_runner import run_main

    df, hs = wage_like()
    table, opts = _write(tmp_path, df, hs)
    out = tmp_path / "out.csv"
    code, stdout, err = run_main(monkeypatch, capsys, "anonymize", table, "-o", out, *opts, "--require", REQS[0],
                                 "--require", REQS[1], "--json")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["method"] == api.DEFAULT_METHOD
    per_req = summary["metrics"]["achieved_k_per_requirement"]
    assert per_req["<{age, race}, 10>"] >= 10 and per_req["<{age, maritl, education, jobclass}, 3>"] >= 3
    check_frame(df, read_table(out), hs, [(["age", "race"], 10), (["age", "maritl", "education", "jobclass"], 3)])


def test_cli_requirements_from_the_config(tmp_path, monkeypatch, capsys):
    import yaml

    from main_runner import run_main

    df, hs = wage_like(seed=1)
    table, _ = _write(tmp_path, df, hs)
    cfg = {"quasi_identifiers": {q: str(tmp_path / f"h_{q}.csv") for q in hs}, "identifiers": ["id"],
           "requirements": REQS}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(cfg))
    out = tmp_path / "out.csv"
    code, stdout, err = run_main(monkeypatch, capsys, "anonymize", table, "-o", out, "--config",
                                 tmp_path / "job.yaml", "--json")
    assert code == 0, err
    assert len(json.loads(stdout)["requirements"]) == 2
    code, stdout, err = run_main(monkeypatch, capsys, "check", out, "--config", tmp_path / "job.yaml")
    assert code == 0, stdout + err


def test_suppressed_rows_are_flagged_only_when_every_group_holds_without_them():
    """KACA1's outlier suppression inside a block prints a row as '*'
    everywhere; when a group of another requirement needs that row (a0 = '*'
    with one other record), it is published as a generalised row, not
    flagged as suppressed, so the requirements hold with and without the
    flagged rows."""
    df = pd.DataFrame({"a0": ["a00"] * 16, "a1": ["a10"] * 16, "a2": ["a20"] * 16})
    df.loc[1, "a0"], df.loc[9, "a1"] = "a01", "a11"
    hs = {"a0": H.suppression("a0", ["a00", "a01"]), "a1": H.suppression("a1", ["a10", "a11"]),
          "a2": H.suppression("a2", ["a20"])}
    reqs = [(["a0"], 2), (["a1", "a2"], 2)]
    res = api.anonymize(df, list(hs), hs, requirements=reqs, method="kaca1", seed=0,
                        params={"suppression_threshold": 0.5})
    check_frame(df, res.data, hs, reqs, res.suppressed, None, (), res.metrics.suppressed_records)
