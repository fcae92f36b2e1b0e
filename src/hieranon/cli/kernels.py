"""``hieranon prepare-kernels``: compile the numba kernels ahead of the first
real run (for an editable install, or a container image built once and
started for every job; a wheel built from the sources already holds them)."""

from __future__ import annotations

import typer

from ..job.prepare import prepare_kernels
from .options import QuietOption
from .output import configure_logging, show_progress


def prepare_kernels_command(quiet: QuietOption = False):
    """Compile the kernels every method, privacy model and the lower bound
    use, by running small jobs on a synthetic table, and keep them in the
    kernels' cache (one to three minutes, once per installation)."""
    configure_logging(quiet, False)
    with show_progress(quiet):
        done = prepare_kernels()
    where = done.cache or "numba's cache beside the installed sources"
    typer.echo(f"compiled kernels kept in {where}: {done.jobs} jobs in {done.seconds:.0f} s")
    if done.not_reached:
        typer.echo(f"{len(done.not_reached)} kernels not reached (compiled on first use): "
                   + ", ".join(done.not_reached))
