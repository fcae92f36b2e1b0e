"""The options anonymize, check, evaluate and report share (declared once, as typer option
types), their parsing (``--qi``, ``--param``, the roles, the privacy models) and the one assembly of the job,
:func:`build_spec`: the configuration with the options given laid over it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from .errors import UsageError

if TYPE_CHECKING:
    from ..job.config import Config
    from ..job.spec import AnonymizationSpec

QI_FORMS = ("NAME=HIERARCHY_FILE, NAME=suppress, NAME=intervals:5,10,20, NAME=mask:N, "
            "NAME=dates:month,quarter,year (or dates:dmy|mdy|ymd; a format after a second colon), NAME=groups:2,4 "
            "or NAME=mapping:FILE")


def _qi_builder(name: str, text: str, item: str):
    """A builder form of ``--qi`` (:func:`hieranon.job.config.builder_spec`) as the
    configuration's builder of that name; None when ``text`` names none."""
    from ..job.config import ConfigError, builder_spec

    try:
        return builder_spec(name, text)
    except ConfigError as exc:
        raise UsageError(f"--qi {item!r}: {excerpt_option(exc, name)}") from None


def _parse_qi_options(qi: list[str]) -> dict:
    """``--qi`` options -> column -> hierarchy file (a Path) or builder
    (a HierarchySpec); an existing file of the builder's name stays a file."""
    out = {}
    for item in qi:
        if "=" not in item:
            raise UsageError(f"--qi {item!r}: expected {QI_FORMS}")
        name, path = (x.strip() for x in item.split("=", 1))
        if not name:
            raise UsageError(f"--qi {item!r}: the column name is empty; expected {QI_FORMS}")
        if not path:
            raise UsageError(f"--qi {item!r}: the hierarchy is empty; expected {QI_FORMS}")
        if name in out:
            raise UsageError(f"--qi {name}=... is given more than once (column {name!r}); give each column once")
        builder = None if Path(path).exists() else _qi_builder(name, path, item)
        out[name] = builder if builder is not None else Path(path)
    return out


def parse_params(param: list[str]) -> dict:
    if not param:
        return {}
    from ..core.files import excerpt
    from ..core.safeyaml import YAMLInputError, load_yaml
    out = {}
    for item in param:
        if "=" not in item:
            raise UsageError(f"--param {item!r}: expected KEY=VALUE")
        key, value = item.split("=", 1)
        key = key.strip()
        if not key:
            raise UsageError(f"--param {item!r}: the parameter name is empty; expected KEY=VALUE")
        try:
            out[key] = load_yaml(value, source="value")
        except YAMLInputError as exc:
            raise UsageError(f"--param {excerpt(item)}: the value of parameter {key} cannot be read ({exc}); "
                             "quote it or give a number, true/false or a [list]") from None
    return out


# ------------------------------------------------------------------ shared options
# Declared once: anonymize, check, evaluate and report take them alike.
RISK_THRESHOLD_HELP = "Prosecutor risk 1/|class| above which a record counts as at risk, 0 < T <= 1 (default: " \
                      "the config's risk_threshold, else 1/k of the largest k required)."
ConfigOption = Annotated[Optional[Path], typer.Option("--config", "-c", help="YAML configuration.")]
QiOption = Annotated[list[str], typer.Option("--qi", help="NAME=HIERARCHY_FILE (ARX CSV format) or a hierarchy "
                                             "built from the data: NAME=suppress, NAME=intervals:5,10,20, "
                                             "NAME=mask:N, NAME=dates:month,quarter,year[:FORMAT] (levels of day "
                                             "week month quarter year decade; or dates:dmy|mdy|ymd), "
                                             "NAME=groups:2,4, NAME=mapping:FILE; repeatable.")]
KOption = Annotated[Optional[int], typer.Option("-k", help="One requirement: k over all quasi-identifiers.")]
RequireOption = Annotated[list[str], typer.Option("--require", help="Requirement 'A,B,C:K'; repeatable.")]
CountColumnOption = Annotated[Optional[str], typer.Option("--count-column", help="Column of record counts per row.")]
WeightOption = Annotated[Optional[str], typer.Option(
    "--weight", help="Column of sampling weights: how many people of the population each record stands for "
    "(numbers > 0), for the individual risk; published unchanged (default: 1/F for every record, F the sampling "
    "fraction). Not --weights, the distortion's attribute weights.")]
