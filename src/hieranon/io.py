"""Reading and writing tables: CSV (separator detected), Parquet, Excel.

A CSV output of a CSV input keeps the input's separator and text encoding
(:func:`write_table` with ``source=``).

Writes are atomic: the table goes to a temporary file in the target
directory and is renamed into place only when complete, so a failed run
never leaves a half-written output.
"""

from __future__ import annotations

import csv
import errno
import os
from collections import Counter
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd

from .core.cells import MISSING_LABEL, is_missing, value_to_label
from .core.files import check_regular_file, excerpt, os_error_message, remove_stale_temporaries, shorten, temporary_path
from .core.tree import Hierarchy
from .hierarchies.builders import as_floats, leaf_values, node_bounds

# pyarrow's Parquet modules are imported inside the functions that read or write Parquet, the only ones that need them

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
_NO_HARD_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK}


class OutputExistsError(OutputError):
    """The destination of a write without ``overwrite`` exists (it appeared
    while the run was working: another run writing the same file)."""


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
    kind = table_format(path, fmt)
    if kind == "csv":
        sep, encoding = csv_options(path, kind, sep=sep, encoding=encoding, source=source,
                                    source_encoding=source_encoding)

    def write(tmp: Path) -> None:
        if kind == "parquet":
            parquet_ready(df, from_text=source is not None and table_format(Path(source)) == "csv") \
                .to_parquet(tmp, index=False)
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


# ------------------------------------------------------------ typed output
#: The forms a generalised number can be written in (``--numeric-output``).
NUMERIC_OUTPUTS = ("label", "range", "midpoint", "bounds")
_INT_TEXT = r"-?(?:0|[1-9]\d*)"
_FLOAT_TEXT = r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?"


def hierarchy_map(hierarchies) -> dict[str, Hierarchy]:
    """Attribute name -> hierarchy from a mapping or from a sequence of
    hierarchies (what a result holds: ``result.hierarchies``)."""
    if isinstance(hierarchies, Mapping):
        return dict(hierarchies)
    return {h.name: h for h in hierarchies}


def _numeric_hierarchies(hierarchies, columns) -> dict:
    """QI name -> (hierarchy, NodeBounds) for the QIs among ``columns`` whose leaves are numbers."""
    out = {}
    for q, h in hierarchy_map(hierarchies).items():
        if q in columns:
            nb = node_bounds(h)
            if nb is not None:
                out[q] = (h, nb)
    return out


def numeric_columns(columns, hierarchies, mode: str) -> dict:
    """QI name -> (hierarchy, NodeBounds) of the quasi-identifiers that
    numeric output ``mode`` writes as numbers: those whose leaves (other
    than ``missing``) are all numbers; the others (text values) stay labels.

    Raises :class:`InputError` (naming the column) before any work when
    ``mode`` cannot be honoured: a quasi-identifier mixes numbers and text,
    no quasi-identifier holds numbers, or (``bounds``) the table already has
    a column ``NAME_lower`` / ``NAME_upper`` the output would write."""
    if mode not in NUMERIC_OUTPUTS:
        raise InputError(f"--numeric-output {mode!r}: expected one of {', '.join(NUMERIC_OUTPUTS)}")
    hs = {q: h for q, h in hierarchy_map(hierarchies).items() if q in columns}
    if mode == "label" or not hs:
        return {}
    text = []
    for q, h in hs.items():
        leaves, vals = leaf_values(h)
        bad = np.isnan(vals)
        if bad.all():
            text.append(q)
        elif bad.any():
            raise InputError(f"--numeric-output {mode}: column {q!r} mixes numbers and text (value "
                             f"{excerpt(h.labels[leaves[np.argmax(bad)]])} is not a number); correct that value "
                             "or write the column as labels (--numeric-output label)")
    numeric = _numeric_hierarchies({q: h for q, h in hs.items() if q not in text}, columns)
    if not numeric:
        raise InputError(f"--numeric-output {mode}: no quasi-identifier holds numbers ({', '.join(text)} hold "
                         "text); use --numeric-output label")
    if mode == "bounds":
        for q in numeric:
            for c in (f"{q}_lower", f"{q}_upper"):
                if c in columns:
                    raise InputError(f"--numeric-output bounds writes {q!r} as {q}_lower and {q}_upper, but the "
                                     f"table already has a column {c!r}; rename that column or choose another "
                                     "--numeric-output")
    return numeric


def _node_of_cells(col: pd.Series, h: Hierarchy) -> np.ndarray:
    """Per cell, a node printed as the cell (-1: missing or not a label).
    Labels repeated along a chain name the same values: any of them serves."""
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    by_label = {}
    for v in range(h.n_nodes - 1, -1, -1):
        by_label[h.labels[v]] = v
    node_u = np.array([by_label.get(value_to_label(x), -1) for x in uniques], dtype=np.int64)
    node_u = np.append(node_u, -1)
    return node_u[codes]


