"""KACA+'s driver: the runs (tie orders, with and without stubs), the
automatic stub weight, and the :class:`KACAPlus` method (see
:mod:`hieranon.algorithms.kacaplus`).
"""

from __future__ import annotations

import time
from dataclasses import replace
from numbers import Integral, Real

import numpy as np

from ...bounds import BoundTooLarge, tightest_share
from ...core.cost import CostModel
from .. import kaca_core as K
from ..base import Algorithm, Problem, Solution, log
from ..details import KACAPlusDetails
from ..multireq import single_problem, solve_requirements
from ..params import Interval, NoneValue, Options
from ..privacy_merge import repair_solution
from ..privacy_refine import improve
from ..tags import Tags
from .finishing import class_codes, complete_classes
from .lagrangian import ProgramAhead, lagrangian_output
from .refinement import refine_classes
from .sweep import SweepData, run_sweep

__all__ = ["CONSTRUCTIONS", "KACAPlus", "LAGRANGIAN_ROWS", "auto_row_stub_weight", "auto_stub_weight", "kacaplus_codes"]


#: Default number of runs (``restarts=None``) on tables of at most AUTO_RESTARTS_ROWS rows.
AUTO_RESTARTS = 8
AUTO_RESTARTS_ROWS = 2_000
#: ``lagrangian="auto"`` builds the Lagrangian output on tables of at most this many rows.
LAGRANGIAN_ROWS = 100_000
#: ``lagrangian=True``: when the relaxation for k does not fit, try k + 1,
#: k + 2, k + 4, ... this many times (each refusal costs a walk of the
#: candidate nodes; the nearer k, the less the local search has to recover).
COARSER_K_TRIES = 4
#: First steps that can be chosen (the last two are earlier trials, kept for comparison).
CONSTRUCTIONS = ("sweep", "growth", "cheapest")


# =====================================================================
# driver
# =====================================================================
def _row_costs(orig, out, cost: CostModel) -> np.ndarray:
    g = np.zeros(len(orig), dtype=np.int64)
    for j, c in enumerate(cost.int_costs):
        g += c[out[:, j]] - c[orig[:, j]]
    return g


def auto_stub_weight(k: int) -> float:
    """Default ``stub_weight``: ``min(1, 0.15 k)``. Small k takes more stubs:
    there a class of ``k+1..2k-1`` records weighs most in DM and CAVG. Chosen on
    Adult so that DM and CAVG stay at or below faithful KACA1's at
    k = 2, 5, 10, 50 while distortion stays lowest."""
    return min(1.0, 0.15 * k)


def auto_row_stub_weight(k: int) -> float:
    """Default ``stub_weight`` with single-record stubs (``stub_rows``):
    ``min(2, 0.2 k)``, chosen on Adult like :func:`auto_stub_weight` (DM and
    CAVG at or below KACA1's at k = 2, 5, 10, 50, distortion lowest)."""
    return min(2.0, 0.2 * k)


