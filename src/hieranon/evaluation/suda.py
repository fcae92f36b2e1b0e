"""Special uniques: SUDA and DIS-SUDA scores of a table's records.

A *minimal sample unique* (MSU) of a record is a set of quasi-identifiers on
which its values occur in no other record of the sample, while on every
proper subset of the set they occur in some other record (Elliot, Manning
& Ford 2002). A record with small MSUs, or many of them, is a
*special unique*: few facts single it out. SUDA2 (Manning, Haglin & Keane
2008) finds the MSUs up to a maximum size; here the subsets of the
quasi-identifiers are visited by size with whole-column numpy group-bys
(:func:`minimal_sample_uniques`), which for the usual maximum size of 3 or 4
costs a few dozen group-bys over the table.

Only a record unique on all the quasi-identifiers can have an MSU (a set on
which a record is unique stays so on every superset), so the uniqueness of
the subsets is kept for those records alone, and a unique set is minimal
when none of the sets one attribute smaller is unique for the record (the
subsets of a non-unique set are not unique either).

Scores follow sdcMicro's ``suda2`` (with ``original_scores=TRUE``, as
Elliot, Manning & Ford 2002 describe): an MSU of size ``k`` among ``ATT``
quasi-identifiers, searched up to size ``M``, scores
``prod_{i=k}^{min(M, ATT-1)} (ATT - i)`` (``(ATT-k)!`` when every size is
searched, as sdcMicro does), and a record's SUDA score is the sum over its
MSUs. The DIS-SUDA score rescales the scores into an estimated probability
that a sample unique is a population unique and is matched: with ``U``
sample uniques, ``P`` records in classes of two and the sampling fraction
``F`` (the *DIS* value), ``Dis = U F / (U F + P (1 - F))`` (Skinner & Elliot
2002), ``Q = 1 + (8 - ATT)/20``, and for a record of score ``s > 0``
``1 / (1 + (U/Dis - U) / (s^Q * sum_j s_j^-Q))``, the sum over the records
with a score; 0 for the others.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from itertools import combinations
from math import comb

import numpy as np

from ..core.table import row_keys

__all__ = ["DEFAULT_MAX_SIZE", "DEFAULT_DIS", "DIS_SUDA_BINS", "SudaReport", "minimal_sample_uniques",
           "suda_scores", "dis_suda_scores", "special_uniques", "check_max_size"]

log = logging.getLogger("hieranon")

#: Largest MSU searched unless told: 3 attributes (sdcMicro searches every
#: size; the cost grows with the number of subsets, ``sum_k C(ATT, k)``).
DEFAULT_MAX_SIZE = 3
#: The DIS value (sampling fraction) sdcMicro's ``suda2`` assumes: 0.01, as
#: the population model's default sampling fraction.
DEFAULT_DIS = 0.01
#: Upper bounds of the DIS-SUDA bins of the distribution (sdcMicro's print):
#: ``== 0``, ``(0, 0.1]``, ..., ``(0.6, 0.7]``, ``> 0.7``.
DIS_SUDA_BINS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


def check_max_size(value, what: str = "suda_max_size") -> int:
    """``value`` as a maximum MSU size (a whole number >= 1); a ValueError naming ``what`` otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{what}: expected a whole number of quasi-identifiers >= 1 (the largest set of "
                         f"attributes searched for minimal sample uniques, e.g. 3), got {value!r}")
    return int(value)


