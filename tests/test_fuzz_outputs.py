"""Fuzz and fault suite of a run's outputs: the shuffled release and its
pseudonyms (fresh randomness unless a seed is given, the seed written
nowhere), order maps and reports that could land on another file, and runs
racing for the same output or stopped by SIGTERM.

The contract (as in :mod:`tests.test_fuzz`): exit 0 with every output
written, or exit 2 with ONE line on stderr and nothing of the run left
behind -- no output, no temporary file, every input and every other run's
file untouched."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hieranon import io as hio
from hieranon.io import writers
from hieranon.io.datasets import example_path
from test_fuzz import FUZZ, OK_HIER, error_lines, run_cli, workdir

EXAMPLE, EXAMPLE_CFG = example_path("patients.csv"), example_path("patients.yaml")
SRC = str(Path(__file__).resolve().parents[1] / "src")


def _job(d: Path) -> dict[str, Path]:
    """A small job in ``d``: table, hierarchy, configuration and pseudonym
    key (the inputs)."""
    table, hier, config, key = d / "t.csv", d / "h.csv", d / "job.yaml", d / "p.key"
    table.write_text("id,sex,pad\n" + "".join(f"P{i},{'MFW'[i % 3]},{i % 7}\n" for i in range(60)))
    hier.write_text(OK_HIER)
    config.write_text("quasi_identifiers: {sex: h.csv}\nk: 2\nidentifiers: [id]\ninsensitive: [pad]\n"
                      "method: mondrian\n")
    key.write_text("0123456789abcdef" * 4 + "\n")
    return {"table": table, "hierarchy": hier, "config": config, "key": key}


def _snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in d.iterdir() if p.is_file() and not p.is_symlink()}


def _one_error(code: int, err: str, *fragments: str) -> None:
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and lines[0].startswith("hieranon: error: "), (code, err)
    assert "Traceback" not in err
    for f in fragments:
        assert f in lines[0], (f, lines[0])


# ------------------------------------------------------------------ shuffle and pseudonyms
def test_without_seed_two_shuffles_and_two_pseudonym_runs_differ(tmp_path):
    outs = []
    for i in range(2):
        out = tmp_path / f"o{i}.csv"
        code, _, err = run_cli("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--shuffle",
                               "--identifier-action", "pseudonym", "-q")
        assert code == 0, err
        outs.append(pd.read_csv(out, dtype=str))
    a, b = outs
    assert not a.equals(b)
    assert not set(a["id"]) & set(b["id"])  # fresh pseudonyms
    # the rows, less the pseudonyms, are the same multiset in another order
    rest = [c for c in a.columns if c != "id"]
    assert a[rest].values.tolist() != b[rest].values.tolist()
    assert sorted(a[rest].values.tolist()) == sorted(b[rest].values.tolist())


def test_the_seed_is_written_nowhere(tmp_path):
    seed = "987654321"
    files = [tmp_path / n for n in ("o.csv", "r.html", "m.csv", "p.html")]
    code, out, err = run_cli("anonymize", EXAMPLE, "-o", files[0], "--config", EXAMPLE_CFG, "--seed", seed,
                             "--shuffle", "--keep-order-map", files[2], "--report", files[1],
                             "--identifier-action", "pseudonym", "--json")
    assert code == 0, err
    code2, _, err2 = run_cli("anonymize", EXAMPLE, "-o", tmp_path / "o2.csv", "--config", EXAMPLE_CFG, "--seed",
                             seed, "--shuffle", "--report", files[3], "--public", "-q")
    assert code2 == 0, err2
    for text in [f.read_text() for f in files] + [out]:  # in any number format: 987654321, 987,654,321...
        assert seed not in re.sub(r"[,.'\s\u00a0\u202f]", "", text)
    assert '"seed"' not in out
    # a seeded shuffle repeats (that is what the seed is for; the second run drops the identifiers)
    o = pd.read_csv(files[0], dtype=str).drop(columns="id")
    assert o.equals(pd.read_csv(tmp_path / "o2.csv", dtype=str))


def test_a_pseudonym_key_file_relinks_releases(tmp_path):
    key = tmp_path / "pseudonym.key"
    key.write_text("0123456789abcdef" * 4 + "\n")
    ids = []
    for i in range(2):
        out = tmp_path / f"o{i}.csv"
        code, _, err = run_cli("anonymize", EXAMPLE, "-o", out, "--config", EXAMPLE_CFG, "--identifier-action",
                               "pseudonym", "--pseudonym-key", key, "-q")
        assert code == 0, err
        ids.append(pd.read_csv(out, dtype=str)["id"].tolist())
    assert ids[0] == ids[1]


@pytest.mark.parametrize("content, extra, fragments", [
    (None, ["--identifier-action", "pseudonym"], ["--pseudonym-key", "does not exist", "token_hex"]),
    ("abc\n", ["--identifier-action", "pseudonym"], ["--pseudonym-key", "3 bytes", "at least 32"]),
    ("0123456789abcdef" * 4, [], ["--pseudonym-key", "--identifier-action pseudonym"]),
])
def test_a_bad_pseudonym_key_is_one_line_and_nothing_written(tmp_path, content, extra, fragments):
    key = tmp_path / "k.key"
    if content is not None:
        key.write_text(content)
    before = _snapshot(tmp_path)
    code, _, err = run_cli("anonymize", EXAMPLE, "-o", tmp_path / "o.csv", "--config", EXAMPLE_CFG,
                           "--pseudonym-key", key, *extra, "-q")
    _one_error(code, err, str(key) if content is None else "", *fragments)
    assert _snapshot(tmp_path) == before


# ------------------------------------------------------------------ colliding paths
OUTPUTS = {"-o": "o.csv", "--report": "r.html", "--keep-order-map": "m.csv"}
SPELLINGS = ["same", "dot", "dotdot", "absolute", "symlink"]


def _spelled(d: Path, target: Path, how: str) -> Path:
    """Another way to name ``target`` (relative to ``d``, the working directory)."""
    if how == "same":
        return Path(target.name)
    if how == "dot":
        return Path(".") / target.name
    if how == "dotdot":
        (d / "sub").mkdir(exist_ok=True)
        return Path("sub") / ".." / target.name
    if how == "absolute":
        return d / target.name
    link = d / f"link-{target.name}"
    link.symlink_to(target.name)  # dangling until the target is written: still the same file
    return Path(link.name)


@FUZZ
@given(option=st.sampled_from(sorted(OUTPUTS)),
       other=st.sampled_from([*sorted(OUTPUTS), "table", "config", "hierarchy", "key"]),
       how=st.sampled_from(SPELLINGS), force=st.booleans())
@example(option="--keep-order-map", other="-o", how="same", force=False)   # printed "verified", left only the map
@example(option="--keep-order-map", other="--report", how="same", force=False)  # the permutation in the report
@example(option="-o", other="key", how="symlink", force=True)
def test_fuzz_an_output_naming_another_file_is_refused(option, other, how, force):
    if option == other:
        return
    with workdir() as d:
        inputs = _job(d)
        cwd = os.getcwd()
        os.chdir(d)
        try:
            paths = {o: Path(p) for o, p in OUTPUTS.items()}
            target = d / (OUTPUTS[other] if other in OUTPUTS else inputs[other].name)
            paths[option] = _spelled(d, target, how)
            before = _snapshot(d)
            args = [a for o, p in paths.items() for a in (o, p)]
            code, _, err = run_cli("anonymize", inputs["table"].name, "--config", inputs["config"].name, "--shuffle",
                                   "--identifier-action", "pseudonym", "--pseudonym-key", inputs["key"].name,
                                   *args, *(["--force"] if force else []), "-q")
        finally:
            os.chdir(cwd)
        _one_error(code, err, target.name)
        assert "same file" in err or "refusing to overwrite" in err, err
        assert _snapshot(d) == before  # nothing written, every input as it was


# ------------------------------------------------------------------ concurrent runs
@FUZZ
@given(appears=st.sampled_from(["o.csv", "r.html", "m.csv"]), force=st.booleans())
@example(appears="o.csv", force=False)  # the later run silently replaced the earlier one
def test_fuzz_an_output_appearing_during_the_run(appears, force):
    """Another run writes one of our outputs after our checks, before our
    write ends: without --force we exit 2 naming it and leave nothing of
    ours (its file intact); with --force we replace it."""
    with workdir() as d:
        inputs = _job(d)
        real = writers._open_temporary

        def other_run_finishes_first(path):
            if path.name == appears and not path.exists():
                path.write_text("the other run's\n")
            return real(path)

        mp = pytest.MonkeyPatch()
        mp.setattr(writers, "_open_temporary", other_run_finishes_first)
        try:
            code, _, err = run_cli("anonymize", inputs["table"], "--config", inputs["config"], "-o", d / "o.csv",
                                   "--report", d / "r.html", "--shuffle", "--keep-order-map", d / "m.csv",
                                   *(["--force"] if force else []), "-q")
        finally:
            mp.undo()
        names = sorted(p.name for p in d.iterdir())
        if force:
            assert code == 0, err
            assert (d / appears).read_text() != "the other run's\n"
            assert names == sorted(["h.csv", "job.yaml", "p.key", "t.csv", "o.csv", "r.html", "m.csv"])
        else:
            _one_error(code, err, str(d / appears), "appeared")
            assert (d / appears).read_text() == "the other run's\n"
            assert names == sorted(["h.csv", "job.yaml", "p.key", "t.csv", appears])


def test_two_processes_racing_for_one_output(tmp_path):
    """Two real runs started together on the same -o without --force: one
    writes it, the other exits 2 in one line naming it; never both 0."""
    inputs = _job(tmp_path)
    out = tmp_path / "o.csv"
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("HIERANON_DEBUG", None)
    cmd = [sys.executable, "-m", "hieranon", "anonymize", str(inputs["table"]), "--config", str(inputs["config"]),
           "-o", str(out), "-q"]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
    assert sorted(code for code, _ in results) == [0, 2], results
    _, err = next(r for r in results if r[0] == 2)
    _one_error(2, err, str(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.csv", "job.yaml", "o.csv", "p.key", "t.csv"]
    assert len(pd.read_csv(out)) == 60


# ------------------------------------------------------------------ SIGTERM
@pytest.mark.parametrize("where", ["solve", "xlsx"])
def test_sigterm_is_handled_like_ctrl_c(tmp_path, where):
    """SIGTERM while solving or while writing an .xlsx: exit 143, one line,
    no output and no temporary file left."""
    inputs = _job(tmp_path)
    out = tmp_path / "o.xlsx"
    stop = "os.kill(os.getpid(), signal.SIGTERM)"
    patch = (f"import hieranon.job.pipeline\nreal = hieranon.job.pipeline.run\n"
             f"def run(*a, **k):\n    {stop}\n    return real(*a, **k)\nhieranon.job.pipeline.run = run\n"
             if where == "solve" else
             f"real = pd.DataFrame.to_excel\n"
             f"def to_excel(self, fh, *a, **k):\n    fh.write(b'PK half')\n    {stop}\n"
             f"    return real(self, fh, *a, **k)\n"
             f"pd.DataFrame.to_excel = to_excel\n")
    script = (f"import os, signal, sys\nimport pandas as pd\n{patch}from hieranon.cli import main\n"
              f"sys.argv = ['hieranon', 'anonymize', {str(inputs['table'])!r}, '--config', "
              f"{str(inputs['config'])!r}, '-o', {str(out)!r}, '-q']\nmain()\n")
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("HIERANON_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, proc.stderr)
    lines = error_lines(proc.stderr)
    assert len(lines) == 1 and "terminated" in lines[0] and "Traceback" not in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.csv", "job.yaml", "p.key", "t.csv"]


@pytest.mark.parametrize("option", ["-o", "--report", "--keep-order-map"])
def test_an_output_that_is_a_device_or_fifo_is_refused_even_with_force(tmp_path, option):
    """``-o /dev/null --force`` as root replaced the system's /dev/null with the release."""
    special = tmp_path / "fifo"
    os.mkfifo(special)
    paths = {"-o": tmp_path / "o.csv", "--report": tmp_path / "r.html", "--keep-order-map": tmp_path / "m.csv",
             option: special}
    before = _snapshot(tmp_path)
    code, _, err = run_cli("anonymize", EXAMPLE, "--config", EXAMPLE_CFG, "--shuffle", "--force", "-q",
                           *[x for pair in paths.items() for x in pair])
    _one_error(code, err, str(special), "not a regular file")
    assert _snapshot(tmp_path) == before and stat.S_ISFIFO(special.stat().st_mode)


