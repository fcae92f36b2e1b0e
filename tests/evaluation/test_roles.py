"""Column roles (unclassified columns, --strict, linkage risks), pseudonyms
and the shuffled release (--shuffle, --keep-order-map, evaluate --order-map)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import hieranon
from hieranon import cli
from hieranon.core.table import DataError
from hieranon.evaluation.roles import UnclassifiedColumnsWarning, assess_roles
from hieranon.hierarchies import readers as H
from hieranon.io.datasets import example_path
from hieranon.job.spec import AnonymizationSpec

EXAMPLE = example_path("patients.csv")
EXAMPLE_CFG = example_path("patients.yaml")
ADULT_QIS = ["age", "workclass", "education", "marital-status"]


def run(*args):
    return CliRunner().invoke(cli.app, [str(a) for a in args])


def patients():
    df = pd.read_csv(EXAMPLE, dtype=str)
    hs = {"gender": H.suppression("gender", df["gender"]),
          "age": H.intervals("age", df["age"].astype(int), [5, 10, 20]),
          "postcode": H.masking("postcode", df["postcode"])}
    return df, hs


@pytest.fixture(scope="module")
def adult(adult_path):
    from hieranon.io.datasets import load_adult
    return load_adult(adult_path)


@pytest.fixture(scope="module")
def adult_csv(adult, tmp_path_factory):
    """The first 400 Adult records as a CSV and --qi options for 4 QIs."""
    path = tmp_path_factory.mktemp("adult") / "adult.csv"
    adult.frame.head(400).to_csv(path, index=False)
    hdir = adult.path / "hierarchies"
    return path, [x for q in ADULT_QIS for x in ("--qi", f"{q}={hdir / f'adult_hierarchy_{q}.csv'}")]


# ------------------------------------------------------------------ roles
def test_unclassified_columns_are_named_with_their_share_of_unique_values(adult):
    df = adult.frame
    spec = AnonymizationSpec(hierarchies=adult.hierarchies_for(4), k=5, sensitive=("salary-class",),
                             insensitive=("education-num", "relationship", "race", "sex", "capital-gain",
                                          "capital-loss", "hours-per-week", "native-country", "occupation"))
    report = assess_roles(df, spec)
    share = df["fnlwgt"].nunique() / len(df)
    assert report.unclassified == {"fnlwgt": pytest.approx(share, abs=1e-4)}
    assert "fnlwgt" in report.warning() and f"{share:.1%}" in report.warning()
    # fnlwgt is near-unique; education-num is a copy of the QI education
    risks = {r["column"]: r["reason"] for r in report.linkage}
    assert risks == {"fnlwgt": "near_unique", "education-num": "copy_of_quasi_identifier"}


def test_api_warns_once_and_strict_raises():
    df, hs = patients()
    with pytest.warns(UnclassifiedColumnsWarning) as caught:
        result = hieranon.anonymize(df, hierarchies=hs, k=3, identifiers=["id"], seed=0)
    assert len([w for w in caught if w.category is UnclassifiedColumnsWarning]) == 1
    text = str(caught[0].message)
    assert "date_of_birth" in text and "diagnosis" in text and "readmitted" in text and "id (" not in text
    assert set(result.roles.unclassified) == {"date_of_birth", "diagnosis", "readmitted"}
    with pytest.raises(DataError, match="date_of_birth"):
        hieranon.anonymize(df, hierarchies=hs, k=3, identifiers=["id"], strict_roles=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every column has a role: no warning
        hieranon.anonymize(df, hierarchies=hs, k=3, identifiers=["id"], sensitive=["diagnosis"],
                           insensitive=["date_of_birth", "readmitted"], strict_roles=True)


def test_readme_api_example_drops_the_identifier():
    df, hs = patients()
    result = hieranon.anonymize(df, hierarchies=hs, k=3, method="kaca+", seed=0, identifiers=["id"],
                                sensitive=["diagnosis"], insensitive=["date_of_birth", "readmitted"])
    assert "id" not in result.data.columns


def test_cli_warns_in_one_line_and_strict_exits_2_writing_nothing(adult_csv, tmp_path):
    path, qi = adult_csv
    out = tmp_path / "out.csv"
    roles = ["--config", _roles_config(tmp_path)]
    r = run("anonymize", path, "-o", out, *qi, *roles, "-k", 5, "--method", "fulldomain", "-q")
    assert r.exit_code == 0, r.stderr
    lines = [x for x in r.stderr.splitlines() if "no role" in x]
    assert len(lines) == 1 and "fnlwgt" in lines[0] and "% unique values" in lines[0]
    out.unlink()
    r = run("anonymize", path, "-o", out, *qi, *roles, "-k", 5, "--method", "fulldomain", "--strict", "--shuffle")
    assert r.exit_code == 2 and "fnlwgt" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()


def _roles_config(tmp_path):
    """Every Adult column but fnlwgt has a role (the QIs come from --qi)."""
    cfg = tmp_path / "roles.yaml"
    cfg.write_text("sensitive: [salary-class]\ninsensitive: [education-num, relationship, race, sex, capital-gain, "
                   "capital-loss, hours-per-week, native-country, occupation]\n")
    return cfg


def test_strict_from_the_configuration(adult_csv, tmp_path):
    path, qi = adult_csv
    cfg = _roles_config(tmp_path)
    cfg.write_text(cfg.read_text() + "strict: true\nshuffle: true\n")
    out = tmp_path / "out.csv"
    r = run("anonymize", path, "-o", out, *qi, "--config", cfg, "-k", 5)
    assert r.exit_code == 2 and "fnlwgt" in r.stderr and not out.exists()
    r = run("check", path, *qi, "--config", cfg, "-k", 5)
    assert r.exit_code == 2 and "fnlwgt" in r.stderr


def test_check_flags_linkage_risks(adult_csv, tmp_path):
    path, qi = adult_csv
    r = run("check", path, *qi, "--config", _roles_config(tmp_path), "-k", 5, "--json")
    got = json.loads(r.stdout)
    assert {x["column"]: x["reason"] for x in got["linkage_risks"]} == {
        "fnlwgt": "near_unique", "education-num": "copy_of_quasi_identifier"}
    assert list(got["unclassified_columns"]) == ["fnlwgt"]
    r = run("check", path, *qi, "--config", _roles_config(tmp_path), "-k", 5)
    assert "linkage risk: 'fnlwgt'" in r.stderr and "linkage risk: 'education-num'" in r.stderr


def test_no_linkage_risk_by_chance():
    """A column determined by a near-unique QI only because that QI is unique is no copy."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"q": np.arange(100).astype(str), "s": rng.choice(["a", "b", "c"], 100)})
    spec = AnonymizationSpec(hierarchies={"q": H.suppression("q", df["q"])}, k=2, sensitive=("s",))
    assert assess_roles(df, spec).linkage == []


