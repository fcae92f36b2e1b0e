"""hieranon's build backend: setuptools, plus the kernels compiled into the wheel.

A wheel built from this source (``pip install .``, ``python -m build``)
holds the numba kernels already compiled for the machine that builds it,
like a package whose C extensions are compiled at installation, so that the
first run after installing -- or in a container started for one job --
loads them instead of compiling for a minute (``hieranon.core.jit``):

* :func:`get_requires_for_build_wheel` adds the project's runtime
  dependencies (read from ``pyproject.toml``, one list) to the build
  environment, where the jobs that compile the kernels run;
* :class:`BuildPyWithKernels` (setuptools' ``build_py``, configured as
  ``cmdclass`` in ``pyproject.toml``), after copying the sources, runs
  ``hieranon prepare-kernels`` on the copy with ``HIERANON_PREBUILD_INTO``
  pointing into it; the compiled code and its stamp land in
  ``hieranon/_prebuilt_kernels`` of the wheel.

An editable install compiles nothing (its sources change). Set
``HIERANON_PREBUILT_KERNELS=0`` to build without kernels (they then compile
on first use), ``=require`` to fail the build when compiling fails; by
default a failure is reported and the wheel is built without them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (  # noqa: F401 -- the rest of the backend interface, unchanged
    build_editable,
    build_sdist,
    build_wheel,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)
from setuptools.command.build_py import build_py

SWITCH = "HIERANON_PREBUILT_KERNELS"
TARGET_ENV = "HIERANON_PREBUILD_INTO"


def _wanted() -> str:
    return os.environ.get(SWITCH, "1").strip().lower()


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    """setuptools' build requirements, plus the runtime dependencies the
    kernel-compiling jobs import (none when prebuilding is switched off)."""
    requires = _setuptools.get_requires_for_build_wheel(config_settings)
    if _wanted() in ("0", "no", "false", "off"):
        return requires
    project = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*requires, *project.get("dependencies", [])]


class BuildPyWithKernels(build_py):
    """``build_py`` that then compiles the kernels into the built package."""

    def run(self) -> None:
        editable = getattr(self, "editable_mode", False)
        package = Path(self.build_lib).resolve() / "hieranon"
        if not editable:  # setuptools never removes what an earlier build left (a module since moved away)
            shutil.rmtree(package, ignore_errors=True)
        super().run()
        if editable or _wanted() in ("0", "no", "false", "off"):
            return
        target = package / "_prebuilt_kernels"
        shutil.rmtree(target, ignore_errors=True)
        # pip's isolated build environment reaches its packages through PYTHONPATH: put the copy first, keep the rest
        path = os.pathsep.join(p for p in (str(package.parent), os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, TARGET_ENV: str(target), "PYTHONPATH": path, "MPLBACKEND": "Agg"}
        env.pop("NUMBA_CACHE_DIR", None)
        print("hieranon: compiling the numba kernels into the wheel (a minute or two; "
              f"{SWITCH}=0 skips it)", file=sys.stderr)
        run = subprocess.run([sys.executable, "-m", "hieranon", "prepare-kernels"], env=env, cwd=package.parent,
                             capture_output=True, text=True)
        if run.returncode == 0 and (target / "STAMP.json").exists():
            print(f"hieranon: {run.stdout.strip()}", file=sys.stderr)
            return
        shutil.rmtree(target, ignore_errors=True)
        message = (f"hieranon: compiling the kernels failed (exit {run.returncode}); the wheel is built without "
                   f"them, they compile on first use:\n{run.stderr[-2000:]}")
        if _wanted() == "require":
            raise RuntimeError(message)
        print(message, file=sys.stderr)
