"""The one normalisation of cell text.

A value is read the same way wherever it comes from -- a quasi-identifier
cell, a sensitive cell, a leaf or label of a hierarchy file -- so that
``flu``, ``flu `` and ``\\u00a0flu`` are one value for the anonymiser, the
privacy models and the verifier alike:

* the text is put in Unicode normal form C (NFC: a letter written with a
  combining accent, ``e`` + U+0301, is the same value as the precomposed
  ``é``);
* leading and trailing whitespace is removed, whitespace as Unicode
  defines it (:meth:`str.isspace`): spaces, tabs, line breaks, the no-break
  space U+00A0, the narrow no-break space U+202F, the ideographic space
  U+3000 and the other Unicode spaces, and the separators U+001C-U+001F,
  which :meth:`str.isspace` counts too. Spaces inside the text are kept.

Released (anonymised) cells are *not* normalised when they are checked: a
published cell must print its value exactly as the anonymiser writes it
(:func:`released_text`).

A cell is missing when it is NaN, None, ``pd.NA``, ``NaT`` or blank text
(:func:`is_missing`), wherever it is read; two columns hold the same cells
when they agree up to dtype and missing cells (:func:`cells_equal`).
A missing cell read as a value of its own (``missing: value``) is the leaf
:data:`MISSING_LABEL`.
"""

from __future__ import annotations

import math
import unicodedata
from datetime import date, datetime

import numpy as np
import pandas as pd

#: The leaf a missing cell becomes with ``missing_leaf=True`` (the ``missing: value`` mode).
MISSING_LABEL = "missing"

__all__ = ["MISSING_LABEL", "normalise_text", "normalise_texts", "released_text", "value_to_label", "is_missing",
           "is_missing_value", "missing_values", "cells_equal"]


def normalise_text(text: str) -> str:
    """``text`` in NFC without leading or trailing Unicode whitespace."""
    return unicodedata.normalize("NFC", text).strip()


def normalise_texts(values) -> np.ndarray:
    """:func:`normalise_text` of every element of a sequence of strings, as
    an object array of the same shape (meant for the distinct values of a
    column, not for every cell)."""
    arr = np.asarray(values, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    out.ravel()[:] = [normalise_text(x) for x in arr.ravel().tolist()]
    return out


def value_to_label(value) -> str:
    """The canonical string form of a data value, used to look it up in a
    hierarchy: text by :func:`normalise_text`, integral floats lose their
    ``.0`` (pandas reads an integer column with a missing value as float),
    dates print as ``d/m/Y``, everything else is ``str``."""
    if isinstance(value, str):
        return normalise_text(value)
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (datetime, date)):
        return value.strftime("%d/%m/%Y")
    return normalise_text(str(value))


def released_text(value) -> str | None:
    """How a published cell reads: text exactly as written (no
    normalisation: `` *`` is not ``*``); None for a missing cell; any other
    value (a number a Parquet file keeps as such) by the label it prints as
    (:func:`hieranon.hierarchies.readers.value_to_label`)."""
    if isinstance(value, str):
        return value
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value):
        return None
    return value_to_label(value)


def is_missing(values: pd.Series) -> np.ndarray:
    """Per cell of a column, whether it is missing: NaN, None, ``pd.NA``,
    ``NaT`` or text that is empty or all whitespace (checked once per
    distinct value). The one test of a missing cell for reading, building
    hierarchies and verifying."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    miss_u = np.fromiter((is_missing_value(x) for x in uniques), dtype=bool, count=len(uniques))
    return miss_u[codes]


def missing_values(uniques) -> np.ndarray:
    """:func:`is_missing_value` of every distinct value; a column of text in vector steps."""
    arr = np.asarray(uniques, dtype=object)
    if len(arr) > 1000 and pd.api.types.infer_dtype(arr, skipna=False) == "string":
        text = pd.Series(arr, dtype=object)
        return (text.str.len().eq(0) | text.str.isspace()).to_numpy(dtype=bool)
    return np.fromiter((is_missing_value(x) for x in arr), dtype=bool, count=len(arr))


def is_missing_value(x) -> bool:
    """Whether one value is a missing cell (see :func:`is_missing`)."""
    return x is None or (isinstance(x, float) and x != x) or x is pd.NA or x is pd.NaT or \
        (isinstance(x, str) and not x.strip())


def cells_equal(a: pd.Series, b: pd.Series) -> np.ndarray:
    """Position-wise equality of two columns of cells, dtype-insensitive
    (``5 == 5.0 == '5'``), missing (NaN, None, empty text) equal to missing:
    whether a column came through an anonymisation or a file round trip
    unchanged."""
    if a.dtype == b.dtype and a.equals(b):  # the common case, fast
        return np.ones(len(a), dtype=bool)
    na_a, na_b = is_missing(a), is_missing(b)
    eq = na_a & na_b
    both = ~(na_a | na_b)
    if not both.any():
        return eq
    av = a.to_numpy(dtype=object)[both]
    bv = b.to_numpy(dtype=object)[both]
    try:
        same = np.asarray(av == bv, dtype=bool)
        if same.shape != av.shape:
            raise ValueError
    except (TypeError, ValueError):
        same = np.array([bool(x == y) if not isinstance(x == y, np.ndarray) else False
                         for x, y in zip(av, bv)], dtype=bool)
    if not same.all():  # e.g. 5 vs '5' after a CSV round trip: compare printed forms
        diff = np.flatnonzero(~same)
        same[diff] = [released_text(x) == released_text(y) or _same_number(x, y)
                      for x, y in zip(av[diff], bv[diff])]
    eq[both] = same
    return eq


def _same_number(x, y) -> bool:
    """``'184.46946422249852'`` and the float a Parquet file stores for it (printed
    ``184.4694642224985``) are the same number; two texts are compared as
    written (`` 5`` is not ``5``)."""
    if isinstance(x, str) and isinstance(y, str):
        return False
    try:
        return float(x) == float(y)
    except (TypeError, ValueError):
        return False
