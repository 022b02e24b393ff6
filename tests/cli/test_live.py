"""The live-process functions ``svc.asgi`` builds on (``svc.cli``'s public surface)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from svc.cli import (
    CliUsageError,
    LiveGuardError,
    ServeError,
    live_environment_from,
    open_migrated_store,
    resolve_dsn,
)
from svc.store import SqliteStore

T0 = datetime(2026, 11, 21, 10, 15, 30, tzinfo=UTC)


def test_live_environment_needs_both_gates() -> None:
    with pytest.raises(LiveGuardError):
        live_environment_from({"SVC_LIVE_ENABLE": "1"})
    env = {"SVC_LIVE_ENABLE": "1", "SVC_YES_LIVE": "1", "X": "y"}
    assert live_environment_from(env) == env


def test_resolve_dsn_reads_the_named_variable_and_never_echoes_a_value() -> None:
    assert resolve_dsn({"PG_URL": "postgresql://h/db"}, "PG_URL", "--opt") == "postgresql://h/db"
    with pytest.raises(ServeError) as unset:
        resolve_dsn({}, "PG_URL", "--opt")
    assert str(unset.value) == "PG_URL is not set."
    with pytest.raises(CliUsageError):
        resolve_dsn({"pg": "postgresql://h/db"}, "pg", "--opt")


def test_open_migrated_store_needs_exactly_one_location(tmp_path: Path) -> None:
    with pytest.raises(CliUsageError):
        open_migrated_store()
    with pytest.raises(CliUsageError):
        open_migrated_store(sqlite_path=str(tmp_path / "a.db"), postgres_dsn="postgresql://h/db")


def test_open_migrated_store_migrates_the_sqlite_file(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "svc.db"
    store = open_migrated_store(sqlite_path=str(path))
    assert isinstance(store, SqliteStore)
    with sqlite3.connect(path) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"svc_schema_migrations", "svc_outbox"} <= tables


@pytest.mark.postgres
def test_open_migrated_store_runs_postgres_webhook_writes_in_the_writer_process(
    postgres_url: str,
) -> None:
    """``svc.asgi``'s store writes as ``svc serve``'s does: its deliveries run in the writer
    process, started by the first batch in the serving run."""
    import secrets

    import psycopg
    import trio

    from svc.store import PostgresStore
    from tests._support.postgres import with_search_path

    schema = f"svc_live_{secrets.token_hex(4)}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        store = open_migrated_store(postgres_dsn=with_search_path(postgres_url, schema))
        assert isinstance(store, PostgresStore)

        async def serve() -> tuple[tuple[str, ...], int | None]:
            try:
                recorded = await store.record_webhook_updates(
                    event_key="e1", event_hash="h", received_at=T0, update_keys=["u1"]
                )
                child = store._engine.writers.child
                proc = None if child is None else child._proc
                return recorded.new, None if proc is None else proc.pid
            finally:
                await store.close()

        to_run, pid = trio.run(serve)
        assert to_run == ("u1",)
        assert pid is not None and pid != os.getpid()
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
