"""naive_bayes_accuracy: the classification utility check of seeds 002/003."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hieranon.evaluation.utility import naive_bayes_accuracy


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue", "grey"], n)
    noise = rng.choice(["a", "b", "c"], n)
    label = np.where(np.isin(colour, ["red", "green"]), "warm", "cold")
    return pd.DataFrame({"colour": colour, "noise": noise, "label": label, "num": rng.integers(0, 5, n)})


def test_deterministic_class_is_learnt():
    df = _table()
    mean, std = naive_bayes_accuracy(df, ["colour", "noise"], "label")
    assert mean == pytest.approx(1.0, abs=1e-9)
    assert std == pytest.approx(0.0, abs=1e-9)


def test_uninformative_features_give_chance_level():
    df = _table(n=2000, seed=1)
    df["label"] = np.random.default_rng(2).permutation(np.repeat(["x", "y"], 1000))
    mean, std = naive_bayes_accuracy(df, ["noise"], "label")
    assert 0.4 < mean < 0.6
    assert std >= 0


def test_generalised_cells_are_categories_and_numbers_work():
    df = _table()
    df.loc[::3, "colour"] = "*"  # a generalised cell is a category of its own
    mean, _ = naive_bayes_accuracy(df, ["colour", "num"], "label", folds=5, seed=3)
    assert 0.6 < mean < 1.0


def test_same_seed_same_result_and_folds():
    df = _table(seed=4)
    df["label"] = np.where(np.random.default_rng(0).random(len(df)) < 0.8, df["label"], "other")
    a = naive_bayes_accuracy(df, ["colour", "noise"], "label", folds=10, seed=7)
    b = naive_bayes_accuracy(df, ["colour", "noise"], "label", folds=10, seed=7)
    assert a == b


def test_errors():
    df = _table()
    with pytest.raises(ValueError, match="not in the table"):
        naive_bayes_accuracy(df, ["nope"], "label")
    with pytest.raises(ValueError, match="folds"):
        naive_bayes_accuracy(df, ["colour"], "label", folds=1)
    with pytest.raises(ValueError, match="single label"):
        naive_bayes_accuracy(df.assign(label="x"), ["colour"], "label")
    with pytest.raises(ValueError, match="rarest label"):
        naive_bayes_accuracy(df.assign(label=["r"] * 3 + ["s"] * (len(df) - 3)), ["colour"], "label")
    with pytest.raises(ValueError, match="also listed"):
        naive_bayes_accuracy(df, ["colour", "label"], "label")


@pytest.mark.adult
def test_adult_original_accuracy(adult_path):
    """Naive Bayes on Adult's 8 QIs predicts salary-class at about 80%."""
    from hieranon.io.datasets import load_adult

    a = load_adult(adult_path, download=False, hierarchies=False)
    mean, std = naive_bayes_accuracy(a.frame, a.qis(8), "salary-class")
    assert 0.75 < mean < 0.9
    assert std < 0.02


# ====================================================================== the utility report
import json  # noqa: E402

from hieranon.core.table import encode  # noqa: E402
from hieranon.evaluation import utility as U  # noqa: E402
from hieranon.hierarchies import readers as H  # noqa: E402
from hieranon.job.pipeline import anonymize  # noqa: E402


def _people(n=600, seed=0):
    """Two informative QIs (age band, job) and one noise QI; label 'high' mostly from age >= 40 and job."""
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 60, n)
    job = rng.choice(["clerk", "nurse", "pilot", "chef"], n)
    noise = rng.choice(["a", "b"], n)
    p = 0.1 + 0.6 * (age >= 40) + 0.25 * (job == "pilot")
    label = np.where(rng.random(n) < p, "high", "low")
    wage = 20 + age * 1.5 + 30 * (job == "pilot") + rng.normal(0, 5, n)
    return pd.DataFrame({"age": age, "job": job, "noise": noise, "label": label, "wage": wage})


def _hierarchies(df):
    return {"age": H.intervals("age", df["age"], [5, 10, 20]), "job": H.suppression("job", df["job"]),
            "noise": H.suppression("noise", df["noise"])}


def _codes(df):
    hs = _hierarchies(df)
    enc = encode(df, list(hs), hs)
    return enc