# ------------------------------------------------------------ pseudonyms
def test_pseudonym_is_keyed_and_consistent_per_value():
    """One pseudonym per value; the same key gives the same pseudonyms, the
    default (no key) a fresh key per run -- even with the same seed."""
    df, hs = patients()
    df = pd.concat([df, df.head(3)], ignore_index=True)  # three identifiers twice
    kw = dict(hierarchies=hs, k=3, identifiers=["id"], identifier_action="pseudonym",
              sensitive=["diagnosis"], insensitive=["date_of_birth", "readmitted"])
    key = bytes(range(32))
    a = hieranon.anonymize(df, pseudonym_key=key, **kw).data["id"]
    b = hieranon.anonymize(df, pseudonym_key=key, seed=5, **kw).data["id"]
    c = hieranon.anonymize(df, seed=3, **kw).data["id"]
    d = hieranon.anonymize(df, seed=3, **kw).data["id"]
    assert a.tolist() == b.tolist()
    assert not set(c) & set(d) and not set(a) & set(c)
    assert not set(a) & set(df["id"])  # no original identifier is published
    same = df["id"].to_numpy()[:, None] == df["id"].to_numpy()[None, :]
    for p in (a, c):
        assert ((p.to_numpy()[:, None] == p.to_numpy()[None, :]) == same).all()  # one pseudonym per value


