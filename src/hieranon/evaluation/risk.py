"""Re-identification risk of a table as it is.

Under the prosecutor model an attacker who knows a person is in the table
re-identifies them with probability ``1/|E|``, ``E`` their equivalence class
over the quasi-identifiers (El Emam 2013; ARX's risk analysis). The journalist
and marketer models (El Emam 2013) and the population-uniqueness estimators
(:mod:`hieranon.privacy.population`) complete the picture a data-protection
officer asks for: :func:`risk_models` computes them all as ARX 3.9 does,
:class:`RiskModels` holds them with the assumptions they rest on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from ..core.requirements import Requirement
from ..core.table import EncodedTable, group
from ..privacy import population as pop
from ..privacy.weighted import IndividualRisk, record_risk, summarise_individual_risk
from .suda import DEFAULT_MAX_SIZE, SudaReport, special_uniques

#: Prosecutor risk above which a record counts as "at risk" when there is no
#: requirement to derive it from (see :func:`default_threshold`).
DEFAULT_THRESHOLD = 0.2


def default_threshold(k_max: int | None) -> float:
    """The risk threshold used unless one is given: ``1/k`` for the largest
    ``k`` of the requirements, so that a class of exactly ``k`` records (risk
    ``1/k``) is not "at risk" and a k-anonymous release shows none;
    :data:`DEFAULT_THRESHOLD` without requirements."""
    if k_max is None or k_max < 1:
        return DEFAULT_THRESHOLD
    return 1.0 / int(k_max)


def check_threshold(value, what: str = "risk_threshold") -> float:
    """``value`` as a risk threshold in (0, 1]; a ValueError naming ``what`` otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not (0 < float(value) <= 1):
        raise ValueError(f"{what}: expected a number in (0, 1] (a prosecutor risk 1/|class|, e.g. 0.2 = classes of "
                         f"fewer than 5 records), got {value!r}")
    return float(value)


#: Sampling fraction assumed when neither the fraction nor the population size
#: is given: the table is taken as a 1% sample of its population (ARX's example
#: setting). Every output that uses it says so (``sampling_fraction_assumed``).
DEFAULT_SAMPLING_FRACTION = 0.01


@dataclass(frozen=True)
class PopulationModel:
    """What is known of the population the table was sampled from: its
    sampling fraction or its size (at most one); neither means
    :data:`DEFAULT_SAMPLING_FRACTION`, assumed."""

    sampling_fraction: float | None = None
    population: int | None = None

    def __post_init__(self):
        if self.sampling_fraction is not None and self.population is not None:
            raise ValueError("give the sampling fraction or the population size, not both")
        if self.sampling_fraction is not None:
            pop.population_size(1, self.sampling_fraction)  # the range check, one message
        if self.population is not None and (isinstance(self.population, bool) or not self.population >= 1):
            raise ValueError(f"population: expected a number of people (at least 1), got {self.population!r}")

    @property
    def assumed(self) -> bool:
        """True when the default sampling fraction stands in for what was not given."""
        return self.sampling_fraction is None and self.population is None

    def size(self, n: int) -> int:
        """The population size for a sample of ``n`` records (``round(n / f)``)."""
        if self.population is not None:
            return pop.population_size(n, population=self.population)
        return pop.population_size(n, self.sampling_fraction or DEFAULT_SAMPLING_FRACTION)


