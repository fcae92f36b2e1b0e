"""KACA1 and KACA2: k-anonymisation by clustering in attribute hierarchies.

Local recoding by agglomerative clustering of equivalence classes, after
Li, Wong, Fu and Pei (Li et al. 2006, DaWaK, Algorithm 1 "KACA"; Li et al. 2008,
TKDE, Algorithm 1 "KACA1" and Algorithm 2 "KACA2"), with the exact
semantics the papers leave open fixed as follows:

* classes are the distinct code tuples (Li et al. 2008, Def. 2); a class's tuple may
  already be generalised;
* while a class of size ``< k`` exists, one such class ``C`` is chosen
  uniformly at random (``numpy.random.default_rng(problem.seed)``);
* the distance from ``C`` to every other class ``C'`` is the class distance of
  Def. 10 (``|C| * Distortion(t, t12) + |C'| * Distortion(t', t12)``, ``t12``
  the closest common generalisation of Def. 8) -- except when
  ``|C| + |C'| >= 2k``, where it is the distance to the *stub* of ``C'``
  (Def. 14): ``k - |C|`` of its records;
* ``C`` is generalised with the nearest class (exact integer distances; ties
  broken with the seeded RNG among *all* nearest classes in class-id order):
  with the whole of ``C'``, or with its stub, the *trunk* of
  ``|C| + |C'| - k`` records keeping ``C'``'s tuple;
* a merge whose resulting tuple equals another class's tuple joins that class
  (classes with identical tuples are one class, Def. 2).

Distances are computed with the integer costs of
:class:`hieranon.core.cost.CostModel` (``int_costs[j][v] - int_costs[j][u]`` is
the cost of generalising attribute ``j`` from ``u`` to its ancestor ``v``), so
ties are real ties. By Lemma 2 of Li et al. 2008 the total distortion of the output
equals the sum of the merge distances (``details.distance_sum``).

Two interchangeable search paths find the nearest classes:

``fast=False`` (plain)
    the paper's scan of every class per chosen class, ``O(|E| * |E_s| * m)``;
``fast=True`` (default)
    an exact best-first branch-and-bound over a trie of the alive class
    tuples (one level per attribute, fewest distinct values first), kept up
    to date merge by merge. A trie node's lower bound is
    ``|C| * A + min(W, k - |C|) * B``: ``A``/``B`` are the costs of ``C``'s
    side and the candidate's side -- exact over the attributes fixed by the
    path, and for the others bounded through a per-node *span* (a common
    ancestor of the values below: when ``C``'s value is not under the span,
    every class below has the same LCA with it); every attribute adds
    ``>= 0``. ``W`` is the smallest ``min(|C'|, 2k)`` below the node (under
    the stub rule ``C'`` weighs ``>= min(|C'|, k - |C|)``). A small
    depth-first search among the classes sharing ``C``'s longest trie prefix
    gives a first upper bound. Nodes whose bound *equals* the best distance
    are still expanded, so *all* tied nearest classes are found; they are
    then sorted by class id. Both paths consume the same random numbers in
    the same way and return exactly the same merges (checked by the tests).

The clustering loop runs in numba-compiled kernels over class arrays (tuple
matrix, sizes, alive mask, per-class linked lists of member rows) and dense
per-attribute LCA tables (:attr:`hieranon.hierarchies.readers.Hierarchy.lca_table`, or an
ancestor-table walk for hierarchies above
:data:`hieranon.hierarchies.readers.DENSE_LCA_MAX_NODES` nodes).

Optional outlier suppression (Li et al. 2006, sec. 5): with
``suppression_threshold`` set, a chosen class whose nearest distance exceeds
the threshold (in distortion units, the float scale of the cost model) is
suppressed instead of merged: all its QI cells become the root, its rows are
flagged in :attr:`Solution.suppressed` and counted in
``details.suppressed_records``.

The stub is taken from the end of ``C'``'s member list (its last rows in
input order for an original class). Rows with record counts > 1 are
indivisible: a stub takes whole rows until it holds at least ``k - |C|``
records, and the distance uses the records actually taken, so Lemma 2 still
holds exactly.

Several requirements ``<A_i, k_i>`` over different attribute sets (Arca &
Hewett): :mod:`hieranon.algorithms.multireq` runs KACA1 per requirement on
the attributes it adds (block by block of the values earlier requirements
published, or over the whole table), then unites groups until every
requirement holds; KACA2 does so between its two level steps.

Privacy models (``problem.privacy``: l-diversity, t-closeness): KACA1 and
KACA2 cluster for k, then the class-merging repair of
:mod:`hieranon.algorithms.privacy_merge` grows or merges every class (the
suppressed records one more) until it satisfies every model. KACA2 repairs
before its final level raises (step 3): they are a function of the value, so
classes only unite, which keeps every model (Machanavajjhala et al. 2007,
Sec. 5; Li et al. 2007, Sec. 4.1), and the output stays below
``max_inconsistency``.
"""

