"""Benchmark: HeuristicMin (Arca & Hewett) on UCI Adult, with TDS and BUG beside it.

Configuration: the 45,222 complete Adult records (adult.data + adult.test,
rows with ``?`` dropped), ARX's hierarchies, k = 10:

* one requirement over the first q QIs of the papers' order (age,
  workclass, education, marital-status, occupation, ...), q = 3, 4, 5
  (``--extended`` adds q = 6, 7, 8);
* two requirements at once, ``<{age, sex}, 10>`` and
  ``<{education, marital-status}, 20>``, over those four QIs.

For every run it records the solve time, the tables HeuristicMin generated
(duplicates not counted) and expanded, the distinct rows of input and
output, Arca & Hewett's precision Prec, and whether the output satisfies every
requirement -- checked here by an independent group-by on the output codes
(and by :func:`hieranon.evaluation.verify.verify_codes` when that module is present).
TDS and BUG (class column salary-class) run on the same configurations for
comparison of the number of distinct rows kept.

Writes ``benchmarks/results/heuristicmin.csv`` and
``benchmarks/results/heuristicmin.json`` (machine information and
configuration) and prints a summary.

    HIERANON_ADULT_DIR=/path/to/adult python benchmarks/bench_heuristicmin.py
    python benchmarks/bench_heuristicmin.py --extended   # also q = 6, 7, 8

The Adult directory holds ``adult.data``, ``adult.test`` and
``hierarchies/adult_hierarchy_<name>.csv`` (ARX's files); it is read from
``$HIERANON_ADULT_DIR`` (default ``../shared/datasets/adult`` beside the
checkout), never copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)
import numpy as np
import pandas as pd

from hieranon.algorithms.base import Problem
from hieranon.algorithms.bug import BUG
from hieranon.algorithms.heuristicmin import HeuristicMin
from hieranon.algorithms.tds import TDS
from hieranon.core.requirements import Requirement
from hieranon.core.table import encode, group
from hieranon.evaluation.metrics import CostModel, precision
from hieranon.hierarchies.readers import from_arx_csv
from hieranon_experiments.benchmarking import adult_dir, machine_info

HERE = Path(__file__).resolve().parent
QI_ORDER = ("age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country")
COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
           "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
           "salary-class")
CLASS = "salary-class"
K = 10


def load(path: Path) -> tuple[pd.DataFrame, dict]:
    """Adult with ARX's hierarchies: hieranon.io.datasets when present, else read here."""
    try:
        from hieranon.io.datasets import load_adult
    except ImportError:
        load_adult = None
    if load_adult is not None:
        ad = load_adult(path, download=False)
        return ad.frame, dict(ad.hierarchies)
    frames = []
    for name in ("adult.data", "adult.test"):
        # UCI's adult.test starts with a "|1x3 Cross validator" line (some copies do not)
        df = pd.read_csv(path / name, header=None, names=list(COLUMNS), sep=",", comment="|", dtype=str,
                         skipinitialspace=True)
        df = df.dropna(how="all")
        df[CLASS] = df[CLASS].str.rstrip(".")
        frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    df = df[~df.isin(["?"]).any(axis=1)].reset_index(drop=True)
    hs = {q: from_arx_csv(path / "hierarchies" / f"adult_hierarchy_{q}.csv", q) for q in QI_ORDER}
    return df, hs


def check(problem: Problem, codes: np.ndarray) -> bool:
    """Independent check: group the output codes by each requirement's
    attributes, and check every cell generalises its original value."""
    t = problem.table
    ok = True
    for r in problem.requirements:
        idx = r.indices(t.qi_names)
        ok &= int(group(codes[:, idx], t.counts).sizes.min()) >= r.k
    for j, h in enumerate(t.hierarchies):
        ok &= bool(h.is_ancestor_or_self(codes[:, j], t.codes[:, j]).all())
    return bool(ok)


def verify_api(problem: Problem, codes: np.ndarray):
    try:
        from hieranon.evaluation.verify import verify_codes
    except ImportError:
        return None
    return bool(verify_codes(problem.table, codes, problem.requirements,
                             np.zeros(problem.table.n_rows, dtype=bool)).ok)


