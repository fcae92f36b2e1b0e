"""Compiled kernels: where their cache goes when the installation or the
home directory is read-only, and the notice shown while they compile.

The command-line runs are subprocesses with their own environment and an
empty cache, so each compiles the kernels it needs (Mondrian's, the
cheapest to compile) from scratch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import pandas as pd
import pytest

import hieranon
from hieranon.algorithms import base
from hieranon.core import jit, progress
from hieranon.core.jit import COMPILE_STAGE, SMALL_TABLE_ROWS
from hieranon.hierarchies import readers as H
from hieranon.io import read_table
from hieranon.io.datasets import example_path
from hieranon.job.pipeline import anonymize

EXAMPLE = example_path("patients.csv")
EXAMPLE_CFG = example_path("patients.yaml")
PACKAGE = Path(hieranon.__file__).resolve().parent
QIS = ["gender", "age", "postcode", "date_of_birth"]


def quick_start(out: Path, env: dict, cwd: Path, table: Path = EXAMPLE) -> subprocess.CompletedProcess:
    """The README's quick start (with Mondrian) in a subprocess with ``env``."""
    return subprocess.run([sys.executable, "-m", "hieranon", "anonymize", str(table), "--config", str(EXAMPLE_CFG),
                           "-o", str(out), "--force", "-m", "mondrian"],
                          capture_output=True, text=True, cwd=cwd, env=env)