from __future__ import annotations

import math
import time
from numbers import Real

import numpy as np

from ..core.cost import CostModel, distortion
from ..core.jit import kernel
from ..core.table import group
from ..core.tree import Hierarchy
from ..evaluation.metrics import inconsistency
from .base import Algorithm, Problem, Solution, log
from .details import KACA2Details, KACADetails
from .kaca_core import (
    S_DSUM,
    S_EXPAND,
    S_ITER,
    S_LEN,
    S_LOGN,
    S_MERGES,
    S_NSMALL,
    S_RPOS,
    S_SUPP,
    S_TFREE,
    S_TUSED,
    build_trie,
    check_k,
    choose_trie_order,
    chunk_done,
    grow_trie,
    hierarchy_data,
    merge_classes,
    nearest_fast,
    nearest_plain,
    rows_to_codes,
    set_small,
    trie_remove,
)
from .multireq import single_problem, solve_requirements
from .params import Interval
from .privacy_merge import repair_and_improve, repair_solution
from .tags import SuppressionTags, Tags

__all__ = ["KACA1", "KACA2", "kaca1_codes", "kaca2_global_levels", "kaca2_final_levels"]


_RAND_BATCH_MIN = 1024
#: Iterations of KACA's main loop per call of its kernel: a call returns to
#: Python well within a second, where a KeyboardInterrupt can land.
CHUNK_ITERATIONS = 1000


def _complete_suppression(out: np.ndarray, suppressed: np.ndarray, counts: np.ndarray, k: int, cost) -> int:
    """Suppressed records print ``*`` everywhere and so form a class of their
    own, which must hold >= k records like any other. When outlier suppression
    left 1..k-1 of them, suppress more: surplus rows of classes that keep >= k
    (the most generalised classes first: they lose least), else the smallest
    whole class. Updates ``out`` and ``suppressed``; returns the records added."""
    have = int(counts[suppressed].sum())
    if have == 0 or have >= k:
        return 0
    need = k - have
    rest = np.flatnonzero(~suppressed)
    ec = group(out[rest], counts[rest])
    tuple_cost = cost.cell_costs(ec.keys).sum(axis=1) if len(ec.keys) else np.zeros(0)
    members = [[] for _ in range(ec.n_classes)]
    for r, c in zip(rest, ec.row_class):
        members[c].append(r)
    taken: list[int] = []
    for c in np.argsort(-tuple_cost, kind="stable"):
        left = int(ec.sizes[c])
        for r in reversed(members[c]):  # rows from the end of the class, as a stub (Def. 14)
            if need <= 0:
                break
            if left - counts[r] >= k:
                taken.append(r)
                left -= int(counts[r])
                need -= int(counts[r])
        if need <= 0:
            break
    if need > 0:  # no surplus to take: the smallest class goes whole
        taken = members[int(np.argmin(ec.sizes))]
    taken = np.asarray(taken, dtype=np.int64)
    suppressed[taken] = True
    out[taken] = 0
    return int(counts[taken].sum())


