"""Reading and writing tables: CSV (separator detected), Parquet, Excel.

A CSV output of a CSV input keeps the input's separator and text encoding
(:func:`write_table` with ``source=``).

Writes are atomic: the table goes to a temporary file in the target
directory and is renamed into place only when complete, so a failed run
never leaves a half-written output.
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from pathlib import Path

import pandas as pd

from .files import check_regular_file, excerpt, os_error_message, remove_stale_temporaries, shorten, temporary_path

FORMATS = {".csv": "csv", ".txt": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet",
           ".xlsx": "excel", ".xls": "excel"}


class InputError(ValueError):
    """An input file is missing or cannot be read; the message names it."""


class OutputError(InputError):
    """An output cannot be written (disk full, file-size limit, permission
    denied...): the user's to fix; the message names the output and the cause."""


def table_format(path: Path, override: str | None = None) -> str:
    """``csv``, ``parquet`` or ``excel`` from ``override`` or the file's
    extension; a name without an extension is read as CSV."""
    if override:
        if override not in ("csv", "parquet", "excel"):
            raise InputError(f"format must be csv, parquet or excel, got {override!r}")
        return override
    suffix = Path(path).suffix.lower()
    if suffix and suffix not in FORMATS:
        raise InputError(f"{path}: unknown table format {suffix!r}; use one of "
                         f"{', '.join(sorted(FORMATS))} (or give the format explicitly)")
    return FORMATS.get(suffix, "csv")


def _header(path: Path, kind: str, sep: str | None, encoding: str, sheet) -> list[str]:
    """The header row as written in the file (pandas renames a repeated
    name ``x`` to ``x.1``, which would hide it)."""
    if kind == "excel":
        return [str(c) for c in pd.read_excel(path, sheet_name=sheet, header=None, nrows=1, dtype=str).iloc[0]]
    with open(path, encoding=encoding, newline="") as fh:
        return next(csv.reader(fh, delimiter=sep), [])


def _check_header(path: Path, names: list[str]) -> None:
    repeated = sorted(n for n, times in Counter(names).items() if times > 1)
    if not names or repeated:
        detail = f": {repeated[:5]} appear more than once" if repeated else ""
        raise InputError(f"{path}: the header row must name each column once{detail}")


def _check_field_counts(path: Path, sep: str, encoding: str, n_columns: int) -> None:
    """A data row with fewer or more fields than the header would shift its
    values into the wrong columns."""
    with open(path, encoding=encoding, newline="") as fh:
        for line_no, row in enumerate(csv.reader(fh, delimiter=sep), start=1):
            if row and len(row) != n_columns and any(c.strip() for c in row):
                raise InputError(f"{path}, line {line_no}: {len(row)} fields where the header has {n_columns}; "
                                 "check the separator and quoting of that line")


def sniff_separator(path: Path, encoding: str) -> str:
    with open(path, encoding=encoding, newline="") as fh:
        sample = fh.read(64 * 1024)
    if not sample.strip():
        raise InputError(f"{path} is empty")
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        first = sample.splitlines()[0]
        return max(",;\t|", key=first.count)


def read_table(path, *, fmt: str | None = None, sep: str | None = None, encoding: str = "utf-8",
               sheet: str | int = 0) -> pd.DataFrame:
    """Read a table; every column is read as text for CSV so values print
    exactly as in the file (hierarchies are matched on that text)."""
    path = Path(path)
    check_regular_file(path, "input file", InputError)
    kind = table_format(path, fmt)
    try:
        if kind == "parquet":
            return pd.read_parquet(path)
        if kind == "excel":
            df = pd.read_excel(path, sheet_name=sheet, dtype=str, keep_default_na=False)
            _check_header(path, _header(path, kind, None, encoding, sheet))
            return df
        sep = sep or sniff_separator(path, encoding)
        # no skipinitialspace: non-QI cells must come out exactly as they went in
        # (QI values are matched to the hierarchies without surrounding spaces)
        df = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_values=[""], encoding=encoding)
        header = _header(path, kind, sep, encoding, sheet)
        _check_header(path, header)
        if len(header) == df.shape[1] and "" in header:  # pandas names an empty header cell 'Unnamed: i'
            df.columns = ["" if h == "" else c for c, h in zip(df.columns, header)]
        if df.shape[1] and df.iloc[:, -1].isna().any():  # only a short row (or an empty last cell) leaves NaN there
            _check_field_counts(path, sep, encoding, len(header))
    except InputError:
        raise
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not valid {encoding} text ({exc.reason} at byte {exc.start}); give its "
                         "encoding with --encoding, e.g. --encoding latin-1 or --encoding cp1252") from None
    except LookupError:  # an unknown codec name
        raise InputError(f"--encoding {encoding!r} is not a known text encoding (e.g. utf-8, latin-1, cp1252)") \
            from None
    except OSError as exc:
        raise InputError(os_error_message(exc, path, "cannot read")) from None
    except Exception as exc:  # parser errors of pandas/pyarrow/openpyxl
        raise InputError(f"{path} cannot be read as {kind}: {shorten(exc) or type(exc).__name__}") from None
    return df


