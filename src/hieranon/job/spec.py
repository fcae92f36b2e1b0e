"""The whole anonymisation job as one validated value, and the one place a
table is turned into the :class:`~hieranon.algorithms.base.Problem` an
algorithm solves.

:class:`AnonymizationSpec` holds everything a run needs besides the data:
the quasi-identifiers and where their hierarchies come from, the
requirements, the distortion measure, the method and its parameters, the
columns with a special role, how missing values are read, the risk
threshold and the privacy models of sensitive attributes. It is built from a
YAML configuration (:meth:`AnonymizationSpec.from_config`), from keyword
arguments (:meth:`AnonymizationSpec.from_arguments`, what
:func:`hieranon.anonymize` does), and changed by command-line options through
:meth:`AnonymizationSpec.with_overrides` (options left unset are ``None`` and
change nothing). Every field is validated in ``__post_init__``; numpy
integers and floats are accepted wherever Python numbers are.

:func:`build_problem` encodes a table against a spec: leaf codes, record
counts, requirements, cost model, class labels and bound privacy models.
Anonymising, checking, evaluating and reporting all go through it.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..algorithms.partition import BLOCK_SIZE, DEFAULT_INNER_METHOD
from ..algorithms.registry import DEFAULT_METHOD, METHODS, method_parameters, methods_accepting
from ..algorithms.suppression import SuppressionBudget, parse_budget
from ..core.requirements import Requirement, RequirementError
from ..core.table import DataError
from ..core.tree import Hierarchy
from ..evaluation import metrics as M
from ..evaluation.risk import PopulationModel, default_threshold
from ..evaluation.roles import ROLES, check_role_conflicts
from ..evaluation.suda import DEFAULT_MAX_SIZE, check_max_size
from ..io import NUMERIC_OUTPUTS
from ..io.pseudonyms import as_key
from ..privacy import PrivacyModel
from .config import Config, HierarchySpec, builder_spec
from .settings import MISSING_MODES, check_setting, is_integer, is_number

__all__ = ["AnonymizationSpec", "check_special_columns", "MISSING_MODES", "WEIGHT_SCHEMES", "IDENTIFIER_ACTIONS"]

#: How a run is executed: chosen from the table (``auto``), the whole table
#: in one process (``whole``), or in partitioned blocks (``partitioned``).
EXECUTIONS = ("auto", "whole", "partitioned")
#: The options of a partitioned run (``spec.partition``): the blocks' (parameters of
#: :class:`~hieranon.algorithms.partition.Partitioned`) and the longest expected whole-table run ``auto`` keeps whole.
PARTITION_OPTIONS = ("block_size", "executor", "scheduler", "n_workers", "max_in_flight", "whole_seconds")
#: Parameters of the ``partitioned`` method that are not the inner method's.
_PARTITIONED_KEYS = {"inner_method", "method_params", *PARTITION_OPTIONS}
WEIGHT_SCHEMES = ("uniform", "height", "mage")
IDENTIFIER_ACTIONS = ("drop", "mask", "pseudonym")
#: The seed of the algorithms' own random choices when the user gives none:
#: the same input gives the same output. Never used for a choice that
#: protects people (:func:`hieranon.io.pseudonyms.protective_rng`).
ALGORITHM_SEED = 0


# ------------------------------------------------------------ number checks
def real(value, what: str, minimum: float = 0.0) -> float:
    """``value`` as a finite Python float >= ``minimum``."""
    if not is_number(value) or not (minimum <= float(value) < float("inf")):
        raise ValueError(f"{what}: expected a number >= {minimum:g}, got {value!r}")
    return float(value)


def plain(value):
    """A numpy scalar as the Python number it stands for (containers recursively)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    return value