SudaMaxSizeOption = Annotated[Optional[int], typer.Option(
    "--suda-max-size", min=1, help="Largest set of quasi-identifiers searched for the original's minimal sample "
    "uniques (SUDA; default 3).")]
ClassColumnOption = Annotated[Optional[str], typer.Option("--class-column", help="Class label column (CM).")]
MissingOption = Annotated[Optional[str], typer.Option(
    "--missing", help="Empty QI cells: error | root (already suppressed: they stay empty, counted as missing) | "
    "value (a value of their own, a leaf 'missing' under the root).")]
WeightsOption = Annotated[Optional[str], typer.Option("--weights", help="uniform | height | mage.")]
BetaOption = Annotated[Optional[float], typer.Option("--beta", help="Height-weight exponent (>= 1).")]
EncodingOption = Annotated[str, typer.Option("--encoding", help="Text encoding of CSV input.")]
RiskThresholdOption = Annotated[Optional[float], typer.Option("--risk-threshold", help=RISK_THRESHOLD_HELP)]
LDiversityOption = Annotated[list[str], typer.Option(
    "--l-diversity", help="Sensitive attribute's l-diversity: ATTR=L (distinct), ATTR=entropy:L or "
    "ATTR=recursive:C,L; repeatable.")]
TClosenessOption = Annotated[list[str], typer.Option(
    "--t-closeness", help="Sensitive attribute's EMD t-closeness: ATTR=T or ATTR=T:equal|ordered|hierarchical "
    "(default: hierarchical with --sensitive-hierarchy, ordered if numeric, else equal); repeatable.")]
SensitiveHierarchyOption = Annotated[list[str], typer.Option(
    "--sensitive-hierarchy", help="ATTR=FILE: a sensitive attribute's own hierarchy (hierarchical EMD of "
    "--t-closeness); repeatable.")]
OrderMapOption = Annotated[Optional[Path], typer.Option(
    "--order-map", help="The CSV input_row,output_row of anonymize --keep-order-map: ANONYMISED was shuffled; "
    "its rows are compared with ORIGINAL's through it.")]
StrictOption = Annotated[Optional[bool], typer.Option(
    "--strict/--no-strict", help="A column without a role (identifier, quasi-identifier, sensitive, insensitive) "
    "is an error, not a warning; for anonymize, so is whatever the release does not protect (a sensitive column "
    "without a privacy model homogeneous in some class, a near-unique column or a copy of a quasi-identifier "
    "published unchanged, rows not shuffled): exit 2, nothing written (default: the config's strict).",
    show_default=False)]
IdentifierOption = Annotated[list[str], typer.Option(
    "--identifier", help="A column that identifies a person (name, id): dropped from the output, or see "
    "--identifier-action; repeatable, added to the config's identifiers.")]
IdentifierActionOption = Annotated[Optional[str], typer.Option(
    "--identifier-action", help="What becomes of identifier columns: drop (default) | mask ('*') | pseudonym "
    "(a keyed code per distinct value, HMAC-SHA256; see --pseudonym-key).")]
SensitiveOption = Annotated[list[str], typer.Option(
    "--sensitive", help="A sensitive column, published unchanged and analysed in the report (protect it with "
    "--l-diversity or --t-closeness); repeatable.")]
InsensitiveOption = Annotated[list[str], typer.Option(
    "--insensitive", help="A column published unchanged that needs no protection; repeatable.")]
SuppressedOption = Annotated[str, typer.Option(
    "--suppressed", help="Rows of '*' (suppressed records): 'class' -- a class of their own that must hold k "
    "records too (default) -- or 'removed' -- left out, as ARX publishes them.")]
UtilityOption = Annotated[bool, typer.Option(
    "--utility", help="Also measure the release's utility: cells kept/generalised/suppressed, granularity and "
    "non-uniform entropy loss, marginals and QI-pair associations before/after, and with --target the accuracy "
    "(R^2 for a numeric target) of models trained on ANONYMISED against ORIGINAL.")]
