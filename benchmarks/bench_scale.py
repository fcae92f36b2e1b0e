"""Scale benchmark: partitioned anonymisation on a local Dask cluster.

For each size (default 100k, 1M, 5M rows) a synthetic Adult-schema table
(``hieranon.io.datasets.synthetic``, 8 QIs) is written as a Parquet dataset,
then anonymised at k = 10 by ``hieranon.job.scale.anonymize_parquet`` (blocks of
``--block-size`` records, KACA1 inside each, 2 Dask workers) into a Parquet
dataset and verified by streaming. Each size runs in its own subprocess so
the driver's peak memory (ru_maxrss) is that size's alone.

Baselines, in the same run: on the first size, a single-process serial run
of the same blocks (ratio = serial / Dask time) and, on Adult when
HIERANON_ADULT_DIR is set, the whole-table (single-block) KACA1 run against
the partitioned run (distortion within 10 % is the goal).

Writes ``benchmarks/results/scale.csv``, ``scale.json`` and ``scale.png``
(log-log time vs rows).

    python benchmarks/bench_scale.py [--sizes 100000 1000000 5000000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def one_size(n: int, block_size: int, workers: int, executor: str, method: str | None = None) -> dict:
    from hieranon.io.datasets.synthetic import COLUMNS, iter_synthetic, synthetic_hierarchies
    from hieranon.job.scale import anonymize_parquet

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in"
        src.mkdir()
        t = time.perf_counter()
        for i, chunk in enumerate(iter_synthetic(n, seed=0, chunk_size=250_000)):
            chunk.to_parquet(src / f"part-{i:05d}.parquet", index=False)
        gen = time.perf_counter() - t
        t = time.perf_counter()
        cpu = time.process_time()
        res = anonymize_parquet(src, Path(tmp) / "out", COLUMNS[:8], synthetic_hierarchies(), k=10,
                                block_size=block_size, executor=executor, n_workers=workers, method=method)
        total = time.perf_counter() - t
        driver_cpu = time.process_time() - cpu
    usage = resource.getrusage(resource.RUSAGE_SELF)
    peak = usage.ru_maxrss / 1024  # KiB -> MiB on Linux
    workers_usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"rows": n, "executor": executor, "method": method or "kaca+", "blocks": res.blocks,
            "seconds": round(total, 2), "driver_cpu_seconds": round(driver_cpu, 2),
            "workers_cpu_seconds": round(workers_usage.ru_utime + workers_usage.ru_stime, 2),
            "generate_seconds": round(gen, 2), **{f"t_{k}": round(v, 2) for k, v in res.timings.items()},
            "distortion_ratio": round(res.distortion_ratio, 5), "verified": res.verification.ok,
            "achieved_k": min(res.verification.achieved_k.values()), "driver_peak_mib": round(peak, 1)}


def run_child(n: int, args, executor: str) -> dict:
    cmd = [sys.executable, __file__, "--child", str(n), "--block-size", str(args.block_size), "--workers",
           str(args.workers), "--executor", executor, *(["--method", args.method] if args.method else [])]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def adult_comparison(block_size: int) -> dict | None:
    path = os.environ.get("HIERANON_ADULT_DIR")
    if not path or not (Path(path) / "adult.data").exists():
        return None
    from hieranon.algorithms.kaca import KACA1
    from hieranon.algorithms.partition import Partitioned
    from hieranon.evaluation import metrics as M
    from hieranon.io.datasets import load_adult
    from hieranon.job.pipeline import prepare

    adult = load_adult(path)
    p = prepare(adult.frame, adult.qis(8), adult.hierarchies, k=10)
    KACA1().solve(p)  # compile
    t = time.perf_counter()
    whole = KACA1().solve(p)
    t_whole = time.perf_counter() - t
    t = time.perf_counter()
    part = Partitioned(block_size=block_size, executor="serial").solve(p)
    t_part = time.perf_counter() - t
    d_whole = M.distortion_ratio(p.table.codes, whole.codes, p.cost)
    d_part = M.distortion_ratio(p.table.codes, part.codes, p.cost)
    return {"adult_whole_ratio": round(d_whole, 5), "adult_partitioned_ratio": round(d_part, 5),
            "adult_relative_increase": round(d_part / d_whole - 1, 4), "adult_blocks": part.details.blocks,
            "adult_whole_seconds": round(t_whole, 3), "adult_partitioned_seconds": round(t_part, 3)}


def plot(rows: list[dict], args) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dask_rows = [r for r in rows if r["executor"] == "dask"]
    fig, ax = plt.subplots(figsize=(6, 4.2))
    xs = [r["rows"] for r in dask_rows]
    ax.loglog(xs, [r["seconds"] for r in dask_rows], "o-", label="partitioned KACA1 on Dask (2 workers)")
    if xs:
        ref = dask_rows[0]["seconds"]
        ax.loglog(xs, [ref * x / xs[0] for x in xs], "--", color="grey", label="linear growth")
    ax.set_xlabel("rows (synthetic Adult schema, 8 QIs)")
    ax.set_ylabel("wall time incl. read, write, verify (s)")
    ax.set_title(f"Scale: k=10, blocks of {args.block_size} records, {platform.machine()} x{os.cpu_count()}",
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "scale.png", dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 5_000_000])
    ap.add_argument("--block-size", type=int, default=20_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--executor", default="dask")
    ap.add_argument("--method", help="method inside each block (default: the default method)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(one_size(args.child, args.block_size, args.workers, args.executor, args.method)))
        return
    from rich.progress import track

    rows = []
    for n in track(args.sizes, description="sizes"):
        rows.append(run_child(n, args, "dask"))
        print(rows[-1], flush=True)
    baseline = run_child(args.sizes[0], args, "serial")
    rows.append(baseline)
    speedup = baseline["seconds"] / rows[0]["seconds"]
    print(f"baseline: serial {baseline['seconds']} s vs Dask {rows[0]['seconds']} s at {args.sizes[0]} rows "
          f"(serial/Dask = {speedup:.2f})")
    adult = adult_comparison(args.block_size)
    if adult:
        print(f"Adult k=10 8 QIs: whole-table ratio {adult['adult_whole_ratio']}, partitioned "
              f"{adult['adult_partitioned_ratio']} ({adult['adult_relative_increase']:+.1%}, goal within 10 %)")
    RESULTS.mkdir(exist_ok=True)
    import csv
    with open(RESULTS / "scale.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    import harness  # noqa: F401  (puts experiments/ on the import path)

    from hieranon_experiments.benchmarking import machine_info
    machine = machine_info()
    (RESULTS / "scale.json").write_text(json.dumps({"machine": machine, "runs": rows, "adult": adult,
                                                    "serial_over_dask_first_size": round(speedup, 3)}, indent=2))
    plot(rows, args)
    for r in rows:
        print(f"{r['executor']:>6} {r['rows']:>9} rows: {r['seconds']:>7} s, {r['blocks']} blocks, "
              f"ratio {r['distortion_ratio']}, peak {r['driver_peak_mib']} MiB, verified {r['verified']}")


if __name__ == "__main__":
    main()
