"""The independent verifier: does an anonymised table honour its contract?

Nothing an algorithm reports is trusted. Given the original table, the
anonymised one, the hierarchies and the anonymity requirements, :func:`verify`
checks, from the data alone, that

1. the row count is unchanged (records are never dropped or added: a
   suppressed record stays as a row of ``*``);
2. the columns are the same, with the same names, in the same order;
3. every non-QI column is unchanged, row by row (values compared
   dtype-insensitively, ``NaN == NaN``), so the rows are still in input order;
4. every QI cell prints the original value or one of its ancestors in the
   attribute's hierarchy (generalisation only: a cell never becomes a sibling or a descendant);
5. every requirement ``<B, k>`` holds (Arca & Hewett): grouping the records by
   their *output* cells of B, every group holds at least k records (a count
   column is respected). With one requirement over all QIs this is
   k-anonymity, Li et al. 2006, Def. 3 ("the size of every equivalence class with
   respect to the quasi-identifier is k or more"), with equivalence classes
   as in Li et al. 2006, Def. 2;
6. with ``privacy=`` models (:mod:`hieranon.privacy`), every equivalence
   class over all QIs satisfies every model exactly: l-diversity
   (Machanavajjhala et al. 2007) and t-closeness (Li et al. 2007), violations
   of kind ``"l-diversity"`` / ``"t-closeness"`` naming the attribute, the
   class, the value achieved and the value required.

Rows whose every QI cell is the root are *suppressed records*
(Li et al. 2006, sec. 5), counted in the report (``n_suppressed``). Two conventions
(``suppressed_records=``):

* ``"class"`` (the default, the library's): they are not exempt from the
  requirements: they print the same ``*`` tuple, so a data user (or any
  independent checker) sees them as one class, which must hold at least k
  records -- and satisfy every privacy model -- like every other;
* ``"removed"``: they are left out of the published table (as ARX publishes
  suppressed records), so the requirements are checked on the other rows.

``achieved_k`` follows the same convention as the verdict.

:func:`verify_codes` runs checks 1, 4 and 5 on an algorithm's output in code
form; it is vectorised (no Python loop over rows) so the API can run it after
every algorithm.

Both return a :class:`VerificationReport`; a failed check never raises, call
:meth:`VerificationReport.raise_if_failed` for that. Errors in the *inputs*
(an original value missing from its hierarchy, an unknown attribute in a
requirement) raise :class:`~hieranon.core.table.DataError` /
:class:`~hieranon.core.requirements.RequirementError` as everywhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ..core.cells import cells_equal, is_missing, normalise_text, released_text, value_to_label
from ..core.requirements import Requirement, normalise
from ..core.table import EncodedTable, encode, encode_generalised, group
from ..core.tree import Hierarchy
from ..privacy import BoundModel
from .verification import (
    MAX_LISTED_PER_KIND,
    VIOLATION_KINDS,
    VerificationError,
    VerificationReport,
    Violation,
)

__all__ = ["VIOLATION_KINDS", "MAX_LISTED_PER_KIND", "Violation", "VerificationReport", "VerificationError",
           "verify", "verify_codes"]

class _Collector:
    """Violations capped per kind (per requirement for requirement violations,
    so that every failing requirement is listed), counted in full."""

    def __init__(self) -> None:
        self.listed: list[Violation] = []
        self.counts: dict[str, int] = {k: 0 for k in VIOLATION_KINDS}
        self._listed_per: dict[tuple, int] = {}

    def add(self, v: Violation) -> None:
        self.counts[v.kind] += v.count
        key = (v.kind, v.requirement)
        if self._listed_per.get(key, 0) < MAX_LISTED_PER_KIND:
            self.listed.append(v)
            self._listed_per[key] = self._listed_per.get(key, 0) + 1

    def report(self, **kw) -> VerificationReport:
        ok = not any(self.counts.values())
        order = {k: i for i, k in enumerate(VIOLATION_KINDS)}
        listed = sorted(self.listed, key=lambda v: order[v.kind])  # stable: row order within a kind
        return VerificationReport(ok=ok, violations=listed,
                                  n_violations={k: n for k, n in self.counts.items() if n}, **kw)


def _show(value) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "<missing>"
    return repr(value_to_label(value)) if not isinstance(value, str) else repr(value)


def _node_text(h: Hierarchy, code) -> str:
    c = int(code)
    return repr(h.labels[c]) if 0 <= c < h.n_nodes else f"<invalid node {c}>"


def _rows_text(rows: np.ndarray, limit: int = 5) -> str:
    shown = ", ".join(str(int(r)) for r in rows[:limit])
    return shown + (f", ... ({len(rows)} rows)" if len(rows) > limit else "")


# ------------------------------------------------------------ requirements
def _label_ids(h: Hierarchy) -> np.ndarray:
    """Node -> id of its printed label (nodes printing the same label look
    identical in a published table, so they group together)."""
    ids, _ = pd.factorize(pd.Index(h.labels, dtype=object))
    return ids.astype(np.int64)


def _group(keys: np.ndarray, counts: np.ndarray):
    """Classes of the rows of a small-int key matrix: (row_class, sizes).

    Label ids are dense and small, so a mixed-radix key and one sort do; very
    wide keys fall back to :func:`hieranon.core.table.group`."""
    if keys.shape[1] == 0:
        return np.zeros(len(keys), dtype=np.int64), np.array([int(counts.sum())], dtype=np.int64)
    span = keys.max(axis=0) + 1
    if float(np.prod(span.astype(float))) < 2.0**62:
        key = np.zeros(len(keys), dtype=np.int64)
        for j in range(keys.shape[1]):
            key = key * int(span[j]) + keys[:, j]
        _, inv = np.unique(key, return_inverse=True)
        inv = inv.ravel().astype(np.int64)
        return inv, np.bincount(inv, weights=counts).astype(np.int64)
    ec = group(keys, counts)
    return ec.row_class, ec.sizes


def _check_requirements(keys: np.ndarray, qi_names: Sequence[str], reqs: Sequence[Requirement],
                        counts: np.ndarray, exempt: np.ndarray, describe: Callable[[int, Sequence[str]], str],
                        out: _Collector, usable: set[str] | None = None) -> dict[str, int]:
    """Group the non-exempt rows by ``keys`` (non-negative label ids)
    restricted to each requirement's attributes; every group must hold >= k
    records."""
    achieved: dict[str, int] = {}
    all_rows = exempt is None or not exempt.any()
    rows = np.arange(len(keys)) if all_rows else np.flatnonzero(~exempt)
    for req in reqs:
        if usable is not None and not set(req.attributes) <= usable:
            continue  # a column is missing; already reported
        if len(rows) == 0:
            achieved[str(req)] = 0
            continue
        idx = req.indices(qi_names)
        sub = keys[:, idx] if all_rows else keys[np.ix_(rows, idx)]
        row_class, sizes = _group(sub, counts if all_rows else counts[rows])
        achieved[str(req)] = int(sizes.min())
        small = np.flatnonzero(sizes < req.k)
        if len(small) == 0:
            continue
        # first row of every failing class, classes listed in row order
        _, first = np.unique(row_class, return_index=True)  # every class id 0..C-1 occurs
        small = small[np.argsort(first[small], kind="stable")]
        for c in small[:MAX_LISTED_PER_KIND]:
            members = rows[row_class == c]
            size = int(sizes[c])
            out.add(Violation(
                "requirement", None, int(members[0]),
                f"requirement {req} fails: {describe(int(members[0]), req.attributes)} occurs in "
                f"{size} record(s) < k={req.k} (row(s) {_rows_text(members)})",
                requirement=str(req)))
        if len(small) > MAX_LISTED_PER_KIND:  # count the rest without building messages
            out.counts["requirement"] += len(small) - MAX_LISTED_PER_KIND
    return achieved


def _check_risk(keys: np.ndarray, gen: np.ndarray, qi_names: Sequence[str], risk: Sequence, counts: np.ndarray,
                describe: Callable[[int, Sequence[str]], str], out: _Collector,
                exempt: np.ndarray | None = None) -> dict[str, float]:
    """Group the rows by their printed QI ``keys`` as :func:`_check_privacy`
    does and check every risk model (:mod:`hieranon.privacy.risk_models`) on
    the classes: a per-class model on each class's tuple (``gen``, node codes,
    its first row's) and size, a global model on the class sizes; returns
    each model's value (worst class, or the table's)."""
    worst: dict[str, float] = {}
    if not risk or len(keys) == 0:
        return worst
    row_class, sizes = _group(keys, counts)
    _, first = np.unique(row_class, return_index=True)
    keep = np.ones(len(sizes), dtype=bool)
    if exempt is not None and exempt.any():  # 'removed': the suppressed records are not published
        keep[int(row_class[np.flatnonzero(exempt)[0]])] = False
    tuples = np.asarray(gen, dtype=np.int64)[first]
    for b in risk:
        name = b.describe()
        if b.is_global:
            value = b.table_measure(sizes[keep])
            worst[name] = float(value)
            if not b.table_ok(sizes[keep]):
                out.add(Violation(b.kind, None, None,
                                  f"{name} fails: the release has {b.achieved_text(value)} "
                                  f"({int(keep.sum())} classes, {int(sizes[keep].sum())} records); "
                                  f"required: {b.required_text()}", requirement=name))
            continue
        values = b.measure_classes(tuples, sizes)
        ok = b.classes_ok(tuples, sizes) | ~keep
        worst[name] = float(b.worst(values[keep]))
        bad = np.flatnonzero(~ok)
        bad = bad[np.argsort(first[bad], kind="stable")]
        for c in bad[:MAX_LISTED_PER_KIND]:
            members = np.flatnonzero(row_class == c)
            out.add(Violation(
                b.kind, None, int(members[0]),
                f"{name} fails: class {describe(int(members[0]), qi_names)} ({int(sizes[c])} record(s), "
                f"row(s) {_rows_text(members)}) has {b.achieved_text(float(values[c]))}; "
                f"required: {b.required_text()}", requirement=name))
        if len(bad) > MAX_LISTED_PER_KIND:
            out.counts[b.kind] += len(bad) - MAX_LISTED_PER_KIND
    return worst


def _check_privacy(keys: np.ndarray, qi_names: Sequence[str], privacy: Sequence[BoundModel], counts: np.ndarray,
                   describe: Callable[[int, Sequence[str]], str], out: _Collector,
                   exempt: np.ndarray | None = None) -> dict[str, float]:
    """Group the rows by all their QI ``keys`` (suppressed rows print the same
    ``*`` tuple: one more class, unless ``exempt`` -- the 'removed'
    convention -- leaves them out) and check every model on every class;
    returns each model's value in its worst class."""
    worst: dict[str, float] = {}
    if not privacy or len(keys) == 0:
        return worst
    row_class, sizes = _group(keys, counts)
    n_classes = len(sizes)
    # the suppressed rows (all '*': one class of their own) left out under 'removed'
    skip = int(row_class[np.flatnonzero(exempt)[0]]) if exempt is not None and exempt.any() else None
    for b in privacy:
        name = b.describe()
        if len(b.values) != len(keys):
            raise ValueError(f"{name} was bound to a table of {len(b.values)} rows, the output has {len(keys)}; "
                             "bind the models to the input table")
        values = b.measure(row_class, n_classes)
        ok = b.per_class_ok(row_class, n_classes)
        if skip is not None:
            ok[skip] = True
        worst[name] = float(b.worst(values if skip is None else np.delete(values, skip)))
        bad = np.flatnonzero(~ok)
        if len(bad) == 0:
            continue
        _, first = np.unique(row_class, return_index=True)
        bad = bad[np.argsort(first[bad], kind="stable")]
        for c in bad[:MAX_LISTED_PER_KIND]:
            members = np.flatnonzero(row_class == c)
            out.add(Violation(
                b.kind, b.attribute, int(members[0]),
                f"{name} fails: class {describe(int(members[0]), qi_names)} ({int(sizes[c])} record(s), "
                f"row(s) {_rows_text(members)}) has {b.achieved_text(float(values[c]))}; "
                f"required: {b.required_text()}",
                requirement=name))
        if len(bad) > MAX_LISTED_PER_KIND:
            out.counts[b.kind] += len(bad) - MAX_LISTED_PER_KIND
    return worst


