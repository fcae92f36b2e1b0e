"""``hieranon app``: the custodian's workbench, a local web application
(:mod:`hieranon.app`), served on 127.0.0.1 with a session token."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .errors import EXIT_OK, die, known_errors, one_line
from .options import ConfigOption
from .output import configure_logging


def app_command(
    table: Optional[Path] = typer.Argument(None, help="A table to load at the start (CSV, Parquet or Excel)."),
    config: ConfigOption = None,
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (default: a free one)."),
    no_browser: bool = typer.Option(False, "--no-browser", help="Only print the address; open no browser."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Log what the app does (never table content)."),
):
    """Start the workbench: a local web application from a table to a
    verified release (load, classify the columns, hierarchies,
    requirements, run, results and downloads). It listens on 127.0.0.1
    only and prints its address with the session's token; stop it with
    Ctrl-C (its temporary files are removed)."""
    configure_logging(False, verbose)
    if not 0 <= port <= 65535:
        die(f"--port {port}: expected a port number from 1 to 65535 (or leave it out for a free one)")
    from ..app import INSTALL_HINT, missing_dependency

    missing = missing_dependency()
    if missing is not None:
        die(f"hieranon app needs {missing}, which is not installed: {INSTALL_HINT}")
    from ..app import serve

    def ready(url: str) -> None:
        typer.echo(f"hieranon workbench: {url}")
        typer.echo("(the address holds this session's token; stop the app with Ctrl-C)", err=True)
        if not no_browser:
            import webbrowser
            webbrowser.open(url)

    try:
        serve(table, config, port=port, ready=ready)
    except OSError as exc:
        if port and exc.filename is None:
            die(f"--port {port}: cannot listen on 127.0.0.1:{port} ({exc.strerror or exc}); choose another port "
                "or leave --port out")
        die(one_line(exc))
    except known_errors() as exc:
        die(one_line(exc))
    raise typer.Exit(EXIT_OK)
