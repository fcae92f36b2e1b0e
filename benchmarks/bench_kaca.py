"""Benchmark of KACA1 and KACA2 (Li et al. 2008, Algorithms 1 and 2) on UCI Adult.

* 8 QIs (the papers' order), k in {2, 5, 10, 50}, uniform and height (beta=1)
  WHD weights, 3 seeds: distortion ratio (uniform, and under the run's own
  weights), DM = sum |E|^2, CAVG, inconsistency, merges, wall and CPU (thread) time
  (median over the seeds; numba is warmed up first);
* QI sizes q = 1..8 at k = 10 (uniform weights);
* the plain path (the paper's full scan, ``KACA1(fast=False)``) once at k = 10,
  8 QIs, as the in-process baseline of the fast exact branch-and-bound path,
  checking both give the same output, and the ratio of their times;
* peak memory: the process's maximum RSS, and the peak of the arrays one
  KACA1 run allocates (tracemalloc) at k = 10, 8 QIs;
* the command line as a user runs it: ``hieranon anonymize`` of Adult (CSV,
  8 ``--qi`` ARX files, k = 10) in a new interpreter each time -- start,
  import, numba's cached compilation, reading, anonymising, verifying and
  writing -- median of 3 runs for KACA1 and kaca+, with the child's peak RSS;
  and once with an empty numba cache (the very first run after installing).

Writes ``benchmarks/results/kaca.csv`` (one row per configuration),
``kaca.png`` (distortion ratio and time vs k, and vs QI size) and
``kaca_machine.json`` (platform, CPU, load, the measured summary).

    python benchmarks/bench_kaca.py [--adult-dir DIR] [--seeds 3] [--quick]

The Adult files are read from --adult-dir, else ``$HIERANON_ADULT_DIR``, else
``../shared/datasets/adult`` beside the checkout.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)
import numpy as np

from hieranon.algorithms.base import Problem
from hieranon.algorithms.kaca import KACA1, KACA2
from hieranon.core.requirements import Requirement
from hieranon.core.table import encode, group
from hieranon.evaluation import metrics as M
from hieranon_experiments.benchmarking import adult_dir, machine_info

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
QI_ORDER = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]
KS = [2, 5, 10, 50]
SCHEMES = ["uniform", "height"]
ALGOS = {"KACA1": lambda: KACA1(), "KACA2": lambda: KACA2(max_inconsistency=0.10)}


# ---------------------------------------------------------------- data

def load(path: Path):
    """Adult frame (45,222 records) and ARX hierarchies of the 8 QIs."""
    try:
        from hieranon.io.datasets import load_adult

        ad = load_adult(path, download=False)
        return ad.frame, {q: ad.hierarchies[q] for q in QI_ORDER}
    except ImportError:  # pragma: no cover - the datasets module is optional here
        import pandas as pd

        from hieranon.hierarchies.readers import from_arx_csv

        cols = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
                "native-country", "salary-class"]
        frames = []
        for f in ("adult.data", "adult.test"):
            df = pd.read_csv(path / f, header=None, names=cols, sep=",", skipinitialspace=True, comment="|",
                             dtype=str, keep_default_na=False)
            df = df.apply(lambda s: s.str.strip())
            df["salary-class"] = df["salary-class"].str.rstrip(".")
            frames.append(df)
        df = pd.concat(frames, ignore_index=True)
        df = df[~(df == "?").any(axis=1)].reset_index(drop=True)
        hs = {q: from_arx_csv(path / "hierarchies" / f"adult_hierarchy_{q}.csv", q) for q in QI_ORDER}
        return df, hs


# ---------------------------------------------------------------- runs
def run_once(algo: str, enc, k: int, scheme: str, seed: int, models: dict) -> dict:
    cost = models[scheme]
    prob = Problem(enc, [Requirement(tuple(enc.qi_names), k)], cost, seed=seed)
    alg = ALGOS[algo]()
    t0, c0 = time.perf_counter(), time.thread_time()
    sol = alg.solve(prob)
    wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
    ec = group(sol.codes, enc.counts)
    assert ec.sizes.min() >= k, "output is not k-anonymous"
    n = enc.n_records
    return {
        "time_s": wall, "cpu_s": cpu,
        "ratio_uniform": M.distortion_ratio(enc.codes, sol.codes, models["uniform"], enc.counts),
        "ratio_own": M.distortion_ratio(enc.codes, sol.codes, cost, enc.counts),
        "dm": M.discernibility(ec.sizes),
        "cavg": M.cavg(n, ec.n_classes, k),
        "inconsistency": float(M.inconsistency(sol.codes, enc.hierarchies, enc.counts).max()),
        "classes": ec.n_classes,
        "merges": sol.details.merges,
        "codes": sol.codes,
    }


def aggregate(algo, scheme, k, q, runs) -> dict:
    r = lambda key: [x[key] for x in runs]  # noqa: E731
    return {
        "algorithm": algo, "weights": scheme, "k": k, "qi_size": q, "seeds": len(runs),
        "distortion_ratio_uniform": statistics.fmean(r("ratio_uniform")),
        "distortion_ratio_uniform_min": min(r("ratio_uniform")),
        "distortion_ratio_uniform_max": max(r("ratio_uniform")),
        "distortion_ratio_own": statistics.fmean(r("ratio_own")),
        "dm": statistics.fmean(r("dm")), "cavg": statistics.fmean(r("cavg")),
        "inconsistency": statistics.fmean(r("inconsistency")),
        "classes": statistics.fmean(r("classes")), "merges": statistics.fmean(r("merges")),
        "time_median_s": statistics.median(r("time_s")), "cpu_median_s": statistics.median(r("cpu_s")),
    }


# ---------------------------------------------------------------- command line
def time_cli(df, path: Path, methods=("kaca1", "kaca+"), repeats: int = 3, first_run: bool = True) -> dict:
    """Wall time of ``hieranon anonymize`` in a fresh interpreter (median of
    ``repeats`` after one warm-up that fills numba's cache), the largest child
    RSS, and, with ``first_run``, one run with an empty numba cache."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        table = tmp / "adult.csv"
        df.to_csv(table, index=False)
        qi_opts = [x for q in QI_ORDER for x in ("--qi", f"{q}={path / 'hierarchies' / f'adult_hierarchy_{q}.csv'}")]

        def run(method: str, env=None) -> float:
            cmd = [sys.executable, "-m", "hieranon", "anonymize", str(table), "-o", str(tmp / "out.csv"), *qi_opts,
                   "-k", "10", "--method", method, "--force", "-q"]
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, env={**os.environ, **(env or {})})
            return time.perf_counter() - t0

        out: dict = {}
        for method in methods:
            run(method)
            times = [run(method) for _ in range(repeats)]
            out[method] = {"median_s": statistics.median(times), "runs_s": times}
        if first_run:
            out["kaca1_empty_numba_cache_s"] = run("kaca1", {"NUMBA_CACHE_DIR": str(tmp / "numba-cache")})
        out["child_max_rss_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adult-dir")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="k in {10} and QI sizes {4, 8} only, no plain baseline")
    args = ap.parse_args()
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    console = Console(width=max(Console().width, 120))
    info = machine_info()
    path = adult_dir(args.adult_dir)
    df, hs = load(path)
    ks = [10] if args.quick else KS
    qsizes = [4, 8] if args.quick else list(range(1, 9))
    seeds = list(range(args.seeds))
    encs = {q: encode(df, QI_ORDER[:q], hs) for q in qsizes + [8]}
    models = {q: {s: M.CostModel.build(encs[q].hierarchies, s) for s in SCHEMES} for q in encs}
    console.print(f"Adult: {encs[8].n_records:,} records from {path}; "
                  f"{group(encs[8].codes).n_classes:,} distinct 8-QI tuples; {info['cores']} CPUs")

    # warm numba up (compile or load the cache) on a small slice
    small = encs[8].__class__(encs[8].codes[:500], encs[8].hierarchies, encs[8].qi_names, encs[8].counts[:500])
    for algo in ALGOS:
        for fast in (True, False):
            alg = ALGOS[algo]()
            alg.fast = fast
            alg.solve(Problem(small, [Requirement(tuple(small.qi_names), 5)], models[8]["uniform"], seed=0))

    jobs = [(a, s, k, 8) for a in ALGOS for s in SCHEMES for k in ks]
    jobs += [(a, "uniform", 10, q) for a in ALGOS for q in qsizes if q != 8]
    rows, fast_codes = [], None
    # no auto-refresh thread: nothing else runs while a solve is timed
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, auto_refresh=False) as progress:
        task = progress.add_task("KACA runs", total=len(jobs) * len(seeds) + (0 if args.quick else 1))
        for algo, scheme, k, q in jobs:
            runs = []
            for seed in seeds:
                progress.update(task, description=f"{algo} {scheme} k={k} q={q} seed={seed}", refresh=True)
                res = run_once(algo, encs[q], k, scheme, seed, models[q])
                if (algo, scheme, k, q, seed) == ("KACA1", "uniform", 10, 8, 0):
                    fast_codes = res["codes"]
                runs.append(res)
                progress.advance(task)
                progress.refresh()
            rows.append(aggregate(algo, scheme, k, q, runs))
        plain = None
        if not args.quick:
            progress.update(task, description="KACA1 plain path (full scan) k=10 q=8", refresh=True)
            enc = encs[8]
            prob = Problem(enc, [Requirement(tuple(enc.qi_names), 10)], models[8]["uniform"], seed=0)
            t0, c0 = time.perf_counter(), time.thread_time()
            sol = KACA1(fast=False).solve(prob)
            plain = {"time_s": time.perf_counter() - t0, "cpu_s": time.thread_time() - c0,
                     "same_output_as_fast": bool(fast_codes is not None and np.array_equal(sol.codes, fast_codes))}
            progress.advance(task)
            progress.refresh()

    # memory: the arrays of one KACA1 run (k=10, 8 QIs) and the process peak
    enc = encs[8]
    prob = Problem(enc, [Requirement(tuple(enc.qi_names), 10)], models[8]["uniform"], seed=0)
    tracemalloc.start()
    KACA1().solve(prob)
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    maxrss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    console.print("timing the command line (a new interpreter per run)...")
    cli = time_cli(df, path, first_run=not args.quick)

    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "kaca.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})

    def find(algo, scheme, k, q=8):
        return next(r for r in rows if (r["algorithm"], r["weights"], r["k"], r["qi_size"]) == (algo, scheme, k, q))

    head = find("KACA1", "uniform", 10)
    summary = {
        "kaca1_uniform_k10_q8_time_median_s": head["time_median_s"],
        "kaca1_uniform_k10_q8_cpu_median_s": head["cpu_median_s"],
        "kaca1_uniform_k10_q8_distortion_ratio_mean": head["distortion_ratio_uniform"],
        "kaca1_uniform_k10_q8_distortion_ratio_range": [head["distortion_ratio_uniform_min"],
                                                         head["distortion_ratio_uniform_max"]],
        "plain_path": plain,
        "plain_over_fast_time": (plain["time_s"] / head["time_median_s"]) if plain else None,
        "kaca1_k10_traced_peak_mib": traced_peak / 2**20,
        "process_max_rss_mib": maxrss_kib / 1024,
        "cli_anonymize_adult_k10": cli,
    }
    info["summary"] = summary
    info["config"] = {"data": f"UCI Adult ({enc.n_records:,} records, ARX hierarchies)", "qi_order": QI_ORDER,
                      "ks": ks, "qi_sizes": qsizes, "seeds": seeds, "weights": SCHEMES,
                      "kaca2_max_inconsistency": 0.10, "suppression": None}
    info["load_average_at_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    (RESULTS / "kaca_machine.json").write_text(json.dumps(info, indent=2))
    plot(rows, ks, qsizes, enc.n_records, len(seeds))

    tab = Table(title=f"KACA on Adult, 8 QIs ({len(seeds)} seeds; time = median wall)")
    for c in ("algorithm", "weights", "k", "ratio (uniform)", "ratio (own)", "DM", "CAVG", "inconsist.", "time s"):
        tab.add_column(c, justify="right")
    for r in rows:
        if r["qi_size"] == 8:
            tab.add_row(r["algorithm"], r["weights"], str(r["k"]), f"{r['distortion_ratio_uniform']:.4f}",
                        f"{r['distortion_ratio_own']:.4f}", f"{r['dm']:.3g}", f"{r['cavg']:.3f}",
                        f"{r['inconsistency']:.3f}", f"{r['time_median_s']:.3f}")
    console.print(tab)
    tq = Table(title="QI size at k = 10, uniform weights")
    for c in ("algorithm", "q", "ratio", "inconsist.", "time s"):
        tq.add_column(c, justify="right")
    for r in rows:
        if r["k"] == 10 and r["weights"] == "uniform":
            tq.add_row(r["algorithm"], str(r["qi_size"]), f"{r['distortion_ratio_uniform']:.4f}",
                       f"{r['inconsistency']:.3f}", f"{r['time_median_s']:.3f}")
    console.print(tq)
    console.print(f"KACA1 k=10, 8 QIs, uniform: {head['time_median_s']:.3f} s wall "
                  f"({head['cpu_median_s']:.3f} s CPU), distortion ratio {head['distortion_ratio_uniform']:.4f} "
                  f"[{head['distortion_ratio_uniform_min']:.4f}, {head['distortion_ratio_uniform_max']:.4f}]")
    if plain:
        console.print(f"plain path (full scan): {plain['time_s']:.2f} s -> plain/fast = "
                      f"{summary['plain_over_fast_time']:.1f}x; same output: {plain['same_output_as_fast']}")
    console.print(f"memory: arrays of one KACA1 run peak {summary['kaca1_k10_traced_peak_mib']:.1f} MiB; "
                  f"process max RSS {summary['process_max_rss_mib']:.0f} MiB")
    console.print("command line, Adult k=10 (new interpreter, read + anonymise + verify + write): "
                  + ", ".join(f"{m} {cli[m]['median_s']:.2f} s" for m in ("kaca1", "kaca+"))
                  + (f"; first run with an empty numba cache {cli['kaca1_empty_numba_cache_s']:.1f} s"
                     if "kaca1_empty_numba_cache_s" in cli else "")
                  + f"; child peak RSS {cli['child_max_rss_mib']:.0f} MiB")
    console.print(f"wrote {RESULTS / 'kaca.csv'}, kaca.png, kaca_machine.json")


def plot(rows, ks, qsizes, n_records, n_seeds) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    styles = {("KACA1", "uniform"): "o-", ("KACA1", "height"): "o--", ("KACA2", "uniform"): "s-",
              ("KACA2", "height"): "s--"}
    for (algo, scheme), style in styles.items():
        sel = sorted((r for r in rows if r["algorithm"] == algo and r["weights"] == scheme and r["qi_size"] == 8),
                     key=lambda r: r["k"])
        if not sel:
            continue
        x = [r["k"] for r in sel]
        axes[0].plot(x, [r["distortion_ratio_own"] for r in sel], style, label=f"{algo}, {scheme} weights")
        axes[1].plot(x, [r["time_median_s"] for r in sel], style, label=f"{algo}, {scheme} weights")
    for ax, ylab in ((axes[0], "distortion ratio (run's own weights)"), (axes[1], "wall time [s] (median)")):
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(ks)
        ax.set_xticklabels([str(k) for k in ks])
        ax.set_xlabel("k")
        ax.set_ylabel(ylab)
        ax.grid(alpha=0.3)
        ax.legend()
    ax2 = axes[2]
    twin = ax2.twinx()
    for algo, style in (("KACA1", "o-"), ("KACA2", "s-")):
        sel = sorted((r for r in rows if r["algorithm"] == algo and r["weights"] == "uniform" and r["k"] == 10),
                     key=lambda r: r["qi_size"])
        ax2.plot([r["qi_size"] for r in sel], [r["distortion_ratio_uniform"] for r in sel], style,
                 label=f"{algo} distortion ratio")
        twin.plot([r["qi_size"] for r in sel], [r["time_median_s"] for r in sel], style, alpha=0.4,
                  label=f"{algo} time")
    ax2.set_xlabel("QI size q (first q of the papers' order)")
    ax2.set_ylabel("distortion ratio (uniform)")
    twin.set_ylabel("wall time [s] (median)")
    h1, l1 = ax2.get_legend_handles_labels()
    h2, l2 = twin.get_legend_handles_labels()
    ax2.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=8)
    ax2.grid(alpha=0.3)
    ax2.set_title("k = 10, uniform weights")
    fig.suptitle(f"KACA1 / KACA2 (max inconsistency 0.10) on UCI Adult: {n_records:,} records, "
                 f"8 QIs, ARX hierarchies, height weights beta = 1, {n_seeds} seeds")
    fig.tight_layout()
    fig.savefig(RESULTS / "kaca.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
