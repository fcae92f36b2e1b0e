"""Tables in SQL databases (PostgreSQL, SQLite, DuckDB), through SQLAlchemy.

A source is a :class:`SqlTable`: a database URL (``postgresql://HOST/DB``,
``sqlite:///FILE.db``, ``duckdb:///FILE.duckdb``) and a table name or a
query. :func:`iter_sql` reads it in batches through a server-side cursor
(``stream_results``), so a table larger than memory can be streamed;
:func:`write_sql` writes a new table in one transaction (a failed or killed
run leaves the database as it was).

Credentials never come from the command line: a PostgreSQL password is taken
from the URL's configuration (``HIERANON_DB_PASSWORD``; libpq itself reads
``PGPASSWORD`` and ``~/.pgpass``) or asked for at a terminal; every URL shown
(messages, logs, reports) has its password masked.

SQLAlchemy and the drivers are the optional extras ``db`` (PostgreSQL and
SQLite) and ``duckdb``: this module imports them only when a database is used.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..core.files import shorten
from .errors import InputError, OutputError, OutputExistsError

log = logging.getLogger("hieranon.io.sql")

#: The database kinds (SQLAlchemy backend names) hieranon reads and writes.
BACKENDS = ("postgresql", "sqlite", "duckdb")
_URL_FORM = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
#: Rows sent to the database at a time when writing.
WRITE_CHUNK_ROWS = 50_000
_EXAMPLES = "postgresql://HOST/DB, sqlite:///FILE.db or duckdb:///FILE.duckdb"


def is_database_url(text) -> bool:
    """Is ``text`` a URL (``scheme://...``) rather than a file path?"""
    return isinstance(text, str) and _URL_FORM.match(text) is not None


def mask_url(text: str) -> str:
    """``text`` with the password of a ``scheme://user:password@`` URL shown as ``***``."""
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.\-]*://[^/:@]*):[^@/]*@", r"\1:***@", str(text))


@dataclass(frozen=True)
class SqlTable:
    """A table of a database: ``url`` and either ``table`` (``NAME`` or
    ``SCHEMA.NAME``) or ``query`` (a ``SELECT``). ``str()`` masks the password."""

    url: str
    table: str | None = None
    query: str | None = None

    @property
    def name(self) -> str:
        """The table's name, or ``query``."""
        return self.table if self.table is not None else "query"

    @property
    def shown_url(self) -> str:
        return mask_url(self.url)

    def same_table(self, other: SqlTable) -> bool:
        """Do both name the same table of the same database?"""
        if self.table is None or other.table is None or self.table != other.table:
            return False
        if self.url == other.url:
            return True
        try:
            return _shown(database_url(self.url)) == _shown(database_url(other.url))
        except InputError:
            return False

    def __str__(self) -> str:
        return f"{self.shown_url} table {self.table}" if self.table is not None else f"{self.shown_url} (query)"


def _sqlalchemy():
    try:
        import sqlalchemy
    except ImportError:
        raise InputError("a database table needs SQLAlchemy and a driver: pip install 'hieranon[db]' (PostgreSQL, "
                         "SQLite) or 'hieranon[duckdb]'") from None
    return sqlalchemy


def database_url(text: str):
    """``text`` as a SQLAlchemy URL of a supported database (PostgreSQL
    through psycopg 3), the password from ``HIERANON_DB_PASSWORD`` when the
    URL has none; a malformed or unsupported URL is an :class:`InputError`."""
    sa = _sqlalchemy()
    try:
        url = sa.engine.make_url(text)
    except Exception:  # noqa: BLE001 - SQLAlchemy's ArgumentError or ValueError (a bad port)
        raise InputError(f"{mask_url(text)} is not a database URL; expected {_EXAMPLES}") from None
    backend = url.get_backend_name()
    if backend == "postgres":
        backend, url = "postgresql", url.set(drivername="postgresql" + url.drivername[len("postgres"):])
    if backend not in BACKENDS:
        raise InputError(f"{mask_url(text)}: database {backend!r} is not supported; expected {_EXAMPLES}")
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    if backend == "postgresql" and url.password is None and os.environ.get("HIERANON_DB_PASSWORD"):
        url = url.set(password=os.environ["HIERANON_DB_PASSWORD"])
    if backend in ("sqlite", "duckdb") and (not url.database or url.database == ":memory:"):
        raise InputError(f"{mask_url(text)}: give the database file, e.g. {backend}:///path/to/file")
    return url


def _shown(url) -> str:
    return url.render_as_string(hide_password=True)


