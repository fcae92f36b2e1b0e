"""Population uniqueness: how many records of a sample are unique in the population.

A released table is usually a *sample* of ``n`` records from a population of
``N`` people (the sampling fraction is ``f = n/N``). A record alone in its
equivalence class of the sample (a *sample unique*) is re-identifiable only
if it is also alone in the population; the estimators here infer the number
of population uniques from the frequencies of the class sizes of the sample
alone (no population table):

* :func:`pitman` -- the Pitman sampling model fitted by maximum likelihood
  (Pitman 1996; the estimator of Hoshino 2001);
* :func:`zayatz` -- the conditional probability that a sample unique comes
  from a population unique under hypergeometric sampling (Zayatz 1991);
* :func:`snb` -- the slide negative binomial model (Chen & Keller-McNulty 1998);
* :func:`dankar` -- the rule of Dankar et al. 2012 choosing
  among them: Pitman for ``f <= 0.1``, otherwise the smaller of Zayatz and
  SNB.

Every estimate is returned as a *share of the population's records*: the
estimated number of population uniques divided by ``N``, the figure ARX 3.9
reports ("population uniques") and the one a "population uniqueness <= p"
privacy model bounds. The conventions are ARX 3.9's, to the last detail that
changes a figure (Prasser et al. 2020):

* ``N = round(n/f)`` rounded half up (Java's ``Math.round``), and the
  fraction the models use is ``n/N``;
* the two-dimensional equations are solved by Newton-Raphson until both
  equations' values are within 1e-6 of 0, at most 1000 steps per start, from
  the model's own start and then from a fixed grid of start values (ARX's
  "deterministic" solver setting; by default ARX restarts from random points
  instead, which no figure can reproduce -- the first start, where the
  estimates of the tables we know converge, is the same);
* the digamma and trigamma functions of Pitman's equations are ARX's
  (:func:`_digamma`, :func:`_trigamma`), which steer the solver's steps;
* an estimate that fails (no solution, not a number, or Pitman's outside
  ``[0, N]``) counts as 0, and a sample without sample uniques has no
  population uniques under any model.

Only numpy, scipy and the frequencies of class sizes are used, so the privacy
layer and the evaluation layer share this module.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["ESTIMATORS", "PopulationEstimates", "dankar", "estimate", "pitman", "population_size",
           "population_uniqueness", "sample_uniqueness", "size_frequencies", "snb", "zayatz"]

#: The names :func:`population_uniqueness` accepts.
ESTIMATORS = ("pitman", "zayatz", "snb", "dankar")

#: Newton-Raphson: the equations' values must be within this of 0.
ACCURACY = 1e-6
#: Newton-Raphson: steps per start value, and in all.
ITERATIONS_PER_TRY = 1000
#: The start values tried after the model's own: 0, 0.33, 0.66, 0.99 for
#: each of the two parameters (ARX's deterministic solver).
_GRID = [0.0, 0.33, 0.66, 0.99]
START_VALUES = tuple((a, b) for a in _GRID for b in _GRID)
ITERATIONS_TOTAL = (len(START_VALUES) + 1) * ITERATIONS_PER_TRY

Vector = tuple[float, float]
Matrix = tuple[float, float, float, float]  # row-major: (x1, x2, y1, y2)


def size_frequencies(class_sizes) -> tuple[np.ndarray, np.ndarray]:
    """``(sizes, counts)``: the distinct class sizes in increasing order and how
    many classes have each size (the "frequency of frequencies")."""
    s = np.asarray(class_sizes, dtype=np.int64).ravel()
    if s.size and s.min() < 1:
        raise ValueError(f"class sizes must be positive, got {int(s.min())}")
    return np.unique(s, return_counts=True)


def population_size(n: int, sampling_fraction: float | None = None, population: float | None = None) -> int:
    """The population size ``N``: ``population`` when given, else
    ``n / sampling_fraction`` rounded half up (ARX's ``Math.round``; Python's
    ``round`` would round a half to even). A ValueError names a fraction
    outside ``(0, 1]`` or a population smaller than the sample."""
    if population is not None:
        if isinstance(population, bool) or not np.isfinite(population) or population < max(n, 1):
            raise ValueError(f"population: expected a number of people at least the sample's {n} records, "
                             f"got {population!r}")
        return int(population)
    if sampling_fraction is None or isinstance(sampling_fraction, bool) \
            or not (0 < float(sampling_fraction) <= 1):
        raise ValueError(f"sampling fraction: expected a number in (0, 1] (the share of the population "
                         f"the table holds), got {sampling_fraction!r}")
    return max(math.floor(n / float(sampling_fraction) + 0.5), n)


def sample_uniqueness(class_sizes) -> float:
    """Share of the sample's records that are alone in their class (0 for an empty sample)."""
    sizes, counts = size_frequencies(class_sizes)
    n = int((sizes * counts).sum())
    return float(counts[sizes == 1].sum()) / n if n else 0.0


