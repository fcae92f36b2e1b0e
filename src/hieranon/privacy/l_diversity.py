"""l-diversity of a sensitive attribute (Machanavajjhala, Kifer, Gehrke and
Venkitasubramaniam 2007, "l-Diversity: Privacy Beyond k-Anonymity", ACM TKDD).

Three instantiations, each checked per equivalence class on the records'
sensitive value counts (a count column weighs its rows):

* **distinct l-diversity** -- at least ``l`` distinct sensitive values in
  every class (the informal notion of Machanavajjhala et al. 2007, Sec. 4.1);
* **entropy l-diversity** (Def. 4.2 there) -- ``-sum_s p(s) log p(s) >= log l``
  in every class, ``p(s)`` the fraction of the class's records with value
  ``s``;
* **recursive (c, l)-diversity** (Def. 4.3 there) -- with the class's value
  counts sorted in *decreasing* order ``r_1 >= r_2 >= ... >= r_m``,
  ``r_1 < c (r_l + r_{l+1} + ... + r_m)``.

Monotonicity (Machanavajjhala et al. 2007, Sec. 5): all three hold for the
union of two classes when they hold for each, so generalising a table further, or merging classes, never breaks a
satisfied l-diversity. (Distinct: the union has at least as many values;
entropy: entropy is concave; recursive: the inequality adds up.) Algorithms
that merge classes or only coarsen partitions rely on this; the whole table
(one class) is therefore the easiest target, which is what
:meth:`~hieranon.privacy._base.BoundModel.check_feasible` tests.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..core.jit import kernel
from ._base import (
    FAST_MARGIN,
    REL_TOL,
    BoundModel,
    PrivacyError,
    PrivacyModel,
    class_blocks,
    positive_number,
    row_counts,
    sensitive_codes,
    settle_unsure,
)

__all__ = ["DistinctLDiversity", "EntropyLDiversity", "RecursiveCLDiversity"]


def _whole_l(value, what: str) -> int:
    x = positive_number(value, what)
    if x < 1 or not float(x).is_integer():
        raise PrivacyError(f"{what} must be a whole number >= 1, got {value!r}")
    return int(x)


def _fmt(x: float) -> str:
    return f"{x:g}" if math.isfinite(x) else "infinity"


class _LDiversity(PrivacyModel):
    kind = "l-diversity"

    def bind(self, df: pd.DataFrame, counts: np.ndarray | None = None) -> BoundModel:
        values, labels = sensitive_codes(df, self.attribute)
        return self._bound(self, values, row_counts(df, counts), labels)

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash((type(self).__name__, *sorted(vars(self).items())))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


# ------------------------------------------------------------------ distinct
@kernel
def _distinct_counts(hist, out):
    """The number of values present (count above 0) in every row of ``hist``."""
    for i in range(hist.shape[0]):
        n = 0
        for j in range(hist.shape[1]):
            if hist[i, j] > 0:
                n += 1
        out[i] = n


def distinct_counts(hist: np.ndarray) -> np.ndarray:
    """The number of distinct values of every row of counts ``hist`` (one
    kernel call: a repair step counts a few rows at a time)."""
    hist = np.ascontiguousarray(hist)
    out = np.empty(len(hist), dtype=np.int64)
    if len(hist):
        _distinct_counts(hist.reshape(len(hist), -1), out)
    return out


class _BoundDistinct(BoundModel):
    @property
    def threshold(self) -> float:
        return float(self.model.l)

    def measure_hist(self, hist: np.ndarray) -> np.ndarray:
        return distinct_counts(hist).astype(np.float64)

    def ok_hist(self, hist: np.ndarray) -> np.ndarray:
        return distinct_counts(hist) >= self.model.l

    def measure_and_ok(self, hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        counts = distinct_counts(hist)
        return counts.astype(np.float64), counts >= self.model.l

    def ok_after_change(self, hist: np.ndarray, values: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """:meth:`BoundModel.ok_after_change` in ``O(1)`` per change: a
        change gains or loses at most one distinct value (exact counts)."""
        hist = np.asarray(hist, dtype=np.float64)
        delta = np.asarray(delta, dtype=np.float64)
        ok = np.empty((len(hist), len(values)), dtype=bool)
        for lo, block in class_blocks(hist, len(values)):
            at = block[:, values]
            after = at + delta
            distinct = np.count_nonzero(block > 0, axis=1)[:, None] - ((at > 0) & (after <= 0)) + \
                ((at <= 0) & (after > 0))
            ok[lo:lo + len(block)] = distinct >= self.model.l
        return ok

    def min_class_size(self) -> int:
        return int(self.model.l)  # l distinct values need l records

    def required_text(self) -> str:
        return f"l >= {self.model.l} distinct values"

    def achieved_text(self, value: float) -> str:
        return f"l = {int(value)} distinct value(s)"


class DistinctLDiversity(_LDiversity):
    """At least ``l`` distinct values of ``attribute`` in every class.

    Monotone under merging classes (Machanavajjhala et al. 2007, Sec. 5)."""

    _bound = _BoundDistinct

    def __init__(self, attribute: str, l: int):
        self.attribute = str(attribute)
        self.l = _whole_l(l, f"distinct l-diversity of {attribute!r}: l")

    def describe(self) -> str:
        return f"distinct {self.l}-diversity of {self.attribute!r}"


# ------------------------------------------------------------------- entropy
def entropy(hist: np.ndarray) -> np.ndarray:
    """Natural-log entropy of every histogram row (0 for an empty row)."""
    hist = np.asarray(hist, dtype=np.float64)
    n = hist.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        nlogn = np.where(hist > 0, hist * np.log(np.where(hist > 0, hist, 1.0)), 0.0).sum(axis=1)
        h = np.where(n > 0, np.log(np.where(n > 0, n, 1.0)) - nlogn / np.where(n > 0, n, 1.0), 0.0)
    return np.maximum(h, 0.0)


def _nlogn(x: np.ndarray) -> np.ndarray:
    """``x log x`` where ``x > 0``, else 0 (the terms of :func:`entropy`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def snap(x: np.ndarray) -> np.ndarray:
    """Values within :data:`REL_TOL` (relative) of a whole number become that
    number: ``exp(log 2)`` reads as 2, not 1.999..."""
    r = np.round(x)
    return np.where(np.abs(x - r) <= REL_TOL * np.maximum(np.abs(r), 1.0), r, x)


class _BoundEntropy(BoundModel):
    @property
    def threshold(self) -> float:
        return float(self.model.l)  # measured as exp(entropy)

    def measure_hist(self, hist: np.ndarray) -> np.ndarray:
        return snap(np.exp(entropy(hist)))

    def min_class_size(self) -> int:
        # the entropy of n records is at most log(n): l <= n
        return max(1, math.ceil(self.model.l * (1 - REL_TOL)))

    def ok_hist(self, hist: np.ndarray) -> np.ndarray:
        return entropy(hist) >= self._limit()

    def _limit(self) -> float:
        target = math.log(self.model.l)
        return target - REL_TOL * max(target, 1.0)

    def ok_after_change(self, hist: np.ndarray, values: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """:meth:`BoundModel.ok_after_change` from each class's ``n`` and
        ``sum h log h``, of which a change alters one term, in ``O(1)`` per
        change; an entropy within :data:`~hieranon.privacy._base.FAST_MARGIN`
        of the threshold is checked on its histogram (the same answers as
        :meth:`ok_hist`)."""
        hist = np.asarray(hist, dtype=np.float64)
        values = np.asarray(values, dtype=np.int64)
        delta = np.asarray(delta, dtype=np.float64)
        limit = self._limit()
        ok = np.empty((len(hist), len(values)), dtype=bool)
        for lo, block in class_blocks(hist, len(values)):
            n_after = block.sum(axis=1, keepdims=True) + delta
            terms = _nlogn(block)
            at = block[:, values]
            sums = terms.sum(axis=1, keepdims=True) - terms[:, values] + _nlogn(at + delta)
            with np.errstate(divide="ignore", invalid="ignore"):
                h = np.where(n_after > 0, np.log(np.where(n_after > 0, n_after, 1.0))
                             - sums / np.where(n_after > 0, n_after, 1.0), 0.0)
            h = np.maximum(h, 0.0)
            part = ok[lo:lo + len(block)]
            part[:] = h >= limit
            settle_unsure(self, block, values, delta, part, (np.abs(h - limit) <= FAST_MARGIN) | (n_after <= 0))
        return ok

    def required_text(self) -> str:
        return f"entropy >= log({_fmt(self.model.l)}), i.e. l >= {_fmt(self.model.l)}"

    def achieved_text(self, value: float) -> str:
        return f"entropy l = exp(entropy) = {value:.6g}"


class EntropyLDiversity(_LDiversity):
    """Entropy ``l``-diversity of ``attribute`` (Machanavajjhala et al. 2007,
    Def. 4.2): every class's entropy of the sensitive values is ``>= log l``.

    The comparison allows a relative rounding error of :data:`REL_TOL`, so
    that a class of two equally frequent values has entropy l = 2 exactly.
    ``l`` may be fractional (>= 1). Monotone under merging classes (entropy is
    concave; Machanavajjhala et al. 2007, Sec. 5)."""

    _bound = _BoundEntropy

    def __init__(self, attribute: str, l: float):
        self.attribute = str(attribute)
        x = positive_number(l, f"entropy l-diversity of {attribute!r}: l")
        if x < 1:
            raise PrivacyError(f"entropy l-diversity of {attribute!r}: l must be >= 1, got {l!r}")
        self.l = int(x) if x.is_integer() else x

    def describe(self) -> str:
        return f"entropy {_fmt(self.l)}-diversity of {self.attribute!r}"


# ----------------------------------------------------------------- recursive
def sorted_desc(hist: np.ndarray) -> np.ndarray:
    """Each histogram row sorted in decreasing order (r_1 >= r_2 >= ...)."""
    return -np.sort(-np.asarray(hist, dtype=np.float64), axis=1)


class _BoundRecursive(BoundModel):
    higher_is_better = False

    @property
    def threshold(self) -> float:
        return float(self.model.c)

    def _r1_tail(self, hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = sorted_desc(hist)
        l = self.model.l
        tail = r[:, l - 1:].sum(axis=1) if r.shape[1] >= l else np.zeros(len(r))
        return r[:, 0] if r.shape[1] else np.zeros(len(r)), tail

    def min_class_size(self) -> int:
        return int(self.model.l)  # r_l must exist: l distinct values

    def measure_hist(self, hist: np.ndarray) -> np.ndarray:
        """The c a class needs to exceed: ``r_1 / (r_l + ... + r_m)`` (inf
        when it has fewer than l values)."""
        r1, tail = self._r1_tail(hist)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(tail > 0, r1 / np.where(tail > 0, tail, 1.0), np.inf)

    def ok_hist(self, hist: np.ndarray) -> np.ndarray:
        r1, tail = self._r1_tail(hist)
        return r1 < self.model.c * tail

    def required_text(self) -> str:
        m = self.model
        return f"r_1 < c (r_{m.l} + ... + r_m), i.e. r_1 / (r_{m.l} + ... + r_m) < c = {_fmt(m.c)}"

    def achieved_text(self, value: float) -> str:
        return f"r_1 / (r_{self.model.l} + ... + r_m) = {_fmt(value)}"

    def infeasible_message(self, hist: np.ndarray) -> str:
        c_needed = float(self.measure_hist(hist)[0])
        if math.isfinite(c_needed):
            hint = f"c would have to exceed {c_needed:.6g}"
        else:
            hint = (f"the table has only {int(np.count_nonzero(hist))} distinct value(s), fewer than "
                    f"l = {self.model.l}")
        return (f"{self.describe()} cannot be met: the whole table, taken as one class, has "
                f"{self.achieved_text(c_needed)} (needs {self.required_text()}); {hint}")


class RecursiveCLDiversity(_LDiversity):
    """Recursive ``(c, l)``-diversity of ``attribute`` (Machanavajjhala et al.
    2007, Def. 4.3): in every class, with value counts in decreasing order
    ``r_1 >= ... >= r_m``, ``r_1 < c (r_l + ... + r_m)`` (strict; a class
    with fewer than ``l`` values fails). Monotone under merging classes
    (Machanavajjhala et al. 2007, Sec. 5)."""

    _bound = _BoundRecursive

    def __init__(self, attribute: str, c: float, l: int):
        self.attribute = str(attribute)
        x = positive_number(c, f"recursive (c, l)-diversity of {attribute!r}: c")
        if x <= 0:
            raise PrivacyError(f"recursive (c, l)-diversity of {attribute!r}: c must be > 0, got {c!r}")
        self.c = int(x) if x.is_integer() else x
        self.l = _whole_l(l, f"recursive (c, l)-diversity of {attribute!r}: l")

    def describe(self) -> str:
        return f"recursive ({_fmt(self.c)}, {self.l})-diversity of {self.attribute!r}"
