"""t-closeness by the Earth Mover's Distance (Li, Li and Venkatasubramanian
2007, "t-Closeness: Privacy Beyond k-Anonymity and l-Diversity", ICDE).

A class is t-close when the Earth Mover's Distance (EMD) between the
distribution ``P`` of the sensitive attribute in the class and its
distribution ``Q`` in the **whole original table** is at most ``t``
(Li et al. 2007, Def. 2). Three ground distances, as ARX offers them
(Li et al. 2007, Sec. 4.2):

* ``equal`` -- every two values at distance 1:
  ``EMD = 1/2 sum_i |p_i - q_i|``;
* ``ordered`` -- the values in order ``v_1 < ... < v_m`` (numerically for a
  numeric column, else a given order), ``|i - j| / (m - 1)`` apart:
  ``EMD = 1/(m-1) sum_i |sum_{j<=i} (p_j - q_j)|``; ``m`` counts the distinct
  values of the table;
* ``hierarchical`` -- the attribute's own value hierarchy, two leaves at
  ``height(lca) / H`` (``H`` the tree's height in edges):
  ``EMD = sum over inner nodes N of height(N)/H * min(pos_extra(N), neg_extra(N))``,
  where ``extra(N)`` is ``sum (p_i - q_i)`` over the leaves below ``N`` and
  ``pos_extra``/``neg_extra`` add up the positive/negative ``extra`` of ``N``'s
  children.

Monotonicity: ``EMD(P, Q)`` is convex in ``P`` and the distribution of a
union of classes is the size-weighted mixture of theirs, so the union of two
t-close classes is t-close (Li et al. 2007, Sec. 4.1, the generalisation and
subset properties of the EMD). Merging classes, or generalising further,
never breaks a satisfied t-closeness; the whole table has EMD 0, so
t-closeness is always feasible.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..core.cells import value_to_label
from ..core.jit import kernel
from ..core.tree import Hierarchy, HierarchyError
from ._base import (
    FAST_MARGIN,
    BoundModel,
    PrivacyError,
    PrivacyModel,
    class_blocks,
    positive_number,
    row_counts,
    sensitive_codes,
    settle_unsure,
)

__all__ = ["TCloseness", "DISTANCES", "emd_equal", "emd_ordered", "emd_hierarchical"]

#: Ground distances of the EMD.
DISTANCES = ("equal", "ordered", "hierarchical")
#: Absolute tolerance of ``EMD <= t`` (EMDs lie in [0, 1]).
EMD_TOL = 1e-12


def _distributions(hist: np.ndarray) -> np.ndarray:
    hist = np.asarray(hist, dtype=np.float64)
    n = hist.sum(axis=1, keepdims=True)
    return hist / np.where(n > 0, n, 1.0)


def _is_numeric(col: pd.Series) -> bool:
    """A numeric column, or one of text that all reads as numbers (a CSV
    read as text keeps its values exact): its values have an order."""
    if pd.api.types.is_bool_dtype(col):
        return False
    if pd.api.types.is_numeric_dtype(col):
        return True
    present = col.dropna()
    if len(present) == 0 or not (pd.api.types.is_object_dtype(col) or pd.api.types.is_string_dtype(col)):
        return False
    numbers = pd.to_numeric(present.astype(str).str.strip(), errors="coerce")
    return bool(numbers.notna().all())


#: numpy's pairwise summation sums blocks of at most this many values with
#: eight accumulators (``PW_BLOCKSIZE`` in numpy's sources). numpy 1.x
#: reduces rows of more than 8,192 values (its buffer) block by block: there
#: the last bits may differ.
PAIRWISE_BLOCK = 128


@kernel
def _block_sum(a, lo, n):
    """``a[lo:lo + n]`` (``n <=`` :data:`PAIRWISE_BLOCK`) summed as numpy
    sums a block: in order below eight values, else with eight accumulators."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - (n % 8):
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@kernel
def _pairwise(a, lo, n):
    """``a[lo:lo + n]`` summed as numpy's pairwise summation sums it: a
    block (:func:`_block_sum`) up to :data:`PAIRWISE_BLOCK` values, else the
    two halves (cut at a multiple of eight) summed so and added -- walked
    with a stack, not by recursion (a cached recursive kernel crashed the
    next process that loaded it)."""
    if n <= PAIRWISE_BLOCK:
        return _block_sum(a, lo, n)
    # pending ranges, deepest last (depth log2(n / 128): 128 is far more), each with how many halves are summed
    span_lo = np.empty(128, dtype=np.int64)
    span_n = np.empty(128, dtype=np.int64)
    halves_done = np.zeros(128, dtype=np.int64)
    sums = np.empty(128)  # the sums of finished ranges not yet added to their sibling
    top, n_sums = 0, 0
    span_lo[0], span_n[0] = lo, n
    while top >= 0:
        r_lo, r_n = span_lo[top], span_n[top]
        if r_n <= PAIRWISE_BLOCK:
            sums[n_sums] = _block_sum(a, r_lo, r_n)
            n_sums += 1
            top -= 1
            continue
        half = r_n // 2 - (r_n // 2) % 8
        done = halves_done[top]
        if done == 2:  # left + right, in that order
            sums[n_sums - 2] = sums[n_sums - 2] + sums[n_sums - 1]
            n_sums -= 1
            top -= 1
            continue
        halves_done[top] = done + 1
        top += 1
        span_lo[top] = r_lo if done == 0 else r_lo + half
        span_n[top] = half if done == 0 else r_n - half
        halves_done[top] = 0
    return sums[0]


