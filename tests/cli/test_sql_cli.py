"""Database tables on the command line: ``hieranon anonymize URL --table T -o URL
--output-table T2`` (and check / evaluate / report), on SQLite and on a real
PostgreSQL server (the ``postgres_url`` fixture)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from main_runner import run_main

sa = pytest.importorskip("sqlalchemy")

from hieranon.io.sql import SqlTable, column_types, database_url, read_sql  # noqa: E402
from sql_support import table_names  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "src" / "hieranon" / "data"
CONFIG = DATA / "patients.yaml"
#: The example's table as a custodian's database holds it: typed columns.
SCHEMA = ("id VARCHAR(10), gender VARCHAR(10), age INTEGER, postcode INTEGER, date_of_birth VARCHAR(10), "
          "diagnosis VARCHAR(40), readmitted VARCHAR(3)")


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path) -> str:
    """A database holding the example's patients in a fresh table; returns (url, table)."""
    url = f"sqlite:///{tmp_path / 'clinic.db'}" if request.param == "sqlite" \
        else request.getfixturevalue("postgres_url")
    name = f"patients_{secrets.token_hex(3)}"
    engine = sa.create_engine(database_url(url))
    with engine.begin() as conn:
        conn.exec_driver_sql(f"CREATE TABLE {name} ({SCHEMA})")
        pd.read_csv(DATA / "patients.csv").to_sql(name, conn, if_exists="append", index=False)
    engine.dispose()
    return url, name


def test_round_trip_equals_the_csv_release(db, tmp_path, monkeypatch, capsys):
    url, name = db
    csv_out = tmp_path / "release.csv"
    code, _, err = run_main(monkeypatch, capsys, "anonymize", DATA / "patients.csv", "--config", CONFIG, "-o",
                            csv_out, "--seed", "7", "-q")
    assert code == 0, err
    out_name = f"{name}_release"
    code, _, err = run_main(monkeypatch, capsys, "anonymize", url, "--table", name, "--config", CONFIG, "-o", url,
                            "--output-table", out_name, "--seed", "7", "-q")
    assert code == 0, err
    released = read_sql(SqlTable(url, out_name))
    expected = pd.read_csv(csv_out, dtype=str, keep_default_na=False)
    assert list(released.columns) == list(expected.columns)
    pd.testing.assert_frame_equal(released.astype(str), expected, check_dtype=False)
    types = {c: str(t) for c, t in column_types(SqlTable(url, out_name)).items()}
    # the generalised QIs are text; the columns left as they were keep the source's SQL types
    assert types["diagnosis"] == "VARCHAR(40)" and types["readmitted"] == "VARCHAR(3)"
    assert all(types[q] == "TEXT" for q in ("gender", "age", "postcode", "date_of_birth"))
    # a query is a table too; and the release can be checked where it lives
    code, _, err = run_main(monkeypatch, capsys, "anonymize", url, "--query", f"SELECT * FROM {name}", "--config",
                            CONFIG, "-o", tmp_path / "from-query.csv", "--seed", "7", "-q")
    assert code == 0, err
    assert (tmp_path / "from-query.csv").read_text() == csv_out.read_text()
    code, out, err = run_main(monkeypatch, capsys, "evaluate", url, "--table", name, url, "--anonymised-table",
                              out_name, "--config", CONFIG, "--json")
    assert code == 0, err
    assert json.loads(out)["verified"] is True


def test_bounds_output_writes_numbers(db, monkeypatch, capsys):
    url, name = db
    code, _, err = run_main(monkeypatch, capsys, "anonymize", url, "--table", name, "--config", CONFIG, "-o", url,
                            "--output-table", f"{name}_b", "--numeric-output", "bounds", "-q")
    assert code == 0, err
    out = read_sql(SqlTable(url, f"{name}_b"))
    assert {"age_lower", "age_upper"} <= set(out.columns) and out["age_lower"].dtype.kind == "f"
    assert (out["age_lower"] <= out["age_upper"]).all()


