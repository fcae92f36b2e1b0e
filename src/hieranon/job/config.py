"""Declarative anonymisation configuration (YAML), validated key by key.

Example (``hieranon config-template`` prints an annotated one)::

    quasi_identifiers:
      age: {intervals: [5, 10, 20]}
      gender: {suppress: true}
      postcode: {mask: 4}
      date_of_birth: {dates: [month, quarter, year], date_format: "%d/%m/%Y"}
      education: {hierarchy: hierarchies/education.csv}
      region: {mapping: regions.csv}      # value;group[;supergroup] rows
      grade: {groups: [2, 4], order: [A, B, C, D, E, F]}
      country: {tree: {"*": {Europe: [England, France], Asia: [India]}}}
    k: 5
    requirements: ["gender,postcode:10"]  # or [{attributes: [gender, postcode], k: 10}]
    method: kaca2
    params: {max_inconsistency: 0.1}
    weights: height
    beta: 1
    priorities: [age, postcode, gender]   # or {age: 1, gender: 0.2}
    seed: 7                               # optional: repeat a run exactly (never written to any output)
    identifiers: [id]                     # dropped, masked (identifier_action: mask) or pseudonymised
    pseudonym_key: secret/pseudonym.key   # optional: the same pseudonyms across releases (else fresh per run)
    sensitive: [diagnosis]
    class_column: diagnosis
    count_column: null
    missing: error                        # or root (already suppressed) or value (a leaf 'missing')
    numeric_output: label                 # or range, midpoint, bounds (files written by the CLI)
    risk_threshold: 0.2                   # records with prosecutor risk above it are "at risk" (default 1/k)
    privacy:                              # l-diversity / t-closeness of sensitive attributes
      diagnosis: [{l_diversity: 2}, {t_closeness: 0.3, distance: equal}]
    sensitive_hierarchies: {diagnosis: hierarchies/diagnosis.csv}   # for the hierarchical EMD
    input: data.csv                       # the table this configuration is for (informational)

``identifying`` is accepted for ``identifiers`` and ``class`` for
``class_column`` (ARX's names). In a requirement mapping, ``attributes`` is a
list of column names; a single string is read as in the ``"A,B:K"`` form (one
name, or comma-separated names). Relative hierarchy paths are read relative to the config file.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..algorithms.registry import METHODS
from ..algorithms.suppression import parse_budget
from ..core.files import MAX_CONFIG_BYTES, read_text_file
from ..core.safeyaml import load_yaml
from ..core.tree import Hierarchy
from ..evaluation.risk import PopulationModel
from ..evaluation.roles import ROLE_KEYS, check_role_conflicts
from ..evaluation.suda import check_max_size
from ..hierarchies import builders as B
from ..hierarchies import readers as H
from ..io import NUMERIC_OUTPUTS, read_table
from ..io.pseudonyms import read_key
from ..io.sql import SqlTable, is_database_url, mask_url
from ..privacy import PrivacyError, parse_privacy_config, parse_risk_options
from .settings import MISSING_MODES, SettingError, check_setting, is_integer, is_number  # noqa: F401 - re-exported

TOP_KEYS = {
    "quasi_identifiers", "k", "requirements", "method", "params", "weights", "beta", "priorities",
    "seed", "pseudonym_key", "identifiers", "identifier_action", "sensitive", "insensitive", "class_column",
    "count_column", "weight", "suda_max_size", "missing", "suppression_threshold", "risk_threshold", "input",
    "privacy", "sensitive_hierarchies", "strict", "shuffle", "numeric_output", "max_suppression", "population",
    "risk_models", "output",
}
#: Alternative spellings accepted for a few keys (ARX's vocabulary, used by the
#: shipped example ``patients.yaml``): alias -> key.
KEY_ALIASES = {"identifying": "identifiers", "class": "class_column"}
HIERARCHY_KEYS = {"hierarchy", "file", "intervals", "mask", "dates", "suppress", "tree", "origin", "unbalanced",
                  "groups", "order", "mapping", "date_format"}
#: The keys that say where a hierarchy comes from (exactly one per quasi-identifier).
HIERARCHY_KINDS = ("hierarchy", "file", "intervals", "mask", "dates", "groups", "mapping", "suppress", "tree")
#: Which options go with which kind.
KIND_OPTIONS = {"intervals": {"origin"}, "dates": {"date_format"}, "groups": {"order"},
                "hierarchy": {"unbalanced"}, "file": {"unbalanced"}}


#: A configuration key or value is invalid; the message names the key. The
#: same class as a bad setting given on the command line or to the API: one
#: error type however a value came in.
ConfigError = SettingError


def _py(value):
    """A numpy scalar as the Python number it stands for."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass
class HierarchySpec:
    """How to obtain one attribute's hierarchy: a file, an inline tree, or a builder."""

    name: str
    file: Path | None = None
    tree: object = None
    builder: str | None = None
    argument: object = None
    allow_unbalanced: bool = False

    def build(self, data: pd.DataFrame | None = None, missing: str = "error", column=None) -> Hierarchy:
        """The hierarchy: loaded, or built from ``data``'s column (``column``:
        its label in ``data`` when not the text ``name``, e.g. an integer);
        with ``missing="value"`` a builder gives empty cells a leaf ``missing``."""
        if self.file is not None:
            return H.from_file(self.file, self.name, **({"allow_unbalanced": True} if self.allow_unbalanced
                                                        and self.file.suffix.lower() not in (".yaml", ".yml", ".json") else {}))
        if self.tree is not None:
            return H.from_mapping(self.name, self.tree)
        column = self.name if column is None else column
        if data is None or column not in data.columns:
            raise ConfigError(f"quasi_identifiers.{self.name}: a {self.builder} hierarchy is built from the data, "
                              f"but the table has no column {column!r}")
        return build_from_values(self.name, self.builder, self.argument, data[column],
                                 missing_leaf=missing == "value")

    def describe(self) -> str:
        """The builder as the command line writes it (``intervals:5,10,20``)."""
        return builder_text(self.builder, self.argument)


def build_from_values(name: str, builder: str, argument, values, *, missing_leaf: bool = False) -> Hierarchy:
    """Run builder ``builder`` (with the configuration's ``argument``) on a column's values."""
    if builder == "intervals":
        widths, origin = argument
        return B.intervals(name, values, widths, origin=origin, missing_leaf=missing_leaf)
    if builder == "mask":
        return B.masking(name, values, argument, missing_leaf=missing_leaf)
    if builder == "dates":
        return B.dates(name, values, argument["levels"], date_format=argument.get("date_format"),
                       order=argument.get("order"), missing_leaf=missing_leaf)
    if builder == "groups":
        sizes, order = argument
        return B.ordered(name, values, sizes, order=order, missing_leaf=missing_leaf)
    if builder == "mapping":
        return B.grouping(name, values, argument, missing_leaf=missing_leaf)
    return B.suppression(name, values, missing_leaf=missing_leaf)


def _numbers_text(values) -> str:
    return ",".join(str(int(x)) if float(x).is_integer() else repr(float(x)) for x in values)


def builder_text(builder: str | None, argument) -> str:
    """A builder and its argument in the ``--qi NAME=...`` form."""
    if builder == "intervals":
        return f"intervals:{_numbers_text(argument[0])}" + (f" from {argument[1]}" if argument[1] else "")
    if builder == "dates":
        return "dates:" + (argument.get("order") or ",".join(argument["levels"])) + \
            (f":{argument['date_format']}" if argument.get("date_format") and not argument.get("order") else "")
    if builder == "groups":
        return f"groups:{_numbers_text(argument[0])}"
    if builder in ("mask", "mapping"):
        return f"{builder}:{argument}" if argument is not None else builder
    return str(builder or "")


@dataclass
class Config:
    """A validated configuration. Every field mirrors a YAML key."""

    quasi_identifiers: dict[str, HierarchySpec] = field(default_factory=dict)
    k: int | None = None
    requirements: list[str] = field(default_factory=list)
    method: str | None = None
    params: dict = field(default_factory=dict)
    weights: str = "uniform"
    beta: float = 1.0
    priorities: object = None
    #: the user's seed (None: algorithms use their fixed default, shuffles fresh entropy)
    seed: int | None = None
    #: the file holding the pseudonyms' secret key (None: a fresh key per run)
    pseudonym_key: Path | None = None
    identifiers: list[str] = field(default_factory=list)
    identifier_action: str = "drop"
    sensitive: list[str] = field(default_factory=list)
    insensitive: list[str] = field(default_factory=list)
    class_column: str | None = None
    count_column: str | None = None
    weight: str | None = None
    suda_max_size: int | None = None
    missing: str = "error"
    suppression_threshold: float | None = None
    risk_threshold: float | None = None
    #: record-suppression budget as written ("5%", 0.05 or a number of records)
    max_suppression: object = None
    #: the table read (a file or a database table) and the one written, when the configuration names them
    input: Path | SqlTable | None = None
    output: Path | SqlTable | None = None
    source: Path | None = None
    #: unbound privacy models (:mod:`hieranon.privacy`), attribute by attribute
    privacy: list = field(default_factory=list)
    #: sensitive attribute -> its own hierarchy file (hierarchical EMD of t-closeness)
    sensitive_hierarchies: dict[str, Path] = field(default_factory=dict)
    #: columns without a role are an error, not a warning
    strict: bool = False
    #: release the rows in a random (seeded) order
    shuffle: bool = False
    #: how a file output writes generalised numbers: label | range | midpoint | bounds (:mod:`hieranon.io`)
    numeric_output: str = "label"
    #: the population the table was sampled from (:class:`hieranon.evaluation.risk.PopulationModel`)
    population: PopulationModel | None = None
    #: the population table's file, which k-map and delta-presence compare with, and its records
    population_table: Path | None = None
    population_data: pd.DataFrame | None = field(default=None, repr=False)
    #: where each column's role is said, (spec field, column) -> "KEY in FILE" (:func:`hieranon.evaluation.roles.check_role_conflicts`)
    origins: dict = field(default_factory=dict)

    def hierarchies(self, data: pd.DataFrame | None = None) -> dict[str, Hierarchy]:
        return {name: spec.build(data, self.missing) for name, spec in self.quasi_identifiers.items()}