def _reason(exc: BaseException, url) -> str:
    """A driver's error as one line, any password in it masked."""
    orig = getattr(exc, "orig", None) or exc
    text = " ".join(str(orig).split()) or type(orig).__name__
    if url.password:
        text = text.replace(str(url.password), "***")
    return shorten(text, 300)


def _sqlite_transactions(sa, engine) -> None:
    """SQLite's Python driver commits before DDL; a transaction of its own
    (BEGIN emitted here) makes CREATE TABLE part of it (SQLAlchemy's recipe
    for transactional DDL with pysqlite)."""

    @sa.event.listens_for(engine, "connect")
    def _no_driver_transactions(dbapi_connection, _record):
        dbapi_connection.isolation_level = None

    @sa.event.listens_for(engine, "begin")
    def _begin(conn):
        conn.exec_driver_sql("BEGIN")


@contextmanager
def connect(url_text: str, *, must_exist: bool = True):
    """A SQLAlchemy connection to the database ``url_text`` (an SQLite or
    DuckDB file must exist when ``must_exist``); a failure to connect is one
    :class:`InputError` naming the URL (password masked) and the cause. At a
    terminal, a PostgreSQL server that wants a password none was given for
    is asked once."""
    sa = _sqlalchemy()
    url = database_url(url_text)
    backend = url.get_backend_name()
    if backend in ("sqlite", "duckdb"):
        path = Path(url.database)
        if must_exist and not path.is_file():
            raise InputError(f"database file {path} does not exist ({_shown(url)})")
        if not path.parent.is_dir():
            raise InputError(f"directory {path.parent} of the database {_shown(url)} does not exist")
    engine = _engine(sa, url)
    try:
        try:
            conn = engine.connect()
        except sa.exc.DBAPIError as exc:
            if not (backend == "postgresql" and url.password is None and _wants_password(exc)
                    and sys.stdin.isatty()):
                raise
            import getpass
            engine.dispose()
            url = url.set(password=getpass.getpass(f"password for {_shown(url)}: "))
            engine = _engine(sa, url)
            conn = engine.connect()
    except sa.exc.DBAPIError as exc:
        engine.dispose()
        raise InputError(f"cannot connect to {_shown(url)}: {_reason(exc, url)}") from None
    try:
        yield conn
    finally:
        conn.close()
        engine.dispose()


def _engine(sa, url):
    try:
        engine = sa.create_engine(url)
    except (ImportError, sa.exc.NoSuchModuleError) as exc:
        extra = "duckdb" if url.get_backend_name() == "duckdb" else "db"
        raise InputError(f"{_shown(url)}: the database driver is not installed ({shorten(exc)}); "
                         f"pip install 'hieranon[{extra}]'") from None
    if url.get_backend_name() == "sqlite":
        _sqlite_transactions(sa, engine)
    return engine


def _wants_password(exc) -> bool:
    text = str(getattr(exc, "orig", exc)).lower()
    return "no password supplied" in text or "password authentication failed" in text


def _split_name(name: str) -> tuple[str | None, str]:
    schema, _, table = name.rpartition(".")
    return schema or None, table


def _qualified(conn, schema: str | None, name: str) -> str:
    quote = conn.dialect.identifier_preparer
    return (quote.quote_schema(schema) + "." if schema else "") + quote.quote(name)


def _has_table(sa, conn, name: str) -> bool:
    schema, table = _split_name(name)
    return sa.inspect(conn).has_table(table, schema=schema)


def _statement(sa, conn, source: SqlTable):
    if source.table is None:
        return sa.text(source.query)
    if not _has_table(sa, conn, source.table):
        raise InputError(f"table {source.table!r} does not exist in {source.shown_url}; check --table (a "
                         "table of another schema: --table SCHEMA.NAME)")
    return sa.text(f"SELECT * FROM {_qualified(conn, *_split_name(source.table))}")


def _frame(rows, columns: list[str]) -> pd.DataFrame:
    """Rows of a result as pandas reads them (``pandas.read_sql``: decimals as floats)."""
    return pd.DataFrame.from_records([tuple(r) for r in rows], columns=columns, coerce_float=True)