# -- Newton-Raphson, as ARX solves the two-parameter models


def _step(x: Vector, f: Vector, j: Matrix) -> Vector:
    """``x - J^-1 f`` in IEEE arithmetic (a singular ``J`` gives inf / NaN, not
    an error), the inverse scaled by ``1/det`` as ARX's solver does."""
    with np.errstate(all="ignore"):
        x1, x2, y1, y2 = (np.float64(v) for v in j)
        scalar = np.float64(1.0) / (x1 * y2 - x2 * y1)
        i1, i2, i3, i4 = y2 * scalar, -x2 * scalar, -y1 * scalar, x1 * scalar
        d0 = i1 * f[0] + i2 * f[1]
        d1 = i3 * f[0] + i4 * f[1]
        return float(x[0] - d0), float(x[1] - d1)


def _try(fun: Callable[[Vector], tuple[Vector, Matrix]], x: Vector,
         constraint: Callable[[Vector], bool] | None) -> tuple[Vector | None, int]:
    """Newton-Raphson from ``x``: (the root or None, steps taken)."""
    steps = 0
    while True:
        f, j = fun(x)
        if abs(f[0]) <= ACCURACY and abs(f[1]) <= ACCURACY:
            return x, steps
        x = _step(x, f, j)
        if constraint is not None and not constraint(x):
            return None, steps
        if math.isnan(x[0]) or math.isnan(x[1]):
            return None, steps
        if steps >= ITERATIONS_PER_TRY:
            return None, steps + 1
        steps += 1


def _solve(fun: Callable[[Vector], tuple[Vector, Matrix]], start: Vector,
           constraint: Callable[[Vector], bool] | None = None) -> Vector:
    """A root of the two equations ``fun`` returns (with their Jacobian): from
    ``start``, then from each of :data:`START_VALUES` until one converges;
    ``(nan, nan)`` when none does within :data:`ITERATIONS_TOTAL` steps."""
    total = 0
    for x in (start, *START_VALUES):
        if total > ITERATIONS_TOTAL:
            break
        root, steps = _try(fun, (float(x[0]), float(x[1])), constraint)
        if root is not None:
            return root
        total += steps
    return math.nan, math.nan


# -- digamma and trigamma as ARX computes them

_EULER = 0.57721566490153286060651209008240243104215933593992
_ZETA2 = (math.pi * math.pi) / 6.0
_ZETA3 = 1.202056903159594285399738161511449990764986292
#: Coefficients of the asymptotic series of digamma (1/12, 1/120, ...) and the
#: Bernoulli numbers B2 ... B10 of trigamma's.
_S3, _S4, _S5, _S6, _S7 = 1.0 / 12.0, 1.0 / 120.0, 1.0 / 252.0, 1.0 / 240.0, 1.0 / 132.0
_B2, _B4, _B6, _B8, _B10 = 1.0 / 6.0, -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0, 5.0 / 66.0
#: Below these the functions recur upwards; digamma's asymptotic series
#: starts at 12. Trigamma recurs only up to 8 but adds its series from 12 on.
_LARGE_DIGAMMA, _LARGE_TRIGAMMA = 12.0, 8.0


