"""Value generalisation hierarchies (VGHs): reading them from files.

The tree itself (:class:`Hierarchy`: node ids, parents, ancestors, LCA
tables) is defined and documented in :mod:`hieranon.core.tree` and importable
from here; this module reads it from files.

Loaders: ARX's CSV format (:func:`from_arx_csv`), nested mappings
(:func:`from_mapping`, YAML/JSON via :func:`from_file`). Hierarchies built
from the data (intervals, masking, suppression, dates) are made by
:mod:`hieranon.hierarchies.builders`.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.cells import normalise_text, normalise_texts, value_to_label
from ..core.files import MAX_HIERARCHY_BYTES, excerpt, read_text_file, shorten
from ..core.safeyaml import load_yaml

# the tree, defined below the loaders and the builders, is public here as it always was
from ..core.tree import (  # noqa: F401 - re-exported
    DENSE_LCA_MAX_NODES,
    ROOT_LABEL,
    AmbiguousLabelError,
    Children,
    Hierarchy,
    HierarchyError,
    LeafIndex,
    ambiguous_label,
    leaf_counts,
)

# Builders (intervals, masking, suppression, dates...) live in hieranon.hierarchies.builders;
# these names stay importable from here for code written against earlier versions.
from .builders import dates, intervals, masking, suppression  # noqa: F401 - re-exported

# pyarrow's CSV reader is imported inside the fast loader of large hierarchy files, the only one that needs it


# ---------------------------------------------------------------- building
class _Builder:
    """Accumulates nodes keyed by an identity, checking single parenthood;
    ``origin[v]`` is where node ``v`` was first given (a row number)."""

    def __init__(self, name: str, root_label: str = ROOT_LABEL):
        self.name = name
        self.labels = [root_label]
        self.parent = [-1]
        self.origin: list[int] = [0]
        self.index: dict = {("root",): 0}

    def add(self, key, label: str, parent_id: int, origin: int = 0) -> int:
        found = self.index.get(key)
        if found is not None:
            if self.parent[found] != parent_id:
                raise HierarchyError(
                    f"hierarchy of attribute {self.name!r}: value {excerpt(label)} has two parents "
                    f"({excerpt(self.labels[self.parent[found]])} and {excerpt(self.labels[parent_id])})"
                )
            return found
        self.labels.append(label)
        self.parent.append(parent_id)
        self.origin.append(origin)
        self.index[key] = len(self.labels) - 1
        return len(self.labels) - 1

    def build(self) -> Hierarchy:
        return Hierarchy(self.name, self.labels, np.array(self.parent, dtype=np.int32))


def _without_trailing_empties(row: list[str]) -> list[str]:
    """A row with the empty cells after its last value removed (a trailing
    separator, as spreadsheets write, adds no level)."""
    while row and not row[-1]:
        row.pop()
    return row


def _row_text(row: Sequence[str]) -> str:
    return excerpt(";".join(row), 80)


def from_paths(name: str, rows: Sequence[Sequence[str]], *, allow_unbalanced: bool = False,
               source: str = "") -> Hierarchy:
    """Build from leaf-to-root rows (ARX order: ``leaf, level h-1, ..., root``).

    Rows of different lengths describe an unbalanced tree; they are rejected
    unless ``allow_unbalanced`` (the tree is then read with depth as level).
    A node is identified by its label and its depth, so a label repeated on
    consecutive levels (``a;a;*``) is a chain of distinct nodes; a label that
    would name two nodes with different values (a leaf that is also a
    generalisation, a cycle ``M;F;*`` / ``F;M;*``) is refused naming both
    lines (:func:`ambiguous_label`).
    """
    if len(rows) >= FAST_LOAD_MIN_ROWS:
        try:
            return _from_columns(name, _row_columns(rows))
        except _NotSimple:
            pass  # read row by row below, which names what is wrong
    where = f" ({source})" if source else ""
    numbered = [(i, _without_trailing_empties([normalise_text(str(c)) for c in r]))
                for i, r in enumerate(rows, start=1) if any(normalise_text(str(c)) for c in r)]
    rows = [r for _, r in numbered]
    if not rows:
        raise HierarchyError(f"hierarchy of attribute {name!r}{where} is empty")
    lengths = {len(r) for r in rows}
    if len(lengths) > 1 and not allow_unbalanced:
        by_len = {}
        for r in rows:
            by_len.setdefault(len(r), r[0])
        detail = ", ".join(f"{n} columns (e.g. {excerpt(v)})" for n, v in sorted(by_len.items()))
        raise HierarchyError(
            f"hierarchy of attribute {name!r}{where} has rows of different lengths: {detail}; "
            "every row must list a leaf and all its ancestors up to the root"
        )
    roots = {r[-1] for r in rows}
    if len(roots) > 1:
        shown = ", ".join(excerpt(x, 20) for x in sorted(roots)[:2]) + (", ..." if len(roots) > 2 else "")
        raise HierarchyError(
            f"hierarchy of attribute {name!r}{where} has several roots ({len(roots)}: {shown}); "
            "the last column must be the same value (normally '*') on every row"
        )
    b = _Builder(name, roots.pop())
    seen_leaves: set[str] = set()
    for line, r in numbered:
        if len(r) == 1:
            raise HierarchyError(f"hierarchy of attribute {name!r}{where}: row {_row_text(r)} has no root column")
        if r[0] in seen_leaves:
            raise HierarchyError(f"hierarchy of attribute {name!r}{where}: leaf value {excerpt(r[0])} is listed "
                                 f"twice (again on line {line})")
        seen_leaves.add(r[0])
        parent_id = 0
        path = list(reversed(r[:-1]))  # from just below the root to the leaf
        for depth, label in enumerate(path, start=1):
            if not label:
                raise HierarchyError(f"hierarchy of attribute {name!r}{where}: empty value in row {_row_text(r)}")
            parent_id = b.add((depth, label), label, parent_id, line)
    try:
        h = b.build()
    except AmbiguousLabelError as exc:
        lines = dict(numbered)
        first, second = sorted(b.origin[v] for v in exc.nodes)
        raise AmbiguousLabelError(
            f"hierarchy of attribute {name!r}{where}: label {excerpt(exc.label)} names two different nodes, "
            f"on line {first} ({_row_text(lines.get(first, []))}) and on line {second} "
            f"({_row_text(lines.get(second, []))}); a label must stand for one set of values: rename one of them",
            exc.label, exc.nodes) from None
    leaf_labels = set(h.leaf_index)
    inner = [r[0] for r in rows if r[0] not in leaf_labels]
    if inner:
        raise HierarchyError(
            f"hierarchy of attribute {name!r}{where}: value(s) {', '.join(excerpt(x) for x in inner[:5])} are "
            "listed as leaves but also have children"
        )
    return h


#: From this many rows on, a hierarchy is loaded column by column (:func:`_from_columns`).
FAST_LOAD_MIN_ROWS = 5_000


class _NotSimple(Exception):
    """The rows are not a plain balanced, well-formed hierarchy: the row-by-row
    reader takes over (and names the problem, if there is one)."""


def _factorized(col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(code of every cell, distinct values in order of first appearance) of
    a column of cells, read as text (:func:`_normalised`)."""

    if pd.api.types.infer_dtype(col, skipna=False) != "string":
        col = np.array([str(c) for c in col], dtype=object)
    return _normalised(*pd.factorize(col))