def test_existing_table_needs_force(db, monkeypatch, capsys):
    url, name = db
    args = ("anonymize", url, "--table", name, "--config", CONFIG, "-o", url, "--output-table", f"{name}_out", "-q")
    assert run_main(monkeypatch, capsys, *args)[0] == 0
    before = read_sql(SqlTable(url, f"{name}_out"))
    code, out, err = run_main(monkeypatch, capsys, *args, "-k", "5")
    assert code == 2 and err.count("\n") == 1
    assert f"table '{name}_out'" in err and "already exists; pass --force" in err
    pd.testing.assert_frame_equal(read_sql(SqlTable(url, f"{name}_out")), before)
    code, _, err = run_main(monkeypatch, capsys, *args, "-k", "5", "--force")
    assert code == 0, err
    after = read_sql(SqlTable(url, f"{name}_out"))
    assert len(after) == len(before) and not after.equals(before)  # k=5 generalises further
    assert {t for t in table_names(url) if t.startswith(f"{name}_out")} == {f"{name}_out"}


def test_a_refused_or_failed_run_leaves_no_table(db, tmp_path, monkeypatch, capsys):
    url, name = db
    target = f"{name}_out"
    # refused after the work (strict: the rows keep the input's order): nothing written
    code, _, err = run_main(monkeypatch, capsys, "anonymize", url, "--table", name, "--config", CONFIG, "-o", url,
                            "--output-table", target, "--strict", "--no-shuffle")
    assert code == 2 and "strict" in err
    assert target not in table_names(url)
    # an exception in the middle of writing the rows: the transaction is rolled back, the report taken back
    import pandas.io.sql as pdsql

    import hieranon.io.sql as sql

    def boom(*args):
        raise RuntimeError("injected failure mid-write")

    monkeypatch.setattr(sql, "_copy_rows", boom)
    monkeypatch.setattr(pdsql.SQLTable, "_execute_insert", boom)
    code, _, err = run_main(monkeypatch, capsys, "anonymize", url, "--table", name, "--config", CONFIG, "-o", url,
                            "--output-table", target, "--report", tmp_path / "r.html")
    assert code == 3 and "injected failure" in err
    assert target not in table_names(url) and not (tmp_path / "r.html").exists()


#: Runs the CLI with the row writer stopping after its first rows: it says so in a file and waits to be killed.
_STALL = """
import sys, time, pathlib
import pandas.io.sql as pdsql
import hieranon.io.sql as sql
from hieranon import cli
marker = pathlib.Path(sys.argv[1])

def stall(write):
    def wrapped(*args):
        write(*args)
        marker.write_text("writing")
        while True:
            time.sleep(1)
    return wrapped

sql._copy_rows = stall(sql._copy_rows)
pdsql.SQLTable._execute_insert = stall(pdsql.SQLTable._execute_insert)
sql.WRITE_CHUNK_ROWS = 10
sys.argv = ["hieranon", *sys.argv[2:]]
cli.main()
"""


def test_sigkill_mid_write_leaves_no_table_and_no_rows(db, tmp_path):
    url, name = db
    target = f"{name}_out"
    marker = tmp_path / "writing"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                         os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", _STALL, str(marker), "anonymize", url, "--table", name,
                             "--config", str(CONFIG), "-o", url, "--output-table", target, "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        while not marker.exists():  # rows have gone to the database, the transaction is open
            if proc.poll() is not None:
                pytest.fail(f"the run ended before writing: {proc.stderr.read()}")
            time.sleep(0.05)
        assert _open_write_transaction(url)
    finally:  # killed however the test ends: a stalled writer never outlives it
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert target not in table_names(url)
    assert not any(t.startswith(f"{target}_") for t in table_names(url))


