"""Full-domain (global) generalisation baselines on the lattice of levels.

A *node* of the generalisation lattice is a vector ``s`` with one entry per
quasi-identifier: the number of steps every value of that attribute is
generalised up its hierarchy. Generalising a leaf by ``s`` steps gives
``Hierarchy.ancestors[leaf, max(depth - s, 0)]``: for a leaf-balanced tree
that is "level h - s"; for an unbalanced tree depth is read as level (steps
up from each leaf, capped at the root), so attribute ``j`` has
``height_j - 1`` steps and the lattice ``prod(height_j)`` nodes.

Three methods share one vectorised checker (:class:`~hieranon.algorithms.lattice.Lattice`):

* :class:`FullDomain` (``fulldomain``) -- the optimal full-domain node, as
  Incognito / OLA / Flash find it: k-anonymity is monotone in the lattice (if
  a node satisfies every requirement, so do all its successors), so checking
  one node tags a whole cone of others (*predictive tagging*), and a node's
  equivalence classes are *rolled up* from those of a more specific node
  already checked (its class representatives are re-keyed and grouped, never
  the rows again). Objectives: ``distortion`` (the problem's
  :class:`~hieranon.core.cost.CostModel`: WHD uniform / height / priorities /
  MAGE), ``prec`` (Arca & Hewett's precision loss) and ``dm`` (discernibility).
* :class:`AllMin` (``allmin``) -- Samarati's binary search on the lattice
  height for all minimal-height k-anonymous nodes (Arca & Hewett, sec. 5.1.2).
* :class:`Datafly` (``datafly``) -- Sweeney's greedy heuristic.

The lattice, its node checks and the predictive tagging are in
:mod:`hieranon.algorithms.lattice`.

Privacy models (``problem.privacy``): a node is feasible only when every
class, the suppressed records one more, satisfies each model. Without
suppression l-diversity and t-closeness (EMD) are monotone under
generalisation (Machanavajjhala et al. 2007, Sec. 5; Li et al. 2007,
Sec. 4.1), so the predictive tagging stays valid and :class:`FullDomain`
remains optimal. With suppression the suppressed set can lose diversity as
the node rises, so every node is checked without tagging; :class:`AllMin`'s
binary search on height then returns a feasible node of a height it probed,
not necessarily the least.
"""

from __future__ import annotations

import math
import time
from numbers import Integral, Real

import numpy as np

from .base import Algorithm, Problem, Solution, log
from .details import AllMinDetails, DataflyDetails, FullDomainDetails
from .lattice import FEASIBLE, UNKNOWN, Classifier, Lattice
from .params import Interval, NoneValue, Options
from .tags import SuppressionTags, Tags

OBJECTIVES = ("distortion", "prec", "dm")
#: A fraction of the records that may be suppressed (Samarati 2001, MaxSup)
SUPPRESSION_LIMIT = Interval(Real, 0, 1)
#: Seconds the exact lattice searches (fulldomain, allmin) may take unless ``time_limit`` says otherwise
DEFAULT_TIME_LIMIT = 300.0
#: How the search limits are declared
TIME_LIMIT = Interval(Real, 0, None, closed="neither") | None
MAX_CHECKS = Interval(Integral, 1, None) | None


class FullDomainTimeout(ValueError):
    """An exact lattice search reached its time limit or node budget before
    finding any node that meets the requirements."""


class _Stopped(Exception):
    """A search's limit was reached (internal)."""


