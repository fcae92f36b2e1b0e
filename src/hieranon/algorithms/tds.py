"""TDS -- top-down specialisation (Fung, Wang & Yu 2005, ICDE), as Arca & Hewett
sec. 5.2 uses it, with several anonymity requirements.

Every attribute's values form a *cut* of its hierarchy (each original value
is printed as the one cut node on its path). TDS starts from the most general
table (every cut = the root) and repeatedly *specialises* one cut node ``v``
-- every record printed as ``v`` is printed as the child of ``v`` on its path
instead -- choosing the specialisation with the highest

    Score(v) = InfoGain(v) / (AnonyLoss(v) + 1)

among those that are *valid* (every requirement still holds afterwards) and
*beneficial* (``InfoGain(v) > 0``: it separates classes; Arca & Hewett Case 1
stops TDS exactly when no specialisation increases the information gain),
until none is left. With ``R_v`` the records printed as ``v`` and ``R_c``
those of each child ``c``:

* ``InfoGain(v) = I(R_v) - sum_c |R_c|/|R_v| I(R_c)``, ``I`` the class
  entropy (bits);
* ``AnonyLoss(v) = avg over requirements <B,k> whose B contains v's attribute
  of (A(B) - A_v(B))``, ``A(B)`` the smallest number of records sharing a
  combination of values of ``B`` before, ``A_v(B)`` after the specialisation
  (0 when no requirement contains the attribute).

Ties are broken by the larger InfoGain, then attribute order, then node id.
The class column comes from :attr:`Problem.class_labels`. The helpers here
(class-aware distinct rows, entropy, requirement minima) are shared with
:mod:`.bug`.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd

from .base import Algorithm, Details, Problem, Solution, log
from .details import TDSDetails
from .params import Interval
from .tags import Tags

#: Scores at or below this are taken as zero (no gain)
EPS = 1e-12


def entropy(class_counts: np.ndarray) -> np.ndarray:
    """Class entropy in bits of each row of a (groups, classes) count matrix."""
    cc = np.atleast_2d(np.asarray(class_counts, dtype=float))
    tot = cc.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(tot > 0, cc / tot, 0.0)
        logs = np.where(p > 0, np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return -(p * logs).sum(axis=1)


def info_gain(parent_labels: np.ndarray, child: np.ndarray, weights: np.ndarray, n_classes: int) -> float:
    """``I(R_v) - sum_c |R_c|/|R_v| I(R_c)`` for the records of ``parent_labels``
    (class ids) split by ``child`` (any integer ids), weighted by ``weights``."""
    if len(parent_labels) == 0:
        return 0.0
    tot = np.bincount(parent_labels, weights=weights, minlength=n_classes)
    before = float(entropy(tot)[0])
    cu, ci = np.unique(child, return_inverse=True)
    ci = ci.ravel()
    cc = np.zeros((len(cu), n_classes))
    np.add.at(cc, (ci, parent_labels), weights)
    sizes = cc.sum(axis=1)
    after = float((sizes / sizes.sum()) @ entropy(cc))
    return max(before - after, 0.0)


class ClassTable:
    """Distinct (QI tuple, class) rows of a problem with their record counts,
    and per-requirement anonymity of a code matrix over them."""

    def __init__(self, problem: Problem, method: str):
        """``problem`` has one class label per row (its method's tags need a
        class column: :meth:`.Algorithm.check_problem` refused it otherwise)."""
        table = problem.table
        labels = np.asarray(problem.class_labels)
        lab, self.class_names = pd.factorize(pd.Series(labels), sort=True, use_na_sentinel=False)
        lab = np.asarray(lab, dtype=np.int64)
        self.n_classes = max(int(lab.max()) + 1, 1) if len(lab) else 1
        full = np.concatenate([table.codes.astype(np.int64), lab[:, None]], axis=1)
        uniq, first, inv = np.unique(full, axis=0, return_index=True, return_inverse=True)
        inv = inv.ravel()
        self.leaf = uniq[:, :-1]                    # (n0, m) original codes
        self.label = uniq[:, -1]                    # class id of each distinct row
        self.weights = np.bincount(inv, weights=table.counts, minlength=len(uniq)).astype(float)
        self.row_of_input = inv                     # input row -> distinct row
        self.hierarchies = table.hierarchies
        self.m = len(self.hierarchies)
        self.reqs = [(np.array(r.indices(table.qi_names), dtype=np.int64), int(r.k)) for r in problem.requirements]
        self.qi_names = table.qi_names

    def group_counts(self, codes: np.ndarray, idx: np.ndarray):
        """(inverse, counts) of the records grouped by ``codes[:, idx]``
        (mixed-radix keys and hash factorisation when they fit in 64 bits)."""
        sizes = [self.hierarchies[i].n_nodes for i in idx]
        if float(np.prod([float(x) for x in sizes])) < 2.0 ** 62:
            mult = np.cumprod([1] + sizes[:-1]).astype(np.int64)
            inv, _ = pd.factorize(codes[:, idx] @ mult, sort=False)
        else:
            _, inv = np.unique(codes[:, idx], axis=0, return_inverse=True)
        inv = np.asarray(inv).ravel()
        return inv, np.bincount(inv, weights=self.weights)

    def anonymity(self, codes: np.ndarray) -> list[float]:
        """``A(B)`` per requirement: the smallest group size on B."""
        return [float(self.group_counts(codes, idx)[1].min()) for idx, _k in self.reqs]

    def violating_records(self, codes: np.ndarray) -> list[float]:
        """Records in groups smaller than k, per requirement."""
        out = []
        for idx, k in self.reqs:
            inv, cnt = self.group_counts(codes, idx)
            out.append(float(cnt[cnt < k].sum()))
        return out

    def satisfied(self, codes: np.ndarray) -> bool:
        return all(a >= k for a, (_idx, k) in zip(self.anonymity(codes), self.reqs))

    def reqs_with(self, j: int) -> list[int]:
        return [i for i, (idx, _k) in enumerate(self.reqs) if j in idx]

    def solution(self, codes: np.ndarray, info: Details, n_rows: int) -> Solution:
        return Solution(codes[self.row_of_input].astype(np.int32), np.zeros(n_rows, dtype=bool), info)


class TDS(Algorithm):
    """Top-down specialisation (Fung, Wang & Yu 2005) with several requirements.

    Parameters
    ----------
    max_steps : int or None
        Stop after this many specialisations (default: until none is valid and
        beneficial).

    ``details.specialisations`` lists ``(attribute, node label, score,
    info_gain, anony_loss)`` in the order performed.
    """

    name = "tds"
    tags = Tags(several_requirements=True, needs_class_column=True)

    parameters = {"max_steps": Interval(Integral, 0, None) | None}

    def __init__(self, max_steps: int | None = None):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""

    def _solve(self, problem: Problem) -> Solution:
        ct = ClassTable(problem, "tds")
        codes = np.zeros_like(ct.leaf)              # the most general table
        if not ct.satisfied(codes):
            raise ValueError("tds: even the most general table violates the requirements (k exceeds the records)")
        steps: list = []
        anon = ct.anonymity(codes)
        while self.max_steps is None or len(steps) < self.max_steps:
            best = None
            for j, h in enumerate(ct.hierarchies):
                col = codes[:, j]
                has_kids = np.array([len(h.children[v]) > 0 for v in range(h.n_nodes)])
                for v in np.unique(col):
                    if not has_kids[v]:
                        continue
                    rows = np.flatnonzero(col == v)
                    child = h.ancestors[ct.leaf[rows, j], h.depth[v] + 1]
                    gain = info_gain(ct.label[rows], child, ct.weights[rows], ct.n_classes)
                    if gain <= EPS:
                        continue
                    new = codes.copy()
                    new[rows, j] = child
                    rel = ct.reqs_with(j)
                    new_anon = list(anon)
                    ok = True
                    for i in rel:
                        idx, k = ct.reqs[i]
                        a = float(ct.group_counts(new, idx)[1].min())
                        new_anon[i] = a
                        if a < k:
                            ok = False
                            break
                    if not ok:
                        continue
                    loss = float(np.mean([anon[i] - new_anon[i] for i in rel])) if rel else 0.0
                    score = gain / (loss + 1.0)
                    key = (score, gain, -j, -int(v))
                    if best is None or _better(key, best[0]):
                        best = (key, j, int(v), new, new_anon, gain, loss)
            if best is None:
                break
            key, j, v, codes, anon, gain, loss = best
            steps.append((ct.qi_names[j], ct.hierarchies[j].labels[v], key[0], gain, loss))
            log.debug("tds: specialise %s=%s (score %.6f)", ct.qi_names[j], ct.hierarchies[j].labels[v], key[0])
        info = TDSDetails(specialisations=steps, n_steps=len(steps))
        return ct.solution(codes, info, problem.table.n_rows)


def _better(a: tuple, b: tuple) -> bool:
    """Lexicographic 'greater' with a tolerance on the float score and gain."""
    for x, y in zip(a, b):
        if isinstance(x, float) or isinstance(y, float):
            if x > y + EPS:
                return True
            if x < y - EPS:
                return False
        else:
            if x != y:
                return x > y
    return False
