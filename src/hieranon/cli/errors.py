"""How the command line fails: the exit codes, :class:`UsageError` (bad input), the one place
where exceptions become exit codes and one-line messages on stderr, and Ctrl-C / SIGTERM
(nothing half-written is left behind)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn, Optional

import typer

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """Bad input: reported as one line on stderr, exit status 2."""


def die(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    typer.echo(f"hieranon: error: {message}", err=True)
    raise typer.Exit(code)


def known_errors() -> tuple[type[Exception], ...]:
    from ..job.config import ConfigError
    from ..core.tree import HierarchyError
    from ..io import InputError
    from ..core.requirements import RequirementError
    from ..core.table import DataError
    from ..job.settings import SettingError
    return (ConfigError, SettingError, HierarchyError, InputError, RequirementError, DataError, UsageError,
            ValueError, OSError)


def one_line(exc: BaseException) -> str:
    """An error as one readable line (an OS error names its file and cause)."""
    from ..core.files import os_error_message, shorten
    if isinstance(exc, OSError) and (exc.filename is not None or exc.errno):
        return os_error_message(exc)
    return shorten(exc, 1000) or type(exc).__name__


def _usage_error_line(exc) -> str:
    """A click usage error (bad option value, missing option, unknown option or
    command...) as one line: the message and where to find help."""
    message = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    return f"hieranon: error: {message}{hint}"


def _click_exceptions():
    """The module of the click exceptions typer raises: click's own up to
    typer 0.23, typer's vendored copy of click from 0.24 on (click is then not
    even installed). ``typer.BadParameter`` is public in both and lives there."""
    return sys.modules[typer.BadParameter.__module__]


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a scheduler stopping the job): raised in the main
    thread like Ctrl-C's KeyboardInterrupt, so the same clean-ups run
    (temporary files removed, nothing half-written left behind)."""


#: The exit status of a run stopped by a signal: 128 + the signal's number (the shell's convention).
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


#: The signals that arrived during the run: a run whose code swallowed the exception they raised (in a
#: weakref callback, a __del__) still stops, exit 130 or 143, and removes what it wrote.
_signals: list[int] = []
#: The files and directories this run has put in place, removed when a signal stops it after all.
_written: list[Path] = []


def run_outputs() -> list[Path]:
    """The list a command appends each output to once it is in place, so that
    a run stopped by a signal late (even one its code swallowed) removes them
    and can say that nothing was written."""
    return _written


def remove_outputs(paths: list[Path]) -> None:
    """Remove the files and directories a run put in place (a run that fails
    or is stopped late leaves nothing behind)."""
    import shutil

    for path in paths:
        if not isinstance(path, Path):  # a database table (hieranon.io.sql.SqlTable) the run wrote
            from ..io.sql import drop_table
            drop_table(path.url, path.table)
        elif path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _raise_interrupt(signum, frame):
    import signal

    _signals.append(signum)
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


@contextmanager
def _sigterm_as_interrupt():
    """While the CLI runs, SIGTERM raises :class:`Terminated` (where a signal
    handler can be set: the main thread)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _signals.clear()
    _written.clear()
    previous = {sig: signal.signal(sig, _raise_interrupt) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _exit_interrupted() -> None:
    """One line and the conventional status of a run stopped by Ctrl-C (130)
    or SIGTERM (143)."""
    import signal

    remove_outputs(_written)  # complete outputs of a run that was stopped after all: removed, as promised
    _written.clear()
    terminated = signal.SIGTERM in _signals
    typer.echo(f"hieranon: {'terminated (SIGTERM)' if terminated else 'interrupted'}; nothing was written",
               err=True)
    sys.exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)


def _interrupted(exc: BaseException) -> bool:
    """Is a Ctrl-C behind ``exc``? A compiled (numba) kernel running in
    threads when it arrives returns with the KeyboardInterrupt pending, and
    its dispatcher raises a SystemError from it."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def run(app: typer.Typer, args: Optional[list[str]] = None) -> NoReturn:
    """Run ``app`` on ``args`` (default: the command line) and exit: a usage
    error is one line on stderr, exit status 2; an unexpected error is one
    line on stderr (set HIERANON_DEBUG=1 for the traceback), exit status 3;
    Ctrl-C 130, SIGTERM 143."""
    import atexit
    import gc
    import os

    errors = _click_exceptions()
    no_args_help = getattr(errors, "NoArgsIsHelpError", ())  # click >= 8.2
    # At exit the interpreter runs full garbage collections over every object still alive
    # (pandas' and numba's modules and registries): ~0.3 s after an Adult run. Freezing them
    # at exit leaves them to the OS instead. atexit clean-ups (logging's flush, tempfile's,
    # dask's) are explicit calls and still run; output files are closed before this point.
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    try:
        # standalone_mode=False: click raises its usage errors instead of printing a boxed panel
        with _sigterm_as_interrupt():
            code = app(args=args, prog_name="hieranon", standalone_mode=False)
    except SystemExit:
        raise
    except no_args_help as exc:  # `hieranon` alone: the help (rich has printed it)
        if exc.format_message().strip():
            exc.show()
        sys.exit(exc.exit_code)
    except errors.UsageError as exc:
        typer.echo(_usage_error_line(exc), err=True)
        sys.exit(EXIT_BAD_INPUT)
    except errors.ClickException as exc:
        typer.echo(f"hieranon: error: {' '.join(exc.format_message().split())}", err=True)
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        _exit_interrupted()
    except OSError as exc:  # the environment's (disk full, file-size limit, permissions): the user's to fix
        if os.environ.get("HIERANON_DEBUG"):
            raise
        typer.echo(f"hieranon: error: {one_line(exc)}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except Exception as exc:  # noqa: BLE001 - last-resort guard, see docstring
        if _interrupted(exc):
            _exit_interrupted()
        if os.environ.get("HIERANON_DEBUG"):
            raise
        from ..core.files import shorten
        typer.echo(f"hieranon: internal error: {type(exc).__name__}: {shorten(exc)} "
                   "(set HIERANON_DEBUG=1 for details and report it)", err=True)
        sys.exit(EXIT_INTERNAL)
    if code == EXIT_INTERRUPTED or _signals:  # typer turns Ctrl-C (KeyboardInterrupt) into a silent status 130
        _exit_interrupted()
    # a command's typer.Exit(code), --help (0) or a normal return (None: 0)
    sys.exit(code if isinstance(code, int) else EXIT_OK)