def _digamma(x) -> np.ndarray:
    """The digamma function as ARX 3.9 computes it (the approximation of Minka's
    Lightspeed toolbox): reflection for ``x < 0``, a Taylor term near 0, the
    recurrence ``psi(x) = psi(x + 1) - 1/x`` up to 12, then de Moivre's
    asymptotic series. Within 1e-14 of the exact function."""
    x = np.array(x, dtype=np.float64, ndmin=1)
    out = np.full_like(x, np.nan)
    with np.errstate(all="ignore"):
        neg = x < 0
        if neg.any():
            out[neg] = _digamma(1.0 - x[neg]) + math.pi / np.tan(-math.pi * x[neg])
        out[x == 0] = -np.inf
        small = (x > 0) & (x <= 1e-6)
        out[small] = (-_EULER - 1.0 / x[small]) + _ZETA2 * x[small]
        rest = x > 1e-6  # NaN and infinities are in no branch: NaN
        rest &= np.isfinite(x)
        y, acc = x[rest].copy(), np.zeros(int(rest.sum()))
        while (low := y < _LARGE_DIGAMMA).any():
            acc[low] -= 1.0 / y[low]
            y[low] += 1.0
        r = 1.0 / y
        acc += np.log(y) - 0.5 * r
        r *= r
        acc -= r * (_S3 - r * (_S4 - r * (_S5 - r * (_S6 - r * _S7))))
        out[rest] = acc
    return out


def _trigamma(x) -> np.ndarray:
    """The trigamma function as ARX 3.9 computes it (after Minka's Lightspeed
    toolbox): reflection for ``x < 0``, a Taylor term near 0, the recurrence
    ``psi'(x) = psi'(x + 1) + 1/x^2`` up to 8, and the asymptotic series --
    which ARX adds only from 12 on, so that for arguments whose recurrence
    ends in ``[8, 12)`` (every argument below 12) the tail ``~1/x`` beyond
    it is left out. The trigamma function enters only the Jacobian of
    Pitman's equations, never the equations: the solver's steps, and so the
    point where it stops within the tolerance, are ARX's; a root it finds is
    a root of the true equations."""
    x = np.array(x, dtype=np.float64, ndmin=1)
    out = np.full_like(x, np.nan)
    with np.errstate(all="ignore"):
        neg = x < 0
        if neg.any():
            r = math.pi / np.sin(-math.pi * x[neg])
            out[neg] = -_trigamma(1.0 - x[neg]) + r * r
        out[x == 0] = -np.inf
        small = (x > 0) & (x <= 1e-4)
        out[small] = (1.0 / (x[small] * x[small]) + _ZETA2) + (-2.0 * _ZETA3) * x[small]
        rest = (x > 1e-4) & np.isfinite(x)
        y, acc = x[rest].copy(), np.zeros(int(rest.sum()))
        while (low := y < _LARGE_TRIGAMMA).any():
            acc[low] += 1.0 / (y[low] * y[low])
            y[low] += 1.0
        big = y >= _LARGE_DIGAMMA
        r = 1.0 / (y[big] * y[big])
        acc[big] += 0.5 * r + (1.0 + r * (_B2 + r * (_B4 + r * (_B6 + r * (_B8 + r * _B10))))) / y[big]
        out[rest] = acc
    return out


def _psi(x: float) -> float:
    return float(_digamma(x)[0])


def _psi1(x: float) -> float:
    return float(_trigamma(x)[0])


# -- Pitman (Hoshino 2001)


def _pitman_closed(sizes: np.ndarray, counts: np.ndarray, u: float, n: float):
    """Pitman's likelihood equations and their Jacobian in closed form (digamma /
    trigamma, ARX's: :func:`_digamma`, :func:`_trigamma`) -- Hoshino 2001,
    eq. (9)-(10)."""
    big = sizes != 1
    ks, cs = sizes[big].astype(float), counts[big].astype(float)

    def fun(x: Vector) -> tuple[Vector, Matrix]:
        t, a = (np.float64(v) for v in x)
        with np.errstate(all="ignore"):
            v0 = u - 1.0
            v1 = _psi(v0 + t / a + 1.0)
            v2 = _psi1((a + t + a * v0) / a)
            v3 = _psi1(t / a + 1.0)
            v4 = _psi(t / a + 1.0)
            a2 = a * a
            d1 = (v3 - v2) / a2
            d5 = (a * v1 + t * v2 - a * v4 - t * v3) / (a2 * a)
            d3 = (a2 * v0 - t * t * v2 + t * t * v3 - 2.0 * a * t * v1 + 2.0 * a * t * v4) / (a2 * a2)
            o1 = (v1 - v4) / a
            o3 = (-t * v1 + a * v0 + t * v4) / a2
            o2 = _psi(n + t) - _psi(t + 1.0)
            d2 = _psi1(t + 1.0) - _psi1(n + t)
            d4 = float((cs * (_psi1(1.0 - a) - _trigamma(ks - a))).sum())
            o4 = float((cs * (_digamma(ks - a) - _psi(1.0 - a))).sum())
        return (float(o1 - o2), float(o3 - o4)), (float(d2 - d1), float(-d5), float(-d5), float(-d3 - d4))

    return fun


