"""The interface every anonymisation algorithm implements.

Algorithms never parse files or touch DataFrames: they receive a
:class:`Problem` (integer codes, hierarchies, requirements, a cost model,
a seed) and return a :class:`Solution` (a generalised code matrix with one
row per input row, in order, and which rows were suppressed). The API layer
(:mod:`hieranon.job.pipeline`) encodes, calls, decodes and verifies.
"""

from __future__ import annotations

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
from .params import validate_parameters
from .registry import methods_with, privacy_methods  # noqa: F401 - privacy_methods re-exported

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
    """

    table: EncodedTable
    requirements: list[Requirement]
    cost: CostModel
    seed: int | None = 0
    class_labels: np.ndarray | None = None
    privacy: list = field(default_factory=list)

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
    """

    codes: np.ndarray
    suppressed: np.ndarray
    details: Details | None = None

    @property
    def info(self) -> Mapping[str, Any]:
        """The details in their plain-dict form (read-only; empty when there are none)."""
        return MappingProxyType(self.details.as_dict() if self.details is not None else {})


class Algorithm(ABC):
    """Base class: declared parameters (validated at construction), work in :meth:`_solve`.

    A subclass declares its constructor's parameters in :attr:`parameters`
    (name -> constraint, see :mod:`hieranon.algorithms.params`). The
    constructor's arguments are checked against the declaration, normalised
    (numpy scalars to Python numbers) and stored as attributes of the same
    names before the subclass's ``__init__`` body runs; the body only
    documents the signature or derives further state. :meth:`solve` checks the problem
    (:meth:`check_problem`) once, then calls :meth:`_solve`.
    """

    #: CLI/API name (``--method``)
    name: str = ""
    #: True when the algorithm handles several requirements over different attribute sets
    multi_requirement: bool = False
    #: The constructor's parameters: name -> constraint (or a shorthand such as ``bool``)
    parameters: ClassVar[dict[str, Any]] = {}
    #: True when every class of the output (the suppressed records one more) satisfies
    #: the privacy models of ``problem.privacy``; False: such a problem is refused
    privacy_models: ClassVar[bool] = False

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

    def solve(self, problem: Problem) -> Solution:
        """Anonymise ``problem``; the output satisfies every requirement (and
        every privacy model). A problem the method cannot solve, or a privacy
        model the whole table violates, is refused before any work."""
        self.check_problem(problem)
        check_feasible(problem.privacy)
        with interpreted(self._run_as_python(problem)):
            return self._solve(with_smallest_class(problem))

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
        """Refuse a problem this method cannot solve (ValueError saying why)."""
        if not self.multi_requirement and not problem.single_full_requirement:
            raise ValueError(
                f"method {self.name!r} supports one k over all quasi-identifiers; "
                f"use {', '.join(methods_with('multi_requirement'))} for several requirements over "
                "different attribute sets"
            )
        if problem.privacy and not self.privacy_models:
            raise ValueError(
                f"method {self.name!r} does not support l-diversity / t-closeness; "
                f"use {', '.join(privacy_methods())}"
            )

    def get_params(self) -> dict[str, Any]:
        """The declared parameters and their values."""
        return {name: getattr(self, name) for name in self.parameters}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"
