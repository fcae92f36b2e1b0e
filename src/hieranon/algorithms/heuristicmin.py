"""HeuristicMin (Arca & Hewett): best-first search for the largest
generalised table that satisfies every anonymity requirement.

Semantics
---------
The requirements ``R = {<B_i, k_i>}`` may be over different attribute sets.
A table *violates* ``R`` when some distinct row's projection on some ``B_i``
occurs in fewer than ``k_i`` records; such a row is a *violating row*.

Generalising a table ``T`` *on attribute A* replaces, for every value ``v`` of
``A`` that occurs in a violating row, ``v`` **and all its siblings** by their
parent, wherever they occur (in every row, violating or not). Two readings
this module makes explicit (both parameters):

``violations="relevant"`` (default)
    the violating rows are those that violate a requirement whose shield
    contains ``A`` -- generalising ``A`` cannot repair any other requirement.
    This is what Arca & Hewett does in Case 2 (Figure 15(b): generalising education
    touches only the rows violating ``<{edu,sex},4>``, not those violating
    ``<{sex,hrs},11>``). With one requirement, or requirements that all
    contain ``A``, it is the same as ``"any"``.
``violations="any"``
    rows violating any requirement.

A violating row printed as the root on every attribute of a requirement it
violates (``missing='root'`` reads an empty cell as the root) cannot be
generalised; only other rows can join it. Generalising an attribute ``A`` of
such a requirement then replaces the values of ``A`` in **every** row (each
with its siblings, as above), so the search can reach the all-``*`` table,
which satisfies ``<B, k>`` whenever the table has ``k`` records.

``siblings="subtree"`` (default)
    a sibling that has been specialised further than ``v`` (it does not occur
    itself, only values below it do -- possible in unbalanced trees or after
    earlier partial generalisations) is replaced together with its whole
    subtree, so every attribute stays a *cut* of its hierarchy (each original
    value is printed as exactly one node on its path, and no printed node is
    above another). This guarantees that every violating table has a child
    that differs from it, hence the search always ends with a satisfying table.
``siblings="occurring"``
    only the values ``v`` and its siblings that literally occur are replaced;
    descendants of a sibling stay. A search can then dead-end (reported as an
    error when no satisfying table is reached).

The search (Figure 2 of Arca & Hewett): the input table's children on every
shield attribute (every attribute some requirement names: generalising any
other attribute cannot repair a violation) are generated; then repeatedly, among generated tables that
still violate ``R``, the one with the most distinct rows, then the fewest
violating rows, then the earliest generated, is expanded on every shield
attribute. A table whose row count is not larger than that of the best
satisfying table found so far is never expanded (generalisation never adds
rows, so it could not lead to a larger satisfying table). A generated table
identical to one generated before (same distinct rows with the same record
counts) is a duplicate and is not counted. The result is the satisfying
table with the most distinct rows, ties going to the first generated.

Implementation
--------------
A table is never materialised as records: the input's distinct QI rows with
their record counts are kept once, and a generated table is a *generalisation
state* -- per attribute, the node each original value is printed as. Its
distinct rows are a vectorised group-by on mixed-radix integer keys
and its violations a ``np.bincount`` per requirement (hash factorisation,
``pd.factorize``, no sorting). Duplicate tables are detected by an
order-independent 128-bit multiset hash of the (row key, record count) pairs.
"""

from __future__ import annotations

import hashlib
import heapq
import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd

from ..core.table import group
from .base import Algorithm, Problem, Solution, log
from .details import HeuristicMinDetails
from .params import Interval, Options
from .tags import Tags

VIOLATION_MODES = ("relevant", "any")
SIBLING_MODES = ("paper", "subtree", "occurring")
TIE_MODES = ("first", "steps")


class SearchLimitError(RuntimeError):
    """HeuristicMin generated ``max_tables`` tables without finding a satisfying one."""


class SearchLimitWarning(UserWarning):
    """HeuristicMin stopped at ``max_tables``; the result may not be optimal."""


