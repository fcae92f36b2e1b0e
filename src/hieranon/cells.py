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
  U+3000 and the other Unicode spaces. Spaces inside the text are kept.

Released (anonymised) cells are *not* normalised when they are checked: a
published cell must print its value exactly as the anonymiser writes it
(:func:`released_text`).
"""

from __future__ import annotations

import math
import unicodedata
from datetime import date, datetime

import numpy as np
import pandas as pd

__all__ = ["normalise_text", "normalise_texts", "released_text", "value_to_label"]


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
    (:func:`hieranon.hierarchy.value_to_label`)."""
    if isinstance(value, str):
        return value
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and value != value):
        return None
    return value_to_label(value)
