"""MinGen (Sweeney 2002, as Arca & Hewett sec. 5.1.1 applies it): the exact
minimum of cell generalisation steps subject to the anonymity requirements,
solved as an integer program with :func:`scipy.optimize.milp` (HiGHS).

This is the project's optimality oracle for small tables: every other
method's output is a feasible point of the same program (in ``mode="rows"``),
so no method can beat it under the same objective.

Formulation
-----------
*Units* are the distinct QI tuples of the input, each with its record count
``c_u``. A unit's *candidates* are its generalised tuples: the product, over
attributes, of the chain from its value up to the root (``depth+1`` nodes per
attribute), so the candidate set is finite and small. Chains are pruned,
safely, to the nodes an optimum can use (:func:`useful_nodes`): a value's
lowest common ancestors with the other values of its column, and the value
alone in an attribute no requirement names.

* ``x[u,g]`` -- how much of unit ``u`` is printed as candidate ``g``:
  binary in ``mode="rows"`` (a distinct row and its records move as one unit,
  as Arca & Hewett applies MinGen), integer ``0..c_u`` in ``mode="records"``
  (record-level local recoding: a row may be split);
  ``sum_g x[u,g] = 1`` (rows) or ``c_u`` (records).
* for each requirement ``<B,k>`` and each combination ``b`` of values on ``B``
  that some candidate projects to, ``y[B,b]`` is binary ("b is used"):
  ``sum of records assigned to candidates projecting to b >= k * y[B,b]`` and
  ``x[u,g] <= (1 or c_u) * y[B,b(g)]`` for every candidate projecting to ``b``.

Objective, lexicographic, solved in two phases (the second fixes the first's
optimum as a constraint, so no big-M weighting and no tolerance issues):

1. ``objective="steps"`` (default): records times generalisation steps
   (hierarchy edges climbed) summed over QI cells -- Arca & Hewett's "number of
   cell generalisations" (T9 of Figure 6 costs 14); ``objective="distortion"``:
   the problem's :class:`~hieranon.core.cost.CostModel` in its exact integer
   scale (WHD uniform/height, priorities, MAGE);
2. tie-break: Arca & Hewett's precision loss (``sum steps / (H-1)`` over cells,
   scaled to integers), i.e. the highest Prec among the optima.

Output
------
``mode="rows"``: one code row per input row (input rows with the same QI
tuple are one unit and get the same generalisation).

``mode="records"``: when every input row is one record (no count column: the
normal case of :func:`hieranon.anonymize`), one code row per input row, equal
tuples possibly generalised differently. When input rows carry counts and the
optimum must split one, the solution is **expanded to one row per record**:
``Solution.codes`` then has ``n_records`` rows, input row ``i`` repeated
``counts[i]`` times in order, and ``details.record_row`` gives each record's
input row (``details.expanded = True``); :func:`expand_records` builds the
matching one-record-per-row :class:`~hieranon.core.table.EncodedTable` for
verification. ``details.parts`` always lists, per unit, its generalisations
with their record counts. The API (which needs one output row per input row)
and :meth:`MinGen.solve` refuse ``mode="records"`` on counted rows with a
clear message (:meth:`MinGen.check_problem`); :meth:`MinGen.solve_expanded`
allows the expansion.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from ..core.table import EncodedTable, group
from .base import Algorithm, Problem, Solution, log
from .details import MinGenDetails
from .params import Interval, Options
from .tags import SuppressionTags, Tags

MODES = ("rows", "records")
OBJECTIVES = ("steps", "distortion")


class MinGenTooLarge(ValueError):
    """The input is too large for the exact integer program."""


class MinGenTimeout(ValueError):
    """The integer program found no feasible answer within the time limit."""


#: Seconds the two MILP phases may take together unless ``time_limit`` says otherwise.
DEFAULT_TIME_LIMIT = 60.0


def _interruptible(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a worker thread, waited for in short steps,
    so that Ctrl-C (KeyboardInterrupt) reaches the caller while the solver
    runs (HiGHS releases the GIL but never checks for signals). An
    interrupted solve is abandoned (its daemon thread ends with the process)."""
    out: dict = {}

    def target():
        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # handed to the caller
            out["error"] = exc

    worker = threading.Thread(target=target, name="mingen-milp", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.1)
    if "error" in out:
        raise out["error"]
    return out["value"]


