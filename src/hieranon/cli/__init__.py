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
--sensitive-hierarchy``, declared once in :mod:`hieranon.cli.options`): each
builds one :class:`~hieranon.job.spec.AnonymizationSpec` from the configuration
with the options given laid over it.
    hieranon hierarchy build --column COL --input TABLE (--intervals 5,10,20 | --mask N | --dates dmy
                       | --suppress) [-o FILE.csv]
    hieranon hierarchy check TABLE [--config FILE.yaml] [--qi NAME=FILE]...
    hieranon config-template | methods | prepare-kernels
    hieranon app [TABLE] [--config FILE.yaml] [--port N] [--no-browser]

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
library (:mod:`hieranon.job.pipeline`, :mod:`hieranon.evaluation.metrics`, :mod:`hieranon.report`),
never computed here. Heavy modules (matplotlib for reports, the algorithms)
are imported only by the commands that need them, so a run starts fast.

One module per command (:mod:`~hieranon.cli.anonymize`, :mod:`~hieranon.cli.check`,
:mod:`~hieranon.cli.evaluate`, :mod:`~hieranon.cli.report`, :mod:`~hieranon.cli.hierarchy`,
:mod:`~hieranon.cli.info`), registered on :data:`app` here; what they share lives in
:mod:`~hieranon.cli.options`, :mod:`~hieranon.cli.files`, :mod:`~hieranon.cli.output` and
:mod:`~hieranon.cli.errors` (exit codes and the one place where exceptions become them).
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .anonymize import anonymize
from .check import check
from .errors import EXIT_OK, run
from .evaluate import evaluate
from .hierarchy import hierarchy_app
from .info import config_template, experiments, methods
from .kernels import prepare_kernels_command
from .report import report_command
from .workbench import app_command

# Each command imports what it uses inside itself (no import cycle is hidden that way: tests/test_imports.py counts
# these imports too): a command loads the report (matplotlib), the utility measures (scipy.sparse, scikit-learn),
# the experiments or Dask only when it uses them.

__all__ = ["app", "main"]

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="k-anonymise tables by generalisation in attribute hierarchies.")


def _show_version(value: bool) -> None:
    if value:
        from .. import __version__
        typer.echo(f"hieranon {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                                help="Print the version and exit.")] = False) -> None:
    """k-anonymise tables by generalisation in attribute hierarchies."""


app.command()(anonymize)
app.command()(check)
app.command()(evaluate)
app.command("report")(report_command)
app.add_typer(hierarchy_app, name="hierarchy")
app.command("config-template")(config_template)
app.command()(methods)
app.command()(experiments)
app.command("prepare-kernels")(prepare_kernels_command)
app.command("app")(app_command)


def main(args: Optional[list[str]] = None) -> None:  # console-script entry point
    """Run the CLI; a usage error is one line on stderr, exit status 2; an
    unexpected error is one line on stderr (set HIERANON_DEBUG=1 for the
    traceback), exit status 3."""
    run(app, args)


if __name__ == "__main__":
    main()