def test_a_non_default_index_is_not_published(caplog):
    """An index holding identifiers never reaches result.data (nor to_csv):
    dropped with a warning naming it, an error with strict_roles."""
    df, hs = patients()
    indexed = df.set_index("id")
    kw = dict(hierarchies=hs, k=3, sensitive=["diagnosis"], insensitive=["date_of_birth", "readmitted"])
    with caplog.at_level("WARNING", logger="hieranon"):
        result = hieranon.anonymize(indexed, **kw)
    assert result.data.index.equals(pd.RangeIndex(len(df)))
    written = result.data.to_csv()
    assert not any(i in written for i in df["id"])
    assert any("'id'" in r.getMessage() and "reset_index" in r.getMessage() for r in caplog.records)
    with pytest.raises(DataError, match=r"strict: .*'id'.*reset_index"):
        hieranon.anonymize(indexed, strict_roles=True, **kw)
    plain = hieranon.anonymize(df.drop(columns="id"), **kw)  # the same table without it: the same release
    assert result.data.equals(plain.data)


# ---------------------------------------------------------------- shuffle
def test_shuffle_is_seeded_and_keeps_the_rows():
    df, hs = patients()
    kw = dict(hierarchies=hs, k=3, identifiers=["id"], sensitive=["diagnosis"],
              insensitive=["date_of_birth", "readmitted"], seed=1)
    plain = hieranon.anonymize(df, **kw)
    s1, s2 = hieranon.anonymize(df, shuffle=True, **kw), hieranon.anonymize(df, shuffle=True, **kw)
    assert plain.row_order is None and s1.row_order is not None
    assert s1.data.equals(s2.data)
    assert not s1.data.equals(plain.data)
    # through the permutation the shuffled output is the unshuffled one
    assert s1.data.equals(plain.data.iloc[s1.row_order].reset_index(drop=True))
    key = list(plain.data.columns)
    assert sorted(map(tuple, plain.data[key].to_numpy().tolist())) == \
        sorted(map(tuple, s1.data[key].to_numpy().tolist()))
    assert s1.verification.ok
    m = s1.order_map()
    assert list(m.columns) == ["input_row", "output_row"] and sorted(m["input_row"]) == list(range(len(df)))


def test_cli_shuffle_order_map_and_evaluate(tmp_path):
    a, b, plain = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "plain.csv"
    amap, bmap = tmp_path / "a_map.csv", tmp_path / "b_map.csv"
    common = ("--config", EXAMPLE_CFG, "--seed", 1, "-q")
    assert run("anonymize", EXAMPLE, "-o", a, *common, "--shuffle", "--keep-order-map", amap).exit_code == 0
    assert run("anonymize", EXAMPLE, "-o", b, *common, "--shuffle", "--keep-order-map", bmap).exit_code == 0
    assert run("anonymize", EXAMPLE, "-o", plain, *common).exit_code == 0
    assert a.read_text() == b.read_text() and amap.read_text() == bmap.read_text()
    ra, rp = a.read_text().splitlines(), plain.read_text().splitlines()
    assert ra[0] == rp[0] and ra != rp and sorted(ra[1:]) == sorted(rp[1:])
    # the permutation is never written unless asked for
    c = tmp_path / "c.csv"
    assert run("anonymize", EXAMPLE, "-o", c, *common, "--shuffle").exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "a_map.csv", "b.csv", "b_map.csv", "c.csv",
                                                          "plain.csv"]
    # evaluate: verified through the order map; without it, the rows are reordered
    r = run("evaluate", EXAMPLE, a, "--config", EXAMPLE_CFG, "--order-map", amap)
    assert r.exit_code == 0 and r.stdout.count("VERIFIED: ") == 1 and "verified:" not in r.stdout
    assert "row order" not in r.stderr
    # without it, the shuffle is named (not a failed verification), with the option that undoes it
    r = run("evaluate", EXAMPLE, a, "--config", EXAMPLE_CFG)
    assert r.exit_code == 2 and "shuffled" in r.stderr and "--order-map" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "VERIFICATION FAILED" not in r.stdout
    r = run("report", EXAMPLE, a, "--config", EXAMPLE_CFG, "-o", tmp_path / "r.html")
    assert r.exit_code == 2 and "--order-map" in r.stderr and not (tmp_path / "r.html").exists()
    # an unshuffled release is verified, and the summary says in the verdict's style that it keeps the order
    r = run("evaluate", EXAMPLE, plain, "--config", EXAMPLE_CFG)
    assert r.exit_code == 0 and "DOES NOT HOLD: the rows keep the input's order" in r.stdout
    r = run("anonymize", EXAMPLE, "-o", tmp_path / "d.csv", *common, "--keep-order-map", tmp_path / "m.csv")
    assert r.exit_code == 2 and "--shuffle" in r.stderr and not (tmp_path / "d.csv").exists()