def _unique_rows(codes: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per row: True when it is one record alone in its class over ``codes``' columns."""
    _, inv = np.unique(row_keys(codes), return_inverse=True)
    inv = inv.ravel()
    sizes = np.bincount(inv, weights=counts)
    return sizes[inv] == 1


def minimal_sample_uniques(codes, counts=None, max_size: int = DEFAULT_MAX_SIZE) -> np.ndarray:
    """Number of MSUs of every size of each row: an ``(n_rows, M)`` integer
    array, column ``k-1`` counting the MSUs of ``k`` attributes, ``M`` =
    ``min(max_size, n_attributes)``. ``codes``: one integer code per cell
    (rows x quasi-identifiers); ``counts``: the records each row stands for
    (a row of two records is unique nowhere)."""
    codes = np.asarray(codes)
    n, m = codes.shape
    size = min(check_max_size(max_size, "max_size"), m)
    counts = np.ones(n, dtype=np.float64) if counts is None else np.asarray(counts, dtype=np.float64)
    out = np.zeros((n, size), dtype=np.int64)
    if n == 0 or m == 0:
        return out
    candidates = np.flatnonzero(_unique_rows(codes, counts))
    if len(candidates) == 0:
        return out
    subsets = sum(comb(m, k) for k in range(1, size + 1))
    log.debug("SUDA: %d sample uniques, %d attribute sets of up to %d of %d quasi-identifiers",
              len(candidates), subsets, size, m)
    previous: dict[tuple, np.ndarray] = {}
    for k in range(1, size + 1):
        current: dict[tuple, np.ndarray] = {}
        for s in combinations(range(m), k):
            unique = _unique_rows(codes[:, s], counts)[candidates]
            current[s] = unique
            if not unique.any():
                continue
            minimal = unique.copy()
            if k > 1:
                for drop in range(k):
                    minimal &= ~previous[s[:drop] + s[drop + 1:]]
            out[candidates, k - 1] += minimal
        previous = current
    return out


def _score_weights(n_attributes: int, size: int) -> np.ndarray:
    """Score of one MSU of each size 1..``size``: ``prod_{i=k}^{min(size, ATT-1)} (ATT - i)``."""
    top = min(size, n_attributes - 1)
    return np.array([float(np.prod([n_attributes - i for i in range(k, top + 1)])) for k in range(1, size + 1)])


def suda_scores(msus: np.ndarray, n_attributes: int) -> np.ndarray:
    """SUDA score of each row from its MSU counts (:func:`minimal_sample_uniques`)
    among ``n_attributes`` quasi-identifiers."""
    msus = np.asarray(msus)
    return msus @ _score_weights(n_attributes, msus.shape[1])


def dis_suda_scores(scores: np.ndarray, codes, counts=None, dis: float = DEFAULT_DIS) -> np.ndarray:
    """DIS-SUDA score of each row (sdcMicro's formula, see the module) from
    its SUDA score, the table's codes (for its sample uniques and pairs) and
    the DIS value ``dis`` (the sampling fraction, in (0, 1])."""
    if isinstance(dis, bool) or not isinstance(dis, (int, float, np.integer, np.floating)) or not 0 < dis <= 1:
        raise ValueError(f"dis: expected the sampling fraction, a number in (0, 1], got {dis!r}")
    codes = np.asarray(codes)
    scores = np.asarray(scores, dtype=np.float64)
    counts = np.ones(len(scores)) if counts is None else np.asarray(counts, dtype=np.float64)
    out = np.zeros(len(scores))
    scored = scores > 0
    if not scored.any():
        return out
    _, inv = np.unique(row_keys(codes), return_inverse=True)
    inv = inv.ravel()
    sizes = np.bincount(inv, weights=counts)[inv]
    uniques = float(counts[sizes == 1].sum())
    pairs = float(counts[sizes == 2].sum())
    dis_risk = uniques * dis / (uniques * dis + pairs * (1.0 - dis))
    q = 1.0 + (8.0 - codes.shape[1]) / 20.0
    powered = scores[scored] ** q
    adjust = float((1.0 / powered).sum())
    out[scored] = 1.0 / (1.0 + (uniques / dis_risk - uniques) / (powered * adjust))
    return out


@dataclass
class SudaReport:
    """SUDA of one table: MSUs of up to ``max_size`` of its ``n_attributes``
    quasi-identifiers, the records with at least one (``records_with_msu``
    and its share), the MSUs found by size, the SUDA and DIS-SUDA scores
    (highest, mean over the records) and the number of records per DIS-SUDA
    bin (``dis_suda_distribution``); ``dis`` is the sampling fraction used,
    ``dis_assumed`` when it is the default one."""

    max_size: int
    n_attributes: int
    dis: float
    dis_assumed: bool
    records_with_msu: int
    share_with_msu: float
    msus_by_size: dict
    highest_suda: float
    mean_suda: float
    highest_dis_suda: float
    mean_dis_suda: float
    dis_suda_distribution: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) rows for a console table."""
        assumed = " (assumed)" if self.dis_assumed else ""
        return [(f"SUDA: records with a minimal sample unique (up to {self.max_size} of {self.n_attributes} QIs)",
                 f"{self.records_with_msu} ({self.share_with_msu:.2%})"),
                (f"  DIS-SUDA score (DIS {self.dis:.4g}{assumed}): highest / mean",
                 f"{self.highest_dis_suda:.4f} / {self.mean_dis_suda:.4f}")]


def _distribution(dis_scores: np.ndarray, counts: np.ndarray) -> list[dict]:
    edges = (0.0, *DIS_SUDA_BINS)
    out = [{"scores": "== 0", "records": int(counts[dis_scores == 0].sum())}]
    for lo, hi in zip(edges, edges[1:]):
        inside = (dis_scores > lo) & (dis_scores <= hi)
        out.append({"scores": f"({lo:g}, {hi:g}]", "records": int(counts[inside].sum())})
    out.append({"scores": f"> {edges[-1]:g}", "records": int(counts[dis_scores > edges[-1]].sum())})
    return out


def special_uniques(codes, counts=None, max_size: int = DEFAULT_MAX_SIZE,
                    dis: float | None = None) -> tuple[SudaReport, np.ndarray, np.ndarray]:
    """SUDA of a table's codes: ``(report, SUDA score per row, DIS-SUDA score
    per row)``. ``dis`` None: :data:`DEFAULT_DIS`, assumed."""
    codes = np.asarray(codes)
    n, m = codes.shape
    counts = np.ones(n) if counts is None else np.asarray(counts, dtype=np.float64)
    records = float(counts.sum())
    if records == 0:
        raise ValueError("SUDA of an empty table: no records")
    msus = minimal_sample_uniques(codes, counts, max_size)
    scores = suda_scores(msus, m)
    dis_scores = dis_suda_scores(scores, codes, counts, DEFAULT_DIS if dis is None else dis)
    with_msu = int(counts[msus.sum(axis=1) > 0].sum())
    report = SudaReport(
        max_size=msus.shape[1], n_attributes=m, dis=DEFAULT_DIS if dis is None else float(dis),
        dis_assumed=dis is None, records_with_msu=with_msu, share_with_msu=with_msu / records,
        msus_by_size={k + 1: int(c) for k, c in enumerate(msus.sum(axis=0))},
        highest_suda=float(scores.max()), mean_suda=float((scores * counts).sum() / records),
        highest_dis_suda=float(dis_scores.max()), mean_dis_suda=float((dis_scores * counts).sum() / records),
        dis_suda_distribution=_distribution(dis_scores, counts))
    return report, scores, dis_scores
