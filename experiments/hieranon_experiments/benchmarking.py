"""Shared helpers of the benchmark scripts and ``hieranon experiments``:
the machine a measurement was taken on, and medians of repeated timings."""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from hieranon import __version__

PACKAGES = ("numpy", "pandas", "numba", "scipy", "scikit-learn", "dask")


def machine_info() -> dict:
    """CPU model, core count, platform, Python and package versions, load
    average and date -- written beside every benchmark result."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
    return {"hieranon": __version__, "cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), **versions, "load_average_at_start": load,
            "date": time.strftime("%Y-%m-%d %H:%M:%S")}


def benchmark_parser(doc: str, out: Path) -> argparse.ArgumentParser:
    """The arguments every Adult benchmark takes: ``--adult-dir`` (see
    :func:`adult_dir`) and ``--out``, the results folder (default ``out``);
    the description is the first paragraph of the script's ``doc``."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--adult-dir", help="directory with adult.data, adult.test and hierarchies/ "
                                        "(default $HIERANON_ADULT_DIR)")
    ap.add_argument("--out", type=Path, default=out, help="output directory")
    return ap


def median_time(fn: Callable[[], object], repeats: int = 3) -> tuple[float, object]:
    """Median wall time of ``repeats`` calls of ``fn`` and the last result."""
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def adult_dir(arg=None) -> Path:
    """The UCI Adult folder of a benchmark: ``arg`` (its ``--adult-dir``), else
    ``$HIERANON_ADULT_DIR``, else ``../shared/datasets/adult`` beside the
    checkout. Exits with a one-line message saying what to set when none
    holds ``adult.data``."""
    checkout_sibling = Path(__file__).resolve().parents[2].parent / "shared" / "datasets" / "adult"
    for cand in (arg, os.environ.get("HIERANON_ADULT_DIR"), checkout_sibling):
        if cand and (Path(cand) / "adult.data").exists():
            return Path(cand)
    raise SystemExit("Adult data not found: pass --adult-dir or set HIERANON_ADULT_DIR to the folder holding "
                     "adult.data, adult.test and hierarchies/")
