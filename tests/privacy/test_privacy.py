"""Privacy models (hieranon.privacy): exact values on hand-made classes, the
EMD against a linear-programming transport solver, monotonicity under merging
classes (hypothesis), feasibility errors, and the CLI/config forms."""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from hieranon.hierarchies import readers as H
from hieranon.privacy import (
    DistinctLDiversity,
    EntropyLDiversity,
    PrivacyError,
    RecursiveCLDiversity,
    TCloseness,
    _base,
    parse_l_diversity,
    parse_privacy_config,
    parse_t_closeness,
)
from hieranon.privacy.l_diversity import entropy as l_entropy


def bound(model, values, counts=None):
    return model.bind(pd.DataFrame({"s": values}), counts)


def one_class(n: int) -> tuple[np.ndarray, int]:
    return np.zeros(n, dtype=np.int64), 1


# ------------------------------------------------------------ l-diversity
def test_distinct_counts_values_per_class():
    b = bound(DistinctLDiversity("s", 2), ["a", "a", "b", "c", "c", "c"])
    cls = np.array([0, 0, 1, 1, 2, 2])
    assert b.measure(cls, 3).tolist() == [1, 2, 1]
    assert b.per_class_ok(cls, 3).tolist() == [False, True, False]
    assert b.describe() == "distinct 2-diversity of 's'"
    assert b.kind == "l-diversity" and b.attribute == "s"


@pytest.mark.parametrize("half", [1, 3, 7, 1000, 12345])
def test_entropy_of_two_equal_values_is_exactly_two(half):
    b = bound(EntropyLDiversity("s", 2), ["a"] * half + ["b"] * half)
    cls, n = one_class(2 * half)
    assert b.measure(cls, n)[0] == 2.0
    assert b.per_class_ok(cls, n)[0]


def test_entropy_of_equal_values_with_counts():
    """Counts weigh rows: a row of count 5 is 5 records."""
    b = bound(EntropyLDiversity("s", 3), ["a", "b", "c", "c"], counts=[5, 5, 2, 3])
    assert b.measure(np.zeros(4, dtype=np.int64), 1)[0] == 3.0
    assert b.per_class_ok(np.zeros(4, dtype=np.int64), 1)[0]


def test_entropy_tolerance_is_tiny():
    """1000 vs 999 records is entropy log 2 - 2.5e-7: not 2-diverse."""
    b = bound(EntropyLDiversity("s", 2), ["a"] * 1000 + ["b"] * 999)
    cls, n = one_class(1999)
    assert not b.per_class_ok(cls, n)[0]
    h = -(1000 / 1999) * math.log(1000 / 1999) - (999 / 1999) * math.log(999 / 1999)
    assert b.measure(cls, n)[0] == pytest.approx(math.exp(h), rel=1e-12)
    assert b.measure(cls, n)[0] < 2


def test_entropy_of_skewed_class():
    b = bound(EntropyLDiversity("s", 1.5), ["a", "a", "a", "b"])
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert b.measure(*one_class(4))[0] == pytest.approx(math.exp(h))
    assert b.per_class_ok(*one_class(4))[0] == (h >= math.log(1.5))


def test_recursive_sorts_counts_in_decreasing_order():
    """Counts 1, 1, 4: r = (4, 1, 1); (c, 2): 4 < c (1 + 1). pycanon sorts
    increasingly and would read r_1 = 1."""
    vals = ["a", "b", "c", "c", "c", "c"]
    cls, n = one_class(6)
    assert not bound(RecursiveCLDiversity("s", 2, 2), vals).per_class_ok(cls, n)[0]  # 4 < 4 is false
    assert bound(RecursiveCLDiversity("s", 2.01, 2), vals).per_class_ok(cls, n)[0]
    assert bound(RecursiveCLDiversity("s", 2, 2), vals).measure(cls, n)[0] == 2.0  # r_1 / (r_2 + r_3)
    # (c, 3): r_3 alone
    assert bound(RecursiveCLDiversity("s", 4, 3), vals).measure(cls, n)[0] == 4.0
    assert not bound(RecursiveCLDiversity("s", 4, 3), vals).per_class_ok(cls, n)[0]
    assert bound(RecursiveCLDiversity("s", 4.5, 3), vals).per_class_ok(cls, n)[0]


