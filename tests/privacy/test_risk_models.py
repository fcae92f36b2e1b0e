"""k-map, delta-presence and the average risk (hieranon.privacy.risk_models)."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hieranon.core.table import EncodedTable
from hieranon.privacy import AverageRisk, DeltaPresence, KMap, PrivacyError, parse_risk_options
from random_tables import balanced, random_tables


def _labels(enc, codes):
    return pd.DataFrame({q: [h.labels[v] for v in codes[:, j]]
                         for j, (q, h) in enumerate(zip(enc.qi_names, enc.hierarchies))})


def _table():
    """Six records over two QIs (a0: two groups of two leaves; a1: three leaves)."""
    hs = [balanced("a0", [2, 2]), balanced("a1", [3])]
    leaves = [h.leaves for h in hs]
    codes = np.array([[leaves[0][i % 4], leaves[1][i % 3]] for i in range(6)], dtype=np.int32)
    return EncodedTable(codes, hs, ["a0", "a1"], np.ones(6, dtype=np.int64))


def _population(enc, extra):
    """The table's own records plus ``extra`` random leaf records."""
    rng = np.random.default_rng(len(extra))
    more = np.stack([h.leaves[rng.integers(0, len(h.leaves), len(extra))] for h in enc.hierarchies], axis=1)
    return _labels(enc, np.concatenate([enc.codes, more]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=30), st.lists(st.integers(0, 9), max_size=20), st.data())
def test_population_matches_counted_as_by_brute_force(case, extra, data):
    enc, _, _ = case
    pop = _population(enc, extra)
    pop_codes = np.stack([h.codes_of(pop[q]) for q, h in zip(enc.qi_names, enc.hierarchies)], axis=1)
    # random tuples: each cell a random ancestor of a random row's value
    n = data.draw(st.integers(1, 8))
    tuples = np.empty((n, len(enc.qi_names)), dtype=np.int64)
    for i in range(n):
        r = data.draw(st.integers(0, enc.n_rows - 1))
        for j, h in enumerate(enc.hierarchies):
            d = data.draw(st.integers(0, int(h.depth[enc.codes[r, j]])))
            tuples[i, j] = h.ancestors[enc.codes[r, j], d]
    expected = np.array([sum(all(h.is_ancestor_or_self(t[j], p[j]) for j, h in enumerate(enc.hierarchies))
                             for p in pop_codes) for t in tuples])
    sizes = np.ones(n, dtype=np.int64)
    k = data.draw(st.integers(1, 6))
    bound = KMap(k, pop).bind(enc)
    assert np.array_equal(bound.measure_classes(tuples, sizes), expected)
    assert np.array_equal(bound.classes_ok(tuples, sizes), expected >= k)
    delta = DeltaPresence(0.2, 0.7, pop).bind(enc)
    ratio = np.where(expected > 0, sizes / np.maximum(expected, 1), np.inf)
    assert np.allclose(delta.measure_classes(tuples, sizes), ratio)
    assert np.array_equal(delta.classes_ok(tuples, sizes), (ratio >= 0.2) & (ratio <= 0.7))


def test_average_risk_is_classes_over_records():
    enc = _table()
    b = AverageRisk(0.25).bind(enc)
    assert b.is_global
    assert b.table_measure(np.array([4, 4, 2, 0])) == pytest.approx(3 / 10)
    assert not b.table_ok(np.array([4, 4, 2]))
    assert b.table_ok(np.array([6, 4]))


def test_infeasible_models_name_the_best_value():
    enc = _table()
    pop = _labels(enc, enc.codes)
    with pytest.raises(PrivacyError, match=f"average risk = {1 / enc.n_records:.6g}"):
        AverageRisk(1 / (enc.n_records + 1)).bind(enc).check_feasible()
    with pytest.raises(PrivacyError, match=f"--k-map {enc.n_rows} or less"):
        KMap(enc.n_rows + 1, pop).bind(enc).check_feasible()
    # the table is the whole population: a ratio of 1 at the root
    with pytest.raises(PrivacyError, match="reaches 1"):
        DeltaPresence(0.1, 0.5, pop).bind(enc).check_feasible()
    KMap(enc.n_rows, pop).bind(enc).check_feasible()
    DeltaPresence(0.1, 1, pop).bind(enc).check_feasible()


def test_population_values_outside_the_hierarchies_are_named():
    enc = _table()
    pop = _labels(enc, enc.codes)
    pop.iloc[0, 0] = "no-such-value"
    with pytest.raises(PrivacyError, match="k-map: the population table .*no-such-value"):
        KMap(2, pop).bind(enc)


@pytest.mark.parametrize("kwargs, message", [
    ({"k_map": 3}, "--k-map needs the population table"),
    ({"delta_presence": "0.5"}, "expected MIN,MAX"),
    ({"delta_presence": "0.6,0.2"}, "0 <= MIN <= MAX <= 1"),
    ({"k_map": 0}, "--k-map must be a whole number >= 1"),
    ({"average_risk": 0}, r"--average-risk must lie in \(0, 1\]"),
    ({"average_risk": "x"}, "--average-risk must be a number"),
])
def test_bad_options_are_refused(kwargs, message):
    population = pd.DataFrame({"a": ["x"]}) if "k_map" in kwargs and kwargs["k_map"] == 0 else None
    if "delta_presence" in kwargs:
        population = pd.DataFrame({"a": ["x"]})
    with pytest.raises(PrivacyError, match=message):
        parse_risk_options(population=population, **kwargs)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=30), st.lists(st.integers(0, 9), max_size=10), st.integers(1, 4))
def test_assess_privacy_measures_risk_models_on_the_classes(case, extra, k):
    """The before-figures of k-map and the average risk, counted here row by
    row: a class is a distinct code tuple; its population matches are the
    population rows equal to it."""
    from hieranon.privacy import assess_privacy

    enc, _, _ = case
    pop = _population(enc, extra)
    pop_codes = np.stack([h.codes_of(pop[q]) for q, h in zip(enc.qi_names, enc.hierarchies)], axis=1)
    tuples, inverse = np.unique(enc.codes, axis=0, return_inverse=True)
    sizes = np.bincount(inverse.ravel(), weights=enc.counts).astype(np.int64)
    matches = np.array([(pop_codes == t).all(axis=1).sum() for t in tuples])

    models = [KMap(k, pop).bind(enc), AverageRisk(0.5).bind(enc)]

    kmap, average = assess_privacy([], enc.codes, counts=enc.counts, risk=models).models
    assert kmap.before.achieved == matches.min() and kmap.before.table_ok is None
    assert kmap.before.classes_violating == (matches < k).sum()
    assert kmap.before.records_violating == sizes[matches < k].sum() and kmap.ok == (matches >= k).all()
    assert average.before.achieved == pytest.approx(len(tuples) / enc.n_records)
    assert average.ok == (len(tuples) / enc.n_records <= 0.5) and average.after is None
