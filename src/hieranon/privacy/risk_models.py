"""Risk-based privacy models: conditions on the release's equivalence classes
themselves (their generalised quasi-identifier tuples and sizes), not on a
sensitive attribute -- the models ARX offers beside k-anonymity (Prasser et
al. 2014).

Per class (checked on every class of the release, the suppressed records one
more, like l-diversity):

* **k-map** (Sweeney 2002; El Emam and Dankar 2008): every class matches at
  least ``k`` records of a *population* table (records whose values the
  class's tuple generalises);
* **delta-presence** (Nergiz, Atzori and Clifton 2007): every class's
  records make up between ``delta_min`` and ``delta_max`` of the population
  records it matches, ``delta_min <= |class| / |matching population| <= delta_max``.

On the whole table (*global* models: :attr:`BoundRiskModel.is_global`,
:meth:`BoundRiskModel.table_ok` on the class sizes):

* **average re-identification risk** (the prosecutor model's average risk,
  El Emam 2013; ARX's "average risk"): classes / records ``<= r``.

Population uniqueness (:func:`hieranon.privacy.population.population_uniqueness`)
is not modelled here.

An unbound :class:`RiskModel` holds the user's parameters (and the population
table); :meth:`RiskModel.bind` takes the *encoded* input table (its
hierarchies encode the population) and returns a :class:`BoundRiskModel`.
k-map and the average risk are monotone under merging classes (a merged
class's tuple generalises both, so it matches at least as many population
records; merging lowers the number of classes); delta-presence is not, but
the whole table taken as one class satisfies every model that can be met at
all (:meth:`BoundRiskModel.check_feasible`), so merging classes until every
model holds always ends.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import pandas as pd

from ..core.table import DataError, EncodedTable, encode
from ._base import REL_TOL, PrivacyError, positive_number
from .population import ESTIMATORS, population_size, population_uniqueness

__all__ = ["RiskModel", "BoundRiskModel", "KMap", "DeltaPresence", "AverageRisk", "PopulationUniqueness",
           "bind_risk", "risk_feasible", "DEFAULT_SAMPLING_FRACTION"]

#: Sampling fraction assumed when a population-uniqueness model is given no
#: population (ARX's default; said in a warning).
DEFAULT_SAMPLING_FRACTION = 0.01


class RiskModel(ABC):
    """An unbound risk-based model (parameters, and the population table
    when it needs one)."""

    kind: str = ""
    #: None: no sensitive attribute (the spec's role checks skip it)
    attribute = None

    @abstractmethod
    def bind(self, table: EncodedTable) -> BoundRiskModel:
        """The model on the encoded input table (its QIs and hierarchies)."""

    @abstractmethod
    def describe(self) -> str:
        """Human text, e.g. ``5-map``."""

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        return f"<{self.describe()}>"


class BoundRiskModel(ABC):
    """A risk model bound to an encoded table.

    A per-class model answers :meth:`classes_ok` / :meth:`measure_classes`
    about class tuples (node codes, one column per QI) and sizes (records); a
    global model (:attr:`is_global`) answers :meth:`table_ok` /
    :meth:`table_measure` about the class sizes alone."""

    #: True for a condition on the whole table rather than on each class
    is_global: bool = False
    #: True when a larger measured value is better
    higher_is_better: bool = True

    def __init__(self, model: RiskModel, table: EncodedTable):
        self.model = model
        self.n_records = int(np.asarray(table.counts).sum())

    @property
    def kind(self) -> str:
        return self.model.kind

    @property
    def attribute(self):
        return None

    def describe(self) -> str:
        return self.model.describe()

    @abstractmethod
    def required_text(self) -> str:
        """What must be reached, e.g. ``>= 5 population records``."""

    @abstractmethod
    def achieved_text(self, value: float) -> str:
        """A measured value in words."""

    # per class
    def measure_classes(self, tuples: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """The value reached per class (``tuples`` (n_classes, n_qis) node codes)."""
        raise NotImplementedError

    def classes_ok(self, tuples: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Bool per class: does it satisfy the model? (all True for a global model)"""
        return np.ones(len(sizes), dtype=bool)

    # global
    def table_measure(self, sizes: np.ndarray) -> float:
        raise NotImplementedError

    def table_ok(self, sizes: np.ndarray) -> bool:
        """Does a release with these class sizes satisfy the model? (True for a per-class model)"""
        return True

    def worst(self, values: np.ndarray) -> float:
        if not len(values):
            return float("nan")
        return float(np.min(values) if self.higher_is_better else np.max(values))

    def root_tuple(self) -> np.ndarray:
        """The whole table as one class: every cell the root."""
        return np.zeros((1, self.n_qis), dtype=np.int64)

    n_qis: int = 0

    def check_feasible(self) -> None:
        """Raise :class:`PrivacyError` when even the whole table taken as one
        class violates the model, naming the best value possible."""
        sizes = np.array([self.n_records], dtype=np.int64)
        if self.is_global:
            if not self.table_ok(sizes):
                best = self.table_measure(sizes)
                raise PrivacyError(f"{self.describe()} cannot be met: the whole table taken as one class has "
                                   f"{self.achieved_text(best)} (needs {self.required_text()}); "
                                   f"{self.relax_hint(best)}")
            return
        tup = self.root_tuple()
        if not self.classes_ok(tup, sizes)[0]:
            best = float(self.measure_classes(tup, sizes)[0])
            raise PrivacyError(f"{self.describe()} cannot be met: the whole table taken as one class has "
                               f"{self.achieved_text(best)} (needs {self.required_text()}); "
                               f"{self.relax_hint(best)}")

    def relax_hint(self, best: float) -> str:
        return "relax the model"


