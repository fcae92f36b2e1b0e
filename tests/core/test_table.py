"""Table encoding: encode/decode, equivalence classes, row keys, missing values,
generalised tables, apply_codes, count columns."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from hieranon.core.table import (
    DataError,
    EncodedTable,
    apply_codes,
    class_sizes_of_rows,
    decode,
    encode,
    encode_generalised,
    group,
    row_counts,
    row_keys,
)
from hieranon.core.tree import HierarchyError
from hieranon.hierarchies import readers as H

QIS = ["Gender", "Age", "Postcode"]
ADULT_QIS = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex",
             "native-country", "salary-class"]


def brute_classes(codes: np.ndarray, counts=None) -> dict[tuple, tuple[list[int], int]]:
    """Tuple -> (member rows, size) by a plain Python dict."""
    members = defaultdict(list)
    for i, row in enumerate(map(tuple, codes.tolist())):
        members[row].append(i)
    w = np.ones(len(codes), dtype=int) if counts is None else counts
    return {k: (v, int(sum(w[i] for i in v))) for k, v in members.items()}


def assert_classes_match(codes: np.ndarray, counts=None) -> None:
    ec = group(codes, counts)
    want = brute_classes(codes, counts)
    assert ec.n_classes == len(want)
    got = {}
    for c, rows in enumerate(ec.members()):
        key = tuple(ec.keys[c].tolist())
        assert key not in got
        got[key] = (rows.tolist(), int(ec.sizes[c]))
        assert np.all(ec.row_class[rows] == c)
    assert got == want


# ------------------------------------------------------------------ encode / decode
def test_encode_decode_small_table(seed000_table1a, paper_hierarchies):
    t = encode(seed000_table1a, QIS, paper_hierarchies)
    assert isinstance(t, EncodedTable)
    assert t.codes.shape == (6, 3) and t.codes.dtype == np.int32
    assert t.qi_names == QIS and t.n_rows == 6 and t.n_records == 6
    assert [h.name for h in t.hierarchies] == QIS
    # every code is a leaf carrying the cell's label
    for j, (q, h) in enumerate(zip(QIS, t.hierarchies)):
        assert h.is_leaf[t.codes[:, j]].all()
        assert [h.labels[c] for c in t.codes[:, j]] == list(seed000_table1a[q])
    back = decode(t.codes, t.hierarchies, t.qi_names)
    assert list(back.columns) == QIS
    pd.testing.assert_frame_equal(back.astype(str), seed000_table1a[QIS].astype(str))
    # equal values get equal codes
    assert t.codes[0, 2] == t.codes[1, 2] and t.codes[2, 2] != t.codes[3, 2]
    assert t.column("Age") == 1
    with pytest.raises(DataError, match="'Problem'"):
        t.column("Problem")


def test_encode_hierarchies_as_list_and_errors(seed000_table1a, paper_hierarchies):
    as_list = encode(seed000_table1a, QIS, [paper_hierarchies[q] for q in QIS])
    as_map = encode(seed000_table1a, QIS, paper_hierarchies)
    np.testing.assert_array_equal(as_list.codes, as_map.codes)
    with pytest.raises(DataError, match="no quasi-identifiers"):
        encode(seed000_table1a, [], paper_hierarchies)
    with pytest.raises(DataError, match=r"twice.*'Age'"):
        encode(seed000_table1a, ["Age", "Gender", "Age"], paper_hierarchies)
    with pytest.raises(DataError, match=r"'Town'.*not in the table"):
        encode(seed000_table1a, ["Gender", "Town"], paper_hierarchies)
    with pytest.raises(DataError, match=r"no hierarchy.*'Problem'"):
        encode(seed000_table1a, ["Gender", "Problem"], paper_hierarchies)
    with pytest.raises(DataError, match="3 quasi-identifiers but 2 hierarchies"):
        encode(seed000_table1a, QIS, [paper_hierarchies["Gender"], paper_hierarchies["Age"]])
    swapped = [paper_hierarchies[q] for q in QIS[::-1]]  # the same hierarchies, another order
    with pytest.raises(DataError, match=rf"place of quasi-identifier '{QIS[0]}' is that of '{QIS[-1]}'.*by position"):
        encode(seed000_table1a, QIS, swapped)


def test_encode_numeric_columns():
    h = H.intervals("age", range(0, 100), [5, 10])
    df = pd.DataFrame({"age": [39, 50, 39, 7]})
    t = encode(df, ["age"], {"age": h})
    assert [h.labels[c] for c in t.codes[:, 0]] == ["39", "50", "39", "7"]
    # an integer column read as float (e.g. it had a gap elsewhere) decodes the same
    t2 = encode(df.astype(float), ["age"], {"age": h})
    np.testing.assert_array_equal(t.codes, t2.codes)


@pytest.fixture(scope="module")
def adult(adult_path):
    from hieranon.io.datasets import load_adult
    return load_adult(adult_path)


def test_encode_decode_all_adult_records(adult):
    df = adult.frame
    assert len(df) == 45222
    t = encode(df, ADULT_QIS, adult.hierarchies)
    assert t.codes.shape == (45222, 9)
    back = decode(t.codes, t.hierarchies, t.qi_names)
    for q in ADULT_QIS:
        assert (back[q].to_numpy() == df[q].astype(str).to_numpy()).all(), q
    # the age column is integer in the frame and still decodes as its string form
    assert df["age"].dtype.kind == "i"
    assert back["age"].iloc[0] == str(df["age"].iloc[0])
    # the classes of the full QI agree with pandas' group-by
    ec = group(t.codes)
    by_pandas = df.groupby(ADULT_QIS, sort=False).size()
    assert ec.n_classes == len(by_pandas)
    assert sorted(ec.sizes.tolist()) == sorted(by_pandas.tolist())
    assert ec.sizes.sum() == 45222


# ------------------------------------------------------------------ classes
def test_group_classes_sizes_members(seed000_table1a, paper_hierarchies):
    t = encode(seed000_table1a, QIS, paper_hierarchies)
    ec = group(t.codes)
    # Table 1a: rows 0 and 1 (male, middle, 4350) and 4, 5 (female, old, 4353) are classes of 2
    assert ec.n_classes == 4
    assert sorted(ec.sizes.tolist()) == [1, 1, 2, 2]
    members = sorted(m.tolist() for m in ec.members())
    assert members == [[0, 1], [2], [3], [4, 5]]
    assert ec.row_class[0] == ec.row_class[1] and ec.row_class[4] == ec.row_class[5]
    assert len({ec.row_class[0], ec.row_class[2], ec.row_class[3], ec.row_class[4]}) == 4
    np.testing.assert_array_equal(class_sizes_of_rows(t.codes), [2, 2, 1, 1, 2, 2])
    # generalising Gender makes rows 2 and 3 (young, 4351/4352) still different, Postcode too: one class
    g = t.codes.copy()
    g[:, 0] = 0
    g[:, 2] = t.hierarchies[2].ancestor_at_depth(g[:, 2], 1)  # 4***
    np.testing.assert_array_equal(class_sizes_of_rows(g), [2, 2, 2, 2, 2, 2])
    assert_classes_match(g)


def test_group_with_counts():
    codes = np.array([[1, 2], [3, 4], [1, 2], [5, 6], [3, 4]], dtype=np.int32)
    counts = np.array([3, 1, 4, 2, 10])
    ec = group(codes, counts)
    sizes = {tuple(k): int(s) for k, s in zip(ec.keys.tolist(), ec.sizes)}
    assert sizes == {(1, 2): 7, (3, 4): 11, (5, 6): 2}
    assert ec.sizes.dtype == np.int64
    np.testing.assert_array_equal(class_sizes_of_rows(codes, counts), [7, 11, 7, 2, 11])
    assert_classes_match(codes, counts)


def test_group_random_against_dict():
    rng = np.random.default_rng(7)
    for n, m, hi in [(1, 1, 3), (50, 3, 3), (400, 5, 4), (1000, 2, 40), (0, 3, 5)]:
        codes = rng.integers(0, hi, size=(n, m)).astype(np.int32)
        counts = rng.integers(1, 5, size=n)
        assert_classes_match(codes)
        assert_classes_match(codes, counts)


def test_row_keys_mixed_radix_overflow():
    """12 columns of 300 distinct values: 300**12 does not fit in int64, so the
    partial key is re-ranked on the way."""
    rng = np.random.default_rng(12)
    n, m, d = 3000, 12, 300
    assert d**m > 2**63
    codes = np.stack([rng.permutation(np.resize(np.arange(d) * 7 + 1000, n)) for _ in range(m)], axis=1)
    codes = codes.astype(np.int32)
    # duplicate some rows and make some rows differ only in the last column
    codes[100:150] = codes[0:50]
    codes[200:210] = codes[300:310]
    codes[200:210, -1] = np.where(codes[300:310, -1] == 1000, 1007, 1000)
    assert all(len(np.unique(codes[:, j])) == d for j in range(m))
    key = row_keys(codes)
    assert key.dtype == np.int64 and key.shape == (n,)
    _, want = np.unique(codes, axis=0, return_inverse=True)
    want = want.ravel()
    # equal keys exactly for equal rows
    pairs = rng.integers(0, n, size=(20000, 2))
    pairs = np.vstack([pairs, np.column_stack([np.arange(100, 150), np.arange(0, 50)]),
                       np.column_stack([np.arange(200, 210), np.arange(300, 310)])])
    same_row = want[pairs[:, 0]] == want[pairs[:, 1]]
    same_key = key[pairs[:, 0]] == key[pairs[:, 1]]
    np.testing.assert_array_equal(same_key, same_row)
    assert same_row.sum() >= 50  # the duplicates are there
    assert len(np.unique(key)) == len(np.unique(want))
    assert_classes_match(codes)
    ec = group(codes)
    assert ec.n_classes == n - 50

    # Two rows whose rank digits differ by the balanced base-300 digits of 2**64:
    # a wrapped-around int64 mixed-radix key would give both the same key.
    target, delta = 2**64, []
    for _ in range(m):
        r = target % d
        if r > d // 2:
            r -= d
        delta.append(r)
        target = (target - r) // d
    assert target == 0
    delta = np.array(delta[::-1])  # most significant first
    ranks_a = np.full(m, d // 2)
    ranks_b = ranks_a + delta
    assert (ranks_b >= 0).all() and (ranks_b < d).all() and (delta != 0).any()
    codes[0] = ranks_a * 7 + 1000
    codes[1] = ranks_b * 7 + 1000
    wrapped = np.zeros(2, dtype=np.int64)
    with np.errstate(over="ignore"):
        for j in range(m):
            wrapped = wrapped * np.int64(d) + np.array([ranks_a[j], ranks_b[j]], dtype=np.int64)
    assert wrapped[0] == wrapped[1]  # the trap is real
    key = row_keys(codes)
    assert key[0] != key[1]
    assert group(codes).row_class[0] != group(codes).row_class[1]


def test_row_keys_many_columns_differing_in_first():
    """40 columns of 300 values: the first column's weight 300**39 is 0 modulo
    2**64, so rows differing only there must still get different keys."""
    rng = np.random.default_rng(40)
    n, m, d = 900, 40, 300
    codes = np.stack([rng.permutation(np.resize(np.arange(d), n)) for _ in range(m)], axis=1)
    codes[1, 1:] = codes[0, 1:]
    codes[2] = codes[0]
    assert codes[0, 0] != codes[1, 0]
    key = row_keys(codes)
    assert key[0] != key[1] and key[0] == key[2]
    assert_classes_match(codes)


@pytest.mark.parametrize("dtype,lo,hi", [(np.int32, 0, 40), (np.int32, 1000, 1300), (np.int8, -100, 100),
                                         (np.int64, -(2**40), 2**40), (np.uint64, 0, 2**64 - 1),
                                         (np.float64, -5, 5), (bool, 0, 1)])
def test_row_keys_equal_the_sorted_rank_keys(dtype, lo, hi):
    """Columns of a small integer range are ranked by a lookup table, others by
    sorting; either way the key is the mixed-radix number of the sorted ranks."""
    rng = np.random.default_rng(7)
    codes = rng.integers(lo, hi, size=(500, 4), endpoint=True, dtype=np.uint64 if dtype == np.uint64 else np.int64)
    codes = codes.astype(dtype)
    want = np.zeros(len(codes), dtype=np.int64)
    for j in range(codes.shape[1]):
        uniq, inv = np.unique(codes[:, j], return_inverse=True)
        want = want * len(uniq) + inv.ravel()
    key = row_keys(codes)
    assert key.dtype == np.int64
    np.testing.assert_array_equal(key, want)


def test_row_keys_shapes():
    assert row_keys(np.zeros((4, 0), dtype=np.int32)).tolist() == [0, 0, 0, 0]
    with pytest.raises(ValueError):
        row_keys(np.zeros(4, dtype=np.int32))
    codes = np.array([[2, 1], [1, 2], [2, 1]])
    k = row_keys(codes)
    assert k[0] == k[2] and k[0] != k[1]


# ------------------------------------------------------------------ missing values
@pytest.mark.parametrize("bad", [np.nan, None, "", "  "])
def test_missing_qi_cell_names_column(paper_hierarchies, bad):
    df = pd.DataFrame({"Gender": ["male", "female", "male"], "Age": ["young", bad, "old"]})
    with pytest.raises(DataError, match=r"column 'Age'.*1 missing.*in record 2 \(data row index 1\)") as err:
        encode(df, ["Gender", "Age"], paper_hierarchies)
    # the value is named as the frame holds it (an empty cell '' / nan / None, a blank '  '): pandas 3 stores
    # a None of a text column as nan
    assert repr(df.loc[1, "Age"]) in str(err.value)
    t = encode(df, ["Gender", "Age"], paper_hierarchies, missing="root")
    h = paper_hierarchies["Age"]
    assert t.codes[1, 1] == 0 and h.labels[0] == "*"
    assert [h.labels[c] for c in t.codes[[0, 2], 1]] == ["young", "old"]
    assert decode(t.codes, t.hierarchies, t.qi_names)["Age"].tolist() == ["young", "*", "old"]


def test_missing_in_numeric_column():
    h = H.intervals("age", range(0, 100), [5, 10])
    df = pd.DataFrame({"age": [39.0, np.nan, 41.0]})
    with pytest.raises(DataError, match="'age'"):
        encode(df, ["age"], {"age": h})
    t = encode(df, ["age"], {"age": h}, missing="root")
    assert [h.labels[c] for c in t.codes[:, 0]] == ["39", "*", "41"]


# ------------------------------------------------------------------ generalised tables
def test_encode_generalised(seed000_table1a, paper_hierarchies):
    t = encode(seed000_table1a, QIS, paper_hierarchies)
    anon = seed000_table1a.copy()
    # seed 000 Table 1b: KACA1's output
    anon["Gender"] = ["male", "male", "*", "*", "female", "female"]
    anon["Postcode"] = ["4350", "4350", "435*", "435*", "4353", "4353"]
    got = encode_generalised(t, anon)
    hp = paper_hierarchies["Postcode"]
    assert got.shape == t.codes.shape
    np.testing.assert_array_equal(got[:, 1], t.codes[:, 1])  # Age untouched
    assert list(got[:, 0]) == list(t.codes[:2, 0]) + [0, 0] + list(t.codes[4:, 0])
    assert hp.labels[got[2, 2]] == "435*" and got[2, 2] == got[3, 2]
    assert got[2, 2] == hp.lca(t.codes[2, 2], t.codes[3, 2])
    np.testing.assert_array_equal(decode(got, t.hierarchies, t.qi_names).astype(str), anon[QIS].astype(str))

    bad = anon.copy()
    bad.loc[0, "Postcode"] = "436*"   # not an ancestor of 4350
    bad.loc[1, "Gender"] = "female"   # a sibling, not an ancestor
    bad.loc[2, "Age"] = np.nan        # missing
    got = encode_generalised(t, bad)
    assert got[0, 2] == -1 and got[1, 0] == -1 and got[2, 1] == -1
    assert (np.delete(got.ravel(), [0 * 3 + 2, 1 * 3 + 0, 2 * 3 + 1]) >= 0).all()


def test_encode_generalised_numbers_and_errors():
    h = H.intervals("age", range(0, 100), [5, 10])
    t = encode(pd.DataFrame({"age": [39, 41, 39]}), ["age"], {"age": h})
    out = encode_generalised(t, pd.DataFrame({"age": [39, "[40, 45)", "[35, 40)"]}))
    assert [h.labels[c] for c in out[:, 0]] == ["39", "[40, 45)", "[35, 40)"]
    out = encode_generalised(t, pd.DataFrame({"age": [39.0, 41.0, 40.0]}))
    assert list(out[:2, 0]) == list(t.codes[:2, 0]) and out[2, 0] == -1
    with pytest.raises(DataError, match="2 rows.*3"):
        encode_generalised(t, pd.DataFrame({"age": [39, 41]}))
    with pytest.raises(DataError, match="'age'"):
        encode_generalised(t, pd.DataFrame({"years": [39, 41, 39]}))


def test_apply_codes_keeps_other_columns_and_order(seed000_table1a, paper_hierarchies):
    df = seed000_table1a.copy()
    df.index = [60, 50, 40, 30, 20, 10]
    df["n"] = np.arange(6, dtype=np.int64)
    df = df[["n", "Gender", "Problem", "Age", "Postcode"]]
    t = encode(df, QIS, paper_hierarchies)
    codes = t.codes.copy()
    codes[2:4, 0] = 0
    codes[2:4, 2] = paper_hierarchies["Postcode"].lca(t.codes[2, 2], t.codes[3, 2])
    out = apply_codes(df, t, codes)
    assert list(out.columns) == list(df.columns) and list(out.index) == list(df.index)
    pd.testing.assert_series_equal(out["Problem"], df["Problem"])
    pd.testing.assert_series_equal(out["n"], df["n"])
    pd.testing.assert_series_equal(out["Age"], df["Age"])  # untouched column keeps its dtype
    assert out["Gender"].tolist() == ["male", "male", "*", "*", "female", "female"]
    assert out["Postcode"].tolist() == ["4350", "4350", "435*", "435*", "4353", "4353"]
    assert df["Gender"].tolist()[2] == "male"  # the input is not modified
    np.testing.assert_array_equal(encode_generalised(t, out), codes)


def test_apply_codes_keeps_numeric_dtype_when_unchanged():
    h = H.intervals("age", range(0, 100), [5, 10])
    df = pd.DataFrame({"age": [39, 41], "x": ["a", "b"]})
    t = encode(df, ["age"], {"age": h})
    assert apply_codes(df, t, t.codes)["age"].dtype == df["age"].dtype
    g = t.codes.copy()
    g[:, 0] = h.ancestor_at_depth(g[:, 0], 1)
    assert apply_codes(df, t, g)["age"].tolist() == ["[30, 40)", "[40, 50)"]


# ------------------------------------------------------------------ counts
def test_count_column(paper_hierarchies):
    df = pd.DataFrame({"Gender": ["male", "female", "male"], "n": [3, 1, 4]})
    t = encode(df, ["Gender"], paper_hierarchies, counts="n")
    assert t.counts.tolist() == [3, 1, 4] and t.counts.dtype == np.int64 and t.n_records == 8
    assert sorted(group(t.codes, t.counts).sizes.tolist()) == [1, 7]
    t = encode(df, ["Gender"], paper_hierarchies, counts=np.array([2, 2, 2]))
    assert t.n_records == 6
    assert encode(df, ["Gender"], paper_hierarchies).counts.tolist() == [1, 1, 1]
    assert row_counts(df.assign(n=[3.0, 1.0, 2.0]), "n").tolist() == [3, 1, 2]


@pytest.mark.parametrize("values, shown", [
    (["3", "x", "1"], "record 2 \\(data row index 1\\) has 'x'"),
    ([3, 0, 1], "record 2 \\(data row index 1\\) has 0"),
    ([3, 1, -2], "record 3 \\(data row index 2\\) has -2"),
    ([2.5, 1, 1], "record 1 \\(data row index 0\\) has 2.5"),
    ([1, None, 1], "record 2 \\(data row index 1\\)"),
])
def test_count_column_errors(values, shown):
    df = pd.DataFrame({"Gender": ["male", "female", "male"], "n": values})
    with pytest.raises(DataError, match=rf"count column 'n': {shown}.*whole numbers >= 1"):
        row_counts(df, "n")


def test_count_errors_other(paper_hierarchies):
    df = pd.DataFrame({"Gender": ["male", "female", "male"]})
    with pytest.raises(DataError, match=r"count column.*'weight'.*not in the table"):
        encode(df, ["Gender"], paper_hierarchies, counts="weight")
    with pytest.raises(DataError, match="one whole number >= 1 per row"):
        row_counts(df, np.array([1, 2]))
    with pytest.raises(DataError, match="one whole number >= 1 per row"):
        row_counts(df, np.array([1, 0, 2]))


def test_hierarchy_error_is_not_swallowed_as_wrong_type(paper_hierarchies):
    # DataError from encode wraps the hierarchy's message (attribute and value)
    df = pd.DataFrame({"Postcode": ["4350", "9999"]})
    with pytest.raises(DataError, match=r"'Postcode'.*'9999'") as info:
        encode(df, ["Postcode"], paper_hierarchies)
    assert not isinstance(info.value, HierarchyError)


def test_encode_generalised_table_reads_inner_nodes():
    from hieranon.core.table import DataError, encode
    from hieranon.hierarchies import readers as H

    h = H.masking("pc", ["4350", "4351", "4360"])
    df = pd.DataFrame({"pc": ["4350", "435*", "43**", "*"]})
    with pytest.raises(DataError, match="435"):
        encode(df, ["pc"], [h])  # leaves only by default
    codes = encode(df, ["pc"], [h], generalised=True).codes[:, 0]
    assert [h.labels[c] for c in codes] == ["4350", "435*", "43**", "*"]
    assert h.depth[codes].tolist() == [4, 3, 2, 0]
    with pytest.raises(DataError, match=r"'4\*\*\*x'"):
        encode(pd.DataFrame({"pc": ["4***x"]}), ["pc"], [h], generalised=True)


def test_ambiguous_inner_label_is_refused():
    from hieranon.core.tree import HierarchyError
    from hieranon.hierarchies import readers as H

    h = H.from_paths("a", [["x", "g", "*"], ["y", "g2", "*"], ["z", "z", "*"]])  # 'z' along one chain: one set
    assert h.labels[h.node_of_label("z")] == "z" and h.depth[h.node_of_label("z")] == 2  # the leaf wins
    with pytest.raises(HierarchyError, match="'g'.*line 1.*line 2"):  # 'g' names two different sets of values
        H.from_paths("b", [["x", "g", "k", "*"], ["y", "h", "g", "*"]])


def test_generalised_text_qi_has_the_dtype_pandas_gives_text():
    """Every text column of the output, generalised or not, has the dtype
    pandas gives text (``str`` from pandas 3 on, ``object`` before): the one
    reading the written table back gives, whichever cells were generalised."""
    import hieranon

    df = pd.DataFrame({"x": ["a", "b", "a", "b"], "y": ["p"] * 4})
    hs = {"x": H.suppression("x", ["a", "b"]), "y": H.suppression("y", ["p"])}
    r = hieranon.anonymize(df, ["x", "y"], hs, k=4, method="kaca1")
    assert r.data["x"].tolist() == ["*"] * 4 and r.data["y"].tolist() == ["p"] * 4
    assert r.data["x"].dtype == r.data["y"].dtype == pd.Series(["*"]).dtype


def test_missing_cells_stay_missing_unless_their_class_has_a_suppressed_cell():
    """With missing='root', an empty or NaN cell is the root. It stays empty
    ("was missing") when every cell of its class in that column was missing;
    in a class where the column also has suppressed values it prints '*' like
    them, so that a checker grouping the printed output finds the same
    classes as the verifier."""
    import hieranon

    df = pd.DataFrame({"x": ["", None, None, None], "y": ["a", "a", "a", "a"]})
    hs = {"x": H.suppression("x", ["a"]), "y": H.suppression("y", ["a"])}
    r = hieranon.anonymize(df, ["x", "y"], hs, k=2, missing="root", method="kaca1")
    # a missing cell is the column's own missing marker (None in an object column, nan in pandas 3's str)
    assert r.data["x"].isna().tolist() == [False, True, True, True] and r.data["x"][0] == ""
    assert r.data["y"].tolist() == ["a"] * 4
    df = pd.DataFrame({"x": ["a", None, "b", None, "c", "c"], "y": ["p", "p", "p", "q", "q", "q"]})
    hs = {"x": H.suppression("x", ["a", "b", "c"]), "y": H.suppression("y", ["p", "q"])}
    for method in ("kaca1", "fulldomain"):
        r = hieranon.anonymize(df, ["x", "y"], hs, k=3, missing="root", method=method)
        printed = r.data.fillna("(empty)").groupby(["x", "y"]).size()
        assert int(printed.min()) >= 3, method
        mixed = r.data["x"].isna() & (r.data.groupby("y")["x"].transform(lambda c: (c == "*").any()))
        assert not mixed.any(), method


def test_integer_column_names():
    import hieranon

    df = pd.DataFrame({0: ["1", "2", "1", "2"], 1: list("abab")})
    hs = {0: H.suppression(0, ["1", "2"]), 1: H.suppression(1, ["a", "b"])}
    r = hieranon.anonymize(df, [0, 1], hs, k=2, method="kaca1")
    assert int(r.data.groupby([0, 1]).size().min()) >= 2


def test_integer_column_names_take_hierarchies_built_from_the_data():
    """A column named by an integer is named by that integer everywhere,
    builders included (they looked for the text '0': "no column '0'")."""
    import hieranon

    df = pd.DataFrame({0: [20 + i % 4 for i in range(12)], 1: list("ab") * 6})
    r = hieranon.anonymize(df, [0], {0: "intervals:5,10"}, 2, insensitive=[1])
    assert list(r.data.columns) == [0, 1] and int(r.data.groupby(0, observed=True).size().min()) >= 2


def test_a_text_name_for_an_integer_column_says_which_column_and_how_to_rename():
    import hieranon

    df = pd.DataFrame({0: [20 + i % 4 for i in range(12)], 1: list("ab") * 6})
    for hs in ({"0": "intervals:5,10"}, {"0": H.intervals("0", list(range(20, 24)), [5, 10])}):
        with pytest.raises(DataError) as info:
            hieranon.anonymize(df, None, hs, 2)
        message = str(info.value)
        assert "\n" not in message and "['0'] not in the table" in message
        assert "the int 0, not the text '0'" in message and "df.columns = df.columns.astype(str)" in message


def test_multiindex_columns_are_refused_saying_how_to_flatten_them():
    import hieranon

    df = pd.DataFrame([[20 + i % 4, "ab"[i % 2]] for i in range(12)])
    df.columns = pd.MultiIndex.from_tuples([("a", "age"), ("b", "sex")])
    for qis, hs in ((None, {("a", "age"): "intervals:5,10"}), (None, {"a": "intervals:5,10"}),
                    (["a"], [H.intervals("a", list(range(20, 24)), [5, 10])])):
        with pytest.raises(DataError) as info:
            hieranon.anonymize(df, qis, hs, 2)
        message = str(info.value)
        assert "MultiIndex" in message and "one level of names" in message and "\n" not in message
