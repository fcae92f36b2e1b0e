"""One job through :mod:`hieranon.job.pipeline`: the algorithm built once, the
problem checked once, before any work."""

from __future__ import annotations

import pandas as pd
import pytest

import hieranon
from hieranon import hierarchy as H
from hieranon.algorithms import base, suppression
from hieranon.algorithms.kaca import KACA1


def _table() -> tuple[pd.DataFrame, dict]:
    values = [f"v{i}" for i in range(6)]
    df = pd.DataFrame({"a": values * 4, "b": [f"w{i % 3}" for i in range(24)]})
    hs = {"a": H.suppression("a", values), "b": H.suppression("b", ["w0", "w1", "w2"])}
    return df, hs


class _Counts:
    def __init__(self, monkeypatch):
        self.built = self.checked = self.feasible = 0
        init, check = KACA1.__init__, KACA1.check_problem

        def counted_init(obj, *args, **kw):
            self.built += 1
            init(obj, *args, **kw)

        def counted_check(obj, problem):
            self.checked += 1
            check(obj, problem)

        feasible = base.check_feasible

        def counted_feasible(models):
            self.feasible += 1
            feasible(models)

        monkeypatch.setattr(KACA1, "__init__", counted_init)
        monkeypatch.setattr(KACA1, "check_problem", counted_check)
        for module in (base, suppression, hieranon.job.pipeline):
            if hasattr(module, "check_feasible"):
                monkeypatch.setattr(module, "check_feasible", counted_feasible)


@pytest.mark.parametrize("budget", [None, "10%"])
def test_the_algorithm_is_built_and_the_problem_checked_once(monkeypatch, budget):
    df, hs = _table()
    counts = _Counts(monkeypatch)
    r = hieranon.anonymize(df, ["a", "b"], hs, k=2, method="kaca1", max_suppression=budget, execution="whole")
    assert r.verification.ok
    assert counts.built == 1
    assert counts.checked == 1
    assert counts.feasible == 1


def test_bad_parameters_are_refused_before_the_table_is_read(monkeypatch):
    df, hs = _table()

    def no_encoding(*args, **kw):
        raise AssertionError("the table was encoded")

    monkeypatch.setattr(hieranon.job.pipeline, "build_problem", no_encoding)
    with pytest.raises(ValueError, match="max_inconsistency"):
        hieranon.anonymize(df, ["a", "b"], hs, k=2, method="kaca2", max_inconsistency=-1)


def test_a_useless_output_of_a_large_table_is_not_solved_again_to_compare(monkeypatch, caplog):
    """Above the rows the comparison allows, the warning gives the general advice
    without running Mondrian; at or below them it compares (and names it)."""
    import numpy as np

    from hieranon.job import pipeline
    from hieranon.job.problem import build_problem
    from hieranon.job.spec import AnonymizationSpec

    values = [f"v{i}" for i in range(10)]
    df = pd.DataFrame({"a": values * 5})
    problem = build_problem(df, AnonymizationSpec(hierarchies={"a": H.suppression("a", values)}, k=5)).problem
    everything = base.Solution(np.zeros_like(problem.table.codes), np.zeros(len(df), dtype=bool))
    built = []
    make = pipeline.make_algorithm
    monkeypatch.setattr(pipeline, "make_algorithm", lambda name, **kw: built.append(name) or make(name, **kw))
    monkeypatch.setattr(pipeline, "COMPARE_MAX_ROWS", len(df) - 1, raising=False)
    with caplog.at_level("WARNING", logger="hieranon"):
        assert pipeline.warn_if_useless(problem, everything, "bug") is None
    assert built == []
    assert any("lost nearly everything" in r.getMessage() and "requirements may be too strict" in r.getMessage()
               for r in caplog.records)
    caplog.clear()
    monkeypatch.setattr(pipeline, "COMPARE_MAX_ROWS", len(df))
    with caplog.at_level("WARNING", logger="hieranon"):
        assert pipeline.warn_if_useless(problem, everything, "bug") < 0.1
    assert built == ["mondrian"] and any("try --method mondrian" in r.getMessage() for r in caplog.records)


def test_the_partitioned_method_runs_as_the_plan_of_a_partitioned_execution():
    """``method="partitioned"`` is read as a partitioned execution: one plan,
    recorded in the result, whose block size and executor the run uses; the
    same output as asking with ``execution=``."""
    import numpy as np

    values = [f"v{i}" for i in range(12)]
    df = pd.DataFrame({"a": values * 10, "b": [f"w{i % 4}" for i in range(120)]})
    hs = {"a": H.suppression("a", values), "b": H.suppression("b", [f"w{i}" for i in range(4)])}
    as_method = hieranon.anonymize(df, ["a", "b"], hs, k=3, method="partitioned", inner_method="kaca2",
                                   block_size=40, executor="serial")
    assert as_method.method == "partitioned" and as_method.plan is not None
    assert as_method.plan["mode"] == "partitioned" and as_method.plan["block_size"] == 40
    assert as_method.plan["executor"] == as_method.params["executor"] == "serial"
    assert as_method.params["inner_method"] == "kaca2" and as_method.info["blocks"] > 1
    spec = hieranon.AnonymizationSpec(hierarchies=hs, k=3, method="kaca2", execution="partitioned",
                                      partition={"block_size": 40, "executor": "serial"})
    from hieranon.job.pipeline import run

    as_execution = run(df, spec)
    assert np.array_equal(as_method.codes, as_execution.codes) and as_method.params == as_execution.params
