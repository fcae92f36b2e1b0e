"""``hieranon report``: the HTML report of an existing (original, anonymised) pair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from .errors import EXIT_FAILED, EXIT_OK, die, known_errors, one_line
from .evaluate import evaluate_files, method_named, order_warning, utility_json
from .files import check_outputs, files_of, files_read, table_sources
from .options import (
    AnonymisedTableOption,
    BetaOption,
    BoundIterationsOption,
    BoundOption,
    ClassColumnOption,
    ConfigOption,
    CountColumnOption,
    SudaMaxSizeOption,
    WeightOption,
    EncodingOption,
    IdentifierOption,
    InsensitiveOption,
    ForceOption,
    JsonOption,
    KOption,
    LDiversityOption,
    MissingOption,
    PublicOption,
    OrderMapOption,
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
    SuppressedOption,
    TargetOption,
    TableOption,
    TClosenessOption,
    UtilityOption,
    WeightsOption,
    bound_request,
    build_spec,
    role_columns,
    check_suppressed,
    checked_options,
    read_config,
    read_population_table,
)
from .output import bound_rows, configure_logging, json_default, risk_rows, risk_summary, status, verdict_line


def report_command(
    original: Optional[str] = typer.Argument(None, help="The original table (a file, or a database URL with "
                                             "--table or --query; default: the configuration's input)."),
    anonymised: Optional[str] = typer.Argument(None, help="The anonymised table (made by hieranon or elsewhere; a "
                                               "file, or a database URL with --anonymised-table; default: the "
                                               "configuration's output)."),
    table: TableOption = None,
    query: QueryOption = None,
    anonymised_table: AnonymisedTableOption = None,
    output: Path = typer.Option(..., "-o", "--output", help="The HTML report to write."),
    config: ConfigOption = None,
    qi: QiOption = [],
    k: KOption = None,
    require: RequireOption = [],
    method: Optional[str] = typer.Option(None, "--method", "-m", help="Method that made ANONYMISED (shown)."),
    count_column: CountColumnOption = None,
    weight: WeightOption = None,
    suda_max_size: SudaMaxSizeOption = None,
    class_column: ClassColumnOption = None,
    weights: WeightsOption = None,
    beta: BetaOption = None,
    missing: MissingOption = None,
    risk_threshold: RiskThresholdOption = None,
    sampling_fraction: SamplingFractionOption = None,
    population: PopulationOption = None,
    population_table: PopulationTableOption = None,
    l_diversity: LDiversityOption = [],
    t_closeness: TClosenessOption = [],
    sensitive_hierarchy: SensitiveHierarchyOption = [],
    identifier: IdentifierOption = [],
    sensitive: SensitiveOption = [],
    insensitive: InsensitiveOption = [],
    force: ForceOption = False,
    quiet: QuietOption = False,
    as_json: JsonOption = False,
    encoding: EncodingOption = "utf-8",
    bound: BoundOption = False,
    bound_iterations: BoundIterationsOption = None,
    order_map: OrderMapOption = None,
    public: PublicOption = False,
    utility: UtilityOption = False,
    target: TargetOption = None,
    suppressed: SuppressedOption = "class",
):
    """Write the HTML report of an existing (ORIGINAL, ANONYMISED) pair.

    The report is written even when ANONYMISED fails verification (it shows
    why); the exit status is then 1."""
    configure_logging(True, False)
    bound_args = bound_request(bound, bound_iterations)
    try:
        from ..io import write_text
        from ..report import render_report

        cfg = read_config(config)  # read once: it may name ORIGINAL and ANONYMISED
        original, anonymised = table_sources(original, table, query, anonymised, anonymised_table, cfg)
        checked_options(k, None, missing, beta, risk_threshold)
        check_suppressed(suppressed)
        doing = "verifying and measuring" + (" and bounding the optimum" if bound_args else "")
        with status(quiet or as_json, doing + "..."):
            spec = build_spec(cfg, qi, k, require, count_column=count_column, class_column=class_column,
                              weight_column=weight, suda_max_size=suda_max_size,
                              weights=weights, beta=beta, missing=missing, risk_threshold=risk_threshold,
                              sampling_fraction=sampling_fraction, population=population,
                              population_table=read_population_table(population_table, encoding, population, cfg),
                              l_diversity=l_diversity, t_closeness=t_closeness, sensitive_hierarchy=sensitive_hierarchy,
                              roles=role_columns(identifier, sensitive, insensitive))
            check_outputs({"report": output}, force, files_read(spec, cfg, sensitive_hierarchy, configuration=config,
                                                                order_map=order_map, **files_of(
                                                                    input=original, anonymised_table=anonymised)))
            result = evaluate_files(original, anonymised, encoding, spec, method_named(method, cfg), bound_args,
                                    suppressed, order_map=order_map,
                                    utility={"target": target} if (utility or target is not None) and not public
                                    else None)
            html = render_report(None, result, input_name=original.name, output_name=anonymised.name,
                                 public=public)
            risk_before, risk_after, _ = result.risk()
        write_text(html, output, overwrite=force)
    except known_errors() as exc:
        die(one_line(exc))
    ok = bool(result.verification.ok)
    threshold = result.risk_threshold
    if as_json:
        typer.echo(json.dumps({"verified": ok, "verification": result.verification.summary(),
                               "metrics": result.metrics.as_dict() if result.metrics else None,
                               "risk": risk_summary(risk_before, risk_after, threshold),
                               **result.bound_summary(), "privacy": result.privacy().as_dict(),
                               "statement": result.statement().as_dict(),
                               "report": str(output),
                               **(utility_json(result) if (utility or target is not None) and not public else {})},
                              default=json_default, indent=2))
    elif not quiet:
        typer.echo(verdict_line(result.verification), err=not ok)
        order_warning(result, quiet)
        for name, value in bound_rows(result) + risk_rows(risk_before, risk_after, threshold):
            typer.echo(f"{name}: {value}")
        typer.echo(f"report written to {output}", err=True)
    raise typer.Exit(EXIT_OK if ok else EXIT_FAILED)
