"""What l-diversity and t-closeness cost each method on UCI Adult.

Adult (45,222 records), ARX's hierarchies, uniform WHD, seed 0, two set-ups:

* sensitive ``salary-class`` (two values, 75 % ``<=50K``), the papers' 8 QIs;
* sensitive ``occupation`` (14 values), the 7 other QIs (occupation dropped).

k in {2, 5, 10, 25}; each model at two strengths: distinct l-diversity
(l = 2; l = 3 for occupation only -- salary-class has two values), entropy
l-diversity (l = 1.5, 2), recursive (c, l)-diversity ((4, 2), (3, 2)),
t-closeness with the equal ground distance (t = 0.2, 0.3). A model the whole
table cannot meet (entropy l = 2 and recursive (3, 2) on salary-class) is
refused before any work: the benchmark records the refusal and its message.

Every method that honours the models (kaca+, kaca1, mondrian, fulldomain,
partitioned with kaca+ inside, serial; and, asked for, kaca+ with
``lagrangian=True``) is run in this process after a warm-up
on 2,000 rows with each model and without (numba's kernels compiled or read
from the cache before any timing), with the models and without (plain k-anonymity, the
baseline). Per run: distortion ratio (suppressed records count as fully
generalised), DM, suppressed records, classes, time of ``solve``, and the
ratio to the same method's plain k-anonymity run. Every output is checked by
the independent verifier (:func:`hieranon.evaluation.verify.verify_codes`) with the
models.

Writes ``benchmarks/results/privacy.csv`` (one row per run, written as it
goes), ``privacy.json`` (rows, refusals, machine), ``privacy.png``
(distortion) and ``privacy_time.png`` (kaca+'s time over its plain run's).

    python benchmarks/bench_privacy.py [--adult-dir DIR] [--quick]
    python benchmarks/bench_privacy.py --models t --sensitive occupation --k 5 --k 2 --tag _t
    python benchmarks/bench_privacy.py --summary

A piece of the grid (``--k``, ``--models l|t``, ``--method``, ``--sensitive``)
writes ``privacy_<attributes><tag>.*``; ``--summary`` joins the current set
``privacy.csv`` and every piece into one current set again (a later
measurement replacing an earlier one of the same model, k and method; each
row keeps the piece it came from, its date and the load at its start):
``privacy.csv``, ``privacy.json``, ``privacy.png`` and ``privacy.md``, to
which ``privacy_status.md`` (what ran at which commit, what did not) is
appended. The pieces can then be removed.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import time
from dataclasses import replace
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)
import numpy as np

from hieranon.algorithms.base import Problem
from hieranon.algorithms.registry import make_algorithm
from hieranon.core.requirements import Requirement
from hieranon.core.table import EncodedTable, group
from hieranon.evaluation import metrics as M
from hieranon.evaluation.verify import verify_codes
from hieranon.job import pipeline as api
from hieranon.privacy import (
    DistinctLDiversity,
    EntropyLDiversity,
    PrivacyError,
    RecursiveCLDiversity,
    TCloseness,
)
from hieranon_experiments.benchmarking import adult_dir, machine_info

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
QI8 = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]
#: the order the runs go in (the k of the quality targets first; k = 2 repairs the most classes)
KS = [10, 25, 5, 2]
#: (method label, registry name, parameters)
METHODS = [
    ("kaca+", "kaca+", {}),
    # the Lagrangian output also at small k, from the nearest larger k whose relaxation fits (t-closeness only)
    ("kaca+ lagrangian", "kaca+", {"lagrangian": True}),
    ("kaca1", "kaca1", {}),
    ("mondrian", "mondrian", {}),
    ("fulldomain", "fulldomain", {}),
    ("partitioned", "partitioned", {"executor": "serial", "inner_method": "kaca+"}),
]
QUICK_METHODS = {"kaca+", "mondrian", "fulldomain"}
#: run only when named with --method
OPT_IN_METHODS = {"kaca+ lagrangian"}
#: the columns of a run's row
COLUMNS = ["sensitive", "model", "k", "method", "distortion_ratio", "plain_ratio", "ratio_vs_plain", "dm",
           "plain_dm", "suppressed", "classes", "time_s", "plain_time_s"]
#: where a row of the joined set was measured: the piece (its files' stem), its date and 1-minute load at the
#: start, and whether it predates the t-closeness repair change
PROVENANCE = ["piece", "measured", "load_at_start", "earlier"]


def models_for(sensitive: str) -> list:
    """The models of one set-up, two strengths each."""
    out = [DistinctLDiversity(sensitive, 2)]
    if sensitive == "occupation":
        out.append(DistinctLDiversity(sensitive, 3))
    out += [EntropyLDiversity(sensitive, 1.5), EntropyLDiversity(sensitive, 2),
            RecursiveCLDiversity(sensitive, 4, 2), RecursiveCLDiversity(sensitive, 3, 2),
            TCloseness(sensitive, 0.2, "equal"), TCloseness(sensitive, 0.3, "equal")]
    return out


def measure(prob: Problem, label: str, name: str, params: dict) -> dict:
    t0 = time.perf_counter()
    sol = make_algorithm(name, **params).solve(prob)
    elapsed = time.perf_counter() - t0
    t = prob.table
    rep = verify_codes(t, sol.codes, prob.requirements, sol.suppressed, privacy=prob.privacy)
    if not rep.ok:
        raise AssertionError(f"{label}: the verifier rejects the output: {rep.summary()}")
    kept = ~sol.suppressed
    ec = group(sol.codes[kept], t.counts[kept])
    n_sup = int(t.counts[sol.suppressed].sum())
    return {"method": label, "distortion_ratio": M.distortion_ratio(t.codes, sol.codes, prob.cost, t.counts),
            "dm": M.discernibility(ec.sizes, n_sup), "suppressed": n_sup, "classes": int(ec.n_classes),
            "time_s": elapsed}


SETUPS = {"salary-class": QI8, "occupation": [q for q in QI8 if q != "occupation"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adult-dir")
    ap.add_argument("--quick", action="store_true", help="salary-class, k = 10, kaca+/mondrian/fulldomain")
    ap.add_argument("--sensitive", choices=list(SETUPS), action="append",
                    help="only this set-up (repeatable); results then go to privacy_<attribute>.*")
    ap.add_argument("--k", type=int, action="append", help="only this k (repeatable)")
    ap.add_argument("--models", choices=["l", "t", "all"], default="all",
                    help="only the l-diversity models (l) or only t-closeness (t)")
    ap.add_argument("--method", action="append", choices=[m[0] for m in METHODS], help="only this method (repeatable)")
    ap.add_argument("--tag", default="", help="appended to the result files' names (privacy_<attribute><tag>.*)")
    ap.add_argument("--summary", action="store_true",
                    help="only join privacy.csv and the pieces privacy_*.csv/json already in benchmarks/results "
                         "into one current set (privacy.csv, .json, .png, .md)")
    args = ap.parse_args()
    if args.summary:
        summarise(RESULTS)
        return
    from hieranon.io.datasets import load_adult

    ad = load_adult(adult_dir(args.adult_dir), download=False)
    df = ad.frame
    ks = args.k or ([10] if args.quick else KS)
    methods = [m for m in METHODS if (not args.quick or m[0] in QUICK_METHODS)
               and (m[0] in args.method if args.method else m[0] not in OPT_IN_METHODS)]
    machine = machine_info()
    chosen = args.sensitive or (["salary-class"] if args.quick else list(SETUPS))
    suffix = ("_quick" if args.quick else "") + ("_" + "_".join(chosen) if args.sensitive else "") + args.tag
    RESULTS.mkdir(parents=True, exist_ok=True)
    cols = COLUMNS
    rows: list[dict] = []
    refused: list[dict] = []
    csv_path = RESULTS / f"privacy{suffix}.csv"
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for sensitive in chosen:
            qis = SETUPS[sensitive]
            hs = {q: ad.hierarchies[q] for q in qis}
            base = api.prepare(df, qis, hs, 10)
            enc = base.table
            bound = []
            for model in models_for(sensitive):
                if args.models != "all" and (args.models == "t") != isinstance(model, TCloseness):
                    continue
                b = model.bind(df)
                try:
                    b.check_feasible()
                except PrivacyError as e:
                    refused.append({"sensitive": sensitive, "model": model.describe(), "message": str(e)})
                    print(f"refused: {e}", flush=True)
                    continue
                bound.append(b)
            # warm-up: every kernel compiled (or loaded from the cache) on a slice, with each model and without
            head = np.arange(2000)
            small = Problem(EncodedTable(enc.codes[head], enc.hierarchies, enc.qi_names, enc.counts[head]),
                            [Requirement(tuple(qis), 5)], base.cost, seed=0)
            for _, name, params in methods:
                make_algorithm(name, **params).solve(small)
                for b in bound:
                    try:
                        make_algorithm(name, **params).solve(replace(small, privacy=[b.subset(head)]))
                    except PrivacyError:  # the slice alone cannot meet it: its kernels compile in the first run
                        pass
            for k in ks:
                reqs = [Requirement(tuple(qis), k)]
                plain = {}
                for label, name, params in methods:
                    plain[label] = measure(Problem(enc, reqs, base.cost, seed=0), label, name, params)
                for b in bound:
                    prob = Problem(enc, reqs, base.cost, seed=0, privacy=[b])
                    for label, name, params in methods:
                        r = measure(prob, label, name, params)
                        p = plain[label]
                        r.update({"sensitive": sensitive, "model": b.describe(), "k": k,
                                  "plain_ratio": p["distortion_ratio"], "plain_dm": p["dm"],
                                  "plain_time_s": p["time_s"],
                                  "ratio_vs_plain": r["distortion_ratio"] / p["distortion_ratio"]
                                  if p["distortion_ratio"] else float("nan")})
                        rows.append(r)
                        w.writerow({c: (f"{r[c]:.6g}" if isinstance(r[c], float) else r[c]) for c in cols})
                        f.flush()
                        print(f"{sensitive:12s} k={k:3d} {b.describe():45s} {label:12s} "
                              f"ratio={r['distortion_ratio']:.4f} (plain {p['distortion_ratio']:.4f}) "
                              f"DM={r['dm']} sup={r['suppressed']} t={r['time_s']:.1f}s", flush=True)
                save(RESULTS / f"privacy{suffix}", machine, refused, rows)  # after every k: a cut run keeps its part


def save(stem: Path, machine: dict, refused: list, rows: list) -> None:
    machine = {**machine, "load_average_now": list(os.getloadavg())}
    with open(stem.with_suffix(".json"), "w") as f:
        json.dump({"machine": machine, "refused": refused, "rows": rows}, f, indent=1, default=float)
    plot(rows, stem.with_suffix(".png"))


#: result files of runs made before the t-closeness repair change (l-diversity rows: same repair)
EARLIER_RUNS = {"privacy_salary-class.csv", "privacy_occupation.csv"}


def summarise(results: Path) -> None:
    """Join every measurement into one current set: ``privacy.csv`` (one row
    per sensitive attribute, model, k and method: the latest measured, with
    its piece, date and load), ``privacy.json`` (the rows, the refusals and
    the machine of every piece that still holds a row), ``privacy.png`` and
    ``privacy.md`` (one table per sensitive attribute; ``privacy_status.md``,
    when present, is appended)."""
    runs: dict = {}
    refused: dict = {}
    machines: dict = {}
    pieces = sorted(p for p in results.glob("privacy_*.csv") if "quick" not in p.name)
    for path in [results / "privacy.csv", *pieces]:
        if path.exists():
            rows, machine_of, refusals = _measured(path)
            machines.update(machine_of)
            refused.update({(r["sensitive"], r["model"]): r for r in refusals})
            for r in rows:
                key = (r["sensitive"], r["model"], r["k"], r["method"])
                if key not in runs or _when(r) >= _when(runs[key]):
                    runs[key] = r
    rows = sorted(runs.values(), key=lambda r: (list(SETUPS).index(r["sensitive"]), _model_order(r), r["k"],
                                                [m[0] for m in METHODS].index(r["method"])))
    used = {piece: machines[piece] for piece in dict.fromkeys(r["piece"] for r in rows)}
    with open(results / "privacy.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS + PROVENANCE, extrasaction="ignore")
        w.writeheader()
        w.writerows({c: (f"{r[c]:.6g}" if isinstance(r[c], float) else r[c]) for c in COLUMNS + PROVENANCE}
                    for r in rows)
    with open(results / "privacy.json", "w") as f:
        json.dump({"joined_from": used, "refused": list(refused.values()),
                   "rows": [{c: r[c] for c in COLUMNS + PROVENANCE} for r in rows]}, f, indent=1, default=float)
    plot(rows, results / "privacy.png")
    _write_table(results, rows, list(refused.values()), used)
    if pieces:
        print(f"joined {len(pieces)} pieces into privacy.csv; they can now be removed: "
              + " ".join(p.stem + ".*" for p in pieces))


def _measured(path: Path) -> tuple[list[dict], dict, list]:
    """The rows of one result CSV, each with the piece it was measured in
    (``piece``), the date (``measured``) and the 1-minute load at the start
    (``load_at_start``), and the machine of each piece and the refusals, from
    the ``.json`` beside it: the joined set keeps them per row and per piece;
    a piece keeps them in its machine (a run stopped before its first save
    has none: its date is left empty)."""
    meta_path = path.with_suffix(".json")
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    machine_of = meta.get("joined_from") or {path.stem: meta.get("machine") or {}}
    rows = []
    with open(path, newline="") as f:
        for raw in csv.DictReader(f):
            r = _typed(raw)
            r["piece"] = raw.get("piece") or path.stem
            m = machine_of.get(r["piece"], {})
            r["measured"] = raw.get("measured") or m.get("date") or ""
            load = m.get("load_average_at_start")
            r["load_at_start"] = float(raw["load_at_start"]) if raw.get("load_at_start") else \
                (round(load[0], 2) if load else float("nan"))
            r["earlier"] = raw.get("earlier") == "True" or f"{r['piece']}.csv" in EARLIER_RUNS
            r["mtime"] = path.stat().st_mtime
            rows.append(r)
    return rows, machine_of, meta.get("refused", [])


def _when(row: dict) -> str:
    """When a row was measured, to keep the latest of two: its date, else (a
    stopped run with no record of it) the time its file was written."""
    return row["measured"] or time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["mtime"]))


def _write_table(results: Path, rows: list[dict], refused: list[dict], machines: dict) -> None:
    """``privacy.md``: the joined rows as one table per sensitive attribute,
    the refusals and the machine of every piece, then ``privacy_status.md``."""
    lines = ["# What l-diversity and t-closeness cost on UCI Adult", "",
             "Produced by `benchmarks/bench_privacy.py` (see its docstring). Distortion ratio with the model "
             "(in brackets: the same method's plain k-anonymity ratio); every output verified with the model. "
             "Times are of `solve`, in seconds, on a shared machine. The rows are those of `privacy.csv`, "
             "whose columns `piece`, `measured` and `load_at_start` say in which run each was measured.", ""]
    for sens, qis in SETUPS.items():
        mine = [r for r in rows if r["sensitive"] == sens]
        if not mine:
            continue
        runs = {(r["model"], r["k"], r["method"]): r for r in mine}
        methods = [m[0] for m in METHODS if any(r["method"] == m[0] for r in mine)]
        lines += [f"## Sensitive `{sens}` ({len(qis)} QIs)", "",
                  "Cells: ratio (plain ratio), time; suppressed records are given when there are any. "
                  "†: from an earlier run (see the status below); such a t-closeness cell predates the "
                  "t-closeness repair steps priced by the steps still needed.", "",
                  "| model | k | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
        for model in dict.fromkeys(r["model"] for r in sorted(mine, key=_model_order)):
            for k in sorted({r["k"] for r in mine if r["model"] == model}):
                cells = []
                for m in methods:
                    r = runs.get((model, k, m))
                    cells.append("not run" if r is None else
                                 f"{r['distortion_ratio']:.4f} ({r['plain_ratio']:.4f}), {r['time_s']:.1f}s"
                                 + (f", {r['suppressed']} suppressed" if r.get("suppressed") else "")
                                 + (" †" if r["earlier"] else ""))
                lines.append(f"| {model} | {k} | " + " | ".join(cells) + " |")
        lines.append("")
        for ref in refused:
            if ref["sensitive"] == sens:
                lines.append(f"* refused before any work: {ref['message']}")
        lines.append("")
        for piece in dict.fromkeys(r["piece"] for r in mine):
            m = machines[piece]
            lines.append(f"Machine of `{piece}`: " + (
                f"{m.get('cpu')}, {m.get('cores')} cores, load average {m.get('load_average_at_start')} at start, "
                f"{m.get('load_average_now')} at the last save; {m.get('date')}." if m else
                "not recorded (the run was stopped before its first save)."))
        lines.append("")
    status = results / "privacy_status.md"
    if status.exists():
        lines += [status.read_text()]
    (results / "privacy.md").write_text("\n".join(lines) + "\n")


def _typed(row: dict) -> dict:
    """A CSV row with its numbers as numbers."""
    out = dict(row)
    for c in ("k", "dm", "plain_dm", "suppressed", "classes"):
        out[c] = int(float(row[c]))
    for c in ("distortion_ratio", "plain_ratio", "ratio_vs_plain", "time_s", "plain_time_s"):
        out[c] = float(row[c])
    return out


def _model_order(row: dict) -> tuple:
    """Models in the order of :func:`models_for`: l-diversity first, then t-closeness."""
    return ("closeness" in row["model"], row["model"])


def plot(rows: list[dict], path: Path) -> None:
    """Distortion ratio against k, one panel per (sensitive attribute, model), one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.lines
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    panels = sorted({(r["sensitive"], r["model"]) for r in rows})
    if not panels:
        return
    ncol = min(4, len(panels))
    nrow = -(-len(panels) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), squeeze=False, sharey=True)
    # one colour per method in every panel (a panel lacking a method must not shift the others' colours)
    methods = list(dict.fromkeys(r["method"] for r in rows))
    colour = {m: f"C{i % 10}" for i, m in enumerate(methods)}
    for ax, (sens, model) in zip(axes.ravel(), panels):
        sub = [r for r in rows if r["sensitive"] == sens and r["model"] == model]
        for label in dict.fromkeys(r["method"] for r in sub):
            pts = sorted((r["k"], r["distortion_ratio"], r["plain_ratio"]) for r in sub if r["method"] == label)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=colour[label])
            ax.plot([p[0] for p in pts], [p[2] for p in pts], ls=":", color=colour[label])
        ax.set_xscale("log")
        ks = sorted({r["k"] for r in sub})
        ax.set_xticks(ks, [str(k) for k in ks])  # the k measured, not the log axis' 2 x 10^0 ...
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_title(model, fontsize=8)
        ax.set_xlabel("k")
    for ax in axes[:, 0]:
        ax.set_ylabel("distortion ratio")
    handles = [matplotlib.lines.Line2D([], [], marker="o", color=colour[m], label=m) for m in methods]
    fig.legend(handles=handles, loc="upper center", ncol=len(methods), fontsize=8, title="dotted: plain k",
               title_fontsize=8, bbox_to_anchor=(0.5, 1.0))
    for ax in axes.ravel()[len(panels):]:
        ax.axis("off")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / (3.4 * nrow)))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    plot_times(rows, path.with_name(path.stem + "_time.png"))


