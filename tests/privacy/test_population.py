"""Population uniqueness estimators on samples small enough to work by hand."""
import math

import numpy as np
import pytest
from scipy import optimize

from hieranon.core.references import lookup
from hieranon.privacy import population as P

#: Two sample uniques and one pair: n = 4 records, u = 3 classes, f_1 = 2, f_2 = 1.
SMALL = np.array([1, 1, 2])
#: A sample on which the SNB equations have a root (f = 0.8).
SNB_SAMPLE = np.repeat([1, 2, 3, 4, 5], [26, 6, 3, 1, 1])


def test_size_frequencies_and_sample_uniques():
    """Sizes [2, 1, 1, 3]: sizes 1, 2, 3 held by 2, 1, 1 classes; 2 of the 7 records are unique."""
    sizes, counts = P.size_frequencies([2, 1, 1, 3])
    assert sizes.tolist() == [1, 2, 3] and counts.tolist() == [2, 1, 1]
    assert P.sample_uniqueness([2, 1, 1, 3]) == pytest.approx(2 / 7)
    with pytest.raises(ValueError, match="positive"):
        P.size_frequencies([0, 1])


def test_population_size_from_fraction_or_count():
    """ARX's convention: N = round(n / f); a population smaller than the sample is refused."""
    assert P.population_size(30162, 0.01) == 3016200
    assert P.population_size(10, 0.3) == 33
    assert P.population_size(10, population=1000) == 1000
    with pytest.raises(ValueError, match="sampling fraction"):
        P.population_size(10, 0)
    with pytest.raises(ValueError, match="population"):
        P.population_size(10, population=5)


def test_zayatz_by_hand():
    """SMALL with f = 1/2, N = 8.  P_j = P(X = 1), X ~ Hypergeometric(8, j, 4):
    P_1 = 4/8 = 1/2, P_2 = C(2,1) C(6,3) / C(8,4) = 40/70 = 4/7.
    Denominator (2/3)(1/2) + (1/3)(4/7) = 11/21; conditional uniqueness
    (1/3) / (11/21) = 7/11; population uniques 2 (7/11) / (1/2) = 28/11;
    as a share of N = 8: 7/22."""
    assert P.zayatz(SMALL, 8) == pytest.approx(7 / 22, rel=1e-12)
    assert P.population_uniqueness(SMALL, 0.5, "zayatz") == pytest.approx(7 / 22, rel=1e-12)


def test_zayatz_whole_population():
    """f = 1: a sample class of size j >= 2 cannot show as a unique (P_j = 0), so every
    sample unique is a population unique: 2 of the 4 records."""
    assert P.zayatz(SMALL, 4) == pytest.approx(0.5)


def _pitman_root(sizes):
    """Hoshino's likelihood equations for (theta, alpha), written as the sums of
    the Pitman docstring and solved independently (scipy's hybrid method)."""
    sizes = np.asarray(sizes)
    n, u = sizes.sum(), len(sizes)
    i_u, i_n = np.arange(1, u), np.arange(1, n)

    def eqs(x):
        t, a = x
        e1 = (1 / (t + i_u * a)).sum() - (1 / (t + i_n)).sum()
        e2 = (i_u / (t + i_u * a)).sum() - sum((1 / (np.arange(1, k) - a)).sum() for k in sizes if k > 1)
        return [e1, e2]

    return optimize.fsolve(eqs, [1.0, 0.5], xtol=1e-13)


def test_pitman_solves_hoshinos_equations():
    """Population uniques = Gamma(theta + 1) / Gamma(theta + alpha) N^alpha at the
    maximum-likelihood (theta, alpha); as a share of N."""
    sizes = np.repeat([1, 2, 3, 5, 8], [40, 12, 6, 3, 2])
    t, a = _pitman_root(sizes)
    big_n = 10 * sizes.sum()
    expected = math.exp(math.lgamma(t + 1) - math.lgamma(t + a)) * big_n ** a / big_n
    assert 0 < expected < 1
    assert P.pitman(sizes, big_n) == pytest.approx(expected, rel=1e-5)
    assert P.population_uniqueness(sizes, 0.1, "pitman") == pytest.approx(expected, rel=1e-5)