@kernel
def _kaca_loop(fast, k, thr, rand, st, T, size, alive, head, tail, nxt, prv, cnt, unit, small_list, small_pos,
               hd, perm, tr, class_leaf, hp, stk, ties, newtup, suppressed, xa, xb, ea, eb,
               log_c, log_c2, log_d, log_nt, log_kind, log_exp, budget):
    """Li et al. 2008, Algorithm 1, lines 2-7. Returns 0 when no class is smaller
    than k, 1 when the random numbers ran out (the caller appends more to
    the unused ones, ``rand[st[S_RPOS]:]``), 2 when the trie may not have room
    for one more insert (the caller grows it), 3 after ``budget`` iterations
    (so that Ctrl-C can land between calls); it then calls again: all state
    lives in the arrays, and an interrupted iteration is redone from its
    start, so the output does not depend on where the batches end."""
    nr = rand.shape[0]
    m = T.shape[1]
    done = 0
    while st[S_NSMALL] > 0:
        if done >= budget:
            return 3
        done += 1
        if st[S_RPOS] >= nr:
            return 1
        if st[S_TUSED] + m + 1 > tr[0].shape[0]:
            return 2
        # line 3: a class of size < k, uniformly at random
        u = rand[st[S_RPOS]]
        st[S_RPOS] += 1
        ns = st[S_NSMALL]
        p = int(u * ns)
        if p >= ns:
            p = ns - 1
        C = small_list[p]
        # lines 4-5: the nearest classes
        li = st[S_LOGN]
        log_exp[li] = st[S_EXPAND]
        if fast:
            best, nt = nearest_fast(C, k, T, size, unit, tail, prv, cnt, hd, perm, tr, hp, ties, st,
                                     xa, xb, ea, eb, class_leaf, stk)
        else:
            best, nt = nearest_plain(C, k, T, size, alive, unit, tail, prv, cnt, hd, xa, xb, ea, eb, ties)
        if nt > 1 and st[S_RPOS] >= nr:
            st[S_RPOS] -= 1  # redo this iteration with the next batch
            return 1
        st[S_ITER] += 1
        if nt == 0 or (thr >= 0 and best > thr):
            # outlier suppression (Li et al. 2006, sec. 5): C's rows go to the root
            r = head[C]
            while r >= 0:
                suppressed[r] = True
                r = nxt[r]
            st[S_SUPP] += size[C]
            head[C] = -1
            tail[C] = -1
            trie_remove(C, tr, st, class_leaf)
            alive[C] = False
            size[C] = 0
            set_small(C, k, size, alive, small_list, small_pos, st)
            log_c[li] = C
            log_c2[li] = -1
            log_d[li] = best if nt > 0 else -1
            log_nt[li] = nt
            log_kind[li] = 2
            st[S_LOGN] = li + 1
            continue
        pick = 0
        if nt > 1:
            # random tie-break among all nearest classes (in class-id order)
            u = rand[st[S_RPOS]]
            st[S_RPOS] += 1
            pick = int(u * nt)
            if pick >= nt:
                pick = nt - 1
        c2 = ties[pick]
        # line 6: generalise C with C' (or its stub)
        dist, kind, e = merge_classes(C, c2, k, T, size, alive, head, tail, nxt, prv, cnt, unit, hd, perm, tr, st,
                               class_leaf, newtup)
        st[S_MERGES] += 1
        st[S_DSUM] += dist
        set_small(C, k, size, alive, small_list, small_pos, st)
        set_small(c2, k, size, alive, small_list, small_pos, st)
        set_small(e, k, size, alive, small_list, small_pos, st)
        log_c[li] = C
        log_c2[li] = c2
        log_d[li] = dist
        log_nt[li] = nt
        log_kind[li] = kind
        st[S_LOGN] = li + 1
    return 0


def _rand_batch(n_small: int) -> int:
    """Random numbers drawn at a time: enough for every iteration when record
    counts are 1 (each iteration removes a class of size < k)."""
    return max(2 * n_small + 16, _RAND_BATCH_MIN)


