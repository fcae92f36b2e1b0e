"""Statistical packages' files: Stata ``.dta``, SPSS ``.sav``/``.zsav`` and
SAS ``.sas7bdat``/``.xpt`` (read), Stata and SPSS (written), through
pyreadstat (the ReadStat library).

A column with *value labels* (a coded column: 1 = "male", 2 = "female") is
read as its labels, so hierarchies, messages and the report speak the
custodian's words; a code without a label stays as its number. Numbers that
are all whole are read as integers (``34``, not ``34.0``), as a CSV would
print them.

Written back (:func:`write_statistical`), every column keeps its *variable
label* and a labelled column its codes and value labels: a value that was a
label is written as its code, and a generalised value (``*``, a range)
gets the next free code with the generalised value as its label, so the
release opens in Stata or SPSS with the same labels and the new ones beside
them. The labels come from the source file's metadata
(:func:`read_labels`), read again at writing time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.files import os_error_message, shorten
from .errors import InputError

__all__ = ["STATISTICAL_FORMATS", "WRITABLE", "Labels", "read_statistical", "read_labels", "write_statistical"]

#: extension -> format, for the files pyreadstat reads
STATISTICAL_FORMATS = {".dta": "stata", ".sav": "spss", ".zsav": "spss", ".sas7bdat": "sas", ".xpt": "sas"}
#: the formats pyreadstat writes
WRITABLE = ("stata", "spss")

_READERS = {"stata": "read_dta", "spss": "read_sav", "sas": "read_sas7bdat"}


@dataclass
class Labels:
    """A statistical file's labels: ``variables`` column -> its label;
    ``values`` column -> {code: label} of a coded column."""

    variables: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict] = field(default_factory=dict)


def _pyreadstat():
    try:
        import pyreadstat
    except ImportError:  # pragma: no cover - a declared dependency
        raise InputError("reading or writing Stata, SPSS or SAS files needs pyreadstat: pip install pyreadstat") \
            from None
    return pyreadstat


def _kind(path: Path) -> str:
    return STATISTICAL_FORMATS.get(path.suffix.lower(), "stata")


def _read(path: Path, kind: str, metadata_only: bool = False):
    name = "read_xport" if kind == "sas" and path.suffix.lower() == ".xpt" else _READERS[kind]
    reader = getattr(_pyreadstat(), name)
    try:
        return reader(str(path), metadataonly=metadata_only)
    except OSError as exc:
        raise InputError(os_error_message(exc, path, "cannot read")) from None
    except Exception as exc:  # ReadStat's own errors: not a file of that format, a damaged file
        raise InputError(f"{path} cannot be read as a {kind.upper()} file: "
                         f"{shorten(exc) or type(exc).__name__}") from None


def _labels(meta) -> Labels:
    variables = {c: lab for c, lab in (meta.column_names_to_labels or {}).items() if lab}
    values = {c: dict(v) for c, v in (meta.variable_value_labels or {}).items() if v}
    return Labels(variables, values)


def read_labels(path, kind: str | None = None) -> Labels:
    """The variable and value labels of a statistical file (its metadata only)."""
    path = Path(path)
    return _labels(_read(path, kind or _kind(path), metadata_only=True)[1])


def _whole(col: pd.Series) -> pd.Series:
    """A float column whose values are all whole numbers, as nullable integers."""
    if not pd.api.types.is_float_dtype(col):
        return col
    values = col.dropna()
    if len(values) and (np.mod(values, 1) == 0).all() and values.abs().max() < 2**53:
        return col.astype("Int64")
    return col


def _decoded(col: pd.Series, codes: Mapping) -> pd.Series:
    """A coded column as its labels (a code without one as its number,
    printed); each distinct code is looked up once."""
    by_code = {float(k): str(v) for k, v in codes.items()}
    printed = {x: by_code.get(float(x), str(int(x)) if float(x).is_integer() else str(x))
               for x in pd.unique(col.dropna())}
    return col.map(printed).astype(object).where(col.notna(), None)


def read_statistical(path, kind: str | None = None) -> pd.DataFrame:
    """Read a Stata, SPSS or SAS file (``kind``: ``stata``, ``spss``,
    ``sas``; default from the extension): labelled columns as their labels,
    whole numbers as integers; ``DataFrame.attrs["labels"]`` holds the
    file's :class:`Labels`."""
    path = Path(path)
    df, meta = _read(path, kind or _kind(path))
    labels = _labels(meta)
    out = pd.DataFrame({c: _decoded(df[c], labels.values[c]) if c in labels.values else _whole(df[c])
                        for c in df.columns}, index=df.index)
    out.attrs["labels"] = labels
    return out


def _encoded(col: pd.Series, codes: Mapping) -> tuple[pd.Series, dict]:
    """A labelled column's values back to codes; values that are not labels
    (generalised ones) get the next free codes, in the order they first
    appear. Returns (codes, value labels)."""
    by_label = {str(v): k for k, v in codes.items()}
    labels = dict(codes)
    present = col[col.notna()]
    distinct = pd.unique(present)  # each distinct value once
    numbers = [float(v) for v in map(str, distinct) if v not in by_label and _is_number(v)]
    next_code = int(max([float(k) for k in codes] + numbers, default=0)) + 1  # above every code in use
    code_of = {}
    for x in distinct:
        text = str(x)
        if text not in by_label:
            if _is_number(text):
                code = float(text)  # a code that never had a label
            else:
                code = next_code
                next_code += 1
                labels[code] = text
            by_label[text] = code
        code_of[x] = float(by_label[text])
    return (present.map(code_of).astype("float64").reindex(col.index),
            {int(k) if float(k).is_integer() else k: v for k, v in labels.items()})


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _writable(col: pd.Series) -> pd.Series:
    """pyreadstat writes numbers (float64 with NaN for missing) and text."""
    if pd.api.types.is_bool_dtype(col):
        return col.astype("float64")
    if pd.api.types.is_numeric_dtype(col):
        return col.astype("float64")
    present = col.notna()
    out = col.astype(object).where(present, None)
    out[present] = out[present].astype(str)
    return out


def write_statistical(df: pd.DataFrame, path, kind: str, labels: Labels | None = None) -> None:
    """Write ``df`` as a Stata or SPSS file at ``path`` (the caller makes it
    atomic), keeping ``labels`` (the source file's) for the columns still present."""
    if kind not in WRITABLE:  # refused earlier, by name (hieranon.io.output_format)
        raise ValueError(f"{kind} files cannot be written")
    labels = labels or Labels()
    data, value_labels = {}, {}
    for c in df.columns:
        if c in labels.values:
            data[c], value_labels[c] = _encoded(df[c], labels.values[c])
        else:
            data[c] = _writable(df[c])
    frame = pd.DataFrame(data, index=df.index)
    column_labels = {c: labels.variables[c] for c in df.columns if c in labels.variables}
    prs = _pyreadstat()
    writer = prs.write_dta if kind == "stata" else prs.write_sav
    try:
        writer(frame, str(path), column_labels=column_labels or None, variable_value_labels=value_labels or None)
    except OSError:
        raise
    except Exception as exc:  # ReadStat refuses a name or a value
        raise InputError(f"cannot write {path} as a {kind.upper()} file: {shorten(exc) or type(exc).__name__}") \
            from None
