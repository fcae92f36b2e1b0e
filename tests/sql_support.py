"""What the database tests share (a module beside ``random_tables``)."""

from __future__ import annotations

from hieranon.io.sql import database_url


def table_names(url: str) -> set[str]:
    """The tables of the database at ``url`` now."""
    import sqlalchemy as sa

    engine = sa.create_engine(database_url(url))
    try:
        with engine.connect() as conn:
            return set(sa.inspect(conn).get_table_names())
    finally:
        engine.dispose()