def _hier_spec(name: str, value, base: Path) -> HierarchySpec:
    key = f"quasi_identifiers.{name}"
    if isinstance(value, str):
        return HierarchySpec(name, file=(base / value))
    if value is None:
        raise ConfigError(f"{key}: give a hierarchy (file, tree, intervals, mask, dates, groups, mapping or suppress)")
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key}: expected a file path or a mapping with one of {sorted(HIERARCHY_KEYS)}")
    unknown = set(value) - HIERARCHY_KEYS
    if unknown:
        raise ConfigError(f"{key}: unknown key(s) {sorted(unknown)}; allowed: {sorted(HIERARCHY_KEYS)}")
    kinds = [kk for kk in HIERARCHY_KINDS if kk in value]
    if len(kinds) != 1:
        raise ConfigError(f"{key}: give exactly one of hierarchy/file, tree, intervals, mask, dates, groups, mapping, "
                          f"suppress (got {kinds or 'none'})")
    kind = kinds[0]
    stray = set(value) - {kind} - KIND_OPTIONS.get(kind, set())
    if stray:
        raise ConfigError(f"{key}.{sorted(stray)[0]}: only goes with "
                          f"{', '.join(k for k, opts in KIND_OPTIONS.items() if sorted(stray)[0] in opts)}, not {kind}")
    v = value[kind]
    if kind in ("hierarchy", "file"):
        return HierarchySpec(name, file=base / str(v), allow_unbalanced=bool(value.get("unbalanced", False)))
    if kind == "tree":
        return HierarchySpec(name, tree=v)
    if kind == "intervals":
        if not isinstance(v, list) or not v or not all(is_number(x) and x > 0 for x in v):
            raise ConfigError(f"{key}.intervals: expected a list of positive widths like [5, 10, 20], got {v!r}")
        origin = _py(value.get("origin", 0))
        if not is_number(origin) or origin != origin \
                or origin in (float("inf"), float("-inf")):
            raise ConfigError(f"{key}.origin: expected a number (where the interval bins are aligned), "
                              f"got {origin!r}")
        widths = [_py(x) for x in v]
        _check_builder(key, lambda: B.intervals(name, [0], widths, origin=origin))
        return HierarchySpec(name, builder="intervals", argument=(widths, origin))
    if kind == "mask":
        if v is not True and (not is_integer(v) or v < 1):
            raise ConfigError(f"{key}.mask: expected the code length (a whole number >= 1) or true, got {v!r}")
        return HierarchySpec(name, builder="mask", argument=None if v is True else int(v))
    if kind == "dates":
        return HierarchySpec(name, builder="dates", argument=_dates_argument(key, v, value.get("date_format")))
    if kind == "groups":
        if not isinstance(v, list) or not v or not all(is_integer(x) and x >= 1 for x in v):
            raise ConfigError(f"{key}.groups: expected a list of group sizes like [2, 4], got {v!r}")
        order = value.get("order")
        if order is not None and not isinstance(order, list):
            raise ConfigError(f"{key}.order: expected the list of values in order, got {order!r}")
        _check_builder(key, lambda: B.ordered(name, ["x"], v))
        return HierarchySpec(name, builder="groups", argument=([int(x) for x in v], order))
    if kind == "mapping":
        if isinstance(v, str):
            return HierarchySpec(name, builder="mapping", argument=base / v)
        if not isinstance(v, Mapping) or not v:
            raise ConfigError(f"{key}.mapping: expected a mapping file or value -> group(s), got {v!r}")
        return HierarchySpec(name, builder="mapping", argument=dict(v))
    if v is not True:
        raise ConfigError(f"{key}.suppress: expected true, got {v!r}")
    return HierarchySpec(name, builder="suppress")


def _check_builder(key: str, attempt) -> None:
    """A builder's options checked before any data is read (a bad width names the key)."""
    try:
        attempt()
    except H.HierarchyError as exc:
        raise ConfigError(f"{key}: {str(exc).split(': ', 1)[-1]}") from None


