"""Individual re-identification risk of survey records with sampling weights.

A record of a sample stands for ``w`` people of the population (its
sampling weight). In its equivalence class over the quasi-identifiers the
sample holds ``f_k`` records and the weights add up to ``F_k``, an estimate
of the class's size in the population. Benedetti & Franconi (1998) take the
population size ``F`` of the class, given ``f_k``, to be ``f_k`` plus a
negative binomial number of people with success probability
``p_k = f_k / F_k``, and estimate the risk of the record as the expected
``1/F``::

    r_k = E[1/F | f_k] = sum_{h>=f_k} C(h-1, f_k-1) p_k^f_k (1-p_k)^(h-f_k) / h

(Franconi & Polettini 2004; mu-Argus; sdcMicro's ``indivRisk`` and
``measure_risk``). Writing ``q = 1 - p``, ``r = p^f * int_0^1 t^(f-1) (1 - q t)^-f dt``,
which has a closed form for every ``f``:

    r = (p/q)^f * [ (-1)^f log p + sum_{j=0}^{f-2} (-1)^j C(f-1, j) (p^-(f-1-j) - 1) / (f-1-j) ]

and the series ``r = (p/f) * sum_{j>=0} j! q^j / ((f+1)...(f+j))``. This
module evaluates the exact value for ``f_k`` = 1..:data:`EXACT_MAX_FREQUENCY`
(the closed form when ``q`` is large, the series when it is small, where the
closed form loses its digits to cancellation) and, above, the
approximation ``p / (f - q)`` that sdcMicro uses for every class of more
than two records (its error falls with ``f``).

The global risk is the sum of the individual risks, the expected number of
re-identifications, and its share of the records.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..core.files import excerpt
from ..core.table import DataError, check_columns

__all__ = ["EXACT_MAX_FREQUENCY", "IndividualRisk", "class_totals", "individual_risk", "read_weights", "record_risk",
           "summarise_individual_risk"]

#: Largest sample frequency of a class whose risk is computed exactly; larger
#: classes take the approximation ``p / (f - q)``.
EXACT_MAX_FREQUENCY = 7
#: Largest ``q = 1 - p`` for which the series is summed (its terms fall at
#: least as fast as ``q^j``; :data:`_SERIES_TERMS` of them reach 1e-17).
_SERIES_MAX_Q = 0.7
_SERIES_TERMS = 110


def _series(f: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``(p/f) * sum_j j! q^j / ((f+1)...(f+j))`` (exact for ``q`` <= :data:`_SERIES_MAX_Q`)."""
    q = 1.0 - p
    term = np.ones_like(p)
    total = np.ones_like(p)
    for j in range(1, _SERIES_TERMS):
        term = term * q * j / (f + j)
        total += term
    return p / f * total


def _closed_form(f: int, p: np.ndarray) -> np.ndarray:
    """The closed form of ``E[1/F | f]`` for one sample frequency ``f`` (accurate for ``q`` > :data:`_SERIES_MAX_Q`)."""
    q = 1.0 - p
    bracket = (-1.0) ** f * np.log(p)
    binom = 1.0
    for j in range(f - 1):  # C(f-1, j), updated in place
        m = f - 1 - j
        bracket = bracket + (-1.0) ** j * binom * (p ** (-m) - 1.0) / m
        binom = binom * (f - 1 - j) / (j + 1)
    return (p / q) ** f * bracket


def individual_risk(sample_frequency, weight_sum) -> np.ndarray:
    """Individual risk ``E[1/F | f_k]`` (Benedetti & Franconi 1998) of each
    record, from its class's sample frequency ``f_k`` (records, >= 1) and
    the sum ``F_k`` of its class's sampling weights, both one per record.

    ``p_k = f_k / F_k`` is capped at 1 (weights below 1 would make the
    population class smaller than the sample's); ``p_k = 1`` gives ``1/f_k``.
    Exact for ``f_k`` <= :data:`EXACT_MAX_FREQUENCY`, ``p / (f - q)`` above.
    """
    f = np.asarray(sample_frequency, dtype=np.float64)
    big_f = np.asarray(weight_sum, dtype=np.float64)
    if f.shape != big_f.shape:
        raise ValueError(f"individual_risk: {f.shape} sample frequencies but {big_f.shape} weight sums")
    if f.size and (not np.isfinite(big_f).all() or (f < 1).any() or (big_f <= 0).any()):
        raise ValueError("individual_risk: expected sample frequencies >= 1 and positive finite weight sums")
    p = np.minimum(f / big_f, 1.0) if f.size else f
    q = 1.0 - p
    out = p / (f - q)  # sdcMicro's approximation, for the classes above EXACT_MAX_FREQUENCY
    small = q <= _SERIES_MAX_Q
    exact = f <= EXACT_MAX_FREQUENCY
    series = exact & small
    if series.any():
        out[series] = _series(f[series], p[series])
    for k in range(1, EXACT_MAX_FREQUENCY + 1):
        rows = exact & ~small & (f == k)
        if rows.any():
            out[rows] = _closed_form(k, p[rows])
    return out


