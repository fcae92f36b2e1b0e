"""hieranon.evaluation.metrics against the worked examples of SPEC section 5 (items
1-6), small hand-computed cases of DM, CAVG, Prec, CM and risk, and
properties on random trees: WHD leaf -> root = 1, the tuple distance is a
metric, Lemma 2 of seed 004, exact integer costs."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hieranon.core import table as T
from hieranon.evaluation import metrics as M
from hieranon.hierarchies import readers as H

QI = ["Gender", "Age", "Postcode"]


def table(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=QI)


# seed 000 Table 1a / 1b / 1c (typed in)
S000_1A = table([("male", "middle", "4350"), ("male", "middle", "4350"), ("male", "young", "4351"),
                 ("female", "young", "4352"), ("female", "old", "4353"), ("female", "old", "4353")])
S000_1B = table([("male", "middle", "4350"), ("male", "middle", "4350"), ("*", "young", "435*"),
                 ("*", "young", "435*"), ("female", "old", "4353"), ("female", "old", "4353")])
S000_1C = table([("*", "middle", "435*"), ("*", "middle", "435*"), ("*", "young", "435*"),
                 ("*", "young", "435*"), ("*", "old", "435*"), ("*", "old", "435*")])
# the full-domain node tied with 1c: Age suppressed instead of Gender
S000_1C_AGE = table([("male", "*", "435*"), ("male", "*", "435*"), ("male", "*", "435*"),
                     ("female", "*", "435*"), ("female", "*", "435*"), ("female", "*", "435*")])
# seed 004 Table 1a / 1b (global) / 1c (multidimensional) / 1d (local)
S004_1A = table([("male", "middle", "4350"), ("male", "middle", "4350"), ("male", "middle", "4350"),
                 ("female", "middle", "4352"), ("female", "old", "4353"), ("female", "old", "4353")])
S004_1B = table([("*", "middle", "435*"), ("*", "middle", "435*"), ("*", "middle", "435*"),
                 ("*", "middle", "435*"), ("*", "old", "435*"), ("*", "old", "435*")])
S004_1C = table([("male", "middle", "4350"), ("male", "middle", "4350"), ("male", "middle", "4350"),
                 ("female", "*", "435*"), ("female", "*", "435*"), ("female", "*", "435*")])
S004_1D = table([("male", "middle", "4350"), ("male", "middle", "4350"), ("*", "middle", "435*"),
                 ("*", "middle", "435*"), ("female", "old", "4353"), ("female", "old", "4353")])


@pytest.fixture
def hs3(paper_hierarchies):
    return [paper_hierarchies[q] for q in QI]


def codes(orig: pd.DataFrame, gen: pd.DataFrame, hs):
    enc = T.encode(orig, QI, hs)
    g = T.encode_generalised(enc, gen)
    assert (g >= 0).all()
    return enc.codes, g


def uniform(hs) -> M.CostModel:
    return M.CostModel.build(hs, "uniform")


# ------------------------------------------------------- SPEC 5, items 1-2
def test_seed000_table1b_distortion(hs3):
    o, g = codes(S000_1A, S000_1B, hs3)
    model = uniform(hs3)
    # Distortion(t3, t3') = WHD Gender 1 + Age 0 + Postcode 1/4 (seed 000, after Def. 6)
    assert M.tuple_distortion(o, g, model).tolist() == [0, 0, 1.25, 1.25, 0, 0]
    assert M.distortion(o, g, model) == 2.5
    assert M.full_distortion(o, model) == 18.0  # n * m with unit weights
    assert M.distortion_ratio(o, g, model) == pytest.approx(2.5 / 18)


def test_seed000_distance_of_tuples_3_and_4(hs3):
    o, _ = codes(S000_1A, S000_1A, hs3)
    model = uniform(hs3)
    t3, t4 = o[2], o[3]
    t34 = M.lca_tuple(t3, t4, hs3)[0]
    assert [h.labels[c] for h, c in zip(hs3, t34)] == ["*", "young", "435*"]  # Def. 8
    assert M.tuple_distance(t3, t4, hs3, model)[0] == 2.5  # Def. 9
    assert M.tuple_distance(t4, t3, hs3, model)[0] == 2.5
    assert M.class_distance(t3, 1, t4, 1, hs3, model) == 2.5  # Def. 10, single tuples
    # classes of sizes 2 and 1 weight each side by its size: 2*1.25 + 1*1.25
    assert M.class_distance(t3, 2, t4, 1, hs3, model) == 3.75


def test_seed000_full_domain_nodes_cost_7_5(hs3):
    model = uniform(hs3)
    for gen in (S000_1C, S000_1C_AGE):
        o, g = codes(S000_1A, gen, hs3)
        assert M.distortion(o, g, model) == 7.5


def test_seed004_table1_distortions(hs3):
    model = uniform(hs3)
    o, g = codes(S004_1A, S004_1B, hs3)
    assert M.distortion(o, g, model) == 7.5
    o, g = codes(S004_1A, S004_1D, hs3)
    assert M.distortion(o, g, model) == 2.5
    # tuple 4 of seed 004: Distortion(t4, t4') = 1.25 (after Def. 6)
    assert M.tuple_distortion(o[3], g[3], model)[0] == 1.25
    o, g = codes(S004_1A, S004_1C, hs3)
    assert M.distortion(o, g, model) == 3 * 1.25  # Age middle/old -> * and Postcode -> 435* on 3 rows


def test_seed000_modification_rates(hs3):
    o, g = codes(S000_1A, S000_1B, hs3)
    assert M.modification_rate(o, g) == pytest.approx(4 / 18)
    assert round(100 * M.modification_rate(o, g), 1) == 22.2
    o, g = codes(S000_1A, S000_1C, hs3)
    assert M.modification_rate(o, g) == pytest.approx(12 / 18)
    assert round(100 * M.modification_rate(o, g), 1) == 66.7


# ---------------------------------------------------------- SPEC 5, item 3
def birth_date_chain() -> H.Hierarchy:
    """{D/M/Y, M/Y, Y, 10Y, C/Y/M/O, *}: 6 levels."""
    return H.from_paths("Birth", [["12/03/1975", "03/1975", "1975", "1970-1979", "middle", "*"]])


def test_whd_birth_date_uniform_and_height():
    assert M.whd(6, 4, 6) == pytest.approx(0.4)
    h = birth_date_chain()
    exact = M.node_costs_exact(h, "uniform")
    # node at depth 3 is 'Y' (level 4): WHD(6, 4) = (1 + 1) / 5
    assert exact[int(np.flatnonzero(h.depth == 3)[0])] == Fraction(2, 5)
    hw = M.whd(6, 5, 6, "height", beta=1)
    assert hw == pytest.approx(12 / 137)  # (1/5) / (1/5 + 1/4 + 1/3 + 1/2 + 1)
    assert math.floor(hw * 1000) / 1000 == 0.087  # the paper's 0.087, to 3 decimals
    exact = M.node_costs_exact(h, "height", beta=1)
    assert exact[int(np.flatnonzero(h.depth == 4)[0])] == Fraction(12, 137)
    # Gender {M/F, *}: WHD(2, 1) = 1 under both schemes
    assert M.whd(2, 1, 2) == 1 and M.whd(2, 1, 2, "height") == 1


def test_whd_rejects_bad_levels_and_beta():
    with pytest.raises(ValueError):
        M.whd(3, 4, 5)
    with pytest.raises(ValueError, match="beta"):
        M.whd(5, 4, 5, "height", beta=0.5)


# ---------------------------------------------------------- SPEC 5, item 4
def test_seed002_priority_distortion(hs3):
    assert M.equal_priorities(["Age", "Postcode", "Gender"]) == {
        "Age": 1, "Postcode": Fraction(1, 2), "Gender": 0}
    model = M.CostModel.build(hs3, "uniform", priorities={"Gender": 0, "Postcode": 0.5, "Age": 1})
    o, g = codes(S000_1A, S000_1B, hs3)
    assert M.tuple_distortion(o[2], g[2], model)[0] == 0.125  # 1*0 + 0.25*0.5 + 0*1
    assert M.distortion(o, g, model) == 0.25
    # priorities in QI order give the same
    model2 = M.CostModel.build(hs3, "uniform", priorities=[0, 1, 0.5])
    assert M.distortion(o, g, model2) == 0.25


# ---------------------------------------------------------- SPEC 5, item 5
def test_seed001_mage_distortion_and_distance():
    hs = [H.suppression("Gender", ["male", "female"]), H.masking("Pcode", ["4661", "4663"])]
    o = np.array([[hs[0].code_of("female"), hs[1].code_of("4661")],
                  [hs[0].code_of("male"), hs[1].code_of("4663")]])
    g = np.array([[0, hs[1].leaf_index["4661"]]] * 2)
    g[:, 1] = hs[1].parent[o[:, 1]]  # 466*
    assert hs[1].labels[g[0, 1]] == "466*"
    model = M.CostModel.build(hs, "mage")
    assert M.tuple_distortion(o[0], g[0], model)[0] == pytest.approx(0.7)  # 1/2 + 1/5
    assert M.tuple_distance(o[0], o[1], hs, model)[0] == pytest.approx(1.4)
    assert M.mage_distortion(o[:1], g[:1], hs) == pytest.approx(0.7)
    assert M.node_costs_exact(hs[1], "mage")[g[0, 1]] == Fraction(1, 5)
    assert M.node_costs_exact(hs[0], "mage")[0] == Fraction(1, 2)


# ---------------------------------------------------------- SPEC 5, item 6
GM = ["Gender", "Marriage"]
S004_3A = pd.DataFrame([("male", "married"), ("male", "unmarried"), ("female", "married"), ("female", "unmarried"),
                        ("male", "divorced"), ("male", "widowed"), ("female", "divorced"), ("female", "widowed")],
                       columns=GM)


def test_seed004_table3_inconsistency(paper_hierarchies):
    hs = [paper_hierarchies[q] for q in GM]
    enc = T.encode(S004_3A, GM, hs)
    b = S004_3A.copy()
    b.loc[0:3, "Gender"] = "*"
    b.loc[4:7, "Marriage"] = "*"
    c = S004_3A.copy()
    c["Marriage"] = "*"
    gb = T.encode_generalised(enc, b)
    gc = T.encode_generalised(enc, c)
    assert M.inconsistency(gb, hs).tolist() == [0.5, 0.5]
    assert M.inconsistency(gc, hs).tolist() == [0.0, 0.0]
    assert M.compute(enc.codes, gb, hs, 2).inconsistency == 0.5
    assert M.compute(enc.codes, gc, hs, 2).inconsistency == 0.0
    # "their distortions are identical"
    model = uniform(hs)
    assert M.distortion(enc.codes, gb, model) == M.distortion(enc.codes, gc, model) == 8.0
    # both are 2-anonymous views
    assert M.compute(enc.codes, gb, hs, 2).achieved_k == 2 and M.compute(enc.codes, gc, hs, 2).achieved_k == 4


def test_seed004_genportion_example():
    """Date of birth {d/m/y, m/y, y, 10y, *}: 0/20/40/20/20 % of the values per
    level (most specific first) -> genportion 0.8, inconsistency 0.6."""
    h = H.from_paths("DoB", [["01/01/1970", "01/1970", "1970", "1970-1979", "*"]])
    node_at = [int(np.flatnonzero(h.depth == d)[0]) for d in range(h.height)]  # depth 0 = root
    # 10 cells: 2 at m/y (depth 3), 4 at y (depth 2), 2 at 10y (depth 1), 2 at * (depth 0)
    col = np.array([node_at[3]] * 2 + [node_at[2]] * 4 + [node_at[1]] * 2 + [node_at[0]] * 2)[:, None]
    assert M.level_fractions(col[:, 0], h).tolist() == pytest.approx([0.2, 0.2, 0.4, 0.2, 0.0])
    assert M.generalisation_portion(col, [h])[0] == pytest.approx(0.8)
    assert M.inconsistency(col, [h])[0] == pytest.approx(0.6)
    # the same with 5 rows and counts
    col5 = np.array([node_at[3], node_at[2], node_at[1], node_at[0]])[:, None]
    w = np.array([1, 2, 1, 1])
    assert M.generalisation_portion(col5, [h], w)[0] == pytest.approx(0.8)
    assert M.inconsistency(col5, [h], w)[0] == pytest.approx(0.6)


def test_genportion_takes_the_most_specific_level_present(paper_hierarchies):
    h = paper_hierarchies["Postcode"]  # 5 levels
    leaf = h.code_of("4350")
    col = np.array([leaf, leaf, leaf, h.parent[leaf], 0, 0])[:, None]  # 3 leaves, one 435*, two *
    assert M.generalisation_portion(col, [h])[0] == pytest.approx(0.5)
    assert M.inconsistency(col, [h])[0] == pytest.approx(0.5)
    col = np.array([h.parent[leaf]] * 3 + [0])[:, None]  # base level is 435*, not the leaves
    assert M.generalisation_portion(col, [h])[0] == pytest.approx(0.25)
    assert M.inconsistency(col, [h])[0] == pytest.approx(0.25)  # Lemma 3: genportion < 50 %


def test_class_distance_stub_rule(hs3):
    """seed 004 Def. 14: C = {t4} (1 record) and C' = {t1, t2, t3} with k=2:
    |C| + |C'| >= 2k, so only a stub of k - |C| = 1 tuple of C' is generalised."""
    o, _ = codes(S004_1A, S004_1A, hs3)
    model = uniform(hs3)
    t4, t1 = o[3], o[0]
    assert M.class_distance(t4, 1, t1, 3, hs3, model, k=2) == 2 * 1.25
    assert M.class_distance(t4, 1, t1, 3, hs3, model) == 4 * 1.25  # no k: the whole class
    assert M.class_distance(t4, 1, t1, 2, hs3, model, k=2) == 3 * 1.25  # 1 + 2 < 2k: whole class


# ------------------------------------------------------- class measures
def test_compute_on_seed000_table1b(hs3):
    o, g = codes(S000_1A, S000_1B, hs3)
    labels = ["stress", "obesity", "stress", "obesity", "stress", "obesity"]
    m = M.compute(o, g, hs3, 2, qi_names=QI, class_labels=np.array(labels))
    assert m.distortion == 2.5 and m.distortion_uniform == 2.5
    assert m.distortion_ratio == pytest.approx(2.5 / 18)
    assert m.discernibility == 3 * 2 ** 2
    assert m.n_classes == 3 and m.achieved_k == 2
    assert m.cavg == pytest.approx((6 / 3) / 2)
    assert m.precision == pytest.approx(1 - 2.5 / 18)  # two cells of 1/1, two of 1/4
    assert m.modification_rate == pytest.approx(4 / 18)
    assert m.risk_max == 0.5 and m.risk_mean == 0.5
    assert m.distinct_rows_input == 4 and m.distinct_rows_output == 3 and m.row_ratio == 0.75
    assert m.classification_metric == pytest.approx(3 / 6)  # each class has one minority record
    assert m.suppressed_records == 0
    # height weights, beta 1: Gender 1 + Postcode (1/4) / (1 + 1/2 + 1/3 + 1/4) = 3/25, twice
    assert m.distortion_height == pytest.approx(2 * (1 + 3 / 25))
    assert m.mage_distortion == pytest.approx(2 * (1 / 2 + 1 / 5))


def test_compute_on_raw_table(hs3):
    o, _ = codes(S000_1A, S000_1A, hs3)
    m = M.compute(o, o, hs3, 2)
    assert m.distortion == 0 and m.precision == 1 and m.modification_rate == 0
    assert m.discernibility == 4 + 1 + 1 + 4
    assert m.achieved_k == 1 and m.n_classes == 4
    assert m.cavg == pytest.approx((6 / 4) / 2)
    assert m.risk_max == 1.0
    assert m.risk_mean == pytest.approx((2 * 0.5 + 1 + 1 + 2 * 0.5) / 6)
    assert m.inconsistency == 0


def test_compute_with_counts(hs3):
    """seed 004 Table 1a as distinct rows with counts 3, 1, 2."""
    compact = S004_1A.iloc[[0, 3, 4]].reset_index(drop=True)
    w = np.array([3, 1, 2])
    o, _ = codes(compact, compact, hs3)
    m = M.compute(o, o, hs3, 2, counts=w)
    assert m.n_records == 6 and m.n_rows == 3
    assert m.achieved_k == 1 and m.n_classes == 3
    assert m.discernibility == 9 + 1 + 4
    assert m.cavg == pytest.approx((6 / 3) / 2)
    assert m.risk_max == 1.0
    assert m.risk_mean == pytest.approx((3 * (1 / 3) + 1 * 1 + 2 * (1 / 2)) / 6)  # mean over records
    gen = compact.copy()
    gen.loc[1, ["Gender", "Postcode"]] = ["*", "435*"]
    gen.loc[0, ["Gender", "Postcode"]] = ["*", "435*"]
    o, g = codes(compact, gen, hs3)
    m = M.compute(o, g, hs3, 2, counts=w)
    assert m.achieved_k == 2 and m.discernibility == 16 + 4
    assert m.distortion == pytest.approx(4 * 1.25)  # 3 + 1 records generalised by 1.25 each
    assert m.modification_rate == pytest.approx(8 / 18)
    assert m.precision == pytest.approx(1 - 4 * 1.25 / 18)


def test_compute_with_suppression(hs3):
    """Rows 3 and 4 suppressed (all '*', 2 records < k=3)."""
    gen = S000_1A.copy()
    gen.loc[[2, 3], QI] = "*"
    o, g = codes(S000_1A, gen, hs3)
    labels = np.array(["stress", "obesity", "stress", "obesity", "stress", "obesity"])
    m = M.compute(o, g, hs3, 3, class_labels=labels, treat_all_root_as_suppressed=True)
    assert m.suppressed_records == 2
    assert m.discernibility == 2 ** 2 + 2 ** 2 + 2 * 6  # each suppressed record costs |D|
    assert m.n_classes == 2 and m.achieved_k == 2
    assert m.cavg == pytest.approx((4 / 2) / 3)
    assert m.classification_metric == pytest.approx((1 + 1 + 2) / 6)
    assert m.distortion == 2 * 3  # two rows, three attributes fully generalised
    # an all-root class of >= k records is a class, not suppression
    m = M.compute(o, g, hs3, 2, treat_all_root_as_suppressed=True)
    assert m.suppressed_records == 0 and m.n_classes == 3 and m.discernibility == 12


def test_discernibility_and_cavg_direct():
    assert M.discernibility(np.array([3, 2, 5])) == 9 + 4 + 25
    assert M.discernibility(np.array([3, 2]), n_suppressed=1) == 9 + 4 + 6
    assert M.cavg(10, 2, 5) == 1.0 and M.cavg(12, 3, 2) == 2.0
    assert math.isnan(M.cavg(0, 0, 2))


def test_classification_metric_direct():
    row_class = np.array([0, 0, 0, 1, 1])
    labels = np.array(["a", "a", "b", "b", "b"])
    assert M.classification_metric(row_class, labels) == pytest.approx(1 / 5)
    # counts weight records: class 0 is 1*a + 3*b -> the a is the minority
    assert M.classification_metric(row_class, labels, counts=np.array([1, 0 + 1, 3, 1, 1])) == pytest.approx(2 / 7)
    sup = np.array([False, False, False, True, True])
    assert M.classification_metric(row_class, labels, suppressed=sup) == pytest.approx(3 / 5)


def test_precision_arca_hewett_examples():
    """T1 (education one level up everywhere) 0.89 and T9 0.95 of seed 003:
    1/120 * (6 * 1/3 + 4 * 2/2) over 40 records and 3 attributes."""
    edu = H.from_paths("edu", [[v, "High", "Secondary", "Any"] for v in ("9th", "10th", "11th", "12th")])
    sex = H.from_paths("sex", [["M", "Any"], ["F", "Any"]])
    hrs = H.from_paths("hrs", [["30", "[1,40)", "Any"], ["45", "[40,99)", "Any"], ["50", "[40,99)", "Any"]])
    hs = [edu, sex, hrs]
    cols = ["edu", "sex", "hrs"]
    orig = pd.DataFrame([("9th", "M", "30"), ("10th", "F", "50"), ("11th", "M", "45")], columns=cols)
    w = np.array([6, 4, 30])
    enc = T.encode(orig, cols, hs, counts=w)
    t9 = pd.DataFrame([("High", "M", "30"), ("10th", "F", "Any"), ("11th", "M", "45")], columns=cols)
    g = T.encode_generalised(enc, t9)
    assert M.precision(enc.codes, g, hs, w) == pytest.approx(0.95)
    t1 = pd.DataFrame([("High", "M", "30"), ("High", "F", "50"), ("High", "M", "45")], columns=cols)
    g = T.encode_generalised(enc, t1)
    assert M.precision(enc.codes, g, hs, w) == pytest.approx(8 / 9)
    assert round(M.precision(enc.codes, g, hs, w), 2) == 0.89
    assert M.modification_rate(enc.codes, g, w) == pytest.approx(1 / 3)


def test_evaluate_from_dataframes(paper_hierarchies):
    a = S000_1A.assign(Problem=["stress", "obesity", "stress", "obesity", "stress", "obesity"])
    b = S000_1B.assign(Problem=a["Problem"])
    m = M.evaluate(a, b, QI, paper_hierarchies, k=2, class_column="Problem")
    assert m.distortion == 2.5 and m.achieved_k == 2 and m.classification_metric == pytest.approx(0.5)
    bad = b.copy()
    bad.loc[0, "Postcode"] = "4351"
    with pytest.raises(ValueError, match="Postcode"):
        M.evaluate(a, bad, QI, paper_hierarchies, k=2)


def test_achieved_k_per_requirement(paper_hierarchies):
    """Each requirement <B, k> gets the smallest group of B's values; the
    plain achieved k stays the smallest class over all QIs."""
    a, b = S000_1A, S000_1B
    m = M.evaluate(a, b, QI, paper_hierarchies, k=2, requirements=[("Gender", 2), "Age,Postcode:2"])
    expected = {req: int(b.groupby(list(attrs)).size().min())
                for req, attrs in [("<{Gender}, 2>", ["Gender"]), ("<{Age, Postcode}, 2>", ["Age", "Postcode"])]}
    assert m.achieved_k_per_requirement == expected
    assert m.achieved_k == int(b.groupby(QI).size().min())
    assert M.evaluate(a, b, QI, paper_hierarchies, k=2).achieved_k_per_requirement == {}


# ------------------------------------------------ random trees (hypothesis)
def make_tree(name: str, draw, balanced: bool) -> H.Hierarchy:
    """A random tree of 2-4 levels with at least two leaves."""
    levels = draw(st.integers(2, 4))
    ids = itertools.count()
    rows = []

    def grow(path: list[str]):
        depth = len(path)
        for _ in range(draw(st.integers(2 if depth == 0 else 1, 3))):
            label = f"{name}{next(ids)}"
            if depth + 1 == levels - 1 or (not balanced and draw(st.integers(0, 2)) == 0):
                rows.append([label] + path[::-1] + ["*"])
            else:
                grow(path + [label])

    grow([])
    return H.from_paths(name, rows, allow_unbalanced=not balanced)


@st.composite
def trees(draw, balanced: bool | None = None):
    return make_tree("t", draw, draw(st.booleans()) if balanced is None else balanced)


@st.composite
def forests(draw, balanced: bool | None = None, max_attrs: int = 3):
    m = draw(st.integers(1, max_attrs))
    return [make_tree(f"a{j}_", draw, draw(st.booleans()) if balanced is None else balanced) for j in range(m)]


def leaves_of(h):
    return [int(v) for v in h.leaves]


SCHEMES = [("uniform", 1.0, False), ("height", 1.0, False), ("height", 2.0, False), ("height", 1.5, False),
           ("custom", 1.0, True)]
SET = settings(max_examples=40, deadline=None)


@SET
@given(trees(balanced=True), st.sampled_from(SCHEMES), st.data())
def test_leaf_to_root_costs_exactly_one(h, scheme, data):
    name, beta, custom = scheme
    weights = None
    if custom:
        weights = data.draw(st.lists(st.fractions(0, 5, max_denominator=7), min_size=h.height - 1,
                                     max_size=h.height - 1).filter(lambda ws: sum(ws) > 0), label="weights")
    exact = M.node_costs_exact(h, name, beta, weights)
    assert exact[0] == 1
    assert all(exact[v] == 0 for v in leaves_of(h))
    model = M.CostModel.build([h], name, beta, custom={h.name: weights} if custom else None)
    assert model.costs[0][0] == 1.0
    assert model.int_costs[0][0] == model.scale
    for v in leaves_of(h):
        assert model.int_costs[0][v] == 0
        path = h.ancestors[v, : h.depth[v] + 1]
        # WHD is additive along the path and matches whd(p, q)
        for node in path:
            lvl = int(h.level[node])
            assert model.costs[0][node] == pytest.approx(M.whd(h.height, lvl, h.height, name, beta, weights))
        steps = [exact[int(path[d])] - exact[int(path[d + 1])] for d in range(len(path) - 1)]
        assert sum(steps) == 1 and all(s >= 0 for s in steps)
    # leaf -> root distortion of a one-cell table
    leaf = leaves_of(h)[0]
    assert M.distortion(np.array([[leaf]]), np.array([[0]]), model) == pytest.approx(1.0)
    assert M.full_distortion(np.array([[leaf]] * 3), model) == pytest.approx(3.0)


@SET
@given(forests(), st.sampled_from(SCHEMES[:4]), st.data())
def test_int_costs_over_scale_equal_float_costs(hs, scheme, data):
    name, beta, _ = scheme
    prios = data.draw(st.none() | st.lists(st.sampled_from([0, 0.25, 0.5, 1, 2]), min_size=len(hs),
                                           max_size=len(hs)), label="priorities")
    model = M.CostModel.build(hs, name, beta, priorities=prios)
    for j, h in enumerate(hs):
        mult = Fraction(1) if prios is None else Fraction(prios[j])
        exact = M.node_costs_exact(h, name, beta, multiplier=mult)
        assert model.int_costs[j].dtype == np.int64
        if model.exact:
            assert [Fraction(int(x), model.scale) for x in model.int_costs[j]] == exact
        np.testing.assert_allclose(model.int_costs[j] / model.scale, model.costs[j], rtol=0, atol=1e-9)
        np.testing.assert_allclose(model.costs[j], [float(f) for f in exact], rtol=1e-15)


def int_dist(t1, t2, hs, model) -> int:
    """Dist(t1, t2) of seed 000 Def. 9 in exact integer costs."""
    total = 0
    for j, h in enumerate(hs):
        c = model.int_costs[j]
        a = int(h.lca(np.array([t1[j]]), np.array([t2[j]]))[0])
        total += 2 * int(c[a]) - int(c[t1[j]]) - int(c[t2[j]])
    return total


@st.composite
def node_tuples(draw, hs, n: int, leaves_only: bool = False):
    pools = [leaves_of(h) if leaves_only else list(range(h.n_nodes)) for h in hs]
    return [tuple(draw(st.sampled_from(p)) for p in pools) for _ in range(n)]


@SET
@given(forests(), st.sampled_from(SCHEMES[:4]), st.data())
def test_tuple_distance_is_a_metric(hs, scheme, data):
    name, beta, _ = scheme
    model = M.CostModel.build(hs, name, beta)
    t1, t2, t3 = data.draw(node_tuples(hs, 3), label="tuples")
    d12, d21 = int_dist(t1, t2, hs, model), int_dist(t2, t1, hs, model)
    d13, d23 = int_dist(t1, t3, hs, model), int_dist(t2, t3, hs, model)
    assert int_dist(t1, t1, hs, model) == 0
    assert d12 == d21
    assert (d12 == 0) == (t1 == t2)  # all weights positive: distinct tuples are apart
    assert d13 <= d12 + d23
    # the float implementation agrees (int costs are rounded to 1/scale when not exact: 4 nodes per attribute)
    f = M.tuple_distance(np.array(t1), np.array(t2), hs, model)[0]
    assert f == pytest.approx(d12 / model.scale, abs=1e-12 if model.exact else 2 * len(hs) / model.scale)
    assert M.tuple_distance(np.array(t2), np.array(t1), hs, model)[0] == pytest.approx(f, abs=1e-12)
    assert M.tuple_distance(np.array(t1), np.array(t1), hs, model)[0] == 0
    fd = [M.tuple_distance(np.array(a), np.array(b), hs, model)[0] for a, b in ((t1, t3), (t1, t2), (t2, t3))]
    assert fd[0] <= fd[1] + fd[2] + 1e-9


def int_distortion(t, tg, model) -> int:
    return sum(int(c[g]) - int(c[o]) for c, o, g in zip(model.int_costs, t, tg))


def int_class_dist(t1, n1, t2, n2, hs, model) -> int:
    t12 = tuple(M.lca_tuple(np.array(t1), np.array(t2), hs)[0].tolist())
    return n1 * int_distortion(t1, t12, model) + n2 * int_distortion(t2, t12, model), t12


@SET
@given(forests(balanced=True), st.sampled_from(SCHEMES[:4]), st.data())
def test_lemma2_merge_order_does_not_matter(hs, scheme, data):
    """seed 004 Lemma 2: Dist(C1,C2) + Dist(C12,C3) = Dist(C2,C3) + Dist(C1,C23)."""
    name, beta, _ = scheme
    model = M.CostModel.build(hs, name, beta)
    t1, t2, t3 = data.draw(node_tuples(hs, 3, leaves_only=True), label="tuples")
    d12, t12 = int_class_dist(t1, 1, t2, 1, hs, model)
    d12_3, _ = int_class_dist(t12, 2, t3, 1, hs, model)
    d23, t23 = int_class_dist(t2, 1, t3, 1, hs, model)
    d1_23, _ = int_class_dist(t1, 1, t23, 2, hs, model)
    assert d12 + d12_3 == d23 + d1_23
    # both equal the distortion of generalising all three to their common generalisation
    t123 = tuple(M.lca_tuple(np.array(t12), np.array(t3), hs)[0].tolist())
    assert d12 + d12_3 == sum(int_distortion(t, t123, model) for t in (t1, t2, t3))
    # and the float class distance agrees
    f = (M.class_distance(np.array(t1), 1, np.array(t2), 1, hs, model)
         + M.class_distance(np.array(t12), 2, np.array(t3), 1, hs, model))
    g = (M.class_distance(np.array(t2), 1, np.array(t3), 1, hs, model)
         + M.class_distance(np.array(t1), 1, np.array(t23), 2, hs, model))
    assert f == pytest.approx(g, abs=1e-9)


@SET
@given(forests(), st.data())
def test_ratio_and_level_measures_on_random_tables(hs, data):
    n = data.draw(st.integers(1, 20), label="n")
    orig = np.array([[data.draw(st.sampled_from(leaves_of(h))) for h in hs] for _ in range(n)])
    steps = np.array([[data.draw(st.integers(0, 3)) for _ in hs] for _ in range(n)])
    gen = orig.copy()
    for j, h in enumerate(hs):
        gen[:, j] = h.ancestors[orig[:, j], np.maximum(h.depth[orig[:, j]] - steps[:, j], 0)]
    model = uniform(hs)
    r = M.distortion_ratio(orig, gen, model)
    assert 0 <= r <= 1 + 1e-12
    assert M.distortion_ratio(orig, np.zeros_like(orig), model) == pytest.approx(1.0)
    assert (M.distortion_ratio(orig, gen, model) == 0) == bool((gen == orig).all())
    assert M.modification_rate(orig, gen) == pytest.approx((gen != orig).mean())
    gp = M.generalisation_portion(gen, hs)
    inc = M.inconsistency(gen, hs)
    for j, h in enumerate(hs):
        depth = h.depth[gen[:, j]]
        assert gp[j] == pytest.approx(1 - np.mean(depth == depth.max()))
        fr = M.level_fractions(gen[:, j], h)
        assert fr.sum() == pytest.approx(1.0)
        assert inc[j] == pytest.approx(1 - fr.max())
        assert 0 <= inc[j] <= gp[j] + 1e-12  # the base level is one of the levels
        if gp[j] < 0.5:  # seed 004 Lemma 3
            assert inc[j] == pytest.approx(gp[j])
    prec = M.precision(orig, gen, hs)
    assert 0 <= prec <= 1 and (prec == 1) == bool((gen == orig).all())
