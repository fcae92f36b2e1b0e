"""Re-identification risk models, in one place (the public names of the
modules that compute them).

Sample-based attacker models (El Emam 2013; ARX's risk analysis), from a
table's equivalence-class sizes:

* :func:`risk_models` -- prosecutor, journalist and marketer risk (highest,
  average, share of records above a threshold) and the population
  uniqueness estimates, as :class:`RiskModels`; :func:`assess` measures a
  table, with its requirements, as :class:`RiskReport`.

Population uniqueness, the share of the population unique on the
quasi-identifiers, given a sampling fraction or a population size
(:class:`PopulationModel`; 1 % assumed, and said, without either):

* :func:`pitman` (Pitman 1996; Hoshino 2001), :func:`zayatz` (Zayatz 1991),
  :func:`snb` (Chen & Keller-McNulty 1998), and :func:`dankar` (Dankar et
  al. 2012's choice among them), computed as ARX 3.9 does.

Individual risk with sampling weights (Benedetti & Franconi 1998; Franconi
& Polettini 2004; sdcMicro's ``indivRisk``): :func:`individual_risk` of a
class from its sample frequency and its weight total, :func:`record_risk`
per record; the global risk is their sum (expected re-identifications).

Special uniques (Elliot, Manning & Ford 2002; SUDA2: Manning, Haglin &
Keane 2008): :func:`special_uniques` finds the minimal sample
uniques up to a size and scores each record (SUDA, DIS-SUDA) as
:class:`SudaReport`.

Risk-based privacy models a release can be made to meet (``anonymize(...,
privacy=[...])``, ``hieranon anonymize --average-risk`` and the like):
:class:`AverageRisk`, :class:`PopulationUniqueness`, :class:`KMap`
(Sweeney 2002; El Emam & Dankar 2008) and :class:`DeltaPresence` (Nergiz,
Atzori & Clifton 2007).
"""

from __future__ import annotations

from .evaluation.risk import PopulationModel, RiskModels, RiskReport, assess, risk_models
from .evaluation.suda import SudaReport, special_uniques
from .privacy.population import dankar, estimate, pitman, population_size, snb, zayatz
from .privacy.risk_models import AverageRisk, DeltaPresence, KMap, PopulationUniqueness
from .privacy.weighted import individual_risk, record_risk

__all__ = ["PopulationModel", "RiskModels", "RiskReport", "assess", "risk_models", "SudaReport", "special_uniques",
           "dankar", "estimate", "pitman", "population_size", "snb", "zayatz", "AverageRisk", "DeltaPresence", "KMap",
           "PopulationUniqueness", "individual_risk", "record_risk"]