def test_shuffle_from_the_configuration(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(EXAMPLE_CFG.read_text().replace("patients_hierarchy", str(EXAMPLE.parent / "patients_hierarchy"))
                   + "shuffle: true\n")
    out, plain = tmp_path / "o.csv", tmp_path / "p.csv"
    assert run("anonymize", EXAMPLE, "-o", out, "--config", cfg, "-q").exit_code == 0
    assert run("anonymize", EXAMPLE, "-o", plain, "--config", cfg, "--no-shuffle", "-q").exit_code == 0
    assert out.read_text() != plain.read_text()
    assert sorted(out.read_text().splitlines()) == sorted(plain.read_text().splitlines())


def test_roles_on_the_command_line_add_to_the_configuration(adult_csv, tmp_path):
    """--identifier/--sensitive/--insensitive classify columns without a
    config (or beside one): with every column classified none is named as
    without a role and check --strict passes (anonymize --strict also refuses
    the linkage risk of education-num, tested apart), the
    identifier is dropped (or pseudonymised), and a declared column the table
    lacks is refused by name."""
    path, qi = adult_csv
    out = tmp_path / "out.csv"
    others = ["education-num", "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
              "native-country", "occupation"]
    roles = ["--identifier", "fnlwgt", "--sensitive", "salary-class",
             *[x for c in others for x in ("--insensitive", c)]]
    r = run("anonymize", path, "-o", out, *qi, *roles, "-k", 5, "--method", "fulldomain", "-q")
    assert r.exit_code == 0, r.stderr
    assert "no role" not in r.stderr
    assert "fnlwgt" not in pd.read_csv(out).columns
    r = run("anonymize", path, "-o", out, *qi, *roles, "-k", 5, "--method", "fulldomain", "-q",
            "--identifier-action", "pseudonym", "--force")
    assert r.exit_code == 0, r.stderr
    released = pd.read_csv(out, dtype=str)["fnlwgt"]
    original = pd.read_csv(path, dtype=str)["fnlwgt"]
    assert not released.isin(original).any() and released.nunique() == original.nunique()
    # half the roles in a config, the other half on the command line
    cfg = tmp_path / "half.yaml"
    cfg.write_text("insensitive: [" + ", ".join(others[:4]) + "]\n")
    r = run("check", path, *qi, "--config", cfg, "-k", 5, "--strict", "--identifier", "fnlwgt", "--sensitive",
            "salary-class", *[x for c in others[4:] for x in ("--insensitive", c)])
    assert r.exit_code == 1, r.stderr  # the raw table is not 5-anonymous; --strict passes
    assert "no role" not in r.stderr and "strict" not in r.stderr
    for option in ("--sensitive", "--insensitive", "--identifier"):
        r = run("anonymize", path, "-o", tmp_path / "none.csv", *qi, "-k", 5, option, "salary_class")
        assert r.exit_code == 2 and "salary_class" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "none.csv").exists()


# ------------------------------------------------------------ contradictory roles
def test_role_conflicts_name_the_column_both_roles_and_where_they_came_from():
    from hieranon.evaluation.roles import RoleConflictError, check_role_conflicts

    with pytest.raises(RoleConflictError) as info:
        check_role_conflicts({"sensitive": ["d"], "insensitive": ["x", "d"]},
                             {("sensitive", "d"): "sensitive in cfg.yaml", ("insensitive", "d"): "--insensitive"})
    message = str(info.value)
    assert "'d'" in message and "sensitive (sensitive in cfg.yaml)" in message
    assert "insensitive (--insensitive)" in message and "one role" in message
    check_role_conflicts({"sensitive": ["d"], "class_column": "d", "insensitive": ["x"], "count_column": "n"})
    check_role_conflicts({"sensitive": ["d", "d"]})  # the same role twice is no contradiction


