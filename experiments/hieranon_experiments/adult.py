"""Experiments 1-3 on UCI Adult (45,222 records, ARX hierarchies)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import plots
from .core import Grid, Workbench, summarise

#: Every measured value summarised over seeds
VALUES = ("time_s", "cpu_s", "distortion", "distortion_ratio", "distortion_ratio_uniform", "distortion_ratio_height",
          "dm", "cavg", "classes", "achieved_k", "inconsistency", "top_fraction", "top_fraction_max_attr", "cm",
          "precision", "verified")

KACA2_PARAMS = {"max_inconsistency": 0.1}
DBCA_CM_PARAMS = {"penalty": 1.0}


def _write(raw_rows: list[dict], out: Path, stem: str, keys) -> pd.DataFrame:
    raw = pd.DataFrame(raw_rows)
    raw.to_csv(out / f"{stem}_raw.csv", index=False, float_format="%.6g")
    summary = summarise(raw, keys, [v for v in VALUES if v in raw and raw[v].notna().any()])
    summary.to_csv(out / f"{stem}_summary.csv", index=False, float_format="%.6g")
    return summary


# ------------------------------------------------------------- experiment 1
def exp1_jobs(grid: Grid) -> int:
    return len(grid.exp1_qs) * len(grid.exp1_ks) * (grid.seeds + 1)


def run_exp1(bench: Workbench, grid: Grid, out: Path, step) -> pd.DataFrame:
    """Li et al. 2006 Fig. 2: KACA vs the full-domain optimum, QI size 1..9, k = 2, 10, uniform weights."""
    rows = []
    for k in grid.exp1_ks:
        for q in grid.exp1_qs:
            for seed in range(grid.seeds):
                step(f"exp 1: KACA1 k={k} q={q} seed={seed}")
                rows.append({"experiment": 1, **bench.run("kaca1", {}, bench.problem(q, k, "uniform", seed))})
                step(advance=1)
            step(f"exp 1: full-domain optimum k={k} q={q}")
            rows.append({"experiment": 1, **bench.run("fulldomain", {}, bench.problem(q, k, "uniform", 0),
                                                      repeats=grid.repeats)})
            step(advance=1)
    summary = _write(rows, out, "exp1", ["method", "k", "q"])
    plots.exp1(summary, out / "exp1_fig2.png", grid, int(rows[0]["records"]))
    return summary


# ------------------------------------------------------------- experiment 2
EXP2_METHODS = (("kaca1", {}), ("kaca2", KACA2_PARAMS), ("fulldomain", {}), ("mondrian", {}))


def _exp2_configs(grid: Grid) -> list[tuple[str, int, int]]:
    cfg = [("fig4", grid.exp2_q, k) for k in grid.exp2_ks]
    cfg += [("fig5", q, grid.exp2_k) for q in grid.exp2_qs]
    return cfg


def exp2_jobs(grid: Grid) -> int:
    per = 2 * grid.seeds + 2
    return len(_exp2_configs(grid)) * per


def run_exp2(bench: Workbench, grid: Grid, out: Path, step) -> pd.DataFrame:
    """Li et al. 2008 Figs 4 (6 QIs, k varies) and 5 (k = 10, QI size varies): height weights beta = 1."""
    rows, cache = [], {}
    for fig, q, k in _exp2_configs(grid):
        for method, params in EXP2_METHODS:
            seeds = range(grid.seeds) if method in ("kaca1", "kaca2") else [0]
            for seed in seeds:
                key = (method, q, k, seed)
                step(f"exp 2 ({fig}): {method} k={k} q={q}" + (f" seed={seed}" if method.startswith("kaca") else ""))
                if key not in cache:
                    reps = 1 if method.startswith("kaca") else grid.repeats
                    cache[key] = bench.run(method, params, bench.problem(q, k, "height", seed), repeats=reps)
                rows.append({"experiment": 2, "figure": fig, **cache[key]})
                step(advance=1)
    summary = _write(rows, out, "exp2", ["figure", "method", "k", "q"])
    n = int(rows[0]["records"])
    plots.exp2(summary[summary.figure == "fig4"], out / "exp2_fig4.png", grid, n, "k")
    plots.exp2(summary[summary.figure == "fig5"], out / "exp2_fig5.png", grid, n, "q")
    return summary


# ------------------------------------------------------------- experiment 3
EXP3_METHODS = (("mondrian", {}), ("dbca", {}), ("dbca-cm", DBCA_CM_PARAMS))
EXP3_Q = 8
CLASS = "salary-class"


def exp3_jobs(grid: Grid) -> int:
    return len(grid.exp3_ks) * (1 + 2 * grid.exp3_seeds)


def run_exp3(bench: Workbench, grid: Grid, out: Path, step) -> pd.DataFrame:
    """Sun, Wang & Li 2008 Figs 2-4: Mondrian, DBCA and DBCA:CM, 8 QIs, salary-class as class, uniform WHD."""
    rows = []
    for k in grid.exp3_ks:
        for method, params in EXP3_METHODS:
            seeds = range(grid.exp3_seeds) if method.startswith("dbca") else [0]
            for seed in seeds:
                step(f"exp 3: {method} k={k}" + (f" seed={seed}" if method.startswith("dbca") else ""))
                p = bench.problem(EXP3_Q, k, "uniform", seed, class_column=CLASS)
                reps = 1 if method.startswith("dbca") else grid.repeats
                rows.append({"experiment": 3, **bench.run(method, params, p, repeats=reps)})
                step(advance=1)
    summary = _write(rows, out, "exp3", ["method", "k"])
    plots.exp3(summary, out / "exp3_fig2-4.png", grid, int(rows[0]["records"]))
    return summary
