"""Privacy models for sensitive attributes: l-diversity (Machanavajjhala et
al. 2007) and t-closeness (Li, Li and Venkatasubramanian 2007).

k-anonymity bounds how well a record can be re-identified, not what its
equivalence class reveals about a *sensitive* attribute: a class whose
records all share one sensitive value discloses it. These models constrain
the sensitive values inside every equivalence class.

Usage::

    from hieranon.privacy import DistinctLDiversity, TCloseness

    models = [DistinctLDiversity("salary-class", 2), TCloseness("salary-class", 0.2, "equal")]
    bound = [m.bind(df, counts) for m in models]     # once, on the input table
    for b in bound:
        b.check_feasible()                           # PrivacyError when the table cannot satisfy it
        ok = b.per_class_ok(class_of_row, n_classes) # bool per equivalence class
        value = b.measure(class_of_row, n_classes)   # l, or the EMD, per class

An *unbound* model (:class:`PrivacyModel`) holds the attribute and the
parameters; :meth:`PrivacyModel.bind` reads the sensitive column of the input
table and returns a :class:`BoundModel` that works on integer codes and
per-class histograms (``np.bincount`` over ``class * n_values + value``,
weighted by record counts). Suppressed records form one more class, which
must satisfy the models like every other.

Every model here is *monotone*: the union of two classes that satisfy it
satisfies it (Machanavajjhala et al. 2007, Sec. 5; Li et al. 2007, Sec. 4.1).
Merging classes or generalising further never breaks a satisfied model, so
the whole table is the easiest target (:meth:`BoundModel.check_feasible`).

The command-line and configuration forms are parsed by
:func:`parse_l_diversity`, :func:`parse_t_closeness` and
:func:`parse_privacy_config` (:mod:`hieranon.privacy.parse`).
"""

import numpy as np

from ._base import BoundModel, PrivacyError, PrivacyModel
from .assess import PrivacyAssessment, assess_privacy, sensitive_columns
from .l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from .parse import (
    L_DIVERSITY_FORM,
    T_CLOSENESS_FORM,
    parse_l_diversity,
    parse_privacy_config,
    parse_risk_options,
    parse_t_closeness,
)
from .risk_models import (
    AverageRisk,
    BoundRiskModel,
    DeltaPresence,
    KMap,
    PopulationUniqueness,
    RiskModel,
    bind_risk,
    risk_feasible,
)
from .t_closeness import DISTANCES, TCloseness

__all__ = ["PrivacyError", "PrivacyModel", "BoundModel", "DistinctLDiversity", "EntropyLDiversity",
           "RecursiveCLDiversity", "TCloseness", "DISTANCES", "parse_l_diversity", "parse_t_closeness",
           "parse_privacy_config", "L_DIVERSITY_FORM", "T_CLOSENESS_FORM", "bind_all", "check_feasible", "classes_ok",
           "PrivacyAssessment", "assess_privacy", "sensitive_columns", "RiskModel", "BoundRiskModel", "KMap",
           "DeltaPresence", "AverageRisk", "PopulationUniqueness", "bind_risk", "risk_feasible", "parse_risk_options"]


def bind_all(models, df, counts=None) -> list[BoundModel]:
    """``[m.bind(df, counts) for m in models]``."""
    return [m.bind(df, counts) for m in models]


def check_feasible(bound: list[BoundModel]) -> None:
    """Raise :class:`PrivacyError` for the first model the whole table cannot satisfy."""
    for b in bound:
        b.check_feasible()


def classes_ok(bound: list[BoundModel], class_of_row: np.ndarray, n_classes: int) -> bool:
    """Does every non-empty class (``class_of_row`` in ``0..n_classes-1``)
    satisfy every model of ``bound``?"""
    present = np.bincount(class_of_row, minlength=n_classes) > 0
    return all(bool(b.per_class_ok(class_of_row, n_classes)[present].all()) for b in bound)