# ------------------------------------------------------------ verify_codes
SUPPRESSED_CONVENTIONS = ("class", "removed")


def _check_convention(suppressed_records: str) -> str:
    if suppressed_records not in SUPPRESSED_CONVENTIONS:
        raise ValueError(f"suppressed_records must be 'class' (a class of their own) or 'removed' (not published), "
                         f"got {suppressed_records!r}")
    return suppressed_records


def verify_codes(table: EncodedTable, gen_codes: np.ndarray, requirements: Sequence[Requirement],
                 suppressed: np.ndarray | None = None, *,
                 privacy: Sequence[BoundModel] = (), suppressed_records: str = "class",
                 risk: Sequence = ()) -> VerificationReport:
    """Verify an algorithm's output in code form against the encoded input.

    Checks that ``gen_codes`` has one row per input row and one column per QI,
    that every cell is its original node or an ancestor of it, and that every
    requirement ``<B, k>`` (Arca & Hewett; k-anonymity, Li et al. 2006, Def. 3, when B is
    every QI) holds when records are grouped by their printed output values of
    B, counts respected. Rows whose QI cells are all the root are suppressed
    records, counted in ``n_suppressed`` and checked like any other class.
    ``suppressed`` (an algorithm's claim) is cross-checked: a row marked
    suppressed must print ``*`` everywhere.

    ``privacy``: models bound to the input table
    (:meth:`hieranon.privacy.PrivacyModel.bind`); every equivalence class over
    all QIs -- the suppressed records one more class -- must satisfy each.
    ``risk``: risk-based models bound to ``table``
    (:mod:`hieranon.privacy.risk_models`: k-map, delta-presence, average
    risk), checked on the same classes.

    Vectorised (no Python loop over rows): per QI one ancestor look-up, per
    requirement one mixed-radix key and one ``np.unique``, per privacy model
    one ``np.bincount``.
    """
    _check_convention(suppressed_records)
    out = _Collector()
    gen = np.asarray(gen_codes)
    if gen.dtype.kind not in "iu":
        gen = gen.astype(np.int64)
    n, m = table.codes.shape
    reqs = list(requirements)
    base = dict(n_rows=int(gen.shape[0]) if gen.ndim else 0, n_records=table.n_records,
                requirements=[str(r) for r in reqs], suppressed_records=suppressed_records)
    if gen.ndim != 2 or gen.shape[0] != n:
        got = gen.shape[0] if gen.ndim else 0
        out.add(Violation("rows", None, None,
                          f"the output has {got} rows, the input {n}: rows must never be dropped or added "
                          "(a suppressed record stays as a row of '*')"))
        return out.report(**base)
    if gen.shape[1] != m:
        out.add(Violation("columns", None, None,
                          f"the output has {gen.shape[1]} QI columns, the input {m} ({table.qi_names})"))
        return out.report(**base)
    orig = table.codes
    keys = np.empty((n, m), dtype=np.int64)
    for j, (q, h) in enumerate(zip(table.qi_names, table.hierarchies)):
        col = gen[:, j]
        lab = _label_ids(h)
        if n == 0:
            continue
        if col.min() >= 0 and col.max() < h.n_nodes:  # the normal case: no masking needed
            ok = h.is_ancestor_or_self(col, orig[:, j])
        else:
            in_range = (col >= 0) & (col < h.n_nodes)
            ok = in_range.copy()
            ok[in_range] = h.is_ancestor_or_self(col[in_range], orig[in_range, j])
        if ok.all():
            keys[:, j] = lab[col]
            continue
        bad = np.flatnonzero(~ok)
        _report_bad_cells(out, q, bad, orig[bad, j], col[bad],
                          lambda r, j=j: (_node_text(table.hierarchies[j], orig[r, j]),
                                          _node_text(table.hierarchies[j], gen[r, j])))
        # invalid cells (already reported) get ids of their own, apart from every label
        col64 = col.astype(np.int64)
        keys[:, j] = np.where(ok, lab[np.where(ok, col64, 0)], len(lab) + col64 - col64.min())
    all_root = (gen == 0).all(axis=1)
    if suppressed is not None:
        sup = np.asarray(suppressed, dtype=bool)
        if sup.shape != (n,):
            out.add(Violation("rows", None, None, f"the suppressed mask has shape {sup.shape}, expected ({n},)"))
        else:
            wrong = np.flatnonzero(sup & ~all_root)
            if len(wrong):
                out.add(Violation("rows", None, int(wrong[0]),
                                  f"row(s) {_rows_text(wrong)} are reported suppressed but their QI cells are not "
                                  "all '*'", count=len(wrong)))

    def describe(row: int, attrs: Sequence[str]) -> str:
        parts = []
        for a in attrs:
            j = table.qi_names.index(a)
            c = int(gen[row, j])
            h = table.hierarchies[j]
            parts.append(f"{a}={_node_text(h, c)}")
        return "{" + ", ".join(parts) + "}"

    exempt = all_root if suppressed_records == "removed" else None
    achieved = _check_requirements(keys, table.qi_names, reqs, table.counts, exempt, describe, out)
    worst = _check_privacy(keys, table.qi_names, privacy, table.counts, describe, out, exempt)
    if not out.counts["not_generalisation"]:  # invalid cells: no tuple to match against the population
        worst.update(_check_risk(keys, gen, table.qi_names, risk, table.counts, describe, out, exempt))
    return out.report(achieved_k=achieved, n_suppressed=int(table.counts[all_root].sum()),
                      achieved_privacy=worst, **base)


