"""Fuzz and fault suite: malformed tables, hierarchies and configurations
through the CLI (in process, via ``hieranon.cli.main``) and the API, and
environment faults during the write.

The contract, for every input: exit 0 with a verified output, or exit 1/2
with ONE line on stderr and nothing written; never a traceback, never exit 3
(an internal error) for the user's mistake, never a leftover file."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import hieranon
from hieranon import cli
from hieranon.hierarchies import readers as H

#: More examples (and random ones) with HIERANON_FUZZ_EXAMPLES=500; the default run is fixed and fast.
_EXAMPLES = int(os.environ.get("HIERANON_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=_EXAMPLES or 40, deadline=None, derandomize=not _EXAMPLES,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# ------------------------------------------------------------------ running the CLI in process


def run_cli(*args) -> tuple[int, str, str]:
    """``hieranon ARGS`` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    env_debug = os.environ.pop("HIERANON_DEBUG", None)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main([str(a) for a in args])
                code = 0
            except SystemExit as exc:
                code = 0 if exc.code is None else exc.code
    finally:
        if env_debug is not None:
            os.environ["HIERANON_DEBUG"] = env_debug
    return code, out.getvalue(), err.getvalue()


def error_lines(err: str) -> list[str]:
    """stderr without logged warnings (a warning is a line of its own)."""
    return [ln for ln in err.splitlines()
            if ln.strip() and not ln.startswith(("WARNING ", "hieranon: warning: "))]


def assert_contract(code: int, err: str, directory: Path, inputs: set[Path], outputs: list[Path]) -> None:
    assert code in (0, 1, 2), f"exit {code}: {err}"
    assert "Traceback" not in err and "internal error" not in err, err
    lines = error_lines(err)
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith("hieranon: error: "), err
    if code != 0:
        for o in outputs:
            assert not o.exists(), f"exit {code} but {o} was written: {err}"
    left = {p for p in directory.iterdir()} - inputs - set(outputs)
    assert not left, f"leftover files {sorted(left)}"


@contextlib.contextmanager
def workdir():
    d = Path(tempfile.mkdtemp(prefix="hieranon-fuzz-"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------------ strategies
# A small alphabet so that labels collide (ambiguous hierarchies, cycles,
# values missing from the hierarchy) and cells hold separators and quotes.
ATOMS = ["M", "F", "W", "*", "1", "12", "0..12", "", " ", ";", ",", '"', "é", "a b", "\t", "x" * 300, "nan",
         "inf", "-1", "99999999999999999999"]
cell = st.sampled_from(ATOMS) | st.text(max_size=6)
SEPS = [",", ";", "\t", "|"]


def csv_text(rows: list[list[str]], sep: str, quote: bool) -> str:
    """Proper CSV (``quote``), or the cells joined raw: separators and quotes
    inside cells then make malformed lines."""
    if not quote:
        return "".join(sep.join(r) + "\n" for r in rows)
    import csv
    buf = io.StringIO()
    csv.writer(buf, delimiter=sep, lineterminator="\n").writerows(rows)
    return buf.getvalue()


@st.composite
def tables(draw):
    """CSV text: a header (names possibly empty or repeated) and rows with
    possibly the wrong number of fields."""
    n_cols = draw(st.integers(1, 4))
    header = draw(st.lists(st.sampled_from(["sex", "age", "zip", "", "sex", "n"]), min_size=n_cols,
                           max_size=n_cols))
    rows = draw(st.lists(st.lists(cell, min_size=max(n_cols - 1, 0), max_size=n_cols + 1), max_size=12))
    sep = draw(st.sampled_from(SEPS))
    return csv_text([header, *rows], sep, draw(st.booleans()))


@st.composite
def hierarchies(draw):
    """ARX CSV text: leaf-to-root rows over a small alphabet (ambiguous,
    unbalanced, cyclic or fine)."""
    labels = st.sampled_from(["M", "F", "W", "X", "G", "12", "0..12", "", "*", "x" * 300])
    rows = draw(st.lists(st.lists(labels, min_size=1, max_size=3).map(lambda r: [*r, "*"]), min_size=0,
                         max_size=6))
    return csv_text(rows, draw(st.sampled_from(SEPS)), True)


config_values = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**20), st.floats(allow_nan=True),
                          st.text(max_size=8), st.lists(st.integers(-2, 30), max_size=3),
                          st.sampled_from(["h.csv", "../../../../etc/passwd", "/dev/zero", ".", "t.csv"]))


@st.composite
def configs(draw):
    """A YAML mapping of known and unknown keys with values of any type."""
    import yaml
    qi = draw(st.dictionaries(st.sampled_from(["sex", "age", "zip", ""]),
                              config_values | st.dictionaries(
                                  st.sampled_from(["hierarchy", "intervals", "mask", "suppress", "tree", "origin",
                                                   "dates", "bogus"]), config_values, max_size=2),
                              max_size=2))
    raw = {"quasi_identifiers": qi}
    raw.update(draw(st.dictionaries(st.sampled_from(["k", "method", "seed", "beta", "weights", "requirements",
                                                     "identifiers", "count_column", "missing", "risk_threshold",
                                                     "nonsense"]), config_values, max_size=4)))
    return yaml.safe_dump(raw, allow_unicode=True) if draw(st.booleans()) else draw(st.text(max_size=40))


