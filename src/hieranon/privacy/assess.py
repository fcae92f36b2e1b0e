"""How well a table protects its sensitive attributes: per privacy model,
the value its worst equivalence class reaches and the classes and records
that violate it, before anonymisation (the original table grouped by its
quasi-identifiers) and after (the output's classes, the suppressed records
one more class).

The models are l-diversity (Machanavajjhala et al. 2007) and t-closeness
(Li, Li and Venkatasubramanian 2007), and the risk-based models of
:mod:`hieranon.privacy.risk_models` (k-map, delta-presence, average risk,
population uniqueness); :func:`assess_privacy` works on bound models
(:meth:`~hieranon.privacy.PrivacyModel.bind`) and integer QI codes.
:func:`sensitive_columns` binds every sensitive attribute (with or without a
model) so that reports can show its per-class distribution.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from ..core.cells import missing_values
from ..core.table import group
from ._base import BoundModel
from .l_diversity import DistinctLDiversity
from .risk_models import BoundRiskModel

__all__ = ["ClassFigures", "ModelAssessment", "PrivacyAssessment", "assess_privacy", "classes_of",
           "sensitive_columns"]


@dataclass
class ClassFigures:
    """One model on one grouping of the table.

    Attributes
    ----------
    achieved : float
        The value of the worst class: the smallest l (distinct, entropy), the
        largest ``r_1 / (r_l + ... + r_m)`` (recursive (c, l)), the largest
        EMD (t-closeness).
    classes, records : int
        Equivalence classes and records of the table.
    classes_violating, records_violating : int
        Classes that fail the model and the records in them.
    table_ok : bool or None
        For a condition on the whole table (average risk, population
        uniqueness), whether the table meets it; None for a per-class model,
        which holds when no class violates it.
    """

    achieved: float
    classes: int
    records: int
    classes_violating: int
    records_violating: int
    table_ok: bool | None = None

    @property
    def ok(self) -> bool:
        return self.classes_violating == 0 if self.table_ok is None else self.table_ok


@dataclass
class ModelAssessment:
    """A model's figures before and after (either may be None)."""

    model: str
    attribute: str
    kind: str
    required: str
    higher_is_better: bool
    before: ClassFigures | None = None
    after: ClassFigures | None = None

    @property
    def latest(self) -> ClassFigures | None:
        return self.after if self.after is not None else self.before

    @property
    def ok(self) -> bool:
        return self.latest is None or self.latest.ok

    def as_dict(self) -> dict:
        """Plain values; a non-finite worst value (recursive (c, l) on a class
        with fewer than l values: no c suffices) is ``None``, as JSON has no
        infinity."""
        d = asdict(self)
        for when in ("before", "after"):
            if d[when] is not None and not np.isfinite(d[when]["achieved"]):
                d[when]["achieved"] = None
        d["ok"] = self.ok
        return d


@dataclass
class PrivacyAssessment:
    """Every model's :class:`ModelAssessment`, in the order given; ``ok``
    when the latest state (after, else before) of every model has no
    violating class."""

    models: list[ModelAssessment]
    sensitive: list = None
    #: per sensitive attribute of a model with empty cells, the share of records
    #: with an empty cell: the models count it as one value of its own
    missing: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(m.ok for m in self.models)

    def as_dict(self) -> dict:
        return {"ok": self.ok, "sensitive": list(self.sensitive or []),
                "models": [m.as_dict() for m in self.models], "missing_share": dict(self.missing)}

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) rows for a console table."""
        out = [(f"empty cells of {attribute!r}", f"{share:.1%} of records (one value of their own to the models)")
               for attribute, share in self.missing.items()]
        for m in self.models:
            for when, f in (("before", m.before), ("after", m.after)):
                if f is None:
                    continue
                tag = f" {when}" if m.before is not None and m.after is not None else ""
                if f.table_ok is not None:
                    out.append((f"{m.model}{tag}", f"{f.achieved:.4g} ({'holds' if f.ok else 'fails'})"))
                    continue
                out.append((f"{m.model}{tag}: worst class", f"{f.achieved:.4g} (required: {m.required})"))
                out.append((f"{m.model}{tag}: classes / records violating",
                            f"{f.classes_violating} / {f.records_violating}"))
        return out


def classes_of(codes: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(class of each row, records per class)`` of a code matrix: rows with
    equal codes form one class (all-root suppressed rows included)."""
    ec = group(np.asarray(codes), np.asarray(counts, dtype=np.int64))
    return ec.row_class, ec.sizes


