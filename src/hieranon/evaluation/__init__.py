"""Judging a release, independently of the algorithm that made it: the
verifier (:mod:`.verify`), the quality measures (:mod:`.metrics`), the
re-identification risk (:mod:`.risk`), the roles of the columns
(:mod:`.roles`) and the utility for analysis (:mod:`.utility`). Nothing here
imports an algorithm, so what it reports does not depend on how a table was made.

The risk functions are importable from here: :func:`assess`, :func:`individual_risk`
(with sampling weights), :func:`special_uniques` (SUDA) and their parts."""

from ..privacy.weighted import IndividualRisk, read_weights, record_risk
from .risk import PopulationModel, RiskModels, RiskReport, assess, assess_result, individual_risk, risk_models
from .suda import SudaReport, dis_suda_scores, minimal_sample_uniques, special_uniques, suda_scores

__all__ = ["IndividualRisk", "PopulationModel", "RiskModels", "RiskReport", "SudaReport", "assess", "assess_result",
           "dis_suda_scores", "individual_risk", "minimal_sample_uniques", "read_weights", "record_risk",
           "risk_models", "special_uniques", "suda_scores"]
