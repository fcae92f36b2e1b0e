"""The plan for tables larger than memory (hieranon.job.scale) on a database
source: the table read in batches through a server-side cursor on every pass,
the verified release streamed into a new table in one transaction."""

from __future__ import annotations

import secrets

import pandas as pd
import pytest

pytest.importorskip("sqlalchemy")

from hieranon.hierarchies import readers as H  # noqa: E402
from hieranon.io.sql import SqlTable, iter_sql, read_sql, write_sql  # noqa: E402
from hieranon.job.scale import anonymize_parquet, iter_batches  # noqa: E402
from hieranon.job.spec import AnonymizationSpec  # noqa: E402


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'big.db'}"
    return request.getfixturevalue("postgres_url")


def test_a_database_table_is_anonymised_batch_by_batch(db_url, tmp_path, monkeypatch):
    rng = __import__("numpy").random.default_rng(3)
    df = pd.DataFrame({"sex": rng.choice(["M", "F"], 600), "city": rng.choice(["a", "b", "c", "d"], 600),
                       "income": rng.integers(1000, 5000, 600)})
    name = f"people_{secrets.token_hex(3)}"
    write_sql(df, db_url, name)
    source = SqlTable(db_url, name)
    batches = []

    def counting(src, batch_rows):
        batches.append(batch_rows)
        return iter_sql(src, batch_rows)

    monkeypatch.setattr("hieranon.job.scale.iter_sql", counting)
    assert [len(b) for b in iter_batches(source, 250)] == [250, 250, 100]
    spec = AnonymizationSpec(hierarchies={c: H.suppression(c, df[c]) for c in ("sex", "city")}, k=5,
                             method="mondrian")
    out = SqlTable(db_url, f"{name}_out")
    res = anonymize_parquet(source, out, spec, block_size=200, batch_rows=200, executor="serial")
    assert res.verification.ok and res.n_rows == 600
    assert len(batches) >= 3 and set(batches) >= {200}  # encoded, written and verified from the database in batches
    released = read_sql(out)
    assert list(released.columns) == ["sex", "city", "income"] and len(released) == 600
    assert (released["income"] == df["income"]).all()  # untouched, in the input's order
    assert released["income"].dtype.kind == "i"
    # an existing table is refused before any work; replaced with force
    with pytest.raises(Exception, match="already exists; pass --force"):
        anonymize_parquet(source, out, spec, block_size=200, batch_rows=200, executor="serial")
    assert anonymize_parquet(source, out, spec, block_size=200, batch_rows=200, executor="serial",
                             force=True).verification.ok
