"""Files in and out: tables (:mod:`.readers`: CSV with its separator detected,
Parquet, Excel, Stata, SPSS and SAS (:mod:`.statistical`, with their
labels); :mod:`.writers`: atomic writes, so a failed run never leaves a
half-written output), typed output of generalised numbers (:mod:`.numeric`),
the keyed pseudonyms of identifiers (:mod:`.pseudonyms`) and the bundled and
downloaded data sets (:mod:`.datasets`). Tables of SQL databases are
:mod:`.sql`'s, imported where used (SQLAlchemy is the optional extra ``db``).

Every public name of the readers, the writers and the typed output is
importable from here (``hieranon.io.read_table``, ``hieranon.io.numeric_output``...).
"""

from __future__ import annotations

from .errors import InputError, OutputError, OutputExistsError
from .numeric import (
    NUMERIC_OUTPUTS,
    hierarchy_map,
    numeric_columns,
    numeric_output,
    read_numeric_output,
    typed_numeric_qis,
)
from .readers import FORMATS, check_flat_schema, dataset_schema, read_table, sniff_separator, table_format
from .statistical import Labels, read_labels
from .writers import csv_options, output_format, parquet_ready, write_table, write_text

__all__ = ["FORMATS", "InputError", "OutputError", "OutputExistsError", "table_format", "sniff_separator",
           "read_table", "check_flat_schema", "dataset_schema", "csv_options", "write_table", "parquet_ready",
           "write_text", "NUMERIC_OUTPUTS", "hierarchy_map", "numeric_columns", "typed_numeric_qis", "numeric_output",
           "read_numeric_output", "output_format", "Labels", "read_labels"]
