"""Running the experiments: every experiment's jobs, the figures, ``REPORT.md``.

The orchestration sits above the experiment modules (:mod:`.adult`,
:mod:`.worked`, :mod:`.plots`, :mod:`.report`), which share only
:mod:`.core` (grids, the workbench, summaries), so no module imports one that
imports it back.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pandas as pd

from . import adult as A
from . import plots
from . import report as R
from . import worked as W
from .core import (
    FULL,
    QUICK,
    ExperimentError,
    Grid,
    Workbench,
    load_adult_for_experiments,
    machine_info,
    parse_only,
    warm_up,
)

__all__ = ["run_experiments", "redraw", "ExperimentError"]


def redraw(out: Path, info: dict) -> None:
    """Redraw every figure from the summary CSVs in ``out`` (``--report-only``)."""
    exps = info.get("experiments", {})

    def grid_of(e: int) -> Grid:
        gp = exps.get(str(e), {}).get("grid_params")
        return Grid(**{k: tuple(v) if isinstance(v, list) else v for k, v in gp.items()}) if gp else FULL

    n = 45222   # records of Adult without '?' (the raw CSVs say so in their 'records' column)
    for raw in ("exp1_raw.csv", "exp2_raw.csv", "exp3_raw.csv"):
        if (out / raw).exists():
            n = int(pd.read_csv(out / raw, usecols=["records"]).records.iloc[0])
            break
    if (out / "exp1_summary.csv").exists():
        plots.exp1(pd.read_csv(out / "exp1_summary.csv"), out / "exp1_fig2.png", grid_of(1), n)
    if (out / "exp2_summary.csv").exists():
        s = pd.read_csv(out / "exp2_summary.csv")
        plots.exp2(s[s.figure == "fig4"], out / "exp2_fig4.png", grid_of(2), n, "k")
        plots.exp2(s[s.figure == "fig5"], out / "exp2_fig5.png", grid_of(2), n, "q")
    if (out / "exp3_summary.csv").exists():
        plots.exp3(pd.read_csv(out / "exp3_summary.csv"), out / "exp3_fig2-4.png", grid_of(3), n)
    if (out / "exp4_comparison.csv").exists():
        plots.exp4(pd.read_csv(out / "exp4_comparison.csv"), out / "exp4_worked_examples.png")


def run_experiments(out, quick: bool = False, adult_dir=None, only=None, seeds: int | None = None,
                    report_only: bool = False, console=None) -> dict:
    """Run experiments ``only`` (default all) on the quick or full grid, write
    their CSVs and PNGs to ``out``, then (re)write ``REPORT.md`` from every
    experiment's CSV present in ``out``. Returns the run information."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = console or Console(stderr=True)
    out = Path(out)
    grid = QUICK if quick else FULL
    if seeds is not None:
        if seeds < 1:
            raise ExperimentError(f"--seeds must be at least 1, got {seeds}")
        grid = grid.with_seeds(seeds)
    which = parse_only(only)
    adult = None
    if not report_only and any(e in which for e in (1, 2, 3)):
        adult = load_adult_for_experiments(adult_dir)     # before anything is written
    if report_only and not out.is_dir():
        raise ExperimentError(f"--report-only: {out} is not a folder of experiment results")
    out.mkdir(parents=True, exist_ok=True)
    info_path = out / "run_info.json"
    info = json.loads(info_path.read_text()) if info_path.exists() else {}
    if report_only:
        redraw(out, info)
        R.write_report(out, info)
        return info

    t_all = time.perf_counter()
    info.setdefault("experiments", {})
    info["machine"] = machine_info()
    jobs = {1: A.exp1_jobs(grid), 2: A.exp2_jobs(grid), 3: A.exp3_jobs(grid), 4: W.n_jobs()}
    total = sum(jobs[e] for e in which)
    bench = Workbench(adult) if adult is not None else None
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False) as progress:
        task = progress.add_task("warming up (numba)", total=total)
        if adult is not None:
            console.print(f"Adult: {len(adult.frame):,} records from {adult.path}; grid {grid.name}; "
                          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
            warm_up(adult)

        plain = not console.is_terminal     # CI logs: one plain line per run instead of a live bar
        t_start = time.perf_counter()

        def step(text: str | None = None, advance: int = 0):
            if text is not None:
                progress.update(task, description=text)
                if plain:
                    done = int(progress.tasks[0].completed)
                    console.print(f"[{time.perf_counter() - t_start:7.1f} s] {done + 1}/{total} {text}",
                                  highlight=False, markup=False)
            if advance:
                progress.advance(task, advance)

        runners = {1: lambda: A.run_exp1(bench, grid, out, step), 2: lambda: A.run_exp2(bench, grid, out, step),
                   3: lambda: A.run_exp3(bench, grid, out, step), 4: lambda: W.run_exp4(out, step)}
        for e in which:
            t0 = time.perf_counter()
            load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
            runners[e]()
            secs = time.perf_counter() - t0
            info["experiments"][str(e)] = {
                "grid": grid.name, "grid_params": grid.describe(), "seconds": round(secs, 1),
                "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
                "load_average_start": load0,
                "load_average_end": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
            }
            console.print(f"experiment {e} done in {secs:.0f} s")
    info["grid"] = grid.describe()
    info["grid_name"] = grid.name
    info["last_run_seconds"] = round(time.perf_counter() - t_all, 1)
    info["last_run_experiments"] = list(which)
    info["verification_failures"] = (bench.failures if bench else []) + W.FAILURES
    info_path.write_text(json.dumps(info, indent=2))
    R.write_report(out, info)
    console.print(f"wrote {out / 'REPORT.md'} ({info['last_run_seconds']:.0f} s)")
    return info
