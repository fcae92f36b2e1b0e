"""The YAML configuration: every key validated with an error naming it,
hierarchy builders, the template, aliases, relative paths."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from hieranon.core.tree import HierarchyError
from hieranon.io.datasets import example_path
from hieranon.job import config as C
from hieranon.job.config import ConfigError

DATA = example_path().parent

BASE = {"quasi_identifiers": {"gender": {"suppress": True}}, "k": 2}


def with_(**changes) -> dict:
    raw = dict(BASE)
    raw.update(changes)
    return raw


# (raw configuration, fragments the error message must contain: the key, and the allowed values)
BAD = {
    "not a mapping": (["k", 3], ["mapping"]),
    "unknown key": (with_(methdo="kaca1"), ["methdo", "did you mean 'method'", "allowed keys"]),
    "unknown key, no suggestion": (with_(zzz=1), ["zzz", "allowed keys", "quasi_identifiers"]),
    "quasi_identifiers not a mapping": (with_(quasi_identifiers=5), ["quasi_identifiers", "mapping"]),
    "hierarchy none": (with_(quasi_identifiers={"age": None}), ["quasi_identifiers.age", "intervals", "mask"]),
    "hierarchy wrong type": (with_(quasi_identifiers={"age": 5}), ["quasi_identifiers.age", "file path"]),
    "hierarchy unknown key": (with_(quasi_identifiers={"age": {"interval": [5]}}),
                              ["quasi_identifiers.age", "'interval'", "intervals"]),
    "hierarchy two kinds": (with_(quasi_identifiers={"age": {"intervals": [5], "suppress": True}}),
                            ["quasi_identifiers.age", "exactly one"]),
    "hierarchy no kind": (with_(quasi_identifiers={"age": {"origin": 5}}), ["quasi_identifiers.age", "exactly one"]),
    "intervals not list": (with_(quasi_identifiers={"age": {"intervals": 5}}), ["quasi_identifiers.age.intervals",
                                                                              "[5, 10, 20]"]),
    "intervals negative": (with_(quasi_identifiers={"age": {"intervals": [5, -1]}}),
                           ["quasi_identifiers.age.intervals", "positive"]),
    "mask zero": (with_(quasi_identifiers={"pc": {"mask": 0}}), ["quasi_identifiers.pc.mask", ">= 1"]),
    "mask text": (with_(quasi_identifiers={"pc": {"mask": "4"}}), ["quasi_identifiers.pc.mask", "whole number"]),
    "dates order": (with_(quasi_identifiers={"d": {"dates": "dym"}}), ["quasi_identifiers.d.dates", "dmy, mdy, ymd"]),
    "suppress false": (with_(quasi_identifiers={"g": {"suppress": False}}), ["quasi_identifiers.g.suppress", "true"]),
    "k zero": (with_(k=0), ["k:", ">= 1"]),
    "k text": (with_(k="3"), ["k:", "whole number"]),
    "k bool": (with_(k=True), ["k:", "whole number"]),
    "k float": (with_(k=2.5), ["k:", "whole number"]),
    "requirements not list": (with_(requirements="a:3"), ["requirements", "list"]),
    "requirements bad entry": (with_(requirements=[3]), ["requirements", "'A,B:K'"]),
    "requirements bad mapping": (with_(requirements=[{"attrs": ["a"], "k": 3}]), ["requirements", "attributes"]),
    "method unknown": (with_(method="kaka"), ["method", "'kaka'", "kaca1"]),
    "params not mapping": (with_(params=[1]), ["params", "mapping"]),
    "weights unknown": (with_(weights="heavy"), ["weights", "uniform, height or mage"]),
    "beta below 1": (with_(beta=0.5), ["beta", ">= 1"]),
    "beta text": (with_(beta="1"), ["beta", "number"]),
    "beta infinite": (with_(beta=float("inf")), ["beta", "finite", "inf"]),
    "priorities wrong type": (with_(priorities="age"), ["priorities", "ranking", "mapping"]),
    "seed negative": (with_(seed=-1), ["seed", ">= 0"]),
    "seed bool": (with_(seed=False), ["seed", "whole number"]),
    "pseudonym_key not a path": (with_(pseudonym_key=5), ["pseudonym_key", "path of a key file"]),
    "pseudonym_key missing file": (with_(pseudonym_key="nope.key"), ["pseudonym_key", "nope.key", "does not exist",
                                                                    "secrets.token_hex(32)"]),
    "identifiers not list": (with_(identifiers=[1, 2]), ["identifiers", "list of column names"]),
    "identifier_action unknown": (with_(identifier_action="hash"), ["identifier_action", "drop, mask or pseudonym"]),
    "sensitive not list": (with_(sensitive={"a": 1}), ["sensitive", "list of column names"]),
    "insensitive not list": (with_(insensitive=3), ["insensitive", "list of column names"]),
    "class_column not str": (with_(class_column=["a"]), ["class_column", "column name"]),
    "count_column not str": (with_(count_column=1), ["count_column", "column name"]),
    "missing unknown": (with_(missing="drop"), ["missing", "error, root or value"]),
    "numeric_output unknown": (with_(numeric_output="mid"), ["numeric_output", "midpoint or bounds", "'mid'"]),
    "suppression_threshold negative": (with_(suppression_threshold=-1), ["suppression_threshold", ">= 0"]),
    "risk_threshold zero": (with_(risk_threshold=0), ["risk_threshold", "(0, 1]", "got 0"]),
    "risk_threshold above 1": (with_(risk_threshold=1.5), ["risk_threshold", "(0, 1]", "1.5"]),
    "risk_threshold negative": (with_(risk_threshold=-0.2), ["risk_threshold", "(0, 1]"]),
    "risk_threshold text": (with_(risk_threshold="0.2"), ["risk_threshold", "(0, 1]", "'0.2'"]),
    "risk_threshold bool": (with_(risk_threshold=True), ["risk_threshold", "(0, 1]"]),
    "strict not a bool": (with_(strict="yes"), ["strict", "true or false", "'yes'"]),
    "shuffle not a bool": (with_(shuffle=1), ["shuffle", "true or false", "1"]),
    "input not str": (with_(input=3), ["input", "path"]),
    "output not a table": (with_(output={"url": "sqlite:///x.db"}), ["output", "{url: URL, table: NAME}"]),
    "identifiers overlap": (with_(identifiers=["gender"]), ["identifiers", "quasi_identifiers", "gender"]),
    "alias and key": (with_(identifying=["id"], identifiers=["id"]), ["identifying", "identifiers"]),
    # audit: each of these was accepted or raised a TypeError without naming the key
    "intervals origin text": (with_(quasi_identifiers={"age": {"intervals": [5, 10], "origin": "abc"}}),
                              ["quasi_identifiers.age.origin", "number", "'abc'"]),
    "intervals origin bool": (with_(quasi_identifiers={"age": {"intervals": [5], "origin": True}}),
                              ["quasi_identifiers.age.origin", "number"]),
    "requirement attributes not names": (with_(requirements=[{"attributes": [1, 2], "k": 3}]),
                                         ["requirements[0].attributes", "list of column names", "[1, 2]"]),
    "requirement attributes empty": (with_(requirements=[{"attributes": [], "k": 3}]),
                                     ["requirements[0].attributes", "list of column names"]),
    "requirement k text": (with_(requirements=["gender:2", {"attributes": ["gender"], "k": "x"}]),
                           ["requirements[1].k", "whole number"]),
    "priorities weight text": (with_(priorities={"gender": "abc"}), ["priorities.gender", "number", "'abc'"]),
    "priorities weight negative": (with_(priorities={"gender": -1}), ["priorities.gender", ">= 0"]),
    "priorities weight bool": (with_(priorities={"gender": True}), ["priorities.gender", "number"]),
    "priorities ranking not names": (with_(priorities=["gender", 3]), ["priorities", "attribute names", "3"]),
    "suppression_threshold bool": (with_(suppression_threshold=True), ["suppression_threshold", "number"]),
    "suppression_threshold text": (with_(suppression_threshold="1"), ["suppression_threshold", "number"]),
    "max_suppression text": (with_(max_suppression="lots"), ["max_suppression", "'5%'", "'lots'"]),
    "class_column is a QI": (with_(class_column="gender"), ["class_column", "'gender'", "quasi-identifier"]),
    "class alias is a QI": (with_(**{"class": "gender"}), ["class_column", "'gender'", "quasi-identifier"]),
    "count_column is a QI": (with_(count_column="gender"), ["count_column", "'gender'", "quasi-identifier"]),
    "count_column is the class column": (with_(count_column="n", class_column="n"),
                                         ["count_column", "class_column", "'n'"]),
    "weight not str": (with_(weight=2), ["weight", "column name"]),
    "weight is a QI": (with_(weight="gender"), ["weight", "'gender'", "quasi-identifier", "the weight column"]),
    "suda_max_size zero": (with_(suda_max_size=0), ["suda_max_size", "whole number"]),
    # sensitive attributes and their privacy models
    "privacy not a mapping": (with_(privacy=[{"l_diversity": 2}]), ["privacy", "mapping", "l_diversity"]),
    "privacy l not a number": (with_(privacy={"disease": {"l_diversity": "x"}}),
                               ["privacy.disease[0]", "number", "'x'"]),
    "privacy unknown model key": (with_(privacy={"disease": [{"l_diversity": 2}, {"l_div": 2}]}),
                                  ["privacy.disease[1]", "'l_div'", "t_closeness"]),
    "privacy variant unknown": (with_(privacy={"disease": {"l_diversity": 2, "variant": "shannon"}}),
                                ["privacy.disease[0]", "'shannon'", "entropy"]),
    "privacy t out of range": (with_(privacy={"disease": {"t_closeness": 2}}), ["privacy.disease[0]", "< 1"]),
    "privacy hierarchical without hierarchy": (
        with_(privacy={"disease": {"t_closeness": 0.2, "distance": "hierarchical"}}),
        ["privacy.disease[0]", "hierarchy"]),
    "privacy on a QI": (with_(privacy={"gender": {"l_diversity": 2}}),
                        ["privacy", "'gender'", "quasi_identifiers"]),
    "privacy on an identifier": (with_(identifiers=["id"], privacy={"id": {"l_diversity": 2}}),
                                 ["privacy", "'id'", "identifiers"]),
    "sensitive_hierarchies not a mapping": (with_(sensitive_hierarchies=["d.csv"]),
                                            ["sensitive_hierarchies", "mapping"]),
    "sensitive_hierarchies missing file": (with_(sensitive_hierarchies={"disease": "nope.csv"}),
                                           ["sensitive_hierarchies", "nope.csv"]),
    # the population and the risk-based models
    "population two keys": (with_(population={"size": 10, "sampling_fraction": 0.1}),
                            ["population", "sampling_fraction, size, table"]),
    "population fraction above 1": (with_(population={"sampling_fraction": 2}),
                                    ["population.sampling_fraction", "(0, 1]", "2"]),
    "population size not whole": (with_(population={"size": 10.5}), ["population.size", "whole number", "10.5"]),
    "population table missing": (with_(population={"table": "nope.csv"}), ["nope.csv"]),
    "risk_models unknown model": (with_(risk_models={"avg_risk": 0.1}), ["risk_models.avg_risk", "average_risk"]),
    "risk_models not a mapping": (with_(risk_models=[0.1]), ["risk_models", "mapping", "average_risk"]),
    "risk_models k_map without a population": (with_(risk_models={"k_map": 5}),
                                               ["risk_models", "population: {table: FILE}"]),
    "risk_models average risk out of range": (with_(risk_models={"average_risk": 2}),
                                              ["risk_models", "average-risk", "(0, 1]"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_every_key_validated(case):
    raw, fragments = BAD[case]
    with pytest.raises(ConfigError) as exc:
        C.parse(raw)
    msg = str(exc.value)
    assert "\n" not in msg
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"


def test_every_top_key_has_a_bad_case():
    """Each key of the schema is covered by at least one case above."""
    covered = set()
    for _raw, fragments in BAD.values():
        covered |= {f.split(":")[0].split(".")[0] for f in fragments}
    assert C.TOP_KEYS - {"quasi_identifiers"} <= covered | {"quasi_identifiers"}, C.TOP_KEYS - covered


def test_defaults_and_valid_values():
    cfg = C.parse({
        "quasi_identifiers": {"gender": {"suppress": True}}, "k": 3,
        "requirements": ["gender:4", {"attributes": ["gender"], "k": 5}],
        "method": "kaca2", "params": {"max_inconsistency": 0.2}, "weights": "height", "beta": 2,
        "priorities": ["gender"], "seed": 7, "identifiers": "id", "identifier_action": "mask",
        "sensitive": ["diagnosis"], "insensitive": [], "class_column": "y", "count_column": "n",
        "missing": "root", "suppression_threshold": 1.5, "risk_threshold": 0.5,
    })
    assert cfg.risk_threshold == 0.5
    assert C.parse(with_(risk_threshold=1)).risk_threshold == 1.0  # the upper bound is allowed
    assert C.parse(BASE).risk_threshold is None  # default: 1/k of the largest k, decided by the spec
    assert cfg.k == 3 and cfg.requirements == ["gender:4", "gender:5"]
    assert cfg.method == "kaca2" and cfg.params == {"max_inconsistency": 0.2}
    assert cfg.weights == "height" and cfg.beta == 2.0 and cfg.seed == 7
    assert cfg.identifiers == ["id"] and cfg.identifier_action == "mask"
    assert cfg.class_column == "y" and cfg.count_column == "n" and cfg.missing == "root"
    assert cfg.suppression_threshold == 1.5
    empty = C.parse(None)
    assert empty.k is None and empty.weights == "uniform" and empty.seed is None and empty.missing == "error"
    assert C.parse({"quasi_identifiers": ["a", "b"]}).quasi_identifiers["b"].builder == "suppress"


def test_aliases_of_the_shipped_example():
    cfg = C.load(example_path("patients.yaml"))
    assert cfg.identifiers == ["id"] and cfg.class_column == "readmitted" and cfg.k == 3
    assert cfg.input == DATA / "patients.csv"
    assert cfg.source == example_path("patients.yaml")


# ---------------------------------------------------------------- builders
@pytest.fixture
def table():
    return pd.DataFrame({
        "age": ["23", "37", "41", "68"],
        "postcode": ["4350", "4351", "4412", "4699"],
        "dob": ["01/02/1990", "15/06/1985", "30/11/1983", "04/07/1956"],
        "gender": ["m", "f", "f", "m"],
        "country": ["England", "France", "India", "England"],
        "edu": ["9th", "10th", "Masters", "9th"],
    })


def test_builders_produce_hierarchies(table, tmp_path):
    (tmp_path / "edu.csv").write_text("9th;Secondary;*\n10th;Secondary;*\nMasters;University;*\n")
    raw = {"quasi_identifiers": {
        "age": {"intervals": [5, 10, 20]},
        "postcode": {"mask": 4},
        "dob": {"dates": "dmy"},
        "gender": {"suppress": True},
        "country": {"tree": {"*": {"Europe": ["England", "France"], "Asia": ["India"]}}},
        "edu": {"file": "edu.csv"},
    }, "k": 2}
    cfg = C.parse(raw, base=tmp_path)
    hs = cfg.hierarchies(table)
    heights = {name: h.height for name, h in hs.items()}
    assert heights == {"age": 5, "postcode": 5, "dob": 4, "gender": 2, "country": 3, "edu": 3}
    for name, h in hs.items():
        assert h.name == name
        assert set(table[name]) <= set(h.leaf_index), name
    age = hs["age"]
    assert [age.labels[a] for a in age.ancestors[age.leaf_index["37"]]] == ["*", "[20, 40)", "[30, 40)", "[35, 40)",
                                                                             "37"]
    pc = hs["postcode"]
    assert [pc.labels[a] for a in pc.ancestors[pc.leaf_index["4351"]]] == ["*", "4***", "43**", "435*", "4351"]
    dob = hs["dob"]
    assert [dob.labels[a] for a in dob.ancestors[dob.leaf_index["15/06/1985"]]] == ["*", "1985", "1985-06",
                                                                                    "15/06/1985"]


def test_file_forms_and_relative_paths(tmp_path):
    sub = tmp_path / "conf"
    sub.mkdir()
    (sub / "h").mkdir()
    (sub / "h" / "g.csv").write_text("m;*\nf;*\n")
    (sub / "c.yaml").write_text(yaml.safe_dump({"quasi_identifiers": {"g": "h/g.csv", "g2": {"hierarchy": "h/g.csv"}},
                                                "k": 2}))
    cfg = C.load(sub / "c.yaml")
    assert cfg.quasi_identifiers["g"].file == sub / "h" / "g.csv"
    hs = cfg.hierarchies()
    assert set(hs["g"].leaf_index) == {"m", "f"} and hs["g2"].name == "g2"


def test_builder_errors_name_the_attribute(table):
    cfg = C.parse({"quasi_identifiers": {"gender": {"intervals": [5]}}})
    with pytest.raises(HierarchyError, match="'gender': intervals need finite numbers, found 'm'"):
        cfg.hierarchies(table)
    cfg = C.parse({"quasi_identifiers": {"nosuch": {"suppress": True}}})
    with pytest.raises(ConfigError, match="no column 'nosuch'"):
        cfg.hierarchies(table)


def test_load_errors(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        C.load(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("k: [1, 2\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        C.load(bad)


# ---------------------------------------------------------------- template
def test_template_parses_and_builds():
    raw = yaml.safe_load(C.TEMPLATE)
    cfg = C.parse(raw)
    assert cfg.k == 5 and cfg.method == "kaca+" and cfg.weights == "uniform"
    data = pd.DataFrame({"age": ["34", "35", "71"], "gender": ["f", "m", "f"], "postcode": ["4350", "4351", "4612"],
                         "date_of_birth": ["01/01/1990", "02/03/1989", "12/12/1953"]})
    hs = cfg.hierarchies(data)
    assert {n: h.height for n, h in hs.items()} == {"age": 5, "gender": 2, "postcode": 5, "date_of_birth": 4}
    # every key of the schema is mentioned in the template (commented or not)
    for key in C.TOP_KEYS - {"insensitive", "input", "suppression_threshold"}:
        assert key in C.TEMPLATE, key


def test_template_from_cli_is_the_template():
    from typer.testing import CliRunner

    from hieranon import cli
    r = CliRunner().invoke(cli.app, ["config-template"])
    assert r.exit_code == 0 and r.stdout == C.TEMPLATE
    assert C.parse(yaml.safe_load(r.stdout)).k == 5
    assert C.parse(yaml.safe_load(r.stdout)).risk_threshold is None  # commented out: 1/k
    line = next(x for x in r.stdout.splitlines() if x.startswith("# risk_threshold:"))
    assert "#" in line and "0 < risk_threshold <= 1" in r.stdout  # annotated with its allowed range


def test_requirement_attributes_as_one_string_are_read_as_in_the_a_b_k_form():
    """A string is not split into characters: it is one name, or comma-separated names as in 'A,B:K'."""
    raw = with_(quasi_identifiers={"gender": {"suppress": True}, "age": {"suppress": True}},
                requirements=[{"attributes": "gender", "k": 3}, {"attributes": "gender, age", "k": 2}])
    assert C.parse(raw).requirements == ["gender:3", "gender,age:2"]


def test_intervals_origin_number_is_kept():
    spec = C.parse(with_(quasi_identifiers={"age": {"intervals": [5], "origin": 2.5}})).quasi_identifiers["age"]
    assert spec.argument == ([5], 2.5)


def test_privacy_key_reads_well_in_yaml(tmp_path):
    """The mapping form: attribute -> a model or a list of models; each
    attribute becomes sensitive; relative hierarchy files are read relative
    to the configuration file; the spec carries the models."""
    from hieranon.job.spec import AnonymizationSpec
    from hieranon.privacy import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity, TCloseness

    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "disease.csv").write_text("flu;infection;*\ncold;infection;*\nhiv;chronic;*\n")
    (tmp_path / "job.yaml").write_text("""
