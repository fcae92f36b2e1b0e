"""hieranon: k-anonymisation by generalisation in attribute hierarchies."""

import logging

from . import hierarchy, metrics, table
from .hierarchy import Hierarchy, HierarchyError
from .requirements import Requirement, RequirementError
from .table import DataError

__version__ = "0.1.0"
__all__ = ["Hierarchy", "HierarchyError", "Requirement", "RequirementError", "DataError",
           "hierarchy", "metrics", "table", "__version__"]

logging.getLogger("hieranon").addHandler(logging.NullHandler())
