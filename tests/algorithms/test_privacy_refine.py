"""The model-preserving local search after the privacy repair
(hieranon.algorithms.privacy_refine): on random tables (hypothesis) its
output keeps k and every model by the verifier, never costs more than its
input, is deterministic; hand-made cases where a move or a swap pays and
where the only paying move would break a model."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hieranon.algorithms.kaca import KACA1
from hieranon.algorithms.kacaplus import KACAPlus
from hieranon.algorithms.privacy_merge import enforce_info
from hieranon.algorithms.privacy_refine import MAX_CANDIDATES, SWAP_CLASSES, TABLED_NODES, _Search, improve
from hieranon.core import table as T
from hieranon.evaluation import metrics
from hieranon.evaluation.verify import verify_codes
from hieranon.privacy import DistinctLDiversity, TCloseness
from random_tables import balanced, make_problem, one_column_problem, random_tables
from test_privacy_merge import private_problem


def _cost(problem, codes) -> float:
    return metrics.distortion(problem.table.codes, codes, problem.cost, problem.table.counts)


def random_classes(problem, seed: int) -> np.ndarray:
    """The rows cut into random classes of at least k records, each printed
    at its members' closest common generalisation."""
    t = problem.table
    order = np.random.default_rng(seed).permutation(t.n_rows)
    cls = np.zeros(t.n_rows, dtype=np.int64)
    c, held = 0, 0
    for r in order:
        cls[r] = c
        held += int(t.counts[r])
        if held >= problem.k:
            c, held = c + 1, 0
    if held and c:  # a short last class joins the one before
        cls[cls == c] = c - 1
    out = np.empty_like(t.codes)
    for x in np.unique(cls):
        rows = np.flatnonzero(cls == x)
        for j, h in enumerate(t.hierarchies):
            v = t.codes[rows[0], j]
            for r in rows[1:]:
                v = h.lca(v, t.codes[r, j])
            out[rows, j] = v
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=60, counts=True), st.data())
def test_refinement_keeps_every_model_and_never_costs_more(case, data):
    enc, problem, sens = private_problem(case, data)
    if not all(b.ok_hist(b.table_hist())[0] for b in problem.privacy):
        return
    if data.draw(st.booleans()):
        base = KACA1(suppression_threshold=data.draw(st.sampled_from([None, 0.3]))).solve(replace(problem, privacy=[]))
        start, start_sup = base.codes, base.suppressed
    else:  # random classes of >= k records: a poor start, where the search has much to do
        start, start_sup = random_classes(problem, data.draw(st.integers(0, 2**16))), np.zeros(enc.n_rows, bool)
    codes, sup, _ = enforce_info(problem, start, start_sup)
    out, sup_out, info = improve(problem, codes, sup)
    rep = verify_codes(enc, out, problem.requirements, sup_out, privacy=problem.privacy)
    assert rep.ok, rep.summary()
    assert np.array_equal(sup_out, (out == 0).all(axis=1))
    assert (out[sup] == 0).all()  # suppressed records stay suppressed
    before, after = _cost(problem, codes), _cost(problem, out)
    assert after <= before + 1e-9
    assert info["privacy_refine_gain"] >= 0 and (info["privacy_refine_gain"] > 0) == (after < before - 1e-12)
    if info["privacy_refine_moves"] + info["privacy_refine_swaps"] == 0:
        assert np.array_equal(out, codes)
    again, _, _ = improve(problem, codes, sup)
    assert np.array_equal(again, out)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(random_tables(max_rows=60, counts=True), st.data())