def _pitman_iterative(sizes: np.ndarray, counts: np.ndarray, u: float, n: float):
    """The same equations and Jacobian as finite sums (Hoshino 2001, eq. (8))."""
    i_u = np.arange(1, math.ceil(u), dtype=float)
    i_n = np.arange(1, math.ceil(n), dtype=float)
    big = sizes != 1
    ks, cs = sizes[big], counts[big].astype(float)
    j_k = [np.arange(1, k, dtype=float) for k in ks]

    def fun(x: Vector) -> tuple[Vector, Matrix]:
        t, a = (np.float64(v) for v in x)
        with np.errstate(all="ignore"):
            v0 = t + i_u * a
            o1, o3 = float((1.0 / v0).sum()), float((i_u / v0).sum())
            d1, d5, d3 = float((1.0 / v0**2).sum()), float((i_u / v0**2).sum()), float((i_u**2 / v0**2).sum())
            o4 = float(sum(c * (1.0 / (j - a)).sum() for c, j in zip(cs, j_k)))
            d4 = float(sum(c * (1.0 / (j - a) ** 2).sum() for c, j in zip(cs, j_k)))
            v = t + i_n
            o2, d2 = float((1.0 / v).sum()), float((1.0 / v**2).sum())
        return (o1 - o2, o3 - o4), (d2 - d1, -d5, -d5, -d3 - d4)

    return fun


def _log_gamma(x: float) -> float:
    return math.lgamma(x) if x > 0 else math.nan


def pitman(class_sizes, population: int) -> float:
    """Population uniques under the Pitman sampling model (Pitman 1996), as a
    share of the population.

    The two-parameter Poisson-Dirichlet (Pitman) partition with parameters
    ``theta`` and ``alpha`` is fitted to the sample's class sizes by maximum
    likelihood (Hoshino 2001): ``u`` classes, ``n`` records, ``f_j`` classes of
    size ``j``,

    * ``sum_{i=1}^{u-1} 1/(theta + i alpha) - sum_{i=1}^{n-1} 1/(theta + i) = 0``,
    * ``sum_{i=1}^{u-1} i/(theta + i alpha) - sum_{j>=2} f_j sum_{i=1}^{j-1} 1/(i - alpha) = 0``,

    solved by Newton-Raphson with ``theta >= 0``, from Hoshino's moment-type
    start (``f_2`` taken as 1 when 0). The expected number of population
    uniques is then ``Gamma(theta + 1) / Gamma(theta + alpha) * N^alpha``; a
    value outside ``[0, N]`` (or none) is no estimate (0).
    """
    sizes, counts = size_frequencies(class_sizes)
    n = float((sizes * counts).sum())
    c1 = float(counts[sizes == 1].sum())
    if c1 == 0:
        return 0.0
    c2 = float(counts[sizes == 2].sum()) or 1.0
    u = float(counts.sum())
    c = c1 * (c1 - 1.0) / c2
    with np.errstate(all="ignore"):
        t = float(np.float64(n * u * c - c1 * (n - 1.0) * (2.0 * u + c)) / np.float64(2.0 * c1 * u + c1 * c - n * c))
        a = float(np.float64(t * (c1 - n) + (n - 1.0) * c1) / np.float64(n * u))
    theta_ok = lambda x: x[0] >= 0  # noqa: E731 -- a NaN theta fails too
    iterative = _pitman_iterative(sizes, counts, u, n)
    root = _solve(_pitman_closed(sizes, counts, u, n), (t, a), theta_ok)
    if math.isnan(root[0]) or math.isnan(root[1]):
        root = _solve(iterative, (t, a), theta_ok)
    else:
        check, _ = iterative(root)
        if any(math.isnan(v) or abs(v) > ACCURACY for v in check):
            root = _solve(iterative, (t, a), theta_ok)
    t, a = root
    if math.isnan(t) or math.isnan(a) or a == 0:
        return 0.0
    p = float(population)
    values = []
    with np.errstate(all="ignore"):
        try:
            values.append(math.exp(_log_gamma(t + 1.0) - _log_gamma(t + a)) * p**a)
        except (OverflowError, ValueError):
            pass
        try:
            values.append(math.gamma(t + 1.0) / math.gamma(t + a) * p**a)
        except (OverflowError, ValueError, ZeroDivisionError):
            pass
    values = [v for v in values if isinstance(v, float) and 0.0 <= v <= p]
    return max(values) / p if values else 0.0


