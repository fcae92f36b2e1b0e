"""Benchmark: the first run after installing (nothing compiled yet) against a warm run.

numba compiles hieranon's kernels on their first call and caches the
machine code on disk; a fresh installation, or a container started for
every job, pays for compiling. Each job below runs ``python -m hieranon
anonymize ... -q`` in a subprocess whose numba cache (``NUMBA_CACHE_DIR``)
is a new empty directory -- the **first** run -- and then again with that
cache filled -- the **warm** run, the baseline measured in the same moment:

* **quick start**: the README's example (80 rows, 4 QIs, k = 3, the
  default method), whose kernels run as Python (a small table);
* **Adult**: UCI Adult (45,222 rows) over its first eight QIs, k = 10,
  the default method (kaca+), written as a CSV with an ARX-hierarchy
  configuration in a temporary directory.

Each job is timed ``--runs`` times (first, warm, first, warm...: both see
the same machine load; medians reported) with the ratio first / warm and
the hash of the outputs (first and warm must be identical).

Writes ``benchmarks/results/first_run.json`` (with the machine and its
load), ``first_run.csv`` and ``first_run.png``.

    python benchmarks/bench_first_run.py [--adult-dir DIR] [--runs 1]
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

import hieranon
from hieranon.benchmarking import adult_dir, benchmark_parser, machine_info
from hieranon.io.datasets import example_path, load_adult

HERE = Path(__file__).resolve().parent
SOURCES = Path(hieranon.__file__).resolve().parent.parent  # the hieranon measured: this checkout's


def adult_job(directory: Path, adult: Path) -> tuple[Path, Path]:
    """Adult as a CSV and a configuration (eight QIs, k = 10) in ``directory``."""
    data = load_adult(adult, download=False)
    table = directory / "adult.csv"
    data.frame.to_csv(table, index=False)
    qis = data.qis(8)
    config = {"k": 10, "quasi_identifiers": {q: str(adult / "hierarchies" / f"adult_hierarchy_{q}.csv") for q in qis},
              "insensitive": [c for c in data.frame.columns if c not in qis]}
    path = directory / "adult.yaml"
    path.write_text(yaml.safe_dump(config))
    return table, path


def run_once(table: Path, config: Path, out: Path, cache: Path) -> float:
    """Wall time of one ``hieranon anonymize`` process using ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join([str(SOURCES), os.environ.get("PYTHONPATH", "")])}
    t = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "hieranon", "anonymize", str(table), "--config", str(config),
                          "-o", str(out), "--force", "-q"], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    if run.returncode != 0:
        raise SystemExit(f"{table.name}: hieranon exited {run.returncode}: {run.stderr.strip()}")
    return wall


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def measure(name: str, table: Path, config: Path, work: Path, runs: int) -> dict:
    firsts, warms, hashes = [], [], set()
    for i in range(runs):
        cache = work / f"cache-{name}-{i}"  # new and empty: nothing compiled
        cache.mkdir()
        out = work / f"{name}.csv"
        firsts.append(run_once(table, config, out, cache))
        hashes.add(digest(out))
        warms.append(run_once(table, config, out, cache))
        hashes.add(digest(out))
        cached = sum(1 for _ in cache.rglob("*.nbi"))
        print(f"{name}: first {firsts[-1]:.1f} s, warm {warms[-1]:.1f} s ({cached} kernels cached)", flush=True)
    first, warm = statistics.median(firsts), statistics.median(warms)
    return {"job": name, "rows": sum(1 for _ in table.open()) - 1, "first_s": first, "warm_s": warm,
            "ratio": first / warm, "first_runs_s": firsts, "warm_runs_s": warms, "kernels_cached": cached,
            "outputs_identical": len(hashes) == 1, "output_sha256": sorted(hashes)}


def plot(results: list[dict], path: Path, machine: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    names = [r["job"] for r in results]
    x = range(len(names))
    ax.bar([i - 0.2 for i in x], [r["first_s"] for r in results], 0.4, label="first run (empty cache)")
    ax.bar([i + 0.2 for i in x], [r["warm_s"] for r in results], 0.4, label="warm run")
    for i, r in enumerate(results):
        ax.annotate(f"x{r['ratio']:.2f}", (i - 0.2, r["first_s"]), ha="center", va="bottom", fontsize=9)
    ax.set_xticks(list(x), names)
    ax.set_ylabel("wall time of the process (s)")
    load = machine.get("load_average_at_start")
    ax.set_title(f"First run vs warm run, {machine['cores']} cores, load {load[0]:.1f}" if load else
                 "First run vs warm run", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = benchmark_parser(__doc__, HERE / "results")
    ap.add_argument("--runs", type=int, default=1, help="first/warm pairs per job (median)")
    args = ap.parse_args()
    adult = adult_dir(args.adult_dir)
    machine = machine_info()
    results = []
    with tempfile.TemporaryDirectory(prefix="hieranon-first-run-") as tmp:
        work = Path(tmp)
        jobs = [("quick start", example_path("patients.csv"), example_path("patients.yaml")),
                ("Adult k=10", *adult_job(work, adult))]
        for name, table, config in jobs:
            results.append(measure(name.replace(" ", "_").replace("=", ""), table, config, work, args.runs))
    try:
        machine["load_average_at_end"] = list(os.getloadavg())
    except OSError:
        pass
    for r in results:
        print(f"{r['job']}: first {r['first_s']:.1f} s / warm {r['warm_s']:.1f} s = {r['ratio']:.2f}"
              f" (outputs identical: {r['outputs_identical']})")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "first_run.json").write_text(json.dumps({"machine": machine, "runs": args.runs, "results": results},
                                                        indent=2) + "\n")
    with (args.out / "first_run.csv").open("w", newline="") as f:
        fields = ["job", "rows", "first_s", "warm_s", "ratio", "kernels_cached", "outputs_identical"]
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(results)
    plot(results, args.out / "first_run.png", machine)


if __name__ == "__main__":
    main()