def test_row_costs_computed_where_read_give_the_same_search(monkeypatch, case, data):
    """A row's costs tabled for every node of an attribute, or computed where
    a scan reads them (an attribute of more than TABLED_NODES nodes),
    through the dense LCA tables or the ancestor tables: the same search,
    move for move."""
    from hieranon.algorithms import kaca_core, privacy_refine

    enc, problem, sens = private_problem(case, data)
    if not all(b.ok_hist(b.table_hist())[0] for b in problem.privacy):
        return
    start = random_classes(problem, data.draw(st.integers(0, 2**16)))
    codes, sup, _ = enforce_info(problem, start, np.zeros(enc.n_rows, bool))
    want, want_sup, want_info = improve(problem, codes, sup)
    with monkeypatch.context() as patch:  # undone before the next example
        patch.setattr(privacy_refine, "TABLED_NODES", 0)
        patch.setattr(kaca_core, "DENSE_LCA_MAX_NODES", data.draw(st.sampled_from([0, 2048])))
        got, got_sup, got_info = improve(problem, codes, sup)
    assert np.array_equal(got, want) and np.array_equal(got_sup, want_sup)
    for key in ("privacy_refine_moves", "privacy_refine_swaps", "privacy_refine_gain"):
        assert got_info[key] == want_info[key]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=60), st.data())
def test_kacaplus_with_models_verifies_and_without_is_unchanged(case, data):
    """kaca+ runs the repair and the refinement: verified with the models;
    clustering for k alone (``share_sweep=False``), with no model, or models
    the plain output already meets, the output is the plain run's (at the
    models' class-size floor when it is above k), bit for bit."""
    from hieranon.algorithms.base import with_smallest_class

    enc, problem, sens = private_problem(case, data)
    floor = with_smallest_class(problem) if all(b.ok_hist(b.table_hist())[0] for b in problem.privacy) else problem
    plain = KACAPlus().solve(replace(floor, privacy=[]))
    again = KACAPlus().solve(replace(floor, privacy=[]))
    assert np.array_equal(plain.codes, again.codes)
    if not all(b.ok_hist(b.table_hist())[0] for b in problem.privacy):
        return
    for share_sweep in ("auto", True):  # the sweep's classes made to hold a model's share
        shared = KACAPlus(share_sweep=share_sweep).solve(problem)
        rep = verify_codes(enc, shared.codes, problem.requirements, shared.suppressed, privacy=problem.privacy)
        assert rep.ok, rep.summary()
    sol = KACAPlus(share_sweep=False).solve(problem)
    rep = verify_codes(enc, sol.codes, problem.requirements, sol.suppressed, privacy=problem.privacy)
    assert rep.ok, rep.summary()
    # the search runs only after a repair that changed something (else the output is the plain run's)
    assert ("privacy_refine_moves" in sol.details.privacy) == (sol.details.privacy["privacy_violating_in"] > 0)
    if sol.details.privacy["privacy_violating_in"] == 0:
        assert np.array_equal(sol.codes, plain.codes)


def _two_classes():
    """One attribute: x0 = {x0.0, x0.1}, x1 = {x1.0, x1.1} under the root."""
    hx = balanced("x", [2, 2])
    return hx, {v: hx.node_of_label(v) for v in ("x0", "x0.0", "x0.1", "x1", "x1.0", "x1.1")}


def test_outlier_moves_to_the_class_it_fits():
    """A = {x0.0, x0.0, x1.0} prints the root (the x1.0 record widens it);
    B = {x1.0, x1.0} prints x1.0. Moving the x1.0 record to B lowers A to
    x0.0 and costs B nothing; with distinct 2-diversity the move keeps both
    classes diverse, so it is made."""
    hx, n = _two_classes()
    orig = np.array([n["x0.0"], n["x0.0"], n["x1.0"], n["x1.0"], n["x1.0"]], dtype=np.int32)[:, None]
    start = np.array([0, 0, 0, n["x1.0"], n["x1.0"]], dtype=np.int32)[:, None]
    enc, problem = one_column_problem(hx, orig, "abaab", DistinctLDiversity("s", 2))
    assert verify_codes(enc, start, problem.requirements, np.zeros(5, bool), privacy=problem.privacy).ok
    out, sup, info = improve(problem, start, np.zeros(5, dtype=bool))
    assert info["privacy_refine_moves"] == 1
    assert verify_codes(enc, out, problem.requirements, sup, privacy=problem.privacy).ok
    assert out[:, 0].tolist() == [n["x0.0"], n["x0.0"], n["x1.0"], n["x1.0"], n["x1.0"]]
    assert _cost(problem, out) < _cost(problem, start)


