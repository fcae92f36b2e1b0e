"""The gap to the optimum: heuristics against exact local recoding.

200 random small instances drawn from UCI Adult (seeded): 20-60 records, 3-5
QIs chosen at random among the papers' 8, k in {2, 3, 5}, ARX hierarchies,
uniform WHD. Each is solved exactly -- record-level optimal local recoding,
``MinGen(mode="records", objective="distortion")`` on the Problem built by
:func:`hieranon.job.pipeline.prepare`, with a per-phase time limit; an instance the
program refuses (too large) or does not prove optimal within the limit is
noted and skipped -- and by faithful KACA1, ``kaca+`` (default: 8 runs on
tables this small), ``kaca+`` with a single run (``restarts=1``), Mondrian (strict, default options) and the optimal
full-domain generalisation (``FullDomain()``). Reported: each method's
distortion over the optimum's, mean and worst; and how tight the Lagrangian
lower bound of :mod:`hieranon.bounds` is (bound over optimum), the bound that
stands in for the unknown optimum on the full table
(``benchmarks/bench_kacaplus.py``).

Writes ``benchmarks/results/gap.csv`` (one row per instance),
``gap_summary.csv`` (per method), ``gap_bound.csv`` (the bound's tightness)
and ``gap.png`` (box plot of the ratios).

    python benchmarks/bench_gap.py [--adult-dir DIR] [--instances 200] [--time-limit 20] [--seed 10]
"""

from __future__ import annotations

import argparse
import csv
import os
import time
import warnings
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)
import numpy as np

from hieranon.algorithms.fulldomain import FullDomain
from hieranon.algorithms.kaca import KACA1
from hieranon.algorithms.kacaplus import KACAPlus
from hieranon.algorithms.mingen import MinGen, MinGenTooLarge
from hieranon.algorithms.mondrian import Mondrian
from hieranon.bounds import distortion_lower_bound
from hieranon.core.table import group
from hieranon.evaluation import metrics as M
from hieranon.job import pipeline as api
from hieranon_experiments.benchmarking import adult_dir

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
QI_ORDER = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]
METHODS = {
    "kaca1": lambda: KACA1(),
    "kaca+": lambda: KACAPlus(),
    "kaca+ 1 run": lambda: KACAPlus(restarts=1),
    "mondrian": lambda: Mondrian(),
    "fulldomain": lambda: FullDomain(),
}