def _names(value, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    values = tuple(value)
    bad = [v for v in values if not isinstance(v, Hashable) or isinstance(v, tuple)]
    if bad:
        raise ValueError(f"{what}: expected column names, got {bad[0]!r}")
    return values


def _column(value, what: str) -> str | None:
    if value is not None and (not isinstance(value, Hashable) or isinstance(value, (tuple, bool))):
        raise ValueError(f"{what}: expected a column name, got {value!r}")
    return value


def check_special_columns(quasi_identifiers: Sequence[str], count_column: str | None = None,
                          class_column: str | None = None) -> None:
    """The count and class columns must be columns of their own: not a
    quasi-identifier (it would be generalised) and not each other
    (:func:`hieranon.evaluation.roles.check_role_conflicts`, a DataError)."""
    check_role_conflicts({"hierarchies": quasi_identifiers, "count_column": count_column,
                          "class_column": class_column})


def _requirement(r, i: int):
    """One requirement as given, numpy k's made Python ints."""
    if isinstance(r, (Requirement, str)):
        return r
    try:
        attrs, kk = r
    except (TypeError, ValueError):
        raise RequirementError(f"requirements[{i}]: expected 'A,B:K', a Requirement or an (attributes, k) pair, "
                               f"got {r!r}") from None
    attrs = (attrs,) if isinstance(attrs, str) else tuple(attrs)
    if not is_integer(kk) or kk < 1:
        raise RequirementError(f"requirement on {list(attrs)}: k must be a whole number >= 1, got {kk!r}")
    return Requirement(attrs, int(kk))


def _privacy_models(models) -> tuple:
    """The privacy models as a tuple; each is a :class:`~hieranon.privacy.PrivacyModel`
    (its attribute is sensitive: :meth:`AnonymizationSpec.roles`)."""
    if isinstance(models, PrivacyModel):
        models = (models,)
    out = tuple(models or ())
    for m in out:
        if not callable(getattr(m, "bind", None)):  # a PrivacyModel, or anything that binds like one
            raise ValueError(f"privacy: expected privacy models (hieranon.privacy.DistinctLDiversity, "
                             f"TCloseness, ...), got {m!r}")
    return out


def _hierarchy_source(name, h):
    """A hierarchy file's path, or a builder written as on the command line
    (``"intervals:5,10,20"``, ``"suppress"``: :func:`hieranon.job.config.builder_spec`)
    when no file has that name, as a HierarchySpec; anything else as given."""
    if isinstance(h, Path) or (isinstance(h, str) and Path(h).exists()):
        return HierarchySpec(name, file=Path(h))
    if isinstance(h, str):
        return builder_spec(str(name), h) or HierarchySpec(name, file=Path(h))
    return h


def _checked_hierarchies(hs):
    if not isinstance(hs, Mapping):
        raise ValueError("hierarchies: expected a mapping column -> Hierarchy or HierarchySpec")
    hs = {name: _hierarchy_source(name, h) for name, h in hs.items()}
    for name, h in hs.items():  # column names are usually text; pandas allows any label
        if not isinstance(h, (Hierarchy, HierarchySpec)):
            raise ValueError(f"hierarchies: {name!r} -> {type(h).__name__}: expected a column name and a "
                             "Hierarchy, a hierarchy file's path or a configuration's HierarchySpec")
    return dict(hs)


def _checked_requirements(requirements):
    reqs = [requirements] if isinstance(requirements, (str, Requirement)) else requirements
    return tuple(_requirement(r, i) for i, r in enumerate(reqs or ()))


def _checked_method(method):
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(METHODS)}")
    return method


def _checked_params(params):
    if not isinstance(params, Mapping) or not all(isinstance(p, str) for p in params):
        raise ValueError(f"params: expected a mapping of method parameters, got {params!r}")
    return plain(dict(params))


def _checked_weights(weights):
    if not isinstance(weights, str) or weights not in WEIGHT_SCHEMES:
        raise ValueError(f"weights: expected one of {', '.join(WEIGHT_SCHEMES)}, got {weights!r}")
    return weights


def _choice(name: str, choices: Sequence[str]):
    def check(value):
        if not isinstance(value, str) or value not in choices:
            raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
        return value
    return check


def _flag(name: str):
    def check(value):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name}: expected true or false, got {value!r}")
        return bool(value)
    return check


