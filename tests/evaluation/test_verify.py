"""The independent verifier (hieranon.evaluation.verify): paper tables, tampering,
several requirements, counts, suppression, random trees (hypothesis) and a
cross-check of the achieved k against pycanon."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hieranon.core import table as T
from hieranon.core.cells import value_to_label
from hieranon.core.requirements import Requirement, RequirementError
from hieranon.evaluation.verify import MAX_LISTED_PER_KIND, VerificationError, VerificationReport, verify, verify_codes
from hieranon.hierarchies import readers as H
from oracles import pycanon_k

QI = ["Gender", "Age", "Postcode"]
K2 = "<{Gender, Age, Postcode}, 2>"


def table1b(a: pd.DataFrame) -> pd.DataFrame:
    """seed 000 Table 1b: tuples 3 and 4 get Gender '*', Postcode '435*'."""
    b = a.copy()
    b.loc[[2, 3], "Gender"] = "*"
    b.loc[[2, 3], "Postcode"] = "435*"
    return b


def kinds(report: VerificationReport) -> set[str]:
    return {v.kind for v in report.violations}


# ------------------------------------------------------------ paper tables
def test_accepts_seed000_table1b(seed000_table1a, paper_hierarchies):
    rep = verify(seed000_table1a, table1b(seed000_table1a), QI, paper_hierarchies, k=2)
    assert rep.ok, rep.summary()
    assert rep.violations == [] and rep.n_violations == {}
    assert rep.achieved_k == {K2: 2}
    assert rep.n_suppressed == 0
    assert rep.n_rows == 6 and rep.n_records == 6
    assert rep.summary().startswith("verified")
    assert f"achieved k = 2 for {K2};" in rep.summary()  # the k reached, then the requirement it is measured for
    assert rep.raise_if_failed() is rep


def test_accepts_global_recodings_of_seed000(seed000_table1a, paper_hierarchies):
    """Table 1c (Gender suppressed) and the tied node that suppresses Age."""
    c = seed000_table1a.copy()
    c["Gender"] = "*"
    c["Postcode"] = "435*"
    rep = verify(seed000_table1a, c, QI, paper_hierarchies, k=2)
    assert rep.ok and rep.achieved_k == {K2: 2}
    c2 = seed000_table1a.copy()
    c2["Age"] = "*"
    c2["Postcode"] = "435*"
    rep = verify(seed000_table1a, c2, QI, paper_hierarchies, k=3)
    assert rep.ok and rep.achieved_k == {"<{Gender, Age, Postcode}, 3>": 3}


def test_accepts_seed004_table1d(seed004_table1a, paper_hierarchies):
    d = seed004_table1a.copy()
    d.loc[[2, 3], "Gender"] = "*"
    d.loc[[2, 3], "Postcode"] = "435*"
    assert verify(seed004_table1a, d, QI, paper_hierarchies, k=2).ok


def test_rejects_table1a_itself_naming_the_requirement(seed000_table1a, paper_hierarchies):
    rep = verify(seed000_table1a, seed000_table1a.copy(), QI, paper_hierarchies, k=2)
    assert not rep.ok
    assert kinds(rep) == {"requirement"}
    assert rep.achieved_k == {K2: 1}
    assert rep.n_violations == {"requirement": 2}
    first, second = rep.violations
    assert first.requirement == K2 and K2 in first.message
    assert first.row == 2 and "'male'" in first.message and "'young'" in first.message and "'4351'" in first.message
    assert second.row == 3 and "'4352'" in second.message
    with pytest.raises(VerificationError, match="4351") as exc:
        rep.raise_if_failed()
    assert isinstance(exc.value, ValueError) and exc.value.report is rep
    assert K2 in str(exc.value)
    # k=1 holds trivially
    assert verify(seed000_table1a, seed000_table1a, QI, paper_hierarchies, k=1).ok


def test_requirements_given_as_objects_pairs_or_strings(seed000_table1a, paper_hierarchies):
    b = table1b(seed000_table1a)
    for reqs in ([Requirement(tuple(QI), 2)], [(QI, 2)], ["Gender,Age,Postcode:2"]):
        assert verify(seed000_table1a, b, QI, paper_hierarchies, reqs).achieved_k == {K2: 2}
    # neither k nor requirements: only the structure and the cells are checked
    rep = verify(seed000_table1a, seed000_table1a, QI, paper_hierarchies)
    assert rep.ok and rep.achieved_k == {} and rep.requirements == []
    bad = b.copy()
    bad.loc[0, "Age"] = "old"
    assert kinds(verify(seed000_table1a, bad, QI, paper_hierarchies, [])) == {"not_generalisation"}
    with pytest.raises(RequirementError, match="k must be"):
        verify(seed000_table1a, b, QI, paper_hierarchies, k=0)
    with pytest.raises(RequirementError, match="Problem"):
        verify(seed000_table1a, b, QI, paper_hierarchies, ["Problem:2"])


# --------------------------------------------------------------- tampering
@pytest.mark.parametrize("label", ["436*", "4351", "43*", "male", ""])
def test_rejects_cell_that_does_not_generalise(seed000_table1a, paper_hierarchies, label):
    """Postcode 4350 (row 0) replaced by a label off its path: unknown, a
    sibling leaf, a label of no node, another attribute's value, empty."""
    bad = table1b(seed000_table1a)
    bad.loc[0, "Postcode"] = label
    rep = verify(seed000_table1a, bad, QI, paper_hierarchies, k=1)
    assert not rep.ok
    assert kinds(rep) == {"not_generalisation"}
    (v,) = rep.violations
    assert v.column == "Postcode" and v.row == 0
    assert "'Postcode'" in v.message and "row 0" in v.message and "'4350'" in v.message
    assert repr(label) in v.message


