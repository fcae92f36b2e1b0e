"""What the workbench's tests share beyond fixtures (a module of its own: two
``conftest`` modules in one run cannot both be imported by that name)."""

from __future__ import annotations

import os

import pytest

TOKEN = "test-token"


def need(module: str):
    """``module`` imported; absent, a failure under CI (the test extra installs it), else a skip."""
    try:
        return __import__(module)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs {module} (pip install -e '.[test]' installs it)")
        pytest.skip(f"{module} not installed (pip install -e '.[test]')")
