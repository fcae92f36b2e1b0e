"""Command-line interface (the command forms README.md "Command line" lists, which scripts rely on).

Commands::

    hieranon anonymize INPUT -o OUTPUT [--config FILE.yaml] [--qi NAME=FILE]... [-k K] [--require "A,B:K"]...
                       [--method NAME] [--seed N] [--count-column COL] [--report FILE.html] [--force] [-q] [--json]
                       [--encoding ENC] [--risk-threshold T]
    hieranon check     INPUT [--config FILE.yaml] [--qi NAME=FILE]... [-k K] [--require ...] [--risk-threshold T]
                       [--l-diversity ATTR=L|ATTR=entropy:L|ATTR=recursive:C,L]...
                       [--t-closeness ATTR=T[:equal|ordered|hierarchical]]... [--sensitive-hierarchy ATTR=FILE]...
    hieranon evaluate  ORIGINAL ANONYMISED [--config FILE.yaml] [--qi NAME=FILE]... [-k K] [--missing root]
                       [--utility [--target COL]]
    hieranon report    ORIGINAL ANONYMISED [--config FILE.yaml] [--qi NAME=FILE]... [-k K] -o REPORT.html
                       [--risk-threshold T] [--utility [--target COL]]

anonymize, check, evaluate and report share the options that describe the
job (``--config --qi -k --require --count-column --class-column --missing
--weights --beta --encoding --risk-threshold --l-diversity --t-closeness
--sensitive-hierarchy``, declared once below): each
builds one :class:`~hieranon.spec.AnonymizationSpec` from the configuration
with the options given laid over it.
    hieranon hierarchy build --column COL --input TABLE (--intervals 5,10,20 | --mask N | --dates dmy
                       | --suppress) [-o FILE.csv]
    hieranon hierarchy check TABLE [--config FILE.yaml] [--qi NAME=FILE]...
    hieranon config-template | methods

Exit codes:

* 0 -- ok: the output was written and verified, the check/evaluation passed,
  the report was written for a pair that verifies, every data value is in
  its hierarchy;
* 1 -- a failed check or verification: a table fails its anonymity
  requirements or a privacy model (``check``/``evaluate``/``report``), an algorithm's output
  failed verification (nothing written), data values are missing from a
  hierarchy (``hierarchy check``);
* 2 -- bad input or usage: one line on stderr says what is wrong, and
  nothing is written (a missing or unreadable file, an invalid
  configuration key or value, a QI column absent from the table, a value
  missing from its hierarchy, an impossible k, a privacy model the whole
  table cannot satisfy, an existing output without
  ``--force``, an output path equal to the input...);
* 3 -- an internal error (a bug: one line on stderr; set ``HIERANON_DEBUG=1``
  for the traceback, and please report it).

Progress is shown on stderr (a rich status line); ``-q`` silences progress
and tables, ``--json`` prints machine-readable results on stdout only.

The CLI parses arguments, reads files and prints; metrics come from the
library (:mod:`hieranon.api`, :mod:`hieranon.metrics`, :mod:`hieranon.report`),
never computed here. Heavy modules (matplotlib for reports, the algorithms)
are imported only by the commands that need them, so a run starts fast.
"""

from __future__ import annotations

import json
import logging
import math
import sys
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ..progress import stage as progress_stage

# Each command imports what it uses inside itself (no import cycle is hidden that way: tests/test_imports.py counts
# these imports too): a command loads the report (matplotlib), the utility measures (scipy.sparse, scikit-learn),
# the experiments or Dask only when it uses them.
if TYPE_CHECKING:
    from ..config import Config

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="k-anonymise tables by generalisation in attribute hierarchies.")

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def _show_version(value: bool) -> None:
    if value:
        from .. import __version__
        typer.echo(f"hieranon {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                                help="Print the version and exit.")] = False) -> None:
    """k-anonymise tables by generalisation in attribute hierarchies."""


class UsageError(Exception):
    """Bad input: reported as one line on stderr, exit status 2."""


def _die(message: str, code: int = EXIT_BAD_INPUT):
    typer.echo(f"hieranon: error: {message}", err=True)
    raise typer.Exit(code)


def _known_errors():
    from ..config import ConfigError
    from ..hierarchy import HierarchyError
    from ..io import InputError
    from ..requirements import RequirementError
    from ..table import DataError
    return (ConfigError, HierarchyError, InputError, RequirementError, DataError, UsageError, ValueError, OSError)


QI_FORMS = ("NAME=HIERARCHY_FILE, NAME=suppress, NAME=intervals:5,10,20, NAME=mask:N, "
            "NAME=dates:month,quarter,year (or dates:dmy|mdy|ymd; a format after a second colon), NAME=groups:2,4 "
            "or NAME=mapping:FILE")


def _qi_builder(name: str, text: str, item: str):
    """A builder form of ``--qi`` (:func:`hieranon.config.builder_spec`) as the
    configuration's builder of that name; None when ``text`` names none."""
    from ..config import ConfigError, builder_spec

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


def _parse_params(param: list[str]) -> dict:
    if not param:
        return {}
    from ..files import excerpt
    from ..safeyaml import YAMLInputError, load_yaml
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


MISSING_MODES = ("error", "root", "value")

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
    "is an error, not a warning (default: the config's strict).", show_default=False)]
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
QuietOption = Annotated[bool, typer.Option("-q", "--quiet", help="No progress or tables.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the results as JSON on stdout.")]


def _checked_options(k: Optional[int], seed: Optional[int], missing: Optional[str], beta: Optional[float],
                     risk_threshold: Optional[float]) -> None:
    """The options whose bad values get a message naming the option."""
    if k is not None and k < 1:
        raise UsageError(f"-k {k}: k must be >= 1")
    if seed is not None and seed < 0:
        raise UsageError(f"--seed {seed}: expected a whole number >= 0")
    if missing is not None and missing not in MISSING_MODES:
        raise UsageError(f"--missing {missing!r}: expected one of {', '.join(MISSING_MODES)}")
    if beta is not None and not 1 <= beta < math.inf:
        raise UsageError(f"--beta {beta:g}: expected a finite number >= 1")
    if risk_threshold is not None:
        from ..risk import check_threshold
        try:
            check_threshold(risk_threshold, f"--risk-threshold {risk_threshold:g}")
        except ValueError as exc:
            raise UsageError(str(exc)) from None


def _parse_sensitive_hierarchies(items: Sequence[str]) -> dict:
    """``--sensitive-hierarchy ATTR=FILE`` options -> attribute -> Hierarchy."""
    from ..hierarchy import from_file

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


def _spec(config: Optional[Path | Config], qi: list[str], k: Optional[int] = None, require: Sequence[str] = (), *,
          seed: Optional[int] = None, missing: Optional[str] = None, beta: Optional[float] = None,
          risk_threshold: Optional[float] = None, l_diversity: Sequence[str] = (), t_closeness: Sequence[str] = (),
          sensitive_hierarchy: Sequence[str] = (), roles: Optional[dict] = None, **options):
    """The job: the configuration (a file, or one :func:`_config` read) with
    the command-line options laid over it
    (:meth:`AnonymizationSpec.with_overrides`; options not given are None and
    change nothing). ``roles``: columns per role (``identifiers``,
    ``sensitive``, ``insensitive``), added to the config's."""
    from ..spec import AnonymizationSpec

    _checked_options(k, seed, missing, beta, risk_threshold)
    privacy = _privacy_options(l_diversity, t_closeness, sensitive_hierarchy)
    cfg = _config(config) if isinstance(config, Path) else config
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


#: The option that gives each role (:data:`hieranon.roles.ROLES`), named when two roles contradict each other.
ROLE_OPTIONS = {"hierarchies": "--qi", "identifiers": "--identifier", "sensitive": "--sensitive",
                "insensitive": "--insensitive", "class_column": "--class-column", "count_column": "--count-column"}