OK_TABLE = "sex,age,n\n" + "".join(f"{s},{20 + i},{1 + i % 3}\n" for i, s in enumerate("MFWMFWMFWMFW"))
OK_HIER = "M;*\nF;*\nW;*\n"


def verified(directory: Path, table: Path, output: Path, *spec_args) -> bool:
    code, _, err = run_cli("evaluate", table, output, *spec_args, "-q")
    return code == 0


# ------------------------------------------------------------------ CLI fuzzing
@FUZZ
@given(text=tables(), k=st.integers(1, 4), method=st.sampled_from(["kaca1", "mondrian", "fulldomain"]))
def test_fuzz_tables_through_anonymize(text, k, method):
    with workdir() as d:
        table, hier, out = d / "t.csv", d / "h.csv", d / "o.csv"
        table.write_text(text)
        hier.write_text(OK_HIER)
        code, _, err = run_cli("anonymize", table, "-o", out, "--qi", f"sex={hier}", "-k", k, "-m", method, "-q")
        assert_contract(code, err, d, {table, hier}, [out])
        if code == 0:
            assert verified(d, table, out, "--qi", f"sex={hier}", "-k", k)


@FUZZ
@given(text=hierarchies(), command=st.sampled_from(["anonymize", "check", "hierarchy check"]))
def test_fuzz_hierarchies(text, command):
    with workdir() as d:
        table, hier, out = d / "t.csv", d / "h.csv", d / "o.csv"
        table.write_text(OK_TABLE)
        hier.write_text(text)
        args = {"anonymize": ["anonymize", table, "-o", out, "--qi", f"sex={hier}", "-k", "2", "-q"],
                "check": ["check", table, "--qi", f"sex={hier}", "-k", "2", "-q"],
                "hierarchy check": ["hierarchy", "check", table, "--qi", f"sex={hier}", "-q"]}[command]
        code, _, err = run_cli(*args)
        assert_contract(code, err, d, {table, hier}, [out])
        if command == "anonymize" and code == 0:
            assert verified(d, table, out, "--qi", f"sex={hier}", "-k", "2")


@FUZZ
@given(text=configs(), command=st.sampled_from(["anonymize", "check", "evaluate"]))
@example(text="method: []\nquasi_identifiers: {}\n", command="anonymize")  # was exit 3 (unhashable list)
@example(text="quasi_identifiers: {sex: h.csv}\nk: 2\nweights: {a: 1}\n", command="check")
def test_fuzz_configs(text, command):
    with workdir() as d:
        table, hier, cfg, out = d / "t.csv", d / "h.csv", d / "c.yaml", d / "o.csv"
        table.write_text(OK_TABLE)
        hier.write_text(OK_HIER)
        cfg.write_text(text)
        inputs = {table, hier, cfg}
        if command == "anonymize":
            code, _, err = run_cli("anonymize", table, "-o", out, "-c", cfg, "-q")
            assert_contract(code, err, d, inputs, [out])
            if code == 0:
                assert verified(d, table, out, "-c", cfg)
        elif command == "check":
            code, _, err = run_cli("check", table, "-c", cfg, "-q")
            assert_contract(code, err, d, inputs, [])
        else:
            code, _, err = run_cli("evaluate", table, table, "-c", cfg, "-q")
            assert_contract(code, err, d, inputs, [])


@FUZZ
@given(option=st.sampled_from(["--intervals", "--mask", "--dates", "--origin", "--sep"]),
       value=st.sampled_from(["inf", "5,inf", "nan", "-1", "0", "5,3", "2", ";", "", "1e400", "abc", "5"]))
def test_fuzz_hierarchy_build_options(option, value):
    with workdir() as d:
        table, out = d / "t.csv", d / "h.csv"
        table.write_text(OK_TABLE)
        extra = ["--intervals", "5"] if option in ("--origin", "--sep") else []
        code, _, err = run_cli("hierarchy", "build", "--column", "age", "-i", table, option, value, *extra,
                               "-o", out, "-q")
        assert_contract(code, err, d, {table}, [out])
        if code == 0:  # what was written reads back
            h = H.from_arx_csv(out, "age")
            assert len(h.leaf_index) == 12


# ------------------------------------------------------------------ API fuzzing
API_ERRORS = (ValueError, TypeError)  # the library's errors are ValueError subclasses; TypeError for wrong types


@FUZZ
@given(values=st.lists(st.sampled_from(["M", "F", "W", "", None, "Q", 3, 2.5, float("nan")]), min_size=0,
                       max_size=10),
       dup=st.booleans(), k=st.one_of(st.integers(-1, 5), st.floats(allow_nan=True), st.none()),
       seed=st.one_of(st.integers(-2, 3), st.text(max_size=2)),
       hier=st.sampled_from(["ok", "path", "missing-path", "ambiguous", "junk"]))
