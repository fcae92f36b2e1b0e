"""A record-suppression budget for every method that can suppress.

A custodian says how many records may be suppressed -- a share of the
records (``"5%"``, ``0.05``) or a count (``120``) -- and the method
suppresses an outlying record only where that lowers the total distortion,
as ARX's utility-driven suppression does (Prasser et al. 2016). A suppressed
record prints ``*`` in every quasi-identifier and is counted as fully
generalised by every metric (Li et al. 2006, sec. 5), and the suppressed
records print one ``*`` tuple, so they form one more class: there are none
or at least k of them, and together they satisfy every privacy model.

How a method spends the budget:

* full-domain methods (``fulldomain``, ``allmin``, ``datafly``) have a
  suppression limit of their own (Samarati 2001, MaxSup): the budget becomes
  that limit, and the answer with suppression is kept only when its
  distortion is lower than the answer without;
* every other method that can (the default ``kaca+``, ``kaca1``, ``kaca2``,
  ``mondrian``, ``dbca``, ``heuristicmin``, ...) is solved once without
  suppression, then its classes are *trimmed*: in a class of more than k
  records, keeping only the records under one child of the class's value of
  some attribute (at least k of them) and suppressing the others lowers the
  class's generalisation; a trim is made when the records kept gain more than
  the records suppressed lose, the best gain per suppressed record first,
  repeatedly, within the budget. When the trims suppress fewer than k
  records, the cheapest surplus records of classes that keep k are added --
  only when the total still falls. The rest of the table is then solved again
  without the suppressed records (its classes may regroup) and trimmed once
  more; the result with the least distortion is kept;
* ``mingen`` refuses a budget: it is exact, and a suppressed record -- one
  more class printing the root -- is itself a generalisation it already
  considers, so suppression never lowers its optimum.

Under this convention suppression never lowers the optimum of local
recoding (a class at the root is a legal class), only what a heuristic
finds; on full-domain recoding it lowers the optimum itself, since the
outliers no longer force a whole attribute up.

The result's details (``info["suppression"]``) say how many records were
suppressed, under which budget, and the distortion ratio with and without.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any

import numpy as np

from ..core.table import EncodedTable, group
from ..evaluation.verify import verify_codes
from .base import Algorithm, Details, Problem, Solution, clone, log
from .params import Constraint, InstanceOf
from .tags import Tags, get_tags

__all__ = ["SuppressionBudget", "parse_budget", "BudgetedSuppression", "with_budget", "check_budget",
           "SuppressionDetails"]


# ------------------------------------------------------------------ budget
@dataclass(frozen=True)
class SuppressionBudget:
    """At most ``fraction`` of the records, or at most ``records`` records."""

    fraction: float | None = None
    records: int | None = None

    def limit(self, n_records: int) -> int:
        """The most records that may be suppressed out of ``n_records``."""
        if self.records is not None:
            return min(self.records, n_records)
        return int(math.floor(self.fraction * n_records + 1e-9))

    def __str__(self) -> str:
        if self.records is not None:
            return f"{self.records} records"
        return f"{self.fraction * 100:g}%"


_PERCENT = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*%\s*$")


def parse_budget(value: Any, what: str = "max_suppression") -> SuppressionBudget | None:
    """A budget from ``"5%"``, a fraction below 1 (``0.05``) or a whole
    number of records (``120``, ``"120"``, numpy numbers too); None stays
    None. Anything else is a ValueError naming ``what`` and the forms."""
    if value is None or isinstance(value, SuppressionBudget):
        return value
    forms = "expected a share such as '5%' (or 0.05) or a number of records such as 120"
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{what}: {forms}, got {value!r}")
    if isinstance(value, str):
        m = _PERCENT.match(value)
        if m:
            pct = float(m.group(1))
            if not 0 <= pct <= 100:
                raise ValueError(f"{what}: a share must lie between 0% and 100%, got {value!r}")
            return SuppressionBudget(fraction=pct / 100)
        text = value.strip()
        try:
            value = int(text) if re.fullmatch(r"[-+]?[0-9]+", text) else float(text)
        except ValueError:
            raise ValueError(f"{what}: {forms}, got {value!r}") from None
    if isinstance(value, Real) and float(value) < 0:
        raise ValueError(f"{what}: a budget cannot be negative; {forms} (0 for none), got {value!r}")
    if isinstance(value, Integral):
        return SuppressionBudget(records=int(value))
    if isinstance(value, Real) and math.isfinite(float(value)):
        x = float(value)
        if x < 1:
            return SuppressionBudget(fraction=x)
        records = f"{int(x) if x.is_integer() else round(x)} for records"  # each suggestion is itself a valid budget
        raise ValueError(f"{what}: {value!r} is neither a fraction below 1 nor a whole number of records; write "
                         + (f"'{x:g}%' for a share or {records}" if x <= 100 else records))
    raise ValueError(f"{what}: {forms}, got {value!r}")


class Budget(Constraint):
    """A record-suppression budget in any form :func:`parse_budget` reads
    (converted to a :class:`SuppressionBudget`)."""

    def accepts(self, value: Any) -> bool:
        try:
            parse_budget(value)
        except ValueError:
            return False
        return value is not None

    def convert(self, value: Any) -> SuppressionBudget:
        return parse_budget(value)

    def describe(self) -> str:
        return "a share such as '5%' (or 0.05) or a number of records such as 120"


def check_budget(algorithm: Algorithm) -> None:
    """Refuse a budget for a method whose tags say it cannot suppress, or
    beside the method's own suppression setting (one line naming the option)."""
    method, suppression = algorithm.name, get_tags(algorithm).suppression
    if not suppression.takes_budget:
        raise ValueError(f"max_suppression: method {method!r} does not suppress records: {suppression.refused}; "
                         "leave out --max-suppression or choose another method")
    own = suppression.setting
    if own is not None and algorithm.get_params().get(own) not in (None, 0, 0.0):
        raise ValueError(f"max_suppression: method {method!r} is also given its own {own}; give one of the two "
                         "(--max-suppression means the same for every method)")


