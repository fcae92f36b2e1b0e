"""Special uniques: minimal sample uniques, SUDA and DIS-SUDA scores."""
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hieranon.evaluation import suda as S

#: Four sample uniques whose MSUs are worked out by hand, then a pair.
#: r0: its value x of the 2nd attribute is unique -> MSU {1};
#: r1: (a, y) on the first two -> MSU {0, 1} (a, y and 1 alone are shared, so are (a, 1), (y, 1));
#: r2: (b, 1) on the 1st and 3rd -> MSU {0, 2};  r3: its value 2 of the 3rd -> MSU {2};
#: r4, r5: the same record twice, unique nowhere.
TABLE = np.array([[0, 0, 0], [0, 1, 0], [1, 1, 0], [1, 1, 1], [2, 2, 2], [2, 2, 2]])


def test_msus_by_hand():
    msus = S.minimal_sample_uniques(TABLE, max_size=3)
    assert msus.tolist() == [[1, 0, 0], [0, 1, 0], [0, 1, 0], [1, 0, 0], [0, 0, 0], [0, 0, 0]]


def test_scores_by_hand():
    """3 QIs, every size searched: an MSU of size k scores (3 - k)! as in sdcMicro
    (2 for size 1, 1 for size 2). DIS with F = 0.1: U = 4 uniques, P = 2 records in
    pairs, Dis = 0.4 / (0.4 + 2 * 0.9) = 2/11; Q = 1 + 5/20 = 1.25;
    sum s^-Q = 2 * 2^-1.25 + 2; U/Dis - U = 22 - 4 = 18."""
    report, scores, dis = S.special_uniques(TABLE, max_size=3, dis=0.1)
    assert scores.tolist() == [2, 1, 1, 2, 0, 0]
    adjust = 2 * 2 ** -1.25 + 2
    expect = [1 / (1 + 18 / (s ** 1.25 * adjust)) for s in (2, 1, 1, 2)] + [0, 0]
    assert dis == pytest.approx(expect)
    assert report.records_with_msu == 4 and report.msus_by_size == {1: 2, 2: 2, 3: 0}
    assert report.highest_dis_suda == pytest.approx(expect[0])
    assert sum(b["records"] for b in report.dis_suda_distribution) == 6
    assert report.dis_suda_distribution[0] == {"scores": "== 0", "records": 2}


def test_max_size_limits_the_search_and_the_scores():
    """Up to size 1 among 3 QIs: only r0 and r3 have an MSU, scoring prod_{i=1}^{1} (3 - i) = 2."""
    report, scores, _ = S.special_uniques(TABLE, max_size=1)
    assert scores.tolist() == [2, 0, 0, 2, 0, 0] and report.max_size == 1 and report.dis_assumed


def test_counts_make_a_row_of_two_records_unique_nowhere():
    msus = S.minimal_sample_uniques(TABLE[:4], counts=[1, 1, 1, 2], max_size=3)
    assert msus[3].sum() == 0
    # r2 (b, y, 1) now shares (b, y) with r3 only: its MSU {0, 2} holds, (b, 1) is still its own
    assert msus[2].tolist() == [0, 1, 0]


def _brute_force(table, counts, max_size):
    """MSUs of each row by the definition: a set of attributes on which the row's
    values belong to one record only, no proper subset of which does."""
    n, m = table.shape
    out = np.zeros((n, min(max_size, m)), dtype=int)

    def unique(r, attrs):
        key = tuple(table[r, list(attrs)])
        return sum(counts[i] for i in range(n) if tuple(table[i, list(attrs)]) == key) == 1

    for r in range(n):
        for k in range(1, min(max_size, m) + 1):
            for attrs in combinations(range(m), k):
                if unique(r, attrs) and not any(unique(r, sub) for j in range(1, k)
                                                for sub in combinations(attrs, j)):
                    out[r, k - 1] += 1
    return out


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 5).flatmap(lambda m: st.tuples(
    st.lists(st.lists(st.integers(0, 2), min_size=m, max_size=m), min_size=1, max_size=14),
    st.integers(1, 5), st.lists(st.sampled_from([1, 1, 1, 2]), min_size=14, max_size=14))))
def test_msus_match_a_brute_force_search(case):
    rows, max_size, counts = case
    table = np.array(rows)
    counts = counts[:len(rows)]
    got = S.minimal_sample_uniques(table, counts=counts, max_size=max_size)
    assert got.tolist() == _brute_force(table, counts, max_size).tolist()


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="suda_max_size"):
        S.check_max_size(0)
    with pytest.raises(ValueError, match="dis"):
        S.special_uniques(TABLE, dis=0)
