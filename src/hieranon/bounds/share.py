"""The share constraint a privacy model puts on every class, when the lower
bound can honour it: the t-closeness of a two-valued sensitive attribute by
the equal or the ordered distance (Li, Li & Venkatasubramanian 2007).
"""

from __future__ import annotations

import numpy as np

__all__ = ["share_constraint", "tightest_share"]


def share_constraint(model) -> tuple[np.ndarray, float, float] | None:
    """The share constraint (:func:`~hieranon.bounds.lower_bound.distortion_lower_bound`'s ``share``) of a
    bound privacy model, or None when it has none: t-closeness of a
    two-valued attribute by the equal or the ordered distance, whose EMD is
    the difference of the classes' and the table's shares of one value (Li,
    Li & Venkatasubramanian 2007); the table's share is the model's own
    distribution ``q``."""
    if getattr(model, "kind", None) != "t-closeness" or model.n_values != 2 or \
            getattr(model, "distance", None) not in ("equal", "ordered"):
        return None
    p = float(model.q[0, 1])
    return np.asarray(model.values) == 1, p - model.model.t, p + model.model.t


def tightest_share(models) -> tuple:
    """``(model, share)``: of the bound privacy ``models`` with a share
    constraint (:func:`share_constraint`), the one of least ``t`` and its
    constraint; ``(None, None)`` when none has one."""
    shares = [(m, share) for m in models if (share := share_constraint(m)) is not None]
    return min(shares, key=lambda pair: pair[0].model.t, default=(None, None))
