"""Fuzz and fault suite for file formats and the distributed path: Parquet
schemas (nested types, dataset parts with differing columns or types,
dictionary columns) and Dask scheduler addresses (garbage, a server speaking
HTTP, a silent server, a closed port), through the CLI in process.

The contract of :mod:`test_fuzz`: exit 0 with a verified output, or exit 1/2
with ONE line on stderr naming what is wrong and nothing written; never exit
3, never a hang (the code's own connection timeout, shortened here)."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hieranon.algorithms import partition
from test_fuzz import assert_contract, error_lines, run_cli

N = 40
QI_ARGS = ["--qi", "age=intervals:5,10", "--qi", "sex=suppress", "-k", "4"]


def _base(n: int = N) -> pa.Table:
    return pa.table({"age": [str(20 + i % 20) for i in range(n)], "sex": ["f", "m"] * (n // 2),
                     "note": [f"n{i % 3}" for i in range(n)]})


def _run(tmp_path: Path, src: Path, out: Path, *args) -> tuple[int, str, str]:
    inputs = {p for p in tmp_path.iterdir()}
    code, stdout, err = run_cli("anonymize", src, "-o", out, *args, "-q")
    assert_contract(code, err, tmp_path, inputs, [out])
    return code, stdout, err


# ------------------------------------------------------------------ Parquet schemas
NESTED = {
    "list": pa.array([[f"t{i % 3}", "x"] for i in range(N)]),
    "struct": pa.array([{"city": "c", "n": i} for i in range(N)]),
    "map": pa.array([[("k", i)] for i in range(N)], type=pa.map_(pa.string(), pa.int64())),
    "fixed-size list": pa.array([[i, i] for i in range(N)], type=pa.list_(pa.int64(), 2)),
}


@pytest.mark.parametrize("kind", list(NESTED))
@pytest.mark.parametrize("as_qi", [False, True])
def test_nested_parquet_columns_are_refused_naming_them(tmp_path, kind, as_qi):
    src, out = tmp_path / "t.parquet", tmp_path / "o.parquet"
    pq.write_table(_base().append_column("deep", NESTED[kind]), src)
    extra = ["--qi", "deep=suppress"] if as_qi else []
    code, _, err = _run(tmp_path, src, out, *QI_ARGS, *extra)
    assert code == 2 and "'deep'" in err and "nested" in err, err


@pytest.mark.parametrize("column", ["sex", "note"])
def test_dictionary_parquet_columns_are_read_as_their_values(tmp_path, column):
    src, out = tmp_path / "t.parquet", tmp_path / "o.parquet"
    t = _base()
    pq.write_table(t.set_column(t.schema.get_field_index(column), column, t[column].dictionary_encode()), src)
    code, _, err = _run(tmp_path, src, out, *QI_ARGS)
    assert code == 0, err
    got = pq.read_table(out).to_pandas()
    assert got["note"].astype(str).tolist() == t["note"].to_pylist()


def _dataset(tmp_path: Path, *parts: pa.Table) -> Path:
    d = tmp_path / "in"
    d.mkdir()
    for i, t in enumerate(parts):
        pq.write_table(t, d / f"part-{i}.parquet")
    return d


DIFFERING = {
    "an extra column": (lambda t: t.append_column("extra", pa.array(["e"] * t.num_rows)), ["'extra'"]),
    "a missing column": (lambda t: t.drop_columns(["note"]), ["'note'", "lacks"]),
    "another type": (lambda t: t.set_column(0, "age", pa.array(range(t.num_rows))), ["'age'", "int64", "string"]),
    "a renamed column": (lambda t: t.rename_columns(["age", "sex", "Note"]), ["'Note'", "'note'"]),
}


@pytest.mark.parametrize("case", list(DIFFERING))
def test_dataset_parts_with_differing_schemas_are_refused_naming_them(tmp_path, case):
    change, words = DIFFERING[case]
    t = _base()
    src = _dataset(tmp_path, t.slice(0, 20), change(t.slice(20)))
    code, _, err = _run(tmp_path, src, tmp_path / "out", *QI_ARGS, "--distributed")
    assert code == 2, err
    for w in ["part-0.parquet", "part-1.parquet", *words]:
        assert w in err, err


def test_dataset_parts_agreeing_up_to_encoding_and_nulls_are_one_table(tmp_path):
    """A dictionary-encoded part, text with 64-bit offsets (large_string)
    and an all-null column unify with the others: nothing to refuse,
    nothing dropped."""
    t = _base()
    second = t.slice(20)
    second = second.set_column(2, "note", pa.nulls(second.num_rows, pa.null()))
    second = second.set_column(1, "sex", second["sex"].dictionary_encode())
    second = second.set_column(0, "age", second["age"].cast(pa.large_string()))
    src = _dataset(tmp_path, t.slice(0, 20), second)
    out = tmp_path / "out"
    code, _, err = _run(tmp_path, src, out, *QI_ARGS, "--distributed")
    assert code == 0, err
    got = pq.read_table(out).to_pandas()
    assert list(got.columns) == ["age", "sex", "note"] and len(got) == N
    assert got["note"].isna().sum() == 20


# ------------------------------------------------------------------ scheduler addresses
class _Server:
    """A TCP server on a free local port that answers each connection with
    ``greeting`` (None: says nothing and holds it open, as a web server
    waiting for its request does)."""

    def __init__(self, greeting: bytes | None):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.greeting, self.held = greeting, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.greeting is None:
                self.held.append(conn)
                continue
            try:
                conn.sendall(self.greeting)
            except OSError:
                pass
            conn.close()

    def close(self) -> None:
        self.sock.close()
        for c in self.held:
            c.close()


def _closed_port() -> int:
    s = socket.create_server(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture
def short_timeout(monkeypatch):
    monkeypatch.setattr(partition, "SCHEDULER_TIMEOUT", 0.5, raising=False)


@pytest.fixture
def small_csv(tmp_path):
    src = tmp_path / "t.csv"
    _base().to_pandas().to_csv(src, index=False)
    return src


ADDRESSES = {
    "garbage": (lambda: "garbage", ["'garbage'", "tcp://HOST:PORT"]),
    "a url": (lambda: "http://127.0.0.1:8786/status", ["'http'"]),
    "no port": (lambda: "tcp://127.0.0.1", ["tcp://HOST:PORT"]),
    "a port out of range": (lambda: "tcp://127.0.0.1:70000", ["70000"]),
    "an empty host": (lambda: "tcp://:8786", ["tcp://HOST:PORT"]),
    "a closed port": (lambda: f"tcp://127.0.0.1:{_closed_port()}", ["cannot connect"]),
}


@pytest.mark.parametrize("case", list(ADDRESSES))
@pytest.mark.parametrize("distributed", [True, False])
def test_bad_scheduler_addresses_are_refused_in_one_line(tmp_path, small_csv, short_timeout, case, distributed):
    address, words = ADDRESSES[case][0](), ADDRESSES[case][1]
    flag = ["--distributed"] if distributed else []
    code, _, err = _run(tmp_path, small_csv, tmp_path / "o.csv", *QI_ARGS, *flag, "--scheduler", address)
    assert code == 2, err
    assert address.split("/")[-1] in err or address in err, err
    for w in words:
        assert w in err, err


@pytest.mark.parametrize("greeting", [b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", b"SSH-2.0-x\r\n",
                                      b"\x00", None])
def test_a_server_that_is_not_a_dask_scheduler_is_refused_fast(tmp_path, small_csv, short_timeout, greeting):
    """Dask would read ``HTTP/1.1`` as a message of 3 EiB (MemoryError) or
    wait for ever on a silent server: refused, naming the address."""
    server = _Server(greeting)
    try:
        address = f"tcp://127.0.0.1:{server.port}"
        code, _, err = _run(tmp_path, small_csv, tmp_path / "o.csv", *QI_ARGS, "--distributed", "--block-size",
                            "10", "--scheduler", address)  # several blocks: the run needs the scheduler
    finally:
        server.close()
    assert code == 2 and address in err and "Dask scheduler" in err, err
    assert len(error_lines(err)) == 1


def test_one_block_reports_the_executor_that_ran(tmp_path, small_csv):
    """--distributed on a one-block table without a scheduler runs the block
    in this process and says so (the params keep what was asked)."""
    code, stdout, err = _run(tmp_path, small_csv, tmp_path / "o.csv", *QI_ARGS, "--distributed", "--json")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["execution"] == {"blocks": 1, "executor": "serial"}
    assert summary["params"]["executor"] == "dask"