def test_recursive_fewer_values_than_l_fails():
    b = bound(RecursiveCLDiversity("s", 100, 3), ["a", "b", "a"])
    assert b.measure(*one_class(3))[0] == math.inf
    assert not b.per_class_ok(*one_class(3))[0]


# ------------------------------------------------------------ t-closeness
SALARIES = [3, 4, 5, 6, 7, 8, 9, 10, 11]  # thousands (Li et al. 2007, the ordered-distance example)


def test_ordered_emd_paper_example():
    """Li et al. 2007: with salaries 3k..11k, the class {3k, 4k, 5k} is at
    ordered EMD 0.375 and {6k, 8k, 11k} at 0.167 from the whole table.
    By hand: the cumulative differences of {3k,4k,5k} are 2,4,6,5,4,3,2,1,0
    ninths, 27/9 / 8 = 0.375; of {6k,8k,11k}: -1,-2,-3,-1,-2,0,-1,-2,0
    ninths, 12/9 / 8 = 1/6."""
    b = bound(TCloseness("s", 0.2), SALARIES)
    assert b.distance == "ordered"
    cls = np.array([0, 0, 0, 1, 2, 1, 2, 2, 1])
    emd = b.measure(cls, 3)
    assert emd[0] == pytest.approx(0.375, abs=1e-12)
    assert emd[1] == pytest.approx(1 / 6, abs=1e-12)
    assert b.per_class_ok(cls, 3).tolist() == [False, True, emd[2] <= 0.2]


def test_ordered_uses_numeric_order_not_appearance():
    shuffled = [11, 3, 7, 5, 9, 4, 6, 10, 8]
    b = bound(TCloseness("s", 0.2), shuffled)
    cls = np.array([0 if v in (3, 4, 5) else 1 for v in shuffled])
    assert b.measure(cls, 2)[0] == pytest.approx(0.375)


def test_numbers_read_as_text_are_ordered_by_value():
    """A CSV read as text keeps "10" and "9.5" as strings: they are still
    numbers, so the default distance is ordered and "10" comes after "9.5"
    (as text it would come before it)."""
    as_text = [str(v) for v in [11, 3, 7, 5, 9, 4, 6, 10, 8]]
    b = bound(TCloseness("s", 0.2), as_text)
    assert b.distance == "ordered"
    cls = np.array([0 if v in ("3", "4", "5") else 1 for v in as_text])
    assert b.measure(cls, 2)[0] == pytest.approx(0.375)
    # measured after the normalisation of cell text: " 10" is the value "10"
    assert bound(TCloseness("s", 0.2), [" 10", "9.5", " 10"]).labels.tolist() == ["9.5", "10"]
    assert bound(TCloseness("s", 0.2), ["1", "2", "x"]).distance == "equal"


def test_equal_emd_by_hand():
    # table a:6 b:2 c:2 -> q = (.6, .2, .2); class {a, a}: 1/2 (.4 + .2 + .2) = .4
    vals = ["a"] * 6 + ["b"] * 2 + ["c"] * 2
    b = bound(TCloseness("s", 0.4), vals)
    assert b.distance == "equal"
    cls = np.array([0, 0] + [1] * 8)
    assert b.measure(cls, 2)[0] == pytest.approx(0.4)
    assert b.per_class_ok(cls, 2)[0]  # EMD = t satisfies
    assert not bound(TCloseness("s", 0.39), vals).per_class_ok(cls, 2)[0]


def two_level():
    return H.from_mapping("s", {"*": {"X": ["a", "b"], "Y": ["c", "d"]}})


