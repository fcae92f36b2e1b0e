"""``hieranon evaluate``: every metric of an anonymised table against its original, and its
verification; the reading of such a pair, which ``hieranon report`` shares."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from .errors import EXIT_FAILED, EXIT_OK, UsageError, die, known_errors, one_line
from .files import read_checked, read_input, require_rows, table_sources
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
    JsonOption,
    KOption,
    LDiversityOption,
    MissingOption,
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
    build_hierarchies,
    build_spec,
    role_columns,
    check_suppressed,
    read_config,
    read_population_table,
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
    statement_lines,
    verdict_line,
)

if TYPE_CHECKING:
    from ..job.config import Config
    from ..job.result import AnonymizationResult


def _unshuffle(anon, order_map: Path):
    """ANONYMISED's rows put back in the input's order through an order map
    (input_row,output_row)."""
    import numpy as np

    table = read_input(order_map, "utf-8", None)
    if list(table.columns) != ["input_row", "output_row"]:
        raise UsageError(f"--order-map {order_map}: expected the two columns input_row,output_row "
                         f"(got {list(table.columns)})")
    try:
        table = table.astype(np.int64)
    except (ValueError, TypeError, OverflowError):  # a number past 2**63 overflows
        raise UsageError(f"--order-map {order_map}: expected whole row numbers in input_row,output_row") from None
    out_rows = table.sort_values("input_row")["output_row"].to_numpy()
    if len(out_rows) != len(anon) or not np.array_equal(np.sort(out_rows), np.arange(len(anon))) \
            or not np.array_equal(np.sort(table["input_row"].to_numpy()), np.arange(len(anon))):
        raise UsageError(f"--order-map {order_map}: not a permutation of the {len(anon)} rows of the anonymised "
                         "table")
    return anon.iloc[out_rows].reset_index(drop=True)


def shuffled_columns(orig, anon, quasi_identifiers) -> list:
    """The columns ORIGINAL and ANONYMISED share outside the quasi-identifiers
    that hold the same values (as a multiset) but not in the same order --
    a release of ``anonymize --shuffle`` -- when at least one such column is
    out of order; else an empty list (a column masked or pseudonymised is
    left out: it holds other values)."""
    import numpy as np

    if len(orig) != len(anon) or len(orig) < 2:
        return []
    moved = []
    for c in orig.columns:
        if c not in anon.columns or c in set(quasi_identifiers):
            continue
        a = orig[c].astype("string").fillna("\0").to_numpy(dtype=object)
        b = anon[c].astype("string").fillna("\0").to_numpy(dtype=object)
        if not np.array_equal(a, b) and np.array_equal(np.sort(a), np.sort(b)):
            moved.append(c)
    return moved


def evaluate_files(original: Path, anonymised: Path, encoding: str, spec, method: str, bound_args: dict,
                   suppressed: str = "class", order_map: Optional[Path] = None,
                   utility: Optional[dict] = None) -> AnonymizationResult:
    """Read an (original, anonymised) pair and evaluate it under ``spec``
    (``method``: the name the results show); flag a verified pair that keeps
    the input's row order. ``bound_args``: the lower bound's arguments
    (:func:`~hieranon.cli.options.bound_request`). ``utility``: ``{"target": COL or None}`` also
    computes the utility report (cached on the result, see :func:`_utility_of`)."""
    from ..report import evaluate_pair

    orig = read_checked(original, encoding, True)
    require_rows(orig, original, "the original table")
    anon = read_checked(anonymised, encoding, True)
    if order_map is not None:
        anon = _unshuffle(anon, order_map)
    else:
        moved = shuffled_columns(orig, anon, spec.quasi_identifiers)
        if moved:
            shown = ", ".join(map(repr, moved[:3])) + (f" and {len(moved) - 3} more" if len(moved) > 3 else "")
            raise UsageError(f"{anonymised}: its rows are shuffled ({shown} hold ORIGINAL's values in another "
                             "order): give the order map anonymize --keep-order-map wrote, with --order-map FILE")
    built = build_hierarchies(spec, orig)
    from ..io import read_numeric_output
    anon = read_numeric_output(anon, built)  # range and bounds forms of --numeric-output back to labels
    result = evaluate_pair(orig, anon, spec=spec, built=built, method=method, suppressed_records=suppressed,
                           **bound_args)
    result.info["keeps_input_order"] = order_map is None and len(orig) > 1 and bool(result.verification.ok)
    if utility is not None:
        _utility_of(result, orig, utility.get("target"))
    return result


def method_named(option: Optional[str], cfg: Optional[Config]) -> str:
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


def utility_json(result) -> dict:
    u = result.risk_cache.get("utility:last")
    return {"utility": u.as_dict() if u is not None else None}


def order_warning(result, quiet: bool) -> None:
    """What the pair does not protect (the row order kept, a sensitive column
    homogeneous in some class), after the verdict line and in its style."""
    if quiet:
        return
    for line in statement_lines(result.statement(), holds=False):
        typer.echo(line)


def _risk_json(pair) -> dict | None:
    before, after, _ = pair.risk()
    return risk_summary(before, after, pair.risk_threshold) if before is not None else None


def _risk_rows(pair) -> list[tuple[str, str]]:
    before, after, _ = pair.risk()
    return risk_rows(before, after, pair.risk_threshold)


def evaluate(
    original: Optional[str] = typer.Argument(None, help="The original table (a file, or a database URL with "
                                             "--table or --query; default: the configuration's input)."),
    anonymised: Optional[str] = typer.Argument(None, help="The anonymised table (a file, or a database URL with "
                                               "--anonymised-table; default: the configuration's output)."),
    table: TableOption = None,
    query: QueryOption = None,
    anonymised_table: AnonymisedTableOption = None,
    config: ConfigOption = None,
    qi: QiOption = [],
    k: KOption = None,
    require: RequireOption = [],
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
    as_json: JsonOption = False,
    quiet: QuietOption = False,
    encoding: EncodingOption = "utf-8",
    bound: BoundOption = False,
    bound_iterations: BoundIterationsOption = None,
    suppressed: SuppressedOption = "class",
    order_map: OrderMapOption = None,
    utility: UtilityOption = False,
    target: TargetOption = None,
):
    """Print every metric of ANONYMISED against ORIGINAL and verify it (ANONYMISED may come from any tool,
    e.g. ARX); with --utility, also what the release keeps for analysis."""
    configure_logging(True, False)
    bound_args = bound_request(bound, bound_iterations)
    try:
        check_suppressed(suppressed)
        cfg = read_config(config)
        spec = build_spec(cfg, qi, k, require, count_column=count_column, class_column=class_column, weights=weights,
                          weight_column=weight, suda_max_size=suda_max_size,
                          beta=beta, missing=missing, risk_threshold=risk_threshold,
                          sampling_fraction=sampling_fraction, population=population,
                          population_table=read_population_table(population_table, encoding, population, cfg),
                          l_diversity=l_diversity,
                          t_closeness=t_closeness, sensitive_hierarchy=sensitive_hierarchy,
                          roles=role_columns(identifier, sensitive, insensitive))
        original, anonymised = table_sources(original, table, query, anonymised, anonymised_table, cfg)
        pair = evaluate_files(original, anonymised, encoding, spec, method_named(None, cfg), bound_args, suppressed,
                              order_map, utility={"target": target} if utility or target is not None else None)
        report, metrics = pair.verification, pair.metrics
    except known_errors() as exc:
        die(one_line(exc))
    if as_json:
        typer.echo(json.dumps({"verified": report.ok, "verification": report.summary(),
                               "metrics": metrics.as_dict() if metrics else None, **pair.bound_summary(),
                               "privacy": pair.privacy().as_dict(), "risk": _risk_json(pair),
                               "statement": pair.statement().as_dict(),
                               **(utility_json(pair) if utility or target is not None else {})},
                              default=json_default, indent=2))
    elif not quiet:
        if metrics is not None:
            print_metrics(f"{anonymised.name} against {original.name}",
                          metric_rows(metrics) + cells_rows(pair.statement()) + bound_rows(pair) + _risk_rows(pair)
                          + pair.privacy().rows(), False)
        if utility or target is not None:
            print_metrics(f"utility of {anonymised.name}", _utility_rows(pair), False)
            u = pair.risk_cache.get("utility:last")
            if u is not None and u.target is not None:
                typer.echo(f"utility: {u.compared}; relative = anonymised / original, gain over the baseline = "
                           "(anonymised - baseline) / (original - baseline)")
                for line in u.warnings():
                    typer.echo(f"utility: warning: {line}")
        typer.echo(verdict_line(report))
        order_warning(pair, quiet)
    elif not report.ok:  # quiet: no tables, but a failure still says why
        typer.echo(verdict_line(report), err=True)
    raise typer.Exit(EXIT_OK if report.ok else EXIT_FAILED)
