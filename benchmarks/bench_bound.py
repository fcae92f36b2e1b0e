"""Benchmark: time of the lower bound (``anonymize --bound``) on UCI Adult.

UCI Adult (45,222 records), the papers' eight QIs (ARX's hierarchies,
uniform WHD), k = 10 and ``--ks``: :func:`hieranon.job.pipeline.anonymize` with
``lower_bound=True`` -- the path of ``hieranon anonymize --bound`` -- its
anonymisation and its bound timed apart (``result.timings``), with the
bound's stages (:attr:`hieranon.bounds.DistortionBound.stage_seconds`);
then k = 10 with ``--t-closeness salary-class=0.2`` and with
``--l-diversity salary-class=2``, whose bounds hold for every output meeting
that model too (the share constraint of a two-valued attribute,
:func:`hieranon.bounds.share_constraint`).
The first call of the process (k = 10) is recorded apart: it may include
numba's compilation of the kernels, cached on disk after a fresh install.

Baselines run in the same process, at k = 10 on kaca+'s output: the bound
with its default settings, then with one of its speed settings undone (the
bound stays valid; only its speed and how high it climbs change):

* ``plain steps``: subgradient steps without the deflection of Camerini,
  Fratta & Maffioli (1975);
* ``serial walk``: the candidate nodes found by one thread;
* ``BLAS products``: the ascent's vector products through BLAS, whose
  spinning threads take the cores from the relaxation's numba threads.

Each row gives the bound's wall time (and a baseline's ratio to the
default's), the bound reached and the time of each stage. Under the
t-closeness, the bound goes on from the prices of kaca+'s Lagrangian
output: its wall time is what the job adds, its stages and iterations
count kaca+'s part too. Writes
``benchmarks/results/bound.csv``, ``bound.json`` (with the machine) and
``bound.png``.

    python benchmarks/bench_bound.py [--adult-dir DIR] [--ks 5 25] [--quick]
"""

from __future__ import annotations

import csv
import json
import textwrap
import time
import warnings
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)
import numpy as np

from hieranon import bounds
from hieranon.algorithms.kacaplus import KACAPlus
from hieranon.bounds import ascent, candidates
from hieranon.evaluation import metrics
from hieranon.io.datasets import load_adult
from hieranon.job import pipeline as api
from hieranon.privacy import DistinctLDiversity, TCloseness
from hieranon_experiments.benchmarking import adult_dir, benchmark_parser, machine_info

HERE = Path(__file__).resolve().parent
QIS = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]
TARGET_SECONDS = 15.0
STAGES = ("candidates", "distinct", "setup", "ascent")
VARIANTS = ("default", "plain steps", "serial walk", "BLAS products")


