"""Synthetic census-like tables with the Adult schema, of any size.

Records are drawn from a small Bayesian network whose tables are aggregate
frequencies of UCI Adult (``data/synthetic_adult_model.json``, made by
``scripts/make_synthetic_model.py``; no record of Adult is shipped):

    age -> age band;  sex;  race
    marital-status | age band, sex
    education      | age band
    occupation     | sex, education group
    workclass      | occupation
    native-country | race
    salary-class   | education group, sex, age band

so per-attribute skew and the main correlations of Adult are kept. The
generator is seeded and streaming: :func:`iter_synthetic` yields chunks, each
drawn from its own child of one ``numpy.random.SeedSequence``, so a table of
any size is reproducible chunk by chunk without holding it in memory.

:func:`synthetic_hierarchies` returns hierarchies made by this project for
the schema (they differ from ARX's), so scale tests need no external file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources

import numpy as np
import pandas as pd

from ...hierarchies import builders as B
from ...hierarchies import readers as H

AGE_BANDS = (17, 25, 35, 45, 55, 65)  # lower bounds of the bands used for conditioning

VALUES: dict[str, list] = {
    "age": list(range(17, 91)),
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
                  "Without-pay"],
    "education": ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
                  "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school", "Doctorate"],
    "marital-status": ["Never-married", "Married-civ-spouse", "Married-AF-spouse", "Married-spouse-absent",
                       "Separated", "Divorced", "Widowed"],
    "occupation": ["Adm-clerical", "Exec-managerial", "Prof-specialty", "Sales", "Tech-support", "Craft-repair",
                   "Farming-fishing", "Handlers-cleaners", "Machine-op-inspct", "Transport-moving",
                   "Other-service", "Priv-house-serv", "Protective-serv", "Armed-Forces"],
    "race": ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"],
    "sex": ["Male", "Female"],
    "native-country": ["United-States", "Canada", "Outlying-US(Guam-USVI-etc)", "Mexico", "Cuba", "Jamaica",
                       "Puerto-Rico", "Dominican-Republic", "Haiti", "Trinadad&Tobago", "El-Salvador",
                       "Guatemala", "Honduras", "Nicaragua", "Columbia", "Ecuador", "Peru", "England", "Scotland",
                       "Ireland", "France", "Germany", "Holand-Netherlands", "Italy", "Portugal", "Greece",
                       "Poland", "Hungary", "Yugoslavia", "India", "Iran", "China", "Hong", "Taiwan", "Japan",
                       "South", "Philippines", "Vietnam", "Laos", "Cambodia", "Thailand"],
    "salary-class": ["<=50K", ">50K"],
}

#: Columns in the papers' QI order, salary-class last.
COLUMNS = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country",
           "salary-class"]

EDUCATION_GROUP = {
    **{e: "elementary" for e in ("Preschool", "1st-4th", "5th-6th", "7th-8th")},
    **{e: "some-high-school" for e in ("9th", "10th", "11th", "12th")},
    **{e: "diploma" for e in ("HS-grad", "Some-college")},
    **{e: "associate" for e in ("Assoc-voc", "Assoc-acdm")},
    "Bachelors": "degree",
    **{e: "postgraduate" for e in ("Masters", "Prof-school", "Doctorate")},
}

# The project's own taxonomies for the schema (leaf -> parent -> ... below '*').
_TAXONOMIES: dict[str, dict] = {
    "workclass": {"Private sector": ["Private"], "Self-employed": ["Self-emp-not-inc", "Self-emp-inc"],
                  "Public sector": ["Federal-gov", "Local-gov", "State-gov"], "Unpaid": ["Without-pay"]},
    "education": {
        "No diploma": {"Elementary": ["Preschool", "1st-4th", "5th-6th", "7th-8th"],
                       "Some high school": ["9th", "10th", "11th", "12th"]},
        "Diploma": {"High-school diploma": ["HS-grad", "Some-college"], "Associate": ["Assoc-voc", "Assoc-acdm"]},
        "Degree": {"First degree": ["Bachelors"], "Postgraduate": ["Masters", "Prof-school", "Doctorate"]},
    },
    "marital-status": {"Married": ["Married-civ-spouse", "Married-AF-spouse", "Married-spouse-absent"],
                       "Formerly married": ["Separated", "Divorced", "Widowed"], "Single": ["Never-married"]},
    "occupation": {
        "Office": ["Adm-clerical", "Exec-managerial", "Prof-specialty", "Sales", "Tech-support"],
        "Manual": ["Craft-repair", "Farming-fishing", "Handlers-cleaners", "Machine-op-inspct", "Transport-moving"],
        "Services": ["Other-service", "Priv-house-serv", "Protective-serv", "Armed-Forces"],
    },
    "native-country": {
        "North America": ["United-States", "Canada", "Outlying-US(Guam-USVI-etc)"],
        "Latin America": ["Mexico", "Cuba", "Jamaica", "Puerto-Rico", "Dominican-Republic", "Haiti",
                          "Trinadad&Tobago", "El-Salvador", "Guatemala", "Honduras", "Nicaragua", "Columbia",
                          "Ecuador", "Peru"],
        "Europe": ["England", "Scotland", "Ireland", "France", "Germany", "Holand-Netherlands", "Italy", "Portugal",
                   "Greece", "Poland", "Hungary", "Yugoslavia"],
        "Asia": ["India", "Iran", "China", "Hong", "Taiwan", "Japan", "South", "Philippines", "Vietnam", "Laos",
                 "Cambodia", "Thailand"],
    },
}


def age_band(age: np.ndarray) -> np.ndarray:
    """Index of each age's band (0..5) in :data:`AGE_BANDS`."""
    return np.searchsorted(np.asarray(AGE_BANDS), np.asarray(age), side="right") - 1


