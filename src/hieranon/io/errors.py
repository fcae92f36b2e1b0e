"""The errors of reading and writing files: the user's to fix, each naming the file."""

from __future__ import annotations


class InputError(ValueError):
    """An input file is missing or cannot be read; the message names it."""


class OutputError(InputError):
    """An output cannot be written (disk full, file-size limit, permission
    denied...): the user's to fix; the message names the output and the cause."""


class OutputExistsError(OutputError):
    """The destination of a write without ``overwrite`` exists (it appeared
    while the run was working: another run writing the same file)."""
