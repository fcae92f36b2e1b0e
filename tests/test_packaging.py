"""How the package is declared (pyproject.toml): every file of the package's
data folder ships with it, and the version has one source that the command
line and the installed metadata both read."""

from __future__ import annotations

import fnmatch
import importlib.metadata
import tomllib
from pathlib import Path

from typer.testing import CliRunner

import hieranon
from hieranon import cli

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "hieranon"


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_package_data_ships_every_data_file():
    """A wheel holds only the non-Python files package-data names: a data file
    it misses works in a checkout and fails once installed."""
    globs = pyproject()["tool"]["setuptools"]["package-data"]["hieranon"]
    files = [p.relative_to(PACKAGE).as_posix() for folder in ("data", "app") for p in (PACKAGE / folder).rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".py"]
    assert files
    assert [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)] == []


def test_version_has_one_source():
    """pyproject takes the version from ``hieranon.__version__``; ``--version``
    prints it, equal to what the installed metadata says."""
    project = pyproject()["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert pyproject()["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "hieranon.__version__"}
    r = CliRunner().invoke(cli.app, ["--version"])
    assert r.exit_code == 0
    installed = importlib.metadata.version("hieranon")
    assert r.stdout.strip() == f"hieranon {hieranon.__version__}" == f"hieranon {installed}"