def large_example(directory: Path) -> Path:
    """The example table repeated past :data:`SMALL_TABLE_ROWS` rows (its
    kernels are compiled, not interpreted)."""
    df = read_table(EXAMPLE)
    big = pd.concat([df] * (SMALL_TABLE_ROWS // len(df) + 1), ignore_index=True)
    big["id"] = range(len(big))
    assert len(big) > SMALL_TABLE_ROWS
    path = directory / "patients_large.csv"
    big.to_csv(path, index=False)
    return path


def read_only_install(root: Path) -> Path:
    """A copy of the package where nothing can be written beside the sources:
    each ``__pycache__`` is a file, so no directory can be made there (a
    file mode would not stop root)."""
    target = root / "site" / "hieranon"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    for directory in [target, *[p for p in target.rglob("*") if p.is_dir()]]:
        (directory / "__pycache__").write_text("read-only")
    return target.parent


def clean_env(**changes: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH", "TMPDIR")}
    env.update(changes, PYTHONDONTWRITEBYTECODE="1")
    return env


@pytest.mark.slow
@pytest.mark.parametrize("home_writable", [True, False])
def test_read_only_install_caches_elsewhere(tmp_path, home_writable):
    site = read_only_install(tmp_path)
    temp = tmp_path / "tmp"
    temp.mkdir()
    if home_writable:
        home = tmp_path / "home"
        home.mkdir()
        expected = home / ".cache" / "hieranon" / "numba"
    else:
        home = tmp_path / "home-is-a-file"  # nothing can be made under it
        home.write_text("")
        expected = temp / f"hieranon-{os.getuid()}" / "numba"
    out = tmp_path / "out.csv"
    env = clean_env(PYTHONPATH=str(site), HOME=str(home), TMPDIR=str(temp))

    run = quick_start(out, env, tmp_path, large_example(tmp_path))

    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "locator" not in run.stderr
    assert out.is_file()
    assert any(expected.rglob("*.nbi")), f"no compiled kernel cached under {expected}"


@pytest.mark.slow
def test_compile_notice_on_empty_cache_only(tmp_path):
    env = clean_env(NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(PACKAGE.parent))
    line = f"hieranon: {COMPILE_STAGE}..."

    probe = [sys.executable, "-c", "import hieranon.algorithms.mondrian; from hieranon.core import jit; "
             "print(jit.compiled_before('hieranon.algorithms.mondrian'))"]

    def cached() -> str:
        return subprocess.run(probe, capture_output=True, text=True, env=env, check=True).stdout.strip()

    table = large_example(tmp_path)
    assert cached() == "False"
    first = quick_start(tmp_path / "first.csv", env, tmp_path, table)
    warm = quick_start(tmp_path / "warm.csv", env, tmp_path, table)

    assert first.returncode == 0 and warm.returncode == 0, first.stderr + warm.stderr
    assert first.stderr.count(line) == 1, first.stderr
    assert line not in warm.stderr, warm.stderr
    assert (tmp_path / "first.csv").read_bytes() == (tmp_path / "warm.csv").read_bytes()
    assert cached() == "True"  # from now on even a small table loads the compiled kernels


def test_compile_stage_reported_for_real_compilation_only():
    events = []

    @numba.njit  # a new function: compiled now, never loaded from a cache
    def twice(x):
        return 2 * x

    with progress.reporting(events.append):
        assert twice(21) == 42
        compiled = [e for e in events if e.stage == COMPILE_STAGE]
        events.clear()
        assert twice(4) == 8  # compiled already: no stage

    assert compiled and compiled[-1].finished and compiled[-1].done >= 1
    assert not events



def test_quick_start_compiles_nothing(tmp_path):
    cache = tmp_path / "cache"
    env = clean_env(NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(PACKAGE.parent))

    run = subprocess.run([sys.executable, "-m", "hieranon", "anonymize", str(EXAMPLE), "--config", str(EXAMPLE_CFG),
                          "-o", str(tmp_path / "out.csv")], capture_output=True, text=True, cwd=tmp_path, env=env)

    assert run.returncode == 0, run.stderr
    assert COMPILE_STAGE not in run.stderr
    assert not list(cache.rglob("*.nbi")), "the quick start compiled kernels"


@pytest.mark.parametrize("method", ["kaca+", "kaca1", "kaca2", "mondrian", "dbca", "fulldomain"])
def test_interpreted_kernels_give_the_compiled_output(monkeypatch, method):
    df = read_table(EXAMPLE)
    hierarchies = {q: H.from_arx_csv(EXAMPLE.parent / f"patients_hierarchy_{q}.csv", q) for q in QIS}
    outputs = []
    monkeypatch.setattr(base, "compiled_before", lambda module: False)  # as on a fresh installation
    for rows in (SMALL_TABLE_ROWS, 0):  # interpreted, then compiled
        monkeypatch.setattr(jit, "SMALL_TABLE_ROWS", rows)
        result = anonymize(df.drop(columns=["id"]), QIS, hierarchies, k=3, method=method, seed=1,
                           sensitive=["diagnosis"], class_column="readmitted")
        outputs.append(result.data.to_csv(index=False))
    assert outputs[0] == outputs[1]


def test_every_kernel_is_declared_through_the_one_decorator():
    """A kernel declared with numba directly would miss the cache fallback,
    the compile notice and the small-table Python path."""
    package = Path(hieranon.__file__).parent
    direct = [f"{p.relative_to(package)}:{i}" for p in package.rglob("*.py") if p.name != "jit.py"
              for i, line in enumerate(p.read_text().splitlines(), 1)
              if line.lstrip().startswith(("@nb.njit", "@numba.njit", "@njit", "@nb.jit", "@numba.jit"))]
    assert direct == []


def test_the_cache_check_covers_every_directory_holding_a_kernel():
    """Numba caches a kernel beside its module: the check of whether it can do
    that must look at every directory that holds one, wherever modules move."""
    package = Path(hieranon.__file__).resolve().parent
    holding = {p.parent for p in package.rglob("*.py") if p.name != "jit.py"
               and any(line.lstrip().startswith("@kernel") for line in p.read_text().splitlines())}
    assert holding and holding <= set(jit._KERNEL_DIRS), sorted(str(d) for d in holding - set(jit._KERNEL_DIRS))


@pytest.mark.parametrize("rows, privacy, cached, as_python", [
    (80, False, False, True),  # the quick start on a fresh installation: nothing compiled
    (80, False, True, False),  # compiled before: loading the cache beats running Python
    (80, True, False, False),  # privacy models run the kernels too often for Python
    (SMALL_TABLE_ROWS + 1, False, False, False),  # too large to run as Python
])
def test_kernels_run_as_python_only_on_a_small_cold_plain_run(monkeypatch, rows, privacy, cached, as_python):
    from hieranon.privacy import DistinctLDiversity

    df = pd.concat([read_table(EXAMPLE)] * (rows // 80 + 1), ignore_index=True).iloc[:rows]
    hierarchies = {q: H.from_arx_csv(EXAMPLE.parent / f"patients_hierarchy_{q}.csv", q) for q in QIS}
    seen = []
    real = base.interpreted
    monkeypatch.setattr(base, "compiled_before", lambda module: cached)
    monkeypatch.setattr(base, "interpreted", lambda on=True: seen.append(on) or real(on))
    anonymize(df.drop(columns=["id"]), QIS, hierarchies, k=3, method="mondrian",
              privacy=[DistinctLDiversity("diagnosis", 2)] if privacy else (), sensitive=["diagnosis"],
              class_column="readmitted")
    assert seen == [as_python]


def installed_copy(root: Path) -> Path:
    """A copy of the package as an installation holds it: no caches, and
    modification times that are not the checkout's (pip does not keep them)."""
    target = root / "site" / "hieranon"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__", "_prebuilt_kernels"))
    for path in target.rglob("*.py"):
        os.utime(path, (1_000_000_000, 1_000_000_000))
    return target.parent


def prebuild_mondrian(site: Path, workdir: Path) -> Path:
    """What the package build does, for Mondrian's kernels only (the whole
    ``prepare-kernels`` takes minutes): compile into the copy's prebuilt
    directory, then stamp it."""
    prebuilt = site / "hieranon" / "_prebuilt_kernels"
    env = clean_env(PYTHONPATH=str(site), HIERANON_PREBUILD_INTO=str(prebuilt),
                    NUMBA_CACHE_DIR=str(workdir / "unused-cache"))
    run = quick_start(workdir / "prebuild.csv", env, workdir, large_example(workdir))
    assert run.returncode == 0, run.stderr
    stamp = subprocess.run([sys.executable, "-c", "from pathlib import Path; from hieranon.core import jit; "
                            f"jit.write_prebuilt_stamp(Path({str(prebuilt)!r}))"], env=env, capture_output=True,
                           text=True)
    assert stamp.returncode == 0, stamp.stderr
    assert any(prebuilt.rglob("*.nbi")) and not (workdir / "unused-cache").exists()
    return prebuilt


@pytest.mark.slow
def test_prebuilt_kernels_are_loaded_not_compiled(tmp_path):
    site = installed_copy(tmp_path)
    prebuilt = prebuild_mondrian(site, tmp_path)
    for path in site.rglob("*.py"):  # installing again changes every modification time
        os.utime(path, (2_000_000_000, 2_000_000_000))
    user_cache = tmp_path / "user-cache"
    env = clean_env(PYTHONPATH=str(site), NUMBA_CACHE_DIR=str(user_cache))

    run = quick_start(tmp_path / "out.csv", env, tmp_path, large_example(tmp_path))

    assert run.returncode == 0, run.stderr
    assert COMPILE_STAGE not in run.stderr
    assert not user_cache.exists(), "a run with prebuilt kernels compiled into numba's cache"
    assert (tmp_path / "out.csv").read_bytes() == (tmp_path / "prebuild.csv").read_bytes()
    assert any(prebuilt.rglob("*.nbi"))


@pytest.mark.slow
@pytest.mark.parametrize("change", ["edited source", "switched off"])
def test_prebuilt_kernels_of_other_sources_are_ignored(tmp_path, change):
    site = installed_copy(tmp_path)
    prebuild_mondrian(site, tmp_path)
    env = clean_env(PYTHONPATH=str(site), NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    if change == "edited source":  # a constant a kernel reads may have changed: its machine code is stale
        with (site / "hieranon" / "algorithms" / "mondrian.py").open("a") as f:
            f.write("\n# edited after the build\n")
    else:
        env["HIERANON_PREBUILT_KERNELS"] = "0"

    run = quick_start(tmp_path / "out.csv", env, tmp_path, large_example(tmp_path))

    assert run.returncode == 0, run.stderr
    assert f"hieranon: {COMPILE_STAGE}..." in run.stderr
    assert any((tmp_path / "cache").rglob("*.nbi"))


def test_read_only_prebuilt_kernels_are_copied_once(tmp_path, monkeypatch):
    prebuilt = tmp_path / "prebuilt"
    (prebuilt / "algorithms").mkdir(parents=True)
    (prebuilt / "algorithms" / "k.nbi").write_bytes(b"index")
    jit.write_prebuilt_stamp(prebuilt)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))

    first = jit._seeded_copy(prebuilt)
    (prebuilt / "algorithms" / "k.nbi").write_bytes(b"changed")
    again = jit._seeded_copy(prebuilt)

    assert first == again and first.is_relative_to(tmp_path / "xdg")
    assert (first / "algorithms" / "k.nbi").read_bytes() == b"index"  # made once per stamp, then reused
    assert jit.prebuilt_matches(first)
    assert not [p for p in first.parent.iterdir() if p.name.startswith(".")], "a staging directory was left"


def test_an_interrupt_the_compiler_could_not_raise_still_stops_the_run():
    """LLVM calls back into Python through ctypes, which can only print an
    exception raised there: Ctrl-C landing in such a callback is kept and
    raised by the kernel's call once the compiler returns."""
    import types

    from numba.core import event

    @jit.kernel(cache=False)
    def thrice(x):  # compiled now, in every run
        return 3 * x

    class LostInACallback(event.Listener):
        def on_start(self, ev):
            sys.unraisablehook(types.SimpleNamespace(exc_type=KeyboardInterrupt, exc_value=KeyboardInterrupt(),
                                                     exc_traceback=None, err_msg="ctypes callback", object=None))

        def on_end(self, ev):
            pass

    hook = sys.unraisablehook
    with event.install_listener("numba:compile", LostInACallback()):
        with pytest.raises(KeyboardInterrupt):
            thrice(14)
    assert sys.unraisablehook is hook  # the compiler's hook is taken back
    assert thrice(14) == 42  # nothing left pending


#: Starts numba's threads with a parallel kernel, then prints the settings of
#: the OpenMP runtime they run in (``omp_display_env(1)`` writes them to
#: stderr: GNU OpenMP shows an unset policy as 'PASSIVE', and how long its
#: threads spin as GOMP_SPINCOUNT, 0 when they sleep at once), or "no openmp"
#: when numba picked another threading layer.
_WAIT_POLICY_PROBE = """
import ctypes, sys
import numpy as np
import hieranon.job.pipeline
import numba

@numba.njit(parallel=True)
def total(a):
    s = 0.0
    for i in numba.prange(len(a)):
        s += a[i]
    return s

total(np.ones(1000))
if numba.threading_layer() != "omp":
    print("no openmp")
    sys.exit(0)
ctypes.CDLL("libgomp.so.1").omp_display_env(1)
"""


@pytest.mark.parametrize("preset, expected", [
    ({}, ["OMP_WAIT_POLICY = 'PASSIVE'", f"GOMP_SPINCOUNT = '{jit.SPIN_COUNT}'"]),
    ({"OMP_WAIT_POLICY": "ACTIVE"}, ["OMP_WAIT_POLICY = 'ACTIVE'", "GOMP_SPINCOUNT = '30000000000'"]),
    ({"GOMP_SPINCOUNT": "7"}, ["GOMP_SPINCOUNT = '7'"])])
def test_openmp_threads_sleep_between_kernels_unless_the_user_says(preset, expected):
    """numba's OpenMP threads sleep after a short spin (they spun for long,
    taking the cores of a busy machine from the run itself); a wait policy
    or spin count the user set is kept."""
    env = {key: value for key, value in os.environ.items() if key not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(preset)
    run = subprocess.run([sys.executable, "-c", _WAIT_POLICY_PROBE], capture_output=True, text=True, env=env,
                         check=True)
    if run.stdout.strip() == "no openmp":
        pytest.skip("numba runs its threads without OpenMP here: no wait policy to set")
    for setting in expected:
        assert setting in run.stderr