def test_snb_classes_by_hand():
    """ARX's K for SMALL, f = 1/2: with p_j = (1-f)^j f_j = (1, 1/4),
    v1 = sum j f^2 (1-f^2)^(j-1) f_j = 1/2 + 3/8 = 7/8,
    v2 = sum (p_j (1+f)^j - 1) = 1/2 - 7/16 = 1/16, v3 = sum p_j = 5/4,
    v4 = sum j f (1-f)^(j-1) f_j = 1 + 1/2 = 3/2;
    K = u + f_1 (v1/v2) (v3/v4)^2 = 3 + 2 * 14 * 25/36 = 202/9."""
    sizes, counts = P.size_frequencies(SMALL)
    assert P._snb_classes(sizes, counts, 0.5) == pytest.approx(202 / 9, rel=1e-12)


def test_snb_solves_its_equations():
    """The SNB estimate is K beta^alpha at a root of the two moment equations."""
    big_n = P.population_size(SNB_SAMPLE.sum(), 0.8)
    sizes, counts = P.size_frequencies(SNB_SAMPLE)
    f = SNB_SAMPLE.sum() / big_n
    k = P._snb_classes(sizes, counts, f)
    fun = P._snb_equations(k, f, 26.0, 6.0)
    a, b = P._solve(fun, (1.0, 1.0))
    assert max(abs(v) for v in fun((a, b))[0]) <= P.ACCURACY
    share = P.snb(SNB_SAMPLE, big_n)
    assert share == pytest.approx(k * b ** a / big_n) and 0 < share < 1


def test_no_sample_uniques_no_population_uniques():
    for name in P.ESTIMATORS:
        assert P.population_uniqueness([2, 2, 5], 0.01, name) == 0.0


def test_dankar_rule():
    """f <= 0.1: Pitman; above: the smaller of Zayatz and SNB (Zayatz when SNB has no root)."""
    sizes = np.repeat([1, 2, 3, 5, 8], [40, 12, 6, 3, 2])
    big_n = 10 * sizes.sum()
    assert P.dankar(sizes, big_n) == (P.pitman(sizes, big_n), "pitman")
    n = SNB_SAMPLE.sum()
    big_n = P.population_size(n, 0.8)
    s, z = P.snb(SNB_SAMPLE, big_n), P.zayatz(SNB_SAMPLE, big_n)
    value, model = P.dankar(SNB_SAMPLE, big_n)
    assert value == min(s, z) and model == ("zayatz" if z < s else "snb")
    assert P.dankar(SMALL, 8) == (P.zayatz(SMALL, 8), "zayatz")  # SNB has no root there
    assert P.snb(SMALL, 8) == 0.0
    assert P.population_uniqueness(SMALL, 0.5, "dankar") == P.dankar(SMALL, 8)[0]


def test_estimate_collects_every_model():
    e = P.estimate(SNB_SAMPLE, 0.8)
    assert e.population_size == round(SNB_SAMPLE.sum() / 0.8)
    assert (e.pitman, e.zayatz, e.snb) == (P.pitman(SNB_SAMPLE, e.population_size),
                                           P.zayatz(SNB_SAMPLE, e.population_size),
                                           P.snb(SNB_SAMPLE, e.population_size))
    assert e.sample_uniques == pytest.approx(26 / SNB_SAMPLE.sum())


def test_unknown_estimator_named():
    with pytest.raises(ValueError, match="estimator.*pitman.*'foo'"):
        P.population_uniqueness(SMALL, 0.5, "foo")


@pytest.mark.parametrize("key", ["pitman1996", "hoshino2001", "zayatz1991", "chen1998", "dankar2012"])
def test_papers_in_references(key):
    from hieranon.core.references import REFERENCES
    ref = REFERENCES[key]
    assert lookup(ref.surname, ref.year) == [ref]