#: The time the models may cost, as a multiple of plain k-anonymity's (the goal drawn in the time figure).
TIME_GOAL = 3.0


def plot_times(rows: list[dict], path: Path) -> None:
    """Time of ``solve`` with the model over kaca+'s plain k-anonymity run of
    the same k and run, against k: one panel per sensitive attribute, one
    line per model (kaca+, the default method, alone: the other methods'
    ratios are in the table), the goal dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    slow = [r for r in rows if r["method"] == "kaca+" and r["plain_time_s"] > 0]
    attributes = sorted({r["sensitive"] for r in slow})
    if not attributes:
        return
    fig, axes = plt.subplots(1, len(attributes), figsize=(8.4 * len(attributes), 4.6), squeeze=False)
    for ax, sens in zip(axes[0], attributes):
        sub = [r for r in slow if r["sensitive"] == sens]
        for i, model in enumerate(dict.fromkeys(r["model"] for r in sub)):
            pts = sorted((r["k"], r["time_s"] / r["plain_time_s"]) for r in sub if r["model"] == model)
            name = model.replace(f" of '{sens}'", "").replace(" (equal distance)", "")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="os^vD"[i % 5], ls=("-", "--")[i // 10 % 2],
                    label=name)
        ax.axhline(TIME_GOAL, ls=":", color="grey", lw=1.5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ks = sorted({r["k"] for r in sub})
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        top = max(r["time_s"] / r["plain_time_s"] for r in sub)
        ticks = [x for x in (1, 2, 3, 5, 10, 20, 50, 100, 200, 500) if x <= 2 * top]
        ax.set_yticks(ticks, [f"{x:g}x" for x in ticks])
        ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_title(f"kaca+, sensitive {sens!r}: time with the model / plain k time (grey: {TIME_GOAL:g}x)",
                     fontsize=9)
        ax.set_xlabel("k")
        ax.set_ylabel("time ratio (same run)")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