def _role_columns(name: str):
    def check(columns):  # a text is one column, as for quasi_identifiers
        return _names((columns,) if isinstance(columns, str) else tuple(columns), name)
    return check


def _checked_partition(options):
    if not isinstance(options, Mapping) or set(options) - set(PARTITION_OPTIONS):
        raise ValueError(f"partition: expected a mapping with keys among {', '.join(PARTITION_OPTIONS)}, "
                         f"got {options!r}")
    return plain(dict(options))


def _setting(name: str):
    return lambda value: check_setting(name, value)


def _checked_population(population):
    if population is not None and not isinstance(population, PopulationModel):
        raise ValueError(f"population: expected a hieranon.evaluation.risk.PopulationModel (sampling fraction "
                         f"or population size), got {population!r}")
    return population


#: How each field of :class:`AnonymizationSpec` is checked and normalised on its own (numpy numbers made
#: Python ones, texts made tuples...): by ``__post_init__`` for all of them, by
#: :meth:`AnonymizationSpec.with_overrides` for those it changes.
_FIELD_CHECKS = {
    "hierarchies": _checked_hierarchies,
    **{name: _setting(name) for name in ("k", "seed", "missing", "beta", "risk_threshold")},
    "requirements": _checked_requirements,
    "method": _checked_method,
    "params": _checked_params,
    "weights": _checked_weights,
    "priorities": lambda p: AnonymizationSpec._checked_priorities(p),
    "pseudonym_key": as_key,
    **{name: _role_columns(name) for name in ("identifiers", "sensitive", "insensitive")},
    "identifier_action": _choice("identifier_action", IDENTIFIER_ACTIONS),
    "strict": _flag("strict"),
    "shuffle": _flag("shuffle"),
    "numeric_output": _choice("numeric_output", NUMERIC_OUTPUTS),
    "class_column": lambda c: _column(c, "class_column"),
    "count_column": lambda c: _column(c, "count_column"),
    "weight_column": lambda c: _column(c, "weight_column"),
    "suda_max_size": check_max_size,
    "execution": _choice("execution", EXECUTIONS),
    "partition": _checked_partition,
    "suppression_threshold": lambda t: None if t is None else real(t, "suppression_threshold"),
    "max_suppression": lambda b: parse_budget(b, "max_suppression"),
    "privacy": _privacy_models,
    "population": _checked_population,
    "source": lambda s: None if s is None else Path(s),
    "origins": lambda o: dict(o or {}),
}


def _checked_field(name: str, value):
    """``value`` of the spec's field ``name``, checked and normalised on its own (:data:`_FIELD_CHECKS`)."""
    return _FIELD_CHECKS[name](value)


def _partitioned_method(params: Mapping) -> tuple[str, dict, dict]:
    """The ``partitioned`` method's parameters as the one spelling of a
    partitioned run: ``(method, parameters, partition options)`` -- the inner
    method (its default when not named), its own parameters and the options
    of the blocks."""
    params = dict(params)
    method = params.pop("inner_method", None) or DEFAULT_INNER_METHOD
    inner = params.pop("method_params", None) or {}
    if not isinstance(inner, Mapping):
        raise ValueError(f"method_params: expected a mapping of the inner method's parameters, got {inner!r}")
    options = {n: params.pop(n) for n in PARTITION_OPTIONS if n in params}
    return method, _checked_params({**inner, **params}), options


