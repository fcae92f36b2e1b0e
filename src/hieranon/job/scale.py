"""Anonymising tables too large to handle as one DataFrame: Parquet in and
out, partitioned, with a streaming verifier.

:func:`anonymize_parquet` reads a Parquet file or dataset directory batch by
batch, keeping only the integer QI codes in memory (8 bytes a cell at most),
runs :class:`~hieranon.algorithms.partition.Partitioned` (blocks on Dask or a
process pool) with the spec's method in each block, writes the output as one Parquet file per input batch into a
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

from ..core.table import DataError, EncodedTable, apply_codes, check_columns, encode, encode_generalised, missing_apart
from ..io import dataset_schema, table_format
from ..io.pseudonyms import is_pseudonym, new_key, pseudonyms
from ..io.sql import SqlTable, check_output_table, column_types, iter_sql, write_sql
from ..privacy import BoundModel, check_feasible, risk_feasible, sensitive_columns
from .problem import build_algorithm, measure, problem_from_table
from .result import AnonymizationError, AnonymizationResult
from .spec import AnonymizationSpec

# pyarrow.dataset is imported inside the Parquet streaming, the only part that needs it

log = logging.getLogger("hieranon.scale")


def iter_parquet(path, batch_rows: int = 250_000) -> Iterator[pd.DataFrame]:
    """Batches of a Parquet file or dataset directory, in order; the parts
    of a directory must agree on their columns (:func:`hieranon.io.dataset_schema`)."""
    import pyarrow.dataset as ds

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"Parquet input {path} does not exist")
    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"Parquet input directory {path} holds no *.parquet file")
    schema = dataset_schema(files, path)
    dataset = ds.dataset([str(f) for f in files], schema=schema, format="parquet")
    for batch in dataset.to_batches(batch_size=batch_rows):
        if batch.num_rows:
            yield batch.to_pandas()


def iter_batches(source, batch_rows: int = 250_000) -> Iterator[pd.DataFrame]:
    """Batches of a table too large for memory, in order: a Parquet file or
    dataset directory (:func:`iter_parquet`), or a database table or query
    (:class:`hieranon.io.sql.SqlTable`, read through a server-side cursor)."""
    if isinstance(source, SqlTable):
        return iter_sql(source, batch_rows)
    return iter_parquet(source, batch_rows)


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
    n_records: int = 0

    def summary(self) -> str:
        if self.ok:
            return f"{self.n_rows} rows verified; achieved k: {self.achieved_k}"
        return "; ".join(self.problems[:5])


def verify_parquet(original, anonymised, quasi_identifiers: Sequence[str], hierarchies, requirements,
                   batch_rows: int = 250_000, *, identifiers: Sequence[str] = (), identifier_action: str = "drop",
                   missing: str = "error", count_column: str | None = None,
                   privacy: Sequence = ()) -> StreamReport:
    """Verify a (large) anonymised Parquet dataset against the original, streaming.

    ``identifiers`` must be absent from the output (``identifier_action``
    ``drop``), all ``*`` (``mask``) or pseudonyms where the original has a
    value (``pseudonym``); ``missing`` and ``count_column`` read
    the original as :func:`hieranon.core.table.encode` does (class sizes count
    records). ``privacy``: models (:mod:`hieranon.privacy`, unbound, or bound
    to the whole original) every class over all QIs must satisfy, the
    suppressed records one more class; t-closeness is measured against the
    whole original's distribution (Li et al. 2007, Def. 2)."""
    qis = list(quasi_identifiers)
    identifiers = list(identifiers)
    hs = [hierarchies[q] for q in qis] if isinstance(hierarchies, dict) else list(hierarchies)
    reqs = list(requirements)
    problems: list[str] = []
    keys = {str(r): [] for r in reqs}
    privacy = list(privacy or ())
    sens_cols = list(dict.fromkeys(m.attribute for m in privacy))
    full_keys: list[np.ndarray] = []
    sens_parts: list[pd.DataFrame] = []
    all_counts: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    n_rows = n_sup = n_records = 0
    orig_it, anon_it = iter_batches(original, batch_rows), iter_batches(anonymised, batch_rows)
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
        if identifier_action == "drop":
            orig = orig.drop(columns=[c for c in identifiers if c in orig.columns])
        if list(anon.columns) != list(orig.columns):
            problems.append(f"columns differ: {list(orig.columns)} vs {list(anon.columns)}")
            break
        for c in orig.columns:
            if c in qis:
                continue
            if c in identifiers:  # masked, or pseudonyms in place of every present value
                done = is_pseudonym(anon[c]) if identifier_action == "pseudonym" else anon[c].astype(str) == "*"
                if identifier_action == "pseudonym":
                    done &= anon[c].isna().to_numpy() == orig[c].isna().to_numpy()
                if not np.asarray(done).all():
                    problems.append(f"identifier column {c!r} is not "
                                    f"{'pseudonymised' if identifier_action == 'pseudonym' else 'masked'}")
                continue
            a, b = orig[c].astype(str).to_numpy(), anon[c].astype(str).to_numpy()
            # a missing cell may come back as None, NaN or <NA> (the output's parts unify their types): missing
            bad = np.flatnonzero((a != b) & ~(orig[c].isna().to_numpy() & anon[c].isna().to_numpy()))
            if len(bad):
                problems.append(f"non-QI column {c!r} changed at row {n_rows + int(bad[0])}")
        enc = encode(orig, qis, dict(zip(qis, hs)), counts=count_column, missing=missing)
        gen = encode_generalised(enc, anon)
        if (gen < 0).any():
            j = int(np.flatnonzero((gen < 0).any(axis=0))[0])
            i = int(np.flatnonzero(gen[:, j] < 0)[0])
            problems.append(f"column {qis[j]!r}, row {n_rows + i}: {anon[qis[j]].iloc[i]!r} does not generalise "
                            f"{orig[qis[j]].iloc[i]!r}")
            gen = np.where(gen < 0, 0, gen)
        sup = (gen == 0).all(axis=1)
        if privacy:
            full_keys.append(node_keys(gen, [h.n_nodes for h in hs]))
            check_columns(orig, sens_cols, "sensitive")
            sens_parts.append(orig[sens_cols].reset_index(drop=True))
            all_counts.append(enc.counts)
        n_sup += int(enc.counts[sup].sum())
        n_records += enc.n_records
        weights.append(enc.counts[~sup])
        for r in reqs:
            idx = r.indices(qis)
            keys[str(r)].append(node_keys(gen[~sup][:, idx], [hs[j].n_nodes for j in idx]))
        n_rows += len(orig)
    if len(pending) or next(anon_it, None) is not None:
        problems.append("the output has more rows than the input")
    achieved = {}
    w = np.concatenate(weights) if weights else np.zeros(0, np.int64)
    for r in reqs:
        allk = np.concatenate(keys[str(r)]) if keys[str(r)] else np.zeros(0, np.int64)
        _, inverse = np.unique(allk, axis=0 if allk.ndim == 2 else None, return_inverse=True)
        counts = np.bincount(inverse.ravel(), weights=w).astype(np.int64) if len(w) else np.zeros(0, np.int64)
        achieved[str(r)] = int(counts.min()) if len(counts) else 0
        if len(counts) and counts.min() < r.k:
            problems.append(f"requirement {r} fails: {int((counts < r.k).sum())} classes below k "
                            f"(smallest {int(counts.min())})")
    if privacy and full_keys and not problems:
        problems += _privacy_problems(privacy, full_keys, sens_parts, all_counts)
    return StreamReport(not problems, n_rows, achieved, n_sup, problems, n_records)


