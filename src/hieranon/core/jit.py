"""Compiled kernels: one decorator for every numba kernel of hieranon, where
their compiled code is cached, and a notice while they compile.

numba compiles a kernel the first time it is called with given argument
types and keeps the machine code in a cache on disk (``cache=True``), so
only the first run on a machine pays for compiling -- from seconds to a
minute on a loaded machine. This module makes that first run visible and
keeps it from failing:

* **Where the cache goes.** numba writes it next to the sources
  (``__pycache__``), else in the user's cache directory; when neither is
  writable (a read-only installation and a home directory that cannot be
  written, as in many containers) numba refuses to compile ("no locator
  available"). :func:`cache_location` picks, before any kernel is
  declared, the first writable of: ``$NUMBA_CACHE_DIR`` (the user's
  choice, left alone), numba's place beside the sources,
  ``$XDG_CACHE_HOME/hieranon/numba`` (``~/.cache/hieranon/numba``), a
  directory of the system's temporary directory; when none is, the kernels
  are compiled without a cache (logged once) and the run still succeeds.
* **A notice while compiling.** Each real compilation (not a cache load)
  opens the progress stage :data:`COMPILE_STAGE` (see
  :mod:`hieranon.core.progress`: logged by default, shown by the command line),
  whose ``done`` counts the functions compiled so far.
* **Kernels compiled when the package is built.** Building the wheel
  (``pip install .``) runs representative jobs and ships their compiled
  code in ``hieranon/_prebuilt_kernels`` (:data:`PREBUILT_DIR`), like a C
  extension compiled at installation: the first run of a fresh
  installation, or of a container started for one job, loads them instead
  of compiling (Adult, k = 10, default method: about as fast as a warm run,
  ``benchmarks/results/first_run.json``). numba's own cache is keyed by each
  source file's path and modification time, which an installation does not
  keep, so these are found by :class:`_PrebuiltLocator`, keyed by a digest
  of the package's sources and the versions of Python, numba and numpy
  (:func:`source_stamp`); when anything differs (another numba, an edited
  source) they are ignored and kernels compile as below
  (``HIERANON_PREBUILT_KERNELS=0`` ignores them too). The same mechanism
  serves ``hieranon prepare-kernels``.
* **Threads that sleep between kernels.** numba runs the parallel kernels
  in OpenMP threads where the system has OpenMP; GNU OpenMP keeps its
  threads spinning for a while after each kernel, waiting for the next.
  A repair or a local search calls a small parallel kernel thousands of
  times with Python in between, so its threads spin most of the run, and
  on a busy machine they take the cores from the main thread and from the
  other jobs: UCI Adult, distinct 2-diversity, k = 5 took 45 s at a load
  of 3.5 on 2 cores, against 5 s with threads that sleep (the same output).
  Unless the user has set ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT``, they
  are set at import, before numba starts its threads, to sleep after a
  short spin (:data:`WAIT_POLICY`, :data:`SPIN_COUNT`: the count GNU
  OpenMP itself uses when its threads outnumber the cores; a few
  microseconds, which catches a kernel that follows at once -- on an idle
  machine sleeping at once was up to 10 % slower). It also applies to
  other OpenMP code of the process that starts after.
* **No compiling for a small table.** :class:`~hieranon.algorithms.base.Algorithm`
  runs the kernels as Python (:func:`interpreted`) when the table is small
  (:func:`small_table`) and nothing is compiled yet: the README's quick
  start from a development checkout then takes seconds instead of a minute,
  with the same output.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import logging
import math
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numba
import numpy as np
from numba.core import caching, config, event
from numba.core.registry import CPUDispatcher

from .progress import stage

log = logging.getLogger(__name__)

#: Name of the progress stage open while kernels compile.
COMPILE_STAGE = "preparing fast kernels (first run only)"

__all__ = ["COMPILE_STAGE", "WAIT_POLICY", "SPIN_COUNT", "kernel", "cache_location", "CACHE_DIR", "CACHING",
           "interpreted", "small_table", "compiled_before", "PREBUILT_DIR", "PREBUILT", "source_stamp",
           "prebuilt_matches", "write_prebuilt_stamp", "uncompiled_kernels", "SMALL_TABLE_ROWS", "SMALL_TABLE_WORK"]

#: The OpenMP threads' wait between parallel kernels unless the user sets
#: ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT``: sleep (standard OpenMP), after
#: this many spins (GNU OpenMP; module docstring).
WAIT_POLICY = "PASSIVE"
SPIN_COUNT = "1000"
if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    os.environ["OMP_WAIT_POLICY"], os.environ["GOMP_SPINCOUNT"] = WAIT_POLICY, SPIN_COUNT

_PACKAGE = Path(__file__).resolve().parent.parent
#: Where a built package keeps the kernels compiled when it was built.
PREBUILT_DIR = _PACKAGE / "_prebuilt_kernels"
#: The file in :data:`PREBUILT_DIR` naming what its kernels were compiled from.
_STAMP_FILE = "STAMP.json"
#: Set to a directory, kernels are compiled into it as prebuilt ones
#: (``hieranon prepare-kernels`` and the package build set it).
PREBUILD_ENV = "HIERANON_PREBUILD_INTO"
#: ``HIERANON_PREBUILT_KERNELS=0`` ignores the prebuilt kernels (and builds a
#: wheel without them): kernels compile on first use, as in a checkout.
SWITCH_ENV = "HIERANON_PREBUILT_KERNELS"
#: Directories holding kernel modules (numba caches beside each).
_KERNEL_DIRS = (_PACKAGE, _PACKAGE / "privacy", _PACKAGE / "algorithms", _PACKAGE / "algorithms" / "kacaplus",
                _PACKAGE / "bounds")


def _writable(directory: Path) -> bool:
    """Can a file be created in ``directory`` (made when missing)? The test
    numba itself runs before caching in a directory."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=directory).close()
    except OSError:
        return False
    return True