def test_accepts_every_ancestor_of_a_cell(seed000_table1a, paper_hierarchies):
    for label in ["4350", "435*", "43**", "4***", "*"]:
        out = seed000_table1a.copy()
        out.loc[0, "Postcode"] = label
        assert verify(seed000_table1a, out, QI, paper_hierarchies, k=1).ok, label


def test_rejects_changed_non_qi_column(seed000_table1a, paper_hierarchies):
    bad = table1b(seed000_table1a)
    bad.loc[4, "Problem"] = "flu"
    rep = verify(seed000_table1a, bad, QI, paper_hierarchies, k=2)
    assert kinds(rep) == {"non_qi_changed"}
    (v,) = rep.violations
    assert v.column == "Problem" and v.row == 4 and v.count == 1
    assert "'Problem'" in v.message and "'stress'" in v.message and "'flu'" in v.message and "row 4" in v.message


def test_non_qi_comparison_is_dtype_insensitive(seed000_table1a, paper_hierarchies):
    a = seed000_table1a.assign(n=[1, 2, 3, 4, 5, 6], w=[0.5, np.nan, 1.0, 2.0, np.nan, 3.0])
    b = table1b(a)
    b["n"] = b["n"].astype(float)           # 1 == 1.0
    b["w"] = b["w"].astype(object)          # NaN == NaN
    assert verify(a, b, QI, paper_hierarchies, k=2).ok
    b["n"] = [str(x) for x in a["n"]]       # a CSV round trip may read numbers back as text
    assert verify(a, b, QI, paper_hierarchies, k=2).ok
    b.loc[1, "w"] = 7.0                      # NaN -> value is a change
    rep = verify(a, b, QI, paper_hierarchies, k=2)
    assert [(v.kind, v.column, v.row) for v in rep.violations] == [("non_qi_changed", "w", 1)]


def test_rejects_dropped_row(seed000_table1a, paper_hierarchies):
    b = table1b(seed000_table1a).drop(index=3)
    rep = verify(seed000_table1a, b, QI, paper_hierarchies, k=2)
    assert kinds(rep) == {"rows"}
    (v,) = rep.violations
    assert "5 rows" in v.message and "6" in v.message and "dropped" in v.message
    assert "first difference at row 3" in v.message
    assert rep.achieved_k == {}  # requirements are not checked on a misaligned table


def test_rejects_added_row(seed000_table1a, paper_hierarchies):
    b = table1b(seed000_table1a)
    b = pd.concat([b, b.iloc[[0]]], ignore_index=True)
    rep = verify(seed000_table1a, b, QI, paper_hierarchies, k=2)
    assert kinds(rep) == {"rows"} and "added" in rep.violations[0].message


def test_rejects_reordered_rows(seed000_table1a, paper_hierarchies):
    b = table1b(seed000_table1a).iloc[[1, 0, 2, 3, 4, 5]]  # swap two rows of one class
    rep = verify(seed000_table1a, b, QI, paper_hierarchies, k=2)
    assert not rep.ok
    assert "rows" in kinds(rep)
    (v,) = rep.by_kind("rows")
    assert "reordered" in v.message and v.row == 0
    assert [x.column for x in rep.by_kind("non_qi_changed")] == ["Problem"]
    # a shuffled table also breaks the QI cells
    rep = verify(seed000_table1a, table1b(seed000_table1a).iloc[::-1], QI, paper_hierarchies, k=2)
    assert {"rows", "non_qi_changed", "not_generalisation"} <= kinds(rep)


def test_index_is_ignored(seed000_table1a, paper_hierarchies):
    b = table1b(seed000_table1a)
    b.index = [10, 11, 12, 13, 14, 15]
    assert verify(seed000_table1a, b, QI, paper_hierarchies, k=2).ok


def test_rejects_renamed_qi_column(seed000_table1a, paper_hierarchies):
    b = table1b(seed000_table1a).rename(columns={"Postcode": "Zip"})
    rep = verify(seed000_table1a, b, QI, paper_hierarchies, k=2)
    assert kinds(rep) == {"columns"}
    assert {v.column for v in rep.violations} == {"Postcode", "Zip"}
    missing = next(v for v in rep.violations if v.column == "Postcode")
    assert "'Postcode'" in missing.message and "missing" in missing.message and "'Zip'" in missing.message
    assert rep.achieved_k == {}  # the requirement needs Postcode