TargetOption = Annotated[Optional[str], typer.Option(
    "--target", help="Column of ORIGINAL the utility's models predict (logistic regression, random forest, "
    "naive Bayes; ridge and random forest for a numeric target), by 5-fold cross-validation; implies --utility.")]
SamplingFractionOption = Annotated[Optional[float], typer.Option(
    "--sampling-fraction", help="Share of its population the table holds, 0 < F <= 1, for the journalist, marketer "
    "and population-uniqueness risk (default: 0.01, assumed and said so).")]
PopulationOption = Annotated[Optional[str], typer.Option(
    "--population", help="The population the table was sampled from: its size (a number of people; instead of "
    "--sampling-fraction), or the file of a population table (as --population-table FILE).")]
PopulationTableOption = Annotated[Optional[Path], typer.Option(
    "--population-table", help="A table of the population (the same QI columns): the records --k-map and "
    "--delta-presence compare with, and, without --population or --sampling-fraction, the population's size.")]
TableOption = Annotated[Optional[str], typer.Option(
    "--table", help="With a database URL as the table (postgresql://HOST/DB, sqlite:///FILE.db, "
    "duckdb:///FILE.duckdb): the table to read (NAME or SCHEMA.NAME). The password comes from HIERANON_DB_PASSWORD, "
    "PGPASSWORD, ~/.pgpass or a prompt, never the command line.")]
QueryOption = Annotated[Optional[str], typer.Option(
    "--query", help="With a database URL as the table: a SELECT whose result is the table (instead of --table).")]
AnonymisedTableOption = Annotated[Optional[str], typer.Option(
    "--anonymised-table", help="With a database URL as ANONYMISED: its table (NAME or SCHEMA.NAME).")]
ForceOption = Annotated[bool, typer.Option("--force", "-f", help="Overwrite an existing output.")]
BoundOption = Annotated[bool, typer.Option(
    "--bound", help="Also bound every local recoding's distortion from below and print how far the anonymised "
    "table is from it (minutes on large tables).")]
BoundIterationsOption = Annotated[Optional[int], typer.Option(
    "--bound-iterations", min=1, show_default=False,
    help="Subgradient iterations of the --bound (implies it; default 400): more give a tighter bound in "
    "proportionally more time.")]


def bound_request(bound: bool, iterations: Optional[int]) -> dict:
    """The keyword arguments of the lower bound ``--bound`` and
    ``--bound-iterations`` ask for (the latter implies the former): ``{}``
    for none."""
    if iterations is not None:
        return {"lower_bound": True, "bound_iterations": iterations}
    return {"lower_bound": True} if bound else {}


PublicOption = Annotated[bool, typer.Option(
    "--public", help="In the report, leave out everything computed on the original table (sample uniques, input "
    "class sizes, before-figures), for sharing outside.")]
QuietOption = Annotated[bool, typer.Option("-q", "--quiet", help="No progress or tables.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the results as JSON on stdout.")]


#: The option that gives each setting of :mod:`hieranon.job.settings`, named when its value is refused.
SETTING_OPTIONS = {"k": "-k", "seed": "--seed", "missing": "--missing", "beta": "--beta",
                   "risk_threshold": "--risk-threshold"}


def checked_options(k: Optional[int], seed: Optional[int], missing: Optional[str], beta: Optional[float],
                    risk_threshold: Optional[float]) -> None:
    """The settings given on the command line, checked before any work as the
    spec checks them (:func:`hieranon.job.settings.check_settings`): a bad one
    is a :class:`~hieranon.job.settings.SettingError` naming its option."""
    from ..job.settings import check_settings

    given = {"k": k, "seed": seed, "missing": missing, "beta": beta, "risk_threshold": risk_threshold}
    check_settings(SETTING_OPTIONS, **{name: value for name, value in given.items() if value is not None})


def _parse_sensitive_hierarchies(items: Sequence[str]) -> dict:
    """``--sensitive-hierarchy ATTR=FILE`` options -> attribute -> Hierarchy."""
    from ..hierarchies.readers import from_file

    out = {}
    for item in items:
        attr, eq, path = (x.strip() for x in item.partition("="))
        if not eq or not attr or not path:
            raise UsageError(f"--sensitive-hierarchy {item!r}: expected ATTR=FILE (a hierarchy file of the "
                             "sensitive attribute ATTR)")
        out[attr] = from_file(Path(path), attr)
    return out


