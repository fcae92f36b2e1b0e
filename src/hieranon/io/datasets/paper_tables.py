"""The small worked-example tables of Arca & Hewett (Arca & Hewett, HeuristicMin),
typed from the paper, with their taxonomy trees.

Used by the tests (``tests/algorithms/test_heuristicmin.py``, ``test_mingen.py``,
``test_tds_bug.py``) and by experiment 4 of ``hieranon experiments``, which
regenerates the paper's comparison tables from them.

Every table is a DataFrame of distinct rows with a ``count`` column (records
per row); a paper row with two classes ("A, B" with counts "2, 3") is two
input rows.
"""

from __future__ import annotations

import pandas as pd

from ...core.requirements import Requirement
from ...hierarchies import readers as H

__all__ = ["arca_hewett_figure4", "arca_hewett_case1", "arca_hewett_case2", "arca_hewett_case3", "FIGURE_16A",
           "FIGURE_19", "T1", "T9", "T10"]


def arca_hewett_figure4():
    """Figure 4 / 6(a) table T with Figure 3's taxonomies, R = <{edu,sex,hrs},4>
    (Arca & Hewett Sec. 4.3). Returns ``(df, hierarchies)``."""
    df = pd.DataFrame({
        "edu": ["10th", "10th", "9th", "9th", "9th", "12th", "12th"],
        "sex": ["M", "M", "M", "F", "F", "F", "F"],
        "hrs": [40, 30, 30, 30, 40, 30, 40],
        "count": [20, 4, 2, 4, 6, 2, 2],
    })
    hs = {
        "edu": H.from_mapping("edu", {"Any": {"Secondary": {"High": ["9th", "10th", "11th", "12th"]}}}),
        "sex": H.from_mapping("sex", {"Any": ["M", "F"]}),
        "hrs": H.from_mapping("hrs", {"Any": {"[1,40)": ["30"], "[40,99)": ["40"]}}),
    }
    return df, hs


#: HeuristicMin's (and AllMin's) result on Figure 4: T1 (Figure 10(b)), rows as (edu, sex, hrs, records)
T1 = {("High", "M", "40", 20), ("High", "M", "30", 6), ("High", "F", "30", 6), ("High", "F", "40", 8)}
#: MinGen's preferred minimal table T9 (Figure 6(c) / 10(a)) and the equally minimal T10 (Figure 6(d))
T9 = {("10th", "M", "40", 20), ("High", "M", "30", 6), ("9th", "F", "30", 4), ("9th", "F", "40", 6),
      ("12th", "F", "Any", 4)}
T10 = {("10th", "M", "40", 20), ("10th", "M", "30", 4), ("9th", "Any", "30", 6), ("9th", "F", "40", 6),
       ("12th", "F", "Any", 4)}


def arca_hewett_case1():
    """Figure 11(a): Figure 4's table with 8th for 12th and a class column."""
    df = pd.DataFrame({
        "edu": ["10th", "10th", "9th", "9th", "9th", "8th", "8th"],
        "sex": ["M", "M", "M", "F", "F", "F", "F"],
        "hrs": [40, 30, 30, 30, 40, 30, 40],
        "cls": ["A", "B", "B", "B", "B", "B", "B"],
        "count": [20, 4, 2, 4, 6, 2, 2],
    })
    hs = {
        "edu": H.from_mapping("edu", {"Any": {"Secondary": {"High": ["8th", "9th", "10th", "11th", "12th"]}}}),
        "sex": H.from_mapping("sex", {"Any": ["M", "F"]}),
        "hrs": H.from_mapping("hrs", {"Any": {"[1,40)": ["30"], "[40,99)": ["40"]}}),
    }
    return df, hs


