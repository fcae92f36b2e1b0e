"""Data-utility checks of an anonymised table by classification.

Seeds 002 and 003 judge an anonymisation by how well a classifier trained on
the output predicts the class column (salary-class on Adult). This module
gives the check they use: a naive Bayes classifier on the (generalised)
quasi-identifier values as categories, scored by stratified k-fold
cross-validation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["naive_bayes_accuracy"]


def naive_bayes_accuracy(df: pd.DataFrame, feature_columns: Sequence[str], class_column: str,
                         folds: int = 10, seed: int = 0) -> tuple[float, float]:
    """Mean and standard deviation of the accuracy of categorical naive Bayes
    (scikit-learn ``CategoricalNB``, Laplace smoothing ``alpha=1``) predicting
    ``class_column`` from ``feature_columns``, by stratified ``folds``-fold
    cross-validation with shuffling seeded by ``seed``.

    Every feature is read as categories of its printed value (``str``), so a
    generalised cell such as ``30-39`` or ``*`` is a category of its own;
    missing cells are the category ``"nan"``. Category codes are assigned over
    the whole table (no class information is used for that), so a value seen
    only in a test fold is a known category with smoothed, uninformative
    counts.

    Returns
    -------
    (mean_accuracy, std_accuracy) : tuple of float
    """
    from sklearn.model_selection import StratifiedKFold
    from sklearn.naive_bayes import CategoricalNB

    feature_columns = list(feature_columns)
    missing = [c for c in [*feature_columns, class_column] if c not in df.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in the table (its columns: {list(df.columns)[:20]})")
    if not feature_columns:
        raise ValueError("naive_bayes_accuracy needs at least one feature column")
    if class_column in feature_columns:
        raise ValueError(f"the class column {class_column!r} is also listed as a feature")
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ValueError(f"folds must be a whole number >= 2, got {folds!r}")
    y, classes = pd.factorize(df[class_column].astype(str), sort=True)
    if len(classes) < 2:
        raise ValueError(f"class column {class_column!r} has a single label; nothing to predict")
    smallest = int(np.bincount(y).min())
    if smallest < folds:
        raise ValueError(
            f"class column {class_column!r}: the rarest label has {smallest} record(s), fewer than "
            f"folds={folds}; use fewer folds"
        )
    X = np.empty((len(df), len(feature_columns)), dtype=np.int64)
    n_cats = []
    for j, c in enumerate(feature_columns):
        codes, uniques = pd.factorize(df[c].astype(str), sort=True)
        X[:, j] = codes
        n_cats.append(max(len(uniques), 1))
    cv = StratifiedKFold(n_splits=int(folds), shuffle=True, random_state=seed)
    scores = []
    for train, test in cv.split(X, y):
        model = CategoricalNB(alpha=1.0, min_categories=np.array(n_cats))
        model.fit(X[train], y[train])
        scores.append(float((model.predict(X[test]) == y[test]).mean()))
    return float(np.mean(scores)), float(np.std(scores))