def test_identical_release_keeps_everything():
    df = _people()
    enc = _codes(df)
    u = U.assess_codes(enc.codes, enc.codes, enc.hierarchies, target=df["label"].to_numpy(), target_name="label")
    assert u.task == "classification" and [m.model for m in u.models] == [
        "logistic regression", "random forest", "naive Bayes"]
    for m in u.models:
        assert m.relative == pytest.approx(1.0) and m.original == m.anonymised and m.normalised == pytest.approx(1.0)
    for a in u.attributes:
        assert (a.kept, a.generalised, a.suppressed, a.missing) == (1.0, 0.0, 0.0, 0.0)
        assert a.granularity_loss == 0 and a.entropy_loss == 0 and a.marginal_tvd == pytest.approx(0, abs=1e-12)
        assert a.before == a.after
    for p in u.pairs:
        assert p.before == pytest.approx(p.after) and p.contingency_tvd == pytest.approx(0)


def test_fully_suppressed_qis_fall_to_the_majority_rate():
    df = _people()
    enc = _codes(df)
    gen = np.zeros_like(enc.codes)  # every QI cell '*'
    u = U.assess_codes(enc.codes, gen, enc.hierarchies, target=df["label"].to_numpy(), target_name="label")
    majority = df["label"].value_counts(normalize=True).max()
    assert u.baseline == pytest.approx(majority, abs=0.01)
    for m in u.models:
        assert m.anonymised == pytest.approx(u.baseline, abs=1e-9), m.model  # nothing left to learn from
        assert m.original > u.baseline + 0.05  # the original QIs do predict the label
        assert m.relative == pytest.approx(m.anonymised / m.original)
        assert m.normalised == pytest.approx(0.0, abs=1e-9)
    for a in u.attributes:
        assert a.suppressed == 1.0 and a.granularity_loss == pytest.approx(1.0)
        assert a.entropy_loss == pytest.approx(1.0) and list(a.after) == ["*"]
    assert all(p.after == 0 for p in u.pairs)


def test_granularity_and_entropy_by_hand():
    # age leaves 20..59 (40 leaves); published: first half of the rows at their 5-year band, the rest kept
    df = pd.DataFrame({"age": [20, 21, 22, 23]})
    h = H.from_paths("age", [["20", "20-21", "*"], ["21", "20-21", "*"], ["22", "22-23", "*"], ["23", "22-23", "*"]])
    orig = np.array([[h.code_of(a)] for a in df["age"]])
    gen = orig.copy()
    gen[0, 0] = h.node_of_label("20-21")
    gen[3, 0] = 0
    (a,) = U.assess_codes(orig, gen, [h]).attributes
    assert (a.kept, a.generalised, a.suppressed) == (0.5, 0.25, 0.25)
    # loss: (2-1)/(4-1) for 20-21, (4-1)/(4-1) for *, 0 for the kept cells; mean over 4 cells
    assert a.granularity_loss == pytest.approx((1 / 3 + 1) / 4)
    # entropy: -log2(1/2) for 20 in 20-21, -log2(1/4) for 23 in *; full: 4 * log2(4)
    assert a.entropy_loss == pytest.approx((1 + 2) / 8)
    # spread: 20-21 -> 1/2 on 20 and 21; * -> 1/4 on each; the original has 1/4 on each
    after = np.array([0.5 + 0.25, 0.5 + 1 + 0.25, 1 + 0.25, 0.25]) / 4
    assert a.marginal_tvd == pytest.approx(0.5 * np.abs(after - 0.25).sum())


def test_cramers_v_matches_scipy():
    from scipy.stats.contingency import association, crosstab

    rng = np.random.default_rng(5)
    a = rng.integers(0, 4, 500)
    b = (a + rng.integers(0, 3, 500)) % 5
    expected = association(crosstab(a, b).count, method="cramer")
    assert U.cramers_v(a, b) == pytest.approx(expected)
    # weights are record counts: a weight of 2 is the row twice
    w = rng.integers(1, 3, 500)
    expected_w = association(crosstab(np.repeat(a, w), np.repeat(b, w)).count, method="cramer")
    assert U.cramers_v(a, b, w.astype(float)) == pytest.approx(expected_w)
    assert U.cramers_v(a, np.zeros(500)) == 0.0


def test_numeric_target_is_a_regression_with_r2():
    df = _people(n=500)
    enc = _codes(df)
    gen = enc.codes.copy()
    gen[:, 0] = enc.hierarchies[0].ancestors[gen[:, 0], 1]  # age to its 20-year band
    u = U.assess_codes(enc.codes, gen, enc.hierarchies, target=df["wage"].astype(str).to_numpy(), target_name="wage")
    assert u.task == "regression" and [m.model for m in u.models] == ["ridge regression", "random forest"]
    ridge = u.model("ridge regression")  # wage is linear in age: 20-year bands lose most of it
    assert 0.8 < ridge.original <= 1 and ridge.anonymised < ridge.original - 0.05
    for m in u.models:
        assert m.score == "r2" and -1 < m.anonymised <= 1
        assert m.relative == pytest.approx(m.anonymised / m.original) and m.normalised == m.relative
    assert "R^2 of predicting the original 'wage'" in u.compared and "stratified" not in u.compared