@dataclass
class RiskModels:
    """Re-identification risk of one table under the attacker models and the
    population-uniqueness estimators, every figure a share of records.

    ``prosecutor``, ``journalist``, ``marketer`` are the expected shares of
    records an attacker re-identifies ("success rate"; El Emam 2013); the
    ``highest`` figures are the largest probability any one record has, and
    ``at_risk`` the share of records whose probability exceeds ``threshold``.
    Without a population table, the population class of every record is
    taken to be its sample class (ARX's convention), so the journalist
    figures equal the prosecutor's and bound them from above.
    ``pitman``, ``zayatz``, ``snb``, ``dankar`` are estimated shares of the
    population's records unique in it (:mod:`hieranon.privacy.population`),
    for ``population_size`` people (``sampling_fraction`` = records /
    population; ``sampling_fraction_assumed`` when it is
    :data:`DEFAULT_SAMPLING_FRACTION` and not the user's).
    """

    threshold: float
    prosecutor: float
    prosecutor_highest: float
    prosecutor_at_risk: float
    journalist: float
    journalist_highest: float
    journalist_at_risk: float
    marketer: float
    sample_uniques: float
    pitman: float
    zayatz: float
    snb: float
    dankar: float
    dankar_model: str
    sampling_fraction: float
    population_size: int
    sampling_fraction_assumed: bool
    journalist_population: str = "sample"

    def as_dict(self) -> dict:
        return asdict(self)

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) rows for a console table."""
        basis = (f"{self.sampling_fraction:.4g} (assumed)" if self.sampling_fraction_assumed
                 else f"{self.sampling_fraction:.4g}")
        return [
            ("attacker model: highest / average / records at risk", ""),
            ("  prosecutor", f"{self.prosecutor_highest:.4f} / {self.prosecutor:.4f} / {self.prosecutor_at_risk:.2%}"),
            ("  journalist", f"{self.journalist_highest:.4f} / {self.journalist:.4f} / {self.journalist_at_risk:.2%}"),
            ("  marketer (average)", f"{self.marketer:.4f}"),
            (f"population uniques (sampling fraction {basis}, population {self.population_size})", ""),
            ("  Pitman / Zayatz / SNB", f"{self.pitman:.4%} / {self.zayatz:.4%} / {self.snb:.4%}"),
            (f"  Dankar et al. ({self.dankar_model})", f"{self.dankar:.4%}"),
        ]


def risk_models(class_sizes, threshold: float, population: PopulationModel | None = None,
                population_class_sizes=None, population_size: int | None = None) -> RiskModels:
    """Every risk figure of a table from its equivalence-class sizes (one per class).

    ``population_class_sizes`` (one per class, at least the sample's) are the
    sizes of the same classes in the population, from a population table;
    without it each class is its own population class (ARX's convention when
    no population table is given). ``population_size`` overrides the size the
    ``population`` model gives (a release keeps its original's population).
    Highest risk ``1/min|E|``; average ``classes / records`` for the
    prosecutor, ``max(classes / sum F_j, sum(f_j / F_j) / n)`` for the
    journalist, ``sum(f_j / F_j) / n`` for the marketer; at risk: the records
    whose ``1/|E|`` exceeds ``threshold`` (El Emam 2013).
    """
    population = population or PopulationModel()
    f = np.asarray(class_sizes, dtype=np.int64)
    big_f = f if population_class_sizes is None else np.asarray(population_class_sizes, dtype=np.int64)
    n, u = float(f.sum()), float(len(f))
    if n == 0:
        raise ValueError("risk of an empty table: no records")
    big_n = population_size if population_size is not None else population.size(int(n))
    est = pop.estimate(f, population=big_n)
    ratio = float((f / big_f).sum())
    return RiskModels(
        threshold=threshold,
        prosecutor=u / n, prosecutor_highest=1.0 / float(f.min()),
        prosecutor_at_risk=float(f[1.0 / f > threshold].sum()) / n,
        journalist=max(u / float(big_f.sum()), ratio / n), journalist_highest=1.0 / float(big_f.min()),
        journalist_at_risk=float(f[1.0 / big_f > threshold].sum()) / n,
        marketer=ratio / n, sample_uniques=est.sample_uniques,
        pitman=est.pitman, zayatz=est.zayatz, snb=est.snb, dankar=est.dankar, dankar_model=est.dankar_model,
        sampling_fraction=est.sampling_fraction, population_size=est.population_size,
        sampling_fraction_assumed=population.assumed,
        journalist_population="sample" if population_class_sizes is None else "population table")


def _count(n: int, one: str, many: str | None = None) -> str:
    """``1 class``, ``2 classes``: a count with its noun in the right number."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def size_bins(k: int | None = None) -> list[tuple[int, int | None]]:
    """Class-size bins ``[(low, high or None), ...]``: 1, 2, 3-4, 5-9, 10-19,
    20+ (roughly doubling), with ``k`` and ``2k`` as extra bin boundaries so
    that the classes below ``k`` are never binned with those that reach it."""
    edges = {1, 2, 3, 5, 10, 20}
    if k is not None and k > 1:
        edges |= {k, 2 * k}
    edges = sorted(edges)
    return [(lo, hi - 1) for lo, hi in zip(edges, edges[1:])] + [(edges[-1], None)]


@dataclass
class RiskReport:
    """Risk figures and requirement status of one table.

    Attributes
    ----------
    n_records, n_classes : int
    achieved_k : int
        Smallest class size over all QIs.
    risk_max, risk_mean : float
        Highest and average prosecutor risk ``1/|E|`` over records.
    records_at_risk : int
        Records whose risk exceeds ``threshold``.
    sample_uniques : float
        Fraction of records alone in their class.
    class_size_histogram : dict[int, int]
        Class size -> number of classes.
    requirements : list[dict]
        Per requirement: achieved k, classes and records below its k.
    models : RiskModels
        Prosecutor, journalist, marketer risk and population uniqueness
        (:func:`risk_models`).
    individual_risk : IndividualRisk or None
        Individual risk with sampling weights and the global risk
        (:mod:`hieranon.privacy.weighted`, Benedetti & Franconi 1998).
    suda : SudaReport or None
        Special uniques (:mod:`hieranon.evaluation.suda`), when asked for.
    """

    n_records: int
    n_classes: int
    achieved_k: int
    risk_max: float
    risk_mean: float
    threshold: float
    records_at_risk: int
    sample_uniques: float
    class_size_histogram: dict
    requirements: list = field(default_factory=list)
    models: RiskModels | None = None
    individual_risk: IndividualRisk | None = None
    suda: SudaReport | None = None

    @property
    def ok(self) -> bool:
        return all(r["classes_below_k"] == 0 for r in self.requirements)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["ok"] = self.ok
        d["risk"] = d.pop("models")
        return d

    def size_distribution(self, k: int | None = None) -> list[dict]:
        """Classes and records per class-size bin (:func:`size_bins`), from
        size 1 up to the bin holding the largest class; empty bins included.
        ``below_k`` marks the bins whose classes are all smaller than ``k``."""
        hist = self.class_size_histogram
        largest = max(hist, default=0)
        out = []
        for lo, hi in size_bins(k):
            if lo > largest:
                break
            inside = {s: c for s, c in hist.items() if s >= lo and (hi is None or s <= hi)}
            label = str(lo) if hi == lo else (f"{lo}+" if hi is None else f"{lo}-{hi}")
            out.append({"sizes": label, "min": lo, "max": hi, "classes": int(sum(inside.values())),
                        "records": int(sum(s * c for s, c in inside.items())),
                        "below_k": bool(k is not None and hi is not None and hi < k)})
        return out

    def rows(self, k: int | None = None, distribution: bool = False) -> list[tuple[str, str]]:
        """(label, value) rows for a console table; with ``distribution``,
        one row per class-size bin (bins chosen relative to ``k``)."""
        out = [
            ("records", str(self.n_records)), ("equivalence classes", str(self.n_classes)),
            ("k achieved (smallest class)", str(self.achieved_k)),
            ("prosecutor risk, highest", f"{self.risk_max:.4f}"),
            ("prosecutor risk, average", f"{self.risk_mean:.4f}"),
            (f"records at risk (risk above {self.threshold:.3g})", str(self.records_at_risk)),
            ("sample uniques", f"{self.sample_uniques:.2%}"),
        ]
        for r in self.requirements:
            out.append((f"{r['requirement']}: achieved k", str(r["achieved_k"])))
            out.append((f"{r['requirement']}: classes / records below k",
                        f"{r['classes_below_k']} / {r['records_below_k']}"))
        if distribution:
            for b in self.size_distribution(k):
                out.append((f"classes of size {b['sizes']}" + (" (below k)" if b["below_k"] else ""),
                            f"{_count(b['classes'], 'class', 'classes')} / {_count(b['records'], 'record')}"))
        return (out + (self.models.rows() if self.models is not None else [])
                + (self.individual_risk.rows() if self.individual_risk is not None else [])
                + (self.suda.rows() if self.suda is not None else []))


def class_sizes(codes: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(class sizes, size of each row's class)."""
    ec = group(codes, counts)
    return ec.sizes, ec.sizes[ec.row_class]


def assess(table: EncodedTable, requirements: list[Requirement], codes: np.ndarray | None = None,
           threshold: float = DEFAULT_THRESHOLD, population: PopulationModel | None = None,
           population_size: int | None = None, weights: np.ndarray | None = None,
           weight_column: str | None = None, suda_max_size: int | None = None) -> RiskReport:
    """Risk of ``codes`` (default: the table as it is) and each requirement's
    status; the risk models (:func:`risk_models`) for the ``population`` model
    (default: :data:`DEFAULT_SAMPLING_FRACTION` assumed), or for
    ``population_size`` people when given; the individual risk with the
    sampling ``weights`` of the rows (from ``weight_column``; None: ``1/f``
    each, ``f`` the sampling fraction: :func:`individual_risk`); with
    ``suda_max_size``, the special uniques of the table's own codes
    (:func:`hieranon.evaluation.suda.special_uniques`, the sampling fraction as DIS)."""
    codes = table.codes if codes is None else codes
    counts = table.counts
    sizes, row_size = class_sizes(codes, counts)
    n = int(counts.sum())
    risk = 1.0 / row_size
    hist_sizes, hist_counts = np.unique(sizes, return_counts=True)
    models = risk_models(sizes, threshold, population, population_size=population_size)
    reqs = []
    for r in requirements:
        idx = r.indices(table.qi_names)
        if set(idx) == set(range(codes.shape[1])):  # every QI: the classes above
            rs, rrow = sizes, row_size
        else:
            rs, rrow = class_sizes(codes[:, idx], counts)
        below = rs < r.k
        reqs.append({"requirement": str(r), "k": r.k, "achieved_k": int(rs.min()),
                     "classes_below_k": int(below.sum()), "records_below_k": int(counts[rrow < r.k].sum())})
    return RiskReport(
        n_records=n, n_classes=len(sizes), achieved_k=int(sizes.min()),
        risk_max=float(risk.max()), risk_mean=float((risk * counts).sum() / n), threshold=threshold,
        records_at_risk=int(counts[risk > threshold].sum()),
        sample_uniques=float(counts[row_size == 1].sum() / n),
        class_size_histogram={int(s): int(c) for s, c in zip(hist_sizes, hist_counts)},
        requirements=reqs,
        models=models,
        individual_risk=individual_risk(codes, counts, threshold, models, weights, weight_column),
        suda=None if suda_max_size is None else special_uniques(
            table.codes, counts, suda_max_size,
            None if population is None or population.assumed else models.sampling_fraction)[0],
    )


def individual_risk(codes: np.ndarray, counts: np.ndarray, threshold: float, models: RiskModels,
                    weights: np.ndarray | None = None, weight_column: str | None = None) -> IndividualRisk:
    """The individual and global risk of ``codes`` with the sampling ``weights``
    of the rows (:mod:`hieranon.privacy.weighted`); without them every record
    stands for ``1/f`` people, ``f`` the sampling fraction of ``models``."""
    if weights is None:
        weights = np.full(len(counts), 1.0 / models.sampling_fraction)
        label = f"1/f, sampling fraction {models.sampling_fraction:.4g}" + (
            " (assumed)" if models.sampling_fraction_assumed else "")
        assumed = models.sampling_fraction_assumed
    else:
        label, assumed = (f"column {weight_column!r}" if weight_column is not None else "given"), False
    risk = record_risk(group(codes, counts).row_class, counts, weights)
    return summarise_individual_risk(risk, counts, threshold, label, assumed)


def assess_result(result, counts: np.ndarray | None = None, threshold: float | None = None,
                  population: PopulationModel | None = None):
    """Risk of an :class:`~hieranon.job.result.AnonymizationResult` before and after:
    ``(before, after, suppressed_records)``, from the result alone (its
    original and output codes, record counts and suppressed rows).

    ``after`` covers the records not suppressed (None when every record was
    suppressed or there are no output codes); ``before`` is None without the
    original codes. ``threshold`` defaults to the result's spec's
    ``risk_threshold``; the figures are computed once per threshold and kept
    on the result (``counts`` overrides the result's record counts and is
    not cached). ``population`` is the population model of the original; the
    release is measured against the same population (its size fixed by the
    original's records)."""
    if threshold is None:
        threshold = getattr(result, "risk_threshold", DEFAULT_THRESHOLD)
    population = population or getattr(result, "population_model", None) or PopulationModel()
    cache = getattr(result, "risk_cache", None)
    key = threshold if population.assumed else (threshold, population)
    if counts is None and cache is not None and key in cache:
        return cache[key]
    figures = _assess_result(result, counts, threshold, population)
    if counts is None and cache is not None:
        cache[key] = figures
    return figures


def _assess_result(result, counts, threshold: float, population: PopulationModel):
    if result.original_codes is None:
        return None, None, 0
    n_rows = result.original_codes.shape[0]
    if counts is None:
        counts = getattr(result, "counts", None)
    counts = np.ones(n_rows, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    qi_names = [h.name for h in result.hierarchies]
    weights = getattr(result, "weights", None)
    spec = getattr(result, "spec", None)
    weight_column = getattr(spec, "weight_column", None)
    before = assess(EncodedTable(result.original_codes, result.hierarchies, qi_names, counts),
                    result.requirements, threshold=threshold, population=population, weights=weights,
                    weight_column=weight_column, suda_max_size=getattr(spec, "suda_max_size", DEFAULT_MAX_SIZE))
    if result.codes is None:
        return before, None, 0
    sup = np.zeros(n_rows, dtype=bool) if result.suppressed is None else np.asarray(result.suppressed, dtype=bool)
    keep = ~sup
    if not keep.any():
        return before, None, int(counts[sup].sum())
    after = assess(EncodedTable(result.original_codes[keep], result.hierarchies, qi_names, counts[keep]),
                   result.requirements, codes=result.codes[keep], threshold=threshold, population=population,
                   population_size=before.models.population_size,
                   weights=None if weights is None else weights[keep], weight_column=weight_column)
    return before, after, int(counts[sup].sum())