def typed_numeric_qis(df: pd.DataFrame, hierarchies: Mapping[str, Hierarchy]) -> pd.DataFrame:
    """``df`` with every numeric quasi-identifier (a hierarchy whose leaves
    are numbers and whose inner labels write ranges or numbers) as an **ordered pandas Categorical** of its labels: the
    categories are all the labels of the hierarchy, ordered by the range they
    stand for (lower bound, then upper bound: ``*`` first, ``missing``
    last), so ``[25, 50)`` sorts before ``[50, 75)`` and the exact value
    ``37`` after ``[25, 50)``. A cell that is missing stays missing. Other
    columns keep their dtype. :func:`numeric_output` turns the labels into
    ranges, midpoints or lower/upper bounds."""
    out = df.copy()
    for q, (h, nb) in _numeric_hierarchies(hierarchies, df.columns).items():
        if not nb.ranged:
            continue  # codes (a masked 435*) or values without ranges: they stay as they are
        node = _node_of_cells(df[q], h)
        known = node >= 0
        if not (known | is_missing(df[q])).all():
            continue  # not this hierarchy's labels: left as it is
        order = np.lexsort((np.arange(h.n_nodes), np.nan_to_num(nb.upper, nan=np.inf),
                            np.nan_to_num(nb.lower, nan=np.inf)))
        cats = pd.unique(pd.Series(np.asarray(h.labels, dtype=object)[order]))
        rank = {label: i for i, label in enumerate(cats)}
        node_rank = np.array([rank[x] for x in h.labels], dtype=np.int64)
        codes = np.where(known, node_rank[np.maximum(node, 0)], -1)
        out[q] = pd.Categorical.from_codes(codes, categories=list(cats), ordered=True)
    return out


def numeric_output(df: pd.DataFrame, hierarchies, mode: str = "label") -> pd.DataFrame:
    """The numeric quasi-identifiers of an anonymised table written as ``mode``:

    * ``label`` -- the hierarchy's labels (``37``, ``[25, 50)``, ``*``);
    * ``range`` -- the range as text: the value, ``[25, 50)`` (a node
      labelled by that interval), ``[25, 49]`` (closed: the least and
      greatest value under a node whose label is not an interval, such as
      ARX's ``25-49`` or ``25..49``), ``*``;
    * ``midpoint`` -- the middle of the range, a number (empty for ``*`` and
      for a missing cell: this form cannot be verified against the original);
    * ``bounds`` -- two numeric columns ``age_lower``, ``age_upper`` in place
      of ``age``, closed: every original value ``x`` of the row satisfies
      ``lower <= x <= upper`` (an interval label's end points, else the
      least and greatest value under the node; ``lower == upper`` for an
      exact value), ``-inf``/``inf`` for ``*``, empty for a missing cell
      (``missing`` when it is a value of its own: its label stays in
      ``label`` and ``range`` forms).

    A quasi-identifier is numeric when the leaves of its hierarchy (file,
    builder or API; whatever the inner labels) are numbers; one whose values
    are text stays as labels (:func:`numeric_columns` refuses a column that
    mixes both, and a table with no numeric one). ``hierarchies``: a mapping
    name -> hierarchy or the sequence a result holds (``result.hierarchies``).
    Other columns are untouched. :func:`read_numeric_output` reads the
    ``label``, ``range`` and ``bounds`` forms back to labels."""
    numeric = numeric_columns(df.columns, hierarchies, mode)
    if mode == "label":
        return df
    out = df.copy()
    for q, (h, nb) in numeric.items():
        node = _node_of_cells(df[q], h)
        known = node >= 0
        v = np.maximum(node, 0)
        if mode == "range":
            text = nb.range_text(h)
            out[q] = pd.Series(np.where(known, text[v], None), index=df.index, dtype=object)
            continue
        lo = np.where(known, nb.lower[v], np.nan)
        hi = np.where(known, nb.upper[v], np.nan)
        if mode == "midpoint":
            with np.errstate(invalid="ignore"):
                mid = np.where(np.isfinite(lo) & np.isfinite(hi), (lo + hi) / 2, np.nan)
            out[q] = pd.Series(mid, index=df.index)
            continue
        at = list(out.columns).index(q)
        out = out.drop(columns=q)
        out.insert(at, f"{q}_upper", pd.Series(hi, index=df.index))
        out.insert(at, f"{q}_lower", pd.Series(lo, index=df.index))
    return out


def read_numeric_output(df: pd.DataFrame, hierarchies) -> pd.DataFrame:
    """An anonymised table written by :func:`numeric_output` with its numeric
    quasi-identifiers back as labels, so that it can be verified: a pair of
    columns ``age_lower``/``age_upper`` (and no ``age``) becomes ``age`` at
    their place, and ``range`` texts become the labels they write. Labels
    are left as they are; midpoints are not read (no range can be told from
    its middle)."""
    out = df
    for q, h in hierarchy_map(hierarchies).items():
        lo_col, hi_col = f"{q}_lower", f"{q}_upper"
        nb = node_bounds(h)
        if nb is None:
            continue
        if q not in out.columns and lo_col in out.columns and hi_col in out.columns:
            lo, hi = as_floats(out[lo_col]), as_floats(out[hi_col])
            pairs = {}
            for v in range(h.n_nodes - 1, -1, -1):
                pairs[(nb.lower[v], nb.upper[v])] = h.labels[v]
            missing = MISSING_LABEL if MISSING_LABEL in h.leaf_index else None
            keys, inv = np.unique(np.column_stack([lo, hi]), axis=0, return_inverse=True)
            texts = np.array([missing if np.isnan(a) and np.isnan(b) else pairs.get((a, b), f"[{a:g}, {b:g}]")
                              for a, b in keys], dtype=object)
            at = list(out.columns).index(lo_col)
            out = out.drop(columns=[lo_col, hi_col])
            out.insert(at, q, pd.Series(texts[inv.ravel()], index=out.index, dtype=object))
        elif q in out.columns:
            labels = set(h.labels)
            codes, uniq = pd.factorize(out[q])
            texts = [value_to_label(x) for x in uniq]
            if all(t in labels for t in texts):
                continue
            ranges = dict(zip(nb.range_text(h), h.labels))
            new = np.array([t if t in labels else ranges.get(t, x) for t, x in zip(texts, uniq)] + [None],
                           dtype=object)
            out = out.copy()
            out[q] = pd.Series(new[codes], index=out.index, dtype=object)
    return out
