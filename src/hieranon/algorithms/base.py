"""The interface every anonymisation algorithm implements.

Algorithms never parse files or touch DataFrames: they receive a
:class:`Problem` (integer codes, hierarchies, requirements, a cost model,
a seed) and return a :class:`Solution` (a generalised code matrix with one
row per input row, in order, and which rows were suppressed). The API layer
(:mod:`hieranon.api`) encodes, calls, decodes and verifies.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from ..metrics import CostModel
from ..requirements import Requirement
from ..table import EncodedTable

log = logging.getLogger("hieranon.algorithms")


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
class Solution:
    """What an algorithm returns.

    Attributes
    ----------
    codes : ndarray (n_rows, n_qis) of int32
        Generalised node codes, row i generalising input row i.
    suppressed : ndarray (n_rows,) of bool
        Rows suppressed (their codes are all the root).
    info : dict
        Algorithm-specific details (lattice node, search trace, merges...).
    """

    codes: np.ndarray
    suppressed: np.ndarray
    info: dict = field(default_factory=dict)


class Algorithm(ABC):
    """Base class: parameters in the constructor (validated there), work in :meth:`solve`."""

    #: CLI/API name (``--method``)
    name: str = ""
    #: True when the algorithm handles several requirements over different attribute sets
    multi_requirement: bool = False

    @abstractmethod
    def solve(self, problem: Problem) -> Solution:
        """Anonymise ``problem``; must satisfy every requirement."""

    def check_problem(self, problem: Problem) -> None:
        if not self.multi_requirement and not problem.single_full_requirement:
            raise ValueError(
                f"method {self.name!r} supports one k over all quasi-identifiers; "
                "use 'heuristicmin' for several requirements over different attribute sets"
            )

    def get_params(self) -> dict:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"
