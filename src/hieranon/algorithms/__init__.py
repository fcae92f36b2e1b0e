"""Anonymisation algorithms, one module per family, one interface (:mod:`.base`)."""

from .base import Algorithm, Problem, Solution

__all__ = ["Algorithm", "Problem", "Solution"]
