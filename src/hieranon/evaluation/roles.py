"""Column roles: every column of a table is identifying, quasi-identifying,
sensitive or insensitive (as in ARX), and the columns left without a role are
named before anything is released.

:func:`assess_roles` lists the unclassified columns with their share of
distinct values and flags *linkage risks*: a column published unchanged (not
a quasi-identifier, not dropped) that is near-unique -- more than
:data:`NEAR_UNIQUE_SHARE` distinct values among more than
:data:`NEAR_UNIQUE_MIN_ROWS` rows, an identifier in all but name -- or nearly
a copy of a quasi-identifier: one determines the other (a functional
dependence) on at least :data:`COPY_SHARE` of the rows, so publishing it
unchanged undoes the generalisation of that quasi-identifier.

:func:`check_role_conflicts` is the one check that no column is given two
roles that contradict each other (a quasi-identifier is generalised, a
sensitive or insensitive column published unchanged, an identifier dropped),
whichever way the roles arrive: keyword arguments, a configuration, command
options, or several of them merged.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from ..core.table import DataError, check_columns

__all__ = ["RoleReport", "UnclassifiedColumnsWarning", "RoleConflictError", "assess_roles", "check_roles",
           "check_role_conflicts", "without_index", "ROLES", "ROLE_KEYS", "NEAR_UNIQUE_SHARE", "NEAR_UNIQUE_MIN_ROWS",
           "COPY_SHARE"]

log = logging.getLogger("hieranon")

NEAR_UNIQUE_SHARE = 0.5
NEAR_UNIQUE_MIN_ROWS = 20
COPY_SHARE = 0.95
CHANCE_SHARE = 0.8


#: The roles a column can be given (by the name of the spec's field), in the
#: order a message names them, with how a message says each.
ROLES = {"hierarchies": "a quasi-identifier", "identifiers": "an identifier", "sensitive": "sensitive",
         "insensitive": "insensitive", "class_column": "the class column", "count_column": "the count column",
         "weight_column": "the weight column"}
#: Where a role was given when nothing more is known: the keyword argument
#: (and configuration key) of that name.
ROLE_KEYS = {"hierarchies": "quasi_identifiers", "identifiers": "identifiers", "sensitive": "sensitive",
             "insensitive": "insensitive", "class_column": "class_column", "count_column": "count_column",
             "weight_column": "weight"}
#: The roles one column may hold together: the class label, which the
#: classification metric reads, is published unchanged as a sensitive or an
#: insensitive column is; so is the weight column, as an insensitive one.
COMPATIBLE_ROLES = frozenset({frozenset({"class_column", "sensitive"}), frozenset({"class_column", "insensitive"}),
                              frozenset({"weight_column", "insensitive"})})
#: The roles held by one column at most (the others by a list of columns).
SINGLE_COLUMN_ROLES = ("class_column", "count_column", "weight_column")


class RoleConflictError(DataError):
    """A column is given two roles that contradict each other."""


def check_role_conflicts(assigned: Mapping[str, Iterable[Hashable] | None],
                         origins: Mapping[tuple[str, Hashable], str] | None = None, *,
                         error: type[Exception] = RoleConflictError) -> None:
    """Refuse a column given two contradictory roles. ``assigned``: role (a
    key of :data:`ROLES`) -> its columns (a single column or None for
    ``class_column`` and ``count_column``); ``origins``: (role, column) ->
    where that was said (``"--sensitive"``, ``"quasi_identifiers in
    cfg.yaml"``), else the role's keyword (:data:`ROLE_KEYS`). The message
    (``error``, one line) names the column, both roles, where each came
    from, and what to do."""
    origins = origins or {}
    held: dict = {}
    for role in ROLES:
        columns = assigned.get(role)
        if columns is None:
            continue
        for column in dict.fromkeys((columns,) if role in SINGLE_COLUMN_ROLES else columns):
            held.setdefault(column, []).append(role)
    for column, roles in held.items():
        if all(frozenset(pair) in COMPATIBLE_ROLES for pair in combinations(roles, 2)):
            continue
        said = [f"{ROLES[r]} ({origins.get((r, column), ROLE_KEYS[r])})" for r in roles]
        also = " (the class column may also be sensitive or insensitive)" if "class_column" in roles else ""
        raise error(f"column {column!r} is {', '.join(said[:-1])} and {said[-1]}; a column has one role{also}: "
                    f"keep it in one of {'the two' if len(roles) == 2 else 'them'}")


class UnclassifiedColumnsWarning(UserWarning):
    """Some columns of the table have no role (identifying, quasi-identifying,
    sensitive or insensitive)."""


@dataclass
class RoleReport:
    """The unclassified columns (name -> share of distinct values) and the
    linkage risks (one dict per column: ``column``, ``reason``, ``detail``)."""

    unclassified: dict[str, float] = field(default_factory=dict)
    linkage: list[dict] = field(default_factory=list)

    def warning(self) -> str | None:
        """One line naming the unclassified columns, or None."""
        if not self.unclassified:
            return None
        cols = ", ".join(f"{c} ({share:.1%} unique values)" for c, share in self.unclassified.items())
        return (f"{len(self.unclassified)} column(s) have no role and are published unchanged: {cols}; list each "
                "under identifiers, quasi_identifiers, sensitive or insensitive in the configuration, or give "
                "--identifier, --qi, --sensitive or --insensitive")

    def linkage_lines(self) -> list[str]:
        return [f"linkage risk: {r['column']!r} {r['detail']}" for r in self.linkage]

    def as_dict(self) -> dict:
        return {"unclassified_columns": dict(self.unclassified), "linkage_risks": list(self.linkage)}


def _classified(spec) -> set:
    cols = set(spec.hierarchies) | set(spec.identifiers) | set(spec.sensitive) | set(spec.insensitive)
    return cols | {c for c in (spec.class_column, spec.count_column, getattr(spec, "weight_column", None))
                   if c is not None}


def _dependence(a: np.ndarray, b: np.ndarray) -> float:
    """Share of rows on which ``a`` determines ``b``: for each value of ``a``
    its most frequent ``b``, summed (1.0: ``b`` is a function of ``a``)."""
    nb = int(b.max()) + 1 if len(b) else 1
    na = int(a.max()) + 1 if len(a) else 1
    if na * nb > max(4 * len(a), 1 << 20):  # many values on both sides: count the pairs that occur only
        pair, count = np.unique(a.astype(np.int64) * nb + b, return_counts=True)
        first = np.flatnonzero(np.r_[True, pair[1:] // nb != pair[:-1] // nb])
        return float(np.maximum.reduceat(count, first).sum() / max(len(a), 1))
    pairs = np.bincount(a.astype(np.int64) * nb + b, minlength=na * nb).reshape(-1, nb)
    return float(pairs.max(axis=1).sum() / max(len(a), 1))


def _codes(col: pd.Series) -> np.ndarray:
    codes, _ = pd.factorize(col.astype(object).where(col.notna(), "\0missing"), sort=False)
    return codes.astype(np.int64)


def _copy_of(name: str, codes: np.ndarray, qis: dict[str, np.ndarray], rng: np.random.Generator) -> dict | None:
    """The first QI that ``codes`` nearly copies (a dependence either way on
    >= :data:`COPY_SHARE` of the rows that chance does not explain: with the
    column's rows shuffled the dependence stays below :data:`CHANCE_SHARE`),
    as a risk entry."""
    shuffled = codes[rng.permutation(len(codes))]
    for q, qc in qis.items():
        ways = {"determines": (_dependence(codes, qc), _dependence(shuffled, qc)),
                "is determined by": (_dependence(qc, codes), _dependence(qc, shuffled))}
        found = [(dep, way) for way, (dep, chance) in ways.items() if dep >= COPY_SHARE and chance < CHANCE_SHARE]
        if found:
            dep, way = max(found)
            return {"column": name, "reason": "copy_of_quasi_identifier", "quasi_identifier": q,
                    "share": round(dep, 4),
                    "detail": f"{way} the quasi-identifier {q!r} on {dep:.0%} of the rows; publishing it unchanged "
                              "undoes that generalisation (make it a quasi-identifier or drop it)"}
    return None


def assess_roles(df: pd.DataFrame, spec) -> RoleReport:
    """The roles of ``df``'s columns under ``spec`` (an
    :class:`~hieranon.job.spec.AnonymizationSpec`): unclassified columns and
    linkage risks among the columns published unchanged. A column declared
    sensitive or insensitive that the table lacks is an error (a typo would
    otherwise leave the real column unclassified)."""
    for role in ("sensitive", "insensitive"):
        check_columns(df, list(getattr(spec, role)), role)
    n = len(df)
    classified = _classified(spec)
    out = RoleReport()
    for c in df.columns:
        if c not in classified:
            out.unclassified[c] = round(float(df[c].nunique(dropna=False)) / max(n, 1), 4)
    if n == 0:
        return out
    qis = {q: _codes(df[q]) for q in spec.hierarchies if q in df.columns}
    for c in df.columns:
        if c in qis or c == spec.count_column or c in spec.identifiers:
            continue
        codes = _codes(df[c])
        distinct = int(codes.max()) + 1
        if n > NEAR_UNIQUE_MIN_ROWS and distinct / n > NEAR_UNIQUE_SHARE:
            out.linkage.append({"column": c, "reason": "near_unique", "share": round(distinct / n, 4),
                                "detail": f"is near-unique ({distinct / n:.0%} distinct values among {n} rows): "
                                          "it can single out records (make it an identifier or drop it)"})
            continue
        risk = _copy_of(c, codes, qis, np.random.default_rng(0))
        if risk is not None:
            out.linkage.append(risk)
    return out


def check_roles(df: pd.DataFrame, spec, *, strict: bool | None = None) -> RoleReport:
    """:func:`assess_roles`, then warn (:class:`UnclassifiedColumnsWarning`)
    about the unclassified columns -- or, when ``strict`` (default: the
    spec's), raise a :class:`~hieranon.core.table.DataError` naming them."""
    report = assess_roles(df, spec)
    text = report.warning()
    strict = getattr(spec, "strict", False) if strict is None else strict
    if text is not None:
        if strict:
            raise DataError(f"strict: {text}")
        warnings.warn(text, UnclassifiedColumnsWarning, stacklevel=3)
    for line in report.linkage_lines():
        log.info("%s", line)
    return report


def without_index(df: pd.DataFrame, *, strict: bool = False) -> pd.DataFrame:
    """``df`` with the default row numbers as its index: a table's index is
    never published (it has no role, and often holds identifiers). Any
    other index is dropped with a logged warning naming it -- or, when
    ``strict``, refused with a :class:`~hieranon.core.table.DataError` -- saying
    how to give it a role (``df.reset_index()`` makes it a column)."""
    index = df.index
    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1 and index.name is None:
        return df
    names = [n for n in index.names if n is not None]
    what = (f"the table's index {', '.join(map(repr, names))}" if names
            else f"the table's index ({index.dtype} labels such as {index[0]!r})" if len(index)
            else "the table's index")
    text = (f"{what} is not published: it has no role. If it holds data, make it a column with "
            "df.reset_index() and give that column a role (identifiers, quasi-identifiers, sensitive or "
            "insensitive); if it only numbers rows, drop it with df.reset_index(drop=True)")
    if strict:
        raise DataError(f"strict: {text}")
    log.warning("%s", text)
    return df.reset_index(drop=True)
