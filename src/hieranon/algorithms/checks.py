"""The contract every anonymisation method keeps, as named checks anyone can run.

In the manner of scikit-learn's estimator checks (``check_estimator``,
``parametrize_with_checks``; Buitinck et al. 2013), :func:`method_checks`
yields the checks that apply to a method -- chosen by its tags
(:mod:`hieranon.algorithms.tags`) and nothing else -- :func:`check_method`
runs them all, and :func:`parametrize_with_checks` makes one pytest case of
each, for a registered method, a wrapper (a record budget, a partitioned
run) or a method of one's own::

    from hieranon.algorithms.checks import parametrize_with_checks

    @parametrize_with_checks([MyMethod(), with_budget(MyMethod(), parse_budget("10%"))])
    def test_my_method(method, check):
        check(method)

The checks solve small random problems (balanced hierarchies, record counts,
several requirements where the tags allow them, privacy models) seeded
from a fixed sequence, so a failure repeats. An output is checked by
:mod:`hieranon.algorithms.contract`, in plain Python, independently of the
library's verifier: one row per input row in order, every cell the original
value or one of its ancestors, suppressed rows at the root, every
requirement met; the same problem gives the same output; a method that
takes no seed gives the same output for every seed. Parameters round-trip
(:meth:`~hieranon.algorithms.base.Algorithm.get_params`,
:meth:`~hieranon.algorithms.base.Algorithm.set_params`,
:func:`~hieranon.algorithms.base.clone`) and bad ones are refused naming
them; problems the tags rule out are refused in one line before any work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd

from ..core.cost import CostModel
from ..core.requirements import Requirement
from ..core.table import EncodedTable
from ..core.tree import Hierarchy
from ..evaluation.verify import verify_codes
from ..privacy import DistinctLDiversity, EntropyLDiversity, PrivacyError, RecursiveCLDiversity, TCloseness
from .base import Algorithm, Problem, clone
from .contract import check_solution
from .params import AnyOf, Interval, Options, as_constraint
from .registry import DEFAULT_METHOD
from .suppression import BudgetedSuppression, parse_budget, with_budget
from .tags import Tags, get_tags

__all__ = ["Check", "method_checks", "check_method", "parametrize_with_checks", "random_problem",
           "balanced_hierarchy"]

#: Random problems each output check solves
N_PROBLEMS = 6
#: Rows of a random problem (a dozen for an exact method, whose work is exponential)
MAX_ROWS, EXACT_ROWS = 30, 12


@dataclass(frozen=True)
class Check:
    """One named check: ``check(method)`` raises AssertionError when the method breaks it."""

    name: str
    function: Callable[[Algorithm], None]

    def __call__(self, method: Algorithm) -> None:
        self.function(method)

    def __repr__(self) -> str:
        return self.name


# ------------------------------------------------------------------ random problems
def balanced_hierarchy(name: str, branching: list[int]) -> Hierarchy:
    """A leaf-balanced tree: the root has ``branching[0]`` children, each of
    those ``branching[1]``, ... (height ``len(branching) + 1``); labels
    ``name0``, ``name0.1``..."""
    labels, parent, level = ["*"], [-1], [0]
    for b in branching:
        nxt = []
        for p in level:
            for i in range(b):
                labels.append(f"{labels[p]}.{i}" if p else f"{name}{i}")
                parent.append(p)
                nxt.append(len(labels) - 1)
        level = nxt
    return Hierarchy(name, labels, np.array(parent, dtype=np.int32))


def random_problem(seed: int, max_rows: int = MAX_ROWS, *, several: bool = False, privacy: bool = False) -> Problem:
    """A small random problem drawn from ``seed``: 1-3 QIs over balanced
    hierarchies of height 2-4, 5..``max_rows`` rows with record counts 1-3
    on odd seeds, k in 2..5, a binary class column; with ``several``, one
    requirement per half of the QIs (when there are two or more); with
    ``privacy``, one or two privacy models on a sensitive column of 1-4
    values (not always satisfiable by the whole table)."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 4))
    hs = [balanced_hierarchy(f"a{j}", [int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 4)))])
          for j in range(m)]
    n = int(rng.integers(5, max_rows + 1))
    codes = np.stack([rng.choice(h.leaves, n) for h in hs], axis=1).astype(np.int32)
    counts = rng.integers(1, 4, n).astype(np.int64) if seed % 2 else np.ones(n, dtype=np.int64)
    table = EncodedTable(codes, hs, [h.name for h in hs], counts)
    k = int(rng.integers(2, max(3, min(6, int(counts.sum()) + 1))))
    qis = tuple(table.qi_names)
    reqs = [Requirement(qis, k)]
    if several and m > 1:
        reqs = [Requirement(qis[: m // 2], k), Requirement(qis[m // 2:], max(2, k - 1))]
    problem = Problem(table, reqs, CostModel.build(hs), seed=int(rng.integers(0, 2**31 - 1)),
                      class_labels=rng.choice(np.array(["yes", "no"]), n))
    if privacy:
        numeric = bool(rng.integers(0, 2))
        idx = rng.integers(0, int(rng.integers(1, 5)), n)
        sens = pd.DataFrame({"s": idx if numeric else [f"v{i}" for i in idx]})
        models = []
        for _ in range(int(rng.integers(1, 3))):
            kind = rng.choice(["distinct", "entropy", "recursive", "t"])
            if kind == "distinct":
                models.append(DistinctLDiversity("s", int(rng.integers(1, 4))))
            elif kind == "entropy":
                models.append(EntropyLDiversity("s", float(rng.choice([1.2, 1.5, 2.0]))))
            elif kind == "recursive":
                models.append(RecursiveCLDiversity("s", float(rng.choice([2.0, 3.5])), 2))
            else:
                models.append(TCloseness("s", float(rng.choice([0.15, 0.25, 0.4])), "ordered" if numeric else "equal"))
        problem.privacy = [model.bind(sens, counts) for model in models]
    return problem


def _rows(tags: Tags) -> int:
    return EXACT_ROWS if tags.exact else min(MAX_ROWS, tags.max_records or MAX_ROWS)


def _own_suppression(method: Algorithm) -> bool:
    """True when the method's own suppression setting (its tags say which) is
    on: its suppressed records may then print a '*' class of fewer than k
    (the full-domain methods' MaxSup, Samarati 2001; KACA's threshold)."""
    setting = get_tags(method).suppression.setting
    return setting is not None and method.get_params().get(setting) not in (None, 0, 0.0)


def _same_params(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Equal parameters, a nested method compared by its class and parameters."""
    if set(a) != set(b):
        return False
    for name, x in a.items():
        y = b[name]
        if isinstance(x, Algorithm) or isinstance(y, Algorithm):
            if type(x) is not type(y) or not _same_params(x.get_params(), y.get_params()):
                return False
        elif not (x == y):
            return False
    return True


def _solve(method: Algorithm, problem: Problem):
    return clone(method).solve(problem)


# ------------------------------------------------------------------ the checks
def check_tags(method: Algorithm) -> None:
    """Typed tags that agree with the parameters: a suppression setting is a
    parameter of the method, a budget is either native (to that setting) or
    spent by trimming, never both native and refused."""
    tags = get_tags(method)
    assert isinstance(tags, Tags), f"{method!r}: tags {tags!r} are not a Tags"
    assert tags == get_tags(clone(method)), "a clone has other tags"
    s = tags.suppression
    if s.setting is not None:
        assert s.setting in {n.rpartition("__")[2] for n in method.get_params(deep=True)}, \
            f"suppression setting {s.setting!r} is not a parameter"
    assert not s.native or s.setting is not None, "a native budget needs the setting it becomes"
    assert not (s.native and not s.takes_budget), "a budget cannot be both native and refused"
    assert tags.max_records is None or tags.max_records >= 1


def check_get_params(method: Algorithm) -> None:
    """``get_params`` gives exactly the declared parameters, values the
    declaration accepts, and the repr shows them."""
    params = method.get_params()
    assert set(params) == set(type(method).parameters), f"get_params {sorted(params)} is not the declaration"
    for name, value in params.items():
        assert as_constraint(type(method).parameters[name]).accepts(value), f"{name}={value!r} is not valid"
    text = repr(method)
    assert text.startswith(type(method).__name__ + "("), text
    for name, value in params.items():
        assert f"{name}={value!r}" in text, f"repr {text} does not show {name}"
    deep = method.get_params(deep=True)
    for name, value in params.items():
        assert name in deep
        if isinstance(value, Algorithm):
            for sub, v in value.get_params(deep=True).items():
                assert deep[f"{name}__{sub}"] == v or isinstance(v, Algorithm)


def check_clone(method: Algorithm) -> None:
    """``clone`` builds a new method of the same class with equal parameters,
    nested methods and mutable values copied, not shared."""
    copy = clone(method)
    assert copy is not method and type(copy) is type(method)
    assert _same_params(copy.get_params(), method.get_params()), f"{copy!r} != {method!r}"
    for name, value in method.get_params().items():
        if isinstance(value, (Algorithm, dict, list)):
            assert copy.get_params()[name] is not value, f"clone shares {name}"


def check_rebuild_from_params(method: Algorithm) -> None:
    """``type(m)(**m.get_params())`` builds a method with the same parameters."""
    again = type(method)(**method.get_params())
    assert _same_params(again.get_params(), method.get_params()), f"{again!r} != {method!r}"
    assert get_tags(again) == get_tags(method)


def check_set_params(method: Algorithm) -> None:
    """``set_params`` with the method's own parameters returns it unchanged;
    a nested parameter (``inner__name``) reaches the nested method; an
    unknown name or a refused value raises ValueError naming it and
    changes nothing."""
    m = clone(method)
    assert m.set_params(**m.get_params()) is m
    assert _same_params(m.get_params(), method.get_params())
    nested = {n: v for n, v in method.get_params(deep=True).items() if "__" in n and not isinstance(v, Algorithm)}
    if nested:
        m.set_params(**nested)
        assert _same_params(m.get_params(), method.get_params())
    before = m.get_params(deep=True)
    try:
        m.set_params(no_such_parameter=1)
    except ValueError as exc:
        assert "no_such_parameter" in str(exc), exc
    else:
        raise AssertionError("set_params(no_such_parameter=1) was accepted")
    for name in type(m).parameters:
        for bad in _bad_values(type(m).parameters[name]):
            try:
                m.set_params(**{name: bad})
            except ValueError as exc:
                assert name in str(exc), f"refusal of {name}={bad!r} does not name it: {exc}"
            else:
                raise AssertionError(f"set_params({name}={bad!r}) was accepted")
            assert _same_params(m.get_params(deep=True), before), f"a refused {name} changed the method"


def check_parameters_refused_at_construction(method: Algorithm) -> None:
    """The class itself refuses a bad value of every declared parameter (a
    wrong type; a number out of range; an unknown option), naming it."""
    params = method.get_params()
    for name, spec in type(method).parameters.items():
        for bad in _bad_values(spec):
            try:
                type(method)(**{**params, name: bad})
            except ValueError as exc:
                assert name in str(exc), f"refusal of {name}={bad!r} does not name it: {exc}"
            else:
                raise AssertionError(f"{type(method).__name__}({name}={bad!r}) was accepted")


def check_numpy_scalars(method: Algorithm) -> None:
    """A number or boolean parameter given as a numpy scalar is accepted and
    stored as the plain Python value (outputs cannot depend on where a number came from)."""
    m = clone(method)
    for name, value in method.get_params().items():
        if isinstance(value, bool):
            given = np.bool_(value)
        elif isinstance(value, Integral):
            given = np.int64(value)
        elif isinstance(value, Real):
            given = np.float64(value)
        else:
            continue
        m.set_params(**{name: given})
        got = m.get_params()[name]
        assert got == value and type(got) is type(value), f"{name}={given!r} stored as {got!r}"


def check_output_contract(method: Algorithm) -> None:
    """On random problems (several requirements when the tags allow them):
    one row per input row, in order; every cell the original value or an
    ancestor; suppressed rows at the root; every requirement met (the
    suppressed records' '*' class too, unless the method's own suppression
    setting is on); the same problem solved again gives the same output."""
    tags = get_tags(method)
    for seed in range(N_PROBLEMS):
        problem = random_problem(seed, _rows(tags), several=tags.several_requirements and seed % 3 == 1)
        m = clone(method)
        sol = m.solve(problem)
        check_solution(problem, sol, exempt_suppressed=_own_suppression(method))
        again = m.solve(problem)  # nothing a run leaves on the method changes the next
        assert np.array_equal(sol.codes, again.codes) and np.array_equal(sol.suppressed, again.suppressed), \
            f"problem {seed}: the same problem gave another output"


def check_seed(method: Algorithm) -> None:
    """A method whose tags take no seed gives the same output for every
    seed; a randomised one keeps the contract for every seed."""
    tags = get_tags(method)
    problem = random_problem(N_PROBLEMS, _rows(tags))
    first = _solve(method, problem)
    for seed in (1, 7, 2**31 - 2):
        problem.seed = seed
        sol = _solve(method, problem)
        check_solution(problem, sol, exempt_suppressed=_own_suppression(method))
        if not tags.randomised:
            assert np.array_equal(sol.codes, first.codes) and np.array_equal(sol.suppressed, first.suppressed), \
                f"seed {seed} changed the output of a method without one"


def check_privacy_models(method: Algorithm) -> None:
    """A method whose tags honour privacy models returns classes (the
    suppressed records one more) that satisfy them, or refuses models the
    whole table violates (PrivacyError); one that does not refuses them in
    one line naming the methods that do."""
    tags = get_tags(method)
    for seed in range(N_PROBLEMS):
        problem = random_problem(100 + seed, _rows(tags), privacy=True)
        feasible = all(b.ok_hist(b.table_hist())[0] for b in problem.privacy)
        m = clone(method)
        if not tags.privacy_models:
            try:
                m.solve(problem)
            except ValueError as exc:
                text = str(exc)
                assert "\n" not in text and "does not support l-diversity / t-closeness" in text, \
                    f"refusal {text!r} does not say 'does not support l-diversity / t-closeness'"
                assert f"{DEFAULT_METHOD} (default)" in text, text
                continue
            raise AssertionError("privacy models accepted by a method whose tags do not honour them")
        if not feasible:
            try:
                m.solve(problem)
            except PrivacyError:
                continue
            raise AssertionError("privacy models the whole table violates were not refused")
        sol = m.solve(problem)
        rep = verify_codes(problem.table, sol.codes, problem.requirements, sol.suppressed, privacy=problem.privacy)
        assert not rep.by_kind("l-diversity") and not rep.by_kind("t-closeness"), rep.summary()
        assert rep.ok or _own_suppression(method), rep.summary()
        check_solution(problem, sol, exempt_suppressed=True)


def _refused_before_work(method: Algorithm, problem: Problem, expected: str) -> None:
    m = clone(method)

    def no_work(*args, **kwargs):
        raise AssertionError("work started")

    m._solve = no_work  # the template's step after the checks
    try:
        m.solve(problem)
    except ValueError as exc:
        text = str(exc)
        assert "\n" not in text and expected in text, f"refusal {text!r} does not say {expected!r}"
        return
    raise AssertionError(f"not refused: {expected}")


def check_refusals(method: Algorithm) -> None:
    """What the tags rule out is refused in one line before any work: privacy
    models the whole table violates (or any, for a method without them),
    several requirements (for a method with one k), a missing class column
    (for a method that needs one)."""
    tags = get_tags(method)
    h = balanced_hierarchy("a0", [2, 2])
    table = EncodedTable(np.array([[v] for v in h.leaves] * 2, dtype=np.int32), [h], ["a0"],
                         np.ones(8, dtype=np.int64))
    problem = Problem(table, [Requirement(("a0",), 2)], CostModel.build([h]), seed=0,
                      class_labels=np.array(["yes", "no"] * 4))
    problem.privacy = [DistinctLDiversity("s", 3).bind(pd.DataFrame({"s": ["x", "y"] * 4}))]
    _refused_before_work(method, problem, "distinct 3-diversity of 's' cannot be met" if tags.privacy_models
                         else "does not support l-diversity / t-closeness")
    if not tags.several_requirements:
        hs = [balanced_hierarchy("a0", [2]), balanced_hierarchy("a1", [2])]
        two = EncodedTable(np.array([[h.leaves[i % 2] for h in hs] for i in range(8)], dtype=np.int32), hs,
                           ["a0", "a1"], np.ones(8, dtype=np.int64))
        several = Problem(two, [Requirement(("a0",), 2), Requirement(("a1",), 3)], CostModel.build(hs), seed=0,
                          class_labels=np.array(["yes", "no"] * 4))
        _refused_before_work(method, several, "supports one k over all quasi-identifiers")
    if tags.needs_class_column:
        unlabelled = Problem(table, [Requirement(("a0",), 2)], CostModel.build([h]), seed=0)
        _refused_before_work(method, unlabelled, "needs a class column")


def check_budget(method: Algorithm) -> None:
    """A record budget is refused, in one line naming the option, by a method
    whose tags say it cannot suppress or beside its own suppression setting;
    otherwise the budgeted method rebuilds from its parameters and the
    records it suppresses stay within the budget and form a class of k."""
    tags = get_tags(method)
    budget = parse_budget("25%")
    if not tags.suppression.takes_budget or _own_suppression(method):
        try:
            with_budget(method, budget)
        except ValueError as exc:
            assert "\n" not in str(exc) and str(exc).startswith("max_suppression:"), exc
            return
        raise AssertionError("a budget was accepted against the tags")
    budgeted = with_budget(method, budget)
    assert isinstance(budgeted, BudgetedSuppression) and get_tags(budgeted) == tags
    for seed in range(2):
        problem = random_problem(200 + seed, _rows(tags))
        sol = _solve(budgeted, problem)
        check_solution(problem, sol)
        n = int(problem.table.counts[sol.suppressed].sum())
        assert n <= budget.limit(problem.table.n_records), f"{n} records suppressed beyond the budget"


#: Every check, in the order they run (cheapest first)
CHECKS: tuple[Callable[[Algorithm], None], ...] = (
    check_tags, check_get_params, check_clone, check_rebuild_from_params, check_set_params,
    check_parameters_refused_at_construction, check_numpy_scalars, check_refusals, check_output_contract,
    check_seed, check_privacy_models, check_budget)


def method_checks(method: Algorithm) -> Iterator[Check]:
    """The checks that apply to ``method`` (a budget is not checked on a method that already has one)."""
    for function in CHECKS:
        if function is check_budget and isinstance(method, BudgetedSuppression):
            continue
        yield Check(function.__name__, function)


def check_method(method: Algorithm) -> None:
    """Run every check on ``method``; AssertionError naming the first that fails."""
    for check in method_checks(method):
        try:
            check(method)
        except AssertionError as exc:
            raise AssertionError(f"{method!r} fails {check.name}: {exc}") from exc


def method_id(method: Algorithm) -> str:
    """A short test id: the method's name and the parameters that differ from their defaults."""
    label = method.name or type(method).__name__
    if isinstance(method, BudgetedSuppression):
        return f"{method_id(method.inner)}+max_suppression={method.budget}"
    try:
        plain = type(method)().get_params()
    except (TypeError, ValueError):
        plain = {}
    changed = {k: v for k, v in method.get_params().items() if k not in plain or plain[k] != v}
    return label + "".join(f"-{k}={v}" for k, v in changed.items())


def parametrize_with_checks(methods: Iterable[Algorithm]) -> Any:
    """A ``pytest.mark.parametrize("method, check", ...)`` decorator: one case
    per method and check that applies to it, with readable ids
    (``kaca1-suppression_threshold=0.5-check_output_contract``)."""
    import pytest

    cases = [pytest.param(m, c, id=f"{method_id(m)}-{c.name}") for m in methods for c in method_checks(m)]
    return pytest.mark.parametrize("method, check", cases)


def _bad_values(spec: Any) -> list:
    """Values a declared constraint must refuse: an object of no accepted
    type, a number just outside an interval, an option not offered."""
    constraint = as_constraint(spec)
    parts = constraint.constraints if isinstance(constraint, AnyOf) else (constraint,)
    out: list = [_Junk()]
    for c in parts:
        if isinstance(c, Interval) and c.low is not None:
            out.append(c.low - 1)
        if isinstance(c, Options):
            out.append("no-such-option")
    return [v for v in out if not constraint.accepts(v)]


class _Junk:
    """A value of no type any parameter takes."""

    def __repr__(self) -> str:
        return "<junk>"

