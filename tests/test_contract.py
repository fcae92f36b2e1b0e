"""The contract every registered method and wrapper keeps (in the manner of
scikit-learn's estimator checks): :mod:`hieranon.algorithms.checks` over
every method of ``registry.available_methods()``, the budgeted and
partitioned wrappers, and more parameter settings; then the same contract
through the public API on random frames, and k, l and t cross-checked by pycanon.

The output is checked by :mod:`hieranon.algorithms.contract` (plain Python,
no library code); which runs need a class column or small tables is read
from the methods' tags.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hieranon
from hieranon.algorithms import registry
from hieranon.algorithms.checks import parametrize_with_checks
from hieranon.algorithms.contract import check_codes, check_frame
from hieranon.algorithms.suppression import parse_budget, with_budget
from hieranon.evaluation.verify import verify_codes
from oracles import pycanon_entropy_l, pycanon_k, pycanon_l, pycanon_t
from random_tables import balanced, random_frames

METHODS = registry.available_methods()
#: parameters that make the run exercise more of the contract (suppression,
#: several blocks) or keep it in-process
EXTRA_RUNS = [
    ("kaca1", {"suppression_threshold": 0.5}),
    ("fulldomain", {"exhaustive": True}),
    ("mondrian", {"strict": False}),
    ("partitioned", {"block_size": 10, "executor": "serial", "inner_method": "kaca+"}),
]
#: every method runs in-process
BASE_PARAMS = {"partitioned": {"executor": "serial"}}
RUNS = [(m, BASE_PARAMS.get(m, {})) for m in METHODS] + [(m, p) for m, p in EXTRA_RUNS if m in METHODS]
#: methods run with a record budget: classes trimmed (kaca+, mondrian, partitioned), a native limit (fulldomain)
BUDGETED = [m for m in ("kaca+", "mondrian", "partitioned", "fulldomain") if m in METHODS]


def contract_methods() -> list:
    """Every run of RUNS as an unfitted method, and the budgeted wrappers."""
    out = [registry.make_algorithm(m, **p) for m, p in RUNS]
    return out + [with_budget(registry.make_algorithm(m, **BASE_PARAMS.get(m, {})), parse_budget("25%"))
                  for m in BUDGETED]


@parametrize_with_checks(contract_methods())
def test_method_keeps_the_contract(method, check):
    check(method)


def needs_class(method: str) -> bool:
    return registry.method_tags(method).needs_class_column


def max_rows(method: str, rows: int) -> int:
    """``rows``, or a dozen for a method whose work is exponential in the table."""
    return 12 if registry.method_tags(method).exact else rows


def run_id(run) -> str:
    method, params = run
    return method + "".join(f"-{k}={v}" for k, v in params.items())


def anonymize(df, hs, k, seed, count_column, method, params, requirements=None):
    return hieranon.anonymize(df, list(hs), hs, k=None if requirements else k, requirements=requirements,
                              method=method, seed=seed, count_column=count_column,
                              class_column="cls" if needs_class(method) else None,
                              identifiers=["id"], params=params)


def requirements_for(method, hs, k, draw_split: bool):
    """One k over every QI, or (for a method taking several requirements) one
    per half of the QIs."""
    qis = list(hs)
    if draw_split and len(qis) > 1 and registry.method_tags(method).several_requirements:
        return [(qis[: len(qis) // 2], k), (qis[len(qis) // 2:], max(2, k - 1))]
    return None


# ------------------------------------------------------------ the output contract
@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_output_contract(run):
    method, params = run

    @settings(max_examples=20, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(case=random_frames(max_rows=max_rows(method, 30)), split=st.booleans())
    def check(case, split):
        df, hs, k, seed, count_column = case
        reqs = requirements_for(method, hs, k, split)
        res = anonymize(df, hs, k, seed, count_column, method, params, reqs)
        check_frame(df, res.data, hs, reqs or [(list(hs), k)], res.suppressed, count_column, ["id"],
                    res.metrics.suppressed_records)
        again = anonymize(df, hs, k, seed, count_column, method, params, reqs)
        pd.testing.assert_frame_equal(res.data, again.data)

    check()


def test_a_different_seed_may_differ_but_keeps_the_contract():
    """The seed only picks among valid outputs."""
    rng = np.random.default_rng(5)
    hs = {"a0": balanced("a0", [3, 3]), "a1": balanced("a1", [2, 2])}
    df = pd.DataFrame({"id": range(40), **{q: [h.labels[v] for v in rng.choice(h.leaves, 40)] for q, h in hs.items()},
                       "note": range(40)})
    outs = [hieranon.anonymize(df, list(hs), hs, k=3, method="kaca1", seed=s, identifiers=["id"]) for s in range(4)]
    for r in outs:
        check_frame(df, r.data, hs, [(list(hs), 3)], r.suppressed, None, ["id"])


@pytest.mark.parametrize("method", [m for m in ("fulldomain", "datafly", "allmin") if m in METHODS])
def test_full_domain_suppression_keeps_the_contract(method):
    """Three a00 and one a01, k = 2, up to 30 % suppressed: suppressing the
    a01 record alone leaves a '*' class of one record."""
    hs = {"a0": balanced("a0", [2])}
    df = pd.DataFrame({"id": range(4), "a0": ["a00", "a00", "a00", "a01"], "note": range(4)})
    res = anonymize(df, hs, 2, 0, None, method, {"suppression_limit": 0.3})
    check_frame(df, res.data, hs, [(["a0"], 2)], res.suppressed, None, ["id"], res.metrics.suppressed_records)


# ------------------------------------------------------------ k cross-checked by pycanon
@pytest.mark.parametrize("method", METHODS)
def test_k_agrees_with_pycanon(method):
    rng = np.random.default_rng(11)
    hs = {"a0": balanced("a0", [2, 3]), "a1": balanced("a1", [3]), "a2": balanced("a2", [2, 2])}
    n = max_rows(method, 24)
    df = pd.DataFrame({"id": range(n), **{q: [h.labels[v] for v in rng.choice(h.leaves, n)] for q, h in hs.items()},
                       "note": range(n), "cls": rng.choice(["yes", "no"], n)})
    res = anonymize(df, hs, 3, 0, None, method, BASE_PARAMS.get(method, {}))
    kept = res.data[~np.asarray(res.suppressed)]
    assert pycanon_k(kept.astype(str), list(hs)) >= 3


# ------------------------------------------------------------ parameters
@pytest.mark.parametrize("method", METHODS)
def test_unknown_parameter_is_refused_naming_it(method):
    with pytest.raises(ValueError, match="no_such_parameter"):
        registry.make_algorithm(method, no_such_parameter=1)


# ------------------------------------------------------------ the checker itself
def test_the_checker_catches_each_kind_of_breach():
    """hieranon.algorithms.contract rejects every breach it is meant to catch (else the
    suite above could not fail)."""
    hs = {"a0": balanced("a0", [2, 2])}  # * -> a00, a01 -> a00.0, a00.1, a01.0, a01.1
    df = pd.DataFrame({"id": range(4), "a0": ["a00.0", "a00.1", "a01.0", "a01.1"], "note": range(4)})
    good = pd.DataFrame({"a0": ["a00", "a00", "a01", "a01"], "note": range(4)})
    reqs = [(["a0"], 2)]
    check_frame(df, good, hs, reqs, identifiers=["id"])
    breaches = {
        "nor an ancestor of it": (good.assign(a0=["a01", "a00", "a01", "a01"]), None, None),
        "a class has 1 records": (good.assign(a0=["a00.0", "a00", "a01", "a01"]), None, None),
        "non-QI column 'note' changed": (good.assign(note=[0, 1, 2, 9]), None, None),
        "rows reordered": (good.iloc[::-1], None, None),
        "output rows": (good.iloc[:3], None, None),
        "not the root": (good, [True, False, False, False], None),
        "miscounted": (good.assign(a0=["*", "*", "a01", "a01"]), [True, True, False, False], 1),
    }
    for message, (out, suppressed, n_suppressed) in breaches.items():
        with pytest.raises(AssertionError, match=message):
            check_frame(df, out, hs, reqs, suppressed, identifiers=["id"], suppressed_records=n_suppressed)
    with pytest.raises(AssertionError, match="identifier column 'id'"):
        check_frame(df, good.assign(id=range(4)), hs, reqs, identifiers=["id"])
    # suppressed records are exempt from k: two '*' rows and a class of two
    check_frame(df, good.assign(a0=["*", "*", "a01", "a01"]), hs, reqs, [True, True, False, False],
                identifiers=["id"], suppressed_records=2)


def test_the_code_checker_catches_each_kind_of_breach():
    h = balanced("a0", [2, 2])  # nodes: 0 *, 1 a00, 2 a01, 3 a00.0, 4 a00.1, 5 a01.0, 6 a01.1
    original = np.array([[3], [4], [5], [6]])
    good = np.array([[1], [1], [2], [2]])
    check_codes(original, [h], good, None, [([0], 2)])
    for out, suppressed, message in [(np.array([[2], [1], [2], [2]]), None, "does not generalise"),
                                     (np.array([[3], [1], [2], [2]]), None, "a class has 1 records"),
                                     (good[:3], None, "output shape"),
                                     (good, [True, False, False, False], "not all-root")]:
        with pytest.raises(AssertionError, match=message):
            check_codes(original, [h], out, suppressed, [([0], 2)])
    # record counts weigh the classes
    with pytest.raises(AssertionError, match="a class has 1 records"):
        check_codes(original, [h], np.array([[3], [4], [2], [2]]), None, [([0], 2)], counts=[2, 1, 1, 1])
    check_codes(original, [h], np.array([[3], [4], [2], [2]]), None, [([0], 2)], counts=[2, 2, 1, 1])


# ------------------------------------------------------------ privacy models
#: runs of the privacy contract: every method whose tags honour privacy models (the others' refusal is
#: check_privacy_models), and the lattice methods with their own suppression limit
PRIVACY_RUNS = [(m, p) for m, p in RUNS if registry.method_tags(m).privacy_models] + \
    [(m, {"suppression_limit": 0.3}) for m in ("fulldomain", "allmin", "datafly") if m in METHODS]


def check_with_pycanon(problem, codes, sens, models):
    """pycanon's measures of the released table, where they measure the same
    thing (their gaps: see test_privacy)."""
    from hieranon.core.table import decode
    from hieranon.privacy import DistinctLDiversity, EntropyLDiversity, TCloseness

    t = problem.table
    if not np.all(t.counts == 1):  # pycanon reads one row per record
        return
    out = decode(codes, t.hierarchies, t.qi_names).astype(str)
    out["s"] = sens["s"].to_numpy()
    qi = list(t.qi_names)
    for m in models:
        if isinstance(m, DistinctLDiversity):
            assert pycanon_l(out, qi, ["s"]) >= m.l
        elif isinstance(m, EntropyLDiversity):
            assert pycanon_entropy_l(out, qi, ["s"]) >= int(m.l) - 1  # pycanon truncates exp(entropy)
        elif isinstance(m, TCloseness) and sens["s"].nunique() > 1:
            assert pycanon_t(out, qi, ["s"]) <= m.t + 1e-9


@pytest.mark.parametrize("run", PRIVACY_RUNS, ids=run_id)
def test_privacy_contract(run):
    """A method that honours privacy models returns classes (the suppressed
    records one more) that satisfy them, by the verifier and by pycanon."""
    from hieranon.privacy import PrivacyError
    from random_tables import private_problems

    method, params = run
    algo = registry.make_algorithm(method, **params)

    @settings(max_examples=15, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(case=private_problems(max_rows=max_rows(method, 30), feasible=False), data=st.data())
    def check(case, data):
        problem, sens, models = case
        enc = problem.table
        problem.class_labels = np.asarray(data.draw(st.lists(st.sampled_from(["yes", "no"]), min_size=enc.n_rows,
                                                             max_size=enc.n_rows)))
        feasible = all(b.ok_hist(b.table_hist())[0] for b in problem.privacy)
        if not feasible:
            with pytest.raises(PrivacyError):
                algo.solve(problem)
            return
        sol = algo.solve(problem)
        rep = verify_codes(enc, sol.codes, problem.requirements, sol.suppressed, privacy=problem.privacy)
        assert not rep.by_kind("l-diversity") and not rep.by_kind("t-closeness"), rep.summary()
        # full-domain suppression may leave a '*' class of fewer than k records (see
        # test_full_domain_suppression_keeps_the_contract): k is checked without it
        assert rep.ok or "suppression_limit" in params, rep.summary()
        check_with_pycanon(problem, sol.codes, sens, models)

    check()


@pytest.mark.parametrize("method", METHODS)
def test_privacy_through_the_public_api(method):
    """hieranon.anonymize with a privacy model: verified output from a method
    that honours it, a one-line refusal from one that does not."""
    from hieranon.privacy import DistinctLDiversity

    rng = np.random.default_rng(7)
    hs = {"a0": balanced("a0", [2, 3]), "a1": balanced("a1", [3])}
    n = max_rows(method, 24)
    df = pd.DataFrame({"id": range(n), **{q: [h.labels[v] for v in rng.choice(h.leaves, n)] for q, h in hs.items()},
                       "note": range(n), "cls": rng.choice(["yes", "no"], n), "s": rng.choice(["x", "y", "z"], n)})
    run = lambda: hieranon.anonymize(df, list(hs), hs, k=3, method=method, seed=0,  # noqa: E731
                                     class_column="cls" if needs_class(method) else None, identifiers=["id"],
                                     params=BASE_PARAMS.get(method, {}), privacy=[DistinctLDiversity("s", 2)])
    if registry.method_tags(method).privacy_models:
        res = run()
        assert res.verification.ok
        assert pycanon_l(res.data.astype(str), list(hs), ["s"]) >= 2
    else:
        with pytest.raises(ValueError) as err:
            run()
        assert "\n" not in str(err.value) and f"method {method!r} does not support" in str(err.value)
