"""``hieranon anonymize``: anonymise a table (or a Parquet dataset) and write the verified
result."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Optional

import typer

from ..core.progress import stage as progress_stage
from .errors import EXIT_FAILED, EXIT_OK, UsageError, die, known_errors, one_line, remove_outputs, run_outputs
from .files import check_outputs, configured, files_read, read_checked, require_rows, table_source
from .options import (
    BetaOption,
    BoundIterationsOption,
    BoundOption,
    ClassColumnOption,
    ConfigOption,
    CountColumnOption,
    SudaMaxSizeOption,
    WeightOption,
    EncodingOption,
    ForceOption,
    IdentifierActionOption,
    IdentifierOption,
    InsensitiveOption,
    JsonOption,
    KOption,
    LDiversityOption,
    MissingOption,
    PublicOption,
    QiOption,
    QuietOption,
    RequireOption,
    PopulationOption,
    PopulationTableOption,
    QueryOption,
    RiskThresholdOption,
    SamplingFractionOption,
    SensitiveHierarchyOption,
    SensitiveOption,
    StrictOption,
    TableOption,
    TClosenessOption,
    WeightsOption,
    bound_request,
    build_hierarchies,
    build_spec,
    role_columns,
    parse_params,
    read_config,
    read_population_table,
    risk_options,
)
from .output import (
    bound_rows,
    cells_rows,
    configure_logging,
    json_default,
    metric_rows,
    print_metrics,
    risk_rows,
    risk_summary,
    show_progress,
    statement_lines,
    status,
    warn,
)


def anonymize(
    input: Optional[str] = typer.Argument(None, help="Input table (CSV with header, Parquet, Excel, Stata, SPSS, "
                                          "SAS), or a database URL with --table or --query (default: the "
                                          "configuration's input)."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Output table; format from its extension; or "
                                         "a database URL with --output-table (default: the configuration's "
                                         "output)."),
    table: TableOption = None,
    query: QueryOption = None,
    output_table: Optional[str] = typer.Option(
        None, "--output-table", help="With a database URL as OUTPUT: the new table to write (in one transaction; "
        "an existing one is replaced only with --force)."),
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
    weight: WeightOption = None,
    suda_max_size: SudaMaxSizeOption = None,
    class_column: ClassColumnOption = None,
    missing: MissingOption = None,
    report: Optional[Path] = typer.Option(None, "--report", help="Write an HTML report here."),
    risk_threshold: RiskThresholdOption = None,
    sampling_fraction: SamplingFractionOption = None,
    population: PopulationOption = None,
    population_table: PopulationTableOption = None,
    l_diversity: LDiversityOption = [],
    t_closeness: TClosenessOption = [],
    sensitive_hierarchy: SensitiveHierarchyOption = [],
    k_map: Optional[int] = typer.Option(None, "--k-map", help="k-map: every class of OUTPUT matches at least "
                                        "this many records of the --population-table."),
    delta_presence: Optional[str] = typer.Option(None, "--delta-presence", help="MIN,MAX: every class's records "
                                                 "are between MIN and MAX of the --population-table records it "
                                                 "matches."),
    average_risk: Optional[float] = typer.Option(None, "--average-risk", help="Average re-identification risk "
                                                 "(classes / records) of OUTPUT at most this."),
    population_uniqueness: Optional[str] = typer.Option(
        None, "--population-uniqueness", help="P or P:pitman|zayatz|snb|dankar: the share of the population "
        "estimated unique over the QIs in OUTPUT at most P (default estimator: dankar; the population from "
        "--sampling-fraction or --population, else 0.01 assumed)."),
    force: ForceOption = False,
    quiet: QuietOption = False,
    as_json: JsonOption = False,
    encoding: EncodingOption = "utf-8",
    fmt: Optional[str] = typer.Option(None, "--format", help="Output format: csv | parquet | excel | stata | spss."),
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
    bound: BoundOption = False,
    bound_iterations: BoundIterationsOption = None,
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
    public: PublicOption = False,
    numeric_output: Optional[str] = typer.Option(
        None, "--numeric-output", help="Generalised numbers in OUTPUT: label ([25, 50)) | range | midpoint | bounds "
        "(two numeric columns NAME_lower, NAME_upper); default: the config's numeric_output, else label."),
    max_suppression: Optional[str] = typer.Option(None, "--max-suppression", help="Suppress at most this share "
                                                  "('5%') or number (120) of records, each only where that lowers "
                                                  "the distortion (none or at least k are suppressed)."),
):
    """Anonymise INPUT and write the verified result to OUTPUT."""
    configure_logging(quiet or as_json, verbose)
    bound_args = bound_request(bound, bound_iterations)
    if bound_args and distributed:
        die("--bound needs the whole table in one process; leave out --distributed")
    if whole_table and distributed:
        die("--whole-table and --distributed contradict each other; give one of them")
    if block_size is not None and block_size < 2:
        die(f"--block-size {block_size}: expected a whole number >= 2")
    if workers is not None and workers < 1:
        die(f"--workers {workers}: expected a whole number >= 1")
    try:
        cfg = read_config(config)  # read once: it may name the input and output tables
        input = table_source(input, table, query, config=cfg)
        output = _output_target(output, output_table, cfg)
    except known_errors() as exc:  # a configuration that cannot be read names its key
        die(one_line(exc))
    # streamed in blocks, never whole in memory: a Parquet dataset directory, a database table
    dataset = distributed and (not isinstance(input, Path) or input.is_dir())
    try:
        from ..algorithms.partition import BLOCK_SIZE
        from ..io.sql import SqlTable, check_output_table
        from ..job.result import AnonymizationError
        try:
            with show_progress(quiet or as_json):
                cli_params = parse_params(param)
                _check_numeric_output(numeric_output)
                if scheduler is not None:  # a malformed, closed or foreign address: refused before any work
                    from ..algorithms.partition import probe_scheduler
                    probe_scheduler(scheduler)
                budget = _budget_option(max_suppression)
                population_table = read_population_table(population_table, encoding, population, cfg)
                risk_models = risk_options(k_map, delta_presence, average_risk, population_table,
                                           population_uniqueness, sampling_fraction, population)
                spec = build_spec(cfg, qi, k, require, seed=seed, missing=missing, beta=beta,
                                  risk_threshold=risk_threshold, method=method, weights=weights, params=cli_params,
                                  sampling_fraction=sampling_fraction, population=population,
                                  population_table=population_table,
                                  l_diversity=l_diversity, t_closeness=t_closeness,
                                  sensitive_hierarchy=sensitive_hierarchy, risk_models=risk_models,
                                  count_column=count_column, weight_column=weight, suda_max_size=suda_max_size,
                                  class_column=class_column, strict=strict, shuffle=shuffle, max_suppression=budget,
                                  identifier_action=identifier_action, numeric_output=numeric_output,
                                  pseudonym_key=_key_option(pseudonym_key),
                                  roles=role_columns(identifier, sensitive, insensitive))
                if dataset and spec.numeric_output != "label":
                    raise UsageError("--numeric-output applies to one table; a Parquet dataset is written with labels")
                in_database = isinstance(output, SqlTable)
                check_outputs({"output": None if in_database else output, "report": report,
                               "order map": keep_order_map}, force,
                              files_read(spec, cfg, sensitive_hierarchy, configuration=config,
                                         pseudonym_key_file=pseudonym_key,
                                         input=input if isinstance(input, Path) else None),
                              directory=("output",) if dataset else ())
                if in_database and isinstance(input, SqlTable) and output.same_table(input):
                    raise UsageError(f"--output-table {output.table} is the input table of {output.shown_url}; "
                                     "write the release to a new table (even --force never replaces the input)")
                if in_database:  # an existing table, an unreachable database: refused before any work
                    check_output_table(output.url, output.table, force)
                elif not dataset:
                    from ..io import output_format
                    output_format(output, fmt)  # an unknown or read-only format is refused before any work
                if pseudonym_key is not None and spec.identifier_action != "pseudonym":
                    raise UsageError("--pseudonym-key is the key of the pseudonyms; add --identifier-action pseudonym "
                                     "(or leave the key out)")
                if keep_order_map is not None and not spec.shuffle:
                    raise UsageError("--keep-order-map writes the permutation of --shuffle; add --shuffle")
                if distributed and spec.shuffle:
                    raise UsageError("--shuffle needs the whole table in one process; leave out --distributed")
                if spec.strict and not spec.shuffle:  # known before any work; the other gaps after solving
                    from ..evaluation.statement import order_finding
                    raise UsageError("strict: " + order_finding(True)[0].text)
                if spec.shuffle and spec.seed is not None:
                    warn("with --seed the row order can be undone by anyone who tries seeds until the rows line up "
                         "(e.g. by a date column); leave --seed out of a release")
                data = None if dataset else read_checked(input, encoding, quiet or as_json)
                if distributed:
                    _quiet_dask(verbose)
                    spec = spec.partitioned(block_size=block_size or BLOCK_SIZE, executor="dask", scheduler=scheduler,
                                            n_workers=workers)
                else:
                    if scheduler is not None:
                        _quiet_dask(verbose)
                    spec = spec.with_overrides(execution="whole" if whole_table else None,
                                               partition=_partition_options(spec, block_size, workers, scheduler))
                if dataset:
                    result, html = _anonymize_dataset(input, output, spec, report, force, quiet or as_json, public)
                else:
                    result, html = _anonymize_table(input, output, data, spec, report, fmt, encoding, bound_args,
                                                    quiet or as_json, keep_order_map, public, force)
        except AnonymizationError as exc:
            die(str(exc).splitlines()[0], EXIT_FAILED)
    except known_errors() + (FileExistsError,) as exc:
        die(one_line(exc))
    risk_before, risk_after, _ = result.risk()
    threshold = result.risk_threshold
    if as_json:
        typer.echo(json.dumps({**result.summary(), "risk": risk_summary(risk_before, risk_after, threshold)},
                              default=json_default, indent=2))
    else:
        blocks = (f", {result.info['blocks']} blocks on {result.info['executor']}" if "executor" in result.info
                  else "")
        if result.plan is not None and not blocks:
            blocks = ", whole table"
        statement = result.statement()
        gaps = len(statement.does_not_hold)
        print_metrics(f"{result.method} on {input.name} -> {output.name} (verified{blocks}"
                      + (f"; {gaps} thing{'s' * (gaps > 1)} it does not protect, below" if gaps else "") + ")",
                      metric_rows(result.metrics) + cells_rows(statement) + _missing_rows(result)
                      + _suppression_rows(result) + bound_rows(result)
                      + risk_rows(risk_before, risk_after, threshold) + result.privacy().rows(), quiet)
        if not quiet:  # what holds and what does not, in one style (the linkage risks among them)
            for line in statement_lines(statement):
                typer.echo(line)
        if html is not None and not quiet:
            typer.echo(f"report written to {report}", err=True)
    raise typer.Exit(EXIT_OK)


def _output_target(output: Optional[str], output_table: Optional[str], config=None):
    """``-o``: a file path, or a database table (a URL with
    ``--output-table``); without it, the configuration's ``output``."""
    from ..io.sql import SqlTable, is_database_url, mask_url
    if output is None:
        if output_table is not None:
            raise UsageError("--output-table names a table of OUTPUT's database: give -o OUTPUT (a database URL)")
        return configured(config, "output", "-o OUTPUT")
    if is_database_url(output):
        if output_table is None:
            raise UsageError(f"-o {mask_url(output)} is a database: name the new table with --output-table NAME")
        return SqlTable(output, output_table)
    if output_table is not None:
        raise UsageError(f"--output-table names a table of a database, but -o {output} is a file; give a database "
                         "URL (postgresql://HOST/DB, sqlite:///FILE.db, duckdb:///FILE.duckdb) or leave it out")
    return Path(output)


