"""The files of a run: reading the input tables, and the one check of the outputs against
every file the run reads, before any work."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..core.progress import stage as progress_stage
from .errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

    from ..io.sql import SqlTable
    from ..job.config import Config


def configured(config: Optional[Config], key: str, what: str):
    """The configuration's ``key`` (``input`` or ``output``: a path or a
    database table), for a command line that names no ``what``."""
    ref = getattr(config, key, None)
    if ref is None:
        raise UsageError(f"no {what}: give it on the command line, or name it under '{key}:' in the configuration "
                         "(--config FILE.yaml)")
    return ref


def table_source(text: Optional[str], table: Optional[str] = None, query: Optional[str] = None, *,
                 what: str = "INPUT", table_option: str = "--table", query_option: Optional[str] = "--query",
                 config: Optional[Config] = None, key: str = "input") -> Path | SqlTable:
    """A table argument: a file path, or a database table (a URL with
    ``table_option`` or ``query_option``); without one, the configuration's
    ``key`` (:func:`configured`). A URL without either option, or those
    options with a file, is refused in one line."""
    from ..io.sql import SqlTable, is_database_url, mask_url

    options = " or ".join(o for o in (table_option, query_option) if o)
    given = [o for o, v in ((table_option, table), (query_option, query)) if v is not None]
    if text is None:
        if given:
            raise UsageError(f"{given[0]} names a table of {what}'s database: give {what} (a database URL)")
        return configured(config, key, what)
    if not is_database_url(text):
        if given:
            raise UsageError(f"{given[0]} reads a database table, but {what} {text} is a file; give a database URL "
                             "(postgresql://HOST/DB, sqlite:///FILE.db, duckdb:///FILE.duckdb) or leave it out")
        return Path(text)
    if (table is None) == (query is None):
        raise UsageError(f"{what} {mask_url(text)} is a database: name its table with {options}"
                         + (" (one of them)" if table is not None else ""))
    return SqlTable(text, table, query)


def table_sources(original: Optional[str], table: Optional[str], query: Optional[str], anonymised: Optional[str],
                  anonymised_table: Optional[str], config: Optional[Config] = None) -> tuple:
    """ORIGINAL and ANONYMISED of evaluate and report, each a file or a
    database table (:func:`table_source`); without them, the
    configuration's ``input`` and ``output``."""
    return (table_source(original, table, query, what="ORIGINAL", config=config, key="input"),
            table_source(anonymised, anonymised_table, None, what="ANONYMISED", table_option="--anonymised-table",
                         query_option=None, config=config, key="output"))


def files_of(**tables) -> dict:
    """Those of ``tables`` that are files (a database table is no file the run could overwrite)."""
    return {what: t for what, t in tables.items() if isinstance(t, Path)}


def read_input(path, encoding: str, fmt: Optional[str]) -> pd.DataFrame:
    from ..io import read_table
    from ..io.sql import SqlTable, read_sql
    if isinstance(path, SqlTable):
        return read_sql(path)
    return read_table(path, encoding=encoding, fmt=fmt)


def read_checked(path, encoding: str, quiet: bool) -> pd.DataFrame:
    """The input table, refused before reading when it would not fit in
    memory (:func:`hieranon.job.scale.check_fits`); a database table
    (:class:`hieranon.io.sql.SqlTable`) is read in batches."""
    from ..io import table_format
    from ..io.sql import SqlTable
    from ..job.scale import check_fits

    if isinstance(path, SqlTable):
        with progress_stage(f"reading {path}"):
            return read_input(path, encoding, None)
    if path.is_file():
        table_format(path)  # an unknown extension: the reader's message
        check_fits(path)
    size = path.stat().st_size / 2**20 if path.is_file() else 0
    with progress_stage(f"reading {path.name}", detail=f"{size:.0f} MiB"):
        return read_input(path, encoding, None)


def require_rows(data, path: Path, what: str = "the table") -> None:
    if len(data) == 0:
        raise UsageError(f"{what} {path} has no rows (only a header)")


def files_read(spec=None, cfg: Optional[Config] = None, sensitive_hierarchy: Sequence[str] = (),
               **named: Optional[Path]) -> dict:
    """Every file a run reads, ``{what: path}``: those ``named`` (the input
    table, the configuration...; None left out), the spec's hierarchy and
    mapping files, the configuration's sensitive hierarchies and pseudonym
    key, and the ``--sensitive-hierarchy`` files."""
    read = {what.replace("_", " "): path for what, path in named.items() if path is not None}
    for name, h in (spec.hierarchies.items() if spec is not None else ()):
        if getattr(h, "file", None) is not None:
            read[f"hierarchy file of {name!r}"] = h.file
        elif getattr(h, "builder", None) == "mapping" and isinstance(h.argument, (str, Path)):
            read[f"mapping file of {name!r}"] = h.argument
    if cfg is not None:
        for attr, path in cfg.sensitive_hierarchies.items():
            read[f"hierarchy file of the sensitive {attr!r}"] = path
        if cfg.pseudonym_key is not None:
            read["configuration's pseudonym key file"] = cfg.pseudonym_key
    for item in sensitive_hierarchy:
        attr, _, path = (x.strip() for x in item.partition("="))
        if path:
            read[f"hierarchy file of the sensitive {attr!r}"] = Path(path)
    return read


def check_outputs(outputs: dict, force: bool, read: Optional[dict] = None, directory: Sequence[str] = ()) -> None:
    """The one check of a run's outputs (``{what: path}``, None left out),
    before any work: no output is a file the run reads (``read``, see
    :func:`files_read`) or another output, even with --force
    (:func:`hieranon.core.files.check_distinct_paths`); each is a file name (a
    directory for those named in ``directory``) in an existing directory,
    and does not exist yet unless --force."""
    from ..core.files import check_distinct_paths

    check_distinct_paths(outputs, read)
    for what, output in outputs.items():
        if output is None:
            continue
        output = Path(output)
        if output.is_dir() and what not in directory:
            raise UsageError(f"{what} {output} is a directory; give a file name")
        if output.exists() and not output.is_dir() and not output.is_file():  # --force must not replace /dev/null
            raise UsageError(f"{what} {output} is not a regular file (a device, FIFO or socket); give a file name")
        if (output.exists() or output.is_symlink()) and not force:
            raise UsageError(f"{what} {output} already exists; pass --force to overwrite it")
        if not output.parent.exists():
            raise UsageError(f"{what} directory {output.parent} does not exist")
