"""Issue 26 item 14: the PostgreSQL tests live in schemas of their run, never in ``public``."""

from __future__ import annotations

import psycopg
import pytest

from svc.store import PostgresStore
from tests._support import drop_run_schemas, new_run_prefix, with_search_path

from .conftest import Backend

pytestmark = pytest.mark.postgres


def _tables(url: str, schema: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
        ).fetchall()
    return {str(row[0]) for row in rows}


async def test_a_test_store_migrates_into_its_run_schema_not_public(
    pg: Backend, postgres_url: str, postgres_run_prefix: str
) -> None:
    assert pg.schema is not None
    assert pg.schema.startswith(postgres_run_prefix + "_")
    store = pg.open()
    await store.migrate()
    assert "svc_messages" in _tables(postgres_url, pg.schema)
    assert not {t for t in _tables(postgres_url, "public") if t.startswith("svc_")}


async def test_a_dsn_pinned_schema_and_the_run_sweep_leave_nothing_behind(
    postgres_url: str,
) -> None:
    prefix = new_run_prefix("sweep")
    for name in (f"{prefix}_a", f"{prefix}_b"):
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
    store = PostgresStore(with_search_path(postgres_url, f"{prefix}_a"), min_size=1, max_size=2)
    try:
        await store.migrate()
    finally:
        await store.close()
    assert "svc_messages" in _tables(postgres_url, f"{prefix}_a")
    assert sorted(drop_run_schemas(postgres_url, prefix)) == [f"{prefix}_a", f"{prefix}_b"]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE starts_with(nspname, %s)", (prefix,)
        ).fetchone()
    assert left == (0,)