def _user_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hieranon" / "numba"


def cache_location() -> tuple[str | None, str]:
    """Where the kernels' compiled code is cached: ``(directory, reason)``;
    directory None means numba's place beside the sources, or, with reason
    ``"none"``, no cache at all (nothing writable)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"], "NUMBA_CACHE_DIR"
    if all(_writable(d / "__pycache__") for d in _KERNEL_DIRS):
        return None, "beside the sources"
    candidates = [(_user_cache_dir(), "user cache directory")]
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    candidates.append((Path(tempfile.gettempdir()) / f"hieranon-{uid}" / "numba", "temporary directory"))
    for directory, reason in candidates:
        if _writable(directory):
            return str(directory), reason
    return None, "none"


@functools.lru_cache(maxsize=1)
def _source_stamp() -> tuple[tuple[str, str], ...]:
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return (("sources", digest.hexdigest()), ("python", sys.version), ("numba", numba.__version__),
            ("numpy", np.__version__))


def source_stamp() -> dict[str, str]:
    """What prebuilt kernels must have been compiled from to be loaded: a
    SHA-256 digest of every Python source of the package (a kernel's
    machine code also holds the kernels and constants it uses from other
    modules) and the versions of Python, numba and numpy. Read once per
    process."""
    return dict(_source_stamp())


def prebuilt_matches(directory: Path = PREBUILT_DIR) -> bool:
    """Were the kernels in ``directory`` compiled from these sources with
    these versions (its stamp file equals :func:`source_stamp`)?"""
    try:
        stamp = json.loads((directory / _STAMP_FILE).read_text())
    except (OSError, ValueError):
        return False
    return stamp == source_stamp()


def write_prebuilt_stamp(directory: Path) -> None:
    """Mark the kernels compiled into ``directory`` as made from these
    sources (after ``hieranon prepare-kernels`` has filled it)."""
    (directory / _STAMP_FILE).write_text(json.dumps(source_stamp(), indent=1) + "\n")


def _seeded_copy(prebuilt: Path) -> Path | None:
    """A writable copy of the read-only prebuilt kernels (numba writes the
    code of argument types they lack beside them), made once per stamp in
    the user's cache directory, else the temporary directory."""
    tag = source_stamp()["sources"][:16]
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    for base in (_user_cache_dir().parent / "kernels", Path(tempfile.gettempdir()) / f"hieranon-{uid}" / "kernels"):
        target = base / tag
        if (target / _STAMP_FILE).exists():
            return target
        if not _writable(base):
            continue
        staging = Path(tempfile.mkdtemp(dir=base, prefix=f".{tag}-"))
        try:
            shutil.copytree(prebuilt, staging, dirs_exist_ok=True)
            os.replace(staging, target)  # atomic: a concurrent run sees all of it or none
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            if not (target / _STAMP_FILE).exists():
                continue
        return target
    return None


def _prebuilt_root() -> tuple[Path | None, str]:
    """Where the kernels are loaded from and cached when prebuilt ones
    apply: ``(directory, why)``; directory None when they do not."""
    if os.environ.get(PREBUILD_ENV):
        return Path(os.environ[PREBUILD_ENV]), "compiling prebuilt kernels"
    if os.environ.get(SWITCH_ENV, "").strip().lower() in ("0", "no", "false", "off"):
        return None, f"{SWITCH_ENV} is off"
    if not PREBUILT_DIR.is_dir():
        return None, "no prebuilt kernels"
    if not prebuilt_matches():
        log.info("the prebuilt kernels in %s were made from other sources or versions of Python, numba or numpy: "
                 "kernels are compiled on first use", PREBUILT_DIR)
        return None, "prebuilt kernels do not match"
    if _writable(PREBUILT_DIR):
        return PREBUILT_DIR, "prebuilt kernels"
    copy = _seeded_copy(PREBUILT_DIR)
    return (copy, "copy of the prebuilt kernels") if copy is not None else (None, "no writable copy")


