"""Reading tables: CSV (separator detected), Parquet, Excel, Stata, SPSS and
SAS files (:mod:`.statistical`); the schema of a Parquet data set."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pandas as pd

from ..core.files import check_regular_file, os_error_message, shorten
from .errors import InputError
from .statistical import STATISTICAL_FORMATS, read_statistical

# pyarrow's Parquet modules are imported inside the functions that read or write Parquet, the only ones that need them

FORMATS = {".csv": "csv", ".txt": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet",
           ".xlsx": "excel", ".xls": "excel", **STATISTICAL_FORMATS}
#: the formats a table can be read or written as (``--format``)
FORMAT_NAMES = tuple(dict.fromkeys(FORMATS.values()))



def table_format(path: Path, override: str | None = None) -> str:
    """``csv``, ``parquet``, ``excel``, ``stata``, ``spss`` or ``sas`` from
    ``override`` or the file's extension; a name without an extension is read
    as CSV."""
    if override:
        if override not in FORMAT_NAMES:
            raise InputError(f"format must be one of {', '.join(FORMAT_NAMES)}, got {override!r}")
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
    if kind in ("stata", "spss", "sas"):
        return read_statistical(path, kind)
    try:
        if kind == "parquet":
            import pyarrow.parquet as pq

            check_flat_schema(pq.read_schema(path), path)
            return pd.read_parquet(path)
        if kind == "excel":
            df = pd.read_excel(path, sheet_name=sheet, dtype=str, keep_default_na=False)
            _check_header(path, _header(path, kind, None, encoding, sheet))
            df.columns = [str(c) for c in df.columns]  # a header cell 2019 names the column '2019', as in a CSV
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


def _plain_type(t):
    """A Parquet column's value type: a dictionary-encoded column's values,
    text (or bytes) whatever its offsets' width or layout."""
    import pyarrow as pa
    import pyarrow.types as pat

    t = t.value_type if pat.is_dictionary(t) else t
    # string_view and binary_view exist from pyarrow 16 (older ones cannot read them either)
    is_string_view, is_binary_view = (getattr(pat, name, lambda _: False) for name in ("is_string_view",
                                                                                        "is_binary_view"))
    if pat.is_large_string(t) or is_string_view(t):
        return pa.string()
    if pat.is_large_binary(t) or is_binary_view(t):
        return pa.binary()
    return t


def check_flat_schema(schema, path) -> None:
    """Refuse (:class:`InputError`, naming the column) a Parquet column
    holding nested values (lists, structs, maps): a table cell must be one
    value to be generalised, compared or written back."""
    import pyarrow.types as pat

    for f in schema:
        if pat.is_nested(_plain_type(f.type)):
            raise InputError(f"{path}: column {f.name!r} holds nested values (Parquet type {f.type}); hieranon "
                             "anonymises flat tables: flatten it into plain columns or leave it out")


def dataset_schema(files: list[Path], path) -> object:
    """The one schema of a Parquet dataset's part ``files`` (``path`` the
    dataset), read from their footers: every part must have the same columns
    of the same value types (a dictionary-encoded column reads as its values,
    ``string`` and ``large_string`` are text alike, an all-null column takes
    the others' type); else :class:`InputError`
    naming two parts and the columns where they differ (pyarrow would
    silently drop a column missing from the first part)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import pyarrow.types as pat

    try:
        schemas = [pq.read_schema(f) for f in files]
    except OSError as exc:
        raise InputError(os_error_message(exc, path, "cannot read")) from None
    except Exception as exc:  # pyarrow's ArrowInvalid: not a Parquet file
        raise InputError(f"{path}: a part cannot be read as Parquet: {shorten(exc) or type(exc).__name__}") \
            from None
    first = schemas[0]
    for f, sch in zip(files[1:], schemas[1:]):
        extra, lacking = [c for c in sch.names if c not in first.names], [c for c in first.names if c not in sch.names]
        if extra or lacking:
            what = "; ".join(x for x in (f"{f.name} adds {extra}" if extra else "",
                                         f"{f.name} lacks {lacking}" if lacking else "") if x)
            raise InputError(f"{path}: the parts {files[0].name} and {f.name} have different columns ({what}); "
                             "write every part with the same columns")
    fields = []
    for col in first:
        types = {}
        for f, sch in zip(files, schemas):
            t = _plain_type(sch.field(col.name).type)
            if not pat.is_null(t):
                types.setdefault(t, f.name)
        if len(types) > 1:
            (t1, f1), (t2, f2) = list(types.items())[:2]
            raise InputError(f"{path}: column {col.name!r} is {t1} in part {f1} but {t2} in part {f2}; write every "
                             "part with the same column types")
        fields.append(pa.field(col.name, next(iter(types), pa.null())))
    schema = pa.schema(fields)
    check_flat_schema(schema, path)
    return schema


#: errno values of a file system that has no hard links (FAT, some network shares).
