"""``svc store prune`` on SQLite and PostgreSQL, and ``svc serve --retention``."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
import trio
from click.testing import CliRunner

from svc.cli import cli
from svc.store import PersistenceStore, PostgresStore, SqliteStore
from tests._support import drop_run_schemas, new_run_prefix, run_svc, start_serve, with_search_path

OLD = datetime.now(UTC) - timedelta(days=30)
NEW = datetime.now(UTC)


async def _seed(store: PersistenceStore) -> None:
    await store.migrate()
    for n in range(3):
        await store.record_webhook_event(event_key=f"old-{n}", event_hash="h", received_at=OLD)
    await store.record_webhook_event(event_key="new", event_hash="h", received_at=NEW)


def _seed_sqlite(path: Path) -> None:
    async def main() -> None:
        store = SqliteStore(path)
        try:
            await _seed(store)
        finally:
            await store.close()

    trio.run(main)


@pytest.fixture
def pg_dsn(postgres_url: str) -> Iterator[str]:
    schema = new_run_prefix("prune")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    yield with_search_path(postgres_url, schema)
    drop_run_schemas(postgres_url, schema)


def _counts(output: str) -> dict[str, int]:
    return {line.split("\t")[0]: int(line.split("\t")[1]) for line in output.splitlines()}


def test_prune_on_sqlite_prints_what_it_removed(tmp_path: Path) -> None:
    db = tmp_path / "svc.db"
    _seed_sqlite(db)
    result = CliRunner().invoke(
        cli, ["store", "prune", "--older-than", "14d", "--database", str(db)]
    )
    assert result.exit_code == 0, result.output
    counts = _counts(result.stdout)
    assert counts["webhookEvents"] == 3 and counts["messages"] == 0
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT event_key FROM svc_webhook_events").fetchall()
    conn.close()
    assert rows == [("new",)]


@pytest.mark.postgres
def test_prune_on_postgres_through_an_env_named_dsn(pg_dsn: str) -> None:
    async def seed() -> None:
        store = PostgresStore(pg_dsn)
        try:
            await _seed(store)
        finally:
            await store.close()

    trio.run(seed)
    result = CliRunner().invoke(
        cli,
        [
            "store",
            "prune",
            "--older-than",
            "14d",
            "--messages-older-than",
            "90d",
            "--database-url-env",
            "SVC_H9_PRUNE_DSN",
        ],
        env={"SVC_H9_PRUNE_DSN": pg_dsn},
    )
    assert result.exit_code == 0, result.output
    assert _counts(result.stdout)["webhookEvents"] == 3
    assert pg_dsn not in result.output
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT event_key FROM svc_webhook_events").fetchall() == [("new",)]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("14", "must be a duration such as 30d, 12h, 90m or 45s."),
        ("2w", "must be a duration such as 30d, 12h, 90m or 45s."),
        ("-1d", "must be a duration such as 30d, 12h, 90m or 45s."),
        ("9999999d", "must be a duration such as 30d, 12h, 90m or 45s."),
        ("999999d", "must be at most 3650d (ten years)."),
        ("0s", "must be more than zero: a zero horizon keeps nothing"),
        ("0d", "must be more than zero: a zero horizon keeps nothing"),
    ],
)
def test_prune_durations_are_checked(tmp_path: Path, value: str, said: str) -> None:
    """Zero is a duration: refused on purpose, and the refusal says why (not 'not a duration')."""
    for option in ("--older-than", "--messages-older-than"):
        args = ["store", "prune", "--database", str(tmp_path / "x.db"), "--older-than", "30d"]
        args += [option, value]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1
        assert f"{option} {said}" in " ".join(result.output.split())
    assert not (tmp_path / "x.db").exists()  # refused before the store was opened


def _event_keys(backend: str, where: str) -> list[tuple[str]]:
    if backend == "sqlite":
        with sqlite3.connect(where) as conn:
            rows = conn.execute("SELECT event_key FROM svc_webhook_events").fetchall()
        conn.close()
        return rows
    with psycopg.connect(where) as pg:
        return [(str(r[0]),) for r in pg.execute("SELECT event_key FROM svc_webhook_events")]


@pytest.mark.slow
@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_serve_with_retention_prunes_at_start(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    made = run_svc("init", str(tmp_path / "bot"))
    assert made.returncode == 0, made.stderr
    env: dict[str, str] = {}
    if backend == "sqlite":
        where = str(tmp_path / "svc.db")
        _seed_sqlite(Path(where))
        flags = ["--database", where]
    else:
        where = request.getfixturevalue("pg_dsn")

        async def seed() -> None:
            store = PostgresStore(where)
            try:
                await _seed(store)
            finally:
                await store.close()

        trio.run(seed)
        flags = ["--database-url-env", "SVC_H9_SERVE_DSN"]
        env = {"SVC_H9_SERVE_DSN": where}
    served = start_serve(
        "--config",
        str(tmp_path / "bot" / "svc.config.yaml"),
        "--dry-run",
        *flags,
        "--port",
        "0",
        "--retention",
        "14d",
        cwd=tmp_path,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        keys: list[tuple[str]] = []
        while time.monotonic() < deadline:
            keys = _event_keys(backend, where)
            if keys == [("new",)]:
                break
            time.sleep(0.05)
        assert keys == [("new",)]
    finally:
        assert served.stop() == 0


def test_serve_retention_needs_a_store(tmp_path: Path) -> None:
    made = run_svc("init", str(tmp_path / "bot"))
    assert made.returncode == 0, made.stderr
    result = run_svc(
        "serve",
        "--config",
        str(tmp_path / "bot" / "svc.config.yaml"),
        "--dry-run",
        "--retention",
        "14d",
    )
    assert result.returncode == 1
    assert "--retention needs a store" in result.stderr


def test_an_unknown_test_fault_is_a_usage_error(tmp_path: Path) -> None:
    made = run_svc("init", str(tmp_path / "bot"))
    assert made.returncode == 0, made.stderr
    result = run_svc(
        "serve",
        "--config",
        str(tmp_path / "bot" / "svc.config.yaml"),
        "--dry-run",
        env={"SVC_TEST_FAULT": "bogus"},
    )
    assert result.returncode == 1
    assert "SVC_TEST_FAULT names an unknown fault" in result.stderr
