"""Parquet in, Parquet out: hieranon.job.scale (anonymize_parquet, the streaming
verifier verify_parquet) and ``hieranon anonymize --distributed`` on a
dataset directory."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from hieranon import cli
from hieranon.core.cells import value_to_label
from hieranon.core.requirements import Requirement
from hieranon.hierarchies import readers as H
from hieranon.io.datasets.synthetic import COLUMNS, iter_synthetic, synthetic_hierarchies
from hieranon.job.scale import anonymize_parquet, verify_parquet

QIS = COLUMNS[:8]  # the papers' order; salary-class stays a non-QI column
K = 5
N_FILES, ROWS_PER_FILE = 3, 2000


def read_dataset(path: Path) -> pd.DataFrame:
    """A dataset directory read back file by file, in file-name order."""
    return pd.concat([pd.read_parquet(f) for f in sorted(path.glob("*.parquet"))], ignore_index=True)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """3 Parquet files of 2,000 synthetic Adult-schema rows (plus a row id)."""
    root = tmp_path_factory.mktemp("scale")
    src = root / "in"
    src.mkdir()
    start = 0
    for i, chunk in enumerate(iter_synthetic(N_FILES * ROWS_PER_FILE, seed=11, chunk_size=ROWS_PER_FILE)):
        chunk.insert(0, "row_id", np.arange(start, start + len(chunk), dtype=np.int64))
        start += len(chunk)
        chunk.to_parquet(src / f"part-{i:05d}.parquet", index=False)
    return root, src, synthetic_hierarchies()


@pytest.fixture(scope="module")
def anonymised(dataset):
    """One anonymize_parquet run on a process pool; batches (1,500 rows) cut
    across the input files, so the output is cut differently from the input."""
    root, src, hs = dataset
    out = root / "out"
    res = anonymize_parquet(src, out, QIS, hs, k=K, block_size=1500, executor="processes", n_workers=2,
                            batch_rows=1500, seed=2, method="kaca1")  # the streaming is tested, not the method
    return res, out


def requirement():
    return [Requirement(tuple(QIS), K)]


def test_anonymize_parquet_output_verifies_and_is_k_anonymous(dataset, anonymised):
    root, src, hs = dataset
    res, out = anonymised
    assert res.output == out and res.n_rows == N_FILES * ROWS_PER_FILE
    assert res.blocks >= 3 and 0 < res.distortion_ratio < 1
    assert sorted(p.name for p in root.iterdir()) == ["in", "out"]  # no temporary directory left behind

    # the streaming verifier, re-run with batches that align with neither side's files
    rep = verify_parquet(src, out, QIS, hs, requirement(), batch_rows=2500)
    assert rep.ok, rep.summary()
    assert rep.n_rows == N_FILES * ROWS_PER_FILE and rep.n_suppressed == 0

    # an independent check with pandas
    orig, anon = read_dataset(src), read_dataset(out)
    assert len(anon) == len(orig)
    assert list(anon.columns) == list(orig.columns)
    for c in ("row_id", "salary-class"):  # same order, non-QI columns untouched
        assert anon[c].tolist() == orig[c].tolist()
    n_generalised = 0
    for q in QIS:
        h = hs[q]
        pairs = pd.DataFrame({"leaf": [h.code_of(v) for v in orig[q]], "label": anon[q].map(value_to_label)})
        for leaf, label in pairs.drop_duplicates().itertuples(index=False):
            path = [h.labels[a] for a in h.ancestors[leaf, : h.depth[leaf] + 1]]
            assert label in path, f"{q}: {label!r} is neither {h.labels[leaf]!r} nor one of its ancestors"
        n_generalised += int((pairs["label"] != pairs["leaf"].map(lambda v, h=h: h.labels[v])).sum())
    assert n_generalised > 0  # the table was not k-anonymous as given
    sizes = anon.groupby(QIS, observed=True).size()
    assert sizes.min() >= K
    assert rep.achieved_k[str(requirement()[0])] == sizes.min()


def copy_with_edit(src: Path, dst: Path, row: int, edit) -> None:
    """Copy a dataset directory, applying ``edit(frame, local_row)`` to the
    file holding global row ``row`` (the other files are copied as they are)."""
    dst.mkdir()
    start = 0
    for f in sorted(src.glob("*.parquet")):
        frame = pd.read_parquet(f)
        n = len(frame)
        if start <= row < start + n:
            frame = edit(frame.copy(), row - start)
            frame.to_parquet(dst / f.name, index=False)
        else:
            shutil.copy(f, dst / f.name)
        start += n


def test_verify_parquet_catches_a_class_pushed_below_k(dataset, anonymised, tmp_path):
    _, src, hs = dataset
    _, out = anonymised
    orig, anon = read_dataset(src), read_dataset(out)
    # a class of exactly k rows with a generalised cell: de-generalise that one cell
    cls = anon.groupby(QIS, observed=True).ngroup()
    sizes = cls.value_counts()
    target = None
    for c in sizes[sizes == K].index:
        for i in np.flatnonzero(cls.to_numpy() == c):
            diff = [q for q in QIS if anon.at[i, q] != value_to_label(orig.at[i, q])]
            if diff:
                target = (int(i), diff[0])
                break
        if target:
            break
    assert target is not None, "no class of exactly k rows holds a generalised cell"
    row, q = target
    leaf = value_to_label(orig.at[row, q])

    def degeneralise(frame, i):
        frame.loc[i, q] = leaf
        return frame

    bad = tmp_path / "bad"
    copy_with_edit(out, bad, row, degeneralise)
    assert read_dataset(bad).at[row, q] == leaf
    rep = verify_parquet(src, bad, QIS, hs, requirement())
    assert not rep.ok
    assert rep.achieved_k[str(requirement()[0])] < K
    assert len(rep.problems) == 1, rep.problems  # the cell still generalises its original: only k fails
    assert "below k" in rep.problems[0] and "fails" in rep.summary()


def test_verify_parquet_catches_a_changed_non_qi_value(dataset, anonymised, tmp_path):
    _, src, hs = dataset
    _, out = anonymised
    row = 3100  # in the second input file, the third output file

    def flip(frame, i):
        frame.loc[i, "salary-class"] = ">50K" if frame.at[i, "salary-class"] == "<=50K" else "<=50K"
        return frame

    bad = tmp_path / "bad"
    copy_with_edit(out, bad, row, flip)
    rep = verify_parquet(src, bad, QIS, hs, requirement())
    assert not rep.ok
    assert rep.problems == [f"non-QI column 'salary-class' changed at row {row}"]


def test_verify_parquet_catches_a_dropped_row(dataset, anonymised, tmp_path):
    _, src, hs = dataset
    _, out = anonymised
    bad = tmp_path / "bad"
    copy_with_edit(out, bad, 3100, lambda frame, i: frame.drop(index=i).reset_index(drop=True))
    assert len(read_dataset(bad)) == N_FILES * ROWS_PER_FILE - 1
    rep = verify_parquet(src, bad, QIS, hs, requirement())
    assert not rep.ok
    assert any("fewer rows than the input" in p for p in rep.problems), rep.problems
    assert "fewer rows" in rep.summary()


def test_verify_parquet_keys_do_not_overflow_on_wide_tables(tmp_path):
    """Nine QIs whose hierarchies have 256 nodes each: a mixed-radix key over
    node ids needs 72 bits. Two rows that differ only in the first QI form
    two classes of one, which must fail k = 2 (an int64 key that wraps makes
    them one class of two)."""
    names = [f"q{j}" for j in range(9)]
    values = [f"v{i:03d}" for i in range(255)]
    hs = {q: H.suppression(q, values) for q in names}
    assert all(h.n_nodes == 256 for h in hs.values())
    df = pd.DataFrame({q: ["v000", "v000"] for q in names})
    df.loc[1, "q0"] = "v001"
    df["payload"] = [1, 2]
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    df.to_parquet(tmp_path / "in" / "part-0.parquet", index=False)
    df.to_parquet(tmp_path / "out" / "part-0.parquet", index=False)  # published as is
    rep = verify_parquet(tmp_path / "in", tmp_path / "out", names, hs, [Requirement(tuple(names), 2)])
    assert not rep.ok, "two different rows were counted as one class"
    assert rep.achieved_k == {str(Requirement(tuple(names), 2)): 1}
    anon = df.assign(q0=hs["q0"].labels[0])  # q0 generalised to the root: one class of two, which holds
    anon.to_parquet(tmp_path / "out" / "part-0.parquet", index=False)
    rep = verify_parquet(tmp_path / "in", tmp_path / "out", names, hs, [Requirement(tuple(names), 2)])
    assert rep.ok, rep.summary()


# ------------------------------------------------------------------- the CLI
def test_cli_distributed_on_a_dataset_directory(dataset, tmp_path):
    _, src, hs = dataset
    qi_opts = []
    for q in QIS:
        f = tmp_path / f"hierarchy_{q}.csv"
        f.write_text(hs[q].to_arx_csv(), encoding="utf-8")
        qi_opts += ["--qi", f"{q}={f}"]
    out = tmp_path / "anon"
    args = ["anonymize", str(src), "-o", str(out), *qi_opts, "-k", str(K), "--distributed", "--block-size", "1500",
            "--workers", "2", "-q"]
    r = CliRunner().invoke(cli.app, args)
    assert r.exit_code == 0, r.stderr
    assert sorted(out.glob("*.parquet")), "no Parquet file written"
    file_hs = {q: H.from_arx_csv(tmp_path / f"hierarchy_{q}.csv", q) for q in QIS}
    rep = verify_parquet(src, out, QIS, file_hs, requirement())
    assert rep.ok, rep.summary()
    assert rep.n_rows == N_FILES * ROWS_PER_FILE
    assert read_dataset(out)["row_id"].tolist() == list(range(N_FILES * ROWS_PER_FILE))

    # again without --force: exit 2, one line on stderr, nothing written or touched
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.iterdir()}
    listing = sorted(p.name for p in tmp_path.iterdir())
    r = CliRunner().invoke(cli.app, args)
    assert r.exit_code == 2, r.stderr
    assert "already exists" in r.stderr and "--force" in r.stderr
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing


def test_verify_parquet_checks_privacy_models_on_the_whole_dataset(tmp_path):
    """verify_parquet groups every batch's rows into classes over all QIs and
    checks each privacy model, t-closeness against the whole input's
    distribution; the verdict matches the in-memory verifier's."""
    from hieranon.evaluation.verify import verify
    from hieranon.job.pipeline import anonymize
    from hieranon.privacy import DistinctLDiversity, EntropyLDiversity, TCloseness

    rng = np.random.default_rng(11)
    n = 400
    df = pd.DataFrame({"age": rng.integers(20, 60, n), "sex": rng.choice(["m", "f"], n),
                       "disease": rng.choice(["flu", "cold", "hiv", "none"], n, p=[0.4, 0.3, 0.1, 0.2])})
    hs = {"age": H.intervals("age", df["age"].unique(), [5, 10, 20]), "sex": H.suppression("sex", ["m", "f"])}
    made = anonymize(df, list(hs), hs, 5, method="mondrian", privacy=[DistinctLDiversity("disease", 2)])
    out = made.data.copy()
    out["age"] = out["age"].astype(str)
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    for i, rows in enumerate((slice(0, 150), slice(150, n))):  # batches cut in two places
        df.iloc[rows].to_parquet(tmp_path / "in" / f"p{i}.parquet", index=False)
        out.iloc[rows].to_parquet(tmp_path / "out" / f"p{i}.parquet", index=False)
    reqs = [Requirement(("age", "sex"), 5)]
    verdicts = set()
    for model in (DistinctLDiversity("disease", 2), DistinctLDiversity("disease", 4), EntropyLDiversity("disease", 2),
                  TCloseness("disease", 0.1), TCloseness("disease", 0.5)):
        streamed = verify_parquet(tmp_path / "in", tmp_path / "out", list(hs), hs, reqs, batch_rows=100,
                                  privacy=[model])
        in_memory = verify(df, out, list(hs), hs, reqs, privacy=[model])
        assert streamed.ok == in_memory.ok, (model, streamed.problems, in_memory.summary())
        verdicts.add(streamed.ok)
        if not streamed.ok:
            assert any(model.describe().split(" (")[0] in p for p in streamed.problems), streamed.problems
    assert verdicts == {True, False}  # some models hold, some fail