def _dates_argument(key: str, v, date_format) -> dict:
    """``dates: dmy`` (an order of earlier versions), ``dates: [month, year]``
    or ``dates: "month,quarter,year"``, with an optional ``date_format``."""
    if date_format is not None and (not isinstance(date_format, str) or "%" not in date_format):
        raise ConfigError(f"{key}.date_format: expected strftime codes like '%d/%m/%Y', got {date_format!r}")
    if isinstance(v, str) and v in B.DATE_ORDERS:
        return {"levels": ["month", "year"], "order": v, "date_format": date_format}
    levels = [x.strip() for x in v.split(",")] if isinstance(v, str) else v
    if not isinstance(levels, list) or not levels or not all(isinstance(x, str) for x in levels):
        raise ConfigError(f"{key}.dates: expected levels like [month, quarter, year] (of "
                          f"{', '.join(B.DATE_LEVELS)}) or an order dmy, mdy, ymd, got {v!r}")
    try:
        B.date_levels("x", levels)
    except H.HierarchyError as exc:
        raise ConfigError(f"{key}.dates: {str(exc).split(': ', 1)[-1]} (or an order dmy, mdy, ymd)") from None
    return {"levels": levels, "order": None, "date_format": date_format}


def builder_spec(name: str, text: str) -> HierarchySpec | None:
    """The command line's builder forms -- ``suppress``, ``intervals:5,10,20``,
    ``mask:N``, ``dates:month,quarter,year`` (``dates:dmy``; a strftime
    format after a second colon, ``dates:month,year:%d/%m/%Y``),
    ``groups:2,4``, ``mapping:FILE`` -- as a :class:`HierarchySpec` (the
    configuration's keys of the same name); None when ``text`` names no
    builder. Bad values raise :class:`ConfigError` naming the form."""
    kind, _, arg = text.partition(":")
    kind = kind.strip()
    if kind not in ("suppress", "intervals", "mask", "dates", "groups", "mapping") or (kind == "suppress" and arg):
        return None
    if kind != "suppress" and not arg.strip():
        example = {"intervals": "intervals:5,10,20", "mask": "mask:5", "dates": "dates:month,quarter,year",
                   "groups": "groups:2,4", "mapping": "mapping:groups.csv"}[kind]
        raise ConfigError(f"{kind} needs a value, e.g. {name}={example}")
    value: object = True
    extra: dict = {}
    if kind in ("intervals", "groups"):
        try:
            value = [float(x) for x in arg.replace(" ", "").split(",") if x]
        except ValueError:
            raise ConfigError(f"{kind}: expected comma-separated numbers like 5,10,20, got {arg!r}") from None
        value = [int(x) if x.is_integer() else x for x in value]
        if not value or not all(x > 0 and x != float("inf") for x in value):
            raise ConfigError(f"{kind}: expected comma-separated positive numbers like 5,10,20, got {arg!r}")
    elif kind == "mask":
        if not arg.strip().isdigit():
            raise ConfigError(f"mask needs the code length, a whole number >= 1 (e.g. {name}=mask:5)")
        value = int(arg)
    elif kind == "dates":
        levels, _, fmt = arg.partition(":")
        value = levels.strip()
        if fmt:
            extra["date_format"] = fmt
    elif kind == "mapping":
        value = arg.strip()
    return _hier_spec(name, {kind: value, **extra}, Path("."))


def _str_list(raw, key: str) -> list[str]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [raw]
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise ConfigError(f"{key}: expected a list of column names, got {raw!r}")
    return list(raw)


def _choice(raw: Mapping, key: str, options: tuple[str, ...]) -> str:
    """``raw[key]`` (default: the first option), which must be one of ``options``."""
    value = raw.get(key, options[0])
    if not isinstance(value, str) or value not in options:
        raise ConfigError(f"{key}: expected {', '.join(options[:-1])} or {options[-1]}, got {value!r}")
    return value