@pytest.mark.parametrize("roles, column, first, second", [
    ({"sensitive": ["age"]}, "age", "a quasi-identifier (quasi_identifiers)", "sensitive (sensitive)"),
    ({"insensitive": ["age"]}, "age", "a quasi-identifier", "insensitive (insensitive)"),
    ({"identifiers": ["id"], "sensitive": ["id"]}, "id", "an identifier (identifiers)", "sensitive"),
    ({"identifiers": ["id"], "insensitive": ["id"]}, "id", "an identifier", "insensitive"),
    ({"sensitive": ["diagnosis"], "insensitive": ["diagnosis"]}, "diagnosis", "sensitive", "insensitive"),
    ({"identifiers": ["id"], "class_column": "id"}, "id", "an identifier", "the class column"),
    ({"insensitive": ["n"], "count_column": "n"}, "n", "insensitive", "the count column"),
])
def test_api_refuses_contradictory_roles(roles, column, first, second):
    df, hs = patients()
    with pytest.raises(DataError) as info:
        hieranon.anonymize(df, None, hs, 2, **roles)
    message = str(info.value)
    assert f"column {column!r} is {first}" in message and f"and {second}" in message, message


def test_spec_refuses_a_privacy_model_on_an_insensitive_column():
    from hieranon.privacy import DistinctLDiversity

    _, hs = patients()
    with pytest.raises(DataError, match=r"'diagnosis' is sensitive \(distinct 2-diversity of 'diagnosis'\) and "
                                        r"insensitive \(insensitive\)"):
        AnonymizationSpec(hierarchies=hs, k=2, insensitive=["diagnosis"],
                          privacy=(DistinctLDiversity("diagnosis", 2),))


def test_config_and_command_line_roles_are_checked_together(tmp_path):
    from hieranon.job import config as C

    f = tmp_path / "cfg.yaml"
    f.write_text("k: 2\nquasi_identifiers: {age: {intervals: [5]}}\nsensitive: [diagnosis]\n")
    spec = AnonymizationSpec.from_config(C.load(f))
    with pytest.raises(DataError, match=r"'diagnosis' is sensitive \(sensitive in cfg\.yaml\) and insensitive "
                                        r"\(--insensitive\)"):
        spec.with_overrides(insensitive=("diagnosis",), origins={("insensitive", "diagnosis"): "--insensitive"})
    with pytest.raises(DataError, match=r"'age' is a quasi-identifier \(quasi_identifiers in cfg\.yaml\) and "
                                        r"an identifier \(identifiers\)"):
        spec.with_overrides(identifiers=("age",))


@pytest.mark.parametrize("text, fragments", [
    ("sensitive: [age]", ["'age' is a quasi-identifier (quasi_identifiers in cfg.yaml)", "sensitive (sensitive in"]),
    ("insensitive: [age]", ["'age' is a quasi-identifier", "insensitive (insensitive in cfg.yaml)"]),
    ("identifiers: [d]\nsensitive: [d]", ["'d' is an identifier (identifiers in cfg.yaml)", "sensitive"]),
    ("sensitive: [d]\ninsensitive: [d]", ["'d' is sensitive (sensitive in cfg.yaml)", "insensitive"]),
    ("insensitive: [d]\nprivacy: {d: [{l_diversity: 2}]}", ["'d' is sensitive (privacy in cfg.yaml)",
                                                            "insensitive (insensitive in cfg.yaml)"]),
])
def test_config_refuses_contradictory_roles(tmp_path, text, fragments):
    from hieranon.job import config as C

    f = tmp_path / "cfg.yaml"
    f.write_text(f"k: 2\nquasi_identifiers: {{age: {{intervals: [5]}}}}\n{text}\n")
    with pytest.raises(C.ConfigError) as info:
        C.load(f)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


@pytest.mark.parametrize("role", ["identifiers", "sensitive", "insensitive"])
def test_a_role_given_as_text_is_one_column(role):
    """A text names one column, as ``quasi_identifiers`` does: ``sensitive="diag"``
    named the columns d, i, a, g, and ``insensitive="ab"`` split into a and b."""
    df = pd.DataFrame({"q": list("xxxyyy"), "diag": list("abcabc")})
    result = hieranon.anonymize(df, hierarchies={"q": "suppress"}, k=3, strict_roles=True, **{role: "diag"})
    assert getattr(result.spec, role) == ("diag",)
