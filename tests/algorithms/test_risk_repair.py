"""Every method that accepts privacy models honours the risk-based models
(k-map, delta-presence, average risk) through the repair of
hieranon.algorithms.risk_repair, and the verifier catches a violation."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from hieranon.algorithms.base import privacy_methods
from hieranon.algorithms.registry import METHODS as ALL_METHODS
from hieranon.algorithms.registry import make_algorithm, method_tags
from hieranon.core.table import EncodedTable
from hieranon.evaluation.verify import verify_codes
from hieranon.privacy import AverageRisk, DeltaPresence, KMap, PrivacyError
from random_tables import balanced, make_problem, random_tables

METHODS = [m for m in (m.replace(" (default)", "") for m in privacy_methods())
           if m != "partitioned" and not method_tags(m).needs_class_column]


def _population(enc, extra: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    more = np.stack([h.leaves[rng.integers(0, len(h.leaves), extra)] for h in enc.hierarchies], axis=1)
    codes = np.concatenate([np.repeat(enc.codes, enc.counts, axis=0), more])
    return pd.DataFrame({q: [h.labels[v] for v in codes[:, j]]
                         for j, (q, h) in enumerate(zip(enc.qi_names, enc.hierarchies))})


@st.composite
def risk_problems(draw):
    enc, k, seed = draw(random_tables(max_rows=40, counts=True))
    pop = _population(enc, draw(st.integers(0, 60)), seed)
    kind = draw(st.sampled_from(["k-map", "delta", "average", "all"]))
    models = []
    if kind in ("k-map", "all"):
        models.append(KMap(draw(st.integers(2, 12)), pop))
    if kind in ("delta", "all"):
        models.append(DeltaPresence(0.0, draw(st.sampled_from([0.5, 0.8, 1.0])), pop))
    if kind in ("average", "all"):
        models.append(AverageRisk(draw(st.sampled_from([0.05, 0.1, 0.2, 0.3]))))
    problem = make_problem(enc, k, seed)
    problem.risk = [m.bind(enc) for m in models]
    feasible = True
    for b in problem.risk:
        try:
            b.check_feasible()
        except PrivacyError:
            feasible = False
    assume(feasible)
    return problem


@pytest.mark.parametrize("method", METHODS)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(problem=risk_problems())
def test_every_privacy_method_honours_the_risk_models(method, problem):
    solution = make_algorithm(method).solve(problem)
    event("repaired" if (solution.info.get("privacy") or {}).get("risk_merges") else "no merge recorded")
    report = verify_codes(problem.table, solution.codes, problem.requirements, solution.suppressed,
                          risk=problem.risk)
    assert report.ok, report.summary()


def _plain(enc, seed=0):
    problem = make_problem(enc, 2, seed)
    return problem, make_algorithm("kaca+").solve(problem)


@settings(max_examples=20, deadline=None)
@given(random_tables(max_rows=40))
def test_verifier_catches_an_average_risk_violation(case):
    enc, _, seed = case
    problem, solution = _plain(enc, seed)
    classes = len(np.unique(solution.codes, axis=0))
    assume(classes > 1)
    risk = AverageRisk((classes - 1) / enc.n_records).bind(enc)  # one class too many
    report = verify_codes(enc, solution.codes, problem.requirements, solution.suppressed, risk=[risk])
    assert not report.ok
    assert report.n_violations == {"average-risk": 1}


@settings(max_examples=20, deadline=None)
@given(random_tables(max_rows=40))
def test_verifier_catches_a_k_map_violation(case):
    enc, _, seed = case
    problem, solution = _plain(enc, seed)
    pop = _population(enc, 0, seed)  # the table is its own population: each class matches its own records
    sizes = np.unique(solution.codes, axis=0, return_counts=True)[1]
    k = int(sizes.min()) + 1
    assume(k <= enc.n_records)
    report = verify_codes(enc, solution.codes, problem.requirements, solution.suppressed,
                          risk=[KMap(k, pop).bind(enc)])
    assert report.n_violations.get("k-map", 0) >= 1


def test_a_method_without_privacy_support_refuses_the_risk_models():
    h = balanced("a0", [2, 2])
    enc = EncodedTable(h.leaves[np.arange(8) % 4][:, None].astype(np.int32), [h], ["a0"], np.ones(8, np.int64))
    problem = make_problem(enc, 2, 0)
    problem.risk = [AverageRisk(0.2).bind(enc)]
    no_privacy = next(m for m in ALL_METHODS
                      if not method_tags(m).privacy_models and not method_tags(m).needs_class_column)
    with pytest.raises(ValueError, match="does not support privacy models"):
        make_algorithm(no_privacy).solve(problem)