def test_rejects_missing_and_extra_non_qi_column(seed000_table1a, paper_hierarchies):
    rep = verify(seed000_table1a, table1b(seed000_table1a).drop(columns="Problem"), QI, paper_hierarchies, k=2)
    assert kinds(rep) == {"columns"}
    assert [v.column for v in rep.violations] == ["Problem"] and "'Problem'" in rep.violations[0].message
    assert rep.achieved_k == {K2: 2}  # the QIs are all there, so the requirement is still checked
    rep = verify(seed000_table1a, table1b(seed000_table1a).assign(Extra=1), QI, paper_hierarchies, k=2)
    assert [(v.kind, v.column) for v in rep.violations] == [("columns", "Extra")]


def test_rejects_reordered_columns(seed000_table1a, paper_hierarchies):
    b = table1b(seed000_table1a)[["Age", "Gender", "Postcode", "Problem"]]
    rep = verify(seed000_table1a, b, QI, paper_hierarchies, k=2)
    assert kinds(rep) == {"columns"}
    (v,) = rep.violations
    assert v.column == "Gender" and "order" in v.message


# ------------------------------------------------- requirements and counts
def test_multiple_requirements(seed000_table1a, paper_hierarchies):
    b = table1b(seed000_table1a)
    rep = verify(seed000_table1a, b, QI, paper_hierarchies, [(["Gender", "Age"], 2), (["Postcode"], 3)])
    assert rep.achieved_k == {"<{Gender, Age}, 2>": 2, "<{Postcode}, 3>": 2}
    assert not rep.ok and kinds(rep) == {"requirement"}
    assert {v.requirement for v in rep.violations} == {"<{Postcode}, 3>"}
    assert rep.n_violations == {"requirement": 3}  # classes 4350, 435*, 4353 of 2 records each
    assert any("'435*'" in v.message and "2 record(s)" in v.message for v in rep.violations)
    # with k over all QIs added, that one holds too
    rep = verify(seed000_table1a, b, QI, paper_hierarchies, [(["Gender", "Age"], 2)], k=2)
    assert rep.ok and set(rep.achieved_k) == {"<{Gender, Age}, 2>", K2}
    # a subset requirement can fail while the full one holds
    rep = verify(seed000_table1a, b, QI, paper_hierarchies, [(["Age"], 3)], k=2)
    assert [v.requirement for v in rep.violations] == ["<{Age}, 3>"] * 3


def test_count_column_is_respected(paper_hierarchies):
    """seed 004 Table 1a as distinct rows with counts."""
    orig = pd.DataFrame({"Gender": ["male", "female", "female"], "Age": ["middle", "middle", "old"],
                         "Postcode": ["4350", "4352", "4353"], "n": [3, 1, 2]})
    rep = verify(orig, orig, QI, paper_hierarchies, k=2, counts="n")
    assert not rep.ok and rep.achieved_k == {K2: 1} and rep.n_records == 6
    (v,) = rep.violations
    assert v.row == 1 and "1 record(s)" in v.message
    gen = orig.copy()
    gen.loc[[1, 2], "Age"] = "*"
    gen.loc[[1, 2], "Postcode"] = "435*"
    rep = verify(orig, gen, QI, paper_hierarchies, k=3, counts="n")
    assert rep.ok and rep.achieved_k == {"<{Gender, Age, Postcode}, 3>": 3}
    # without the counts the same rows are single records
    rep = verify(orig, gen, QI, paper_hierarchies, k=3)
    assert not rep.ok and rep.achieved_k == {"<{Gender, Age, Postcode}, 3>": 1}
    # counts as an array
    assert verify(orig, gen, QI, paper_hierarchies, k=3, counts=np.array([3, 1, 2])).ok
    # the count column is not a QI: changing it is caught
    bad = gen.copy()
    bad.loc[1, "n"] = 5
    rep = verify(orig, bad, QI, paper_hierarchies, k=3, counts="n")
    assert [(v.kind, v.column, v.row) for v in rep.violations] == [("non_qi_changed", "n", 1)]


# -------------------------------------------------------------- suppression
def test_all_root_rows_are_suppressed_and_form_a_class(seed000_table1a, paper_hierarchies):
    """Suppressed rows (all '*') are counted, and print one tuple: like any
    class they must hold >= k records (an independent checker sees them so)."""
    out = seed000_table1a.copy()
    out.loc[[2, 3], QI] = "*"
    rep = verify(seed000_table1a, out, QI, paper_hierarchies, k=3)
    # classes male/middle/4350, {*,*,*} and female/old/4353 have 2 records each
    assert rep.n_suppressed == 2 and rep.achieved_k == {"<{Gender, Age, Postcode}, 3>": 2}
    assert [v.row for v in rep.violations] == [0, 2, 4]
    rep = verify(seed000_table1a, out, QI, paper_hierarchies, k=2)
    assert rep.ok and rep.n_suppressed == 2
    # a single suppressed row is a class of one: it fails k = 2
    out.loc[2, QI] = seed000_table1a.loc[2, QI]
    out.loc[2, "Postcode"] = "4***"
    rep = verify(seed000_table1a, out, QI, paper_hierarchies, k=2)
    assert rep.n_suppressed == 1
    assert [v.row for v in rep.violations] == [2, 3]  # {male, young, 4***} and {*, *, *} are alone
    assert rep.achieved_k == {"<{Gender, Age, Postcode}, 2>": smallest_class(out)}


