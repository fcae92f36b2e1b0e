"""``hieranon app``: the missing extra in one line, a bad port, and the
server as a custodian starts it: loopback address with the token printed,
403 without it, its temporary folder gone when stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import hieranon
from main_runner import run_main

DATA = Path(hieranon.__file__).parent / "data"


def test_missing_extra_says_how_to_install(monkeypatch, capsys):
    import hieranon.app as workbench
    monkeypatch.setattr(workbench, "missing_dependency", lambda: "fastapi")
    code, out, err = run_main(monkeypatch, capsys, "app", "--no-browser")
    assert code == 2 and out == ""
    assert err.strip() == ("hieranon: error: hieranon app needs fastapi, which is not installed: "
                           'pip install "hieranon[app]"')


def test_bad_port(monkeypatch, capsys):
    code, _, err = run_main(monkeypatch, capsys, "app", "--port", "70000", "--no-browser")
    assert code == 2 and "--port 70000: expected a port number from 1 to 65535" in err


def test_serves_on_loopback_with_a_token_and_cleans_up(tmp_path):
    if not os.environ.get("CI"):
        pytest.importorskip("fastapi")
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-m", "hieranon", "app", str(DATA / "patients.csv"), "--config",
                             str(DATA / "patients.yaml"), "--no-browser"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("hieranon workbench: http://127.0.0.1:"), proc.stderr.read() if not line else line
        url = line.split(": ", 1)[1]
        assert list(tmp_path.glob("hieranon-app-*"))  # the session's folder
        with urllib.request.urlopen(url) as r:
            assert r.status == 200 and b"patients.csv: 80 rows" in r.read()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url.split("?")[0])
        assert refused.value.code == 403
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    assert proc.returncode == 130  # stopped by Ctrl-C, the shell's convention, after its clean shutdown
    assert not list(tmp_path.glob("hieranon-app-*"))