class _PrebuiltLocator(caching._CacheLocator):
    """numba cache locator for hieranon's kernels under a prebuilt root:
    files named as numba names them, in the package's sub-directory of the
    kernel's module, and stamped with :func:`source_stamp` instead of the
    source file's modification time (which an installation does not keep)."""

    root: Path | None = None
    stamp: dict | None = None

    def __init__(self, py_func, py_file: str) -> None:
        self._lineno = py_func.__code__.co_firstlineno
        relative = Path(py_file).resolve().parent.relative_to(_PACKAGE)
        self._cache_path = str(self.root / relative)

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self):
        return json.dumps(self.stamp, sort_keys=True)

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        if cls.root is None or not Path(py_file).resolve().is_relative_to(_PACKAGE):
            return None
        locator = cls(py_func, py_file)
        try:
            locator.ensure_cache_path()
        except OSError:
            return None
        return locator


def _configure_cache() -> tuple[str | None, bool, bool]:
    root, why = _prebuilt_root()
    if root is not None:
        _PrebuiltLocator.root, _PrebuiltLocator.stamp = root, source_stamp()
        caching.CacheImpl._locator_classes.insert(0, _PrebuiltLocator)
        log.debug("kernels: %s (%s)", root, why)
        return str(root), True, True
    directory, reason = cache_location()
    if reason == "none":
        log.warning("no writable directory for the compiled kernels' cache (the installation, the home "
                     "directory and %s are read-only): kernels are compiled again in every run; set "
                     "NUMBA_CACHE_DIR to a writable directory to keep them", tempfile.gettempdir())
        return None, False, False
    if directory is not None and not os.environ.get("NUMBA_CACHE_DIR"):
        log.info("the installation is read-only: compiled kernels are cached in %s (%s)", directory, reason)
        os.environ["NUMBA_CACHE_DIR"] = directory  # numba reads its configuration again from the environment
        config.CACHE_DIR = directory
    return directory, True, False


#: Directory of the compiled kernels' cache (None: numba's default, beside
#: the sources); whether they are cached at all; whether the prebuilt
#: kernels (or a directory being filled with them) are in use.
CACHE_DIR, CACHING, PREBUILT = _configure_cache()


def kernel(fn: Callable | None = None, *, parallel: bool = False, nogil: bool = False,
           inline: str = "never", cache: bool = True) -> Callable:
    """``numba.njit`` with hieranon's cache policy (:func:`cache_location`):
    ``@kernel`` or ``@kernel(parallel=True)``; ``cache=False`` compiles in
    every process (a kernel defined on the fly)."""
    options = {"cache": CACHING and cache}
    if parallel:
        options["parallel"] = True
    if nogil:
        options["nogil"] = True
    if inline != "never":
        options["inline"] = inline

    def decorate(f: Callable) -> Callable:
        dispatcher = numba.njit(**options)(f)
        dispatcher.__class__ = _Kernel  # same object, one more way to run (interpreted)
        _KERNELS.append(dispatcher)
        return dispatcher

    return decorate if fn is None else decorate(fn)


#: Every kernel declared with :func:`kernel`, in declaration order.
_KERNELS: list = []

#: Most rows of a table whose kernels run as Python (:func:`small_table`).
SMALL_TABLE_ROWS = 300
#: Most rows x generalisation-lattice nodes of such a table: kaca+'s sweep
#: visits depth vectors of the lattice, each over the rows.
SMALL_TABLE_WORK = 20_000

_interpreting: contextvars.ContextVar[bool] = contextvars.ContextVar("hieranon_interpreting", default=False)


@contextlib.contextmanager
def interpreted(on: bool = True) -> Iterator[None]:
    """Run the kernels called inside as Python (their source, on the same
    numpy arrays and integer types) instead of compiling them: on a small
    table this takes less than compiling would, and the result is the same
    (the kernels compute in wrapping 64-bit integers and never depend on
    the compiler). ``on=False`` changes nothing."""
    if not on:
        yield
        return
    token = _interpreting.set(True)
    try:
        with np.errstate(over="ignore"):  # numpy warns where compiled integer arithmetic wraps silently
            yield
    finally:
        _interpreting.reset(token)


