"""Shared machinery of the privacy models: the sensitive column as integer
codes, per-class histograms, and the bound-model interface.

A privacy model constrains the distribution of a *sensitive* attribute (a
column that is not a quasi-identifier and is published unchanged) inside every
equivalence class. An *unbound* model (what the user configures) holds only
its parameters and the attribute's name; :meth:`PrivacyModel.bind` reads the
column of the input table once and returns a :class:`BoundModel` that works
on integer codes:

* ``values[i]`` -- the code ``0..n_values-1`` of row ``i``'s sensitive value;
* ``counts[i]`` -- the records row ``i`` stands for.

Everything is checked per class from a *histogram* ``(n_classes, n_values)``
of record counts, built with one ``np.bincount`` over
``class * n_values + value``. Histograms add when classes merge, so an
algorithm merging classes keeps one histogram per class and asks
:meth:`BoundModel.ok_hist` about the sum of two rows, vectorised over every
candidate partner.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod

import numpy as np
import pandas as pd

from ..core.cells import normalise_texts

#: Histograms above this many cells are built in chunks of classes.
HIST_CHUNK_CELLS = 1 << 24
#: Relative tolerance of the float comparisons (entropy, EMD): a value equal
#: to the threshold up to rounding satisfies it.
REL_TOL = 1e-9


class PrivacyError(ValueError):
    """A privacy model is invalid or cannot be met by the whole table; the
    message names the attribute, the model and what is possible."""


class PrivacyModel(ABC):
    """An unbound privacy model on one sensitive attribute.

    Attributes
    ----------
    attribute : str
        The sensitive column.
    kind : str
        ``"l-diversity"`` or ``"t-closeness"`` (the verifier's violation kind).
    """

    attribute: str
    kind: str = ""

    @abstractmethod
    def bind(self, df: pd.DataFrame, counts: np.ndarray | None = None) -> BoundModel:
        """Read the sensitive column of ``df`` (the *input* table, one record
        count per row) and return the model on integer codes."""

    @abstractmethod
    def describe(self) -> str:
        """Human text, e.g. ``distinct 2-diversity of 'salary-class'``."""

    def __str__(self) -> str:
        return self.describe()


def sensitive_codes(df: pd.DataFrame, attribute: str) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` of a sensitive column: codes ``0..n-1`` per row in
    order of first appearance. Text is measured after the one normalisation
    of cell text (:func:`hieranon.core.cells.normalise_text`: ``flu``, ``flu `` and
    ``\u00a0flu`` are one value, as a reader of the published table takes
    them), though the column is published untouched. A missing cell (NaN,
    None, or text that is blank once normalised: all print as an empty cell)
    is a value of its own (``None``)."""
    if attribute not in df.columns:
        raise PrivacyError(f"sensitive attribute {attribute!r} is not a column of the table "
                           f"(its columns: {list(df.columns)[:20]})")
    codes, uniques = pd.factorize(df[attribute], use_na_sentinel=False)
    uniques = np.asarray(uniques, dtype=object)
    text = np.fromiter((isinstance(x, str) for x in uniques), dtype=bool, count=len(uniques))
    if text.any():
        normal = uniques.copy()
        normal[text] = normalise_texts(uniques[text])
        blank = np.zeros(len(uniques), dtype=bool)
        blank[text] = normal[text] == ""
        normal[blank | pd.isna(normal)] = None
        # values equal once normalised become one (in order of first appearance)
        codes, uniques = pd.factorize(pd.Series(normal[codes], dtype=object), use_na_sentinel=False)
        uniques = np.asarray(uniques, dtype=object)
    return codes.astype(np.int64), uniques


def row_counts(df: pd.DataFrame, counts) -> np.ndarray:
    if counts is None:
        return np.ones(len(df), dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    if counts.shape != (len(df),):
        raise PrivacyError(f"counts must hold one number per row ({len(df)}), got shape {counts.shape}")
    return counts


class BoundModel(ABC):
    """A privacy model bound to a table's sensitive column (integer codes).

    Subclasses implement :meth:`measure_hist` and :meth:`ok_hist` on
    histograms; every other check derives from them.

    Attributes
    ----------
    model : PrivacyModel
        The unbound model (parameters, attribute).
    values : ndarray (n_rows,) of int64
        The sensitive value code of every row.
    counts : ndarray (n_rows,) of int64
        Records per row.
    labels : ndarray of object
        ``labels[v]`` is the original value of code ``v``.
    """

    def __init__(self, model: PrivacyModel, values: np.ndarray, counts: np.ndarray, labels: np.ndarray):
        self.model = model
        self.values = np.asarray(values, dtype=np.int64)
        self.counts = np.asarray(counts, dtype=np.int64)
        self.labels = labels
        self.n_values = len(labels)

    # ----------------------------------------------------------- identity
    @property
    def attribute(self) -> str:
        return self.model.attribute

    @property
    def kind(self) -> str:
        return self.model.kind

    def describe(self) -> str:
        return self.model.describe()

    def __repr__(self) -> str:
        return f"<bound {self.describe()}>"

    def subset(self, rows: np.ndarray) -> BoundModel:
        """The model bound to some rows only (a block of the table), in their
        order. Everything fixed by the whole table stays: t-closeness still
        measures against the *whole* table's distribution (Li et al. 2007,
        Def. 2), so a class of the block is t-close exactly when it is in
        the whole table."""
        rows = np.asarray(rows, dtype=np.int64)
        out = copy.copy(self)
        out.values = self.values[rows]
        out.counts = self.counts[rows]
        return out

    # ---------------------------------------------------------- histograms
    def histogram(self, class_of_row: np.ndarray, n_classes: int, rows: np.ndarray | None = None) -> np.ndarray:
        """Records per (class, sensitive value), float64 ``(n_classes, n_values)``.
        ``rows`` restricts to some rows (``class_of_row`` is then per those rows)."""
        vals = self.values if rows is None else self.values[rows]
        w = self.counts if rows is None else self.counts[rows]
        cls = np.asarray(class_of_row, dtype=np.int64)
        nv = max(self.n_values, 1)
        return np.bincount(cls * nv + vals, weights=w, minlength=n_classes * nv).reshape(n_classes, nv)

    def table_hist(self) -> np.ndarray:
        """The whole table's histogram, ``(1, n_values)``."""
        return self.histogram(np.zeros(len(self.values), dtype=np.int64), 1)

    def rows_hist(self, rows: np.ndarray) -> np.ndarray:
        """Histogram of a set of rows taken as one class, ``(1, n_values)``."""
        return self.histogram(np.zeros(len(rows), dtype=np.int64), 1, rows)

    def _chunked(self, fn, class_of_row: np.ndarray, n_classes: int) -> np.ndarray:
        """``fn(histogram)`` per class, building the histogram in chunks of
        classes when it would be large."""
        nv = max(self.n_values, 1)
        per = max(1, HIST_CHUNK_CELLS // nv)
        cls = np.asarray(class_of_row, dtype=np.int64)
        if n_classes <= per:
            return fn(self.histogram(cls, n_classes))
        parts = []
        for lo in range(0, n_classes, per):
            hi = min(n_classes, lo + per)
            rows = np.flatnonzero((cls >= lo) & (cls < hi))
            parts.append(fn(self.histogram(cls[rows] - lo, hi - lo, rows)))
        return np.concatenate(parts)

    # -------------------------------------------------------------- checks
    @abstractmethod
    def measure_hist(self, hist: np.ndarray) -> np.ndarray:
        """The value achieved per histogram row (l, or the EMD t)."""

    @abstractmethod
    def ok_hist(self, hist: np.ndarray) -> np.ndarray:
        """True per histogram row satisfying the model (exact up to
        :data:`REL_TOL` on float quantities)."""

    def ok_after_change(self, hist: np.ndarray, values: np.ndarray, delta: np.ndarray) -> np.ndarray:
        """:meth:`ok_hist` of every row of ``hist`` (a class) after
        ``delta[x]`` records of value ``values[x]`` are added (removed when
        negative), for every ``x``: bools ``(len(hist), len(values))``. Here
        each changed histogram is checked; a model may compute the same
        answer faster."""
        hist = np.asarray(hist, dtype=np.float64)
        nk = len(values)
        changed = np.repeat(hist, nk, axis=0).reshape(len(hist), nk, hist.shape[1])
        changed[:, np.arange(nk), values] += delta
        return self.ok_hist(changed.reshape(len(hist) * nk, -1)).reshape(len(hist), nk)

    def measure_and_ok(self, hist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`measure_hist` and :meth:`ok_hist` of the same rows (a model
        whose check reads its measure computes it once)."""
        return self.measure_hist(hist), self.ok_hist(hist)

    @property
    @abstractmethod
    def threshold(self) -> float:
        """The value :meth:`measure_hist` must reach (``higher_is_better``)
        or stay within: l, the recursive model's c, t."""

    def strain(self, hist: np.ndarray) -> np.ndarray:
        """The share of the model's allowance each histogram row uses: the
        threshold over the measured value (or the measured value over the
        threshold when lower is better). Below 1 inside the model, 1 at its
        edge, above 1 (or inf) outside it; a set of records of low strain
        leaves its classes room to differ."""
        measured = np.asarray(self.measure_hist(hist), dtype=np.float64)
        top, bottom = (self.threshold, measured) if self.higher_is_better else (measured, self.threshold)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.asarray(top, dtype=np.float64) / bottom
        return np.where(np.isnan(out), 0.0, out)  # 0 / 0: nothing measured against a zero allowance

    @abstractmethod
    def required_text(self) -> str:
        """What a class must reach, e.g. ``l >= 2`` or ``EMD <= 0.2``."""

    @abstractmethod
    def achieved_text(self, value: float) -> str:
        """A measured value in words, e.g. ``l = 1`` or ``EMD = 0.31``."""

    #: True when a larger measured value is better (l); False when smaller is
    #: (recursive (c, l)'s needed c, the EMD of t-closeness).
    higher_is_better: bool = True

    def worst(self, values: np.ndarray) -> float:
        """The worst of per-class measured values."""
        if not len(values):
            return float("nan")
        return float(np.min(values) if self.higher_is_better else np.max(values))

    def better(self, new: np.ndarray, old: np.ndarray) -> np.ndarray:
        """Element-wise: is measured value ``new`` strictly better than ``old``?"""
        return new > old if self.higher_is_better else new < old

    def per_class_ok(self, class_of_row: np.ndarray, n_classes: int) -> np.ndarray:
        """Bool per class: does it satisfy the model? (``class_of_row`` in
        ``0..n_classes-1``, one per row of the bound table.)"""
        return self._chunked(self.ok_hist, class_of_row, n_classes)

    def measure(self, class_of_row: np.ndarray, n_classes: int) -> np.ndarray:
        """The value achieved per class: l for l-diversity (for recursive
        (c, l): the smallest c it satisfies), the EMD for t-closeness."""
        return self._chunked(self.measure_hist, class_of_row, n_classes)

    def rows_ok(self, rows: np.ndarray) -> bool:
        """Does the set ``rows`` (one class) satisfy the model?"""
        return bool(self.ok_hist(self.rows_hist(np.asarray(rows, dtype=np.int64)))[0])

    def min_class_size(self) -> int:
        """The fewest records a class satisfying the model can hold, whatever
        its values (1 unless the model needs more): every class of an
        output satisfying it is at least this large."""
        return 1

    def check_feasible(self) -> None:
        """Raise :class:`PrivacyError` when even the whole table (one class)
        violates the model, naming the best value possible."""
        h = self.table_hist()
        if not bool(self.ok_hist(h)[0]):
            raise PrivacyError(self.infeasible_message(h))

    def infeasible_message(self, hist: np.ndarray) -> str:
        best = self.measure_hist(hist)[0]
        return (f"{self.describe()} cannot be met: the whole table, taken as one class, has "
                f"{self.achieved_text(best)} (needs {self.required_text()}); relax the model")


#: Models that price one record more or less from a class's sums check
#: each answer within this of their threshold on its histogram (the sums'
#: rounding is some 1e-15: the answers are those of :meth:`BoundModel.ok_hist`).
FAST_MARGIN = 1e-9
#: Histogram cells (classes x values, or classes x changes) priced at once.
FAST_CELLS = 4_000_000


def class_blocks(hist: np.ndarray, n_changes: int):
    """``(start, block)`` pieces of the rows of ``hist`` small enough to
    price :data:`FAST_CELLS` cells at once."""
    step = max(1, FAST_CELLS // max(hist.shape[1], n_changes, 1))
    for lo in range(0, len(hist), step):
        yield lo, hist[lo:lo + step]


def settle_unsure(model: BoundModel, block: np.ndarray, values: np.ndarray, delta: np.ndarray, ok: np.ndarray,
                  unsure: np.ndarray) -> None:
    """The entries ``unsure`` of ``ok`` (classes of ``block`` x changes)
    checked on their changed histograms, in place."""
    rows, keys = np.nonzero(unsure)
    if len(rows):
        changed = block[rows].copy()
        changed[np.arange(len(rows)), values[keys]] += delta[keys]
        ok[rows, keys] = model.ok_hist(changed)


def positive_number(value, what: str) -> float:
    """``float(value)`` or a PrivacyError naming ``what``."""
    if isinstance(value, bool):
        raise PrivacyError(f"{what} must be a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise PrivacyError(f"{what} must be a number, got {value!r}") from None
    if not np.isfinite(x):
        raise PrivacyError(f"{what} must be finite, got {value!r}")
    return x
