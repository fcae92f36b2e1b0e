"""Lower bounds of the distortion of every k-anonymous local recoding.

Record-level local recoding -- the MinGen program of Arca & Hewett with the WHD
distortion of Li et al. 2006 (Def. 6-7) as objective -- gives each record a node of
the product of the hierarchies above it (its output tuple), and every node
used must gather at least ``k`` records (Def. 2: records printing the same
tuple form one class). Each record ``r`` placed at node ``g`` costs
``c(g) - c(r)``, the sum over attributes of the WHD of its cells.

Solving that program exactly is out of reach beyond a few hundred records,
but relaxing its "every record gets exactly one node" constraints with one
multiplier ``u[r]`` per record (Lagrangian relaxation) leaves one easy problem
per node: open it with the records of most negative reduced cost
``c(g) - c(r) - u[r]`` (at least ``k`` of them) or leave it closed. For every
``u`` the relaxed optimum ``sum(u) + sum_g min(0, best_g(u))`` is a lower bound
of the distortion of *any* k-anonymous local recoding; subgradient ascent
(Polyak steps) raises it. Its starting point, ``u[r]`` = the cheapest node above
``r`` with ``>= k`` records under it, is the simple bound "each record alone".

The bound is what :func:`distortion_lower_bound` returns: an optimality
certificate for large tables, where the exact optimum is unknown (on UCI Adult,
8 QIs, k = 10, it shows in about 10 s on 2 cores that no local recoding
reaches a distortion ratio below 0.1016; ``benchmarks/bench_bound.py``).

With the t-closeness of a two-valued sensitive attribute (equal or ordered
distance: the EMD is the difference of the shares of one value, Li, Li &
Venkatasubramanian 2007) each node's easy problem also keeps that share
within ``t`` of the table's (:func:`share_constraint`), and the bound holds
for every output meeting the model too (Adult, k = 10, t = 0.2: 0.165).

Only nodes with at least ``k`` records under them can be used. They are found
by a depth-first walk over the depth vectors of the product of the
hierarchies, each vector refining its parent's groups by one attribute and
dropping every group under ``k`` records (their refinements are smaller still).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from .core.cost import CostModel, full_distortion
from .core.jit import kernel
from .core.progress import stage as progress_stage
from .core.table import EncodedTable

log = logging.getLogger(__name__)

__all__ = ["DistortionBound", "BoundTooLarge", "RelaxedPrices", "candidate_nodes", "distinct_member_sets",
           "distortion_lower_bound", "problem_lower_bound", "relaxed_prices", "share_constraint", "tightest_share"]


#: Screening margin of the relaxation, in units of a whole attribute generalised
#: to its root: members less than this above a node's cost are counted as it
#: is scanned from the units' side (a speed setting; the bound is the same).
MARGIN_LEVELS = 0.5

#: Polyak steps aim this share of the way from the best bound so far to the
#: known output's distortion: aiming at the output itself (share 1) overshoots,
#: as the optimum lies much nearer the bound (a speed setting; any value gives
#: a valid bound).
TARGET_SHARE = 0.3

#: Partial pricing of the ascent: one full evaluation every this many steps,
#: the steps between over the nodes full evaluations opened; the step halves
#: after STALE_FULL full evaluations without a rise (speed settings; the
#: bound is only ever taken from full evaluations, so it stays valid).
FULL_EVERY = 8
STALE_FULL = 4

#: Deflection of the ascent's steps (Camerini, Fratta & Maffioli 1975): 1.5,
#: their recommended value, reaches the plain steps' bound in three quarters
#: of the iterations on UCI Adult (a speed setting; any value gives a valid bound).
DEFLECTION = 1.5

#: The walk of the candidate nodes hands the subtrees this many refinements
#: below the top to numba's threads, for tables of at least SPLIT_ROWS
#: distinct rows (a speed setting: the nodes are the same).
SPLIT_LEVEL = 3
SPLIT_ROWS = 2_000

#: The relaxation of more than 100,000 nodes is evaluated in this many node
#: ranges (in numba's threads), whatever the number of threads.
RELAXATION_CHUNKS = 8


class BoundTooLarge(ValueError):
    """The candidate nodes of the relaxation do not fit the given limit."""


@dataclass
class DistortionBound:
    """A lower bound of the distortion of every k-anonymous local recoding.

    Attributes
    ----------
    ratio : float
        Lower bound of the distortion ratio (distortion over that of the fully
        generalised table, Li et al. 2006, sec. 6).
    distortion : float
        The same bound in distortion units (Li et al. 2006, Def. 7).
    simple_ratio : float
        The starting bound: each record alone at the cheapest node above it
        with ``>= k`` records under it.
    optimal : bool
        True when the relaxed solution is itself a k-anonymous assignment: the
        bound is then the exact optimum.
    iterations : int
        Subgradient iterations run.
    nodes : int
        Candidate nodes (``>= k`` records under them), one per distinct set
        of records (:func:`distinct_member_sets`).
    incidences : int
        Pairs (distinct row, candidate node above it).
    seconds : float
        Wall time.
    stage_seconds : dict
        Wall time of each stage: ``"candidates"`` (the walk over the
        hierarchies), ``"distinct"`` (one node per set of records),
        ``"setup"`` (the units' node lists) and ``"ascent"``.
    models : tuple of str
        The privacy models the bound honours besides k (descriptions); the
        bound holds for every output meeting them and the requirement.
    """

    ratio: float
    distortion: float
    simple_ratio: float
    optimal: bool
    iterations: int
    nodes: int
    incidences: int
    seconds: float
    stage_seconds: dict = field(default_factory=dict)
    models: tuple = ()


def candidate_nodes(units: np.ndarray, weights: np.ndarray, hierarchies, int_costs, k: int,
                    max_incidences: int = 400_000_000, max_vectors: int = 2_000_000, *,
                    split_level: int | None = None, label: str = "lower bound"):
    """Every node of the product of ``hierarchies`` with ``>= k`` records under it.

    ``units`` are distinct rows of codes, ``weights`` their record counts.
    Returns ``(members, starts, node_cost)``: node ``g``'s rows are
    ``members[starts[g]:starts[g + 1]]`` (indices into ``units``, ascending) and
    its cost ``node_cost[g]`` is the sum of ``int_costs[j]`` over its cells.
    Nodes come depth vector by depth vector, in a depth-first walk that
    refines one attribute at a time (attributes in increasing order), and
    within a vector in the order of their cells.
    The subtrees of the walk below ``split_level`` refinements (default:
    :data:`SPLIT_LEVEL` when numba has several threads and the table
    ``SPLIT_ROWS`` distinct rows or more) are walked in parallel threads and
    spliced back in place: the result is the same.
    Raises :class:`BoundTooLarge` past ``max_incidences`` (row, node) pairs
    or ``max_vectors`` depth vectors holding such nodes. ``label`` names the
    work in the progress display.
    """
    if weights.sum() < k:
        return np.zeros(0, np.int32), np.zeros(1, np.int64), np.zeros(0, np.int64)
    q = units.shape[1]
    hh = np.array([h.ancestors.shape[1] for h in hierarchies], dtype=np.int64)
    nn = np.array([h.n_nodes for h in hierarchies], dtype=np.int64)
    off = np.zeros(q + 1, dtype=np.int64)
    off[1:] = np.cumsum(nn)
    anc = np.concatenate([np.ascontiguousarray(h.ancestors, dtype=np.int64).ravel() for h in hierarchies])
    aoff = np.zeros(q + 1, dtype=np.int64)
    aoff[1:] = np.cumsum(nn * hh)
    dep = np.concatenate([np.asarray(h.depth, dtype=np.int64) for h in hierarchies])
    ic = np.concatenate([np.asarray(c, dtype=np.int64) for c in int_costs])
    rowcost = sum(int_costs[j][h.ancestors[units[:, j], 0]] for j, h in enumerate(hierarchies)).astype(np.int64)
    heights = np.array([h.height for h in hierarchies], dtype=np.int64)
    units = np.ascontiguousarray(units, dtype=np.int64)
    weights = np.ascontiguousarray(weights, dtype=np.int64)
    if split_level is None:
        split_level = SPLIT_LEVEL if nb.get_num_threads() > 1 and len(units) >= SPLIT_ROWS else -1
    fixed = (units, weights, heights, hh, nn, off, anc, aoff, dep, ic, int(k))

    def walk(rows, gid, cst, depths, first, level, inc_left, vec_left):
        status, *out = _candidate_walk(*fixed, rows, gid, cst, depths, int(first), int(level), int(inc_left),
                                       int(vec_left))
        if status:
            _refuse(status == 1, k, max_incidences, max_vectors)
        return out

    members, sizes, costs, n_vectors, *tasks = walk(np.arange(len(units), dtype=np.int64),
                                                    np.zeros(len(units), dtype=np.int64), rowcost,
                                                    np.zeros(q, dtype=np.int64), 0, split_level, max_incidences,
                                                    max_vectors)
    if len(tasks[0]):
        with progress_stage(f"{label}, k = {k}: nodes of >= k records", total=len(tasks[0]),
                            detail=f"{len(tasks[0])} subtrees of the hierarchies") as stage:
            members, sizes, costs, n_vectors = _walk_tasks(walk, members, sizes, costs, n_vectors, tasks,
                                                             max_incidences, max_vectors, stage)
        if n_vectors > max_vectors or len(members) > max_incidences:  # subtrees walked at once pass them together
            _refuse(n_vectors > max_vectors, k, max_incidences, max_vectors)
    starts = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    return members, starts, costs


def _refuse(vectors: bool, k: int, max_incidences: int, max_vectors: int):
    """Raise :class:`BoundTooLarge` for the depth-vector (or else the pair) limit."""
    if vectors:
        raise BoundTooLarge(
            f"the lower bound needs more than {max_vectors:,} depth vectors of the hierarchies for k = {k}; "
            "use fewer quasi-identifiers or lower hierarchies, a larger k, or raise max_vectors")
    raise BoundTooLarge(
        f"the lower bound needs more than {max_incidences:,} (row, node) pairs for k = {k}; "
        "use fewer quasi-identifiers, a larger k, or raise max_incidences")


def _walk_tasks(walk, members, sizes, costs, n_vectors, tasks, max_incidences, max_vectors, stage):
    """The subtrees the walk left at its split level (``tasks``: their
    positions in its output and starting groups), walked by numba's threads
    (its kernels release the GIL) and spliced back in place, each counted
    on ``stage`` as it is done. Returns the members, sizes, costs and the
    number of depth vectors in all."""
    at_node, at_member, first, t_depths, t_off, t_rows, t_gid, t_cst = tasks
    used = [len(members), n_vectors]
    lock = threading.Lock()

    def one(i):
        with lock:
            inc_left, vec_left = max_incidences - used[0], max_vectors - used[1]
        lo, hi = t_off[i], t_off[i + 1]
        out = walk(t_rows[lo:hi], t_gid[lo:hi], t_cst[lo:hi], t_depths[i], first[i], -1, inc_left, vec_left)
        with lock:
            used[0] += len(out[0])
            used[1] += out[3]
        return out

    pool = ThreadPoolExecutor(max_workers=nb.get_num_threads())
    parts = []
    try:
        for part in pool.map(one, range(len(first))):
            parts.append(part)
            stage.update(len(parts))
    finally:  # on an error or Ctrl-C, the subtrees not yet begun are dropped
        pool.shutdown(cancel_futures=True)
    spliced = (_splice(whole, cuts, [part[i] for part in parts])
               for i, (whole, cuts) in enumerate(((members, at_member), (sizes, at_node), (costs, at_node))))
    return (*spliced, used[1])


def _splice(whole: np.ndarray, cuts: np.ndarray, inserts: list) -> np.ndarray:
    """``whole`` with ``inserts[i]`` put in at position ``cuts[i]`` (ascending)."""
    pieces = np.split(whole, cuts)
    return np.concatenate([pieces[0], *(x for insert, rest in zip(inserts, pieces[1:]) for x in (insert, rest))])


@kernel
def _grow(a, need):
    """``a`` with room for at least ``need`` entries (2x growth)."""
    if need <= len(a):
        return a
    b = np.empty(max(need, 2 * len(a)), dtype=a.dtype)
    b[: len(a)] = a
    return b


@kernel
def _sort_within_groups(key, grp, val, m, cbuf, order):
    """``order[:m]``: the stable order of ``key[:m]``, whose entries come in
    runs of equal ``grp`` (non-decreasing) and differ within a run by ``val``
    (small non-negative integers): an insertion sort for short runs, a
    counting sort (``cbuf``, zero on entry and exit) for long ones."""
    i0 = 0
    while i0 < m:
        i1 = i0 + 1
        while i1 < m and grp[i1] == grp[i0]:
            i1 += 1
        if i1 - i0 <= 32:
            for i in range(i0, i1):
                x = i
                t = i - 1
                while t >= i0 and key[order[t]] > key[x]:
                    order[t + 1] = order[t]
                    t -= 1
                order[t + 1] = x
        else:
            vmax = 0
            for i in range(i0, i1):
                cbuf[val[i] + 1] += 1
                if val[i] > vmax:
                    vmax = val[i]
            for v in range(1, vmax + 2):
                cbuf[v] += cbuf[v - 1]
            for i in range(i0, i1):
                order[i0 + cbuf[val[i]]] = i
                cbuf[val[i]] += 1
            for v in range(vmax + 2):
                cbuf[v] = 0
        i0 = i1


@kernel(nogil=True)
def _candidate_walk(units, weights, heights, hh, nn, off, anc, aoff, dep, ic, k, rows0, gid0, cst0, depths0, first,
                    split, max_inc, max_vec):
    """The depth-first walk of :func:`candidate_nodes` from one depth vector
    (``depths0``; its groups: rows ``rows0`` with group ids ``gid0`` and node
    costs ``cst0``; refining attributes ``first`` on): level ``L`` of the
    stack holds, from ``base[L]`` on, the rows (grouped, each group one node
    of ``>= k`` records), group ids and node costs of one depth vector.
    Vectors ``split`` refinements down (``split >= 1``) are not walked but
    returned as tasks, each with the node and member counts emitted before
    it, its first attribute, depth vector and groups.
    Returns (status: 0, or 1/2 past the vector/pair limit, members, node
    sizes, node costs, vectors walked, then the tasks' arrays)."""
    n = len(units)
    q = units.shape[1]
    m0 = len(rows0)
    L = int(heights.sum()) + 2
    rows = np.empty(2 * m0 + 1, dtype=np.int64)
    gid = np.empty(2 * m0 + 1, dtype=np.int64)
    cst = np.empty(2 * m0 + 1, dtype=np.int64)
    base = np.zeros(L, dtype=np.int64)
    lens = np.zeros(L, dtype=np.int64)
    nextj = np.zeros(L, dtype=np.int64)
    depths = np.zeros((L, q), dtype=np.int64)
    key = np.empty(n, dtype=np.int64)
    tr = np.empty(n, dtype=np.int64)
    tc = np.empty(n, dtype=np.int64)
    gw = np.empty(n, dtype=np.int64)
    tg = np.empty(n, dtype=np.int64)
    ta = np.empty(n, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    cbuf = np.zeros(int(nn.max()) + 1, dtype=np.int64)
    members = np.empty(max(4 * m0, 1 << 16), dtype=np.int32)
    sizes = np.empty(1024, dtype=np.int64)
    costs = np.empty(1024, dtype=np.int64)
    t_node = np.empty(16, dtype=np.int64)
    t_member = np.empty(16, dtype=np.int64)
    t_first = np.empty(16, dtype=np.int64)
    t_depths = np.empty((16, q), dtype=np.int64)
    t_off = np.zeros(17, dtype=np.int64)
    t_rows = np.empty(16, dtype=np.int64)
    t_gid = np.empty(16, dtype=np.int64)
    t_cst = np.empty(16, dtype=np.int64)
    status = 0
    nt = 0
    nm = 0
    ng = 0
    nvec = 0
    rows[:m0] = rows0
    gid[:m0] = gid0
    cst[:m0] = cst0
    depths[0] = depths0
    nextj[0] = first
    lens[0] = m0
    lvl = 0 if m0 > 0 else -1
    fresh = True
    while lvl >= 0:
        if fresh:  # emit the nodes of this depth vector
            fresh = False
            nvec += 1
            m = lens[lvl]
            if nvec > max_vec or nm + m > max_inc:
                status = 1 if nvec > max_vec else 2
                break
            members = _grow(members, nm + m)
            b = base[lvl]
            ngroups = gid[b + m - 1] + 1
            sizes = _grow(sizes, ng + ngroups)
            costs = _grow(costs, ng + ngroups)
            for i in range(m):
                members[nm + i] = rows[b + i]
                if i == 0 or gid[b + i] != gid[b + i - 1]:
                    sizes[ng] = 0
                    costs[ng] = cst[b + i]
                    ng += 1
                sizes[ng - 1] += 1
            nm += m
        j = nextj[lvl]
        if j >= q:
            lvl -= 1
            continue
        nextj[lvl] = j + 1
        d = depths[lvl, j] + 1
        if d >= heights[j]:
            continue
        # the rows whose value of attribute j is at depth >= d, keyed by (group, ancestor at d)
        m = 0
        b = base[lvl]
        for i in range(lens[lvl]):
            r = rows[b + i]
            v = units[r, j]
            if dep[off[j] + v] >= d:
                a = anc[aoff[j] + v * hh[j] + d]
                ap = anc[aoff[j] + v * hh[j] + d - 1]
                key[m] = gid[b + i] * nn[j] + a
                tg[m] = gid[b + i]
                ta[m] = a
                tr[m] = r
                tc[m] = cst[b + i] + ic[off[j] + a] - ic[off[j] + ap]
                m += 1
        if m == 0:
            continue
        _sort_within_groups(key, tg, ta, m, cbuf, order)
        # records per new group
        ngr = 0
        for i in range(m):
            if i == 0 or key[order[i]] != key[order[i - 1]]:
                gw[ngr] = 0
                ngr += 1
            gw[ngr - 1] += weights[tr[order[i]]]
        c = lvl + 1
        base[c] = b + lens[lvl]
        bc = base[c]
        rows = _grow(rows, bc + m)
        gid = _grow(gid, bc + m)
        cst = _grow(cst, bc + m)
        cnt = 0
        g = -1
        kept = -1
        for i in range(m):
            if i == 0 or key[order[i]] != key[order[i - 1]]:
                g += 1
                if gw[g] >= k:
                    kept += 1
            if gw[g] >= k:
                o = order[i]
                rows[bc + cnt] = tr[o]
                gid[bc + cnt] = kept
                cst[bc + cnt] = tc[o]
                cnt += 1
        if cnt == 0:
            continue
        if c == split:  # a task: its vector and subtree are walked apart
            if nt == len(t_node):
                t_node = _grow(t_node, nt + 1)
                t_member = _grow(t_member, nt + 1)
                t_first = _grow(t_first, nt + 1)
                t_off = _grow(t_off, len(t_node) + 1)
                wider = np.empty((len(t_node), q), dtype=np.int64)
                wider[:nt] = t_depths[:nt]
                t_depths = wider
            t_node[nt] = ng
            t_member[nt] = nm
            t_first[nt] = j
            t_depths[nt] = depths[lvl]
            t_depths[nt, j] = d
            t_rows = _grow(t_rows, t_off[nt] + cnt)
            t_gid = _grow(t_gid, t_off[nt] + cnt)
            t_cst = _grow(t_cst, t_off[nt] + cnt)
            t_rows[t_off[nt]:t_off[nt] + cnt] = rows[bc:bc + cnt]
            t_gid[t_off[nt]:t_off[nt] + cnt] = gid[bc:bc + cnt]
            t_cst[t_off[nt]:t_off[nt] + cnt] = cst[bc:bc + cnt]
            t_off[nt + 1] = t_off[nt] + cnt
            nt += 1
            continue
        for jj in range(q):
            depths[c, jj] = depths[lvl, jj]
        depths[c, j] = d
        lens[c] = cnt
        nextj[c] = j
        lvl = c
        fresh = True
    return status, members[:nm].copy(), sizes[:ng].copy(), costs[:ng].copy(), nvec, t_node[:nt].copy(), \
        t_member[:nt].copy(), t_first[:nt].copy(), t_depths[:nt].copy(), t_off[:nt + 1].copy(), \
        t_rows[:t_off[nt]].copy(), t_gid[:t_off[nt]].copy(), t_cst[:t_off[nt]].copy()


@kernel(parallel=True)
def _member_hashes(members, starts, salt):
    """Per node, a hash of its member set (the sum of the members' random salts)."""
    n = len(starts) - 1
    out = np.zeros(n, dtype=np.uint64)
    for g in nb.prange(n):
        x = np.uint64(0)
        for i in range(starts[g], starts[g + 1]):
            x += salt[members[i]]
        out[g] = x
    return out


@kernel
def _same_members(members, starts, g, h):
    if starts[g + 1] - starts[g] != starts[h + 1] - starts[h]:
        return False
    for i in range(starts[g + 1] - starts[g]):
        if members[starts[g] + i] != members[starts[h] + i]:
            return False
    return True


@kernel(parallel=True)
def _cheapest_of_each_set(order, key, members, starts, node_cost):
    """``order`` lists the nodes by hash (ids ascending within a hash): keep,
    of each distinct member set, its cheapest node (ties: the lowest id),
    comparing member lists within runs of equal hash."""
    n = len(order)
    keep = np.zeros(n, dtype=np.bool_)
    heads = np.flatnonzero(np.concatenate((np.ones(1, dtype=np.bool_), key[order[1:]] != key[order[:-1]])))
    bounds = np.append(heads, n)
    for r in nb.prange(len(heads)):
        for x in range(bounds[r], bounds[r + 1]):
            g = order[x]
            keep[g] = True
            for y in range(bounds[r], x):
                h = order[y]
                if keep[h] and _same_members(members, starts, g, h):
                    if node_cost[g] < node_cost[h]:
                        keep[h] = False
                    else:
                        keep[g] = False
                    break
    return keep


@kernel(parallel=True)
def _gather_nodes(members, starts, nodes):
    """The member lists of ``nodes``, in that order: (members, starts)."""
    new_starts = np.zeros(len(nodes) + 1, dtype=np.int64)
    for x in range(len(nodes)):
        new_starts[x + 1] = new_starts[x] + starts[nodes[x] + 1] - starts[nodes[x]]
    out = np.empty(new_starts[-1], dtype=members.dtype)
    for x in nb.prange(len(nodes)):
        g = nodes[x]
        out[new_starts[x]:new_starts[x + 1]] = members[starts[g]:starts[g + 1]]
    return out, new_starts


def distinct_member_sets(members: np.ndarray, starts: np.ndarray, node_cost: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The candidate nodes less those whose member set a node no dearer has.

    Such a node ``g`` (same records as ``g'``, ``c(g) >= c(g')``) is never
    needed: moving every record placed at ``g`` to ``g'`` keeps ``g'`` at
    ``>= k`` records and costs no more, so the optimum over the nodes left is
    the same, and the relaxation without ``g`` is a valid bound of it -- and
    a higher one (``g`` can no longer open beside ``g'``). A node is often
    such a copy (on UCI Adult, 8 QIs, k = 10: 55 % of them), whenever its
    records share a value one level lower. The nodes kept come ordered by
    their first member, then cost (records near in the table touch nodes
    near in memory). Returns ``(members, starts, node_cost)`` as
    :func:`candidate_nodes` does.
    """
    if len(node_cost) == 0:
        return members, starts, node_cost
    salt = np.random.default_rng(0).integers(0, 2**63, int(members.max()) + 1, dtype=np.int64).astype(np.uint64)
    key = _member_hashes(members, starts, salt)
    order = np.argsort(key, kind="stable")
    keep = _cheapest_of_each_set(order, key, members, starts, node_cost)
    kept = np.flatnonzero(keep)
    kept = kept[np.lexsort((node_cost[kept], members[starts[kept]]))]
    new_members, new_starts = _gather_nodes(members, starts, kept)
    return new_members, new_starts, node_cost[kept]


@kernel
def _unit_nodes(members, starts, node_cost, n_units, ucost):
    """Per unit, its candidate nodes from the cheapest up: node ``unodes[i]``
    for ``i`` in ``ustart[t]:ustart[t + 1]``, its cost written to ``ucost[i]``."""
    ustart = np.zeros(n_units + 1, dtype=np.int64)
    for i in range(len(members)):
        ustart[members[i] + 1] += 1
    for t in range(n_units):
        ustart[t + 1] += ustart[t]
    fill = ustart[:-1].copy()
    unodes = np.empty(len(members), dtype=np.int32)
    for g in np.argsort(node_cost, kind="mergesort"):
        for i in range(starts[g], starts[g + 1]):
            t = members[i]
            unodes[fill[t]] = g
            ucost[fill[t]] = node_cost[g]
            fill[t] += 1
    return ustart, unodes


@kernel
def _touch(lo, hi, price, ustart, unodes, ucost, weights, margin, cnt, val, near, near_val, touched):
    """The nodes ``lo <= g < hi`` cheaper than some member's price (the only
    ones that can open), listed from ``touched[lo]`` on (their number is
    returned), with the count and reduced cost of those members in ``cnt``
    and ``val``, and of the members within ``margin`` above (reduced cost in
    [0, margin)) in ``near`` and ``near_val``. Each unit's node list is
    sorted by cost (``ucost``: the costs of ``unodes``, read in order): its
    scan stops at its price plus the margin."""
    m = lo
    for t in range(len(price)):
        p = price[t]
        w = weights[t]
        for i in range(ustart[t], ustart[t + 1]):
            red = ucost[i] - p
            if red >= margin:
                break
            g = unodes[i]
            if g < lo or g >= hi:
                continue
            if cnt[g] == 0 and near[g] == 0:
                touched[m] = g
                m += 1
            if red < 0:
                cnt[g] += w
                val[g] += red * w
            else:
                near[g] += w
                near_val[g] += red * w
    return m - lo


@kernel
def _settle(lo, hi, touched, price, members, starts, node_cost, weights, k, margin, cnt, val, near, near_val,
            assigned, bufv, bufu, opened, positive, share_lo, share_hi):
    """Touched nodes ``touched[lo:hi]``: open each whose best selection (its
    negative members, topped up to ``k`` with the cheapest others) has a
    negative reduced cost; returns the sum of those; resets the work arrays.
    A node whose near members, and ``margin`` for each record still missing,
    already make the selection non-negative is left closed unread (a share
    constraint only raises a node's best value: the screen holds). With
    ``share_lo > 0`` or ``share_hi < 1`` a selection must also hold that
    share of ``positive`` records (:func:`_balanced_node`)."""
    balanced = share_lo > 0 or share_hi < 1
    total = 0.0
    for x in range(lo, hi):
        g = touched[x]
        c = node_cost[g]
        neg = cnt[g]
        value = val[g]
        n_near = near[g]
        v_near = near_val[g]
        cnt[g] = 0
        val[g] = 0.0
        near[g] = 0
        near_val[g] = 0.0
        if neg == 0 or (neg + n_near < k and value + v_near + (k - neg - n_near) * margin >= 0):
            continue
        if balanced:
            best = _balanced_node(g, c, price, members, starts, weights, positive, k, share_lo, share_hi, assigned)
            if best < 0:
                total += best
                opened[g] = True
            continue
        nbuf = 0
        if neg < k:
            # the k - neg cheapest other records (insertion into a sorted buffer)
            need = k - neg
            for i in range(starts[g], starts[g + 1]):
                t = members[i]
                red = c - price[t]
                if red >= 0 and (nbuf < need or red < bufv[nbuf - 1]):
                    j = nbuf if nbuf < need else nbuf - 1
                    while j > 0 and bufv[j - 1] > red:
                        bufv[j] = bufv[j - 1]
                        bufu[j] = bufu[j - 1]
                        j -= 1
                    bufv[j] = red
                    bufu[j] = t
                    if nbuf < need:
                        nbuf += 1
            left = need
            for j in range(nbuf):
                take = min(left, weights[bufu[j]])
                value += take * bufv[j]
                left -= take
                if left == 0:
                    break
            if left > 0:
                continue
        if value >= 0:
            continue
        total += value
        opened[g] = True
        for i in range(starts[g], starts[g + 1]):
            t = members[i]
            if c - price[t] < 0:
                assigned[t] += weights[t]
        left = k - neg
        for j in range(nbuf):
            if left <= 0:
                break
            take = min(left, weights[bufu[j]])
            assigned[bufu[j]] += take
            left -= take
    return total


@kernel
def _cheapest_records(cum_weight, cum_cost, red, x):
    """The reduced cost of the ``x`` cheapest records of units sorted by
    reduced cost ``red`` (cumulative weights and costs, 0 first)."""
    j = np.searchsorted(cum_weight, x, side="right") - 1
    if j >= len(red):
        return cum_cost[len(red)]
    return cum_cost[j] + (x - cum_weight[j]) * red[j]


@kernel
def _split_members(g, c, price, members, starts, weights, positive):
    """Node ``g``'s members of some weight, in member order, split by their
    ``positive`` flag (index 1: flagged): per side the units, their reduced
    costs, the weight of those of negative reduced cost and the weight of all."""
    m = starts[g + 1] - starts[g]
    red = np.empty((2, m))
    unit = np.empty((2, m), dtype=np.int64)
    n = np.zeros(2, dtype=np.int64)
    negative = np.zeros(2, dtype=np.int64)
    total = np.zeros(2, dtype=np.int64)
    for i in range(starts[g], starts[g + 1]):
        t = members[i]
        if weights[t] == 0:
            continue
        s = 1 if positive[t] else 0
        r = c - price[t]
        red[s, n[s]] = r
        unit[s, n[s]] = t
        total[s] += weights[t]
        if r < 0:
            negative[s] += weights[t]
        n[s] += 1
    return (unit[0, :n[0]], unit[1, :n[1]]), (red[0, :n[0]], red[1, :n[1]]), negative, total


@kernel
def _sorted_prefix(unit, red, weights, extra):
    """The units of negative reduced cost and the ``extra`` cheapest others
    (all of them when fewer; ties at the last one kept), sorted by reduced
    cost, ties in member order -- the first units of the whole side sorted
    so: (units, reduced costs, cumulative weights, cumulative costs, whether
    every unit is in)."""
    n_other = 0
    for i in range(len(red)):
        if red[i] >= 0:
            n_other += 1
    complete = n_other <= extra
    if complete:
        keep = np.ones(len(red), dtype=np.bool_)
    else:
        others = np.empty(n_other)
        j = 0
        for i in range(len(red)):
            if red[i] >= 0:
                others[j] = red[i]
                j += 1
        cut = np.partition(others, extra - 1)[extra - 1] if extra > 0 else -1.0
        keep = red <= cut
        for i in range(len(red)):
            if red[i] < 0:
                keep[i] = True
    unit, red = unit[keep], red[keep]
    order = np.argsort(red, kind="mergesort")
    red = red[order]
    unit = unit[order]
    n = len(red)
    cum_weight = np.zeros(n + 1, dtype=np.int64)
    cum_cost = np.zeros(n + 1)
    for i in range(n):
        cum_weight[i + 1] = cum_weight[i] + weights[unit[i]]
        cum_cost[i + 1] = cum_cost[i] + weights[unit[i]] * red[i]
    return unit, red, cum_weight, cum_cost, complete


@kernel
def _take_cheapest(unit, weights, x, assigned):
    for i in range(len(unit)):
        if x <= 0:
            break
        take = min(x, weights[unit[i]])
        assigned[unit[i]] += take
        x -= take


@kernel
def _best_counts(k, share_lo, share_hi, h_top, l_free, total_h, total_l, wh, ch, rh, all_h, wl, cl, rl, all_l, best):
    """The search of :func:`balanced_choice` over the number ``h`` of
    flagged records, on each side's sorted first units (cumulative weights
    and costs): ``(best, h, l, short)``, ``short`` when it needs records past
    a side's sorted units."""
    best_h, best_l = -1, -1
    for h in range(total_h + 1):
        lo = max(k - h, 0)
        if share_hi <= 0 and h > 0:
            break
        if 0 < share_hi < 1:
            lo = max(lo, int(np.ceil(h * (1 - share_hi) / share_hi - 1e-9)))
        hi = total_l
        if share_lo > 0:
            hi = min(hi, int(np.floor(h * (1 - share_lo) / share_lo + 1e-9)) if share_lo < 1 else 0)
        if lo > hi:
            continue
        n_other = min(max(l_free, lo), hi)
        if (h > wh[len(rh)] and not all_h) or (n_other > wl[len(rl)] and not all_l):
            return best, best_h, best_l, True
        value = _cheapest_records(wh, ch, rh, h) + _cheapest_records(wl, cl, rl, n_other)
        if value < best:
            best, best_h, best_l = value, h, n_other
        if h >= h_top:  # the first feasible h from here on is the best of them
            break
    return best, best_h, best_l, False


@kernel
def balanced_choice(g, c, price, members, starts, weights, positive, k, share_lo, share_hi, best):
    """Node ``g``'s best selection of at least ``k`` records of which a share
    in ``[share_lo, share_hi]`` is ``positive`` -- a class meeting the
    t-closeness of a two-valued sensitive attribute (Li, Li &
    Venkatasubramanian 2007: the EMD of two values is the difference of the
    shares). With ``h`` positive and ``l`` other records, each side's cheapest
    are taken; for each ``h`` the best ``l`` is the unconstrained one (all the
    side's negative records) clamped into what the share allows, and past
    the negative positives, ``k`` and the share's need, the first ``h`` the
    share allows is the best of the larger ones. Only each side's negative
    records and its cheapest others up to what that search can reach are
    sorted (all of them when it reaches further). Returns the selection's
    reduced cost if below ``best`` (else ``best``), its ``h`` and ``l``
    (-1 when none is below ``best``) and each side's first units, cheapest first."""
    (ul, uh), (rl, rh), negative, total = _split_members(g, c, price, members, starts, weights, positive)
    neg_h, l_free = negative[1], negative[0]
    h_top = max(neg_h, k)
    if share_lo > 0:
        h_top = max(h_top, int(np.ceil(l_free * share_lo / (1 - share_lo))) if share_lo < 1 else total[1])
    reach_h = h_top + k  # positives the search reads before its first feasible h past h_top, as a rule
    reach_l = max(l_free, k)
    if 0 < share_hi < 1:
        reach_l = max(reach_l, int(np.ceil(reach_h * (1 - share_hi) / share_hi)))
    sh, srh, wh, ch, all_h = _sorted_prefix(uh, rh, weights, reach_h - neg_h)
    sl, srl, wl, cl, all_l = _sorted_prefix(ul, rl, weights, reach_l - l_free)
    found, h, n_other, short = _best_counts(k, share_lo, share_hi, h_top, l_free, total[1], total[0], wh, ch, srh,
                                            all_h, wl, cl, srl, all_l, best)
    if short:  # past the sorted units: sort every unit
        sh, srh, wh, ch, all_h = _sorted_prefix(uh, rh, weights, len(rh))
        sl, srl, wl, cl, all_l = _sorted_prefix(ul, rl, weights, len(rl))
        found, h, n_other, short = _best_counts(k, share_lo, share_hi, h_top, l_free, total[1], total[0], wh, ch,
                                                srh, all_h, wl, cl, srl, all_l, best)
    return found, h, n_other, sh, sl


@kernel
def _balanced_node(g, c, price, members, starts, weights, positive, k, share_lo, share_hi, assigned):
    """:func:`balanced_choice` of a node in the relaxation: the best
    negative selection's reduced cost (0 if none), its records added to
    ``assigned`` (rounding lenient: the bound stays valid)."""
    best, best_h, best_l, uh, ul = balanced_choice(g, c, price, members, starts, weights, positive, k, share_lo,
                                                    share_hi, 0.0)
    if best_h >= 0:
        _take_cheapest(uh, weights, best_h, assigned)
        _take_cheapest(ul, weights, best_l, assigned)
    return best


@kernel(parallel=True)
def _relaxed(price, members, starts, node_cost, ustart, unodes, ucost, weights, k, margin, cnt, val, near, near_val,
             touched, n_chunks, opened, positive, share_lo, share_hi):
    """Optimum of the relaxed program at multipliers ``price - own cost``,
    ``sum_g min(0, best_g)``, and per unit the records the open nodes take
    (the open nodes marked in ``opened``). Only nodes cheaper than some
    member's price can open, so most nodes are never read. ``cnt``, ``val``
    (zero on entry and exit), ``touched``: work space."""
    n = len(node_cost)
    parts = np.zeros((n_chunks, len(price)), dtype=np.int64)
    totals = np.zeros(n_chunks)
    for c in nb.prange(n_chunks):  # each chunk a range of nodes: no two write the same node
        lo, hi = n * c // n_chunks, n * (c + 1) // n_chunks
        n_touched = _touch(lo, hi, price, ustart, unodes, ucost, weights, margin, cnt, val, near, near_val, touched)
        bufv = np.zeros(k + 1)
        bufu = np.zeros(k + 1, dtype=np.int64)
        totals[c] = _settle(lo, lo + n_touched, touched, price, members, starts, node_cost, weights, k, margin,
                            cnt, val, near, near_val, parts[c], bufv, bufu, opened, positive, share_lo, share_hi)
    return totals.sum(), parts.sum(axis=0)


class _Relaxation:
    """The relaxed program over a set of candidate nodes: called with the
    units' prices, it returns the relaxed value, the records each unit has
    placed and the nodes that open."""

    def __init__(self, members: np.ndarray, starts: np.ndarray, node_cost: np.ndarray, own: np.ndarray,
                 weights: np.ndarray, k: int, margin: float, share: tuple | None = None):
        self.members, self.starts, self.own, self.weights = members, starts, own, weights
        self.k, self.margin = k, margin
        flags, low, high = (np.zeros(len(weights)), 0.0, 1.0) if share is None else share
        self.share = (np.asarray(flags, dtype=np.int8), float(low), float(high))  # (0, 1): no constraint
        self.int_cost = np.asarray(node_cost, dtype=np.int64)
        self.node_cost = self.int_cost.astype(np.float64)
        # the costs in the units' order, read as the lists are scanned: the smallest exact integer type
        top = int(self.int_cost.max()) if len(self.int_cost) else 0
        self.ucost = np.empty(len(members), dtype=np.int16 if top < 2**15 else np.int32 if top < 2**31 else np.int64)
        self.ustart, self.unodes = _unit_nodes(members, starts, self.int_cost, len(weights), self.ucost)
        n = len(self.node_cost)
        self.work = (np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n),
                     np.zeros(n, dtype=np.int64))
        # a fixed number of chunks, not one per thread: the sums, and so the prices, are the same on every machine
        self.n_chunks = RELAXATION_CHUNKS if n > 100_000 else 1

    def cheapest(self) -> np.ndarray:
        """Each unit's cheapest node's cost (the prices of the simple bound)."""
        return self.node_cost[self.unodes[self.ustart[:-1]]]

    def __call__(self, price: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        opened = np.zeros(len(self.node_cost), dtype=np.bool_)
        relaxed, assigned = _relaxed(price, self.members, self.starts, self.node_cost, self.ustart, self.unodes,
                                     self.ucost, self.weights, self.k, self.margin, *self.work, self.n_chunks,
                                     opened, *self.share)
        return float(((price - self.own) * self.weights).sum()) + relaxed, assigned, opened

    def restricted(self, nodes: np.ndarray) -> _Relaxation:
        """The same program over ``nodes`` only."""
        members, starts = _gather_nodes(self.members, self.starts, nodes)
        return _Relaxation(members, starts, self.int_cost[nodes], self.own, self.weights, self.k, self.margin,
                           self.share)


def distortion_lower_bound(table: EncodedTable, cost: CostModel, k: int, *, columns: Sequence[int] | None = None,
                           upper: float | None = None, start: np.ndarray | None = None, iterations: int = 400,
                           max_incidences: int = 400_000_000, max_vectors: int = 2_000_000,
                           share: tuple[np.ndarray, float, float] | None = None) -> DistortionBound:
    """Lower bound of the distortion of every k-anonymous local recoding of ``table``.

    Parameters
    ----------
    table : EncodedTable
        The original table (codes and record counts).
    cost : CostModel
        The distortion measure (its node costs).
    k : int
        Required class size over the quasi-identifiers ``columns``.
    columns : sequence of int, optional
        Indices of the QIs of the requirement (default: all). The bound is on
        the distortion of the whole table; other QIs are counted at zero cost.
    upper : float, optional
        The distortion (in distortion units) of a known k-anonymous output:
        the target of the Polyak steps; without it the target is 5 % above
        the best bound so far (slower to converge). Each step aims
        :data:`TARGET_SHARE` of the way from the best bound to it.
    start : ndarray, optional
        The codes of a known k-anonymous output, row for row with ``table``:
        each record's multiplier starts halfway between the simple bound's
        and the cost the record pays there (the bound is valid from any
        start; a good one takes fewer steps).
    iterations : int
        Maximum subgradient iterations.
    max_incidences, max_vectors : int
        Refuse (``BoundTooLarge``) beyond this many (row, node) pairs, or
        depth vectors of the hierarchies holding candidate nodes.
    share : (flags, low, high), optional
        Every class must also hold a share in ``[low, high]`` of the records
        flagged (a bool per row): the t-closeness of a two-valued sensitive
        attribute, whose EMD is the difference of the shares (Li, Li &
        Venkatasubramanian 2007), is ``[p - t, p + t]`` with ``p`` the
        table's share. The bound is then on outputs meeting it too.
    """
    return relaxed_prices(table, cost, k, columns=columns, upper=upper, start=start, iterations=iterations,
                          max_incidences=max_incidences, max_vectors=max_vectors, share=share).bound


@dataclass
class RelaxedPrices:
    """The multipliers of the best relaxed value found, with the program they price.

    Attributes
    ----------
    bound : DistortionBound
        The lower bound (:func:`distortion_lower_bound`).
    price : ndarray of float
        Per unit, its multiplier plus its own cost: what a record of the unit
        may pay at a node (a node's reduced cost for it is the node's cost minus this).
    unit_of_row : ndarray of int
        Each row's unit (distinct QI tuple, and flag with ``share``).
    weights : ndarray of int
        Records per unit.
    flags : ndarray of int8
        Per unit, its share flag (all 0 without ``share``).
    low, high : float
        The share's interval ((0, 1): none).
    members, starts, node_cost : ndarray
        The candidate nodes: node ``g``'s units are ``members[starts[g]:starts[g + 1]]``,
        its cost ``node_cost[g]`` (float, in the cost model's integer scale).
    """

    bound: DistortionBound
    price: np.ndarray
    unit_of_row: np.ndarray
    weights: np.ndarray
    flags: np.ndarray
    low: float
    high: float
    members: np.ndarray
    starts: np.ndarray
    node_cost: np.ndarray


def relaxed_prices(table: EncodedTable, cost: CostModel, k: int, *, columns: Sequence[int] | None = None,
                   upper: float | None = None, start: np.ndarray | None = None, iterations: int = 400,
                   max_incidences: int = 400_000_000, max_vectors: int = 2_000_000,
                   share: tuple[np.ndarray, float, float] | None = None, label: str = "lower bound"
                   ) -> RelaxedPrices:
    """:func:`distortion_lower_bound` (same parameters), also returning the
    best multipliers and the candidate nodes: the prices a Lagrangian
    heuristic builds an output from (Fisher 1981). ``label`` names the work
    in the progress display."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 0:
        raise ValueError(f"iterations must be a whole number >= 0, got {iterations!r}")
    t0 = time.perf_counter()
    cols = list(range(table.codes.shape[1])) if columns is None else [int(c) for c in columns]
    full = full_distortion(table.codes, cost, table.counts)
    keys = table.codes[:, cols]
    if share is not None:  # units of one QI tuple and one flag
        keys = np.column_stack([keys, np.asarray(share[0], dtype=bool).astype(keys.dtype)])
    units, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    weights = np.bincount(inverse, weights=table.counts, minlength=len(units)).astype(np.int64)
    unit_share = None if share is None else (units[:, -1], float(share[1]), float(share[2]))
    units = units[:, :len(cols)]
    hs = [table.hierarchies[j] for j in cols]
    int_costs = [np.asarray(cost.int_costs[j], dtype=np.int64) for j in cols]
    own = sum(int_costs[i][units[:, i]] for i in range(len(cols))).astype(np.float64)
    n = int(weights.sum())
    if k > n:
        raise ValueError(f"k = {k} exceeds the {n} records of the table: no k-anonymous output exists")
    stages, t = {}, time.perf_counter()
    members, starts, node_cost = candidate_nodes(units, weights, hs, int_costs, int(k), max_incidences,
                                                   max_vectors, label=label)
    n_candidates = len(node_cost)
    stages["candidates"], t = time.perf_counter() - t, time.perf_counter()
    with progress_stage(f"{label}, k = {k}: the relaxed program",
                        detail=f"{n_candidates} nodes, {len(members)} (row, node) pairs"):
        members, starts, node_cost = distinct_member_sets(members, starts, node_cost)
        stages["distinct"], t = time.perf_counter() - t, time.perf_counter()
        log.info("lower bound, k = %d: %d candidate nodes (%d with distinct records), %d (row, node) pairs", k,
                 n_candidates, len(node_cost), len(members))
        full_program = _Relaxation(members, starts, node_cost, own, weights, int(k),
                                   float(MARGIN_LEVELS * cost.scale), unit_share)
    price = simple_price = full_program.cheapest()  # each unit's cheapest node: the simple bound
    simple = float(((price - own) * weights).sum())
    if start is not None:  # halfway to what each record pays in a known output: fewer steps to the same bound
        paid = sum(int_costs[i][np.asarray(start)[:, c]] for i, c in enumerate(cols)).astype(np.float64)
        paid = np.bincount(inverse, weights=paid * table.counts, minlength=len(units)) / weights
        price = 0.5 * (price + np.maximum(paid, price))
    target = None if upper is None else float(upper) * cost.scale
    stages["setup"], t = time.perf_counter() - t, time.perf_counter()
    with progress_stage(f"{label}, k = {k}", total=iterations,
                        detail=f"{len(node_cost)} nodes, {len(members)} (row, node) pairs") as stage:
        best, best_price, optimal, it = _ascend(full_program, price, weights, simple, simple_price,
                                                target, float(cost.scale), iterations, stage)
    stages["ascent"] = time.perf_counter() - t
    if cost.exact:  # every distortion is a whole number of 1/scale units: so is the optimum
        best = float(np.ceil(best - 1e-7 * max(1.0, abs(best))))
    seconds = time.perf_counter() - t0
    ratio = best / cost.scale / full if full > 0 else 0.0  # full = 0: every QI cell is a root already
    log.info("lower bound, k = %d: ratio %.5f after %d iterations (%.1fs)", k, ratio, it, seconds)
    bound = DistortionBound(ratio=ratio, distortion=best / cost.scale,
                            simple_ratio=simple / cost.scale / full if full > 0 else 0.0, optimal=optimal,
                            iterations=it, nodes=len(node_cost), incidences=len(members), seconds=seconds,
                            stage_seconds=stages)
    flags, low, high = full_program.share
    return RelaxedPrices(bound, best_price, inverse, weights, flags, low, high, members, starts,
                         full_program.node_cost)


def _ascend(full: _Relaxation, price: np.ndarray, weights: np.ndarray, best: float, best_price: np.ndarray,
            target: float | None, scale: float, iterations: int, stage) -> tuple[float, np.ndarray, bool, int]:
    """Subgradient ascent of the relaxed value from ``price`` by Polyak
    steps (Held, Wolfe & Crowder 1974) along deflected subgradients
    (:func:`_deflected`), each aiming :data:`TARGET_SHARE` of the way from
    the best bound to ``target``, with partial pricing: every
    :data:`FULL_EVERY` steps the program over every candidate node (the only
    values that may raise the bound), in between the program over the nodes
    that some full evaluation opened -- about 1 % of them on UCI Adult, and
    far cheaper. After :data:`STALE_FULL` full evaluations without a rise the
    step halves and the ascent restarts from the best multipliers
    (``best`` at ``best_price`` to begin with). Returns the best value, its
    multipliers, whether a full relaxed assignment was feasible (the value
    is then the optimum) and the iterations run."""
    step, stale = 1.0, 0
    active = np.zeros(len(full.node_cost), dtype=np.bool_)
    part, due, direction = None, True, None
    for it in range(1, iterations + 1):
        stage.update(it)
        if due or part is None or (it - 1) % FULL_EVERY == 0:
            value, assigned, opened = full(price)
            due = False
            if value > best + 1e-9 * abs(best):
                best, best_price, stale = value, price.copy(), 0
            else:
                stale += 1
                if stale >= STALE_FULL:
                    step, stale, direction = step / 2, 0, None
                    price = best_price.copy()
            if (opened & ~active).any():
                active |= opened
                part = full.restricted(np.flatnonzero(active))
            feasible_is_optimal = True
        else:
            value, assigned, _ = part(price)
            feasible_is_optimal = False
        grad = (weights - assigned).astype(np.float64)
        norm = _dot(grad, grad)
        if norm == 0:  # the relaxed assignment is k-anonymous
            if feasible_is_optimal:
                return (value, price, True, it) if value > best else (best, best_price, True, it)
            due = True  # only over the active nodes: see what the full program says
            continue
        goal = best + TARGET_SHARE * (target - best) if target is not None else max(best * 1.05, best + scale)
        if goal <= best or step < 1e-5:
            return best, best_price, False, it
        direction = _deflected(grad, direction)
        price = price + step * (goal - value) / _dot(direction, direction) * direction
        log.debug("lower bound: iteration %d, value %.1f, best %.1f", it, value / scale, best / scale)
    return best, best_price, False, iterations


def _deflected(grad: np.ndarray, previous: np.ndarray | None) -> np.ndarray:
    """The step direction of Camerini, Fratta & Maffioli (1975): the
    subgradient plus :data:`DEFLECTION` times the share of the previous
    direction it turns against, damping the zigzag of plain subgradient steps."""
    if previous is None:
        return grad
    turn = _dot(grad, previous)
    if turn >= 0:
        return grad
    return grad - DEFLECTION * turn / _dot(previous, previous) * previous


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a @ b`` without BLAS: its threads stay spinning after a product and
    take the cores from the relaxation's numba threads (each evaluation then
    ran two to four times slower)."""
    return float(np.einsum("i,i->", a, b))


def share_constraint(model) -> tuple[np.ndarray, float, float] | None:
    """The share constraint (:func:`distortion_lower_bound`'s ``share``) of a
    bound privacy model, or None when it has none: t-closeness of a
    two-valued attribute by the equal or the ordered distance, whose EMD is
    the difference of the classes' and the table's shares of one value (Li,
    Li & Venkatasubramanian 2007); the table's share is the model's own
    distribution ``q``."""
    if getattr(model, "kind", None) != "t-closeness" or model.n_values != 2 or \
            getattr(model, "distance", None) not in ("equal", "ordered"):
        return None
    p = float(model.q[0, 1])
    return np.asarray(model.values) == 1, p - model.model.t, p + model.model.t


def tightest_share(models) -> tuple:
    """``(model, share)``: of the bound privacy ``models`` with a share
    constraint (:func:`share_constraint`), the one of least ``t`` and its
    constraint; ``(None, None)`` when none has one."""
    shares = [(m, share) for m in models if (share := share_constraint(m)) is not None]
    return min(shares, key=lambda pair: pair[0].model.t, default=(None, None))


def problem_lower_bound(problem, *, upper: float | None = None, start: np.ndarray | None = None,
                        iterations: int = 400, max_incidences: int = 400_000_000,
                        max_vectors: int = 2_000_000) -> DistortionBound:
    """Lower bound of the distortion of every local recoding meeting all of
    ``problem``'s requirements and privacy models: the largest of the bounds
    of its requirements (each alone is a relaxation of the whole), each with
    the share constraint of the tightest t-closeness that has one
    (:func:`share_constraint`; other models are left out, which only lowers
    the bound). ``upper`` and ``start``: the distortion and the codes of a
    known output meeting them (:func:`distortion_lower_bound`)."""
    names = list(problem.table.qi_names)
    model, share = tightest_share(getattr(problem, "privacy", ()) or ())
    best = None
    for req in problem.requirements:
        cols = [names.index(a) for a in req.attributes]
        b = distortion_lower_bound(problem.table, problem.cost, req.k, columns=cols, upper=upper,
                                   start=start, iterations=iterations, max_incidences=max_incidences,
                                   max_vectors=max_vectors, share=share)
        if best is None or b.ratio > best.ratio:
            best = b
    if best is not None and model is not None:
        best.models = (model.describe(),)
    return best