quasi_identifiers: {gender: {suppress: true}}
k: 2
sensitive: [notes]
privacy:
  salary-class: [{l_diversity: 2}, {t_closeness: 0.2, distance: equal}]
  disease:
    - {l_diversity: 1.5, variant: entropy}
    - {l_diversity: 2, variant: recursive, c: 3}
    - t_closeness: 0.3
sensitive_hierarchies: {disease: h/disease.csv}
""")
    cfg = C.load(tmp_path / "job.yaml")
    kinds = [type(m) for m in cfg.privacy]
    assert kinds == [DistinctLDiversity, TCloseness, EntropyLDiversity, RecursiveCLDiversity, TCloseness]
    assert cfg.privacy[1].distance == "equal" and cfg.privacy[0].l == 2
    assert cfg.privacy[3].c == 3 and cfg.privacy[3].l == 2
    assert cfg.privacy[4].hierarchy is not None  # from sensitive_hierarchies, relative to the file
    assert cfg.sensitive == ["notes", "salary-class", "disease"]
    spec = AnonymizationSpec.from_config(cfg)
    assert spec.privacy == tuple(cfg.privacy) and set(spec.sensitive) == {"notes", "salary-class", "disease"}
    df = pd.DataFrame({"gender": ["f", "m"] * 3, "salary-class": ["a", "b"] * 3,
                       "disease": ["flu", "cold", "hiv"] * 2, "notes": ["x"] * 6})
    assert spec.privacy[4].bind(df).distance == "hierarchical"


def test_spec_refuses_a_privacy_model_on_a_qi_or_identifier():
    from hieranon.job.spec import AnonymizationSpec
    from hieranon.privacy import DistinctLDiversity

    hs = {"gender": C.HierarchySpec("gender", builder="suppress")}
    with pytest.raises(ValueError, match="'gender' is a quasi-identifier"):
        AnonymizationSpec(hierarchies=hs, k=2, privacy=(DistinctLDiversity("gender", 2),))
    with pytest.raises(ValueError, match="'id' is an identifier"):
        AnonymizationSpec(hierarchies=hs, k=2, identifiers=("id",), privacy=(DistinctLDiversity("id", 2),))
    spec = AnonymizationSpec(hierarchies=hs, k=2, privacy=(DistinctLDiversity("d", 2),))
    more = spec.with_overrides(privacy=[DistinctLDiversity("e", 3)])
    assert [m.attribute for m in more.privacy] == ["d", "e"] and more.sensitive == ("d", "e")
    assert spec.with_overrides(privacy=[]) is spec