def test_move_that_would_break_a_model_is_not_made():
    """As above, but B already holds both values and A's x0.0 records share
    one: the x1.0 record (value b) is A's only b, so moving it would leave
    A homogeneous. Nothing may change."""
    hx, n = _two_classes()
    orig = np.array([n["x0.0"], n["x0.0"], n["x1.0"], n["x1.0"], n["x1.0"]], dtype=np.int32)[:, None]
    start = np.array([0, 0, 0, n["x1.0"], n["x1.0"]], dtype=np.int32)[:, None]
    enc, problem = one_column_problem(hx, orig, "aabab", DistinctLDiversity("s", 2))
    out, sup, info = improve(problem, start, np.zeros(5, dtype=bool))
    assert info["privacy_refine_moves"] + info["privacy_refine_swaps"] == 0
    assert np.array_equal(out, start)


def test_swap_when_no_class_may_lose_a_record():
    """k = 2, t-closeness t = 0.25 on a half-a half-b table. A = {(x0.0, y0.0) a,
    (x1.0, y0.0) b} prints (*, y0.0), B = {(x1.0, y0.1) a, (x0.0, y0.1) b}
    prints (*, y0.1); neither may lose a record (k). Trading A's x1.0 'b'
    for B's x0.0 'b' (one value: no histogram changes) gives (x0.0, y0) and
    (x1.0, y0): lower, and still t-close."""
    hx = balanced("x", [2, 2])
    hy = balanced("y", [2, 2])
    x00, x10 = hx.node_of_label("x0.0"), hx.node_of_label("x1.0")
    y00, y01, y0 = hy.node_of_label("y0.0"), hy.node_of_label("y0.1"), hy.node_of_label("y0")
    orig = np.array([[x00, y00], [x10, y00], [x10, y01], [x00, y01]], dtype=np.int32)
    enc = T.EncodedTable(orig, [hx, hy], ["x", "y"], np.ones(4, dtype=np.int64))
    problem = make_problem(enc, 2, 0)
    sens = pd.DataFrame({"s": ["a", "b", "a", "b"]})
    problem.privacy = [TCloseness("s", 0.25, "equal").bind(sens, enc.counts)]
    start = np.column_stack([np.zeros(4, dtype=np.int32), orig[:, 1]])
    assert verify_codes(enc, start, problem.requirements, np.zeros(4, bool), privacy=problem.privacy).ok
    out, sup, info = improve(problem, start, np.zeros(4, dtype=bool))
    assert info["privacy_refine_swaps"] == 1 and info["privacy_refine_moves"] == 0
    assert verify_codes(enc, out, problem.requirements, sup, privacy=problem.privacy).ok
    assert (out[:, 1] == y0).all() and set(out[:, 0].tolist()) == {x00, x10}
    assert _cost(problem, out) < _cost(problem, start)


def test_search_returns_to_python_between_chunks(monkeypatch):
    """With one row per kernel call, the hook runs between chunks and an
    exception raised there (a Ctrl-C) stops the search."""
    from hieranon.algorithms import kaca_core, privacy_refine

    hx, n = _two_classes()
    orig = np.array([n["x0.0"], n["x0.0"], n["x1.0"], n["x1.0"], n["x1.0"]], dtype=np.int32)[:, None]
    start = np.array([0, 0, 0, n["x1.0"], n["x1.0"]], dtype=np.int32)[:, None]
    enc, problem = one_column_problem(hx, orig, "abaab", DistinctLDiversity("s", 2))
    stages = []
    monkeypatch.setattr(privacy_refine, "CHUNK_ROWS", 1)
    monkeypatch.setattr(kaca_core, "chunk_done", stages.append)
    out, _, info = improve(problem, start, np.zeros(5, dtype=bool))
    assert info["privacy_refine_moves"] == 1
    assert stages.count("privacy refinement") >= 5  # one per row of the first pass at least

    def interrupt(stage):
        raise KeyboardInterrupt

    monkeypatch.setattr(kaca_core, "chunk_done", interrupt)
    with pytest.raises(KeyboardInterrupt):
        improve(problem, start, np.zeros(5, dtype=bool))


