"""Bad inputs and environment faults: each handled at its depth, one line, exit 2, nothing written."""

from __future__ import annotations

import ctypes
import errno
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import hieranon
from hieranon.core import files
from hieranon.core.tree import AmbiguousLabelError, HierarchyError
from hieranon.hierarchies import readers as H
from hieranon.io import OutputError, read_table, write_table, write_text
from main_runner import run_main


@pytest.fixture
def job(tmp_path):
    """A small table and a suppression hierarchy of its one QI."""
    table = tmp_path / "t.csv"
    table.write_text("sex,age\n" + "".join(f"{s},{30 + i}\n" for i, s in enumerate("MFWMFWMF")))
    hier = tmp_path / "sex.csv"
    hier.write_text("M;*\nF;*\nW;*\n")
    return table, hier


def leftovers(directory: Path, *keep: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p not in keep)


# ------------------------------------------------------------ 1. ambiguous labels
@pytest.mark.parametrize("text, label, lines", [
    ("M;F;*\nW;F;*\nF;X;*\nG;X;*\n", "F", (1, 3)),      # a leaf that is also a generalisation
    ("M;F;*\nF;M;*\nW;X;*\n", "F", (1, 2)),              # a cycle of labels
    ("a;x;*\nb;y;*\nc;x;y;*\n", None, None),             # unbalanced: refused before (rows of different lengths)
])
def test_a_label_naming_two_nodes_is_refused_with_both_lines(tmp_path, text, label, lines):
    f = tmp_path / "h.csv"
    f.write_text(text)
    with pytest.raises(HierarchyError) as exc:
        H.from_arx_csv(f, "sex")
    if label is not None:
        assert isinstance(exc.value, AmbiguousLabelError)
        msg = str(exc.value)
        assert str(f) in msg and f"'{label}'" in msg
        assert f"line {lines[0]}" in msg and f"line {lines[1]}" in msg


def test_a_label_repeated_along_one_chain_is_accepted():
    h = H.from_arx_csv("12;12;0..12;*\n13;13;13..20;*\n", "n")
    assert h.generalise_labels(np.array([h.leaf_index["12"]]), np.array(["12"], dtype=object))[0] >= 0
    assert len(h.leaf_index) == 2


def test_direct_construction_and_mappings_are_validated_too():
    # * -> F -> M, * -> M (leaf): label M names a leaf and a generalisation's child in two branches
    with pytest.raises(AmbiguousLabelError, match="'M'"):
        H.Hierarchy("sex", ["*", "F", "M", "M"], np.array([-1, 0, 1, 0]))
    with pytest.raises(HierarchyError, match="'F'"):
        H.from_mapping("sex", {"*": {"F": ["M", "W"], "X": ["F", "G"]}})
    with pytest.raises(HierarchyError, match="'F'"):
        H.from_paths("sex", [["M", "F", "*"], ["F", "M", "*"]])


def test_cli_refuses_the_ambiguous_hierarchy_before_writing(monkeypatch, capsys, tmp_path, job):
    table, hier = job
    hier.write_text("M;F;*\nW;F;*\nF;X;*\n")
    out = tmp_path / "o.csv"
    for args in (["hierarchy", "check", table, "--qi", f"sex={hier}"],
                 ["anonymize", table, "-o", out, "--qi", f"sex={hier}", "-k", "2", "-q"]):
        code, _, err = run_main(monkeypatch, capsys, *args)
        assert code == 2 and err.count("\n") == 1 and "'F'" in err and "line 1" in err and "line 3" in err
    assert not out.exists()


# ------------------------------------------------------------ 2. environment faults
@pytest.mark.parametrize("err_no, words", [(errno.ENOSPC, "disk is full"), (errno.EFBIG, "larger than allowed"),
                                           (errno.EACCES, "permission denied")])