def _report_bad_cells(out: _Collector, column: str, rows: np.ndarray, orig_key: np.ndarray, out_key: np.ndarray,
                      texts: Callable[[int], tuple[str, str]],
                      hint: Callable[[int], str] = lambda r: "") -> None:
    """One violation per distinct (original, output) pair of a column, in row
    order, counting its cells. ``texts(row)`` gives the printed original and
    output values of a row, ``hint(row)`` anything to add."""
    codes, uniques = pd.factorize(pd.MultiIndex.from_arrays([orig_key, out_key]))
    _, first = np.unique(codes, return_index=True)  # every pair id 0..P-1 occurs
    n_cells = np.bincount(codes, minlength=len(uniques))
    for u in np.argsort(first, kind="stable"):
        r = int(rows[first[u]])
        o, g = texts(r)
        more = f" ({n_cells[u]} cells of this column)" if n_cells[u] > 1 else ""
        out.add(Violation(
            "not_generalisation", column, r,
            f"column {column!r}, row {r}: {g} does not generalise the original value {o}: "
            f"it is neither that value nor one of its ancestors in the hierarchy{hint(r)}{more}",
            count=int(n_cells[u])))


def _printed_empty(col: pd.Series) -> np.ndarray:
    """Per published cell: it is missing or empty, exactly (a cell of spaces
    is not empty to a reader)."""
    codes, uniques = pd.factorize(col, use_na_sentinel=False)
    empty = np.fromiter((released_text(x) in (None, "") for x in uniques), dtype=bool, count=len(uniques))
    return empty[codes]


