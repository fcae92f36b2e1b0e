"""Progress of the long stages of a run (reading, encoding, solving,
verifying, writing), with an estimate of the time left.

Library code opens a stage with :func:`stage` and advances it; where the
events go is chosen by whoever runs the job:

* nobody asked: each stage is logged on the ``hieranon.progress`` logger
  (INFO when it starts and ends, a line at most every
  :data:`LOG_EVERY_SECONDS` in between) -- the library never prints;
* :func:`reporting` (``hieranon.job.pipeline.run(..., progress=callback)``): every
  event is passed to ``callback(event)``, a :class:`ProgressEvent`;
* the command line shows the events as a rich progress bar on stderr
  (:func:`rich_callback`), only on a terminal and never with ``-q``.

A stage knows its amount of work (``total``: blocks, columns, rows) or only
how long it is expected to take (``expected_seconds``: a solver whose inner
loop is compiled code reports no steps, so the estimate of the run's plan
stands in); the time left is extrapolated from the elapsed time and the
share done. A stage can be interrupted (Ctrl-C) like any Python code: the
events never hold a lock or swallow ``KeyboardInterrupt``.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

log = logging.getLogger("hieranon.progress")

#: Least seconds between two log lines of one stage (when no callback is set).
LOG_EVERY_SECONDS = 5.0

__all__ = ["ProgressEvent", "Stage", "stage", "reporting", "logged_only", "rich_callback", "LOG_EVERY_SECONDS"]


@dataclass(frozen=True)
class ProgressEvent:
    """One step of a stage.

    Attributes
    ----------
    stage : str
        What is being done ("encoding", "solving 12 blocks", ...).
    done, total : float, float or None
        Work done out of ``total`` (None: unknown amount).
    elapsed : float
        Seconds since the stage started.
    remaining : float or None
        Estimated seconds left (None: no basis for an estimate yet).
    finished : bool
        The stage's last event.
    detail : str
        Extra words (the run's plan and its reason, a block's size...).
    """

    stage: str
    done: float
    total: float | None
    elapsed: float
    remaining: float | None
    finished: bool = False
    detail: str = ""

    @property
    def fraction(self) -> float | None:
        """Share done in [0, 1], or None when the amount of work is unknown."""
        if self.total is None or self.total <= 0:
            return 1.0 if self.finished else None
        return min(self.done / self.total, 1.0)


_callback: contextvars.ContextVar[Callable[[ProgressEvent], None] | None] = \
    contextvars.ContextVar("hieranon_progress_callback", default=None)


@contextlib.contextmanager
def reporting(callback: Callable[[ProgressEvent], None] | None) -> Iterator[None]:
    """Send the events of the stages opened inside to ``callback`` (None:
    keep the current destination)."""
    if callback is None:
        yield
        return
    token = _callback.set(callback)
    try:
        yield
    finally:
        _callback.reset(token)


@contextlib.contextmanager
def logged_only() -> Iterator[None]:
    """Inside, stages are only logged, whatever callback was set outside
    (for work in a thread of its own, whose events would interleave with
    the caller's on the display)."""
    token = _callback.set(None)
    try:
        yield
    finally:
        _callback.reset(token)


def estimate_remaining(done: float, total: float | None, elapsed: float,
                       expected_seconds: float | None = None) -> float | None:
    """Seconds left: the elapsed time scaled by the share still to do, or,
    without steps, what is left of ``expected_seconds`` (never below 0)."""
    if total and done > 0:
        return max(elapsed * (total - done) / done, 0.0)
    if expected_seconds is not None:
        return max(expected_seconds - elapsed, 0.0)
    return None


class Stage:
    """A running stage: :meth:`advance` / :meth:`update` report work done."""

    def __init__(self, name: str, total: float | None = None, *, expected_seconds: float | None = None,
                 detail: str = ""):
        self.name, self.total, self.expected_seconds, self.detail = name, total, expected_seconds, detail
        self.done = 0.0
        self.start = time.perf_counter()
        self._last_log = self.start
        self._callback = _callback.get()

    def advance(self, amount: float = 1.0) -> None:
        """``amount`` more work done."""
        self.update(self.done + amount)

    def update(self, done: float, detail: str | None = None) -> None:
        """The work done so far is ``done``."""
        self.done = done
        if detail is not None:
            self.detail = detail
        self._emit(False)

    def event(self, finished: bool = False) -> ProgressEvent:
        elapsed = time.perf_counter() - self.start
        remaining = 0.0 if finished else estimate_remaining(self.done, self.total, elapsed, self.expected_seconds)
        return ProgressEvent(self.name, self.done, self.total, elapsed, remaining, finished, self.detail)

    def _emit(self, finished: bool) -> None:
        ev = self.event(finished)
        if self._callback is not None:
            self._callback(ev)
            return
        now = time.perf_counter()
        if finished:
            log.info("%s: done in %.1f s%s", self.name, ev.elapsed, f" ({self.detail})" if self.detail else "")
        elif now - self._last_log >= LOG_EVERY_SECONDS:
            self._last_log = now
            share = f"{ev.done:g}/{ev.total:g}" if ev.total else f"{ev.elapsed:.0f} s"
            left = f", about {ev.remaining:.0f} s left" if ev.remaining is not None else ""
            log.info("%s: %s%s", self.name, share, left)


@contextlib.contextmanager
def stage(name: str, total: float | None = None, *, expected_seconds: float | None = None,
          detail: str = "") -> Iterator[Stage]:
    """Open a stage; its start and end are reported (the end only when it
    completes: an exception, an interrupt included, passes through)."""
    s = Stage(name, total, expected_seconds=expected_seconds, detail=detail)
    if s._callback is not None:
        s._emit(False)
    else:
        log.info("%s%s", name, f" ({detail})" if detail else "")
    yield s
    if s.total is not None:
        s.done = s.total
    s._emit(True)


def rich_callback(console) -> tuple[Callable[[ProgressEvent], None], Callable[[], None]]:
    """A callback drawing the events as rich progress bars on ``console``
    (one line per stage: description, bar, share, time left), and the
    function that stops the display. Nothing is drawn when the console is
    not a terminal."""
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn
    from rich.table import Column

    describe = TextColumn("{task.description}", table_column=Column(width=56, no_wrap=True, overflow="ellipsis"))
    bars = Progress(describe, BarColumn(bar_width=24), TaskProgressColumn(),
                    TextColumn("{task.fields[left]}"), TimeElapsedColumn(), console=console, transient=False,
                    disable=not console.is_terminal)
    tasks: dict[str, int] = {}

    def show(ev: ProgressEvent) -> None:
        left = "" if ev.remaining is None or ev.finished else f"~{_duration(ev.remaining)} left"
        detail = ev.detail if len(ev.detail) <= 60 else ev.detail[:57] + "..."
        text = ev.stage + (f" [dim]{escape(detail)}[/dim]" if detail else "")
        total = ev.total if ev.total is not None else (100.0 if ev.finished or ev.remaining is not None else None)
        done = ev.done if ev.total is not None else (
            100.0 if ev.finished else (100.0 * ev.elapsed / max(ev.elapsed + ev.remaining, 1e-9)
                                       if ev.remaining is not None else 0.0))
        if ev.stage not in tasks:
            if not bars.live.is_started:
                bars.start()
            tasks[ev.stage] = bars.add_task(text, total=total, completed=done, left=left)
        else:
            bars.update(tasks[ev.stage], description=text, total=total, completed=done, left=left)

    def stop() -> None:
        if bars.live.is_started:
            bars.stop()

    return show, stop


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min {seconds % 60:02.0f} s"
    return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:02.0f} min"