class SearchLimit:
    """The time limit (seconds) and node budget (checks) of a lattice search."""

    def __init__(self, lattice: Lattice, time_limit: float | None, max_checks: int | None):
        self.L, self.time_limit, self.max_checks = lattice, time_limit, max_checks
        self.started = time.monotonic()
        self.hit = ""

    def reached(self) -> bool:
        """True (and remembered, with which limit) once the time or the node budget is spent."""
        if not self.hit:
            if self.max_checks is not None and self.L.n_checked >= self.max_checks:
                self.hit = f"budget of {self.max_checks:,} node checks"
            elif self.time_limit is not None and time.monotonic() - self.started > self.time_limit:
                self.hit = f"time limit of {self.time_limit:g} s"
        return bool(self.hit)

    def describe(self) -> str:
        return self.hit or "limit"

    def fail(self, method: str) -> FullDomainTimeout:
        return FullDomainTimeout(
            f"{method}: the lattice search reached its {self.describe()} after checking {self.L.n_checked:,} of "
            f"{self.L.n_nodes:,} nodes without finding one that meets the requirements; raise it "
            "(--param time_limit=SECONDS, --param max_checks=N) or use a local-recoding method (kaca+, mondrian)")

    def warn(self, method: str) -> None:
        log.warning("%s stopped at its %s after %d of %d nodes: the answer is the best node found, verified but "
                    "perhaps not optimal (raise time_limit / max_checks for the optimum)", method, self.describe(),
                    self.L.n_checked, self.L.n_nodes)


