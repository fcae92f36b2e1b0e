"""One run of the workbench and its files, and the trade-off grid.

A run writes its configuration (:meth:`Workbench.run_config`) to a file,
loads it as the command line does, and runs
:func:`hieranon.job.pipeline.run`; the release, the report and the
command that reproduces the run are made from the result when asked for.
"""

from __future__ import annotations

import itertools
import logging
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..core.progress import ProgressEvent, reporting
from ..core.progress import stage as progress_stage
from ..io import numeric_columns, numeric_output, write_table, write_text
from ..job.pipeline import run
from .workbench import AppError, Workbench

log = logging.getLogger("hieranon.app")

__all__ = ["Run", "start_run", "grid_points", "GRID_MAX_POINTS"]

#: The most runs one trade-off grid may hold.
GRID_MAX_POINTS = 24
#: The configuration file of a run, as downloaded.
CONFIG_NAME = "hieranon-config.yaml"


@dataclass
class Run:
    """A finished run: its folder, configuration, result and the names of its files."""

    id: str
    folder: Path
    table_name: str
    table_path: Path
    raw: dict
    label: str = ""
    result: object = None
    lower_bound: bool = False
    files: dict = field(default_factory=dict)

    @property
    def release_name(self) -> str:
        return f"{Path(self.table_name).stem}-anonymised.csv"

    def config_text(self) -> str:
        return "# hieranon configuration written by `hieranon app`\n" + yaml.safe_dump(
            self.raw, sort_keys=False, allow_unicode=True)

    def release(self) -> Path:
        """The release as the command line writes it (typed numeric QIs, the input's CSV separator)."""
        if "release" not in self.files:
            spec = self.result.spec
            written = numeric_output(self.result.data, self.result.hierarchies, spec.numeric_output)
            path = self.folder / self.release_name
            write_table(written, path, source=self.table_path, overwrite=True)
            self.files["release"] = path
        return self.files["release"]

    def report(self) -> Path:
        if "report" not in self.files:
            from ..report import render_report
            html = render_report(None, self.result, input_name=Path(self.table_name).name,
                                 output_name=self.release_name)
            self.files["report"] = write_text(html, self.folder / "report.html", overwrite=True)
        return self.files["report"]


def execute(wb: Workbench, folder: Path, raw: dict, progress: Callable[[ProgressEvent], None], *,
            lower_bound: bool = False):
    """Write ``raw`` as the run's configuration file, load it as ``hieranon
    anonymize --config`` does, and run the pipeline on the table."""
    folder.mkdir(parents=True, exist_ok=True)
    config_path = folder / CONFIG_NAME
    write_text(Run("", folder, "", Path(), raw).config_text(), config_path, overwrite=True)
    spec = wb.spec_of(config_path)
    data = wb.table.data
    with reporting(progress):  # every stage of the run, the hierarchies' too
        with progress_stage("building the hierarchies"):
            hierarchies = spec.build_hierarchies(data)
        numeric_columns(data.columns, hierarchies, spec.numeric_output)  # refused before any work, as the CLI does
        result = run(data, spec, hierarchies=hierarchies, lower_bound=lower_bound)
    refusal = result.statement().strict_error() if spec.strict else None
    if refusal is not None:
        raise AppError(refusal)
    return result


def start_run(wb: Workbench, run_id: str, folder: Path, raw: dict, label: str = "",
              lower_bound: bool = False) -> tuple[Run, Callable]:
    """A :class:`Run` and the work that fills its result (for a :class:`~hieranon.app.jobs.Job`)."""
    rec = Run(run_id, folder, wb.table.name, wb.table.path, raw, label=label, lower_bound=lower_bound)

    def work(progress):
        rec.result = execute(wb, folder, raw, progress, lower_bound=lower_bound)
        return rec

    return rec, work


def grid_points(ks: list[int], methods: list[str], with_model: bool) -> list[dict]:
    """The runs of a trade-off grid: every k, every method, with and (when
    the configuration has privacy models) without them."""
    models = (True, False) if with_model else (True,)
    points = [{"k": k, "method": m, "model": w} for k, m, w in itertools.product(sorted(set(ks)), methods, models)]
    if len(points) > GRID_MAX_POINTS:
        raise AppError(f"the grid has {len(points)} runs; at most {GRID_MAX_POINTS}: give fewer k values")
    return points


def grid_work(wb: Workbench, points: list[dict], new_run: Callable[[dict], Run],
              finish: Callable[[Run, str | None], None]):
    """The work of a grid: one run per point, in turn, each with the lower
    bound where it applies (a warning when it does not, kept off the point)."""

    def work(progress):
        done = []
        total = len(points)
        for i, p in enumerate(points):
            rec = new_run(p)
            what = f"run {i + 1} of {total}: k={p['k']}, {p['method']}" + ("" if p["model"] else ", no privacy model")

            def inner(event: ProgressEvent, i=i, what=what) -> None:  # the grid's share, the run's stage beside
                progress(ProgressEvent(what, i + (event.fraction or 0.0), total, event.elapsed, None,
                                       detail=event.stage))

            inner(ProgressEvent("starting", 0, None, 0.0, None))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a bound that does not apply: the point has none
                try:
                    rec.result = execute(wb, rec.folder, rec.raw, inner, lower_bound=True)
                except (AppError, ValueError) as exc:  # this point fails (k too large...); the grid goes on
                    p["error"] = str(exc).splitlines()[0]
                except BaseException:
                    finish(rec, "cancelled")
                    raise
            finish(rec, p.get("error"))
            p["run"] = rec.id
            done.append(p)
        return done

    return work