def _privacy_problems(privacy: Sequence, keys: list[np.ndarray], sens: list[pd.DataFrame],
                      counts: list[np.ndarray]) -> list[str]:
    """Every class over all QIs (from the streamed node keys) against every
    privacy model, bound to the whole original's sensitive columns."""
    allk = np.concatenate(keys)
    w = np.concatenate(counts)
    _, inverse = np.unique(allk, axis=0 if allk.ndim == 2 else None, return_inverse=True)
    row_class = inverse.ravel().astype(np.int64)
    n_classes = int(row_class.max()) + 1
    frame = pd.concat(sens, ignore_index=True)
    out = []
    for m in privacy:
        b = m if isinstance(m, BoundModel) else m.bind(frame, w)
        ok = b.per_class_ok(row_class, n_classes)
        if not ok.all():
            worst = b.worst(b.measure(row_class, n_classes))
            out.append(f"{b.describe()} fails: {int((~ok).sum())} classes violate it (worst class: "
                       f"{b.achieved_text(worst)}; required: {b.required_text()})")
    return out


def parquet_columns(path) -> list[str]:
    """The columns of a Parquet file or dataset directory (from its footers)."""
    files = sorted(Path(path).glob("*.parquet")) if Path(path).is_dir() else [Path(path)]
    return list(dataset_schema(files, path).names)