# -- Zayatz 1991

_INT_MAX = 2**31 - 1


def zayatz(class_sizes, population: int) -> float:
    """Population uniques after Zayatz 1991, as a share of the population.

    Under sampling without replacement, a population class of size ``j``
    shows as a sample unique with the hypergeometric probability
    ``P_j = P(X = 1)``, ``X ~ Hypergeometric(N, j, n)``. Taking the share of
    sample classes of size ``j`` (``f_j / u``) as the distribution of
    population class sizes, the probability that a sample unique is a
    population unique is ``(f_1/u) P_1 / sum_j (f_j/u) P_j``, and the
    population uniques are ``f_1`` times that, divided by the sampling
    fraction ``n/N``. As in ARX, whose hypergeometric distribution takes a
    32-bit population, a population above ``2^31 - 1`` enters the
    probabilities as ``2^31 - 1`` (the fraction and the share use ``N``).
    """
    sizes, counts = size_frequencies(class_sizes)
    n = int((sizes * counts).sum())
    c1 = int(counts[sizes == 1].sum())
    if c1 == 0:
        return 0.0
    u = float(counts.sum())
    n_pop = int(population)
    n_hyp = min(n_pop, _INT_MAX)
    p = stats.hypergeom.pmf(1, n_hyp, sizes, n)
    total = float((counts / u * p).sum())
    with np.errstate(all="ignore"):
        cond = (c1 / u) * float(stats.hypergeom.pmf(1, n_hyp, 1, n)) / total
        value = c1 * cond / (n / float(n_pop))
    return _valid(value) / float(n_pop)


# -- SNB (Chen & Keller-McNulty 1998)


def _snb_classes(sizes: np.ndarray, counts: np.ndarray, f: float) -> float:
    """ARX 3.9's estimate of the number of non-empty population classes ``K``,
    Shlosser's estimator in the form Haas & Stokes 1998 discuss,
    ``K = u + f_1 (sum_j j f^2 (1-f^2)^(j-1) f_j / D) (sum_j (1-f)^j f_j /
    sum_j j f (1-f)^(j-1) f_j)^2`` -- except the denominator: the estimator's is
    ``D = sum_j f_j (1-f)^j ((1+f)^j - 1)``, ARX subtracts the 1 once per
    distinct class size instead of ``f_j`` times, ``D = sum_j (f_j (1-f)^j
    (1+f)^j - 1)``. Kept as ARX 3.9 computes it, since its SNB figures rest
    on it; the true ``D`` is of order ``f n``, ARX's of order ``u``, so ARX's
    ``K`` is far smaller than Shlosser's at small fractions."""
    u = float(counts.sum())
    c1 = float(counts[sizes == 1].sum())
    k, c = sizes.astype(float), counts.astype(float)
    with np.errstate(all="ignore"):
        p = (1.0 - f) ** k * c
        v1 = float((k * f * f * (1.0 - f * f) ** (k - 1.0) * c).sum())
        v2 = float((p * (1.0 + f) ** k - 1.0).sum())
        v3 = float(p.sum())
        v4 = float((k * f * (1.0 - f) ** (k - 1.0) * c).sum())
        return float(np.float64(u) + np.float64(c1) * (np.float64(v1) / v2) * (np.float64(v3) / v4) ** 2)


