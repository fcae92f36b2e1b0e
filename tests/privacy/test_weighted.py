"""Individual risk with sampling weights (Benedetti & Franconi 1998)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import nbinom

from hieranon.privacy import weighted as W


def _negative_binomial_mean(f: int, p: float) -> float:
    """E[1/F] summed term by term: F = f + Y, Y negative binomial (f, p)."""
    y = np.arange(0, 400_000)
    return float((nbinom.pmf(y, f, p) / (f + y)).sum())


@pytest.mark.parametrize("f", [1, 2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("p", [0.002, 0.05, 0.3, 0.5, 0.71, 0.95, 0.9999])
def test_exact_up_to_seven_records(f, p):
    """The closed form (small p) and the series (large p) give E[1/F | f] to 1e-9."""
    r = W.individual_risk(np.array([f]), np.array([f / p]))[0]
    assert r == pytest.approx(_negative_binomial_mean(f, p), rel=1e-9)


def test_by_hand_one_and_two_records():
    """f = 1, F = 2 (p = 1/2): (p/q) log(1/p) = log 2; f = 2, F = 4:
    p/q + (p/q)^2 log p = 1 - log 2."""
    r = W.individual_risk([1, 2], [2.0, 4.0])
    assert r == pytest.approx([np.log(2), 1 - np.log(2)], rel=1e-12)


def test_approximation_above_seven_records():
    """sdcMicro's p / (f - q) for the larger classes; within 0.5% of the exact value."""
    f, p = 8, 0.5
    r = W.individual_risk([f], [f / p])[0]
    assert r == pytest.approx(p / (f - (1 - p)))
    assert r == pytest.approx(_negative_binomial_mean(f, p), rel=5e-3)


def test_a_census_has_risk_one_over_the_class_size():
    """Weights of 1 (p = 1): the class is the population class, risk 1/f."""
    f = np.array([1, 2, 3, 7, 8, 40])
    assert W.individual_risk(f, f.astype(float)) == pytest.approx(1 / f)


def test_weights_below_one_are_capped():
    """A class whose weights add up to less than its records counts as its own population."""
    assert W.individual_risk([2], [1.0]) == pytest.approx([0.5])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.floats(0.001, 1.0))
def test_risk_between_bounds(f, p):
    """E[1/F] lies between p/f (all of the population's F = f/p) and 1/f (F = f)."""
    r = W.individual_risk([f], [f / p])[0]
    assert p / f * (1 - 1e-9) <= r <= 1 / f * (1 + 1e-9)


def test_class_totals_and_summary():
    """Rows 0, 1 in class 0 (one of them stands for 2 records), row 2 alone:
    f = 3, 3, 1; F = 10 + 2*20, same, 5."""
    f, big_f = W.class_totals(np.array([0, 0, 1]), np.array([1, 2, 1]), np.array([10.0, 20.0, 5.0]))
    assert list(f) == [3, 3, 1] and list(big_f) == [50, 50, 5]
    risk = W.record_risk(np.array([0, 0, 1]), np.array([1, 2, 1]), np.array([10.0, 20.0, 5.0]))
    s = W.summarise_individual_risk(risk, np.array([1, 2, 1]), 0.2, "column 'w'")
    assert s.global_expected == pytest.approx(risk[0] * 3 + risk[2])
    assert s.mean == pytest.approx(s.global_expected / 4) and s.global_share == s.mean
    assert s.highest == risk[2] and s.at_risk == pytest.approx(0.25)  # only the unique (risk > 0.2)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="weight sums"):
        W.individual_risk([1], [0.0])
    with pytest.raises(ValueError, match="frequencies"):
        W.individual_risk([1, 2], [3.0])
