"""What a release can be said to protect, and what it does not: the
*release statement* the command line, the JSON, the API result and the
report all open with.

What holds is what the verifier checked: every k-anonymity requirement
(Samarati and Sweeney 1998) and every privacy model (l-diversity,
Machanavajjhala et al. 2007; t-closeness, Li, Li and Venkatasubramanian 2007)
on the output's equivalence classes. What does not hold is named beside it,
as plainly:

* a sensitive column without a privacy model that is *homogeneous* in some
  classes -- one value in every record of the class, so that whoever places a
  person in the class learns it (the homogeneity attack of Machanavajjhala
  et al. 2007);
* a column published unchanged that is near-unique or nearly a copy of a
  quasi-identifier (the linkage risks of :mod:`hieranon.evaluation.roles`);
* rows kept in the input's order: whoever knows that order links every row
  back, whatever the generalisation.

Records suppressed (every quasi-identifier ``*``) and single cells
generalised to ``*`` in records that were not suppressed are counted apart:
a release with no suppressed record may still hide most of one column.

:func:`assess_statement` reads an
:class:`~hieranon.job.result.AnonymizationResult` (or anything with its
fields); :meth:`ReleaseStatement.strict_error` is the one line ``--strict``
refuses a release with.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..privacy.assess import classes_of

__all__ = ["Finding", "ReleaseStatement", "assess_statement", "order_finding", "homogeneous_classes",
           "homogeneous_findings",
           "linkage_findings", "star_cells"]


@dataclass
class Finding:
    """One thing the release does not protect: ``kind`` (``homogeneous_sensitive``,
    ``near_unique``, ``copy_of_quasi_identifier``, ``row_order_kept``), the
    ``column`` it is about (None for the row order), one plain sentence
    ``text`` with what to do, and the figures in ``detail``."""

    kind: str
    column: str | None
    text: str
    detail: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "column": self.column, "text": self.text, **self.detail}


@dataclass
class ReleaseStatement:
    """What holds (``holds``: sentences such as ``k = 5, distinct
    2-diversity of 'health': verified``; empty when the verification
    failed), what does not (``does_not_hold``: :class:`Finding` s), the
    records suppressed and, per quasi-identifier, the cells generalised to
    ``*`` in records that were not suppressed (``star_cells``; None when the
    output could not be read against the hierarchies)."""

    holds: list[str]
    does_not_hold: list[Finding]
    suppressed_records: int
    star_cells: dict[str, int] | None
    records: int

    @property
    def star_cells_total(self) -> int | None:
        return None if self.star_cells is None else int(sum(self.star_cells.values()))

    def lines(self) -> list[tuple[bool, str]]:
        """``(holds, sentence)`` pairs, what holds first: one line each."""
        return [(True, h) for h in self.holds] + [(False, f.text) for f in self.does_not_hold]

    def cells_text(self) -> str:
        """Records suppressed and cells generalised to ``*``, apart:
        ``0 records suppressed; 1,366 cells generalised to * (age 31%, ...)``."""
        text = f"{self.suppressed_records:,} records suppressed (every quasi-identifier *)"
        if self.star_cells is None:
            return text
        worst = sorted(((n, q) for q, n in self.star_cells.items() if n), reverse=True)
        share = ", ".join(f"{q} {n / max(self.records, 1):.1%}" for n, q in worst[:3])
        return (text + f"; {self.star_cells_total:,} more cells generalised to * in records not suppressed"
                + (f" ({share} of the records)" if share else ""))

    def strict_error(self) -> str | None:
        """The line ``--strict`` refuses the release with (the first finding,
        and how many more), or None when nothing is left unprotected."""
        if not self.does_not_hold:
            return None
        more = len(self.does_not_hold) - 1
        return "strict: " + self.does_not_hold[0].text + (f" (and {more} more: see without --strict)" if more else "")

    def as_dict(self) -> dict:
        return {"holds": list(self.holds), "does_not_hold": [f.as_dict() for f in self.does_not_hold],
                "suppressed_records": self.suppressed_records,
                "cells_generalised_to_star": None if self.star_cells is None else {
                    "total": self.star_cells_total, "per_quasi_identifier": dict(self.star_cells)}}


def order_finding(kept: bool) -> list[Finding]:
    """The row order kept, as a finding (none when shuffled)."""
    if not kept:
        return []
    return [Finding("row_order_kept", None, "the rows keep the input's order (not shuffled): whoever knows that "
                                            "order links every row back; release with --shuffle")]


def linkage_findings(roles) -> list[Finding]:
    """The linkage risks of a :class:`~hieranon.evaluation.roles.RoleReport` as findings."""
    if roles is None:
        return []
    return [Finding(r["reason"], r["column"], f"column {r['column']!r}, published unchanged, {r['detail']}",
                    {k: v for k, v in r.items() if k not in ("reason", "column", "detail")})
            for r in roles.linkage]


def homogeneous_classes(column, row_class: np.ndarray, n_classes: int) -> np.ndarray:
    """Per class, whether every record in it shows one value of ``column``
    (a bound sensitive column, :func:`hieranon.privacy.sensitive_columns`)."""
    return np.count_nonzero(column.histogram(row_class, n_classes) > 0, axis=1) <= 1


def homogeneous_findings(sensitive: dict, modelled: set, codes: np.ndarray | None,
                         counts: np.ndarray) -> list[Finding]:
    """Each sensitive column without a privacy model (``sensitive``:
    attribute -> bound column, :func:`hieranon.privacy.sensitive_columns`;
    ``modelled``: the attributes that have one) that takes one value in
    every record of some output class (``codes``), with how many classes
    and records."""
    if codes is None:
        return []
    out = []
    row_class, sizes = None, None
    for attribute, column in sensitive.items():
        if attribute in modelled:
            continue
        if row_class is None:
            row_class, sizes = classes_of(codes, counts)
        homogeneous = homogeneous_classes(column, row_class, len(sizes))
        n = int(homogeneous.sum())
        if not n:
            continue
        records = int(sizes[homogeneous].sum())
        out.append(Finding(
            "homogeneous_sensitive", attribute,
            f"sensitive column {attribute!r} has no privacy model and is the same in every record of {n:,} of "
            f"{len(sizes):,} classes ({records:,} records): placing a person in such a class discloses it; "
            f"add --l-diversity {attribute}=2 (or l_diversity in the configuration)",
            {"classes": n, "of_classes": int(len(sizes)), "records": records}))
    return out


def star_cells(codes: np.ndarray | None, original: np.ndarray | None, suppressed: np.ndarray,
               counts: np.ndarray, names: list[str]) -> dict[str, int] | None:
    """Per quasi-identifier, the records whose cell was generalised to the
    root ``*`` (not missing in the input) in rows that were not suppressed."""
    if codes is None or original is None:
        return None
    keep = ~np.asarray(suppressed, dtype=bool)
    w = np.asarray(counts, dtype=np.int64)
    return {name: int(w[keep & (codes[:, j] == 0) & (original[:, j] != 0)].sum()) for j, name in enumerate(names)}


def _holds(result) -> list[str]:
    if not getattr(result.verification, "ok", False):
        return []
    qis = list(result.qi_names)
    parts = []
    for r in result.requirements:
        over = "" if list(r.attributes) == qis else f" over {', '.join(map(str, r.attributes))}"
        parts.append(f"k = {r.k}{over}")
    parts += [b.describe() for b in [*result.privacy_models, *result.risk_models]]
    return [", ".join(parts) + ": verified"] if parts else []


def assess_statement(result) -> ReleaseStatement:
    """The :class:`ReleaseStatement` of a result (an
    :class:`~hieranon.job.result.AnonymizationResult`): ``info["keeps_input_order"]``,
    when set, says whether the rows kept the input's order (an evaluated
    pair), else the result's own ``row_order``."""
    counts = result.record_counts
    n = int(counts.sum())
    kept = result.info.get("keeps_input_order")
    if kept is None:
        kept = result.row_order is None and len(counts) > 1
    modelled = {b.attribute for b in result.privacy_models}
    findings = (homogeneous_findings(result.sensitive, modelled, result.codes, counts)
                + linkage_findings(result.roles) + order_finding(bool(kept)))
    suppressed = int(counts[np.asarray(result.suppressed, dtype=bool)].sum()) if len(result.suppressed) else 0
    return ReleaseStatement(_holds(result), findings, suppressed,
                            star_cells(result.codes, result.original_codes, result.suppressed, counts,
                                       result.qi_names), n)