def expand_records(table: EncodedTable) -> EncodedTable:
    """The table with one row per record (row ``i`` repeated ``counts[i]`` times)."""
    rep = np.repeat(np.arange(table.n_rows), table.counts)
    return EncodedTable(table.codes[rep], table.hierarchies, table.qi_names, np.ones(len(rep), dtype=np.int64))


def candidate_tuples(leaf_row: np.ndarray, hierarchies, allowed=None) -> np.ndarray:
    """All generalisations of one code tuple: the product of its ancestor chains
    (each chain from the value itself up to the root, self first). With
    ``allowed`` (per attribute, a mapping value -> array of permitted nodes)
    each chain is restricted to those nodes."""
    chains = []
    for j, (v, h) in enumerate(zip(leaf_row, hierarchies)):
        if allowed is not None:
            chains.append(np.asarray(allowed[j][int(v)], dtype=np.int64))
            continue
        d = int(h.depth[v])
        chains.append(h.ancestors[v, : d + 1][::-1])  # self first, root last
    grids = np.meshgrid(*chains, indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1).astype(np.int64)


def useful_nodes(units: np.ndarray, hierarchies, constrained) -> list[dict]:
    """Per attribute, per occurring value ``a``: the nodes an optimum can print
    it as -- ``a`` itself and its lowest common ancestors with the other
    occurring values (``a`` alone for an attribute no requirement names).

    Safe pruning: if a cell printed ``a`` as a node ``n`` outside this set,
    printing every cell shown as ``n`` as the lowest common ancestor of the
    values under ``n`` (a strictly lower node, still covering them) maps
    classes onto classes -- no group on any attribute set shrinks -- while
    strictly lowering steps and precision loss and never raising a monotone
    cost. Cells of an attribute outside every requirement go back to their
    value. Sorted by depth, deepest (the value itself) first."""
    out = []
    for j, h in enumerate(hierarchies):
        vals = np.unique(units[:, j])
        table = {}
        for a in vals:
            if not constrained[j]:
                table[int(a)] = np.array([a], dtype=np.int64)
                continue
            nodes = np.unique(h.lca(np.full(len(vals), a, dtype=np.int32), vals.astype(np.int32)))
            nodes = nodes[np.argsort(-h.depth[nodes], kind="stable")]
            table[int(a)] = nodes.astype(np.int64)
        out.append(table)
    return out


