"""The record-suppression budget (max_suppression): its forms, the spec,
configuration, API and CLI, and the property every suppressing method keeps
-- the budget is never exceeded, none or at least k records are suppressed,
the output verifies and its distortion is never above the method's own
without a budget."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hieranon
from hieranon.algorithms.base import Algorithm, Problem, Solution
from hieranon.algorithms.contract import check_solution
from hieranon.algorithms.registry import available_methods, make_algorithm, method_tags
from hieranon.algorithms.suppression import (
    BudgetedSuppression,
    SuppressionBudget,
    parse_budget,
    with_budget,
)
from hieranon.evaluation import metrics as M
from hieranon.evaluation.verify import verify, verify_codes
from hieranon.job.config import ConfigError, load
from hieranon.job.spec import AnonymizationSpec
from main_runner import run_main
from random_tables import balanced, make_problem, random_tables

#: the methods run by the property test: those whose tags take a budget
SUPPRESSING = [m for m in available_methods() if method_tags(m).suppression.takes_budget]
#: methods whose own suppression limit takes the budget
NATIVE = [m for m in available_methods() if method_tags(m).suppression.native]
#: every method runs in-process
PARAMS = {"partitioned": {"executor": "serial", "block_size": 10}}


# ------------------------------------------------------------------ forms
@pytest.mark.parametrize("value, fraction, records", [
    ("5%", 0.05, None), (" 2.5 % ", 0.025, None), ("0%", 0.0, None), ("120", None, 120), (120, None, 120),
    (np.int64(7), None, 7), (0.05, 0.05, None), (np.float64(0.1), 0.1, None), ("0.02", 0.02, None), (0, None, 0),
])
def test_budget_forms(value, fraction, records):
    b = parse_budget(value)
    assert (b.fraction, b.records) == (fraction, records)


@pytest.mark.parametrize("value", ["abc", "150%", -1, 1.5, 5.0, True, "5 percent", [5], float("nan")])
def test_bad_budget_is_one_line_naming_the_option(value):
    with pytest.raises(ValueError) as exc:
        parse_budget(value, "max_suppression")
    assert str(exc.value).startswith("max_suppression:") and "\n" not in str(exc.value)


def test_budget_limit_in_records():
    assert SuppressionBudget(fraction=0.02).limit(45222) == 904
    assert SuppressionBudget(records=120).limit(100) == 100
    assert str(parse_budget("5%")) == "5%" and str(parse_budget(12)) == "12 records"


def test_spec_config_and_refusals(tmp_path):
    spec = AnonymizationSpec(max_suppression=np.int64(9))
    assert spec.max_suppression == SuppressionBudget(records=9)
    assert spec.describe()["max_suppression"] == "9 records"
    with pytest.raises(ValueError, match="^max_suppression:"):
        AnonymizationSpec(max_suppression="lots")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("quasi_identifiers: {a: {suppress: true}}\nk: 2\nmax_suppression: 5%\n")
    assert AnonymizationSpec.from_config(load(cfg)).max_suppression == SuppressionBudget(fraction=0.05)
    cfg.write_text("quasi_identifiers: {a: {suppress: true}}\nk: 2\nmax_suppression: -3\n")
    with pytest.raises(ConfigError, match="max_suppression"):
        load(cfg)
    with pytest.raises(ValueError, match="mingen.*does not suppress"):
        with_budget(make_algorithm("mingen"), parse_budget("5%"))
    with pytest.raises(ValueError, match="own suppression_threshold"):
        with_budget(make_algorithm("kaca1", suppression_threshold=0.5), parse_budget("5%"))


# ------------------------------------------------------------------ behaviour
class RootEverything(Algorithm):
    """A valid but poor solution: every record at the root (one class)."""

    name = "root-everything"

    def _solve(self, problem: Problem) -> Solution:
        n = problem.table.n_rows
        return Solution(np.zeros_like(problem.table.codes), np.zeros(n, dtype=bool))


def _two_groups_problem():
    """12 records under a0.0 (two leaves) and 3 outliers under a0.1, k = 3."""
    h = balanced("a0", [2, 2])
    leaves = h.leaves
    codes = np.array([[leaves[0]]] * 6 + [[leaves[1]]] * 6 + [[leaves[2]], [leaves[3]], [leaves[3]]], dtype=np.int32)
    from hieranon.core.table import EncodedTable
    enc = EncodedTable(codes, [h], ["a0"], np.ones(len(codes), dtype=np.int64))
    return make_problem(enc, 3, 0)


def test_trimming_suppresses_outliers_only_where_the_distortion_falls():
    p = _two_groups_problem()
    t = p.table
    base = RootEverything().solve(p)
    d0 = M.distortion(t.codes, base.codes, p.cost)
    sol = BudgetedSuppression(RootEverything(), parse_budget(3)).solve(p)
    assert verify_codes(t, sol.codes, p.requirements, sol.suppressed).ok
    assert sol.suppressed.sum() == 3 and sol.suppressed[-3:].all()  # the three outliers, exactly k
    # the twelve others go from the root to a0.0: the distortion falls
    assert M.distortion(t.codes, sol.codes, p.cost) < d0
    facts = sol.info["suppression"]
    assert facts["suppressed_records"] == 3 and facts["budget_records"] == 3
    assert facts["distortion_ratio"] < facts["distortion_ratio_without"]
    # a budget below k suppresses nothing: the '*' class needs k records
    none = BudgetedSuppression(RootEverything(), parse_budget(2)).solve(p)
    assert not none.suppressed.any() and "below k" in none.info["suppression"]["reason"]


def test_native_full_domain_budget_lowers_the_distortion():
    """a0.0.0 x 6, a0.0.1 x 3 and one a0.1.0 (k = 3): without suppression every
    record goes to the root; with 4 records of budget the outlier is
    suppressed with the smallest class (one '*' class of 4 >= k) and the six
    others keep their values."""
    from hieranon.core.table import EncodedTable
    h = balanced("a0", [2, 2])
    lv = h.leaves
    codes = np.array([[lv[0]]] * 6 + [[lv[1]]] * 3 + [[lv[2]]], dtype=np.int32)
    p = make_problem(EncodedTable(codes, [h], ["a0"], np.ones(10, dtype=np.int64)), 3, 0)
    assert NATIVE == ["fulldomain", "allmin", "datafly"]
    for method in NATIVE:
        plain = make_algorithm(method).solve(p)
        assert not plain.suppressed.any()
        sol = with_budget(make_algorithm(method), parse_budget(4)).solve(p)
        assert sol.suppressed.tolist() == [False] * 6 + [True] * 4, method
        check_solution(p, sol)
        assert M.distortion(p.table.codes, sol.codes, p.cost) < M.distortion(p.table.codes, plain.codes, p.cost)
        # three records of budget cannot hold the outlier and a class of k: nothing is suppressed
        assert not with_budget(make_algorithm(method), parse_budget(3)).solve(p).suppressed.any()


@pytest.mark.parametrize("method", SUPPRESSING)
def test_budget_never_exceeded_and_outputs_verify(method):
    @settings(max_examples=15, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(case=random_tables(max_rows=12 if method_tags(method).exact else 40, counts=True),
           budget=st.one_of(st.integers(0, 20), st.sampled_from(["10%", "25%", "50%", 0.3])))
    def check(case, budget):
        enc, k, seed = case
        p = make_problem(enc, k, seed)
        if method_tags(method).needs_class_column:
            p.class_labels = np.random.default_rng(seed).choice(["yes", "no"], enc.n_rows)
        params = PARAMS.get(method, {})
        plain = make_algorithm(method, **params).solve(p)
        b = parse_budget(budget)
        sol = with_budget(make_algorithm(method, **params), b).solve(p)
        n_sup = int(enc.counts[sol.suppressed].sum())
        assert n_sup <= b.limit(enc.n_records)
        assert n_sup == 0 or n_sup >= k
        assert verify_codes(enc, sol.codes, p.requirements, sol.suppressed).ok
        assert (sol.codes[sol.suppressed] == 0).all()
        assert M.distortion(enc.codes, sol.codes, p.cost, enc.counts) <= \
            M.distortion(enc.codes, plain.codes, p.cost, enc.counts) + 1e-9
        assert sol.info["suppression"]["suppressed_records"] == n_sup

    check()


def test_budget_keeps_the_privacy_models():
    """With l-diversity the suppressed records (one class) are diverse too."""
    from hieranon.privacy import DistinctLDiversity
    h = balanced("a0", [2, 2])
    lv = h.labels
    df = pd.DataFrame({"a0": [lv[h.leaves[0]]] * 6 + [lv[h.leaves[1]]] * 6 + [lv[h.leaves[2]], lv[h.leaves[3]],
                                                                              lv[h.leaves[3]]],
                       "s": ["x", "y"] * 7 + ["x"]})
    res = hieranon.anonymize(df, ["a0"], {"a0": h}, 3, method="mondrian", max_suppression=4,
                             privacy=[DistinctLDiversity("s", 2)])
    n_sup = res.metrics.suppressed_records
    assert n_sup == 0 or 3 <= n_sup <= 4
    assert res.verification.ok


# ------------------------------------------------------------------ CLI
def _table(tmp_path):
    h = balanced("a0", [2, 2])
    (tmp_path / "a0.csv").write_text(h.to_arx_csv())
    lv = h.labels
    df = pd.DataFrame({"a0": [lv[h.leaves[0]]] * 6 + [lv[h.leaves[1]]] * 6 + [lv[h.leaves[2]], lv[h.leaves[3]],
                                                                              lv[h.leaves[3]]],
                       "note": range(15)})
    df.to_csv(tmp_path / "in.csv", index=False)
    return tmp_path / "in.csv", f"a0={tmp_path / 'a0.csv'}"


def test_cli_max_suppression_json_and_report(tmp_path, monkeypatch, capsys):
    src, qi = _table(tmp_path)
    code, out, err = run_main(monkeypatch, capsys, "anonymize", src, "-o", tmp_path / "out.csv", "--qi", qi,
                              "-k", 3, "--method", "mondrian", "--max-suppression", "20%", "--json",
                              "--report", tmp_path / "r.html")
    assert code == 0, err
    summary = json.loads(out)
    s = summary["suppression"]
    assert s["budget"] == "20%" and s["budget_records"] == 3
    assert summary["suppressed_records"] == s["suppressed_records"] <= 3
    assert "Record suppression" in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize("args, needle", [
    (["--max-suppression", "lots"], "--max-suppression lots:"),
    (["--max-suppression", "5%", "--method", "mingen"], "mingen"),
])
def test_cli_bad_budget_exit_2_one_line(tmp_path, monkeypatch, capsys, args, needle):
    src, qi = _table(tmp_path)
    code, out, err = run_main(monkeypatch, capsys, "anonymize", src, "-o", tmp_path / "out.csv", "--qi", qi,
                              "-k", 3, *args)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.csv").exists()


# ------------------------------------------------------------------ the 'removed' convention
def _pair_with_two_suppressed():
    h = balanced("a0", [2])
    a, b = (h.labels[v] for v in h.leaves)
    orig = pd.DataFrame({"a0": [a] * 4 + [b] * 2, "s": ["x", "y", "x", "y", "x", "x"]})
    anon = orig.assign(a0=[a] * 4 + ["*"] * 2)
    return h, orig, anon


def test_removed_convention_leaves_suppressed_records_out_of_the_privacy_checks():
    from hieranon.privacy import DistinctLDiversity
    h, orig, anon = _pair_with_two_suppressed()
    model = [DistinctLDiversity("s", 2)]
    as_class = verify(orig, anon, ["a0"], {"a0": h}, k=2, privacy=model)
    removed = verify(orig, anon, ["a0"], {"a0": h}, k=2, privacy=model, suppressed_records="removed")
    assert "l-diversity" in as_class.kinds  # the two '*' records share one sensitive value
    assert removed.ok, removed.summary()


def test_report_takes_suppressed(tmp_path, monkeypatch, capsys):
    """Two '*' rows at k = 3: a class of two under 'class', left out under 'removed'."""
    h, orig, anon = _pair_with_two_suppressed()
    (tmp_path / "a0.csv").write_text(h.to_arx_csv())
    orig.to_csv(tmp_path / "o.csv", index=False)
    anon.to_csv(tmp_path / "a.csv", index=False)
    common = ["report", tmp_path / "o.csv", tmp_path / "a.csv", "--qi", f"a0={tmp_path / 'a0.csv'}", "-k", 3]
    code_class, _, _ = run_main(monkeypatch, capsys, *common, "-o", tmp_path / "r1.html")
    code_removed, _, err = run_main(monkeypatch, capsys, *common, "-o", tmp_path / "r2.html", "--suppressed",
                                    "removed")
    assert (code_class, code_removed) == (1, 0), err
    assert (tmp_path / "r1.html").exists() and (tmp_path / "r2.html").exists()
    code, _, err = run_main(monkeypatch, capsys, *common, "-o", tmp_path / "r3.html", "--suppressed", "gone")
    assert code == 2 and "--suppressed" in err


def test_check_takes_suppressed(tmp_path, monkeypatch, capsys):
    """The published pair's output alone: two '*' rows at k = 3 fail as a class, pass when removed."""
    h, orig, anon = _pair_with_two_suppressed()
    (tmp_path / "a0.csv").write_text(h.to_arx_csv())
    anon.to_csv(tmp_path / "a.csv", index=False)
    common = ["check", tmp_path / "a.csv", "--qi", f"a0={tmp_path / 'a0.csv'}", "-k", 3, "--json"]
    code_class, out_class, _ = run_main(monkeypatch, capsys, *common)
    code_removed, out_removed, err = run_main(monkeypatch, capsys, *common, "--suppressed", "removed")
    assert (code_class, code_removed) == (1, 0), err
    assert json.loads(out_class)["achieved_k"] == 2 and json.loads(out_removed)["achieved_k"] == 4
    code, _, err = run_main(monkeypatch, capsys, *common, "--suppressed", "gone")
    assert code == 2 and "--suppressed" in err


@pytest.mark.parametrize("value", ["-1", -1, -0.5, "-0.5", "-5%", np.int64(-3), 150.5, "250.5", 2.5, 5.0])
def test_a_bad_budget_suggests_only_valid_budgets(value):
    """Whatever a refused budget's message suggests (a quoted share, a number
    of records) is itself accepted."""
    with pytest.raises(ValueError) as info:
        parse_budget(value, "--max-suppression")
    message = str(info.value)
    assert "\n" not in message and message.startswith("--max-suppression")
    suggestion = message.split("write ", 1)[1] if "write " in message else ""
    for share in re.findall(r"'([^']*%)'", suggestion):
        parse_budget(share)
    for records in re.findall(r"(?<![\w.'-])(\d+) for records", suggestion):
        parse_budget(int(records))
    if isinstance(value, str) and value.startswith("-") or not isinstance(value, str) and value < 0:
        assert "negative" in message or "between 0% and 100%" in message
        assert "-1%" not in message