def _privacy_options(l_diversity: Sequence[str], t_closeness: Sequence[str],
                     sensitive_hierarchy: Sequence[str]) -> list:
    """The privacy models of ``--l-diversity`` and ``--t-closeness`` (bad forms:
    a PrivacyError naming the option, the text and the expected form)."""
    from ..privacy import parse_l_diversity, parse_t_closeness

    hierarchies = _parse_sensitive_hierarchies(sensitive_hierarchy)
    return ([parse_l_diversity(t) for t in l_diversity]
            + [parse_t_closeness(t, hierarchies=hierarchies) for t in t_closeness])


def risk_options(k_map: Optional[int], delta_presence: Optional[str], average_risk: Optional[float],
                 population_table=None, population_uniqueness: Optional[str] = None,
                 sampling_fraction: Optional[float] = None, population: Optional[str] = None) -> list:
    """The risk-based models of ``--k-map``, ``--delta-presence``,
    ``--average-risk`` and ``--population-uniqueness``;
    ``population_table``: the table of ``--population FILE``
    (:func:`read_population_table`), which the first two compare with; the
    last estimates with ``--sampling-fraction`` or ``--population``."""
    from ..privacy import parse_risk_options

    size = _population_size(population)
    return parse_risk_options(k_map, delta_presence, average_risk, population_table, population_uniqueness,
                              sampling_fraction, int(size) if size is not None and size.is_integer() else None)


def role_columns(identifier: Sequence[str], sensitive: Sequence[str], insensitive: Sequence[str]) -> dict:
    """The columns ``--identifier``, ``--sensitive`` and ``--insensitive``
    give, per role: :func:`build_spec`'s ``roles``."""
    return {"identifiers": identifier, "sensitive": sensitive, "insensitive": insensitive}


def build_spec(config: Optional[Path | Config], qi: list[str], k: Optional[int] = None, require: Sequence[str] = (), *,
               seed: Optional[int] = None, missing: Optional[str] = None, beta: Optional[float] = None,
               risk_threshold: Optional[float] = None, l_diversity: Sequence[str] = (), t_closeness: Sequence[str] = (),
               sensitive_hierarchy: Sequence[str] = (), roles: Optional[dict] = None,
               risk_models: Sequence = (), sampling_fraction: Optional[float] = None,
               population: Optional[str] = None, population_table=None, **options) -> AnonymizationSpec:
    """The job: the configuration (a file, or one :func:`read_config` read) with
    the command-line options laid over it
    (:meth:`AnonymizationSpec.with_overrides`; options not given are None and
    change nothing). ``roles``: columns per role (``identifiers``,
    ``sensitive``, ``insensitive``), added to the config's;
    ``sampling_fraction``, ``population`` and the table of
    ``--population-table`` (read) make the population model
    (:func:`population_model`)."""
    from ..job.spec import AnonymizationSpec

    model = population_model(sampling_fraction, population, population_table)
    if model is not None:
        options["population"] = model

    checked_options(k, seed, missing, beta, risk_threshold)
    privacy = _privacy_options(l_diversity, t_closeness, sensitive_hierarchy) + list(risk_models)
    cfg = read_config(config) if isinstance(config, Path) else config
    spec = AnonymizationSpec.from_config(cfg) if cfg is not None else AnonymizationSpec()
    options.update({role: tuple(dict.fromkeys((*getattr(spec, role), *columns)))
                    for role, columns in (roles or {}).items() if columns})
    qis = _parse_qi_options(qi)
    spec = spec.with_overrides(qi=qis, require=list(require), k=k, seed=seed, missing=missing,
                               beta=beta, risk_threshold=risk_threshold, privacy=privacy,
                               origins=_role_origins(qis, roles or {}, options, privacy), **options)
    if not spec.hierarchies:
        raise UsageError("no quasi-identifiers: give --config FILE.yaml or --qi NAME=HIERARCHY_FILE")
    return spec