@dataclass
class ScaleResult:
    """Outcome of :func:`anonymize_parquet`; ``result`` is the same
    :class:`~hieranon.job.result.AnonymizationResult` a single table gives
    (``data`` None: the output is the directory ``output``)."""

    output: Path
    n_rows: int
    blocks: int
    distortion_ratio: float
    verification: StreamReport
    timings: dict
    info: dict = field(default_factory=dict)
    result: AnonymizationResult | None = None


def dataset_hierarchies(spec: AnonymizationSpec, path, batch_rows: int = 250_000) -> dict:
    """The spec's hierarchies for a Parquet dataset: files and trees as they
    are; a hierarchy built from the data (intervals, masks, dates,
    suppression) reads that one column of the whole dataset."""
    data = {}
    for name, h in spec.hierarchies.items():
        if getattr(h, "builder", None) is not None:
            data[name] = pd.concat([b[[name]] for b in iter_batches(path, batch_rows) if name in b.columns]
                                   or [pd.DataFrame()], ignore_index=True).get(name)
    frame = pd.DataFrame({n: c for n, c in data.items() if c is not None}) if data else None
    return spec.build_hierarchies(frame)


def _encode_dataset(path, spec: AnonymizationSpec, hs: dict, batch_rows: int):
    """(EncodedTable, class labels or None, sensitive columns) of a dataset,
    batch by batch: only the integer codes (and counts, labels, the sensitive
    columns) are kept."""
    qis = spec.quasi_identifiers
    parts, counts, labels, sens = [], [], [], []
    protected = [m.attribute for m in spec.privacy if m.attribute is not None]
    sens_cols = list(dict.fromkeys([*spec.sensitive, *protected]))
    for batch in iter_batches(path, batch_rows):
        check_columns(batch, list(spec.identifiers), "identifier")
        enc = encode(batch, qis, hs, counts=spec.count_column, missing=spec.missing)
        parts.append(enc.codes)
        counts.append(enc.counts)
        if spec.class_column is not None:
            check_columns(batch, [spec.class_column], "class")
            labels.append(batch[spec.class_column].to_numpy())
        if protected:
            check_columns(batch, protected, "sensitive")
        sens.append(batch[[c for c in sens_cols if c in batch.columns]].reset_index(drop=True))
    if not parts:
        raise DataError(f"the dataset {path} has no rows")
    table = EncodedTable(np.concatenate(parts), [hs[q] for q in qis], qis, np.concatenate(counts))
    return table, (np.concatenate(labels) if labels else None), pd.concat(sens, ignore_index=True)