def test_hierarchical_emd_by_hand():
    """Uniform a, b, c, d under X = {a, b}, Y = {c, d}; H = 2. Class {a, a}:
    extra(a) = .75, b, c, d -.25; node X: min(.75, .25) * 1/2 = .125; node Y:
    min(0, .5) = 0; root: extra(X) = .5, extra(Y) = -.5, min * 2/2 = .5.
    EMD = .625 (move .25 a->b at 1/2, .5 a->Y at 1)."""
    b = TCloseness("s", 0.5, hierarchy=two_level()).bind(pd.DataFrame({"s": ["a", "b", "c", "d"] * 2}))
    assert b.distance == "hierarchical"
    cls = np.array([0, 1, 1, 1, 0, 1, 1, 1])  # class 0 = the two 'a' rows
    assert b.measure(cls, 2)[0] == pytest.approx(0.625)
    assert not b.per_class_ok(cls, 2)[0]
    assert TCloseness("s", 0.625, hierarchy=two_level()).bind(
        pd.DataFrame({"s": ["a", "b", "c", "d"] * 2})).per_class_ok(cls, 2)[0]


def lp_emd(p: np.ndarray, q: np.ndarray, dist: np.ndarray) -> float:
    """EMD by the transportation linear program (Li et al. 2007, Def. 3)."""
    m = len(p)
    a_eq = []
    for i in range(m):
        row = np.zeros((m, m))
        row[i, :] = 1
        a_eq.append(row.ravel())
    for j in range(m):
        col = np.zeros((m, m))
        col[:, j] = 1
        a_eq.append(col.ravel())
    res = linprog(dist.ravel(), A_eq=np.array(a_eq), b_eq=np.r_[p, q], bounds=(0, None), method="highs")
    return float(res.fun)


def ground(h: H.Hierarchy, leaves: list[int]) -> np.ndarray:
    big_h = int(h.depth.max())
    lfl = h.level_from_leaf
    out = np.zeros((len(leaves), len(leaves)))
    for i, a in enumerate(leaves):
        for j, b in enumerate(leaves):
            out[i, j] = lfl[int(h.lca(np.array([a]), np.array([b]))[0])] / big_h
    return out


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_emd_matches_transport_lp(data):
    """All three ground distances against the linear program on random
    tables and classes."""
    tree = data.draw(st.sampled_from([
        {"*": {"X": ["a", "b"], "Y": ["c", "d", "e"]}},
        {"*": {"X": {"X1": ["a", "b"], "X2": ["c"]}, "Y": {"Y1": ["d", "e", "f"]}}},
        {"*": ["a", "b", "c", "d"]},
    ]))
    h = H.from_mapping("s", tree)
    labels = sorted(h.leaf_index)
    n = data.draw(st.integers(2, 30))
    vals = [labels[i] for i in data.draw(st.lists(st.integers(0, len(labels) - 1), min_size=n, max_size=n))]
    cls = np.asarray(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.int64)
    df = pd.DataFrame({"s": vals})
    present = sorted(set(vals), key=labels.index)
    leaves = [h.leaf_index[v] for v in present]
    q = np.array([vals.count(v) for v in present], dtype=float) / n
    m = len(present)
    dists = {
        "equal": 1.0 - np.eye(m),
        "ordered": np.abs(np.subtract.outer(np.arange(m), np.arange(m))) / max(m - 1, 1),
        "hierarchical": ground(h, leaves),
    }
    for name, dist in dists.items():
        b = TCloseness("s", 0.3, name, hierarchy=h, order=labels).bind(df)
        got = b.measure(cls, 3)
        for c in range(3):
            sel = cls == c
            if not sel.any():
                continue
            p = np.array([np.sum(np.asarray(vals)[sel] == v) for v in present], dtype=float) / sel.sum()
            assert got[c] == pytest.approx(lp_emd(p, q, dist), abs=1e-7), (name, c)


def test_default_distance_resolves_at_bind_time():
    assert bound(TCloseness("s", 0.2), [1, 2, 3]).distance == "ordered"
    assert bound(TCloseness("s", 0.2), ["x", "y"]).distance == "equal"
    assert bound(TCloseness("s", 0.2, hierarchy=two_level()), ["a", "c"]).distance == "hierarchical"
    assert "ordered distance" in bound(TCloseness("s", 0.2), [1, 2]).describe()