def kacaplus_codes(codes: np.ndarray, counts: np.ndarray, hierarchies, cost: CostModel, k: int, seed=0, *,
                   construction: str = "sweep", stub_weight: float | str | None = "auto", refine: bool = True,
                   refine_all: bool | None = None, refine_budget: int | None = None, restarts: int | None = None,
                   max_vectors: int = 1_000_000, growth_order: str = "dense",
                   refine_exhaustive: bool | None = None, stub_rows: bool = True,
                   share: tuple | None = None) -> tuple[np.ndarray, dict]:
    """KACA+ on a code matrix (module docstring). Returns ``(codes, info)``;
    ``details.distortion_int`` is the output's distortion in the cost model's
    integer scale. ``share``: ``(positive flags per row, low, high)``, the
    share of positive records every class should hold; the sweep then makes
    classes of groups' largest selections that hold it, and the stubs and
    the refinement, which would move records regardless of it, are left out
    (the construction of :class:`KACAPlus` ``share_sweep``)."""
    t0 = time.perf_counter()
    R = np.ascontiguousarray(codes, dtype=np.int32)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    n, _m = R.shape
    K.check_k(k, counts)
    hd = K.hierarchy_data(hierarchies, cost)
    perm = K.choose_trie_order(R, hd[2])
    if refine_all is None:
        refine_all = n <= 20_000
    if refine_exhaustive is None:
        refine_exhaustive = n <= 1_000
    if refine_budget is None:
        refine_budget = 4 * n + 1000
    rng = np.random.default_rng(seed)
    if restarts is None:
        restarts = AUTO_RESTARTS if n <= AUTO_RESTARTS_ROWS and construction == "sweep" else 1
    # runs 0 and 1 keep the natural tie order, the others draw one from the seed;
    # odd runs make the second sweep without stubs (one sweep)
    ties = [0, 0] + [int(x) for x in rng.integers(1, 2**31, size=max(restarts, 2) - 2)]
    if share is not None:
        stub_weight, refine = None, False
    if stub_weight == "auto":
        stub_weight = auto_row_stub_weight(k) if stub_rows else auto_stub_weight(k)
    base_stub = stub_weight
    data = SweepData(R, counts, hierarchies, cost, max_vectors) if construction == "sweep" else None
    best = None
    runs = []
    first: dict = {}
    for run, tie in enumerate(ties[:restarts]):
        t = time.perf_counter()
        stub_weight = None if run % 2 else base_stub
        info: dict = {"run": run, "tie_order": tie, "stub_weight": stub_weight}
        if construction == "sweep":
            if tie not in first:  # the first sweep (+ step 3) of a tie order, shared by its runs
                cls, ncls, nvec = run_sweep(data, k, None, -1.0, tie, share=share)
                first[tie] = (complete_classes(class_codes(R, cls, ncls, hd), counts, hierarchies, cost, k, hd, perm),
                              nvec, int(counts[cls < 0].sum()), data.stats["share_cut_groups"])
            out, info["vectors"], info["unplaced_after_sweep"], info["share_cut_groups"] = first[tie]
            if stub_weight is not None and stub_weight >= 0:
                cls, ncls, nvec = run_sweep(data, k, _row_costs(R, out, cost), float(stub_weight), tie, stub_rows)
                info["vectors_second"] = nvec
                info.update(data.stats)
                info["unplaced_after_sweep"] = int(counts[cls < 0].sum())
                out = complete_classes(class_codes(R, cls, ncls, hd), counts, hierarchies, cost, k, hd, perm)
        elif construction in ("growth", "cheapest"):
            kind = "cheapest" if construction == "cheapest" else growth_order
            out = complete_classes(R, counts, hierarchies, cost, k, hd, perm, kind, np.random.default_rng(seed + run))
        else:
            raise ValueError(f"construction must be one of {CONSTRUCTIONS}, got {construction!r}")
        info["distortion_constructed_int"] = int((_row_costs(R, out, cost) * counts).sum())
        info["time_construct"] = time.perf_counter() - t
        if refine:
            t = time.perf_counter()
            out, rinfo = refine_classes(out, R, counts, hd, perm, k, refine_budget, refine_all, refine_exhaustive)
            info.update({f"refine_{a}": b for a, b in rinfo.items()})
            info["time_refine"] = time.perf_counter() - t
        d = int((_row_costs(R, out, cost) * counts).sum())
        info["distortion_int"] = d
        runs.append(info)
        if best is None or d < best[0]:
            best = (d, out, run)
    d, out, run = best
    info = {"distortion_int": d, "distortion": d / cost.scale, "best_run": run, "runs": runs,
            "time_total": time.perf_counter() - t0, "share_sweep": share is not None}
    return out, info


