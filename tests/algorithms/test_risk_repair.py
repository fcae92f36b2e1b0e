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
from hieranon.privacy import AverageRisk, DeltaPresence, KMap, PopulationUniqueness, PrivacyError, parse_risk_options
from hieranon.privacy.population import population_uniqueness
from random_tables import balanced, make_problem, random_tables

METHODS = [m for m in privacy_methods()
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
    pop = _population(enc, 0, seed)  # the table is its own population
    records = np.repeat(enc.codes, enc.counts, axis=0)

    def covers(tuple_, row) -> bool:  # every value of row is the tuple's node or below it
        return all(h.depth[a] <= h.depth[v] and h.ancestors[v, h.depth[a]] == a
                   for h, a, v in zip(enc.hierarchies, tuple_, row))

    matches = [sum(covers(t, r) for r in records) for t in np.unique(solution.codes, axis=0)]
    k = min(matches) + 1  # brute force: one more than the least-matched class has
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


@pytest.mark.parametrize("method", ["kaca+", "mondrian"])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=random_tables(max_rows=40), p=st.sampled_from([0.001, 0.01, 0.05]),
       estimator=st.sampled_from(["pitman", "zayatz", "snb", "dankar"]))
def test_population_uniqueness_holds_on_the_output(method, case, p, estimator):
    """With k = 1 (nothing else merges the sample uniques) the release's
    estimated population uniqueness, recomputed here from its class sizes,
    is at most p."""
    enc, _, seed = case
    problem = make_problem(enc, 1, seed)
    problem.risk = [PopulationUniqueness(p, estimator, sampling_fraction=0.1).bind(enc)]
    solution = make_algorithm(method).solve(problem)
    _, class_of_row = np.unique(solution.codes, axis=0, return_inverse=True)
    sizes = np.bincount(class_of_row.ravel(), weights=enc.counts).astype(np.int64)
    assert population_uniqueness(sizes, 0.1, estimator) <= p * (1 + 1e-9)
    report = verify_codes(enc, solution.codes, problem.requirements, solution.suppressed, risk=problem.risk)
    assert report.ok, report.summary()


def test_verifier_catches_a_population_uniqueness_violation():
    h = balanced("a0", [4, 4])
    enc = EncodedTable(h.leaves[np.arange(16)][:, None].astype(np.int32), [h], ["a0"], np.ones(16, np.int64))
    model = PopulationUniqueness(0.001, "zayatz", sampling_fraction=0.5).bind(enc)
    report = verify_codes(enc, enc.codes.copy(), [], np.zeros(16, bool), risk=[model])  # 16 sample uniques
    assert report.n_violations.get("population-uniqueness", 0) == 1, report.summary()


@pytest.mark.parametrize("text, words", [
    ("0.01:nope", "unknown estimator 'nope'"),
    ("2", "must lie in (0, 1]"),
])
def test_population_uniqueness_option_refused_in_one_line(text, words):
    with pytest.raises(PrivacyError) as err:
        parse_risk_options(population_uniqueness=text, sampling_fraction=0.1)
    assert words in str(err.value) and "--population-uniqueness" in str(err.value) and "\n" not in str(err.value)
