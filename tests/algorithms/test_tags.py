"""Capability tags: declared once per method class, inherited, refined by an
instance whose capabilities depend on its parameters, and the only thing the
refusals, the registry and ``hieranon methods`` read."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from hieranon.algorithms import registry
from hieranon.algorithms.base import Algorithm, Problem, Solution
from hieranon.algorithms.dbca import DBCA, DBCACM
from hieranon.algorithms.kaca import KACA1, KACA2
from hieranon.algorithms.partition import Partitioned
from hieranon.algorithms.suppression import parse_budget, with_budget
from hieranon.algorithms.tags import SuppressionTags, Tags, get_tags
from hieranon.core.requirements import Requirement
from hieranon.core.table import EncodedTable
from hieranon.evaluation.metrics import CostModel
from random_tables import balanced


def _problem(labels=None, privacy=()) -> Problem:
    h = balanced("a0", [2, 2])
    t = EncodedTable(np.array([[v] for v in h.leaves] * 2, dtype=np.int32), [h], ["a0"], np.ones(8, dtype=np.int64))
    p = Problem(t, [Requirement(("a0",), 2)], CostModel.build([h]), class_labels=labels)
    p.privacy = [m.bind(pd.DataFrame({"s": ["x", "y"] * 4})) for m in privacy]
    return p


class Declared(Algorithm):
    """A method of one's own that declares what it needs."""

    name = "declared"
    tags = Tags(needs_class_column=True, suppression=SuppressionTags(refused="it only publishes whole tables"))

    def _solve(self, problem: Problem) -> Solution:
        raise AssertionError("work started")


def test_tags_are_frozen_typed_and_inherited():
    tags = get_tags(KACA1)
    assert isinstance(tags, Tags) and tags.several_requirements and tags.privacy_models and tags.randomised
    with pytest.raises(dataclasses.FrozenInstanceError):
        tags.privacy_models = False
    assert get_tags(KACA2) is tags                       # inherited as declared
    assert get_tags(DBCACM) == dataclasses.replace(get_tags(DBCA), needs_class_column=True)
    assert get_tags(KACA1()) == tags                     # an instance: its class's unless they depend on it
    with pytest.raises(TypeError, match="declares no"):
        get_tags(object())


def test_instance_tags_follow_the_parameters():
    assert get_tags(registry.make_algorithm("mingen", max_records=50)).max_records == 50
    assert get_tags(registry.make_algorithm("mingen")).exact
    assert get_tags(Partitioned(inner_method="tds")).needs_class_column
    assert not get_tags(Partitioned(inner_method="heuristicmin")).privacy_models
    assert get_tags(Partitioned(inner_method="kaca+")).privacy_models
    budgeted = with_budget(registry.make_algorithm("fulldomain"), parse_budget("5%"))
    assert get_tags(budgeted) == registry.method_tags("fulldomain") and get_tags(budgeted).suppression.native


def test_what_the_registry_reports_is_the_tags():
    for m in registry.available_methods():
        tags, info = registry.method_tags(m), registry.method_info(m)
        assert info["several_requirements"] == tags.several_requirements
        assert info["privacy_models"] == tags.privacy_models
        assert info["class_column"] == tags.needs_class_column
        assert info["max_suppression"] == tags.suppression.takes_budget
        assert info["suppression"] == tags.suppression.setting
    assert [m for m in registry.available_methods() if registry.method_tags(m).needs_class_column] == \
        ["tds", "bug", "dbca-cm"]
    assert not hasattr(registry, "NATIVE") and not hasattr(registry, "REFUSED")


def test_a_method_of_ones_own_is_refused_what_its_tags_rule_out_in_one_line():
    with pytest.raises(ValueError) as err:
        Declared().solve(_problem())
    assert str(err.value) == ("method 'declared' needs a class column (class_column=... in the API, --class-column "
                              "on the command line): it reads the class of every record")
    with pytest.raises(ValueError, match="'declared': 3 class labels for 8 rows"):
        Declared().solve(_problem(labels=np.array(["a", "b", "a"])))
    with pytest.raises(ValueError, match="max_suppression: method 'declared' does not suppress records: it only "
                                         "publishes whole tables; leave out --max-suppression"):
        with_budget(Declared(), parse_budget("5%"))


def test_a_budget_beside_the_methods_own_setting_is_refused_naming_the_setting():
    with pytest.raises(ValueError, match="own suppression_limit"):
        with_budget(registry.make_algorithm("datafly", suppression_limit=0.1), parse_budget("5%"))
    assert with_budget(registry.make_algorithm("datafly"), parse_budget("5%")).name == "datafly"


def test_partitioned_refuses_privacy_naming_its_inner_method():
    from hieranon.privacy import DistinctLDiversity

    with pytest.raises(ValueError, match="inner method 'heuristicmin' of 'partitioned' does not support"):
        Partitioned(inner_method="heuristicmin").solve(_problem(privacy=[DistinctLDiversity("s", 2)]))
    with pytest.raises(ValueError, match="method 'partitioned' needs a class column"):
        Partitioned(inner_method="tds", executor="serial").solve(_problem())
