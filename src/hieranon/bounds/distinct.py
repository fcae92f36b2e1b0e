"""One candidate node per distinct set of records: a node whose records a node
no dearer also gathers is never needed by the lower bound's relaxation.

The sets are compared by a hash of their members (the sum of random salts,
one per member), then member by member within runs of equal hash.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..core.jit import kernel

__all__ = ["distinct_member_sets", "gather_nodes"]


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
def gather_nodes(members, starts, nodes):
    """The member lists of ``nodes``, in that order: (members, starts).
    Also used to restrict the relaxation to some nodes
    (:meth:`hieranon.bounds.relaxation.Relaxation.restricted`)."""
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
    new_members, new_starts = gather_nodes(members, starts, kept)
    return new_members, new_starts, node_cost[kept]
