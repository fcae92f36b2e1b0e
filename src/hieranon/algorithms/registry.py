"""The method registry: every ``--method`` name, its class, and how to build it.

Algorithms are imported on first use, so listing methods or starting the CLI
stays cheap. :func:`make_algorithm` is the one place a method is instantiated
from a name and a parameter mapping (a configuration file, ``--param`` or
keyword arguments).
"""

from __future__ import annotations

import importlib
import inspect

from .base import Algorithm
from .params import validate_parameters

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
    """The parameters a method declares (:attr:`Algorithm.parameters`), by name, as
    its constructor's signature gives them (defaults, annotations)."""
    klass = _method_class(method)
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
    klass = _method_class(method)
    return klass(**validate_parameters(method, klass.parameters, params))


# ------------------------------------------------------------------ guidance
#: What a custodian needs to choose a method, declared once per method:
#: ``family``, ``paper`` (authors, year), ``needs`` (what the data must give)
#: and ``notes``; what a method supports (several requirements, suppression,
#: privacy models) is read from its class by :func:`method_info`.
METHOD_INFO: dict[str, dict[str, str]] = {
    "kaca+": {"family": "local recoding (clustering)",
              "paper": "after Li, Wong, Fu & Pei 2006/2008 (KACA), this project's search",
              "needs": "", "notes": "lowest distortion; the default"},
    "kaca1": {"family": "local recoding (clustering)", "paper": "Li, Wong, Fu & Pei 2008 (Algorithm 1; KACA 2006)",
              "needs": "", "notes": "k-member clustering, random seeds"},
    "kaca2": {"family": "local recoding (clustering)", "paper": "Li, Wong, Fu & Pei 2008 (Algorithm 2)",
              "needs": "", "notes": "caps the inconsistency (max_inconsistency)"},
    "dbca": {"family": "local recoding (clustering)", "paper": "Sun, Wang & Li 2008 (DBCA)",
             "needs": "", "notes": "density-based KNN clustering, attribute priorities"},
    "dbca-cm": {"family": "local recoding (clustering)", "paper": "Sun, Wang & Li 2008 (DBCA:CM)",
                "needs": "a class column (--class-column)", "notes": "keeps classes label-pure (CM)"},
    "fulldomain": {"family": "global recoding (full-domain lattice)",
                   "paper": "LeFevre, DeWitt & Ramakrishnan 2005 (Incognito); Samarati 2001",
                   "needs": "", "notes": "one level per attribute, optimal in the lattice"},
    "allmin": {"family": "global recoding (full-domain lattice)", "paper": "Arca & Hewett (AllMin)",
               "needs": "", "notes": "every minimal lattice node"},
    "datafly": {"family": "global recoding (full-domain, greedy)", "paper": "Sweeney 2002 (Datafly)",
                "needs": "", "notes": "generalises the attribute with most values first"},
    "mondrian": {"family": "multidimensional partitioning",
                 "paper": "LeFevre, DeWitt & Ramakrishnan 2006 (Mondrian)", "needs": "",
                 "notes": "fast on large tables"},
    "heuristicmin": {"family": "attribute-wise generalisation (best-first search)",
                     "paper": "Arca & Hewett (HeuristicMin)", "needs": "",
                     "notes": "several <attributes, k> requirements, most distinct rows"},
    "mingen": {"family": "cell generalisation (exact integer program)",
               "paper": "Sweeney 2002 (MinGen), as Arca & Hewett apply it",
               "needs": "a small table: at most max_records records (default 400)",
               "notes": "provably minimal; exponential"},
    "tds": {"family": "top-down specialisation", "paper": "Fung, Wang & Yu 2005 (TDS)",
            "needs": "a class column (--class-column)", "notes": "keeps information for classification"},
    "bug": {"family": "bottom-up generalisation", "paper": "Wang, Yu & Chakraborty 2004 (BUG)",
            "needs": "a class column (--class-column)", "notes": "keeps information for classification"},
    "partitioned": {"family": "blocks of another method (scaling)",
                    "paper": "Mondrian-style cuts, LeFevre et al. 2006",
                    "needs": "an inner method (inner_method)",
                    "notes": "cuts the table into blocks of block_size records and anonymises each with the inner "
                             "method, in parallel on Dask with --distributed"},
}


def method_info(method: str) -> dict:
    """A method's guidance: :data:`METHOD_INFO` and what its class supports
    (``multi_requirement``, ``suppression`` -- a suppression parameter --
    and ``privacy_models``; None when the class does not say)."""
    klass = _method_class(method)
    info = {"method": method, "default": method == DEFAULT_METHOD,
            **METHOD_INFO.get(method, {"family": "", "paper": "", "needs": "", "notes": ""})}
    suppression = [p for p in klass.parameters if "suppress" in p]
    info["several_requirements"] = bool(getattr(klass, "multi_requirement", False))
    info["suppression"] = suppression[0] if suppression else None
    privacy = getattr(klass, "privacy_models", None)
    info["privacy_models"] = privacy if isinstance(privacy, bool) else None
    info["parameters"] = list(klass.parameters)
    return info