# ------------------------------------------------------------------ large hierarchies, memory
def zip_rows(n: int, seed: int = 0) -> list[list[str]]:
    """ARX rows of n six-digit codes (shuffled): code, 4 digits + **, 2 digits + ****, *."""
    codes = [f"{v:06d}" for v in np.random.default_rng(seed).choice(10**6, n, replace=False)]
    return [[c, c[:4] + "**", c[:2] + "****", "*"] for c in codes]


@pytest.mark.parametrize("sep", [";", ","])
def test_column_loader_builds_the_same_tree_as_the_row_reader(monkeypatch, sep):
    rows = zip_rows(3000)
    rows[5][1] = " " + rows[5][1] + " "  # surrounding spaces are stripped by both
    text = "\n".join(sep.join(r) for r in rows) + "\n"
    monkeypatch.setattr(H, "FAST_LOAD_MIN_ROWS", 10)
    fast = H.from_arx_csv(text, "zip", sep=sep)
    fast_rows = H.from_paths("zip", rows)
    monkeypatch.setattr(H, "FAST_LOAD_MIN_ROWS", 10**9)
    slow = H.from_arx_csv(text, "zip", sep=sep)
    for h in (fast, fast_rows):
        assert h.labels == slow.labels and np.array_equal(h.parent, slow.parent)
        assert dict(h.leaf_index) == dict(slow.leaf_index)


