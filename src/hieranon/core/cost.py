"""The distortion cost algorithms minimise: the distortions of Li et al. 2006/2008,
Sun, Wang & Li 2008 and Han et al. 2014.

The distortion measures of the papers are all *additive along a path* in the
hierarchy, so each is represented by a per-node cost array ``g`` with the
distortion of generalising a cell from node ``u`` to its ancestor ``v``
equal to ``g[v] - g[u]``:

* WHD (Li et al. 2006, Def. 5), uniform weights ``w(j,j-1) = 1``, height weights
  ``w(j,j-1) = 1/(j-1)**beta`` or custom weights: ``g[v] = WHD(h, level(v))``
  (unbalanced trees: depth read as level);
* priority weights (Sun et al. 2008, Def. 4/5) multiply an attribute's ``g``;
* MAGE (Han et al. 2014, Def. 5): ``g[v] = omega * level_from_leaf(v) / H``.

Costs are kept as exact fractions and scaled to integers
(:class:`CostModel`) so that algorithms compare distances exactly: ties are
real ties, broken only by the seeded random generator. The table measures
built on them are in :mod:`hieranon.evaluation.metrics`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .tree import Hierarchy

WEIGHT_SCHEMES = ("uniform", "height", "mage", "custom")


def _fraction(x) -> Fraction:
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    return Fraction(float(x)).limit_denominator(10**6)


def level_weights(h: Hierarchy, scheme: str = "uniform", beta: float = 1.0,
                  custom: Sequence[float] | None = None) -> list[Fraction]:
    """Weights ``w(j, j-1)`` for ``j = 2..height`` (index 0 is ``w(2,1)``)."""
    height = h.height
    if scheme == "uniform":
        return [Fraction(1)] * (height - 1)
    if scheme == "height":
        if beta < 1:
            raise ValueError(f"height weights need beta >= 1 (Li et al. 2006, Def. 5), got {beta}")
        b = _fraction(beta)
        if b.denominator == 1:
            return [Fraction(1, (j - 1) ** int(b)) for j in range(2, height + 1)]
        return [_fraction(1.0 / (j - 1) ** float(beta)) for j in range(2, height + 1)]
    if scheme == "custom":
        if custom is None or len(custom) != height - 1:
            raise ValueError(
                f"attribute {h.name!r}: custom weights need {height - 1} values w(j,j-1) for j=2..{height}, "
                f"got {None if custom is None else len(custom)}"
            )
        ws = [_fraction(w) for w in custom]
        if any(w < 0 for w in ws) or sum(ws) == 0:
            raise ValueError(f"attribute {h.name!r}: custom weights must be >= 0 and not all zero")
        return ws
    raise ValueError(f"unknown weight scheme {scheme!r}; choose one of {WEIGHT_SCHEMES}")


def node_costs_exact(h: Hierarchy, scheme: str = "uniform", beta: float = 1.0,
                     custom: Sequence[float] | None = None, multiplier=1) -> list[Fraction]:
    """Exact per-node cost ``g[v]``: the distortion of a leaf (at the deepest
    level) generalised to ``v``. Leaf -> root costs ``multiplier`` (1 for WHD)
    except under MAGE, where it is ``(H-1)/H``."""
    values, index = node_cost_levels(h, scheme, beta, custom, multiplier)
    return [values[i] for i in index]


def node_cost_levels(h: Hierarchy, scheme: str = "uniform", beta: float = 1.0,
                     custom: Sequence[float] | None = None, multiplier=1) -> tuple[list[Fraction], np.ndarray]:
    """The exact costs of :func:`node_costs_exact` as ``(values, index)``:
    node ``v`` costs ``values[index[v]]``. A cost depends on the node's level
    only, so there are ``height`` values however many nodes (no Fraction per node)."""
    mult = _fraction(multiplier)
    height = h.height
    if height == 1:
        return [Fraction(0)], np.zeros(h.n_nodes, dtype=np.int64)
    if scheme == "mage":
        return [mult * Fraction(lvl, height) for lvl in range(height)], h.level_from_leaf.astype(np.int64)
    ws = level_weights(h, scheme, beta, custom)
    total = sum(ws)
    # C(l) = sum_{j=l+1..h} w(j,j-1) / total;  ws[j-2] = w(j,j-1)
    c_of_level = [sum(ws[j - 2] for j in range(lvl + 1, height + 1)) / total for lvl in range(1, height + 1)]
    return [mult * c for c in c_of_level], h.depth.astype(np.int64)


def equal_priorities(ranking: Sequence[str]) -> dict[str, Fraction]:
    """Equally scaled priorities (Sun et al. 2008): ranked 1..m (1 = most important),
    ``P_1 = 1``, ``P_j = 1 - (j-1)/(m-1)``."""
    m = len(ranking)
    if m == 1:
        return {ranking[0]: Fraction(1)}
    return {a: 1 - Fraction(j, m - 1) for j, a in enumerate(ranking)}


@dataclass
class CostModel:
    """Per-attribute node costs of a distortion measure, exact and scaled.

    Attributes
    ----------
    costs : list of ndarray of float64
        ``costs[j][v]`` = distortion of a leaf of attribute ``j`` generalised to ``v``.
    int_costs : list of ndarray of int64
        The same times ``scale``, exact integers (when ``exact``).
    scale : int
        Common denominator of all costs.
    exact : bool
        False when the common denominator was too large for int64 arithmetic
        (costs are then rounded to 1e-9 and ties may be approximate).
    """

    costs: list[np.ndarray]
    int_costs: list[np.ndarray]
    scale: int
    exact: bool = True
    description: str = ""

    @classmethod
    def build(cls, hierarchies: Sequence[Hierarchy], scheme: str = "uniform", beta: float = 1.0,
              priorities: Mapping[str, float] | Sequence[float] | None = None,
              custom: Mapping[str, Sequence[float]] | None = None, max_rows: int = 10**7) -> CostModel:
        """Cost model of ``scheme`` over ``hierarchies``; ``priorities`` (per
        attribute name or in order) multiply each attribute's costs."""
        if scheme not in WEIGHT_SCHEMES:
            raise ValueError(f"unknown weight scheme {scheme!r}; choose one of {WEIGHT_SCHEMES}")
        mults = _priority_list(hierarchies, priorities)
        levels = [node_cost_levels(h, scheme, beta, (custom or {}).get(h.name), m)
                  for h, m in zip(hierarchies, mults)]
        scale = 1
        for fs, index in levels:
            for f in (fs[i] for i in np.unique(index)):  # the costs some node has
                scale = math.lcm(scale, f.denominator)
        biggest = max((max(fs[i] for i in np.unique(index)) for fs, index in levels), default=Fraction(0))
        exact = scale * biggest * len(hierarchies) * max_rows * 4 < 2**62
        if not exact:
            scale = 10**9
        ints = [np.array([round(f * scale) for f in fs], dtype=np.int64)[index] for fs, index in levels]
        floats = [np.array([float(f) for f in fs], dtype=np.float64)[index] for fs, index in levels]
        desc = scheme + (f"(beta={beta})" if scheme == "height" else "")
        if priorities is not None:
            desc += " with priorities"
        return cls(floats, ints, scale, exact, desc)

    def cell_costs(self, codes: np.ndarray) -> np.ndarray:
        """``g`` of every cell of a code matrix, float (n, m)."""
        return np.stack([c[codes[:, j]] for j, c in enumerate(self.costs)], axis=1) if codes.size else \
            np.zeros(codes.shape)


