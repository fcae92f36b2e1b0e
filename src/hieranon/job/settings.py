"""The job's numeric and choice settings (``k``, ``seed``, ``missing``,
``beta``, ``risk_threshold``): what each accepts, declared once and checked by
:func:`check_setting` wherever a value comes in -- the configuration file
(:mod:`hieranon.job.config`), the command line and the API
(:class:`~hieranon.job.spec.AnonymizationSpec`). A bad value is one
:class:`SettingError` naming the setting as the user gave it (its ``origin``:
``-k``, ``--seed``..., else the configuration key or keyword of that name)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SettingError", "SETTINGS", "MISSING_MODES", "check_setting", "check_settings", "is_integer",
           "is_number"]

#: How empty quasi-identifier cells are read: refused, already suppressed, or a value of their own.
MISSING_MODES = ("error", "root", "value")


def is_integer(value) -> bool:
    """A whole number: a Python or numpy integer, never a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def is_number(value) -> bool:
    """A real number: a Python or numpy integer or float, never a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


class SettingError(ValueError):
    """A setting of the job is not accepted, however it came in (the
    configuration file, whose errors are of this type too as
    :class:`~hieranon.job.config.ConfigError`, the command line or the API):
    one line naming the setting, where it came from and what it accepts.

    For a setting of :data:`SETTINGS`, ``name`` is the setting, ``value`` the
    value refused and ``origin`` the command-line option that gave it (None:
    the configuration key or keyword ``name``)."""

    def __init__(self, message: str, *, name: str | None = None, value: Any = None, origin: str | None = None):
        super().__init__(message)
        self.name, self.value, self.origin = name, value, origin


@dataclass(frozen=True)
class Setting:
    """What a setting accepts: ``accepts(value)``, ``convert`` to the plain
    Python value kept, ``expected`` in words; ``optional``: None means not given."""

    accepts: Callable[[Any], bool]
    convert: Callable[[Any], Any]
    expected: str
    optional: bool = True


def _finite_at_least(minimum: float) -> Callable[[Any], bool]:
    return lambda v: is_number(v) and minimum <= float(v) < math.inf


#: The settings checked in one place, by name.
SETTINGS: dict[str, Setting] = {
    "k": Setting(lambda v: is_integer(v) and v >= 1, int, "a whole number >= 1"),
    "seed": Setting(lambda v: is_integer(v) and v >= 0, int, "a whole number >= 0"),
    "missing": Setting(lambda v: isinstance(v, str) and v in MISSING_MODES, str,
                       f"{', '.join(MISSING_MODES[:-1])} or {MISSING_MODES[-1]}", optional=False),
    "beta": Setting(_finite_at_least(1.0), float, "a finite number >= 1", optional=False),
    "risk_threshold": Setting(lambda v: is_number(v) and 0 < float(v) <= 1, float,
                              "a number in (0, 1] (a prosecutor risk 1/|class|, e.g. 0.2 = classes of fewer than "
                              "5 records)"),
}


def _shown(value) -> str:
    """A command-line value as typed: text quoted, numbers plain."""
    if isinstance(value, str):
        return repr(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def check_setting(name: str, value, origin: str | None = None):
    """``value`` of the setting ``name`` (:data:`SETTINGS`), converted to its
    plain Python type (None stays None for an optional setting). A value it
    does not accept raises :class:`SettingError`: ``"-k 0: expected a whole
    number >= 1"`` when ``origin`` names the option that gave it, else
    ``"k: expected a whole number >= 1, got 0"``."""
    setting = SETTINGS[name]
    if value is None and setting.optional:
        return None
    if setting.accepts(value):
        return setting.convert(value)
    message = (f"{origin} {_shown(value)}: expected {setting.expected}" if origin is not None
               else f"{name}: expected {setting.expected}, got {value!r}")
    raise SettingError(message, name=name, value=value, origin=origin)


def check_settings(origins: Mapping[str, str] | None = None, /, **values) -> dict:
    """:func:`check_setting` for each of ``values`` (``origins``: setting ->
    the option that gave it); the converted values by name."""
    origins = origins or {}
    return {name: check_setting(name, value, origins.get(name)) for name, value in values.items()}