class MinGen(Algorithm):
    """Exact minimum cell generalisation (integer program, HiGHS).

    Parameters
    ----------
    mode : ``"rows"`` or ``"records"``
        Units of generalisation: whole distinct rows, or single records
        (module docstring).
    objective : ``"steps"`` or ``"distortion"``
        Primary objective; ties are broken by Arca & Hewett's precision Prec.
    max_records : int
        Refuse inputs with more records than this.
    max_variables : int
        Refuse programs with more variables than this.
    time_limit : float or None
        Seconds both MILP phases may take together (default
        :data:`DEFAULT_TIME_LIMIT`; ``None``: no limit). When it is hit, the
        best feasible solution found is returned (it is verified like any
        other) with a logged warning and ``details.optimal = False``; when no
        feasible solution was found by then, :class:`MinGenTimeout`.
    """

    name = "mingen"
    tags = Tags(several_requirements=True, exact=True, suppression=SuppressionTags(refused=(
        "it finds the least-distortion generalisation of every cell exactly, and a suppressed record (fully "
        "generalised) never lowers that optimum")))

    parameters = {"mode": Options(*MODES), "objective": Options(*OBJECTIVES),
                  "max_records": Interval(Integral, 1, None), "max_variables": Interval(Integral, 1, None),
                  "time_limit": Interval(Real, 0, None, closed="neither") | None}

    def __init__(self, mode: str = "rows", objective: str = "steps", max_records: int = 400,
                 max_variables: int = 60_000, time_limit: float | None = DEFAULT_TIME_LIMIT):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""

    def __hieranon_tags__(self) -> Tags:
        """The class's tags with the size this instance refuses (``max_records``)."""
        return replace(type(self).tags, max_records=self.max_records)

    def check_problem(self, problem: Problem) -> None:
        super().check_problem(problem)
        if self.mode == "records" and (problem.table.counts > 1).any():
            raise ValueError(
                "mingen mode='records' generalises single records and may split a counted row; "
                "give one row per record (no count column), or use mode='rows'"
            )

    # -------------------------------------------------------------- model
    def _costs(self, problem: Problem, units: np.ndarray, cands: np.ndarray, owner: np.ndarray):
        """Primary and secondary (precision) integer cost of every candidate,
        per record."""
        hs = problem.table.hierarchies
        lo = units[owner]
        steps = np.zeros(len(cands), dtype=np.int64)
        per_attr_steps = []
        for j, h in enumerate(hs):
            s = (h.depth[lo[:, j]] - h.depth[cands[:, j]]).astype(np.int64)
            per_attr_steps.append(s)
            steps += s
        spans = [h.height - 1 for h in hs if h.height > 1]
        L = 1
        for s in spans:
            L = math.lcm(L, s)
        prec = np.zeros(len(cands), dtype=np.int64)
        for j, h in enumerate(hs):
            if h.height > 1:
                prec += per_attr_steps[j] * (L // (h.height - 1))
        if self.objective == "steps":
            primary = steps
        else:
            ic = problem.cost.int_costs
            primary = np.zeros(len(cands), dtype=np.int64)
            for j in range(len(hs)):
                primary += ic[j][cands[:, j]] - ic[j][lo[:, j]]
            g = int(np.gcd.reduce(primary[primary > 0])) if (primary > 0).any() else 1
            primary //= max(g, 1)
        return primary, prec, steps, L

    def solve_expanded(self, problem: Problem) -> Solution:
        """Solve, letting ``mode="records"`` split counted rows: the output may
        then hold one row per record (module docstring), which :meth:`solve`
        refuses (:meth:`check_problem`)."""
        Algorithm.check_problem(self, problem)
        return self._solve(problem)

    def _solve(self, problem: Problem) -> Solution:
        table = problem.table
        n_records = table.n_records
        if n_records > self.max_records:
            raise MinGenTooLarge(
                f"mingen is an exact integer program for small tables: {n_records} records exceed "
                f"max_records={self.max_records}; use heuristicmin, kaca1 or fulldomain for tables this size"
            )
        ec = group(table.codes, table.counts)
        units = ec.keys.astype(np.int64)
        c = ec.sizes.astype(np.int64)
        n_units, m = units.shape
        constrained = [False] * m
        for r in problem.requirements:
            for i in r.indices(table.qi_names):
                constrained[i] = True
        allowed = useful_nodes(units, table.hierarchies, constrained)
        per_unit = [int(np.prod([len(allowed[j][int(v)]) for j, v in enumerate(row)])) for row in units]
        n_x = int(sum(per_unit))
        info_pruned = int(sum(int(np.prod([int(h.depth[v]) + 1 for v, h in zip(row, table.hierarchies)]))
                              for row in units))
        if n_x > self.max_variables:
            raise MinGenTooLarge(
                f"mingen: {n_units} distinct rows with {n_x} candidate generalisations exceed "
                f"max_variables={self.max_variables}; reduce the table or the hierarchies' depth"
            )
        cands = np.concatenate([candidate_tuples(row, table.hierarchies, allowed) for row in units])
        owner = np.repeat(np.arange(n_units), per_unit)
        rows_mode = self.mode == "rows"
        w = c[owner] if rows_mode else np.ones(n_x, dtype=np.int64)   # records per unit of x
        ub_x = np.ones(n_x) if rows_mode else c[owner].astype(float)

        # y variables: one per (requirement, projected combination)
        req_combo = []
        n_y = 0
        for r in problem.requirements:
            idx = r.indices(table.qi_names)
            _, inv = np.unique(cands[:, idx], axis=0, return_inverse=True)
            inv = inv.ravel()
            n_b = int(inv.max()) + 1
            req_combo.append((r, inv, n_x + n_y, n_b))
            n_y += n_b
        n_var = n_x + n_y
        if n_var > self.max_variables:
            raise MinGenTooLarge(
                f"mingen: the program needs {n_var} variables, more than max_variables={self.max_variables}"
            )

        # constraints
        blocks = []
        lbs, ubs = [], []
        # (1) assignment
        A1 = sparse.csr_matrix((np.ones(n_x), (owner, np.arange(n_x))), shape=(n_units, n_var))
        rhs = np.ones(n_units) if rows_mode else c.astype(float)
        blocks.append(A1)
        lbs.append(rhs)
        ubs.append(rhs)
        for r, combo, base, n_b in req_combo:
            # (2) sum_{x -> b} w x - k y_b >= 0
            rows_b = combo
            data = np.concatenate([w.astype(float), -float(r.k) * np.ones(n_b)])
            ri = np.concatenate([rows_b, np.arange(n_b)])
            ci = np.concatenate([np.arange(n_x), base + np.arange(n_b)])
            blocks.append(sparse.csr_matrix((data, (ri, ci)), shape=(n_b, n_var)))
            lbs.append(np.zeros(n_b))
            ubs.append(np.full(n_b, np.inf))
            # (3) per unit u and combination b: sum_{g of u -> b} x[u,g] - U_u y_b <= 0
            # (tighter than one row per x: at most one / c_u of u's records go to b)
            pair = owner * n_b + combo
            upair, prow = np.unique(pair, return_inverse=True)
            prow = prow.ravel()
            n_p = len(upair)
            pu = upair // n_b
            pb = upair % n_b
            cap = np.ones(n_p) if rows_mode else c[pu].astype(float)
            data = np.concatenate([np.ones(n_x), -cap])
            ri = np.concatenate([prow, np.arange(n_p)])
            ci = np.concatenate([np.arange(n_x), base + pb])
            blocks.append(sparse.csr_matrix((data, (ri, ci)), shape=(n_p, n_var)))
            lbs.append(np.full(n_p, -np.inf))
            ubs.append(np.zeros(n_p))
        A = sparse.vstack(blocks, format="csr")
        lb = np.concatenate(lbs)
        ub = np.concatenate(ubs)
        integrality = np.ones(n_var)
        bounds = Bounds(np.zeros(n_var), np.concatenate([ub_x, np.ones(n_y)]))

        primary, prec, steps, L = self._costs(problem, units, cands, owner)
        cost1 = np.concatenate([(primary * w).astype(float), np.zeros(n_y)])
        cost2 = np.concatenate([(prec * w).astype(float), np.zeros(n_y)])
        started = time.monotonic()

        def options():  # the time left of the whole budget
            opts = {"mip_rel_gap": 0.0, "disp": False}
            if self.time_limit is not None:
                opts["time_limit"] = max(float(self.time_limit) - (time.monotonic() - started), 0.5)
            return opts

        res1 = _interruptible(milp, cost1, integrality=integrality, bounds=bounds,
                              constraints=LinearConstraint(A, lb, ub), options=options())
        if res1.x is None:
            if res1.status == 1:  # the time limit, before any feasible point
                limit = "its solver's iteration limit" if self.time_limit is None else \
                    f"its time limit of {self.time_limit:g} s"
                raise MinGenTimeout(
                    f"mingen found no solution within {limit}; give it more "
                    "(parameter time_limit, e.g. --param time_limit=600) or use heuristicmin or fulldomain")
            raise RuntimeError(f"mingen: the integer program has no solution ({res1.message})")
        optimal = res1.status == 0
        res = res1
        if optimal:  # phase 2: keep the primary optimum, maximise precision
            opt1 = float(np.rint(res1.fun))
            A2 = sparse.vstack([A, sparse.csr_matrix(cost1)], format="csr")
            res2 = _interruptible(milp, cost2, integrality=integrality, bounds=bounds,
                                  constraints=LinearConstraint(A2, np.append(lb, -np.inf), np.append(ub, opt1 + 0.5)),
                                  options=options())
            res = res2 if res2.x is not None else res1
            optimal = res2.status == 0
        if not optimal:
            log.warning("mingen stopped at its time limit of %gs: the answer is the best found, verified but "
                        "perhaps not optimal (raise time_limit for the optimum)", self.time_limit)
        x = np.rint(res.x[:n_x]).astype(np.int64)
        if not np.array_equal(np.bincount(owner, weights=x, minlength=n_units), rhs):
            # a point the solver hands back at its time limit need not assign every record
            limit = "its solver's limit" if self.time_limit is None else f"its time limit of {self.time_limit:g} s"
            raise MinGenTimeout(
                f"mingen stopped at {limit} before its best point assigned every record; give it more "
                "(parameter time_limit, e.g. --param time_limit=600) or use heuristicmin "
                "or fulldomain")

        # ----- decode
        info = {"mode": self.mode, "objective": self.objective, "optimal": bool(optimal),
                "n_variables": n_var, "n_constraints": A.shape[0], "n_units": n_units,
                "n_candidates_unpruned": info_pruned}
        chosen = np.flatnonzero(x > 0)
        records_x = x * (c[owner] if rows_mode else 1)
        info["steps"] = int((steps[chosen] * records_x[chosen]).sum())
        info["objective_value"] = info["steps"]
        info["precision_loss"] = float((prec[chosen] * records_x[chosen]).sum() / L) if L else 0.0
        parts = [[] for _ in range(n_units)]
        for i in chosen:
            parts[owner[i]].append((tuple(int(v) for v in cands[i]), int(records_x[i])))
        info["parts"] = parts
        if self.objective == "distortion":
            # report in the cost model's own units
            ic = problem.cost.int_costs
            lo = units[owner]
            d = np.zeros(n_x, dtype=np.int64)
            for j in range(m):
                d += ic[j][cands[:, j]] - ic[j][lo[:, j]]
            info["objective_value"] = int((d[chosen] * records_x[chosen]).sum())
            info["distortion"] = info["objective_value"] / problem.cost.scale

        row_unit = ec.row_class
        if rows_mode:
            unit_code = np.zeros((n_units, m), dtype=np.int32)
            for u, ps in enumerate(parts):
                unit_code[u] = ps[0][0]
            codes = unit_code[row_unit]
            info["expanded"] = False
            return Solution(codes.astype(np.int32), np.zeros(table.n_rows, dtype=bool), MinGenDetails(**info))
        return self._records_solution(table, row_unit, parts, info)

    @staticmethod
    def _records_solution(table: EncodedTable, row_unit: np.ndarray, parts, info) -> Solution:
        """Assign each unit's parts to its input rows (first fit decreasing, so a
        counted row is split only when it must be); expand if any is split."""
        m = table.codes.shape[1]
        assign: dict[int, list] = {}
        split = False
        for u, ps in enumerate(parts):
            rows = np.flatnonzero(row_unit == u)
            rows = sorted(rows, key=lambda i: -int(table.counts[i]))
            left = [[code, n] for code, n in sorted(ps, key=lambda p: -p[1])]
            for i in rows:
                need = int(table.counts[i])
                fit = next((p for p in left if p[1] >= need), None)
                if fit is not None:
                    assign[i] = [(fit[0], need)]
                    fit[1] -= need
                    continue
                pieces = []
                for p in left:
                    if need == 0:
                        break
                    take = min(p[1], need)
                    if take:
                        pieces.append((p[0], take))
                        p[1] -= take
                        need -= take
                assign[i] = pieces
                split = split or len(pieces) > 1
        n = table.n_rows
        if not split:
            codes = np.array([assign[i][0][0] for i in range(n)], dtype=np.int32).reshape(n, m)
            info["expanded"] = False
            return Solution(codes, np.zeros(n, dtype=bool), MinGenDetails(**info))
        rec_codes, rec_row = [], []
        for i in range(n):
            for code, cnt in assign[i]:
                rec_codes.extend([code] * cnt)
                rec_row.extend([i] * cnt)
        info["expanded"] = True
        info["record_row"] = np.array(rec_row, dtype=np.int64)
        log.info("mingen(records): counted rows were split; output expanded to %d records", len(rec_row))
        codes = np.array(rec_codes, dtype=np.int32).reshape(len(rec_row), m)
        return Solution(codes, np.zeros(len(rec_row), dtype=bool), MinGenDetails(**info))
