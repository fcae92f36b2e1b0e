"""Subgradient ascent of the Lagrangian relaxation's value: Polyak steps (Held,
Wolfe & Crowder 1974) along deflected subgradients (Camerini, Fratta &
Maffioli 1975), with partial pricing over the nodes that opened.
"""

from __future__ import annotations

import logging

import numpy as np

from .relaxation import Relaxation

log = logging.getLogger(__name__)

__all__ = ["DEFLECTION", "FULL_EVERY", "STALE_FULL", "TARGET_SHARE", "ascend"]


#: Polyak steps aim this share of the way from the best bound so far to the
#: known output's distortion: aiming at the output itself (share 1) overshoots,
#: as the optimum lies much nearer the bound (a speed setting; any value gives
#: a valid bound).
TARGET_SHARE = 0.3

#: Partial pricing of the ascent: one full evaluation every this many steps,
#: the steps between over the nodes full evaluations opened; the step halves
#: after STALE_FULL full evaluations without a rise (speed settings; the
#: bound is only ever taken from full evaluations, so it stays valid).
FULL_EVERY = 8
STALE_FULL = 4

#: Deflection of the ascent's steps (Camerini, Fratta & Maffioli 1975): 1.5,
#: their recommended value, reaches the plain steps' bound in three quarters
#: of the iterations on UCI Adult (a speed setting; any value gives a valid bound).
DEFLECTION = 1.5


def ascend(full: Relaxation, price: np.ndarray, weights: np.ndarray, best: float, best_price: np.ndarray,
           target: float | None, scale: float, iterations: int, stage,
           step: float = 1.0) -> tuple[float, np.ndarray, bool, int, float]:
    """Subgradient ascent of the relaxed value from ``price`` by Polyak
    steps (Held, Wolfe & Crowder 1974) along deflected subgradients
    (:func:`_deflected`), each aiming :data:`TARGET_SHARE` of the way from
    the best bound to ``target``, with partial pricing: every
    :data:`FULL_EVERY` steps the program over every candidate node (the only
    values that may raise the bound), in between the program over the nodes
    that some full evaluation opened -- about 1 % of them on UCI Adult, and
    far cheaper. After :data:`STALE_FULL` full evaluations without a rise the
    step halves and the ascent restarts from the best multipliers
    (``best`` at ``best_price`` to begin with). ``step``: the share of the
    Polyak step taken (an ascent resumed goes on with the share it had
    reached). Returns the best value, its multipliers, whether a full
    relaxed assignment was feasible (the value is then the optimum), the
    iterations run and the share of the step reached."""
    stale = 0
    active = np.zeros(len(full.node_cost), dtype=np.bool_)
    part, due, direction = None, True, None
    for it in range(1, iterations + 1):
        stage.update(it)
        if due or part is None or (it - 1) % FULL_EVERY == 0:
            value, assigned, opened = full(price)
            due = False
            if value > best + 1e-9 * abs(best):
                best, best_price, stale = value, price.copy(), 0
            else:
                stale += 1
                if stale >= STALE_FULL:
                    step, stale, direction = step / 2, 0, None
                    price = best_price.copy()
            if (opened & ~active).any():
                active |= opened
                part = full.restricted(np.flatnonzero(active))
            feasible_is_optimal = True
        else:
            value, assigned, _ = part(price)
            feasible_is_optimal = False
        grad = (weights - assigned).astype(np.float64)
        norm = _dot(grad, grad)
        if norm == 0:  # the relaxed assignment is k-anonymous
            if feasible_is_optimal:
                return (value, price, True, it, step) if value > best else (best, best_price, True, it, step)
            due = True  # only over the active nodes: see what the full program says
            continue
        goal = best + TARGET_SHARE * (target - best) if target is not None else max(best * 1.05, best + scale)
        if goal <= best or step < 1e-5:
            return best, best_price, False, it, step
        direction = _deflected(grad, direction)
        price = price + step * (goal - value) / _dot(direction, direction) * direction
        log.debug("lower bound: iteration %d, value %.1f, best %.1f", it, value / scale, best / scale)
    return best, best_price, False, iterations, step


def _deflected(grad: np.ndarray, previous: np.ndarray | None) -> np.ndarray:
    """The step direction of Camerini, Fratta & Maffioli (1975): the
    subgradient plus :data:`DEFLECTION` times the share of the previous
    direction it turns against, damping the zigzag of plain subgradient steps."""
    if previous is None:
        return grad
    turn = _dot(grad, previous)
    if turn >= 0:
        return grad
    return grad - DEFLECTION * turn / _dot(previous, previous) * previous


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a @ b`` without BLAS: its threads stay spinning after a product and
    take the cores from the relaxation's numba threads (each evaluation then
    ran two to four times slower)."""
    return float(np.einsum("i,i->", a, b))