def parse(raw: Mapping, base: Path | None = None, source: Path | None = None) -> Config:
    """Validate a configuration mapping (as loaded from YAML)."""
    base = base or Path(".")
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError("the configuration must be a mapping of keys to values")
    for alias, key in KEY_ALIASES.items():
        if alias in raw:
            if key in raw:
                raise ConfigError(f"{alias}: is another name for {key}; give only one of them")
            raw = {**{kk: v for kk, v in raw.items() if kk != alias}, key: raw[alias]}
    unknown = sorted(set(raw) - TOP_KEYS)
    if unknown:
        hints = [f"{u!r} (did you mean {difflib.get_close_matches(u, TOP_KEYS, 1)[0]!r}?)"
                 if difflib.get_close_matches(u, TOP_KEYS, 1) else repr(u) for u in unknown]
        raise ConfigError(f"unknown configuration key(s) {', '.join(hints)}; allowed keys: {sorted(TOP_KEYS)}")
    cfg = Config(source=source)
    qis = raw.get("quasi_identifiers") or {}
    if isinstance(qis, list):
        qis = {q: {"suppress": True} for q in qis}
    if not isinstance(qis, Mapping):
        raise ConfigError("quasi_identifiers: expected a mapping of column name to hierarchy")
    cfg.quasi_identifiers = {str(n): _hier_spec(str(n), v, base) for n, v in qis.items()}
    cfg.k = check_setting("k", raw.get("k"))
    reqs = raw.get("requirements") or []
    if not isinstance(reqs, list):
        raise ConfigError("requirements: expected a list like ['education,sex:4']")
    for i, r in enumerate(reqs):
        if isinstance(r, Mapping):
            if set(r) != {"attributes", "k"}:
                raise ConfigError(f"requirements: each entry is 'A,B:K' or {{attributes: [..], k: K}}, got {r!r}")
            attrs, rk = r["attributes"], r["k"]
            if isinstance(attrs, str):  # one string: as in the 'A,B:K' form
                attrs = [a.strip() for a in attrs.split(",")]
            if not isinstance(attrs, list) or not attrs or not all(isinstance(a, str) and a.strip() for a in attrs):
                raise ConfigError(f"requirements[{i}].attributes: expected a list of column names like "
                                  f"[gender, age], got {r['attributes']!r}")
            bad = [a for a in attrs if "," in a or ":" in a]
            if bad:
                raise ConfigError(f"requirements[{i}].attributes: column name {bad[0]!r} contains ',' or ':', "
                                  "which a requirement cannot name")
            if not is_integer(rk) or rk < 1:
                raise ConfigError(f"requirements[{i}].k: expected a whole number >= 1, got {rk!r}")
            cfg.requirements.append(f"{','.join(a.strip() for a in attrs)}:{rk}")
        elif isinstance(r, str):
            cfg.requirements.append(r)
        else:
            raise ConfigError(f"requirements: entry {r!r} must be 'A,B:K' or a mapping")
    if raw.get("method") is not None:
        if not isinstance(raw["method"], str) or raw["method"] not in METHODS:
            raise ConfigError(f"method: {raw['method']!r} is not one of {sorted(METHODS)}")
        cfg.method = raw["method"]
    params = raw.get("params") or {}
    if not isinstance(params, Mapping):
        raise ConfigError("params: expected a mapping of method parameters")
    cfg.params = dict(params)
    cfg.weights = _choice(raw, "weights", ("uniform", "height", "mage"))
    cfg.beta = check_setting("beta", raw.get("beta", 1.0))
    pri = raw.get("priorities")
    if pri is not None and not isinstance(pri, (list, Mapping)):
        raise ConfigError("priorities: expected a ranking list [most important, ...] or a mapping attribute -> weight")
    if isinstance(pri, Mapping):
        for a, w in pri.items():
            if not isinstance(a, str):
                raise ConfigError(f"priorities: expected attribute names as keys, got {a!r}")
            if not is_number(w) or not (0 <= w < float("inf")):
                raise ConfigError(f"priorities.{a}: expected a weight (a number >= 0), got {w!r}")
        pri = {a: _py(w) for a, w in pri.items()}
    elif isinstance(pri, list):
        bad = [a for a in pri if not isinstance(a, str)]
        if bad:
            raise ConfigError(f"priorities: a ranking lists attribute names, got {bad[0]!r}")
    cfg.priorities = pri
    cfg.seed = check_setting("seed", raw.get("seed"))
    key = raw.get("pseudonym_key")
    if key is not None and not isinstance(key, str):
        raise ConfigError(f"pseudonym_key: expected the path of a key file, got {key!r}")
    if key is not None:
        try:
            read_key(base / key, "pseudonym_key: file")  # refused here, before any work
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        cfg.pseudonym_key = base / key
    cfg.identifiers = _str_list(raw.get("identifiers"), "identifiers")
    cfg.identifier_action = _choice(raw, "identifier_action", ("drop", "mask", "pseudonym"))
    for key in ("strict", "shuffle"):
        v = raw.get(key, False)
        if not isinstance(v, bool):
            raise ConfigError(f"{key}: expected true or false, got {v!r}")
        setattr(cfg, key, v)
    cfg.sensitive = _str_list(raw.get("sensitive"), "sensitive")
    cfg.insensitive = _str_list(raw.get("insensitive"), "insensitive")
    for key in ("class_column", "count_column", "weight"):
        v = raw.get(key)
        if v is not None and not isinstance(v, str):
            raise ConfigError(f"{key}: expected a column name, got {v!r}")
        setattr(cfg, key, v)
    if raw.get("suda_max_size") is not None:
        try:
            cfg.suda_max_size = check_max_size(raw["suda_max_size"])
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    cfg.missing = check_setting("missing", raw.get("missing", MISSING_MODES[0]))
    cfg.numeric_output = _choice(raw, "numeric_output", NUMERIC_OUTPUTS)
    st = raw.get("suppression_threshold")
    if st is not None and (not is_number(st) or not (0 <= st < float("inf"))):
        raise ConfigError(f"suppression_threshold: expected a number >= 0, got {st!r}")
    cfg.suppression_threshold = _py(st)
    if raw.get("max_suppression") is not None:
        try:
            cfg.max_suppression = parse_budget(raw["max_suppression"], "max_suppression")
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    cfg.risk_threshold = check_setting("risk_threshold", raw.get("risk_threshold"))
    cfg.input = _table_ref(raw.get("input"), "input", base, query=True)
    cfg.output = _table_ref(raw.get("output"), "output", base, query=False)
    _parse_privacy(raw, cfg, base)
    _parse_risk_models(raw, cfg, base)
    _check_roles(cfg, raw, source)
    return cfg


