"""Lower bounds of the distortion of every k-anonymous local recoding.

Record-level local recoding -- the MinGen program of Arca & Hewett with the WHD
distortion of Li et al. 2006 (Def. 6-7) as objective -- gives each record a node of
the product of the hierarchies above it (its output tuple), and every node
used must gather at least ``k`` records (Def. 2: records printing the same
tuple form one class). Each record ``r`` placed at node ``g`` costs
``c(g) - c(r)``, the sum over attributes of the WHD of its cells.

Solving that program exactly is out of reach beyond a few hundred records,
but relaxing its "every record gets exactly one node" constraints with one
multiplier ``u[r]`` per record (Lagrangian relaxation, Fisher 1981; Beasley
1990) leaves one easy problem per node: open it with the records of most
negative reduced cost ``c(g) - c(r) - u[r]`` (at least ``k`` of them) or leave
it closed. For every ``u`` the relaxed optimum ``sum(u) + sum_g min(0, best_g(u))``
is a lower bound of the distortion of *any* k-anonymous local recoding;
subgradient ascent (Polyak steps, Held, Wolfe & Crowder 1974) raises it. Its
starting point, ``u[r]`` = the cheapest node above ``r`` with ``>= k`` records
under it, is the simple bound "each record alone".

The bound is what :func:`distortion_lower_bound` returns: an optimality
certificate for large tables, where the exact optimum is unknown (on UCI Adult,
8 QIs, k = 10, it shows in about 10 s on 2 cores that no local recoding
reaches a distortion ratio below 0.1016; ``benchmarks/bench_bound.py``).

With the t-closeness of a two-valued sensitive attribute (equal or ordered
distance: the EMD is the difference of the shares of one value, Li, Li &
Venkatasubramanian 2007) each node's easy problem also keeps that share
within ``t`` of the table's (:func:`share_constraint`), and the bound holds
for every output meeting the model too (Adult, k = 10, t = 0.2: 0.165). The
l-diversity of a two-valued attribute (distinct, entropy, recursive (c, 2))
also keeps each class's share of one value in an interval, and gets the same
certificate.

The modules, in the order the bound runs them:

* :mod:`~hieranon.bounds.candidates` -- the nodes with at least ``k`` records
  under them (a depth-first walk over the depth vectors of the hierarchies);
* :mod:`~hieranon.bounds.distinct` -- one node per distinct set of records;
* :mod:`~hieranon.bounds.relaxation` -- the relaxed program at given
  multipliers, with :mod:`~hieranon.bounds.selection` for a node's best
  selection under a share constraint (which kaca+ also uses);
* :mod:`~hieranon.bounds.ascent` -- the subgradient ascent;
* :mod:`~hieranon.bounds.share` -- the share constraint of a privacy model;
* :mod:`~hieranon.bounds.lower_bound` -- the entry points.
"""

from __future__ import annotations

from .candidates import BoundTooLarge, Cancelled, candidate_nodes
from .distinct import distinct_member_sets
from .lower_bound import (
    BOUND_ITERATIONS,
    DistortionBound,
    RelaxedPrices,
    RelaxedProgram,
    check_iterations,
    distortion_lower_bound,
    problem_lower_bound,
    relaxed_prices,
    relaxed_program,
)
from .selection import balanced_choice
from .share import share_constraint, tightest_share

__all__ = ["BOUND_ITERATIONS", "DistortionBound", "BoundTooLarge", "Cancelled", "RelaxedPrices", "RelaxedProgram",
           "balanced_choice", "candidate_nodes", "check_iterations", "distinct_member_sets", "distortion_lower_bound",
           "problem_lower_bound", "relaxed_prices", "relaxed_program", "share_constraint", "tightest_share"]
