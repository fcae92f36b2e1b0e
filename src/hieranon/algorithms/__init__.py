"""Anonymisation algorithms, one module per family, one interface (:mod:`.base`),
their declared capabilities (:mod:`.tags`) and contract checks (:mod:`.checks`)."""

from .base import Algorithm, Details, Problem, Solution, clone
from .tags import SuppressionTags, Tags, get_tags

__all__ = ["Algorithm", "Details", "Problem", "Solution", "clone", "SuppressionTags", "Tags", "get_tags"]