@pytest.mark.parametrize("defect, expected", [
    (lambda rows: rows.__setitem__(7, rows[7][:2] + ["*"]), "rows of different lengths"),
    (lambda rows: rows.__setitem__(9, [rows[3][0]] + rows[9][1:]), "listed twice"),
    (lambda rows: rows.__setitem__(11, [rows[11][0], rows[12][1], "ZZ****", "*"]), "two parents"),
    (lambda rows: rows.__setitem__(4, [rows[4][0], rows[4][1], rows[4][2], "ALL"]), "several roots"),
])
def test_column_loader_leaves_a_defective_file_to_the_row_reader_and_its_message(monkeypatch, defect, expected):
    rows = zip_rows(300, seed=1)
    defect(rows)
    text = "\n".join(";".join(r) for r in rows) + "\n"
    monkeypatch.setattr(H, "FAST_LOAD_MIN_ROWS", 10)
    with pytest.raises(H.HierarchyError, match=expected):
        H.from_arx_csv(text, "zip")


def test_a_large_hierarchy_encodes_whole_columns_and_reports_missing_values(monkeypatch):
    from hieranon.core.table import DataError, encode

    monkeypatch.setattr(H, "FAST_LOAD_MIN_ROWS", 10)
    rows = zip_rows(2000, seed=2)
    h = H.from_paths("zip", rows)
    values = pd.Series([r[0] for r in rows[:50]] * 3, name="zip")
    enc = encode(pd.DataFrame({"zip": values}), ["zip"], {"zip": h})
    assert [h.labels[c] for c in enc.codes[:, 0]] == values.tolist()
    assert h.children[h.parent[enc.codes[0, 0]]].tolist().count(enc.codes[0, 0]) == 1
    with pytest.raises(DataError, match="'999999x'"):
        encode(pd.DataFrame({"zip": ["999999x", rows[0][0]]}), ["zip"], {"zip": h})


