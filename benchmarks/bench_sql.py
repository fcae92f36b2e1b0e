"""A table in PostgreSQL anonymised into a new table, beside the same data as CSV.

UCI Adult resampled to 1,000,000 rows (seeded) is put in a PostgreSQL table
(a server started here by pgserver, on a Unix socket) and in a CSV file; the
plain command anonymises each (8 QIs, ARX's hierarchies, k = 10, the same
seed), the database run reading the table through a server-side cursor and
writing the release as a new table in one transaction, the CSV run writing a
CSV file. Each run is a fresh subprocess: its wall time, CPU time and peak
memory (``ru_maxrss``; the PostgreSQL server's own memory is apart) are its
own. Both runs verify their release before writing it; the benchmark then
checks that the new table holds every row and that both releases are equal.

Writes ``benchmarks/results/sql.json`` (machine noted), ``sql.csv`` and ``sql.png``.

    python benchmarks/bench_sql.py [--rows 1000000] [--adult-dir DIR]
"""

from __future__ import annotations

import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import harness  # noqa: F401  (puts experiments/ on the import path)

from hieranon_experiments.benchmarking import adult_dir, benchmark_parser, machine_info  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
QIS = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]
K = 10
SEED = 1


def _child(usage_file: str, args: list[str]) -> None:
    """Run the command line in this process and write its own time and peak memory."""
    import atexit

    start = time.perf_counter()

    def report():
        me = resource.getrusage(resource.RUSAGE_SELF)
        Path(usage_file).write_text(json.dumps({"seconds": round(time.perf_counter() - start, 2),
                                                "cpu_seconds": round(me.ru_utime + me.ru_stime, 2),
                                                "peak_mib": round(me.ru_maxrss / 1024, 1)}))

    atexit.register(report)
    from hieranon import cli
    sys.argv = ["hieranon", *args]
    cli.main()


def _measure(args: list[str], work: Path) -> dict:
    usage = work / "usage.json"
    usage.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    proc = subprocess.run([sys.executable, __file__, "--child", str(usage), *args], capture_output=True, text=True,
                          env=env)
    if proc.returncode != 0:
        raise SystemExit(f"hieranon {' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return {**json.loads(usage.read_text()), "summary": json.loads(proc.stdout)}


def main() -> None:
    ap = benchmark_parser(__doc__, RESULTS)
    ap.add_argument("--rows", type=int, default=1_000_000)
    opts = ap.parse_args()
    import numpy as np
    import pandas as pd
    import pgserver

    from hieranon.io.datasets import load_adult
    from hieranon.io.sql import SqlTable, read_sql, write_sql

    adult = adult_dir(opts.adult_dir)
    frame = load_adult(adult, hierarchies=False).frame
    rows = frame.iloc[np.random.default_rng(SEED).integers(0, len(frame), opts.rows)].reset_index(drop=True)
    out: dict = {"rows": opts.rows, "quasi_identifiers": QIS, "k": K, "machine": machine_info()}
    with tempfile.TemporaryDirectory(prefix="bench-sql-") as tmp:
        work = Path(tmp)
        hierarchy_dir = adult / "hierarchies"
        config = work / "adult.yaml"
        config.write_text(f"k: {K}\nquasi_identifiers:\n" + "".join(
            f"  {q}: {hierarchy_dir / f'adult_hierarchy_{q}.csv'}\n" for q in QIS)
            + "sensitive: [salary-class]\ninsensitive: [fnlwgt, education-num, capital-gain, capital-loss, "
              "hours-per-week]\n")
        csv_in = work / "adult.csv"
        rows.to_csv(csv_in, index=False)
        out["csv_mib"] = round(csv_in.stat().st_size / 2**20, 1)
        server = pgserver.get_server(work / "pg", cleanup_mode="stop")
        try:
            url = server.get_uri()
            t = time.perf_counter()
            write_sql(rows, url, "adult")
            out["load_table_seconds"] = round(time.perf_counter() - t, 2)
            del rows, frame
            common = ["--config", str(config), "--seed", str(SEED), "--json"]
            # the kernels compiled once before either run is timed (both use the same ones)
            pd.read_csv(csv_in, nrows=20_000).to_csv(work / "warm.csv", index=False)
            _measure(["anonymize", str(work / "warm.csv"), "-o", str(work / "warm-out.csv"), *common], work)
            runs = {
                "csv": _measure(["anonymize", str(csv_in), "-o", str(work / "release.csv"), *common], work),
                "postgresql": _measure(["anonymize", url, "--table", "adult", "-o", url, "--output-table",
                                        "adult_release", *common], work),
            }
            released = read_sql(SqlTable(url, "adult_release"))
            from_csv = pd.read_csv(work / "release.csv", dtype=str, keep_default_na=False)
            out["table_rows"] = len(released)
            out["releases_equal"] = bool(released.astype(str).equals(from_csv.astype(str)))
        finally:
            server.cleanup()
    for r in runs.values():
        s = r.pop("summary")
        r.update({"verified": bool(s.get("verified", True)), "plan": (s.get("plan") or {}).get("mode"),
                  "distortion_ratio": (s.get("metrics") or {}).get("distortion_ratio")})
    out["runs"] = runs
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "sql.json").write_text(json.dumps(out, indent=2) + "\n")
    with open(opts.out / "sql.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["source", "rows", "seconds", "cpu_seconds", "peak_mib", "verified"])
        for name, r in runs.items():
            w.writerow([name, opts.rows, r["seconds"], r["cpu_seconds"], r["peak_mib"], r["verified"]])
    _plot(runs, opts.rows, out["machine"], opts.out / "sql.png")
    print(json.dumps(out, indent=2))


def _plot(runs: dict, rows: int, machine: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(runs)
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
    for ax, key, label in ((axes[0], "seconds", "wall seconds"), (axes[1], "peak_mib", "peak memory (MiB)")):
        bars = ax.bar(names, [runs[n][key] for n in names], color=["#888", "#336699"])
        ax.bar_label(bars, fmt="%.0f")
        ax.set_ylabel(label)
    fig.suptitle(f"Adult resampled to {rows:,} rows, k = {K}, plain command: CSV file vs PostgreSQL table",
                 fontsize=9)
    fig.text(0.01, 0.01, f"{machine.get('cpu', '')}, {machine.get('cores', '')} cores", fontsize=7)
    fig.tight_layout(rect=(0, 0.04, 1, 0.94))
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3:])
    else:
        main()
