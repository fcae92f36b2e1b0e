"""naive_bayes_accuracy: the classification utility check of seeds 002/003."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hieranon.utility import naive_bayes_accuracy


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue", "grey"], n)
    noise = rng.choice(["a", "b", "c"], n)
    label = np.where(np.isin(colour, ["red", "green"]), "warm", "cold")
    return pd.DataFrame({"colour": colour, "noise": noise, "label": label, "num": rng.integers(0, 5, n)})


def test_deterministic_class_is_learnt():
    df = _table()
    mean, std = naive_bayes_accuracy(df, ["colour", "noise"], "label")
    assert mean == pytest.approx(1.0, abs=1e-9)
    assert std == pytest.approx(0.0, abs=1e-9)


def test_uninformative_features_give_chance_level():
    df = _table(n=2000, seed=1)
    df["label"] = np.random.default_rng(2).permutation(np.repeat(["x", "y"], 1000))
    mean, std = naive_bayes_accuracy(df, ["noise"], "label")
    assert 0.4 < mean < 0.6
    assert std >= 0


def test_generalised_cells_are_categories_and_numbers_work():
    df = _table()
    df.loc[::3, "colour"] = "*"  # a generalised cell is a category of its own
    mean, _ = naive_bayes_accuracy(df, ["colour", "num"], "label", folds=5, seed=3)
    assert 0.6 < mean < 1.0


def test_same_seed_same_result_and_folds():
    df = _table(seed=4)
    df["label"] = np.where(np.random.default_rng(0).random(len(df)) < 0.8, df["label"], "other")
    a = naive_bayes_accuracy(df, ["colour", "noise"], "label", folds=10, seed=7)
    b = naive_bayes_accuracy(df, ["colour", "noise"], "label", folds=10, seed=7)
    assert a == b


def test_errors():
    df = _table()
    with pytest.raises(ValueError, match="not in the table"):
        naive_bayes_accuracy(df, ["nope"], "label")
    with pytest.raises(ValueError, match="folds"):
        naive_bayes_accuracy(df, ["colour"], "label", folds=1)
    with pytest.raises(ValueError, match="single label"):
        naive_bayes_accuracy(df.assign(label="x"), ["colour"], "label")
    with pytest.raises(ValueError, match="rarest label"):
        naive_bayes_accuracy(df.assign(label=["r"] * 3 + ["s"] * (len(df) - 3)), ["colour"], "label")
    with pytest.raises(ValueError, match="also listed"):
        naive_bayes_accuracy(df, ["colour", "label"], "label")


@pytest.mark.adult
def test_adult_original_accuracy(adult_path):
    """Naive Bayes on Adult's 8 QIs predicts salary-class at about 80%."""
    from hieranon.datasets import load_adult

    a = load_adult(adult_path, download=False, hierarchies=False)
    mean, std = naive_bayes_accuracy(a.frame, a.qis(8), "salary-class")
    assert 0.75 < mean < 0.9
    assert std < 0.02