@kernel
def _row_sum(a):
    """``a.sum()`` as numpy reduces a row of floats: pairwise (:func:`_pairwise`)."""
    return _pairwise(a, 0, len(a))


@kernel
def _emd_counts(hist, q, ordered, out):
    """The EMD of every row of counts ``hist`` to the distribution ``q``
    (equal, or with ``ordered``, the ordered distance), computed as
    :func:`_distributions` then :func:`emd_equal` / :func:`emd_ordered`
    compute it -- the same operations in the same order, numpy's pairwise
    sums included (:func:`_row_sum`), so the same floating-point result --
    in one call without temporaries: a repair step measures hundreds of
    merged classes, and with thousands of sensitive values (a numeric
    attribute under the ordered distance) numpy's passes over each took
    most of the run. The repair compares EMDs with each other: a last-bit
    difference could change its choices."""
    m = hist.shape[1]
    terms = np.empty(m)
    for i in range(hist.shape[0]):
        n = _row_sum(hist[i])
        if not n > 0:
            n = 1.0
        running = 0.0
        for j in range(m):
            d = hist[i, j] / n - q[j]
            if ordered:
                running = d if j == 0 else running + d
                d = running
            terms[j] = abs(d)
        total = _row_sum(terms)
        if ordered:
            out[i] = total / (m - 1) if m > 1 else 0.0
        else:
            out[i] = 0.5 * total


