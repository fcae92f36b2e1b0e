"""Random encoded tables over random balanced hierarchies, shared by the
property tests of the local-recoding methods (test_kaca, test_kacaplus)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from hieranon.algorithms.base import Problem
from hieranon.algorithms.checks import balanced_hierarchy
from hieranon.core import table
from hieranon.core.requirements import Requirement
from hieranon.core.tree import Hierarchy
from hieranon.evaluation import metrics

#: A leaf-balanced tree (labels name0, name0.1, ...): the one the importable method checks draw from.
balanced = balanced_hierarchy


@st.composite
def random_tables(draw, max_rows=80, counts=False):
    """``(EncodedTable, k, seed)``: 1-4 QIs of height 2-4, 5..max_rows rows,
    optionally with record counts 1-4."""
    m = draw(st.integers(1, 4))
    hs = []
    for j in range(m):
        height = draw(st.integers(2, 4))
        hs.append(balanced(f"a{j}", [draw(st.integers(1, 3)) for _ in range(height - 1)]))
    n = draw(st.integers(5, max_rows))
    cols = []
    for h in hs:
        leaves = h.leaves
        idx = draw(st.lists(st.integers(0, len(leaves) - 1), min_size=n, max_size=n))
        cols.append(leaves[np.asarray(idx)])
    codes = np.stack(cols, axis=1).astype(np.int32)
    cnt = np.ones(n, dtype=np.int64)
    if counts:
        cnt = np.asarray(draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)), dtype=np.int64)
    k = draw(st.integers(2, max(2, min(8, int(cnt.sum())))))
    seed = draw(st.integers(0, 2**31 - 1))
    return table.EncodedTable(codes, hs, [h.name for h in hs], cnt), k, seed


def make_problem(enc, k, seed, scheme="uniform", **kw):
    """One requirement over every QI, cost model ``scheme``."""
    cost = metrics.CostModel.build(enc.hierarchies, scheme, **kw)
    return Problem(enc, [Requirement(tuple(enc.qi_names), k)], cost, seed=seed)


@st.composite
def random_frames(draw, max_rows=40, max_qis=3, counts=None):
    """``(DataFrame, {qi: Hierarchy}, k, seed, count_column)``: 1..max_qis
    QIs over balanced hierarchies of height 2-4 (cells are leaf labels), an
    ``id`` identifier column, a non-QI ``note`` column, a binary ``cls``
    class column and, when ``counts`` (drawn if None), a ``n`` count column."""
    m = draw(st.integers(1, max_qis))
    hs = {}
    for j in range(m):
        height = draw(st.integers(2, 4))
        hs[f"a{j}"] = balanced(f"a{j}", [draw(st.integers(1, 3)) for _ in range(height - 1)])
    n = draw(st.integers(2, max_rows))
    df = pd.DataFrame({"id": [f"p{i}" for i in range(n)]})
    for q, h in hs.items():
        leaves = [h.labels[v] for v in h.leaves]
        df[q] = draw(st.lists(st.sampled_from(leaves), min_size=n, max_size=n))
    df["note"] = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    df["cls"] = draw(st.lists(st.sampled_from(["yes", "no"]), min_size=n, max_size=n))
    with_counts = draw(st.booleans()) if counts is None else counts
    count_column = None
    total = n
    if with_counts:
        df["n"] = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
        count_column, total = "n", int(df["n"].sum())
    k = draw(st.integers(2, max(2, min(5, total))))
    seed = draw(st.integers(0, 2**31 - 1))
    return df, hs, k, seed, count_column


@st.composite
def private_problems(draw, max_rows=40, counts=True, feasible=True):
    """``(problem, sensitive frame, models)``: a :func:`random_tables` problem
    (uniform WHD) with a sensitive column ``s`` (1-4 values, numeric or not)
    and 1-2 privacy models on it, bound to the table in ``problem.privacy``
    (only models the whole table satisfies when ``feasible``)."""
    from hypothesis import assume

    from hieranon.privacy import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity, TCloseness

    enc, k, seed = draw(random_tables(max_rows=max_rows, counts=counts))
    n = enc.n_rows
    numeric = draw(st.booleans())
    idx = draw(st.lists(st.integers(0, draw(st.integers(0, 3))), min_size=n, max_size=n))
    sens = pd.DataFrame({"s": idx if numeric else [f"v{i}" for i in idx]})
    models = []
    for _ in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(["distinct", "entropy", "recursive", "t"]))
        if kind == "distinct":
            models.append(DistinctLDiversity("s", draw(st.integers(1, 3))))
        elif kind == "entropy":
            models.append(EntropyLDiversity("s", draw(st.sampled_from([1.2, 1.5, 2]))))
        elif kind == "recursive":
            models.append(RecursiveCLDiversity("s", draw(st.sampled_from([2, 3.5])), 2))
        else:
            models.append(TCloseness("s", draw(st.sampled_from([0.15, 0.25, 0.4])), "ordered" if numeric else "equal"))
    problem = make_problem(enc, k, seed)
    problem.privacy = [m.bind(sens, enc.counts) for m in models]
    if feasible:
        assume(all(b.ok_hist(b.table_hist())[0] for b in problem.privacy))
    return problem, sens, models


def one_column_problem(h: Hierarchy, orig: np.ndarray, values: list, model, k: int = 2):
    """One QI ``x`` (hierarchy ``h``, codes ``orig``, one record per row) at
    ``k``, with ``model`` bound to a sensitive column ``s`` of ``values``:
    ``(encoded table, problem)``."""
    orig = np.asarray(orig, dtype=np.int32).reshape(-1, 1)
    enc = table.EncodedTable(orig, [h], ["x"], np.ones(len(orig), dtype=np.int64))
    problem = make_problem(enc, k, 0)
    problem.privacy = [model.bind(pd.DataFrame({"s": list(values)}), enc.counts)]
    return enc, problem


def path_of(h: Hierarchy, leaf: str) -> list[str]:
    """Labels from leaf to root, by walking parents."""
    v = h.leaf_index[leaf]
    out = [h.labels[v]]
    while h.parent[v] >= 0:
        v = h.parent[v]
        out.append(h.labels[v])
    return out


def structure(h: Hierarchy) -> set[tuple[str, ...]]:
    """Every node's path of labels: the hierarchy's shape, independent of node ids."""
    return {tuple(p) for p in h.node_paths()}


def set_partitions(items: list):
    """Every partition of ``items`` into blocks (Bell-number many): the
    brute-force search space of record-level recodings."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in set_partitions(rest):
        for i in range(len(part)):
            yield part[:i] + [[first, *part[i]]] + part[i + 1:]
        yield [[first], *part]