# ------------------------------------------------------------------ details
@dataclass
class SuppressionDetails(Details):
    """The inner method's details and what the budget did (``suppression``:
    budget, budget_records, suppressed_records, distortion ratios with and
    without, and why)."""

    inner: Details | None = None
    suppression: dict = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.inner.as_dict()) if self.inner is not None else {}
        out["suppression"] = self.suppression
        return out


# ------------------------------------------------------------------ wrapper
def _row_costs(table: EncodedTable, codes: np.ndarray, cost) -> np.ndarray:
    g = np.zeros(table.n_rows, dtype=np.int64)
    for j, c in enumerate(cost.int_costs):
        g += c[codes[:, j]] - c[table.codes[:, j]]
    return g


def _total(table: EncodedTable, codes: np.ndarray, cost) -> int:
    return int((_row_costs(table, codes, cost) * table.counts).sum())


def _set_lca(h, codes: np.ndarray) -> int:
    """The lowest common ancestor of a set of node codes."""
    u = np.unique(codes)
    if len(u) == 1:
        return int(u[0])
    anc = h.ancestors[u]
    same = (anc == anc[0]).all(axis=0)
    return int(anc[0, int(np.argmin(same)) - 1])


class _Trimmer:
    """Class trims of a solution (module docstring), exact in the cost model's integers."""

    def __init__(self, problem: Problem):
        self.p = problem
        t = problem.table
        self.t = t
        self.full = _row_costs(t, np.zeros_like(t.codes), problem.cost)  # each row's cost at the root
        self.k = problem.k

    def _cost_at(self, rows: np.ndarray, node: np.ndarray) -> int:
        t, c = self.t, self.p.cost.int_costs
        per = sum(int(c[j][node[j]]) for j in range(len(c)))
        leaf = sum(c[j][t.codes[rows, j]] for j in range(len(c)))
        return int(((per - leaf) * t.counts[rows]).sum())

    def _best_step(self, rows: np.ndarray, node: np.ndarray):
        """The best single trim of a class: (gain, rows kept, new node) or None."""
        t = self.t
        best = None
        for j, h in enumerate(t.hierarchies):
            leaf = t.codes[rows, j]
            d = int(h.depth[node[j]])
            if d + 1 >= h.ancestors.shape[1] or (leaf == node[j]).all():
                continue
            child = h.ancestors[leaf, d + 1]
            for c in np.unique(child):
                keep = child == c
                if t.counts[rows[keep]].sum() < self.k or keep.all():
                    continue
                kept, out = rows[keep], rows[~keep]
                new = np.array([_set_lca(hh, t.codes[kept, jj]) for jj, hh in enumerate(t.hierarchies)])
                saved = self._cost_at(kept, node) - self._cost_at(kept, new)
                lost = int((self.full[out] * t.counts[out]).sum()) - self._cost_at(out, node)
                gain = saved - lost
                if gain > 0 and (best is None or gain > best[0]):
                    best = (gain, kept, new)
        return best

    def trims(self, codes: np.ndarray, suppressed: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """Per class with more than k records: its greedy trim, as (gain, rows suppressed)."""
        t = self.t
        live = np.flatnonzero(~suppressed)
        ec = group(codes[live], t.counts[live])
        out = []
        for ci, members in enumerate(ec.members()):
            if ec.sizes[ci] <= self.k:
                continue
            rows = live[members]
            node = codes[rows[0]].copy()
            gain, kept = 0, rows
            while True:
                step = self._best_step(kept, node)
                if step is None:
                    break
                gain += step[0]
                kept, node = step[1], step[2]
            if gain > 0:
                out.append((gain, np.setdiff1d(rows, kept)))
        return out

    def apply(self, codes: np.ndarray, suppressed: np.ndarray, budget: int) -> tuple[np.ndarray, np.ndarray, int]:
        """Trims within ``budget`` records (the best gain per suppressed record
        first), topped up to k when short, every class re-printed at the LCA
        of what it keeps. Returns (codes, suppressed, classes trimmed); the
        input when nothing lowers the distortion."""
        t = self.t
        have = int(t.counts[suppressed].sum())
        room = budget - have
        chosen, n = [], 0
        for _gain, rows in sorted(self.trims(codes, suppressed), key=lambda g: -g[0] / t.counts[g[1]].sum()):
            r = int(t.counts[rows].sum())
            if n + r <= room:
                chosen.append(rows)
                n += r
        if not chosen:
            return codes, suppressed, 0
        sup = suppressed.copy()
        sup[np.concatenate(chosen)] = True
        if int(t.counts[sup].sum()) < self.k:
            sup = self._top_up(codes, sup, budget)
            if sup is None:
                return codes, suppressed, 0
        out = self._reprint(codes, suppressed, sup)
        return out, sup, len(chosen)

    def _top_up(self, codes: np.ndarray, sup: np.ndarray, budget: int) -> np.ndarray | None:
        """``sup`` with the surplus rows of classes that keep k, the cheapest
        to suppress first, until k records; None when the budget or the
        surplus does not allow it."""
        t = self.t
        need = self.k - int(t.counts[sup].sum())
        live = np.flatnonzero(~sup)
        ec = group(codes[live], t.counts[live])
        left = ec.sizes.astype(np.int64).copy()
        extra = (self.full[live] - _row_costs(t, codes, self.p.cost)[live]) * t.counts[live]
        sup = sup.copy()
        for i in np.argsort(extra, kind="stable"):
            if need <= 0:
                break
            c, r = ec.row_class[i], int(t.counts[live[i]])
            if left[c] - r >= self.k:
                left[c] -= r
                sup[live[i]] = True
                need -= r
        if need > 0 or int(t.counts[sup].sum()) > budget:
            return None
        return sup

    def _reprint(self, codes: np.ndarray, before: np.ndarray, sup: np.ndarray) -> np.ndarray:
        """Every class that lost rows printed at the LCA of the rows it keeps;
        suppressed rows at the root; the other classes untouched."""
        t = self.t
        out = codes.copy()
        row_class = group(codes, t.counts).row_class
        touched = np.isin(row_class, np.unique(row_class[sup & ~before])) & ~sup
        rows = np.flatnonzero(touched)
        order = rows[np.argsort(row_class[rows], kind="stable")]
        bounds = np.flatnonzero(np.diff(row_class[order])) + 1
        for members in np.split(order, bounds):
            if len(members):
                out[members] = [_set_lca(h, t.codes[members, j]) for j, h in enumerate(t.hierarchies)]
        out[sup] = 0
        return out


class BudgetedSuppression(Algorithm):
    """A method run with a record-suppression budget (module docstring).

    Built by :func:`with_budget`; ``inner`` solves, this class spends the
    budget where it lowers the distortion. ``details`` are the inner
    method's, with ``suppression`` added.

    Parameters
    ----------
    inner : Algorithm
        The method that solves (its parameters are ``inner__<name>`` in
        :meth:`get_params` ``(deep=True)`` and :meth:`set_params`).
    max_suppression : SuppressionBudget, str or number
        The budget, in any form :func:`parse_budget` reads.
    """

    name = "max_suppression"
    parameters = {"inner": InstanceOf(Algorithm), "max_suppression": Budget()}

    def __init__(self, inner: Algorithm, max_suppression: SuppressionBudget | str | float):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""
        self.name = inner.name

    @property
    def budget(self) -> SuppressionBudget:
        """The budget (:attr:`max_suppression`, parsed)."""
        return self.max_suppression

    def __hieranon_tags__(self) -> Tags:
        """The wrapped method's tags."""
        return get_tags(self.inner)

    def run_params(self) -> dict[str, Any]:
        """The wrapped method's parameters and ``max_suppression`` as the budget reads (``'5%'``, ``'120 records'``)."""
        return {**self.inner.run_params(), "max_suppression": str(self.budget)}

    def solve_checked(self, problem: Problem) -> Solution:
        """Spend the budget on a checked problem (the wrapped method checks the same problem once)."""
        return self._solve(problem)

    def _solve(self, problem: Problem) -> Solution:
        t, cost = problem.table, problem.cost
        n = t.n_records
        limit = self.budget.limit(n)
        base = self.inner.solve_checked(problem)
        full = _total(t, np.zeros_like(t.codes), cost) or 1
        d0 = _total(t, base.codes, cost)
        facts = {"budget": str(self.budget), "budget_records": limit, "distortion_ratio_without": d0 / full}
        if limit < problem.k:
            best, how = base, (f"none: the budget of {limit} records is below k = {problem.k}, and the suppressed "
                               "records form a class that needs k")
        elif get_tags(self).suppression.native:
            best, how = self._native(problem, base, d0, limit)
        else:
            best, how = self._trimmed(problem, base, d0, limit)
        n_sup = int(t.counts[best.suppressed].sum())
        facts.update(suppressed_records=n_sup, distortion_ratio=_total(t, best.codes, cost) / full, reason=how)
        log.info("%s with max_suppression %s: %d records suppressed (%s)", self.name, self.budget, n_sup, how)
        return Solution(best.codes, best.suppressed, SuppressionDetails(best.details, facts))

    def _native(self, problem: Problem, base: Solution, d0: int, limit: int) -> tuple[Solution, str]:
        limited = clone(self.inner).set_params(**{get_tags(self).suppression.setting: limit / problem.table.n_records})
        sol = limited.solve_checked(problem)
        d = _total(problem.table, sol.codes, problem.cost)
        if d < d0 and sol.suppressed.any():
            return sol, (f"the {self.name} search with a suppression limit of {limit} records: suppressing them "
                         "lets a less generalised lattice node meet the requirements, lowering the distortion")
        return base, "none: no suppression within the budget lowered the distortion"

    def _trimmed(self, problem: Problem, base: Solution, d0: int, limit: int) -> tuple[Solution, str]:
        t = problem.table
        trim = _Trimmer(problem)
        codes, sup, n_trims = trim.apply(base.codes, base.suppressed.copy(), limit)
        best, best_d, how = base, d0, "none: no outlying record's suppression lowered the distortion"
        if n_trims and self._valid(problem, codes, sup):
            d = _total(t, codes, problem.cost)
            if d < best_d:
                best, best_d = Solution(codes, sup, base.details), d
                how = (f"outlying records of {n_trims} classes, each suppression lowering the distortion "
                       "(the records kept are less generalised)")
        if best is not base:  # the rest solved again without the suppressed records, and trimmed once more
            again = self._resolve_rest(problem, best.suppressed, limit)
            if again is not None:
                d = _total(t, again.codes, problem.cost)
                if d < best_d:
                    best, best_d = again, d
                    how += "; the rest solved again without them"
        return best, how

    def _resolve_rest(self, problem: Problem, sup: np.ndarray, limit: int) -> Solution | None:
        t = problem.table
        keep = np.flatnonzero(~sup)
        sub = Problem(EncodedTable(t.codes[keep], t.hierarchies, t.qi_names, t.counts[keep]),
                      problem.requirements, problem.cost, problem.seed,
                      None if problem.class_labels is None else problem.class_labels[keep],
                      [b.subset(keep) for b in problem.privacy])
        try:
            part = self.inner.solve(sub)
        except (ValueError, RuntimeError) as exc:  # the rest may be too small for the method
            log.debug("no second solve without the suppressed records: %s", exc)
            return None
        codes = np.zeros_like(t.codes)
        codes[keep] = part.codes
        out_sup = sup.copy()
        out_sup[keep] = part.suppressed
        codes, out_sup, _ = _Trimmer(problem).apply(codes, out_sup, limit)
        if int(t.counts[out_sup].sum()) > limit or not self._valid(problem, codes, out_sup):
            return None
        return Solution(codes, out_sup, part.details)

    @staticmethod
    def _valid(problem: Problem, codes: np.ndarray, sup: np.ndarray) -> bool:
        return verify_codes(problem.table, codes, problem.requirements, sup, privacy=problem.privacy).ok

    def check_problem(self, problem: Problem) -> None:
        self.inner.check_problem(problem)


def with_budget(algorithm: Algorithm, budget: SuppressionBudget | None) -> Algorithm:
    """``algorithm`` spending ``budget`` (itself when there is none); a method
    that cannot suppress, or that is given its own suppression setting too, is
    refused (ValueError, one line)."""
    if budget is None:
        return algorithm
    check_budget(algorithm)
    return BudgetedSuppression(algorithm, budget)
