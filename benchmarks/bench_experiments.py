"""Benchmark: the wall time of ``hieranon experiments --quick`` on UCI Adult.

The quick grid is meant to finish within 5 minutes on a quiet 2-core
machine; the test suite checks its outputs (tests/test_experiments.py) but
asserts no time, so this script measures it, in a subprocess as a user runs
it, and exits 1 when it is over the target.

Writes ``benchmarks/results/experiments_quick.json`` (with machine information).

    HIERANON_ADULT_DIR=/path/to/adult python benchmarks/bench_experiments.py [--target 300]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)

from hieranon.io.datasets import ADULT_ENV, find_adult_dir
from hieranon_experiments.benchmarking import benchmark_parser, machine_info

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    ap = benchmark_parser(__doc__, HERE / "results")
    ap.add_argument("--target", type=float, default=300.0, help="seconds the quick run should stay under")
    args = ap.parse_args(argv)

    env = {**os.environ, ADULT_ENV: str(find_adult_dir(args.adult_dir)), "MPLBACKEND": "Agg"}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "hieranon", "experiments", "--quick", "--out", tmp],
                              capture_output=True, text=True, env=env)
        secs = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        return proc.returncode
    within = secs < args.target
    print(f"hieranon experiments --quick: {secs:.0f} s (target {args.target:.0f} s): {'ok' if within else 'OVER'}")
    args.out.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": "experiments_quick", "date": datetime.now(UTC).isoformat(timespec="seconds"),
               "seconds": secs, "target_s": args.target, "within_target": within, "machine": machine_info()}
    (args.out / "experiments_quick.json").write_text(json.dumps(payload, indent=2) + "\n")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