def _normalised(code: np.ndarray, uniq) -> tuple[np.ndarray, np.ndarray]:
    """A factorized column of text with its distinct values normalised
    (:func:`hieranon.core.cells.normalise_text`): values equal once normalised
    (surrounding spaces, another Unicode form) become one value, still in
    order of first appearance."""

    uniq = np.asarray(uniq, dtype=object)
    normal = normalise_texts(uniq)
    if not (normal == uniq).all():
        code, normal = pd.factorize(normal[code])
    return np.asarray(code, dtype=np.int64), np.asarray(normal, dtype=object)


def _row_columns(rows: Sequence[Sequence[str]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Leaf-to-root rows as one factorized column per level (leaf first)."""
    if len({len(r) for r in rows}) != 1:
        raise _NotSimple
    table = np.empty((len(rows), len(rows[0])), dtype=object)
    table[:] = rows if isinstance(rows, list) else list(rows)
    return [_factorized(table[:, j]) for j in range(table.shape[1])]


def _text_columns(text: str, sep: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """ARX CSV text as one factorized column per level, read and
    dictionary-encoded by Arrow (no Python string per cell); a trailing
    separator on every row adds no level."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    first = next(csv.reader(io.StringIO(text[: text.find("\n") + 1 or len(text)]), delimiter=sep), [])
    names = [f"c{j}" for j in range(len(first))]
    try:
        table = pcsv.read_csv(
            pa.BufferReader(text.encode("utf-8")),
            read_options=pcsv.ReadOptions(column_names=names),
            parse_options=pcsv.ParseOptions(delimiter=sep, quote_char='"', double_quote=True),
            convert_options=pcsv.ConvertOptions(column_types={n: pa.string() for n in names},
                                                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, ValueError) as exc:  # ragged rows, odd quoting: the row reader decides
        raise _NotSimple from exc
    cols = []
    for name in names:
        enc = pc.dictionary_encode(table[name].combine_chunks())
        cols.append(_normalised(enc.indices.to_numpy(zero_copy_only=False), enc.dictionary.to_pylist()))
    while len(cols) > 1 and list(cols[-1][1]) == [""]:  # an empty last column
        cols.pop()
    return cols


def _from_columns(name: str, cols: list[tuple[np.ndarray, np.ndarray]]) -> Hierarchy:
    """A balanced hierarchy from its levels, each factorized as (code of
    every row, distinct values in order of first appearance), leaf column
    first, root column last, with the node ids :func:`from_paths` gives
    (order of first appearance, row by row, root side first) and no Python
    work per row. Anything unusual (an empty cell, two roots, a value with
    two parents, a repeated leaf, an ambiguous label) raises :class:`_NotSimple`."""
    if len(cols) < 2 or len(cols[0][0]) == 0:
        raise _NotSimple
    root = cols[-1][1]
    if len(root) != 1 or not root[0]:
        raise _NotSimple
    ids, firsts, uniques, parents = [], [], [], []
    for d, (code, uniq) in enumerate(cols[-2::-1], start=1):  # depth 1 (below the root) .. the leaves
        if not all(uniq):  # an empty cell
            raise _NotSimple
        seen = np.maximum.accumulate(code)  # values are numbered in order of first appearance
        first = np.flatnonzero(np.r_[True, seen[1:] > seen[:-1]])
        if d == 1:
            parent = np.full(len(uniq), -1, dtype=np.int64)
        else:
            parent = ids[-1][first]
            if (parent[code] != ids[-1]).any():  # a value with two parents
                raise _NotSimple
        ids.append(code)
        firsts.append(first)
        uniques.append(uniq)
        parents.append(parent)
    if len(uniques[-1]) != len(cols[0][0]):  # a leaf listed twice
        raise _NotSimple
    sizes = [len(u) for u in uniques]
    offset = np.concatenate([[0], np.cumsum(sizes)])
    depth = np.concatenate([np.full(n, d, dtype=np.int64) for d, n in enumerate(sizes)])
    order = np.lexsort((depth, np.concatenate(firsts)))  # by first row, the root side first
    new_id = np.empty(len(order), dtype=np.int64)
    new_id[order] = np.arange(1, len(order) + 1)
    parent_old = np.concatenate([p + offset[d - 1] if d else p for d, p in enumerate(parents)])
    parent = np.where(parent_old >= 0, new_id[np.maximum(parent_old, 0)], 0)
    labels = np.concatenate(uniques)[order]
    try:
        return Hierarchy(name, [str(root[0]), *labels.tolist()], np.concatenate([[-1], parent[order]]))
    except HierarchyError as exc:
        raise _NotSimple from exc


def _sniff_sep(text: str) -> str:
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    counts = {s: first.count(s) for s in (";", ",", "\t", "|")}
    sep = max(counts, key=counts.get)
    return sep if counts[sep] > 0 else ";"


def from_arx_csv(path_or_text, name: str | None = None, *, sep: str | None = None,
                 allow_unbalanced: bool = False, encoding: str = "utf-8-sig") -> Hierarchy:
    """Load ARX's hierarchy CSV: one row per leaf, ``leaf;level-2;...;*``.

    The separator (``;``, ``,``, tab or ``|``) is detected unless given. ``name``
    defaults to the file name with ARX's ``*_hierarchy_`` prefix removed.
    """
    source = ""
    if isinstance(path_or_text, Path) or (isinstance(path_or_text, str) and "\n" not in path_or_text):
        path = Path(path_or_text)
        source = str(path)
        if name is None:
            name = re.sub(r"^.*hierarchy_", "", path.stem)
        text = read_text_file(path, what="hierarchy file", about=f" for attribute {name!r}",
                              max_bytes=MAX_HIERARCHY_BYTES, encoding=encoding, error=HierarchyError)
    else:
        text = str(path_or_text)
    name = name or "attribute"
    sep = sep or _sniff_sep(text)
    if text.count("\n") >= FAST_LOAD_MIN_ROWS:
        try:
            return _from_columns(name, _text_columns(text, sep))
        except _NotSimple:
            pass  # read row by row below, which names what is wrong
    rows = list(csv.reader(io.StringIO(text), delimiter=sep))
    return from_paths(name, rows, allow_unbalanced=allow_unbalanced, source=source)


def from_mapping(name: str, tree: Mapping | Sequence) -> Hierarchy:
    """Build from a nested mapping ``{"*": {"Europe": ["England", ...], ...}}``.

    Values are mappings (label -> subtree) or lists (of leaf labels, or of
    single-key mappings). A single top-level key is the root; otherwise the
    mapping's keys hang under an implicit ``*`` root. Leaves may sit at
    different depths (an unbalanced tree).
    """
    if isinstance(tree, Mapping) and len(tree) == 1:
        root_label, body = next(iter(tree.items()))
    else:
        root_label, body = ROOT_LABEL, tree
    b = _Builder(name, value_to_label(root_label))
    seen: set[str] = {value_to_label(root_label)}

    def walk(body, parent_id: int):
        if body is None:
            return
        if isinstance(body, Mapping):
            items = list(body.items())
        elif isinstance(body, (list, tuple)):
            items = []
            for x in body:
                if isinstance(x, Mapping):
                    items.extend(x.items())
                else:
                    items.append((x, None))
        else:
            items = [(body, None)]
        for label, sub in items:
            label = value_to_label(label)
            if label in seen:
                raise HierarchyError(
                    f"hierarchy of attribute {name!r}: value {excerpt(label)} appears twice "
                    "(a value must have exactly one parent)"
                )
            seen.add(label)
            node = b.add(("label", label), label, parent_id)
            walk(sub, node)

    walk(body, 0)
    if len(b.labels) == 1:
        raise HierarchyError(f"hierarchy of attribute {name!r} is empty")
    return b.build()


def from_file(path, name: str | None = None, **kw) -> Hierarchy:
    """Load a hierarchy file by extension: ``.yaml``/``.yml``/``.json`` nested
    mappings, anything else ARX CSV."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml", ".json"):
        name = name or re.sub(r"^.*hierarchy_", "", path.stem)
        text = read_text_file(path, what="hierarchy file", about=f" for attribute {name!r}",
                              max_bytes=MAX_HIERARCHY_BYTES, encoding="utf-8-sig", error=HierarchyError)
        if suffix == ".json":
            try:
                tree = json.loads(text)
            except (ValueError, RecursionError) as exc:
                raise HierarchyError(f"hierarchy file {path} for attribute {name!r} cannot be parsed: "
                                     f"{shorten(exc)}") from None
        else:
            tree = load_yaml(text, source=f"hierarchy file {path} for attribute {name!r}", error=HierarchyError)
        return from_mapping(name, tree)
    return from_arx_csv(path, name, **kw)