def emd_equal(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Equal ground distance: ``1/2 sum |p_i - q_i|`` per row of ``p``."""
    return 0.5 * np.abs(p - q).sum(axis=1)


def emd_ordered(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Ordered ground distance over columns in value order:
    ``1/(m-1) sum_i |sum_{j<=i} (p_j - q_j)|``."""
    m = p.shape[1]
    if m <= 1:
        return np.zeros(len(p))
    return np.abs(np.cumsum(p - q, axis=1)).sum(axis=1) / (m - 1)


class _Tree:
    """The part of a hierarchy above a set of leaves, numbered ``0..n-1``
    (the root 0): the node of every leaf column, every node's parent, the
    nodes below the root deepest first, and every inner node's weight
    ``height(N) / H``."""

    def __init__(self, h: Hierarchy, leaves: np.ndarray):
        leaves = np.asarray(leaves, dtype=np.int64)
        depth = h.depth[leaves].astype(np.int64)
        on_path = [h.ancestors[leaves[depth >= d], d] for d in range(h.height)]
        nodes = np.unique(np.concatenate([*on_path, np.zeros(1, np.int64)]).astype(np.int64))
        self.leaf = np.searchsorted(nodes, leaves).astype(np.int64)
        self.parent = np.full(len(nodes), -1, dtype=np.int64)
        self.parent[1:] = np.searchsorted(nodes, h.parent[nodes[1:]])
        self.order = (np.argsort(-h.depth[nodes[1:]], kind="stable") + 1).astype(np.int64)
        big_h = int(h.depth.max())
        height = h.level_from_leaf[nodes].astype(np.float64)
        weight = np.where(~h.is_leaf[nodes], height / big_h if big_h else 0.0, 0.0)
        self.inner = np.flatnonzero(weight > 0).astype(np.int64)
        self.weight = weight


@kernel
def _emd_tree(hist, q, leaf, parent, order, inner, weight):
    """Hierarchical EMD of every row of ``hist`` (record counts, or a
    distribution) taken as a distribution, against ``q``. The tree is
    summed once for ``P = 0`` (every leaf's extra is ``-q``); a row then
    changes only the paths above its values, so it costs two scans of its
    cells plus, per value present, one walk up the tree."""
    n_nodes = len(parent)
    extra0 = np.zeros(n_nodes)
    for v in range(len(leaf)):
        extra0[leaf[v]] -= q[v]
    pos0 = np.zeros(n_nodes)
    neg0 = np.zeros(n_nodes)
    for i in range(len(order)):  # deepest first: a node's extra is complete when it is passed up
        x = order[i]
        e = extra0[x]
        extra0[parent[x]] += e
        if e > 0.0:
            pos0[parent[x]] += e
        else:
            neg0[parent[x]] -= e
    base = 0.0
    for i in range(len(inner)):
        base += weight[inner[i]] * min(pos0[inner[i]], neg0[inner[i]])
    out = np.empty(hist.shape[0])
    delta = np.zeros(n_nodes)
    dpos = np.zeros(n_nodes)
    dneg = np.zeros(n_nodes)
    seen = np.zeros(n_nodes, dtype=np.bool_)
    touched = np.empty(n_nodes, dtype=np.int64)
    for r in range(hist.shape[0]):
        size = 0.0
        for v in range(hist.shape[1]):
            size += hist[r, v]
        if size <= 0.0:
            size = 1.0
        n_touched = 0
        for v in range(hist.shape[1]):
            if hist[r, v] == 0.0:
                continue
            m = hist[r, v] / size
            x = leaf[v]
            while x >= 0:
                delta[x] += m
                if not seen[x]:
                    seen[x] = True
                    touched[n_touched] = x
                    n_touched += 1
                x = parent[x]
        for i in range(n_touched):
            x = touched[i]
            up = parent[x]
            if up < 0:
                continue
            old, new = extra0[x], extra0[x] + delta[x]
            dpos[up] += max(new, 0.0) - max(old, 0.0)
            dneg[up] += max(-new, 0.0) - max(-old, 0.0)
        total = base
        for i in range(n_touched):
            x = touched[i]
            if weight[x] > 0.0:
                total += weight[x] * (min(pos0[x] + dpos[x], neg0[x] + dneg[x]) - min(pos0[x], neg0[x]))
        for i in range(n_touched):
            x = touched[i]
            delta[x] = 0.0
            dpos[x] = 0.0
            dneg[x] = 0.0
            seen[x] = False
        out[r] = max(total, 0.0)
    return out


def emd_hierarchical(p: np.ndarray, q: np.ndarray, tree: _Tree) -> np.ndarray:
    """Hierarchical ground distance (Li et al. 2007, Sec. 4.2): per row,
    ``sum_N height(N)/H * min(pos_extra(N), neg_extra(N))``. A row of
    ``p`` is a distribution, or record counts read as one; it costs two scans
    of its cells and a walk up the tree from each value it holds
    (:func:`_emd_tree`), about what the equal distance costs."""
    p = np.ascontiguousarray(p, dtype=np.float64).reshape(-1, len(tree.leaf))
    q = np.ascontiguousarray(q, dtype=np.float64).reshape(-1)
    return _emd_tree(p, q, tree.leaf, tree.parent, tree.order, tree.inner, tree.weight)


class _BoundT(BoundModel):
    higher_is_better = False

    def __init__(self, model, values, counts, labels, distance: str, tree: _Tree | None):
        super().__init__(model, values, counts, labels)
        self.distance = distance
        self.tree = tree
        self.q = _distributions(self.table_hist())

    @property
    def threshold(self) -> float:
        return float(self.model.t)

    def describe(self) -> str:
        return f"{self.model.t:g}-closeness of {self.attribute!r} ({self.distance} distance)"

    def measure_hist(self, hist: np.ndarray) -> np.ndarray:
        if self.distance == "hierarchical":  # the kernel reads counts as distributions itself
            return emd_hierarchical(hist, self.q, self.tree)
        if hist.ndim == 2:  # one kernel call, numpy's sums (its temporaries took a step's time with many values)
            out = np.empty(len(hist))
            _emd_counts(np.ascontiguousarray(hist, dtype=np.float64), self.q[0], self.distance == "ordered", out)
            return out
        p = _distributions(hist)
        if self.distance == "equal":
            return emd_equal(p, self.q)
        if self.distance == "ordered":
            return emd_ordered(p, self.q)
        return emd_hierarchical(p, self.q, self.tree)

    def ok_hist(self, hist: np.ndarray) -> np.ndarray:
        return self.measure_hist(hist) <= self.model.t + EMD_TOL

    def measure_and_ok(self, hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        emd = self.measure_hist(hist)
        return emd, emd <= self.model.t + EMD_TOL

    def ok_after_change(self, hist: np.ndarray, values: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """:meth:`BoundModel.ok_after_change`: with the equal or the ordered
        distance, one record more or less of value ``v`` changes a class's
        EMD by terms at ``v`` only (equal) or at and after ``v`` (ordered,
        through the cumulative shares), so every value is priced from a
        class's sums in ``O(values)``, not ``O(values^2)``. An EMD within
        :data:`~hieranon.privacy._base.FAST_MARGIN` of ``t`` (or of a class left empty) is
        checked on its histogram as :meth:`ok_hist` checks it: the answer is
        always the one :meth:`ok_hist` gives."""
        if self.distance not in ("equal", "ordered"):
            return super().ok_after_change(hist, values, delta)
        hist = np.asarray(hist, dtype=np.float64)
        values = np.asarray(values, dtype=np.int64)
        delta = np.asarray(delta, dtype=np.float64)
        ok = np.empty((len(hist), len(values)), dtype=bool)
        limit = self.model.t + EMD_TOL
        for lo, block in class_blocks(hist, len(values)):
            emd = np.empty((len(block), len(values)))
            for d in np.unique(delta):
                keys = np.flatnonzero(delta == d)
                emd[:, keys] = self._emd_after(block, values[keys], float(d))
            n_after = block.sum(axis=1)[:, None] + delta[None, :]
            part = ok[lo:lo + len(block)]
            part[:] = emd <= limit
            settle_unsure(self, block, values, delta, part, (np.abs(emd - limit) <= FAST_MARGIN) | (n_after <= 0))
        return ok

    def _emd_after(self, hist: np.ndarray, values: np.ndarray, d: float) -> np.ndarray:
        """The EMD of every class after ``d`` records of each of ``values``
        join it (equal or ordered distance; classes not left empty)."""
        q = self.q[0]
        n = hist.sum(axis=1, keepdims=True) + d
        n = np.where(n > 0, n, 1.0)
        if self.distance == "equal":
            gap = np.abs(hist / n - q)
            at = hist[:, values]
            return 0.5 * (gap.sum(axis=1, keepdims=True) - gap[:, values] + np.abs((at + d) / n - q[values]))
        m = hist.shape[1]
        if m <= 1:
            return np.zeros((len(hist), len(values)))
        cum = np.cumsum(hist, axis=1) / n - np.cumsum(q)  # the cumulative shares' gaps before the change
        before = np.zeros((len(hist), m + 1))
        np.cumsum(np.abs(cum), axis=1, out=before[:, 1:])  # sum over i < v of |gap_i|
        after = np.zeros((len(hist), m + 1))
        after[:, :m] = np.cumsum(np.abs(cum + d / n)[:, ::-1], axis=1)[:, ::-1]  # sum over i >= v, shifted by d/n
        return (before[:, values] + after[:, values]) / (m - 1)

    def min_class_size(self) -> int:
        """With the equal distance, a class of ``n`` records shares at most
        the ``n`` most frequent values' mass with the table:
        ``EMD = 1 - sum_i min(p_i, q_i) >= 1 - (q_(1) + ... + q_(n))``, so
        ``n`` must reach ``1 - t`` of the table's mass (Li et al. 2007, Def. 2
        with the equal ground distance). The other distances: 1."""
        if self.distance != "equal":
            return 1
        mass = np.cumsum(np.sort(self.q[0])[::-1])
        return int(np.searchsorted(mass, 1.0 - self.model.t - EMD_TOL - 1e-12)) + 1

    def required_text(self) -> str:
        return f"EMD <= t = {self.model.t:g}"

    def achieved_text(self, value: float) -> str:
        return f"EMD = {value:.6g}"


class TCloseness(PrivacyModel):
    """t-closeness of ``attribute`` by the EMD (Li et al. 2007, Def. 2).

    Parameters
    ----------
    attribute : str
        The sensitive column.
    t : float
        ``0 <= t < 1`` (every EMD here is at most 1).
    distance : ``"equal"`` | ``"ordered"`` | ``"hierarchical"`` | None
        The ground distance; None resolves when binding: hierarchical when a
        ``hierarchy`` is given, ordered when the column is numeric, else equal.
    hierarchy : Hierarchy, optional
        The sensitive attribute's own hierarchy (its leaves must cover the
        column's values); needed by the hierarchical distance.
    order : sequence, optional
        The value order of the ordered distance for a non-numeric column
        (every value of the column must appear); else a hierarchy's depth-first
        leaf order is used when one is given.

    Monotone under merging classes (Li et al. 2007, Sec. 4.1).
    """

    kind = "t-closeness"

    def __init__(self, attribute: str, t: float, distance: str | None = None, hierarchy: Hierarchy | None = None,
                 order: Sequence | None = None):
        self.attribute = str(attribute)
        x = positive_number(t, f"t-closeness of {attribute!r}: t")
        if not 0 <= x < 1:
            raise PrivacyError(f"t-closeness of {attribute!r}: t must be >= 0 and < 1 (an EMD is at most 1), "
                               f"got {t!r}")
        self.t = x
        if distance is not None and distance not in DISTANCES:
            raise PrivacyError(f"t-closeness of {attribute!r}: unknown distance {distance!r}; choose one of "
                               f"{', '.join(DISTANCES)}")
        if distance == "hierarchical" and hierarchy is None:
            raise PrivacyError(f"t-closeness of {attribute!r}: the hierarchical distance needs the attribute's "
                               f"hierarchy (--sensitive-hierarchy {attribute}=FILE)")
        self.distance = distance
        self.hierarchy = hierarchy
        self.order = None if order is None else list(order)

    def describe(self) -> str:
        how = f" ({self.distance} distance)" if self.distance else ""
        return f"{self.t:g}-closeness of {self.attribute!r}{how}"

    def __repr__(self) -> str:
        return (f"TCloseness({self.attribute!r}, {self.t!r}, distance={self.distance!r}, "
                f"hierarchy={self.hierarchy!r}, order={self.order!r})")

    def resolve_distance(self, df: pd.DataFrame) -> str:
        """The ground distance used on ``df`` (see the class docstring)."""
        if self.distance is not None:
            return self.distance
        if self.hierarchy is not None:
            return "hierarchical"
        return "ordered" if _is_numeric(df[self.attribute]) else "equal"

    def bind(self, df: pd.DataFrame, counts: np.ndarray | None = None) -> BoundModel:
        values, labels = sensitive_codes(df, self.attribute)
        counts = row_counts(df, counts)
        distance = self.resolve_distance(df)
        tree = None
        if distance in ("ordered", "hierarchical"):
            missing = pd.isna(pd.Series(labels, dtype=object)).to_numpy()
            if missing.any():
                raise PrivacyError(f"{self.describe()}: column {self.attribute!r} has missing values, which the "
                                   f"{distance} distance cannot place; fill them or use the equal distance")
        if distance == "ordered":
            rank = self._ranks(labels)
        elif distance == "hierarchical":
            leaves = self._leaves(labels)
            rank = np.argsort(np.argsort(leaves, kind="stable"), kind="stable")
            tree = _Tree(self.hierarchy, np.sort(leaves))
        else:
            rank = np.arange(len(labels))
        # columns in value order: code v -> column rank[v]
        order = np.argsort(rank, kind="stable")
        bound = _BoundT(self, rank[values], counts, labels[order], distance, tree)
        return bound

    def _leaves(self, labels: np.ndarray) -> np.ndarray:
        try:
            return self.hierarchy.codes_of(labels).astype(np.int64)
        except HierarchyError as exc:
            raise PrivacyError(f"{self.describe()}: {exc}") from None

    def _ranks(self, labels: np.ndarray) -> np.ndarray:
        """Position of every distinct value in the value order."""
        values = pd.Series(labels, dtype=object)  # the distinct values: read once each, not per row
        if self.order is None and _is_numeric(values):
            numbers = pd.to_numeric(values.astype(str).str.strip()).to_numpy(dtype=np.float64)
            return np.argsort(np.argsort(numbers, kind="stable"), kind="stable")
        if self.order is None and self.hierarchy is not None:
            return np.argsort(np.argsort(self._dfs_positions(self._leaves(labels)), kind="stable"), kind="stable")
        if self.order is None:
            raise PrivacyError(f"{self.describe()}: column {self.attribute!r} is not numeric; the ordered distance "
                               "needs the order of its values: order: [...] beside the model under privacy: in a "
                               "configuration, or a hierarchy of the values (--sensitive-hierarchy "
                               f"{self.attribute}=FILE; its leaves in order)")

        where = {value_to_label(v): i for i, v in enumerate(self.order)}
        absent = [value_to_label(v) for v in labels if value_to_label(v) not in where]
        if absent:
            raise PrivacyError(f"{self.describe()}: value(s) {sorted(set(absent))[:10]} of column "
                               f"{self.attribute!r} are not in the given order")
        pos = np.array([where[value_to_label(v)] for v in labels], dtype=np.int64)
        return np.argsort(np.argsort(pos, kind="stable"), kind="stable")

    def _dfs_positions(self, leaves: np.ndarray) -> np.ndarray:
        h = self.hierarchy
        order, stack = [], [0]
        while stack:
            v = stack.pop()
            kids = h.children[v]
            if len(kids) == 0:
                order.append(v)
            else:
                stack.extend(reversed(kids.tolist()))
        pos = np.empty(h.n_nodes, dtype=np.int64)
        pos[np.array(order, dtype=np.int64)] = np.arange(len(order))
        return pos[leaves]