def test_a_table_that_would_not_fit_is_refused_before_reading(tmp_path, monkeypatch):
    from hieranon.job import scale

    src = tmp_path / "in.csv"
    src.write_text("a,b\n" + "x,1\n" * 200)
    with pytest.raises(scale.TableTooLarge, match="Parquet dataset"):
        scale.check_fits(src, available=scale.MEMORY_BASE)
    assert scale.check_fits(src, available=2**40) > src.stat().st_size


def test_cli_refuses_a_table_too_large_for_memory_in_one_line(tmp_path, monkeypatch, capsys):
    from hieranon.job import scale
    from main_runner import run_main

    src = tmp_path / "in.csv"
    src.write_text("a,b\n" + "x,1\n" * 200)
    monkeypatch.setattr(scale, "available_memory", lambda: scale.MEMORY_BASE)
    code, out, err = run_main(monkeypatch, capsys, "anonymize", src, "-o", tmp_path / "out.csv", "--qi",
                              "a=suppress", "-k", "2", "-q")
    assert code == 2 and "--distributed" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.csv").exists()
    # check and evaluate read the table too: the same one-line refusal
    for args in (["check", src, "--qi", "a=suppress", "-k", "2"],
                 ["evaluate", src, src, "--qi", "a=suppress", "-k", "2"]):
        code, out, err = run_main(monkeypatch, capsys, *args)
        assert code == 2 and "GiB of memory" in err and len(err.strip().splitlines()) == 1, (args, err)


