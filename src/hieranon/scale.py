"""Anonymising tables too large to handle as one DataFrame: Parquet in and
out, partitioned, with a streaming verifier.

:func:`anonymize_parquet` reads a Parquet file or dataset directory batch by
batch, keeping only the integer QI codes in memory (8 bytes a cell at most),
runs :class:`~hieranon.algorithms.partition.Partitioned` (blocks on Dask or a
process pool), writes the output as one Parquet file per input batch into a
directory (built in a temporary directory, renamed into place only after
verification passes), and verifies it with :func:`verify_parquet`, which
streams both datasets batch by batch: per batch, the non-QI columns and the
generalisation of every QI cell; across batches, the class sizes of every
requirement, accumulated from compact integer keys.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import metrics as M
from .algorithms.base import Problem
from .algorithms.partition import Partitioned
from .requirements import Requirement, normalise
from .table import EncodedTable, apply_codes, encode, encode_generalised

log = logging.getLogger("hieranon.scale")


def iter_parquet(path, batch_rows: int = 250_000) -> Iterator[pd.DataFrame]:
    """Batches of a Parquet file or dataset directory, in order."""
    import pyarrow.dataset as ds

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Parquet input {path} does not exist")
    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"Parquet input directory {path} holds no *.parquet file")
    dataset = ds.dataset([str(f) for f in files], format="parquet")
    for batch in dataset.to_batches(batch_size=batch_rows):
        if batch.num_rows:
            yield batch.to_pandas()


def node_keys(codes: np.ndarray, radices: Sequence[int]) -> np.ndarray:
    """A key per row that is the same in every batch: mixed radix over the
    node ids (each attribute's ``n_nodes``). One int64 per row while the
    product of the radices fits in 63 bits, else one column per run of
    attributes whose product does (a single wrapped int64 would merge
    different rows into one class)."""
    cols: list[np.ndarray] = []
    key, span = np.zeros(len(codes), dtype=np.int64), 1
    for j, r in enumerate(radices):
        r = int(r)
        if span * r > 2**63 and j:
            cols.append(key)
            key, span = np.zeros(len(codes), dtype=np.int64), 1
        key = key * r + codes[:, j]
        span *= r
    cols.append(key)
    return cols[0] if len(cols) == 1 else np.stack(cols, axis=1)


@dataclass
class StreamReport:
    """Result of :func:`verify_parquet`.

    ``ok`` when rows match, non-QI columns are unchanged, every QI cell
    generalises its original, and every requirement holds (suppressed all-root
    rows exempt)."""

    ok: bool
    n_rows: int
    achieved_k: dict
    n_suppressed: int
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.ok:
            return f"{self.n_rows} rows verified; achieved k: {self.achieved_k}"
        return "; ".join(self.problems[:5])


def verify_parquet(original, anonymised, quasi_identifiers: Sequence[str], hierarchies, requirements,
                   batch_rows: int = 250_000) -> StreamReport:
    """Verify a (large) anonymised Parquet dataset against the original, streaming."""
    qis = list(quasi_identifiers)
    hs = [hierarchies[q] for q in qis] if isinstance(hierarchies, dict) else list(hierarchies)
    reqs = list(requirements)
    problems: list[str] = []
    keys = {str(r): [] for r in reqs}
    n_rows = n_sup = 0
    orig_it, anon_it = iter_parquet(original, batch_rows), iter_parquet(anonymised, batch_rows)
    pending = pd.DataFrame()
    for orig in orig_it:
        # align batch boundaries: the output may be cut differently
        while len(pending) < len(orig):
            nxt = next(anon_it, None)
            if nxt is None:
                break
            pending = pd.concat([pending, nxt], ignore_index=True)
        anon, pending = pending.iloc[: len(orig)].reset_index(drop=True), pending.iloc[len(orig):]
        if len(anon) < len(orig):
            problems.append(f"the output has fewer rows than the input (input row {n_rows + len(anon)} missing)")
            break
        if list(anon.columns) != list(orig.columns):
            problems.append(f"columns differ: {list(orig.columns)} vs {list(anon.columns)}")
            break
        for c in orig.columns:
            if c in qis:
                continue
            a, b = orig[c].astype(str).to_numpy(), anon[c].astype(str).to_numpy()
            bad = np.flatnonzero(a != b)
            if len(bad):
                problems.append(f"non-QI column {c!r} changed at row {n_rows + int(bad[0])}")
        enc = encode(orig, qis, dict(zip(qis, hs)))
        gen = encode_generalised(enc, anon)
        if (gen < 0).any():
            j = int(np.flatnonzero((gen < 0).any(axis=0))[0])
            i = int(np.flatnonzero(gen[:, j] < 0)[0])
            problems.append(f"column {qis[j]!r}, row {n_rows + i}: {anon[qis[j]].iloc[i]!r} does not generalise "
                            f"{orig[qis[j]].iloc[i]!r}")
            gen = np.where(gen < 0, 0, gen)
        sup = (gen == 0).all(axis=1)
        n_sup += int(sup.sum())
        for r in reqs:
            idx = r.indices(qis)
            keys[str(r)].append(node_keys(gen[~sup][:, idx], [hs[j].n_nodes for j in idx]))
        n_rows += len(orig)
    if len(pending) or next(anon_it, None) is not None:
        problems.append("the output has more rows than the input")
    achieved = {}
    for r in reqs:
        allk = np.concatenate(keys[str(r)]) if keys[str(r)] else np.zeros(0, np.int64)
        _, counts = np.unique(allk, axis=0 if allk.ndim == 2 else None, return_counts=True)
        achieved[str(r)] = int(counts.min()) if len(counts) else 0
        if len(counts) and counts.min() < r.k:
            problems.append(f"requirement {r} fails: {int((counts < r.k).sum())} classes below k "
                            f"(smallest {int(counts.min())})")
    return StreamReport(not problems, n_rows, achieved, n_sup, problems)


@dataclass
class ScaleResult:
    """Outcome of :func:`anonymize_parquet`."""

    output: Path
    n_rows: int
    blocks: int
    distortion_ratio: float
    verification: StreamReport
    timings: dict
    info: dict = field(default_factory=dict)


def anonymize_parquet(input_path, output_dir, quasi_identifiers: Sequence[str], hierarchies, k: int | None = None,
                      *, requirements=None, method: str = "kaca1", block_size: int = 20_000,
                      executor: str = "auto", scheduler: str | None = None, n_workers: int | None = None,
                      seed: int = 0, weights: str = "uniform", batch_rows: int = 250_000,
                      force: bool = False, method_params: dict | None = None) -> ScaleResult:
    """Anonymise a Parquet file/dataset into a Parquet dataset directory
    (one file per input batch), partitioned and in parallel; verified by
    streaming before the directory is put in place."""
    qis = list(quasi_identifiers)
    output_dir = Path(output_dir)
    if output_dir.exists() and not force:
        raise FileExistsError(f"output {output_dir} already exists; pass force=True (--force) to replace it")
    if not output_dir.parent.exists():
        raise FileNotFoundError(f"output directory {output_dir.parent} does not exist")
    timings = {}
    t = time.perf_counter()
    hier = {q: hierarchies[q] for q in qis}
    parts, sizes = [], []
    for batch in iter_parquet(input_path, batch_rows):
        parts.append(encode(batch, qis, hier).codes)
        sizes.append(len(batch))
    codes = np.concatenate(parts) if parts else np.zeros((0, len(qis)), np.int32)
    del parts
    table = EncodedTable(codes, [hier[q] for q in qis], qis, np.ones(len(codes), dtype=np.int64))
    reqs: list[Requirement] = normalise(requirements, k, qis, len(codes))
    cost = M.CostModel.build(table.hierarchies, weights, max_rows=max(len(codes), 1))
    problem = Problem(table, reqs, cost, seed)
    timings["read_encode"] = time.perf_counter() - t

    t = time.perf_counter()
    algo = Partitioned(method=method, block_size=block_size, executor=executor, scheduler=scheduler,
                       n_workers=n_workers, method_params=method_params)
    sol = algo.solve(problem)
    timings["anonymise"] = time.perf_counter() - t

    t = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix=f".{output_dir.name}.", dir=output_dir.parent))
    try:
        start = 0
        for i, batch in enumerate(iter_parquet(input_path, batch_rows)):
            enc = EncodedTable(codes[start:start + len(batch)], table.hierarchies, qis, table.counts[:len(batch)])
            out = apply_codes(batch, enc, sol.codes[start:start + len(batch)])
            for q in qis:
                out[q] = out[q].astype(str)
            out.to_parquet(tmp / f"part-{i:05d}.parquet", index=False)
            start += len(batch)
        timings["write"] = time.perf_counter() - t
        t = time.perf_counter()
        report = verify_parquet(input_path, tmp, qis, hier, reqs, batch_rows)
        timings["verify"] = time.perf_counter() - t
        if not report.ok:
            raise RuntimeError(f"partitioned output failed verification: {report.summary()}")
        if output_dir.exists():
            shutil.rmtree(output_dir)
        tmp.rename(output_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    ratio = M.distortion_ratio(codes, sol.codes, cost)
    return ScaleResult(output_dir, len(codes), sol.info["blocks"], ratio, report, timings, sol.info)