def _loose_label(h: Hierarchy, leaf: int, cell) -> str:
    """When ``cell`` is text that prints a label on ``leaf``'s path only once
    normalised (surrounding spaces, another Unicode form), say so."""
    if not isinstance(cell, str):
        return ""
    want = normalise_text(cell)
    if want == cell or h.generalise_labels(np.array([leaf]), np.array([want], dtype=object))[0] < 0:
        return ""
    return (f", as written (it differs from the label {want!r} only by surrounding spaces or its Unicode form, "
            "and a reader of the published table sees another value)")


# ------------------------------------------------------------------- verify
def _check_columns(original: pd.DataFrame, anonymised: pd.DataFrame, out: _Collector) -> None:
    want, got = list(original.columns), list(anonymised.columns)
    if want == got:
        return
    dup = sorted({str(c) for c in got if got.count(c) > 1})
    for c in dup:
        out.add(Violation("columns", c, None, f"column {c!r} appears more than once in the anonymised table"))
    missing = [c for c in want if c not in got]
    extra = [c for c in got if c not in want]
    for c in missing:
        pos = want.index(c)
        hint = ""
        if pos < len(got) and got[pos] in extra:
            hint = f" (renamed to {got[pos]!r}?)"
        out.add(Violation("columns", str(c), None,
                          f"column {c!r} of the original table is missing from the anonymised table{hint}"))
    for c in extra:
        out.add(Violation("columns", str(c), None,
                          f"column {c!r} of the anonymised table is not in the original table"))
    if not missing and not extra and not dup:
        first = next(i for i, (a, b) in enumerate(zip(want, got)) if a != b)
        out.add(Violation("columns", str(want[first]), None,
                          f"columns are in a different order: column {want[first]!r} should be at position "
                          f"{first}, found {got[first]!r} there (expected {want}, got {got})"))


