"""Benchmark of the global and multidimensional baselines on UCI Adult.

For QI sizes q = 1..8 (the papers' QI order) and k in {2, 10}: the solve time
(median of --repeats runs) of

* ``fulldomain`` -- the optimal full-domain node (least uniform distortion),
* ``datafly``    -- Sweeney's greedy full-domain heuristic,
* ``mondrian``   -- strict and relaxed Mondrian (age numeric),

with the distortion ratio (uniform WHD), DM = sum |E|^2 and, for Mondrian,
the NCP (age as a numeric range, categorical attributes by hierarchy); every
method is run once on 500 rows first, so numba compilation is not timed. As an
in-process baseline the full-domain search is also run as a brute force that
checks every lattice node (``FullDomain(exhaustive=True)``) at q = 8, and the
speed-up is printed.

Writes ``benchmarks/results/baselines.csv``, ``baselines.png`` (time vs q)
and ``baselines_machine.json``.

    python benchmarks/bench_baselines.py [--adult-dir DIR] [--repeats 3] [--quick]

The Adult files are read from --adult-dir, else ``$HIERANON_ADULT_DIR``, else
``../shared/datasets/adult`` beside the checkout.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)

from hieranon.algorithms.base import Problem
from hieranon.algorithms.fulldomain import Datafly, FullDomain
from hieranon.algorithms.mondrian import Mondrian
from hieranon.core.requirements import Requirement
from hieranon.core.table import encode, group
from hieranon.evaluation import metrics as M
from hieranon_experiments.benchmarking import adult_dir, machine_info

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
QI_ORDER = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]

METHODS = {
    "fulldomain": lambda: FullDomain(),
    "datafly": lambda: Datafly(),
    "mondrian-strict": lambda: Mondrian(strict=True, numeric_ranges=True),
    "mondrian-relaxed": lambda: Mondrian(strict=False, numeric_ranges=True),
}


def timed(make, problem: Problem, repeats: int):
    times, sol = [], None
    for _ in range(repeats):
        algo = make()
        t0 = time.perf_counter()
        sol = algo.solve(problem)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), sol


def measure(problem: Problem, sol) -> dict:
    t = problem.table
    uni = M.CostModel.build(t.hierarchies, "uniform")
    keep = ~sol.suppressed
    ec = group(sol.codes[keep], t.counts[keep])
    n_sup = int(t.counts[sol.suppressed].sum())
    return {
        "distortion_ratio": M.distortion_ratio(t.codes, sol.codes, uni, t.counts),
        "dm": M.discernibility(ec.sizes, n_sup, t.n_records),
        "classes": ec.n_classes,
        "min_class": int(ec.sizes.min()),
        "suppressed": n_sup,
    }


def warm_up(df, hs) -> None:
    """Compile (or load from numba's cache) Mondrian's kernel before anything is timed."""
    table = encode(df.iloc[:500], QI_ORDER, {a: hs[a] for a in QI_ORDER})
    problem = Problem(table, [Requirement(tuple(QI_ORDER), 2)], M.CostModel.build(table.hierarchies))
    for make in METHODS.values():
        make().solve(problem)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adult-dir")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--brute-repeats", type=int, default=1)
    ap.add_argument("--ks", type=int, nargs="+", default=[2, 10])
    ap.add_argument("--quick", action="store_true", help="q in {1, 4, 8}, one run each, no plot")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    from hieranon.io.datasets import load_adult

    info = machine_info()
    print(f"machine: {info['cpu']} x{info['cores']}, Python {info['python']}, numpy {info['numpy']}, "
          f"load {info['load_average_at_start']}", flush=True)
    data = load_adult(adult_dir(args.adult_dir), download=False)
    df, hs = data.frame, data.hierarchies
    print(f"Adult: {len(df):,} records", flush=True)
    warm_up(df, hs)
    qs = [1, 4, 8] if args.quick else list(range(1, 9))
    repeats = 1 if args.quick else args.repeats
    rows = []
    total = len(qs) * len(args.ks) * len(METHODS)
    done = 0
    for k in args.ks:
        for q in qs:
            qis = QI_ORDER[:q]
            table = encode(df, qis, {a: hs[a] for a in qis})
            problem = Problem(table, [Requirement(tuple(qis), k)], M.CostModel.build(table.hierarchies))
            for name, make in METHODS.items():
                sec, sol = timed(make, problem, repeats)
                row = {"method": name, "k": k, "q": q, "seconds": sec, "runs": repeats, **measure(problem, sol),
                       "ncp": getattr(sol.details, "ncp", ""), "node": getattr(sol.details, "node", ""),
                       "nodes_checked": getattr(sol.details, "nodes_checked", ""),
                       "lattice_size": getattr(sol.details, "lattice_size", "")}
                rows.append(row)
                done += 1
                ncp = f", NCP {row['ncp']:.4f}" if row["ncp"] != "" else ""
                node = (f", node {row['node']} ({row['nodes_checked']}/{row['lattice_size']} checked)"
                        if row["node"] else "")
                print(f"[{done:3d}/{total}] k={k:<3d} q={q} {name:17s} {sec:8.3f} s  distortion ratio "
                      f"{row['distortion_ratio']:.4f}, DM {row['dm']:.3e}{ncp}{node}", flush=True)
    # brute force (every node checked) at q = 8
    brute = {}
    q = max(qs)
    qis = QI_ORDER[:q]
    table = encode(df, qis, {a: hs[a] for a in qis})
    for k in args.ks:
        problem = Problem(table, [Requirement(tuple(qis), k)], M.CostModel.build(table.hierarchies))
        print(f"brute force k={k} q={q}: checking every node ...", flush=True)
        sec, sol = timed(lambda: FullDomain(exhaustive=True), problem, 1 if args.quick else args.brute_repeats)
        search = next(r for r in rows if r["method"] == "fulldomain" and r["k"] == k and r["q"] == q)
        assert sol.details.node == search["node"], "brute force and search disagree"
        brute[k] = sec
        rows.append({"method": "fulldomain-bruteforce", "k": k, "q": q, "seconds": sec,
                     "runs": 1 if args.quick else args.brute_repeats, **measure(problem, sol), "ncp": "",
                     "node": sol.details.node, "nodes_checked": sol.details.nodes_checked,
                     "lattice_size": sol.details.lattice_size})
        print(f"brute force k={k} q={q}: {sec:.2f} s for {sol.details.nodes_checked} nodes; search "
              f"{search['seconds']:.3f} s for {search['nodes_checked']} nodes -> {sec / search['seconds']:.1f}x faster",
              flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    fields = ["method", "k", "q", "seconds", "runs", "distortion_ratio", "dm", "ncp", "classes", "min_class",
              "suppressed", "node", "nodes_checked", "lattice_size"]
    with open(args.out / "baselines.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({**r, "node": " ".join(map(str, r["node"])) if r["node"] else ""})
    info["config"] = {"data": "UCI Adult (45,222 records, ARX hierarchies)", "qi_order": QI_ORDER, "ks": args.ks,
                      "repeats": repeats, "objective": "uniform WHD distortion", "suppression": 0}
    (args.out / "baselines_machine.json").write_text(json.dumps(info, indent=2))
    print(f"wrote {args.out / 'baselines.csv'} and {args.out / 'baselines_machine.json'}", flush=True)
    plot(rows, args.ks, brute, info, repeats, args.out / "baselines.png")
    print(f"wrote {args.out / 'baselines.png'}", flush=True)
    return 0


def plot(rows, ks, brute, info, repeats, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(ks), figsize=(6 * len(ks), 4.5), sharey=True, squeeze=False)
    for ax, k in zip(axes[0], ks):
        for name in METHODS:
            pts = sorted((r["q"], r["seconds"]) for r in rows if r["method"] == name and r["k"] == k)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
        if k in brute:
            q = max(r["q"] for r in rows)
            ax.plot([q], [brute[k]], marker="X", markersize=10, linestyle="none", color="black",
                    label="fulldomain brute force (every node)")
        ax.set_yscale("log")
        ax.set_xlabel("QI size q (first q of age, workclass, education, marital-status, occupation, race, sex, "
                      "country)", fontsize=7)
        ax.set_title(f"k = {k}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel(f"solve time (s, median of {repeats} runs, log scale)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"hieranon baselines on Adult (45,222 records, no suppression) -- {info['cpu']}, "
                 f"{info['cores']} cores, Python {info['python']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