def kaca1_codes(codes: np.ndarray, counts: np.ndarray, hierarchies: list[Hierarchy], cost: CostModel, k: int,
                rng: np.random.Generator, *, fast: bool = True, threshold: float | None = None,
                record: bool = False, trie_order=None) -> tuple[np.ndarray, np.ndarray, dict]:
    """KACA1 (Li et al. 2008, Algorithm 1) on a code matrix whose cells may already
    be generalised. Returns ``(codes, suppressed, info)``.

    ``info`` holds ``merges``, ``distance_sum`` (float distortion units, equal
    to the distortion added, Lemma 2), ``distance_sum_int``,
    ``suppressed_records``, ``iterations``, ``classes_in``/``classes_out`` and,
    with ``record``, ``merge_log`` (per iteration: chosen class, partner class
    or -1 when suppressed, integer distance, number of tied nearest classes,
    kind 0 whole / 1 stub / 2 suppressed, and the search's cumulative node
    expansions before it) and ``initial_classes`` (tuples and sizes, whose
    row index is the class id of the log).

    ``trie_order`` overrides the attribute order of the fast path's trie
    (a permutation of the columns); every order gives the same output.
    """
    t0 = time.perf_counter()
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    n, m = codes.shape
    check_k(k, counts)
    ec = group(codes, counts)
    ncls = ec.n_classes
    T = np.ascontiguousarray(ec.keys, dtype=np.int32).copy()
    size = ec.sizes.astype(np.int64).copy()
    alive = np.ones(ncls, dtype=np.bool_)
    # member rows of each class as linked lists in row order
    rc = ec.row_class.astype(np.int64)
    order = np.argsort(rc, kind="stable")
    nxt = np.full(n, -1, dtype=np.int64)
    same = rc[order[:-1]] == rc[order[1:]]
    nxt[order[:-1][same]] = order[1:][same]
    prv = np.full(n, -1, dtype=np.int64)
    prv[order[1:][same]] = order[:-1][same]
    head = np.full(ncls, -1, dtype=np.int64)
    tail = np.full(ncls, -1, dtype=np.int64)
    bounds = np.flatnonzero(np.r_[True, ~same]) if n else np.zeros(0, np.int64)
    head[rc[order[bounds]]] = order[bounds]
    ends = np.r_[bounds[1:] - 1, n - 1] if n else np.zeros(0, np.int64)
    tail[rc[order[ends]]] = order[ends]
    unit = bool((counts == 1).all())

    hd = hierarchy_data(hierarchies, cost)
    perm = choose_trie_order(codes, hd[2]) if trie_order is None else np.asarray(trie_order, dtype=np.int64)
    if sorted(perm.tolist()) != list(range(m)):
        raise ValueError(f"trie_order must be a permutation of range({m}), got {list(perm)}")
    tr, used, class_leaf = build_trie(T, size, k, perm, hd)
    cap = len(tr[0])
    st = np.zeros(S_LEN, dtype=np.int64)
    st[S_TUSED] = used
    st[S_TFREE] = -1
    hp = np.zeros((cap, 4), dtype=np.int64)
    stk = np.zeros((cap, 3), dtype=np.int64)
    tot = int(hd[2].sum())
    xa, xb, ea, eb = (np.zeros(tot, dtype=np.int64) for _ in range(4))
    ties = np.zeros(max(ncls, 1), dtype=np.int64)
    newtup = np.zeros(m, dtype=np.int32)
    suppressed = np.zeros(n, dtype=np.bool_)
    small_list = np.zeros(max(ncls, 1), dtype=np.int64)
    small_pos = np.full(ncls, -1, dtype=np.int64)
    small = np.flatnonzero(size < k)
    small_list[: len(small)] = small
    small_pos[small] = np.arange(len(small))
    st[S_NSMALL] = len(small)
    thr = -1
    if threshold is not None:
        if threshold < 0:
            raise ValueError(f"suppression_threshold must be >= 0, got {threshold}")
        thr = int(math.floor(threshold * cost.scale + 1e-9))

    logs = []
    batch = _rand_batch(len(small))
    rand = np.zeros(0)
    lg = ()
    t_loop = time.perf_counter()
    status = 1
    while status != 0:
        if status == 1:  # a fresh batch of random numbers (and of log space)
            if record and st[S_LOGN]:
                logs.append(np.stack([a[: st[S_LOGN]] for a in lg], axis=1))
            rand = np.concatenate([rand[st[S_RPOS]:], rng.random(batch)])
            lg = tuple(np.zeros(len(rand), dtype=np.int64) for _ in range(6))
            st[S_RPOS] = 0
            st[S_LOGN] = 0
        elif status == 2:  # the trie needs room for another insert
            tr, hp, stk = grow_trie(tr, hp, stk, int(st[S_TUSED]), m)
        else:  # status 3: a chunk of iterations done; Ctrl-C lands here
            chunk_done("kaca")
        status = _kaca_loop(bool(fast), int(k), int(thr), rand, st, T, size, alive, head, tail, nxt, prv, counts,
                            unit, small_list, small_pos, hd, perm, tr, class_leaf, hp, stk, ties, newtup, suppressed,
                            xa, xb, ea, eb, *lg, CHUNK_ITERATIONS)
    if record and st[S_LOGN]:
        logs.append(np.stack([a[: st[S_LOGN]] for a in lg], axis=1))
    t_end = time.perf_counter()
    out = np.zeros_like(codes)
    rows_to_codes(T, alive, head, nxt, out)
    out[suppressed] = 0
    topped_up = _complete_suppression(out, suppressed, counts, k, cost)
    info = {
        "merges": int(st[S_MERGES]),
        "distance_sum": float(st[S_DSUM]) / cost.scale,
        "distance_sum_int": int(st[S_DSUM]),
        "suppressed_records": int(st[S_SUPP]) + topped_up,
        "suppressed_to_reach_k": topped_up,
        "iterations": int(st[S_ITER]),
        "classes_in": int(ncls),
        "classes_out": int(alive.sum()),
        "nodes_expanded": int(st[S_EXPAND]),
        "fast": bool(fast),
        "time_loop": t_end - t_loop,
        "time_total": t_end - t0,
    }
    if record:
        info["merge_log"] = np.concatenate(logs, axis=0) if logs else np.zeros((0, 6), np.int64)
        info["initial_classes"] = (ec.keys.copy(), ec.sizes.copy())
    return out, suppressed, info


