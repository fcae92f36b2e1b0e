"""Judging a release, independently of the algorithm that made it: the
verifier (:mod:`.verify`), the quality measures (:mod:`.metrics`), the
re-identification risk (:mod:`.risk`), the roles of the columns
(:mod:`.roles`) and the utility for analysis (:mod:`.utility`). Nothing here
imports an algorithm, so what it reports does not depend on how a table was made."""