def test_deterministic_and_subsample_said():
    df = _people(n=800)
    enc = _codes(df)
    gen = enc.codes.copy()
    gen[::2, 1] = 0
    kw = dict(target=df["label"].to_numpy(), target_name="label", max_rows=300, seed=3)
    a = U.assess_codes(enc.codes, gen, enc.hierarchies, **kw)
    b = U.assess_codes(enc.codes, gen, enc.hierarchies, **kw)
    assert a == b
    assert a.rows_used == 300 and a.rows_total == 800 and "sample of 300 of 800 rows" in a.compared


def test_features_and_target_errors():
    df = _people(n=200)
    enc = _codes(df)
    y = df["label"].to_numpy()
    u = U.assess_codes(enc.codes, enc.codes, enc.hierarchies, target=df["age"].to_numpy(), target_name="age",
                       task="classification", folds=2)
    assert u.features == ["job", "noise"]  # a QI target is not its own feature
    with pytest.raises(ValueError, match="not quasi-identifiers"):
        U.assess_codes(enc.codes, enc.codes, enc.hierarchies, target=y, target_name="label", features=["nope"])
    with pytest.raises(ValueError, match="single value"):
        U.assess_codes(enc.codes, enc.codes, enc.hierarchies, target=np.array(["x"] * 200), target_name="label")
    with pytest.raises(ValueError, match="not a number"):
        U.assess_codes(enc.codes, enc.codes, enc.hierarchies, target=y, target_name="label", task="regression")
    with pytest.raises(ValueError, match="folds"):
        U.assess_codes(enc.codes, enc.codes, enc.hierarchies, folds=1)


def test_counts_weigh_records():
    df = _people(n=300)
    enc = _codes(df)
    gen = enc.codes.copy()
    gen[:100, 1] = 0
    counts = np.where(np.arange(300) < 100, 3, 1)
    (_, job, _) = U.assess_codes(enc.codes, gen, enc.hierarchies, counts=counts).attributes
    assert job.suppressed == pytest.approx(300 / 500) and job.kept == pytest.approx(200 / 500)


def test_missing_cells_are_counted_apart():
    df = _people(n=300)
    df["job"] = df["job"].astype(object)
    df.loc[:29, "job"] = None
    hs = _hierarchies(df.dropna())
    r = anonymize(df, list(hs), hs, k=5, missing="root", method="mondrian", insensitive=["label", "wage"])
    u = r.utility()
    job = u.attribute("job")
    assert job.missing == pytest.approx(0.1)
    assert job.kept + job.generalised + job.suppressed + job.missing == pytest.approx(1.0)


def _result(df, **kw):
    hs = _hierarchies(df)
    return anonymize(df, list(hs), hs, k=10, method="fulldomain", insensitive=["label", "wage"], **kw)


def test_result_utility_equals_api_and_follows_a_shuffle():
    df = _people(n=400)
    r = _result(df)
    u = r.utility("label")
    assert r.utility("label") is u  # cached
    only_age = r.utility("label", features=["age"])
    assert only_age.features == ["age"] and r.utility("label", features=["age"]) is only_age
    v = U.assess(df, r.data, quasi_identifiers=["age", "job", "noise"], hierarchies=_hierarchies(df), target="label")
    assert u == v
    shuffled = _result(df, shuffle=True)
    assert shuffled.row_order is not None
    assert shuffled.utility("label") == u  # the target is put back in the input's order


def test_assess_refuses_a_table_that_does_not_generalise():
    df = _people(n=100)
    bad = df.copy()
    bad.loc[0, "job"] = "astronaut"
    with pytest.raises(ValueError, match=r"\['job'\]"):
        U.assess(df, bad, quasi_identifiers=["age", "job", "noise"], hierarchies=_hierarchies(df))


def test_as_dict_is_json_and_rows_carry_the_numbers():
    df = _people(n=300)
    u = _result(df).utility("label")
    d = json.loads(json.dumps(u.as_dict()))
    assert [m["relative"] for m in d["models"]] == [m.relative for m in u.models]
    assert d["compared"] == u.compared and len(d["pairs"]) == 3
    rows = dict(u.rows())
    rf = u.model("random forest")
    assert rows["random forest: relative accuracy / relative gain over the baseline"] == \
        f"{rf.relative:.4f} / {'–' if rf.normalised is None else f'{rf.normalised:.4f}'}"