def runs(extended: bool):
    qs = (3, 4, 5, 6, 7, 8) if extended else (3, 4, 5)
    for q in qs:
        qis = list(QI_ORDER[:q])
        yield f"q={q}", qis, [Requirement(tuple(qis), K)]
    yield ("two requirements", ["age", "education", "marital-status", "sex"],
           [Requirement(("age", "sex"), 10), Requirement(("education", "marital-status"), 20)])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extended", action="store_true", help="also q = 6, 7, 8")
    ap.add_argument("--no-baselines", action="store_true", help="HeuristicMin only (skip TDS and BUG)")
    ap.add_argument("--max-tables", type=int, default=200_000)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args(argv)

    path = adult_dir()
    t0 = time.perf_counter()
    df, hs = load(path)
    print(f"Adult: {len(df)} records from {path} ({time.perf_counter() - t0:.1f} s)")
    assert len(df) == 45222, f"expected 45,222 complete records, got {len(df)}"
    labels = df[CLASS].to_numpy()

    rows = []
    for name, qis, reqs in runs(args.extended):
        table = encode(df, qis, {q: hs[q] for q in qis})
        problem = Problem(table, reqs, CostModel.build(table.hierarchies), class_labels=labels)
        n_in = group(table.codes).n_classes
        algos = [HeuristicMin(max_tables=args.max_tables, keep_trace=False)]
        if not args.no_baselines:
            algos += [TDS(), BUG()]
        for algo in algos:
            t = time.perf_counter()
            sol = algo.solve(problem)
            dt = time.perf_counter() - t
            out_rows = group(sol.codes).n_classes
            rec = {
                "run": name, "method": algo.name, "qis": ",".join(qis),
                "requirements": "; ".join(str(r) for r in reqs), "records": table.n_records,
                "input_rows": n_in, "output_rows": out_rows, "row_ratio": round(out_rows / n_in, 6),
                "precision": round(precision(table.codes, sol.codes, table.hierarchies, table.counts), 6),
                "seconds": round(dt, 3),
                "tables_generated": getattr(sol.details, "generated", ""),
                "tables_expanded": getattr(sol.details, "expanded", ""),
                "complete": getattr(sol.details, "complete", ""),
                "steps": getattr(sol.details, "n_steps", ""),
                "verified": check(problem, sol.codes), "verified_api": verify_api(problem, sol.codes),
            }
            rows.append(rec)
            print(f"  {name:17s} {algo.name:12s} {dt:8.2f} s  rows {n_in:6d} -> {out_rows:5d}  "
                  f"Prec {rec['precision']:.3f}  tables {rec['tables_generated'] or '-':>6}  "
                  f"verified {rec['verified']}")
            if not rec["verified"] or rec["verified_api"] is False:
                print(f"ERROR: {algo.name} output for {name} fails verification", file=sys.stderr)

    args.out.mkdir(parents=True, exist_ok=True)
    res = pd.DataFrame(rows)
    res.to_csv(args.out / "heuristicmin.csv", index=False)
    meta = {"machine": machine_info(), "data": "HIERANON_ADULT_DIR (UCI Adult, ARX hierarchies)", "records": len(df),
            "k": K,
            "configuration": [{"run": n, "qis": q, "requirements": [str(r) for r in rq]}
                              for n, q, rq in runs(args.extended)],
            "heuristicmin": {k: getattr(HeuristicMin(max_tables=args.max_tables), k)
                             for k in ("violations", "siblings", "ties", "max_tables")}}
    (args.out / "heuristicmin.json").write_text(json.dumps(meta, indent=2) + "\n")

    print("\nSummary (HeuristicMin):")
    hm = res[res["method"] == "heuristicmin"]
    print(hm[["run", "seconds", "tables_generated", "tables_expanded", "input_rows", "output_rows",
              "precision", "verified"]].to_string(index=False))
    if not args.no_baselines:
        piv = res.pivot(index="run", columns="method", values="output_rows")
        print("\nDistinct rows kept (more is better for HeuristicMin's criterion):")
        print(piv.to_string())
    print(f"\nwrote {args.out / 'heuristicmin.csv'} and {args.out / 'heuristicmin.json'}")
    return 0 if res["verified"].all() and not (res["verified_api"] == False).any() else 1  # noqa: E712


if __name__ == "__main__":
    raise SystemExit(main())
