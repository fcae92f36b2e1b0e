"""BUG -- bottom-up generalisation (Wang, Yu & Chakraborty 2004, ICDM), as
Arca & Hewett sec. 5.2 uses it, with several anonymity requirements.

Every attribute's values form a *cut* of its hierarchy, starting at the
original values. A *generalisation* ``G = {children of p} -> p`` is possible
when every record whose original value lies under ``p`` is currently printed
as a child of ``p`` -- or already at or above ``p``, as an original value
that is an inner node is (``missing='root'`` reads an empty cell as the root)
-- and some record is printed as a child; it prints them all as ``p``. While some requirement is
violated, BUG performs the generalisation, on an attribute of a violated
requirement, with the smallest

    IP(G) = InfoLoss(G) / AnonyGain(G)

where, with ``R_p`` the records under ``p`` and ``R_c`` those of each child,

* ``InfoLoss(G) = I(R_p) - sum_c |R_c|/|R_p| I(R_c)`` (class entropy, bits:
  the information gain TDS would get back by specialising ``p``);
* ``AnonyGain(G) = avg over requirements <B,k> whose B contains the attribute
  of (min(A_G(B), k) - min(A(B), k))``, ``A(B)`` the smallest number of
  records sharing a combination of ``B`` before, ``A_G(B)`` after ``G``
  (anonymity beyond k is not a gain).

Generalisations with ``AnonyGain > 0`` are the *critical* ones of the BUG
paper and are preferred. When none is critical (the minimum is held by
several groups, so no single step raises it), the anonymity gain falls back
to the average decrease of the *deficit* of those requirements -- the sum,
over groups smaller than k, of the records they lack (``k - size``) -- which
any generalisation merging a violating group with another one decreases; if
no generalisation decreases it, the one with the least InfoLoss among those
touching violating records is taken. Ties: smaller InfoLoss, then
attribute order, then node id. Each step makes the table strictly more
general, so BUG always ends with a table that satisfies every requirement.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .base import Algorithm, Problem, Solution, log
from .details import BUGDetails
from .params import Interval
from .tags import Tags
from .tds import EPS, ClassTable, info_gain


class BUG(Algorithm):
    """Bottom-up generalisation (Wang, Yu & Chakraborty 2004) with several requirements.

    ``details.generalisations`` lists ``(attribute, parent label, IP,
    info_loss, anony_gain, kind)`` in the order performed, ``kind`` being
    ``"critical"``, ``"deficit"`` (fallback gain) or ``"least-loss"``.
    """

    name = "bug"
    tags = Tags(several_requirements=True, needs_class_column=True)

    parameters = {"max_steps": Interval(Integral, 0, None) | None}

    def __init__(self, max_steps: int | None = None):
        """Parameters as in the class docstring (checked and stored by :class:`.Algorithm`)."""

    @staticmethod
    def _deficit(cnt: np.ndarray, k: int) -> float:
        small = cnt[cnt < k]
        return float((k - small).sum())

    def _candidates(self, ct: ClassTable, codes: np.ndarray, j: int):
        """Parents whose whole (occurring) subtree is printed one level below
        them. Rows already printed at or above the parent (an original value
        that is the parent itself or above it, e.g. a missing cell read as
        the root) do not block it; those printed as the parent are part of
        its records ``R_p`` (the rows yielded), those above are not."""
        h = ct.hierarchies[j]
        col = codes[:, j]
        leaf = ct.leaf[:, j]
        parents = np.unique(h.parent[np.unique(col)])
        for p in parents[parents >= 0]:
            under = h.ancestors[leaf, h.depth[p]] == p
            under &= h.depth[leaf] >= h.depth[p]
            below = under & (h.depth[col] > h.depth[p])       # printed strictly below p
            if below.any() and np.all(h.parent[col[below]] == p):
                yield int(p), np.flatnonzero(under & (h.depth[col] >= h.depth[p]))

    def _solve(self, problem: Problem) -> Solution:
        ct = ClassTable(problem, "bug")
        codes = ct.leaf.copy()
        steps: list = []
        while not ct.satisfied(codes):
            if self.max_steps is not None and len(steps) >= self.max_steps:
                raise RuntimeError(f"bug: max_steps={self.max_steps} reached before the requirements hold")
            anon = ct.anonymity(codes)
            deficit = [self._deficit(ct.group_counts(codes, idx)[1], k) for idx, k in ct.reqs]
            violated = [i for i, (a, (_idx, k)) in enumerate(zip(anon, ct.reqs)) if a < k]
            attrs = sorted({int(j) for i in violated for j in ct.reqs[i][0]})
            viol_mask = np.zeros(len(codes), dtype=bool)
            for i in violated:
                idx, k = ct.reqs[i]
                inv, cnt = ct.group_counts(codes, idx)
                viol_mask |= cnt[inv] < k
            cands = []
            for j in attrs:
                rel = ct.reqs_with(j)
                for p, rows in self._candidates(ct, codes, j):
                    loss = info_gain(ct.label[rows], codes[rows, j], ct.weights[rows], ct.n_classes)
                    new = codes.copy()
                    new[rows, j] = p
                    gain = 0.0
                    vgain = 0.0
                    if rel:
                        na = []
                        nv = []
                        for i in rel:
                            idx, k = ct.reqs[i]
                            inv, cnt = ct.group_counts(new, idx)
                            na.append(min(float(cnt.min()), k) - min(anon[i], k))
                            nv.append(deficit[i] - self._deficit(cnt, k))
                        gain = float(np.mean(na))
                        vgain = float(np.mean(nv))
                    touches = bool(viol_mask[rows].any())
                    cands.append((j, p, new, loss, gain, vgain, touches))
            if not cands:
                raise RuntimeError("bug: no generalisation left but the requirements are still violated")
            crit = [c for c in cands if c[4] > EPS]
            if crit:
                kind, pool, g_of = "critical", crit, (lambda c: c[4])
            else:
                pool = [c for c in cands if c[5] > EPS]
                kind, g_of = "deficit", (lambda c: c[5])
                if not pool:
                    pool = [c for c in cands if c[6]] or cands
                    kind, g_of = "least-loss", (lambda c: 1.0)
            best = min(pool, key=lambda c: (round(c[3] / g_of(c), 12), round(c[3], 12), c[0], c[1]))
            j, p, codes, loss, gain, vgain, _t = best
            ip = loss / g_of(best)
            steps.append((ct.qi_names[j], ct.hierarchies[j].labels[p], ip, loss,
                          gain if kind == "critical" else vgain, kind))
            log.debug("bug: generalise %s to %s (%s, IP %.6f)", ct.qi_names[j], ct.hierarchies[j].labels[p], kind, ip)
        info = BUGDetails(generalisations=steps, n_steps=len(steps))
        return ct.solution(codes, info, problem.table.n_rows)