def test_cli_whole_table_and_plan_in_json(tmp_path, monkeypatch, capsys):
    import json

    from main_runner import run_main

    src = tmp_path / "in.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.choice(["x", "y", "z"], 300), "b": rng.integers(0, 9, 300)}).to_csv(src, index=False)
    args = ["anonymize", src, "-o", tmp_path / "out.csv", "--qi", "a=suppress", "--qi", "b=suppress", "-k", "3",
            "--json"]
    code, out, _ = run_main(monkeypatch, capsys, *args, "--whole-table")
    assert code == 0 and json.loads(out)["plan"]["mode"] == "whole"
    assert "asked" in json.loads(out)["plan"]["reason"]
    code, _, err = run_main(monkeypatch, capsys, *args, "--force", "--whole-table", "--distributed")
    assert code == 2 and "--whole-table" in err


def test_a_dataset_gets_pseudonyms_not_masks(tmp_path):
    """identifier_action pseudonym on a Parquet dataset: one keyed pseudonym
    per value across batches (it was silently masked with '*')."""
    from hieranon.io.pseudonyms import is_pseudonym
    from hieranon.job.spec import AnonymizationSpec

    src = tmp_path / "in"
    src.mkdir()
    ids = [f"P{i % 150:03d}" for i in range(300)]  # each identifier twice, in different batches
    df = pd.DataFrame({"id": ids, "sex": ["M", "F", "W"] * 100})
    df.to_parquet(src / "part-0.parquet", index=False)
    spec = AnonymizationSpec(hierarchies={"sex": H.suppression("sex", df["sex"])}, k=2, identifiers=("id",),
                             identifier_action="pseudonym", pseudonym_key=bytes(range(100, 132)), method="mondrian")
    res = anonymize_parquet(src, tmp_path / "out", spec, block_size=100, batch_rows=100, executor="serial")
    assert res.verification.ok
    out = read_dataset(tmp_path / "out")
    assert is_pseudonym(out["id"]).all() and not set(out["id"]) & set(ids)
    assert (out["id"].iloc[:150].to_numpy() == out["id"].iloc[150:].to_numpy()).all()
    assert out["id"].nunique() == 150