@dataclass
class _Node:
    index: int          # generation order (0 = the input table)
    parent: int         # index of the table it was generated from (-1 for the input)
    attribute: int      # attribute generalised to get it (-1 for the input)
    state: list         # per attribute: node id of each distinct original value
    rows: int
    violations: int
    steps: int = 0      # cell generalisation steps (records x hierarchy edges climbed)


class _Space:
    """The input's distinct rows and everything needed to evaluate a state."""

    def __init__(self, problem: Problem):
        table = problem.table
        self.hierarchies = table.hierarchies
        self.m = len(self.hierarchies)
        ec = group(table.codes, table.counts)
        self.base = ec.keys.astype(np.int64)       # (n0, m) distinct original rows
        self.weights = ec.sizes.astype(np.int64)   # records per distinct row
        self.row_class = ec.row_class              # input row -> distinct row
        self.values = []                           # per attribute: distinct original codes
        self.inv = []                              # per attribute: base row -> value index
        for j in range(self.m):
            vals, inv = np.unique(self.base[:, j], return_inverse=True)
            self.values.append(vals.astype(np.int32))
            self.inv.append(inv.ravel().astype(np.int64))
        sizes = [int(h.n_nodes) for h in self.hierarchies]
        self.radix_ok = float(np.prod([float(s) for s in sizes])) < 2.0 ** 62
        self.mult = np.ones(self.m, dtype=np.int64)
        for j in range(1, self.m):
            self.mult[j] = self.mult[j - 1] * sizes[j - 1] if self.radix_ok else 0
        self.reqs = [(np.array(r.indices(table.qi_names), dtype=np.int64), int(r.k)) for r in problem.requirements]
        # multipliers for each requirement's projection
        self.req_mult = []
        for idx, _k in self.reqs:
            mult = np.ones(len(idx), dtype=np.int64)
            ok = float(np.prod([float(sizes[i]) for i in idx])) < 2.0 ** 62
            for a in range(1, len(idx)):
                mult[a] = mult[a - 1] * sizes[idx[a - 1]] if ok else 0
            self.req_mult.append(mult if ok else None)
        shield = sorted({int(i) for idx, _ in self.reqs for i in idx})
        self.shield = shield
        self.base_depth = sum(h.depth[self.base[:, j]].astype(np.int64) for j, h in enumerate(self.hierarchies))

    def steps(self, codes: np.ndarray) -> int:
        """Cell generalisation steps of a generalised table (records x edges climbed)."""
        d = sum(h.depth[codes[:, j]].astype(np.int64) for j, h in enumerate(self.hierarchies))
        return int((self.base_depth - d) @ self.weights)

    # ---------------------------------------------------------- evaluation
    def codes(self, state) -> np.ndarray:
        """(n0, m) codes of the distinct original rows under ``state``."""
        out = np.empty((len(self.base), self.m), dtype=np.int64)
        for j in range(self.m):
            out[:, j] = state[j][self.inv[j]]
        return out

    def _group(self, key: np.ndarray | None, codes: np.ndarray | None):
        """(inverse, number of groups, records per group) of a key vector (or of
        code rows when the mixed radix overflows)."""
        if key is not None:
            inv, uniq = pd.factorize(key, sort=False)
            n = len(uniq)
        else:
            uniq, inv = np.unique(codes, axis=0, return_inverse=True)
            n = len(uniq)
        inv = np.asarray(inv).ravel()
        return inv, uniq, np.bincount(inv, weights=self.weights, minlength=n)

    def _is_full(self, idx: np.ndarray) -> bool:
        return len(idx) == self.m and bool((idx == np.arange(self.m)).all())

    def evaluate(self, codes: np.ndarray, parent: "_Eval | None" = None, j: int = -1,
                 old_col: np.ndarray | None = None) -> "_Eval":
        """Rows, violating rows, per-requirement violation masks and identity of
        the table whose distinct original rows print as ``codes``. With
        ``parent`` (the evaluation of a table differing only in column ``j``,
        which held ``old_col``), keys are updated instead of recomputed and the
        masks of requirements not naming ``j`` are reused."""
        fast = self.radix_ok
        if fast:
            if parent is not None:
                delta = codes[:, j] - old_col
                tkey = parent.tkey + delta * self.mult[j]
                rkeys = []
                for (idx, _k), mult, rk in zip(self.reqs, self.req_mult, parent.rkeys):
                    pos = np.flatnonzero(idx == j)
                    rkeys.append(rk + delta * mult[pos[0]] if len(pos) else rk)
            else:
                tkey = codes @ self.mult
                rkeys = [codes[:, idx] @ mult for (idx, _k), mult in zip(self.reqs, self.req_mult)]
        else:
            tkey, rkeys = None, [None] * len(self.reqs)
        inv, uniq, counts = self._group(tkey, None if fast else codes)
        viol = []
        for r, ((idx, k), rk) in enumerate(zip(self.reqs, rkeys)):
            if parent is not None and j not in idx:
                viol.append(parent.viol[r])            # this requirement's groups did not change
                continue
            if self._is_full(idx):
                r_inv, r_cnt = inv, counts             # the requirement's groups are the table's rows
            else:
                r_inv, _, r_cnt = self._group(rk, None if fast else codes[:, idx])
            viol.append(r_cnt[r_inv] < k)
        any_viol = np.zeros(len(codes), dtype=bool)
        for v in viol:
            any_viol |= v
        if any_viol.any():
            hit = np.zeros(len(counts), dtype=bool)
            hit[inv[any_viol]] = True
            n_viol = int(hit.sum())
        else:
            n_viol = 0
        return _Eval(len(counts), n_viol, viol, any_viol, self.digest(uniq, counts.astype(np.int64)), tkey, rkeys)

    def digest(self, uniq: np.ndarray, counts: np.ndarray) -> bytes:
        """Identity of a table (its distinct rows with their record counts),
        independent of row order: two 64-bit multiset hashes of (key, count)."""
        if not self.radix_ok:
            order = np.lexsort(uniq.T[::-1])
            return hashlib.blake2b(np.ascontiguousarray(uniq[order]).tobytes() + counts[order].tobytes(),
                                   digest_size=20).digest()
        x = uniq.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + counts.astype(np.uint64)
        return _mix(x, 0x632BE59BD9B4E019).sum().tobytes() + _mix(x, 0x85EBCA77C2B2AE63).sum().tobytes()


