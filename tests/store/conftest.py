"""Store fixtures: one contract suite over ``sqlite-memory``, ``sqlite-file``,
``sqlite-process`` (a file whose webhook writes run in the writer process), ``postgres`` and
``postgres-process`` (its webhook writes in the writer process).

PostgreSQL is real: ``SVC_TEST_POSTGRES_URL`` names the server. Unset -> the
PostgreSQL cases skip with a reason; set but unreachable -> they fail. Each
test gets a fresh schema inside one per-run prefix, all dropped at the end.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
import trio

from svc.store import PostgresStore, SqliteStore
from tests._support import drop_run_schemas, new_run_prefix

T0 = datetime(2026, 11, 21, 10, 15, 30, tzinfo=UTC)
ADAPTERS = ["sqlite-memory", "sqlite-file", "sqlite-process", "postgres", "postgres-process"]
PERSISTENT_ADAPTERS = ["sqlite-file", "sqlite-process", "postgres", "postgres-process"]
SQLITE_FILES = ("sqlite-file", "sqlite-process")
POSTGRES_KINDS = ("postgres", "postgres-process")

_schema_numbers = itertools.count(1)
AnyStore = SqliteStore | PostgresStore


def message_row(
    row_id: str,
    wa_message_id: str,
    *,
    at: int,
    direction: str = "inbound",
    from_phone: str | None = None,
    to_phone: str | None = None,
    status: str = "received",
    user_id: str | None = None,
    parent_user_id: str | None = None,
    business_phone_number_id: str | None = None,
) -> tuple[object, ...]:
    """A checked text message row in the store's column order, created and updated at ``at``
    (epoch ms), as the set-based forms take it."""
    return (
        row_id,
        wa_message_id,
        direction,
        from_phone,
        to_phone,
        "text",
        status,
        None,
        at,
        at,
        user_id,
        parent_user_id,
        business_phone_number_id,
    )


def migrated_sqlite_file(path: Path) -> Path:
    """``path`` as a SQLite file migrated to the current schema (for tests that open it raw)."""

    async def migrate() -> None:
        store = SqliteStore(str(path))
        try:
            await store.migrate()
        finally:
            await store.close()

    trio.run(migrate)
    return path


@pytest.fixture(scope="session")
def postgres_run_prefix(postgres_url: str) -> Iterator[str]:
    """A per-run schema prefix; every schema under it is dropped after the run."""
    prefix = new_run_prefix("test")
    yield prefix
    drop_run_schemas(postgres_url, prefix)


class Backend:
    """Opens stores on one database: a fresh SQLite file, memory, or PostgreSQL schema."""

    def __init__(self, kind: str, *, path: Path | None, url: str | None, schema: str | None):
        self.kind = kind
        self.path = path
        self.url = url
        self.schema = schema
        self.opened: list[AnyStore] = []

    def open(self) -> AnyStore:
        store: AnyStore
        if self.kind == "sqlite-memory":
            store = SqliteStore(":memory:")
        elif self.kind in SQLITE_FILES:
            assert self.path is not None
            store = SqliteStore(self.path, writer=self._writer)
        else:
            assert self.url is not None
            store = PostgresStore(
                self.url, schema=self.schema, min_size=1, max_size=10, writer=self._writer
            )
        self.opened.append(store)
        return store

    @property
    def _writer(self) -> str:
        """Where the store opened for this kind runs its webhook writes."""
        return "process" if self.kind.endswith("-process") else "thread"

    def count(self, sql: str) -> int:
        """The one integer ``sql`` (a ``SELECT count(*) ...``) answers, read directly."""
        ((value,),) = self.raw_sql(sql)
        assert isinstance(value, int)
        return value

    def raw_sql(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """Run SQL directly on the database (files and PostgreSQL only)."""
        if self.kind in SQLITE_FILES:
            import sqlite3

            assert self.path is not None
            conn = sqlite3.connect(self.path, isolation_level=None)
            try:
                return conn.execute(sql, params).fetchall()
            finally:
                conn.close()
        if self.kind in POSTGRES_KINDS:
            assert self.url is not None
            with psycopg.connect(
                self.url, autocommit=True, options=f"-c search_path={self.schema}"
            ) as conn:
                cursor = conn.execute(sql.replace("?", "%s"), params or None)
                return cursor.fetchall() if cursor.description is not None else []
        raise AssertionError("no raw access to an in-memory database")

    @property
    def secrets(self) -> list[str]:
        """Strings that must never appear in an error, repr or log line."""
        values = [str(self.path)] if self.path else []
        if self.url:
            values.append(self.url)
        return values


def _backend(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if kind in POSTGRES_KINDS:
        url = request.getfixturevalue("postgres_url")
        prefix = request.getfixturevalue("postgres_run_prefix")
        return Backend(kind, path=None, url=url, schema=f"{prefix}_{next(_schema_numbers)}")
    path = tmp_path / "store.sqlite3" if kind in SQLITE_FILES else None
    return Backend(kind, path=path, url=None, schema=None)


@contextlib.asynccontextmanager
async def _closing_opened(backend: Backend) -> AsyncIterator[Backend]:
    """``backend`` for the block; every store opened on it is closed after."""
    try:
        yield backend
    finally:
        for store in backend.opened:
            await store.close()


@pytest.fixture(params=ADAPTERS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """A fresh database of each adapter kind; every store it opened is closed after."""
    async with _closing_opened(_backend(request.param, request, tmp_path)) as result:
        yield result


@pytest.fixture(params=PERSISTENT_ADAPTERS)
async def persistent_backend(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Backend]:
    """Like ``backend`` but only kinds a second connection can reach."""
    async with _closing_opened(_backend(request.param, request, tmp_path)) as result:
        yield result


@pytest.fixture
async def pg(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """A fresh PostgreSQL schema alone (skipped without ``SVC_TEST_POSTGRES_URL``)."""
    async with _closing_opened(_backend("postgres", request, tmp_path)) as result:
        yield result


@pytest.fixture
async def store(backend: Backend) -> AnyStore:
    """A migrated store of each adapter kind."""
    opened = backend.open()
    await opened.migrate()
    return opened