# ------------------------------------------------------------------ population
class _Population:
    """A population table encoded with the input's hierarchies: counts the
    population records each class tuple matches (all its cells ancestors of
    the record's values). Tuples are grouped by the depths of their cells;
    per depth pattern the population is grouped once by its ancestors at
    those depths (cached), and each tuple is looked up there."""

    def __init__(self, population: pd.DataFrame, table: EncodedTable, option: str):
        try:
            enc = encode(population, table.qi_names, table.hierarchies, missing="root")
        except DataError as exc:
            raise PrivacyError(f"{option}: the population table does not fit the quasi-identifiers' "
                               f"hierarchies: {exc}") from None
        self.codes = enc.codes
        self.hierarchies = table.hierarchies
        self.n = int(len(population))
        self._cache: dict[tuple, pd.Series] = {}

    def _at_depths(self, depths: tuple) -> pd.Series:
        s = self._cache.get(depths)
        if s is None:
            cols = [h.ancestors[self.codes[:, j], d] for j, (h, d) in enumerate(zip(self.hierarchies, depths))]
            s = pd.Series(np.ones(self.n, dtype=np.int64), index=pd.MultiIndex.from_arrays(cols)) \
                .groupby(level=list(range(len(cols)))).sum() if self.n else pd.Series(dtype=np.int64)
            self._cache[depths] = s
        return s

    def matches(self, tuples: np.ndarray) -> np.ndarray:
        """Population records matched by each tuple (n_tuples,)."""
        tuples = np.asarray(tuples, dtype=np.int64)
        out = np.zeros(len(tuples), dtype=np.int64)
        if not len(tuples) or not self.n:
            return out
        depths = np.stack([h.depth[tuples[:, j]] for j, h in enumerate(self.hierarchies)], axis=1)
        patterns, inv = np.unique(depths, axis=0, return_inverse=True)
        inv = inv.ravel()
        for p, pattern in enumerate(patterns):
            rows = np.flatnonzero(inv == p)
            counts = self._at_depths(tuple(int(d) for d in pattern))
            if len(tuples[0]) == 1:
                key = pd.Index(tuples[rows, 0])
            else:
                key = pd.MultiIndex.from_arrays([tuples[rows, j] for j in range(tuples.shape[1])])
            out[rows] = counts.reindex(key).fillna(0).to_numpy(dtype=np.int64)
        return out


def _population_frame(population, option: str) -> pd.DataFrame:
    if not isinstance(population, pd.DataFrame):
        raise PrivacyError(f"{option} needs a population table (--population-table FILE, or population= a DataFrame)")
    return population


