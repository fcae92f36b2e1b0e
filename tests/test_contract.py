"""The contract every registered method keeps (in the manner of scikit-learn's
estimator checks): run over ``registry.available_methods()`` through the
public API only, on small random tables and hierarchies.

The output is checked by :mod:`contract` (plain Python, no library code);
parameters are taken from ``registry.method_parameters``. A method that
breaks the contract today is marked ``xfail(strict=True)`` with the reason.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hieranon
from contract import check_codes, check_frame
from hieranon.algorithms import registry
from oracles import pycanon_entropy_l, pycanon_k, pycanon_l, pycanon_t
from random_tables import balanced, random_frames

METHODS = registry.available_methods()
#: methods that need a class column
NEEDS_CLASS = {"tds", "bug", "dbca-cm"}
#: methods that are exponential in the table (kept to a dozen rows)
SMALL_ONLY = {"mingen"}
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


def run_id(run) -> str:
    method, params = run
    return method + "".join(f"-{k}={v}" for k, v in params.items())


def anonymize(df, hs, k, seed, count_column, method, params, requirements=None):
    return hieranon.anonymize(df, list(hs), hs, k=None if requirements else k, requirements=requirements,
                              method=method, seed=seed, count_column=count_column,
                              class_column="cls" if method in NEEDS_CLASS else None,
                              identifiers=["id"], params=params)


def requirements_for(method, hs, k, draw_split: bool):
    """One k over every QI, or (for a method taking several requirements) one
    per half of the QIs."""
    qis = list(hs)
    if draw_split and len(qis) > 1 and registry.make_algorithm(method).multi_requirement:
        return [(qis[: len(qis) // 2], k), (qis[len(qis) // 2:], max(2, k - 1))]
    return None


# ------------------------------------------------------------ the output contract
@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_output_contract(run):
    method, params = run

    @settings(max_examples=20, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(case=random_frames(max_rows=12 if method in SMALL_ONLY else 30), split=st.booleans())
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
    n = 10 if method in SMALL_ONLY else 24
    df = pd.DataFrame({"id": range(n), **{q: [h.labels[v] for v in rng.choice(h.leaves, n)] for q, h in hs.items()},
                       "note": range(n), "cls": rng.choice(["yes", "no"], n)})
    res = anonymize(df, hs, 3, 0, None, method, BASE_PARAMS.get(method, {}))
    kept = res.data[~np.asarray(res.suppressed)]
    assert pycanon_k(kept.astype(str), list(hs)) >= 3


# ------------------------------------------------------------ parameters
class Junk:
    """A value of no type any parameter takes (with a stable repr for test ids)."""

    def __repr__(self) -> str:
        return "<junk>"


def annotation_text(p: inspect.Parameter) -> str:
    a = p.annotation
    if a is inspect.Parameter.empty:
        return ""
    return a if isinstance(a, str) else getattr(a, "__name__", str(a))


def bad_values(method: str, name: str, p: inspect.Parameter) -> list:
    """Values the parameter must refuse: a wrong type, and for a number a negative one."""
    annotation, default = annotation_text(p), p.default
    first = annotation.split("|")[0].strip()
    if isinstance(default, bool) or first == "bool":
        return ["maybe"]
    if (isinstance(default, (int, float)) and not isinstance(default, bool)) or first in ("int", "float"):
        return ["abc", -1]
    if first in ("dict", "list[str]") or name == "scheduler":  # scheduler: a free-form address
        return [5]
    if "str" in annotation:
        return ["no-such-option"]
    return [Junk()]


#: (method, parameter, value) refused today without naming the parameter, or accepted
KNOWN_BAD: dict = {}  # (method, parameter, value) -> why it is not refused yet (xfail, strict)


def bad_parameter_cases():
    for method in METHODS:
        for name, p in registry.method_parameters(method).items():
            for value in bad_values(method, name, p):
                marks = ()
                if (method, name, value) in KNOWN_BAD:
                    marks = pytest.mark.xfail(strict=True, reason=KNOWN_BAD[method, name, value])
                yield pytest.param(method, name, value, marks=marks, id=f"{method}-{name}={value!r}")


@pytest.mark.parametrize("method, name, value", list(bad_parameter_cases()))
def test_invalid_parameter_is_refused_naming_it(method, name, value):
    with pytest.raises(ValueError, match=name):
        registry.make_algorithm(method, **{name: value})


@pytest.mark.parametrize("method", METHODS)
def test_unknown_parameter_is_refused_naming_it(method):
    with pytest.raises(ValueError, match="no_such_parameter"):
        registry.make_algorithm(method, no_such_parameter=1)


@pytest.mark.parametrize("run", RUNS, ids=run_id)
def test_get_params_round_trips_and_repr_shows_them(run):
    method, params = run
    algo = registry.make_algorithm(method, **params)
    got = algo.get_params()
    for name, value in params.items():
        assert got[name] == value
    assert registry.make_algorithm(method, **got).get_params() == got
    text = repr(algo)
    assert text.startswith(type(algo).__name__ + "(")
    for name, value in got.items():
        assert f"{name}={value!r}" in text


# ------------------------------------------------------------ the checker itself
def test_the_checker_catches_each_kind_of_breach():
    """tests/contract.py rejects every breach it is meant to catch (else the
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
#: runs of the privacy contract: every method, and the lattice methods with suppression
PRIVACY_RUNS = RUNS + [(m, {"suppression_limit": 0.3}) for m in ("fulldomain", "allmin", "datafly") if m in METHODS]


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
    records one more) that satisfy them, by the verifier and by pycanon; one
    that does not refuses them in one line naming the methods that do."""
    from hieranon.evaluation.verify import verify_codes
    from hieranon.privacy import PrivacyError
    from random_tables import private_problems

    method, params = run
    algo = registry.make_algorithm(method, **params)

    @settings(max_examples=15, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(case=private_problems(max_rows=12 if method in SMALL_ONLY else 30, feasible=False), data=st.data())
    def check(case, data):
        problem, sens, models = case
        enc = problem.table
        problem.class_labels = np.asarray(data.draw(st.lists(st.sampled_from(["yes", "no"]), min_size=enc.n_rows,
                                                             max_size=enc.n_rows)))
        feasible = all(b.ok_hist(b.table_hist())[0] for b in problem.privacy)
        if not type(algo).privacy_models:
            with pytest.raises(ValueError) as err:
                algo.solve(problem)
            text = str(err.value)
            assert "\n" not in text and f"method {method!r} does not support" in text and "kaca+ (default)" in text
            return
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
def test_impossible_privacy_model_is_refused_before_any_work(method, monkeypatch):
    """Every method refuses a model the whole table violates (or models it
    does not support) without starting its work."""
    from hieranon.core.table import EncodedTable
    from hieranon.privacy import DistinctLDiversity
    from random_tables import make_problem

    h = balanced("a0", [2, 2])
    enc = EncodedTable(np.array([[v] for v in h.leaves] * 2, dtype=np.int32), [h], ["a0"],
                       np.ones(8, dtype=np.int64))
    problem = make_problem(enc, 2, 0)
    problem.class_labels = np.array(["yes", "no"] * 4)
    sens = pd.DataFrame({"s": ["x", "y"] * 4})
    problem.privacy = [DistinctLDiversity("s", 3).bind(sens)]
    algo = registry.make_algorithm(method, **BASE_PARAMS.get(method, {}))

    def no_work(*a, **kw):
        raise AssertionError("work started")

    monkeypatch.setattr(type(algo), "_solve", no_work)
    with pytest.raises(ValueError) as err:
        algo.solve(problem)
    text = str(err.value)
    assert "\n" not in text
    assert ("distinct 3-diversity of 's' cannot be met" in text) == type(algo).privacy_models


@pytest.mark.parametrize("method", METHODS)
def test_privacy_through_the_public_api(method):
    """hieranon.anonymize with a privacy model: verified output from a method
    that honours it, a one-line refusal from one that does not."""
    from hieranon.algorithms.registry import method_class
    from hieranon.privacy import DistinctLDiversity

    rng = np.random.default_rng(7)
    hs = {"a0": balanced("a0", [2, 3]), "a1": balanced("a1", [3])}
    n = 10 if method in SMALL_ONLY else 24
    df = pd.DataFrame({"id": range(n), **{q: [h.labels[v] for v in rng.choice(h.leaves, n)] for q, h in hs.items()},
                       "note": range(n), "cls": rng.choice(["yes", "no"], n), "s": rng.choice(["x", "y", "z"], n)})
    run = lambda: hieranon.anonymize(df, list(hs), hs, k=3, method=method, seed=0,  # noqa: E731
                                     class_column="cls" if method in NEEDS_CLASS else None, identifiers=["id"],
                                     params=BASE_PARAMS.get(method, {}), privacy=[DistinctLDiversity("s", 2)])
    if method_class(method).privacy_models:
        res = run()
        assert res.verification.ok
        assert pycanon_l(res.data.astype(str), list(hs), ["s"]) >= 2
    else:
        with pytest.raises(ValueError) as err:
            run()
        assert "\n" not in str(err.value) and f"method {method!r} does not support" in str(err.value)
