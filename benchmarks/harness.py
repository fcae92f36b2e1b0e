"""Puts the research harness on the benchmark scripts' import path: the folder
``experiments/`` at the repository's root holds ``hieranon_experiments``
(the benchmark helpers and the papers' experiments), which the installed
``hieranon`` package does not. ``import harness`` before importing from it."""

import sys
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[1] / "experiments"
if str(FOLDER) not in sys.path:
    sys.path.insert(0, str(FOLDER))