def test_ordered_needs_an_order_for_text():
    # both ways to give the order are named: a configuration's order: and a hierarchy of the values
    with pytest.raises(PrivacyError, match=r"'s' is not numeric.*order: \[\.\.\.\].*--sensitive-hierarchy s=FILE"):
        bound(TCloseness("s", 0.2, "ordered"), ["x", "y"])
    b = bound(TCloseness("s", 0.2, "ordered", order=["lo", "mid", "hi"]), ["hi", "lo", "mid", "lo"])
    assert b.labels.tolist() == ["lo", "mid", "hi"]
    with pytest.raises(PrivacyError, match="not in the given order"):
        bound(TCloseness("s", 0.2, "ordered", order=["lo"]), ["hi", "lo"])


def test_hierarchical_value_missing_from_hierarchy():
    with pytest.raises(PrivacyError, match="'zzz'"):
        bound(TCloseness("s", 0.2, "hierarchical", hierarchy=two_level()), ["a", "zzz"])


@pytest.mark.parametrize("t", [-0.1, 1, 1.5, float("nan"), "x"])
def test_invalid_t(t):
    with pytest.raises(PrivacyError, match="'s'"):
        TCloseness("s", t)


def test_hierarchical_needs_a_hierarchy():
    with pytest.raises(PrivacyError, match="--sensitive-hierarchy s=FILE"):
        TCloseness("s", 0.2, "hierarchical")


# ------------------------------------------------------------ monotonicity
@st.composite
def two_classes(draw):
    nv = draw(st.integers(1, 5))
    a = draw(st.lists(st.integers(0, nv - 1), min_size=1, max_size=25))
    b = draw(st.lists(st.integers(0, nv - 1), min_size=1, max_size=25))
    rest = draw(st.lists(st.integers(0, nv - 1), min_size=0, max_size=25))
    return nv, a, b, rest


MODELS = [DistinctLDiversity("s", 2), DistinctLDiversity("s", 3), EntropyLDiversity("s", 1.8),
          EntropyLDiversity("s", 2), RecursiveCLDiversity("s", 2, 2), RecursiveCLDiversity("s", 1.5, 3),
          TCloseness("s", 0.2, "equal"), TCloseness("s", 0.1, "ordered", order=list("01234")),
          TCloseness("s", 0.15, "hierarchical", hierarchy=H.from_mapping(
              "s", {"*": {"X": ["0", "1"], "Y": ["2", "3", "4"]}}))]


@settings(max_examples=150, deadline=None)
@given(two_classes())
def test_union_of_satisfying_classes_satisfies(case):
    """Machanavajjhala et al. 2007, Sec. 5; Li et al. 2007, Sec. 4.1: every
    model holds for the union of two classes when it holds for each."""
    nv, a, b, rest = case
    vals = [str(v) for v in a + b + rest]
    cls = np.array([0] * len(a) + [1] * len(b) + [2] * len(rest), dtype=np.int64)
    merged = np.where(cls == 1, 0, cls)
    for model in MODELS:
        bm = model.bind(pd.DataFrame({"s": vals}))
        ok = bm.per_class_ok(cls, 3)
        if ok[0] and ok[1]:
            assert bm.per_class_ok(merged, 3)[0], model.describe()


@settings(max_examples=60, deadline=None)
@given(two_classes())
def test_measure_and_ok_are_the_measure_and_the_check(case):
    """The measure and the check of the same histograms taken together (the
    repair's fast path) are the ones each gives alone, bit for bit."""
    nv, a, b, rest = case
    vals = [str(v) for v in a + b + rest]
    cls = np.array([0] * len(a) + [1] * len(b) + [2] * len(rest), dtype=np.int64)
    for model in MODELS:
        bm = model.bind(pd.DataFrame({"s": vals}))
        hist = bm.histogram(cls, 3)
        measure, ok = bm.measure_and_ok(hist)
        assert np.array_equal(measure, bm.measure_hist(hist)), model.describe()
        assert np.array_equal(ok, bm.ok_hist(hist)), model.describe()


