"""The live-process functions ``svc.asgi`` builds on (``svc.cli``'s public surface)."""

from __future__ import annotations

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