class _BoundKMap(BoundRiskModel):
    def __init__(self, model: KMap, table: EncodedTable):
        super().__init__(model, table)
        self.population = _Population(model.population, table, "k-map")
        self.n_qis = len(table.qi_names)

    def measure_classes(self, tuples, sizes):
        return self.population.matches(tuples).astype(np.float64)

    def classes_ok(self, tuples, sizes):
        return self.population.matches(tuples) >= self.model.k

    def required_text(self) -> str:
        return f">= {self.model.k} matching population records"

    def achieved_text(self, value: float) -> str:
        return f"{int(value)} matching population record(s)"

    def relax_hint(self, best: float) -> str:
        return f"the population holds {int(best)} record(s): use --k-map {int(best)} or less"


class KMap(RiskModel):
    """k-map (Sweeney 2002; El Emam and Dankar 2008): every class of the
    release matches at least ``k`` records of the population table."""

    kind = "k-map"

    def __init__(self, k: int, population: pd.DataFrame):
        x = positive_number(k, "--k-map")
        if x < 1 or not float(x).is_integer():
            raise PrivacyError(f"--k-map must be a whole number >= 1, got {k!r}")
        self.k = int(x)
        self.population = _population_frame(population, "--k-map")

    def bind(self, table: EncodedTable) -> BoundRiskModel:
        return _BoundKMap(self, table)

    def describe(self) -> str:
        return f"{self.k}-map"


class _BoundDelta(BoundRiskModel):
    higher_is_better = False

    def __init__(self, model: DeltaPresence, table: EncodedTable):
        super().__init__(model, table)
        self.population = _Population(model.population, table, "delta-presence")
        self.n_qis = len(table.qi_names)

    def measure_classes(self, tuples, sizes):
        m = self.population.matches(tuples).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(m > 0, np.asarray(sizes, dtype=np.float64) / np.where(m > 0, m, 1.0), np.inf)

    def classes_ok(self, tuples, sizes):
        d = self.measure_classes(tuples, sizes)
        lo, hi = self.model.delta_min, self.model.delta_max
        return (d >= lo * (1 - REL_TOL)) & (d <= hi * (1 + REL_TOL))

    def required_text(self) -> str:
        return f"{self.model.delta_min:g} <= records / matching population records <= {self.model.delta_max:g}"

    def achieved_text(self, value: float) -> str:
        return f"records / matching population records = {value:.6g}"

    def relax_hint(self, best: float) -> str:
        return f"the whole table reaches {best:.6g}: use --delta-presence with MIN <= {best:.6g} <= MAX"


class DeltaPresence(RiskModel):
    """delta-presence (Nergiz, Atzori and Clifton 2007): every class's
    records are between ``delta_min`` and ``delta_max`` of the population
    records it matches."""

    kind = "delta-presence"

    def __init__(self, delta_min: float, delta_max: float, population: pd.DataFrame):
        lo = positive_number(delta_min, "--delta-presence MIN")
        hi = positive_number(delta_max, "--delta-presence MAX")
        if not 0 <= lo <= hi <= 1:
            raise PrivacyError(f"--delta-presence {delta_min},{delta_max}: expected 0 <= MIN <= MAX <= 1")
        self.delta_min, self.delta_max = lo, hi
        self.population = _population_frame(population, "--delta-presence")

    def bind(self, table: EncodedTable) -> BoundRiskModel:
        return _BoundDelta(self, table)

    def describe(self) -> str:
        return f"({self.delta_min:g}, {self.delta_max:g})-presence"


class _BoundAverage(BoundRiskModel):
    is_global = True
    higher_is_better = False

    def table_measure(self, sizes) -> float:
        sizes = np.asarray(sizes)
        sizes = sizes[sizes > 0]
        records = sizes.sum()
        return float(len(sizes) / records) if records else 0.0

    def table_ok(self, sizes) -> bool:
        return self.table_measure(sizes) <= self.model.r * (1 + REL_TOL)

    def classes_needed(self, n_records: int) -> int:
        """The most classes a release of ``n_records`` records may have."""
        return int(np.floor(self.model.r * n_records * (1 + REL_TOL)))

    def required_text(self) -> str:
        return f"average risk <= {self.model.r:g}"

    def achieved_text(self, value: float) -> str:
        return f"average risk = {value:.6g}"

    def relax_hint(self, best: float) -> str:
        return (f"the lowest possible is 1 / {self.n_records} records = {best:.6g}: "
                f"use --average-risk {best:.6g} or more")


