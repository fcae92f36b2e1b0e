"""What an anonymisation method can do, declared once on its class.

In the manner of scikit-learn's estimator tags (``__sklearn_tags__``), each
:class:`~hieranon.algorithms.base.Algorithm` subclass declares a frozen
:class:`Tags` as its class attribute ``tags``; a subclass inherits its base's
and changes what differs with :func:`dataclasses.replace`. An instance whose
capabilities depend on its parameters (a partitioned run takes those of its
inner method, a budgeted run those of the method it wraps, ``mingen`` the
size it refuses) overrides ``__hieranon_tags__``. :func:`get_tags` is the one
way to read them: the registry, ``hieranon methods``, the refusals of a
problem or a budget a method cannot honour, and the contract checks
(:mod:`hieranon.algorithms.checks`) read the tags and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["SuppressionTags", "Tags", "get_tags"]


@dataclass(frozen=True)
class SuppressionTags:
    """How a method suppresses records.

    Attributes
    ----------
    setting : str or None
        The method's own parameter that is a suppression setting (the
        full-domain methods' ``suppression_limit``, Samarati 2001's MaxSup;
        KACA's ``suppression_threshold``, Li et al. 2006); a record budget
        (``--max-suppression``) is refused beside it. None: the method has none.
    native : bool
        A record budget becomes :attr:`setting`, as a share of the records,
        instead of trimming the method's classes afterwards.
    refused : str or None
        Why a record budget is refused (None: the method takes one).
    """

    setting: str | None = None
    native: bool = False
    refused: str | None = None

    @property
    def takes_budget(self) -> bool:
        """True when the method can spend a record-suppression budget."""
        return self.refused is None


@dataclass(frozen=True)
class Tags:
    """The capabilities of one anonymisation method.

    Attributes
    ----------
    several_requirements : bool
        Handles several requirements ``<A_i, k_i>`` over different attribute
        sets (Arca & Hewett); otherwise one k over every quasi-identifier.
    privacy_models : bool
        Every class of its output (the suppressed records one more) satisfies
        the privacy models of the problem (l-diversity, Machanavajjhala et al.
        2007; t-closeness, Li et al. 2007); otherwise such a problem is refused.
    needs_class_column : bool
        Reads a class column (its scores are information gain over the
        class, or it keeps records of one class together); a problem without
        one is refused.
    randomised : bool
        Takes the problem's seed: another seed may give another (equally
        valid) output. Otherwise the seed is ignored.
    exact : bool
        Finds an optimum by a search exponential in the table (an integer
        program): practical on small tables only.
    max_records : int or None
        Refuses a table of more records than this (None: no limit).
    suppression : SuppressionTags
        How it suppresses records.
    """

    several_requirements: bool = False
    privacy_models: bool = False
    needs_class_column: bool = False
    randomised: bool = False
    exact: bool = False
    max_records: int | None = None
    suppression: SuppressionTags = field(default_factory=SuppressionTags)


def get_tags(method: Any) -> Tags:
    """The tags of an algorithm instance (its ``__hieranon_tags__``, which may
    depend on its parameters) or of an algorithm class (its declared ``tags``;
    a registered ``--method`` name: :func:`hieranon.algorithms.registry.method_tags`)."""
    if isinstance(method, type):
        tags = getattr(method, "tags", None)
    else:
        hook = getattr(method, "__hieranon_tags__", None)
        tags = hook() if hook is not None else None
    if not isinstance(tags, Tags):
        raise TypeError(f"{method!r} declares no hieranon.algorithms.tags.Tags")
    return tags
