"""The output contract of every anonymisation method, checked in plain Python.

Independent of the library's own checks (no :mod:`hieranon.evaluation.verify`, no
:func:`hieranon.core.table.group`): ancestry is read off each hierarchy's parent
array and labels, equivalence classes are counted with a dictionary, so a
fault in the verifier cannot hide a fault in a method. Two entry points:

* :func:`check_codes` -- an encoded output (node codes, suppressed rows)
  against the encoded input it generalises (:func:`check_output` and
  :func:`check_solution` take an encoded table or a problem and solution;
  :func:`satisfies` only answers whether the requirements hold);
* :func:`check_frame` -- a decoded ``anonymize`` output (labels) against the
  input DataFrame, including the non-QI and identifier columns.

Each raises ``AssertionError`` naming the first row/column that breaks the
contract. :mod:`hieranon.algorithms.checks` runs them over a method.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

#: a requirement as (attribute positions or names, k)
Req = tuple[Sequence, int]


def ancestors_of(parent: Sequence[int], node: int) -> list[int]:
    """``node`` and every node above it, up to the root (parent -1)."""
    out = [int(node)]
    while int(parent[out[-1]]) >= 0:
        out.append(int(parent[out[-1]]))
    return out


def root_of(parent: Sequence[int]) -> int:
    """The one node without a parent."""
    roots = [i for i, p in enumerate(parent) if int(p) < 0]
    assert len(roots) == 1, f"a hierarchy has {len(roots)} roots"
    return roots[0]


def _requirements(requirements: Iterable, names: Sequence[str]) -> list[tuple[list[int], int]]:
    """Requirements as (column positions, k); accepts ``Requirement`` objects,
    ``(attributes, k)`` pairs and attribute names or positions."""
    out = []
    for r in requirements:
        attrs, k = (r.attributes, r.k) if hasattr(r, "attributes") else r
        out.append(([a if isinstance(a, (int, np.integer)) else list(names).index(a) for a in attrs], int(k)))
    return out


def smallest_classes(rows: Sequence[tuple], counts: Sequence[int], requirements) -> list[int | None]:
    """Per requirement (positions, k): the fewest records sharing one
    combination of its attributes (None when there are no rows)."""
    out = []
    for cols, _ in requirements:
        sizes: Counter = Counter()
        for row, c in zip(rows, counts):
            sizes[tuple(row[j] for j in cols)] += int(c)
        out.append(min(sizes.values()) if sizes else None)
    return out


def check_k(rows: Sequence[tuple], counts: Sequence[int], requirements) -> None:
    """Every requirement (positions, k) holds: each combination of its
    attributes is shared by at least k records."""
    for (cols, k), least in zip(requirements, smallest_classes(rows, counts, requirements)):
        assert least is None or least >= k, f"requirement on columns {cols} needs k={k}, a class has {least} records"


def check_codes(original: np.ndarray, hierarchies: Sequence, out: np.ndarray, suppressed: np.ndarray | None,
                requirements: Iterable, counts: Sequence[int] | None = None,
                names: Sequence[str] | None = None) -> None:
    """An encoded output keeps the contract: the same shape (one row per input
    row, in order), every cell the original node or one of its ancestors,
    suppressed rows all-root, every requirement met by the non-suppressed
    records (with ``suppressed`` None every row counts, the all-root ones too)."""
    original, out = np.asarray(original), np.asarray(out)
    n, m = original.shape
    assert out.shape == (n, m), f"output shape {out.shape}, input {original.shape}"
    counts = [1] * n if counts is None else [int(c) for c in counts]
    suppressed = [False] * n if suppressed is None else [bool(s) for s in suppressed]
    assert len(suppressed) == n, "one suppressed flag per row"
    parents = [[int(p) for p in h.parent] for h in hierarchies]
    roots = [root_of(p) for p in parents]
    above: list[dict[int, set[int]]] = [{} for _ in range(m)]
    for i in range(n):
        for j in range(m):
            node, value = int(out[i, j]), int(original[i, j])
            if value not in above[j]:
                above[j][value] = set(ancestors_of(parents[j], value))
            assert node in above[j][value], f"row {i} column {j}: node {node} does not generalise {value}"
        if suppressed[i]:
            assert [int(x) for x in out[i]] == roots, f"suppressed row {i} is not all-root: {out[i]}"
    keep = [i for i in range(n) if not suppressed[i]]
    names = names if names is not None else [h.name for h in hierarchies]
    check_k([tuple(int(x) for x in out[i]) for i in keep], [counts[i] for i in keep],
            _requirements(requirements, names))


def _table_requirements(table, k_or_requirements) -> list:
    if isinstance(k_or_requirements, (int, np.integer)):
        return [(list(table.qi_names), int(k_or_requirements))]
    return list(k_or_requirements)


def check_output(table, out: np.ndarray, k_or_requirements, suppressed: np.ndarray | None = None) -> None:
    """:func:`check_codes` against an encoded table (``codes``, ``hierarchies``,
    ``qi_names``, ``counts``) for one k over every QI or a list of requirements."""
    check_codes(table.codes, table.hierarchies, out, suppressed, _table_requirements(table, k_or_requirements),
                table.counts, table.qi_names)


def check_solution(problem, solution, *, exempt_suppressed: bool = False) -> None:
    """:func:`check_codes` on an algorithm's solution to ``problem``; unless
    ``exempt_suppressed``, the all-root rows also count towards k (they print
    one ``*`` class, which must hold k records like every other)."""
    t = problem.table
    check_codes(t.codes, t.hierarchies, solution.codes, solution.suppressed, problem.requirements, t.counts,
                t.qi_names)
    if not exempt_suppressed:
        assert satisfies(t, solution.codes, problem.requirements), "the suppressed rows' '*' class is below k"


def satisfies(table, codes: np.ndarray, k_or_requirements) -> bool:
    """Whether ``codes`` (all rows counted) meet every requirement on ``table``."""
    reqs = _requirements(_table_requirements(table, k_or_requirements), table.qi_names)
    rows = [tuple(int(x) for x in r) for r in np.asarray(codes)]
    return all(least is None or least >= k
               for (_, k), least in zip(reqs, smallest_classes(rows, table.counts, reqs)))


def _as_label(value) -> str:
    """A cell as the label it prints (an integral float without its ``.0``)."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def check_result(original: pd.DataFrame, result, hierarchies, requirements=None, k: int | None = None,
                 count_column: str | None = None, identifiers: Sequence[str] = ()) -> None:
    """:func:`check_frame` on an ``anonymize`` result (its data, suppressed
    rows and suppressed-record count); ``hierarchies`` a mapping or a list in
    the QI order of ``result``, ``requirements`` default one ``k`` over every QI."""
    if not isinstance(hierarchies, dict):
        hierarchies = {h.name: h for h in hierarchies}
    reqs = requirements if requirements is not None else [(list(hierarchies), k)]
    check_frame(original, result.data, hierarchies, reqs, result.suppressed, count_column, identifiers,
                result.metrics.suppressed_records)


