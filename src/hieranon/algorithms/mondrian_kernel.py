"""The compiled kernel of Mondrian (LeFevre, DeWitt & Ramakrishnan 2006):
strict multidimensional partitioning of the groups of identical rows,
depth first, with the hierarchy-aware cuts of categorical attributes
(:class:`hieranon.algorithms.mondrian.Mondrian` prepares its arrays)."""

from __future__ import annotations

import numpy as np

from ..core.jit import kernel

__all__ = ["strict_partition", "lca_climb"]


@kernel
def lca_climb(parent, depth, j, a, b):
    """LCA of nodes ``a`` and ``b`` of attribute ``j`` (climbing parent links)."""
    while depth[j, a] > depth[j, b]:
        a = parent[j, a]
    while depth[j, b] > depth[j, a]:
        b = parent[j, b]
    while a != b:
        a = parent[j, a]
        b = parent[j, b]
    return a


@kernel
def strict_partition(w, pos, dlo, dhi, nlo, nhi, is_num, inv_span, codes, leaf_at, parent, depth, loss, anc,
                     hier, k, max_domain, has_inner, cdepth):
    """Strict Mondrian on groups of identical rows (weights ``w``).

    Arrays are attribute-major (``pos[j, g]``). Partitions are segments of
    the permutation ``idx``, processed depth first (left part first), as the
    per-row algorithm does. Returns ``(gpart, lcas, relaxable, n_parts,
    n_cuts)``: the partition of every group, each partition's LCA per
    attribute, and whether it has >= 2k records and an attribute of positive
    width (where the relaxed variant goes on). ``has_inner[j]``: some code of
    attribute ``j`` is an inner node; ``cdepth[j, g]``: the depth of each."""
    m, g_count = pos.shape
    idx = np.arange(g_count)
    tmp = np.empty(g_count, np.int64)
    child = np.empty(g_count, np.int64)
    stack_s = np.empty(g_count + 1, np.int64)
    stack_e = np.empty(g_count + 1, np.int64)
    gpart = np.empty(g_count, np.int64)
    lcas_out = np.empty((g_count, m), np.int64)
    relaxable = np.zeros(g_count, np.bool_)
    hist = np.zeros(max_domain + 1, np.float64)
    widths = np.empty(m, np.float64)
    lcas = np.empty(m, np.int64)
    pmin = np.empty(m, np.int64)
    ranked = np.empty(m, np.int64)
    used = np.empty(m, np.bool_)
    n_parts = 0
    n_cuts = 0
    sp = 0
    stack_s[0] = 0
    stack_e[0] = g_count
    sp = 1
    while sp > 0:
        sp -= 1
        s = stack_s[sp]
        e = stack_e[sp]
        total = 0.0
        for i in range(s, e):
            total += w[idx[i]]
        # widths and LCAs
        for j in range(m):
            g0 = idx[s]
            lo = dlo[j, g0]
            hi = dhi[j, g0]
            plo = pos[j, g0]
            for i in range(s + 1, e):
                g = idx[i]
                if dlo[j, g] < lo:
                    lo = dlo[j, g]
                if dhi[j, g] > hi:
                    hi = dhi[j, g]
                if pos[j, g] < plo:
                    plo = pos[j, g]
            pmin[j] = plo
            lc = lca_climb(parent, depth, j, leaf_at[j, lo], leaf_at[j, hi])
            if has_inner[j]:
                # an inner-node code (e.g. a missing cell read as the root) is
                # on the path of its leaf range's LCA, above it across one-child
                # chains: the partition's LCA is the shallower of the two
                dmin = cdepth[j, g0]
                for i in range(s + 1, e):
                    if cdepth[j, idx[i]] < dmin:
                        dmin = cdepth[j, idx[i]]
                while depth[j, lc] > dmin:
                    lc = parent[j, lc]
            lcas[j] = lc
            widths[j] = loss[j, lc]
            if is_num[j]:
                mn = nlo[j, g0]
                mx = nhi[j, g0]
                for i in range(s + 1, e):
                    g = idx[i]
                    if nlo[j, g] < mn:
                        mn = nlo[j, g]
                    if nhi[j, g] > mx:
                        mx = nhi[j, g]
                widths[j] = (mx - mn) * inv_span[j]
        # attributes of positive width, widest first (ties: attribute order)
        n_ranked = 0
        if total >= 2.0 * k:
            for j in range(m):
                used[j] = False
            for _rank in range(m):
                best = -1
                for j in range(m):
                    if not used[j] and widths[j] > 0 and (best < 0 or widths[j] > widths[best]):
                        best = j
                if best < 0:
                    break
                used[best] = True
                ranked[n_ranked] = best
                n_ranked += 1
        cut = False
        for r in range(n_ranked):
            j = ranked[r]
            if hier and not is_num[j]:
                # multiway cut into the children of the partition's LCA
                d = depth[j, lcas[j]] + 1
                ok = True
                for i in range(s, e):
                    c = codes[j, idx[i]]
                    if depth[j, c] < d:
                        ok = False
                        break
                    child[i] = anc[j, c, d]
                if not ok:
                    continue
                order = np.argsort(child[s:e], kind="mergesort")
                n_groups = 1
                smallest = np.inf
                acc = 0.0
                prev = child[s + order[0]]
                for t in range(e - s):
                    c = child[s + order[t]]
                    if c != prev:
                        n_groups += 1
                        if acc < smallest:
                            smallest = acc
                        acc = 0.0
                        prev = c
                    acc += w[idx[s + order[t]]]
                if acc < smallest:
                    smallest = acc
                if n_groups < 2 or smallest < k:
                    continue
                for t in range(e - s):
                    tmp[t] = idx[s + order[t]]
                for t in range(e - s):
                    idx[s + t] = tmp[t]
                # push the child segments, last first (the first is processed first)
                end = e
                t = e - s - 1
                while t >= 0:
                    c = child[s + order[t]]
                    t0 = t
                    while t0 > 0 and child[s + order[t0 - 1]] == c:
                        t0 -= 1
                    stack_s[sp] = s + t0
                    stack_e[sp] = end
                    sp += 1
                    end = s + t0
                    t = t0 - 1
                cut = True
                break
            # median cut: positions rank values (numeric) or DFS leaf order
            base = pmin[j]
            span = 0
            for i in range(s, e):
                p = pos[j, idx[i]] - base
                if p > span:
                    span = p
            for t in range(span + 1):
                hist[t] = 0.0
            for i in range(s, e):
                g = idx[i]
                hist[pos[j, g] - base] += w[g]
            target = total / 2.0 - 1e-9
            cum = 0.0
            before = 0.0
            med = span
            for t in range(span + 1):
                before = cum
                cum += hist[t]
                if cum >= target:
                    med = t
                    break
            if cum >= k and total - cum >= k:
                thr = med  # <= m | > m
            elif before >= k and total - before >= k:
                thr = med - 1  # < m | >= m
            else:
                continue
            n_left = 0
            n_right = 0
            for i in range(s, e):
                g = idx[i]
                if pos[j, g] - base <= thr:
                    idx[s + n_left] = g
                    n_left += 1
                else:
                    tmp[n_right] = g
                    n_right += 1
            for t in range(n_right):
                idx[s + n_left + t] = tmp[t]
            stack_s[sp] = s + n_left
            stack_e[sp] = e
            sp += 1
            stack_s[sp] = s
            stack_e[sp] = s + n_left
            sp += 1
            cut = True
            break
        if cut:
            n_cuts += 1
            continue
        for i in range(s, e):
            gpart[idx[i]] = n_parts
        for j in range(m):
            lcas_out[n_parts, j] = lcas[j]
        relaxable[n_parts] = n_ranked > 0
        n_parts += 1
    return gpart, lcas_out[:n_parts].copy(), relaxable[:n_parts].copy(), n_parts, n_cuts