def _check_roles(cfg: Config, raw: Mapping, source: Path | None) -> None:
    """Record where each column's role is said (``KEY in FILE``) and refuse
    a column with two contradictory roles (:func:`hieranon.evaluation.roles.check_role_conflicts`)."""
    where = f" in {source.name}" if source is not None else ""
    assigned = {"hierarchies": list(cfg.quasi_identifiers), "identifiers": cfg.identifiers,
                "sensitive": cfg.sensitive, "insensitive": cfg.insensitive, "class_column": cfg.class_column,
                "count_column": cfg.count_column, "weight_column": cfg.weight}
    listed_sensitive = set(_str_list(raw.get("sensitive"), "sensitive"))
    protected = {m.attribute for m in cfg.privacy}
    for role, columns in assigned.items():
        for column in [columns] if isinstance(columns, str) or columns is None else columns:
            key = ROLE_KEYS[role]
            if role == "sensitive" and column not in listed_sensitive:  # made sensitive by one of these keys
                key = "privacy" if column in protected else "sensitive_hierarchies"
            cfg.origins[(role, column)] = f"{key}{where}"
    check_role_conflicts(assigned, cfg.origins, error=ConfigError)


def _parse_privacy(raw: Mapping, cfg: Config, base: Path) -> None:
    """The ``privacy:`` and ``sensitive_hierarchies:`` keys (the forms of
    :func:`hieranon.privacy.parse_privacy_config`); a privacy attribute is
    sensitive (:func:`_check_roles` refuses it as a quasi-identifier or an identifier)."""
    sh = raw.get("sensitive_hierarchies") or {}
    if not isinstance(sh, Mapping) or not all(isinstance(v, str) for v in sh.values()):
        raise ConfigError(f"sensitive_hierarchies: expected a mapping attribute -> hierarchy file, e.g. "
                          f"{{disease: disease.csv}}, got {sh!r}")
    cfg.sensitive_hierarchies = {str(a): base / f for a, f in sh.items()}
    try:
        built = {a: H.from_file(f, a) for a, f in cfg.sensitive_hierarchies.items()}
        cfg.privacy = parse_privacy_config(raw.get("privacy"), "privacy", built, base)
    except (PrivacyError, H.HierarchyError, OSError) as exc:
        where = "" if str(exc).startswith("config key") else "sensitive_hierarchies: "
        raise ConfigError(f"{where}{exc}") from None
    for a in dict.fromkeys([m.attribute for m in cfg.privacy] + list(cfg.sensitive_hierarchies)):
        if a not in cfg.sensitive:
            cfg.sensitive.append(a)


def _table_ref(given, key: str, base: Path, query: bool) -> Path | SqlTable | None:
    """The ``input:`` or ``output:`` key: a file's path (relative to the
    configuration), or a database table ``{url: URL, table: NAME}`` (an
    input also ``{url: URL, query: SQL}``)."""
    if given is None:
        return None
    form = "{url: URL, table: NAME}" + (" or {url: URL, query: SQL}" if query else "")
    if isinstance(given, str):
        if is_database_url(given):
            raise ConfigError(f"{key}: {mask_url(given)} is a database; name its table: {form}")
        return base / given
    if not isinstance(given, Mapping) or not isinstance(given.get("url"), str) or \
            set(given) - {"url", "table", "query"} or (not query and "query" in given) or \
            (given.get("table") is None) == (given.get("query") is None):
        raise ConfigError(f"{key}: expected the path of a table or a database table {form}, got {given!r}")
    if not is_database_url(given["url"]):
        raise ConfigError(f"{key}.url: expected a database URL (postgresql://HOST/DB, sqlite:///FILE.db, "
                          f"duckdb:///FILE.duckdb), got {given['url']!r}")
    return SqlTable(given["url"], given.get("table"), given.get("query"))