def _snb_equations(k: float, f: float, c1: float, c2: float):
    """The SNB moment equations ``E[f_1] = f_1``, ``E[f_2] = f_2`` in
    ``(alpha, beta)`` as ARX 3.9 writes them, with ARX's Jacobian (see
    :func:`snb` for the one factor where both depart from the model)."""

    def fun(x: Vector) -> tuple[Vector, Matrix]:
        a, b = (np.float64(v) for v in x)
        with np.errstate(all="ignore"):
            d = (1.0 - f) * (1.0 - b)
            e1 = k * f * np.power(b / (1.0 - d), a) * (a * d / (1.0 - d) + 1.0) - c1
            e2 = k * a * np.power(b, a) * (f * f) * (1.0 - b) / 2.0 * np.power(1.0 - d, a + 2.0) \
                * (2.0 - (1.0 - a) * d) - c2
            v0 = (b - 1.0) * (f - 1.0)
            v1 = v0 - 1.0
            v2 = 1.0 - v0
            v3 = a * v0 / v1 - 1.0
            v4 = np.power(-b / v1, a)
            v6 = f * f
            v7 = np.power(b, a)
            v8 = v7 * v6 * k
            v9 = a * v8
            v10 = 2.0 * np.power(v2, a + 2.0)
            v11 = v1 * v1
            v13 = f * k
            v14 = f - 1.0
            v15 = a - 1.0
            v16 = b - 1.0
            v17 = v15 * v0
            v18 = v6 * k
            v19 = v17 + 2.0
            v20 = v18 * v19
            x1 = -v13 * np.log(-b / v1) * v3 * v4 - v13 * v4 * v0 / v1
            x2 = a * v13 * (1.0 / v1 - b * v14 / v11) * v3 * np.power(-b / v1, v15) \
                - v13 * v4 * (a * v14 / v1 - a * v16 * v14 * v14 / v11)
            y1 = v9 * np.log(v2) * v19 * v16 / v10 - v9 * v16 * v16 * v14 / v10 - v7 * v20 * v16 / v10 \
                - a * v7 * v18 * np.log(b) * v19 * v16 / v10
            y2 = -(v9 * v19) / v10 - a * a * np.power(b, v15) * v20 * v16 / v10 - a * v7 * v18 * v17 / v10 \
                - a * v7 * v20 * (a + 2.0) * v0 / (2.0 * np.power(v2, a + 3.0))
        return (float(e1), float(e2)), (float(x1), float(x2), float(y1), float(y2))

    return fun


def snb(class_sizes, population: int) -> float:
    """Population uniques under the slide negative binomial model (Chen &
    Keller-McNulty 1998), as a share of the population.

    The population class sizes are taken as negative binomial with
    parameters ``(alpha, beta)`` over ``K`` non-empty classes; under Bernoulli
    sampling with fraction ``f`` the expected numbers of sample classes of
    size 1 and 2 are matched to ``f_1`` and ``f_2`` and solved for
    ``(alpha, beta)`` by Newton-Raphson from ``(1, 1)``; the population
    uniques are ``K beta^alpha``. With ``d = (1-f)(1-beta)``, the model
    gives (Chen & Keller-McNulty 1998)

    * ``E[f_1] = K f (beta/(1-d))^alpha (1 + alpha d/(1-d))``,
    * ``E[f_2] = K alpha beta^alpha f^2 (1-beta)/2 (1-d)^-(alpha+2) (2 - (1-alpha) d)``.

    The figures are ARX 3.9's, which departs from the model twice, kept here
    because a population-uniqueness figure is only comparable with ARX's if
    it is computed the same way: ``K`` (:func:`_snb_classes`), and the second
    equation, where ARX raises ``1-d`` to ``+(alpha+2)`` while its Jacobian
    is that of the model's ``-(alpha+2)``. The solver then follows the
    derivative of another function; on the real tables we tried (Adult, ISLR
    Wage, AER NMES1988 at fractions 0.01 and 0.1) ARX's equations have no
    root from any start, so SNB gives no estimate (0) there, as in ARX, and
    the rule of Dankar et al. falls back on Zayatz.
    """
    sizes, counts = size_frequencies(class_sizes)
    n = float((sizes * counts).sum())
    c1 = float(counts[sizes == 1].sum())
    if c1 == 0:
        return 0.0
    c2 = float(counts[sizes == 2].sum())
    f = n / float(population)
    k = _snb_classes(sizes, counts, f)
    a, b = _solve(_snb_equations(k, f, c1, c2), (1.0, 1.0))
    with np.errstate(all="ignore"):
        value = float(np.float64(k) * np.power(np.float64(b), np.float64(a)))
    return _valid(value) / float(population)


