"""hieranon: k-anonymisation by generalisation in attribute hierarchies."""

import logging

from . import hierarchy, metrics, table
from .api import AnonymizationResult, anonymize
from .hierarchy import Hierarchy, HierarchyError
from .requirements import Requirement, RequirementError
from .spec import AnonymizationSpec
from .table import DataError

__version__ = "0.1.0"
__all__ = ["anonymize", "AnonymizationResult", "AnonymizationSpec", "Hierarchy", "HierarchyError", "Requirement",
           "RequirementError", "DataError", "hierarchy", "metrics", "table", "__version__"]

logging.getLogger("hieranon").addHandler(logging.NullHandler())