@pytest.mark.parametrize("block,threads", [(1, 1), (2, 1), (3, 1), (2, 1000)])
def test_every_row_of_a_pass_is_scanned(monkeypatch, block, threads):
    """However the rows are cut into chunks and thread blocks, the first
    pass scans every row once (a row at a chunk's start was once skipped
    after a chunk without a step); a block never outgrows the work space,
    however many threads there are."""
    from hieranon.algorithms import privacy_refine

    hx, n = _two_classes()
    orig = np.array([n["x0.0"], n["x0.0"], n["x1.0"], n["x1.0"], n["x1.0"]], dtype=np.int32)[:, None]
    start = np.array([0, 0, 0, n["x1.0"], n["x1.0"]], dtype=np.int32)[:, None]
    enc, problem = one_column_problem(hx, orig, "abaab", DistinctLDiversity("s", 2))
    scanned = []
    kernel = privacy_refine._scan_block

    def recording(pos, count, order, *args):
        assert count <= privacy_refine.MAX_SCAN_BLOCK  # the kernel writes one row of work space per scanned row
        scanned.extend(order[pos:pos + count].tolist())
        return kernel(pos, count, order, *args)

    monkeypatch.setattr(privacy_refine, "_scan_block", recording)
    monkeypatch.setattr(privacy_refine, "CHUNK_ROWS", 2 if threads == 1 else 5)
    monkeypatch.setattr(privacy_refine, "MAX_SCAN_BLOCK", 64 if threads == 1 else 2)
    monkeypatch.setattr(privacy_refine, "SCAN_BLOCK_PER_THREAD", block)
    monkeypatch.setattr(privacy_refine, "get_num_threads", lambda: threads)  # more threads than work space: capped
    s = _Search(problem, start, np.zeros(5, dtype=bool))
    s.run(1)
    assert sorted(set(scanned)) == list(range(5))


def _row_saving(s, r: int) -> tuple[int, int, list[int] | None, int]:
    """Row ``r``'s class, the records left without it, the generalisation of
    its class without it (a tuple, or None) and the saving of taking it out."""
    t = s.problem.table
    g = s.problem.cost.int_costs
    d, w = int(s.rc[r]), int(s.cnt[r])
    others = [x for x in np.flatnonzero(s.rc == d) if x != r]
    rest = int(s.W[d]) - w if others else 0
    lo = None
    if rest:
        lo = []
        for j, h in enumerate(t.hierarchies):
            v = s.orig[others[0], j]
            for x in others[1:]:
                v = h.lca(v, s.orig[x, j])
            lo.append(int(v))
    g_lo = sum(int(g[j][v]) for j, v in enumerate(lo)) if lo else 0
    return d, rest, lo, int(s.W[d] * s.gT[d]) - rest * g_lo


def _lca_tuple(s, rows) -> list[int]:
    """The closest common generalisation of the original values of ``rows``."""
    tup = [int(v) for v in s.orig[rows[0]]]
    for y in rows[1:]:
        tup = [int(h.lca(a, int(b))) for h, a, b in zip(s.problem.table.hierarchies, tup, s.orig[y])]
    return tup


def _lca_cost(s, a, b) -> int:
    """Cost of the closest common generalisation of tuples ``a`` and ``b``."""
    g = s.problem.cost.int_costs
    return sum(int(g[j][h.lca(int(a[j]), int(b[j]))]) for j, h in enumerate(s.problem.table.hierarchies))


def reference_moves(s, r: int) -> list[tuple[int, int]]:
    """Every improving move of row ``r`` (``(delta, class)``, best first, ties
    by class id) priced over every class in Python."""
    k = s.problem.k
    w, kr = int(s.cnt[r]), int(s.key[r])
    d, rest, _, saving = _row_saving(s, r)
    if not ((rest == 0 or rest >= k) and (rest == 0 or s.can_lose[d, kr])):
        return []
    out = []
    for e in np.flatnonzero(s.alive):
        if e == d or not s.can_gain[e, kr]:
            continue
        gl = _lca_cost(s, s.T[e], s.orig[r])
        delta = int(s.W[e]) * (gl - int(s.gT[e])) + w * gl - saving
        if delta < 0:
            out.append((delta, int(e)))
    return sorted(out)