@settings(max_examples=60, deadline=None)
@given(two_classes())
def test_strain_is_below_one_inside_the_model_and_above_outside(case):
    """The share of its allowance a class uses (the threshold over the
    measure, or the measure over the threshold) is at most 1 exactly when
    the class meets the model (away from the rounding allowance of the
    threshold), and ranks classes as their measures do."""
    nv, a, b, rest = case
    vals = [str(v) for v in a + b + rest]
    cls = np.array([0] * len(a) + [1] * len(b) + [2] * len(rest), dtype=np.int64)
    for model in MODELS:
        bm = model.bind(pd.DataFrame({"s": vals}))
        hist = bm.histogram(cls, 3)[:2 + bool(rest)]
        strain, ok, measure = bm.strain(hist), bm.ok_hist(hist), bm.measure_hist(hist)
        clear = np.abs(strain - 1) > 1e-6
        assert np.array_equal((strain <= 1)[clear], ok[clear]), model.describe()
        looser = bm.better(measure[:, None], measure[None, :])
        assert (strain[:, None] < strain[None, :])[looser].all(), model.describe()


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_one_record_more_or_less_is_priced_as_the_histogram_says(data):
    """Distinct and entropy l-diversity and t-closeness (equal, ordered
    distance) price one record more or less of every value from a class's
    sums; the answers are those of checking each changed histogram (the
    generic way), also at thresholds a class meets exactly and for classes
    left empty, whether the classes are priced together or one by one."""
    nv = data.draw(st.integers(1, 7))
    table = data.draw(st.lists(st.integers(0, nv - 1), min_size=nv, max_size=40))
    frame = pd.DataFrame({"s": [str(v) for v in range(nv)] + [str(v) for v in table]})  # every value present
    n_cls = data.draw(st.integers(1, 6))
    hist = np.array(data.draw(st.lists(st.lists(st.integers(0, 6), min_size=nv, max_size=nv),
                                       min_size=n_cls, max_size=n_cls)), dtype=np.float64)
    keys = np.array(data.draw(st.lists(st.integers(0, nv - 1), min_size=1, max_size=8)), dtype=np.int64)
    delta = np.array(data.draw(st.lists(st.sampled_from([-3, -2, -1, 1, 2, 3]), min_size=len(keys),
                                        max_size=len(keys))), dtype=np.float64)
    order = [str(v) for v in range(nv)]
    saved = _base.FAST_CELLS
    _base.FAST_CELLS = data.draw(st.sampled_from([1, saved]))  # 1: every class priced on its own
    try:
        _check_one_record_changes(frame, hist, keys, delta, order)
    finally:
        _base.FAST_CELLS = saved


def _check_one_record_changes(frame, hist, keys, delta, order):
    from hieranon.privacy._base import BoundModel

    for make in (lambda x: TCloseness("s", x, "equal"), lambda x: TCloseness("s", x, "ordered", order=order)):
        bm = make(0.5).bind(frame)
        for t in (0.05, 0.25, 0.5, *bm.measure_hist(hist)):  # t at a class's own EMD: the borderline
            bm.model.t = float(t)
            assert np.array_equal(bm.ok_after_change(hist, keys, delta),
                                  BoundModel.ok_after_change(bm, hist, keys, delta)), bm.describe()
    entropies = [float(x) for x in np.exp(l_entropy(hist)) if x >= 1]
    for model in [DistinctLDiversity("s", x) for x in (1, 2, 3)] + \
                 [EntropyLDiversity("s", x) for x in (1, 1.5, 2.5, *entropies)]:
        bm = model.bind(frame)
        assert np.array_equal(bm.ok_after_change(hist, keys, delta),
                              BoundModel.ok_after_change(bm, hist, keys, delta)), bm.describe()


