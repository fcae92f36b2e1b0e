"""The importable contract checks: they pass on a sound method of one's own,
each fails on the breach it is meant to catch (else the runs over every
registered method could not fail), and they come as named pytest cases."""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
import pytest

from hieranon.algorithms.base import Algorithm, Problem, Solution
from hieranon.algorithms.checks import (
    check_get_params,
    check_method,
    check_output_contract,
    check_privacy_models,
    check_refusals,
    check_seed,
    check_set_params,
    check_tags,
    method_checks,
    parametrize_with_checks,
    random_problem,
)
from hieranon.algorithms.params import Interval
from hieranon.algorithms.registry import make_algorithm
from hieranon.algorithms.suppression import parse_budget, with_budget
from hieranon.algorithms.tags import SuppressionTags, Tags


class RootAll(Algorithm):
    """Every cell at the root: always k-anonymous (a sound, if useless, method)."""

    name = "rootall"
    parameters: ClassVar[dict] = {"rounds": Interval(Integral, 1, None)}
    tags = Tags(several_requirements=True)

    def __init__(self, rounds: int = 1):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""

    def _solve(self, problem: Problem) -> Solution:
        n = problem.table.n_rows
        return Solution(np.zeros_like(problem.table.codes), np.zeros(n, dtype=bool))


class Identity(RootAll):
    """Publishes the input: breaks k."""

    def _solve(self, problem):
        return Solution(problem.table.codes.copy(), np.zeros(problem.table.n_rows, dtype=bool))


class Flaky(RootAll):
    """Another (valid) output on every call."""

    def _solve(self, problem):
        self.calls = getattr(self, "calls", 0) + 1
        sol = super()._solve(problem)
        sol.suppressed[:] = self.calls % 2 == 0
        return sol


class SecretlyRandom(RootAll):
    """Reads the seed although its tags say it takes none."""

    def _solve(self, problem):
        sol = super()._solve(problem)
        sol.suppressed[:] = bool(problem.seed % 2)
        return sol


class HidesAParameter(RootAll):
    def get_params(self, deep=False):
        return {}


class AcceptsPrivacySilently(RootAll):
    """Tags without privacy models, yet no refusal."""

    def check_problem(self, problem):
        return None


class Incoherent(RootAll):
    tags = Tags(suppression=SuppressionTags(native=True))


def test_a_sound_method_of_ones_own_passes_every_check_and_with_a_budget_too():
    check_method(RootAll(rounds=2))
    check_method(with_budget(RootAll(), parse_budget(3)))


@pytest.mark.parametrize("broken, check, message", [
    (Identity(), check_output_contract, "a class has"),
    (Flaky(), check_output_contract, "the same problem gave another output"),
    (SecretlyRandom(), check_seed, "changed the output of a method without one"),
    (HidesAParameter(), check_get_params, "is not the declaration"),
    (AcceptsPrivacySilently(), check_privacy_models, "does not say 'does not support l-diversity"),
    (AcceptsPrivacySilently(), check_refusals, "does not say 'does not support l-diversity"),
    (Incoherent(), check_tags, "a native budget needs the setting"),
])
def test_each_check_catches_its_breach(broken, check, message):
    with pytest.raises(AssertionError, match=message):
        check(broken)
    with pytest.raises(AssertionError, match=r"\) fails check_"):  # the first check it breaks, named
        check_method(broken)


def test_set_params_check_catches_a_method_that_keeps_a_refused_value():
    class Lax(RootAll):
        def set_params(self, **params):
            vars(self).update(params)
            return self

    with pytest.raises(AssertionError, match="was accepted"):
        check_set_params(Lax())


def test_checks_are_named_and_chosen_per_method():
    names = [c.name for c in method_checks(make_algorithm("kaca1"))]
    assert names[0] == "check_tags" and "check_output_contract" in names and "check_budget" in names
    budgeted = with_budget(make_algorithm("kaca1"), parse_budget("5%"))
    assert "check_budget" not in [c.name for c in method_checks(budgeted)]
    mark = parametrize_with_checks([make_algorithm("kaca1", fast=False), budgeted])
    ids = [p.id for p in mark.args[1]]
    assert "kaca1-fast=False-check_output_contract" in ids and "kaca1+max_suppression=5%-check_seed" in ids
    assert mark.args[0] == "method, check"


def test_random_problems_repeat_and_vary():
    a, b = random_problem(3), random_problem(3)
    assert np.array_equal(a.table.codes, b.table.codes) and a.requirements == b.requirements
    shapes = {random_problem(s).table.codes.shape for s in range(10)}
    assert len(shapes) > 3
    several = random_problem(4, several=True)
    assert len(several.requirements) == (2 if several.table.codes.shape[1] > 1 else 1)
    assert random_problem(5, privacy=True).privacy
    assert random_problem(6, max_rows=12).table.n_rows <= 12