def arca_hewett_case2():
    """Figure 13(a) (Fung et al.'s running example) with Figure 12's taxonomies
    (Arca & Hewett Case 2); a row with two classes is two input rows. Hours
    is unbalanced: 37, 42, 44 sit directly under [37-99), 30 and 32 under
    [1-35), 35 under [35-37). Returns ``(df, hierarchies, requirements)``."""
    rows = [("9th", "M", 30, "B", 3), ("10th", "M", 32, "B", 4), ("11th", "M", 35, "A", 2),
            ("11th", "M", 35, "B", 3), ("12th", "F", 37, "A", 3), ("12th", "F", 37, "B", 1),
            ("Bachelors", "F", 42, "A", 4), ("Bachelors", "F", 42, "B", 2), ("Bachelors", "F", 44, "A", 4),
            ("Masters", "M", 44, "A", 4), ("Masters", "F", 44, "A", 3), ("Doctorate", "F", 44, "A", 1)]
    df = pd.DataFrame(rows, columns=["edu", "sex", "hrs", "cls", "count"])
    hs = {
        "edu": H.from_mapping("edu", {"ANY": {"Secondary": {"Junior": ["9th", "10th"], "Senior": ["11th", "12th"]},
                                              "University": {"Bachelors": [], "Grad": ["Masters", "Doctorate"]}}}),
        "sex": H.from_mapping("sex", {"ANY": ["M", "F"]}),
        "hrs": H.from_mapping("hrs", {"[1-99)": {"[1-37)": {"[1-35)": ["30", "32"], "[35-37)": ["35"]},
                                                 "[37-99)": ["37", "42", "44"]}}),
    }
    reqs = [Requirement(("edu", "sex"), 4), Requirement(("sex", "hrs"), 11)]
    return df, hs, reqs


#: Figure 16(a): TDS's and (per the paper) HeuristicMin's result on Case 2, rows as (edu, sex, hrs, records)
FIGURE_16A = {("Junior", "ANY", "[1-37)", 7), ("11th", "ANY", "[1-37)", 5), ("12th", "ANY", "[37-99)", 4),
              ("Bachelors", "ANY", "[37-99)", 10), ("Grad", "ANY", "[37-99)", 8)}


def arca_hewett_case3():
    """Case 3 (Walmart job applications), R = <{app, sex}, 25>.

    The paper prints the input (Figure 17) only as an image; this table is
    **reconstructed** from the three result tables of Figure 19 and the counts
    in the text ([(Rej,M),25] rows 6,10; [(Rej,F),25] rows 7-9; [(Acc,F),24]
    rows 1-3; [(Acc,M),9] rows 4-5), which pin every row down. The age
    taxonomy (``Any -> [0,40) / [40,99) -> ages``) is the one TDS's result
    implies and that gives the printed precisions (TDS 0.5, HM and BUG 0.67).
    Returns ``(df, hierarchies, requirements)``.
    """
    rows = [("Acc", "F", 30, "A", 5), ("Acc", "F", 20, "A", 16), ("Acc", "F", 40, "A", 3), ("Acc", "M", 25, "B", 4),
            ("Acc", "M", 30, "B", 5), ("Rej", "M", 30, "B", 10), ("Rej", "F", 30, "A", 15), ("Rej", "F", 50, "A", 5),
            ("Rej", "F", 20, "A", 5), ("Rej", "M", 70, "B", 15)]
    df = pd.DataFrame(rows, columns=["app", "sex", "age", "cls", "count"])
    hs = {
        "app": H.from_mapping("app", {"Any": ["Acc", "Rej"]}),
        "sex": H.from_mapping("sex", {"Any": ["M", "F"]}),
        "age": H.from_mapping("age", {"Any": {"[0,40)": ["20", "25", "30"], "[40,99)": ["40", "50", "70"]}}),
    }
    return df, hs, [Requirement(("app", "sex"), 25)]


#: Figure 19's printed results on Case 3, rows as (app, sex, age, records)
FIGURE_19 = {
    "tds": {("Any", "F", "[0,40)", 41), ("Any", "F", "[40,99)", 8), ("Any", "M", "[0,40)", 19),
            ("Any", "M", "[40,99)", 15)},
    "bug": {("Any", "F", "30", 20), ("Any", "F", "20", 21), ("Any", "F", "40", 3), ("Any", "M", "25", 4),
            ("Any", "M", "30", 15), ("Any", "F", "50", 5), ("Any", "M", "70", 15)},
    "heuristicmin": {("Acc", "Any", "30", 10), ("Acc", "Any", "20", 16), ("Acc", "Any", "40", 3),
                     ("Acc", "Any", "25", 4), ("Rej", "Any", "30", 25), ("Rej", "Any", "50", 5),
                     ("Rej", "Any", "20", 5), ("Rej", "Any", "70", 15)},
}
