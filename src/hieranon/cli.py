"""Command-line interface (SPEC section 7).

Exit codes: 0 the output was written and verified (or the check/evaluation
passed); 1 a table fails its anonymity requirements (``check``/``evaluate``)
or an algorithm's output failed verification (nothing written); 2 bad input
or usage -- one line on stderr says what is wrong, and nothing is written;
3 an internal error (a bug: please report it).

The CLI parses arguments, reads files and prints; metrics come from the
library (:mod:`hieranon.api`, :mod:`hieranon.metrics`), never computed here.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="k-anonymise tables by generalisation in attribute hierarchies.")

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class UsageError(Exception):
    """Bad input: reported as one line on stderr, exit status 2."""


def _die(message: str, code: int = EXIT_BAD_INPUT):
    typer.echo(f"hieranon: error: {message}", err=True)
    raise typer.Exit(code)


def _known_errors():
    from .config import ConfigError
    from .hierarchy import HierarchyError
    from .io import InputError
    from .requirements import RequirementError
    from .table import DataError
    return (ConfigError, HierarchyError, InputError, RequirementError, DataError, UsageError, ValueError,
            FileNotFoundError, PermissionError, IsADirectoryError)


def _parse_qi_options(qi: list[str]) -> dict[str, Path]:
    out = {}
    for item in qi:
        if "=" not in item:
            raise UsageError(f"--qi {item!r}: expected NAME=HIERARCHY_FILE")
        name, path = item.split("=", 1)
        out[name.strip()] = Path(path.strip())
    return out


def _parse_params(param: list[str]) -> dict:
    import yaml
    out = {}
    for item in param:
        if "=" not in item:
            raise UsageError(f"--param {item!r}: expected KEY=VALUE")
        key, value = item.split("=", 1)
        out[key.strip()] = yaml.safe_load(value)
    return out


def _setup(config: Optional[Path], qi: list[str], k: Optional[int], require: list[str], data=None):
    """Merge config file and command-line overrides into (config, hierarchies)."""
    from . import config as C
    from . import hierarchy as H

    cfg = C.load(config) if config else C.Config()
    for name, path in _parse_qi_options(qi).items():
        cfg.quasi_identifiers[name] = C.HierarchySpec(name, file=path)
    if k is not None:
        if k < 1:
            raise UsageError(f"-k {k}: k must be >= 1")
        cfg.k = k
    cfg.requirements = list(cfg.requirements) + list(require)
    if not cfg.quasi_identifiers:
        raise UsageError("no quasi-identifiers: give --config FILE.yaml or --qi NAME=HIERARCHY_FILE")
    hierarchies = {}
    for name, spec in cfg.quasi_identifiers.items():
        try:
            hierarchies[name] = spec.build(data)
        except H.HierarchyError as exc:
            raise UsageError(str(exc)) from None
    return cfg, hierarchies


def _configure_logging(quiet: bool, verbose: bool):
    level = logging.WARNING if quiet else (logging.DEBUG if verbose else logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def _status(quiet: bool, text: str):
    from contextlib import nullcontext
    if quiet:
        return nullcontext()
    from rich.console import Console
    return Console(stderr=True).status(text)


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
    for q, inc in zip(m.qi_names, m.inconsistency_per_attribute):
        rows.append((f"inconsistency of {q}", f(inc)))
    return rows


def _read(path: Path, encoding: str, fmt: Optional[str]):
    from .io import read_table
    return read_table(path, encoding=encoding, fmt=fmt)


@app.command()
def anonymize(
    input: Path = typer.Argument(..., help="Input table (CSV with header, Parquet or Excel)."),
    output: Path = typer.Option(..., "-o", "--output", help="Output table; format from its extension."),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="YAML configuration."),
    qi: list[str] = typer.Option([], "--qi", help="NAME=HIERARCHY_FILE (ARX CSV format); repeatable."),
    k: Optional[int] = typer.Option(None, "-k", help="One requirement: k over all quasi-identifiers."),
    require: list[str] = typer.Option([], "--require", help="Requirement 'A,B,C:K'; repeatable."),
    method: Optional[str] = typer.Option(None, "--method", "-m", help="Algorithm (default: recommended)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of every random choice."),
    weights: Optional[str] = typer.Option(None, "--weights", help="uniform | height | mage."),
    beta: Optional[float] = typer.Option(None, "--beta", help="Height-weight exponent (>= 1)."),
    param: list[str] = typer.Option([], "--param", "-p", help="Method parameter KEY=VALUE; repeatable."),
    count_column: Optional[str] = typer.Option(None, "--count-column", help="Column of record counts per row."),
    class_column: Optional[str] = typer.Option(None, "--class-column", help="Class label column (CM)."),
    missing: Optional[str] = typer.Option(None, "--missing", help="error | root: empty QI cells."),
    report: Optional[Path] = typer.Option(None, "--report", help="Write an HTML report here."),
    force: bool = typer.Option(False, "--force", "-f", help="Overwrite an existing output."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress or tables."),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON on stdout."),
    encoding: str = typer.Option("utf-8", "--encoding", help="Text encoding of CSV input."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Output format: csv | parquet | excel."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Log progress details."),
):
    """Anonymise INPUT and write the verified result to OUTPUT."""
    _configure_logging(quiet or as_json, verbose)
    try:
        from .api import AnonymizationError, anonymize as run
        from .io import write_table

        if output.resolve() == input.resolve():
            raise UsageError(f"refusing to overwrite the input {input}; choose another output path")
        if output.exists() and not force:
            raise UsageError(f"output {output} already exists; pass --force to overwrite it")
        if not output.parent.exists():
            raise UsageError(f"output directory {output.parent} does not exist")
        if report is not None and not report.parent.exists():
            raise UsageError(f"report directory {report.parent} does not exist")
        data = _read(input, encoding, None)
        cfg, hierarchies = _setup(config, qi, k, require, data)
        params = {**cfg.params, **_parse_params(param)}
        if cfg.suppression_threshold is not None and "suppression_threshold" not in params:
            params["suppression_threshold"] = cfg.suppression_threshold
        with _status(quiet or as_json, f"anonymising {len(data)} rows..."):
            result = run(
                data, list(hierarchies), hierarchies, cfg.k, requirements=cfg.requirements,
                method=method or cfg.method, weights=weights or cfg.weights, beta=beta or cfg.beta,
                priorities=cfg.priorities, seed=cfg.seed if seed is None else seed,
                count_column=count_column or cfg.count_column, class_column=class_column or cfg.class_column,
                missing=missing or cfg.missing, identifiers=cfg.identifiers,
                identifier_action=cfg.identifier_action, params=params,
            )
        write_table(result.data, output, fmt=fmt or (None if output.suffix else input.suffix.lstrip(".") or None))
        if report is not None:
            from .report import write_report
            write_report(report, data, result, cfg)
    except AnonymizationError as exc:
        _die(str(exc), EXIT_FAILED)
    except _known_errors() as exc:
        _die(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    if as_json:
        typer.echo(json.dumps(result.summary(), default=_json_default, indent=2))
    else:
        _print_metrics(f"{result.method} on {input.name} -> {output.name} (verified)", _metric_rows(result.metrics),
                       quiet)
    raise typer.Exit(EXIT_OK)


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
    config: Optional[Path] = typer.Option(None, "--config", "-c"),
    qi: list[str] = typer.Option([], "--qi"),
    k: Optional[int] = typer.Option(None, "-k"),
    require: list[str] = typer.Option([], "--require"),
    count_column: Optional[str] = typer.Option(None, "--count-column"),
    missing: Optional[str] = typer.Option(None, "--missing"),
    as_json: bool = typer.Option(False, "--json"),
    quiet: bool = typer.Option(False, "-q", "--quiet"),
    encoding: str = typer.Option("utf-8", "--encoding"),
):
    """Report the k a table achieves as it is, and the classes below each requirement."""
    _configure_logging(True, False)
    try:
        from .requirements import normalise
        from .risk import assess
        data = _read(input, encoding, None)
        cfg, hierarchies = _setup(config, qi, k, require, data)
        qis = list(hierarchies)
        from .table import encode
        enc = encode(data, qis, hierarchies, counts=count_column or cfg.count_column, missing=missing or cfg.missing)
        reqs = normalise(cfg.requirements, cfg.k, qis) if (cfg.k or cfg.requirements) else []
        result = assess(enc, reqs)
    except _known_errors() as exc:
        _die(str(exc).splitlines()[0])
    if as_json:
        typer.echo(json.dumps(result.as_dict(), default=_json_default, indent=2))
    elif not quiet:
        _print_metrics(f"check of {input.name}", result.rows(), False)
    raise typer.Exit(EXIT_OK if result.ok else EXIT_FAILED)


@app.command()
def evaluate(
    original: Path = typer.Argument(..., help="The original table."),
    anonymised: Path = typer.Argument(..., help="The anonymised table."),
    config: Optional[Path] = typer.Option(None, "--config", "-c"),
    qi: list[str] = typer.Option([], "--qi"),
    k: Optional[int] = typer.Option(None, "-k"),
    require: list[str] = typer.Option([], "--require"),
    count_column: Optional[str] = typer.Option(None, "--count-column"),
    class_column: Optional[str] = typer.Option(None, "--class-column"),
    weights: Optional[str] = typer.Option(None, "--weights"),
    as_json: bool = typer.Option(False, "--json"),
    quiet: bool = typer.Option(False, "-q", "--quiet"),
    encoding: str = typer.Option("utf-8", "--encoding"),
):
    """Print every metric of ANONYMISED against ORIGINAL and verify it."""
    _configure_logging(True, False)
    try:
        from . import metrics as M
        from .requirements import normalise
        from .verify import verify
        orig = _read(original, encoding, None)
        anon = _read(anonymised, encoding, None)
        cfg, hierarchies = _setup(config, qi, k, require, orig)
        qis = list(hierarchies)
        if cfg.identifiers and cfg.identifier_action == "drop":
            orig = orig.drop(columns=[c for c in cfg.identifiers if c in orig.columns and c not in anon.columns])
        reqs = normalise(cfg.requirements, cfg.k, qis) if (cfg.k or cfg.requirements) else []
        counts = count_column or cfg.count_column
        report = verify(orig, anon, qis, hierarchies, reqs, counts=counts, missing=cfg.missing)
        if report.ok or all(v.kind == "requirement" for v in report.violations):
            metrics = M.evaluate(orig, anon, qis, hierarchies, k=max([r.k for r in reqs], default=1), counts=counts,
                                 scheme=weights or cfg.weights, beta=cfg.beta,
                                 class_column=class_column or cfg.class_column, missing=cfg.missing)
        else:
            metrics = None
    except _known_errors() as exc:
        _die(str(exc).splitlines()[0])
    if as_json:
        typer.echo(json.dumps({"verified": report.ok, "verification": report.summary(),
                               "metrics": metrics.as_dict() if metrics else None}, default=_json_default, indent=2))
    elif not quiet:
        if metrics is not None:
            _print_metrics(f"{anonymised.name} against {original.name}", _metric_rows(metrics), False)
        typer.echo(("VERIFIED: " if report.ok else "VERIFICATION FAILED: ") + report.summary())
    raise typer.Exit(EXIT_OK if report.ok else EXIT_FAILED)


@app.command("config-template")
def config_template():
    """Print an annotated example configuration."""
    from .config import TEMPLATE
    typer.echo(TEMPLATE, nl=False)


@app.command()
def methods():
    """List the anonymisation methods available."""
    from .api import DEFAULT_METHOD, available_methods
    for name in available_methods():
        typer.echo(name + ("  (default)" if name == DEFAULT_METHOD else ""))


def main():  # console-script entry point
    """Run the CLI; an unexpected error is one line on stderr (set
    HIERANON_DEBUG=1 for the traceback), exit status 3."""
    import os
    try:
        app(standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        typer.echo("hieranon: interrupted; nothing was written", err=True)
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - last-resort guard, see docstring
        if os.environ.get("HIERANON_DEBUG"):
            raise
        typer.echo(f"hieranon: internal error: {type(exc).__name__}: {exc} "
                   "(set HIERANON_DEBUG=1 for details and report it)", err=True)
        sys.exit(3)


if __name__ == "__main__":
    main()
