"""hieranon: k-anonymisation by generalisation in attribute hierarchies."""

import logging

from . import risk  # noqa: E402  (the risk models' public names: hieranon.risk)
from .core import table
from .core.requirements import Requirement, RequirementError
from .core.table import DataError
from .core.tree import Hierarchy, HierarchyError
from .evaluation import metrics
from .hierarchies import builders
from .hierarchies import readers as hierarchy
from .io import datasets
from .job.pipeline import AnonymizationResult, anonymize
from .job.settings import SettingError
from .job.spec import AnonymizationSpec

__version__ = "0.1.0"
__all__ = ["anonymize", "AnonymizationResult", "AnonymizationSpec", "Hierarchy", "HierarchyError", "Requirement",
           "RequirementError", "DataError", "SettingError", "builders", "datasets", "hierarchy", "metrics", "risk",
           "table", "__version__"]

logging.getLogger("hieranon").addHandler(logging.NullHandler())