def check_frame(original: pd.DataFrame, out: pd.DataFrame, hierarchies: dict, requirements: Iterable,
                suppressed: np.ndarray | None = None, count_column: str | None = None,
                identifiers: Sequence[str] = (), suppressed_records: int | None = None) -> None:
    """A decoded ``anonymize`` output keeps the contract against its input.

    ``hierarchies`` maps each quasi-identifier to its hierarchy; cells are
    compared as labels (the input's values are the leaves' labels). Checks:
    one row per input row in order (same index), every QI cell the original
    label or an ancestor's, suppressed rows all-root (and, given
    ``suppressed_records``, counted: their records add up to it), every
    requirement met by the non-suppressed records (weighted by
    ``count_column``), non-QI columns untouched, identifier columns gone.
    """
    qis = list(hierarchies)
    assert len(out) == len(original), f"{len(out)} output rows for {len(original)} input rows"
    assert list(out.index) == list(original.index), "rows reordered or re-indexed"
    for c in identifiers:
        assert c not in out.columns, f"identifier column {c!r} still in the output"
    expected_cols = [c for c in original.columns if c not in set(identifiers)]
    assert list(out.columns) == expected_cols, f"columns {list(out.columns)}, expected {expected_cols}"
    for c in expected_cols:
        if c not in qis:
            assert out[c].tolist() == original[c].tolist(), f"non-QI column {c!r} changed"
    n = len(original)
    suppressed = [False] * n if suppressed is None else [bool(s) for s in suppressed]
    counts = [1] * n if count_column is None else [int(x) for x in original[count_column]]
    for q, h in hierarchies.items():
        labels, parent = list(h.labels), list(h.parent)
        inner = {int(p) for p in parent}
        leaf = {labels[i]: i for i in range(len(labels)) if i not in inner}
        root_label = labels[root_of(parent)]
        for i, (a, b) in enumerate(zip(original[q], out[q])):
            allowed = {labels[v] for v in ancestors_of(parent, leaf[_as_label(a)])}
            assert _as_label(b) in allowed, f"row {i} column {q!r}: {b!r} is neither {a!r} nor an ancestor of it"
            if suppressed[i]:
                assert _as_label(b) == root_label, f"suppressed row {i} column {q!r} is {b!r}, not the root"
    if suppressed_records is not None:
        assert sum(c for c, s in zip(counts, suppressed) if s) == suppressed_records, "suppressed records miscounted"
    keep = [i for i in range(n) if not suppressed[i]]
    rows = [tuple(_as_label(x) for x in r) for r in out[qis].itertuples(index=False)]
    check_k([rows[i] for i in keep], [counts[i] for i in keep], _requirements(requirements, qis))
