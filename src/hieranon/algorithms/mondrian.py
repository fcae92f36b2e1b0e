"""Mondrian multidimensional partitioning (LeFevre, DeWitt, Ramakrishnan, ICDE 2006).

Top-down: a partition (a set of rows) is cut in two on one attribute at the
median, recursively, while a cut is *allowable* (both sides keep >= k
records); the rows of each final partition are then generalised to the lowest
common ancestor (LCA) of their values in every attribute's hierarchy, so the
output is an ordinary generalised table on which every metric of
:mod:`hieranon.metrics` applies.

Choice of attribute: the one of widest *normalised range* in the partition,
falling back to the next widest when its cut is not allowable:

* categorical attribute: ``(leaves under the partition's LCA - 1) /
  (leaves of the hierarchy - 1)``;
* numeric attribute (leaf labels that parse as numbers, named in ``numeric``
  or auto-detected): ``(max - min) / (max - min over the whole table)``.

Median cuts:

* numeric attributes are ordered by value; categorical attributes by a
  depth-first order of their leaves, in which every node's leaves are
  contiguous, so a cut never separates less than it must;
* ``strict=True`` (default): records sharing the median value stay on one
  side. The median ``m`` is the smallest value whose cumulative record count
  reaches half the partition; the cut is ``<= m | > m``, or, when that is not
  allowable, ``< m | >= m``;
* ``strict=False`` (relaxed): when no strict cut on any attribute is
  allowable, the widest attribute whose median value can be divided is cut
  so: rows are ordered by value (then row index) and the largest prefix of at
  most half the records goes left. Relaxed partitioning thus goes on where
  strict partitioning stops (it refines the strict result, never coarsens
  it); multiway hierarchy cuts are never relaxed;
* ``categorical="hierarchy"``: a categorical attribute is instead cut into
  the children of the partition's LCA (a multiway cut along the tree),
  allowable when every child group has >= k records.

Counts of a count column are records: rows are never divided.
"""

from __future__ import annotations

import math

import numpy as np

from ..hierarchy import Hierarchy
from .base import Algorithm, Problem, Solution, log

CATEGORICAL_SPLITS = ("median", "hierarchy")


