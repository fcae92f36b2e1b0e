"""The interface every anonymisation algorithm implements.

Algorithms never parse files or touch DataFrames: they receive a
:class:`Problem` (integer codes, hierarchies, requirements, a cost model,
a seed) and return a :class:`Solution` (a generalised code matrix with one
row per input row, in order, and which rows were suppressed). The API layer
(:mod:`hieranon.job.pipeline`) encodes, calls, decodes and verifies.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from ..core.cost import CostModel
from ..core.jit import compiled_before, interpreted, small_table
from ..core.requirements import Requirement
from ..core.table import EncodedTable
from ..privacy import check_feasible
from ..privacy.risk_models import risk_feasible
from .params import validate_parameters
from .registry import marked, methods_with, privacy_methods  # noqa: F401 - privacy_methods re-exported
from .risk_repair import enforce_risk
from .tags import Tags, get_tags

log = logging.getLogger("hieranon.algorithms")


def with_smallest_class(problem: Problem) -> Problem:
    """``problem`` with its k raised to the fewest records a class meeting
    every privacy model can hold (:meth:`~hieranon.privacy.BoundModel.min_class_size`),
    when that is more: no smaller class can be part of an answer, and
    clustering at that size from the start beats repairing small classes
    afterwards. Several requirements, or a k already that large: unchanged."""
    needed = max((b.min_class_size() for b in problem.privacy), default=1)
    if needed <= problem.k or not problem.single_full_requirement:
        return problem
    log.info("privacy models need classes of >= %d records: clustering at k = %d (asked: %d)", needed, needed,
             problem.k)
    return dataclasses.replace(problem, requirements=[Requirement(tuple(problem.table.qi_names), needed)])


@dataclass
class Problem:
    """What an algorithm works on.

    Attributes
    ----------
    table : EncodedTable
        Leaf codes (n_rows, n_qis), hierarchies, QI names, record counts.
    requirements : list[Requirement]
        All must hold on the output (a single k over all QIs is one requirement).
    cost : CostModel
        The distortion measure the algorithm minimises (WHD uniform by default).
    seed : int | None
        Seed for every random choice.
    class_labels : ndarray | None
        Class column (for DBCA:CM, TDS, BUG, CM).
    privacy : list[BoundModel]
        Privacy models on sensitive attributes, bound to the input table
        (:mod:`hieranon.privacy`); every equivalence class of the output,
        the suppressed records one more, must satisfy each.
    risk : list[BoundRiskModel]
        Risk-based models (:mod:`hieranon.privacy.risk_models`: k-map,
        delta-presence, average risk) bound to the encoded table; the output's
        classes must satisfy each, enforced after the method's own work by
        :func:`hieranon.algorithms.risk_repair.enforce_risk`.
    weights : ndarray | None
        Sampling weight of each row (people of the population it stands for),
        for the individual risk of the input and the release; None: every
        record stands for 1/f people, f the sampling fraction. No method reads it.
    """

    table: EncodedTable
    requirements: list[Requirement]
    cost: CostModel
    seed: int | None = 0
    class_labels: np.ndarray | None = None
    privacy: list = field(default_factory=list)
    risk: list = field(default_factory=list)
    weights: np.ndarray | None = None

    @property
    def k(self) -> int:
        """The largest k over requirements (the k of a single-requirement problem)."""
        return max(r.k for r in self.requirements)

    @property
    def single_full_requirement(self) -> bool:
        """True when the requirements reduce to one k over all QIs."""
        return all(set(r.attributes) == set(self.table.qi_names) for r in self.requirements)

    def rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed)


@dataclass
class Details:
    """Algorithm-specific facts about one solution (base of one dataclass per family).

    Each family documents its fields; :meth:`as_dict` is the plain-dict form
    (:attr:`Solution.info`).
    """

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (values not copied), leaving out those that do not apply (None)."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not None}


@dataclass
class Solution:
    """What an algorithm returns.

    Attributes
    ----------
    codes : ndarray (n_rows, n_qis) of int32
        Generalised node codes, row i generalising input row i.
    suppressed : ndarray (n_rows,) of bool
        Rows suppressed (their codes are all the root).
    details : Details or None
        Algorithm-specific details, a dataclass of the method's family
        (lattice node, merges, blocks...); see each method's documentation.
    relaxed : RelaxedPrices or None
        The multipliers a Lagrangian relaxation of the same problem reached
        while solving it (kaca+'s Lagrangian output), with the relaxed
        program they price: a lower bound of the problem goes on from them
        (:func:`hieranon.bounds.problem_lower_bound`, ``resume``). It holds
        the whole program (hundreds of megabytes on a large table): the job
        pipeline lets it go once the bound, if asked for, is computed.
    """

    codes: np.ndarray
    suppressed: np.ndarray
    details: Details | None = None
    relaxed: Any = field(default=None, repr=False, compare=False)

    @property
    def info(self) -> Mapping[str, Any]:
        """The details in their plain-dict form (read-only; empty when there are none)."""
        return MappingProxyType(self.details.as_dict() if self.details is not None else {})


class Algorithm(ABC):
    """Base class: declared parameters (validated at construction), declared
    capabilities (:attr:`tags`), work in :meth:`_solve`.

    A subclass declares its constructor's parameters in :attr:`parameters`
    (name -> constraint, see :mod:`hieranon.algorithms.params`). The
    constructor's arguments are checked against the declaration, normalised
    (numpy scalars to Python numbers) and stored as attributes of the same
    names before the subclass's ``__init__`` body runs; the body only
    documents the signature or derives further state. What the method can do
    (several requirements, privacy models, a class column, suppression...) is
    its :attr:`tags` (:mod:`hieranon.algorithms.tags`). :meth:`solve` checks
    the problem against them (:meth:`check_problem`) once, then calls
    :meth:`_solve` (through :meth:`solve_checked`, which a caller that checked
    the problem itself calls directly). As with scikit-learn estimators (Pedregosa et al. 2011;
    Buitinck et al. 2013), :meth:`get_params`, :meth:`set_params` and
    :func:`clone` rebuild an equal method from its parameters.
    """

    #: CLI/API name (``--method``)
    name: str = ""
    #: The constructor's parameters: name -> constraint (or a shorthand such as ``bool``)
    parameters: ClassVar[dict[str, Any]] = {}
    #: What the method can do, read through :func:`~hieranon.algorithms.tags.get_tags`
    tags: ClassVar[Tags] = Tags()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None or getattr(init, "_validates_parameters", False):
            return
        signature = inspect.signature(init)

        @functools.wraps(init)
        def validated_init(self, *args, **kw):
            bound = signature.bind(self, *args, **kw)
            bound.apply_defaults()
            declared = type(self).parameters
            given = {n: v for n, v in bound.arguments.items() if n in declared}
            valid = validate_parameters(type(self).name, declared, given)
            for name, value in valid.items():
                setattr(self, name, value)
            bound.arguments.update(valid)
            init(*bound.args, **bound.kwargs)

        validated_init._validates_parameters = True
        cls.__init__ = validated_init

    def __hieranon_tags__(self) -> Tags:
        """This instance's capabilities: the class's :attr:`tags` unless they
        depend on the parameters (read them with :func:`~hieranon.algorithms.tags.get_tags`)."""
        return type(self).tags

    def solve(self, problem: Problem) -> Solution:
        """Anonymise ``problem``; the output satisfies every requirement (and
        every privacy model). A problem the method cannot solve, or a privacy
        model the whole table violates, is refused before any work."""
        self.check_problem(problem)
        check_feasible(problem.privacy)
        risk_feasible(problem.risk)
        return self.solve_checked(problem)

    def solve_checked(self, problem: Problem) -> Solution:
        """:meth:`solve` on a problem already checked (:meth:`check_problem`
        and :func:`~hieranon.privacy.check_feasible` passed): a caller that
        refuses bad problems before its own work (the job pipeline), or a
        wrapper solving the problem it checked, does not check it again."""
        with interpreted(self._run_as_python(problem)):
            solution = self._solve(with_smallest_class(problem))
        if not problem.risk:
            return solution
        codes, sup, info = enforce_risk(problem, solution.codes, solution.suppressed)
        details = solution.details
        if details is not None and isinstance(getattr(details, "privacy", None), dict):
            details.privacy.update(info)
        elif details is not None and hasattr(details, "privacy"):
            details.privacy = info
        return Solution(codes, sup, details, solution.relaxed)  # the risk only suppresses: the bound still holds

    def _run_as_python(self, problem: Problem) -> bool:
        """Run the kernels as Python rather than compile them: only on a small
        table without privacy models (their repair runs the kernels many
        times: 300 rows of ISLR Wage with an l and a t model took 153 s as
        Python, 14 s compiled) and while this method's kernels have not been
        compiled on this machine yet (:func:`hieranon.core.jit.compiled_before`)."""
        table = problem.table
        return (not problem.privacy and small_table(table.n_rows, [h.height for h in table.hierarchies])
                and not compiled_before(type(self).__module__))

    @abstractmethod
    def _solve(self, problem: Problem) -> Solution:
        """The method itself, on a problem :meth:`check_problem` accepted."""

    def check_problem(self, problem: Problem) -> None:
        """Refuse a problem this method's tags say it cannot solve (ValueError
        saying why, in one line): several requirements, privacy models, a
        missing class column."""
        tags = get_tags(self)
        if not tags.several_requirements and not problem.single_full_requirement:
            raise ValueError(
                f"method {self.name!r} supports one k over all quasi-identifiers; "
                f"use {marked(methods_with('several_requirements'))} for several requirements over "
                "different attribute sets"
            )
        if problem.privacy and not tags.privacy_models:
            raise ValueError(
                f"method {self.name!r} does not support l-diversity / t-closeness; "
                f"use {marked(privacy_methods())}"
            )
        if problem.risk and not tags.privacy_models:
            raise ValueError(
                f"method {self.name!r} does not support privacy models ({problem.risk[0].describe()}); "
                f"use {marked(privacy_methods())}"
            )
        if problem.risk and not problem.single_full_requirement:
            raise ValueError(f"{problem.risk[0].describe()} needs one k over all quasi-identifiers, not several "
                             "requirements over different attribute sets")
        if tags.needs_class_column:
            if problem.class_labels is None:
                raise ValueError(
                    f"method {self.name!r} needs a class column (class_column=... in the API, --class-column on "
                    "the command line): it reads the class of every record"
                )
            if len(problem.class_labels) != problem.table.n_rows:
                raise ValueError(f"method {self.name!r}: {len(problem.class_labels)} class labels for "
                                 f"{problem.table.n_rows} rows")

    # ------------------------------------------------------------ parameters
    def get_params(self, deep: bool = False) -> dict[str, Any]:
        """The declared parameters and their values: ``type(self)(**get_params())``
        builds an equal method. With ``deep``, the parameters of a nested method
        follow too, as ``<parameter>__<its parameter>`` (scikit-learn's convention)."""
        out = {name: getattr(self, name) for name in self.parameters}
        if deep:
            for name, value in list(out.items()):
                if isinstance(value, Algorithm):
                    out.update({f"{name}__{k}": v for k, v in value.get_params(deep=True).items()})
        return out

    def set_params(self, **params: Any) -> Algorithm:
        """Change parameters (``<parameter>__<its parameter>`` for a nested
        method) and return this method. They are checked as at construction,
        all before any is changed: a value refused leaves the method as it was."""
        own: dict[str, Any] = {}
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, sep, sub = key.partition("__")
            if sep:
                nested.setdefault(name, {})[sub] = value
            else:
                own[key] = value
        label = type(self).name or type(self).__name__
        unknown = {n: None for n in nested if n not in self.parameters}
        own = validate_parameters(label, self.parameters, {**unknown, **own})  # refuses the unknown names
        merged = {**self.get_params(), **own}
        for name, sub in nested.items():
            inner = merged[name]
            if not isinstance(inner, Algorithm):
                raise ValueError(f"method {self.name!r}: parameter {name} holds no method, so {name}__"
                                 f"{next(iter(sub))} cannot be set")
            merged[name] = clone(inner).set_params(**sub)
        fresh = type(self)(**merged)
        vars(self).update(vars(fresh))
        return self

    def run_params(self) -> dict[str, Any]:
        """The parameters as a result records them (plain values; a wrapper adds
        its own to those of the method it wraps)."""
        return self.get_params()

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"


def clone(method: Algorithm) -> Algorithm:
    """A new, unused method of the same class with equal parameters (nested
    methods cloned too, other values deep-copied), as scikit-learn's
    ``clone`` (Buitinck et al. 2013): nothing a run left on ``method`` is carried over."""
    if not isinstance(method, Algorithm):
        raise TypeError(f"clone: {method!r} is not a hieranon algorithm")
    params = {name: clone(value) if isinstance(value, Algorithm) else copy.deepcopy(value)
              for name, value in method.get_params().items()}
    return type(method)(**params)
