"""The candidate nodes of the lower bound: every node of the product of the
hierarchies with at least ``k`` records under it.

Record-level local recoding (the MinGen program of Arca & Hewett; Li et al.
2006, Def. 2) can only place records at such nodes. They are found by a
depth-first walk over the depth vectors of the product of the hierarchies,
each vector refining its parent's groups by one attribute and dropping every
group under ``k`` records (their refinements are smaller still) -- the
pruning of Incognito's lattice walk (LeFevre, DeWitt & Ramakrishnan 2005)
applied to groups of records rather than whole levels.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numba as nb
import numpy as np

from ..core.jit import kernel
from ..core.progress import stage as progress_stage

__all__ = ["BoundTooLarge", "Cancelled", "SPLIT_LEVEL", "SPLIT_ROWS", "candidate_nodes"]


#: The walk of the candidate nodes hands the subtrees this many refinements
#: below the top to numba's threads, for tables of at least SPLIT_ROWS
#: distinct rows (a speed setting: the nodes are the same).
SPLIT_LEVEL = 3
SPLIT_ROWS = 2_000


class BoundTooLarge(ValueError):
    """The candidate nodes of the relaxation do not fit the given limit."""


class Cancelled(Exception):
    """The walk of the candidate nodes was called off (its ``cancel`` event set)."""


def candidate_nodes(units: np.ndarray, weights: np.ndarray, hierarchies, int_costs, k: int,
                    max_incidences: int = 400_000_000, max_vectors: int = 2_000_000, *,
                    split_level: int | None = None, label: str = "lower bound", threads: int | None = None,
                    cancel: threading.Event | None = None):
    """Every node of the product of ``hierarchies`` with ``>= k`` records under it.

    ``units`` are distinct rows of codes, ``weights`` their record counts.
    Returns ``(members, starts, node_cost)``: node ``g``'s rows are
    ``members[starts[g]:starts[g + 1]]`` (indices into ``units``, ascending) and
    its cost ``node_cost[g]`` is the sum of ``int_costs[j]`` over its cells.
    Nodes come depth vector by depth vector, in a depth-first walk that
    refines one attribute at a time (attributes in increasing order), and
    within a vector in the order of their cells.
    The subtrees of the walk below ``split_level`` refinements (default:
    :data:`SPLIT_LEVEL` when the walk has several threads or can be
    cancelled, and the table ``SPLIT_ROWS`` distinct rows or more) are
    walked apart (in parallel threads) and spliced back in place: the result
    is the same.
    Raises :class:`BoundTooLarge` past ``max_incidences`` (row, node) pairs
    or ``max_vectors`` depth vectors holding such nodes. ``label`` names the
    work in the progress display. ``threads``: how many threads walk the
    subtrees (default: numba's); ``cancel``: an event that, once set, stops
    the walk before its next subtree (raising :class:`Cancelled`).
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
    threads = nb.get_num_threads() if threads is None else max(1, int(threads))
    if split_level is None:  # subtrees also let a cancelled walk stop early
        split_level = SPLIT_LEVEL if (threads > 1 or cancel is not None) and len(units) >= SPLIT_ROWS else -1
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
                                                             max_incidences, max_vectors, stage, threads, cancel)
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


def _walk_tasks(walk, members, sizes, costs, n_vectors, tasks, max_incidences, max_vectors, stage, threads,
                cancel):
    """The subtrees the walk left at its split level (``tasks``: their
    positions in its output and starting groups), walked by ``threads``
    threads (its kernels release the GIL; one: in the calling thread) and
    spliced back in place, each counted on ``stage`` as it is done; none is
    begun once ``cancel`` is set. Returns the members, sizes, costs and the
    number of depth vectors in all."""
    at_node, at_member, first, t_depths, t_off, t_rows, t_gid, t_cst = tasks
    used = [len(members), n_vectors]
    lock = threading.Lock()

    def one(i):
        if cancel is not None and cancel.is_set():
            raise Cancelled("the walk of the candidate nodes was called off")
        with lock:
            inc_left, vec_left = max_incidences - used[0], max_vectors - used[1]
        lo, hi = t_off[i], t_off[i + 1]
        out = walk(t_rows[lo:hi], t_gid[lo:hi], t_cst[lo:hi], t_depths[i], first[i], -1, inc_left, vec_left)
        with lock:
            used[0] += len(out[0])
            used[1] += out[3]
        return out

    parts = []
    if threads == 1:
        for i in range(len(first)):
            parts.append(one(i))
            stage.update(len(parts))
    else:
        pool = ThreadPoolExecutor(max_workers=threads)
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
