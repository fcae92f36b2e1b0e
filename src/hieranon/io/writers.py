"""Writing tables and text. A CSV output of a CSV input keeps the input's
separator and text encoding, a Stata or SPSS output of a statistical file
its variable and value labels (:func:`write_table` with ``source=``).

Writes are atomic: the table goes to a temporary file in the target
directory and is renamed into place only when complete, so a failed run
never leaves a half-written output.
"""

from __future__ import annotations

import errno
import os
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.files import excerpt, os_error_message, remove_stale_temporaries, temporary_path
from ..hierarchies.builders import as_floats
from .errors import InputError, OutputError, OutputExistsError
from .readers import sniff_separator, table_format
from .statistical import STATISTICAL_FORMATS, WRITABLE, Labels, read_labels, write_statistical

# pyarrow's Parquet modules are imported inside the functions that read or write Parquet, the only ones that need them

#: errno values of a file system that has no hard links (FAT, some network shares).
_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK}
#: Text that reads as an integer / a float exactly (a CSV column typed as numbers for Parquet).
_INT_TEXT = r"-?(?:0|[1-9]\d*)"
_FLOAT_TEXT = r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?"


def _appeared(path: Path) -> OutputExistsError:
    return OutputExistsError(f"{path} appeared while this run was writing it (another run writing the same file?); "
                             "this run wrote nothing there: choose another path, or replace it on purpose "
                             "(--force)")


def _publish(tmp: Path, path: Path, overwrite: bool) -> None:
    """Put the complete temporary file in place: with ``overwrite`` an atomic
    rename over any file there; without, a hard link that fails when ``path``
    exists (the file appeared meanwhile: :class:`OutputExistsError`), so one
    run never replaces another's output. On a file system without hard links
    the name is claimed by an exclusive create before the rename."""
    if overwrite:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise _appeared(path) from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            raise _appeared(path) from None
        os.replace(tmp, path)
        return
    tmp.unlink()


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


def _write_atomically(path: Path, write, overwrite: bool) -> Path:
    """Run ``write(tmp)`` on a fresh temporary file and put it in place
    (:func:`_publish`: replacing an existing ``path`` only with
    ``overwrite``); on any failure the temporary file is removed and an
    operating-system error becomes an :class:`OutputError` naming ``path``
    (not the temporary file) and the cause."""
    tmp = _open_temporary(path)
    try:
        write(tmp)
        _publish(tmp, path, overwrite)
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


def output_format(path, fmt: str | None = None) -> str:
    """The format a table is written as (:func:`table_format`), refused
    (:class:`InputError`) when it can only be read."""
    kind = table_format(Path(path), fmt)
    if kind in STATISTICAL_FORMATS.values() and kind not in WRITABLE:
        raise InputError(f"{path}: {kind.upper()} files can be read, not written; write the release as .dta (Stata), "
                         ".sav (SPSS), .csv or .parquet")
    return kind


def write_table(df: pd.DataFrame, path, *, fmt: str | None = None, sep: str | None = None,
                encoding: str | None = None, source=None, source_encoding: str = "utf-8",
                overwrite: bool = False) -> Path:
    """Write atomically (temporary file in the same directory, then put in
    place); an existing ``path`` is replaced only with ``overwrite``, else
    :class:`OutputExistsError` (and nothing written).

    A CSV output is written with separator ``sep`` and text ``encoding``;
    when they are not given and ``source`` (the input table's path, read
    with ``source_encoding``) is a CSV file, the output keeps the input's
    detected separator and its encoding (see :func:`csv_options`)."""
    path = Path(path)
    kind = output_format(path, fmt)
    if kind == "csv":
        sep, encoding = csv_options(path, kind, sep=sep, encoding=encoding, source=source,
                                    source_encoding=source_encoding)

    def write(tmp: Path) -> None:
        if kind == "parquet":
            parquet_ready(df, from_text=source is not None and table_format(Path(source)) == "csv") \
                .to_parquet(tmp, index=False)
        elif kind in ("stata", "spss", "sas"):
            write_statistical(df, tmp, kind, _source_labels(source))
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

    return _write_atomically(path, write, overwrite)


def _source_labels(source) -> Labels | None:
    """The variable and value labels of the input, when it is a statistical file."""
    if source is None or not Path(source).is_file() or Path(source).suffix.lower() not in STATISTICAL_FORMATS:
        return None
    return read_labels(source)


def _as_number(col: pd.Series) -> pd.Series | None:
    """A text column whose every cell writes an integer (``-12``) or a decimal
    number (``184.46946422249852``, ``1e-3``) as numbers (int64, Int64 with
    missing cells, float64); None when some cell is other text (``02139``,
    ``+5``, ``35-39``...: kept as text)."""
    present = col.dropna()
    if present.empty or not all(isinstance(x, str) for x in present.iloc[:1000]):
        return None
    text = present.astype(str)
    if text.str.fullmatch(_INT_TEXT).all() and text.str.len().max() < 19:  # fits an int64
        ints = pd.to_numeric(col, errors="coerce")
        return ints.astype("int64") if len(present) == len(col) else ints.astype("Int64")
    if text.str.fullmatch(_FLOAT_TEXT).all():
        distinct = text.unique()
        if _floats_keep_values(distinct, as_floats(distinct)):
            return pd.Series(as_floats(col), index=col.index)
    return None


def _floats_keep_values(texts: np.ndarray, floats: np.ndarray) -> bool:
    """Does every float stand for the number its text writes (``1.10`` is
    1.1; ``9007199254740993`` is no float, nor is a 20-digit code)? Else the
    column stays text: a published column is never another number."""
    return all(Decimal(t) == Decimal(repr(f)) for t, f in zip(texts, floats.tolist()))


def parquet_ready(df: pd.DataFrame, *, from_text: bool = False) -> pd.DataFrame:
    """``df`` as a Parquet file stores it: typed columns (numbers, dates,
    categoricals: the numeric quasi-identifiers) keep their dtype; a text
    column stays text, missing cells missing; with ``from_text`` (a CSV
    input, read as text) a column whose every cell writes a number becomes
    numeric, as ``pandas.read_csv`` would type it."""
    out = df.copy()
    for c in out.columns:
        if not pd.api.types.is_string_dtype(out[c].dtype):  # text: object, or pandas 3's str
            continue
        number = _as_number(out[c]) if from_text else None
        if number is not None:
            out[c] = number
        else:  # mixed generalised/original values: text
            out[c] = out[c].where(out[c].isna(), out[c].astype(str))
    return out


def write_text(text: str, path, *, overwrite: bool = False) -> Path:
    """Atomic UTF-8 text write; an existing ``path`` is replaced only with
    ``overwrite`` (else :class:`OutputExistsError`)."""
    path = Path(path)

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)

    return _write_atomically(path, write, overwrite)
