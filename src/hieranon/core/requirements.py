"""Anonymity requirements ``<B, k>``: a set of attributes B and a k (Arca & Hewett).

A table satisfies ``<B, k>`` when every combination of values of B that
occurs, occurs in at least k records. A single k over all quasi-identifiers
is the classic k-anonymity (Li et al. 2006, Def. 3).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class RequirementError(ValueError):
    """A requirement names an unknown attribute or an invalid k."""


@dataclass(frozen=True)
class Requirement:
    """``<attributes, k>``: every value combination of ``attributes`` occurs >= k times."""

    attributes: tuple[str, ...]
    k: int

    def __post_init__(self):
        object.__setattr__(self, "attributes", tuple(self.attributes))
        if not self.attributes:
            raise RequirementError("a requirement needs at least one attribute")
        if len(set(self.attributes)) != len(self.attributes):
            raise RequirementError(f"requirement lists an attribute twice: {self.attributes}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise RequirementError(f"requirement on {list(self.attributes)}: k must be a whole number >= 1, "
                                   f"got {self.k!r}")

    @classmethod
    def parse(cls, text: str) -> Requirement:
        """Parse ``"education,sex:4"`` (the CLI's ``--require`` form)."""
        if ":" not in text:
            raise RequirementError(f"requirement {text!r} must look like 'A,B,C:K'")
        attrs, _, k = text.rpartition(":")
        try:
            kk = int(k)
        except ValueError:
            raise RequirementError(f"requirement {text!r}: k {k!r} is not a whole number") from None
        return cls(tuple(a.strip() for a in attrs.split(",") if a.strip()), kk)

    def indices(self, qi_names: Sequence[str]) -> list[int]:
        return [list(qi_names).index(a) for a in self.attributes]

    def __str__(self) -> str:
        return f"<{{{', '.join(map(str, self.attributes))}}}, {self.k}>"


def normalise(requirements, k: int | None, qi_names: Sequence[str], n_records: int | None = None) -> list[Requirement]:
    """The requirement list from ``k`` (one requirement over all QIs) and/or
    explicit requirements (``Requirement`` objects, ``(attrs, k)`` pairs or
    ``"A,B:K"`` strings), validated against the QIs."""
    reqs: list[Requirement] = []
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, (int,)) or k < 1:
            raise RequirementError(f"k must be a whole number >= 1, got {k!r}")
        reqs.append(Requirement(tuple(qi_names), int(k)))
    for r in requirements or ():
        if isinstance(r, Requirement):
            reqs.append(r)
        elif isinstance(r, str):
            reqs.append(Requirement.parse(r))
        else:
            attrs, kk = r
            reqs.append(Requirement(tuple([attrs] if isinstance(attrs, str) else attrs), kk))
    if not reqs:
        raise RequirementError("no anonymity requirement: give k or at least one requirement")
    for r in reqs:
        unknown = [a for a in r.attributes if a not in qi_names]
        if unknown:
            raise RequirementError(f"requirement {r} names {unknown}, which are not quasi-identifiers {list(qi_names)}")
        if n_records is not None and r.k > n_records:
            raise RequirementError(f"requirement {r}: k={r.k} exceeds the {n_records} records of the table")
    return _dedupe(reqs)


def _dedupe(reqs: Iterable[Requirement]) -> list[Requirement]:
    best: dict[tuple[str, ...], Requirement] = {}
    for r in reqs:
        key = tuple(sorted(r.attributes))
        if key not in best or r.k > best[key].k:
            best[key] = r
    return list(best.values())


def max_k(reqs: Sequence[Requirement]) -> int:
    return max(r.k for r in reqs)
