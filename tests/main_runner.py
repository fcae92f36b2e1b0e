"""The in-process CLI runner shared by test_cli and test_hardening."""

from __future__ import annotations

import sys

import pytest

from hieranon import cli


def run_main(monkeypatch, capsys, *args):
    """Call the real entry point (CliRunner bypasses it) with ``args`` as sys.argv."""
    monkeypatch.setattr(sys, "argv", ["hieranon", *map(str, args)])
    monkeypatch.delenv("HIERANON_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exc:
        cli.main()
    out, err = capsys.readouterr()
    code = exc.value.code
    return (0 if code is None else code), out, err
