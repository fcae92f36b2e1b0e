"""The workbench's state, without the web: one table, one configuration.

The configuration is held as the YAML mapping :mod:`hieranon.job.config`
reads (``raw``): every form of the app edits it, every run writes it to a
file and loads it with :func:`hieranon.job.config.load` -- the very file
offered for download, so that ``hieranon anonymize TABLE --config FILE``
reproduces the app's release. Paths in it are absolute (a configuration
loaded from a file has its relative paths resolved against that file), and
a hierarchy uploaded as an ARX file is written inline (``tree:``), so the
downloaded file stands alone.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ..algorithms.registry import DEFAULT_METHOD, available_methods, method_info
from ..core.cells import is_missing
from ..core.files import MAX_CONFIG_BYTES, read_text_file
from ..core.safeyaml import load_yaml
from ..core.tree import Hierarchy, HierarchyError
from ..evaluation.roles import assess_roles
from ..hierarchies.readers import from_arx_csv
from ..io import read_table
from ..job.config import HIERARCHY_KINDS, ConfigError, load, parse
from ..job.spec import AnonymizationSpec

log = logging.getLogger("hieranon.app")

__all__ = ["ROLE_CHOICES", "BUILDERS", "AppError", "Workbench", "LoadedTable", "HierarchyPreview", "ColumnHint"]

#: The roles a column can be given in the app (value -> label).
ROLE_CHOICES = {"identifier": "identifying", "qi": "quasi-identifying", "sensitive": "sensitive",
                "insensitive": "insensitive", "": "no role yet"}
#: The hierarchy builders the app offers (the configuration's keys), with the form of their argument.
BUILDERS = {"intervals": "interval widths, e.g. 5,10,20", "mask": "code length, e.g. 5 (or empty: detected)",
            "dates": "levels, e.g. month,quarter,year", "groups": "group sizes, e.g. 2,4",
            "suppress": "(none: value -> *)"}
#: The configuration's keys whose values are paths relative to the configuration file.
_PATH_KEYS = ("hierarchy", "file")
#: The risk-based models the requirements form sets (the configuration's ``risk_models`` keys)
RISK_FORM_KEYS = ("average_risk", "population_uniqueness")


class AppError(ValueError):
    """Bad input to the workbench: one line naming what is wrong and what to do."""


@dataclass
class LoadedTable:
    """The table being anonymised: ``path`` where it is read from, ``name``
    as the reproducing command names it (the uploaded file's name, or the
    path given)."""

    path: Path
    name: str
    data: pd.DataFrame


@dataclass
class HierarchyPreview:
    """One QI's hierarchy seen on the data: per level (0: the values), a few
    labels, the number of distinct nodes and the records left in classes
    under ``k`` when only that QI is generalised to that level."""

    column: str
    description: str
    levels: list[dict] = field(default_factory=list)
    error: str | None = None


@dataclass
class ColumnHint:
    """What the tool sees in one column: its share of distinct values and the
    linkage risks :func:`hieranon.evaluation.roles.assess_roles` finds."""

    column: str
    unique_share: float
    risks: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)


def _absolute(raw: dict, base: Path) -> dict:
    """``raw`` with every relative path of a hierarchy, mapping, sensitive
    hierarchy or pseudonym key made absolute against ``base``."""
    out = copy.deepcopy(raw)

    def fix(p):
        return str((base / p).resolve()) if isinstance(p, str) and not Path(p).is_absolute() else p

    qis = out.get("quasi_identifiers")
    if isinstance(qis, dict):
        for name, entry in qis.items():
            if isinstance(entry, str):
                qis[name] = fix(entry)
            elif isinstance(entry, dict):
                for key in (*_PATH_KEYS, "mapping"):
                    if key in entry and isinstance(entry[key], str):
                        entry[key] = fix(entry[key])
    if isinstance(out.get("sensitive_hierarchies"), dict):
        out["sensitive_hierarchies"] = {a: fix(p) for a, p in out["sensitive_hierarchies"].items()}
    if isinstance(out.get("pseudonym_key"), str):
        out["pseudonym_key"] = fix(out["pseudonym_key"])
    if isinstance(out.get("input"), str):
        out["input"] = fix(out["input"])
    return out


class Workbench:
    """One custodian's session: the table, the configuration (``raw``), and
    the files of the session in ``workdir`` (removed with it)."""

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.table: LoadedTable | None = None
        self.raw: dict = {}
        self.config_name: str | None = None

    # ---------------------------------------------------------------- loading
    def load_table(self, path: Path, name: str | None = None) -> LoadedTable:
        """Read the table at ``path`` as the command line reads it
        (:func:`hieranon.io.read_table`); a bad file is an :class:`AppError`."""
        path = Path(path)
        if not path.is_file():
            raise AppError(f"table {path}: no such file; give the path of a CSV, Parquet or Excel file")
        try:
            data = read_table(path)
        except (ValueError, OSError) as exc:
            raise AppError(str(exc).splitlines()[0]) from None
        if len(data) == 0:
            raise AppError(f"the table {name or path} has no rows (only a header)")
        self.table = LoadedTable(path, name or str(path.resolve()), data)
        log.info("table loaded: %d rows, %d columns", len(data), data.shape[1])  # never its content
        return self.table

    def load_config(self, path: Path, name: str | None = None, base: Path | None = None) -> None:
        """Read a YAML configuration (validated as the command line validates
        it); its relative paths are resolved against ``base`` (default: the
        file's folder)."""
        path = Path(path)
        base = Path(base) if base is not None else path.parent
        try:
            text = read_text_file(path, what="configuration file", max_bytes=MAX_CONFIG_BYTES, error=ConfigError)
            raw = load_yaml(text, source=f"configuration file {name or path}", error=ConfigError) or {}
            parse(raw, base=base, source=path)  # the one validation, with the messages the command line gives
        except (ConfigError, HierarchyError, OSError, ValueError) as exc:
            raise AppError(f"configuration {name or path}: {str(exc).splitlines()[0]}") from None
        raw = {"identifiers" if k == "identifying" else "class_column" if k == "class" else k: v
               for k, v in raw.items()}
        raw = _absolute(raw, base)
        raw.pop("input", None)
        self.raw = raw
        self.config_name = name or path.name

    # ----------------------------------------------------------------- roles
    def roles(self) -> dict[str, str]:
        """Column -> role (a key of :data:`ROLE_CHOICES`) for every column of the table."""
        r = self.raw
        out = {}
        for c in self.columns():
            if c in (r.get("quasi_identifiers") or {}):
                out[c] = "qi"
            elif c in (r.get("identifiers") or []):
                out[c] = "identifier"
            elif c in (r.get("sensitive") or []) or c in (r.get("privacy") or {}):
                out[c] = "sensitive"
            elif c in (r.get("insensitive") or []) or c in (r.get("class_column"), r.get("count_column")):
                out[c] = "insensitive"
            else:
                out[c] = ""
        return out

    def columns(self) -> list[str]:
        return [] if self.table is None else [str(c) for c in self.table.data.columns]

    def set_roles(self, roles: dict[str, str]) -> None:
        """Give each column its role: quasi-identifiers keep their hierarchy
        (a new one gets none yet), a column that stops being sensitive loses
        its privacy models."""
        unknown = [f"{c}={v}" for c, v in roles.items() if v not in ROLE_CHOICES]
        if unknown:
            raise AppError(f"role {unknown[0]!r}: expected one of {', '.join(k for k in ROLE_CHOICES if k)}")
        absent = [c for c in roles if c not in self.columns()]
        if absent:
            raise AppError(f"column {absent[0]!r} is not in the table")
        r = self.raw
        special = {r.get("class_column"), r.get("count_column")} - {None}
        qis = dict(r.get("quasi_identifiers") or {})
        r["quasi_identifiers"] = {c: qis.get(c) for c in self.columns() if roles.get(c) == "qi"}
        for key, role in (("identifiers", "identifier"), ("sensitive", "sensitive")):
            r[key] = [c for c in self.columns() if roles.get(c) == role]
        r["insensitive"] = [c for c in self.columns() if roles.get(c) == "insensitive" and c not in special]
        for c in special:
            if roles.get(c) not in ("insensitive", "sensitive", None):
                r["class_column" if c == r.get("class_column") else "count_column"] = None
        privacy = r.get("privacy") or {}
        r["privacy"] = {a: m for a, m in privacy.items() if a in r["sensitive"]}
        for key in ("identifiers", "sensitive", "insensitive", "privacy", "class_column", "count_column"):
            if not r.get(key):
                r.pop(key, None)

    def hints(self) -> list[ColumnHint]:
        """Per column: the share of distinct values, a few examples, and the
        linkage risks the roles check finds among the columns that are not
        quasi-identifiers (near-unique; a near-copy of a quasi-identifier)."""
        if self.table is None:
            return []
        df = self.table.data
        qis = list(self.raw.get("quasi_identifiers") or {})
        seen = SimpleNamespace(hierarchies=dict.fromkeys(qis), identifiers=(), sensitive=(), insensitive=(),
                               class_column=None, count_column=None)
        report = assess_roles(df, seen)
        risks: dict[str, list[str]] = {}
        for r in report.linkage:
            risks.setdefault(r["column"], []).append(r["detail"])
        n = max(len(df), 1)
        out = []
        for c in df.columns:
            share = report.unclassified.get(c, round(float(df[c].nunique(dropna=False)) / n, 4))
            examples = [str(v) for v in pd.unique(df[c].dropna())[:3]]
            out.append(ColumnHint(str(c), share, risks.get(c, []), examples))
        return out

    # ------------------------------------------------------------ hierarchies
    def set_hierarchy(self, column: str, entry: dict) -> None:
        """Set ``column``'s hierarchy to a configuration entry (``{intervals:
        [5, 10]}``...), refused in one line when the configuration refuses it
        or it does not fit the column's values."""
        if column not in (self.raw.get("quasi_identifiers") or {}):
            raise AppError(f"column {column!r} is not a quasi-identifier; make it one in the roles first")
        try:
            spec = parse({"quasi_identifiers": {column: entry}}).quasi_identifiers[column]
            spec.build(self.table.data if self.table is not None else None, self.raw.get("missing", "error"))
        except (ConfigError, HierarchyError, OSError, ValueError) as exc:
            raise AppError(f"hierarchy of {column!r}: {_without_key(str(exc), column)}") from None
        previous = self.raw["quasi_identifiers"][column]
        self.raw["quasi_identifiers"][column] = entry
        try:
            self.preview(column, raise_error=True)  # every value of the column a leaf
        except AppError:
            self.raw["quasi_identifiers"][column] = previous
            raise

    def builder_entry(self, column: str, builder: str, argument: str, date_format: str = "") -> dict:
        """The configuration entry of a builder chosen on the page
        (:data:`BUILDERS`), its argument as typed."""
        argument = argument.strip()
        if builder not in BUILDERS:
            raise AppError(f"builder {builder!r}: expected one of {', '.join(BUILDERS)}")
        if builder == "suppress":
            return {"suppress": True}
        if builder == "mask":
            if not argument:
                return {"mask": True}
            if not argument.isdigit():
                raise AppError(f"hierarchy of {column!r}: mask needs the code length, a whole number >= 1, "
                               f"got {argument!r}")
            return {"mask": int(argument)}
        if builder == "dates":
            if not argument:
                raise AppError(f"hierarchy of {column!r}: dates needs levels, e.g. month,quarter,year")
            entry: dict = {"dates": [x.strip() for x in argument.split(",") if x.strip()]}
            if date_format.strip():
                entry["date_format"] = date_format.strip()
            return entry
        numbers = []
        for x in argument.replace(" ", "").split(","):
            if not x:
                continue
            try:
                v = float(x)
            except ValueError:
                raise AppError(f"hierarchy of {column!r}: {builder} expects comma-separated numbers like "
                               f"{'5,10,20' if builder == 'intervals' else '2,4'}, got {argument!r}") from None
            numbers.append(int(v) if v.is_integer() else v)
        return {builder: numbers}

    def upload_hierarchy(self, column: str, text: str, name: str) -> None:
        """An ARX hierarchy file (``leaf;parent;...;*`` rows) for ``column``,
        kept inline (``tree:``) in the configuration."""
        try:
            h = from_arx_csv(text, column)
        except (HierarchyError, ValueError) as exc:
            raise AppError(f"hierarchy file {name} for {column!r}: {_without_key(str(exc), column)}") from None
        self.set_hierarchy(column, {"tree": h.to_mapping()})

    def hierarchy_built(self, column: str) -> Hierarchy:
        """``column``'s hierarchy as the run builds it."""
        entry = (self.raw.get("quasi_identifiers") or {}).get(column)
        if entry is None:
            raise AppError(f"quasi-identifier {column!r} has no hierarchy yet: choose a builder or upload one")
        try:
            spec = parse({"quasi_identifiers": {column: entry}}).quasi_identifiers[column]
            return spec.build(self.table.data if self.table is not None else None, self.raw.get("missing", "error"))
        except (ConfigError, HierarchyError, OSError, ValueError) as exc:
            raise AppError(f"hierarchy of {column!r}: {_without_key(str(exc), column)}") from None

    def builder_of(self, column: str) -> str:
        """The builder the page offers first for ``column``: its current one, else
        intervals for a numeric column and suppression for any other."""
        entry = (self.raw.get("quasi_identifiers") or {}).get(column)
        kind = next((k for k in BUILDERS if isinstance(entry, dict) and k in entry), None)
        if kind is not None:
            return kind
        values = self.table.data[column].dropna() if self.table is not None else pd.Series([], dtype=object)
        numeric = len(values) > 0 and pd.to_numeric(values, errors="coerce").notna().all()
        return "intervals" if numeric else "suppress"

    def builder_argument(self, column: str) -> str:
        entry = (self.raw.get("quasi_identifiers") or {}).get(column)
        kind = self.builder_of(column)
        value = entry.get(kind) if isinstance(entry, dict) else None
        if isinstance(value, list):
            return ",".join(map(str, value))
        return "" if value in (None, True) else str(value)

    def describe_hierarchy(self, column: str) -> str:
        entry = (self.raw.get("quasi_identifiers") or {}).get(column)
        if entry is None:
            return "none yet"
        if isinstance(entry, str):
            return f"file {Path(entry).name}"
        kind = next((k for k in HIERARCHY_KINDS if k in entry), "")
        if kind in _PATH_KEYS:
            return f"file {Path(str(entry[kind])).name}"
        if kind == "tree":
            return "uploaded ARX hierarchy"
        value = entry[kind]
        shown = ",".join(map(str, value)) if isinstance(value, list) else ("" if value is True else str(value))
        return f"{kind} {shown}".strip()

    def preview(self, column: str, k: int | None = None, raise_error: bool = False) -> HierarchyPreview:
        """``column``'s hierarchy level by level on the table's values (see
        :class:`HierarchyPreview`); a hierarchy that does not fit the values
        has its message in ``error`` (or raised, with ``raise_error``)."""
        k = k or self.k()
        out = HierarchyPreview(column, self.describe_hierarchy(column))
        if (self.raw.get("quasi_identifiers") or {}).get(column) is None:
            return out  # none chosen yet: nothing to preview, nothing wrong
        try:
            h = self.hierarchy_built(column)
            values = self.table.data[column]
            present = values[~is_missing(values)]
            distinct, inverse = np.unique(h.labels_of(present.to_numpy(dtype=object)), return_inverse=True)
            try:
                leaves = h.codes_of(distinct)
            except HierarchyError as exc:
                raise AppError(f"hierarchy of {column!r}: {_without_key(str(exc), column)}") from None
        except AppError as exc:
            if raise_error:
                raise
            out.error = str(exc)
            return out
        codes = leaves[inverse]
        for step in range(h.height):
            nodes = h.ancestor_at_depth(codes, np.maximum(h.depth[codes] - step, 0))
            _, sizes = np.unique(nodes, return_counts=True)
            labels = [h.labels[v] for v in np.unique(nodes)[:4]]
            out.levels.append({"step": step, "distinct": int(len(sizes)), "examples": labels,
                               "under_k": int(sizes[sizes < k].sum()) if k else 0})
        missing = int(len(values) - len(present))
        if missing:
            out.levels[0]["missing"] = missing
        return out

    # ----------------------------------------------------------- requirements
    def k(self) -> int | None:
        k = self.raw.get("k")
        return int(k) if isinstance(k, int) else None

    def set_requirements(self, *, k: int | None, method: str | None, max_suppression: str | None,
                         risk_threshold: float | None, l_diversity: dict[str, float],
                         t_closeness: dict[str, float], risk_models: dict[str, float] | None = None,
                         sampling_fraction: float | None = None) -> None:
        """k, the method, the suppression budget, the risk threshold, the
        privacy models of sensitive columns and the risk-based models
        (``risk_models``: ``average_risk``, ``population_uniqueness``; with
        the ``sampling_fraction`` they are estimated at), checked as the
        configuration checks them."""
        raw = copy.deepcopy(self.raw)
        given = {key: value for key, value in (risk_models or {}).items() if value is not None}
        kept = {key: value for key, value in (raw.get("risk_models") or {}).items() if key not in RISK_FORM_KEYS}
        if given or kept:
            raw["risk_models"] = {**kept, **given}
        else:
            raw.pop("risk_models", None)
        if sampling_fraction is not None:
            raw["population"] = {"sampling_fraction": sampling_fraction}
        elif "sampling_fraction" in (raw.get("population") or {}):
            raw.pop("population", None)
        for key, value in (("k", k), ("method", method), ("max_suppression", max_suppression),
                           ("risk_threshold", risk_threshold)):
            if value in (None, ""):
                raw.pop(key, None)
            else:
                raw[key] = value
        sensitive = set(raw.get("sensitive") or [])
        privacy: dict = {}
        for kind, given in (("l_diversity", l_diversity), ("t_closeness", t_closeness)):
            for attr, value in given.items():
                if value is None:
                    continue
                if attr not in sensitive:
                    raise AppError(f"{kind.replace('_', '-')} of {attr!r}: make the column sensitive first")
                privacy.setdefault(attr, []).append({kind: value})
        if privacy:
            raw["privacy"] = privacy
        else:
            raw.pop("privacy", None)
        self.check(raw)
        self.raw = raw

    def risk_value(self, key: str):
        """The configuration's risk-based model ``key`` (``''`` without one), for the form."""
        value = (self.raw.get("risk_models") or {}).get(key)
        return "" if value is None else value

    def privacy_value(self, attr: str, kind: str):
        for m in (self.raw.get("privacy") or {}).get(attr, []) or []:
            if isinstance(m, dict) and kind in m:
                return m[kind]
        return None

    def check(self, raw: dict | None = None) -> None:
        """The configuration checked as ``hieranon anonymize --config`` checks it."""
        try:
            parse(self.raw if raw is None else raw)
        except (ConfigError, HierarchyError, OSError, ValueError) as exc:
            raise AppError(str(exc).splitlines()[0]) from None

    # ------------------------------------------------------------- a run
    def ready(self) -> list[str]:
        """What is missing before a run (empty: ready)."""
        todo = []
        if self.table is None:
            todo.append("load a table")
            return todo
        qis = self.raw.get("quasi_identifiers") or {}
        if not qis:
            todo.append("mark at least one column quasi-identifying")
        todo += [f"give {c!r} a hierarchy" for c, e in qis.items() if e is None]
        if not self.k() and not self.raw.get("requirements"):
            todo.append("set k")
        return todo

    def run_config(self, **overrides) -> dict:
        """The configuration of a run (``overrides`` laid over it: the grid's k and method)."""
        todo = self.ready()
        if todo:
            raise AppError("before running: " + "; ".join(todo))
        raw = {**copy.deepcopy(self.raw), **{k: v for k, v in overrides.items() if v is not None}}
        raw.pop("input", None)
        if self.table is not None:
            raw = {"input": self.table.name, **raw}
        return raw

    def spec_of(self, config_path: Path) -> AnonymizationSpec:
        """The spec of a configuration file the app wrote (loaded as the command line loads it)."""
        try:
            return AnonymizationSpec.from_config(load(config_path))
        except (ConfigError, HierarchyError, OSError, ValueError) as exc:
            raise AppError(str(exc).splitlines()[0]) from None


def methods() -> list[dict]:
    """The methods offered, the recommended one first, each with its one-line description."""
    infos = [method_info(m) for m in available_methods()]
    infos.sort(key=lambda i: (i["method"] != DEFAULT_METHOD, i["method"]))
    for i in infos:
        i["line"] = "; ".join(x for x in (i.get("family"), i.get("paper"), i.get("needs")) if x)
    return infos


def _without_key(text: str, column: str) -> str:
    """A configuration message without its ``quasi_identifiers.COLUMN`` prefix."""
    return text.splitlines()[0].removeprefix(f"quasi_identifiers.{column}").lstrip(".: ")