def test_an_order_map_past_64_bit_row_numbers_is_bad_input(tmp_path):
    out, order = tmp_path / "o.csv", tmp_path / "m.csv"
    code, _, err = run_cli("anonymize", EXAMPLE, "--config", EXAMPLE_CFG, "-o", out, "--shuffle",
                           "--keep-order-map", order, "-q")
    assert code == 0, err
    rows = order.read_text().splitlines()
    rows[1] = "9223372036854775808," + rows[1].split(",")[1]
    order.write_text("\n".join(rows) + "\n")
    code, _, err = run_cli("evaluate", EXAMPLE, out, "--config", EXAMPLE_CFG, "--order-map", order)
    _one_error(code, err, str(order), "whole row numbers")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_whose_exception_was_swallowed_still_stops_the_run_and_removes_its_outputs(tmp_path, monkeypatch,
                                                                                          signum):
    """A signal's exception raised inside a weakref callback is printed and
    swallowed by Python; the run went on, wrote everything and said
    "nothing was written" (SIGTERM) or exited 0 (Ctrl-C)."""
    from hieranon.cli import errors

    def swallowed(*args, **kwargs):  # the handler ran, its exception was lost
        try:
            errors._raise_interrupt(signum, None)
        except KeyboardInterrupt:
            pass
        return real(*args, **kwargs)

    real = hio.write_text
    monkeypatch.setattr(hio, "write_text", swallowed)
    before = _snapshot(tmp_path)
    code, _, err = run_cli("anonymize", EXAMPLE, "--config", EXAMPLE_CFG, "-o", tmp_path / "o.csv",
                           "--report", tmp_path / "r.html", "--shuffle", "--keep-order-map", tmp_path / "m.csv", "-q")
    assert code == (143 if signum == signal.SIGTERM else 130), err
    assert "nothing was written" in err and _snapshot(tmp_path) == before


def test_a_seeded_shuffle_warns_that_the_seed_undoes_it(tmp_path):
    """A seeded permutation does not depend on the data: trying seeds until a
    date column lines up recovered --seed 4242 and the original order."""
    args = ("anonymize", EXAMPLE, "--config", EXAMPLE_CFG, "--shuffle", "-q", "--force")
    code, _, err = run_cli(*args, "-o", tmp_path / "a.csv", "--seed", "4242")
    assert code == 0 and "leave --seed out of a release" in err
    code, _, err = run_cli(*args, "-o", tmp_path / "b.csv")
    assert code == 0 and "--seed" not in err