def small_table(n_rows: int, heights: Sequence[int]) -> bool:
    """Is a table of ``n_rows`` rows whose quasi-identifiers' hierarchies
    have ``heights`` small enough for its kernels to run as Python in less
    time than compiling them (40-80 s for kaca+ on 2 busy cores)? Measured
    with kaca+ as Python: the quick start's 80 rows x 200 lattice nodes take
    2 s; ISLR Wage over 5 QIs (64 nodes) 5 s at 250 rows but 26 s at 500
    (the work grows faster than the rows); Adult's 60 rows x 6,480 nodes
    over a minute (the sweep visits depth vectors of the lattice)."""
    return n_rows <= SMALL_TABLE_ROWS and n_rows * math.prod(heights) <= SMALL_TABLE_WORK


def uncompiled_kernels() -> list[str]:
    """Qualified names of the declared kernels with no compiled code in the
    cache (what ``hieranon prepare-kernels`` did not reach); kernels always
    inlined into their callers have no code of their own and are left out."""
    return [f"{k.py_func.__module__}.{k.py_func.__qualname__}" for k in _KERNELS
            if k.targetoptions.get("inline", "never") != "always" and not _has_cache_index(k)]


def _has_cache_index(dispatcher) -> bool:
    """Is there compiled code of ``dispatcher`` in the cache (its index file,
    where numba put it when the cache was filled)? False without caching or
    where numba keeps it otherwise."""
    try:
        return os.path.exists(dispatcher._cache._cache_file._index_path)
    except AttributeError:
        return False


def compiled_before(module: str) -> bool:
    """Has a run on this machine already cached the compiled kernels of the
    method in ``module`` (those of ``hieranon.algorithms.X`` and of the
    modules named after it: its package, ``X_kernel``, ``X_core``)?
    Then loading them takes well under a second, less than running them as
    Python even on a small table (the example: 0.9 s against 2.1 s; 250 rows
    of ISLR Wage: 1.3 s against 6.6 s), so :func:`interpreted` is for a cold
    cache only. A method without kernels of its own counts as cached."""
    package = ".".join(module.split(".")[:3])
    own = [k for k in _KERNELS if k.py_func.__module__.startswith(package)]
    return not own or any(_has_cache_index(k) for k in own)


#: Set when Ctrl-C (or SIGTERM turned into KeyboardInterrupt) arrived inside
#: the compiler, where it cannot propagate (see :class:`_CompileNotice`).
_interrupted_compiling = threading.Event()


class _Kernel(CPUDispatcher):
    """A numba dispatcher that runs its Python source instead while
    :func:`interpreted` is on (calls between kernels inside compiled code
    never come here), and that raises the interrupt the compiler lost."""

    def __call__(self, *args, **kwargs):
        if _interpreting.get():
            return self.py_func(*args, **kwargs)
        try:
            result = super().__call__(*args, **kwargs)
        except RuntimeError:  # e.g. "no compiled object yet": what a lost interrupt leaves behind
            if _interrupted_compiling.is_set():
                _interrupted_compiling.clear()
                raise KeyboardInterrupt from None
            raise
        if _interrupted_compiling.is_set():
            _interrupted_compiling.clear()
            raise KeyboardInterrupt
        return result


@contextlib.contextmanager
def _keeping_interrupts() -> Iterator[None]:
    """While compiling: a KeyboardInterrupt Python could only print as
    "unraisable" sets :data:`_interrupted_compiling`, for the kernel's call to
    raise it; every other unraisable exception goes to the previous hook."""
    previous = sys.unraisablehook

    def keep(unraisable) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            _interrupted_compiling.set()
        else:
            previous(unraisable)

    sys.unraisablehook = keep
    try:
        yield
    finally:
        sys.unraisablehook = previous


class _CompileNotice(event.Listener):
    """numba ``numba:compile`` listener: a progress stage while kernels
    compile (a cache load fires no event). Compilations nest (a kernel
    compiles the kernels it calls) under numba's global compiler lock; the
    stage spans the outermost one, and ``done`` counts the functions
    compiled in the process so far."""

    def __init__(self) -> None:
        self.depth = 0
        self.compiled = 0
        self._open: contextlib.ExitStack | None = None
        self._stage = None

    def on_start(self, ev) -> None:
        self.depth += 1
        if self.depth == 1:
            self._open = contextlib.ExitStack()
            self._stage = self._open.enter_context(stage(COMPILE_STAGE, detail=self._detail()))
            # LLVM calls back into Python through ctypes, which only prints an exception raised there: a
            # Ctrl-C landing in such a callback would be lost (or leave a half-built kernel). Keep it instead.
            self._open.enter_context(_keeping_interrupts())

    def on_end(self, ev) -> None:
        self.depth -= 1
        self.compiled += 1
        if self._stage is None:
            return
        self._stage.update(self.compiled, detail=self._detail())
        if self.depth == 0:
            opened, self._open, self._stage = self._open, None, None
            opened.close()

    def _detail(self) -> str:
        return f"{self.compiled} compiled"  # short: the stage line is 56 characters wide


event.register("numba:compile", _CompileNotice())
