"""Analysis preserved: scikit-learn models trained on the original and on the
anonymised quasi-identifiers, cross-validated against the original target --
the classification-based evaluation of ARX (Prasser, Eicher, Bild, Spengler &
Kuhn 2017) and of LeFevre, DeWitt & Ramakrishnan (2006). What is compared is
described in :mod:`hieranon.evaluation.utility`, which reports it
(:class:`ModelScore`); :func:`naive_bayes_accuracy` is the single check the
experiments use (Li et al. 2006).
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from ..core.table import dense_rank

# scikit-learn is imported inside the functions that train models: it is slow to load and only the utility
# measures with a target need it

__all__ = ["ModelScore", "analysis", "naive_bayes_accuracy", "MAX_DENSE_CELLS", "REGRESSION_MIN_DISTINCT"]

log = logging.getLogger(__name__)

#: One-hot cells above which the random forests read the sparse matrix (slower) rather than a dense copy.
MAX_DENSE_CELLS = 50_000_000
#: Distinct numeric values above which a target is a regression target (``task="auto"``).
REGRESSION_MIN_DISTINCT = 15


@dataclass(frozen=True)
class ModelScore:
    """One model trained on the original and on the anonymised quasi-identifiers.

    Attributes
    ----------
    model : str
        ``"logistic regression"``, ``"random forest"``, ``"naive Bayes"``
        (classification) or ``"ridge regression"``, ``"random forest"``
        (regression).
    score : str
        ``"accuracy"`` or ``"r2"`` (coefficient of determination).
    original, anonymised : float
        Mean over the held-out folds (see the module's description).
    original_std, anonymised_std : float
        Standard deviation over the folds.
    relative : float or None
        ``anonymised / original`` (None when ``original <= 0``).
    normalised : float or None
        Classification: ``(anonymised - baseline) / (original - baseline)``
        with the majority-class rate as baseline (None when the original
        model does not beat it); regression: equal to ``relative`` (the
        mean predictor's R^2 is 0).
    """

    model: str
    score: str
    original: float
    anonymised: float
    original_std: float
    anonymised_std: float
    relative: float | None
    normalised: float | None
    #: CPU seconds of this model's cross-validation on both tables (not compared: it varies run to run)
    cpu_seconds: float = field(default=0.0, compare=False)


def _one_hot(X: np.ndarray) -> sparse.csr_matrix:
    """Sparse one-hot of integer category columns (categories fixed on the whole table, no label used)."""
    offset = 0
    cols = np.empty_like(X, dtype=np.int64)
    for j in range(X.shape[1]):
        codes, n = dense_rank(X[:, j])
        cols[:, j] = codes + offset
        offset += n
    n_rows = X.shape[0]
    data = np.ones(cols.size, dtype=np.float32)
    rows = np.repeat(np.arange(n_rows), X.shape[1])
    return sparse.csr_matrix((data, (rows, cols.ravel())), shape=(n_rows, offset))


def _category_codes(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    out = np.empty(X.shape, dtype=np.int64)
    n = []
    for j in range(X.shape[1]):
        out[:, j], nj = dense_rank(X[:, j])
        n.append(max(nj, 1))
    return out, np.array(n)


def _models(task: str, seed: int, n_classes: int = 2) -> list[tuple[str, str, object]]:
    """(name, input kind, factory): 'onehot' reads a sparse one-hot, 'dense' a dense one, 'codes' category codes."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.naive_bayes import CategoricalNB

    forest = dict(n_estimators=30, min_samples_leaf=5, max_samples=0.5, random_state=seed, n_jobs=1)
    if task == "classification":
        # liblinear for two classes (fast on one-hot), lbfgs (multinomial) for more: both deterministic
        solver = "liblinear" if n_classes == 2 else "lbfgs"
        return [("logistic regression", "onehot",
                 lambda n_cats: LogisticRegression(solver=solver, C=1.0, max_iter=1000)),
                ("random forest", "dense", lambda n_cats: RandomForestClassifier(**forest)),
                ("naive Bayes", "codes", lambda n_cats: CategoricalNB(alpha=1.0, min_categories=n_cats))]
    return [("ridge regression", "onehot", lambda n_cats: Ridge(alpha=1.0)),
            ("random forest", "dense", lambda n_cats: RandomForestRegressor(**forest))]


def _inputs(X: np.ndarray) -> dict:
    onehot = _one_hot(X)
    codes, n_cats = _category_codes(X)
    small = onehot.shape[0] * onehot.shape[1] <= MAX_DENSE_CELLS  # trees fit faster on a dense array
    return {"onehot": onehot, "dense": onehot.toarray() if small else onehot, "codes": codes, "n_cats": n_cats}


def _score(task: str, y_true, y_pred, w) -> float:
    if task == "classification":
        return float(np.average(y_true == y_pred, weights=w))
    mean = np.average(y_true, weights=w)
    ss_tot = float((w * (y_true - mean) ** 2).sum())
    ss_res = float((w * (y_true - y_pred) ** 2).sum())
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else 0.0


def _splits(task: str, y: np.ndarray, folds: int, seed: int) -> list:
    from sklearn.model_selection import KFold, StratifiedKFold

    if task == "classification" and np.bincount(y).min() >= folds:
        return list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))
    return list(KFold(folds, shuffle=True, random_state=seed).split(np.zeros(len(y))))


