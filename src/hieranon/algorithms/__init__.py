"""Anonymisation algorithms, one module per family, one interface (:mod:`.base`)."""

from .base import Algorithm, Details, Problem, Solution

__all__ = ["Algorithm", "Details", "Problem", "Solution"]