def _priority_list(hierarchies, priorities) -> list[Fraction]:
    if priorities is None:
        return [Fraction(1)] * len(hierarchies)
    if isinstance(priorities, Mapping):
        names = [h.name for h in hierarchies]
        unknown = [a for a in priorities if a not in names]
        if unknown:
            raise ValueError(f"priorities given for attribute(s) {unknown} that are not quasi-identifiers {names}")
        out = [_fraction(priorities.get(h.name, 1)) for h in hierarchies]
    else:
        out = [_fraction(p) for p in priorities]
        if len(out) != len(hierarchies):
            raise ValueError(f"{len(out)} priorities for {len(hierarchies)} quasi-identifiers")
    if any(p < 0 for p in out):
        raise ValueError("priorities must be >= 0")
    return out


# ------------------------------------------------------------- distortions
def whd(p: int, q: int, height: int, scheme: str = "uniform", beta: float = 1.0,
        custom: Sequence[float] | None = None) -> float:
    """WHD(p, q) of Li et al. 2006, Def. 5: generalising from level p to level q (p > q)
    in a hierarchy of ``height`` levels."""
    if not 1 <= q <= p <= height:
        raise ValueError(f"need 1 <= q <= p <= h, got p={p}, q={q}, h={height}")
    dummy = _chain(height)
    ws = level_weights(dummy, scheme, beta, custom)
    return float(sum(ws[j - 2] for j in range(q + 1, p + 1)) / sum(ws))


