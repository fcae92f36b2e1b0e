"""Several anonymity requirements ``<A_i, k_i>`` for KACA's local recoding.

A requirement ``<A, k>`` (Arca & Hewett) holds when grouping the *output*
records by their published values on the attributes ``A`` gives groups of
at least ``k`` records (records printing ``*`` everywhere -- suppressed --
group like any others: they print one tuple). With local recoding, requirements over different
but overlapping attribute sets interact: generalising some records of a
group on a shared attribute takes them out of that group, which can leave
another requirement's group below its k. The solver here therefore builds
an output that cannot be split by construction, and repairs what is left
until every requirement holds.

1. **Implied requirements go.** ``<A, k>`` is implied by ``<B, k'>`` when
   ``A`` is a subset of ``B`` and ``k <= k'`` (a group on ``A`` is a union
   of groups on ``B``); requirements with ``k = 1`` always hold. When one
   requirement over every QI remains, the method's single-k path runs, unchanged.
2. **Nested clustering**, one requirement at a time in a given order. The
   attributes of ``A_i`` fixed by earlier requirements (the *shared* ones)
   keep their published values; the records are split into blocks of equal
   shared values and, inside each block, the method's clustering (KACA+, or
   KACA1, Li et al. 2008, Algorithm 1) generalises the *free* attributes
   (``A_i`` minus earlier attributes) for ``k_i``. Free attributes belong to
   no earlier requirement, so earlier groups cannot split, and each block
   printing its shared values, its clusters are groups of ``A_i`` of at
   least ``k_i`` records. A block below ``k_i`` is first united with its
   nearest block (step 3 on the shared attributes).
   *Joint* variant: a requirement sharing attributes with earlier ones is
   clustered over the whole table on all of ``A_i``, the shared attributes
   starting from their published values. It may generalise a shared
   attribute further for some records (splitting earlier groups, which step
   3 repairs), which pays when blocks are too small for ``k_i`` without
   generalising the free attributes a lot: on ISLR Wage with ``<{age,
   race}, 10>`` and ``<{age, maritl, education, jobclass}, 3>`` the blocks
   of exact ages force race to ``*`` for most non-white records (distortion
   ratio 0.070), the joint variant generalises their ages instead (0.038).
3. **Group-merge repair** (fixpoint): while some requirement has a group
   below its k, the smallest such group ``g`` is united with the group ``h``
   of that requirement whose union is cheapest -- both print, on ``A_i``,
   the closest common generalisation of their tuples (Li et al. 2006,
   Def. 8), costing ``|g| (c(lca) - c(t_g)) + |h| (c(lca) - c(t_h))`` in the
   cost model's exact integers. This can split a group of another
   requirement sharing an attribute with ``A_i``, which the next pass
   repairs; every union raises at least one cell, so the passes end (at
   worst at the root, which holds every requirement the table can hold).
   A union changes whole equivalence classes over all QIs alike, so classes
   only unite: every privacy model kept so far stays kept (Machanavajjhala
   et al. 2007, Sec. 5; Li et al. 2007, Sec. 4.1).
4. Every order of the requirements (all of them up to three requirements,
   else the largest k first), each with blocks and, when requirements share
   attributes, jointly, is tried; the least distortion is kept.
5. **Privacy models**: the class-merging repair of
   :mod:`hieranon.algorithms.privacy_merge` runs on every candidate of step
   4 (keeping the size of its smallest class), then step 3 again, which
   keeps the models; the least distortion after the repairs is kept.

Measured (``benchmarks/results/multireq.csv``, uniform WHD, seed 0): ISLR
Wage with the two requirements above, distortion ratio 0.038 (KACA+) against
0.111 for ``k = 10`` over every QI and 0.209 for HeuristicMin; UCI Adult, 8
QIs, ``<{age, sex, race, native-country}, 10>`` and ``<{age, workclass,
education, marital-status, occupation}, 5>``: 0.053 against 0.108 and 0.630.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..core.cost import CostModel
from ..core.requirements import Requirement
from ..core.table import group
from ..core.tree import Hierarchy
from .base import Problem, log
from .privacy_merge import enforce_checked

__all__ = ["MAX_ORDERS", "Clusterer", "essential_requirements", "merge_groups", "enforce_requirements",
           "single_problem", "solve_requirements", "sub_cost"]

#: Orders of the requirements tried: every permutation when there are at most this many.
MAX_ORDERS = 6

#: ``(codes, counts, hierarchies, cost, k) -> (codes, suppressed rows, info)``: a single-k
#: clustering over the given columns (KACA+, KACA1).
Clusterer = Callable[[np.ndarray, np.ndarray, list, CostModel, int], tuple[np.ndarray, np.ndarray, dict]]


@dataclass(frozen=True)
class _Req:
    cols: np.ndarray  # QI column positions
    k: int


def _implied(r: Requirement, by: Requirement) -> bool:
    return set(r.attributes) <= set(by.attributes) and r.k <= by.k


def essential_requirements(requirements: Sequence[Requirement]) -> list[Requirement]:
    """The requirements no other implies (``<A, k>`` by ``<B, k'>`` when ``A``
    is a subset of ``B`` and ``k <= k'``), without those of ``k = 1``, in
    their given order (of two identical ones the first stays)."""
    reqs = [r for r in requirements if r.k > 1]
    out = []
    for i, r in enumerate(reqs):
        if any(_implied(r, s) and (not _implied(s, r) or j < i) for j, s in enumerate(reqs) if j != i):
            continue
        out.append(r)
    return out


def single_problem(problem: Problem) -> Problem | None:
    """``problem`` with one requirement over every QI when its requirements
    reduce to that (it is returned itself when it already has only that one);
    None when they do not."""
    qis = set(problem.table.qi_names)
    if problem.single_full_requirement:
        return problem
    ess = essential_requirements(problem.requirements)
    full = [r for r in ess if set(r.attributes) == qis]
    if len(ess) == 1 and full:
        return replace(problem, requirements=full)
    if not ess:  # only k = 1: nothing to do beyond one requirement of k = 1 over everything
        return replace(problem, requirements=[Requirement(tuple(problem.table.qi_names), 1)])
    return None


def sub_cost(cost: CostModel, cols: Sequence[int]) -> CostModel:
    """The cost model restricted to the columns ``cols`` (same scale)."""
    return CostModel([cost.costs[j] for j in cols], [cost.int_costs[j] for j in cols], cost.scale, cost.exact,
                     cost.description)


def _tuple_cost(g: list[np.ndarray], cols: np.ndarray, T: np.ndarray) -> np.ndarray:
    out = np.zeros(len(T), dtype=np.int64)
    for jj, j in enumerate(cols):
        out += g[j][T[:, jj]]
    return out


def merge_groups(out: np.ndarray, counts: np.ndarray, hierarchies: Sequence[Hierarchy], cost: CostModel,
                 cols: np.ndarray, k: int) -> int:
    """Step 3 for one requirement, in place: while a group of ``out[:, cols]``
    holds fewer than ``k`` records, unite the smallest (ties: first in tuple
    order) with the group whose union adds least distortion (ties: first),
    both printing the lowest common ancestors of their tuples. Returns the
    number of unions. Needs ``counts.sum() >= k``."""
    ec = group(out[:, cols], counts)
    size = ec.sizes.astype(np.int64).copy()
    if len(size) == 0 or size.min() >= k:
        return 0
    T = np.ascontiguousarray(ec.keys, dtype=np.int32).copy()
    rc = ec.row_class.astype(np.int64).copy()
    g = cost.int_costs
    gT = _tuple_cost(g, cols, T)
    alive = np.ones(len(size), dtype=bool)
    by_tuple = {T[c].tobytes(): c for c in range(len(size))}
    hs = [hierarchies[j] for j in cols]
    merges = 0
    while True:
        bad = np.flatnonzero(alive & (size < k))
        if len(bad) == 0:
            break
        c = int(bad[np.argmin(size[bad])])
        cand = np.flatnonzero(alive)
        cand = cand[cand != c]
        L = np.empty((len(cand), len(cols)), dtype=np.int32)
        for jj, h in enumerate(hs):
            L[:, jj] = h.lca(np.full(len(cand), T[c, jj], dtype=np.int32), T[cand, jj])
        gL = _tuple_cost(g, cols, L)
        inc = size[c] * (gL - gT[c]) + size[cand] * (gL - gT[cand])
        i = int(np.argmin(inc))
        d = int(cand[i])
        # d absorbs c, then takes the common tuple (joining the group that prints it)
        del by_tuple[T[c].tobytes()]
        size[d] += size[c]
        size[c] = 0
        alive[c] = False
        rc[rc == c] = d
        key = L[i].tobytes()
        if key != T[d].tobytes():
            del by_tuple[T[d].tobytes()]
            T[d] = L[i]
            gT[d] = gL[i]
            e = by_tuple.get(key)
            if e is not None:
                size[e] += size[d]
                size[d] = 0
                alive[d] = False
                rc[rc == d] = e
                d = e
            by_tuple[key] = d
        merges += 1
    out[:, cols] = T[rc]
    return merges


def _requirement_groups_ok(out: np.ndarray, counts: np.ndarray, r: _Req) -> bool:
    return bool(group(out[:, r.cols], counts).sizes.min() >= r.k) if len(out) else True


def enforce_requirements(out: np.ndarray, counts: np.ndarray, hierarchies: Sequence[Hierarchy], cost: CostModel,
                         reqs: Sequence[_Req]) -> dict:
    """Step 3 to a fixpoint, in place: :func:`merge_groups` for every
    requirement in turn until a whole pass changes nothing. Returns
    ``{"repair_merges", "repair_passes"}``."""
    merges = passes = 0
    while True:
        passes += 1
        made = sum(merge_groups(out, counts, hierarchies, cost, r.cols, r.k) for r in reqs)
        merges += made
        if made == 0:
            break
    return {"repair_merges": merges, "repair_passes": passes}


def _blocks(codes: np.ndarray) -> list[np.ndarray]:
    """Row indices (ascending) of each group of equal rows of ``codes``."""
    n = len(codes)
    if codes.shape[1] == 0:
        return [np.arange(n)]
    rc = group(codes).row_class
    order = np.argsort(rc, kind="stable")
    cuts = np.flatnonzero(np.diff(rc[order])) + 1
    return np.split(order, cuts)


def nested_codes(base: np.ndarray, counts: np.ndarray, hierarchies: Sequence[Hierarchy], cost: CostModel,
                 reqs: Sequence[_Req], order: Sequence[int], cluster: Clusterer, joint: bool = False
                 ) -> tuple[np.ndarray, np.ndarray, dict]:
    """Steps 2 and 3 for one order of the requirements: ``(codes,
    rows the clusterer suppressed, info)``. With ``joint``, a requirement
    sharing attributes with earlier ones is clustered over the whole table
    on all its attributes, the shared ones from their published values
    (which may split earlier groups: step 3 repairs them)."""
    n, m = base.shape
    out = base.copy()
    sup = np.zeros(n, dtype=bool)
    fixed = np.zeros(m, dtype=bool)
    info = {"blocks": 0, "block_merges": 0, "clusterings": 0, "joint": joint}
    for i in order:
        r = reqs[i]
        free = r.cols[~fixed[r.cols]]
        shared = r.cols[fixed[r.cols]]
        if joint and len(shared) and len(free):
            codes, s, _ = cluster(np.ascontiguousarray(out[:, r.cols]), counts, [hierarchies[j] for j in r.cols],
                                  sub_cost(cost, r.cols), r.k)
            out[:, r.cols] = codes
            sup |= s
            info["clusterings"] += 1
            fixed[free] = True
            continue
        if len(free) == 0:
            continue
        if len(shared):
            info["block_merges"] += merge_groups(out, counts, hierarchies, cost, shared, r.k)
        hs = [hierarchies[j] for j in free]
        sc = sub_cost(cost, free)
        for rows in _blocks(out[:, shared]):
            info["blocks"] += 1
            codes, s, _ = cluster(np.ascontiguousarray(base[np.ix_(rows, free)]), counts[rows], hs, sc, r.k)
            out[np.ix_(rows, free)] = codes
            sup[rows[s]] = True
            info["clusterings"] += 1
        fixed[free] = True
    info.update(enforce_requirements(out, counts, hierarchies, cost, reqs))
    return out, sup, info


def _orders(reqs: Sequence[_Req]) -> list[tuple[int, ...]]:
    """Every order of the requirements when there are at most
    :data:`MAX_ORDERS`, else the largest k first (ties: more attributes first)."""
    first = tuple(sorted(range(len(reqs)), key=lambda i: (-reqs[i].k, -len(reqs[i].cols), i)))
    if math.factorial(len(reqs)) > MAX_ORDERS:
        return [first]
    rest = [p for p in itertools.permutations(first) if p != first]
    return [first, *rest]


def _overlapping(reqs: Sequence[_Req]) -> bool:
    """Do two requirements share an attribute?"""
    seen: set[int] = set()
    for r in reqs:
        if seen & set(r.cols.tolist()):
            return True
        seen |= set(r.cols.tolist())
    return False


def _distortion_int(orig: np.ndarray, out: np.ndarray, counts: np.ndarray, cost: CostModel) -> int:
    d = np.zeros(len(orig), dtype=np.int64)
    for j, c in enumerate(cost.int_costs):
        d += c[out[:, j]] - c[orig[:, j]]
    return int(d @ counts)


def solve_requirements(problem: Problem, cluster: Clusterer, base: np.ndarray | None = None
                       ) -> tuple[np.ndarray, np.ndarray, dict]:
    """Steps 2-5 (module docstring) on ``problem`` (whose requirements do not
    reduce to one over every QI), clustering with ``cluster`` from the codes
    ``base`` (default the table's). Returns ``(codes, suppressed, info)``;
    ``info["runs"]`` has one entry per order tried, ``info["best_order"]``
    the requirements (as text) in the order kept."""
    t0 = time.perf_counter()
    t = problem.table
    base = np.ascontiguousarray(t.codes if base is None else base, dtype=np.int32)
    ess = essential_requirements(problem.requirements)
    reqs = [_Req(np.asarray(r.indices(t.qi_names), dtype=np.int64), r.k) for r in ess]
    best = None
    runs = []
    for order, joint in itertools.product(_orders(reqs), (False, True)):
        if joint and not _overlapping(reqs):
            continue
        ts = time.perf_counter()
        out, sup, info = nested_codes(base, t.counts, t.hierarchies, problem.cost, reqs, order, cluster, joint)
        sup &= (out == 0).all(axis=1)
        privacy = None
        if problem.privacy:  # each candidate repaired: the least distortion after the repair is kept
            info["distortion_before_privacy_int"] = _distortion_int(t.codes, out, t.counts, problem.cost)
            out, sup, privacy = _with_privacy(problem, out, sup, reqs)
            sup &= (out == 0).all(axis=1)
        d = _distortion_int(t.codes, out, t.counts, problem.cost)
        info.update(order=[str(ess[i]) for i in order], distortion_int=d, time=time.perf_counter() - ts)
        runs.append(info)
        if best is None or d < best[0]:
            best = (d, out, sup, order, privacy)
    d, out, sup, order, privacy = best
    info = {"requirements": [str(r) for r in ess], "best_order": [str(ess[i]) for i in order], "runs": runs}
    if privacy is not None:
        info["privacy"] = privacy
    if sup.any() and not all(_requirement_groups_ok(out[~sup], t.counts[~sup], r) for r in reqs):
        sup[:] = False  # some group needs its '*' rows: they are published as a generalised class, not suppressed
    if not all(_requirement_groups_ok(out, t.counts, r) for r in reqs):  # cannot happen: step 3 ran last
        raise RuntimeError("several requirements: a requirement still fails after the repair")
    info["distortion_int"] = d  # the kept run's, measured on this very output
    info["time_total"] = time.perf_counter() - t0
    log.info("several requirements: %d order(s) tried, kept %s, distortion %.4f",
             len(runs), " then ".join(info["best_order"]), info["distortion_int"] / problem.cost.scale)
    return out, sup, info


def _with_privacy(problem: Problem, out: np.ndarray, sup: np.ndarray, reqs: Sequence[_Req]
                  ) -> tuple[np.ndarray, np.ndarray, dict]:
    """Step 5: the privacy repair with one k over every QI, the size of the
    smallest class of ``out`` (which it keeps), then step 3, which keeps
    every model (classes only unite)."""
    t = problem.table
    k0 = int(group(out, t.counts).sizes.min()) if len(out) else 1
    proxy = replace(problem, requirements=[Requirement(tuple(t.qi_names), max(k0, 1))])
    out, sup, info = enforce_checked(proxy, out, sup)
    out = np.ascontiguousarray(out, dtype=np.int32)
    info.update({f"after_{a}": b for a, b in
                 enforce_requirements(out, t.counts, t.hierarchies, problem.cost, reqs).items()})
    return out, sup, info