def read_weights(df: pd.DataFrame, column) -> np.ndarray:
    """The sampling weights of ``df``'s rows from its column ``column``, as
    floats: numbers > 0, none missing; else a DataError naming the column,
    the first bad record and its value."""
    check_columns(df, [column], "weight")
    values = pd.to_numeric(df[column], errors="coerce").astype(float).to_numpy()
    bad = ~np.isfinite(values) | ~(values > 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        value = df[column].iloc[i]
        value = value.item() if isinstance(value, np.generic) else value
        raise DataError(f"weight column {column!r}: record {i + 1} (data row index {i}) has {excerpt(value)}; "
                        "sampling weights must be numbers > 0 (how many people of the population each record "
                        "stands for), none missing")
    return values


def class_totals(row_class: np.ndarray, counts: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(f_k, F_k)`` of every row: the records of its class and the sum of
    their weights (a row standing for ``counts`` records weighs ``counts *
    weight``)."""
    row_class = np.asarray(row_class, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.float64)
    n_classes = int(row_class.max()) + 1 if len(row_class) else 0
    f = np.bincount(row_class, weights=counts, minlength=n_classes)
    big_f = np.bincount(row_class, weights=counts * np.asarray(weights, dtype=np.float64), minlength=n_classes)
    return f[row_class], big_f[row_class]


def record_risk(row_class: np.ndarray, counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The individual risk of every row (:func:`individual_risk` of its class's totals, :func:`class_totals`)."""
    return individual_risk(*class_totals(row_class, counts, weights))


@dataclass(frozen=True)
class IndividualRisk:
    """Individual risk with sampling weights of one table (Benedetti &
    Franconi 1998): the ``highest`` and ``mean`` risk of a record, the share
    of records whose risk exceeds ``threshold`` (``at_risk``), and the
    global risk: the expected number of re-identifications
    (``global_expected``, the sum of the risks) and its share of the records
    (``global_share``, equal to the mean). ``weights`` says where the weights
    came from: a column's name, or the sampling fraction every record
    stands for (``sampling_fraction_assumed`` when it is the default)."""

    highest: float
    mean: float
    at_risk: float
    global_expected: float
    global_share: float
    threshold: float
    weights: str
    sampling_fraction_assumed: bool = False

    def as_dict(self) -> dict:
        return asdict(self)

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) rows for a console table."""
        return [(f"individual risk, weights {self.weights}", ""),
                ("  highest / mean / records at risk", f"{self.highest:.4f} / {self.mean:.4f} / {self.at_risk:.2%}"),
                ("  expected re-identifications (global risk)",
                 f"{self.global_expected:.2f} ({self.global_share:.3%})")]


def summarise_individual_risk(risk: np.ndarray, counts: np.ndarray, threshold: float, weights: str,
                              sampling_fraction_assumed: bool = False) -> IndividualRisk:
    """The figures of :class:`IndividualRisk` from the risk of every row
    (:func:`record_risk`) and the records each row stands for."""
    risk = np.asarray(risk, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    n = float(counts.sum())
    if n == 0:
        raise ValueError("individual risk of an empty table: no records")
    expected = float((risk * counts).sum())
    return IndividualRisk(highest=float(risk.max()), mean=expected / n,
                          at_risk=float(counts[risk > threshold].sum()) / n, global_expected=expected,
                          global_share=expected / n, threshold=float(threshold), weights=weights,
                          sampling_fraction_assumed=sampling_fraction_assumed)