def _publish(tmp: Path, path: Path) -> None:
    """Rename the complete temporary file into place."""
    os.replace(tmp, path)


def _open_temporary(path: Path) -> Path:
    """Create the temporary file of a write to ``path`` (mode as a plain
    ``open(path, "w")`` would give, after the umask), first removing those an
    interrupted earlier write left behind."""
    if not path.parent.exists():
        raise OutputError(f"output directory {path.parent} does not exist")
    remove_stale_temporaries(path)
    tmp = temporary_path(path)
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as exc:
        raise OutputError(os_error_message(exc, path, "cannot write")) from None
    return tmp


def _write_atomically(path: Path, write) -> Path:
    """Run ``write(tmp)`` on a fresh temporary file and rename it to ``path``;
    on any failure the temporary file is removed and an operating-system
    error becomes an :class:`OutputError` naming ``path`` (not the temporary
    file) and the cause."""
    tmp = _open_temporary(path)
    try:
        write(tmp)
        _publish(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(os_error_message(exc, path, "cannot write")) from None
        raise
    return path


def csv_options(path: Path, kind: str, *, sep: str | None = None, encoding: str | None = None,
                source=None, source_encoding: str = "utf-8") -> tuple[str, str]:
    """Separator and encoding of a CSV output ``path`` (format ``kind``):
    ``sep``/``encoding`` when given; else those of ``source`` when it is a CSV
    table (a ``;``-separated latin-1 input gives a ``;``-separated latin-1
    output); else a tab for ``.tsv`` and ``,``, and UTF-8."""
    source_is_csv = source is not None and table_format(Path(source)) == "csv" and Path(source).is_file()
    if sep is None:
        if Path(path).suffix.lower() == ".tsv":
            sep = "\t"
        elif source_is_csv and kind == "csv":
            sep = sniff_separator(Path(source), source_encoding)
        else:
            sep = ","
    if encoding is None:
        encoding = source_encoding if source_is_csv else "utf-8"
    return sep, encoding


def write_table(df: pd.DataFrame, path, *, fmt: str | None = None, sep: str | None = None,
                encoding: str | None = None, source=None, source_encoding: str = "utf-8") -> Path:
    """Write atomically (temporary file in the same directory, then rename).

    A CSV output is written with separator ``sep`` and text ``encoding``;
    when they are not given and ``source`` (the input table's path, read
    with ``source_encoding``) is a CSV file, the output keeps the input's
    detected separator and its encoding (see :func:`csv_options`)."""
    path = Path(path)
    kind = table_format(path, fmt)
    if kind == "csv":
        sep, encoding = csv_options(path, kind, sep=sep, encoding=encoding, source=source,
                                    source_encoding=source_encoding)

    def write(tmp: Path) -> None:
        if kind == "parquet":
            out = df.copy()
            for c in out.columns:  # mixed generalised/original values: store as text
                if out[c].dtype == object:
                    out[c] = out[c].astype(str)
            out.to_parquet(tmp, index=False)
        elif kind == "excel":
            with open(tmp, "wb") as fh:  # a handle: pandas would reject the temporary file's .tmp extension
                df.to_excel(fh, index=False, engine="openpyxl")
        else:
            try:
                df.to_csv(tmp, index=False, sep=sep, encoding=encoding)
            except UnicodeEncodeError as exc:
                raise InputError(f"cannot write {path} as {encoding} text (the input's encoding): "
                                 f"{excerpt(exc.object[exc.start:exc.end])} has no {encoding} form; convert the "
                                 "input to UTF-8 or choose a .parquet or .xlsx output") from None

    return _write_atomically(path, write)


def write_text(text: str, path) -> Path:
    """Atomic text write."""
    path = Path(path)

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)

    return _write_atomically(path, write)
