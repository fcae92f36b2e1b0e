"""What a verification found: the kinds of violation, one violation, and the
report :func:`hieranon.evaluation.verify.verify` and
:func:`~hieranon.evaluation.verify.verify_codes` return (its summary, its
counts per kind, the k and privacy levels achieved)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["VIOLATION_KINDS", "MAX_LISTED_PER_KIND", "Violation", "VerificationReport", "VerificationError"]


#: The kinds of violation, in the order they are checked.
VIOLATION_KINDS = ("rows", "columns", "non_qi_changed", "not_generalisation", "requirement", "l-diversity",
                   "t-closeness", "k-map", "delta-presence", "average-risk",
                   "population-uniqueness")
#: At most this many violations of each kind are listed (all are counted).
MAX_LISTED_PER_KIND = 20


class VerificationError(ValueError):
    """An anonymised table failed verification; the message lists the first
    violations (column, value, row)."""

    def __init__(self, message: str, report: VerificationReport | None = None):
        super().__init__(message)
        self.report = report


@dataclass
class Violation:
    """One failed check.

    Attributes
    ----------
    kind : str
        One of :data:`VIOLATION_KINDS`.
    column : str | None
        The column concerned (None for row-count and requirement violations).
    row : int | None
        The first offending row (0-based position), when there is one.
    message : str
        Human-readable, naming the column, the value and the row.
    count : int
        How many cells / rows / classes this violation stands for.
    requirement : str | None
        ``str(requirement)`` for kind ``"requirement"``; the model's
        description for kinds ``"l-diversity"`` and ``"t-closeness"``.
    """

    kind: str
    column: str | None
    row: int | None
    message: str
    count: int = 1
    requirement: str | None = None

    def __str__(self) -> str:
        return f"[{self.kind}] {self.message}"


@dataclass
class VerificationReport:
    """Outcome of :func:`verify` / :func:`verify_codes`.

    Attributes
    ----------
    ok : bool
        True when no check failed.
    violations : list[Violation]
        The failures, at most :data:`MAX_LISTED_PER_KIND` per kind.
    n_violations : dict[str, int]
        Per kind, the total number of offending items (cells, rows, classes),
        including those not listed.
    achieved_k : dict[str, int]
        Per requirement (``str(req)``), the smallest number of records sharing
        one combination of its output values, under the convention
        ``suppressed_records`` (with ``"removed"``: suppressed records
        excluded, 0 when every record is suppressed). Absent when the
        requirement could not be checked (row count changed, a column missing).
    suppressed_records : ``"class"`` or ``"removed"``
        How suppressed records were counted (module docstring).
    n_suppressed : int
        Records (sum of counts) in rows whose every QI cell is the root.
    n_rows, n_records : int
        Size of the anonymised table (rows, records).
    achieved_privacy : dict[str, float]
        Per privacy model (its description), the value of its worst class:
        the smallest l (distinct, entropy), the largest c needed (recursive
        (c, l): ``r_1 / (r_l + ... + r_m)``), the largest EMD (t-closeness).
        Empty without models.
    """

    ok: bool
    violations: list[Violation] = field(default_factory=list)
    n_violations: dict[str, int] = field(default_factory=dict)
    achieved_k: dict[str, int] = field(default_factory=dict)
    n_suppressed: int = 0
    n_rows: int = 0
    n_records: int = 0
    requirements: list[str] = field(default_factory=list)
    achieved_privacy: dict[str, float] = field(default_factory=dict)
    suppressed_records: str = "class"

    def by_kind(self, kind: str) -> list[Violation]:
        """The listed violations of one kind."""
        return [v for v in self.violations if v.kind == kind]

    @property
    def kinds(self) -> set[str]:
        return {v.kind for v in self.violations}

    def summary(self, max_violations: int = 5) -> str:
        """A few lines: verdict, achieved k per requirement, suppressed records,
        and the first violations."""
        ks = ", ".join(f"k = {k} for {r}" for r, k in self.achieved_k.items()) or "k not checked"
        convention = ("counted as a class of their own" if self.suppressed_records == "class"
                      else "removed from the checks, as if not published")
        head = (f"{self.n_rows} rows ({self.n_records} records); achieved {ks}; "
                f"{self.n_suppressed} suppressed record(s)" + (f" ({convention})" if self.n_suppressed else ""))
        if self.achieved_privacy:
            head += "; " + ", ".join(f"{m}: worst class {v:.6g}" for m, v in self.achieved_privacy.items())
        if self.ok:
            return f"verified: {head}"
        total = sum(self.n_violations.values())
        per = ", ".join(f"{n} {kind}" for kind, n in self.n_violations.items() if n)
        lines = [f"verification FAILED ({total} problem(s): {per}): {head}"]
        lines += [f"  - {v}" for v in self.violations[:max_violations]]
        if len(self.violations) > max_violations:
            lines.append(f"  ... and {len(self.violations) - max_violations} more listed")
        return "\n".join(lines)

    def raise_if_failed(self) -> VerificationReport:
        """Raise :class:`VerificationError` naming the first violations unless
        the table verified; returns the report otherwise."""
        if not self.ok:
            raise VerificationError(self.summary(), self)
        return self

    def __bool__(self) -> bool:
        return self.ok