def smallest_class(out) -> int:
    return int(out.groupby(QI).size().min())


def test_root_on_a_subset_is_not_suppression(seed000_table1a, paper_hierarchies):
    out = table1b(seed000_table1a)
    out.loc[2, ["Gender", "Postcode"]] = "*"  # Age stays: not all-root
    rep = verify(seed000_table1a, out, QI, paper_hierarchies, [(["Gender", "Postcode"], 3)])
    assert rep.n_suppressed == 0
    assert not rep.ok and any(v.row == 2 for v in rep.violations)


def test_everything_suppressed(seed000_table1a, paper_hierarchies):
    out = seed000_table1a.copy()
    out[QI] = "*"
    rep = verify(seed000_table1a, out, QI, paper_hierarchies, k=6)
    assert rep.ok and rep.n_suppressed == 6 and rep.achieved_k == {"<{Gender, Age, Postcode}, 6>": 6}


def test_missing_original_values_with_missing_root(paper_hierarchies):
    orig = pd.DataFrame({"Gender": ["male", None, "male", "female"], "Age": ["old", "old", "old", "old"],
                         "Postcode": ["4350", "4350", "4350", "4350"]})
    out = orig.copy()
    out["Gender"] = ["*", None, "*", "*"]  # the missing cell may stay missing: it reads as '*'
    assert verify(orig, out, QI, paper_hierarchies, k=4, missing="root").ok
    out.loc[1, "Gender"] = "*"
    assert verify(orig, out, QI, paper_hierarchies, k=4, missing="root").ok
    out.loc[1, "Gender"] = "female"  # inventing a value for a missing one
    rep = verify(orig, out, QI, paper_hierarchies, k=1, missing="root")
    assert [(v.kind, v.column, v.row) for v in rep.violations] == [("not_generalisation", "Gender", 1)]
    out = orig.copy()
    out.loc[0, "Gender"] = None  # erasing a present value is not a generalisation
    rep = verify(orig, out, QI, paper_hierarchies, k=1, missing="root")
    assert [(v.kind, v.column, v.row) for v in rep.violations] == [("not_generalisation", "Gender", 0)]
    assert "<missing>" in rep.violations[0].message
    with pytest.raises(T.DataError, match="Gender"):
        verify(orig, out, QI, paper_hierarchies, k=1)


def test_repeated_label_groups_by_what_is_printed():
    """A label repeated along one chain (ARX 'x;x;*': the value kept as
    itself one level up): both nodes print 'x' and so form one class of the
    published table. (A label naming two different sets of values is refused
    when the hierarchy is read.)"""
    h = H.from_paths("A", [["x", "x", "*"], ["y", "v", "*"], ["z", "w", "*"]])
    orig = pd.DataFrame({"A": ["x", "x", "z", "z"]})
    out = pd.DataFrame({"A": ["x", "x", "w", "w"]})
    rep = verify(orig, out, ["A"], {"A": h}, k=2)
    assert rep.ok and rep.achieved_k == {"<{A}, 2>": 2}
    enc = T.encode(orig, ["A"], {"A": h})
    gen = T.encode_generalised(enc, out)
    gen[1, 0] = h.parent[gen[0, 0]]  # the inner 'x' above the leaf 'x'
    assert gen[0, 0] != gen[1, 0] and h.labels[gen[0, 0]] == h.labels[gen[1, 0]] == "x"  # two nodes ...
    assert verify_codes(enc, gen, [Requirement(("A",), 2)]).ok  # ... one printed class


# ----------------------------------------------------------- verify_codes
def test_verify_codes_on_paper_table(seed000_table1a, paper_hierarchies):
    enc = T.encode(seed000_table1a, QI, paper_hierarchies)
    req = [Requirement(tuple(QI), 2)]
    gen = T.encode_generalised(enc, table1b(seed000_table1a))
    rep = verify_codes(enc, gen, req)
    assert rep.ok and rep.achieved_k == {K2: 2}
    rep = verify_codes(enc, enc.codes, req)
    assert not rep.ok and rep.achieved_k == {K2: 1} and [v.row for v in rep.violations] == [2, 3]
    # a cell set to a sibling leaf / an unknown node id
    h = enc.hierarchies[2]
    bad = gen.copy()
    bad[0, 2] = h.code_of("4351")
    bad[5, 1] = 999
    rep = verify_codes(enc, bad, req)
    ng = rep.by_kind("not_generalisation")
    assert [(v.column, v.row) for v in ng] == [("Age", 5), ("Postcode", 0)]
    assert "'4351'" in ng[1].message and "'4350'" in ng[1].message
    assert "invalid node 999" in ng[0].message
    # shape problems
    assert kinds(verify_codes(enc, gen[:5], req)) == {"rows"}
    assert kinds(verify_codes(enc, gen[:, :2], req)) == {"columns"}