def iter_sql(source: SqlTable, batch_rows: int = 250_000) -> Iterator[pd.DataFrame]:
    """The rows of ``source`` in batches of ``batch_rows``, read through a
    server-side cursor (``stream_results``: PostgreSQL sends them as they are
    fetched, never the whole result at once). A missing table, a failing
    query or a repeated column name is an :class:`InputError` naming it; a
    result without rows gives one empty frame with its columns."""
    sa = _sqlalchemy()
    with connect(source.url) as conn:
        if conn.engine.url.get_backend_name() == "postgresql":
            # every pass over the table returns its rows in the same order (block by block from the
            # first: no scan joined midway, no parallel workers), so that passes line up row by row
            conn.exec_driver_sql("SET synchronize_seqscans = off")
            conn.exec_driver_sql("SET max_parallel_workers_per_gather = 0")
        stmt = _statement(sa, conn, source)
        what = f"--query on {source.shown_url}" if source.query is not None else str(source)
        try:
            result = conn.execution_options(stream_results=True, yield_per=batch_rows).execute(stmt)
            columns = list(result.keys())
            repeated = sorted({c for c in columns if columns.count(c) > 1})
            if repeated:
                raise InputError(f"{what}: the columns {repeated[:5]} appear more than once; name each column "
                                 "once (SELECT ... AS NAME)")
            empty = True
            for rows in result.partitions(batch_rows):
                empty = False
                yield _frame(rows, columns)
            if empty:
                yield pd.DataFrame(columns=columns)
        except sa.exc.ResourceClosedError:
            raise InputError(f"{what} returns no rows (not a SELECT?); give a query that selects the table") \
                from None
        except (sa.exc.DBAPIError, sa.exc.StatementError) as exc:
            raise InputError(f"{what} failed: {_reason(exc, conn.engine.url)}") from None


def read_sql(source: SqlTable, batch_rows: int = 250_000) -> pd.DataFrame:
    """The whole of ``source`` as one DataFrame (read in batches, :func:`iter_sql`)."""
    parts = list(iter_sql(source, batch_rows))
    return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)


def column_types(source: SqlTable) -> dict:
    """Column name -> SQLAlchemy type of ``source``'s table (empty for a
    query: its columns are typed from their values when written)."""
    if source.table is None:
        return {}
    sa = _sqlalchemy()
    with connect(source.url) as conn:
        if not _has_table(sa, conn, source.table):
            return {}
        schema, table = _split_name(source.table)
        try:
            return {c["name"]: c["type"] for c in sa.inspect(conn).get_columns(table, schema=schema)}
        except sa.exc.SQLAlchemyError as exc:  # a dialect whose reflection fails (duckdb-engine on some versions)
            log.warning("the column types of %s cannot be read (%s); the output's columns are typed from their "
                        "values", source, _reason(exc, conn.engine.url))
            return {}


def check_output_table(url_text: str, table: str, overwrite: bool) -> None:
    """Refuse, before any work, an output table that exists (unless
    ``overwrite``) or a database that cannot be reached."""
    sa = _sqlalchemy()
    new_file = _new_file(url_text)
    if new_file is not None:  # a database file not there yet: nothing to refuse, and no empty file made
        if not new_file.parent.is_dir():
            raise InputError(f"directory {new_file.parent} of the database {mask_url(url_text)} does not exist")
        return
    with connect(url_text, must_exist=False) as conn:
        if _has_table(sa, conn, table) and not overwrite:
            raise OutputExistsError(f"table {table!r} of {_shown(conn.engine.url)} already exists; pass --force "
                                    "to replace it")


def _portable(sa, conn, sql_type):
    """``sql_type`` if the target database can create it, else its generic
    form (a PostgreSQL type written to SQLite), else None (typed from the values)."""
    for t in (sql_type, getattr(sql_type, "as_generic", lambda: None)()):
        if t is None:
            continue
        try:
            t.compile(dialect=conn.dialect)
            return t
        except Exception:  # noqa: BLE001 - UnsupportedCompilationError, NotImplementedError
            continue
    return None


def _fit_types(df: pd.DataFrame, types: dict) -> pd.DataFrame:
    """``df`` ready for ``types``: integer columns that came back as floats
    (they hold NULLs) as nullable integers again; dates that came back as
    text (SQLite keeps them as text) as dates. A column that does not fit
    its type loses it (``types`` changed: typed from its values)."""
    import sqlalchemy as sa

    out = df.copy()
    for c, t in list(types.items()):
        col = out[c]
        if isinstance(t, sa.Integer) and pd.api.types.is_float_dtype(col.dtype):
            present = col.dropna()
            if (present == present.round()).all():
                out[c] = col.astype("Int64")
        elif isinstance(t, (sa.Date, sa.DateTime)) and not pd.api.types.is_datetime64_any_dtype(col.dtype):
            present = col.dropna()
            if len(present) and isinstance(present.iloc[0], str):
                try:
                    when = pd.to_datetime(col, format="ISO8601")
                except (ValueError, TypeError):
                    del types[c]
                    continue
                out[c] = pd.Series(when.dt.date if isinstance(t, sa.Date) else when, dtype=object).where(
                    col.notna(), None)
    return out