def _baseline(task: str, y, w, splits) -> float:
    if task != "classification":
        return 0.0
    scores = []
    for train, test in splits:
        majority = int(np.argmax(np.bincount(y[train], weights=w[train])))
        scores.append(float(np.average(y[test] == majority, weights=w[test])))
    return float(np.mean(scores))


def _cv_scores(task: str, inputs: dict, y, w, splits, seed: int, cpu: dict) -> dict[str, list[float]]:
    """Held-out scores of every model (``cpu``: model -> CPU seconds, added to)."""

    out: dict[str, list[float]] = {}
    n_classes = int(y.max()) + 1 if task == "classification" else 0
    for name, kind, make in _models(task, seed, n_classes):
        X = inputs[kind]
        scores = []
        started = time.process_time()
        for train, test in splits:
            with warnings.catch_warnings(record=True) as caught:  # logged, never printed
                warnings.simplefilter("always")
                model = make(inputs["n_cats"]).fit(X[train], y[train], sample_weight=w[train])
            for wmsg in {str(c.message) for c in caught}:
                log.info("%s: %s", name, wmsg)
            scores.append(_score(task, y[test], model.predict(X[test]), w[test]))
        out[name] = scores
        cpu[name] = cpu.get(name, 0.0) + time.process_time() - started
    return out


def _model_scores(task: str, orig: dict, anon: dict, baseline: float, cpu: dict) -> list[ModelScore]:
    out = []
    for name in orig:
        o, a = float(np.mean(orig[name])), float(np.mean(anon[name]))
        relative = a / o if o > 0 else None
        if task == "classification":
            normalised = (a - baseline) / (o - baseline) if o - baseline > 1e-12 else None
        else:
            normalised = relative
        out.append(ModelScore(name, "accuracy" if task == "classification" else "r2", o, a,
                              float(np.std(orig[name])), float(np.std(anon[name])), relative, normalised,
                              cpu_seconds=cpu.get(name, 0.0)))
    return out


def _task_of(target: np.ndarray, task: str) -> str:
    if task != "auto":
        if task not in ("classification", "regression"):
            raise ValueError(f"task {task!r}: expected auto, classification or regression")
        return task
    s = pd.Series(target).dropna()
    if pd.api.types.is_bool_dtype(s):
        return "classification"
    numbers = pd.to_numeric(s, errors="coerce")  # a CSV's numbers may arrive as text
    numeric = len(s) > 0 and not numbers.isna().any()
    return "regression" if numeric and numbers.nunique() >= REGRESSION_MIN_DISTINCT else "classification"


def _prepare_target(target: np.ndarray, task: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Rows with a target and the target as class codes (classification) or floats (regression)."""
    s = pd.Series(target)
    keep = ~s.isna().to_numpy()
    if task == "regression":
        y = pd.to_numeric(s[keep], errors="coerce")
        if y.isna().any():
            bad = s[keep][y.isna()].iloc[0]
            raise ValueError(f"target {name!r}: value {bad!r} is not a number; a regression target must be numeric")
        return keep, y.to_numpy(dtype=np.float64)
    codes, classes = pd.factorize(s[keep].astype(str), sort=True)
    if len(classes) < 2:
        raise ValueError(f"target {name!r} has a single value ({classes[0] if len(classes) else 'none'}); "
                         "nothing to predict")
    return keep, codes.astype(np.int64)


def _subsample(n: int, max_rows: int | None, seed: int) -> np.ndarray:
    if max_rows is None or n <= max_rows:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=max_rows, replace=False))


def analysis(orig, gen, w, target, name: str, task: str, folds: int, seed: int, max_rows: int | None):
    task = _task_of(target, task)
    keep, y = _prepare_target(target, task, name)
    rows = np.flatnonzero(keep)
    pick = _subsample(len(rows), max_rows, seed)
    rows, y = rows[pick], y[pick]
    if len(rows) < 2 * folds:
        raise ValueError(f"target {name!r}: {len(rows)} row(s) with a value, too few for {folds}-fold "
                         "cross-validation")
    w = w[rows].astype(np.float64)
    splits = _splits(task, y, folds, seed)
    cpu: dict[str, float] = {}
    o = _cv_scores(task, _inputs(orig[rows]), y, w, splits, seed, cpu)
    a = _cv_scores(task, _inputs(gen[rows]), y, w, splits, seed, cpu)
    baseline = _baseline(task, y, w, splits)
    stratified = task == "classification" and np.bincount(y).min() >= folds  # as _splits chose
    return task, _model_scores(task, o, a, baseline, cpu), baseline, len(rows), bool(stratified)


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