def dfs_positions(h: Hierarchy) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Depth-first leaf order of ``h``: for every node the first and last leaf
    position below it (``lo``, ``hi``), and the leaf at each position."""
    n = h.n_nodes
    lo = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(n, -1, dtype=np.int64)
    order = []
    stack = [0]
    while stack:
        v = stack.pop()
        kids = h.children[v]
        if len(kids) == 0:
            lo[v] = hi[v] = len(order)
            order.append(v)
        else:
            stack.extend(reversed(kids.tolist()))
    # propagate ranges to ancestors (parents precede children in node order)
    for v in range(n - 1, 0, -1):
        p = h.parent[v]
        lo[p] = min(lo[p], lo[v])
        hi[p] = max(hi[p], hi[v])
    return lo, hi, np.array(order, dtype=np.int64)


def parse_number(label: str) -> float | None:
    try:
        x = float(label)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def is_numeric(h: Hierarchy) -> bool:
    """True when every leaf label of ``h`` parses as a finite number."""
    return len(h.leaf_index) > 1 and all(parse_number(x) is not None for x in h.leaf_index)


class _Attribute:
    """Per-attribute arrays Mondrian needs (DFS order, numeric ranks)."""

    def __init__(self, h: Hierarchy, codes: np.ndarray, numeric: bool):
        self.h = h
        self.codes = codes
        self.numeric = numeric
        lo, hi, self.leaf_at = dfs_positions(h)
        self.n_leaves_below = hi - lo + 1
        self.total_leaves = len(self.leaf_at)
        self.dfs_lo = lo[codes].astype(np.int32)
        self.dfs_hi = hi[codes].astype(np.int32)
        self._dense = h.n_nodes <= 2048
        if numeric:
            vals = np.full(h.n_nodes, np.nan)
            for v in h.leaves:
                vals[v] = parse_number(h.labels[v])
            nlo = vals.copy()
            nhi = vals.copy()
            for v in range(h.n_nodes - 1, 0, -1):  # subtree min/max
                p = h.parent[v]
                nlo[p] = np.fmin(nlo[p], nlo[v])
                nhi[p] = np.fmax(nhi[p], nhi[v])
            self.num_lo = nlo[codes]
            self.num_hi = nhi[codes]
            self.values = np.unique(self.num_lo)
            self.pos = np.searchsorted(self.values, self.num_lo).astype(np.int64)
            span = float(self.num_hi.max() - self.num_lo.min()) if len(codes) else 0.0
            self.span = span
        else:
            self.pos = self.dfs_lo
            self.values = None
        self.domain = int(self.pos.max()) + 1 if len(codes) else 1

        # categorical NCP of every node: (leaves under it - 1) / (leaves - 1)
        if self.total_leaves <= 1:
            self.loss = np.zeros(h.n_nodes)
        else:
            self.loss = (self.n_leaves_below - 1) / (self.total_leaves - 1)
        self._lca_pos = None
        if self._dense and self.total_leaves <= 1024:
            self._lca_pos = h.lca_table[np.ix_(self.leaf_at, self.leaf_at)]

    def lca(self, dlo: int, dhi: int) -> int:
        """LCA of the leaves at DFS positions ``dlo..dhi`` (that of the two ends)."""
        if self._lca_pos is not None:
            return int(self._lca_pos[dlo, dhi])
        a, b = self.leaf_at[dlo], self.leaf_at[dhi]
        if a == b:
            return int(a)
        return int(self.h.lca(np.array([a]), np.array([b]))[0])

    def category_loss(self, node: int) -> float:
        """(leaves under node - 1) / (leaves - 1): the categorical NCP."""
        return float(self.loss[node])


class Mondrian(Algorithm):
    """Mondrian multidimensional k-anonymity (strict or relaxed).

    Parameters
    ----------
    strict : bool
        Strict partitioning (default): records with the median value never
        divided. ``False``: relaxed, halves by record count.
    categorical : {"median", "hierarchy"}
        Median cut in depth-first leaf order (default), or multiway cut into
        the children of the partition's LCA.
    numeric : list of str, optional
        Attributes cut by numeric value; default: those whose leaf labels
        all parse as numbers (``[]`` for none).
    numeric_ranges : bool
        Also report ``info['ranges']``: for each numeric attribute the
        ``"min-max"`` range of every partition (``info['partition']`` maps
        rows to partitions).

    ``info``: ``partitions`` (count), ``partition`` (row -> partition index),
    ``partition_sizes``, ``ncp`` (normalised certainty penalty averaged over
    QI cells: numeric attributes by the partition's value range over the
    table's, categorical ones by ``(leaves under the LCA - 1) / (leaves - 1)``),
    ``ncp_hierarchy`` (every attribute by its output LCA), ``numeric``,
    ``cuts``.
    """

    name = "mondrian"
    multi_requirement = False

    def __init__(self, strict: bool = True, categorical: str = "median", numeric: list[str] | None = None,
                 numeric_ranges: bool = False):
        if categorical not in CATEGORICAL_SPLITS:
            raise ValueError(f"categorical must be one of {CATEGORICAL_SPLITS}, got {categorical!r}")
        self.strict = bool(strict)
        self.categorical = categorical
        self.numeric = None if numeric is None else list(numeric)
        self.numeric_ranges = bool(numeric_ranges)

    # --------------------------------------------------------------- setup
    def _attributes(self, problem: Problem) -> list[_Attribute]:
        t = problem.table
        if self.numeric is not None:
            unknown = [a for a in self.numeric if a not in t.qi_names]
            if unknown:
                raise ValueError(f"mondrian: numeric attribute(s) {unknown} are not quasi-identifiers {t.qi_names}")
            bad = [a for a in self.numeric if not is_numeric(t.hierarchies[t.column(a)])]
            if bad:
                raise ValueError(f"mondrian: attribute(s) {bad} named numeric have leaf values that are not numbers")
        attrs = []
        for j, (q, h) in enumerate(zip(t.qi_names, t.hierarchies)):
            num = (q in self.numeric) if self.numeric is not None else is_numeric(h)
            attrs.append(_Attribute(h, t.codes[:, j], num))
        return attrs

    # ----------------------------------------------------------------- cuts
    def _widths(self, attrs, rows) -> tuple[np.ndarray, list[int]]:
        dlo = self._dlo[rows].min(axis=0)
        dhi = self._dhi[rows].max(axis=0)
        lcas = [a.lca(int(lo), int(hi)) for a, lo, hi in zip(attrs, dlo, dhi)]
        widths = np.array([a.loss[v] for a, v in zip(attrs, lcas)])
        if self._num_cols:
            span = self._nhi[rows].max(axis=0) - self._nlo[rows].min(axis=0)
            widths[self._num_cols] = span * self._inv_span
        return widths, lcas

    def _cut(self, a: _Attribute, rows: np.ndarray, w: np.ndarray, k: int, lca: int, relax: bool = False):
        """Allowable cut of ``rows`` on attribute ``a`` as a list of row arrays,
        or None; ``relax`` allows dividing the rows with the median value."""
        if self.categorical == "hierarchy" and not a.numeric:
            if relax:
                return None
            h = a.h
            d = int(h.depth[lca]) + 1
            codes = a.codes[rows]
            if (h.depth[codes] < d).any():  # a cell already at the LCA cannot be divided
                return None
            child = h.ancestors[codes, d]
            uniq, inv = np.unique(child, return_inverse=True)
            if len(uniq) < 2:
                return None
            sizes = np.bincount(inv, weights=w)
            if sizes.min() < k:
                return None
            order = np.argsort(inv, kind="stable")
            bounds = np.cumsum(np.bincount(inv))[:-1]
            return np.split(rows[order], bounds)
        pos = a.pos[rows]
        total = float(w.sum())
        hist = np.bincount(pos, weights=w, minlength=a.domain)
        cum = np.cumsum(hist)
        med = int(np.searchsorted(cum, total / 2.0 - 1e-9))
        left = cum[med]
        if left >= k and total - left >= k:
            mask = pos <= med
            return [rows[mask], rows[~mask]]
        left = cum[med - 1] if med > 0 else 0.0
        if left >= k and total - left >= k:
            mask = pos < med
            return [rows[mask], rows[~mask]]
        if not relax:
            return None
        # relaxed: divide the rows holding the median value to balance the halves
        order = np.argsort(pos, kind="stable")
        cum = np.cumsum(w[order])
        cut = int(np.searchsorted(cum, total / 2.0 + 1e-9, side="right"))  # rows with cum <= half
        left = cum[cut - 1] if cut > 0 else 0.0
        if not (left >= k and total - left >= k):
            return None
        return [rows[order[:cut]], rows[order[cut:]]]

    # ---------------------------------------------------------------- solve
    def solve(self, problem: Problem) -> Solution:
        self.check_problem(problem)
        t = problem.table
        k = problem.k
        attrs = self._attributes(problem)
        self._dlo = np.stack([a.dfs_lo for a in attrs], axis=1)
        self._dhi = np.stack([a.dfs_hi for a in attrs], axis=1)
        self._num_cols = [j for j, a in enumerate(attrs) if a.numeric]
        if self._num_cols:
            self._nlo = np.stack([attrs[j].num_lo for j in self._num_cols], axis=1)
            self._nhi = np.stack([attrs[j].num_hi for j in self._num_cols], axis=1)
            self._inv_span = np.array([1.0 / attrs[j].span if attrs[j].span > 0 else 0.0 for j in self._num_cols])
        counts = t.counts.astype(np.float64)
        partition = np.empty(t.n_rows, dtype=np.int64)
        out = np.empty_like(t.codes)
        final_lcas: list[list[int]] = []
        final_rows: list[np.ndarray] = []
        stack = [np.arange(t.n_rows, dtype=np.int64)]
        n_cuts = 0
        if t.n_records < k:
            raise ValueError(f"mondrian: the table has {t.n_records} records, fewer than k={k}")
        while stack:
            rows = stack.pop()
            widths, lcas = self._widths(attrs, rows)
            w = counts[rows]
            parts = None
            # no cut can leave both sides >= k in fewer than 2k records
            ranked = [] if w.sum() < 2 * k else [int(j) for j in np.argsort(-widths, kind="stable") if widths[j] > 0]
            for relax in ((False,) if self.strict else (False, True)):
                for j in ranked:
                    parts = self._cut(attrs[j], rows, w, k, lcas[j], relax)
                    if parts is not None:
                        break
                if parts is not None:
                    break
            if parts is None:
                pid = len(final_rows)
                final_rows.append(rows)
                final_lcas.append(lcas)
                partition[rows] = pid
                out[rows] = np.array(lcas, dtype=out.dtype)
                continue
            n_cuts += 1
            stack.extend(reversed(parts))
        sizes = np.bincount(partition, weights=counts, minlength=len(final_rows)).astype(np.int64)
        info = {
            "partitions": len(final_rows),
            "partition": partition,
            "partition_sizes": sizes,
            "cuts": n_cuts,
            "numeric": [q for q, a in zip(t.qi_names, attrs) if a.numeric],
            "strict": self.strict,
            "categorical": self.categorical,
        }
        info.update(self._ncp(attrs, final_rows, final_lcas, counts, t.qi_names))
        log.info("mondrian: %d partitions, NCP %.4f", len(final_rows), info["ncp"])
        return Solution(out, np.zeros(t.n_rows, dtype=bool), info)

    def _ncp(self, attrs, final_rows, final_lcas, counts, names) -> dict:
        n = float(counts.sum())
        m = len(attrs)
        sizes = np.array([counts[r].sum() for r in final_rows])
        lca = np.array(final_lcas, dtype=np.int64).reshape(len(final_rows), m)
        ncp_h = np.zeros(len(final_rows))
        ncp_r = np.zeros(len(final_rows))
        ranges = {}
        for j, a in enumerate(attrs):
            cat = np.array([a.category_loss(int(v)) for v in lca[:, j]])
            ncp_h += cat
            if a.numeric:
                mins = np.array([a.num_lo[r].min() for r in final_rows])
                maxs = np.array([a.num_hi[r].max() for r in final_rows])
                ncp_r += (maxs - mins) / a.span if a.span > 0 else 0.0
                if self.numeric_ranges:
                    ranges[names[j]] = [_fmt_range(lo, hi) for lo, hi in zip(mins, maxs)]
            else:
                ncp_r += cat
        denom = n * m if n and m else 1.0
        out = {"ncp": float(ncp_r @ sizes / denom), "ncp_hierarchy": float(ncp_h @ sizes / denom)}
        if self.numeric_ranges:
            out["ranges"] = ranges
        return out


def _fmt_range(lo: float, hi: float) -> str:
    f = (lambda x: str(int(x))) if float(lo).is_integer() and float(hi).is_integer() else (lambda x: f"{x:g}")
    return f(lo) if lo == hi else f"[{f(lo)}-{f(hi)}]"