def _copy_rows(table, conn, keys, data_iter) -> None:
    """pandas ``to_sql`` method for PostgreSQL: the rows through COPY (one
    stream instead of one INSERT per row), in the same transaction."""
    cursor = conn.connection.cursor()
    quote = conn.dialect.identifier_preparer
    columns = ", ".join(quote.quote(k) for k in keys)
    with cursor.copy(f"COPY {_qualified(conn, table.schema, table.name)} ({columns}) FROM STDIN") as copy:
        for row in data_iter:
            copy.write_row(row)


def write_sql(df: pd.DataFrame | Iterable[pd.DataFrame], url_text: str, table: str, *, overwrite: bool = False,
              types: Mapping | None = None, keep_types: Sequence[str] = ()) -> str:
    """Write ``df`` (a DataFrame, or batches of one: a table streamed) as a
    new table ``table`` of the database ``url_text`` in ONE transaction: a
    failure (or a killed process) leaves the database as it was. An existing
    table is refused (:class:`OutputExistsError`) unless ``overwrite``; then
    the rows go to a new table that replaces it (drop and rename) inside the
    same transaction. The columns named in ``keep_types`` take their SQL type
    from ``types`` (the source table's); the others are typed from their
    values (text, numbers). Returns the table and the masked URL, as shown."""
    sa = _sqlalchemy()
    frames = [df] if isinstance(df, pd.DataFrame) else df
    schema, name = _split_name(table)
    new_file = _new_file(url_text)
    try:
        return _write(sa, frames, url_text, table, schema, name, overwrite, types, keep_types)
    except BaseException:
        if new_file is not None:  # the database file this write created: removed with the table
            for leftover in (new_file, Path(f"{new_file}-journal"), Path(f"{new_file}.wal")):
                leftover.unlink(missing_ok=True)
        raise


def _new_file(url_text: str) -> Path | None:
    """The file of an SQLite or DuckDB URL when it does not exist yet, else None."""
    url = database_url(url_text)
    if url.get_backend_name() in ("sqlite", "duckdb") and not Path(url.database).exists():
        return Path(url.database)
    return None


def _write(sa, frames, url_text, table, schema, name, overwrite, types, keep_types) -> str:
    with connect(url_text, must_exist=False) as conn:
        url = conn.engine.url
        shown = f"table {table!r} of {_shown(url)}"
        method = _copy_rows if url.get_backend_name() == "postgresql" else None
        try:
            with conn.begin():
                exists = _has_table(sa, conn, table)
                if exists and not overwrite:
                    raise OutputExistsError(f"{shown} already exists; pass --force to replace it")
                target = f"{name[:40]}_hieranon_{secrets.token_hex(4)}" if exists else name
                dtype, rows = None, 0
                for frame in frames:
                    if dtype is None:
                        dtype = {c: t for c, t in ((c, _portable(sa, conn, types[c])) for c in keep_types
                                                   if types and c in types and c in frame.columns) if t is not None}
                    log.info("writing %d rows into %s", len(frame), shown)
                    _fit_types(frame, dtype).to_sql(target, conn, schema=schema, index=False, dtype=dtype,
                                                    if_exists="append" if rows else "fail",
                                                    chunksize=WRITE_CHUNK_ROWS, method=method)
                    rows += len(frame)
                if exists:
                    conn.exec_driver_sql(f"DROP TABLE {_qualified(conn, schema, name)}")
                    conn.exec_driver_sql(f"ALTER TABLE {_qualified(conn, schema, target)} RENAME TO "
                                         f"{conn.dialect.identifier_preparer.quote(name)}")
        except (sa.exc.DBAPIError, sa.exc.StatementError) as exc:
            raise OutputError(f"cannot write {shown}: {_reason(exc, url)}; nothing was written") from None
        except ValueError as exc:  # pandas: 'Table ... already exists' (it appeared meanwhile)
            if isinstance(exc, InputError):
                raise
            raise OutputExistsError(f"cannot write {shown}: {shorten(exc)}; nothing was written") from None
    return shown


def drop_table(url_text: str, table: str) -> None:
    """Remove ``table`` (a run that wrote it and then failed takes it back)."""
    sa = _sqlalchemy()
    with connect(url_text, must_exist=False) as conn, conn.begin():
        if _has_table(sa, conn, table):
            conn.exec_driver_sql(f"DROP TABLE {_qualified(conn, *_split_name(table))}")