def _row_tuples(df: pd.DataFrame, cols: Sequence) -> list[tuple]:
    return list(zip(*[[value_to_label(x) if not pd.isna(x) else "" for x in df[c].to_numpy(dtype=object)]
                      for c in cols]))


def verify(original: pd.DataFrame, anonymised: pd.DataFrame, quasi_identifiers: Sequence[str], hierarchies,
           requirements=None, *, k: int | None = None, counts=None, missing: str = "error",
           encoded: EncodedTable | None = None, privacy: Sequence = (),
           suppressed_records: str = "class") -> VerificationReport:
    """Check that ``anonymised`` is a valid anonymisation of ``original``.

    Parameters
    ----------
    original, anonymised : DataFrame
        The input and the published output (compared by position; the index is
        ignored).
    quasi_identifiers : list[str]
        The QI columns; every other column must be unchanged.
    hierarchies : mapping or list
        One :class:`~hieranon.hierarchies.readers.Hierarchy` per QI.
    requirements : list
        ``Requirement`` objects, ``(attrs, k)`` pairs or ``"A,B:K"`` strings
        (Arca & Hewett's ``<B, k>``); ``k=`` adds one requirement over all QIs
        (k-anonymity, Li et al. 2006, Def. 3). With neither, only checks 1-4 run
        (e.g. ``hieranon evaluate`` without ``-k``).
    counts : str | array | None
        Record count per row (a column name or an array), as in
        :func:`hieranon.core.table.encode`.
    missing : ``"error"`` | ``"root"``
        How missing original QI values are read (``"root"``: as ``*``; an
        output cell may then stay missing).
    privacy : sequence of privacy models
        Unbound models (:mod:`hieranon.privacy`), bound here to ``original``
        (its sensitive columns, record counts); every equivalence class over
        all QIs, the suppressed records one more, must satisfy each (check 6).

    encoded : EncodedTable, optional
        ``original`` already encoded (with the same counts and missing mode),
        so that it is not encoded again.
    suppressed_records : ``"class"`` | ``"removed"``
        Rows printing ``*`` everywhere form a class of their own (default),
        or are left out of the requirement checks (module docstring).

    Returns a :class:`VerificationReport`; it does not raise on a failed check
    (use :meth:`VerificationReport.raise_if_failed`). See the module docstring
    for the checks.
    """
    _check_convention(suppressed_records)
    qi = list(quasi_identifiers)
    # no requirement at all: only the structure and the generalisations are checked
    reqs = normalise(requirements, k, qi) if (k is not None or requirements) else []
    enc = encoded if encoded is not None else encode(original, qi, hierarchies, counts=counts, missing=missing)
    out = _Collector()
    base = dict(n_rows=len(anonymised), n_records=enc.n_records, requirements=[str(r) for r in reqs],
                suppressed_records=suppressed_records)

    if len(anonymised) != len(original):
        common = [c for c in original.columns if c not in qi and list(anonymised.columns).count(c) == 1
                  and list(original.columns).count(c) == 1]
        where = ""
        m = min(len(original), len(anonymised))
        if common and m:
            eq = np.ones(m, dtype=bool)
            for c in common:
                eq &= cells_equal(original[c].iloc[:m].reset_index(drop=True),
                                   anonymised[c].iloc[:m].reset_index(drop=True))
            diff = np.flatnonzero(~eq)
            where = f"; first difference at row {int(diff[0]) if len(diff) else m}"
        verb = "dropped" if len(anonymised) < len(original) else "added"
        out.add(Violation("rows", None, None,
                          f"the anonymised table has {len(anonymised)} rows, the original {len(original)} "
                          f"({abs(len(original) - len(anonymised))} row(s) {verb}{where}); rows must never be "
                          "dropped or added -- a suppressed record stays as a row of '*'"))
        _check_columns(original, anonymised, out)
        return out.report(**base)

    _check_columns(original, anonymised, out)
    got_cols = list(anonymised.columns)
    present = {c for c in original.columns if got_cols.count(c) == 1}
    orig_reset = original.reset_index(drop=True)
    anon_reset = anonymised.reset_index(drop=True)
    n = len(original)

    # ---- non-QI columns unchanged and in order
    changed_any = False
    for c in original.columns:
        if c in qi or c not in present:
            continue
        eq = cells_equal(orig_reset[c], anon_reset[c])
        bad = np.flatnonzero(~eq)
        if len(bad):
            changed_any = True
            r = int(bad[0])
            out.add(Violation(
                "non_qi_changed", str(c), r,
                f"column {c!r} is not a quasi-identifier but changed: row {r} was {_show(orig_reset[c].iloc[r])}, "
                f"is {_show(anon_reset[c].iloc[r])} ({len(bad)} row(s) differ)", count=len(bad)))
    if changed_any:
        _reorder_hint(orig_reset, anon_reset, [c for c in original.columns if c in present and c not in qi], out)

    # ---- QI cells generalise their originals
    qi_present = [q for q in qi if q in present]
    idx = [qi.index(q) for q in qi_present]
    gen = np.full((n, len(qi)), -1, dtype=np.int64)
    if qi_present:
        sub = EncodedTable(enc.codes[:, idx], [enc.hierarchies[j] for j in idx], qi_present, enc.counts)
        gen[:, idx] = encode_generalised(sub, anon_reset)
    keys = np.zeros((n, len(qi)), dtype=np.int64)
    for j in idx:
        q, h = qi[j], enc.hierarchies[j]
        col = gen[:, j]
        if missing == "root":  # a missing original may stay missing
            both_missing = is_missing(orig_reset[q]) & _printed_empty(anon_reset[q])
            col[both_missing] = 0
        lab = _label_ids(h)
        bad = np.flatnonzero(col < 0)
        keys[:, j] = lab[np.maximum(col, 0)]
        if len(bad):
            shown = anon_reset[q].to_numpy(dtype=object)
            out_labels = np.array([released_text(x) or "" for x in shown[bad]], dtype=object)
            # invalid cells group by their printed text, apart from every valid label
            _, inv = np.unique(out_labels.astype(str), return_inverse=True)
            keys[bad, j] = len(lab) + inv.ravel()
            orig_vals = orig_reset[q].to_numpy(dtype=object)
            _report_bad_cells(out, q, bad, enc.codes[bad, j], inv.ravel(),
                              lambda r, ov=orig_vals, s=shown: (_show(ov[r]), _show(s[r])),
                              lambda r, s=shown, h=h, leaf=enc.codes[:, j]: _loose_label(h, leaf[r], s[r]))
    all_root = (gen[:, idx] == 0).all(axis=1) if len(idx) == len(qi) else np.zeros(n, dtype=bool)

    def describe(row: int, attrs: Sequence[str]) -> str:
        return "{" + ", ".join(f"{a}={_show(anon_reset[a].iloc[row])}" for a in attrs) + "}"

    exempt = all_root if suppressed_records == "removed" else None
    achieved = _check_requirements(keys, qi, reqs, enc.counts, exempt, describe, out, usable=set(qi_present))
    worst = {}
    if privacy and len(qi_present) == len(qi):  # else a QI column is missing, already reported
        bound = [m if isinstance(m, BoundModel) else m.bind(original, enc.counts) for m in privacy]
        worst = _check_privacy(keys, qi, bound, enc.counts, describe, out, exempt)
    return out.report(achieved_k=achieved, n_suppressed=int(enc.counts[all_root].sum()),
                      achieved_privacy=worst, **base)


def _reorder_hint(orig: pd.DataFrame, anon: pd.DataFrame, cols: list, out: _Collector) -> None:
    """When the non-QI columns hold the same multiset of rows in another order,
    say that the rows were reordered (a row-level problem, not an edit)."""
    a = _row_tuples(orig, cols)
    b = _row_tuples(anon, cols)
    if a != b and sorted(a) == sorted(b):
        first = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
        out.add(Violation("rows", None, first,
                          f"the rows are reordered: row {first} of the anonymised table is not row {first} of "
                          "the original (same non-QI rows in another order); the output must keep the input's "
                          "row order"))
