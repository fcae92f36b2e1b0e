"""Benchmark: the first run after ``pip install .`` against a warm run.

A fresh virtual environment gets ``pip install --no-cache-dir .`` of this
checkout (nothing cached: the wheel is built, with its kernels compiled
into it, and every dependency downloaded; its time is reported), then each
job runs ``hieranon anonymize ...`` in a subprocess of that environment:
its **first** run after installing, then ``--runs`` **warm** runs (median),
the baseline measured in the same moment, on the same machine load:

* **quick start**: the README's example (80 rows, 4 QIs, k = 3, the
  default method);
* **Adult**: UCI Adult (45,222 rows) over its first eight QIs, k = 10,
  the default method (kaca+), written as a CSV with an ARX-hierarchy
  configuration in a temporary directory.

For comparison, each job's first run **without** the prebuilt kernels
(``HIERANON_PREBUILT_KERNELS=0`` and an empty numba cache: what a
checkout, or an installation whose kernels do not match, pays) is timed
too. Each row says whether the run compiled anything (the one line the
command prints when it does) and the hash of the output (identical in all
runs).

Writes ``benchmarks/results/first_run.json`` (with the machine, its load
and the install time), ``first_run.csv`` and ``first_run.png``.

    python benchmarks/bench_first_run.py [--adult-dir DIR] [--runs 3] [--pip-cache]
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

import harness  # noqa: F401  (puts experiments/ on the import path)
import yaml

from hieranon.core.jit import COMPILE_STAGE
from hieranon.io.datasets import example_path, load_adult
from hieranon_experiments.benchmarking import adult_dir, benchmark_parser, machine_info

HERE = Path(__file__).resolve().parent
SOURCES = HERE.parent  # the checkout installed and measured


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


def install(venv: Path, pip_cache: bool) -> float:
    """Seconds to make ``venv`` and ``pip install`` this checkout into it."""
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    cache = [] if pip_cache else ["--no-cache-dir"]
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", *cache, str(SOURCES)],
                   check=True, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    return time.perf_counter() - t


def run_once(venv: Path, table: Path, config: Path, out: Path, env: dict) -> tuple[float, bool]:
    """Wall time of one ``hieranon anonymize`` process of ``venv``, and
    whether it compiled kernels."""
    t = time.perf_counter()
    run = subprocess.run([str(venv / "bin" / "hieranon"), "anonymize", str(table), "--config", str(config),
                          "-o", str(out), "--force"], capture_output=True, text=True, env=env, cwd=out.parent)
    wall = time.perf_counter() - t
    if run.returncode != 0:
        raise SystemExit(f"{table.name}: hieranon exited {run.returncode}: {run.stderr.strip()}")
    return wall, COMPILE_STAGE in run.stderr


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def measure(name: str, venv: Path, table: Path, config: Path, work: Path, runs: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    out = work / f"{name}.csv"
    first, first_compiled = run_once(venv, table, config, out, env)
    hashes = {digest(out)}
    warms = []
    for _ in range(runs):
        wall, compiled = run_once(venv, table, config, out, env)
        warms.append(wall)
        hashes.add(digest(out))
    cold_env = {**env, "HIERANON_PREBUILT_KERNELS": "0", "NUMBA_CACHE_DIR": str(work / f"empty-cache-{name}")}
    unbuilt, _ = run_once(venv, table, config, out, cold_env)
    hashes.add(digest(out))
    warm = statistics.median(warms)
    print(f"{name}: first {first:.1f} s (compiled: {first_compiled}), warm {warm:.1f} s, ratio {first / warm:.2f}; "
          f"first without prebuilt kernels {unbuilt:.1f} s (ratio {unbuilt / warm:.2f})", flush=True)
    return {"job": name, "rows": sum(1 for _ in table.open()) - 1, "first_s": first, "warm_s": warm,
            "ratio": first / warm, "first_compiled": first_compiled, "warm_runs_s": warms,
            "first_without_prebuilt_s": unbuilt, "ratio_without_prebuilt": unbuilt / warm,
            "outputs_identical": len(hashes) == 1, "output_sha256": sorted(hashes)}


def plot(results: list[dict], path: Path, machine: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    names = [r["job"] for r in results]
    x = range(len(names))
    width = 0.27
    ax.bar([i - width for i in x], [r["first_without_prebuilt_s"] for r in results], width,
           label="first run, kernels not prebuilt", color="#bbbbbb")
    ax.bar(list(x), [r["first_s"] for r in results], width, label="first run after pip install")
    ax.bar([i + width for i in x], [r["warm_s"] for r in results], width, label="warm run")
    for i, r in enumerate(results):
        ax.annotate(f"x{r['ratio']:.2f}", (i, r["first_s"]), ha="center", va="bottom", fontsize=9)
        ax.annotate(f"x{r['ratio_without_prebuilt']:.1f}", (i - width, r["first_without_prebuilt_s"]),
                    ha="center", va="bottom", fontsize=9)
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
    ap.add_argument("--runs", type=int, default=3, help="warm runs per job (median)")
    ap.add_argument("--pip-cache", action="store_true", help="let pip use its cache (faster; not a fresh machine)")
    args = ap.parse_args()
    adult = adult_dir(args.adult_dir)
    machine = machine_info()
    results = []
    with tempfile.TemporaryDirectory(prefix="hieranon-first-run-") as tmp:
        work = Path(tmp)
        venv = work / "venv"
        machine["install_s"] = install(venv, args.pip_cache)
        machine["pip_cache"] = args.pip_cache
        print(f"pip install .: {machine['install_s']:.0f} s", flush=True)
        jobs = [("quick start", example_path("patients.csv"), example_path("patients.yaml")),
                ("Adult k=10", *adult_job(work, adult))]
        for name, table, config in jobs:
            results.append(measure(name.replace(" ", "_").replace("=", ""), venv, table, config, work, args.runs))
    try:
        machine["load_average_at_end"] = list(os.getloadavg())
    except OSError:
        pass
    for r in results:
        print(f"{r['job']}: first {r['first_s']:.1f} s / warm {r['warm_s']:.1f} s = {r['ratio']:.2f}"
              f" (outputs identical: {r['outputs_identical']})")
    print(f"pip install . took {machine['install_s']:.0f} s (kernels compiled into the wheel)")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "first_run.json").write_text(json.dumps({"machine": machine, "runs": args.runs, "results": results},
                                                        indent=2) + "\n")
    with (args.out / "first_run.csv").open("w", newline="") as f:
        fields = ["job", "rows", "first_s", "warm_s", "ratio", "first_compiled", "first_without_prebuilt_s",
                  "ratio_without_prebuilt", "outputs_identical"]
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(results)
    plot(results, args.out / "first_run.png", machine)


if __name__ == "__main__":
    main()
