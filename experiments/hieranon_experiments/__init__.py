"""Reproduction of the papers' experiments: ``hieranon experiments``.

The research harness is not part of the installed ``hieranon`` package: the
command finds it beside the sources of a clone (``experiments/`` at the
repository's root) or through the ``hieranon.harness`` entry point that
``pip install ./experiments`` registers.

Four experiments, each writing its raw numbers (CSV, one row per run) and a
summary CSV, a figure (PNG), and together a ``REPORT.md`` that embeds every
figure and states, for every claim of the papers, the paper's statement and
number, ours, and a verdict:

1. Li et al. 2006 Fig. 2 -- KACA vs the least-distortion full-domain generalisation
   (Incognito's optimum), QI size 1..9, k = 2 and 10, uniform weights
   (:mod:`.adult`);
2. Li et al. 2008 Figs 4 and 5 -- KACA1, KACA2, full-domain optimum, Mondrian;
   height weights beta = 1 (:mod:`.adult`);
3. Sun, Wang & Li 2008 Figs 2-4 -- Mondrian, DBCA, DBCA:CM with salary-class as class
   (:mod:`.adult`);
4. Arca & Hewett -- the worked examples and their comparison tables
   (:mod:`.worked`).

Usage from Python::

    from hieranon_experiments import run_experiments
    run_experiments("out/", quick=True)
"""

from __future__ import annotations

from .core import FULL, QUICK, ExperimentError, Grid
from .runner import run_experiments

__all__ = ["FULL", "QUICK", "ExperimentError", "Grid", "run_experiments"]