def _class_tuples(codes: np.ndarray, row_class: np.ndarray, n_classes: int) -> np.ndarray:
    """Each class's code tuple (the codes of its first row), ``(n_classes, n_qis)``."""
    first = np.full(n_classes, len(row_class), dtype=np.int64)
    np.minimum.at(first, row_class, np.arange(len(row_class)))
    return np.asarray(codes)[first]


def _figures(b: BoundModel, row_class: np.ndarray, sizes: np.ndarray) -> ClassFigures:
    n = len(sizes)
    ok = b.per_class_ok(row_class, n)
    return ClassFigures(achieved=float(b.worst(b.measure(row_class, n))), classes=int(n), records=int(sizes.sum()),
                        classes_violating=int((~ok).sum()), records_violating=int(sizes[~ok].sum()))


def _risk_figures(b: BoundRiskModel, codes: np.ndarray, row_class: np.ndarray, sizes: np.ndarray) -> ClassFigures:
    """A risk-based model on one grouping: per class on each class's tuple
    and size, or on the class sizes alone for a condition on the whole table."""
    n = len(sizes)
    if b.is_global:
        return ClassFigures(achieved=float(b.table_measure(sizes)), classes=int(n), records=int(sizes.sum()),
                            classes_violating=0, records_violating=0, table_ok=bool(b.table_ok(sizes)))
    tuples = _class_tuples(codes, row_class, n)
    ok = np.asarray(b.classes_ok(tuples, sizes), dtype=bool)
    return ClassFigures(achieved=float(b.worst(b.measure_classes(tuples, sizes))), classes=int(n),
                        records=int(sizes.sum()), classes_violating=int((~ok).sum()),
                        records_violating=int(sizes[~ok].sum()))


def assess_privacy(bound: Sequence[BoundModel], before: np.ndarray | None = None, after: np.ndarray | None = None,
                   counts: np.ndarray | None = None, sensitive: Iterable[str] = (),
                   risk: Sequence[BoundRiskModel] = ()) -> PrivacyAssessment:
    """Each bound model on the classes of ``before`` (original leaf codes)
    and ``after`` (output node codes), both ``(n_rows, n_qis)`` and row-aligned
    with the table the models were bound to; then each bound risk-based
    model (``risk``) on the same classes."""
    bound, risk = list(bound), list(risk)
    codes = {"before": before, "after": after}
    n = next((len(c) for c in codes.values() if c is not None), 0)
    counts = np.ones(n, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    groups = {when: classes_of(c, counts) if c is not None and (bound or risk) else None for when, c in codes.items()}
    models = []
    for b in bound:
        figs = {when: _figures(b, *g) if g is not None else None for when, g in groups.items()}
        models.append(ModelAssessment(b.describe(), b.attribute, b.kind, b.required_text(), b.higher_is_better,
                                      figs["before"], figs["after"]))
    for b in risk:
        figs = {when: _risk_figures(b, codes[when], *g) if g is not None else None for when, g in groups.items()}
        models.append(ModelAssessment(b.describe(), b.attribute, b.kind, b.required_text(), b.higher_is_better,
                                      figs["before"], figs["after"]))
    return PrivacyAssessment(models, list(dict.fromkeys([*sensitive, *(b.attribute for b in bound)])),
                             _missing_shares(bound))


def _missing_shares(bound: Sequence[BoundModel]) -> dict[str, float]:
    """Per attribute of the models, the share of records whose sensitive cell
    is empty (:func:`~hieranon.privacy._base.sensitive_codes` gives it one
    code, labelled as missing), for those that have any."""
    shares = {}
    for b in bound:
        empty = np.flatnonzero(missing_values(b.labels))
        total = int(b.counts.sum())
        if len(empty) and total and b.attribute not in shares:
            shares[b.attribute] = float(b.counts[np.isin(b.values, empty)].sum()) / total
    return shares


def sensitive_columns(df: pd.DataFrame, attributes: Iterable, counts: np.ndarray | None = None) -> dict:
    """attribute -> a :class:`BoundModel` holding its value codes and labels
    (``values``, ``labels``, ``histogram``), for every attribute that is a
    column of ``df``."""
    return {a: DistinctLDiversity(a, 1).bind(df, counts) for a in dict.fromkeys(attributes) if a in df.columns}