def _valid(value: float) -> float:
    """ARX's reading of an estimate: not a number counts as 0."""
    return 0.0 if math.isnan(value) else float(value)


# -- Dankar et al. 2012


def _dankar_rule(sampling_fraction: float, has_uniques: bool, value: Callable[[str], float]) -> tuple[float, str]:
    """Dankar et al. 2012's choice among the estimates ``value(name)`` gives
    (each asked for only when the rule needs it)."""
    if not has_uniques:
        return 0.0, "none"
    if sampling_fraction <= 0.1:
        estimate = value("pitman")
        if estimate != 0.0:
            return estimate, "pitman"
        return value("zayatz"), "zayatz"
    s, z = value("snb"), value("zayatz")
    if s != 0.0 and not z < s:
        return s, "snb"
    return z, "zayatz"


def dankar(class_sizes, population: int) -> tuple[float, str]:
    """The estimate Dankar et al. 2012 recommend, as a share
    of the population, and the model chosen: Pitman when the sampling fraction
    ``n/N`` is at most 0.1 (Zayatz when Pitman gives no estimate); above it,
    the smaller of Zayatz and SNB (Zayatz when SNB gives none)."""
    sizes, counts = size_frequencies(class_sizes)
    n = float((sizes * counts).sum())
    estimators = {"pitman": pitman, "zayatz": zayatz, "snb": snb}
    return _dankar_rule(n / float(population), bool(counts[sizes == 1].sum()),
                        lambda name: estimators[name](class_sizes, population))


@dataclass(frozen=True)
class PopulationEstimates:
    """Population uniqueness of one sample under every model, as shares of the
    population's records (:func:`estimate`)."""

    sample_size: int
    population_size: int
    sampling_fraction: float
    sample_uniques: float
    pitman: float
    zayatz: float
    snb: float
    dankar: float
    dankar_model: str


def estimate(class_sizes, sampling_fraction: float | None = None,
             population: float | None = None) -> PopulationEstimates:
    """Every estimator on one sample, from its class sizes and either the
    sampling fraction or the population size (:func:`population_size`)."""
    sizes, counts = size_frequencies(class_sizes)
    n = int((sizes * counts).sum())
    big_n = population_size(n, sampling_fraction, population)
    values = {"pitman": pitman(class_sizes, big_n), "zayatz": zayatz(class_sizes, big_n),
              "snb": snb(class_sizes, big_n)}  # each solved once: the rule below picks among them
    fraction = n / big_n if big_n else 0.0
    d, model = _dankar_rule(fraction, bool(counts[sizes == 1].sum()), values.__getitem__)
    return PopulationEstimates(
        sample_size=n, population_size=big_n, sampling_fraction=fraction,
        sample_uniques=sample_uniqueness(class_sizes), dankar=d, dankar_model=model, **values)


def population_uniqueness(class_sizes, sampling_fraction: float, estimator: str) -> float:
    """Estimated share of the population's records that are unique in it,
    from the sample's class sizes (1-d int array) and its sampling fraction,
    with ``estimator`` one of :data:`ESTIMATORS` (``pitman``, ``zayatz``,
    ``snb``, ``dankar``). ``N = round(n / sampling_fraction)``."""
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator: expected one of {', '.join(ESTIMATORS)}, got {estimator!r}")
    sizes, counts = size_frequencies(class_sizes)
    n = int((sizes * counts).sum())
    if n == 0:
        return 0.0
    big_n = population_size(n, sampling_fraction)
    if estimator == "dankar":
        return dankar(class_sizes, big_n)[0]
    return {"pitman": pitman, "zayatz": zayatz, "snb": snb}[estimator](class_sizes, big_n)