def _write_dataset(input_path, tmp: Path, spec: AnonymizationSpec, table: EncodedTable, codes: np.ndarray,
                   batch_rows: int) -> None:
    start = 0
    key = spec.pseudonym_key or new_key()  # one key for every batch: one pseudonym per value
    keep_missing = missing_apart(table, codes)  # over the whole table: classes span batches
    for i, batch in enumerate(iter_batches(input_path, batch_rows)):
        n = len(batch)
        rows = slice(start, start + n)
        enc = EncodedTable(table.codes[rows], table.hierarchies, table.qi_names, table.counts[rows])
        out = apply_codes(batch, enc, codes[start:start + n], keep_missing[rows])
        for q in table.qi_names:  # text; a missing cell (missing='root') stays missing
            out[q] = out[q].where(out[q].isna(), out[q].astype(str))
        for c in spec.identifiers:
            if spec.identifier_action == "drop":
                out = out.drop(columns=c)
            elif spec.identifier_action == "pseudonym":
                out[c] = pseudonyms(out[c], key)
            else:
                out[c] = "*"
        out.to_parquet(tmp / f"part-{i:05d}.parquet", index=False)
        start += n


def anonymize_parquet(input_path, output_dir, quasi_identifiers, hierarchies=None, k: int | None = None,
                      *, requirements=None, method: str | None = None, block_size: int | None = None,
                      executor: str | None = None, scheduler: str | None = None, n_workers: int | None = None,
                      seed: int = 0, weights: str = "uniform", batch_rows: int = 250_000,
                      force: bool = False, method_params: dict | None = None) -> ScaleResult:
    """Anonymise a Parquet file/dataset into a Parquet dataset directory
    (one file per input batch), partitioned and in parallel; verified by
    streaming before the directory is put in place.

    ``quasi_identifiers`` is an :class:`~hieranon.job.spec.AnonymizationSpec`
    (the whole job: identifiers, missing values, count and class columns,
    method and parameters...), or QI names with ``hierarchies``, ``k`` and
    the keyword arguments. The spec's method (default
    :data:`~hieranon.algorithms.registry.DEFAULT_METHOD`) runs in each block
    of the ``partitioned`` method; ``block_size``, ``executor``, ``scheduler``
    and ``n_workers`` are laid over the spec's partition options (default:
    blocks of :data:`~hieranon.algorithms.partition.BLOCK_SIZE` records, the
    executor ``auto``). The result's metrics and risk are computed from the
    integer codes, as for a single table."""
    if isinstance(quasi_identifiers, AnonymizationSpec):
        spec = quasi_identifiers
    else:
        spec = AnonymizationSpec.from_arguments(quasi_identifiers, hierarchies, k, requirements=requirements,
                                                method=method, seed=seed, weights=weights, params=method_params)
    spec = spec.partitioned(block_size=block_size, executor=executor, scheduler=scheduler, n_workers=n_workers)
    algo = build_algorithm(spec)
    to_database = isinstance(output_dir, SqlTable)
    if to_database:
        check_output_table(output_dir.url, output_dir.table, force)
    else:
        output_dir = Path(output_dir)
        if output_dir.exists() and not force:
            raise FileExistsError(f"output {output_dir} already exists; pass force=True (--force) to replace it")
        if not output_dir.parent.exists():
            raise FileNotFoundError(f"output directory {output_dir.parent} does not exist")
    timings = {}
    t = time.perf_counter()
    hs = dataset_hierarchies(spec, input_path, batch_rows)
    table, labels, sensitive = _encode_dataset(input_path, spec, hs, batch_rows)
    problem = problem_from_table(table, spec, labels, sensitive)
    check_feasible(problem.privacy)  # PrivacyError before any work
    risk_feasible(problem.risk)
    algo.check_problem(problem)
    timings["encode"] = time.perf_counter() - t

    t = time.perf_counter()
    sol = algo.solve_checked(problem)  # checked above, before any work
    timings["solve"] = time.perf_counter() - t

    t = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix=f".{output_dir.name}.", dir=None if to_database else output_dir.parent))
    try:
        _write_dataset(input_path, tmp, spec, table, sol.codes, batch_rows)
        timings["write"] = time.perf_counter() - t
        t = time.perf_counter()
        report = verify_parquet(input_path, tmp, spec.quasi_identifiers, hs, problem.requirements, batch_rows,
                                identifiers=spec.identifiers, identifier_action=spec.identifier_action,
                                missing=spec.missing, count_column=spec.count_column, privacy=problem.privacy)
        timings["verify"] = time.perf_counter() - t
        if not report.ok:
            raise AnonymizationError(f"partitioned output failed verification: {report.summary()}")
        if to_database:  # the verified parts, streamed into a new table in one transaction
            changed = {*spec.quasi_identifiers, *spec.identifiers}
            write_sql(iter_parquet(tmp, batch_rows), output_dir.url, output_dir.table, overwrite=force,
                      types=column_types(input_path) if isinstance(input_path, SqlTable) else {},
                      keep_types=[c for c in parquet_columns(tmp) if c not in changed])
            shutil.rmtree(tmp)
        elif output_dir.exists() or output_dir.is_symlink():
            if not force:  # another run wrote it while this one worked: never replaced without force
                raise FileExistsError(f"output {output_dir} appeared while this run was writing it (another run "
                                      "writing the same output?); this run wrote nothing there: choose another "
                                      "path, or replace it on purpose (--force)")
            shutil.rmtree(output_dir)
        if not to_database:
            tmp.rename(output_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    t = time.perf_counter()
    metrics = measure(problem, sol.codes, sol.suppressed)
    timings["metrics"] = time.perf_counter() - t
    result = AnonymizationResult(None, metrics, report, algo.name, algo.run_params(), problem.requirements,
                                 sol.suppressed, timings, sol.info, sol.codes, table.codes, table.hierarchies,
                                 spec=spec, counts=table.counts, output=output_dir,
                                 privacy_models=list(problem.privacy), risk_models=list(problem.risk),
                                 sensitive=sensitive_columns(sensitive, spec.sensitive, table.counts))
    return ScaleResult(output_dir, table.n_rows, sol.info["blocks"], metrics.distortion_ratio, report, timings,
                       sol.info, result)


# ------------------------------------------------------------------ memory
#: Peak bytes of memory per byte of input file when a table is anonymised in one
#: process (the DataFrame of text cells, its codes, the output copy), by format; measured on
#: CSV tables of 10^5-10^6 rows (benchmarks/bench_scale.py), with a margin. Parquet and Excel
#: files are compressed, hence the larger factors.
MEMORY_PER_FILE_BYTE = {"csv": 40, "parquet": 150, "excel": 60}
#: Bytes the interpreter, the libraries and the hierarchies take besides the table.
MEMORY_BASE = 400 * 2**20


class TableTooLarge(DataError):
    """The table would not fit in memory in one process (refused before any work)."""


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (``MemAvailable`` of
    ``/proc/meminfo``), or None where that is unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def memory_needed(path, fmt: str | None = None) -> int:
    """Estimated peak bytes of anonymising the table file ``path`` in one process."""
    path = Path(path)
    kind = table_format(path, fmt)
    return MEMORY_BASE + MEMORY_PER_FILE_BYTE.get(kind, 40) * path.stat().st_size


def check_fits(path, fmt: str | None = None, *, available: int | None = None) -> int:
    """Refuse (:class:`TableTooLarge`) a table file that would not fit in the
    memory available (``available`` bytes, default :func:`available_memory`),
    naming the way that does: a Parquet dataset anonymised in blocks.
    Returns the estimated bytes needed."""
    path = Path(path)
    need = memory_needed(path, fmt)
    avail = available if available is not None else available_memory()
    if avail is not None and need > avail:
        gib = 2**30
        raise TableTooLarge(
            f"{path} ({path.stat().st_size / gib:.2f} GiB) needs about {need / gib:.1f} GiB of memory to be "
            f"read and worked on in one process, but {avail / gib:.1f} GiB are available: write it as a Parquet "
            "dataset directory and run 'hieranon anonymize DIR -o OUTDIR --distributed' "
            "(hieranon.job.scale.anonymize_parquet), which keeps only integer codes in memory")
    return need