#: The option that gives each role (:data:`hieranon.evaluation.roles.ROLES`), named when two roles contradict each
#: other.
ROLE_OPTIONS = {"hierarchies": "--qi", "identifiers": "--identifier", "sensitive": "--sensitive",
                "insensitive": "--insensitive", "class_column": "--class-column", "count_column": "--count-column",
                "weight_column": "--weight"}


def _role_origins(qis: dict, roles: dict, options: dict, privacy: Sequence) -> dict:
    """(role, column) -> the command-line option that gave it, for the spec's ``origins``."""
    from ..privacy import TCloseness

    given = {"hierarchies": list(qis), **{role: list(columns) for role, columns in roles.items()},
             **{role: [options[role]] for role in ("class_column", "count_column", "weight_column")
                if options.get(role) is not None}}
    origins = {(role, column): ROLE_OPTIONS[role] for role, columns in given.items() for column in columns}
    for m in privacy:
        origins[("sensitive", m.attribute)] = "--t-closeness" if isinstance(m, TCloseness) else "--l-diversity"
    return origins


def read_config(path: Optional[Path]) -> Optional[Config]:
    """The configuration file, read once per command (None without one)."""
    from ..job.config import load
    return load(path) if path is not None else None


def build_hierarchies(spec, data=None) -> dict:
    """The spec's hierarchies (builders read ``data``)."""
    from ..core.tree import HierarchyError
    try:
        return spec.build_hierarchies(data)
    except HierarchyError as exc:
        raise UsageError(str(exc)) from None


def check_suppressed(option: str) -> None:
    """``--suppressed``, refused in one line when neither convention."""
    if option not in ("class", "removed"):
        raise UsageError(f"--suppressed {option!r}: expected class or removed")


def excerpt_option(exc: Exception, column: str) -> str:
    """A configuration error about a builder, without its configuration key."""
    return str(exc).removeprefix(f"quasi_identifiers.{column}").lstrip(".: ")


def _population_size(population: Optional[str]) -> Optional[float]:
    """``--population`` read as a number of people, None when it is not one."""
    if population is None:
        return None
    try:
        return float(population.replace("_", ""))
    except ValueError:
        return None


def read_population_table(path: Optional[Path], encoding: str = "utf-8", population: Optional[str] = None,
                          cfg: Optional[Config] = None):
    """The population table read through :mod:`hieranon.io`: the file of
    ``--population-table FILE``, or of ``--population FILE`` when that is
    not a number of people, else the configuration's ``population: {table:
    FILE}`` (None without any)."""
    if population is not None and _population_size(population) is None:
        if path is not None:
            raise UsageError(f"--population {population} and --population-table {path}: give the population table "
                             "once (--population also takes a number of people)")
        if not Path(population).is_file():
            raise UsageError(f"--population {population}: expected a whole number of people or the file of a "
                             f"population table, and there is no file {population!r}")
        path = Path(population)
    if path is None:
        return getattr(cfg, "population_data", None)
    from .files import read_input
    return read_input(path, encoding, None)


def population_model(sampling_fraction: Optional[float], population: Optional[str], population_table=None):
    """The population model of ``--sampling-fraction`` / ``--population``
    (:class:`hieranon.evaluation.risk.PopulationModel`): a fraction, a number
    of people, or else the number of records of ``--population-table``
    (``population_table``); None when none is given."""
    from ..evaluation.risk import PopulationModel

    if sampling_fraction is not None and population is not None:
        raise UsageError("--sampling-fraction and --population: give one of them (the fraction is the table's "
                         "records / the population)")
    if sampling_fraction is not None:
        if not 0 < sampling_fraction <= 1:
            raise UsageError(f"--sampling-fraction {sampling_fraction:g}: expected a number in (0, 1] (the share of "
                             "the population the table holds, e.g. 0.01)")
        return PopulationModel(sampling_fraction=sampling_fraction)
    size = _population_size(population)
    if population is None or (size is None and population_table is not None):  # --population FILE: its records
        return None if population_table is None else PopulationModel(population=len(population_table))
    if size is None or not (size >= 1 and size.is_integer()):
        raise UsageError(f"--population {population}: expected a whole number of people (at least 1); a table of "
                         "the population goes to --population-table FILE")
    return PopulationModel(population=int(size))
