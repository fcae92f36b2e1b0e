"""Declared parameters of an algorithm and their constraints.

Each :class:`~hieranon.algorithms.base.Algorithm` subclass declares its
constructor's parameters once, as a class attribute mapping a name to what
it accepts (in the manner of scikit-learn's ``_parameter_constraints``)::

    parameters = {"restarts": Interval(Integral, 1, None) | None,
                  "refine": bool,
                  "construction": Options("sweep", "growth")}

A value is accepted when any of its constraints accepts it. Shorthands:
``bool`` (Python or numpy booleans), ``None``, ``str``, ``dict``, ``list``
and ``callable``. Numbers accept numpy scalars wherever Python numbers are
accepted, never booleans; an accepted value is normalised to the plain
Python type (``int``, ``float``, ``bool``) so that outputs do not depend on
whether a number came from numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = ["Constraint", "Interval", "Options", "Boolean", "NoneValue", "InstanceOf", "CallableValue", "AnyOf",
           "as_constraint", "validate_parameters"]


class Constraint:
    """What one parameter accepts; ``a | b`` accepts what either accepts."""

    def accepts(self, value: Any) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def convert(self, value: Any) -> Any:
        """The normalised form of an accepted value (default: unchanged)."""
        return value

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def __or__(self, other) -> AnyOf:
        return AnyOf(self, as_constraint(other))

    def __ror__(self, other) -> AnyOf:
        return AnyOf(as_constraint(other), self)

    def __repr__(self) -> str:
        return f"<{self.describe()}>"


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


class Interval(Constraint):
    """A whole (``Integral``) or real (``Real``) number in ``[low, high]``.

    ``low``/``high`` None leave that side open-ended; ``closed`` says which
    ends are included (``"both"``, ``"left"``, ``"right"``, ``"neither"``).
    Booleans and NaN are refused; numpy scalars are accepted and converted to
    ``int``/``float``.
    """

    def __init__(self, kind: type, low: float | None, high: float | None, *, closed: str = "both"):
        if kind not in (Integral, Real):
            raise TypeError("Interval kind must be numbers.Integral or numbers.Real")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be 'both', 'left', 'right' or 'neither', got {closed!r}")
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def accepts(self, value: Any) -> bool:
        if _is_bool(value) or not isinstance(value, self.kind):
            return False
        if isinstance(value, Real) and math.isnan(float(value)):
            return False
        if self.low is not None and (value < self.low or (value == self.low and self.closed in ("right", "neither"))):
            return False
        return self.high is None or not (value > self.high or (value == self.high and self.closed in ("left",
                                                                                                      "neither")))

    def convert(self, value: Any) -> Any:
        return int(value) if self.kind is Integral else float(value)

    def describe(self) -> str:
        what = "a whole number" if self.kind is Integral else "a number"
        lo_in, hi_in = self.closed in ("both", "left"), self.closed in ("both", "right")
        if self.low is not None and self.high is not None:
            return f"{what} in {'[' if lo_in else '('}{self.low}, {self.high}{']' if hi_in else ')'}"
        if self.low is not None:
            return f"{what} {'>=' if lo_in else '>'} {self.low}"
        if self.high is not None:
            return f"{what} {'<=' if hi_in else '<'} {self.high}"
        return what


class Options(Constraint):
    """One of a fixed set of strings."""

    def __init__(self, *values: str):
        self.values = tuple(values)

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.values

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


class Boolean(Constraint):
    """True or False (Python or numpy booleans; not 0/1)."""

    def accepts(self, value: Any) -> bool:
        return _is_bool(value)

    def convert(self, value: Any) -> bool:
        return bool(value)

    def describe(self) -> str:
        return "true or false"


class NoneValue(Constraint):
    """None (the parameter's automatic default)."""

    def accepts(self, value: Any) -> bool:
        return value is None

    def describe(self) -> str:
        return "None"


class InstanceOf(Constraint):
    """An instance of a type (``str``, ``dict``, ``list``...)."""

    def __init__(self, kind: type | tuple[type, ...], convert: Callable[[Any], Any] | None = None):
        self.kind, self._convert = kind, convert

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.kind)

    def convert(self, value: Any) -> Any:
        return self._convert(value) if self._convert is not None else value

    def describe(self) -> str:
        kinds = self.kind if isinstance(self.kind, tuple) else (self.kind,)
        return " or ".join(f"a {k.__name__}" for k in kinds)


class CallableValue(Constraint):
    """A callable."""

    def accepts(self, value: Any) -> bool:
        return callable(value)

    def describe(self) -> str:
        return "a callable"


class AnyOf(Constraint):
    """Any of several constraints (the first that accepts converts)."""

    def __init__(self, *constraints: Constraint):
        flat: list[Constraint] = []
        for c in constraints:
            flat.extend(c.constraints if isinstance(c, AnyOf) else (c,))
        self.constraints = tuple(flat)

    def _first(self, value: Any) -> Constraint | None:
        return next((c for c in self.constraints if c.accepts(value)), None)

    def accepts(self, value: Any) -> bool:
        return self._first(value) is not None

    def convert(self, value: Any) -> Any:
        return self._first(value).convert(value)

    def describe(self) -> str:
        return " or ".join(c.describe() for c in self.constraints)


def as_constraint(spec: Any) -> Constraint:
    """A :class:`Constraint` from a declaration (a constraint or a shorthand)."""
    if isinstance(spec, Constraint):
        return spec
    if spec is None:
        return NoneValue()
    if spec is bool:
        return Boolean()
    if spec is callable:
        return CallableValue()
    if spec is list:
        return InstanceOf((list, tuple), list)
    if spec is dict:
        return InstanceOf(Mapping, dict)
    if isinstance(spec, type):
        return InstanceOf(spec)
    raise TypeError(f"cannot make a parameter constraint of {spec!r}")


def refuse_undeclared(method: str, declared: Mapping[str, Any], names) -> None:
    """Refuse (ValueError naming them and what the method takes) the ``names`` not ``declared``."""
    unknown = sorted(set(names) - set(declared))
    if unknown:
        raise ValueError(f"method {method!r}: invalid parameter(s) {', '.join(unknown)}: it takes "
                         f"{', '.join(declared) or 'none'}")


def validate_parameters(method: str, declared: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``values`` against the ``declared`` constraints; return them normalised.

    Raises ValueError naming the method, the parameter, the value and what
    is allowed; names not declared are refused, naming them.
    """
    refuse_undeclared(method, declared, values)
    out = {}
    for name, value in values.items():
        constraint = as_constraint(declared[name])
        if not constraint.accepts(value):
            raise ValueError(f"method {method!r}: invalid parameter {name}={value!r}: expected "
                             f"{constraint.describe()}")
        out[name] = constraint.convert(value)
    return out