def instances(frame, n_inst: int, seed: int):
    rng = np.random.default_rng(seed)
    for i in range(n_inst):
        n = int(rng.integers(20, 61))
        q = int(rng.integers(3, 6))
        k = int(rng.choice([2, 3, 5]))
        qis = [QI_ORDER[j] for j in sorted(rng.choice(len(QI_ORDER), q, replace=False))]
        rows = np.sort(rng.choice(len(frame), n, replace=False))
        yield i, frame.iloc[rows].reset_index(drop=True), qis, k


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adult-dir")
    ap.add_argument("--instances", type=int, default=200)
    ap.add_argument("--time-limit", type=float, default=20.0, help="seconds per MILP phase")
    ap.add_argument("--seed", type=int, default=10)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    from hieranon.io.datasets import load_adult

    ad = load_adult(adult_dir(args.adult_dir), download=False)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    load0 = os.getloadavg()
    rows = []
    for i, df, qis, k in instances(ad.frame, args.instances, args.seed):
        prob = api.prepare(df, qis, {q: ad.hierarchies[q] for q in qis}, k, seed=0)
        t = prob.table
        row = {"instance": i, "n": len(df), "q": len(qis), "qis": " ".join(qis), "k": k,
               "distinct_rows": int(group(t.codes).n_classes)}
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                opt = MinGen(mode="records", objective="distortion", time_limit=args.time_limit).solve(prob)
            status = "optimal" if opt.details.optimal else "time_limit"
            d_opt = M.distortion(t.codes, opt.codes, prob.cost, t.counts)
        except MinGenTooLarge as exc:
            status, d_opt = "refused: " + str(exc)[:80], float("nan")
        row.update({"optimum": d_opt, "optimum_status": status, "optimum_time_s": time.perf_counter() - t0})
        for name, make in METHODS.items():
            t0 = time.perf_counter()
            sol = make().solve(prob)
            dt = time.perf_counter() - t0
            sizes = group(sol.codes[~sol.suppressed], t.counts[~sol.suppressed]).sizes
            assert sol.suppressed.sum() == 0 and sizes.min() >= k, f"{name}: not k-anonymous"
            d = M.distortion(t.codes, sol.codes, prob.cost, t.counts)
            if status != "optimal":
                ratio = float("nan")
            elif d_opt == 0:
                ratio = 1.0 if d == 0 else float("inf")
            else:
                ratio = d / d_opt
            if status == "optimal":
                assert d >= d_opt - 1e-9, f"{name} beat the optimum on instance {i}"
            row.update({f"{name}_distortion": d, f"{name}_ratio": ratio, f"{name}_time_s": dt})
        t0 = time.perf_counter()
        bound = distortion_lower_bound(t, prob.cost, k, upper=row["kaca+_distortion"]).distortion
        tight = bound / d_opt if status == "optimal" and d_opt > 0 else float("nan")
        if status == "optimal":
            assert bound <= d_opt + 1e-7, f"the lower bound exceeds the optimum on instance {i}"
        row.update({"lower_bound": bound, "bound_over_optimum": tight, "bound_time_s": time.perf_counter() - t0})
        rows.append(row)
        print(f"{i:3d} n={row['n']:2d} q={row['q']} k={k} opt={d_opt:8.3f} ({status[:10]}, "
              f"{row['optimum_time_s']:.1f}s) " +
              " ".join(f"{m}={row[f'{m}_ratio']:.3f}" for m in METHODS) + f" bound={tight:.3f}", flush=True)

    cols = list(rows[0].keys())
    with open(out_dir / "gap.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({c: (f"{r[c]:.6g}" if isinstance(r[c], float) else r[c]) for c in cols})

    solved = [r for r in rows if r["optimum_status"] == "optimal"]
    skipped = [r for r in rows if r["optimum_status"] != "optimal"]
    summary = []
    for name in METHODS:
        rat = np.array([r[f"{name}_ratio"] for r in solved], dtype=float)
        summary.append({
            "method": name, "instances": len(rat), "skipped_no_optimum": len(skipped),
            "mean_ratio": float(rat.mean()), "median_ratio": float(np.median(rat)), "worst_ratio": float(rat.max()),
            "share_optimal": float((rat <= 1 + 1e-9).mean()),
            "mean_ratio_k2": float(np.mean([r[f"{name}_ratio"] for r in solved if r["k"] == 2])),
            "mean_ratio_k3": float(np.mean([r[f"{name}_ratio"] for r in solved if r["k"] == 3])),
            "mean_ratio_k5": float(np.mean([r[f"{name}_ratio"] for r in solved if r["k"] == 5])),
            "mean_time_s": float(np.mean([r[f"{name}_time_s"] for r in rows])),
        })
    with open(out_dir / "gap_summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summary[0].keys()))
        w.writeheader()
        for s in summary:
            w.writerow({c: (f"{v:.6g}" if isinstance(v, float) else v) for c, v in s.items()})
    tight = np.array([r["bound_over_optimum"] for r in solved if r["optimum"] > 0], dtype=float)
    with open(out_dir / "gap_bound.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["instances", "mean_bound_over_optimum", "median", "worst", "share_tight", "mean_time_s"])
        w.writerow([len(tight), f"{tight.mean():.6g}", f"{np.median(tight):.6g}", f"{tight.min():.6g}",
                    f"{(tight >= 1 - 1e-9).mean():.6g}", f"{np.mean([r['bound_time_s'] for r in rows]):.6g}"])
    total = time.perf_counter() - t_start
    print(f"\n{len(solved)} instances solved to optimality, {len(skipped)} skipped "
          f"({', '.join(sorted({r['optimum_status'][:20] for r in skipped})) or 'none'}); "
          f"{total:.0f}s, load average {load0[0]:.2f} -> {os.getloadavg()[0]:.2f}")
    for s in summary:
        print(f"{s['method']:18s} mean {s['mean_ratio']:.4f}  median {s['median_ratio']:.4f}  "
              f"worst {s['worst_ratio']:.4f}  optimal on {100 * s['share_optimal']:.0f}%")

    print(f"Lagrangian lower bound / optimum: mean {tight.mean():.4f}, median {np.median(tight):.4f}, "
          f"worst {tight.min():.4f}, equal to it on {100 * (tight >= 1 - 1e-9).mean():.0f}%")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.8))
    data = [[r[f"{m}_ratio"] for r in solved] for m in METHODS]
    ax.boxplot(data, showmeans=True, whis=(0, 100))
    ax.set_xticks(range(1, len(METHODS) + 1), list(METHODS), rotation=10)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.axhline(1.05, color="tab:green", lw=0.8, ls=":", label="within 5 % of optimal")
    for x, s in enumerate(summary, start=1):
        ax.annotate(f"mean {s['mean_ratio']:.3f}", (x, s["mean_ratio"]), textcoords="offset points",
                    xytext=(8, 4), fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("distortion / optimal distortion (log scale)")
    ax.set_xlabel("method")
    ax.set_title(f"Gap to optimal local recoding: {len(solved)} random Adult instances\n"
                 f"(20-60 records, 3-5 of 8 QIs, k in {{2,3,5}}, uniform WHD; whiskers = min/max, "
                 f"triangle = mean)", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "gap.png", dpi=120)
    print(f"wrote {out_dir / 'gap.csv'}, gap_summary.csv, gap.png")


if __name__ == "__main__":
    main()