def _members(s, e: int) -> list[int]:
    out, x = [], s.head[e]
    while x >= 0:
        out.append(int(x))
        x = s.nxt[x]
    return out


def reference_candidates(s, r: int, n_swap: int) -> list[tuple[int, int, int, int]]:
    """Row ``r``'s candidate list as the scan leaves it, priced over every
    class in Python: its improving moves (by change, then class id), then,
    when ``r`` widens its class, the improving swaps with the members of the
    ``n_swap`` classes nearest to it (``sum_j g(lca(t_E, r)) - g(t_E)``, ties
    by class id) in the order they are priced; ``(change, kind, class,
    partner)``, best first (moves before swaps of an equal change), at most
    MAX_CANDIDATES."""
    k = s.problem.k
    w, kr = int(s.cnt[r]), int(s.key[r])
    d, rest, lo, saving = _row_saving(s, r)
    out = [(delta, 0, e, -1) for delta, e in reference_moves(s, r)]
    if n_swap and rest > 0 and saving > w * int(s.gT[d]):
        g = s.problem.cost.int_costs
        near = sorted((_lca_cost(s, s.T[e], s.orig[r]) - int(s.gT[e]), int(e))
                      for e in np.flatnonzero(s.alive) if e != d)
        before = int(s.W[d] * s.gT[d])
        for _, e in near[:n_swap]:
            members = _members(s, e)
            for x in members:
                ws = int(s.cnt[x])
                if rest + ws < k or int(s.W[e]) - ws + w < k:
                    continue
                gd = _lca_cost(s, lo, s.orig[x])
                ge = sum(int(g[j][v]) for j, v in enumerate(_lca_tuple(s, [y for y in members if y != x] + [r])))
                delta = (rest + ws) * gd + (int(s.W[e]) - ws + w) * ge - before - int(s.W[e] * s.gT[e])
                if delta < 0:
                    out.append((delta, 1 if s.key[x] == kr else 2, e, x))
    return sorted(out, key=lambda c: c[0])[:MAX_CANDIDATES]  # stable: moves first, swaps as priced


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_tables(max_rows=60, counts=True), st.data())
def test_scan_finds_the_candidates_priced_over_every_class(case, data):
    """The scan reads only the trie's subtrees that may hold a candidate (and,
    without swaps, only when some class is cheap enough to pay); its
    candidates -- moves, and swaps with the nearest classes' members -- are
    those of every class in the same order, also after relocations have
    changed tuples and weights, emptied classes and given two classes one
    tuple."""
    enc, problem, _ = private_problem(case, data)
    if not all(b.ok_hist(b.table_hist())[0] for b in problem.privacy):
        return
    start = random_classes(problem, data.draw(st.integers(0, 2**16)))
    codes, sup, _ = enforce_info(problem, start, np.zeros(enc.n_rows, bool))
    s = _Search(problem, codes, sup)
    for _ in range(data.draw(st.integers(0, 6))):
        r = data.draw(st.integers(0, enc.n_rows - 1))
        e = data.draw(st.integers(0, len(s.W) - 1))
        if s.rc[r] >= 0 and s.alive[e] and s.rc[r] != e:
            s.relocate(r, e)
    assert np.array_equal(s.by_cost, np.lexsort((np.arange(len(s.gT)), s.gT)))
    lists = [np.zeros((1, MAX_CANDIDATES), dtype=np.int64) for _ in range(4)]
    n_found = np.zeros(1, dtype=np.int64)
    order = np.flatnonzero(s.rc >= 0).astype(np.int64)
    found = 0
    tabled = data.draw(st.sampled_from([TABLED_NODES, 0]))  # row costs tabled, or computed where read
    n_swap = data.draw(st.sampled_from([0, 1, SWAP_CLASSES]))
    for i, r in enumerate(order):
        want = reference_candidates(s, int(r), n_swap)
        s.scan(i, 1, order, lists, n_found, n_swap=n_swap, tabled=tabled)
        got = [tuple(int(x[0][t]) for x in lists) for t in range(int(n_found[0]))]
        assert got == want
        found += len(got)
    assume(found)