POPULATION_KEYS = ("sampling_fraction", "size", "table")
RISK_MODEL_KEYS = ("average_risk", "population_uniqueness", "k_map", "delta_presence")


def _parse_population(raw: Mapping, base: Path) -> tuple[float | None, int | None, Path | None]:
    """The ``population:`` key: one of ``sampling_fraction`` (0 < F <= 1),
    ``size`` (people) and ``table`` (a file of the population, the same
    quasi-identifier columns); ``(fraction, size, table file)``."""
    given = raw.get("population")
    if given is None:
        return None, None, None
    if not isinstance(given, Mapping) or len(given) != 1 or next(iter(given)) not in POPULATION_KEYS:
        raise ConfigError(f"population: expected one of {', '.join(POPULATION_KEYS)}, e.g. "
                          f"{{sampling_fraction: 0.01}} or {{table: population.csv}}, got {given!r}")
    key, value = next(iter(given.items()))
    if key == "sampling_fraction" and not (is_number(value) and 0 < value <= 1):
        raise ConfigError(f"population.sampling_fraction: expected a number in (0, 1] (the share of the "
                          f"population the table holds, e.g. 0.01), got {value!r}")
    if key == "size" and not (is_integer(value) and value >= 1):
        raise ConfigError(f"population.size: expected a whole number of people (at least 1), got {value!r}")
    if key == "table" and not isinstance(value, str):
        raise ConfigError(f"population.table: expected the path of a table, got {value!r}")
    return (_py(value) if key == "sampling_fraction" else None, int(value) if key == "size" else None,
            base / value if key == "table" else None)


def _parse_risk_models(raw: Mapping, cfg: Config, base: Path) -> None:
    """The ``population:`` and ``risk_models:`` keys: the risk-based privacy
    models (:func:`hieranon.privacy.parse_risk_options`) the release must
    meet, and the population they are measured against."""
    fraction, size, table_file = _parse_population(raw, base)
    try:
        population = read_table(table_file) if table_file is not None else None
    except (ValueError, OSError) as exc:
        raise ConfigError(f"population.table: {exc}") from None
    if population is not None:
        size = len(population)
    cfg.population_table, cfg.population_data = table_file, population
    cfg.population = (PopulationModel(sampling_fraction=fraction, population=size)
                      if fraction is not None or size is not None else None)
    models = raw.get("risk_models")
    if models is None:
        return
    if not isinstance(models, Mapping) or not models:
        raise ConfigError(f"risk_models: expected a mapping of {', '.join(RISK_MODEL_KEYS)}, e.g. "
                          f"{{average_risk: 0.05}}, got {models!r}")
    unknown = [k for k in models if k not in RISK_MODEL_KEYS]
    if unknown:
        raise ConfigError(f"risk_models.{unknown[0]}: unknown risk model; expected one of {', '.join(RISK_MODEL_KEYS)}")
    delta = models.get("delta_presence")
    if isinstance(delta, (list, tuple)):
        delta = ",".join(map(str, delta))
    uniqueness = models.get("population_uniqueness")
    if isinstance(uniqueness, Mapping):
        uniqueness = f"{uniqueness.get('threshold')}:{uniqueness.get('estimator', 'dankar')}"
    try:
        risk = parse_risk_options(models.get("k_map"), delta, models.get("average_risk"), population,
                                  None if uniqueness is None else str(uniqueness), fraction, size)
    except PrivacyError as exc:
        message = str(exc).replace("--population-table FILE", "population: {table: FILE}")
        raise ConfigError(f"risk_models: {message}") from None
    cfg.privacy = [*cfg.privacy, *risk]


def load(path) -> Config:
    """Load and validate a YAML configuration file."""
    path = Path(path)
    text = read_text_file(path, what="configuration file", max_bytes=MAX_CONFIG_BYTES, error=ConfigError)
    raw = load_yaml(text, source=f"configuration file {path}", error=ConfigError)
    return parse(raw, base=path.parent, source=path)