def _with_bound(df, hs, k: int, privacy=()) -> dict:
    """The ``anonymize --bound`` path: kaca+'s output, then its bound."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = api.anonymize(df, QIS, hs, k=k, lower_bound=True, privacy=privacy,
                            insensitive=[c for c in df.columns
                                         if c not in QIS and c not in {m.attribute for m in privacy}])
    b = res.lower_bound
    variant = "anonymize --bound" + "".join(f" ({m})" for m in b.models)
    return {"k": k, "variant": variant, "bound_seconds": res.timings["lower_bound"],
            "anonymize_seconds": sum(v for s, v in res.timings.items() if s != "lower_bound"),
            "output_ratio": res.metrics.distortion_ratio, **_fields(b)}


def _fields(b: bounds.DistortionBound) -> dict:
    return {"bound_ratio": b.ratio, "iterations": b.iterations, "nodes": b.nodes, "incidences": b.incidences,
            **{f"{s}_seconds": v for s, v in b.stage_seconds.items()}}


def _variant(name: str, prob, upper: float, start) -> dict:
    """The bound of kaca+'s output at k = 10 with one speed setting undone
    (restored after)."""
    saved = ascent.DEFLECTION, candidates.SPLIT_LEVEL, ascent._dot
    if name == "plain steps":
        ascent.DEFLECTION = 0.0
    elif name == "serial walk":
        candidates.SPLIT_LEVEL = -1
    elif name == "BLAS products":
        ascent._dot = lambda a, b: float(a @ b)
    try:
        t = time.perf_counter()
        b = bounds.problem_lower_bound(prob, upper=upper, start=start)
        seconds = time.perf_counter() - t
    finally:
        ascent.DEFLECTION, candidates.SPLIT_LEVEL, ascent._dot = saved
    return {"k": 10, "variant": name, "bound_seconds": seconds, **_fields(b)}


def _plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(11, 4.8))
    labels = [f"k={r['k']}\n" + textwrap.fill(r["variant"].replace(" (equal distance)", ""),
                                              18) for r in rows]
    bottom = np.zeros(len(rows))
    for s in STAGES:
        v = np.array([r.get(f"{s}_seconds", 0.0) for r in rows])
        ax.bar(range(len(rows)), v, bottom=bottom, label=s)
        bottom += v
    for i, r in enumerate(rows):
        more = r["iterations"] - bounds.BOUND_ITERATIONS  # gone on from kaca+'s Lagrangian prices: its stages too
        seconds = f"{r['bound_seconds']:.1f} s" + (f" after kaca+'s {more} it." if more > 0 else "")
        ax.text(i, bottom[i] + 0.3, f"{seconds}\nbound {r['bound_ratio']:.5f}", ha="center", fontsize=7)
    ax.axhline(TARGET_SECONDS, color="grey", lw=0.8, ls=":", label=f"target {TARGET_SECONDS:.0f} s")  # in the legend
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    ax.set(ylabel="wall seconds (stacked stages)", ylim=(0, max(bottom.max(), TARGET_SECONDS) * 1.25),
           title="Lower bound of the distortion on UCI Adult, 8 QIs (anonymize --bound)")
    ax.legend(fontsize=8, loc="upper center", ncol=5)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> None:
    ap = benchmark_parser(__doc__, HERE / "results")
    ap.add_argument("--ks", type=int, nargs="*", default=[5, 25], help="further k (besides 10)")
    ap.add_argument("--quick", action="store_true", help="k = 10 and its baselines only")
    args = ap.parse_args(argv)
    machine = machine_info()
    ad = load_adult(adult_dir(args.adult_dir), download=False)
    df, hs = ad.frame, {q: ad.hierarchies[q] for q in QIS}
    cold = _with_bound(df, hs, 10)  # numba compiles the kernels (cached on disk for later processes)
    cold["variant"] = "first call"
    rows = [cold] + [_with_bound(df, hs, k) for k in [10] + ([] if args.quick else [k for k in args.ks if k != 10])]
    if not args.quick:  # with the t-closeness and the l-diversity of a two-valued sensitive attribute
        rows.append(_with_bound(df, hs, 10, [TCloseness("salary-class", 0.2)]))
        rows.append(_with_bound(df, hs, 10, [DistinctLDiversity("salary-class", 2)]))
    prob = api.prepare(df, QIS, hs, 10)
    sol = KACAPlus().solve(prob)
    upper = metrics.distortion(prob.table.codes, sol.codes, prob.cost, prob.table.counts)
    variants = [_variant(name, prob, upper, sol.codes) for name in VARIANTS]
    for r in variants:
        r["ratio_to_default"] = r["bound_seconds"] / variants[0]["bound_seconds"]
    rows += variants
    for r in rows:
        print(f"k={r['k']:3d} {r['variant']:18s} bound {r['bound_ratio']:.5f} in {r['bound_seconds']:5.1f}s" +
              (f" ({r['ratio_to_default']:.2f}x the default)" if "ratio_to_default" in r else "") + "; stages " +
              ", ".join(f"{s} {r[f'{s}_seconds']:.1f}s" for s in STAGES), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    fields = sorted({f for r in rows for f in r}, key=lambda f: (f not in ("k", "variant"), f))
    with open(args.out / "bound.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="")
        w.writeheader()
        w.writerows(rows)
    (args.out / "bound.json").write_text(json.dumps({"machine": machine, "target_seconds": TARGET_SECONDS,
                                                     "rows": rows}, indent=1))
    _plot(rows, args.out / "bound.png")
    print(f"wrote {args.out / 'bound.csv'}, bound.json, bound.png")


if __name__ == "__main__":
    main()
