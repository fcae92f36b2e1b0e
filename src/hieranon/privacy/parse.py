"""The command-line and configuration forms of the privacy models.

Command line (one model per option occurrence; repeat an option for several
attributes or several models):

* ``--l-diversity ATTR=L`` -- distinct l-diversity;
  ``ATTR=entropy:L`` -- entropy l-diversity; ``ATTR=recursive:C,L`` --
  recursive (c, l)-diversity (Machanavajjhala et al. 2007);
* ``--t-closeness ATTR=T`` or ``ATTR=T:equal|ordered|hierarchical`` -- the
  EMD t-closeness of Li et al. 2007. Without a distance: hierarchical when a
  sensitive hierarchy is given for ATTR (``--sensitive-hierarchy ATTR=FILE``),
  else ordered for a numeric column, else equal (resolved when the model is
  bound to the table).

Configuration file, key ``privacy:`` -- a mapping from each sensitive
attribute to one model or a list of models::

    privacy:
      salary-class:
        - l_diversity: 2                 # distinct 2-diversity
        - l_diversity: 2.5
          variant: entropy               # distinct (default) | entropy | recursive
        - l_diversity: 3
          variant: recursive
          c: 4                           # recursive (4, 3)-diversity
        - t_closeness: 0.2
          distance: equal                # equal | ordered | hierarchical (default as above)
      disease:
        t_closeness: 0.15
        distance: hierarchical
        hierarchy: disease.csv           # ARX CSV (or YAML/JSON), relative to the config file
        # order: [low, mid, high]        # the ordered distance of a non-numeric column

Every error is a :class:`~hieranon.privacy.PrivacyError` naming the option
(or the config key), the text given and the expected form.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from ..core.tree import Hierarchy, HierarchyError
from ..hierarchies.readers import from_file
from ._base import PrivacyError, PrivacyModel
from .l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from .risk_models import DEFAULT_SAMPLING_FRACTION, AverageRisk, DeltaPresence, KMap, PopulationUniqueness, RiskModel
from .t_closeness import DISTANCES, TCloseness

log = logging.getLogger(__name__)

__all__ = ["parse_l_diversity", "parse_t_closeness", "parse_privacy_config", "L_DIVERSITY_FORM",
           "T_CLOSENESS_FORM", "L_VARIANTS", "parse_risk_options"]

L_DIVERSITY_FORM = "ATTR=L, ATTR=entropy:L or ATTR=recursive:C,L (e.g. salary-class=2)"
T_CLOSENESS_FORM = "ATTR=T or ATTR=T:equal|ordered|hierarchical (e.g. salary-class=0.2:equal)"
L_VARIANTS = ("distinct", "entropy", "recursive")


def _split(text: str, option: str, form: str) -> tuple[str, str]:
    if not isinstance(text, str):
        raise PrivacyError(f"{option} {text!r}: expected {form}")
    attr, eq, rhs = text.rpartition("=")
    attr, rhs = attr.strip(), rhs.strip()
    if not eq or not attr or not rhs:
        raise PrivacyError(f"{option} {text!r}: expected {form}")
    return attr, rhs


def parse_l_diversity(text: str, option: str = "--l-diversity") -> PrivacyModel:
    """``ATTR=L`` | ``ATTR=entropy:L`` | ``ATTR=recursive:C,L`` -> an unbound model."""
    attr, rhs = _split(text, option, L_DIVERSITY_FORM)
    variant, colon, params = rhs.partition(":")
    if not colon:
        variant, params = "distinct", rhs
    variant = variant.strip().lower()
    try:
        if variant == "distinct":
            return DistinctLDiversity(attr, _number(params))
        if variant == "entropy":
            return EntropyLDiversity(attr, _number(params))
        if variant == "recursive":
            parts = [p.strip() for p in params.split(",")]
            if len(parts) != 2:
                raise PrivacyError("recursive needs two numbers C,L")
            return RecursiveCLDiversity(attr, _number(parts[0]), _number(parts[1]))
    except PrivacyError as exc:
        raise PrivacyError(f"{option} {text!r}: {exc}; expected {L_DIVERSITY_FORM}") from None
    raise PrivacyError(f"{option} {text!r}: unknown l-diversity variant {variant!r} (distinct, entropy, recursive); "
                       f"expected {L_DIVERSITY_FORM}")


def parse_t_closeness(text: str, option: str = "--t-closeness",
                      hierarchies: Mapping[str, Hierarchy] | None = None) -> PrivacyModel:
    """``ATTR=T`` | ``ATTR=T:DISTANCE`` -> an unbound :class:`TCloseness`;
    ``hierarchies`` maps sensitive attributes to their hierarchies
    (``--sensitive-hierarchy``)."""
    attr, rhs = _split(text, option, T_CLOSENESS_FORM)
    t, colon, distance = rhs.partition(":")
    distance = distance.strip().lower() if colon else None
    if colon and distance not in DISTANCES:
        raise PrivacyError(f"{option} {text!r}: unknown distance {distance!r} ({', '.join(DISTANCES)}); "
                           f"expected {T_CLOSENESS_FORM}")
    try:
        return TCloseness(attr, _number(t), distance, (hierarchies or {}).get(attr))
    except PrivacyError as exc:
        raise PrivacyError(f"{option} {text!r}: {exc}; expected {T_CLOSENESS_FORM}") from None


def _number(text) -> float:
    try:
        return float(str(text).strip())
    except ValueError:
        raise PrivacyError(f"{str(text).strip()!r} is not a number") from None


_L_KEYS = {"l_diversity", "variant", "c"}
_T_KEYS = {"t_closeness", "distance", "hierarchy", "order"}


def parse_privacy_config(section, key: str = "privacy", hierarchies: Mapping[str, Hierarchy] | None = None,
                         base_dir: str | Path | None = None) -> list[PrivacyModel]:
    """The ``privacy:`` section of a configuration (see the module docstring)
    -> a list of unbound models, attribute by attribute in the order given.
    ``hierarchies`` maps attributes to sensitive hierarchies given elsewhere
    (an item's own ``hierarchy:`` file wins); ``base_dir`` resolves relative
    hierarchy paths."""
    if section is None:
        return []
    if not isinstance(section, Mapping):
        raise PrivacyError(f"config key {key!r}: expected a mapping from sensitive attribute to models, e.g. "
                           "{salary-class: [{l_diversity: 2}, {t_closeness: 0.2, distance: equal}]}, got "
                           f"{section!r}")
    out: list[PrivacyModel] = []
    for attr, items in section.items():
        items = items if isinstance(items, list) else [items]
        for i, item in enumerate(items):
            out.append(_config_item(str(attr), item, f"{key}.{attr}[{i}]", hierarchies or {}, base_dir))
    return out


def _config_item(attr: str, item, where: str, hierarchies, base_dir) -> PrivacyModel:
    form = ("{l_diversity: L[, variant: distinct|entropy|recursive][, c: C]} or "
            "{t_closeness: T[, distance: equal|ordered|hierarchical][, hierarchy: FILE][, order: [...]]}")
    if not isinstance(item, Mapping):
        raise PrivacyError(f"config key {where}: expected {form}, got {item!r}")
    keys = set(item)
    try:
        if "l_diversity" in keys and not keys - _L_KEYS:
            return _config_l(attr, item)
        if "t_closeness" in keys and not keys - _T_KEYS:
            h = item.get("hierarchy")
            if isinstance(h, (str, Path)):
                path = Path(h) if base_dir is None or Path(h).is_absolute() else Path(base_dir) / h
                h = from_file(path, attr)
            h = h if h is not None else hierarchies.get(attr)
            return TCloseness(attr, item["t_closeness"], item.get("distance"), h, item.get("order"))
    except (PrivacyError, HierarchyError, OSError) as exc:
        raise PrivacyError(f"config key {where} {dict(item)!r}: {exc}") from None
    raise PrivacyError(f"config key {where}: {dict(item)!r} has keys {sorted(map(str, keys))}; expected {form}")


def _config_l(attr: str, item: Mapping) -> PrivacyModel:
    variant = str(item.get("variant", "distinct")).lower()
    if variant not in L_VARIANTS:
        raise PrivacyError(f"unknown variant {variant!r} ({', '.join(L_VARIANTS)})")
    if ("c" in item) != (variant == "recursive"):
        raise PrivacyError("c is given with variant recursive, and only then")
    l = item["l_diversity"]
    if variant == "distinct":
        return DistinctLDiversity(attr, l)
    if variant == "entropy":
        return EntropyLDiversity(attr, l)
    return RecursiveCLDiversity(attr, item["c"], l)


def parse_risk_options(k_map=None, delta_presence: str | None = None, average_risk=None,
                       population=None, population_uniqueness: str | None = None,
                       sampling_fraction: float | None = None, population_size: int | None = None) -> list[RiskModel]:
    """The risk-based models of ``--k-map K``, ``--delta-presence MIN,MAX``,
    ``--average-risk R`` and ``--population-uniqueness P[:ESTIMATOR]`` (each
    None when not given); ``population`` is the population table
    (``--population-table FILE``, read by the caller) that k-map and
    delta-presence need; the population-uniqueness estimate uses
    ``sampling_fraction`` or ``population_size`` (or the population table's
    size), else assumes :data:`~hieranon.privacy.risk_models.DEFAULT_SAMPLING_FRACTION`
    and says so in a warning."""
    out: list[RiskModel] = []
    if (k_map is not None or delta_presence is not None) and population is None:
        option = "--k-map" if k_map is not None else "--delta-presence"
        raise PrivacyError(f"{option} needs the population table: give --population-table FILE (a table with the "
                           "same quasi-identifier columns)")
    if k_map is not None:
        out.append(KMap(k_map, population))
    if delta_presence is not None:
        parts = [p.strip() for p in str(delta_presence).split(",")]
        if len(parts) != 2:
            raise PrivacyError(f"--delta-presence {delta_presence!r}: expected MIN,MAX (e.g. 0.1,0.6)")
        out.append(DeltaPresence(_number(parts[0]), _number(parts[1]), population))
    if average_risk is not None:
        out.append(AverageRisk(average_risk))
    if population_uniqueness is not None:
        out.append(_population_uniqueness(population_uniqueness, sampling_fraction,
                                          population_size if population_size is not None
                                          else (len(population) if population is not None else None)))
    return out


def _population_uniqueness(text: str, sampling_fraction, population_size) -> PopulationUniqueness:
    """``P`` or ``P:ESTIMATOR`` of ``--population-uniqueness``."""
    value, _, estimator = str(text).partition(":")
    estimator = estimator.strip().lower() or "dankar"
    if sampling_fraction is None and population_size is None:
        log.warning("--population-uniqueness: no --sampling-fraction or --population given: the table is assumed to "
                    "be %g of its population", DEFAULT_SAMPLING_FRACTION)
    try:
        return PopulationUniqueness(_number(value), estimator, sampling_fraction=sampling_fraction,
                                    population=population_size)
    except PrivacyError as exc:
        raise PrivacyError(f"--population-uniqueness {text!r}: {exc}; expected P or P:"
                           "pitman|zayatz|snb|dankar (e.g. 0.01:dankar)") from None