def test_chunked_histograms_agree(monkeypatch):
    rng = np.random.default_rng(1)
    vals = rng.integers(0, 7, 500).astype(str)
    cls = rng.integers(0, 90, 500)
    for model in MODELS[:7]:
        b = model.bind(pd.DataFrame({"s": vals}))
        whole = b.measure(cls, 90)
        monkeypatch.setattr(_base, "HIST_CHUNK_CELLS", 20)
        chunked = b.measure(cls, 90)
        ok = b.per_class_ok(cls, 90)
        monkeypatch.setattr(_base, "HIST_CHUNK_CELLS", 1 << 24)
        assert np.array_equal(whole, chunked)
        assert np.array_equal(ok, b.per_class_ok(cls, 90))


# ------------------------------------------------------------ feasibility
def test_feasibility_errors_name_attribute_and_best_value():
    with pytest.raises(PrivacyError, match=r"distinct 3-diversity of 's'.*l = 2 distinct"):
        bound(DistinctLDiversity("s", 3), ["a", "b", "a"]).check_feasible()
    with pytest.raises(PrivacyError, match=r"entropy 2-diversity of 's'.*exp\(entropy\) = 1\.8898"):
        bound(EntropyLDiversity("s", 2), ["a", "a", "b"]).check_feasible()
    with pytest.raises(PrivacyError, match=r"recursive \(2, 2\)-diversity of 's'.*c would have to exceed 3"):
        bound(RecursiveCLDiversity("s", 2, 2), ["a", "a", "a", "b"]).check_feasible()
    with pytest.raises(PrivacyError, match="fewer than l = 3"):
        bound(RecursiveCLDiversity("s", 2, 3), ["a", "b"]).check_feasible()
    bound(TCloseness("s", 0.0), ["a", "b", "b"]).check_feasible()  # the table is 0 from itself
    bound(EntropyLDiversity("s", 2), ["a", "b"]).check_feasible()


def test_unknown_sensitive_column():
    with pytest.raises(PrivacyError, match="'salary'"):
        DistinctLDiversity("salary", 2).bind(pd.DataFrame({"s": [1]}))


@pytest.mark.parametrize("make", [lambda: DistinctLDiversity("s", 0), lambda: DistinctLDiversity("s", 2.5),
                                  lambda: EntropyLDiversity("s", 0.5), lambda: RecursiveCLDiversity("s", 0, 2),
                                  lambda: RecursiveCLDiversity("s", 2, 0)])
def test_invalid_parameters(make):
    with pytest.raises(PrivacyError, match="'s'"):
        make()


# ------------------------------------------------------------ parsing
def test_parse_l_diversity_forms():
    assert parse_l_diversity("salary-class=2") == DistinctLDiversity("salary-class", 2)
    assert parse_l_diversity("salary-class=entropy:2.5") == EntropyLDiversity("salary-class", 2.5)
    assert parse_l_diversity("salary-class=recursive:3,2") == RecursiveCLDiversity("salary-class", 3, 2)
    assert parse_l_diversity(" a = Entropy : 2 ") == EntropyLDiversity("a", 2)


@pytest.mark.parametrize("text", ["salary-class", "=2", "salary-class=", "salary-class=two", "a=entropy:",
                                  "a=recursive:3", "a=magic:2", "a=0"])
def test_parse_l_diversity_errors(text):
    with pytest.raises(PrivacyError) as err:
        parse_l_diversity(text)
    msg = str(err.value)
    assert msg.startswith(f"--l-diversity {text!r}") and "ATTR=recursive:C,L" in msg


def test_parse_t_closeness_forms():
    m = parse_t_closeness("salary-class=0.2")
    assert (m.attribute, m.t, m.distance) == ("salary-class", 0.2, None)
    assert parse_t_closeness("a=0.1:ordered").distance == "ordered"
    h = two_level()
    m = parse_t_closeness("s=0.3:hierarchical", hierarchies={"s": h})
    assert m.hierarchy is h
    assert parse_t_closeness("s=0.3", hierarchies={"s": h}).hierarchy is h


@pytest.mark.parametrize("text,why", [("a=0.2:euclid", "unknown distance"), ("a=1.2", "< 1"), ("a", "expected"),
                                      ("a=0.2:hierarchical", "--sensitive-hierarchy a=FILE")])
