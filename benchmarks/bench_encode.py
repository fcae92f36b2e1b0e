"""Benchmark: loading hierarchies, encoding, grouping and decoding UCI Adult.

Times, as medians of ``--runs`` runs (default 5), on the 45,222 Adult records
over the papers' nine quasi-identifiers:

* loading ARX's nine hierarchy files,
* encoding the QI columns to node codes (:func:`hieranon.core.table.encode`),
* grouping the code rows into equivalence classes (:func:`hieranon.core.table.group`),
* decoding the codes back to labels (:func:`hieranon.core.table.decode`),
* verifying a full-domain output (every attribute one level up) against
  two requirements with :func:`hieranon.evaluation.verify.verify_codes`, the check the
  API runs after every algorithm (target: under 0.2 s),

and, as a baseline run in the same process, a naive pure-Python version of
each of the last three (a dict look-up per cell, a dict of row tuples, a list
look-up per cell), alternating with hieranon's runs so that both see the same
machine load. The ratio is naive time / hieranon time.

Writes ``benchmarks/results/encode.json`` (with machine information) and
``benchmarks/results/encode.png``.

    HIERANON_ADULT_DIR=/path/to/adult python benchmarks/bench_encode.py
    python benchmarks/bench_encode.py --adult-dir /path/to/adult
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)
import numpy as np
import pandas as pd

from hieranon.core import table as T
from hieranon.core.requirements import Requirement
from hieranon.evaluation.verify import verify_codes
from hieranon.hierarchies.readers import value_to_label
from hieranon.io.datasets import ADULT_QI_ORDER, find_adult_dir, load_adult, load_adult_hierarchies
from hieranon_experiments.benchmarking import benchmark_parser, machine_info

HERE = Path(__file__).resolve().parent


def timed(fn, runs: int):
    """Median wall time of ``runs`` calls of ``fn`` (and the last result)."""
    times, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, result


def timed_pair(ours, naive, runs: int):
    """Median wall times of ``ours`` and ``naive``, run alternately so that both
    see the same machine load; returns (ours median, runs, result, naive median,
    runs, result)."""
    t_ours, t_naive, r_ours, r_naive = [], [], None, None
    for _ in range(runs):
        t0 = time.perf_counter()
        r_ours = ours()
        t1 = time.perf_counter()
        r_naive = naive()
        t2 = time.perf_counter()
        t_ours.append(t1 - t0)
        t_naive.append(t2 - t1)
    return statistics.median(t_ours), t_ours, r_ours, statistics.median(t_naive), t_naive, r_naive


# ------------------------------------------------------------------ naive baselines
def naive_encode(df: pd.DataFrame, qis, hierarchies) -> np.ndarray:
    """One dict look-up per cell, in Python."""
    cols = []
    for q in qis:
        index = hierarchies[q].leaf_index
        cols.append([index[value_to_label(v)] for v in df[q].tolist()])
    return np.array(cols, dtype=np.int32).T


def naive_group(codes: np.ndarray):
    """A dict from row tuple to class id, and a size per class."""
    classes: dict[tuple, int] = {}
    sizes: list[int] = []
    row_class = []
    for row in map(tuple, codes.tolist()):
        c = classes.get(row)
        if c is None:
            c = classes[row] = len(sizes)
            sizes.append(0)
        sizes[c] += 1
        row_class.append(c)
    return sizes, row_class


def naive_decode(codes: np.ndarray, hierarchies, qis) -> pd.DataFrame:
    """One list look-up per cell, in Python."""
    return pd.DataFrame({q: [hierarchies[q].labels[c] for c in codes[:, j].tolist()] for j, q in enumerate(qis)})


# ------------------------------------------------------------------ main
def plot(results: dict, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stages = list(results)
    ours = [results[s]["median_s"] * 1e3 for s in stages]
    naive = [results[s].get("naive_median_s") for s in stages]
    x = np.arange(len(stages))
    w = 0.38
    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=110)
    b1 = ax.bar(x - w / 2, ours, w, label="hieranon (vectorised)", color="#2b6cb0")
    nx = [i for i, v in enumerate(naive) if v is not None]
    b2 = ax.bar(np.array(nx) + w / 2, [naive[i] * 1e3 for i in nx], w, label="naive per-cell Python", color="#dd6b20")
    ax.bar_label(b1, fmt="%.1f", fontsize=8)
    ax.bar_label(b2, fmt="%.0f", fontsize=8)
    ax.set_yscale("log")
    ax.set_xticks(x, [s.replace("_", " ") for s in stages])
    ax.set_xlabel("stage")
    ax.set_ylabel("median wall time (ms, log scale)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    for i in nx:
        r = results[stages[i]]["ratio"]
        ax.annotate(f"x{r:.1f}", (i, max(ours[i], naive[i] * 1e3)), textcoords="offset points", xytext=(0, 12),
                    ha="center", fontsize=8, color="#444")
    ax.margins(y=0.25)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    ap = benchmark_parser(__doc__, HERE / "results")
    ap.add_argument("--runs", type=int, default=5, help="runs per measurement (median reported)")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)

    adult_dir = find_adult_dir(args.adult_dir)
    df = load_adult(adult_dir, hierarchies=False).frame
    qis = list(ADULT_QI_ORDER)
    n = len(df)
    runs = args.runs

    results: dict[str, dict] = {}
    med, times, hs = timed(lambda: load_adult_hierarchies(adult_dir, qis), runs)
    results["load_hierarchies"] = {"median_s": med, "runs_s": times}

    med, times, enc, nmed, ntimes, ncodes = timed_pair(lambda: T.encode(df, qis, hs),
                                                      lambda: naive_encode(df, qis, hs), runs)
    if not np.array_equal(ncodes, enc.codes):
        raise SystemExit("naive and vectorised encodings differ")
    results["encode"] = {"median_s": med, "runs_s": times, "naive_median_s": nmed, "naive_runs_s": ntimes}

    med, times, ec, nmed, ntimes, (nsizes, _) = timed_pair(lambda: T.group(enc.codes),
                                                          lambda: naive_group(enc.codes), runs)
    if sorted(nsizes) != sorted(ec.sizes.tolist()):
        raise SystemExit("naive and vectorised grouping differ")
    results["group"] = {"median_s": med, "runs_s": times, "naive_median_s": nmed, "naive_runs_s": ntimes,
                        "n_classes": ec.n_classes}

    med, times, dec, nmed, ntimes, ndec = timed_pair(lambda: T.decode(enc.codes, enc.hierarchies, qis),
                                                     lambda: naive_decode(enc.codes, hs, qis), runs)
    if not dec.equals(ndec):
        raise SystemExit("naive and vectorised decodings differ")
    if not all((dec[q].to_numpy() == df[q].astype(str).to_numpy()).all() for q in qis):
        raise SystemExit("decode(encode(x)) != x")
    results["decode"] = {"median_s": med, "runs_s": times, "naive_median_s": nmed, "naive_runs_s": ntimes}

    gen = enc.codes.copy()
    for j, h in enumerate(enc.hierarchies):  # a full-domain node: every attribute one level up
        gen[:, j] = h.ancestor_at_depth(gen[:, j], max(h.height - 2, 0))
    reqs = [Requirement(tuple(qis), 5), Requirement(("age", "sex"), 10)]
    med, times, _ = timed(lambda: verify_codes(enc, gen, reqs), runs)
    results["verify_codes"] = {"median_s": med, "runs_s": times}

    for r in results.values():
        if "naive_median_s" in r:
            r["ratio"] = r["naive_median_s"] / r["median_s"]

    config = {"dataset": "UCI Adult (records with '?' dropped)", "n_records": n, "n_qis": len(qis),
              "quasi_identifiers": qis, "runs": runs, "statistic": "median wall time",
              "ratio": "naive per-cell Python time / hieranon time"}
    title = f"hieranon encode benchmark: Adult, {n:,} records x {len(qis)} QIs, median of {runs} runs"

    print(title)
    print(f"{'stage':<18}{'hieranon (ms)':>15}{'naive (ms)':>13}{'ratio':>9}")
    for stage, r in results.items():
        naive = f"{r['naive_median_s'] * 1e3:13.1f}" if "naive_median_s" in r else f"{'-':>13}"
        ratio = f"{r['ratio']:9.1f}" if "ratio" in r else f"{'-':>9}"
        print(f"{stage:<18}{r['median_s'] * 1e3:15.2f}{naive}{ratio}")
    print(f"{ec.n_classes:,} equivalence classes")

    args.out.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": "encode", "date": datetime.now(UTC).isoformat(timespec="seconds"),
               "config": config, "machine": machine_info(), "results": results}
    (args.out / "encode.json").write_text(json.dumps(payload, indent=2) + "\n")
    if not args.no_plot:
        plot(results, args.out / "encode.png", title)
    print(f"wrote {args.out.name}/encode.json" + ("" if args.no_plot else " and encode.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