def _prec_costs(hierarchies) -> list[np.ndarray]:
    """Integer per-node costs of Arca & Hewett's precision loss: a cell generalised
    from ``u`` to ``v`` loses ``(lfl(v) - lfl(u)) / (H - 1)``, ``lfl`` the
    level counted from the leaves, scaled by the lcm of the ``H - 1``."""
    scale = 1
    for h in hierarchies:
        if h.height > 1:
            scale = math.lcm(scale, h.height - 1)
    out = []
    for h in hierarchies:
        if h.height == 1:
            out.append(np.zeros(h.n_nodes, dtype=np.int64))
        else:
            out.append((h.level_from_leaf * (scale // (h.height - 1))).astype(np.int64))
    return out, scale


def _objective_costs(problem: Problem, objective: str):
    if objective == "distortion":
        return problem.cost.int_costs, problem.cost.scale
    if objective == "prec":
        return _prec_costs(problem.table.hierarchies)
    return None, 1


class FullDomain(Algorithm):
    """Optimal full-domain generalisation (Incognito / OLA / Flash style).

    Parameters
    ----------
    objective : {"distortion", "prec", "dm"}
        What the chosen node minimises: the problem's distortion
        (:class:`~hieranon.core.cost.CostModel`, WHD uniform by default), the
        precision loss ``1 - Prec`` of Arca & Hewett, or the discernibility
        ``DM = sum |E|^2`` (+ ``n`` per suppressed record). Ties go to the
        lowest lattice height, then the lexicographically smallest node.
    suppression_limit : float
        Fraction of the records that may be suppressed (0 by default, as in
        the papers): rows of classes still violating a requirement become
        all-root and are flagged -- with the smallest other classes when they
        hold fewer than k records, since the suppressed records print one
        ``*`` tuple that must hold k records like any class; a node is
        feasible when at most ``floor(limit * n)`` records are suppressed.
    time_limit : float or None
        Seconds the search may take (default :data:`DEFAULT_TIME_LIMIT`;
        None: no limit). When it is reached the best feasible node found so
        far is returned with a logged warning (``details.search_complete``
        False); when none was found, :class:`FullDomainTimeout` says so.
    max_checks : int or None
        The same as a budget of node checks (default None: no budget).
    all_minimal : bool or None
        Classify the whole lattice so that ``details.minimal_nodes`` lists
        *every* minimal feasible node (the k-minimal generalisations).
        ``None`` (default) does so when the lattice has at most 2,048 nodes;
        otherwise only the part of the lattice the search needs is settled.
    exhaustive : bool
        Check every node (no tagging, no pruning): the brute-force baseline.

    ``info``: ``node`` (steps per attribute), ``cost`` (objective value, as a
    float), ``optimal_nodes`` (every feasible node of the least cost),
    ``minimal_nodes`` (+ ``minimal_nodes_complete``), ``nodes_checked``,
    ``nodes_rolled_up``, ``lattice_size``, ``suppressed``, ``search_complete``.
    """

    name = "fulldomain"
    tags = Tags(several_requirements=True, privacy_models=True,
                suppression=SuppressionTags(setting="suppression_limit", native=True))

    parameters = {"objective": Options(*OBJECTIVES), "suppression_limit": SUPPRESSION_LIMIT,
                  "all_minimal": bool | NoneValue(), "exhaustive": bool, "time_limit": TIME_LIMIT,
                  "max_checks": MAX_CHECKS}

    def __init__(self, objective: str = "distortion", suppression_limit: float = 0.0,
                 all_minimal: bool | None = None, exhaustive: bool = False,
                 time_limit: float | None = DEFAULT_TIME_LIMIT, max_checks: int | None = None):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""

    def _solve(self, problem: Problem) -> Solution:
        costs, scale = _objective_costs(problem, self.objective)
        L = Lattice(problem.table, problem.requirements, self.suppression_limit, costs, privacy=problem.privacy)
        C = Classifier(L)
        limit = SearchLimit(L, self.time_limit, self.max_checks)
        ties_order = np.lexsort((np.arange(L.n_nodes), L.heights))  # height, then lexicographic
        rank = np.empty(L.n_nodes, dtype=np.int64)
        rank[ties_order] = np.arange(L.n_nodes)
        full = self.all_minimal if self.all_minimal is not None else L.n_nodes <= 2048

        if self.exhaustive:
            for v in ties_order:
                if limit.reached():
                    break
                C.check(int(v))
            values = self._values(L, C, np.flatnonzero(C.status == FEASIBLE))
        elif self.objective != "dm":
            # additive cost, known up front for every node without suppression and
            # a lower bound with it (a suppressed row never costs less than its
            # generalised cells): settle nodes cheapest first; without suppression
            # the first feasible one is optimal; then collect the ties
            order = np.lexsort((rank, L.base_cost))
            values = {}
            best_cost = None
            for v in order:
                v = int(v)
                if best_cost is not None and L.base_cost[v] > best_cost:
                    break
                if C.status[v] == UNKNOWN:
                    if limit.reached():
                        break
                    C.resolve(v)
                if C.status[v] == FEASIBLE and (self.suppression_limit == 0 or L.check(v).feasible):
                    val = int(L.base_cost[v])
                    if self.suppression_limit > 0:
                        val += L.check(v).suppression_extra
                    values[v] = val
                    best_cost = val if best_cost is None else min(best_cost, val)
            if full and not limit.hit:
                C.classify_all(ties_order, stop=limit.reached)
        else:
            # DM is known only after a check. Without suppression it is monotone,
            # so the optimum is a minimal feasible node; with suppression any
            # feasible node may be optimal and every one is checked
            C.classify_all(ties_order, stop=limit.reached)
            if self.suppression_limit == 0 and not limit.hit:
                cand = C.minimal_feasible()
            else:
                cand = np.flatnonzero(C.status == FEASIBLE)
            values = self._values(L, C, cand)
        if not values:
            raise limit.fail(self.name)
        if limit.hit:
            limit.warn(self.name)
        best_value = min(values.values())
        optimal = [v for v, c in values.items() if c == best_value]
        if self.objective == "dm" and self.suppression_limit == 0 and not self.exhaustive:
            optimal = self._dm_ties(L, optimal, best_value)
        optimal = sorted(optimal, key=lambda v: rank[v])
        best = optimal[0]
        codes, suppressed = L.solution_codes(best)
        complete = bool(self.exhaustive or full or self.objective == "dm") and not limit.hit
        minimal = C.minimal_feasible()
        info = {
            "node": L.node(best),
            "objective": self.objective,
            "cost": best_value / scale,
            "optimal_nodes": [L.node(v) for v in optimal],
            "minimal_nodes": [L.node(v) for v in sorted(minimal, key=lambda v: rank[v])],
            "minimal_nodes_complete": complete,
            "nodes_checked": L.n_checked,
            "nodes_rolled_up": L.n_rolled_up,
            "lattice_size": L.n_nodes,
            "suppressed": int(problem.table.counts[suppressed].sum()),
            "qi_names": list(problem.table.qi_names),
            "search_complete": not limit.hit,
        }
        if self.objective == "prec":
            cells = problem.table.n_records * L.m
            info["precision"] = 1 - info["cost"] / cells if cells else 1.0
        log.info("fulldomain: node %s (%s %.6g), %d of %d nodes checked", info["node"], self.objective,
                 info["cost"], L.n_checked, L.n_nodes)
        return Solution(codes, suppressed, FullDomainDetails(**info))

    @staticmethod
    def _dm_ties(L: Lattice, optimal: list[int], best: int) -> list[int]:
        """Every node whose DM equals the optimum's. DM is monotone without
        suppression, so such nodes lie on upward chains from the minimal ones."""
        seen = set(optimal)
        stack = list(optimal)
        while stack:
            v = stack.pop()
            for j in range(L.m):
                if L.nodes[v, j] < L.max_steps[j]:
                    w = v + int(L.strides[j])
                    if w not in seen and L.check(w).dm == best:
                        seen.add(w)
                        stack.append(w)
        return list(seen)

    def _values(self, L: Lattice, C: Classifier, cand: np.ndarray) -> dict[int, int]:
        """Exact objective value of each candidate feasible node (checked if needed)."""
        values: dict[int, int] = {}
        for v in cand:
            v = int(v)
            if self.suppression_limit > 0 and not L.check(v).feasible:
                continue  # tagged feasible, but the top-up to k suppressed records does not fit
            if self.objective == "dm":
                values[v] = L.check(v).dm
            elif self.suppression_limit > 0:
                values[v] = int(L.base_cost[v]) + L.check(v).suppression_extra
            else:
                values[v] = int(L.base_cost[v])
        return values


class _LatticeHeuristic(Algorithm):
    """What AllMin and Datafly share: several requirements, privacy models
    checked per lattice node, and Samarati's suppression limit."""

    tags = FullDomain.tags

    parameters = {"suppression_limit": SUPPRESSION_LIMIT}

    def __init__(self, suppression_limit: float = 0.0):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""


class AllMin(_LatticeHeuristic):
    """Samarati's AllMin: binary search on the lattice height (Arca & Hewett, sec. 5.1.2).

    The height of a node is its total number of generalisation steps. If some
    node of height ``h`` satisfies the requirements, some node of height
    ``h + 1`` does too (any successor), so the least height with a feasible
    node is found by binary search between 0 and the top (upwards, height by
    height, when suppression or privacy models make feasibility
    non-monotone); at each probed
    height every node is settled (with predictive tagging from the other
    probes). ``details.nodes`` lists *all* feasible nodes of the least height
    (Samarati's k-minimal generalisations of minimal height), ordered by the
    problem's distortion (:class:`~hieranon.core.cost.CostModel`), then
    lexicographically; the first of them is applied (``details.node``).

    ``suppression_limit`` is Samarati's MaxSup as a fraction of the records
    (0 by default; the suppressed records number 0 or at least k, as in
    :class:`FullDomain`). ``time_limit`` (default :data:`DEFAULT_TIME_LIMIT`
    seconds) and ``max_checks`` bound the search: when reached, the least
    feasible height probed so far is used, with a logged warning
    (``details.search_complete`` False), or :class:`FullDomainTimeout` says
    that no feasible height was found.
    """

    name = "allmin"
    parameters = {"suppression_limit": SUPPRESSION_LIMIT, "time_limit": TIME_LIMIT, "max_checks": MAX_CHECKS}

    def __init__(self, suppression_limit: float = 0.0, time_limit: float | None = DEFAULT_TIME_LIMIT,
                 max_checks: int | None = None):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""

    def _solve(self, problem: Problem) -> Solution:
        L = Lattice(problem.table, problem.requirements, self.suppression_limit, problem.cost.int_costs,
                    privacy=problem.privacy)
        C = Classifier(L)
        limit = SearchLimit(L, self.time_limit, self.max_checks)
        probed: dict[int, np.ndarray] = {}

        def feasible_at(h: int) -> np.ndarray:
            if h not in probed:
                level = np.flatnonzero(L.heights == h)
                for v in level:
                    if limit.reached():
                        raise _Stopped
                    C.resolve(int(v))
                ok = level[C.status[level] == FEASIBLE]
                if self.suppression_limit > 0:  # tagged feasible, yet the top-up to k may not fit
                    ok = np.array([v for v in ok if L.check(int(v)).feasible], dtype=np.int64)
                probed[h] = ok
            return probed[h]

        lo, hi = 0, int(L.heights.max())
        try:
            while lo < hi:
                # binary search while feasibility is monotone in the height; else upwards, height by height
                mid = (lo + hi) // 2 if L.monotone else lo
                if len(feasible_at(mid)):
                    hi = mid
                else:
                    lo = mid + 1
            found = feasible_at(lo)
        except _Stopped:
            heights = sorted(h for h, f in probed.items() if len(f))
            if not heights:
                raise limit.fail(self.name) from None
            limit.warn(self.name)
            lo = heights[0]
            found = probed[lo]
        order = np.lexsort((found, L.base_cost[found]))
        found = found[order]
        best = int(found[0])
        codes, suppressed = L.solution_codes(best)
        info = {
            "node": L.node(best),
            "height": int(lo),
            "nodes": [L.node(v) for v in found],
            "heights_probed": [[h, bool(len(f))] for h, f in probed.items()],
            "nodes_checked": L.n_checked,
            "lattice_size": L.n_nodes,
            "suppressed": int(problem.table.counts[suppressed].sum()),
            "qi_names": list(problem.table.qi_names),
            "search_complete": not limit.hit,
        }
        return Solution(codes, suppressed, AllMinDetails(**info))


class Datafly(_LatticeHeuristic):
    """Sweeney's Datafly: greedy full-domain generalisation.

    While some record violates a requirement, generalise one step (globally)
    the attribute with the most distinct values at its current level (ties to
    the first quasi-identifier; only attributes some requirement names). As in Sweeney's Datafly, once fewer than k
    records violate, they are suppressed instead -- provided that stays within
    ``suppression_limit`` (a fraction of the records; 0 by default, so the
    default never suppresses and generalises until every class has >= k).

    ``info``: ``node``, ``steps`` (attribute generalised at each iteration),
    ``suppressed``.
    """

    name = "datafly"

    def _solve(self, problem: Problem) -> Solution:
        L = Lattice(problem.table, problem.requirements, self.suppression_limit, privacy=problem.privacy)
        node = np.zeros(L.m, dtype=np.int64)
        steps: list[str] = []
        # only attributes some requirement names can help
        used = np.zeros(L.m, dtype=bool)
        for cols in L.req_cols:
            used[cols] = True
        k = problem.k
        while True:
            idx = L.index(node)
            reps, sizes = L.classes(idx)
            L.n_checked += 1
            n_viol = int(sizes[L.violating(idx, reps, sizes)].sum())
            sup = L.suppressed_classes(idx, reps, sizes)  # 0 or >= k records
            n_sup = int(sizes[sup].sum())
            if ((n_viol == 0 or (n_viol < k and n_sup <= L.max_suppressed))
                    and (not L.privacy or L.private(idx, reps, sup))):
                break
            open_ = np.flatnonzero((node < L.max_steps) & used)
            if len(open_) == 0:  # the top is one class of n >= k records: only privacy on a subset can fail
                raise ValueError("datafly: generalising every attribute the requirements name does not meet the "
                                 "privacy models; add a requirement over all quasi-identifiers or use 'fulldomain'")
            distinct = np.array([L.radix[j][int(node[j])] for j in open_])
            j = int(open_[int(np.argmax(distinct))])
            node[j] += 1
            steps.append(problem.table.qi_names[j])
        codes, suppressed = L.solution_codes(idx)
        info = {
            "node": L.node(idx),
            "steps": steps,
            "nodes_checked": L.n_checked,
            "lattice_size": L.n_nodes,
            "suppressed": int(problem.table.counts[suppressed].sum()),
            "qi_names": list(problem.table.qi_names),
        }
        return Solution(codes, suppressed, DataflyDetails(**info))