# ------------------------------------------------------------------ notebook display
def test_repr_and_repr_html():
    df = _people(n=300)
    r = _result(df)
    text = repr(r)
    assert text.startswith("AnonymizationResult(method=fulldomain") and "k_achieved=" in text
    assert len(text) < 300 and "array" not in text
    html = r._repr_html_()
    assert f"<td>{r.metrics.achieved_k:,}</td>" in html and "<th>kept</th>" in html
    kept = float((r.codes[:, 1] == r.original_codes[:, 1]).mean())
    assert f"<td>job</td><td>{kept:.1%}</td>" in html
    assert "relative accuracy" not in html
    r.utility("label")
    html = r._repr_html_()
    nb = r.utility("label").model("naive Bayes")
    gain = "-" if nb.normalised is None else f"{nb.normalised:.3f}"
    assert f"naive Bayes: relative accuracy / gain over the baseline</th><td>{nb.relative:.3f} / {gain}" in html


def test_repr_html_escapes():
    df = _people(n=300)
    df["label"] = df["label"].replace({"high": "<b>high</b>"})  # published unchanged, shown in the first rows
    html = _result(df)._repr_html_()
    assert "<b>high</b>" not in html and "&lt;b&gt;high&lt;/b&gt;" in html


# ------------------------------------------------------------------ CLI
def _files(tmp_path, df, result):
    orig, anon = tmp_path / "orig.csv", tmp_path / "anon.csv"
    df.to_csv(orig, index=False)
    result.data.to_csv(anon, index=False)
    hfiles = []
    for name, h in _hierarchies(df).items():
        path = tmp_path / f"h_{name}.csv"
        path.write_text(h.to_arx_csv())
        hfiles += ["--qi", f"{name}={path}"]
    return orig, anon, hfiles


def test_cli_json_equals_api(tmp_path, monkeypatch, capsys):
    from main_runner import run_main

    df = _people(n=300)
    r = _result(df)
    orig, anon, hfiles = _files(tmp_path, df, r)
    code, out, err = run_main(monkeypatch, capsys, "evaluate", orig, anon, *hfiles, "-k", "10", "--utility",
                              "--target", "label", "--json")
    assert code == 0, err
    got = json.loads(out)["utility"]
    api = U.assess(pd.read_csv(orig), pd.read_csv(anon), quasi_identifiers=["age", "job", "noise"],
                   hierarchies=_hierarchies(df), target="label")
    assert [m["anonymised"] for m in got["models"]] == [m.anonymised for m in api.models]
    assert [m["original"] for m in got["models"]] == [m.original for m in api.models]
    assert [a["entropy_loss"] for a in got["attributes"]] == pytest.approx([a.entropy_loss for a in api.attributes])
    code, out, err = run_main(monkeypatch, capsys, "evaluate", orig, anon, *hfiles, "-k", "10", "--target", "label")
    assert code == 0 and "relative accuracy" in out and "held-out" in out
    assert f"{api.model('logistic regression').relative:.4f}" in out