def _chain(height: int) -> Hierarchy:
    return Hierarchy("levels", [str(i) for i in range(height)], np.arange(-1, height - 1, dtype=np.int32))


def tuple_distortion(orig: np.ndarray, gen: np.ndarray, model: CostModel) -> np.ndarray:
    """Distortion(t, t') of Li et al. 2006, Def. 6 for every row (float)."""
    orig = np.atleast_2d(orig)
    gen = np.atleast_2d(gen)
    return (model.cell_costs(gen) - model.cell_costs(orig)).sum(axis=1)


def distortion(orig: np.ndarray, gen: np.ndarray, model: CostModel, counts: np.ndarray | None = None) -> float:
    """Table distortion, Li et al. 2006, Def. 7 (rows weighted by their record counts)."""
    per_row = tuple_distortion(orig, gen, model)
    return float(per_row @ (np.ones(len(per_row)) if counts is None else counts))


def full_distortion(orig: np.ndarray, model: CostModel, counts: np.ndarray | None = None) -> float:
    """Distortion of the fully generalised table (every cell -> root)."""
    roots = np.zeros_like(np.atleast_2d(orig))
    return distortion(orig, roots, model, counts)


def distortion_ratio(orig, gen, model: CostModel, counts=None) -> float:
    """Distortion of the output over that of the fully generalised table (Li et al. 2006, sec. 6)."""
    full = full_distortion(orig, model, counts)
    return distortion(orig, gen, model, counts) / full if full > 0 else 0.0


def lca_tuple(t1: np.ndarray, t2: np.ndarray, hierarchies: Sequence[Hierarchy]) -> np.ndarray:
    """Closest common generalisation t12 (Li et al. 2006, Def. 8), row-wise."""
    t1 = np.atleast_2d(t1)
    t2 = np.atleast_2d(t2)
    return np.stack([h.lca(t1[:, j], t2[:, j]) for j, h in enumerate(hierarchies)], axis=1)


def tuple_distance(t1, t2, hierarchies, model: CostModel) -> np.ndarray:
    """Dist(t1, t2) of Li et al. 2006, Def. 9 (a metric, Lemma 1)."""
    t12 = lca_tuple(t1, t2, hierarchies)
    return tuple_distortion(t1, t12, model) + tuple_distortion(t2, t12, model)


def class_distance(t1, n1: int, t2, n2: int, hierarchies, model: CostModel, k: int | None = None) -> float:
    """Dist(C1, C2) of Li et al. 2006, Def. 10. With ``k`` and ``n1 < k``, the stub
    rule of Li et al. 2008, Def. 14 applies: when ``n1 + n2 >= 2k`` only the stub of
    ``k - n1`` tuples of C2 is generalised."""
    t12 = lca_tuple(t1, t2, hierarchies)
    m2 = n2
    if k is not None and n1 < k and n1 + n2 >= 2 * k:
        m2 = k - n1
    return float(n1 * tuple_distortion(t1, t12, model)[0] + m2 * tuple_distortion(t2, t12, model)[0])
