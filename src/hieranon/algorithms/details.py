"""What each family of methods reports about a solution (:attr:`Solution.details`).

One dataclass per family; :meth:`Details.as_dict` (and :attr:`Solution.info`)
is the plain-dict form, without the fields that do not apply (None).
Distortions are in the problem's cost model (``*_int``: integer units of
:attr:`~hieranon.core.cost.CostModel.scale`); times are seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .base import Details

__all__ = ["KACADetails", "KACA2Details", "KACAPlusDetails", "LatticeDetails", "FullDomainDetails",
           "AllMinDetails", "DataflyDetails", "MondrianDetails", "HeuristicMinDetails", "MinGenDetails",
           "TDSDetails", "BUGDetails", "DBCADetails", "PartitionedDetails"]


@dataclass
class KACADetails(Details):
    """KACA1 (Li et al. 2006, Algorithm 1).

    merges, iterations : merges performed, loop iterations.
    distance_sum, distance_sum_int : the sum of the merge distances (the distortion KACA adds).
    suppressed_records : records suppressed; suppressed_to_reach_k : of them, those of classes still short of k.
    classes_in, classes_out : equivalence classes before and after.
    nodes_expanded : trie nodes visited by the nearest-class searches.
    fast : whether the trie search ran.
    time_loop, time_total : seconds.
    merge_log, initial_classes : the merges and starting classes, when recorded (else None).
    privacy : with privacy models, the repair's steps (``privacy_merges``, ``privacy_moves``...,
    ``privacy_distortion_added``), made after the clustering (else None).
    requirements : with several requirements over different attribute sets, the essential ones,
    the order kept (``best_order``), one entry per order tried (``runs``) and the repair's
    unions; the counts above then sum the clusterings of the order kept (else None).
    """

    merges: int
    distance_sum: float
    distance_sum_int: int
    suppressed_records: int
    suppressed_to_reach_k: int
    iterations: int
    classes_in: int
    classes_out: int
    nodes_expanded: int
    fast: bool
    time_loop: float
    time_total: float
    merge_log: np.ndarray | None = None
    initial_classes: tuple[np.ndarray, np.ndarray] | None = None
    privacy: dict[str, Any] | None = None
    requirements: dict[str, Any] | None = None


@dataclass
class KACA2Details(KACADetails):
    """KACA2 (Li et al. 2006, Algorithm 2): KACA1's details plus the two level steps.

    distortion_global_step, distortion_final_step, distortion_total : distortion added by each step.
    global_levels, final_rounds : per QI name, levels climbed before KACA1 and rounds after it.
    max_inconsistency : the bound applied.
    """

    distortion_global_step: float = 0.0
    distortion_final_step: float = 0.0
    distortion_total: float = 0.0
    global_levels: dict[str, int] = field(default_factory=dict)
    final_rounds: dict[str, int] = field(default_factory=dict)
    max_inconsistency: float = 0.0


@dataclass
class KACAPlusDetails(Details):
    """KACA+.

    distortion, distortion_int : the output's distortion.
    best_run : index of the run kept in ``runs``; runs : one dict per run (construction and
    refinement counts, ``stub_weight``, ``distortion_int``, times).
    time_total : seconds.
    privacy : with privacy models, the repair's steps (``privacy_merges``, ``privacy_moves``...,
    ``privacy_distortion_added``); ``distortion`` is then the clustering's, before the repair.
    requirements : with several requirements over different attribute sets, the essential
    ones, the order kept (``best_order``; ``runs`` then has one entry per order tried) and the
    repair's unions (else None).
    share_sweep : whether the sweep made its classes hold a privacy model's share
    (``KACAPlus(share_sweep=...)``).
    """

    distortion_int: int
    distortion: float
    best_run: int
    runs: list[dict[str, Any]]
    time_total: float
    privacy: dict[str, Any] | None = None
    requirements: dict[str, Any] | None = None
    share_sweep: bool = False


@dataclass
class LatticeDetails(Details):
    """Full-domain methods: the lattice node applied.

    node : generalisation steps per QI (in ``qi_names`` order).
    nodes_checked, lattice_size : nodes whose classes were counted, and all nodes.
    suppressed : records suppressed.
    search_complete : False when an exact search stopped at its time limit or node budget.
    """

    node: list[int]
    nodes_checked: int
    lattice_size: int
    suppressed: int
    qi_names: list[str]
    search_complete: bool = True


@dataclass
class FullDomainDetails(LatticeDetails):
    """Optimal full-domain search.

    objective, cost : what the node minimises and its value; precision : ``1 - cost / cells``
    for ``objective="prec"`` (else None).
    optimal_nodes : every feasible node of the least cost; minimal_nodes (+ minimal_nodes_complete):
    the minimal feasible nodes settled. nodes_rolled_up : nodes counted from a finer node.
    """

    objective: str = ""
    cost: float = 0.0
    optimal_nodes: list[list[int]] = field(default_factory=list)
    minimal_nodes: list[list[int]] = field(default_factory=list)
    minimal_nodes_complete: bool = False
    nodes_rolled_up: int = 0
    precision: float | None = None


@dataclass
class AllMinDetails(LatticeDetails):
    """Samarati's AllMin: height (least feasible height), nodes (all feasible nodes of it),
    heights_probed (the binary search's heights)."""

    height: int = 0
    nodes: list[list[int]] = field(default_factory=list)
    heights_probed: list[int] = field(default_factory=list)


@dataclass
class DataflyDetails(LatticeDetails):
    """Datafly: steps, the attribute generalised at each iteration."""

    steps: list[str] = field(default_factory=list)


@dataclass
class MondrianDetails(Details):
    """Mondrian (LeFevre et al. 2006).

    partitions, partition (row -> partition), partition_sizes, cuts.
    numeric : attributes cut by value; strict, categorical : the settings.
    ncp, ncp_hierarchy : normalised certainty penalty (numeric ranges; every attribute by its LCA).
    ranges : per numeric attribute, the "min-max" of every partition (with ``numeric_ranges``; else None).
    """

    partitions: int
    partition: np.ndarray
    partition_sizes: np.ndarray
    cuts: int
    numeric: list[str]
    strict: bool
    categorical: str
    ncp: float
    ncp_hierarchy: float
    ranges: dict[str, list[str]] | None = None


@dataclass
class HeuristicMinDetails(Details):
    """HeuristicMin (Sun et al.).

    generated, expanded : tables generated (duplicates not counted) and expanded.
    trace : ``(violations, rows)`` per generated table; tree : ``(parent, attribute)`` per table.
    input_rows, input_violations, rows, result_index (0: the input) : of the input and the result.
    complete : optimality proven; settings : the modes used; fallback : whether the literal
    sibling reading dead-ended (``siblings="paper"`` only, else None).
    """

    generated: int
    expanded: int
    trace: list[tuple[int, int]]
    tree: list[tuple[int, str]]
    input_rows: int
    input_violations: int
    complete: bool
    settings: dict[str, str]
    result_index: int = 0
    rows: int = 0
    fallback: bool | None = None


@dataclass
class MinGenDetails(Details):
    """MinGen's integer program.

    mode, objective, optimal, n_variables, n_constraints, n_units, n_candidates_unpruned.
    steps, objective_value, precision_loss : of the solution; distortion (objective "distortion").
    parts : per unit, its generalisations with record counts.
    expanded, record_row : whether the output has one row per record, and each record's input row.
    """

    mode: str
    objective: str
    optimal: bool
    n_variables: int
    n_constraints: int
    n_units: int
    n_candidates_unpruned: int
    steps: int = 0
    objective_value: int = 0
    precision_loss: float = 0.0
    parts: list = field(default_factory=list)
    expanded: bool = False
    distortion: float | None = None
    record_row: np.ndarray | None = None


@dataclass
class TDSDetails(Details):
    """TDS: specialisations, ``(attribute, node label, score, info_gain, anony_loss)`` in order."""

    specialisations: list[tuple]
    n_steps: int


@dataclass
class BUGDetails(Details):
    """BUG: generalisations, ``(attribute, parent label, IP, info_loss, anony_gain, kind)`` in order."""

    generalisations: list[tuple]
    n_steps: int


@dataclass
class DBCADetails(Details):
    """DBCA / DBCA:CM: cluster_sizes (records), cluster_of_row, n_clusters, n_points, centre_fallbacks,
    leftover_records, tie_break, timings (seconds per phase), penalty (DBCA:CM only, else None);
    privacy: with privacy models, the repair's steps after the clustering (``cluster_of_row`` and
    ``cluster_sizes`` are the clusters before it), else None."""

    cluster_sizes: list[int]
    cluster_of_row: np.ndarray
    n_clusters: int
    n_points: int
    centre_fallbacks: int
    leftover_records: int
    tie_break: str
    timings: dict[str, float]
    penalty: float | None = None
    privacy: dict[str, Any] | None = None


@dataclass
class PartitionedDetails(Details):
    """Partitioned: blocks, block_sizes (records), executor used, inner_method."""

    blocks: int
    block_sizes: list[int]
    executor: str
    inner_method: str