def test_verify_codes_suppressed_mask(seed000_table1a, paper_hierarchies):
    enc = T.encode(seed000_table1a, QI, paper_hierarchies)
    gen = enc.codes.copy()
    gen[[2, 3]] = 0
    sup = np.zeros(6, bool)
    sup[[2, 3]] = True
    rep = verify_codes(enc, gen, [Requirement(tuple(QI), 2)], suppressed=sup)
    assert rep.ok and rep.n_suppressed == 2
    sup[0] = True  # row 0 is claimed suppressed but prints its values
    rep = verify_codes(enc, gen, [Requirement(tuple(QI), 2)], suppressed=sup)
    assert [(v.kind, v.row) for v in rep.violations] == [("rows", 0)]


def test_violations_are_capped_but_counted():
    values = [str(1000 + i) for i in range(50)]
    h = H.masking("P", values)
    orig = pd.DataFrame({"P": values})
    out = pd.DataFrame({"P": values[1:] + values[:1]})  # every cell a sibling leaf
    rep = verify(orig, out, ["P"], {"P": h}, k=1)
    assert len(rep.by_kind("not_generalisation")) == MAX_LISTED_PER_KIND
    assert rep.n_violations == {"not_generalisation": 50}
    rep = verify(orig, orig, ["P"], {"P": h}, k=2)
    assert len(rep.violations) == MAX_LISTED_PER_KIND and rep.n_violations == {"requirement": 50}
    assert "50 requirement" in rep.summary()
    enc = T.encode(orig, ["P"], {"P": h})
    rep = verify_codes(enc, enc.codes, [Requirement(("P",), 2)])
    assert len(rep.violations) == MAX_LISTED_PER_KIND and rep.n_violations == {"requirement": 50}


def test_many_cells_of_one_pair_are_one_violation(seed000_table1a, paper_hierarchies):
    out = seed000_table1a.copy()
    out["Gender"] = ["female", "female", "female", "female", "female", "female"]
    rep = verify(seed000_table1a, out, QI, paper_hierarchies, k=1)
    (v,) = rep.violations
    assert v.row == 0 and v.count == 3 and "3 cells" in v.message
    assert rep.n_violations == {"not_generalisation": 3}


# ---------------------------------------------------- random trees (hypothesis)
def make_tree(name: str, rand, balanced: bool, via_mapping: bool, numeric: bool) -> H.Hierarchy:
    """A random hierarchy of 2-4 levels, at least two leaves, unique labels.
    ``rand(lo, hi)`` draws an int in [lo, hi]."""
    levels = rand(2, 4)
    leaf_ids, inner_ids = itertools.count(), itertools.count()

    def sub(depth: int) -> dict:
        children = {}
        for _ in range(rand(2 if depth == 0 else 1, 3)):
            d = depth + 1
            if d == levels - 1 or (not balanced and rand(0, 2) == 0):
                i = next(leaf_ids)
                children[str(100 + i) if numeric else f"{name}{i}"] = None
            else:
                children[f"{name}.{d}.{next(inner_ids)}"] = sub(d)
        return children

    body = sub(0)
    if via_mapping:
        return H.from_mapping(name, {"*": body})
    rows = []

    def walk(tree, path):
        for label, kid in tree.items():
            if kid is None:
                rows.append([label] + path[::-1] + ["*"])
            else:
                walk(kid, path + [label])

    walk(body, [])
    return H.from_paths(name, rows, allow_unbalanced=not balanced)


def make_table(hs: list[H.Hierarchy], rand, n: int, numeric: list[bool]) -> pd.DataFrame:
    cols = {}
    for h, num in zip(hs, numeric):
        leaves = sorted(h.leaf_index)
        picked = [leaves[rand(0, len(leaves) - 1)] for _ in range(n)]
        cols[h.name] = [int(x) for x in picked] if num else picked
    cols["payload"] = [rand(0, 5) for _ in range(n)]
    cols["note"] = [f"r{i}" for i in range(n)]
    return pd.DataFrame(cols)


@st.composite
def problems(draw, max_rows: int = 25):
    """Random hierarchies (balanced or not, from paths or mappings), a table
    over their leaves and record counts."""
    def rand(lo, hi):
        return draw(st.integers(lo, hi))

    m = rand(1, 3)
    names = ["A", "B", "C"][:m]
    numeric = [draw(st.booleans()) for _ in names]
    hs = [make_tree(q, rand, draw(st.booleans()), draw(st.booleans()), num) for q, num in zip(names, numeric)]
    n = rand(1, max_rows)
    df = make_table(hs, rand, n, numeric)
    counts = np.array([rand(1, 3) for _ in range(n)]) if draw(st.booleans()) else None
    return names, hs, df, counts


def up(h: H.Hierarchy, node: int, steps: int) -> int:
    for _ in range(steps):
        if h.parent[node] >= 0:
            node = int(h.parent[node])
    return node