class AverageRisk(RiskModel):
    """Average re-identification risk ``<= r`` under the prosecutor model
    (El Emam 2013; ARX's average risk): the number of classes divided by the
    number of records (every record of a class of size f has risk 1/f)."""

    kind = "average-risk"

    def __init__(self, r: float):
        x = positive_number(r, "--average-risk")
        if not 0 < x <= 1:
            raise PrivacyError(f"--average-risk must lie in (0, 1], got {r!r}")
        self.r = x

    def bind(self, table: EncodedTable) -> BoundRiskModel:
        return _BoundAverage(self, table)

    def describe(self) -> str:
        return f"average risk <= {self.r:g}"


class _BoundUniqueness(BoundRiskModel):
    is_global = True
    higher_is_better = False
    #: only the sample uniques' merging lowers the estimates: the repair moves those alone
    merge_classes_below = 2

    def __init__(self, model: PopulationUniqueness, table: EncodedTable):
        super().__init__(model, table)
        self.fraction = self.n_records / population_size(self.n_records, model.sampling_fraction, model.population)

    def table_measure(self, sizes) -> float:
        sizes = np.asarray(sizes)
        return population_uniqueness(sizes[sizes > 0], self.fraction, self.model.estimator)

    def table_ok(self, sizes) -> bool:
        return self.table_measure(sizes) <= self.model.p * (1 + REL_TOL)

    def required_text(self) -> str:
        return self.model.describe()

    def achieved_text(self, value: float) -> str:
        return f"population uniqueness ({self.model.estimator}) = {value:.6g}"

    def relax_hint(self, best: float) -> str:
        return f"the lowest possible is {best:.6g}: use --population-uniqueness {best:.6g} or more"


class PopulationUniqueness(RiskModel):
    """Population uniqueness ``<= p``: the share of the population's records
    estimated to be unique in it over the quasi-identifiers, from the
    release's class sizes and the sampling fraction, by a named estimator --
    Pitman (Hoshino 2001), Zayatz (Zayatz 1991), SNB (Chen & Keller-McNulty
    1998) or Dankar's choice among them (Dankar et al. 2012); ARX's
    population-uniqueness privacy model. A global condition on the release."""

    kind = "population-uniqueness"

    def __init__(self, p: float, estimator: str = "dankar", *, sampling_fraction: float | None = None,
                 population: int | None = None):
        x = positive_number(p, "--population-uniqueness")
        if not 0 < x <= 1:
            raise PrivacyError(f"--population-uniqueness must lie in (0, 1], got {p!r}")
        if estimator not in ESTIMATORS:
            raise PrivacyError(f"--population-uniqueness: unknown estimator {estimator!r} "
                               f"({', '.join(ESTIMATORS)})")
        self.p, self.estimator = x, estimator
        self.sampling_fraction, self.population = sampling_fraction, population
        if sampling_fraction is None and population is None:
            self.sampling_fraction = DEFAULT_SAMPLING_FRACTION

    def bind(self, table: EncodedTable) -> BoundRiskModel:
        return _BoundUniqueness(self, table)

    def describe(self) -> str:
        return f"population uniqueness ({self.estimator}) <= {self.p:g}"


def bind_risk(models, table: EncodedTable) -> list[BoundRiskModel]:
    """``[m.bind(table) for m in models]``."""
    return [m.bind(table) for m in models]


def risk_feasible(bound) -> None:
    """Raise :class:`PrivacyError` for the first model the whole table cannot satisfy."""
    for b in bound:
        b.check_feasible()


def release_ok(bound, tuples: np.ndarray, sizes: np.ndarray) -> bool:
    """Do classes with these tuples and sizes satisfy every model?"""
    return all(b.table_ok(sizes) if b.is_global else bool(b.classes_ok(tuples, sizes).all()) for b in bound)