def test_parse_t_closeness_errors(text, why):
    with pytest.raises(PrivacyError, match=why) as err:
        parse_t_closeness(text)
    assert str(err.value).startswith(f"--t-closeness {text!r}")


def test_parse_config(tmp_path):
    (tmp_path / "d.csv").write_text("a;X;*\nb;X;*\nc;Y;*\n")
    models = parse_privacy_config({
        "salary-class": [{"l_diversity": 2}, {"t_closeness": 0.2, "distance": "equal"}],
        "disease": {"t_closeness": 0.1, "distance": "hierarchical", "hierarchy": "d.csv"},
        "x": [{"l_diversity": 3, "variant": "recursive", "c": 2}, {"l_diversity": 2, "variant": "entropy"}],
    }, base_dir=tmp_path)
    assert models[0] == DistinctLDiversity("salary-class", 2)
    assert (models[1].t, models[1].distance) == (0.2, "equal")
    assert models[2].hierarchy.leaf_index.keys() == {"a", "b", "c"}
    assert models[3] == RecursiveCLDiversity("x", 2, 3)
    assert models[4] == EntropyLDiversity("x", 2)
    assert parse_privacy_config(None) == []


@pytest.mark.parametrize("section,why", [
    ([1], "expected a mapping"),
    ({"a": [{"l_diversity": 2, "distance": "equal"}]}, r"privacy\.a\[0\].*expected"),
    ({"a": ["2"]}, r"privacy\.a\[0\]: expected"),
    ({"a": {"l_diversity": 2, "variant": "recursive"}}, "c is given with variant recursive"),
    ({"a": {"l_diversity": 2, "variant": "fancy"}}, "unknown variant"),
    ({"a": {"t_closeness": 2}}, "< 1"),
    ({"a": {"t_closeness": 0.2, "hierarchy": "missing.csv"}}, r"privacy\.a\[0\]"),
])
def test_parse_config_errors(section, why, tmp_path):
    with pytest.raises(PrivacyError, match=why):
        parse_privacy_config(section, base_dir=tmp_path)


def test_several_attributes_at_once():
    df = pd.DataFrame({"s": ["a", "b", "a", "a"], "u": [1, 1, 2, 3]})
    cls = np.array([0, 0, 1, 1])
    got = [m.bind(df).per_class_ok(cls, 2).tolist()
           for m in (DistinctLDiversity("s", 2), DistinctLDiversity("u", 2))]
    assert got == [[True, False], [False, True]]


def test_hierarchical_emd_memory_is_linear_in_the_hierarchy():
    """The hierarchical EMD walks the tree (Li, Li & Venkatasubramanian
    2007, Sec. 4.2: a sum over the nodes) instead of multiplying dense
    leaves x nodes and nodes x nodes matrices, which made a wide hierarchy
    cost hundreds of MB and a minute per run: 4,000 leaves, 4,441 nodes,
    100 classes stay within a few MB of numpy arrays."""
    import tracemalloc

    tree = {"*": {f"G{g}": {f"g{g}.{s}": [f"v{g}.{s}.{i}" for i in range(10)] for s in range(10)}
                  for g in range(40)}}
    values = [f"v{g}.{s}.{i}" for g in range(40) for s in range(10) for i in range(10)]
    model = TCloseness("s", 0.3, "hierarchical", hierarchy=H.from_mapping("s", tree))
    classes = np.arange(len(values)) % 100
    tracemalloc.start()
    try:
        emd = bound(model, values).measure(classes, 100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert emd.shape == (100,) and np.all((emd > 0) & (emd <= 1))
    assert peak < 32 * 2**20, f"{peak / 2**20:.0f} MB"


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.data())
def test_emd_kernel_gives_numpys_emds_exactly(m, data):
    """The one-call EMD is bit for bit the EMD the numpy formulas give
    (the repair compares EMDs with each other and with t, so a last-digit
    difference could change its choices); empty rows and weighted
    (fractional) counts included."""
    from hieranon.privacy.t_closeness import _distributions, _emd_counts, emd_equal, emd_ordered

    rows = data.draw(st.integers(1, 6))
    cells = st.one_of(st.integers(0, 50).map(float), st.floats(0, 50).map(lambda x: round(x * 4) / 4))
    hist = np.array(data.draw(st.lists(st.lists(cells, min_size=m, max_size=m), min_size=rows, max_size=rows)))
    table = np.array([data.draw(st.lists(st.integers(1, 90), min_size=m, max_size=m))], dtype=float)
    q = _distributions(table)
    for ordered, numpy_emd in ((False, emd_equal), (True, emd_ordered)):
        out = np.empty(rows)
        _emd_counts(hist, q[0], ordered, out)
        assert out.tobytes() == numpy_emd(_distributions(hist), q).tobytes()