def _role_origins(qis: dict, roles: dict, options: dict, privacy: Sequence) -> dict:
    """(role, column) -> the command-line option that gave it, for the spec's ``origins``."""
    from ..privacy import TCloseness

    given = {"hierarchies": list(qis), **{role: list(columns) for role, columns in roles.items()},
             **{role: [options[role]] for role in ("class_column", "count_column") if options.get(role) is not None}}
    origins = {(role, column): ROLE_OPTIONS[role] for role, columns in given.items() for column in columns}
    for m in privacy:
        origins[("sensitive", m.attribute)] = "--t-closeness" if isinstance(m, TCloseness) else "--l-diversity"
    return origins


def _config(path: Optional[Path]) -> Optional[Config]:
    """The configuration file, read once per command (None without one)."""
    from ..config import load
    return load(path) if path is not None else None


def _hierarchies(spec, data=None) -> dict:
    """The spec's hierarchies (builders read ``data``)."""
    from ..hierarchy import HierarchyError
    try:
        return spec.build_hierarchies(data)
    except HierarchyError as exc:
        raise UsageError(str(exc)) from None


def _require_rows(data, path: Path, what: str = "the table") -> None:
    if len(data) == 0:
        raise UsageError(f"{what} {path} has no rows (only a header)")


def _risk_summary(before, after, threshold: float) -> dict:
    """The risk figures of a result before and after, for --json."""
    def part(r):
        if r is None:
            return None
        return {"records": r.n_records, "records_at_risk": r.records_at_risk, "risk_max": r.risk_max,
                "risk_mean": r.risk_mean, "sample_uniques": r.sample_uniques, "achieved_k": r.achieved_k}
    return {"threshold": threshold, "before": part(before), "after": part(after)}


def _risk_rows(before, after, threshold: float) -> list[tuple[str, str]]:
    if before is None:
        return []
    return [(f"records at risk (risk above {threshold:.3g}) before / after",
             f"{before.records_at_risk} / {after.records_at_risk if after is not None else '-'}")]