def test_write_faults_name_the_output_and_leave_nothing(monkeypatch, capsys, tmp_path, job, err_no, words):
    table, hier = job
    out = tmp_path / "o.csv"

    def failing(self, *a, **kw):
        raise OSError(err_no, os.strerror(err_no))

    monkeypatch.setattr(pd.DataFrame, "to_csv", failing)
    code, _, err = run_main(monkeypatch, capsys, "anonymize", table, "-o", out, "--qi", f"sex={hier}", "-k", "2",
                            "-q")
    assert code == 2, err
    errors = [ln for ln in err.splitlines() if not ln.startswith("hieranon: warning: ")]  # e.g. the roles warning
    assert len(errors) == 1 and str(out) in err and words in err and "internal" not in err
    assert leftovers(tmp_path, table, hier) == []


def test_a_real_file_size_limit_is_exit_2(tmp_path, job):
    table, hier = job
    big = tmp_path / "big.csv"
    big.write_text("sex,pad\n" + "".join(f"M,{'z' * 40}\n" for _ in range(2000)))
    out = tmp_path / "o.csv"
    code = (f"import resource; resource.setrlimit(resource.RLIMIT_FSIZE, (32 * 1024, 32 * 1024)); "
            f"from hieranon.cli import main; main(['anonymize', {str(big)!r}, '-o', {str(out)!r}, "
            f"'--qi', 'sex={hier}', '-k', '1', '-q'])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert str(out) in proc.stderr and "limit" in proc.stderr
    assert leftovers(tmp_path, table, hier, big) == []


def test_write_text_maps_os_errors(monkeypatch, tmp_path):
    target = tmp_path / "r.html"

    real_open = open

    def full_open(path, mode="r", *a, **kw):
        if "w" in mode and str(path).endswith(".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real_open(path, mode, *a, **kw)

    monkeypatch.setattr("builtins.open", full_open)
    with pytest.raises(OutputError, match=r"r\.html: the disk is full"):
        write_text("x", target)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------ 3. long fields
def test_long_cells_names_and_leaves_are_read(tmp_path):
    long = "x" * 200_000
    f = tmp_path / "t.csv"
    f.write_text(f"q,{'n' * 140_000},c\n{long},1,\nb,2,3\n")  # an empty last cell forces the field-count re-read
    df = read_table(f)
    assert df.iloc[0, 0] == long and len(df.columns[1]) == 140_000
    h = H.from_arx_csv(f"{long};*\nb;*\n", "q")
    assert long in h.leaf_index


def test_a_huge_value_is_quoted_as_an_excerpt(monkeypatch, capsys, tmp_path, job):
    _, hier = job
    table = tmp_path / "t.csv"
    table.write_text("sex\n" + "v" * 500_000 + "\nM\n")
    code, _, err = run_main(monkeypatch, capsys, "anonymize", table, "-o", tmp_path / "o.csv", "--qi", f"sex={hier}",
                            "-k", "1", "-q")
    assert code == 2 and len(err) < 500 and "500000 characters" in err


def test_excerpt():
    assert files.excerpt("abc") == "'abc'"
    assert files.excerpt("a" * 100, 10) == "'aaaaaaaaaa'... (100 characters)"


# ------------------------------------------------------------ 4. what is not a file
def test_hierarchy_paths_that_are_not_regular_files(monkeypatch, capsys, tmp_path, job):
    table, _ = job
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target, words in ((fifo, "not a regular file"), (Path("/dev/zero"), "not a regular file"),
                          (tmp_path, "is a directory")):
        code, _, err = run_main(monkeypatch, capsys, "hierarchy", "check", table, "--qi", f"sex={target}")
        assert code == 2 and words in err and err.count("\n") == 1


def test_a_foreign_text_file_is_quoted_only_in_excerpts(monkeypatch, capsys, tmp_path, job):
    table, _ = job
    foreign = tmp_path / "passwd"
    foreign.write_text("".join(f"user{i}:x:{i}:{i}:A long gecos field number {i}:/home/u{i}:/bin/sh\n"
                               for i in range(50)))
    code, _, err = run_main(monkeypatch, capsys, "hierarchy", "check", table, "--qi", f"sex={foreign}")
    assert code == 2 and err.count("\n") == 1 and len(err) < 400 and "user49" not in err


def test_size_limits(monkeypatch, tmp_path):
    f = tmp_path / "h.csv"
    f.write_text("a;*\n" * 100)
    monkeypatch.setattr(H, "MAX_HIERARCHY_BYTES", 50)
    with pytest.raises(HierarchyError, match="more than"):
        H.from_arx_csv(f, "a")
    from hieranon.job import config
    monkeypatch.setattr(config, "MAX_CONFIG_BYTES", 10)
    cfg = tmp_path / "c.yaml"
    cfg.write_text("k: 2\nquasi_identifiers: {a: h.csv}\n")
    with pytest.raises(config.ConfigError, match="configuration file .* more than"):
        config.load(cfg)


# ------------------------------------------------------------ 5. leftovers of a killed write
def test_stale_temporaries_are_removed_and_reported(tmp_path, caplog):
    out = tmp_path / "out.csv"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    stale = tmp_path / f".out.csv.{dead}.0badc0de.tmp"
    stale.write_text("half")
    alive = tmp_path / f".out.csv.{os.getppid()}.1badc0de.tmp"   # a live process's write in progress
    alive.write_text("busy")
    other = tmp_path / ".other.csv.123.2badc0de.tmp"
    other.write_text("not ours to judge")
    past = time.time() - 3600
    for p in (stale, alive, other):
        os.utime(p, (past, past))
    with caplog.at_level("WARNING", logger="hieranon"):
        write_table(pd.DataFrame({"a": [1]}), out)
    assert out.exists() and not stale.exists() and alive.exists() and other.exists()
    assert any("interrupted" in r.getMessage() and str(stale) in r.getMessage() for r in caplog.records)


def test_a_killed_write_leaves_a_temporary_the_next_run_removes(tmp_path):
    out = tmp_path / "out.csv"
    script = (f"import os, signal, pandas as pd\nfrom hieranon import io\n"
              f"def die(self, *a, **k):\n    open(a[0], 'w').write('half')\n    os.kill(os.getpid(), signal.SIGKILL)\n"
              f"pd.DataFrame.to_csv = die\nio.write_table(pd.DataFrame({{'a': [1]}}), {str(out)!r})\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert proc.returncode == -9
    left = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1 and not out.exists()
    past = time.time() - 60
    os.utime(left[0], (past, past))
    write_table(pd.DataFrame({"a": [1]}), out)
    assert sorted(tmp_path.iterdir()) == [out]


# ------------------------------------------------------------ 6. mingen's time limit, interruptible
def test_mingen_has_a_default_time_limit():
    from hieranon.algorithms.mingen import DEFAULT_TIME_LIMIT, MinGen
    assert MinGen().time_limit == DEFAULT_TIME_LIMIT > 0


def test_mingen_solver_is_interruptible(monkeypatch):
    """Ctrl-C reaches the caller while the solver (C code that never checks
    for signals) runs: it is waited for in short steps."""
    from hieranon.algorithms import mingen

    started, release, solved = threading.Event(), threading.Event(), threading.Event()

    def slow_milp(*a, **kw):  # a solver that does not return by itself
        started.set()
        try:
            release.wait(120)
        finally:  # reached even if the interrupt lands in this thread: the caller was not the one stopped
            solved.set()

    caller = threading.get_ident()  # the thread that runs the solve and must be stopped

    def interrupt():  # only once the solver runs: on a cold machine the work before it may take a while
        if started.wait(600):
            # what Ctrl-C raises, delivered to the caller whatever SIGINT handler the process has
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(caller), ctypes.py_object(KeyboardInterrupt))

    monkeypatch.setattr(mingen, "milp", slow_milp)
    threading.Thread(target=interrupt, daemon=True).start()
    df = pd.DataFrame({"a": ["x", "y", "x", "y"]})
    h = H.suppression("a", ["x", "y"])
    try:
        with pytest.raises(KeyboardInterrupt):
            hieranon.anonymize(df, ["a"], {"a": h}, k=2, method="mingen")
        assert not solved.is_set()  # it stopped during the solve, not after it
    finally:
        release.set()


def test_mingen_timeout_without_a_solution_is_a_clear_error(monkeypatch):
    from types import SimpleNamespace

    from hieranon.algorithms import mingen
    monkeypatch.setattr(mingen, "milp", lambda *a, **k: SimpleNamespace(x=None, status=1, message="time limit"))
    df = pd.DataFrame({"a": ["x", "y", "x", "y"]})
    with pytest.raises(mingen.MinGenTimeout, match="time limit of 5 s.*time_limit"):
        hieranon.anonymize(df, ["a"], {"a": H.suppression("a", ["x", "y"])}, k=2, method="mingen",
                           params={"time_limit": 5})


# ------------------------------------------------------------ 7. numbers at the edges
@pytest.mark.parametrize("widths", ["inf", "5,inf", "nan", "-5", "0"])
def test_interval_widths_must_be_finite_and_positive(monkeypatch, capsys, job, widths):
    table, _ = job
    code, out, err = run_main(monkeypatch, capsys, "hierarchy", "build", "--column", "age", "-i", table,
                              "--intervals", widths)
    assert code == 2 and "--intervals" in err and err.count("\n") == 1 and out == ""


def test_interval_builder_refuses_infinite_values():
    with pytest.raises(HierarchyError, match="finite"):
        H.intervals("a", [1.0, float("inf")], [5])
    with pytest.raises(HierarchyError, match="finite"):
        H.intervals("a", [1.0], [float("inf")])


def test_beta_nan_names_the_option(monkeypatch, capsys, job, tmp_path):
    table, hier = job
    code, _, err = run_main(monkeypatch, capsys, "anonymize", table, "-o", tmp_path / "o.csv", "--qi",
                            f"sex={hier}", "-k", "2", "--beta", "nan")
    assert code == 2 and "--beta" in err


def test_an_enormous_count_is_refused_without_numpy_noise(monkeypatch, capsys, tmp_path, job):
    _, hier = job
    table = tmp_path / "c.csv"
    table.write_text("sex,n\nM,99999999999999999999\nF,1\n")
    code, _, err = run_main(monkeypatch, capsys, "check", table, "--qi", f"sex={hier}", "-k", "3",
                            "--count-column", "n")
    assert code == 2 and err.count("\n") == 1 and "count column 'n'" in err and "Warning" not in err


# ------------------------------------------------------------ 8. API errors
def test_api_duplicate_columns_and_paths_as_hierarchies(tmp_path):
    h = H.suppression("s", ["b"])
    df = pd.DataFrame([["b", 1], ["b", 2]], columns=["s", "s"])
    with pytest.raises(ValueError, match="several columns named 's'"):
        hieranon.anonymize(df, ["s"], {"s": h}, k=2)
    f = tmp_path / "s.csv"
    f.write_text("b;*\nc;*\n")
    ok = pd.DataFrame({"s": ["b", "c", "b", "c"]})
    for given in ({"s": str(f)}, {"s": f}, [str(f)]):
        r = hieranon.anonymize(ok, ["s"], given, k=2)
        assert r.verification.ok
    with pytest.raises(ValueError, match="seed"):
        hieranon.anonymize(ok, ["s"], {"s": h}, k=2, seed=-1)
    with pytest.raises(ValueError, match=r"column .s. is a quasi-identifier \(quasi_identifiers\) and an identifier"):
        hieranon.anonymize(ok, ["s"], {"s": h}, k=2, identifiers=["s"])


# ------------------------------------------------------------ 9. small ones
def test_an_empty_column_name_is_kept(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("sex,,c\nM,1,2\nM,3,4\n")
    assert list(read_table(table).columns) == ["sex", "", "c"]


def test_a_separator_inside_a_label_is_refused(monkeypatch, capsys, tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("q\n2;\n12\n")
    code, _, err = run_main(monkeypatch, capsys, "hierarchy", "build", "--column", "q", "-i", table, "--suppress")
    assert code == 2 and "--sep" in err and "'2;'" in err
    code, _, err = run_main(monkeypatch, capsys, "hierarchy", "build", "--column", "q", "-i", table, "--suppress",
                            "--sep", "2")
    assert code == 2 and "--sep" in err


def test_outputs_never_overwrite_a_file_the_run_reads(monkeypatch, capsys, tmp_path, job):
    table, hier = job
    before = hier.read_text()
    code, _, err = run_main(monkeypatch, capsys, "anonymize", table, "-o", hier, "--qi", f"sex={hier}", "-k", "2",
                            "--force", "-q")
    assert code == 2 and "hierarchy file of 'sex'" in err and hier.read_text() == before
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"quasi_identifiers: {{sex: {hier.name}}}\nk: 2\n")
    code, _, err = run_main(monkeypatch, capsys, "anonymize", table, "-o", tmp_path / "o.csv", "--report", cfg,
                            "-c", cfg, "--force", "-q")
    assert code == 2 and "configuration" in err and "k: 2" in cfg.read_text()
    assert not (tmp_path / "o.csv").exists()


# ------------------------------------------------------------ 10. useless outputs are called out
def test_a_nearly_useless_output_is_warned_about_naming_a_better_method(caplog):
    rng = np.random.default_rng(0)
    n = 60
    # two QIs; a rare 'age' bin forces bug's bottom-up cut to the root while mondrian splits elsewhere
    df = pd.DataFrame({"a": rng.choice(["a1", "a2", "a3", "a4"], n), "b": rng.choice(["b1", "b2", "b3"], n),
                       "cls": rng.choice(["y", "n"], n)})
    hs = {"a": H.suppression("a", ["a1", "a2", "a3", "a4"]), "b": H.suppression("b", ["b1", "b2", "b3"])}
    with caplog.at_level("WARNING", logger="hieranon"):
        r = hieranon.anonymize(df, ["a", "b"], hs, k=n, method="kaca1")
    assert r.metrics.distortion_ratio > 0.9
    assert any("lost nearly everything" in rec.getMessage() for rec in caplog.records)
    caplog.clear()
    with caplog.at_level("WARNING", logger="hieranon"):
        r = hieranon.anonymize(df, ["a", "b"], hs, k=2, method="mondrian")
    assert r.metrics.distortion_ratio < 0.9
    assert not any("lost nearly everything" in rec.getMessage() for rec in caplog.records)


def test_the_warning_names_mondrian_when_it_keeps_much_more(caplog):
    from hieranon.algorithms.base import Solution
    from hieranon.job.pipeline import warn_if_useless
    from hieranon.job.problem import build_problem
    from hieranon.job.spec import AnonymizationSpec

    values = [f"v{i}" for i in range(10)]
    df = pd.DataFrame({"a": values * 5})
    spec = AnonymizationSpec(hierarchies={"a": H.suppression("a", values)}, k=5)
    problem = build_problem(df, spec).problem
    everything = Solution(np.zeros_like(problem.table.codes), np.zeros(len(df), dtype=bool))
    with caplog.at_level("WARNING", logger="hieranon"):
        better = warn_if_useless(problem, everything, "bug")
    assert better is not None and better < 0.1  # every value already occurs 5 times
    assert any("try --method mondrian" in rec.getMessage() for rec in caplog.records)
    caplog.clear()
    kept = Solution(problem.table.codes.copy(), np.zeros(len(df), dtype=bool))
    assert warn_if_useless(problem, kept, "bug") is None and not caplog.records


def test_evaluate_gives_one_answer_for_suppressed_records(monkeypatch, capsys, tmp_path):
    import json
    orig, anon, hier = tmp_path / "o.csv", tmp_path / "a.csv", tmp_path / "h.csv"
    orig.write_text("q\n" + "A\n" * 100 + "".join(f"B{i}\n" for i in range(17)))
    anon.write_text("q\n" + "A\n" * 100 + "*\n" * 17)
    hier.write_text("A;*\n" + "".join(f"B{i};*\n" for i in range(17)))
    answers = {}
    for convention in ("class", "removed"):
        code, out, _ = run_main(monkeypatch, capsys, "evaluate", orig, anon, "--qi", f"q={hier}", "-k", "25",
                                "--json", "--suppressed", convention)
        res = json.loads(out)
        k_verified = res["verification"].split("achieved k = ")[1].split(" for ")[0]
        assert int(k_verified) == res["metrics"]["achieved_k"]  # the verdict and the metrics agree
        answers[convention] = (code, res["verified"], res["metrics"]["achieved_k"])
    assert answers == {"class": (1, False, 17), "removed": (0, True, 100)}
    code, _, err = run_main(monkeypatch, capsys, "evaluate", orig, anon, "--qi", f"q={hier}", "-k", "25",
                            "--suppressed", "gone")
    assert code == 2 and "--suppressed" in err