def synthetic_hierarchies() -> dict[str, H.Hierarchy]:
    """Hierarchies for every column of :data:`COLUMNS` (age: 5/10/20-year bins)."""
    out = {"age": B.intervals("age", VALUES["age"], [5, 10, 20])}
    for col in COLUMNS[1:]:
        if col in _TAXONOMIES:
            out[col] = H.from_mapping(col, {"*": _TAXONOMIES[col]})
        else:
            out[col] = B.suppression(col, VALUES[col])
    return out


@lru_cache(maxsize=1)
def _model() -> dict:
    text = resources.files("hieranon").joinpath("data/synthetic_adult_model.json").read_text()
    return json.loads(text)


def _cdf(counts) -> np.ndarray:
    c = np.asarray(counts, dtype=float) + 1e-9  # keep every value possible
    c = np.cumsum(c / c.sum())
    c[-1] = 1.0
    return c


def _draw(rng: np.random.Generator, cdf: np.ndarray, n: int) -> np.ndarray:
    return np.searchsorted(cdf, rng.random(n), side="right").clip(0, len(cdf) - 1)


def _draw_conditional(rng, table: dict, keys: np.ndarray, key_labels: list[str], n_values: int,
                      fallback: np.ndarray) -> np.ndarray:
    """Draw one value index per row from the row's conditional distribution."""
    out = np.empty(len(keys), dtype=np.int64)
    u = rng.random(len(keys))
    for g in np.unique(keys):
        rows = np.flatnonzero(keys == g)
        counts = table.get(key_labels[g])
        cdf = _cdf(counts) if counts is not None and sum(counts) > 0 else fallback
        out[rows] = np.searchsorted(cdf, u[rows], side="right").clip(0, n_values - 1)
    return out


def _chunk(n: int, rng: np.random.Generator) -> pd.DataFrame:
    m = _model()
    v = VALUES
    idx = {c: None for c in COLUMNS}
    idx["age"] = _draw(rng, _cdf(m["age"]), n)
    ages = np.asarray(v["age"])[idx["age"]]
    band = age_band(ages)
    idx["sex"] = _draw(rng, _cdf(m["sex"]), n)
    idx["race"] = _draw(rng, _cdf(m["race"]), n)
    uniform = {c: _cdf(np.ones(len(v[c]))) for c in COLUMNS}

    # marital | band, sex
    labels = [f"{b}|{s}" for b in range(len(AGE_BANDS)) for s in v["sex"]]
    idx["marital-status"] = _draw_conditional(rng, m["marital-status|age_band,sex"], band * 2 + idx["sex"], labels,
                                              len(v["marital-status"]), uniform["marital-status"])
    idx["education"] = _draw_conditional(rng, m["education|age_band"], band, [str(b) for b in range(6)],
                                         len(v["education"]), uniform["education"])
    groups = sorted(set(EDUCATION_GROUP.values()))
    edu_group = np.array([groups.index(EDUCATION_GROUP[e]) for e in v["education"]])[idx["education"]]
    labels = [f"{s}|{g}" for s in v["sex"] for g in groups]
    idx["occupation"] = _draw_conditional(rng, m["occupation|sex,edu_group"], idx["sex"] * len(groups) + edu_group,
                                          labels, len(v["occupation"]), uniform["occupation"])
    idx["workclass"] = _draw_conditional(rng, m["workclass|occupation"], idx["occupation"], v["occupation"],
                                         len(v["workclass"]), uniform["workclass"])
    idx["native-country"] = _draw_conditional(rng, m["native-country|race"], idx["race"], v["race"],
                                              len(v["native-country"]), uniform["native-country"])
    labels = [f"{g}|{s}|{b}" for g in groups for s in v["sex"] for b in range(6)]
    key = (edu_group * 2 + idx["sex"]) * 6 + band
    idx["salary-class"] = _draw_conditional(rng, m["salary-class|edu_group,sex,age_band"], key, labels, 2,
                                            uniform["salary-class"])
    frame = {"age": ages}
    for c in COLUMNS[1:]:
        frame[c] = pd.Categorical.from_codes(idx[c], categories=v[c])
    return pd.DataFrame(frame)


def iter_synthetic(n_rows: int, *, seed: int = 0, chunk_size: int = 100_000) -> Iterator[pd.DataFrame]:
    """Yield ``n_rows`` synthetic records in chunks of ``chunk_size``.

    Chunk ``i`` is drawn from child ``i`` of ``SeedSequence(seed)``, so the
    table is the same whatever the consumer does with earlier chunks. Columns
    are categorical (cheap at millions of rows); ``age`` is int.
    """
    if n_rows < 0 or chunk_size < 1:
        raise ValueError("n_rows must be >= 0 and chunk_size >= 1")
    n_chunks = -(-n_rows // chunk_size)
    seeds = np.random.SeedSequence(seed).spawn(n_chunks)
    for i, ss in enumerate(seeds):
        n = min(chunk_size, n_rows - i * chunk_size)
        yield _chunk(n, np.random.default_rng(ss))


def synthetic_adult(n_rows: int, *, seed: int = 0, chunk_size: int = 100_000) -> pd.DataFrame:
    """A synthetic table of ``n_rows`` records (all chunks concatenated)."""
    parts = list(iter_synthetic(n_rows, seed=seed, chunk_size=chunk_size))
    if not parts:
        return _chunk(0, np.random.default_rng(seed))
    return pd.concat(parts, ignore_index=True)
