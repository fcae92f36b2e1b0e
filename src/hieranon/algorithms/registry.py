"""The method registry: every ``--method`` name, its class, and how to build it.

Algorithms are imported on first use, so listing methods or starting the CLI
stays cheap. :func:`make_algorithm` is the one place a method is instantiated
from a name and a parameter mapping (a configuration file, ``--param`` or
keyword arguments).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping

import numpy as np

from .base import Algorithm

#: ``--method`` name -> "module:Class" (imported on first use)
METHODS: dict[str, str] = {
    "kaca1": "hieranon.algorithms.kaca:KACA1",
    "kaca2": "hieranon.algorithms.kaca:KACA2",
    "fulldomain": "hieranon.algorithms.fulldomain:FullDomain",
    "allmin": "hieranon.algorithms.fulldomain:AllMin",
    "datafly": "hieranon.algorithms.fulldomain:Datafly",
    "mondrian": "hieranon.algorithms.mondrian:Mondrian",
    "heuristicmin": "hieranon.algorithms.heuristicmin:HeuristicMin",
    "mingen": "hieranon.algorithms.mingen:MinGen",
    "tds": "hieranon.algorithms.tds:TDS",
    "bug": "hieranon.algorithms.bug:BUG",
    "dbca": "hieranon.algorithms.dbca:DBCA",
    "dbca-cm": "hieranon.algorithms.dbca:DBCACM",
    "partitioned": "hieranon.algorithms.partition:Partitioned",
    "kaca+": "hieranon.algorithms.kacaplus:KACAPlus",
}
#: The method the project recommends for lowest distortion (SPEC section 7).
DEFAULT_METHOD = "kaca+"


def available_methods() -> list[str]:
    """Methods whose implementation is installed."""
    out = []
    for name, target in METHODS.items():
        module = target.split(":")[0]
        try:
            importlib.import_module(module)
        except ImportError:
            continue
        out.append(name)
    return out


def _method_class(method: str):
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(METHODS)}")
    module, cls = METHODS[method].split(":")
    try:
        return getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError):
        raise ValueError(f"method {method!r} is not available in this version of hieranon") from None


def method_parameters(method: str) -> dict[str, inspect.Parameter]:
    """The parameters a method's constructor takes, by name."""
    sig = inspect.signature(_method_class(method).__init__)
    return {n: p for n, p in sig.parameters.items()
            if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def methods_accepting(parameter: str) -> list[str]:
    """The available methods whose constructor takes ``parameter``."""
    return [m for m in available_methods() if parameter in method_parameters(m)]


def _check_param_types(method: str, params: Mapping, accepted: dict[str, inspect.Parameter]) -> None:
    """Reject a value whose type cannot be the parameter's (e.g. a string for a
    number), naming the parameter and the type expected; the constructor checks ranges."""
    for name, value in params.items():
        p = accepted[name]
        default = p.default
        annotation = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
        numeric = (isinstance(default, (int, float)) and not isinstance(default, bool)) or (
            default in (None, inspect.Parameter.empty) and annotation.split("|")[0].strip() in ("int", "float"))
        if numeric and "str" not in annotation and (isinstance(value, (str, bool)) or not isinstance(
                value, (int, float, np.integer, np.floating))) and not (value is None and default is None):
            raise ValueError(f"method {method!r}: invalid parameter {name}: expected a number, got {value!r}")
        if isinstance(default, bool) and not isinstance(value, (bool, np.bool_)) and value not in (0, 1):
            raise ValueError(f"method {method!r}: invalid parameter {name}: expected true or false, got {value!r}")


def make_algorithm(method: str, **params) -> Algorithm:
    """Instantiate a method by name with its parameters (validated by its constructor)."""
    klass = _method_class(method)
    accepted = method_parameters(method)
    takes_any = klass.__init__ is not object.__init__ and any(
        p.kind == p.VAR_KEYWORD for p in inspect.signature(klass.__init__).parameters.values())
    unknown = sorted(set(params) - set(accepted))
    if unknown and not takes_any:
        raise ValueError(f"method {method!r}: invalid parameter(s) {', '.join(unknown)}: it takes "
                         f"{', '.join(accepted) or 'none'}")
    _check_param_types(method, {n: v for n, v in params.items() if n in accepted}, accepted)
    try:
        return klass(**params)
    except TypeError as exc:
        raise ValueError(f"method {method!r}: invalid parameter(s): {exc}") from None