def test_fuzz_api(values, dup, k, seed, hier):
    with workdir() as d:
        f = d / "h.csv"
        f.write_text(OK_HIER)
        df = pd.DataFrame({"sex": values})
        if dup:
            df = pd.concat([df, df], axis=1)
        h = {"ok": H.suppression("sex", ["M", "F", "W"]), "path": str(f), "missing-path": str(d / "nope.csv"),
             "ambiguous": str(f), "junk": 42}[hier]
        if hier == "ambiguous":
            f.write_text("M;F;*\nF;X;*\nW;X;*\n")
        try:
            r = hieranon.anonymize(df, ["sex"], {"sex": h}, k=k, seed=seed)
        except API_ERRORS as exc:
            assert str(exc).strip(), type(exc)
            return
        assert r.verification.ok and len(r.data) == len(df)


# ------------------------------------------------------------------ environment faults


@pytest.fixture
def job(tmp_path):
    table, hier = tmp_path / "t.csv", tmp_path / "h.csv"
    table.write_text("sex,pad\n" + "".join(f"{'MFW'[i % 3]},{'z' * 50}\n" for i in range(3000)))
    hier.write_text(OK_HIER)
    return table, hier


def _mount_tmpfs(directory: Path, size: str) -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
                          capture_output=True)
    return proc.returncode == 0


def test_disk_full(monkeypatch, tmp_path, job):
    """A real full disk (a 64 KiB tmpfs) when we may mount one, else a write that raises ENOSPC."""
    table, hier = job
    small = tmp_path / "small"
    small.mkdir()
    mounted = _mount_tmpfs(small, "64k")
    try:
        if not mounted:
            def full(self, *a, **kw):
                raise OSError(errno.ENOSPC, "No space left on device")
            monkeypatch.setattr(pd.DataFrame, "to_csv", full)
        out = small / "o.csv"
        code, _, err = run_cli("anonymize", table, "-o", out, "--qi", f"sex={hier}", "-k", "2", "-q")
        assert code == 2 and str(out) in err and "disk is full" in err, err
        assert_contract(code, err, small, set(), [out])
    finally:
        if mounted:
            subprocess.run(["umount", str(small)], check=False)


def test_permission_denied(monkeypatch, tmp_path, job):
    """Creating the output is refused (root ignores mode bits, so the refusal is injected)."""
    table, hier = job
    out = tmp_path / "o.csv"
    real_open = os.open

    def denied(path, flags, *a, **kw):
        if str(path).endswith(".tmp"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *a, **kw)

    monkeypatch.setattr(os, "open", denied)
    code, _, err = run_cli("anonymize", table, "-o", out, "--qi", f"sex={hier}", "-k", "2", "-q")
    assert code == 2 and str(out) in err and "permission denied" in err, err
    assert_contract(code, err, tmp_path, {table, hier}, [out])


def test_kill_during_the_write_then_the_next_run_cleans_up(tmp_path, job, caplog):
    table, hier = job
    out = tmp_path / "o.csv"
    script = ("import os, signal, pandas as pd\n"
              "real = pd.DataFrame.to_csv\n"
              "def killed(self, path, *a, **k):\n"
              "    real(self.head(10), path, *a, **k)\n"
              "    os.kill(os.getpid(), signal.SIGKILL)\n"
              "pd.DataFrame.to_csv = killed\n"
              "from hieranon.cli import main\n"
              f"main(['anonymize', {str(table)!r}, '-o', {str(out)!r}, '--qi', 'sex={hier}', '-k', '2', '-q'])\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL
    left = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1 and not out.exists()  # half a table, never under the output's name
    past = time.time() - 60  # older than the next run
    os.utime(left[0], (past, past))
    with caplog.at_level("WARNING", logger="hieranon"):  # the CLI prints it as one WARNING line
        code, _, err = run_cli("anonymize", table, "-o", out, "--qi", f"sex={hier}", "-k", "2", "-q")
    assert code == 0, err
    assert any("interrupted earlier write" in r.getMessage() and str(left[0]) in r.getMessage()
               for r in caplog.records)
    assert sorted(tmp_path.iterdir()) == sorted([table, hier, out])


def test_interrupt_is_exit_130_and_writes_nothing(monkeypatch, tmp_path, job):
    table, hier = job
    out = tmp_path / "o.csv"
    import hieranon.job.pipeline

    def interrupted(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(hieranon.job.pipeline, "run", interrupted)
    code, _, err = run_cli("anonymize", table, "-o", out, "--qi", f"sex={hier}", "-k", "2", "-q")
    assert code == 130 and "interrupted; nothing was written" in err
    assert not out.exists()


def test_fuzz_suite_helpers_see_a_failure():
    """The contract check itself rejects a traceback and a leftover."""
    with workdir() as d:
        with pytest.raises(AssertionError):
            assert_contract(3, "hieranon: internal error: x\n", d, set(), [])
        (d / ".o.csv.1.deadbeef.tmp").write_text("x")
        with pytest.raises(AssertionError):
            assert_contract(2, "hieranon: error: x\n", d, set(), [])
