"""The method registry: every ``--method`` name, its class, and how to build it.

Algorithms are imported on first use, so listing methods or starting the CLI
stays cheap. :func:`make_algorithm` is the one place a method is instantiated
from a name and a parameter mapping (a configuration file, ``--param`` or
keyword arguments).
"""

from __future__ import annotations

import functools
import importlib
import inspect
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.safeyaml import load_yaml
from .params import refuse_undeclared
from .tags import Tags, get_tags

if TYPE_CHECKING:  # for annotations only: the base class imports the registry
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
#: The method the project recommends for lowest distortion (what ``--method`` defaults to).
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


def method_class(method: str) -> type[Algorithm]:
    """The class registered under a ``--method`` name, imported on first use
    (ValueError naming the method when it is unknown or not installed)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {sorted(METHODS)}")
    module, cls = METHODS[method].split(":")
    try:
        return getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError):
        raise ValueError(f"method {method!r} is not available in this version of hieranon") from None


def method_tags(method: str) -> Tags:
    """What the class registered under a ``--method`` name declares it can do
    (:mod:`hieranon.algorithms.tags`)."""
    return get_tags(method_class(method))


def privacy_methods() -> list[str]:
    """The names of the registered methods that honour privacy models, the
    default first (each a valid ``method``; :func:`marked` lists them for a message)."""
    return methods_with("privacy_models")


def marked(methods: list[str]) -> str:
    """Method names for a message, comma-separated, the default marked ``(default)``."""
    return ", ".join(f"{m} (default)" if m == DEFAULT_METHOD else m for m in methods)


def methods_with(tag: str) -> list[str]:
    """The names of the registered methods whose tag ``tag`` is true
    (``privacy_models``, ``several_requirements``...), the default first."""
    out = []
    for name in METHODS:
        try:
            ok = getattr(method_tags(name), tag)
        except ValueError:
            continue
        if ok:
            out.append(name)
    out.sort(key=lambda m: m != DEFAULT_METHOD)
    return out


def method_parameters(method: str) -> dict[str, inspect.Parameter]:
    """The parameters a method declares (:attr:`Algorithm.parameters`), by name, as
    its constructor's signature gives them (defaults, annotations)."""
    klass = method_class(method)
    sig = inspect.signature(klass.__init__)
    return {n: sig.parameters[n] for n in klass.parameters}


def methods_accepting(parameter: str) -> list[str]:
    """The available methods that declare ``parameter``."""
    return [m for m in available_methods() if parameter in method_parameters(m)]


def make_algorithm(method: str, /, **params) -> Algorithm:
    """Instantiate a method by name with its parameters.

    Parameters the method does not declare are refused, naming them; the
    values are validated against the declaration (ValueError naming the
    method, the parameter, the value and what is allowed).
    """
    klass = method_class(method)
    refuse_undeclared(method, klass.parameters, params)
    return klass(**params)  # the constructor validates the values (Algorithm.__init_subclass__)


# ------------------------------------------------------------------ guidance
@functools.cache
def _load_method_info() -> dict[str, dict[str, str]]:
    path = Path(__file__).resolve().parent.parent / "data" / "methods.yaml"
    return load_yaml(path.read_text(encoding="utf-8"), source=f"shipped file {path}")


#: What a custodian needs to choose a method, declared once per method (``data/methods.yaml``):
#: ``family``, ``paper`` (authors, year), ``needs`` (what the data must give)
#: and ``notes``; what a method supports (several requirements, suppression,
#: privacy models...) is read from its tags by :func:`method_info`.
#: (``METHOD_INFO``, read on first use.)
def __getattr__(name: str):
    if name == "METHOD_INFO":
        return _load_method_info()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def method_info(method: str) -> dict:
    """A method's guidance: :data:`METHOD_INFO` and what its tags say it
    supports (``several_requirements``; ``suppression``, its own suppression
    parameter; ``max_suppression``, whether it takes a record budget;
    ``privacy_models``; ``class_column``; ``randomised``; ``exact``)."""
    tags = method_tags(method)
    info = {"method": method, "default": method == DEFAULT_METHOD,
            **_load_method_info().get(method, {"family": "", "paper": "", "needs": "", "notes": ""})}
    info["several_requirements"] = tags.several_requirements
    info["suppression"] = tags.suppression.setting
    info["max_suppression"] = tags.suppression.takes_budget
    info["privacy_models"] = tags.privacy_models
    info["class_column"] = tags.needs_class_column
    info["randomised"] = tags.randomised
    info["exact"] = tags.exact
    info["parameters"] = list(method_class(method).parameters)
    return info