# --------------------------------------------------------------------- spec
@dataclass(frozen=True)
class AnonymizationSpec:
    """One anonymisation job, validated.

    Attributes
    ----------
    hierarchies : mapping QI name -> Hierarchy or HierarchySpec
        The quasi-identifiers, in order, with a ready hierarchy or how to
        build it (a file, an inline tree, a builder over the data).
    k, requirements
        One requirement over all QIs and/or ``<B, k>`` requirements (Arca & Hewett).
    method, params
        The algorithm (default :data:`~hieranon.algorithms.registry.DEFAULT_METHOD`)
        and its parameters; ``suppression_threshold`` is folded into them by
        :meth:`algorithm_params` when the method takes it.
    weights, beta, priorities
        The distortion measure (Li et al. 2006, Def. 5); ``priorities`` as given, a
        ranking (tuple) or a mapping attribute -> weight, resolved by
        :meth:`priority_weights`.
    privacy : tuple
        Privacy models of sensitive attributes, bound to the data by
        :func:`build_problem` (``model.bind(df, counts)``).
    identifiers, identifier_action, sensitive, insensitive
        The roles of the other columns; identifiers are dropped, masked or
        replaced by keyed pseudonyms (``"pseudonym"``,
        :func:`hieranon.io.pseudonyms.pseudonyms`). A column has one
        role (the class column may also be sensitive or insensitive); the
        attribute of a privacy model is sensitive.
    seed : int or None
        The user's seed: the algorithms' random choices use it (else
        :data:`ALGORITHM_SEED`, so that outputs are reproducible), and so do
        the choices that protect people (the shuffled row order), which
        without it draw fresh entropy from the operating system. It is never
        written to a report or a release.
    pseudonym_key : bytes, path or None
        The secret key of the pseudonyms (at least 32 bytes, or a file holding
        them); None: a fresh random key per run.
    origins : mapping
        Where each role was given, ``(field, column) -> text`` such as
        ``("sensitive", "age") -> "--sensitive"``, for the message that
        refuses two contradictory roles (:func:`hieranon.evaluation.roles.check_role_conflicts`).
    strict : bool
        A column without a role is an error, not a warning
        (:func:`hieranon.evaluation.roles.check_roles`).
    shuffle : bool
        Release the rows in a random order (seeded only by a given ``seed``).
    numeric_output : {"label", "range", "midpoint", "bounds"}
        How files written for this job print generalised numbers
        (:func:`hieranon.io.numeric_output`); results hold labels.
    execution : {"auto", "whole", "partitioned"}
        ``auto`` (default): :func:`hieranon.job.pipeline.run` runs the whole table in
        one process where that is expected to finish fast, else in
        partitioned blocks (:func:`hieranon.algorithms.partition.plan_run`);
        ``whole`` and ``partitioned`` force either.
    partition : mapping
        Options of a partitioned run: ``block_size`` (records per block),
        ``n_workers``, ``scheduler`` (a Dask scheduler's address),
        ``whole_seconds`` (the longest expected whole-table run ``auto`` keeps whole).
    weight_column : str or None
        The sampling weight of each record (people of the population it
        stands for), for the individual risk (Benedetti & Franconi 1998);
        published unchanged. None: every record stands for 1/f people, f the
        population model's sampling fraction.
    suda_max_size : int
        Largest set of quasi-identifiers searched for the original's minimal
        sample uniques (SUDA, :mod:`hieranon.evaluation.suda`).
    risk_threshold : float or None
        Prosecutor risk above which a record is "at risk"; None: ``1/k`` of
        the largest k required (:meth:`threshold_for`).
    population : PopulationModel or None
        The population the table was sampled from (sampling fraction or
        size) for the journalist, marketer and population-uniqueness risk;
        None: the default sampling fraction, assumed and said so.
    max_suppression : SuppressionBudget or None
        At most this many records suppressed, only where that lowers the
        distortion (:mod:`hieranon.algorithms.suppression`); given as
        ``"5%"``, a fraction below 1 or a number of records.
    """

    hierarchies: Mapping[str, Hierarchy | HierarchySpec] = field(default_factory=dict)
    k: int | None = None
    requirements: tuple = ()
    method: str = DEFAULT_METHOD
    params: Mapping = field(default_factory=dict)
    weights: str = "uniform"
    beta: float = 1.0
    priorities: Mapping[str, float] | tuple[str, ...] | None = None
    seed: int | None = None
    pseudonym_key: bytes | None = field(default=None, repr=False)
    identifiers: tuple[str, ...] = ()
    identifier_action: str = "drop"
    sensitive: tuple[str, ...] = ()
    insensitive: tuple[str, ...] = ()
    class_column: str | None = None
    count_column: str | None = None
    weight_column: str | None = None
    suda_max_size: int = DEFAULT_MAX_SIZE
    missing: str = "error"
    suppression_threshold: float | None = None
    risk_threshold: float | None = None
    population: PopulationModel | None = None
    privacy: tuple = ()
    source: Path | None = None
    max_suppression: SuppressionBudget | None = None
    strict: bool = False
    shuffle: bool = False
    numeric_output: str = "label"
    execution: str = "auto"
    partition: Mapping = field(default_factory=dict)
    origins: Mapping = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, _checked_field(f.name, getattr(self, f.name)))
        self._settle()

    def _settle(self, changed: set[str] | None = None) -> None:
        """What is checked across fields (all of it when ``changed`` is None,
        else what those fields take part in): ``method="partitioned"`` mapped
        onto ``execution`` (:func:`_partitioned_method`), the attributes of the
        privacy models made sensitive, and no column given two roles."""
        def set_(name, value):  # a frozen dataclass normalises its own fields here
            object.__setattr__(self, name, value)

        if self.method == "partitioned":
            if self.execution == "whole" and (changed is None or "execution" in changed):
                raise ValueError("method 'partitioned' runs the table in blocks; execution 'whole' contradicts it: "
                                 "give one of them")
            method, params, options = _partitioned_method(self.params)
            set_("method", _checked_field("method", method))
            set_("params", params)
            set_("partition", _checked_field("partition", {"block_size": BLOCK_SIZE, **self.partition, **options}))
            set_("execution", "partitioned")
        if changed is not None and not changed & {*ROLES, "privacy", "origins"}:
            return
        origins = dict(self.origins or {})
        extra = {}
        for m in self.privacy:
            a = getattr(m, "attribute", None)
            if a is not None and a not in self.sensitive:
                extra.setdefault(a, None)
                origins.setdefault(("sensitive", a), m.describe() if callable(getattr(m, "describe", None))
                                   else "privacy")
        set_("sensitive", (*self.sensitive, *extra))
        set_("origins", origins)
        check_role_conflicts({role: getattr(self, role) for role in ROLES}, origins)

    @property
    def algorithm_seed(self) -> int:
        """The seed of the algorithm's own random choices: the user's seed,
        else :data:`ALGORITHM_SEED` (reproducible outputs)."""
        return ALGORITHM_SEED if self.seed is None else self.seed

    @staticmethod
    def _checked_priorities(pri):
        if pri is None:
            return None
        if isinstance(pri, Mapping):
            out = {}
            for a, w in pri.items():
                if not is_number(w) or not (0 <= float(w) < float("inf")):
                    raise ValueError(f"priorities: the weight of {a!r} must be a number >= 0, got {w!r}")
                out[a] = plain(w)
            return out
        if isinstance(pri, str) or not isinstance(pri, Sequence | np.ndarray | tuple):
            raise ValueError(f"priorities: expected a ranking list or a mapping attribute -> weight, got {pri!r}")
        ranking = tuple(plain(a) for a in pri)
        bad = [a for a in ranking if not isinstance(a, Hashable) or isinstance(a, (tuple, bool))]
        if bad:
            raise ValueError(f"priorities: a ranking lists attribute names, got {bad[0]!r}")
        twice = [a for a in dict.fromkeys(ranking) if ranking.count(a) > 1]
        if twice:
            raise ValueError(f"priorities: the ranking lists {twice[0]!r} twice; give each attribute one rank")
        return ranking

    # ------------------------------------------------------------ builders
    @classmethod
    def from_config(cls, cfg: Config) -> AnonymizationSpec:
        """The spec of a parsed YAML configuration (:func:`hieranon.job.config.load`)."""
        return cls(hierarchies=dict(cfg.quasi_identifiers), k=cfg.k, requirements=tuple(cfg.requirements),
                   method=cfg.method or DEFAULT_METHOD, params=dict(cfg.params), weights=cfg.weights,
                   beta=cfg.beta, priorities=cfg.priorities, seed=cfg.seed, pseudonym_key=cfg.pseudonym_key,
                   identifiers=tuple(cfg.identifiers),
                   identifier_action=cfg.identifier_action, sensitive=tuple(cfg.sensitive),
                   insensitive=tuple(cfg.insensitive), class_column=cfg.class_column,
                   count_column=cfg.count_column, weight_column=getattr(cfg, "weight", None),
                   suda_max_size=getattr(cfg, "suda_max_size", None) or DEFAULT_MAX_SIZE, missing=cfg.missing,
                   suppression_threshold=cfg.suppression_threshold, risk_threshold=cfg.risk_threshold,
                   privacy=tuple(getattr(cfg, "privacy", ())), source=cfg.source,
                   strict=getattr(cfg, "strict", False), shuffle=getattr(cfg, "shuffle", False),
                   numeric_output=getattr(cfg, "numeric_output", "label"),
                   max_suppression=getattr(cfg, "max_suppression", None), origins=dict(getattr(cfg, "origins", {})),
                   population=getattr(cfg, "population", None))

    @classmethod
    def from_arguments(cls, quasi_identifiers: Sequence[str] | None, hierarchies, k=None, *,
                       method: str | None = None, **fields) -> AnonymizationSpec:
        """The spec of :func:`hieranon.anonymize`'s arguments: ``hierarchies``
        a mapping column -> Hierarchy or a list in ``quasi_identifiers`` order."""
        if quasi_identifiers is None:
            if not isinstance(hierarchies, Mapping):
                raise ValueError("give quasi_identifiers, or hierarchies as a mapping column -> Hierarchy")
            quasi_identifiers = list(hierarchies)
        qis = [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers)
        if not qis:
            raise DataError("no quasi-identifiers given")
        if len(set(qis)) != len(qis):
            raise DataError(f"quasi-identifiers listed twice: {sorted({q for q in qis if qis.count(q) > 1})}")
        if isinstance(hierarchies, Mapping):
            absent = [q for q in qis if q not in hierarchies]
            if absent:
                raise DataError(f"no hierarchy given for quasi-identifier(s) {absent}")
            hs = {q: hierarchies[q] for q in qis}
        else:
            hierarchies = list(hierarchies or ())
            if len(hierarchies) != len(qis):
                raise DataError(f"{len(qis)} quasi-identifiers but {len(hierarchies)} hierarchies")
            hs = dict(zip(qis, hierarchies))
        return cls(hierarchies=hs, k=k, method=method or DEFAULT_METHOD,
                   **{n: v for n, v in fields.items() if v is not None or n in ("seed", "priorities")})

    def with_overrides(self, *, qi: Mapping[str, Path | HierarchySpec] | None = None,
                       require: Sequence[str] | None = None, params: Mapping | None = None,
                       **options) -> AnonymizationSpec:
        """This spec with command-line options applied; an option that is
        ``None`` changes nothing. ``qi`` adds (or replaces) hierarchies (files
        or how to build them),
        ``require`` adds requirements, ``params`` are laid over the method's
        parameters, ``privacy`` models and ``origins`` are added to the
        spec's; every other option replaces the field of its name."""
        unknown = sorted(set(options) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(f"with_overrides: unknown option(s) {unknown}")
        changes = {n: v for n, v in options.items() if v is not None}
        if qi:
            changes["hierarchies"] = {**self.hierarchies, **{
                n: p if isinstance(p, (HierarchySpec, Hierarchy)) else HierarchySpec(n, file=Path(p))
                for n, p in qi.items()}}
        if require:
            changes["requirements"] = (*self.requirements, *require)
        if params:
            changes["params"] = {**self.params, **params}
        if options.get("origins"):
            changes["origins"] = {**self.origins, **options["origins"]}
        changes.pop("privacy", None)
        if options.get("privacy"):
            changes["privacy"] = (*self.privacy, *options["privacy"])
        if params and changes.get("execution", self.execution) == "partitioned" and set(params) & _PARTITIONED_KEYS:
            # the partitioned method's parameters laid over a partitioned run: its blocks' options and inner method
            changes["params"] = {"inner_method": changes.get("method", self.method), "method_params": self.params,
                                 **params}
            changes["method"] = "partitioned"
        if not changes:
            return self
        new = copy.copy(self)
        for name, value in changes.items():  # each overridden field checked on its own, the others as they were
            object.__setattr__(new, name, _checked_field(name, value))
        new._settle(set(changes))
        return new

    # ------------------------------------------------------------- queries
    @property
    def quasi_identifiers(self) -> list[str]:
        return list(self.hierarchies)

    @property
    def has_requirements(self) -> bool:
        return self.k is not None or bool(self.requirements)

    def threshold_for(self, requirements: Sequence[Requirement] = ()) -> float:
        """The risk threshold: ``risk_threshold`` when given, else ``1/k`` of
        the largest k among ``requirements`` (:func:`hieranon.evaluation.risk.default_threshold`)."""
        if self.risk_threshold is not None:
            return self.risk_threshold
        return default_threshold(max((r.k for r in requirements), default=self.k))

    def priority_weights(self) -> dict | None:
        """The priorities as a mapping attribute -> weight: as given, or a
        ranking turned into equally scaled priorities (Sun et al. 2008),
        attributes left out of a ranking weighing 0."""
        pri, qis = self.priorities, self.quasi_identifiers
        if pri is None or isinstance(pri, Mapping):
            return None if pri is None else dict(pri)
        unknown = [a for a in pri if a not in qis]
        if unknown:
            raise ValueError(f"priority ranking names {unknown}, which are not quasi-identifiers {qis}")
        ranked = M.equal_priorities(list(pri))
        return {a: ranked.get(a, 0) for a in qis}

    def build_hierarchies(self, data: pd.DataFrame | None = None) -> dict[str, Hierarchy]:
        """Every QI's hierarchy, named after its column (builders read ``data``)."""
        out = {}
        for name, h in self.hierarchies.items():
            h = h if isinstance(h, Hierarchy) else h.build(data, self.missing, column=name)
            out[name] = h if h.name == name else h.renamed(name)
        return out

    def algorithm_params(self) -> dict:
        """The method's parameters: ``params``, with ``suppression_threshold``
        added when given and not among them; an error when the method does
        not take it."""
        params = dict(self.params)
        if self.suppression_threshold is None or "suppression_threshold" in params:
            return params
        if "suppression_threshold" not in method_parameters(self.method):
            raise ValueError(f"suppression_threshold: method {self.method!r} does not support it; it applies only "
                             f"to {', '.join(methods_accepting('suppression_threshold'))} (choose one with "
                             "--method, or remove the key)")
        params["suppression_threshold"] = self.suppression_threshold
        return params

    def partitioned(self, **options) -> AnonymizationSpec:
        """This job run block by block (``execution="partitioned"``), with
        the partition ``options`` (``block_size``, ``executor``,
        ``scheduler``, ``n_workers``...; ``None`` ones left out) laid over the
        spec's."""
        given = {n: v for n, v in options.items() if v is not None}
        return self.with_overrides(execution="partitioned", partition={**self.partition, **given})

    def describe(self) -> dict:
        """The settings shown in a report (plain values)."""
        return {"weights": self.weights, "beta": self.beta, "priorities": self.priorities,
                "identifiers": list(self.identifiers), "identifier_action": self.identifier_action,
                "sensitive": list(self.sensitive), "class_column": self.class_column,
                "count_column": self.count_column, "weight_column": self.weight_column, "missing": self.missing,
                "suppression_threshold": self.suppression_threshold, "source": self.source,
                "shuffle": self.shuffle, "strict": self.strict,
                "max_suppression": None if self.max_suppression is None else str(self.max_suppression),
                "quasi_identifiers": dict(self.hierarchies)}
