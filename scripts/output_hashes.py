"""Hash every registered method's output on Adult, so that a refactoring or a
speed change can be shown to leave every output bit-identical.

For each method, each seed and each size (the first 300 records, and the
whole table), the hash covers the generalised codes of every QI and the
suppressed rows (not the written text, whose dtypes may legitimately change).

    python scripts/output_hashes.py > before.json
    ... change ...
    python scripts/output_hashes.py > after.json && diff before.json after.json

Adult is read from ``HIERANON_ADULT_DIR``. A method that refuses a size
(e.g. an exact oracle on the whole table) records its error's type, which
must not change either.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

import numpy as np

import hieranon
from hieranon.algorithms.registry import available_methods
from hieranon.io.datasets import ADULT_QI_ORDER, load_adult

#: Methods too slow or refusing on the whole table: hashed on the 300 records only.
SMALL_ONLY = {"mingen", "heuristicmin", "allmin", "fulldomain", "tds", "bug"}


def output_hash(result) -> str:
    """SHA-256 of the result's codes and suppressed rows."""
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(result.codes, dtype=np.int64).tobytes())
    digest.update(np.ascontiguousarray(result.suppressed, dtype=np.bool_).tobytes())
    return digest.hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--methods", default=",".join(available_methods()))
    parser.add_argument("--sizes", default="300,all")
    args = parser.parse_args(argv)
    adult = load_adult(download=False)
    qis = list(ADULT_QI_ORDER[:8])
    out = {}
    for size in args.sizes.split(","):
        frame = adult.frame if size == "all" else adult.frame.iloc[: int(size)].reset_index(drop=True)
        for method in args.methods.split(","):
            if size == "all" and method in SMALL_ONLY:
                continue
            for seed in (int(s) for s in args.seeds.split(",")):
                key = f"{method}/{size}/seed{seed}"
                started = time.perf_counter()
                try:
                    result = hieranon.anonymize(frame, qis, {q: adult.hierarchies[q] for q in qis}, k=args.k,
                                                method=method, seed=seed, strict_roles=False)
                    out[key] = output_hash(result)
                except Exception as exc:  # noqa: BLE001 - the error's type is part of what must not change
                    out[key] = f"error: {type(exc).__name__}"
                print(f"{key}: {out[key]} ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