# ---------------------------------------------------------------- KACA2 steps
#: Tolerance of the float comparisons with max_inconsist (a fraction equal to
#: the threshold counts as reaching it).
_EPS = 1e-12


def _freq_lower_bound(col: np.ndarray, counts: np.ndarray, k: int) -> float:
    """Li et al. 2008, Lemma 4: ``(sum of f_j over values with f_j < k) / |D|``."""
    uniq, inv = np.unique(col, return_inverse=True)
    f = np.bincount(inv.ravel(), weights=counts, minlength=len(uniq))
    total = counts.sum()
    return float(f[f < k].sum() / total) if total else 0.0


def kaca2_global_levels(codes: np.ndarray, counts: np.ndarray, hierarchies: list[Hierarchy], k: int,
                        max_inconsistency: float) -> tuple[np.ndarray, list[int]]:
    """Li et al. 2008, Algorithm 2, lines 1-3: per attribute, while the Lemma 4
    lower bound of the generalisation portion is ``>= max_inconsist``,
    globally generalise the attribute one level (every value to its ancestor
    at the next shallower depth; on unbalanced trees shallower leaves stay).
    Returns the codes and the number of levels each attribute went up."""
    out = np.array(codes, dtype=np.int32, copy=True)
    steps = []
    for j, h in enumerate(hierarchies):
        d = int(h.depth[out[:, j]].max()) if len(out) else 0
        s = 0
        while d > 0 and _freq_lower_bound(out[:, j], counts, k) >= max_inconsistency - _EPS:
            d -= 1
            out[:, j] = h.ancestor_at_depth(out[:, j], d)
            s += 1
        steps.append(s)
    return out, steps


def kaca2_final_levels(codes: np.ndarray, counts: np.ndarray, hierarchies: list[Hierarchy],
                       max_inconsistency: float) -> tuple[np.ndarray, list[int]]:
    """Li et al. 2008, Algorithm 2, lines 5-9 (reading its ``<`` as the typo it is:
    *while* ``inconsist_i >= max_inconsist``): generalise every cell of the attribute
    at the most specific level present one level up. A function of the value,
    so classes only merge and k-anonymity is kept. Returns the codes and the
    number of rounds per attribute."""
    out = np.array(codes, dtype=np.int32, copy=True)
    rounds = []
    for j, h in enumerate(hierarchies):
        r = 0
        while len(out) and inconsistency(out[:, j:j + 1], [h], counts)[0] >= max_inconsistency - _EPS:
            dep = h.depth[out[:, j]]
            dmax = int(dep.max())
            if dmax == 0:
                break
            sel = dep == dmax
            out[sel, j] = h.parent[out[sel, j]]
            r += 1
        rounds.append(r)
    return out, rounds


