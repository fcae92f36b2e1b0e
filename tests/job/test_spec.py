"""AnonymizationSpec: one validated job built from a configuration, keyword
arguments or command-line options, and build_problem, the one place a table
becomes a Problem."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import hieranon
from hieranon.algorithms.registry import DEFAULT_METHOD
from hieranon.core.requirements import Requirement, RequirementError
from hieranon.hierarchies import readers as H
from hieranon.job import config as C
from hieranon.job.problem import build_problem, run_method
from hieranon.job.spec import AnonymizationSpec
from hieranon.report import evaluate_pair


@pytest.fixture
def table():
    rng = np.random.default_rng(5)
    n = 40
    df = pd.DataFrame({"id": [f"r{i}" for i in range(n)], "age": rng.choice(["20", "30", "40", "50"], n),
                       "sex": rng.choice(["m", "f"], n), "n": rng.integers(1, 4, n),
                       "label": rng.choice(["a", "b"], n)})
    df.loc[[2, 9], "sex"] = None
    hs = {"age": H.suppression("age", ["20", "30", "40", "50"]), "sex": H.suppression("sex", ["m", "f"])}
    return df, hs


def test_numpy_scalars_are_accepted_like_python_numbers(table):
    df, hs = table
    kw = dict(identifiers=["id"], missing="root", count_column="n", method="kaca1")
    plain = hieranon.anonymize(df, None, hs, k=2, seed=1, beta=1.5, weights="height",
                               priorities={"age": 2, "sex": 1}, requirements=[(["sex", "age"], 3)], **kw)
    numpy = hieranon.anonymize(df, None, hs, k=np.int64(2), seed=np.int64(1), beta=np.float64(1.5),
                               weights="height", priorities={"age": np.int32(2), "sex": np.float64(1.0)},
                               requirements=[(["sex", "age"], np.int64(3))], **kw)
    pd.testing.assert_frame_equal(plain.data, numpy.data)
    assert numpy.spec.k == 2 and type(numpy.spec.k) is int and type(numpy.spec.seed) is int
    assert type(numpy.spec.beta) is float
    assert [str(r) for r in numpy.requirements] == [str(r) for r in plain.requirements]


def test_numbers_are_validated_in_one_place(table):
    _, hs = table
    for bad in (dict(k=True), dict(k=0), dict(k="3"), dict(seed=-1), dict(seed=1.5), dict(beta=0.5),
                dict(beta=True), dict(risk_threshold=0), dict(priorities={"age": -1}), dict(priorities="age"),
                dict(requirements=[(["age"], np.float64(2.0))]), dict(missing="skip"), dict(weights="x"),
                dict(method="nope"), dict(identifier_action="hide")):
        with pytest.raises(ValueError):
            AnonymizationSpec(hierarchies=hs, **bad)
    spec = AnonymizationSpec(hierarchies=hs, k=np.int16(3), seed=np.uint8(4), risk_threshold=np.float32(0.5),
                             suppression_threshold=np.int64(2), params={"fast": np.bool_(False)})
    assert (spec.k, spec.seed, spec.risk_threshold, spec.suppression_threshold) == (3, 4, 0.5, 2.0)
    assert spec.params == {"fast": False} and spec.method == DEFAULT_METHOD


def test_config_and_overrides(tmp_path):
    (tmp_path / "sex.csv").write_text("m;*\nf;*\n", encoding="utf-8")
    cfg = C.parse({"quasi_identifiers": {"age": {"intervals": [10]}}, "k": 3, "priorities": ["sex", "age"],
                   "method": "kaca1", "params": {"fast": False}, "suppression_threshold": 0.5,
                   "identifying": ["id"], "count_column": "n", "missing": "root"}, base=tmp_path)
    spec = AnonymizationSpec.from_config(cfg)
    assert spec.identifiers == ("id",) and spec.count_column == "n" and spec.missing == "root"
    assert spec.algorithm_params() == {"fast": False, "suppression_threshold": 0.5}
    same = spec.with_overrides(k=None, seed=None, method=None, weights=None, params=None)
    assert same == spec  # options not given change nothing
    over = spec.with_overrides(qi={"sex": tmp_path / "sex.csv"}, require=["sex:4"], k=5, seed=7, beta=2.0,
                               params={"fast": True})
    assert over.quasi_identifiers == ["age", "sex"] and over.k == 5 and over.seed == 7 and over.beta == 2.0
    assert over.requirements == ("sex:4",) and over.params == {"fast": True}
    # the ranking is resolved against the QIs in force (sex came from the command line)
    weights = over.priority_weights()
    assert set(weights) == {"age", "sex"} and weights["sex"] > weights["age"] >= 0
    with pytest.raises(ValueError, match="does not support it"):
        spec.with_overrides(method="mondrian").algorithm_params()
    with pytest.raises(ValueError, match="beta"):
        spec.with_overrides(beta=0.0)  # 0 is an override, not "not given"


def test_partitioned_runs_the_spec_method_inside():
    """A partitioned run is one thing in the spec -- ``execution`` with the
    ``partition`` options -- however it was asked for: ``spec.partitioned()``,
    ``execution=`` or the ``partitioned`` method with its parameters."""
    hs = {"a": H.suppression("a", ["x", "y"])}
    spec = AnonymizationSpec(hierarchies=hs, k=2).partitioned(block_size=100, executor="serial", scheduler=None)
    assert (spec.method, spec.execution, spec.partition) == (DEFAULT_METHOD, "partitioned",
                                                             {"block_size": 100, "executor": "serial"})
    assert run_method(spec) == ("partitioned", {"inner_method": DEFAULT_METHOD, "method_params": {},
                                                "block_size": 100, "executor": "serial"})
    spec = AnonymizationSpec(hierarchies=hs, k=2, method="kaca1", suppression_threshold=1).partitioned()
    assert run_method(spec) == ("partitioned", {"inner_method": "kaca1",
                                                "method_params": {"suppression_threshold": 1.0}})
    as_method = AnonymizationSpec(hierarchies=hs, k=2, method="partitioned",
                                  params={"inner_method": "kaca2", "block_size": 100, "executor": "serial",
                                          "method_params": {"max_inconsistency": 0.1}})
    as_execution = AnonymizationSpec(hierarchies=hs, k=2, method="kaca2", params={"max_inconsistency": 0.1},
                                     execution="partitioned", partition={"block_size": 100, "executor": "serial"})
    assert as_method == as_execution and as_method.method == "kaca2"
    # the method's own default inner method and block size, as make_algorithm("partitioned") has them
    spec = AnonymizationSpec(hierarchies=hs, k=2, method="partitioned")
    assert (spec.method, spec.partition) == (DEFAULT_METHOD, {"block_size": 20_000})
    # the partitioned method's parameters laid over a partitioned run reach its blocks, not the inner method
    over = as_execution.with_overrides(params={"block_size": 50})
    assert (over.method, over.params, over.partition) == ("kaca2", {"max_inconsistency": 0.1},
                                                          {"block_size": 50, "executor": "serial"})
    with pytest.raises(ValueError, match="contradicts"):
        AnonymizationSpec(hierarchies=hs, k=2, method="partitioned", execution="whole")


class _RecordingModel:
    """A stand-in privacy model: records what it is bound to."""

    def __init__(self):
        self.bound = None

    def bind(self, df, counts):
        self.bound = (len(df), int(np.sum(counts)))
        return ("bound", self)


def test_build_problem_encodes_counts_missing_labels_and_privacy(table):
    df, hs = table
    model = _RecordingModel()
    spec = AnonymizationSpec(hierarchies=hs, k=np.int64(3), count_column="n", missing="root", class_column="label",
                             identifiers=["id"], priorities=["sex"], privacy=(model,))
    prepared = build_problem(df, spec)
    problem = prepared.problem
    assert problem.table.n_records == int(df["n"].sum())
    assert (problem.table.codes[[2, 9], 1] == 0).all()  # missing cells read as the root
    assert problem.class_labels.tolist() == df["label"].tolist()
    assert problem.requirements == [Requirement(("age", "sex"), 3)]
    assert problem.privacy == [("bound", model)] and model.bound == (len(df), int(df["n"].sum()))
    assert problem.cost.costs[0].max() == 0  # age is not ranked: priority 0
    assert build_problem(df, AnonymizationSpec(hierarchies=hs, k=3, missing="root")).problem.privacy == []
    with pytest.raises(RequirementError, match="exceeds"):
        build_problem(df, AnonymizationSpec(hierarchies=hs, k=10_000, missing="root"))


def test_evaluate_pair_takes_a_ranking_and_matches_anonymize(table):
    df, hs = table
    spec = AnonymizationSpec(hierarchies=hs, k=3, count_column="n", missing="root", identifiers=["id"],
                             priorities=["sex", "age"], method="kaca1")
    result = hieranon.job.pipeline.run(df, spec)
    pair = evaluate_pair(df, result.data, spec=spec)
    assert pair.verification.ok
    assert pair.metrics.distortion == pytest.approx(result.metrics.distortion)
    assert pair.metrics.n_records == result.metrics.n_records == int(df["n"].sum())
    assert np.array_equal(pair.codes, result.codes)


def test_risk_is_computed_once_and_read_from_the_result(table, monkeypatch):
    df, hs = table
    result = hieranon.anonymize(df, None, hs, 3, missing="root", count_column="n", identifiers=["id"],
                                method="kaca1")
    from hieranon.evaluation import risk

    calls = []
    real = risk._assess_result
    monkeypatch.setattr(risk, "_assess_result", lambda *a: calls.append(a) or real(*a))
    before, after, _ = result.risk()
    assert result.risk() == (before, after, _) and len(calls) == 1
    assert before.n_records == int(df["n"].sum())  # the result's record counts, not ones
    from hieranon.report import render_report
    render_report(None, result)
    assert len(calls) == 1  # the report reads the cached figures


def test_report_and_risk_do_not_import_the_api():
    """No module imports upward into hieranon.job.pipeline (importing the package
    imports it, so the modules' own imports are read)."""
    import ast
    import inspect

    from hieranon import report
    from hieranon.evaluation import risk
    from hieranon.job import result, scale, spec

    for module in (report, risk, result, spec, scale):
        tree = ast.parse(inspect.getsource(module))
        imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
        assert not [m for m in imported if m.split(".")[-1] in ("api", "cli")], module.__name__


def test_config_values_may_be_numpy_numbers(tmp_path):
    raw = {"quasi_identifiers": {"age": {"intervals": [np.int64(10)], "origin": np.float64(0)}},
           "k": np.int64(3), "seed": np.int64(1), "beta": np.float64(1.5), "priorities": {"age": np.float32(0.5)},
           "requirements": [{"attributes": ["age"], "k": np.int64(2)}], "suppression_threshold": np.float64(1),
           "risk_threshold": np.float64(0.25), "method": "kaca1"}
    spec = AnonymizationSpec.from_config(C.parse(raw, base=tmp_path))
    assert (spec.k, spec.seed, spec.beta, spec.risk_threshold) == (3, 1, 1.5, 0.25)
    assert type(spec.k) is int and spec.priorities == {"age": 0.5}
    assert spec.algorithm_params() == {"suppression_threshold": 1.0}
    for key, bad in (("k", True), ("seed", np.bool_(True)), ("beta", "2")):
        with pytest.raises(C.ConfigError, match=key):
            C.parse({**raw, key: bad}, base=tmp_path)


def test_a_ranking_listing_an_attribute_twice_is_refused():
    with pytest.raises(ValueError, match="'age' twice"):
        AnonymizationSpec(hierarchies={"age": "suppress", "zip": "suppress"}, k=2, priorities=["age", "age", "zip"])


def test_one_measure_for_a_run_and_for_an_existing_pair(table):
    from hieranon.job.problem import measure

    df, hs = table
    spec = AnonymizationSpec(hierarchies=hs, k=2, requirements=[(["sex"], 4)], class_column="label",
                             count_column="n", missing="root", identifiers=["id"], weights="height", beta=1.5,
                             method="kaca1")
    result = hieranon.job.pipeline.run(df, spec)
    problem = build_problem(df, spec).problem
    measured = measure(problem, result.codes, result.suppressed)
    assert measured == result.metrics
    assert set(measured.achieved_k_per_requirement) == {str(r) for r in problem.requirements}
    assert evaluate_pair(df, result.data, spec=spec).metrics == measured


def test_with_overrides_checks_only_the_fields_it_changes(monkeypatch):
    """An override checks the fields it changes (and the role check when it
    changes a role), not the whole spec again; the spec it came from is left as it was."""
    import dataclasses

    from hieranon.evaluation.roles import RoleConflictError
    from hieranon.job import spec as S

    hs = {"a": H.suppression("a", ["x", "y"]), "b": H.suppression("b", ["u", "v"])}
    spec = AnonymizationSpec(hierarchies=hs, k=2, sensitive=["s"])
    calls = []
    source = S._hierarchy_source
    monkeypatch.setattr(S, "_hierarchy_source", lambda name, h: calls.append(name) or source(name, h))
    over = spec.with_overrides(k=5, seed=np.int64(3), beta=2.0)
    assert calls == [] and (over.k, over.seed, over.beta) == (5, 3, 2.0) and type(over.seed) is int
    assert (spec.k, spec.seed, spec.beta) == (2, None, 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        over.k = 7
    with pytest.raises(hieranon.SettingError, match="seed"):
        spec.with_overrides(seed=-1)
    over = spec.with_overrides(qi={"c": H.suppression("c", ["p", "q"])})
    assert calls == ["a", "b", "c"] and over.quasi_identifiers == ["a", "b", "c"]
    with pytest.raises(RoleConflictError, match="'a'"):
        spec.with_overrides(insensitive=("a",))
