"""Issue 26 item 14: the PostgreSQL tests live in schemas of their run, never in ``public``."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from svc.store import PostgresStore
from tests._support import drop_run_schemas, new_run_prefix, with_search_path

from .conftest import Backend

pytestmark = pytest.mark.postgres

_OWN_TABLES = ("svc_messages", "svc_webhook_events", "svc_service_requests", "svc_outbox")


def _tables(url: str, schema: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
        ).fetchall()
    return {str(row[0]) for row in rows}


async def test_a_test_store_migrates_into_its_run_schema_not_public(
    pg: Backend, postgres_url: str, postgres_run_prefix: str
) -> None:
    """What this test's own store did, whatever else lives in the database (another
    deployment may have migrated into ``public``): its connections see only its run
    schema, and every table it reads and writes resolves there."""
    assert pg.schema is not None
    assert pg.schema.startswith(postgres_run_prefix + "_")
    store = pg.open()
    await store.migrate()
    assert "svc_messages" in _tables(postgres_url, pg.schema)

    def seen_by_the_store(session: Any) -> tuple[list[str], dict[str, str]]:
        [(schemas,)] = session.fetchall("SELECT current_schemas(false)")
        rows = session.fetchall(
            "SELECT c.relname, n.nspname FROM pg_class c JOIN pg_namespace n"
            " ON n.oid = c.relnamespace WHERE c.oid = ANY(?::regclass[])",
            (list(_OWN_TABLES),),
        )
        return list(schemas), {str(name): str(schema) for name, schema in rows}

    schemas, homes = await store._call("query_failed", seen_by_the_store, write=False)
    assert schemas == [pg.schema]  # public is not on its search path: nothing lands there
    assert homes == dict.fromkeys(_OWN_TABLES, pg.schema)


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
