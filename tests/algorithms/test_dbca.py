"""DBCA and DBCA:CM (seed 002): worked example with priorities through the
public API, a record-level reference implementation, property tests on random
hierarchies and tables, class-label purity of DBCA:CM, weighted duplicates."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hieranon.algorithms import dbca as D
from hieranon.algorithms.base import Problem
from hieranon.algorithms.contract import check_result
from hieranon.core.requirements import Requirement
from hieranon.core.table import encode, encode_generalised, group, row_keys
from hieranon.evaluation import metrics as M
from hieranon.hierarchies import readers as H
from hieranon.job.pipeline import anonymize, prepare
from random_tables import private_problems

QIS = ["Gender", "Age", "Postcode"]
PRIORITIES = {"Gender": 0, "Postcode": 0.5, "Age": 1}


def seed002_table1b() -> pd.DataFrame:
    """seed 002, Table 1(b): the 2-anonymous local recoding of Table 1(a)."""
    return pd.DataFrame({
        "Gender": ["male", "male", "*", "*", "female", "female"],
        "Age": ["middle", "middle", "young", "young", "old", "old"],
        "Postcode": ["4350", "4350", "435*", "435*", "4353", "4353"],
        "Problem": ["stress", "obesity", "stress", "obesity", "stress", "obesity"],
    })


def _same_cells(a: pd.DataFrame, b: pd.DataFrame, cols) -> bool:
    return all((a[c].astype(str).to_numpy() == b[c].astype(str).to_numpy()).all() for c in cols)


# --------------------------------------------------------------- SPEC 5.4
def test_priority_distortion_of_table1b(seed000_table1a, paper_hierarchies):
    """SPEC 5 item 4: P_Gender=0, P_Postcode=0.5, P_Age=1, Table 1a -> 1(b):
    tuple distortion 0.125 (tuples 3 and 4, 0 elsewhere), table distortion 0.25."""
    hs = {q: paper_hierarchies[q] for q in QIS}
    t1b = seed002_table1b()
    m = M.evaluate(seed000_table1a, t1b, QIS, hs, k=2, priorities=PRIORITIES)
    assert m.distortion == pytest.approx(0.25)
    assert m.achieved_k == 2
    enc = encode(seed000_table1a, QIS, hs)
    gen = encode_generalised(enc, t1b)
    model = M.CostModel.build(enc.hierarchies, priorities=PRIORITIES)
    per_tuple = M.tuple_distortion(enc.codes, gen, model)
    assert per_tuple.tolist() == pytest.approx([0, 0, 0.125, 0.125, 0, 0])
    # seed 002 Def. 8 example: Dist({male,young,4351},{female,young,4352}) = 0.125 + 0.125
    assert M.tuple_distance(enc.codes[2], enc.codes[3], enc.hierarchies, model)[0] == pytest.approx(0.25)
    # the ranking form gives the same equally scaled priorities
    ranked = M.evaluate(seed000_table1a, t1b, QIS, hs, k=2,
                        priorities=M.equal_priorities(["Age", "Postcode", "Gender"]))
    assert ranked.distortion == pytest.approx(0.25)


@pytest.mark.parametrize("method", ["dbca", "dbca-cm", "kaca1"])
@pytest.mark.parametrize("priorities", [PRIORITIES, ["Age", "Postcode", "Gender"]])
def test_public_api_with_priorities_gives_table1b(seed000_table1a, paper_hierarchies, method, priorities):
    """anonymize(..., priorities=...) on Table 1a with k=2 returns Table 1(b),
    priority-weighted distortion 0.25 (mapping or ranking form)."""
    hs = {q: paper_hierarchies[q] for q in QIS}
    extra = {"class_column": "Problem"} if method == "dbca-cm" else {}
    res = anonymize(seed000_table1a, QIS, hs, 2, method=method, priorities=priorities, **extra)
    assert _same_cells(res.data, seed002_table1b(), QIS + ["Problem"])
    assert res.metrics.distortion == pytest.approx(0.25)
    if method.startswith("dbca"):
        assert res.info["cluster_sizes"] == [2, 2, 2]


def test_uniform_weights_table1a(seed000_table1a, paper_hierarchies):
    """Without priorities DBCA still 2-anonymises Table 1a; t3/t4 cost 2.5 together."""
    hs = {q: paper_hierarchies[q] for q in QIS}
    res = anonymize(seed000_table1a, QIS, hs, 2, method="dbca")
    assert res.metrics.distortion == pytest.approx(2.5)
    assert res.metrics.achieved_k == 2


# ------------------------------------------------------- reference version
def _reference(codes, hierarchies, model, k, seed, labels=None, penalty=None):
    """DBCA at the level of single records, straight from the rules (slow)."""
    n, m = codes.shape
    g = [np.asarray(c, dtype=np.int64) for c in model.int_costs]
    lab = np.zeros(n, dtype=np.int64) if labels is None else pd.factorize(pd.Series(labels))[0]
    key = row_keys(codes if penalty is None else np.column_stack([codes, lab]))
    _, inv = np.unique(key, return_inverse=True)
    inv = inv.ravel()
    rank = np.random.default_rng(seed).permutation(inv.max() + 1)

    def lca(a, b, j):
        return int(hierarchies[j].lca(np.array([a]), np.array([b]))[0])

    def dist(r1, r2):
        return sum(2 * int(g[j][lca(codes[r1, j], codes[r2, j], j)]) - int(g[j][codes[r1, j]])
                   - int(g[j][codes[r2, j]]) for j in range(m))

    Dm = [[dist(a, b) for b in range(n)] for a in range(n)]
    S = [sum(sorted(Dm[a][b] for b in range(n) if b != a)[:k]) for a in range(n)]
    max_dist = sum(2 * int(x.max()) for x in g)
    pen = pen_left = 0
    if penalty is not None:
        p = penalty * model.scale
        pen = 2 * max_dist + 1 if p >= 2 * max_dist + 1 else round(p)
        cap = min(4 * k * max_dist + 1, 2**62)
        pen_left = cap if p >= cap else round(p)
    dens = sorted(range(n), key=lambda r: (S[r], rank[inv[r]], r))
    left = set(range(n))
    clusters, centres, prev = [], [], None
    while len(left) >= k:
        c = None
        if prev is not None:
            for r in dens:
                if r in left and k * Dm[prev][r] > S[prev] + S[r]:
                    c = r
                    break
        if c is None:
            c = next(r for r in dens if r in left)
        left.discard(c)
        cand = sorted(left, key=lambda r: (Dm[c][r] + (pen if penalty is not None and lab[r] != lab[c] else 0),
                                           0 if inv[r] == inv[c] else 1, rank[inv[r]], r))
        members = [c] + cand[: k - 1]
        left -= set(members)
        clusters.append(members)
        centres.append(c)
        prev = c

    def gen(members):
        return [_lca_many([codes[r, j] for r in members], j) for j in range(m)]

    def _lca_many(vals, j):
        out = vals[0]
        for v in vals[1:]:
            out = lca(out, v, j)
        return out

    def cost(t):
        return sum(int(g[j][t[j]]) for j in range(m))

    for r in sorted(left, key=lambda r: dens.index(r)):
        best = None
        for ci, mem in enumerate(clusters):
            if len(mem) + 1 > 2 * k - 1:
                continue
            G = gen(mem)
            Gn = [lca(G[j], codes[r, j], j) for j in range(m)]
            grow = len(mem) * (cost(Gn) - cost(G)) + cost(Gn) - cost(codes[r])
            if penalty is not None and lab[centres[ci]] != lab[r]:
                grow += pen_left
            if best is None or grow < best[0]:
                best = (grow, ci)
        clusters[best[1]].append(r)
    out = np.empty_like(codes)
    for mem in clusters:
        out[mem] = gen(mem)
    return out, sorted(len(c) for c in clusters)


# ------------------------------------------------------ random problems
@st.composite
def random_hierarchy(draw, name: str):
    height = draw(st.integers(2, 4))
    rows = []
    counter = [0]

    def grow(path, depth):
        if depth == height - 1:
            counter[0] += 1
            rows.append([f"{name}{counter[0]}"] + path[::-1])
            return
        for c in range(draw(st.integers(1, 3))):
            grow(path + [f"{name}_{depth}_{len(rows)}_{c}"], depth + 1)

    grow(["*"], 1)
    # ARX order: leaf first, root last
    return H.from_paths(name, [[r[0]] + r[1:] for r in rows])


@st.composite
def random_problem(draw, with_labels=False):
    m = draw(st.integers(1, 4))
    names = [f"q{j}" for j in range(m)]
    hs = {q: draw(random_hierarchy(q)) for q in names}
    n = draw(st.integers(10, 80))
    k = draw(st.integers(2, 5))
    # a few frequent values per attribute so that duplicates occur
    cols = {}
    for q in names:
        leaves = sorted(hs[q].leaf_index)
        vocab = draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=5))
        idx = draw(st.lists(st.integers(0, len(vocab) - 1), min_size=n, max_size=n))
        cols[q] = [vocab[i] for i in idx]
    df = pd.DataFrame(cols)
    df["label"] = draw(st.lists(st.sampled_from(["yes", "no"]), min_size=n, max_size=n))
    pri = None
    if draw(st.booleans()):
        pri = {q: draw(st.sampled_from([0, 0.25, 0.5, 1, 2])) for q in names}
    seed = draw(st.integers(0, 2**16))
    return df, names, hs, k, pri, seed


def _check_solution(df, names, hs, k, res):
    sizes = res.info["cluster_sizes"]
    assert sum(sizes) == len(df)
    assert all(k <= s <= 2 * k - 1 for s in sizes), sizes
    check_result(df, res, {q: hs[q] for q in names}, k=k)
    enc = encode(df, names, hs)
    # every cluster is generalised to the LCA of its members
    cl = res.info["cluster_of_row"]
    G = D.cluster_lca(enc.codes, cl, len(sizes), enc.hierarchies)
    assert np.array_equal(res.codes, G[cl])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_problem())
def test_dbca_properties(prob):
    df, names, hs, k, pri, seed = prob
    res = anonymize(df, names, hs, k, method="dbca", priorities=pri, seed=seed)
    _check_solution(df, names, hs, k, res)
    again = anonymize(df, names, hs, k, method="dbca", priorities=pri, seed=seed)
    assert np.array_equal(res.codes, again.codes)
    # record-level reference implementation of the same rules
    problem = prepare(df, names, hs, k, priorities=pri, seed=seed)
    want, want_sizes = _reference(problem.table.codes, problem.table.hierarchies, problem.cost, k, seed)
    assert np.array_equal(res.codes, want)
    assert sorted(res.info["cluster_sizes"]) == want_sizes


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_problem(), st.sampled_from([0.0, 0.5, 1.0, 1e12]))
def test_dbca_cm_properties(prob, penalty):
    df, names, hs, k, pri, seed = prob
    res = anonymize(df, names, hs, k, method="dbca-cm", priorities=pri, seed=seed, class_column="label",
                    penalty=penalty)
    _check_solution(df, names, hs, k, res)
    problem = prepare(df, names, hs, k, priorities=pri, seed=seed, class_column="label")
    want, _ = _reference(problem.table.codes, problem.table.hierarchies, problem.cost, k, seed,
                         labels=df["label"].to_numpy(), penalty=penalty)
    assert np.array_equal(res.codes, want)


def test_dense_tables_and_ancestor_paths_agree(monkeypatch):
    """The grouped dense tables and the ancestor-path walk give the same output."""
    rng = np.random.default_rng(5)
    n = 300
    df = pd.DataFrame({
        "pc": rng.choice([f"{x:04d}" for x in range(4300, 4420)], n),
        "age": rng.integers(17, 80, n).astype(str),
        "sex": rng.choice(["m", "f"], n),
    })
    hs = {"pc": H.masking("pc", df["pc"]), "age": H.intervals("age", range(17, 80), [5, 10, 20]),
          "sex": H.suppression("sex", ["m", "f"])}
    base = anonymize(df, list(hs), hs, 4, method="dbca", seed=3)
    monkeypatch.setattr(D, "DENSE_MAX_VALUES", 0)
    paths = anonymize(df, list(hs), hs, 4, method="dbca", seed=3)
    monkeypatch.setattr(D, "DENSE_MAX_VALUES", 2048)
    monkeypatch.setattr(D, "GROUP_MAX_COMBOS", 1)
    single = anonymize(df, list(hs), hs, 4, method="dbca", seed=3)
    assert np.array_equal(base.codes, paths.codes)
    assert np.array_equal(base.codes, single.codes)


def test_knn_sums_match_brute_force():
    """DistKNN (as sums of the k smallest distances to other records) against
    metrics.tuple_distance on the expanded records."""
    rng = np.random.default_rng(0)
    n = 60
    df = pd.DataFrame({"a": rng.choice(list("abcdef"), n), "b": rng.choice(["x1", "x2", "y1"], n)})
    hs = {"a": H.from_mapping("a", {"*": {"ab": ["a", "b"], "cd": ["c", "d"], "ef": ["e", "f"]}}),
          "b": H.from_mapping("b", {"*": {"x": ["x1", "x2"], "y": ["y1"]}})}
    enc = encode(df, ["a", "b"], hs)
    model = M.CostModel.build(enc.hierarchies, "height", priorities={"a": 1, "b": 0.5})
    key = row_keys(enc.codes)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    w = np.bincount(inv.ravel()).astype(np.int64)
    dd = D._distance_data(enc.codes[first], enc.hierarchies, model.int_costs, 2048, 512)
    for k in (1, 2, 5, 17):
        S = D._knn_sums(w, k, *dd)
        for p, r in enumerate(first):
            d = M.tuple_distance(np.repeat(enc.codes[r:r + 1], n, 0), enc.codes, enc.hierarchies, model)
            d = np.delete(d, r)
            assert S[p] / model.scale == pytest.approx(np.sort(d)[:k].sum())


# ------------------------------------------------------------- DBCA:CM
PCS = [f"{a}{b}{c}{d}" for a in "45" for b in "34" for c in "15" for d in "0123"]


def _labelled_table(seed: int, k: int, correlated: bool, n: int = 200):
    """Random table where every label has a multiple of k records; with
    ``correlated`` the label leans on the QIs (the top 40% by a noisy score of
    age and postcode are 'yes'), otherwise it is independent of them."""
    rng = np.random.default_rng(seed)
    n_yes = (2 * n // 5) // k * k
    n = n // k * k
    df = pd.DataFrame({
        "pc": rng.choice(PCS, n),
        "age": rng.choice(["young", "middle", "old"], n),
        "sex": rng.choice(["male", "female"], n),
    })
    if correlated:
        score = (df["age"].map({"young": 0, "middle": 1, "old": 2}) + df["pc"].str.startswith("5")
                 + rng.normal(0, 0.7, n))
        yes = np.zeros(n, bool)
        yes[np.argsort(-score.to_numpy(), kind="stable")[:n_yes]] = True
        df["label"] = np.where(yes, "yes", "no")
    else:
        df["label"] = rng.permutation(["yes"] * n_yes + ["no"] * (n - n_yes))
    hs = {"pc": H.masking("pc", PCS),
          "age": H.suppression("age", ["young", "middle", "old"]),
          "sex": H.suppression("sex", ["male", "female"])}
    return df, hs


def _cluster_cm(cluster_of_row, labels) -> float:
    return M.classification_metric(np.asarray(cluster_of_row), labels)


@pytest.mark.parametrize("correlated", [False, True])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [2, 3, 5, 10])
def test_dbca_cm_huge_penalty_keeps_clusters_label_pure(seed, k, correlated):
    """Each label has a multiple of k records, so with a huge penalty every
    cluster is label-pure (cluster-level CM 0, never above DBCA's). The
    published CM is over equivalence classes, where two pure clusters with
    the same generalised tuple merge, so it can exceed DBCA's on labels that
    are independent of the QIs; with labels that lean on the QIs it stays
    <= DBCA's."""
    df, hs = _labelled_table(seed, k, correlated)
    qis = list(hs)
    labels = df["label"].to_numpy()
    cm = anonymize(df, qis, hs, k, method="dbca-cm", penalty=1e9, class_column="label", seed=seed)
    plain = anonymize(df, qis, hs, k, method="dbca", class_column="label", seed=seed)
    cl = cm.info["cluster_of_row"]
    for c in range(cm.info["n_clusters"]):
        assert len(set(labels[cl == c])) == 1
    assert cm.info["cluster_sizes"] == [k] * (len(df) // k)
    assert _cluster_cm(cl, labels) == 0 <= _cluster_cm(plain.info["cluster_of_row"], labels)
    cm_cm = M.classification_metric(group(cm.codes).row_class, labels)
    cm_plain = M.classification_metric(group(plain.codes).row_class, labels)
    assert cm.metrics.classification_metric == pytest.approx(cm_cm)
    assert plain.metrics.classification_metric == pytest.approx(cm_plain)
    if correlated:
        assert cm_cm <= cm_plain


def test_dbca_cm_needs_class_labels(seed000_table1a, paper_hierarchies):
    hs = {q: paper_hierarchies[q] for q in QIS}
    with pytest.raises(ValueError, match="class column"):
        anonymize(seed000_table1a, QIS, hs, 2, method="dbca-cm")
    problem = prepare(seed000_table1a, QIS, hs, 2)
    with pytest.raises(ValueError, match="class column"):
        D.DBCACM().solve(problem)


@pytest.mark.parametrize("bad", [-1, float("nan"), "much"])
def test_dbca_cm_rejects_bad_penalty(bad):
    with pytest.raises(ValueError, match="penalty"):
        D.DBCACM(penalty=bad)


def test_single_requirement_only(seed000_table1a, paper_hierarchies):
    hs = {q: paper_hierarchies[q] for q in QIS}
    with pytest.raises(ValueError, match="one k over all quasi-identifiers"):
        anonymize(seed000_table1a, QIS, hs, requirements=[(["Gender", "Age"], 2)], method="dbca")


# ------------------------------------------------------ weighted records
def test_many_duplicates_are_cheap():
    """1000 identical rows plus a few others: one weighted point (the time is
    measured by benchmarks/bench_dbca.py, not asserted here)."""
    rng = np.random.default_rng(1)
    others = pd.DataFrame({"pc": rng.choice(["4350", "4351", "4352", "4353"], 13),
                           "age": rng.choice(["young", "middle", "old"], 13)})
    same = pd.DataFrame({"pc": ["4351"] * 1000, "age": ["old"] * 1000})
    df = pd.concat([same, others], ignore_index=True)
    hs = {"pc": H.masking("pc", ["4350", "4351", "4352", "4353"]),
          "age": H.suppression("age", ["young", "middle", "old"])}
    for k in (2, 5):
        res = anonymize(df, ["pc", "age"], hs, k, method="dbca")
        assert res.info["n_points"] <= 13
        _check_solution(df, ["pc", "age"], hs, k, res)
        # the duplicates stay ungeneralised (they form clusters of their own)
        assert (res.data.loc[:999, "pc"] == "4351").all()


def test_count_column_rows_are_indivisible():
    """A row standing for c records has one output row: clusters take whole
    rows, so they hold >= k records (2k-1 is only guaranteed for unit rows)."""
    df = pd.DataFrame({"pc": ["4350", "4351", "4352", "4353", "4350"], "age": ["young", "old", "old", "young", "old"],
                       "n": [7, 1, 2, 3, 1]})
    hs = {"pc": H.masking("pc", ["4350", "4351", "4352", "4353"]),
          "age": H.suppression("age", ["young", "middle", "old"])}
    problem = prepare(df, ["pc", "age"], hs, 3, count_column="n")
    sol = D.DBCA().solve(problem)
    sizes = sol.details.cluster_sizes
    assert all(s >= 3 for s in sizes) and sum(sizes) == 14
    enc = problem.table
    assert group(sol.codes, enc.counts).sizes.min() >= 3
    for j, h in enumerate(enc.hierarchies):
        assert h.is_ancestor_or_self(sol.codes[:, j], enc.codes[:, j]).all()
    # rows 0 (7 records) and 3 (3 records) need no generalisation at all
    assert np.array_equal(sol.codes[[0, 3]], enc.codes[[0, 3]])
    res = anonymize(df, ["pc", "age"], hs, 3, method="dbca", count_column="n")  # verified with counts
    assert np.array_equal(res.codes, sol.codes)


def test_k_equal_to_table_size_gives_one_cluster(seed000_table1a, paper_hierarchies):
    hs = {q: paper_hierarchies[q] for q in QIS}
    res = anonymize(seed000_table1a, QIS, hs, 6, method="dbca")
    assert res.info["cluster_sizes"] == [6]
    assert (res.data["Age"] == "*").all()


def test_algorithm_direct_problem(seed000_table1a, paper_hierarchies):
    """DBCA on a hand-built Problem: seeds change tie-breaks only."""
    hs = [paper_hierarchies[q] for q in QIS]
    enc = encode(seed000_table1a, QIS, hs)
    model = M.CostModel.build(hs, priorities=[Fraction(0), Fraction(1), Fraction(1, 2)])
    for seed in range(5):
        sol = D.DBCA().solve(Problem(enc, [Requirement(tuple(QIS), 2)], model, seed))
        assert M.distortion(enc.codes, sol.codes, model) == pytest.approx(0.25)
        assert not sol.suppressed.any()


# ------------------------------------------------------------ privacy models
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(private_problems(max_rows=40), st.booleans())
def test_dbca_output_satisfies_the_models(case, cm):
    """DBCA / DBCA:CM cluster for k, then the class-merging repair enforces the models."""
    from hieranon.evaluation.verify import verify_codes

    problem, _, _ = case
    t = problem.table
    if cm:
        problem.class_labels = np.array(["yes", "no"])[np.arange(t.n_rows) % 2]
    sol = (D.DBCACM() if cm else D.DBCA()).solve(problem)
    assert verify_codes(t, sol.codes, problem.requirements, sol.suppressed, privacy=problem.privacy).ok
    assert sol.details.privacy is not None


# ------------------------------------------------------- interruptible kernels
def _chunk_case(method: str):
    """~500 distinct points plus 600 copies of one row, with a count column
    and class labels, solved by ``method``: the heavy point makes the centre
    rule fall back often at the end (only copies of the last centre remain)."""
    rng = np.random.default_rng(0)
    n = 500
    df = pd.DataFrame({"a": rng.integers(0, 64, n), "b": rng.integers(0, 27, n), "c": rng.integers(0, 5, n),
                       "label": rng.choice(["x", "y"], n), "n": rng.integers(1, 4, n)})
    df = pd.concat([df, df.iloc[[0] * 600]], ignore_index=True)
    hs = {"a": H.intervals("a", range(64), [4, 16]), "b": H.intervals("b", range(27), [3, 9]),
          "c": H.intervals("c", range(5), [5])}
    kw = {"class_column": "label", "penalty": 0.5} if method == "dbca-cm" else {}
    return lambda: anonymize(df, list(hs), hs, 4, method=method, seed=2, count_column="n", **kw)


@pytest.mark.parametrize("method", ["dbca", "dbca-cm"])
def test_kernels_hand_back_to_python_in_chunks_without_changing_the_output(monkeypatch, method):
    """With a tiny work budget per call both kernels (densities, clustering)
    return to Python many times (where a Ctrl-C lands) and resume where they
    stopped: the output and every detail are those of whole calls."""
    from collections import Counter

    from hieranon.algorithms import kaca_core

    run = _chunk_case(method)
    whole_calls, calls = Counter(), Counter()
    monkeypatch.setattr(kaca_core, "chunk_done", lambda stage: whole_calls.update([stage]))
    whole = run()
    monkeypatch.setattr(kaca_core, "chunk_done", lambda stage: calls.update([stage]))
    monkeypatch.setattr(D, "CHUNK_WORK", 3)
    chunked = run()
    assert np.array_equal(chunked.codes, whole.codes)
    assert np.array_equal(chunked.info["cluster_of_row"], whole.info["cluster_of_row"])
    for key in ("cluster_sizes", "n_clusters", "n_points", "centre_fallbacks", "leftover_records"):
        assert chunked.info[key] == whole.info[key], key
    assert whole.info["n_clusters"] > 20 and whole.info["centre_fallbacks"] > 0
    for stage in ("dbca-knn", "dbca"):
        assert calls[stage] > 10 * max(whole_calls[stage], 1), (stage, calls, whole_calls)


@pytest.mark.parametrize("stage", ["dbca-knn", "dbca"])
def test_an_interrupt_between_chunks_stops_the_run(monkeypatch, stage):
    from hieranon.algorithms import kaca_core

    calls = []

    def hook(s):
        calls.append(s)
        if calls.count(stage) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(kaca_core, "chunk_done", hook)
    monkeypatch.setattr(D, "CHUNK_WORK", 3)
    with pytest.raises(KeyboardInterrupt):
        _chunk_case("dbca")()
    assert calls[-1] == stage and calls.count(stage) == 3
