"""KACA+'s Lagrangian output (hieranon.algorithms.kacaplus.lagrangian): the
greedy's classes hold k and the share, rows go to the entries holding their
first record, the whole output meets every model by the verifier and is
deterministic, and kaca+ keeps the lower distortion of its two outputs."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hieranon.algorithms.kacaplus import KACAPlus
from hieranon.algorithms.kacaplus.lagrangian import ProgramAhead, _row_classes, greedy_classes, lagrangian_output
from hieranon.bounds import BoundTooLarge, relaxed_prices, share_constraint
from hieranon.evaluation import metrics
from hieranon.evaluation.verify import verify_codes
from hieranon.privacy import TCloseness
from random_tables import make_problem, random_tables


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=60), st.data())
def test_greedy_classes_hold_k_and_the_share(case, data):
    """Every class the greedy makes from the prices has >= k records and a
    share of flagged records within the interval; unplaced rows are -1."""
    enc, k, _ = case
    n = int(enc.counts.sum())
    flags = np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    p = float(flags.mean())
    t = data.draw(st.sampled_from([0.1, 0.25, 0.5]))
    cost = metrics.CostModel.build(enc.hierarchies)
    prices = relaxed_prices(enc, cost, k, share=(flags, p - t, p + t), iterations=data.draw(st.integers(0, 60)))
    cls, n_cls = greedy_classes(prices, enc.counts, k)
    assert cls.min() >= -1 and cls.max() < n_cls
    assert set(np.unique(cls[cls >= 0])) == set(range(n_cls))  # no class is empty
    for c in range(n_cls):
        rows = cls == c
        assert rows.sum() >= k
        assert p - t - 1e-9 <= flags[rows].mean() <= p + t + 1e-9


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_rows_go_to_the_entry_holding_their_first_record(data):
    """A unit's records (its rows' counts, in row order) are dealt to its
    entries in class order; each row joins the class of its first record,
    compared with dealing the records one by one."""
    n_units = data.draw(st.integers(1, 4))
    unit_of_row = np.asarray(data.draw(st.lists(st.integers(0, n_units - 1), min_size=1, max_size=12)))
    assume(len(np.unique(unit_of_row)) == n_units)
    counts = np.asarray(data.draw(st.lists(st.integers(1, 3), min_size=len(unit_of_row), max_size=len(unit_of_row))))
    weights = np.bincount(unit_of_row, weights=counts, minlength=n_units).astype(np.int64)
    entries = []  # (unit, take, class), classes made in order
    left = weights.copy()
    for c in range(data.draw(st.integers(0, 5))):
        for u in range(n_units):
            if left[u] and data.draw(st.booleans()):
                take = data.draw(st.integers(1, int(left[u])))
                entries.append((u, take, c))
                left[u] -= take
    unit, take, klass = (np.asarray([e[i] for e in entries], dtype=np.int64) for i in range(3))
    prices = SimpleNamespace(unit_of_row=unit_of_row, weights=weights)
    got = _row_classes(prices, counts, unit, take, klass)
    for u in range(n_units):
        dealt = [c for uu, tk, c in entries if uu == u for _ in range(tk)]
        pos = 0
        for r in np.flatnonzero(unit_of_row == u):
            assert got[r] == (dealt[pos] if pos < len(dealt) else -1)
            pos += int(counts[r])


def _two_valued_problem(case, data):
    enc, k, seed = case
    problem = make_problem(enc, k, seed)
    values = data.draw(st.lists(st.sampled_from(["low", "high"]), min_size=enc.n_rows, max_size=enc.n_rows))
    sens = pd.DataFrame({"s": values})
    assume(sens["s"].nunique() == 2)
    model = TCloseness("s", data.draw(st.sampled_from([0.1, 0.2, 0.35])), "equal")
    problem.privacy = [model.bind(sens, enc.counts)]
    return enc, problem


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(random_tables(max_rows=60, counts=True), st.data())
def test_lagrangian_output_meets_every_model(case, data):
    """Tables with counted rows too: the output is k-anonymous and
    t-close by the verifier, and the same when run again."""
    enc, problem = _two_valued_problem(case, data)
    share = share_constraint(problem.privacy[0])
    assert share is not None
    iterations = data.draw(st.integers(1, 50))
    codes, sup, info, _ = lagrangian_output(problem, share, iterations=iterations)
    rep = verify_codes(enc, codes, problem.requirements, sup, privacy=problem.privacy)
    assert rep.ok, rep.summary()
    assert info["lagrangian_unplaced"] <= int(enc.counts.sum())
    again, _, _, _ = lagrangian_output(problem, share, iterations=iterations)
    assert np.array_equal(again, codes)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                                  HealthCheck.function_scoped_fixture])
@given(random_tables(max_rows=60, counts=True), st.data())
def test_a_walk_made_ahead_in_a_thread_gives_the_same_output(monkeypatch, case, data):
    """The candidate nodes walked in a thread beforehand (as kaca+ walks
    them while it repairs) give the output built without, bit for bit; a
    walk refused in the thread raises BoundTooLarge where its program is
    asked for."""
    import hieranon.algorithms.kacaplus.lagrangian as lagrangian

    enc, problem = _two_valued_problem(case, data)
    share = share_constraint(problem.privacy[0])
    iterations = data.draw(st.integers(1, 30))
    ahead = ProgramAhead(problem, share)
    try:
        codes, sup, _, _ = lagrangian_output(problem, share, iterations=iterations, ahead=ahead)
    finally:
        ahead.close()
    alone, sup_alone, _, _ = lagrangian_output(problem, share, iterations=iterations)
    assert np.array_equal(codes, alone) and np.array_equal(sup, sup_alone)
    with monkeypatch.context() as patch:  # undone before the next example
        patch.setattr(lagrangian, "MAX_INCIDENCES", 0)
        refused = ProgramAhead(problem, share)
        try:
            with pytest.raises(BoundTooLarge):
                refused.result()
        finally:
            refused.close()


def test_an_error_in_the_walk_ahead_is_raised_by_its_caller(monkeypatch):
    """What the thread's walk raises reaches the caller asking for the
    program (not the thread's own report on stderr); a walk called off
    before it began raises Cancelled."""
    import threading

    import hieranon.algorithms.kacaplus.lagrangian as lagrangian
    from hieranon.bounds import Cancelled

    problem = SimpleNamespace(table=None, cost=None, k=2)  # the walk is replaced: nothing of it is read
    reported = []
    monkeypatch.setattr(threading, "excepthook", reported.append)
    started = threading.Event()

    def broken(*args, **kwargs):
        started.wait(5)
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(lagrangian, "relaxed_program", broken)
    ahead = ProgramAhead(problem, (np.zeros(0, dtype=bool), 0.1, 0.9))
    started.set()
    with pytest.raises(RuntimeError, match="the disk is full"):
        ahead.result()
    assert reported == []

    def cancellable(*args, cancel, **kwargs):
        started.wait(5)
        if cancel.is_set():
            raise Cancelled("called off")
        return "program"

    started.clear()
    monkeypatch.setattr(lagrangian, "relaxed_program", cancellable)
    ahead = ProgramAhead(problem, (np.zeros(0, dtype=bool), 0.1, 0.9))
    ahead.close()
    started.set()
    with pytest.raises(Cancelled):
        ahead.result()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(random_tables(max_rows=60), st.data())
def test_kacaplus_keeps_the_lower_of_its_two_outputs(case, data):
    """With a two-valued t-closeness, kaca+ returns the repaired clustering
    or the Lagrangian output, whichever has less distortion (and says which),
    verified either way."""
    enc, problem = _two_valued_problem(case, data)
    repaired = KACAPlus(lagrangian=False).solve(problem)
    both = KACAPlus(lagrangian=True, lagrangian_iterations=30).solve(problem)
    rep = verify_codes(enc, both.codes, problem.requirements, both.suppressed, privacy=problem.privacy)
    assert rep.ok, rep.summary()

    def cost(codes):
        return metrics.distortion(enc.codes, codes, problem.cost, enc.counts)

    kept = (both.details.privacy or {}).get("lagrangian_kept", False)
    assert cost(both.codes) <= cost(repaired.codes) + 1e-9
    assert kept == (cost(both.codes) < cost(repaired.codes) - 1e-12)
    if not kept:
        assert np.array_equal(both.codes, repaired.codes)
    plain = KACAPlus(lagrangian=True).solve(replace(problem, privacy=[]))  # no share constraint: nothing to build
    assert np.array_equal(plain.codes, KACAPlus(lagrangian=False).solve(replace(problem, privacy=[])).codes)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                                  HealthCheck.function_scoped_fixture])
@given(random_tables(max_rows=40), st.data())
def test_a_relaxation_too_large_keeps_the_repaired_output(monkeypatch, case, data):
    """Past the limit of (unit, node) pairs no prices are computed: kaca+
    returns the repaired clustering, as without the Lagrangian output."""
    import hieranon.algorithms.kacaplus.lagrangian as lagrangian

    enc, problem = _two_valued_problem(case, data)
    monkeypatch.setattr(lagrangian, "MAX_INCIDENCES", 0)
    out = KACAPlus(lagrangian=True).solve(problem)
    assume((out.details.privacy or {}).get("privacy_violating_in"))  # else no Lagrangian output is tried
    assert "lagrangian" not in out.details.privacy
    assert np.array_equal(out.codes, KACAPlus(lagrangian=False).solve(problem).codes)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                                  HealthCheck.function_scoped_fixture])
@given(random_tables(max_rows=40), st.data())
def test_lagrangian_true_builds_for_a_larger_k_when_its_own_does_not_fit(monkeypatch, case, data):
    """``lagrangian=True``: when the relaxation for k is refused, the output
    for k + 1 (which meets k) is lowered by the local search at k; it is kept
    only when below the repaired clustering, and the output meets every
    model by the verifier. ``"auto"`` does not try a larger k."""
    import hieranon.algorithms.kacaplus.lagrangian as lagrangian
    from hieranon.bounds import BoundTooLarge

    enc, problem = _two_valued_problem(case, data)
    assume(problem.k < int(enc.counts.sum()))
    tried = []

    def refuse_own_k(table, cost, k, **kwargs):
        tried.append(k)
        if k == problem.k:
            raise BoundTooLarge("refused for the test")
        return relaxed_prices(table, cost, k, **kwargs)

    monkeypatch.setattr(lagrangian, "relaxed_prices", refuse_own_k)
    out = KACAPlus(lagrangian=True, lagrangian_iterations=20).solve(problem)
    assume((out.details.privacy or {}).get("privacy_violating_in"))  # else no Lagrangian output is tried
    assert tried == [problem.k, problem.k + 1]
    rep = verify_codes(enc, out.codes, problem.requirements, out.suppressed, privacy=problem.privacy)
    assert rep.ok, rep.summary()
    info = out.details.privacy["lagrangian"]
    assert info["lagrangian_k"] == problem.k + 1
    repaired = KACAPlus(lagrangian=False).solve(problem)
    kept = out.details.privacy["lagrangian_kept"]
    assert kept == (info["distortion_int"] < info["distortion_repaired_int"])

    def cost(codes):
        return metrics.distortion(enc.codes, codes, problem.cost, enc.counts)

    if kept:
        assert cost(out.codes) < cost(repaired.codes) - 1e-12
    else:
        assert np.array_equal(out.codes, repaired.codes)
    tried.clear()
    auto = KACAPlus(lagrangian="auto").solve(problem)
    assert tried == [problem.k] and "lagrangian" not in auto.details.privacy


def _graded_patients(n: int = 400, seed: int = 3) -> tuple[pd.DataFrame, dict]:
    """A table whose sensitive flag grows with age: clustered on the QIs
    alone, its classes break 0.15-closeness and kaca+ builds the Lagrangian output."""
    from hieranon.hierarchies import builders as B

    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    df = pd.DataFrame({"age": age, "zip": rng.choice(["1301", "1302", "1311", "1312", "1401"], n),
                       "sex": rng.choice(["f", "m"], n),
                       "ill": np.where(rng.random(n) < (age - 10) / 90, "yes", "no")})
    hs = {"age": B.intervals("age", df["age"], [5, 10, 20]), "zip": B.suppression("zip", df["zip"]),
          "sex": B.suppression("sex", df["sex"])}
    return df, hs


def test_the_jobs_bound_goes_on_from_the_lagrangian_prices():
    """With a bound asked for, the job's ascent goes on from the prices of
    kaca+'s Lagrangian output (same program): its iterations count both,
    and it is no lower than the bound kaca+ reached, yet below the output.
    Without the Lagrangian output the bound starts afresh."""
    import hieranon

    df, hs = _graded_patients()
    common = dict(hierarchies=hs, k=4, seed=0, sensitive=["ill"], privacy=[TCloseness("ill", 0.15)],
                  lower_bound=True, bound_iterations=30)
    res = hieranon.anonymize(df, lagrangian_iterations=50, **common)
    lag = res.info["privacy"]["lagrangian"]
    assert 30 < res.lower_bound.iterations <= 80
    assert lag["lagrangian_bound"] <= res.lower_bound.ratio <= res.metrics.distortion_ratio + 1e-12
    alone = hieranon.anonymize(df, lagrangian=False, **common)
    assert "lagrangian" not in alone.info["privacy"] and alone.lower_bound.iterations <= 30
