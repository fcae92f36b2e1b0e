"""The share constraint a privacy model puts on every class, when the lower
bound can honour it: a model of a two-valued sensitive attribute that a class
meets exactly when its share of one value lies in an interval.

* t-closeness by the equal or the ordered distance: the EMD is the
  difference of the class's and the table's shares of one value (Li, Li &
  Venkatasubramanian 2007), so the share lies within ``t`` of the table's;
* distinct 2-diversity: both values occur, a share in ``(0, 1)``;
* entropy l-diversity: ``H(s) >= log l`` (Machanavajjhala et al. 2007,
  Def. 4.2), a share in ``[s*, 1 - s*]`` with ``H(s*) = log l``;
* recursive (c, 2)-diversity: ``r_1 < c r_2`` (Def. 4.3), a share in
  ``(1/(1+c), c/(1+c))``.

An open end is closed a little inside (the bound only needs every class that
meets the model to meet the interval: a wider interval is a weaker, still
valid, relaxation). Several constraints on the same attribute intersect.
"""

from __future__ import annotations

import math

import numpy as np

from ..privacy import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity

__all__ = ["share_constraint", "tightest_share"]


def _entropy_share(diversity: float) -> float:
    """The share ``s <= 1/2`` of a two-valued class whose entropy is ``log l``
    (``l`` = ``diversity``; bisection: ``H`` increases on ``[0, 1/2]``)."""
    target, lo, hi = math.log(diversity), 0.0, 0.5
    for _ in range(100):
        mid = (lo + hi) / 2
        h = -(mid * math.log(mid) + (1 - mid) * math.log(1 - mid)) if 0 < mid < 1 else 0.0
        lo, hi = (mid, hi) if h < target else (lo, mid)
    return lo  # H(lo) <= log l: the interval [lo, 1 - lo] holds every class that meets the model


def _interval(model) -> tuple[float, float] | None:
    """The share interval of one bound model of a two-valued attribute, or None."""
    kind, inner = getattr(model, "kind", None), getattr(model, "model", None)
    if model.n_values != 2:
        return None
    if kind == "t-closeness":
        if getattr(model, "distance", None) not in ("equal", "ordered"):
            return None
        p = float(model.q[0, 1])
        return p - inner.t, p + inner.t
    if kind != "l-diversity":
        return None
    diversity = float(inner.l)
    if isinstance(inner, DistinctLDiversity) and diversity >= 2:
        eps = 0.5 / max(float(np.asarray(model.counts).sum()), 1.0)  # below one record of the largest class
        return eps, 1 - eps
    if isinstance(inner, EntropyLDiversity) and diversity > 1:
        low = _entropy_share(diversity)
        return low, 1 - low
    if isinstance(inner, RecursiveCLDiversity) and diversity == 2:
        c = float(inner.c)
        return 1 / (1 + c), c / (1 + c)
    return None


def share_constraint(model) -> tuple[np.ndarray, float, float] | None:
    """The share constraint (:func:`~hieranon.bounds.lower_bound.distortion_lower_bound`'s ``share``) of a
    bound privacy model, or None when it has none (see the module's list):
    ``(flags of the rows holding the second value, low, high)``."""
    if getattr(model, "n_values", 0) != 2:
        return None
    interval = _interval(model)
    if interval is None:
        return None
    return np.asarray(model.values) == 1, interval[0], interval[1]


def tightest_share(models, kinds: tuple[str, ...] = ("t-closeness", "l-diversity")) -> tuple:
    """``(models, share)``: of the bound privacy ``models`` of the given
    ``kinds`` with a share constraint (:func:`share_constraint`), those of
    the attribute whose constraints, intersected, leave the narrowest
    interval, and that intersection; ``((), None)`` when none has one."""
    by_attribute: dict = {}
    for m in models:
        if getattr(m, "kind", None) in kinds and (share := share_constraint(m)) is not None:
            by_attribute.setdefault(m.attribute, []).append((m, share))
    best, best_width = ((), None), math.inf
    for pairs in by_attribute.values():
        low = max(share[1] for _, share in pairs)
        high = min(share[2] for _, share in pairs)
        width = min(high, 1.0) - max(low, 0.0)
        if width < best_width:
            best, best_width = (tuple(m for m, _ in pairs), (pairs[0][1][0], low, high)), width
    return best
