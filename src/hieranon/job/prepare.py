"""Compile every kernel ahead of the first real run (``hieranon
prepare-kernels``, and the package build).

numba compiles a kernel for the argument types of its first call, so the
only faithful way to compile "what a run needs" is to run: this module
runs small representative jobs through the same pipeline a user's job goes
through -- every registered method, l-diversity (distinct, entropy,
recursive) and t-closeness (equal, ordered, hierarchical distance) with the
methods that honour them, the lower bound, suppression and several
requirements -- on a synthetic table with Adult's schema
(:mod:`hieranon.io.datasets.synthetic`, no real record). What they compile is
kept in the kernels' cache (:mod:`hieranon.core.jit`): the prebuilt kernels of
an installation when the build runs it, else the cache a run would use.
Kernels a job did not reach are listed, not hidden.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..algorithms.registry import available_methods
from ..core import jit
from ..core.progress import stage
from ..io.datasets.synthetic import synthetic_adult, synthetic_hierarchies
from ..privacy import parse_l_diversity, parse_t_closeness
from .pipeline import anonymize

log = logging.getLogger(__name__)

__all__ = ["PreparedKernels", "prepare_kernels", "warmup_jobs", "WARMUP_ROWS"]

#: Rows of the synthetic table: past :data:`hieranon.core.jit.SMALL_TABLE_ROWS`,
#: so that the kernels are compiled, not run as Python.
WARMUP_ROWS = 400
#: Rows for the exact integer-programming method (it refuses large tables).
_EXACT_ROWS = 12
_SENSITIVE = "occupation"
_CLASS = "salary-class"


@dataclass(frozen=True)
class PreparedKernels:
    """What :func:`prepare_kernels` did: where the compiled code is kept,
    how many jobs ran, how long it took, and the kernels no job reached
    (compiled on first use later)."""

    cache: str | None
    jobs: int
    seconds: float
    not_reached: list[str] = field(default_factory=list)


def warmup_jobs() -> Iterator[tuple[str, dict]]:
    """``(method, keyword arguments of hieranon.anonymize)`` for each job."""
    for method in available_methods():
        yield method, {"class_column": _CLASS}
    hierarchies = synthetic_hierarchies()
    for method in ("kaca+", "kaca1", "mondrian", "dbca", "fulldomain"):
        for text in (f"{_SENSITIVE}=2", f"{_SENSITIVE}=entropy:2", f"{_SENSITIVE}=recursive:3,2"):
            yield method, {"privacy": [parse_l_diversity(text)], "sensitive": [_SENSITIVE]}
        for distance in ("equal", "hierarchical"):
            model = parse_t_closeness(f"{_SENSITIVE}=0.3:{distance}", hierarchies=hierarchies)
            yield method, {"privacy": [model], "sensitive": [_SENSITIVE]}
    yield "kaca+", {"privacy": [parse_t_closeness("age=0.3:ordered")], "sensitive": ["age"]}
    two_valued = {"privacy": [parse_t_closeness(f"{_CLASS}=0.2")], "sensitive": [_CLASS]}
    yield "kaca+", two_valued
    yield "kaca+", {**two_valued, "lower_bound": True}
    yield "kaca+", {"lower_bound": True}
    yield "kaca+", {"max_suppression": 0.02}
    yield "kaca+", {"requirements": ["age,race:10", "age,sex,education:3"]}
    for construction in ("growth", "cheapest"):
        yield "kaca+", {"construction": construction}


def _run_job(table: pd.DataFrame, method: str, options: dict) -> None:
    hierarchies = synthetic_hierarchies()
    roles = set(options.get("sensitive", ())) | {options.get("class_column")}
    qis = [c for c in hierarchies if c not in roles and c != _CLASS]
    rows = table.head(_EXACT_ROWS) if method == "mingen" else table
    k = None if "requirements" in options else 5
    anonymize(rows, qis, [hierarchies[q] for q in qis], k, method=method,
              insensitive=[c for c in table.columns if c not in qis and c not in roles], **options)


def prepare_kernels() -> PreparedKernels:
    """Run :func:`warmup_jobs` so their kernels are compiled and cached.
    A job a method refuses (a size limit, a missing class column) is
    logged and skipped: the others still run."""
    start = time.perf_counter()
    table = synthetic_adult(WARMUP_ROWS, seed=0)
    jobs = list(warmup_jobs())
    with stage("compiling kernels ahead of the first run", total=len(jobs)) as progress:
        for done, (method, options) in enumerate(jobs, 1):
            try:
                _run_job(table, method, options)
            except Exception as exc:  # noqa: BLE001 -- one refused job (a size limit) must not stop the others
                log.warning("prepare-kernels: %s %s skipped: %s: %s", method, sorted(options), type(exc).__name__, exc)
            progress.update(done)
    if jit.PREBUILT and jit.CACHE_DIR is not None:
        jit.write_prebuilt_stamp(Path(jit.CACHE_DIR))
    missing = jit.uncompiled_kernels()
    if missing:
        log.info("prepare-kernels: %d kernels not reached (compiled on first use): %s", len(missing),
                 ", ".join(missing))
    return PreparedKernels(jit.CACHE_DIR, len(jobs), time.perf_counter() - start, missing)