def _partition_options(spec, block_size: Optional[int], workers: Optional[int],
                       scheduler: Optional[str]) -> Optional[dict]:
    """The spec's partition options with ``--block-size``, ``--workers`` and
    ``--scheduler`` laid over them (None: nothing given, nothing changed)."""
    given = {n: v for n, v in (("block_size", block_size), ("n_workers", workers), ("scheduler", scheduler))
             if v is not None}
    return {**spec.partition, **given} if given else None


def _key_option(path: Optional[Path]) -> Optional[bytes]:
    """``--pseudonym-key FILE``: the key it holds (a bad file: one line naming it)."""
    if path is None:
        return None
    from ..io.pseudonyms import read_key
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
    (:func:`hieranon.hierarchies.builders.missing_cells`) -- kept apart from the cells
    the anonymisation generalised or suppressed."""
    from ..hierarchies.builders import missing_cells

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


def _run_with_warnings(data, spec, **kwargs):
    """:func:`hieranon.job.pipeline.run`, its warnings (columns without a role...)
    printed as one line each on stderr."""
    import os
    import warnings

    from ..job.pipeline import run
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(data, spec, **kwargs)
    for w in caught:  # hieranon's own warnings; a library's (dask's sockets, ports) only with -v
        if f"hieranon{os.sep}" in str(w.filename) and issubclass(w.category, UserWarning):
            warn(" ".join(str(w.message).split()))
        elif logging.getLogger("hieranon").isEnabledFor(logging.DEBUG):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return result


def _anonymize_table(input, output, data, spec, report: Optional[Path], fmt: Optional[str],
                     encoding: str, bound_args: dict, quiet: bool, order_map: Optional[Path] = None,
                     public: bool = False, force: bool = False):
    """One table in memory: anonymise, render the report, write both (numeric
    quasi-identifiers in the spec's form, :func:`hieranon.io.numeric_output`); ``bound_args``:
    the lower bound's arguments (:func:`~hieranon.cli.options.bound_request`)."""
    from ..io import numeric_columns, numeric_output, write_table
    from ..io.sql import SqlTable

    require_rows(data, input)
    with progress_stage("building the hierarchies"):
        hierarchies = build_hierarchies(spec, data)
    numeric_columns(data.columns, hierarchies, spec.numeric_output)  # refused before any work
    result = _run_with_warnings(data, spec, hierarchies=hierarchies, **bound_args)
    refusal = result.statement().strict_error() if spec.strict else None
    if refusal is not None:  # before anything is written
        raise UsageError(refusal)
    html = None
    if report is not None:  # rendered before anything is written: a failure leaves no output behind
        from ..report import render_report
        with status(quiet, "writing the report..."):
            html = render_report(None, result, input_name=input.name, output_name=output.name, public=public)
    # a CSV output of a CSV input keeps its separator and encoding
    table = numeric_output(result.data, result.hierarchies, spec.numeric_output)
    written = run_outputs()
    if isinstance(output, SqlTable):  # the files first: the table's one transaction is the last step
        _write_texts(result, html, report, order_map, written, force)
        try:
            _write_database(table, output, input, spec, force)
        except BaseException:
            remove_outputs(written)
            raise
        return result, html
    source = input if isinstance(input, Path) else None
    with progress_stage(f"writing {output.name}", detail=f"{len(result.data)} rows"):
        write_table(table, output, fmt=fmt or (None if output.suffix or source is None
                                               else source.suffix.lstrip(".") or None),
                    source=source, source_encoding=encoding, overwrite=force)
    written.append(output)
    _write_texts(result, html, report, order_map, written, force)
    return result, html


def _write_texts(result, html: Optional[str], report: Optional[Path], order_map: Optional[Path],
                 written: list[Path], force: bool) -> None:
    """The report and the order map, each removing what the run wrote when it fails."""
    if html is not None:
        _write_report_or_undo(html, report, written, force)
    if order_map is not None:
        _write_report_or_undo(result.order_map().to_csv(index=False), order_map, written, force)


def _write_database(table, output, input, spec, force: bool) -> None:
    """The release as a new table of a database, in one transaction: the
    columns the run left as they were keep the input table's SQL types; a
    text input's number columns are written as numbers."""
    from ..io import parquet_ready, table_format
    from ..io.sql import SqlTable, column_types, write_sql

    changed = {*spec.quasi_identifiers, *spec.identifiers}
    if isinstance(input, SqlTable):
        types = column_types(input)
    else:
        types = {}
        table = parquet_ready(table, from_text=table_format(input) == "csv")
    with progress_stage(f"writing {output}", detail=f"{len(table)} rows"):
        write_sql(table, output.url, output.table, overwrite=force, types=types,
                  keep_types=[c for c in table.columns if c not in changed])


def _anonymize_dataset(input, output, spec, report: Optional[Path], force: bool, quiet: bool,
                       public: bool = False):
    """--distributed on a Parquet dataset directory or a database table:
    stream it through :func:`hieranon.job.scale.anonymize_parquet` into an
    output directory or a new database table; the
    report is built from the integer codes (the sample shows the first rows
    of the output)."""
    from ..job.scale import anonymize_parquet, iter_batches

    with status(quiet, f"anonymising the dataset {input} in blocks of {spec.partition['block_size']}..."):
        res = anonymize_parquet(input, output, spec, force=force)
    result = res.result
    run_outputs().append(output)
    html = None
    if report is not None:
        from ..report import render_report
        sample = next(iter(iter_batches(output, batch_rows=20)), None)
        with status(quiet, "writing the report..."):
            html = render_report(None, result, input_name=input.name, output_name=output.name, sample=sample,
                                 public=public)
        _write_report_or_undo(html, report, run_outputs(), force)
    return result, html


def _write_report_or_undo(text: str, path: Path, written: list[Path], force: bool) -> None:
    """Write a text beside the output (the report, the order map), replacing
    an existing file only with ``force``; when that fails, remove the files
    this run has ``written`` (the output first), so that it leaves nothing
    behind; else add ``path`` to them."""
    from ..io import write_text
    try:
        write_text(text, path, overwrite=force)
    except BaseException:
        remove_outputs(written)
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
