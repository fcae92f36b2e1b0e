"""Every quality measure of hieranon, in one place: the distortions of Li et al. 2006/2008,
Sun, Wang & Li 2008 and Han et al. 2014, and the table measures of those papers and of
Arca & Hewett.

The distortion cost model itself (:class:`CostModel`, per-node costs, tuple
and class distances) is defined in :mod:`hieranon.core.cost`, below the
algorithms that minimise it, and is importable from here with the measures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

# the cost model, defined in the core below the algorithms, is public here with the measures as it always was
from ..core.cost import (  # noqa: F401 - re-exported
    WEIGHT_SCHEMES,
    CostModel,
    class_distance,
    distortion,
    distortion_ratio,
    equal_priorities,
    full_distortion,
    lca_tuple,
    level_weights,
    node_cost_levels,
    node_costs_exact,
    tuple_distance,
    tuple_distortion,
    whd,
)
from ..core.requirements import normalise
from ..core.table import encode, encode_generalised, group, row_keys
from ..core.tree import Hierarchy


# ---------------------------------------------------------- class measures
def discernibility(sizes: np.ndarray, n_suppressed: int = 0, n_total: int | None = None) -> int:
    """DM = sum |E|^2 (Bayardo & Agrawal); each suppressed record costs |D|."""
    sizes = np.asarray(sizes, dtype=np.int64)
    n_total = int(sizes.sum()) + n_suppressed if n_total is None else n_total
    return int((sizes ** 2).sum()) + n_suppressed * n_total


def cavg(n_records: int, n_classes: int, k: int) -> float:
    """Normalised average class size CAVG = (n / #classes) / k (LeFevre et al.)."""
    return (n_records / n_classes) / k if n_classes else float("nan")


def level_fractions(gen_col: np.ndarray, h: Hierarchy, counts=None) -> np.ndarray:
    """Fraction of an attribute's cells at each level (index 0 = level 1, the root)."""
    w = np.ones(len(gen_col)) if counts is None else np.asarray(counts, dtype=float)
    lv = h.depth[gen_col]
    frac = np.bincount(lv, weights=w, minlength=h.height)
    return frac / frac.sum() if frac.sum() else frac


def inconsistency(gen: np.ndarray, hierarchies, counts=None) -> np.ndarray:
    """Per attribute ``inconsist_i = 1 - max_j p_ij`` (Li et al. 2008, Def. 12)."""
    return np.array([1 - level_fractions(gen[:, j], h, counts).max() for j, h in enumerate(hierarchies)])


def generalisation_portion(gen: np.ndarray, hierarchies, counts=None) -> np.ndarray:
    """Per attribute ``1 -`` fraction of cells at the most specific level present
    (Li et al. 2008, Def. 13)."""
    out = []
    for j, h in enumerate(hierarchies):
        fr = level_fractions(gen[:, j], h, counts)
        present = np.flatnonzero(fr > 0)
        out.append(1 - fr[present.max()] if len(present) else 0.0)
    return np.array(out)


def modification_rate(orig, gen, counts=None) -> float:
    """Fraction of QI cells whose value changed."""
    w = np.ones(len(orig)) if counts is None else np.asarray(counts, dtype=float)
    changed = (orig != gen).sum(axis=1)
    return float(changed @ w / (w.sum() * orig.shape[1])) if orig.size else 0.0


def precision(orig, gen, hierarchies, counts=None) -> float:
    """Prec = 1 - mean over QI cells of level_from_leaf(v') / (H - 1) (Arca & Hewett,
    after Sweeney); an attribute of height 1 contributes 0 loss."""
    w = np.ones(len(orig)) if counts is None else np.asarray(counts, dtype=float)
    loss = np.zeros(len(orig))
    for j, h in enumerate(hierarchies):
        if h.height > 1:
            # level_from_leaf of the output node (Arca & Hewett's precision): on an unbalanced tree a
            # shallow leaf generalised to the root loses as much as a deep one
            lfl = h.level_from_leaf
            loss += (lfl[gen[:, j]] - lfl[orig[:, j]]) / (h.height - 1)
    return float(1 - (loss @ w) / (w.sum() * orig.shape[1])) if orig.size else 1.0


def mage_distortion(orig, gen, hierarchies, omegas=None, counts=None) -> float:
    """Han et al. 2014 Def. 5 summed over rows: ``sum_i omega_i * lfl(v'_i) / H_i``
    minus the same for the original (0 for leaves)."""
    model = CostModel.build(hierarchies, "mage", priorities=omegas)
    return distortion(orig, gen, model, counts)


def classification_metric(row_class: np.ndarray, labels: np.ndarray, suppressed: np.ndarray | None = None,
                          counts=None) -> float:
    """CM (Sun et al. 2008, after Iyengar): fraction of records suppressed or whose
    class label differs from the majority label of their equivalence class."""
    labels_codes, _ = pd.factorize(pd.Series(labels), use_na_sentinel=False)
    w = np.ones(len(row_class), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    n_lab = int(labels_codes.max()) + 1 if len(labels_codes) else 1
    pair = row_class.astype(np.int64) * n_lab + labels_codes
    tally = np.bincount(pair, weights=w, minlength=(int(row_class.max()) + 1) * n_lab if len(row_class) else 0)
    tally = tally.reshape(-1, n_lab)
    majority_total = tally.max(axis=1)
    sup = np.zeros(len(row_class), bool) if suppressed is None else np.asarray(suppressed, bool)
    penalised = w.sum() - majority_total.sum()
    if sup.any():  # suppressed records are all penalised; they were counted in their (root) class above
        sup_class = np.unique(row_class[sup])
        penalised += majority_total[sup_class].sum()
    return float(penalised / w.sum()) if w.sum() else 0.0


# ---------------------------------------------------------------- summary
@dataclass
class Metrics:
    """All quality measures of one anonymised table.

    ``distortion`` uses the cost model given (uniform WHD unless said);
    ``distortion_uniform`` and ``distortion_height`` are always reported.
    Per-attribute arrays follow ``qi_names``.
    """

    n_records: int
    n_rows: int
    qi_names: list[str]
    k: int
    distortion: float
    distortion_ratio: float
    distortion_uniform: float
    distortion_ratio_uniform: float
    distortion_height: float
    distortion_ratio_height: float
    mage_distortion: float
    discernibility: int
    cavg: float
    n_classes: int
    achieved_k: int
    inconsistency: float
    inconsistency_per_attribute: list[float]
    generalisation_portion_per_attribute: list[float]
    modification_rate: float
    precision: float
    distinct_rows_input: int
    distinct_rows_output: int
    row_ratio: float
    suppressed_records: int
    risk_max: float
    risk_mean: float
    classification_metric: float | None = None
    #: per requirement ``<B, k>`` (Arca & Hewett), the smallest number of
    #: non-suppressed records sharing a combination of B's values
    achieved_k_per_requirement: dict[str, int] = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        """Plain values for JSON; the per-attribute figures as mappings
        attribute -> value."""
        out = asdict(self)
        for key in ("inconsistency_per_attribute", "generalisation_portion_per_attribute"):
            out[key] = dict(zip(self.qi_names, out[key]))
        return out


def suppressed_mask(gen: np.ndarray) -> np.ndarray:
    """Rows whose every QI cell is the root (suppressed records)."""
    return (gen == 0).all(axis=1) if gen.size else np.zeros(len(gen), bool)


def compute(orig_codes: np.ndarray, gen_codes: np.ndarray, hierarchies: Sequence[Hierarchy], k: int,
            counts: np.ndarray | None = None, model: CostModel | None = None, qi_names=None,
            class_labels: np.ndarray | None = None, treat_all_root_as_suppressed: bool = False,
            suppressed: np.ndarray | None = None, requirements: Sequence | None = None) -> Metrics:
    """Every metric from original and generalised code matrices.

    Suppressed records are those an algorithm reported as suppressed; with
    ``treat_all_root_as_suppressed`` every all-root row counts as one.
    ``achieved_k`` is the smallest class over all QIs; with ``requirements``
    (:class:`~hieranon.core.requirements.Requirement` objects over ``qi_names``)
    the smallest group of each requirement's attributes is reported too.
    """
    orig_codes = np.asarray(orig_codes)
    gen_codes = np.asarray(gen_codes)
    n_rows, m = orig_codes.shape
    counts = np.ones(n_rows, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    uni = CostModel.build(hierarchies, "uniform")
    hgt = CostModel.build(hierarchies, "height")
    model = model or uni
    sup = np.zeros(n_rows, bool) if suppressed is None else np.asarray(suppressed, bool)
    if treat_all_root_as_suppressed and suppressed is None:
        # all-root rows are suppressed records only when they could not stand as a class of their own
        all_root = suppressed_mask(gen_codes)
        if 0 < counts[all_root].sum() < k:
            sup = all_root
    keep = ~sup
    sizes_all = group(gen_codes, counts)
    ec = sizes_all if keep.all() else group(gen_codes[keep], counts[keep])  # the classes without suppressed rows
    n_sup = int(counts[sup].sum())
    row_size = sizes_all.sizes[sizes_all.row_class]
    incons = inconsistency(gen_codes, hierarchies, counts)
    n_distinct_in = len(np.unique(row_keys(orig_codes)))
    cm = None
    if class_labels is not None:
        cm = classification_metric(sizes_all.row_class, np.asarray(class_labels), sup, counts)
    qi_names = list(qi_names or [h.name for h in hierarchies])
    per_req = {}
    for r in requirements or ():
        idx = r.indices(qi_names)
        if set(idx) == set(range(m)):  # every QI: the classes of ec
            per_req[str(r)] = int(ec.sizes.min()) if ec.n_classes else 0
        else:
            per_req[str(r)] = _smallest_group(gen_codes[keep][:, idx], counts[keep])
    d_model, ratio_model = _distortion_and_ratio(orig_codes, gen_codes, model, counts)
    if model is uni or _same_costs(model, uni):
        d_uni, ratio_uni = d_model, ratio_model
    else:
        d_uni, ratio_uni = _distortion_and_ratio(orig_codes, gen_codes, uni, counts)
    d_hgt, ratio_hgt = _distortion_and_ratio(orig_codes, gen_codes, hgt, counts)
    return Metrics(
        n_records=n, n_rows=n_rows, qi_names=qi_names, k=k,
        distortion=d_model,
        distortion_ratio=ratio_model,
        distortion_uniform=d_uni,
        distortion_ratio_uniform=ratio_uni,
        distortion_height=d_hgt,
        distortion_ratio_height=ratio_hgt,
        mage_distortion=mage_distortion(orig_codes, gen_codes, hierarchies, counts=counts),
        discernibility=discernibility(ec.sizes, n_sup, n),
        cavg=cavg(n - n_sup, ec.n_classes, k),
        n_classes=ec.n_classes,
        achieved_k=int(ec.sizes.min()) if ec.n_classes else 0,
        inconsistency=float(incons.max()) if m else 0.0,
        inconsistency_per_attribute=[float(x) for x in incons],
        generalisation_portion_per_attribute=[float(x) for x in generalisation_portion(gen_codes, hierarchies, counts)],
        modification_rate=modification_rate(orig_codes, gen_codes, counts),
        precision=precision(orig_codes, gen_codes, hierarchies, counts),
        distinct_rows_input=n_distinct_in,
        distinct_rows_output=sizes_all.n_classes,
        row_ratio=sizes_all.n_classes / max(n_distinct_in, 1),
        suppressed_records=n_sup,
        risk_max=float((1.0 / row_size).max()) if n_rows else 0.0,
        risk_mean=float((counts / row_size) @ np.ones(n_rows) / n) if n else 0.0,
        classification_metric=cm,
        achieved_k_per_requirement=per_req,
    )


def _distortion_and_ratio(orig, gen, model: CostModel, counts) -> tuple[float, float]:
    """(:func:`distortion`, :func:`distortion_ratio`) with the distortion computed once."""
    d = distortion(orig, gen, model, counts)
    full = full_distortion(orig, model, counts)
    return d, (d / full if full > 0 else 0.0)


def _same_costs(a: CostModel, b: CostModel) -> bool:
    """Whether two cost models give every node the same (float) cost, hence the same distortions."""
    return len(a.costs) == len(b.costs) and all(np.array_equal(x, y) for x, y in zip(a.costs, b.costs))


def _smallest_group(codes: np.ndarray, counts: np.ndarray) -> int:
    """Records in the smallest group of identical rows of ``codes`` (0 when empty)."""
    return int(group(codes, counts).sizes.min()) if len(codes) else 0


def evaluate(original: pd.DataFrame, anonymised: pd.DataFrame, quasi_identifiers: Sequence[str], hierarchies,
             k: int = 1, counts=None, scheme: str = "uniform", beta: float = 1.0, priorities=None,
             class_column: str | None = None, missing: str = "error", requirements: Sequence | None = None) -> Metrics:
    """Every metric from two DataFrames (original and anonymised) and the hierarchies;
    ``requirements`` as in :func:`hieranon.core.requirements.normalise`."""
    enc = encode(original, quasi_identifiers, hierarchies, counts=counts, missing=missing)
    gen = encode_generalised(enc, anonymised)
    if (gen < 0).any():
        j = int(np.flatnonzero((gen < 0).any(axis=0))[0])
        i = int(np.flatnonzero(gen[:, j] < 0)[0])
        raise ValueError(
            f"column {enc.qi_names[j]!r}, row {i}: {anonymised[enc.qi_names[j]].iloc[i]!r} does not generalise "
            f"the original value {original[enc.qi_names[j]].iloc[i]!r}"
        )
    model = CostModel.build(enc.hierarchies, scheme, beta, priorities)
    labels = original[class_column].to_numpy() if class_column else None
    reqs = normalise(requirements, None, enc.qi_names) if requirements else None
    return compute(enc.codes, gen, enc.hierarchies, k, enc.counts, model, enc.qi_names, labels,
                   treat_all_root_as_suppressed=True, requirements=reqs)