@dataclass
class _Eval:
    rows: int
    n_viol: int
    viol: list            # per requirement: base rows violating it
    any_viol: np.ndarray  # base rows violating some requirement
    digest: bytes
    tkey: np.ndarray | None
    rkeys: list


def _mix(x: np.ndarray, salt: int) -> np.ndarray:
    """splitmix64 finaliser (wrapping uint64 arithmetic), element-wise."""
    z = x ^ np.uint64(salt)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


class HeuristicMin(Algorithm):
    """HeuristicMin (Arca & Hewett): the satisfying generalised table with the most
    distinct rows, by best-first search over attribute-wise generalisations.

    Parameters
    ----------
    max_tables : int
        Stop after generating this many tables. If a satisfying table was
        found, it is returned with a :class:`SearchLimitWarning` and
        ``details.complete = False`` (optimality not proven); otherwise
        :class:`SearchLimitError` is raised.
    violations : ``"relevant"`` or ``"any"``
        Which violating rows drive the generalisation of an attribute (module
        docstring).
    siblings : ``"paper"`` (default), ``"subtree"`` or ``"occurring"``
        How a sibling that was specialised further is treated (module
        docstring). ``"paper"`` searches with ``"occurring"`` -- the reading
        under which Arca & Hewett's Case 2 gives Figure 16(a) -- and, only when that
        search dead-ends without a satisfying table, searches again with
        ``"subtree"``, which always ends (``details.fallback`` says so).
    ties : ``"steps"`` (default) or ``"first"``
        Among satisfying tables with the most rows, return the first generated
        (the paper's wording) or the one with the fewest cell generalisation steps
        (records times hierarchy edges climbed), then the first generated --
        Arca & Hewett's stated rationale for "first found" ("it represents the
        table that has the least number of generalised steps").
    keep_trace : bool
        Record ``(violations, rows)`` of every generated table in ``details.trace``.

    ``info`` holds ``generated`` (tables generated, duplicates not counted),
    ``expanded``, ``trace`` (list of ``(violations, rows)`` in generation
    order, the input not included), ``tree`` (``(parent, attribute)`` of each
    generated table, parent 0 = the input, attribute a QI name),
    ``result_index`` (1-based generation number of the returned table, 0 when
    the input already satisfies R), ``rows``, ``input_rows``,
    ``input_violations``, ``complete`` and ``settings``.
    """

    name = "heuristicmin"
    tags = Tags(several_requirements=True)

    parameters = {"max_tables": Interval(Integral, 1, None), "violations": Options(*VIOLATION_MODES),
                  "siblings": Options(*SIBLING_MODES), "ties": Options(*TIE_MODES), "keep_trace": bool}

    def __init__(self, max_tables: int = 200_000, violations: str = "relevant", siblings: str = "paper",
                 ties: str = "steps", keep_trace: bool = True):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""

    # ------------------------------------------------------------ operator
    def _generalise(self, space: _Space, state, codes, viol, any_viol, j: int):
        """The state after generalising on attribute ``j`` (None if nothing changes)."""
        if self.violations == "any":
            mask = any_viol
        else:
            mask = np.zeros(len(codes), dtype=bool)
            for (idx, _k), v in zip(space.reqs, viol):
                if j in idx:
                    mask |= v
        if not mask.any():
            return None
        h = space.hierarchies[j]
        vals = np.unique(codes[mask, j])
        if self._stuck(space, codes, viol, j):
            # a violating row already at the root on every attribute of its
            # requirement can only be joined: every other row's value of A is
            # generalised too (an all-* table satisfies k when n >= k)
            vals = np.unique(codes[:, j])
        parents = h.parent[vals]
        parents = np.unique(parents[parents >= 0])
        if len(parents) == 0:
            return None
        target = np.zeros(h.n_nodes, dtype=bool)
        target[parents] = True
        s = state[j]
        new = s.copy()
        if self.siblings == "occurring":
            p = h.parent[s]
            hit = p >= 0
            hit[hit] = target[p[hit]]
            new[hit] = p[hit]
        else:
            done = np.zeros(len(s), dtype=bool)
            depth = h.depth[s]
            for d in range(h.height - 1):
                a = h.ancestors[s, d]
                hit = ~done & (depth > d) & target[a]
                new[hit] = a[hit]
                done |= hit
        if np.array_equal(new, s):
            return None
        out = list(state)
        out[j] = new
        return out

    @staticmethod
    def _stuck(space: _Space, codes, viol, j: int) -> bool:
        """Some row violates a requirement naming ``j`` while printed as the
        root on every attribute of that requirement (e.g. missing cells read
        as the root): generalising it is impossible, only other rows can
        join it."""
        for (idx, _k), v in zip(space.reqs, viol):
            if j not in idx or not v.any():
                continue
            at_root = v.copy()
            for i in idx:
                at_root &= space.hierarchies[i].parent[codes[:, i]] < 0
            if at_root.any():
                return True
        return False

    # -------------------------------------------------------------- search
    def _solve(self, problem: Problem) -> Solution:
        """Search (Arca & Hewett, Figure 2); with ``siblings="paper"`` the literal
        reading first, the cut-preserving one if the literal search dead-ends.
        The defaults reproduce the paper's Sec. 4.3 example (T1 after 9
        tables) and Case 2 (Figure 16(a))."""
        if self.siblings != "paper":
            return self._search(problem)
        literal = HeuristicMin(self.max_tables, self.violations, "occurring", self.ties, self.keep_trace)
        try:
            sol = literal._search(problem)
            sol.details.fallback = False
            return sol
        except RuntimeError:
            log.info("heuristicmin: the literal sibling reading dead-ended; searching with whole subtrees")
        sol = HeuristicMin(self.max_tables, self.violations, "subtree", self.ties, self.keep_trace)._search(problem)
        sol.details.fallback = True
        return sol

    def _search(self, problem: Problem) -> Solution:
        space = _Space(problem)
        state0 = [v.astype(np.int64) for v in space.values]
        codes0 = space.codes(state0)
        ev0 = space.evaluate(codes0)
        rows0, viol0, digest0 = ev0.rows, ev0.n_viol, ev0.digest
        root = _Node(0, -1, -1, state0, rows0, viol0)
        names = problem.table.qi_names
        info: dict = {"generated": 0, "expanded": 0, "trace": [], "tree": [], "input_rows": rows0,
                      "input_violations": viol0, "complete": True,
                      "settings": {"violations": self.violations, "siblings": self.siblings, "ties": self.ties}}
        if viol0 == 0:
            info.update(result_index=0, rows=rows0)
            return Solution(space.codes(state0)[space.row_class].astype(np.int32),
                            np.zeros(problem.table.n_rows, dtype=bool), HeuristicMinDetails(**info))

        seen = {digest0}
        heap: list[tuple[int, int, int]] = [(-rows0, viol0, 0)]
        nodes: dict[int, _Node] = {0: root}   # tables still to expand (violating) + best
        best: _Node | None = None
        generated = 0
        limit_hit = False
        while heap:
            neg_rows, _v, idx = heapq.heappop(heap)
            if best is not None and -neg_rows <= best.rows:
                break  # every remaining table is at most as large as the best satisfying one
            node = nodes.pop(idx)
            codes = space.codes(node.state)
            ev = space.evaluate(codes)
            info["expanded"] += 1
            for j in space.shield:
                new_state = self._generalise(space, node.state, codes, ev.viol, ev.any_viol, j)
                if new_state is None:
                    continue
                old_col = codes[:, j].copy()
                codes[:, j] = new_state[j][space.inv[j]]
                cev = space.evaluate(codes, ev, j, old_col)
                rows, n_viol, digest = cev.rows, cev.n_viol, cev.digest
                child_steps = space.steps(codes) if (n_viol == 0 and self.ties == "steps") else 0
                codes[:, j] = old_col
                if digest in seen:
                    continue
                seen.add(digest)
                generated += 1
                child = _Node(generated, node.index, j, new_state, rows, n_viol)
                if self.keep_trace:
                    info["trace"].append((n_viol, rows))
                    info["tree"].append((node.index, names[j]))
                if n_viol == 0:
                    child.steps = child_steps
                    if best is None or rows > best.rows or (
                            self.ties == "steps" and rows == best.rows and child.steps < best.steps):
                        best = child
                else:
                    nodes[generated] = child
                    heapq.heappush(heap, (-rows, n_viol, generated))
                if generated >= self.max_tables:
                    limit_hit = True
                    break
            if limit_hit:
                break
        info["generated"] = generated
        if limit_hit:
            if best is None:
                raise SearchLimitError(
                    f"heuristicmin generated max_tables={self.max_tables} tables without finding one that "
                    f"satisfies {[str(r) for r in problem.requirements]}; raise max_tables or loosen the requirements"
                )
            info["complete"] = False
            warnings.warn(
                f"heuristicmin stopped at max_tables={self.max_tables}: returning the best satisfying table found "
                f"({best.rows} rows); a larger one may exist -- raise max_tables to search on",
                SearchLimitWarning, stacklevel=2,
            )
        if best is None:
            hint = (f" (siblings={self.siblings!r} can dead-end; use siblings='subtree')"
                    if self.siblings == "occurring" else "")
            raise RuntimeError(
                f"heuristicmin: the search ended without a table that satisfies the requirements{hint}"
            )
        info.update(result_index=best.index, rows=best.rows)
        log.info("heuristicmin: %d tables generated, %d expanded, result T%d with %d rows",
                 generated, info["expanded"], best.index, best.rows)
        out = space.codes(best.state)[space.row_class].astype(np.int32)
        return Solution(out, np.zeros(problem.table.n_rows, dtype=bool), HeuristicMinDetails(**info))
