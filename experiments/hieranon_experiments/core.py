"""Grids, the timed-and-verified run of one method, and the driver."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hieranon.algorithms.base import Problem
from hieranon.core.requirements import Requirement
from hieranon.evaluation import metrics as M
from hieranon.evaluation.verify import verify_codes
from hieranon.io.datasets import AdultDataNotFoundError, load_adult
from hieranon.job import pipeline as api

from .benchmarking import machine_info as shared

EXPERIMENTS = (1, 2, 3, 4)


class ExperimentError(RuntimeError):
    """An experiment cannot run (bad option, data missing)."""


@dataclass(frozen=True)
class Grid:
    """The configurations an experiment run covers.

    ``seeds`` is the number of seeds (0, 1, ...) of every randomised method
    (KACA1, KACA2, DBCA, DBCA:CM); ``repeats`` the number of timed repeats of a
    deterministic one (its output is the same each time; the time reported
    is their mean).
    """

    name: str
    seeds: int
    repeats: int
    exp1_qs: tuple[int, ...]
    exp1_ks: tuple[int, ...]
    exp2_ks: tuple[int, ...]
    exp2_q: int
    exp2_qs: tuple[int, ...]
    exp2_k: int
    exp3_ks: tuple[int, ...]
    exp3_seeds: int

    def with_seeds(self, seeds: int) -> Grid:
        return dataclasses.replace(self, seeds=seeds, exp3_seeds=min(seeds, self.exp3_seeds) if self.name == "quick"
                                   else seeds)

    def describe(self) -> dict:
        return dataclasses.asdict(self)


#: The papers' grids
FULL = Grid("full", seeds=10, repeats=5, exp1_qs=tuple(range(1, 10)), exp1_ks=(2, 10),
            exp2_ks=(2, 5, 10, 20, 50, 100), exp2_q=6, exp2_qs=tuple(range(1, 9)), exp2_k=10,
            exp3_ks=(2, 5, 10, 25, 50, 100), exp3_seeds=10)
#: A reduced grid for CI (under 5 minutes on 2 cores)
QUICK = Grid("quick", seeds=2, repeats=1, exp1_qs=(1, 3, 5, 7, 9), exp1_ks=(2, 10),
             exp2_ks=(2, 10, 100), exp2_q=6, exp2_qs=(2, 4, 6, 8), exp2_k=10,
             exp3_ks=(25, 100), exp3_seeds=1)

#: Display names of the methods (the papers' names in brackets)
LABELS = {
    "kaca1": "KACA1", "kaca2": "KACA2 (max inconsist. 10%)", "fulldomain": "Full-domain optimum (Incognito)",
    "mondrian": "Mondrian (Multi / MPA)", "dbca": "DBCA", "dbca-cm": "DBCA:CM",
}
RANDOMISED = {"kaca1", "kaca2", "dbca", "dbca-cm"}


# ------------------------------------------------------------------- runs
class Workbench:
    """The Adult data encoded once per (QI size, weights, class column), and
    the timed, verified, measured run of a method on it."""

    def __init__(self, adult, progress=None):
        self.adult = adult
        self.progress = progress
        self._base: dict[tuple, Problem] = {}
        self.failures: list[str] = []

    def problem(self, q: int, k: int, weights: str, seed: int = 0, class_column: str | None = None) -> Problem:
        key = (q, weights, class_column)
        if key not in self._base:
            qis = self.adult.qis(q)
            self._base[key] = api.prepare(self.adult.frame, qis, self.adult.hierarchies_for(q), k=k, weights=weights,
                                          beta=1.0, seed=seed, class_column=class_column)
        base = self._base[key]
        return dataclasses.replace(base, requirements=[Requirement(tuple(base.table.qi_names), int(k))], seed=seed)

    def run(self, method: str, params: dict, problem: Problem, repeats: int = 1) -> dict:
        """Solve ``repeats`` times (same seed: a deterministic method's timing
        repeats), verify the output independently and measure it."""
        walls, cpus = [], []
        sol = None
        for _ in range(max(1, repeats)):
            algo = api.make_algorithm(method, **params)
            t0, c0 = time.perf_counter(), time.process_time()
            sol = algo.solve(problem)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        return self.measure(method, params, problem, sol, walls, cpus)

    def measure(self, method, params, problem: Problem, sol, walls, cpus) -> dict:
        t = problem.table
        k = problem.k
        report = verify_codes(t, sol.codes, problem.requirements, sol.suppressed)
        if not report.ok:
            self.failures.append(f"{method} {params} k={k} q={len(t.qi_names)} seed={problem.seed}: "
                                 f"{report.summary()}")
        m = M.compute(t.codes, sol.codes, t.hierarchies, k, t.counts, problem.cost, t.qi_names,
                      problem.class_labels, suppressed=sol.suppressed)
        counts = t.counts.astype(np.float64)
        at_root = (sol.codes == 0)
        top_per_attr = (counts @ at_root) / counts.sum()
        return {
            "method": method, "label": LABELS.get(method, method), "params": json.dumps(params, sort_keys=True),
            "q": len(t.qi_names), "k": k, "seed": problem.seed, "repeats": len(walls),
            "time_s": float(np.mean(walls)), "time_min_s": float(np.min(walls)), "cpu_s": float(np.mean(cpus)),
            "weights": problem.cost.description,
            "distortion": m.distortion, "distortion_ratio": m.distortion_ratio,
            "distortion_uniform": m.distortion_uniform, "distortion_ratio_uniform": m.distortion_ratio_uniform,
            "distortion_height": m.distortion_height, "distortion_ratio_height": m.distortion_ratio_height,
            "dm": m.discernibility, "cavg": m.cavg, "classes": m.n_classes, "achieved_k": m.achieved_k,
            "inconsistency": m.inconsistency,
            "inconsistency_attr": ";".join(f"{x:.4f}" for x in m.inconsistency_per_attribute),
            "top_fraction": float(top_per_attr.mean()) if len(top_per_attr) else 0.0,
            "top_fraction_max_attr": float(top_per_attr.max()) if len(top_per_attr) else 0.0,
            "precision": m.precision, "cm": m.classification_metric,
            "suppressed": m.suppressed_records, "records": m.n_records, "verified": bool(report.ok),
        }


def warm_up(adult) -> None:
    """Compile (or load from numba's cache) every kernel before anything is timed."""
    df = adult.frame.iloc[:600]
    qis = adult.qis(8)
    p = api.prepare(df, qis, adult.hierarchies_for(8), k=5, weights="height", seed=0, class_column="salary-class")
    for method, params in (("kaca1", {}), ("kaca2", {"max_inconsistency": 0.1}), ("fulldomain", {}),
                           ("mondrian", {}), ("dbca", {}), ("dbca-cm", {})):
        api.make_algorithm(method, **params).solve(p)


# ------------------------------------------------------------- summaries
def summarise(raw: pd.DataFrame, keys: Sequence[str], values: Sequence[str]) -> pd.DataFrame:
    """Mean, std, min and max over seeds of each value per configuration."""
    g = raw.groupby(list(keys), sort=True)
    parts = {"runs": g.size()}
    for v in values:
        col = pd.to_numeric(raw[v], errors="coerce")
        gv = col.groupby([raw[k] for k in keys], sort=True)
        parts[v] = gv.mean()
        parts[v + "_std"] = gv.std(ddof=0)
        parts[v + "_min"] = gv.min()
        parts[v + "_max"] = gv.max()
    out = pd.DataFrame(parts).reset_index()
    return out


def machine_info() -> dict:
    """The machine the run was measured on (shared with the benchmark scripts)."""
    return shared()


# ------------------------------------------------------------------ driver
def parse_only(only: str | Sequence[int] | None) -> tuple[int, ...]:
    if only is None or only == "":
        return EXPERIMENTS
    items = only.split(",") if isinstance(only, str) else list(only)
    out = []
    for x in items:
        try:
            n = int(str(x).strip())
        except ValueError:
            raise ExperimentError(f"--only takes experiment numbers 1-4 separated by commas, got {only!r}") from None
        if n not in EXPERIMENTS:
            raise ExperimentError(f"--only: there is no experiment {n} (choose from 1, 2, 3, 4)")
        out.append(n)
    return tuple(sorted(set(out)))


def beside_checkout() -> list[Path]:
    """``../shared/datasets/adult`` beside the source checkout and beside the
    working directory, where the tests look too (when they hold adult.data)."""
    checkout = Path(__file__).resolve().parents[2]  # experiments/hieranon_experiments/core.py -> the checkout
    found = [base.parent / "shared" / "datasets" / "adult" for base in (checkout, Path.cwd())]
    return [p for p in dict.fromkeys(found) if (p / "adult.data").is_file()]


def load_adult_for_experiments(adult_dir=None):
    """Adult from ``adult_dir``, else ``$HIERANON_ADULT_DIR``, else
    ``../shared/datasets/adult`` beside the checkout (never downloaded)."""
    path = adult_dir or os.environ.get("HIERANON_ADULT_DIR") or next(iter(beside_checkout()), None)
    if not path:
        raise ExperimentError("the experiments need UCI Adult: set HIERANON_ADULT_DIR to the folder holding "
                              "adult.data, adult.test and hierarchies/ (or pass --adult-dir, or put it in "
                              "../shared/datasets/adult beside the checkout)")
    if not (Path(path) / "adult.data").is_file():
        raise ExperimentError(f"UCI Adult not found in {path} (HIERANON_ADULT_DIR / --adult-dir): it needs "
                              "adult.data, adult.test and hierarchies/adult_hierarchy_<name>.csv")
    try:
        return load_adult(path, download=False)
    except (AdultDataNotFoundError, OSError, ValueError) as exc:
        raise ExperimentError(f"cannot read UCI Adult from {path}: {exc}") from exc
