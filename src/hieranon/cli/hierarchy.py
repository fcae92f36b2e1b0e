"""``hieranon hierarchy build`` and ``hieranon hierarchy check``: build a hierarchy from the data,
check data against hierarchies."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Optional

import typer

from .errors import EXIT_FAILED, EXIT_OK, UsageError, die, known_errors, one_line
from .files import check_outputs, files_read, read_input
from .options import (
    ConfigOption,
    EncodingOption,
    ForceOption,
    QiOption,
    build_hierarchies,
    build_spec,
    excerpt_option,
)
from .output import configure_logging, warn

hierarchy_app = typer.Typer(no_args_is_help=True, help="Build hierarchies from data and check data against them.")


HIERARCHY_SEPARATORS = (";", ",", "|", "\t")


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
    force: ForceOption = False,
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No messages."),
    encoding: EncodingOption = "utf-8",
):
    """Build an ARX-format hierarchy of COLUMN from the values in a table
    (the same hierarchy as --qi COLUMN=BUILDER and the configuration's
    builders make)."""
    configure_logging(True, False)
    try:
        from ..job.config import ConfigError, HierarchySpec, builder_spec

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
            check_outputs({"output": output}, force, files_read(input=input, mapping_file=mapping))
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
        data = read_input(input, encoding, None)
        if column not in data.columns:
            raise UsageError(f"column {column!r} is not in {input} (its columns: {list(data.columns)[:20]})")
        h = spec.build(data, "value" if missing else "error")
        from ..core.cells import is_missing
        n_empty = int(is_missing(data[column]).sum())
        if n_empty and not missing and not quiet:
            warn(f"column {column!r} has {n_empty} empty cell(s), left out of the hierarchy: anonymise them with "
                 "--missing root (already suppressed), or rebuild with --missing value (a leaf 'missing')")
        clash = next((label for label in h.labels if sep in label), None)
        if clash is not None:
            from ..core.files import excerpt
            raise UsageError(f"--sep {sep!r} occurs in the label {excerpt(clash)}; choose a separator no value "
                             "contains (; , | or a tab)")
        text = h.to_arx_csv(sep)
        if output is None:
            typer.echo(text, nl=False)
        else:
            from ..io import write_text
            write_text(text, output, overwrite=force)
    except known_errors() as exc:
        die(one_line(exc))
    if output is not None and not quiet:
        typer.echo(f"hierarchy of {column!r}: {len(h.leaf_index)} leaves, {h.height} levels, written to {output}",
                   err=True)
    raise typer.Exit(EXIT_OK)


def _missing_values(values, h) -> list[str]:
    """Distinct non-empty data values that are not leaves of ``h``."""
    import pandas as pd

    from ..core.cells import value_to_label
    labels = {value_to_label(v) for v in pd.unique(values.dropna())}
    labels.discard("")
    return sorted(labels - set(h.leaf_index))


@hierarchy_app.command("check")
def hierarchy_check(
    input: Path = typer.Argument(..., help="The table whose values must be in the hierarchies."),
    config: ConfigOption = None,
    qi: QiOption = [],
    as_json: bool = typer.Option(False, "--json", help="Print the missing values as JSON."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Print nothing; the exit status says."),
    encoding: EncodingOption = "utf-8",
):
    """List the values of each quasi-identifier column missing from its
    hierarchy (exit status 1 when there are any)."""
    configure_logging(True, False)
    try:
        from ..core.table import check_columns

        data = read_input(input, encoding, None)
        hierarchies = build_hierarchies(build_spec(config, qi), data)
        check_columns(data, list(hierarchies))
        found = {}
        for name, h in hierarchies.items():
            found[name] = {"missing": _missing_values(data[name], h), "distinct_values": int(data[name].nunique()),
                           "leaves": len(h.leaf_index), "height": h.height}
    except known_errors() as exc:
        die(one_line(exc))
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
