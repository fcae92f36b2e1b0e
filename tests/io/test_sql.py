"""Tables in SQL databases (hieranon.io.sql): reading in batches, writing in one
transaction, the refusals, and the password never shown. SQLite and DuckDB
always; PostgreSQL on a real server (the ``postgres_url`` fixture, pgserver)."""

from __future__ import annotations

import secrets

import numpy as np
import pandas as pd
import pytest

sa = pytest.importorskip("sqlalchemy")

from hieranon.io import InputError, OutputError, OutputExistsError  # noqa: E402
from hieranon.io.sql import (  # noqa: E402
    SqlTable,
    check_output_table,
    column_types,
    database_url,
    is_database_url,
    iter_sql,
    mask_url,
    read_sql,
    write_sql,
)
from sql_support import table_names  # noqa: E402

FRAME = pd.DataFrame({"id": ["a", "b", "c", "d", "e"], "age": [31, 45, 27, 60, 38],
                      "income": [1200.5, 3400.0, np.nan, 2100.25, 990.0], "city": ["x", "y", "x", None, "y"]})


@pytest.fixture(params=["sqlite", "duckdb", "postgresql"])
def db_url(request, tmp_path):
    """A database of each kind: an SQLite file, a DuckDB file, the session's PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'data.db'}"
    if request.param == "duckdb":
        pytest.importorskip("duckdb_engine")
        return f"duckdb:///{tmp_path / 'data.duckdb'}"
    return request.getfixturevalue("postgres_url")


def _name() -> str:
    return f"t_{secrets.token_hex(4)}"


def test_write_then_read_round_trip_in_batches(db_url):
    name = _name()
    write_sql(FRAME, db_url, name)
    back = read_sql(SqlTable(db_url, name))
    pd.testing.assert_frame_equal(back, FRAME, check_dtype=False)
    assert back["age"].dtype.kind == "i" and back["income"].dtype.kind == "f"
    # a server-side cursor in batches: every row once, in batches of the size asked for
    parts = list(iter_sql(SqlTable(db_url, query=f"SELECT id FROM {name} ORDER BY id"), batch_rows=2))
    assert [len(p) for p in parts] == [2, 2, 1]
    assert pd.concat(parts)["id"].tolist() == ["a", "b", "c", "d", "e"]


def test_existing_table_refused_then_replaced_atomically(db_url):
    name = _name()
    write_sql(FRAME, db_url, name)
    with pytest.raises(OutputExistsError, match=f"'{name}' .*already exists; pass --force"):
        write_sql(FRAME.head(2), db_url, name)
    with pytest.raises(OutputExistsError, match="already exists"):
        check_output_table(db_url, name, overwrite=False)
    assert len(read_sql(SqlTable(db_url, name))) == 5
    write_sql(FRAME.head(2), db_url, name, overwrite=True)
    assert read_sql(SqlTable(db_url, name))["id"].tolist() == ["a", "b"]
    assert {t for t in table_names(db_url) if t.startswith(name)} == {name}  # no temporary table left


def test_untouched_columns_keep_their_sql_types(tmp_path):
    url = f"sqlite:///{tmp_path / 'typed.db'}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE src (age INTEGER, income NUMERIC(10, 2), city VARCHAR(20), born DATE)")
        conn.exec_driver_sql("INSERT INTO src VALUES (31, 1200.50, 'x', '1990-01-02'), (45, NULL, NULL, NULL)")
    engine.dispose()
    source = SqlTable(url, "src")
    data = read_sql(source)
    data["age"] = ["30-39", "40-49"]  # generalised: text
    data["n"] = [1, None]  # an integer column with a NULL (floats in pandas)
    write_sql(data, url, "out", types={**column_types(source), "n": sa.Integer()},
              keep_types=["income", "city", "born", "n"])
    types = {c: str(t) for c, t in column_types(SqlTable(url, "out")).items()}
    assert types == {"age": "TEXT", "income": "NUMERIC(10, 2)", "city": "VARCHAR(20)", "born": "DATE",
                     "n": "INTEGER"}


def _failing_write(monkeypatch, url: str, after_rows: int) -> None:
    """Make the row writer fail once ``after_rows`` rows have gone to the database."""
    import pandas.io.sql as pdsql

    import hieranon.io.sql as sql

    done = []

    def fail_after(write):
        def wrapped(*args):
            done.append(1)
            if len(done) * 2 > after_rows:
                raise RuntimeError("injected failure mid-write")
            return write(*args)
        return wrapped

    if url.startswith("postgresql"):
        monkeypatch.setattr(sql, "_copy_rows", fail_after(sql._copy_rows))
    else:
        monkeypatch.setattr(pdsql.SQLTable, "_execute_insert", fail_after(pdsql.SQLTable._execute_insert))
    monkeypatch.setattr(sql, "WRITE_CHUNK_ROWS", 2)


def test_a_failure_mid_write_leaves_the_database_as_it_was(db_url, monkeypatch):
    name, kept = _name(), _name()
    write_sql(FRAME, db_url, kept)
    _failing_write(monkeypatch, db_url, after_rows=4)
    with pytest.raises(RuntimeError, match="injected"):
        write_sql(FRAME, db_url, name)
    with pytest.raises(RuntimeError, match="injected"):
        write_sql(FRAME.head(1).assign(id="new"), db_url, kept, overwrite=True)
    monkeypatch.undo()
    left = table_names(db_url)
    assert name not in left and not any(t.startswith(f"{kept}_") for t in left)
    assert read_sql(SqlTable(db_url, kept))["id"].tolist() == FRAME["id"].tolist()  # the old table intact


def test_bad_inputs_are_one_line_naming_them(tmp_path):
    url = f"sqlite:///{tmp_path / 'data.db'}"
    write_sql(FRAME, url, "people")
    cases = [
        (SqlTable(url, "nobody"), "table 'nobody' does not exist in sqlite:///"),
        (SqlTable(url, query="SELECT * FROM nobody"), "--query on sqlite:///.* failed: no such table: nobody"),
        (SqlTable(url, query="SELECT id, id FROM people"), r"columns \['id'\] appear more than once"),
        (SqlTable(f"sqlite:///{tmp_path / 'none.db'}", "people"), "database file .*none.db does not exist"),
        (SqlTable("mysql://u:s3cret@host/db", "t"), r"mysql://u:\*\*\*@host/db: database 'mysql' is not supported"),
        (SqlTable("postgresql://u:s3cret@host:notaport/db", "t"), r"postgresql://u:\*\*\*@host:notaport/db is not"),
    ]
    for source, message in cases:
        with pytest.raises(InputError, match=message) as exc:
            read_sql(source)
        assert "\n" not in str(exc.value) and "s3cret" not in str(exc.value)
    assert not (tmp_path / "none.db").exists()  # reading never creates a database file


def test_unreachable_server_named_with_its_password_masked(monkeypatch):
    monkeypatch.setenv("HIERANON_DB_PASSWORD", "env-s3cret")
    for url in ("postgresql://ann:s3cret@127.0.0.1:1/db", "postgresql://ann@127.0.0.1:1/db"):
        with pytest.raises(InputError, match=r"cannot connect to postgresql\+psycopg://ann:\*\*\*@127.0.0.1:1/db: "
                           ".*(refused|failed)") as exc:
            read_sql(SqlTable(url, "t"))
        assert "s3cret" not in str(exc.value) and "\n" not in str(exc.value)
    # the environment's password is the one used when the URL has none
    assert database_url("postgresql://ann@host/db").password == "env-s3cret"
    assert database_url("postgresql://ann:given@host/db").password == "given"


def test_missing_table_and_query_error_on_postgresql_mask_the_password(postgres_url):
    url = postgres_url.replace("postgres:@", "postgres:pw-s3cret@")
    for source, message in ((SqlTable(url, "nobody"), "table 'nobody' does not exist in postgresql://postgres:\\*\\*\\*@"),
                            (SqlTable(url, query="SELEC 1"), "--query on postgresql://postgres:\\*\\*\\*@.* failed: "
                             "syntax error")):
        with pytest.raises(InputError, match=message) as exc:
            read_sql(source)
        assert "pw-s3cret" not in str(exc.value)


def test_url_forms():
    assert is_database_url("postgresql://h/db") and is_database_url("sqlite:///x.db")
    assert not is_database_url("data/patients.csv") and not is_database_url("C:\\data\\x.csv")
    assert mask_url("postgresql://ann:pw@h/db") == "postgresql://ann:***@h/db"
    assert database_url("postgres://h/db").drivername == "postgresql+psycopg"
    with pytest.raises(InputError, match="give the database file"):
        database_url("sqlite://")


def test_write_into_a_missing_directory_refused(tmp_path):
    with pytest.raises(InputError, match="directory .*nowhere.* does not exist"):
        write_sql(FRAME, f"sqlite:///{tmp_path / 'nowhere' / 'x.db'}", "t")


def test_output_errors_are_output_errors(tmp_path):
    url = f"sqlite:///{tmp_path / 'data.db'}"
    with pytest.raises(OutputError, match="cannot write table 'bad.name.x'"):
        write_sql(FRAME, url, "bad.name.x")


def test_a_failed_write_to_a_new_database_file_leaves_no_file(tmp_path, monkeypatch):
    import hieranon.io.sql as sql

    target = tmp_path / "new.db"
    check_output_table(f"sqlite:///{target}", "t", overwrite=False)
    assert not target.exists()  # checking makes no empty database
    _failing_write(monkeypatch, "sqlite", after_rows=2)
    with pytest.raises(RuntimeError, match="injected"):
        sql.write_sql(FRAME, f"sqlite:///{target}", "t")
    assert not target.exists()