TEMPLATE = """\
# hieranon configuration (YAML). Every key is optional except quasi_identifiers
# and k or requirements. Relative paths are read relative to this file.

quasi_identifiers:            # column -> hierarchy
  age: {intervals: [5, 10, 20]}       # value -> 5-year -> 10-year -> 20-year -> *
  gender: {suppress: true}            # value -> *
  postcode: {mask: 4}                 # 4351 -> 435* -> 43** -> 4*** -> *
  date_of_birth: {dates: [month, year], date_format: "%d/%m/%Y"}   # D/M/Y -> 1980-04 -> 1980 -> *
                                      # levels: day week month quarter year decade; ISO 8601 without date_format
  # region: {mapping: regions.csv}    # value;group[;supergroup] rows, or an inline {value: group}
  # grade: {groups: [2, 4], order: [A, B, C, D, E, F]}   # consecutive values in blocks of 2, then 4
  # education: {hierarchy: hierarchies/education.csv}   # ARX format: leaf;parent;...;*
  # country: {tree: {"*": {Europe: [England, France], Asia: [India]}}}

k: 5                          # every QI combination occurs >= k times
# requirements:               # extra <attributes, k> requirements (Arca & Hewett)
#   - "gender,postcode:10"
#   - {attributes: [age, gender], k: 4}   # attributes: a list of column names

method: kaca+                 # kaca+ (lowest distortion) kaca1 kaca2 dbca fulldomain mondrian ...
params: {}                    # method parameters, e.g. {max_inconsistency: 0.1} for kaca2
weights: uniform              # distortion weights: uniform | height | mage
beta: 1                       # height weights 1/(j-1)^beta
# priorities: [age, postcode, gender]   # ranking (most important first) or {age: 1, gender: 0}
# seed: 7                     # repeat a run exactly: the algorithms' choices and the shuffled order
                              # (default: a fixed seed for the algorithms, fresh randomness for the
                              # shuffle); never written to any output

identifiers: []               # direct identifiers (ARX: identifying)
identifier_action: drop       # drop | mask (*) | pseudonym (a keyed HMAC pseudonym per value)
# pseudonym_key: pseudonym.key  # the same pseudonyms across releases: a file of >= 32 random bytes, made with
                              # python -c "import secrets; print(secrets.token_hex(32))" > pseudonym.key
                              # (default: a fresh key per run; keep the file secret)
sensitive: []                 # sensitive attributes (kept, reported)
insensitive: []               # published unchanged, no risk; every column needs one of these roles
strict: false                 # true: a column without a role is an error (else a warning)
shuffle: false                # true: release the rows in a random order (fresh unless seed is given)
class_column: null            # class label for CM / DBCA:CM
count_column: null            # rows stand for this many records
weight: null                  # sampling weight of each record: people of the population it stands for
# suda_max_size: 3            # largest set of quasi-identifiers searched for minimal sample uniques (SUDA)
missing: error                # error | root (empty QI cells count as already suppressed; they stay
                              # empty) | value (a leaf 'missing' under the root, generalised like any value)
numeric_output: label         # how generalised numbers are written: label ([25, 50)) | range | midpoint
                              # | bounds (two numeric columns age_lower, age_upper)
# input: patients.csv        # the table, when the command line names none: a path, or a database table
                              # {url: postgresql://HOST/DB, table: patients} (or query: SELECT ...)
# output: release.csv         # where anonymize writes (or {url: URL, table: NAME}); evaluate and report
                              # compare input (ORIGINAL) with output (ANONYMISED)
# suppression_threshold: 0.5   # kaca1 / kaca2 only: suppress (not merge) a class whose nearest merge
                              # costs more than this (distortion units)
# max_suppression: 5%         # suppress at most 5% of the records (or a number: 120), only where that
                              # lowers the distortion; none or at least k records are suppressed
# risk_threshold: 0.2         # a record is "at risk" when its prosecutor risk 1/|class| is above this;
                              # 0 < risk_threshold <= 1 (0.2: classes of fewer than 5 records);
                              # default 1/k of the largest k required

# privacy:                    # sensitive attribute -> privacy models every equivalence class must meet
#   diagnosis:                # (a privacy attribute is sensitive: never a QI or an identifier)
#     - l_diversity: 2                    # distinct l-diversity (Machanavajjhala et al. 2007)
#     - {l_diversity: 1.8, variant: entropy}          # entropy l-diversity
#     - {l_diversity: 2, variant: recursive, c: 3}    # recursive (c, l)-diversity
#     - {t_closeness: 0.2, distance: equal}  # EMD t-closeness (Li et al. 2007): equal | ordered | hierarchical
#                             # (default: hierarchical with a hierarchy, ordered if numeric, else equal)
# sensitive_hierarchies:      # a sensitive attribute's own hierarchy, for the hierarchical distance
#   diagnosis: hierarchies/diagnosis.csv

# population:                 # the population the table was sampled from (one of the three), for the
#   sampling_fraction: 0.01   # journalist, marketer and population-uniqueness risk (default 0.01, assumed)
#   size: 2500000             # a number of people
#   table: population.csv     # a table of the population (the same quasi-identifier columns)
# risk_models:                # risk-based privacy models the release must meet, checked like k
#   average_risk: 0.05        # average re-identification risk (share of records re-identified)
#   population_uniqueness: {threshold: 0.01, estimator: dankar}   # pitman | zayatz | snb | dankar
#   k_map: 5                  # every class matches >= 5 population records (needs population.table)
#   delta_presence: [0.1, 0.6]  # every class is 10-60% of its population matches (needs population.table)
"""
