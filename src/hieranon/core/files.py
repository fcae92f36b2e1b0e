"""Opening and writing files safely: one reader for every text file the tool
opens, atomic writes with recognisable temporary names, and short excerpts
of data for messages.

* :func:`read_text_file` reads only regular files (never a device, a FIFO or
  a directory) and only up to a size limit, so a wrong path cannot hang the
  run or exhaust memory.
* :func:`temporary_path` names an atomic write's temporary file
  ``.NAME.PID.RANDOM.tmp`` next to its target; :func:`remove_stale_temporaries`
  deletes such files left by a killed run (their process is gone).
* :func:`excerpt` quotes a data value in a message at a readable length.
* :func:`os_error_message` is the one wording of an operating-system error
  (disk full, file too large, permission denied...) naming the path.

This module imports nothing heavy (no pandas), so the hierarchy and
configuration loaders use it too.
"""

from __future__ import annotations

import csv
import errno
import logging
import os
import re
import secrets
import stat
import sys
import time
from pathlib import Path

log = logging.getLogger(__name__)

#: The largest hierarchy file read (bytes).
MAX_HIERARCHY_BYTES = 256 * 1024**2
#: The largest configuration file read (bytes).
MAX_CONFIG_BYTES = 16 * 1024**2
#: Characters of a data value quoted in a message.
EXCERPT_CHARS = 60



def raise_csv_field_limit() -> None:
    """Let the csv module read fields of any length pandas reads (its default
    limit is 128 KiB)."""
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:  # a C long narrower than Py_ssize_t (Windows)
            limit //= 2


raise_csv_field_limit()


def excerpt(value, limit: int = EXCERPT_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters, saying how long the
    whole was: messages quote data, never reproduce it."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return repr(value)
    return repr(text[:limit]) + f"... ({len(text)} characters)"


def shorten(text: str, limit: int = 200) -> str:
    """The first line of ``text``, cut to ``limit`` characters (a library's
    message may quote a whole input line)."""
    lines = str(text).strip().splitlines()
    first = lines[0] if lines else ""
    return first if len(first) <= limit else first[:limit] + f"... ({len(first)} characters)"


_ERRNO_HINTS = {
    errno.ENOSPC: "the disk is full; free space or write elsewhere",
    errno.EDQUOT: "the disk quota is exceeded; free space or write elsewhere",
    errno.EFBIG: "the file is larger than allowed (a file-size limit such as 'ulimit -f'); raise the limit "
                 "or write elsewhere",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the file system is read-only; write elsewhere",
    errno.ENOENT: "no such file or directory",
    errno.EISDIR: "it is a directory",
    errno.ENOTDIR: "a part of the path is not a directory",
    errno.ENAMETOOLONG: "the file name is too long",
    errno.EIO: "an input/output error (a failing disk or network file system)",
}


def os_error_message(exc: OSError, path=None, doing: str = "") -> str:
    """One line for an operating-system error: the path (``path`` when given:
    the file the user named, not a temporary file), what was being done, and
    the cause in words."""
    target = path if path is not None else (exc.filename or "")
    cause = _ERRNO_HINTS.get(exc.errno or -1) or exc.strerror or type(exc).__name__
    head = f"{doing} {target}".strip()
    return f"{head}: {cause}" if head else cause


class FileReadError(ValueError):
    """A file cannot be read; the message names it and why."""


def check_regular_file(path: Path, what: str, error: type[Exception] = FileReadError,
                       max_bytes: int | None = None, about: str = "") -> os.stat_result:
    """The file's status when it is an existing regular file no larger than
    ``max_bytes``; else ``error`` naming it (``what path about``)."""
    named = f"{what} {path}{about}"
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise error(f"{named} does not exist") from None
    except OSError as exc:
        raise error(f"cannot open {named}: {os_error_message(exc)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{named} is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{named} is not a regular file (a device, FIFO or socket); give a file")
    if max_bytes is not None and st.st_size > max_bytes:
        raise error(f"{named} is {st.st_size / 1024**2:.0f} MiB, more than the {max_bytes / 1024**2:.0f} MiB "
                    f"such a file may have; is it the right file?")
    return st


def read_text_file(path, *, what: str, max_bytes: int, encoding: str = "utf-8",
                   error: type[Exception] = FileReadError, about: str = "") -> str:
    """The text of a regular file of at most ``max_bytes``; any failure is
    ``error`` naming it (``what path about``) in one line, never quoting
    its content."""
    path = Path(path)
    named = f"{what} {path}{about}"
    check_regular_file(path, what, error, max_bytes, about)
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise error(f"cannot read {named}: {os_error_message(exc)}") from None
    if len(data) > max_bytes:  # grew since the stat
        raise error(f"{named} is larger than the {max_bytes / 1024**2:.0f} MiB such a file may have")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise error(f"{named} is not valid {encoding} text ({exc.reason} at byte {exc.start})") from None
    except LookupError:
        raise error(f"{encoding!r} is not a known text encoding (e.g. utf-8, latin-1, cp1252)") from None


# ----------------------------------------------------------- temporary files
def temporary_path(path: Path) -> Path:
    """A fresh temporary name next to ``path``: ``.NAME.PID.RANDOM.tmp``."""
    return path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    except OSError:
        return False
    return True


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Delete the temporary files of earlier writes to ``path`` that were
    interrupted (killed): named by :func:`temporary_path`, last modified
    before this write began, and whose process (the pid in the name) is gone.
    Each removal is logged as a warning."""
    began = time.time()
    pattern = re.compile(rf"^\.{re.escape(path.name)}\.(\d+)\.[0-9a-f]{{8}}\.tmp$")
    removed = []
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if not m:
            continue
        try:
            if not entry.is_file(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_mtime >= began:
                continue
            if _pid_alive(int(m.group(1))):
                continue
            os.unlink(entry.path)
        except OSError:
            continue
        removed.append(Path(entry.path))
        log.warning("removed %s, left by an interrupted earlier write to %s", entry.path, path)
    return removed


# ------------------------------------------------------------ distinct paths
class PathClashError(ValueError):
    """Two of a run's files are the same file; the message names both."""


def _same_file(a: Path, b: Path) -> bool:
    """Do ``a`` and ``b`` name one file: the same path once symbolic links
    and ``.``/``..`` are resolved, or (both existing) the same file on disk
    -- a hard link, or another spelling on a case-insensitive file system."""
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return False


def check_distinct_paths(outputs: dict, inputs: dict | None = None) -> None:
    """Refuse a run whose files collide, before any work: every output path
    (``{what: path}``, e.g. ``{"-o": ..., "--report": ...}``; None entries
    are left out) must differ from every other output and from every input
    (the table, the configuration, the hierarchy and key files). Raises
    :class:`PathClashError` naming both, in one line."""
    outs = [(what, Path(p)) for what, p in outputs.items() if p is not None]
    ins = [(what, Path(p)) for what, p in (inputs or {}).items() if p is not None]
    for i, (what, path) in enumerate(outs):
        for other, other_path in outs[:i]:
            if _same_file(path, other_path):
                raise PathClashError(f"{what} {path} and {other} {other_path} are the same file; give each output "
                                     "a path of its own")
        for other, other_path in ins:
            if _same_file(path, other_path):
                raise PathClashError(f"refusing to overwrite the {other} {other_path} with the {what} {path}; "
                                     f"choose another {what} path")
