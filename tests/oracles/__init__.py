"""Independent checkers that run in their own environment.

pycanon (Sáinz-Pardo Díaz and López García 2022) pins pandas and numpy
exactly; installed beside hieranon it would downgrade the stack the suite
runs on below what ``pip install`` gives users. So it lives in an oracle
environment of its own and the tests talk to it through
:mod:`pycanon_worker` (beside this file), one worker process per pytest
process, started on first use and reused by every test after it.

Where the oracle environment is:

* ``HIERANON_ORACLE_PYTHON``: the Python of an environment that has the
  pins of ``requirements.txt`` (beside this file) installed;
* otherwise ``.oracle-venv/`` in the checkout, made by the first test that
  needs it (``python -m venv`` then ``pip install -r requirements.txt``)
  under a file lock, so that ``pytest -n 2`` workers build it once.

An oracle that cannot be had skips the test with the reason, except under
``CI`` (set and not ``false``/``0``), where it fails it.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
REQUIREMENTS = HERE / "requirements.txt"
WORKER = HERE / "pycanon_worker.py"
VENV = REPO / ".oracle-venv"
ENV_VAR = "HIERANON_ORACLE_PYTHON"


class OracleUnavailable(RuntimeError):
    """The oracle environment cannot be found, built or started."""


class OracleError(RuntimeError):
    """The oracle answered a request with an error."""


def pinned(package: str) -> str:
    """The version ``requirements.txt`` pins for ``package``."""
    for line in REQUIREMENTS.read_text().splitlines():
        name, sep, ver = line.split("#")[0].strip().partition("==")
        if sep and name.strip().lower() == package.lower():
            return ver.strip()
    raise OracleUnavailable(f"{REQUIREMENTS} pins no version of {package}")


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (POSIX advisory lock, released on exit
    even if the process dies)."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_venv(venv: Path = VENV) -> Path:
    """The Python of ``venv`` with ``requirements.txt`` installed, building
    it (once, under a lock) when it is missing or was built from other pins."""
    python = venv / "bin" / "python"
    marker = venv / "requirements.installed"
    wanted = REQUIREMENTS.read_text()
    with file_lock(venv.with_name(venv.name + ".lock")):
        if marker.exists() and marker.read_text() == wanted and python.exists():
            return python
        shutil.rmtree(venv, ignore_errors=True)
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        for cmd in ([sys.executable, "-m", "venv", str(venv)], [*pip, "-r", str(REQUIREMENTS)]):
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode:
                tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
                raise OracleUnavailable(f"building the oracle environment {venv} failed at {' '.join(cmd[1:4])}: "
                                        f"{tail[0]} (or set {ENV_VAR} to a Python with {REQUIREMENTS.name} installed)")
        marker.write_text(wanted)
    return python


def oracle_python() -> Path:
    """``HIERANON_ORACLE_PYTHON`` if set, else the checkout's ``.oracle-venv``."""
    env = os.environ.get(ENV_VAR)
    if not env:
        return build_venv()
    if not Path(env).exists():
        raise OracleUnavailable(f"{ENV_VAR}={env} does not exist: point it at the Python of the oracle environment")
    return Path(env)


class Worker:
    """One running ``pycanon_worker.py``: a request per line, an answer per line."""

    def __init__(self, python: Path) -> None:
        self.stderr = tempfile.TemporaryFile(mode="w+")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        try:
            self.proc = subprocess.Popen([str(python), str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self.stderr, text=True, env=env)
        except OSError as exc:
            raise OracleUnavailable(f"cannot start the oracle worker with {python}: {exc}") from exc
        hello = self.read()
        want = pinned("pycanon")
        if hello.get("pycanon") != want:
            self.close()
            raise OracleUnavailable(f"the oracle at {python} has pycanon {hello.get('pycanon')}, the tests expect "
                                    f"{want} ({REQUIREMENTS.name}): its quirks are documented for that version")

    def read(self) -> dict[str, Any]:
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            self.stderr.seek(0)
            err = self.stderr.read().strip().splitlines()[-1:] or [f"exit status {self.proc.returncode}"]
            raise OracleUnavailable(f"the oracle worker stopped: {err[0]}")
        return json.loads(line)

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = self.read()
        if "error" in reply:
            raise OracleError(reply["error"])
        return reply["ok"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.stderr.close()


_worker: Worker | None = None
_unavailable: OracleUnavailable | None = None


def ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def worker() -> Worker:
    """This process's worker, started on first use; a test that cannot have
    it is skipped (failed under CI) with the reason, and the reason is kept
    so that no later test tries again."""
    global _worker, _unavailable
    if _worker is None and _unavailable is None:
        try:
            _worker = Worker(oracle_python())
            atexit.register(_worker.close)
        except OracleUnavailable as exc:
            _unavailable = exc
    if _unavailable is not None:
        if ci():
            pytest.fail(f"CI needs the pycanon oracle: {_unavailable}", pytrace=False)
        pytest.skip(f"pycanon oracle not available: {_unavailable}")
    return _worker


def cells(column: pd.Series) -> list[Any]:
    """A column as JSON cells: Python scalars, missing cells as null."""
    values = column.astype(object)
    return values.where(column.notna(), None).tolist()


def measures(df: pd.DataFrame, qi: Sequence[str], sa: Sequence[str], wanted: Sequence[str]) -> dict[str, Any]:
    """pycanon's ``wanted`` measures of ``df`` (its classes: the rows equal on
    ``qi``; ``sa`` the sensitive columns), in one round trip."""
    names = list(dict.fromkeys([*qi, *sa]))
    request = {"columns": {c: cells(df[c]) for c in names}, "qi": list(qi), "sa": list(sa), "measures": list(wanted)}
    return worker().ask(request)


def pycanon_k(df: pd.DataFrame, qi: Sequence[str]) -> int:
    """pycanon's k: the size of the smallest class."""
    return int(measures(df, qi, [], ["k"])["k"])


def pycanon_l(df: pd.DataFrame, qi: Sequence[str], sa: Sequence[str]) -> int:
    """pycanon's distinct l: the fewest distinct sensitive values in a class."""
    return int(measures(df, qi, sa, ["l"])["l"])


def pycanon_entropy_l(df: pd.DataFrame, qi: Sequence[str], sa: Sequence[str]) -> float:
    """pycanon's entropy l (pycanon 1.3.6 truncates exp(entropy) to an integer)."""
    return measures(df, qi, sa, ["entropy_l"])["entropy_l"]


def pycanon_recursive_cl(df: pd.DataFrame, qi: Sequence[str], sa: Sequence[str]) -> tuple[float, int]:
    """pycanon's recursive (c, l) (pycanon 1.3.6 sorts the counts increasingly,
    not as Machanavajjhala et al. 2007 define it)."""
    c, l_ = measures(df, qi, sa, ["recursive_cl"])["recursive_cl"]
    return c, l_


def pycanon_t(df: pd.DataFrame, qi: Sequence[str], sa: Sequence[str]) -> float:
    """pycanon's t: the largest distance of a class's sensitive distribution to the table's."""
    return float(measures(df, qi, sa, ["t"])["t"])