def test_cli_utility_of_a_table_made_elsewhere(tmp_path, monkeypatch, capsys):
    """A release made by another tool (hand-generalised here: 10-year bands, '*' for whole records)."""
    from main_runner import run_main

    df = _people(n=300)
    other = df.copy()
    other["age"] = "[" + (df["age"] // 20 * 20).astype(str) + ", " + (df["age"] // 20 * 20 + 20).astype(str) + ")"
    other.loc[:9, ["age", "job", "noise"]] = "*"
    hs = _hierarchies(df)
    orig, anon = tmp_path / "orig.csv", tmp_path / "arx.csv"
    df.to_csv(orig, index=False)
    other.to_csv(anon, index=False)
    hfiles = []
    for name, h in hs.items():
        (tmp_path / f"{name}.csv").write_text(h.to_arx_csv())
        hfiles += ["--qi", f"{name}={tmp_path / f'{name}.csv'}"]
    code, out, err = run_main(monkeypatch, capsys, "evaluate", orig, anon, *hfiles, "-k", "2", "--utility",
                              "--target", "wage", "--json")
    assert code in (0, 1), err
    u = json.loads(out)["utility"]
    assert u["task"] == "regression" and u["attributes"][0]["kept"] == 0.0
    assert u["attributes"][1]["suppressed"] == pytest.approx(10 / 300)


def test_cli_bad_target(tmp_path, monkeypatch, capsys):
    from main_runner import run_main

    df = _people(n=200)
    orig, anon, hfiles = _files(tmp_path, df, _result(df))
    code, out, err = run_main(monkeypatch, capsys, "evaluate", orig, anon, *hfiles, "-k", "10", "--target", "nope")
    assert code == 2 and "--target 'nope'" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.adult
@pytest.mark.slow
def test_adult_utility_of_a_k10_release(adult_path):
    from hieranon.io.datasets import load_adult

    a = load_adult(adult_path, download=False)
    qis = a.qis(8)
    hs = {q: a.hierarchies[q] for q in qis}
    r = anonymize(a.frame, qis, hs, k=10, method="mondrian")
    u = r.utility("salary-class")
    assert u.rows_used == len(a.frame)
    for m in u.models:
        assert 0.9 < m.relative <= 1.02 and m.anonymised > u.baseline


# ------------------------------------------------- measures by kind, honest model figures
def test_each_pair_is_measured_for_its_kinds():
    """Cramér's V only between categorical QIs; Spearman's rank correlation
    between numeric ones (scipy's, a generalised value at the middle of its
    range); the correlation ratio of ranks between one of each. A numeric QI
    of unique values independent of another QI is not "associated" with it
    (Cramér's V, each number a category, says it is, near 1)."""
    from scipy.stats import spearmanr

    df = _people()
    rng = np.random.default_rng(3)
    df["x"] = rng.permutation(np.arange(len(df)) * 7)  # unique numbers, independent of noise
    hs = {**_hierarchies(df), "x": H.intervals("x", df["x"], [70, 700])}
    enc = encode(df, list(hs), hs)
    u = U.assess_codes(enc.codes, enc.codes, enc.hierarchies)
    measures = {(p.a, p.b): p for p in u.pairs}
    assert measures[("job", "noise")].measure == "cramers_v"
    assert measures[("age", "job")].measure == "correlation_ratio"
    assert measures[("age", "x")].measure == "spearman"
    assert measures[("age", "x")].before == pytest.approx(spearmanr(df["age"], df["x"]).statistic)
    assert measures[("noise", "x")].before < 0.2  # chance only
    assert U.cramers_v(enc.codes[:, 2], enc.codes[:, 3]) > 0.9  # what Cramér's V would have said
    # age determines its band: after generalising to 10-year bands, the rank correlation with age's band stays
    gen = enc.codes.copy()
    age_h = enc.hierarchies[0]
    gen[:, 0] = age_h.ancestors[enc.codes[:, 0], age_h.depth[enc.codes[:, 0]] - 2]
    pair = {(p.a, p.b): p for p in U.assess_codes(enc.codes, gen, enc.hierarchies).pairs}[("age", "x")]
    mids = np.array([(np.floor(a / 10) * 10 + np.floor(a / 10) * 10 + 9) / 2 for a in df["age"]])
    assert pair.after == pytest.approx(spearmanr(mids, df["x"]).statistic)


def test_a_model_that_does_not_beat_the_baseline_is_named():
    """Relative accuracy of a model no better than the majority class on the
    original compares two guesses: a warning says so; the gain over the
    baseline is printed beside the raw ratio; a release on which the model
    falls to the baseline is named too."""
    df = _people()
    rng = np.random.default_rng(7)
    df["coin"] = np.where(rng.random(len(df)) < 0.85, "tails", "heads")  # nothing predicts it
    enc = _codes(df)
    u = U.assess_codes(enc.codes, enc.codes, enc.hierarchies, target=df["coin"].to_numpy(), target_name="coin")
    weak = [m for m in u.models if m.original <= u.baseline]
    assert weak  # the majority class is as good as it gets
    warned = u.warnings()
    for m in weak:
        assert any(w.startswith(m.model) and "does not beat the majority-class baseline" in w for w in warned)
    assert u.as_dict()["warnings"] == warned
    rows = dict(u.rows())
    assert all(f"{m.model}: relative accuracy / relative gain over the baseline" in rows for m in u.models)
    # the label is predicted on the original, not on a release of '*' only: the release is named
    u = U.assess_codes(enc.codes, np.zeros_like(enc.codes), enc.hierarchies, target=df["label"].to_numpy(),
                       target_name="label")
    assert len(u.warnings()) == len(u.models) and all("at or below the majority-class baseline" in w
                                                       for w in u.warnings())