@settings(max_examples=50, deadline=None)
@given(st.one_of(st.integers(8, 300), st.integers(300, 8192)), st.data())
def test_emd_kernel_of_many_values_sums_as_numpy_does(m, data):
    """Past seven values numpy sums pairwise; so does the kernel, and the
    EMDs of thousands of values (a numeric attribute) are numpy's bit for bit."""
    from hieranon.privacy.t_closeness import _distributions, _emd_counts, emd_equal, emd_ordered

    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    hist = rng.integers(0, 3, size=(4, m)) * (rng.random((4, m)) < 0.05) + (rng.random((4, m)) < 0.02) * 0.25
    q = _distributions(rng.integers(1, 90, size=(1, m)).astype(float))
    for ordered, numpy_emd in ((False, emd_equal), (True, emd_ordered)):
        out = np.empty(len(hist))
        _emd_counts(hist, q[0], ordered, out)
        assert out.tobytes() == numpy_emd(_distributions(hist), q).tobytes()


def test_the_emd_kernel_loads_from_the_disk_cache(tmp_path):
    """The EMD kernel compiled and cached by one process runs in the next,
    which loads it from the cache (a recursive kernel crashed there)."""
    import subprocess
    import sys

    code = ("import numpy as np; from hieranon.privacy.t_closeness import _emd_counts; h = np.ones((2, 300)); "
            "out = np.empty(2); _emd_counts(h, np.full(300, 1 / 300), True, out); print(out.sum())")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    for _ in range(2):
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-2000:]
        assert float(run.stdout.split()[-1]) == 0.0


@given(st.lists(st.lists(st.integers(-2, 3), min_size=0, max_size=6), min_size=0, max_size=5).filter(
    lambda rows: len({len(r) for r in rows}) <= 1), st.sampled_from([np.int64, np.float64]))
def test_distinct_counts_count_the_values_present(rows, dtype):
    """One call counts, per row, the cells above 0, as numpy counts them."""
    from hieranon.privacy.l_diversity import distinct_counts

    hist = np.array(rows, dtype=dtype).reshape(len(rows), len(rows[0]) if rows else 3)  # no rows: no classes
    assert distinct_counts(hist).tolist() == np.count_nonzero(hist > 0, axis=1).tolist()


def test_the_assessment_states_the_share_of_empty_sensitive_cells():
    """Empty sensitive cells (NaN, None, blank text) are one value of their own
    to the models; the assessment says how many records have one, weighted by
    the counts, and says nothing when there is none."""
    from hieranon.privacy import assess_privacy

    values = ["flu", None, "  ", "cold", np.nan, "flu"]
    counts = np.array([1, 2, 1, 3, 1, 2])
    b = bound(DistinctLDiversity("s", 2), values, counts)
    codes = np.zeros((6, 1), dtype=np.int64)
    assessment = assess_privacy([b, bound(TCloseness("s", 0.5), values, counts)], after=codes, counts=counts)
    assert assessment.missing == {"s": pytest.approx(4 / 10)}
    assert assessment.as_dict()["missing_share"] == {"s": pytest.approx(0.4)}
    assert ("empty cells of 's'", "40.0% of records (one value of their own to the models)") in assessment.rows()
    full = assess_privacy([bound(DistinctLDiversity("s", 2), ["flu", "cold"])], after=np.zeros((2, 1), np.int64))
    assert full.missing == {} and not any("empty cells" in label for label, _ in full.rows())