def _configure_logging(quiet: bool, verbose: bool):
    level = logging.WARNING if quiet else (logging.DEBUG if verbose else logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def _status(quiet: bool, text: str):
    from contextlib import nullcontext
    if quiet:
        return nullcontext()
    from rich.console import Console
    return Console(stderr=True).status(text)


@contextmanager
def _progress(quiet: bool):
    """Show the progress events of the stages run inside as rich bars on
    stderr (nothing when ``quiet``; when stderr is not a terminal, only one
    line when kernels compile); yields the callback for :func:`hieranon.api.run`."""
    if quiet:
        yield None
        return
    from rich.console import Console

    from ..jit import COMPILE_STAGE
    from ..progress import reporting, rich_callback
    console = Console(stderr=True)
    draw, stop = rich_callback(console)
    said = False

    def show(ev):
        nonlocal said
        if ev.stage == COMPILE_STAGE and not console.is_terminal and not said:  # no bars: one line says why we wait
            said = True
            typer.echo(f"hieranon: {COMPILE_STAGE}...", err=True)
        draw(ev)

    try:
        with reporting(show):
            yield show
    finally:
        stop()


def _read_checked(path: Path, encoding: str, quiet: bool):
    """The input table, refused before reading when it would not fit in
    memory (:func:`hieranon.scale.check_fits`)."""
    from ..io import table_format
    from ..scale import check_fits

    if path.is_file():
        table_format(path)  # an unknown extension: the reader's message
        check_fits(path)
    size = path.stat().st_size / 2**20 if path.is_file() else 0
    with progress_stage(f"reading {path.name}", detail=f"{size:.0f} MiB"):
        return _read(path, encoding, None)


def _print_metrics(title: str, rows: list[tuple[str, str]], quiet: bool):
    if quiet:
        return
    from rich.console import Console
    from rich.table import Table
    table = Table(title=title, show_header=False)
    table.add_column("measure")
    table.add_column("value", justify="right")
    for name, value in rows:
        table.add_row(name, value)
    Console().print(table)


def _bound_rows(result) -> list[tuple[str, str]]:
    """The lower bound of ``anonymize --bound``, if computed."""
    b = result.lower_bound
    if b is None:
        return []
    exact = " (the optimum)" if b.optimal else ""
    meeting = "".join(f", {m}" for m in b.models)
    return [(f"lower bound of any output's distortion ratio (objective{meeting})" + exact, f"{b.ratio:.4f}"),
            ("output / lower bound", f"{result.gap_to_bound():.4f}")]


def _metric_rows(m) -> list[tuple[str, str]]:
    def f(x):
        return f"{x:.4f}" if isinstance(x, float) else str(x)
    rows = [
        ("records / rows", f"{m.n_records} / {m.n_rows}"),
        ("k achieved (smallest class)", f(m.achieved_k)),
        ("equivalence classes", f(m.n_classes)),
        ("distortion (objective)", f(m.distortion)),
        ("distortion ratio (objective)", f(m.distortion_ratio)),
        ("distortion ratio, uniform WHD", f(m.distortion_ratio_uniform)),
        ("distortion ratio, height WHD", f(m.distortion_ratio_height)),
        ("MAGE distortion", f(m.mage_distortion)),
        ("discernibility DM", f(m.discernibility)),
        ("CAVG", f(m.cavg)),
        ("inconsistency (max over attributes)", f(m.inconsistency)),
        ("modification rate", f(m.modification_rate)),
        ("precision Prec", f(m.precision)),
        ("distinct rows in / out", f"{m.distinct_rows_input} / {m.distinct_rows_output}"),
        ("suppressed records", f(m.suppressed_records)),
        ("prosecutor risk max / mean", f"{m.risk_max:.4f} / {m.risk_mean:.4f}"),
    ]
    if m.classification_metric is not None:
        rows.append(("classification metric CM", f(m.classification_metric)))
    per_req = m.achieved_k_per_requirement
    if len(per_req) > 1 or any(kk != m.achieved_k for kk in per_req.values()):  # not plain k over all QIs
        rows += [(f"k achieved for {req}", f(kk)) for req, kk in m.achieved_k_per_requirement.items()]
    for q, inc in zip(m.qi_names, m.inconsistency_per_attribute):
        rows.append((f"inconsistency of {q}", f(inc)))
    return rows


def _read(path: Path, encoding: str, fmt: Optional[str]):
    from ..io import read_table
    return read_table(path, encoding=encoding, fmt=fmt)


@app.command()
def anonymize(
    input: Path = typer.Argument(..., help="Input table (CSV with header, Parquet or Excel)."),
    output: Path = typer.Option(..., "-o", "--output", help="Output table; format from its extension."),
    config: ConfigOption = None,
    qi: QiOption = [],
    k: KOption = None,
    require: RequireOption = [],
    method: Optional[str] = typer.Option(None, "--method", "-m", help="Algorithm (default: recommended)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Repeat a run exactly: the seed of the method's "
                                       "random choices (default: a fixed one) and of --shuffle (default: fresh "
                                       "randomness); never written to any output."),
    weights: WeightsOption = None,
    beta: BetaOption = None,
    param: list[str] = typer.Option([], "--param", "-p", help="Method parameter KEY=VALUE; repeatable."),
    count_column: CountColumnOption = None,
    class_column: ClassColumnOption = None,
    missing: MissingOption = None,
    report: Optional[Path] = typer.Option(None, "--report", help="Write an HTML report here."),
    risk_threshold: RiskThresholdOption = None,
    l_diversity: LDiversityOption = [],
    t_closeness: TClosenessOption = [],
    sensitive_hierarchy: SensitiveHierarchyOption = [],
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite an existing output."),
    quiet: QuietOption = False,
    as_json: JsonOption = False,
    encoding: EncodingOption = "utf-8",
    fmt: Optional[str] = typer.Option(None, "--format", help="Output format: csv | parquet | excel."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Log progress details."),
    distributed: bool = typer.Option(False, "--distributed", help="Partition into blocks and anonymise them in "
                                     "parallel on Dask (a Parquet dataset directory in -> one out)."),
    whole_table: bool = typer.Option(False, "--whole-table", help="Anonymise the whole table in one process "
                                     "(default: chosen from the table's size, in blocks when that is faster)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler address (default: a "
                                            "local cluster)."),
    block_size: Optional[int] = typer.Option(None, "--block-size", help="Records per block (default 20000 with "
                                             "--distributed, else chosen with the plan)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Worker processes of a partitioned run."),
    bound: bool = typer.Option(False, "--bound", help="Also bound every local recoding's distortion from below "
                               "and print how far the output is from it (minutes on large tables)."),
    strict: StrictOption = None,
    identifier: IdentifierOption = [],
    identifier_action: IdentifierActionOption = None,
    sensitive: SensitiveOption = [],
    insensitive: InsensitiveOption = [],
    shuffle: Optional[bool] = typer.Option(None, "--shuffle/--no-shuffle", show_default=False,
                                           help="Release the rows in a random order, fresh on every run unless "
                                           "--seed is given (default: the config's shuffle)."),
    keep_order_map: Optional[Path] = typer.Option(None, "--keep-order-map", help="With --shuffle: also write the "
                                                  "permutation as a CSV input_row,output_row (keep it private)."),
    pseudonym_key: Optional[Path] = typer.Option(
        None, "--pseudonym-key", help="With --identifier-action pseudonym: a secret key file (at least 32 random "
        "bytes) so that the same identifier gets the same pseudonym across releases (default: a fresh key per "
        "run). Make one with: python -c \"import secrets; print(secrets.token_hex(32))\" > FILE"),
    public: bool = typer.Option(False, "--public", help="With --report: leave out everything computed on INPUT "
                                "(sample uniques, input class sizes, before-figures), for sharing outside."),
    numeric_output: Optional[str] = typer.Option(
        None, "--numeric-output", help="Generalised numbers in OUTPUT: label ([25, 50)) | range | midpoint | bounds "
        "(two numeric columns NAME_lower, NAME_upper); default: the config's numeric_output, else label."),
    max_suppression: Optional[str] = typer.Option(None, "--max-suppression", help="Suppress at most this share "
                                                  "('5%') or number (120) of records, each only where that lowers "
                                                  "the distortion (none or at least k are suppressed)."),
):
    """Anonymise INPUT and write the verified result to OUTPUT."""
    _configure_logging(quiet or as_json, verbose)
    if bound and distributed:
        _die("--bound needs the whole table in one process; leave out --distributed")
    if whole_table and distributed:
        _die("--whole-table and --distributed contradict each other; give one of them")
    if block_size is not None and block_size < 2:
        _die(f"--block-size {block_size}: expected a whole number >= 2")
    if workers is not None and workers < 1:
        _die(f"--workers {workers}: expected a whole number >= 1")
    dataset = distributed and input.is_dir()
    try:
        from ..result import AnonymizationError
        try:
            with _progress(quiet or as_json):
                cli_params = _parse_params(param)
                _check_numeric_output(numeric_output)
                if scheduler is not None:  # a malformed, closed or foreign address: refused before any work
                    from ..algorithms.partition import probe_scheduler
                    probe_scheduler(scheduler)
                budget = _budget_option(max_suppression)
                cfg = _config(config)
                spec = _spec(cfg, qi, k, require, seed=seed, missing=missing, beta=beta,
                             risk_threshold=risk_threshold, method=method, weights=weights, params=cli_params,
                             l_diversity=l_diversity, t_closeness=t_closeness, sensitive_hierarchy=sensitive_hierarchy,
                             count_column=count_column, class_column=class_column, strict=strict, shuffle=shuffle,
                             max_suppression=budget, identifier_action=identifier_action,
                             numeric_output=numeric_output, pseudonym_key=_key_option(pseudonym_key),
                             roles={"identifiers": identifier, "sensitive": sensitive, "insensitive": insensitive})
                if dataset and spec.numeric_output != "label":
                    raise UsageError("--numeric-output applies to one table; a Parquet dataset is written with labels")
                _check_outputs({"output": output, "report": report, "order map": keep_order_map}, force,
                               _files_read(spec, cfg, sensitive_hierarchy, input=input, configuration=config,
                                           pseudonym_key_file=pseudonym_key),
                               directory=("output",) if dataset else ())
                if not dataset:
                    from ..io import table_format
                    table_format(output, fmt)  # an unknown extension is refused before any work
                if pseudonym_key is not None and spec.identifier_action != "pseudonym":
                    raise UsageError("--pseudonym-key is the key of the pseudonyms; add --identifier-action pseudonym "
                                     "(or leave the key out)")
                if keep_order_map is not None and not spec.shuffle:
                    raise UsageError("--keep-order-map writes the permutation of --shuffle; add --shuffle")
                if distributed and spec.shuffle:
                    raise UsageError("--shuffle needs the whole table in one process; leave out --distributed")
                data = None if dataset else _read_checked(input, encoding, quiet or as_json)
                if distributed:
                    _quiet_dask(verbose)
                    spec = spec.partitioned(block_size=block_size or 20_000, executor="dask", scheduler=scheduler,
                                            n_workers=workers)
                else:
                    if scheduler is not None:
                        _quiet_dask(verbose)
                    partition = {"block_size": block_size, "n_workers": workers, "scheduler": scheduler}
                    spec = spec.with_overrides(execution="whole" if whole_table else None,
                                               partition={**spec.partition, **{n: v for n, v in partition.items()
                                                                                if v is not None}} or None)
                if dataset:
                    result, html = _anonymize_dataset(input, output, spec, report, force, quiet or as_json, public)
                else:
                    result, html = _anonymize_table(input, output, data, spec, report, fmt, encoding, bound,
                                                    quiet or as_json, keep_order_map, public, force)
        except AnonymizationError as exc:
            _die(str(exc).splitlines()[0], EXIT_FAILED)
    except _known_errors() + (FileExistsError,) as exc:
        _die(_one_line(exc))
    risk_before, risk_after, _ = result.risk()
    threshold = result.risk_threshold
    if as_json:
        typer.echo(json.dumps({**result.summary(), "risk": _risk_summary(risk_before, risk_after, threshold)},
                              default=_json_default, indent=2))
    else:
        blocks = (f", {result.info['blocks']} blocks on {result.info['executor']}" if "executor" in result.info
                  else "")
        if result.plan is not None and not blocks:
            blocks = ", whole table"
        _print_metrics(f"{result.method} on {input.name} -> {output.name} (verified{blocks})",
                       _metric_rows(result.metrics) + _missing_rows(result) + _suppression_rows(result)
                       + _bound_rows(result)
                       + _risk_rows(risk_before, risk_after, threshold) + result.privacy().rows(), quiet)
        if not quiet and result.roles is not None:
            for line in result.roles.linkage_lines():
                _warn(line)
        if html is not None and not quiet:
            typer.echo(f"report written to {report}", err=True)
    raise typer.Exit(EXIT_OK)


def _key_option(path: Optional[Path]) -> Optional[bytes]:
    """``--pseudonym-key FILE``: the key it holds (a bad file: one line naming it)."""
    if path is None:
        return None
    from ..pseudonyms import read_key
    try:
        return read_key(path, "--pseudonym-key")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _check_numeric_output(option: Optional[str]) -> None:
    """``--numeric-output``, refused in one line naming the option when unknown."""
    from ..io import NUMERIC_OUTPUTS
    if option is not None and option not in NUMERIC_OUTPUTS:
        raise UsageError(f"--numeric-output {option!r}: expected one of {', '.join(NUMERIC_OUTPUTS)}")


def _missing_rows(result) -> list[tuple[str, str]]:
    """Per QI with missing cells: how many, and how they were published
    (:func:`hieranon.builders.missing_cells`) -- kept apart from the cells
    the anonymisation generalised or suppressed."""
    from ..builders import missing_cells

    rows = []
    for name, (n, kept) in missing_cells(result).items():
        rows.append((f"missing cells of {name} (not generalisation): published missing / as *", f"{kept} / {n - kept}"))
    return rows


def _budget_option(text: Optional[str]):
    """``--max-suppression`` as a budget (a bad form: one line naming the option)."""
    if text is None:
        return None
    from ..algorithms.suppression import parse_budget
    try:
        return parse_budget(text, f"--max-suppression {text}")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _suppression_rows(result) -> list[tuple[str, str]]:
    """What a suppression budget did: records suppressed out of the budget, and why."""
    s = result.info.get("suppression")
    if not s:
        return []
    return [("suppression budget", f"{s['budget']} ({s['budget_records']} records): {s['suppressed_records']} "
                                   f"suppressed -- {s['reason']}"),
            ("distortion ratio without suppression", f"{s['distortion_ratio_without']:.4f}")]


def _warn(line: str) -> None:
    typer.echo(f"hieranon: warning: {line}", err=True)


def _run_with_warnings(data, spec, **kwargs):
    """:func:`hieranon.api.run`, its warnings (columns without a role...)
    printed as one line each on stderr."""
    import os
    import warnings

    from ..api import run
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(data, spec, **kwargs)
    for w in caught:  # hieranon's own warnings; a library's (dask's sockets, ports) only with -v
        if f"hieranon{os.sep}" in str(w.filename) and issubclass(w.category, UserWarning):
            _warn(" ".join(str(w.message).split()))
        elif logging.getLogger("hieranon").isEnabledFor(logging.DEBUG):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return result


def _anonymize_table(input: Path, output: Path, data, spec, report: Optional[Path], fmt: Optional[str],
                     encoding: str, bound: bool, quiet: bool, order_map: Optional[Path] = None,
                     public: bool = False, force: bool = False):
    """One table in memory: anonymise, render the report, write both (numeric
    quasi-identifiers in the spec's form, :func:`hieranon.io.numeric_output`)."""
    from ..io import numeric_columns, numeric_output, write_table

    _require_rows(data, input)
    with progress_stage("building the hierarchies"):
        hierarchies = _hierarchies(spec, data)
    numeric_columns(data.columns, hierarchies, spec.numeric_output)  # refused before any work
    result = _run_with_warnings(data, spec, hierarchies=hierarchies, lower_bound=bound)
    html = None
    if report is not None:  # rendered before anything is written: a failure leaves no output behind
        from ..report import render_report
        with _status(quiet, "writing the report..."):
            html = render_report(None, result, input_name=input.name, output_name=output.name, public=public)
    # a CSV output of a CSV input keeps its separator and encoding
    written = numeric_output(result.data, result.hierarchies, spec.numeric_output)
    with progress_stage(f"writing {output.name}", detail=f"{len(result.data)} rows"):
        write_table(written, output, fmt=fmt or (None if output.suffix else input.suffix.lstrip(".") or None),
                    source=input, source_encoding=encoding, overwrite=force)
    written = [output]
    if html is not None:
        _write_report_or_undo(html, report, written, force)
    if order_map is not None:
        _write_report_or_undo(result.order_map().to_csv(index=False), order_map, written, force)
    return result, html


def _anonymize_dataset(input: Path, output: Path, spec, report: Optional[Path], force: bool, quiet: bool,
                       public: bool = False):
    """--distributed on a Parquet dataset directory: stream it through
    :func:`hieranon.scale.anonymize_parquet` into an output directory; the
    report is built from the integer codes (the sample shows the first rows
    of the output)."""
    from ..scale import anonymize_parquet, iter_parquet

    params = spec.params
    with _status(quiet, f"anonymising the dataset {input} in blocks of {params.get('block_size')}..."):
        res = anonymize_parquet(input, output, spec, block_size=params.get("block_size", 20_000),
                                executor=params.get("executor", "dask"), scheduler=params.get("scheduler"),
                                n_workers=params.get("n_workers"), force=force)
    result = res.result
    html = None
    if report is not None:
        from ..report import render_report
        sample = next(iter_parquet(output, batch_rows=20), None)
        with _status(quiet, "writing the report..."):
            html = render_report(None, result, input_name=input.name, output_name=output.name, sample=sample,
                                 public=public)
        _write_report_or_undo(html, report, [output], force)
    return result, html


def _write_report_or_undo(text: str, path: Path, written: list[Path], force: bool) -> None:
    """Write a text beside the output (the report, the order map), replacing
    an existing file only with ``force``; when that fails, remove the files
    this run has ``written`` (the output first), so that it leaves nothing
    behind; else add ``path`` to them."""
    import shutil

    from ..io import write_text
    try:
        write_text(text, path, overwrite=force)
    except BaseException:
        for done in written:
            if done.is_dir():
                shutil.rmtree(done, ignore_errors=True)
            else:
                done.unlink(missing_ok=True)
        raise
    written.append(path)


def _quiet_dask(verbose: bool) -> None:
    """Dask's own INFO lines and shutdown tracebacks stay silent unless -v."""
    if verbose:
        return
    import os
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")
    for name in ("distributed", "dask", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _one_line(exc: BaseException) -> str:
    """An error as one readable line (an OS error names its file and cause)."""
    from ..files import os_error_message, shorten
    if isinstance(exc, OSError) and (exc.filename is not None or exc.errno):
        return os_error_message(exc)
    return shorten(exc, 1000) or type(exc).__name__


def _files_read(spec=None, cfg: Optional[Config] = None, sensitive_hierarchy: Sequence[str] = (),
                **named: Optional[Path]) -> dict:
    """Every file a run reads, ``{what: path}``: those ``named`` (the input
    table, the configuration...; None left out), the spec's hierarchy and
    mapping files, the configuration's sensitive hierarchies and pseudonym
    key, and the ``--sensitive-hierarchy`` files."""
    read = {what.replace("_", " "): path for what, path in named.items() if path is not None}
    for name, h in (spec.hierarchies.items() if spec is not None else ()):
        if getattr(h, "file", None) is not None:
            read[f"hierarchy file of {name!r}"] = h.file
        elif getattr(h, "builder", None) == "mapping" and isinstance(h.argument, (str, Path)):
            read[f"mapping file of {name!r}"] = h.argument
    if cfg is not None:
        for attr, path in cfg.sensitive_hierarchies.items():
            read[f"hierarchy file of the sensitive {attr!r}"] = path
        if cfg.pseudonym_key is not None:
            read["configuration's pseudonym key file"] = cfg.pseudonym_key
    for item in sensitive_hierarchy:
        attr, _, path = (x.strip() for x in item.partition("="))
        if path:
            read[f"hierarchy file of the sensitive {attr!r}"] = Path(path)
    return read


def _check_outputs(outputs: dict, force: bool, read: Optional[dict] = None, directory: Sequence[str] = ()) -> None:
    """The one check of a run's outputs (``{what: path}``, None left out),
    before any work: no output is a file the run reads (``read``, see
    :func:`_files_read`) or another output, even with --force
    (:func:`hieranon.files.check_distinct_paths`); each is a file name (a
    directory for those named in ``directory``) in an existing directory,
    and does not exist yet unless --force."""
    from ..files import check_distinct_paths

    check_distinct_paths(outputs, read)
    for what, output in outputs.items():
        if output is None:
            continue
        output = Path(output)
        if output.is_dir() and what not in directory:
            raise UsageError(f"{what} {output} is a directory; give a file name")
        if (output.exists() or output.is_symlink()) and not force:
            raise UsageError(f"{what} {output} already exists; pass --force to overwrite it")
        if not output.parent.exists():
            raise UsageError(f"{what} directory {output.parent} does not exist")


def _json_default(x):
    import numpy as np
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


@app.command()
def check(
    input: Path = typer.Argument(..., help="Table to check as it is."),
    config: ConfigOption = None,
    qi: QiOption = [],
    k: KOption = None,
    require: RequireOption = [],
    count_column: CountColumnOption = None,
    class_column: ClassColumnOption = None,
    missing: MissingOption = None,
    weights: WeightsOption = None,
    beta: BetaOption = None,
    risk_threshold: RiskThresholdOption = None,
    l_diversity: LDiversityOption = [],
    t_closeness: TClosenessOption = [],
    sensitive_hierarchy: SensitiveHierarchyOption = [],
    as_json: JsonOption = False,
    quiet: QuietOption = False,
    encoding: EncodingOption = "utf-8",
    strict: StrictOption = None,
    identifier: IdentifierOption = [],
    sensitive: SensitiveOption = [],
    insensitive: InsensitiveOption = [],
    suppressed: SuppressedOption = "class",
):
    """Report the k a table achieves as it is, its risk, its class-size
    distribution, the classes below each requirement, and the columns without
    a role or at risk of linkage (near-unique, or nearly a copy of a
    quasi-identifier)."""
    _configure_logging(True, False)
    try:
        from ..privacy import assess_privacy
        from ..risk import assess
        from ..spec import build_problem
        data = _read_checked(input, encoding, True)
        _require_rows(data, input)
        spec = _spec(config, qi, k, require, missing=missing, beta=beta, risk_threshold=risk_threshold,
                     weights=weights, count_column=count_column, class_column=class_column, l_diversity=l_diversity,
                     t_closeness=t_closeness, sensitive_hierarchy=sensitive_hierarchy, strict=strict,
                     roles={"identifiers": identifier, "sensitive": sensitive, "insensitive": insensitive})
        from ..roles import assess_roles
        roles = assess_roles(data, spec)
        if spec.strict and roles.unclassified:
            raise UsageError(f"strict: {roles.warning()}")
        # a published (already generalised) table can be checked too
        _check_suppressed(suppressed)
        prepared = build_problem(data, spec, generalised=True, hierarchies=_hierarchies(spec, data))
        reqs = prepared.problem.requirements
        table, models = _without_suppressed(prepared) if suppressed == "removed" else \
            (prepared.table, prepared.problem.privacy)
        result = assess(table, reqs, threshold=spec.threshold_for(reqs))
        privacy = assess_privacy(models, table.codes, counts=table.counts, sensitive=spec.sensitive)
        k_max = max((r.k for r in reqs), default=None)  # class-size bins are chosen relative to it
    except _known_errors() as exc:
        _die(_one_line(exc))
    ok = result.ok and privacy.ok
    if as_json:
        typer.echo(json.dumps({**result.as_dict(), "ok": ok, "class_size_distribution": result.size_distribution(k_max),
                               "privacy": privacy.as_dict(), **roles.as_dict()}, default=_json_default, indent=2))
    elif not quiet:
        _print_metrics(f"check of {input.name}", result.rows(k_max, distribution=True) + privacy.rows(), False)
        for line in ([roles.warning()] if roles.unclassified else []) + roles.linkage_lines():
            _warn(line)
    raise typer.Exit(EXIT_OK if ok else EXIT_FAILED)


def _without_suppressed(prepared):
    """The checked table and its privacy models without the rows printing '*'
    everywhere (the 'removed' convention: suppressed records not published)."""
    import numpy as np

    from ..table import EncodedTable

    t = prepared.table
    keep = np.flatnonzero(~(t.codes == 0).all(axis=1))
    if len(keep) == 0:
        raise UsageError("--suppressed removed: every row is suppressed ('*' in every quasi-identifier); nothing "
                         "is left to check")
    return (EncodedTable(t.codes[keep], t.hierarchies, t.qi_names, t.counts[keep]),
            [b.subset(keep) for b in prepared.problem.privacy])


def _unshuffle(anon, order_map: Path):
    """ANONYMISED's rows put back in the input's order through an order map
    (input_row,output_row)."""
    import numpy as np

    table = _read(order_map, "utf-8", None)
    if list(table.columns) != ["input_row", "output_row"]:
        raise UsageError(f"--order-map {order_map}: expected the two columns input_row,output_row "
                         f"(got {list(table.columns)})")
    try:
        table = table.astype(np.int64)
    except (ValueError, TypeError):
        raise UsageError(f"--order-map {order_map}: expected whole row numbers in input_row,output_row") from None
    out_rows = table.sort_values("input_row")["output_row"].to_numpy()
    if len(out_rows) != len(anon) or not np.array_equal(np.sort(out_rows), np.arange(len(anon))) \
            or not np.array_equal(np.sort(table["input_row"].to_numpy()), np.arange(len(anon))):
        raise UsageError(f"--order-map {order_map}: not a permutation of the {len(anon)} rows of the anonymised "
                         "table")
    return anon.iloc[out_rows].reset_index(drop=True)


def _evaluate_pair(original: Path, anonymised: Path, encoding: str, spec, method: str, bound: bool,
                   suppressed: str = "class", order_map: Optional[Path] = None, utility: Optional[dict] = None):
    """Read an (original, anonymised) pair and evaluate it under ``spec``
    (``method``: the name the results show); flag a verified pair that keeps
    the input's row order. ``utility``: ``{"target": COL or None}`` also
    computes the utility report (cached on the result, see :func:`_utility_of`)."""
    from ..report import evaluate_pair

    orig = _read_checked(original, encoding, True)
    _require_rows(orig, original, "the original table")
    anon = _read_checked(anonymised, encoding, True)
    if order_map is not None:
        anon = _unshuffle(anon, order_map)
    built = _hierarchies(spec, orig)
    from ..io import read_numeric_output
    anon = read_numeric_output(anon, built)  # range and bounds forms of --numeric-output back to labels
    result = evaluate_pair(orig, anon, spec=spec, built=built, lower_bound=bound, method=method,
                           suppressed_records=suppressed)
    result.info["keeps_input_order"] = order_map is None and len(orig) > 1 and bool(result.verification.ok)
    if utility is not None:
        _utility_of(result, orig, utility.get("target"))
    return result


def _check_suppressed(option: str) -> None:
    """``--suppressed``, refused in one line when neither convention."""
    if option not in ("class", "removed"):
        raise UsageError(f"--suppressed {option!r}: expected class or removed")


def _method_named(option: Optional[str], cfg: Optional[Config]) -> str:
    """The method an existing table is shown under: ``--method``, else the
    configuration's, else unknown."""
    return option or (cfg.method if cfg is not None else None) or "unknown (existing table)"


# ------------------------------------------------------------------ utility (evaluate/report --utility)
def _utility_of(result, orig, target: Optional[str]):
    """The utility report of an evaluated pair (None when ANONYMISED cannot be
    read against the hierarchies); the target's values come from ORIGINAL."""
    if target is not None and target not in orig.columns:
        raise UsageError(f"--target {target!r}: no such column in the original table (its columns: "
                         f"{', '.join(map(str, list(orig.columns)[:20]))})")
    if result.codes is None:
        return None
    try:
        return result.utility(target, original=orig)
    except ValueError as exc:
        raise UsageError(f"--utility: {exc}") from None


def _utility_rows(result) -> list[tuple[str, str]]:
    u = result.risk_cache.get("utility:last")
    if u is None:
        return [("utility", "not available: ANONYMISED does not generalise ORIGINAL (see the verification)")]
    return u.rows()


def _utility_json(result) -> dict:
    u = result.risk_cache.get("utility:last")
    return {"utility": u.as_dict() if u is not None else None}


def _order_warning(result, quiet: bool) -> None:
    if result.info.get("keeps_input_order") and not quiet:
        _warn("the anonymised table keeps the original's row order: whoever knows that order links every row "
              "back; release it with anonymize --shuffle")


@app.command()
def evaluate(
    original: Path = typer.Argument(..., help="The original table."),
    anonymised: Path = typer.Argument(..., help="The anonymised table."),
    config: ConfigOption = None,
    qi: QiOption = [],
    k: KOption = None,
    require: RequireOption = [],
    count_column: CountColumnOption = None,
    class_column: ClassColumnOption = None,
    weights: WeightsOption = None,
    beta: BetaOption = None,
    missing: MissingOption = None,
    risk_threshold: RiskThresholdOption = None,
    l_diversity: LDiversityOption = [],
    t_closeness: TClosenessOption = [],
    sensitive_hierarchy: SensitiveHierarchyOption = [],
    as_json: JsonOption = False,
    quiet: QuietOption = False,
    encoding: EncodingOption = "utf-8",
    bound: bool = typer.Option(False, "--bound", help="Also bound every local recoding's distortion from below "
                               "and print how far ANONYMISED is from it (minutes on large tables)."),
    suppressed: SuppressedOption = "class",
    order_map: OrderMapOption = None,
    utility: UtilityOption = False,
    target: TargetOption = None,
):
    """Print every metric of ANONYMISED against ORIGINAL and verify it (ANONYMISED may come from any tool,
    e.g. ARX); with --utility, also what the release keeps for analysis."""
    _configure_logging(True, False)
    try:
        _check_suppressed(suppressed)
        cfg = _config(config)
        spec = _spec(cfg, qi, k, require, count_column=count_column, class_column=class_column, weights=weights,
                     beta=beta, missing=missing, risk_threshold=risk_threshold, l_diversity=l_diversity,
                     t_closeness=t_closeness, sensitive_hierarchy=sensitive_hierarchy)
        pair = _evaluate_pair(original, anonymised, encoding, spec, _method_named(None, cfg), bound, suppressed,
                              order_map, utility={"target": target} if utility or target is not None else None)
        report, metrics = pair.verification, pair.metrics
    except _known_errors() as exc:
        _die(_one_line(exc))
    if as_json:
        typer.echo(json.dumps({"verified": report.ok, "verification": report.summary(),
                               "metrics": metrics.as_dict() if metrics else None, **pair.bound_summary(),
                               "privacy": pair.privacy().as_dict(),
                               **(_utility_json(pair) if utility or target is not None else {})},
                              default=_json_default, indent=2))
    elif not quiet:
        if metrics is not None:
            _print_metrics(f"{anonymised.name} against {original.name}",
                           _metric_rows(metrics) + _bound_rows(pair) + pair.privacy().rows(), False)
        if utility or target is not None:
            _print_metrics(f"utility of {anonymised.name}", _utility_rows(pair), False)
            u = pair.risk_cache.get("utility:last")
            if u is not None and u.target is not None:
                typer.echo(f"utility: {u.compared}; relative = anonymised / original")
        typer.echo(_verdict_line(report))
        _order_warning(pair, quiet)
    raise typer.Exit(EXIT_OK if report.ok else EXIT_FAILED)


def _verdict_line(report) -> str:
    """VERIFIED / VERIFICATION FAILED and the summary, the verdict said once."""
    summary = report.summary()
    if report.ok:
        return "VERIFIED: " + summary.removeprefix("verified: ")
    return "VERIFICATION FAILED" + (summary[len("verification FAILED"):] if summary.startswith("verification FAILED")
                                    else ": " + summary)


@app.command("report")
def report_command(
    original: Path = typer.Argument(..., help="The original table."),
    anonymised: Path = typer.Argument(..., help="The anonymised table (made by hieranon or elsewhere)."),
    output: Path = typer.Option(..., "-o", "--output", help="The HTML report to write."),
    config: ConfigOption = None,
    qi: QiOption = [],
    k: KOption = None,
    require: RequireOption = [],
    method: Optional[str] = typer.Option(None, "--method", "-m", help="Method that made ANONYMISED (shown)."),
    count_column: CountColumnOption = None,
    class_column: ClassColumnOption = None,
    weights: WeightsOption = None,
    beta: BetaOption = None,
    missing: MissingOption = None,
    risk_threshold: RiskThresholdOption = None,
    l_diversity: LDiversityOption = [],
    t_closeness: TClosenessOption = [],
    sensitive_hierarchy: SensitiveHierarchyOption = [],
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite an existing report."),
    quiet: QuietOption = False,
    as_json: JsonOption = False,
    encoding: EncodingOption = "utf-8",
    bound: bool = typer.Option(False, "--bound", help="Also show a lower bound of every local recoding's "
                               "distortion and how far ANONYMISED is from it (minutes on large tables)."),
    order_map: OrderMapOption = None,
    public: bool = typer.Option(False, "--public", help="Leave out everything computed on ORIGINAL (sample "
                                "uniques, input class sizes, before-figures), for sharing outside."),
    utility: UtilityOption = False,
    target: TargetOption = None,
    suppressed: SuppressedOption = "class",
):
    """Write the HTML report of an existing (ORIGINAL, ANONYMISED) pair.

    The report is written even when ANONYMISED fails verification (it shows
    why); the exit status is then 1."""
    _configure_logging(True, False)
    try:
        from ..io import write_text
        from ..report import render_report

        _checked_options(k, None, missing, beta, risk_threshold)
        _check_suppressed(suppressed)
        doing = "verifying and measuring" + (" and bounding the optimum" if bound else "")
        with _status(quiet or as_json, doing + "..."):
            cfg = _config(config)
            spec = _spec(cfg, qi, k, require, count_column=count_column, class_column=class_column,
                         weights=weights, beta=beta, missing=missing, risk_threshold=risk_threshold,
                         l_diversity=l_diversity, t_closeness=t_closeness, sensitive_hierarchy=sensitive_hierarchy)
            _check_outputs({"report": output}, force, _files_read(spec, cfg, sensitive_hierarchy, input=original,
                                                                 anonymised_table=anonymised, configuration=config,
                                                                 order_map=order_map))
            result = _evaluate_pair(original, anonymised, encoding, spec, _method_named(method, cfg), bound,
                                    suppressed, order_map=order_map,
                                    utility={"target": target} if (utility or target is not None) and not public
                                    else None)
            html = render_report(None, result, input_name=original.name, output_name=anonymised.name,
                                 public=public)
            risk_before, risk_after, _ = result.risk()
        write_text(html, output, overwrite=force)
    except _known_errors() as exc:
        _die(_one_line(exc))
    ok = bool(result.verification.ok)
    threshold = result.risk_threshold
    if as_json:
        typer.echo(json.dumps({"verified": ok, "verification": result.verification.summary(),
                               "metrics": result.metrics.as_dict() if result.metrics else None,
                               "risk": _risk_summary(risk_before, risk_after, threshold),
                               **result.bound_summary(), "privacy": result.privacy().as_dict(),
                               "report": str(output),
                               **(_utility_json(result) if (utility or target is not None) and not public else {})},
                              default=_json_default, indent=2))
    elif not quiet:
        typer.echo(_verdict_line(result.verification), err=not ok)
        _order_warning(result, quiet)
        for name, value in _bound_rows(result) + _risk_rows(risk_before, risk_after, threshold):
            typer.echo(f"{name}: {value}")
        typer.echo(f"report written to {output}", err=True)
    raise typer.Exit(EXIT_OK if ok else EXIT_FAILED)


hierarchy_app = typer.Typer(no_args_is_help=True, help="Build hierarchies from data and check data against them.")
app.add_typer(hierarchy_app, name="hierarchy")


HIERARCHY_SEPARATORS = (";", ",", "|", "\t")


def _split_numbers(text: str, option: str) -> list[float]:
    try:
        values = [float(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise UsageError(f"{option} {text!r}: expected comma-separated numbers like 5,10,20") from None
    if not values:
        raise UsageError(f"{option} {text!r}: expected comma-separated numbers like 5,10,20")
    bad = [v for v in values if not (math.isfinite(v) and v > 0)]
    if bad:
        raise UsageError(f"{option} {text!r}: {bad[0]:g} is not a positive finite width; expected comma-separated "
                         "numbers like 5,10,20")
    return [int(v) if v.is_integer() else v for v in values]


@hierarchy_app.command("build")
def hierarchy_build(
    column: str = typer.Option(..., "--column", help="The column to build the hierarchy of."),
    input: Path = typer.Option(..., "--input", "-i", help="The table holding the column."),
    intervals: Optional[str] = typer.Option(None, "--intervals", help="Interval widths, e.g. 5,10,20: [25, 30) -> "
                                            "[20, 30) -> [20, 40) -> *."),
    origin: float = typer.Option(0, "--origin", help="Where interval bins are aligned (with --intervals)."),
    mask: Optional[int] = typer.Option(None, "--mask", help="Mask fixed-length codes of N characters."),
    dates: Optional[str] = typer.Option(None, "--dates", help="Date levels, finest first, of day, week, month, "
                                        "quarter, year, decade (e.g. month,quarter,year); or an order dmy | mdy | "
                                        "ymd (month, year)."),
    date_format: Optional[str] = typer.Option(None, "--date-format", help="strftime format of the dates (default: "
                                              "ISO 8601, with or without a time and a zone)."),
    groups: Optional[str] = typer.Option(None, "--groups", help="Group sizes, e.g. 2,4: consecutive values (in "
                                         "numeric or text order) in blocks of 2, then 4."),
    mapping: Optional[Path] = typer.Option(None, "--mapping", help="A file of rows value;group[;supergroup...]."),
    suppress: bool = typer.Option(False, "--suppress", help="Suppression only: value -> *."),
    missing: Optional[str] = typer.Option(None, "--missing", help="value: give empty cells a leaf 'missing' under "
                                          "the root (anonymize --missing value)."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="ARX CSV file to write (default: stdout)."),
    sep: str = typer.Option(";", "--sep", help="Separator of the ARX CSV output."),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite an existing output."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages."),
    encoding: str = typer.Option("utf-8", "--encoding", help="Text encoding of CSV input."),
):
    """Build an ARX-format hierarchy of COLUMN from the values in a table
    (the same hierarchy as --qi COLUMN=BUILDER and the configuration's
    builders make)."""
    _configure_logging(True, False)
    try:
        from ..config import ConfigError, HierarchySpec, builder_spec

        chosen = [name for name, given in (("--intervals", intervals is not None), ("--mask", mask is not None),
                                           ("--dates", dates is not None), ("--groups", groups is not None),
                                           ("--mapping", mapping is not None), ("--suppress", suppress)) if given]
        if len(chosen) != 1:
            raise UsageError("give exactly one of --intervals, --mask, --dates, --groups, --mapping, --suppress"
                             + (f" (got {', '.join(chosen)})" if chosen else ""))
        if mask is not None and mask < 1:
            raise UsageError(f"--mask {mask}: the code length must be >= 1")
        if missing not in (None, "value"):
            raise UsageError(f"--missing {missing!r}: expected value (or leave it out)")
        if date_format is not None and dates is None:
            raise UsageError("--date-format goes with --dates")
        if sep not in HIERARCHY_SEPARATORS:
            raise UsageError(f"--sep {sep!r}: expected one of ; , | or a tab (the separators a hierarchy file is "
                             "read with)")
        if not math.isfinite(origin):
            raise UsageError(f"--origin {origin}: expected a finite number")
        if output is not None:
            _check_outputs({"output": output}, force, _files_read(input=input, mapping_file=mapping))
        try:
            if intervals is not None:
                spec = builder_spec(column, f"intervals:{intervals}")
                spec.argument = (spec.argument[0], int(origin) if origin.is_integer() else origin)
            elif mask is not None:
                spec = HierarchySpec(column, builder="mask", argument=mask)
            elif dates is not None:
                spec = builder_spec(column, f"dates:{dates}" + (f":{date_format}" if date_format else ""))
            elif groups is not None:
                spec = builder_spec(column, f"groups:{groups}")
            elif mapping is not None:
                spec = HierarchySpec(column, builder="mapping", argument=mapping)
            else:
                spec = HierarchySpec(column, builder="suppress")
        except ConfigError as exc:
            option = chosen[0]
            raise UsageError(f"{option} {excerpt_option(exc, column)}") from None
        data = _read(input, encoding, None)
        if column not in data.columns:
            raise UsageError(f"column {column!r} is not in {input} (its columns: {list(data.columns)[:20]})")
        h = spec.build(data, "value" if missing else "error")
        from ..cells import is_missing
        n_empty = int(is_missing(data[column]).sum())
        if n_empty and not missing and not quiet:
            _warn(f"column {column!r} has {n_empty} empty cell(s), left out of the hierarchy: anonymise them with "
                  "--missing root (already suppressed), or rebuild with --missing value (a leaf 'missing')")
        clash = next((label for label in h.labels if sep in label), None)
        if clash is not None:
            from ..files import excerpt
            raise UsageError(f"--sep {sep!r} occurs in the label {excerpt(clash)}; choose a separator no value "
                             "contains (; , | or a tab)")
        text = h.to_arx_csv(sep)
        if output is None:
            typer.echo(text, nl=False)
        else:
            from ..io import write_text
            write_text(text, output, overwrite=force)
    except _known_errors() as exc:
        _die(_one_line(exc))
    if output is not None and not quiet:
        typer.echo(f"hierarchy of {column!r}: {len(h.leaf_index)} leaves, {h.height} levels, written to {output}",
                   err=True)
    raise typer.Exit(EXIT_OK)


def excerpt_option(exc: Exception, column: str) -> str:
    """A configuration error about a builder, without its configuration key."""
    return str(exc).removeprefix(f"quasi_identifiers.{column}").lstrip(".: ")


def _missing_values(values, h) -> list[str]:
    """Distinct non-empty data values that are not leaves of ``h``."""
    import pandas as pd

    from ..hierarchy import value_to_label
    labels = {value_to_label(v) for v in pd.unique(values.dropna())}
    labels.discard("")
    return sorted(labels - set(h.leaf_index))


@hierarchy_app.command("check")
def hierarchy_check(
    input: Path = typer.Argument(..., help="The table whose values must be in the hierarchies."),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="YAML configuration."),
    qi: list[str] = typer.Option([], "--qi", help="NAME=HIERARCHY_FILE (ARX CSV format); repeatable."),
    as_json: bool = typer.Option(False, "--json", help="Print the missing values as JSON."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Print nothing; the exit status says."),
    encoding: str = typer.Option("utf-8", "--encoding", help="Text encoding of CSV input."),
):
    """List the values of each quasi-identifier column missing from its
    hierarchy (exit status 1 when there are any)."""
    _configure_logging(True, False)
    try:
        from ..table import check_columns

        data = _read(input, encoding, None)
        hierarchies = _hierarchies(_spec(config, qi), data)
        check_columns(data, list(hierarchies))
        found = {}
        for name, h in hierarchies.items():
            found[name] = {"missing": _missing_values(data[name], h), "distinct_values": int(data[name].nunique()),
                           "leaves": len(h.leaf_index), "height": h.height}
    except _known_errors() as exc:
        _die(_one_line(exc))
    ok = not any(v["missing"] for v in found.values())
    if as_json:
        typer.echo(json.dumps({"ok": ok, "attributes": found}, indent=2))
    elif not quiet:
        for name, v in found.items():
            if v["missing"]:
                shown = ", ".join(repr(x) for x in v["missing"][:20])
                more = f" and {len(v['missing']) - 20} more" if len(v["missing"]) > 20 else ""
                typer.echo(f"{name}: {len(v['missing'])} value(s) missing from the hierarchy: {shown}{more}")
            else:
                typer.echo(f"{name}: ok ({v['distinct_values']} distinct values, all among the "
                           f"{v['leaves']} leaves; {v['height']} levels)")
    raise typer.Exit(EXIT_OK if ok else EXIT_FAILED)


@app.command("config-template")
def config_template():
    """Print an annotated example configuration."""
    from ..config import TEMPLATE
    typer.echo(TEMPLATE, nl=False)


@app.command()
def methods(as_json: JsonOption = False):
    """List the anonymisation methods: family, paper, what each needs and
    supports (several requirements, suppression, privacy models)."""
    from ..algorithms.registry import available_methods, method_info

    infos = [method_info(m) for m in available_methods()]
    if as_json:
        typer.echo(json.dumps(infos, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    def supports(i) -> str:
        privacy = {True: "privacy models", False: "no privacy models", None: "privacy models: unknown"}
        return "; ".join(["several requirements" if i["several_requirements"] else "one k over all QIs",
                          "suppression (--max-suppression" + (f", {i['suppression']})" if i["suppression"] else ")")
                          if i.get("max_suppression") else "no suppression",
                          privacy[i["privacy_models"]]])

    table = Table(title="hieranon methods (--method NAME)", show_lines=True)
    table.add_column("method", no_wrap=True)
    for col in ("family", "paper", "needs / notes", "supports"):
        table.add_column(col, overflow="fold")
    for i in infos:
        name = i["method"] + ("\n(default)" if i["default"] else "")
        needs = "; ".join(x for x in (i["needs"], i["notes"]) if x)
        table.add_row(name, i["family"], i["paper"], needs, supports(i))
    Console().print(table)


@app.command()
def experiments(
    quick: bool = typer.Option(False, "--quick", help="Reduced grid for CI (under 5 minutes)."),
    out: Path = typer.Option(Path("benchmarks/results/experiments"), "--out", "-o",
                             help="Folder for the CSVs, PNGs and REPORT.md."),
    adult_dir: Optional[Path] = typer.Option(None, "--adult-dir",
                                             help="UCI Adult folder (default: $HIERANON_ADULT_DIR)."),
    only: Optional[str] = typer.Option(None, "--only", help="Experiments to run, e.g. '1,3' (default: 1,2,3,4); "
                                       "the report covers every experiment whose CSVs are in --out."),
    seeds: Optional[int] = typer.Option(None, "--seeds", help="Seeds of the randomised methods (default: 10, "
                                        "--quick: 2)."),
    report_only: bool = typer.Option(False, "--report-only", help="Only redraw the figures and rewrite REPORT.md "
                                     "from the CSVs already in --out."),
):
    """Reproduce the papers' experiments on UCI Adult (Li et al. 2006, 2008; Sun et al. 2008;
    Arca & Hewett): CSVs, figures and REPORT.md with a verdict on every claim."""
    _configure_logging(True, False)
    from ..experiments import ExperimentError, run_experiments
    try:
        run_experiments(out, quick=quick, adult_dir=adult_dir, only=only, seeds=seeds, report_only=report_only)
    except (ExperimentError, OSError) as exc:
        _die(_one_line(exc))


def _usage_error_line(exc) -> str:
    """A click usage error (bad option value, missing option, unknown option or
    command...) as one line: the message and where to find help."""
    message = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    return f"hieranon: error: {message}{hint}"


def _click_exceptions():
    """The module of the click exceptions typer raises: click's own up to
    typer 0.23, typer's vendored copy of click from 0.24 on (click is then not
    even installed). ``typer.BadParameter`` is public in both and lives there."""
    return sys.modules[typer.BadParameter.__module__]


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a scheduler stopping the job): raised in the main
    thread like Ctrl-C's KeyboardInterrupt, so the same clean-ups run
    (temporary files removed, nothing half-written left behind)."""


#: The exit status of a run stopped by a signal: 128 + the signal's number (the shell's convention).
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


#: set when SIGTERM arrived (a run that swallowed the exception still exits 143)
_terminated: list[bool] = []


def _raise_terminated(signum, frame):
    _terminated.append(True)
    raise Terminated()


@contextmanager
def _sigterm_as_interrupt():
    """While the CLI runs, SIGTERM raises :class:`Terminated` (where a signal
    handler can be set: the main thread)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _terminated.clear()
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _exit_interrupted() -> None:
    """One line and the conventional status of a run stopped by Ctrl-C (130)
    or SIGTERM (143)."""
    terminated = bool(_terminated)
    typer.echo(f"hieranon: {'terminated (SIGTERM)' if terminated else 'interrupted'}; nothing was written",
               err=True)
    sys.exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)


def _interrupted(exc: BaseException) -> bool:
    """Is a Ctrl-C behind ``exc``? A compiled (numba) kernel running in
    threads when it arrives returns with the KeyboardInterrupt pending, and
    its dispatcher raises a SystemError from it."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def main(args: Optional[list[str]] = None):  # console-script entry point
    """Run the CLI; a usage error is one line on stderr, exit status 2; an
    unexpected error is one line on stderr (set HIERANON_DEBUG=1 for the
    traceback), exit status 3."""
    import atexit
    import gc
    import os

    errors = _click_exceptions()
    no_args_help = getattr(errors, "NoArgsIsHelpError", ())  # click >= 8.2
    # At exit the interpreter runs full garbage collections over every object still alive
    # (pandas' and numba's modules and registries): ~0.3 s after an Adult run. Freezing them
    # at exit leaves them to the OS instead. atexit clean-ups (logging's flush, tempfile's,
    # dask's) are explicit calls and still run; output files are closed before this point.
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    try:
        # standalone_mode=False: click raises its usage errors instead of printing a boxed panel
        with _sigterm_as_interrupt():
            code = app(args=args, prog_name="hieranon", standalone_mode=False)
    except SystemExit:
        raise
    except no_args_help as exc:  # `hieranon` alone: the help (rich has printed it)
        if exc.format_message().strip():
            exc.show()
        sys.exit(exc.exit_code)
    except errors.UsageError as exc:
        typer.echo(_usage_error_line(exc), err=True)
        sys.exit(EXIT_BAD_INPUT)
    except errors.ClickException as exc:
        typer.echo(f"hieranon: error: {' '.join(exc.format_message().split())}", err=True)
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        _exit_interrupted()
    except OSError as exc:  # the environment's (disk full, file-size limit, permissions): the user's to fix
        if os.environ.get("HIERANON_DEBUG"):
            raise
        typer.echo(f"hieranon: error: {_one_line(exc)}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except Exception as exc:  # noqa: BLE001 - last-resort guard, see docstring
        if _interrupted(exc):
            _exit_interrupted()
        if os.environ.get("HIERANON_DEBUG"):
            raise
        from ..files import shorten
        typer.echo(f"hieranon: internal error: {type(exc).__name__}: {shorten(exc)} "
                   "(set HIERANON_DEBUG=1 for details and report it)", err=True)
        sys.exit(EXIT_INTERNAL)
    if code == EXIT_INTERRUPTED or _terminated:  # typer turns Ctrl-C (KeyboardInterrupt) into a silent status 130
        _exit_interrupted()
    # a command's typer.Exit(code), --help (0) or a normal return (None: 0)
    sys.exit(code if isinstance(code, int) else EXIT_OK)


if __name__ == "__main__":
    main()
