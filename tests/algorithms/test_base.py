"""The algorithm interface: declared parameters and their constraints, the
solve template, typed details and their plain-dict view."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import pytest

from hieranon.algorithms.base import Algorithm, Details, Problem, Solution
from hieranon.algorithms.details import KACADetails, PartitionedDetails
from hieranon.algorithms.params import Boolean, Interval, NoneValue, Options, as_constraint, validate_parameters
from hieranon.algorithms.registry import (
    available_methods,
    make_algorithm,
    method_class,
    method_parameters,
    methods_accepting,
)


# ------------------------------------------------------------------ constraint types
@pytest.mark.parametrize("value", [3, np.int64(3), np.int32(3), np.uint8(3)])
def test_integer_interval_accepts_python_and_numpy_integers(value):
    c = Interval(Integral, 1, None)
    assert c.accepts(value)
    out = c.convert(value)
    assert out == 3 and type(out) is int


@pytest.mark.parametrize("value", [True, False, np.bool_(True), 3.0, np.float64(3.0), "3", None])
def test_integer_interval_refuses_bools_floats_and_strings(value):
    assert not Interval(Integral, 0, None).accepts(value)


@pytest.mark.parametrize("value", [0.5, np.float32(0.5), np.float64(0.5), 1, np.int64(1), 0])
def test_real_interval_accepts_numbers_and_converts_to_float(value):
    c = Interval(Real, 0, 1)
    assert c.accepts(value)
    assert type(c.convert(value)) is float and c.convert(value) == float(value)


@pytest.mark.parametrize("value", [True, np.bool_(False), float("nan"), np.float64("nan"), -0.1, 1.5, "0.5"])
def test_real_interval_refuses_bools_nan_and_out_of_range(value):
    assert not Interval(Real, 0, 1).accepts(value)


def test_interval_ends_open_or_closed():
    assert not Interval(Real, 0, 1, closed="right").accepts(0)
    assert Interval(Real, 0, 1, closed="right").accepts(1)
    assert not Interval(Real, 0, None, closed="neither").accepts(0.0)
    assert Interval(Real, 0, 1, closed="left").accepts(0) and not Interval(Real, 0, 1, closed="left").accepts(1)
    assert str(Interval(Integral, 1, None).describe()) == "a whole number >= 1"
    assert Interval(Real, 0, 1, closed="right").describe() == "a number in (0, 1]"


def test_boolean_accepts_numpy_bool_not_integers():
    b = as_constraint(bool)
    assert isinstance(b, Boolean)
    assert b.accepts(True) and b.accepts(np.bool_(False))
    assert type(b.convert(np.bool_(True))) is bool
    assert not b.accepts(1) and not b.accepts(0) and not b.accepts("true")


def test_options_and_union_with_none():
    c = Options("a", "b") | None
    assert c.accepts("a") and c.accepts(None)
    assert not c.accepts("c") and not c.accepts(1)
    assert c.describe() == "one of 'a', 'b' or None"
    assert (bool | NoneValue()).accepts(None)


def test_validate_parameters_names_method_parameter_value_and_what_is_allowed():
    declared = {"restarts": Interval(Integral, 1, None) | None}
    with pytest.raises(ValueError) as exc:
        validate_parameters("demo", declared, {"restarts": 0})
    msg = str(exc.value)
    assert "'demo'" in msg and "restarts=0" in msg and "a whole number >= 1 or None" in msg
    with pytest.raises(ValueError, match=r"invalid parameter\(s\) bogus, other: it takes restarts"):
        validate_parameters("demo", declared, {"bogus": 1, "other": 2})


# ------------------------------------------------------------------ on the real methods
def test_every_method_declares_exactly_its_constructor_parameters():
    for m in available_methods():
        algo = make_algorithm(m)
        assert set(algo.get_params()) == set(type(algo).parameters), m
        assert set(method_parameters(m)) == set(type(algo).parameters), m
        assert repr(algo).startswith(type(algo).__name__ + "(")
        # the defaults themselves satisfy the declaration
        validate_parameters(m, type(algo).parameters, algo.get_params())


def test_numpy_scalars_accepted_and_normalised():
    algo = make_algorithm("kaca+", restarts=np.int64(3), refine=np.bool_(False), stub_weight=np.float32(0.5))
    assert algo.restarts == 3 and type(algo.restarts) is int
    assert algo.refine is False
    assert type(algo.stub_weight) is float
    hm = make_algorithm("heuristicmin", max_tables=np.int32(10))
    assert type(hm.max_tables) is int
    assert type(make_algorithm("tds", max_steps=np.uint16(4)).max_steps) is int


@pytest.mark.parametrize("method, name, value, allowed", [
    ("kaca+", "restarts", -1, "a whole number >= 1 or None"),
    ("kaca+", "restarts", True, "a whole number >= 1 or None"),
    ("kaca+", "construction", "grow", "one of 'sweep', 'growth', 'cheapest'"),
    ("heuristicmin", "max_tables", 2.0, "a whole number >= 1"),
    ("fulldomain", "suppression_limit", 1.5, "a number in [0, 1]"),
    ("kaca2", "max_inconsistency", 0, "a number in (0, 1]"),
    ("kaca1", "fast", 1, "true or false"),
    ("mondrian", "numeric", "age", "a list or a tuple or None"),
])
def test_bad_values_refused_at_construction_naming_the_parameter(method, name, value, allowed):
    with pytest.raises(ValueError) as exc:
        make_algorithm(method, **{name: value})
    msg = str(exc.value)
    assert f"method {method!r}" in msg and f"{name}={value!r}" in msg and allowed in msg
    # the class itself validates too, not only the registry
    klass = type(make_algorithm(method))
    with pytest.raises(ValueError, match=name):
        klass(**{name: value})


def test_unknown_parameter_refused_naming_it():
    with pytest.raises(ValueError, match=r"method 'kaca1': invalid parameter\(s\) restarts: it takes fast"):
        make_algorithm("kaca1", restarts=2)


def test_methods_accepting_reads_the_declarations():
    assert set(methods_accepting("suppression_threshold")) == {"kaca1", "kaca2"}
    assert "kaca+" in methods_accepting("restarts")


# ------------------------------------------------------------------ template and details
class _Echo(Algorithm):
    name = "echo"
    parameters = {"times": Interval(Integral, 0, None)}

    def __init__(self, times: int = 1):
        self.calls = 0

    def _solve(self, problem: Problem) -> Solution:
        self.calls += 1
        codes = problem.table.codes.copy()
        return Solution(codes, np.zeros(len(codes), dtype=bool), PartitionedDetails(self.times, [1], "serial", "x"))


def _problem(requirements_on: tuple[str, ...]):
    import pandas as pd

    from hieranon.core.cost import CostModel
    from hieranon.core.requirements import Requirement
    from hieranon.core.table import encode
    from hieranon.hierarchies import readers as H

    df = pd.DataFrame({"a": ["x", "y", "x", "y"], "b": ["p", "p", "q", "q"]})
    hs = {c: H.suppression(c, sorted(df[c].unique())) for c in df}
    t = encode(df, ["a", "b"], hs)
    return Problem(t, [Requirement(requirements_on, 2)], CostModel.build(t.hierarchies))


def test_solve_checks_the_problem_once_then_calls_the_subclass():
    algo = _Echo(times=np.int8(2))
    assert algo.times == 2 and algo.get_params() == {"times": 2}
    sol = algo.solve(_problem(("a", "b")))
    assert algo.calls == 1 and sol.details.blocks == 2
    with pytest.raises(ValueError, match="method 'echo' supports one k over all quasi-identifiers"):
        algo.solve(_problem(("a",)))
    assert algo.calls == 1     # refused before _solve


def test_info_is_a_read_only_dict_view_of_the_details():
    d = KACADetails(merges=2, distance_sum=1.5, distance_sum_int=3, suppressed_records=0, suppressed_to_reach_k=0,
                    iterations=2, classes_in=4, classes_out=2, nodes_expanded=7, fast=True, time_loop=0.1,
                    time_total=0.2)
    sol = Solution(np.zeros((1, 1), dtype=np.int32), np.zeros(1, dtype=bool), d)
    assert sol.info["merges"] == 2 and sol.details.merges == 2
    assert "merge_log" not in sol.info            # fields that do not apply (None) are left out
    with pytest.raises(TypeError):
        sol.info["merges"] = 3
    assert dict(Solution(sol.codes, sol.suppressed).info) == {}
    assert isinstance(d, Details) and d.as_dict()["nodes_expanded"] == 7


# ------------------------------------------------------------ privacy models
def test_privacy_capability_is_declared_and_refusal_names_the_methods_that_have_it():
    from hieranon.algorithms.base import privacy_methods
    from hieranon.algorithms.registry import method_tags

    names = privacy_methods()
    assert names[0] == "kaca+"
    assert names == sorted(names, key=lambda m: m != "kaca+")
    for name in names:  # each a method name the API takes as it is
        method_class(name)
    for m in available_methods():
        assert (m in names) == method_tags(m).privacy_models


def test_a_method_without_privacy_support_refuses_in_one_line_before_any_work():
    import pandas as pd

    from hieranon.core.table import EncodedTable
    from hieranon.privacy import DistinctLDiversity
    from random_tables import balanced, make_problem

    h = balanced("a0", [2])
    enc = EncodedTable(np.array([[v] for v in h.leaves] * 2, dtype=np.int32), [h], ["a0"], np.ones(4, dtype=np.int64))
    problem = make_problem(enc, 2, 0)
    problem.privacy = [DistinctLDiversity("s", 2).bind(pd.DataFrame({"s": ["x", "y", "y", "x"]}))]

    class NoPrivacy(Algorithm):
        name = "noprivacy"

        def _solve(self, problem):
            raise AssertionError("work started")

    with pytest.raises(ValueError) as err:
        NoPrivacy().solve(problem)
    text = str(err.value)
    assert "\n" not in text and text.startswith("method 'noprivacy' does not support l-diversity / t-closeness")
    assert "kaca+ (default)" in text and "mondrian" in text


# ------------------------------------------------------------ get_params / set_params / clone
def test_a_budgeted_run_rebuilds_from_its_own_parameters():
    from hieranon.algorithms.base import clone
    from hieranon.algorithms.suppression import BudgetedSuppression, SuppressionBudget, parse_budget, with_budget

    algo = with_budget(make_algorithm("kaca+", restarts=3), parse_budget("5%"))
    params = algo.get_params()
    assert set(params) == {"inner", "max_suppression"} and params["max_suppression"] == SuppressionBudget(0.05)
    again = type(algo)(**params)
    assert isinstance(again, BudgetedSuppression) and again.name == "kaca+" and again.inner.restarts == 3
    twin = clone(algo)
    assert twin.inner is not algo.inner and twin.inner.get_params() == algo.inner.get_params()
    # what a result records stays flat: the method's own parameters and the budget as written
    assert algo.run_params() == {**make_algorithm("kaca+", restarts=3).get_params(), "max_suppression": "5%"}


def test_nested_parameters_read_and_set_with_double_underscores():
    from hieranon.algorithms.suppression import parse_budget, with_budget

    algo = with_budget(make_algorithm("kaca1"), parse_budget(12))
    deep = algo.get_params(deep=True)
    assert deep["inner__fast"] is True and deep["inner__suppression_threshold"] is None
    inner = algo.inner
    assert algo.set_params(inner__fast=np.bool_(False), max_suppression="10%") is algo
    assert algo.inner.fast is False and str(algo.budget) == "10%" and inner.fast is True  # the old inner untouched
    with pytest.raises(ValueError, match="invalid parameter inner__fast|fast='no'"):
        algo.set_params(inner__fast="no")
    with pytest.raises(ValueError, match=r"invalid parameter\(s\) outer"):
        algo.set_params(outer__fast=True)
    with pytest.raises(ValueError, match="max_suppression"):
        algo.set_params(max_suppression="lots")
    assert algo.inner.fast is False and str(algo.budget) == "10%"  # refused values change nothing


def test_set_params_validates_through_the_declaration_and_changes_nothing_when_refused():
    algo = make_algorithm("kaca+", restarts=2)
    assert algo.set_params(restarts=np.int64(4), refine=np.bool_(False)) is algo
    assert algo.restarts == 4 and type(algo.restarts) is int and algo.refine is False
    with pytest.raises(ValueError, match=r"restarts=0: expected a whole number >= 1 or None"):
        algo.set_params(refine=True, restarts=0)
    assert algo.restarts == 4 and algo.refine is False
    with pytest.raises(ValueError, match="cannot be 'partitioned'"):
        make_algorithm("partitioned").set_params(inner_method="partitioned")


def test_clone_is_unused_and_equal():
    from hieranon.algorithms.base import clone

    algo = _Echo(times=3)
    algo.solve(_problem(("a", "b")))
    twin = clone(algo)
    assert twin is not algo and twin.get_params() == {"times": 3} and twin.calls == 0
    part = make_algorithm("partitioned", method_params={"fast": False})
    copy = clone(part)
    assert copy.method_params == {"fast": False} and copy.method_params is not part.method_params
    with pytest.raises(TypeError, match="not a hieranon algorithm"):
        clone(object())
