"""Shared fixtures: the seeds' running examples and the Adult data location."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from hieranon.hierarchies import readers as H

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ADULT = REPO.parent / "shared" / "datasets" / "adult"


def pytest_terminal_summary(terminalreporter) -> None:
    """The stack the suite ran on, so that a run's log says which one it tested."""
    import numpy as np

    terminalreporter.write_line(f"hieranon suite ran on pandas {pd.__version__}, numpy {np.__version__}")


def adult_dir() -> Path | None:
    """HIERANON_ADULT_DIR, else ../shared/datasets/adult beside the checkout."""
    env = os.environ.get("HIERANON_ADULT_DIR")
    path = Path(env) if env else DEFAULT_ADULT
    return path if (path / "adult.data").exists() else None


@pytest.fixture(scope="session")
def adult_path() -> Path:
    path = adult_dir()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs the Adult data: set HIERANON_ADULT_DIR or put ../shared beside the checkout")
        pytest.skip("Adult data not available (set HIERANON_ADULT_DIR)")
    os.environ.setdefault("HIERANON_ADULT_DIR", str(path))
    return path


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium, for the tests that look at what a person sees
    (screenshots); .ci/run installs it, so under CI its absence fails."""
    import shutil

    found = os.environ.get("CHROMIUM") or shutil.which("chromium")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs Chromium (apt-get install chromium; .ci/run installs it)")
        pytest.skip("chromium not installed (apt-get install chromium)")
    return found


@pytest.fixture
def paper_hierarchies():
    """Gender {male, female} -> *, Age {young, middle, old} -> *, Postcode by
    masking 4 digits (h = 5), Marriage -> * (SPEC section 5)."""
    return {
        "Gender": H.suppression("Gender", ["male", "female"]),
        "Age": H.suppression("Age", ["young", "middle", "old"]),
        "Postcode": H.masking("Postcode", ["4350", "4351", "4352", "4353"]),
        "Marriage": H.suppression("Marriage", ["married", "unmarried", "divorced", "widowed"]),
    }


@pytest.fixture
def seed000_table1a():
    """seed 000, Table 1a."""
    return pd.DataFrame({
        "Gender": ["male", "male", "male", "female", "female", "female"],
        "Age": ["middle", "middle", "young", "young", "old", "old"],
        "Postcode": ["4350", "4350", "4351", "4352", "4353", "4353"],
        "Problem": ["stress", "obesity", "stress", "obesity", "stress", "obesity"],
    })


@pytest.fixture
def seed004_table1a():
    """seed 004, Table 1a."""
    return pd.DataFrame({
        "Gender": ["male", "male", "male", "female", "female", "female"],
        "Age": ["middle", "middle", "middle", "middle", "old", "old"],
        "Postcode": ["4350", "4350", "4350", "4352", "4353", "4353"],
        "Problem": ["stress", "obesity", "obesity", "stress", "stress", "obesity"],
    })


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory) -> str:
    """The URL of a real PostgreSQL server started for the session (pgserver:
    PostgreSQL's binaries from PyPI, on a Unix socket), stopped at the end;
    under CI a server that cannot start fails the tests that need it."""
    try:
        import pgserver

        server = pgserver.get_server(tmp_path_factory.mktemp("postgres"), cleanup_mode="stop")
    except Exception as exc:  # noqa: BLE001 - not installed, or the server did not start
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a PostgreSQL server from pgserver (pip install pgserver): {exc}")
        pytest.skip(f"no PostgreSQL server (pgserver): {exc}")
    yield server.get_uri()
    server.cleanup()
