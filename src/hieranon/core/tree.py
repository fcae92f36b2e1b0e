"""Value generalisation hierarchies (VGHs) as integer trees: the :class:`Hierarchy` class.

A hierarchy is a rooted tree per attribute: leaves are the original values,
the root is ``*`` (any). Levels are numbered as in the papers (Li et al. 2006,
Def. 5): **level 1 is the root, level h the leaves** of a leaf-balanced tree.

Nodes are integer ids ``0..n_nodes-1`` with the root at id 0. Everything an
algorithm needs is precomputed as numpy arrays:

* ``parent[v]`` (``-1`` for the root) and ``depth[v]`` (0 at the root),
  so ``level[v] = depth[v] + 1``;
* ``ancestors[v, d]`` -- the ancestor of ``v`` at depth ``d`` (``v`` itself
  for ``d >= depth[v]``), so the lowest common ancestor of two nodes takes at
  most ``height`` look-ups (:meth:`Hierarchy.lca`);
* a dense ``node x node`` LCA table (:attr:`Hierarchy.lca_table`) for small
  hierarchies only, making the closest common generalisation (Li et al. 2006,
  Def. 8) of two codes one array look-up.

This module holds the tree alone, below both the loaders of hierarchy files
(:mod:`hieranon.hierarchies.readers`, the public home of every name defined here) and
the hierarchies built from the data (:mod:`hieranon.hierarchies.builders`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

import numpy as np
import pandas as pd

from .cells import normalise_texts, value_to_label
from .files import excerpt

ROOT_LABEL = "*"
#: Above this many nodes no dense LCA table is built (it would take n^2 ints).
DENSE_LCA_MAX_NODES = 2048


class HierarchyError(ValueError):
    """A hierarchy is malformed or does not cover the data; the message names
    the attribute and the offending values."""


class AmbiguousLabelError(HierarchyError):
    """One label prints two nodes that stand for different sets of values (a
    leaf that is also a generalisation, or a cycle of labels): an output cell
    showing it could not be read back. ``nodes`` are the two node ids."""

    def __init__(self, message: str, label: str = "", nodes: tuple[int, int] = (0, 0)):
        super().__init__(message)
        self.label = label
        self.nodes = nodes


def leaf_counts(parent: np.ndarray, ancestors: np.ndarray, depth: np.ndarray, is_leaf: np.ndarray) -> np.ndarray:
    """Number of leaves under every node of the tree given by its arrays
    (:class:`Hierarchy`'s ``parent``, ``ancestors``, ``depth``, ``is_leaf``):
    the size of the set of values each node stands for."""
    leaves = np.flatnonzero(is_leaf)
    out = np.zeros(len(parent), dtype=np.int64)
    for d in range(ancestors.shape[1]):
        below = leaves[depth[leaves] >= d]
        out += np.bincount(ancestors[below, d], minlength=len(parent))
    return out


def ambiguous_label(labels: Sequence[str], parent: np.ndarray, ancestors: np.ndarray,
                    depth: np.ndarray) -> tuple[str, int, int] | None:
    """The first label printed by two nodes with different sets of leaves, as
    ``(label, shallower node, deeper node)``, or None.

    A label repeated along one chain (``12;12;0..12;*``: the value kept as
    itself one level up) names the same values and is fine; a label used as
    a leaf and as a generalisation of other values, or in two branches, or
    in a cycle (``M;F;*`` with ``F;M;*``), is not."""

    codes, uniques = pd.factorize(np.asarray(labels, dtype=object))
    if len(uniques) == len(codes):  # the common case: every label once
        return None
    repeated = np.flatnonzero(np.bincount(codes)[codes] > 1)
    # by label (in order of first appearance), then shallower first, then by id
    repeated = repeated[np.lexsort((repeated, depth[repeated], codes[repeated]))]
    a, b = repeated[:-1], repeated[1:]
    pair = codes[a] == codes[b]
    a, b = a[pair], b[pair]
    n = len(labels)
    is_leaf = np.bincount(parent[1:], minlength=n) == 0
    counts = leaf_counts(parent, ancestors, depth, is_leaf)
    same_chain = (depth[a] < depth[b]) & (ancestors[b, np.minimum(depth[a], ancestors.shape[1] - 1)] == a)
    bad = np.flatnonzero(~(same_chain & (counts[a] == counts[b])))
    if len(bad) == 0:
        return None
    i = bad[0]
    return labels[a[i]], int(a[i]), int(b[i])


def _depths(parent: np.ndarray) -> np.ndarray:
    """Depth of every node (0 at the root) by walking all nodes up one level
    at a time: ``height`` vector steps."""
    depth = np.zeros(len(parent), dtype=np.int32)
    up = parent.astype(np.int64)
    live = np.flatnonzero(up >= 0)
    while len(live):
        depth[live] += 1
        up[live] = parent[up[live]]
        live = live[up[live] >= 0]
    return depth


class Children(Sequence):
    """The children of every node as one index array and offsets (no Python
    list per node): ``children[v]`` is a view of the ids under ``v``."""

    def __init__(self, order: np.ndarray, offsets: np.ndarray):
        self._order, self._offsets = order, offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, v):
        if isinstance(v, slice):
            return [self[i] for i in range(*v.indices(len(self)))]
        v = int(v)
        if v < 0:
            v += len(self)
        if not 0 <= v < len(self):
            raise IndexError(f"node {v} out of range")
        return self._order[self._offsets[v]:self._offsets[v + 1]]


class LeafIndex(Mapping):
    """Leaf label -> node id, backed by a :class:`pandas.Index` (one hash
    table in C, built on first look-up): a hierarchy of millions of leaves
    holds no Python int or dict entry per leaf, and :meth:`lookup` finds a
    whole array of labels at once."""

    def __init__(self, labels: np.ndarray, nodes: np.ndarray):
        self._labels, self._nodes = labels, nodes
        self._index = None

    @property
    def index(self):
        if self._index is None:
            self._index = pd.Index(self._labels, dtype=object)
        return self._index

    def lookup(self, labels: np.ndarray) -> np.ndarray:
        """Node id of every label, -1 where it is not a leaf."""
        if len(labels) == 0:
            return np.zeros(0, dtype=np.int32)
        pos = self.index.get_indexer(np.asarray(labels, dtype=object))
        return np.where(pos >= 0, self._nodes[np.maximum(pos, 0)], -1).astype(np.int32)

    def __getitem__(self, label) -> int:
        if not isinstance(label, str):
            raise KeyError(label)
        return int(self._nodes[self.index.get_loc(label)])

    def __contains__(self, label) -> bool:
        return isinstance(label, str) and label in self.index

    def __iter__(self):
        return iter(self._labels.tolist())

    def __len__(self) -> int:
        return len(self._labels)

    def __getstate__(self):  # the hash table is rebuilt where it is needed
        return {"_labels": self._labels, "_nodes": self._nodes, "_index": None}


@dataclass(eq=False)
class Hierarchy:
    """A value generalisation hierarchy of one attribute.

    Build one with a loader or builder of this module rather than directly.

    Attributes
    ----------
    name : str
        The attribute (column) this hierarchy generalises.
    labels : list[str]
        ``labels[v]`` is the printed value of node ``v`` (``labels[0]`` is the
        root's, normally ``*``).
    parent : ndarray of int32
        ``parent[v]``, ``-1`` for the root.
    date_format : str or None
        Set by :func:`dates`: the ``strftime`` format of the leaves, used to
        look up ``date``/``datetime``/``pd.Timestamp`` values (which
        :func:`value_to_label` prints as ``d/m/Y`` whatever the order).
    """

    name: str
    labels: list[str]
    parent: np.ndarray
    date_format: str | None = field(default=None, repr=False)
    depth: np.ndarray = field(init=False, repr=False)
    ancestors: np.ndarray = field(init=False, repr=False)
    leaf_index: LeafIndex = field(init=False, repr=False)
    _lca_table: np.ndarray | None = field(init=False, repr=False, default=None)
    _nodes_by_label: dict | None = field(init=False, repr=False, default=None)
    _children: Children | None = field(init=False, repr=False, default=None)
    _leaf_depth: np.ndarray | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        self.parent = np.asarray(self.parent, dtype=np.int32)
        n = len(self.labels)
        if n == 0:
            raise HierarchyError(f"hierarchy of attribute {self.name!r} is empty")
        if self.parent.shape != (n,) or self.parent[0] != -1:
            raise HierarchyError(f"hierarchy of attribute {self.name!r}: node 0 must be the root")
        # parents always precede children (builders guarantee it)
        bad = np.flatnonzero((self.parent[1:] < 0) | (self.parent[1:] >= np.arange(1, n)))
        if len(bad):
            raise HierarchyError(f"hierarchy of attribute {self.name!r}: node {self.labels[int(bad[0]) + 1]!r} "
                                 "has no valid parent")
        depth = _depths(self.parent)
        self.depth = depth
        counts = np.bincount(self.parent[1:], minlength=n)
        height = int(depth.max()) + 1
        anc = np.empty((n, height), dtype=np.int32)
        anc[:, :] = np.arange(n, dtype=np.int32)[:, None]
        for d in range(height - 1, -1, -1):
            # ancestor at depth d: walk one parent up from the ancestor at depth d+1
            if d < height - 1:
                deeper = anc[:, d + 1]
                step = np.where(depth > d, self.parent[deeper], deeper)
                anc[:, d] = np.where(depth > d, step, anc[:, d])
        self.ancestors = anc
        clash = ambiguous_label(self.labels, self.parent, anc, depth)
        if clash is not None:
            label, a, b = clash
            raise AmbiguousLabelError(
                f"hierarchy of attribute {self.name!r}: label {excerpt(label)} names two different nodes "
                f"({self._describe(a)} and {self._describe(b)}); a label must stand for one set of values",
                label, (a, b))
        # two leaves with one label were refused above (ambiguous_label)
        leaves = np.flatnonzero(counts == 0).astype(np.int32)
        self.leaf_index = LeafIndex(np.asarray(self.labels, dtype=object)[leaves], leaves)

    @property
    def children(self) -> Children:
        """``children[v]``: the child ids of node ``v`` (int32, increasing),
        built on first use as one index array and offsets."""
        if self._children is None:
            counts = np.bincount(self.parent[1:], minlength=self.n_nodes)
            order = (np.argsort(self.parent[1:], kind="stable") + 1).astype(np.int32)
            self._children = Children(order, np.concatenate([[0], np.cumsum(counts)]))
        return self._children

    def _describe(self, v: int) -> str:
        """A node in words, for messages: its place in the tree."""
        if not np.any(self.parent == v):
            where = f" under {excerpt(self.labels[self.parent[v]])}" if v else ""
            return f"a leaf{where}"
        return f"a generalisation at level {int(self.depth[v]) + 1}" + (
            f" under {excerpt(self.labels[self.parent[v]])}" if v else " (the root)")

    # ----------------------------------------------------------------- shape
    @property
    def n_nodes(self) -> int:
        return len(self.labels)

    @property
    def height(self) -> int:
        """Number of levels h (a leaf-balanced tree has h-1 generalisation steps)."""
        return self.ancestors.shape[1]  # one column per depth

    @property
    def level(self) -> np.ndarray:
        """Paper level of every node: 1 at the root, h at the leaves."""
        return self.depth + 1

    @property
    def is_leaf(self) -> np.ndarray:
        return np.bincount(self.parent[1:], minlength=self.n_nodes) == 0

    @property
    def leaves(self) -> np.ndarray:
        return np.flatnonzero(self.is_leaf).astype(np.int32)

    @property
    def is_balanced(self) -> bool:
        """True when every leaf sits at the same depth (levels are well defined)."""
        return bool(np.all(self.depth[self.is_leaf] == self.height - 1))

    def require_balanced(self, purpose: str) -> None:
        """Raise a clear error when ``purpose`` needs levels and the tree is unbalanced."""
        if not self.is_balanced:
            depths = sorted({int(d) + 1 for d in self.depth[self.is_leaf]})
            raise HierarchyError(
                f"hierarchy of attribute {self.name!r} is unbalanced (leaves at levels {depths}); "
                f"{purpose} needs every leaf at the same level -- pad the short branches "
                "(repeat a value on the levels it skips)"
            )

    @property
    def leaf_depth(self) -> np.ndarray:
        """Per node, the depth of the leaves below it in a balanced tree, else the
        deepest leaf below it (used as 'level_from_leaf' origin)."""
        if self._leaf_depth is None:
            below = self.depth.copy()
            for d in range(self.height - 1, 0, -1):  # deepest level first: a node's value is final before its parent's
                nodes = np.flatnonzero(self.depth == d)
                np.maximum.at(below, self.parent[nodes], below[nodes])
            self._leaf_depth = below
        return self._leaf_depth

    @property
    def level_from_leaf(self) -> np.ndarray:
        """Generalisation steps from the leaves to each node (0 at the leaves),
        as Han et al. 2014 and Arca & Hewett count them."""
        return (self.leaf_depth - self.depth).astype(np.int32)

    # ------------------------------------------------------------- look-ups
    def label_of(self, value) -> str:
        """The label ``value`` is looked up as: :func:`value_to_label`, except
        that date objects of a date hierarchy are printed in its own format."""
        if self.date_format is not None and isinstance(value, (datetime, date)):
            return value.strftime(self.date_format)
        return value_to_label(value)

    def code_of(self, value) -> int:
        """The node id of leaf ``value`` (raises :class:`HierarchyError`)."""
        label = self.label_of(value)
        try:
            return self.leaf_index[label]
        except KeyError:
            raise HierarchyError(
                f"value {label!r} of attribute {self.name!r} is not a leaf of its hierarchy"
            ) from None

    def node_of_label(self, label: str) -> int | None:
        """The node printed as ``label``: the leaf if one is, else the only
        inner node so printed (None when absent; an error when ambiguous)."""
        if label in self.leaf_index:
            return self.leaf_index[label]
        if self._nodes_by_label is None:
            self._nodes_by_label = {}
            for v, lab in enumerate(self.labels):
                self._nodes_by_label.setdefault(lab, []).append(v)
        hits = self._nodes_by_label.get(label, [])
        if len(hits) > 1:
            raise HierarchyError(f"attribute {self.name!r}: value {label!r} names {len(hits)} nodes of the "
                                 "hierarchy (on different levels); a generalised table cannot be read unambiguously")
        return hits[0] if hits else None

    def codes_of(self, labels: Iterable, generalised: bool = False) -> np.ndarray:
        """Vector version of :meth:`code_of` on distinct labels; the error lists
        every missing value (up to 10). With ``generalised``, inner-node labels
        (an already anonymised table) are read as those nodes."""
        labels = self.labels_of(labels)
        nodes = self.leaf_index.lookup(labels)
        absent = np.flatnonzero(nodes < 0)
        if generalised and len(absent):  # inner-node labels: few distinct ones
            inner = [self.node_of_label(x) for x in labels[absent]]
            nodes[absent] = [-1 if v is None else v for v in inner]
            absent = np.flatnonzero(nodes < 0)
        if len(absent):
            missing = labels[absent].tolist()
            shown = ", ".join(excerpt(x) for x in sorted(set(missing))[:10])
            more = len(set(missing)) - 10
            raise HierarchyError(
                f"attribute {self.name!r}: value(s) {shown}{f' and {more} more' if more > 0 else ''} "
                f"not found among the {'nodes' if generalised else 'leaves'} of its hierarchy -- "
                "add them to the hierarchy file"
            )
        return nodes

    def labels_of(self, values) -> np.ndarray:
        """:meth:`label_of` of every value, as an object array; whole columns
        of integers are converted without a Python call per value, whole
        columns of text by the one normalisation of cell text
        (:func:`hieranon.core.cells.normalise_texts`)."""

        arr = values if isinstance(values, np.ndarray) else np.asarray(list(values), dtype=object)
        if arr.dtype.kind in "iu":
            return arr.astype(str).astype(object)
        if arr.dtype.kind == "U" or (arr.dtype == object and len(arr)
                                     and pd.api.types.infer_dtype(arr, skipna=False) == "string"):
            return normalise_texts(arr)
        return np.array([self.label_of(x) for x in arr], dtype=object).reshape(arr.shape)

    def ancestor_at_depth(self, codes: np.ndarray, depth: int | np.ndarray) -> np.ndarray:
        """Ancestor of each code at ``depth`` (unchanged where the code is shallower)."""
        return self.ancestors[codes, np.minimum(depth, self.height - 1)]

    def lca(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Lowest common ancestor, element-wise, in at most ``height`` look-ups."""
        a = np.asarray(a, dtype=np.int32)
        b = np.asarray(b, dtype=np.int32)
        if self._dense_ok:
            return self.lca_table[a, b]
        a, b = np.broadcast_arrays(a, b)
        out = np.zeros(a.shape, dtype=np.int32)
        for d in range(1, self.height):
            aa, bb = self.ancestors[a, d], self.ancestors[b, d]
            same = (aa == bb) & (self.depth[a] >= d) & (self.depth[b] >= d)
            out = np.where(same, aa, out)
        return out

    @property
    def _dense_ok(self) -> bool:
        return self.n_nodes <= DENSE_LCA_MAX_NODES

    @property
    def lca_table(self) -> np.ndarray:
        """Dense ``n_nodes x n_nodes`` LCA table (only for small hierarchies)."""
        if self._lca_table is None:
            if not self._dense_ok:
                raise HierarchyError(
                    f"hierarchy of attribute {self.name!r} has {self.n_nodes} nodes; "
                    f"no dense LCA table above {DENSE_LCA_MAX_NODES} -- use lca()"
                )
            n = self.n_nodes
            idx = np.arange(n, dtype=np.int32)
            out = np.zeros((n, n), dtype=np.int32)
            for d in range(1, self.height):
                col = self.ancestors[:, d]
                deep = self.depth >= d
                same = (col[:, None] == col[None, :]) & deep[:, None] & deep[None, :]
                out = np.where(same, col[:, None], out)
            out[idx, idx] = idx
            self._lca_table = out
        return self._lca_table

    def is_ancestor_or_self(self, anc: np.ndarray, node: np.ndarray) -> np.ndarray:
        """True where ``anc`` is ``node`` or one of its ancestors."""
        anc = np.asarray(anc)
        node = np.asarray(node)
        d = self.depth[anc]
        return (d <= self.depth[node]) & (self.ancestors[node, d] == anc)

    def generalise_labels(self, leaf: np.ndarray, label: np.ndarray) -> np.ndarray:
        """For each (original leaf code, output label) pair, the node on the
        leaf's path to the root printed as ``label`` (the most specific such
        node), or -1 when no ancestor carries that label. This decodes an
        anonymised cell unambiguously even when a label repeats across levels."""
        leaf = np.asarray(leaf, dtype=np.int32)
        out = np.full(leaf.shape, -1, dtype=np.int32)
        labels = np.asarray(self.labels, dtype=object)
        label = np.asarray(label, dtype=object)
        for d in range(self.height - 1, -1, -1):
            node = self.ancestors[leaf, d]
            hit = (out < 0) & (self.depth[leaf] >= d) & (labels[node] == label)
            out[hit] = node[hit]
        return out

    def node_paths(self) -> list[list[str]]:
        """For every leaf, its labels from leaf to root (ARX row order)."""
        rows = []
        for v in self.leaves:
            rows.append([self.labels[a] for a in self.ancestors[v, : self.depth[v] + 1][::-1]])
        return rows

    def to_arx_csv(self, sep: str = ";") -> str:
        """Serialise in ARX's CSV format (one row per leaf, leaf first, root last)."""
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter=sep, lineterminator="\n")
        for row in self.node_paths():
            writer.writerow(row)
        return buf.getvalue()

    def to_mapping(self) -> dict:
        """Nested-mapping form (inverse of :func:`from_mapping`)."""
        def sub(v: int):
            kids = self.children[v]
            if all(len(self.children[c]) == 0 for c in kids):
                return [self.labels[c] for c in kids]
            return {self.labels[c]: (sub(c) if len(self.children[c]) else []) for c in kids}
        return {self.labels[0]: sub(0)}

    def renamed(self, name: str) -> Hierarchy:
        return Hierarchy(name, list(self.labels), self.parent.copy(), self.date_format)

    def __repr__(self) -> str:
        return (f"Hierarchy({self.name!r}, nodes={self.n_nodes}, leaves={len(self.leaf_index)}, "
                f"height={self.height}{'' if self.is_balanced else ', unbalanced'})")
