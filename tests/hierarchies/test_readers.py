"""Hierarchies: loaders, builders, levels, LCA, label decoding, round trips, errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hieranon.core import tree
from hieranon.core.table import DataError, encode
from hieranon.core.tree import Hierarchy, HierarchyError
from hieranon.hierarchies import readers as H
from random_tables import path_of, structure

ADULT_QI_HEIGHTS = {"age": 5, "workclass": 3, "education": 4, "marital-status": 3, "occupation": 3,
                    "race": 2, "sex": 2, "native-country": 3, "salary-class": 2}

REGIONS_ARX = """\
England;Europe;*
France;Europe;*
Japan;Asia;*
India;Asia;*
Peru;America;*
"""


# ------------------------------------------------------------------ loaders
@pytest.mark.parametrize("sep", [";", ",", "\t"])
def test_arx_text_separator_detected(sep):
    h = H.from_arx_csv(REGIONS_ARX.replace(";", sep), "country")
    assert h.name == "country"
    assert h.height == 3 and h.is_balanced
    assert sorted(h.leaf_index) == ["England", "France", "India", "Japan", "Peru"]
    assert path_of(h, "Japan") == ["Japan", "Asia", "*"]
    assert path_of(h, "Peru") == ["Peru", "America", "*"]
    assert h.labels[0] == "*" and h.parent[0] == -1
    assert len(h.children[0]) == 3  # Europe, Asia, America


def test_arx_file_name_from_file_stem(tmp_path):
    for sep in (";", ","):
        f = tmp_path / f"study_hierarchy_country{'_c' if sep == ',' else ''}.csv"
        f.write_text(REGIONS_ARX.replace(";", sep))
        h = H.from_arx_csv(f)
        assert h.name == ("country_c" if sep == "," else "country")
        assert structure(h) == structure(H.from_arx_csv(REGIONS_ARX, "country"))
    # a str path works too, and an explicit name wins
    h = H.from_arx_csv(str(tmp_path / "study_hierarchy_country.csv"), "land")
    assert h.name == "land"


def test_arx_quoted_fields_and_blank_lines():
    text = '"Smith, J";"S-Z";*\n\n"Adams, B";"A-F";*\n'
    h = H.from_arx_csv(text, "name", sep=";")
    assert path_of(h, "Smith, J") == ["Smith, J", "S-Z", "*"]
    assert len(h.leaf_index) == 2


def test_from_mapping_dict():
    tree = {"*": {"Europe": ["England", "France"], "Asia": ["Japan", "India"], "America": ["Peru"]}}
    h = H.from_mapping("country", tree)
    assert structure(h) == structure(H.from_arx_csv(REGIONS_ARX, "country"))
    # without a single top-level key, the keys hang under an implicit "*"
    h2 = H.from_mapping("country", tree["*"])
    assert structure(h2) == structure(h)


def test_from_file_yaml_and_json(tmp_path):
    tree = {"*": {"Europe": ["England", "France"], "Asia": ["Japan", "India"], "America": ["Peru"]}}
    (tmp_path / "country.json").write_text(json.dumps(tree))
    (tmp_path / "country.yaml").write_text(
        "'*':\n  Europe: [England, France]\n  Asia:\n    - Japan\n    - India\n  America: [Peru]\n")
    (tmp_path / "country.csv").write_text(REGIONS_ARX)
    expected = structure(H.from_mapping("country", tree))
    for ext in ("json", "yaml", "csv"):
        h = H.from_file(tmp_path / f"country.{ext}")
        assert h.name == "country"
        assert structure(h) == expected, ext


def test_from_file_unparsable_yaml_names_attribute(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("'*': [unclosed\n")
    with pytest.raises(HierarchyError, match=r"'edu'.*is not valid YAML, line 2"):
        H.from_file(f, "edu")


# seed 003 Case 2 (Fung et al.'s running example): unbalanced trees
CASE2_EDUCATION_ARX = """\
9th;Junior;Secondary;ANY
10th;Junior;Secondary;ANY
11th;Senior;Secondary;ANY
12th;Senior;Secondary;ANY
Bachelors;University;ANY
Masters;Grad;University;ANY
Doctorate;Grad;University;ANY
"""
CASE2_EDUCATION_TREE = {"ANY": {"Secondary": {"Junior": ["9th", "10th"], "Senior": ["11th", "12th"]},
                                "University": {"Bachelors": [], "Grad": ["Masters", "Doctorate"]}}}
CASE2_HOURS_TREE = {"ANY[1-99)": {"[1-37)": {"[1-35)": [30, 32], "[35-37)": [35]}, "[37-99)": [37, 42, 44]}}


def test_case2_unbalanced_trees_load():
    edu_csv = H.from_arx_csv(CASE2_EDUCATION_ARX, "education", allow_unbalanced=True)
    edu_map = H.from_mapping("education", CASE2_EDUCATION_TREE)
    assert structure(edu_csv) == structure(edu_map)
    for edu in (edu_csv, edu_map):
        assert edu.labels[0] == "ANY"
        assert not edu.is_balanced
        assert edu.height == 4
        assert path_of(edu, "Bachelors") == ["Bachelors", "University", "ANY"]
        assert path_of(edu, "10th") == ["10th", "Junior", "Secondary", "ANY"]
        assert edu.level[edu.leaf_index["Bachelors"]] == 3 and edu.level[edu.leaf_index["9th"]] == 4
        # steps from the leaves: University is 1 step above Bachelors but 2 above Masters (deepest)
        uni = edu.parent[edu.leaf_index["Bachelors"]]
        assert edu.level_from_leaf[uni] == 2 and edu.level_from_leaf[edu.leaf_index["Bachelors"]] == 0
        with pytest.raises(HierarchyError, match=r"'education'.*unbalanced.*\[3, 4\].*WHD"):
            edu.require_balanced("WHD")

    hrs = H.from_mapping("hours", CASE2_HOURS_TREE)
    assert not hrs.is_balanced and hrs.height == 4
    assert sorted(hrs.leaf_index, key=int) == ["30", "32", "35", "37", "42", "44"]
    assert path_of(hrs, "32") == ["32", "[1-35)", "[1-37)", "ANY[1-99)"]
    assert path_of(hrs, "35") == ["35", "[35-37)", "[1-37)", "ANY[1-99)"]
    assert path_of(hrs, "44") == ["44", "[37-99)", "ANY[1-99)"]
    with pytest.raises(HierarchyError, match="'hours'"):
        hrs.require_balanced("KACA")
    # the same tree written as ARX rows of different lengths loads only when allowed
    rows = hrs.to_arx_csv()
    with pytest.raises(HierarchyError, match=r"'hours'.*different lengths"):
        H.from_arx_csv(rows, "hours")
    assert structure(H.from_arx_csv(rows, "hours", allow_unbalanced=True)) == structure(hrs)


def test_balanced_tree_require_balanced_passes():
    h = H.from_arx_csv(REGIONS_ARX, "country")
    h.require_balanced("WHD")  # no error


def test_levels_numbered_from_root():
    h = H.masking("postcode", ["4351", "4352"])
    assert h.level[0] == 1  # root
    assert set(h.level[h.leaves]) == {5}  # leaves at level h
    v = h.leaf_index["4351"]
    assert [int(h.level[a]) for a in h.ancestors[v]] == [1, 2, 3, 4, 5]
    assert list(h.level_from_leaf[h.ancestors[v]]) == [4, 3, 2, 1, 0]
    assert list(h.depth[h.ancestors[v]]) == [0, 1, 2, 3, 4]


def test_ancestor_at_depth_and_is_ancestor():
    h = H.from_mapping("education", CASE2_EDUCATION_TREE)
    bac, ninth = h.leaf_index["Bachelors"], h.leaf_index["9th"]
    codes = np.array([bac, ninth])
    assert [h.labels[x] for x in h.ancestor_at_depth(codes, 1)] == ["University", "Secondary"]
    # a shallower leaf stays itself below its depth
    assert [h.labels[x] for x in h.ancestor_at_depth(codes, 3)] == ["Bachelors", "9th"]
    sec = h.parent[h.parent[ninth]]
    assert h.is_ancestor_or_self(sec, ninth) and h.is_ancestor_or_self(ninth, ninth)
    assert not h.is_ancestor_or_self(sec, bac) and not h.is_ancestor_or_self(ninth, sec)
    assert h.is_ancestor_or_self(0, bac)


# ------------------------------------------------------------------ random trees and LCA
@st.composite
def random_trees(draw, max_nodes=60):
    """Parent arrays of random rooted trees (parents precede children)."""
    picks = draw(st.lists(st.integers(0, 10**6), min_size=1, max_size=max_nodes - 1))
    parent = [-1] + [x % (i + 1) for i, x in enumerate(picks)]
    return Hierarchy("rand", ["*"] + [f"n{v}" for v in range(1, len(parent))], np.array(parent))


def brute_lca(h: Hierarchy, a: int, b: int) -> int:
    seen = set()
    v = a
    while v >= 0:
        seen.add(v)
        v = int(h.parent[v])
    v = b
    while v not in seen:
        v = int(h.parent[v])
    return v


def check_lca_all_pairs(h: Hierarchy) -> None:
    n = h.n_nodes
    a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    got = h.lca(a.ravel(), b.ravel()).reshape(n, n)
    want = np.array([[brute_lca(h, i, j) for j in range(n)] for i in range(n)])
    np.testing.assert_array_equal(got, want)
    # scalar and broadcast forms
    assert int(h.lca(n - 1, 0)) == 0
    np.testing.assert_array_equal(h.lca(np.arange(n), n - 1), want[:, n - 1])


@settings(max_examples=60, deadline=None)
@given(random_trees())
def test_lca_dense_table_matches_brute_force(h):
    assert h.n_nodes <= H.DENSE_LCA_MAX_NODES
    check_lca_all_pairs(h)
    np.testing.assert_array_equal(h.lca_table, h.lca_table.T)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(random_trees())
def test_lca_ancestor_walk_matches_brute_force(monkeypatch, h):
    monkeypatch.setattr(tree, "DENSE_LCA_MAX_NODES", 1)  # read where the tree is defined
    fresh = Hierarchy("rand", list(h.labels), h.parent.copy())
    with pytest.raises(HierarchyError, match=r"'rand' has \d+ nodes; no dense LCA table above 1 "):
        _ = fresh.lca_table  # the walk path is the one in use
    check_lca_all_pairs(fresh)


@settings(max_examples=60, deadline=None)
@given(random_trees())
def test_tree_shape_invariants(h):
    n = h.n_nodes
    # depth / level / ancestors agree with walking the parents
    for v in range(n):
        chain = [v]
        while h.parent[chain[-1]] >= 0:
            chain.append(int(h.parent[chain[-1]]))
        assert h.depth[v] == len(chain) - 1 and h.level[v] == len(chain)
        assert list(h.ancestors[v, : h.depth[v] + 1]) == chain[::-1]
        assert all(h.ancestors[v, d] == v for d in range(h.depth[v], h.height))
        assert sorted(h.children[v]) == [c for c in range(n) if h.parent[c] == v]
    assert h.is_balanced == (len(set(h.depth[h.leaves])) == 1)
    assert h.height == h.depth.max() + 1


@settings(max_examples=60, deadline=None)
@given(random_trees(), st.sampled_from([";", ","]))
def test_arx_round_trip_random_trees(h, sep):
    text = h.to_arx_csv(sep)
    assert len(text.splitlines()) == len(h.leaf_index)
    back = H.from_arx_csv(text, "rand", allow_unbalanced=True)
    assert structure(back) == structure(h)
    assert back.n_nodes == h.n_nodes and back.is_balanced == h.is_balanced
    via_mapping = H.from_mapping("rand", h.to_mapping())
    assert structure(via_mapping) == structure(h)


def test_arx_round_trip_adult_hierarchies(adult_path):
    for name, height in ADULT_QI_HEIGHTS.items():
        f = adult_path / "hierarchies" / f"adult_hierarchy_{name}.csv"
        h = H.from_arx_csv(f)
        assert h.name == name and h.height == height and h.is_balanced
        back = H.from_arx_csv(h.to_arx_csv(), name)
        assert structure(back) == structure(h)
        # the serialised rows are the file's rows (ARX order: leaf first, root last)
        original = {tuple(r.split(";")) for r in f.read_text().splitlines() if r.strip()}
        assert structure(h) == original


# ------------------------------------------------------------------ generalise_labels
def test_generalise_labels():
    # a label repeated on two levels (chain a -> a -> *) and ordinary paths
    h = H.from_arx_csv("a;a;*\nb;B;*\nc;B;*\n", "x")
    a, b, c = (h.leaf_index[x] for x in "abc")
    leaves = np.array([a, a, b, b, c, c, a, b])
    labels = np.array(["a", "*", "B", "b", "B", "b", "B", "zzz"], dtype=object)
    got = h.generalise_labels(leaves, labels)
    inner_a = h.parent[a]
    assert h.labels[inner_a] == "a" and inner_a != a
    assert list(got[:6]) == [a, 0, h.parent[b], b, h.parent[c], -1]
    assert got[6] == -1  # 'B' is not above 'a'
    assert got[7] == -1  # unknown label
    # an inner node as the "leaf" (already generalised) decodes itself and its ancestors
    got = h.generalise_labels(np.array([inner_a, inner_a]), np.array(["a", "*"], dtype=object))
    assert list(got) == [inner_a, 0]


# ------------------------------------------------------------------ errors
def test_value_missing_from_hierarchy_via_encode(paper_hierarchies):
    df = pd.DataFrame({"Age": ["young", "ancient", "old"], "Gender": ["male", "female", "male"]})
    with pytest.raises(DataError, match=r"'Age'.*'ancient'"):
        encode(df, ["Gender", "Age"], paper_hierarchies)
    with pytest.raises(HierarchyError, match=r"'ancient'.*'Age'"):
        paper_hierarchies["Age"].code_of("ancient")


def test_many_missing_values_listed():
    h = H.suppression("n", ["1"])
    with pytest.raises(HierarchyError, match=r"'n'.*'10'.*and 2 more"):
        h.codes_of([str(i) for i in range(2, 14)])


def test_leaf_listed_twice():
    with pytest.raises(HierarchyError, match=r"'country'.*'France'.*twice"):
        H.from_arx_csv(REGIONS_ARX + "France;Asia;*\n", "country")


def test_node_with_two_parents():
    text = "a;G;R1;*\nb;G;R2;*\n"
    with pytest.raises(HierarchyError, match=r"'grp'.*'G'.*two parents.*'R1'.*'R2'"):
        H.from_arx_csv(text, "grp")
    with pytest.raises(HierarchyError, match=r"'grp'.*'x'.*twice"):
        H.from_mapping("grp", {"*": {"A": ["x"], "B": ["x", "y"]}})


def test_leaf_that_is_also_inner_node():
    with pytest.raises(HierarchyError, match=r"'grp'.*'G'.*children"):
        H.from_arx_csv("a;G;*\nb;G;*\nG;*\n", "grp", allow_unbalanced=True)


def test_ragged_rows_rejected_unless_allowed():
    text = "a;G;*\nb;G;*\nc;*\n"
    with pytest.raises(HierarchyError, match=r"'grp'.*different lengths.*'c'"):
        H.from_arx_csv(text, "grp")
    h = H.from_arx_csv(text, "grp", allow_unbalanced=True)
    assert not h.is_balanced
    assert path_of(h, "c") == ["c", "*"] and path_of(h, "a") == ["a", "G", "*"]


def test_several_roots_rejected():
    with pytest.raises(HierarchyError, match=r"'grp'.*several roots"):
        H.from_arx_csv("a;G;*\nb;G;ANY\n", "grp")


def test_empty_hierarchy(tmp_path):
    with pytest.raises(HierarchyError, match=r"'grp'.*empty"):
        H.from_arx_csv("\n \n", "grp")
    f = tmp_path / "x_hierarchy_grp.csv"
    f.write_text("")
    with pytest.raises(HierarchyError, match=r"'grp'.*empty"):
        H.from_arx_csv(f)
    with pytest.raises(HierarchyError, match=r"'grp'.*empty"):
        H.from_mapping("grp", {"*": []})
    with pytest.raises(HierarchyError, match=r"'grp'.*empty"):
        Hierarchy("grp", [], np.array([], dtype=np.int32))
    with pytest.raises(HierarchyError, match=r"'grp'"):
        H.suppression("grp", [])


def test_missing_file(tmp_path):
    f = tmp_path / "adult_hierarchy_age.csv"
    with pytest.raises(HierarchyError, match=r"adult_hierarchy_age\.csv.*'age'.*does not exist"):
        H.from_arx_csv(f)
    with pytest.raises(HierarchyError, match=r"'edu'.*does not exist"):
        H.from_file(tmp_path / "edu.yaml", "edu")
    with pytest.raises(HierarchyError, match=r"'edu'.*does not exist"):
        H.from_file(tmp_path / "edu.csv", "edu")


def test_value_to_label():
    assert H.value_to_label(35.0) == "35"
    assert H.value_to_label(np.int64(4351)) == "4351"
    assert H.value_to_label(" male ") == "male"
    assert H.value_to_label(2.5) == "2.5"
    assert H.value_to_label(pd.Timestamp("1980-04-03")) == "03/04/1980"


def test_trailing_separators_add_no_level():
    """Spreadsheets often end every row with the separator: 'female;*;' is a
    two-level hierarchy, not one whose root is the empty string."""
    h = H.from_arx_csv("female;*;\nmale;*;\n", "gender")
    assert h.height == 2 and h.labels[0] == "*"
    mixed = H.from_arx_csv("4351;435*;*;;\n4352;435*;*\n", "postcode")
    assert mixed.height == 3 and mixed.is_balanced