def _open_write_transaction(url: str) -> bool:
    """Does another connection hold a write transaction open (SQLite: its
    rollback journal; PostgreSQL: a backend idle inside a transaction)?"""
    if url.startswith("sqlite"):
        return Path(database_url(url).database + "-journal").exists()
    engine = sa.create_engine(database_url(url))
    try:
        with engine.connect() as conn:
            return bool(conn.exec_driver_sql("SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in "
                                             "transaction' AND pid <> pg_backend_pid()").scalar())
    finally:
        engine.dispose()


def _one_error_line(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("hieranon: error: "), err
    assert "Traceback" not in err and "s3cret" not in err
    for needle in needles:
        assert needle in err, err


def test_bad_inputs_one_line_password_masked(db, tmp_path, monkeypatch, capsys):
    url, name = db
    base = ("--config", CONFIG, "-q")
    with_pw = url.replace("postgres:@", "postgres:s3cret@") if url.startswith("postgresql") else url
    cases = [
        (("anonymize", url, *base, "-o", tmp_path / "o.csv"), ["is a database: name its table with --table or "
                                                               "--query"]),
        (("anonymize", url, "--table", name, "--query", "SELECT 1", *base, "-o", tmp_path / "o.csv"),
         ["(one of them)"]),
        (("anonymize", DATA / "patients.csv", "--table", name, *base, "-o", tmp_path / "o.csv"),
         ["--table reads a database table", "is a file"]),
        (("anonymize", DATA / "patients.csv", *base, "-o", url), ["--output-table"]),
        (("anonymize", DATA / "patients.csv", *base, "-o", tmp_path / "o.csv", "--output-table", "t"),
         ["--output-table names a table of a database"]),
        (("anonymize", with_pw, "--table", "nobody", *base, "-o", tmp_path / "o.csv"),
         ["table 'nobody' does not exist"]),
        (("anonymize", with_pw, "--query", "SELECT * FROM nobody", *base, "-o", tmp_path / "o.csv"),
         ["--query on", "failed"]),
        (("anonymize", "postgresql://ann:s3cret@127.0.0.1:1/clinic", "--table", "t", *base, "-o", tmp_path / "o.csv"),
         ["cannot connect to postgresql+psycopg://ann:***@127.0.0.1:1/clinic"]),
        (("anonymize", DATA / "patients.csv", *base, "-o", "postgresql://ann:s3cret@127.0.0.1:1/clinic",
          "--output-table", "t"), ["cannot connect to postgresql+psycopg://ann:***@127.0.0.1:1/clinic"]),
        (("anonymize", "mysql://ann:s3cret@host/clinic", "--table", "t", *base, "-o", tmp_path / "o.csv"),
         ["mysql://ann:***@host/clinic: database 'mysql' is not supported"]),
        (("check", with_pw, "--table", "nobody", *base), ["table 'nobody' does not exist"]),
        (("anonymize", url, "--table", name, *base, "-o", with_pw, "--output-table", name, "--force"),
         [f"--output-table {name} is the input table"]),
    ]
    for args, needles in cases:
        code, _, err = run_main(monkeypatch, capsys, *args)
        _one_error_line(code, err, *needles)
    assert not (tmp_path / "o.csv").exists()
    assert not any(t.startswith(f"{name}_") for t in table_names(url))


def test_password_never_in_the_output(postgres_url, tmp_path, monkeypatch, capsys):
    url = postgres_url.replace("postgres:@", "postgres:s3cret@")  # the test server trusts its socket
    name = f"p_{secrets.token_hex(3)}"
    engine = sa.create_engine(database_url(postgres_url))
    with engine.begin() as conn:
        pd.read_csv(DATA / "patients.csv").to_sql(name, conn, index=False)
    engine.dispose()
    code, out, err = run_main(monkeypatch, capsys, "anonymize", url, "--table", name, "--config", CONFIG, "-o",
                              url, "--output-table", f"{name}_out", "--json", "--report", tmp_path / "r.html")
    assert code == 0, err
    assert "s3cret" not in out + err + (tmp_path / "r.html").read_text()
