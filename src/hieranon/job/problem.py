"""From a job's specification to what an algorithm solves and how it is
measured: the encoded :class:`~hieranon.algorithms.base.Problem` of a table
(:func:`build_problem`), the algorithm the spec names, wrapped by its
suppression budget (:func:`build_algorithm`), and the one measurement of a
solution (:func:`measure`) every path that reports a result shares."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..algorithms.base import Algorithm, Problem
from ..algorithms.registry import make_algorithm
from ..algorithms.suppression import with_budget
from ..core.requirements import normalise
from ..core.table import DataError, EncodedTable, check_columns, encode
from ..core.tree import Hierarchy
from ..evaluation import metrics as M
from ..privacy import RiskModel
from ..privacy.weighted import read_weights
from .spec import AnonymizationSpec

if TYPE_CHECKING:
    from ..algorithms.partition import RunPlan

__all__ = ["Prepared", "problem_from_table", "measure", "build_problem", "run_method", "build_algorithm"]


# ------------------------------------------------------------------ problem
@dataclass
class Prepared:
    """What :func:`build_problem` makes of a table: the problem an algorithm
    solves, the spec, and the hierarchies by name."""

    problem: Problem
    spec: AnonymizationSpec
    hierarchies: dict[str, Hierarchy]

    @property
    def table(self) -> EncodedTable:
        return self.problem.table


def _labels(df: pd.DataFrame, spec: AnonymizationSpec) -> np.ndarray | None:
    if spec.class_column is None:
        return None
    check_columns(df, [spec.class_column], "class")
    return df[spec.class_column].to_numpy()


def problem_from_table(table: EncodedTable, spec: AnonymizationSpec, labels: np.ndarray | None = None,
                       data: pd.DataFrame | None = None, *, k_within_records: bool = True) -> Problem:
    """The problem of an encoded table: requirements normalised against its
    QIs (and, with ``k_within_records``, its number of records; none when the
    spec has none), the cost model, the class labels and the privacy models
    bound to ``data``."""
    qis = table.qi_names
    n = table.n_records if k_within_records else None
    reqs = normalise(spec.requirements, spec.k, qis, n) if spec.has_requirements else []
    cost = M.CostModel.build(table.hierarchies, spec.weights, spec.beta, spec.priority_weights(),
                             max_rows=max(table.n_records, 1))
    problem = Problem(table, reqs, cost, spec.algorithm_seed, labels)
    sensitive = [m for m in spec.privacy if not isinstance(m, RiskModel)]
    if sensitive and data is None:
        raise ValueError("the privacy models need the table's sensitive columns (data=...)")
    problem.privacy = [m.bind(data, table.counts) for m in sensitive]
    problem.risk = [m.bind(table) for m in spec.privacy if isinstance(m, RiskModel)]
    return problem


def measure(problem: Problem, codes: np.ndarray, suppressed: np.ndarray) -> M.Metrics:
    """Every metric of ``codes`` (one generalised row per row of the problem's
    table; ``suppressed`` rows left out of the classes) under the problem's
    cost model, with the smallest class of each requirement
    (:func:`hieranon.evaluation.metrics.compute`): how the pipeline, the
    Parquet run and the evaluation of an existing pair all measure an output."""
    t = problem.table
    return M.compute(t.codes, codes, t.hierarchies, problem.k, t.counts, problem.cost, t.qi_names,
                     problem.class_labels, suppressed=suppressed, requirements=problem.requirements)


def build_problem(df: pd.DataFrame, spec: AnonymizationSpec, *, generalised: bool = False,
                  hierarchies: Mapping[str, Hierarchy] | None = None) -> Prepared:
    """Encode ``df`` against ``spec`` (leaf codes, counts from the count
    column, missing cells as the spec says) and build its problem.

    ``generalised`` reads cells that already print inner nodes (a published
    table, for ``check``, whose k may exceed its records: it then fails the
    check rather than being refused); ``hierarchies`` are used instead of building them
    again when already built."""
    if not isinstance(df, pd.DataFrame):
        raise TypeError("expected a pandas DataFrame")
    if len(df) == 0:
        raise DataError("the table has no rows")
    if not spec.hierarchies:
        raise DataError("no quasi-identifiers given")
    check_columns(df, spec.quasi_identifiers)  # before a builder looks for its column
    repeated = df.columns[df.columns.duplicated()].unique()
    if len(repeated):
        raise DataError(f"the table has several columns named {', '.join(repr(c) for c in repeated[:5])}; "
                        "give each column a name of its own")
    hs = dict(hierarchies) if hierarchies is not None else spec.build_hierarchies(df)
    qis = spec.quasi_identifiers
    table = encode(df, qis, hs, counts=spec.count_column, missing=spec.missing, generalised=generalised)
    if spec.population is not None:  # a population smaller than the table is refused before any work
        spec.population.size(int(table.counts.sum()))
    problem = problem_from_table(table, spec, _labels(df, spec), df, k_within_records=not generalised)
    if spec.weight_column is not None:
        problem.weights = read_weights(df, spec.weight_column)
    return Prepared(problem, spec, hs)


# ---------------------------------------------------------------- algorithm
def run_method(spec: AnonymizationSpec, plan: RunPlan | None = None) -> tuple[str, dict]:
    """``(method, parameters)`` of the algorithm that carries out ``spec``:
    the spec's method, or the ``partitioned`` method around it when the run
    is partitioned -- as ``plan`` (a :class:`~hieranon.algorithms.partition.RunPlan`)
    chose, else as ``spec.execution`` asks -- with the spec's partition
    options (the plan's block size and executor, chosen from them)."""
    params = spec.algorithm_params()
    partitioned = plan.mode == "partitioned" if plan is not None else spec.execution == "partitioned"
    if not partitioned:
        return spec.method, params
    options = {n: v for n, v in spec.partition.items() if n != "whole_seconds" and v is not None}
    if plan is not None:
        options.update(block_size=plan.block_size, executor=plan.executor)
    return "partitioned", {"inner_method": spec.method, "method_params": params, **options}


def build_algorithm(spec: AnonymizationSpec, plan: RunPlan | None = None) -> Algorithm:
    """The algorithm of ``spec`` (:func:`run_method`), built from the registry
    (its parameters validated once, at construction) and spending the spec's
    suppression budget (:func:`~hieranon.algorithms.suppression.with_budget`):
    bad parameters, or a budget the method cannot spend, are refused here,
    before any work."""
    method, params = run_method(spec, plan)
    return with_budget(make_algorithm(method, **params), spec.max_suppression)