# ---------------------------------------------------------------- classes
class KACA1(Algorithm):
    """KACA1: k-anonymisation by clustering in attribute hierarchies
    (Li et al. 2008, Algorithm 1; Li et al. 2006, Algorithm 1 "KACA").

    Parameters
    ----------
    fast : bool
        Use the exact branch-and-bound nearest-class search (default) instead
        of the paper's full scan; both return identical output for a seed.
    suppression_threshold : float, optional
        Outlier suppression (Li et al. 2006, sec. 5): a chosen class whose nearest
        class distance (Def. 10, distortion units) exceeds this is suppressed.
    """

    name = "kaca1"
    tags = Tags(several_requirements=True, privacy_models=True, randomised=True,
                suppression=SuppressionTags(setting="suppression_threshold"))
    parameters = {"fast": bool, "suppression_threshold": Interval(Real, 0, None) | None}

    def __init__(self, fast: bool = True, suppression_threshold: float | None = None):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""

    def _run_kaca1(self, problem: Problem, codes: np.ndarray, rng: np.random.Generator):
        t = problem.table
        return kaca1_codes(codes, t.counts, t.hierarchies, problem.cost, problem.k, rng,
                           fast=self.fast, threshold=self.suppression_threshold)

    def _solve(self, problem: Problem) -> Solution:
        rng = np.random.default_rng(problem.seed)
        single = single_problem(problem)
        if single is None:  # several requirements over different attribute sets
            codes, sup, info = self._run_several(problem, problem.table.codes, rng)
            return Solution(codes, sup, KACADetails(**info))
        problem = single
        codes, sup, info = self._run_kaca1(problem, problem.table.codes, rng)
        log.info("kaca1: %d merges, distortion %.4f, %d suppressed records", info["merges"],
                 info["distance_sum"], info["suppressed_records"])
        return repair_solution(problem, Solution(codes, sup, KACADetails(**info)))

    def _run_several(self, problem: Problem, codes: np.ndarray, rng: np.random.Generator):
        """Several requirements: :func:`~hieranon.algorithms.multireq.solve_requirements`
        clustering each block with KACA1 (privacy models included). Returns
        ``(codes, suppressed, info)``, ``info`` summing KACA1's counts over
        the clusterings of the order kept."""
        t0 = time.perf_counter()
        infos: list[dict] = []

        def cluster(c, counts, hierarchies, cost, k):
            out, sup, info = kaca1_codes(c, counts, hierarchies, cost, k, rng, fast=self.fast,
                                         threshold=self.suppression_threshold)
            infos.append(info)
            return out, sup, info

        out, sup, req = solve_requirements(problem, cluster, codes)
        starts = np.cumsum([0] + [r["clusterings"] for r in req["runs"]])
        best = min(range(len(req["runs"])), key=lambda i: req["runs"][i]["distortion_int"])
        kept = infos[starts[best]:starts[best + 1]]
        t = problem.table
        info = {name: sum(i[name] for i in kept) for name in
                ("merges", "distance_sum", "distance_sum_int", "suppressed_to_reach_k", "iterations",
                 "nodes_expanded", "time_loop")}
        info.update(suppressed_records=int(t.counts[sup].sum()), classes_in=group(codes).n_classes,
                    classes_out=group(out).n_classes, fast=bool(self.fast), privacy=req.pop("privacy", None),
                    requirements=req, time_total=time.perf_counter() - t0)
        log.info("%s: several requirements, %d merges, %d suppressed records", self.name, info["merges"],
                 info["suppressed_records"])
        return out, sup, info


class KACA2(KACA1):
    """KACA2: KACA1 under a maximum inconsistency (Li et al. 2008, Algorithm 2).

    1. per attribute, global recoding one level at a time while the Lemma 4
       lower bound of the generalisation portion is ``>= max_inconsistency``;
    2. KACA1 (Li et al. 2008, Algorithm 1);
    3. per attribute, while its inconsistency (Def. 12) is
       ``>= max_inconsistency``, the cells at the most specific level present
       go one level up.

    The output's inconsistency is below ``max_inconsistency`` on every attribute.
    """

    name = "kaca2"
    parameters = {**KACA1.parameters, "max_inconsistency": Interval(Real, 0, 1, closed="right")}

    def __init__(self, fast: bool = True, suppression_threshold: float | None = None,
                 max_inconsistency: float = 0.10):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""

    def _solve(self, problem: Problem) -> Solution:
        t = problem.table
        rng = np.random.default_rng(problem.seed)
        single = single_problem(problem)
        g1, steps = kaca2_global_levels(t.codes, t.counts, t.hierarchies, problem.k, self.max_inconsistency)
        if single is None:  # several requirements; the privacy repair runs inside, before step 3
            codes, sup, info = self._run_several(problem, g1, rng)
            privacy = info.pop("privacy")
        else:
            problem = single
            codes, sup, info = self._run_kaca1(problem, g1, rng)
            privacy = None
            if problem.privacy:  # before step 3: its level raises only unite classes, which keeps every model
                codes, sup, privacy = repair_and_improve(problem, codes, sup)
        g3, rounds = kaca2_final_levels(codes, t.counts, t.hierarchies, self.max_inconsistency)
        g3[sup] = 0
        cost = problem.cost
        d1 = distortion(t.codes, g1, cost, t.counts)
        d3 = distortion(t.codes, g3, cost, t.counts)
        details = KACA2Details(**info, distortion_global_step=d1, distortion_final_step=d3 - d1 - info["distance_sum"],
                               distortion_total=d3, global_levels=dict(zip(t.qi_names, steps)),
                               final_rounds=dict(zip(t.qi_names, rounds)), max_inconsistency=self.max_inconsistency,
                               privacy=privacy)
        log.info("kaca2: global levels %s, %d merges, final rounds %s", steps, info["merges"], rounds)
        return Solution(g3, sup, details)
