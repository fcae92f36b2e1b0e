"""Does the release still answer the questions it is published for?

The utility report of an (original, anonymised) pair, in the spirit of ARX's
utility analysis (Prasser, Kohlmayer, Lautenschläger & Kuhn 2014; Prasser,
Eicher, Spengler, Bild & Kuhn 2020) and sdcMicro's report (Templ, Kowarik &
Meindl 2015), with workload-aware utility as LeFevre, DeWitt & Ramakrishnan
(2006) argue for it: measure what a recipient will do with the data.

Three parts, all computed on integer node codes (the original leaves and the
published nodes of every quasi-identifier, weighted by record counts):

* per attribute (:class:`AttributeUtility`): the share of cells kept,
  generalised, suppressed (printed ``*``) and missing in the input; the
  granularity loss (Iyengar 2002; ARX's "granularity"); the normalised
  non-uniform entropy loss (de Waal & Willenborg 1999; Gionis & Tassa 2009;
  ARX's "non-uniform entropy"); the total-variation distance between the
  marginal distribution before and after, a generalised cell's weight spread
  uniformly over the leaves below its node; the most frequent values before
  and after (the report plots them);
* analysis preserved (:class:`ModelScore`): for a target column, the
  cross-validated accuracy (or R^2 for a numeric target) of scikit-learn
  models trained on the anonymised quasi-identifiers against the same
  models trained on the original ones -- the classification-based
  evaluation of ARX (Prasser, Eicher, Bild, Spengler & Kuhn 2017) and of
  LeFevre et al. (2006);
* associations between pairs of quasi-identifiers (:class:`PairAssociation`):
  Cramér's V (Cramér 1946) before and after, and the total-variation
  distance between the pairwise contingency tables (after: reconstructed as
  above).

What exactly is compared for a target: the records are split once into
``folds`` stratified folds (seeded). For each fold and each model, a copy
trained on the other folds' *original* quasi-identifier values predicts the
held-out records from their original values, and a copy trained on the other
folds' *published* values predicts the held-out records from their published
values; both are scored against the held-out records' original target
values. ``relative`` is the anonymised score over the original score (1 =
nothing lost); for classifiers ``normalised`` also takes the majority-class
rate (ZeroR, learnt on the training folds) as 0: a model that learns nothing
from the quasi-identifiers scores 0. Features are the quasi-identifiers other
than the target, every value -- original or generalised, ``*`` included -- a
category of its own (one-hot for logistic/ridge regression and random
forests, category codes for naive Bayes).

Entry points: :func:`assess` (two tables and the job),
:func:`assess_result` (an :class:`~hieranon.job.result.AnonymizationResult`; also
``result.utility(target=...)``) and :func:`assess_codes` (code matrices).
The models of the second part are trained in :mod:`hieranon.evaluation.prediction`;
:func:`naive_bayes_accuracy` (from there) is the single check the experiments use.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from ..core.table import dense_rank, encode, encode_generalised
from ..core.tree import Hierarchy, leaf_counts
from ..hierarchies.builders import leaf_values, node_bounds
from .prediction import ModelScore, analysis, naive_bayes_accuracy

__all__ = ["AttributeUtility", "ModelScore", "PairAssociation", "UtilityReport", "assess", "assess_codes",
           "assess_result", "cramers_v", "spearman", "correlation_ratio", "naive_bayes_accuracy", "PAIR_MEASURES"]

log = logging.getLogger(__name__)

#: Rows the models are trained on at most; larger tables are subsampled (seeded) and the report says so.
MAX_MODEL_ROWS = 50_000
#: Values listed per attribute for the before/after plots.
TOP_VALUES = 12
#: Pairwise contingency tables larger than this many cells are left out of the TVD (Cramér's V is kept).
MAX_TABLE_CELLS = 4_000_000


# ------------------------------------------------------------------ results
@dataclass(frozen=True)
class AttributeUtility:
    """What generalisation did to one quasi-identifier (shares weighted by records).

    Attributes
    ----------
    name : str
    kept, generalised, suppressed, missing : float
        Shares of the cells that print their original value, an inner node
        of the hierarchy, ``*`` (the root), and that were missing in the
        input (read as the root, ``missing='root'``); they sum to 1.
    granularity_loss : float
        Mean over non-missing cells of ``(leaves below the node - 1) /
        (leaves of the hierarchy - 1)`` (Iyengar 2002, the loss metric; ARX
        shows ``1 - loss`` as "granularity"). 0 = unchanged, 1 = every cell ``*``.
    entropy_loss : float
        Non-uniform entropy (de Waal & Willenborg 1999; Gionis & Tassa 2009):
        the sum over cells of ``-log2 P(original value | published node)``,
        with P estimated on the original column, divided by the same sum for
        a column of ``*`` only. 0 = unchanged, 1 = no information left.
    marginal_tvd : float
        Total-variation distance between the original distribution of the
        column and the published one, each published cell spread uniformly
        over the leaves below its node. 0 = same distribution.
    before, after : dict[str, float]
        Shares of the most frequent values before and after (at most
        ``TOP_VALUES``; the rest under ``"(other)"``).
    """

    name: str
    kept: float
    generalised: float
    suppressed: float
    missing: float
    granularity_loss: float
    entropy_loss: float
    marginal_tvd: float
    before: dict = field(default_factory=dict, repr=False)
    after: dict = field(default_factory=dict, repr=False)


#: The association measure of a pair, by the kinds of its two quasi-identifiers.
PAIR_MEASURES = {"cramers_v": "Cramér's V", "spearman": "Spearman's rank correlation",
                 "correlation_ratio": "correlation ratio of ranks"}


@dataclass(frozen=True)
class PairAssociation:
    """Association of two quasi-identifiers before and after.

    Attributes
    ----------
    a, b : str
    measure : str
        ``"cramers_v"``: both quasi-identifiers categorical -- Cramér's V
        (Cramér 1946) of the values, each printed value (``*`` included) a
        category; ``"spearman"``: both numeric -- Spearman's rank
        correlation (Spearman 1904) of the values, a generalised value taken
        at the middle of the leaves below it (``*`` at the middle of the
        whole range); ``"correlation_ratio"``: one of each -- the
        correlation ratio (eta) of the numeric one's ranks over the
        categorical one's values. A numeric column of many distinct values
        is no set of categories: Cramér's V would call it associated with
        anything.
    before, after : float
        The measure on the original and on the published values (0 when
        either column holds one value).
    contingency_tvd : float or None
        Total-variation distance between the original pairwise contingency
        table and the published one spread uniformly over the leaves below
        each node (None for a table of more than ``MAX_TABLE_CELLS`` cells).
    """

    a: str
    b: str
    measure: str
    before: float
    after: float
    contingency_tvd: float | None

    @property
    def change(self) -> float:
        return self.after - self.before

    @property
    def measure_name(self) -> str:
        return PAIR_MEASURES[self.measure]


@dataclass(frozen=True)
class UtilityReport:
    """The utility of a release (:func:`assess`).

    Attributes
    ----------
    attributes : list[AttributeUtility]
        One per quasi-identifier, in column order.
    pairs : list[PairAssociation]
        Every pair of quasi-identifiers.
    target : str or None
        The column the models predict (None: no model was trained).
    task : str or None
        ``"classification"`` or ``"regression"``.
    features : list[str]
        The quasi-identifiers the models read.
    models : list[ModelScore]
    baseline : float or None
        Majority-class accuracy over the held-out folds (classification), 0
        for regression (the mean predictor's R^2).
    folds, seed : int
        Cross-validation folds and the seed of the folds, the subsample and
        the random forests.
    stratified : bool
        Whether the folds keep the class shares (classification, when every
        class has at least ``folds`` records).
    rows_used, rows_total : int
        Rows the models were trained and tested on, and rows of the table
        (fewer used: rows with a missing target are left out, and tables of
        more than ``MAX_MODEL_ROWS`` rows are subsampled with ``seed``).
    n_records : int
        Records of the table (sum of counts).
    """

    attributes: list[AttributeUtility]
    pairs: list[PairAssociation]
    target: str | None = None
    task: str | None = None
    features: list[str] = field(default_factory=list)
    models: list[ModelScore] = field(default_factory=list)
    baseline: float | None = None
    folds: int = 5
    stratified: bool = False
    seed: int = 0
    rows_used: int = 0
    rows_total: int = 0
    n_records: int = 0

    @property
    def compared(self) -> str:
        """One sentence saying what the model scores compare."""
        if self.target is None:
            return "no target column: no model trained"
        score = "accuracy" if self.task == "classification" else "R^2"
        sub = (f" on a seeded sample of {self.rows_used:,} of {self.rows_total:,} rows"
               if self.rows_used < self.rows_total else "")
        return (f"{score} of predicting the original {self.target!r} of held-out records, by {self.folds}-fold "
                f"{'stratified ' if self.stratified else ''}cross-validation{sub} (seed "
                f"{self.seed}, same folds for both): models trained on the anonymised quasi-identifiers "
                "(tested on the held-out records' anonymised values) against the same models trained on the "
                "original values (tested on their original values)")

    def model(self, name: str) -> ModelScore:
        """The score of model ``name``."""
        for m in self.models:
            if m.model == name:
                return m
        raise KeyError(f"no model {name!r} (models: {[m.model for m in self.models]})")

    def attribute(self, name: str) -> AttributeUtility:
        for a in self.attributes:
            if a.name == name:
                return a
        raise KeyError(f"no quasi-identifier {name!r}")

    def as_dict(self) -> dict:
        """Plain types for JSON."""
        d = asdict(self)
        d["compared"] = self.compared
        for p, pd_ in zip(self.pairs, d["pairs"]):
            pd_["change"] = p.change
        d["warnings"] = self.warnings()
        return d

    def warnings(self) -> list[str]:
        """What the model scores do not say: a model that does not beat the
        majority-class baseline on the original (its relative accuracy
        compares two guesses), or that falls below it on the release (a
        relative accuracy near 1 then hides that it learnt nothing)."""
        if self.task != "classification" or self.baseline is None:
            return []
        out = []
        for m in self.models:
            if m.original <= self.baseline:
                out.append(f"{m.model} on the original data ({m.original:.4f}) does not beat the majority-class "
                           f"baseline ({self.baseline:.4f}): its relative accuracy compares two guesses; "
                           f"{self.target!r} is not predicted from these quasi-identifiers")
            elif m.anonymised <= self.baseline:
                out.append(f"{m.model} on the release ({m.anonymised:.4f}) scores at or below the majority-class "
                           f"baseline ({self.baseline:.4f}): it learns nothing from the released values "
                           f"(relative to the baseline {_num(m.normalised)}, though relative accuracy "
                           f"{_num(m.relative)})")
        return out

    def rows(self) -> list[tuple[str, str]]:
        """``(measure, value)`` rows for a printed table."""
        out = []
        if self.baseline is not None and self.task == "classification":
            out.append(("majority-class accuracy (baseline)", f"{self.baseline:.4f}"))
        for m in self.models:
            name = "accuracy" if m.score == "accuracy" else "R^2"
            out.append((f"{m.model}: {name} original / anonymised", f"{m.original:.4f} / {m.anonymised:.4f}"))
            if m.score == "accuracy":  # the gain over the baseline kept beside the raw ratio
                out.append((f"{m.model}: relative accuracy / relative gain over the baseline",
                            f"{_num(m.relative)} / {_num(m.normalised)}"))
            else:
                out.append((f"{m.model}: relative {name}", _num(m.relative)))
        for a in self.attributes:
            out.append((f"{a.name}: kept / generalised / suppressed",
                        f"{a.kept:.1%} / {a.generalised:.1%} / {a.suppressed:.1%}"
                        + (f" (+{a.missing:.1%} missing)" if a.missing else "")))
            out.append((f"{a.name}: granularity loss / entropy loss / marginal TVD",
                        f"{a.granularity_loss:.3f} / {a.entropy_loss:.3f} / {a.marginal_tvd:.3f}"))
        for measure, name in PAIR_MEASURES.items():
            changes = [abs(p.change) for p in self.pairs if p.measure == measure]
            if changes:
                out.append((f"mean |change of {name}| over {len(changes)} QI pairs", f"{np.mean(changes):.4f}"))
        if self.pairs:
            tvds = [p.contingency_tvd for p in self.pairs if p.contingency_tvd is not None]
            if tvds:
                out.append(("mean TVD of pairwise contingency tables", f"{np.mean(tvds):.4f}"))
        return out


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.4f}"


# ------------------------------------------------------------ per attribute
def _leaf_membership(h: Hierarchy) -> sparse.csr_matrix:
    """(nodes x leaves) matrix: row v spreads one record uniformly over the leaves below v."""
    leaves = h.leaves
    rows, cols = [], []
    for j, leaf in enumerate(leaves):
        anc = h.ancestors[leaf, : h.depth[leaf] + 1]
        rows.append(anc)
        cols.append(np.full(len(anc), j))
    r, c = np.concatenate(rows), np.concatenate(cols)
    m = sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(h.n_nodes, len(leaves)))
    per_node = np.asarray(m.sum(axis=1)).ravel()
    return sparse.diags(1.0 / np.maximum(per_node, 1)) @ m


def _leaf_index(h: Hierarchy) -> np.ndarray:
    """Node id -> column of the leaf in :func:`_leaf_membership` (-1 for inner nodes)."""
    idx = np.full(h.n_nodes, -1, dtype=np.int64)
    idx[h.leaves] = np.arange(len(h.leaves))
    return idx


def _node_totals(h: Hierarchy, leaf: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Records whose original leaf lies below each node."""
    per_leaf = np.bincount(leaf, weights=w, minlength=h.n_nodes)
    tot = np.zeros(h.n_nodes)
    for v in np.flatnonzero(per_leaf):
        tot[h.ancestors[v, : h.depth[v] + 1]] += per_leaf[v]
    return tot


def _entropy_loss(h: Hierarchy, orig: np.ndarray, gen: np.ndarray, w: np.ndarray) -> float:
    """Normalised non-uniform entropy of one column (missing cells left out)."""
    ok = orig != 0
    orig, gen, w = orig[ok], gen[ok], w[ok]
    if not len(orig):
        return 0.0
    tot = _node_totals(h, orig, w)
    lost = float((w * np.log2(tot[gen] / tot[orig])).sum())
    full = float((w * np.log2(tot[0] / tot[orig])).sum())
    return max(lost / full, 0.0) if full > 0 else 0.0


def _top_shares(labels: Sequence[str], nodes: np.ndarray, w: np.ndarray) -> dict[str, float]:
    per = np.bincount(nodes, weights=w, minlength=len(labels))
    total = per.sum()
    order = np.argsort(-per, kind="stable")
    shown = [v for v in order[:TOP_VALUES] if per[v] > 0]
    out = {str(labels[v]): float(per[v] / total) for v in shown}
    rest = 1.0 - sum(out.values())
    if rest > 1e-12:
        out["(other)"] = float(rest)
    return out


def _spread(h: Hierarchy, nodes: np.ndarray, w: np.ndarray, membership=None) -> np.ndarray:
    """Distribution over the leaves, each record spread uniformly below its node."""
    membership = _leaf_membership(h) if membership is None else membership
    per_node = np.bincount(nodes, weights=w, minlength=h.n_nodes)
    return np.asarray(membership.T @ per_node).ravel()


def _attribute(h: Hierarchy, orig: np.ndarray, gen: np.ndarray, w: np.ndarray,
               membership: sparse.csr_matrix) -> AttributeUtility:
    total = w.sum()
    was_missing = orig == 0
    kept = (gen == orig) & ~was_missing
    suppressed = (gen == 0) & ~was_missing
    share = (lambda mask: float(w[mask].sum() / total)) if total > 0 else (lambda mask: 0.0)
    below = leaf_counts(h.parent, h.ancestors, h.depth, h.is_leaf)  # leaves below every node
    n_leaves = len(h.leaves)
    present = ~was_missing
    loss = 0.0
    if n_leaves > 1 and w[present].sum() > 0:
        loss = float((w[present] * (below[gen[present]] - 1)).sum() / (w[present].sum() * (n_leaves - 1)))
    p = _spread(h, orig[present], w[present], membership)
    q = _spread(h, gen[present], w[present], membership)
    tvd = 0.5 * float(np.abs(p / max(p.sum(), 1e-300) - q / max(q.sum(), 1e-300)).sum()) if p.sum() > 0 else 0.0
    return AttributeUtility(
        name=h.name, kept=share(kept), generalised=share(~kept & ~suppressed & ~was_missing),
        suppressed=share(suppressed), missing=share(was_missing), granularity_loss=loss,
        entropy_loss=_entropy_loss(h, orig, gen, w), marginal_tvd=tvd,
        before=_top_shares(h.labels, orig, w), after=_top_shares(h.labels, gen, w))


# ------------------------------------------------------------------- pairs
def cramers_v(a: np.ndarray, b: np.ndarray, w: np.ndarray | None = None) -> float:
    """Cramér's V (Cramér 1946) of two code columns, rows weighted by ``w``;
    0 when either column has a single category."""
    return _cramers_v_ranked(*dense_rank(a), *dense_rank(b), np.ones(len(a)) if w is None else w)


def _cramers_v_ranked(ra: np.ndarray, na: int, rb: np.ndarray, nb: int, w: np.ndarray) -> float:
    """Cramér's V of two columns already ranked 0..na-1 and 0..nb-1."""
    if min(na, nb) < 2:
        return 0.0
    if na * nb <= MAX_TABLE_CELLS:
        cells = np.bincount(ra.astype(np.int64) * nb + rb, weights=w, minlength=na * nb)
        r, c = np.divmod(np.flatnonzero(cells), nb)
        observed = cells[cells > 0]
    else:
        coo = sparse.coo_matrix((w, (ra, rb)), shape=(na, nb)).tocsr().tocoo()
        r, c, observed = coo.row, coo.col, coo.data
    row = np.bincount(ra, weights=w, minlength=na)
    col = np.bincount(rb, weights=w, minlength=nb)
    n = float(w.sum())
    # chi2 = n * (sum over cells of O^2 / (row * col) - 1): only the nonzero cells contribute to the sum
    chi2 = n * (float((observed ** 2 / (row[r] * col[c])).sum()) - 1.0)
    return float(math.sqrt(max(chi2, 0.0) / (n * (min(na, nb) - 1))))


def _contingency_tvd(ha: Hierarchy, hb: Hierarchy, oa, ob, ga, gb, w, ma, mb) -> float | None:
    la, lb = len(ha.leaves), len(hb.leaves)
    if la * lb > MAX_TABLE_CELLS:
        return None
    ia, ib = _leaf_index(ha), _leaf_index(hb)
    ok = (ia[oa] >= 0) & (ib[ob] >= 0)  # cells missing in the input left out
    if not ok.any():
        return 0.0
    before = sparse.coo_matrix((w[ok], (ia[oa[ok]], ib[ob[ok]])), shape=(la, lb)).toarray()
    nodes = sparse.coo_matrix((w[ok], (ga[ok], gb[ok])), shape=(ha.n_nodes, hb.n_nodes)).tocsr()
    after = (ma.T @ nodes @ mb).toarray()
    total = before.sum()
    return 0.5 * float(np.abs(before - after).sum() / total)


def _node_numbers(h: Hierarchy) -> np.ndarray | None:
    """Per node of a numeric hierarchy the middle of the leaves below it
    (NaN for ``missing``), or None when some leaf is not a number."""
    bounds = node_bounds(h)
    if bounds is None:
        return None
    lo, hi = bounds.lower.copy(), bounds.upper.copy()
    vals = leaf_values(h)[1]
    lo[0], hi[0] = vals.min(), vals.max()  # the root: the whole range
    mid = (lo + hi) / 2
    mid[~np.isfinite(mid)] = np.nan
    return mid


def _records(w: np.ndarray | None, n: int) -> np.ndarray | None:
    """Row of each record (rows repeated by their whole record counts), or
    None when every row is one record."""
    if w is None or np.all(w == 1):
        return None
    return np.repeat(np.arange(n), np.asarray(w).astype(np.int64))


def spearman(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> float:
    """Spearman's rank correlation (Spearman 1904, :func:`scipy.stats.spearmanr`)
    of two numeric columns over their records (``w``: records per row), rows
    with a NaN left out; 0 when either column holds one value."""
    from scipy.stats import spearmanr
    rows = _records(w, len(x))
    if rows is not None:
        x, y = x[rows], y[rows]
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if len(x) < 2 or x.min() == x.max() or y.min() == y.max():
        return 0.0
    return float(spearmanr(x, y).statistic)


def correlation_ratio(categories: np.ndarray, x: np.ndarray, w: np.ndarray | None = None) -> float:
    """The correlation ratio eta of the ranks of numeric
    ``x`` (:func:`scipy.stats.rankdata`) over ``categories``, over their
    records (``w``: records per row): the square root of the ranks' spread
    between the categories over their whole spread (0: the categories say
    nothing of the order, 1: they sort it). Rows with a NaN left out."""
    from scipy.stats import rankdata
    rows = _records(w, len(x))
    if rows is not None:
        categories, x = categories[rows], x[rows]
    ok = ~np.isnan(x)
    cats, x = dense_rank(categories[ok])[0], x[ok]
    if len(x) < 2:
        return 0.0
    r = rankdata(x)
    dev = r - r.mean()
    total = float((dev ** 2).sum())
    if total <= 0:
        return 0.0
    n_c = np.bincount(cats)
    mean_c = np.bincount(cats, weights=dev) / np.maximum(n_c, 1)
    return float(math.sqrt(min(max(float((n_c * mean_c ** 2).sum()) / total, 0.0), 1.0)))


def _pair(hs, i, j, orig, gen, w, ranked_orig, ranked_gen, numbers) -> tuple[str, float, float]:
    """The measure of the pair (i, j) and its value before and after (see :class:`PairAssociation`)."""
    ni, nj = numbers[i], numbers[j]
    if ni is None and nj is None:
        return ("cramers_v", _cramers_v_ranked(*ranked_orig[i], *ranked_orig[j], w),
                _cramers_v_ranked(*ranked_gen[i], *ranked_gen[j], w))
    if ni is not None and nj is not None:
        return ("spearman", spearman(ni[orig[:, i]], nj[orig[:, j]], w), spearman(ni[gen[:, i]], nj[gen[:, j]], w))
    num, cat = (i, j) if ni is not None else (j, i)
    return ("correlation_ratio", correlation_ratio(orig[:, cat], numbers[num][orig[:, num]], w),
            correlation_ratio(gen[:, cat], numbers[num][gen[:, num]], w))


def _pairs(hs: Sequence[Hierarchy], orig: np.ndarray, gen: np.ndarray, w: np.ndarray,
           members: Sequence[sparse.csr_matrix]) -> list[PairAssociation]:
    ranked_orig = [dense_rank(orig[:, j]) for j in range(len(hs))]  # ranked once, not once per pair
    ranked_gen = [dense_rank(gen[:, j]) for j in range(len(hs))]
    numbers = [_node_numbers(h) for h in hs]
    out = []
    for i in range(len(hs)):
        for j in range(i + 1, len(hs)):
            measure, before, after = _pair(hs, i, j, orig, gen, w, ranked_orig, ranked_gen, numbers)
            out.append(PairAssociation(
                hs[i].name, hs[j].name, measure, before, after,
                _contingency_tvd(hs[i], hs[j], orig[:, i], orig[:, j], gen[:, i], gen[:, j], w,
                                 members[i], members[j])))
    return out


# ------------------------------------------------------------------ entry points
def assess_codes(original_codes: np.ndarray, codes: np.ndarray, hierarchies: Sequence[Hierarchy], *,
                 counts: np.ndarray | None = None, target: np.ndarray | None = None, target_name: str | None = None,
                 features: Sequence[str] | None = None, task: str = "auto", folds: int = 5, seed: int = 0,
                 max_rows: int | None = MAX_MODEL_ROWS) -> UtilityReport:
    """The utility report of published node ``codes`` against the
    ``original_codes`` (leaves; the root for a cell missing in the input), one
    column per hierarchy.

    ``target``: the original values of the column to predict, one per row
    (None: no model); ``target_name`` its name. When it is a quasi-identifier,
    it is left out of the features. ``features``: the quasi-identifiers the
    models read (default all). ``task``: ``auto`` (numeric with at least
    :data:`~hieranon.evaluation.prediction.REGRESSION_MIN_DISTINCT` distinct values: regression), ``classification``
    or ``regression``. ``max_rows``: the models use a seeded sample of that
    many rows at most (None: all).
    """
    original_codes = np.asarray(original_codes)
    codes = np.asarray(codes)
    hs = list(hierarchies)
    if original_codes.shape != codes.shape or codes.ndim != 2 or codes.shape[1] != len(hs):
        raise ValueError(f"codes {codes.shape} and original codes {original_codes.shape} must both be "
                         f"(rows, {len(hs)})")
    if (codes < 0).any():
        raise ValueError("some published cell generalises no original value (code -1); verify the pair first")
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ValueError(f"folds must be a whole number >= 2, got {folds!r}")
    w = np.ones(len(codes)) if counts is None else np.asarray(counts, dtype=np.float64)
    names = [h.name for h in hs]
    members = [_leaf_membership(h) for h in hs]  # built once per QI for both
    attributes = [_attribute(h, original_codes[:, j], codes[:, j], w, members[j]) for j, h in enumerate(hs)]
    pairs = _pairs(hs, original_codes, codes, w, members)
    report = dict(attributes=attributes, pairs=pairs, folds=int(folds), seed=int(seed), rows_total=len(codes),
                  n_records=int(w.sum()))
    if target is None:
        return UtilityReport(**report)
    name = target_name or "target"
    chosen = names if features is None else list(features)
    unknown = [f for f in chosen if f not in names]
    if unknown:
        raise ValueError(f"feature(s) {unknown} are not quasi-identifiers (QIs: {names})")
    chosen = [f for f in chosen if f != name]
    if not chosen:
        raise ValueError(f"target {name!r}: no quasi-identifier left to predict it from")
    idx = [names.index(f) for f in chosen]
    task_, models, baseline, used, stratified = analysis(
        original_codes[:, idx], codes[:, idx], w, np.asarray(target), name, task, int(folds), int(seed), max_rows)
    log.info("utility of %s: %s", name, ", ".join(f"{m.model} {m.relative}" for m in models))
    return UtilityReport(**report, target=name, task=task_, features=chosen, models=models, baseline=baseline,
                         rows_used=used, stratified=stratified)


def _target_of_result(result, target: str, original: pd.DataFrame | None) -> np.ndarray:
    """The original values of ``target``, in the input's row order."""
    if original is not None:
        if target not in original.columns:
            raise ValueError(f"target column {target!r} not in the original table (its columns: "
                             f"{list(original.columns)[:20]})")
        return original[target].to_numpy()
    if target in result.qi_names:  # a quasi-identifier: its original leaves
        j = result.qi_names.index(target)
        codes = result.original_codes[:, j]
        return np.where(codes == 0, None, np.asarray(result.hierarchies[j].labels, dtype=object)[codes])
    data = result.data
    if data is None or target not in data.columns:
        raise ValueError(f"target column {target!r} is neither a quasi-identifier nor a column of the output; "
                         "pass the original table")
    values = data[target].to_numpy()
    order = getattr(result, "row_order", None)
    if order is not None:  # a shuffled output: output row i is input row order[i]
        out = np.empty_like(values)
        out[np.asarray(order)] = values
        values = out
    return values


def assess_result(result, target: str | None = None, *, original: pd.DataFrame | None = None,
                  **options) -> UtilityReport:
    """The utility report of an :class:`~hieranon.job.result.AnonymizationResult`.

    The target's original values come from ``original`` when given, else
    from the result: a quasi-identifier's original leaves, or the output's
    (unchanged) column. ``options`` as in :func:`assess_codes`.
    """
    if result.codes is None or result.original_codes is None:
        raise ValueError("the anonymised table could not be read against the hierarchies (see the "
                         "verification); no utility report")
    y = None if target is None else _target_of_result(result, target, original)
    return assess_codes(result.original_codes, result.codes, result.hierarchies, counts=result.counts, target=y,
                        target_name=target, **options)


def assess(original: pd.DataFrame, anonymised: pd.DataFrame, spec=None, *,
           quasi_identifiers: Sequence[str] | None = None, hierarchies: Mapping | Sequence | None = None,
           target: str | None = None, missing: str | None = None, counts: str | None = None,
           **options) -> UtilityReport:
    """The utility report of ``anonymised`` (made by hieranon or any other tool)
    against ``original``.

    The job is ``spec`` (an :class:`~hieranon.job.spec.AnonymizationSpec`: its
    quasi-identifiers, hierarchies, count column and missing mode), or
    ``quasi_identifiers`` and ``hierarchies`` (a mapping column -> Hierarchy,
    or a list in column order) with ``missing`` and ``counts`` (the count
    column). Every published QI cell must print its original value or one of
    its ancestors (else a ValueError names the column). ``target`` and
    ``options`` as in :func:`assess_codes`.
    """
    if spec is not None:
        hs = spec.build_hierarchies(original)
        qis = list(spec.quasi_identifiers)
        missing = spec.missing if missing is None else missing
        counts = spec.count_column if counts is None else counts
    else:
        if quasi_identifiers is None or hierarchies is None:
            raise ValueError("give a spec, or quasi_identifiers and hierarchies")
        qis = list(quasi_identifiers)
        hs = hierarchies
    enc = encode(original, qis, hs, counts=counts, missing=missing or "error")
    codes = encode_generalised(enc, anonymised.reset_index(drop=True))
    bad = [q for j, q in enumerate(qis) if (codes[:, j] < 0).any()]
    if bad:
        raise ValueError(f"column(s) {bad}: some anonymised cells are neither the original value nor one of its "
                         "generalisations in the hierarchy; check the pair (hieranon evaluate) first")
    y = None
    if target is not None:
        if target not in original.columns:
            raise ValueError(f"target column {target!r} not in the original table (its columns: "
                             f"{list(original.columns)[:20]})")
        y = original[target].to_numpy()
    return assess_codes(enc.codes, codes, enc.hierarchies, counts=enc.counts, target=y, target_name=target,
                        **options)