def generalise_classes(codes: np.ndarray, hs, counts: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Generalise whole equivalence classes: lift some classes to an ancestor,
    then merge a class of < k records with another into a common ancestor of
    both, until every class has >= k records (or one class is left)."""
    classes: dict[tuple, list[int]] = {}
    for i, row in enumerate(map(tuple, codes.tolist())):
        classes.setdefault(row, []).append(i)

    def add(t, rows):
        classes.setdefault(t, []).extend(rows)

    for t in sorted(classes):
        if rng.random() < 0.3:
            add(tuple(up(h, c, int(rng.integers(0, 3))) for h, c in zip(hs, t)), classes.pop(t))
    while len(classes) > 1:
        small = sorted(t for t, rows in classes.items() if counts[rows].sum() < k)
        if not small:
            break
        c = small[rng.integers(len(small))]
        others = sorted(t for t in classes if t != c)
        d = others[rng.integers(len(others))]
        rows = classes.pop(c) + classes.pop(d)
        add(tuple(up(h, int(h.lca(a, b)), int(rng.integers(0, 2))) for h, a, b in zip(hs, c, d)), rows)
    gen = np.empty_like(codes)
    for t, rows in classes.items():
        gen[rows] = t
    return gen


def decode_into(df: pd.DataFrame, names, hs, gen: np.ndarray) -> pd.DataFrame:
    out = df.copy()
    for j, (q, h) in enumerate(zip(names, hs)):
        labels = np.asarray(h.labels, dtype=object)
        changed = gen[:, j] != T.encode(df, [q], [h]).codes[:, 0]
        col = df[q].astype(object).to_numpy().copy()
        col[changed] = labels[gen[changed, j]]
        out[q] = col  # unchanged cells keep their (possibly int) values
    return out


def class_min(out: pd.DataFrame, names, counts) -> int:
    lab = out[names].map(lambda x: value_to_label(x))
    lab["_w"] = 1 if counts is None else counts
    return int(lab.groupby(names)["_w"].sum().min()) if len(lab) else 0


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(problems(), st.data())
def test_generalising_whole_classes_verifies(problem, data):
    names, hs, df, counts = problem
    w = np.ones(len(df), dtype=np.int64) if counts is None else counts
    k = data.draw(st.integers(1, int(w.sum())), label="k")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    enc = T.encode(df, names, hs, counts=counts)
    gen = generalise_classes(enc.codes, enc.hierarchies, w, k, rng)
    out = decode_into(df, names, hs, gen)
    rep = verify(df, out, names, hs, k=k, counts=counts)
    assert rep.ok, rep.summary()
    exempt = (gen == 0).all(axis=1)
    req = str(Requirement(tuple(names), k))
    assert rep.n_suppressed == int(w[exempt].sum())
    assert rep.achieved_k == {req: class_min(out, names, counts)}  # suppressed rows are a class too
    assert rep.achieved_k[req] >= k
    rc = verify_codes(enc, gen, [Requirement(tuple(names), k)])
    assert rc.ok and rc.achieved_k == rep.achieved_k and rc.n_suppressed == rep.n_suppressed
    # a requirement one above what was achieved fails (unless all is suppressed)
    if not exempt.all():
        too_big = rep.achieved_k[req] + 1
        assert not verify(df, out, names, hs, k=too_big, counts=counts).ok
        assert not verify_codes(enc, gen, [Requirement(tuple(names), too_big)]).ok


@SETTINGS
@given(problems(), st.data())
def test_single_cell_tampering_is_caught(problem, data):
    names, hs, df, counts = problem
    w = np.ones(len(df), dtype=np.int64) if counts is None else counts
    k = data.draw(st.integers(1, int(w.sum())), label="k")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    enc = T.encode(df, names, hs, counts=counts)
    gen = generalise_classes(enc.codes, enc.hierarchies, w, k, rng)
    out = decode_into(df, names, hs, gen)
    r = data.draw(st.integers(0, len(df) - 1), label="row")
    j = data.draw(st.integers(0, len(names) - 1), label="qi")
    q, h = names[j], enc.hierarchies[j]
    path = set(h.ancestors[enc.codes[r, j], : h.depth[enc.codes[r, j]] + 1].tolist())
    off_path = [v for v in range(h.n_nodes) if v not in path]  # never empty: >= 2 leaves
    node = data.draw(st.sampled_from(off_path), label="node")
    bad = out.copy()
    bad[q] = bad[q].astype(object)
    bad.loc[r, q] = h.labels[node]
    rep = verify(df, bad, names, hs, k=1, counts=counts)
    assert not rep.ok
    assert [(v.kind, v.column, v.row) for v in rep.violations] == [("not_generalisation", q, r)]
    assert repr(h.labels[node]) in rep.violations[0].message and f"row {r}" in rep.violations[0].message
    bad_codes = gen.copy()
    bad_codes[r, j] = node
    rc = verify_codes(enc, bad_codes, [Requirement(tuple(names), 1)])
    assert [(v.kind, v.column, v.row) for v in rc.violations] == [("not_generalisation", q, r)]
    # one non-QI cell changed
    col = data.draw(st.sampled_from(["payload", "note"]), label="column")
    bad = out.copy()
    bad.loc[r, col] = 99 if col == "payload" else "changed"
    rep = verify(df, bad, names, hs, k=k, counts=counts)
    assert [(v.kind, v.column, v.row) for v in rep.violations] == [("non_qi_changed", col, r)]


# --------------------------------------------------------- pycanon cross-check
def random_output(rng: np.random.Generator):
    """A random table over random trees, generalised cell by cell (not
    necessarily k-anonymous), with no all-root row."""
    def rand(lo, hi):
        return int(rng.integers(lo, hi + 1))

    m = rand(1, 3)
    names = ["A", "B", "C"][:m]
    numeric = [bool(rng.random() < 0.5) for _ in names]
    hs = [make_tree(q, rand, bool(rng.random() < 0.5), bool(rng.random() < 0.5), num)
          for q, num in zip(names, numeric)]
    n = rand(2, 40)
    df = make_table(hs, rand, n, numeric)
    enc = T.encode(df, names, hs)
    gen = enc.codes.copy()
    lift = rng.random()  # how much of the table is generalised
    for j, h in enumerate(enc.hierarchies):
        for i in range(n):
            if rng.random() < lift:
                gen[i, j] = up(h, int(gen[i, j]), rand(1, 3))
    all_root = (gen == 0).all(axis=1)
    gen[all_root, 0] = enc.codes[all_root, 0]
    return names, hs, df, enc, gen


@pytest.mark.parametrize("seed", range(120))
def test_achieved_k_matches_pycanon(seed):
    rng = np.random.default_rng(seed)
    names, hs, df, enc, gen = random_output(rng)
    out = decode_into(df, names, hs, gen)
    labels = out[names].map(value_to_label)
    k_canon = pycanon_k(labels, names)
    for k in (1, 2, 3, 5):
        rep = verify(df, out, names, hs, k=k)
        assert rep.n_suppressed == 0
        assert rep.ok == (k_canon >= k), (k, k_canon, rep.summary())
        assert rep.achieved_k == {str(Requirement(tuple(names), k)): k_canon}
        assert verify_codes(enc, gen, [Requirement(tuple(names), k)]).ok == rep.ok
    # subset requirements agree with pycanon on the projection
    sub = names[:1]
    assert verify(df, out, names, hs, [(sub, 1)]).achieved_k == {
        str(Requirement(tuple(sub), 1)): pycanon_k(labels, sub)}
    # with record counts: pycanon sees every record as its own row
    counts = rng.integers(1, 4, size=len(df))
    expanded = labels.loc[labels.index.repeat(counts)].reset_index(drop=True)
    k_counts = pycanon_k(expanded, names)
    rep = verify(df, out, names, hs, k=2, counts=counts)
    assert rep.achieved_k == {str(Requirement(tuple(names), 2)): k_counts}
    assert rep.ok == (k_counts >= 2)


# ------------------------------------------------------------------- Adult
ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                 "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
                 "native-country", "salary-class"]
ADULT_QI = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]


@pytest.fixture(scope="module")
def adult(adult_path):
    frames = [pd.read_csv(adult_path / f, header=None, names=ADULT_COLUMNS, skipinitialspace=True, dtype=str,
                          comment="|") for f in ("adult.data", "adult.test")]
    df = pd.concat(frames, ignore_index=True).dropna()
    df["salary-class"] = df["salary-class"].str.rstrip(".")
    df = df[~(df == "?").any(axis=1)].reset_index(drop=True)
    hs = {q: H.from_arx_csv(adult_path / "hierarchies" / f"adult_hierarchy_{q}.csv", q) for q in ADULT_QI}
    return df, hs


@pytest.mark.adult
def test_adult_verify_codes_agrees(adult):
    """verify_codes and verify agree with pandas on Adult (the time is
    measured by benchmarks/bench_encode.py, not asserted here)."""
    df, hs = adult
    assert len(df) == 45222
    enc = T.encode(df, ADULT_QI, hs)
    gen = enc.codes.copy()
    for j, h in enumerate(enc.hierarchies):  # a full-domain node: every attribute one level up
        gen[:, j] = h.ancestor_at_depth(gen[:, j], max(h.height - 2, 0))
    reqs = [Requirement(tuple(ADULT_QI), 5), Requirement(("age", "sex"), 10)]
    rep = verify_codes(enc, gen, reqs)
    out = T.apply_codes(df, enc, gen)
    full_min = int(out.groupby(ADULT_QI).size().min())
    assert rep.achieved_k[str(reqs[0])] == full_min
    assert rep.achieved_k[str(reqs[1])] == int(out.groupby(["age", "sex"]).size().min())
    assert rep.ok == (full_min >= 5 and rep.achieved_k[str(reqs[1])] >= 10)
    rep_df = verify(df, out, ADULT_QI, hs, reqs)
    assert rep_df.achieved_k == rep.achieved_k and rep_df.n_violations == rep.n_violations
    assert rep_df.n_violations.keys() <= {"requirement"}


# ------------------------------------------------------------ privacy models
def test_l_diversity_on_paper_table(seed000_table1a, paper_hierarchies):
    """Table 1b's three classes each hold 'stress' and 'obesity'."""
    from hieranon.privacy import DistinctLDiversity

    out = table1b(seed000_table1a)
    rep = verify(seed000_table1a, out, QI, paper_hierarchies, k=2, privacy=[DistinctLDiversity("Problem", 2)])
    assert rep.ok, rep.summary()
    assert rep.achieved_privacy == {"distinct 2-diversity of 'Problem'": 2.0}
    rep = verify(seed000_table1a, out, QI, paper_hierarchies, k=2, privacy=[DistinctLDiversity("Problem", 3)])
    assert not rep.ok and rep.n_violations == {"l-diversity": 3}
    v = rep.violations[0]
    assert (v.kind, v.column, v.row) == ("l-diversity", "Problem", 0)
    assert "distinct 3-diversity of 'Problem' fails" in v.message
    assert "{Gender='male', Age='middle', Postcode='4350'}" in v.message
    assert "l = 2 distinct" in v.message and "l >= 3" in v.message
    assert rep.achieved_k == {K2: 2}  # the k check is unchanged


def test_suppressed_records_are_a_class_for_privacy(seed000_table1a, paper_hierarchies):
    from hieranon.privacy import DistinctLDiversity

    out = seed000_table1a.copy()
    out.loc[[0, 2, 4], QI] = "*"  # the three 'stress' rows
    rep = verify(seed000_table1a, out, QI, paper_hierarchies, privacy=[DistinctLDiversity("Problem", 2)])
    assert rep.n_suppressed == 3
    assert rep.n_violations == {"l-diversity": 4}  # {*, *, *} and the three single rows left
    assert any("{Gender='*', Age='*', Postcode='*'}" in v.message and v.row == 0 for v in rep.violations)
    enc = T.encode(seed000_table1a, QI, paper_hierarchies)
    gen = T.encode_generalised(enc, out)
    bound = [DistinctLDiversity("Problem", 2).bind(seed000_table1a, enc.counts)]
    rc = verify_codes(enc, gen, [], gen.min(axis=1) == 0, privacy=bound)
    assert rc.n_violations == {"l-diversity": 4}
    assert rc.achieved_privacy == rep.achieved_privacy == {"distinct 2-diversity of 'Problem'": 1.0}


def test_t_closeness_violation_names_emd_and_t(seed000_table1a, paper_hierarchies):
    from hieranon.privacy import TCloseness

    out = seed000_table1a.copy()
    out["Age"] = "*"
    out["Postcode"] = "435*"  # classes: male {stress, obesity, stress}, female {obesity, stress, obesity}
    rep = verify(seed000_table1a, out, QI, paper_hierarchies, k=3, privacy=[TCloseness("Problem", 0.1)])
    # 1/2 (|2/3 - 1/2| + |1/3 - 1/2|) = 1/6 in both classes
    assert rep.n_violations == {"t-closeness": 2}
    v = rep.violations[0]
    assert v.kind == "t-closeness" and v.column == "Problem"
    assert "0.1-closeness of 'Problem' (equal distance)" in v.message
    assert "EMD = 0.166667" in v.message and "EMD <= t = 0.1" in v.message
    assert rep.achieved_privacy["0.1-closeness of 'Problem' (equal distance)"] == pytest.approx(1 / 6)
    ok = verify(seed000_table1a, out, QI, paper_hierarchies, k=3, privacy=[TCloseness("Problem", 1 / 6)])
    assert ok.ok, ok.summary()


def test_privacy_respects_counts(paper_hierarchies):
    from hieranon.privacy import EntropyLDiversity

    orig = pd.DataFrame({"Gender": ["male", "male"], "Age": ["old", "old"], "Postcode": ["4350", "4350"],
                         "s": ["a", "b"], "n": [3, 3]})
    rep = verify(orig, orig, QI, paper_hierarchies, k=6, counts="n", privacy=[EntropyLDiversity("s", 2)])
    assert rep.ok and rep.achieved_privacy == {"entropy 2-diversity of 's'": 2.0}
    orig.loc[1, "n"] = 2
    rep = verify(orig, orig, QI, paper_hierarchies, k=5, counts="n", privacy=[EntropyLDiversity("s", 2)])
    assert rep.n_violations == {"l-diversity": 1}


def test_without_privacy_the_report_is_unchanged(seed000_table1a, paper_hierarchies):
    rep = verify(seed000_table1a, table1b(seed000_table1a), QI, paper_hierarchies, k=2)
    assert rep.achieved_privacy == {} and "worst class" not in rep.summary()


def test_privacy_bound_to_another_table_is_an_error(seed000_table1a, paper_hierarchies):
    from hieranon.privacy import DistinctLDiversity

    enc = T.encode(seed000_table1a, QI, paper_hierarchies)
    other = DistinctLDiversity("Problem", 2).bind(seed000_table1a.iloc[:3])
    with pytest.raises(ValueError, match="bound to a table of 3 rows, the output has 6"):
        verify_codes(enc, enc.codes, [], privacy=[other])