class KACAPlus(Algorithm):
    """KACA+: KACA's distance and stubs with a better search (module docstring).

    Parameters
    ----------
    stub_weight : float, ``"auto"`` or None
        Step 2: a short group takes a stub when its records' estimated saving
        exceeds ``stub_weight`` times the stub's extra cost. Lower values take
        more stubs (smaller classes: lower DM and CAVG, a little more
        distortion); ``None`` skips step 2 (one sweep); ``"auto"`` (default)
        is :func:`auto_row_stub_weight` of k (:func:`auto_stub_weight` without
        ``stub_rows``).
    refine : bool
        Step 4, the local search.
    refine_all : bool or None
        Search a new class for every unit (True) or only for the units whose
        removal lowers their class's generalisation (False); default True up to
        20,000 rows.
    refine_budget : int or None
        Maximum number of class searches of step 4 (default ``4n + 1000``).
    refine_exhaustive : bool or None
        Step 4 tries every other class as a partner of each unit, not only
        the one where it fits best; default True up to 1,000 rows.
    restarts : int or None
        Runs of steps 1-4, the least distortion kept: runs 0 and 1 in the
        natural tie order of equal-cost depth vectors, the others in orders
        drawn from the seed; odd runs skip the stubs (one sweep). Default:
        8 on tables of at most 2,000 rows, else 1.
    max_vectors : int
        Depth vectors the sweep may visit before step 3 takes over.
    stub_rows : bool
        Step 2 takes stub records from any class with a surplus whose records
        lie under the short group's node (default), not only from classes
        whose node lies under it; ``"auto"`` stub weight is then
        :func:`auto_row_stub_weight` instead of :func:`auto_stub_weight`. On
        Adult (k = 10) 0.1095 -> 0.1080 with DM and CAVG still below KACA1's.
    construction : ``"sweep"`` (default), ``"growth"`` or ``"cheapest"``
        The first step; the other two are earlier trials
        (KACA merging with one class grown to ``k`` at a time, cheapest to
        complete first -- ``growth_order`` ``"dense"``, ``"random"`` -- or the
        globally cheapest merge per record first).
    lagrangian : bool or ``"auto"``
        With the t-closeness of a two-valued sensitive attribute (equal or
        ordered distance), also build an output from the prices of the
        share-constrained lower bound (a Lagrangian heuristic,
        :mod:`~hieranon.algorithms.kacaplus.lagrangian`) and keep the lower
        distortion. ``"auto"`` (default): on tables of at most
        :data:`LAGRANGIAN_ROWS` rows. On Adult (8 QIs, k = 10, salary-class
        0.2-closeness) 0.235 -> 0.198, in about 36 s more on 2 cores. The
        walk of its candidate nodes runs in a thread of its own while the
        clustering is repaired (where the relaxation does not fit, as on
        Adult at k = 2 and 5, its refusal then costs no wall time).
        ``True``: also when the relaxation for k does not fit (small k), from
        the nearest larger k that fits (:meth:`_coarser_lagrangian`): on
        Adult 0.216 -> 0.182 at k = 2 and 0.218 -> 0.184 at k = 5 (from
        k = 6), in 25-30 s more.
    lagrangian_iterations : int
        Subgradient iterations of the prices (more: better prices, slower;
        100, 200, 400 gave 0.220, 0.210, 0.199 on Adult).
    share_sweep : bool or ``"auto"``
        With a privacy model that asks every class for a share of one value
        of a two-valued sensitive attribute (t-closeness by the equal or
        ordered distance; l-diversity), the sweep makes a class of each
        group's largest selection holding that share, in row order (too many
        records of one value: all of the other and as many of it as the
        share allows), so that the repair has little left to do; the stubs
        and the refinement, which would move records regardless of the
        share, are left out. ``"auto"`` (default): for t-closeness, where
        it gave lower distortion on UCI Adult and on six tables nobody
        tuned on (Adult, 0.2-closeness: 0.216 -> 0.203 at k = 2, in half
        the time); with distinct l-diversity, where a group of one value
        must wait for the other, clustering for k and repairing did better.
        ``True``: for l-diversity too.
    """

    name = "kaca+"
    tags = Tags(several_requirements=True, privacy_models=True, randomised=True)
    parameters = {
        "stub_weight": Interval(Real, 0, None) | Options("auto") | None,
        "refine": bool,
        "refine_all": bool | NoneValue(),
        "refine_budget": Interval(Integral, 0, None) | None,
        "restarts": Interval(Integral, 1, None) | None,
        "max_vectors": Interval(Integral, 1, None),
        "construction": Options(*CONSTRUCTIONS),
        "growth_order": Options("dense", "random"),
        "refine_exhaustive": bool | NoneValue(),
        "stub_rows": bool,
        "lagrangian": bool | Options("auto"),
        "lagrangian_iterations": Interval(Integral, 1, None),
        "share_sweep": bool | Options("auto"),
    }

    def __init__(self, stub_weight: float | str | None = "auto", refine: bool = True, refine_all: bool | None = None,
                 refine_budget: int | None = None, restarts: int | None = None, max_vectors: int = 1_000_000,
                 construction: str = "sweep", growth_order: str = "dense", refine_exhaustive: bool | None = None,
                 stub_rows: bool = True, lagrangian: bool | str = "auto", lagrangian_iterations: int = 400,
                 share_sweep: bool | str = "auto"):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""

    def _codes(self, codes, counts, hierarchies, cost, k, seed, refine_exhaustive=None, share=None):
        if refine_exhaustive is None:
            refine_exhaustive = self.refine_exhaustive
        return kacaplus_codes(codes, counts, hierarchies, cost, k, seed,
                              construction=self.construction, stub_weight=self.stub_weight,
                              refine=self.refine, refine_all=self.refine_all,
                              refine_budget=self.refine_budget, restarts=self.restarts,
                              max_vectors=self.max_vectors, growth_order=self.growth_order,
                              refine_exhaustive=refine_exhaustive, stub_rows=self.stub_rows, share=share)

    def _sweep_share(self, problem: Problem) -> tuple | None:
        """The share the sweep makes its classes hold (``share_sweep``), or None."""
        if self.share_sweep is False or self.construction != "sweep":
            return None
        kinds = ("t-closeness",) if self.share_sweep == "auto" else ("t-closeness", "l-diversity")
        return tightest_share(problem.privacy, kinds=kinds)[1]

    def _solve(self, problem: Problem) -> Solution:
        t = problem.table
        seed = 0 if problem.seed is None else problem.seed
        single = single_problem(problem)
        if single is None:  # several requirements over different attribute sets
            return self._solve_several(problem, seed)
        problem = single
        codes, info = self._codes(t.codes, t.counts, t.hierarchies, problem.cost, problem.k, seed,
                                  share=self._sweep_share(problem))
        log.info("kaca+: distortion %.4f (run %d of %d)", info["distortion"], info["best_run"] + 1, len(info["runs"]))
        solution = Solution(codes, np.zeros(t.n_rows, dtype=bool), KACAPlusDetails(**info))
        share = self._lagrangian_share(problem)
        ahead = None if share is None else ProgramAhead(problem, share)  # walked while the clustering is repaired
        try:
            return self._lagrangian(problem, repair_solution(problem, solution), share, ahead)
        finally:
            if ahead is not None:
                ahead.close()

    def _lagrangian_share(self, problem: Problem):
        """The share constraint of the Lagrangian output (the tightest
        t-closeness with one), or None when there is none or ``lagrangian``
        does not ask for it."""
        _, share = tightest_share(problem.privacy, kinds=("t-closeness",))
        wanted = self.lagrangian is True or (self.lagrangian == "auto" and problem.table.n_rows <= LAGRANGIAN_ROWS)
        return share if wanted else None

    def _lagrangian(self, problem: Problem, solution: Solution, share, ahead: ProgramAhead | None) -> Solution:
        """``solution``, or the Lagrangian output when it has less distortion
        (``lagrangian``; ``share`` from :meth:`_lagrangian_share`, ``ahead``
        its candidate nodes being walked). Only where the models shaped the
        clustering (it had to be repaired, or the sweep held records back
        for a share): an output clustered for k alone that meets every model
        is kept as it is."""
        details = solution.details
        shaped = (details.privacy or {}).get("privacy_violating_in") or \
            details.runs[details.best_run].get("share_cut_groups")
        if share is None or not shaped:
            return solution
        t = problem.table
        before = int(_row_costs(t.codes, solution.codes, problem.cost) @ t.counts)  # exact: whole units
        try:
            codes, sup, info, prices = lagrangian_output(problem, share, iterations=self.lagrangian_iterations,
                                                         upper=before / problem.cost.scale, start=solution.codes,
                                                         ahead=ahead)
        except BoundTooLarge as e:
            if self.lagrangian is not True:
                log.info("kaca+: no Lagrangian output (%s)", e)
                return solution
            found = self._coarser_lagrangian(problem, share, e)
            if found is None:
                return solution
            (codes, sup, info), prices = found, None  # priced for another k: no bound of this one goes on from them
        after = int(_row_costs(t.codes, codes, problem.cost) @ t.counts)
        log.info("kaca+: distortion %.2f after the repair, %.2f from the Lagrangian output",
                 before / problem.cost.scale, after / problem.cost.scale)
        details.privacy["lagrangian"] = {**info, "distortion_int": after, "distortion_repaired_int": before}
        details.privacy["lagrangian_kept"] = bool(after < before)
        kept = Solution(codes, sup, details) if after < before else solution
        kept.relaxed = prices
        return kept

    def _coarser_lagrangian(self, problem: Problem, share, refused: BoundTooLarge):
        """The Lagrangian output for a larger k, when the relaxation for
        ``problem``'s own k does not fit (a smaller k has more candidate
        nodes): the first of k + 1, k + 2, k + 4, ... (:data:`COARSER_K_TRIES`)
        that fits; its output meets that k and so ``problem``'s, and the
        model-preserving local search at ``problem``'s k then lowers it (its
        classes may shrink to k). ``(codes, suppressed, info)``, or None when
        none fits."""
        records = int(problem.table.counts.sum())
        for step in range(COARSER_K_TRIES):
            k = problem.k + 2 ** step
            if k > records:
                break
            coarse = replace(problem, requirements=[replace(r, k=k) for r in problem.requirements])
            try:
                codes, sup, info, _ = lagrangian_output(coarse, share, iterations=self.lagrangian_iterations)
            except BoundTooLarge:
                continue
            log.info("kaca+: Lagrangian output for k = %d (the relaxation for k = %d does not fit)", k, problem.k)
            codes, sup, more = improve(problem, codes, sup)
            info.update({"lagrangian_k": k, **{f"coarse_{key}": value for key, value in more.items()}})
            return codes, sup, info
        log.info("kaca+: no Lagrangian output (%s; nor for k up to %d)", refused,
                 problem.k + 2 ** (COARSER_K_TRIES - 1))
        return None

    def _solve_several(self, problem: Problem, seed: int) -> Solution:
        """Several requirements: :func:`~hieranon.algorithms.multireq.solve_requirements`
        clustering each block with KACA+. The exhaustive partner search of
        step 4 follows the whole table's size, not the block's (on Adult,
        8 QIs, it cost six times the time for a distortion 0.00001 lower)."""
        exhaustive = self.refine_exhaustive
        if exhaustive is None:
            exhaustive = problem.table.n_rows <= 1_000

        def cluster(codes, counts, hierarchies, cost, k):
            out, _ = self._codes(codes, counts, hierarchies, cost, k, seed, exhaustive)
            return out, np.zeros(len(out), dtype=bool), {}

        codes, sup, info = solve_requirements(problem, cluster)
        runs = info.pop("runs")
        best = min(range(len(runs)), key=lambda i: runs[i]["distortion_int"])
        details = KACAPlusDetails(distortion_int=info["distortion_int"],
                                  distortion=info["distortion_int"] / problem.cost.scale, best_run=best, runs=runs,
                                  time_total=info["time_total"], privacy=info.pop("privacy", None),
                                  requirements=info)
        return Solution(codes, sup, details)
