"""Runs of the workbench in a background thread: progress and cancellation.

A run is :func:`hieranon.job.pipeline.run` on the configuration file the
app wrote, in a thread of its own so that the pages stay responsive. Its
progress events (:mod:`hieranon.core.progress`) are kept for the page to
poll. A cancel is delivered as the command line's Ctrl-C is: a
``KeyboardInterrupt`` raised in the run's thread (at its next progress
event, and asynchronously between two Python instructions, which also
reaches a solver between its compiled kernels); it is delivered again
until the thread ends.
"""

from __future__ import annotations

import ctypes
import logging
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.progress import ProgressEvent

log = logging.getLogger("hieranon.app")

__all__ = ["Job", "JobCancelled"]

#: Seconds between two deliveries of the interrupt to a run that has not stopped yet.
CANCEL_RETRY_SECONDS = 0.2


class JobCancelled(KeyboardInterrupt):
    """The custodian cancelled the run (raised in the run's thread)."""


@dataclass
class Job:
    """One background task: ``work(progress)`` returns the result; ``state``
    is ``running``, ``done``, ``failed`` or ``cancelled``."""

    work: Callable[[Callable[[ProgressEvent], None]], object]
    id: str = ""
    state: str = "running"
    stage: str = "starting"
    fraction: float | None = None
    remaining: float | None = None
    detail: str = ""
    error: str | None = None
    result: object = None
    warnings: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    finished_at: float | None = None
    _in_work: bool = field(default=True, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)

    def start(self) -> Job:
        self._thread = threading.Thread(target=self._main, name=f"hieranon-app-{self.id}", daemon=True)
        self._thread.start()
        return self

    def progress(self, event: ProgressEvent) -> None:
        """The progress callback: keeps the last event; raises the cancel."""
        if self._cancel.is_set():
            raise JobCancelled
        self.stage, self.fraction, self.remaining, self.detail = (event.stage, event.fraction, event.remaining,
                                                                  event.detail)

    def _main(self) -> None:
        try:
            state, result, error, caught = self._attempt()
        except KeyboardInterrupt:  # delivered between the work's end and its bookkeeping
            state, result, error, caught = "cancelled", None, None, []
        while True:  # from here on no interrupt is delivered; one delivered just before is swallowed
            try:
                with self._lock:
                    self._in_work = False
                    self.result, self.error = result, error
                    self.warnings = caught
                    self.state = "cancelled" if state == "cancelled" or (
                        state == "failed" and self._cancel.is_set()) else state
                    self.finished_at = time.perf_counter()
                time.sleep(0)
                break
            except KeyboardInterrupt:
                continue

    def _attempt(self) -> tuple[str, object, str | None, list[str]]:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = self.work(self.progress)
            texts = [" ".join(str(w.message).split()) for w in caught if issubclass(w.category, UserWarning)]
            return "done", result, None, texts
        except KeyboardInterrupt:  # the cancel (a JobCancelled, or the interrupt delivered to the thread)
            return "cancelled", None, None, []
        except Exception as exc:  # noqa: BLE001 - every failure of a run is shown on the page
            if not _expected(exc):  # the kind of failure only: its message may quote the table's values
                log.error("run %s failed with %s (shown on its page)", self.id, type(exc).__name__)
            return "failed", None, (str(exc).splitlines()[0] if str(exc) else type(exc).__name__), []

    def cancel(self, wait: float = 5.0) -> bool:
        """Stop the run (True when it has stopped within ``wait`` seconds)."""
        self._cancel.set()
        deadline = time.perf_counter() + wait
        while self._thread is not None and self._thread.is_alive() and time.perf_counter() < deadline:
            with self._lock:
                if self._in_work and self._thread.ident is not None:
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._thread.ident),
                                                               ctypes.py_object(JobCancelled))
            self._thread.join(CANCEL_RETRY_SECONDS)
        return self._thread is None or not self._thread.is_alive()

    def as_dict(self) -> dict:
        end = self.finished_at or time.perf_counter()
        return {"id": self.id, "state": self.state, "stage": self.stage, "fraction": self.fraction,
                "remaining": self.remaining, "detail": self.detail, "error": self.error,
                "elapsed": round(end - self.started, 1), "warnings": self.warnings}


def _expected(exc: Exception) -> bool:
    """A failure the custodian's input explains (bad data, an infeasible requirement), not a bug."""
    from ..core.tree import HierarchyError
    from ..job.result import AnonymizationError
    from ..job.settings import SettingError
    return isinstance(exc, (ValueError, HierarchyError, AnonymizationError, SettingError, OSError))
