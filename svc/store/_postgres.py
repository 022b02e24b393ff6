"""``PostgresStore``: psycopg 3 (sync API) and a psycopg_pool pool, driven from worker threads.

psycopg's async API is asyncio-only, so every call runs the sync API in an
``anyio`` worker thread; that works under trio and asyncio alike. When the
calling task is cancelled mid-query, the query is cancelled server-side
(``cancel_safe``), the transaction rolls back in the thread, and the
connection goes back to the pool healthy before the cancellation propagates.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import re
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Final, Literal, TypeVar

import anyio
import anyio.to_thread
import psycopg
import psycopg.conninfo
from psycopg_pool import ConnectionPool

from ._base import StoreBase
from ._errors import FaultCode, PersistenceError, PersistenceValidationError
from ._migrations import run_migrations
from ._session import Row, Session

__all__ = ["PostgresStore"]

T = TypeVar("T")
REDACTED_POSTGRES_LOCATION: Final = "[REDACTED_POSTGRES_DATABASE]"
_SCHEMA: Final = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_POOL_NAMES: Final = itertools.count(1)
_MIGRATE_LOCK_NAMESPACE: Final = 0x5C5D
_CANCEL_RETRY_SECONDS: Final = 0.1
_MESSAGES: Final[dict[str, str]] = {
    "migration_failed": "PostgreSQL migration failed.",
    "claim_failed": "PostgreSQL service-request transaction failed.",
    "completion_failed": "PostgreSQL service-request completion failed.",
    "outbox_failed": "PostgreSQL outbox or message transaction failed.",
    "query_failed": "PostgreSQL query failed.",
}


class _RedactPoolLog(logging.Filter):
    """psycopg_pool logs connections and connection errors, which name the server: redact."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                f"<{type(arg).__name__}, details redacted>"
                if isinstance(arg, BaseException | psycopg.Connection)
                else arg
                for arg in record.args
            )
        return True


logging.getLogger("psycopg.pool").addFilter(_RedactPoolLog())


@lru_cache(maxsize=256)
def _placeholders(sql: str) -> str:
    return sql.replace("?", "%s")


class _OperationCancelled(Exception):
    """Raised in the worker thread when the caller was cancelled before a statement."""


class _Operation:
    """What a cancelled caller needs to stop the worker thread's current query."""

    __slots__ = ("_conn", "_lock", "cancelled")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self.cancelled = False

    def attach(self, conn: psycopg.Connection[Any] | None) -> None:
        with self._lock:
            self._conn = conn

    def check(self) -> None:
        if self.cancelled:
            raise _OperationCancelled

    def cancel(self) -> None:
        """Blocking: ask the server to cancel the running statement (runs in a thread)."""
        with self._lock:
            self.cancelled = True
            conn = self._conn
        if conn is not None:
            # An error means the statement finished or the connection broke: nothing to stop.
            with contextlib.suppress(psycopg.Error):
                conn.cancel_safe(timeout=2.0)


class _PgSession:
    __slots__ = ("_conn", "_op")
    dialect: Final[Literal["postgres"]] = "postgres"

    def __init__(self, conn: psycopg.Connection[Any], op: _Operation) -> None:
        self._conn = conn
        self._op = op

    def _execute(self, sql: str, params: Sequence[object]) -> psycopg.Cursor[Any]:
        self._op.check()
        return self._conn.execute(_placeholders(sql), params or None)

    def run(self, sql: str, params: Sequence[object] = ()) -> int:
        return self._execute(sql, params).rowcount

    def fetchall(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        cursor = self._execute(sql, params)
        return cursor.fetchall() if cursor.description is not None else []

    def fetchone(self, sql: str, params: Sequence[object] = ()) -> Row | None:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else None


class PostgresStore(StoreBase):
    """The shared store for several service instances on one PostgreSQL database.

    ``schema`` (a lower-case identifier) sets ``search_path`` on every pooled
    connection, so several deployments or test runs can share one database.
    """

    _redacted_location = REDACTED_POSTGRES_LOCATION

    __slots__ = (
        "_closed",
        "_connect_timeout",
        "_dsn",
        "_kwargs",
        "_limiter",
        "_max_size",
        "_min_size",
        "_open_lock",
        "_pool",
        "_schema",
    )

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        min_size: int = 1,
        max_size: int = 10,
        connect_timeout: float = 10.0,
    ) -> None:
        if not isinstance(dsn, str) or not dsn.strip():
            raise PersistenceValidationError("invalid_options", "dsn must be a non-empty string.")
        try:
            psycopg.conninfo.conninfo_to_dict(dsn)
        except psycopg.Error:
            raise PersistenceValidationError(
                "invalid_options", "The PostgreSQL connection string is malformed."
            ) from None
        if schema is not None and (not isinstance(schema, str) or not _SCHEMA.match(schema)):
            raise PersistenceValidationError(
                "invalid_options", "schema must match ^[a-z_][a-z0-9_]{0,62}$."
            )
        if not (isinstance(min_size, int) and isinstance(max_size, int) and min_size >= 0):
            raise PersistenceValidationError("invalid_options", "Pool sizes must be integers.")
        if max_size < max(min_size, 1):
            raise PersistenceValidationError(
                "invalid_options", "max_size must be at least 1 and at least min_size."
            )
        self._dsn: Final = dsn
        self._schema: Final = schema
        self._min_size: Final = min_size
        self._max_size: Final = max_size
        self._connect_timeout: Final = float(connect_timeout)
        kwargs: dict[str, Any] = {"autocommit": True}
        if schema is not None:
            kwargs["options"] = f"-c search_path={schema}"
        self._kwargs: Final = kwargs
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._limiter: Final = anyio.CapacityLimiter(max_size)
        self._open_lock: Final = anyio.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"PostgresStore(location={REDACTED_POSTGRES_LOCATION!r}, schema={self._schema!r})"

    @property
    def backend(self) -> str:
        """Always ``"postgres"``."""
        return "postgres"

    @property
    def schema(self) -> str | None:
        """The schema on ``search_path``, or None for the server default."""
        return self._schema

    # --- pool lifecycle

    def _open_pool(self) -> ConnectionPool[psycopg.Connection[Any]]:
        """Blocking: probe one connection (fails fast when unreachable), then open the pool."""
        probe = psycopg.connect(
            self._dsn, connect_timeout=max(1, int(self._connect_timeout)), **self._kwargs
        )
        probe.close()
        pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            self._dsn,
            min_size=self._min_size,
            max_size=self._max_size,
            kwargs=self._kwargs,
            open=False,
            name=f"svc-store-{next(_POOL_NAMES)}",
            timeout=self._connect_timeout,
        )
        try:
            pool.open(wait=self._min_size > 0, timeout=self._connect_timeout)
        except BaseException:
            pool.close()
            raise
        return pool

    async def _ensure_pool(self, code: FaultCode) -> ConnectionPool[psycopg.Connection[Any]]:
        if self._closed:
            raise PersistenceError("store_closed", "The store is closed.")
        if self._pool is not None:
            return self._pool
        async with self._open_lock:
            if self._pool is None:
                try:
                    with anyio.CancelScope(shield=True):
                        pool = await anyio.to_thread.run_sync(self._open_pool)
                except psycopg.Error:
                    raise PersistenceError(code, "PostgreSQL connection failed.") from None
                if self._closed:
                    await anyio.to_thread.run_sync(pool.close)
                    raise PersistenceError("store_closed", "The store is closed.")
                self._pool = pool
            return self._pool

    # --- the cancellable thread call

    async def _run_in_connection(
        self, code: FaultCode, work: Callable[[psycopg.Connection[Any], _Operation], T]
    ) -> T:
        pool = await self._ensure_pool(code)
        op = _Operation()

        def in_thread() -> T:
            with pool.connection() as conn:
                op.attach(conn)
                try:
                    return work(conn, op)
                finally:
                    op.attach(None)

        outcome: list[T] = []
        failure: list[Exception] = []
        done = anyio.Event()

        async def run_thread() -> None:
            # Shielded: the thread always finishes (or is cancelled server-side below)
            # before this call returns, so the connection is back in the pool.
            with anyio.CancelScope(shield=True):
                try:
                    outcome.append(await anyio.to_thread.run_sync(in_thread, limiter=self._limiter))
                except Exception as exc:  # noqa: BLE001 -- re-raised after the thread is done
                    failure.append(exc)
                finally:
                    done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run_thread)
            try:
                await done.wait()
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    while not done.is_set():
                        await anyio.to_thread.run_sync(op.cancel)
                        with anyio.move_on_after(_CANCEL_RETRY_SECONDS):
                            await done.wait()
                raise
        if failure:
            exc = failure[0]
            if isinstance(exc, PersistenceError):
                raise exc
            if isinstance(exc, psycopg.Error | _OperationCancelled):
                raise PersistenceError(code, _MESSAGES[code]) from None
            raise exc
        return outcome[0]

    async def _call(self, code: FaultCode, fn: Callable[[Session], T], *, write: bool) -> T:
        def work(conn: psycopg.Connection[Any], op: _Operation) -> T:
            with conn.transaction():
                return fn(_PgSession(conn, op))

        return await self._run_in_connection(code, work)

    async def _sleep_in_query(
        self, seconds: float, *, on_start: Callable[[], None] | None = None
    ) -> None:
        """Test seam: ``SELECT pg_sleep(seconds)`` through the normal cancellable path.

        ``on_start`` runs in the worker thread just before the statement is sent.
        """

        def fn(session: Session) -> None:
            if on_start is not None:
                on_start()
            session.fetchone("SELECT pg_sleep(?)", (seconds,))

        await self._call("query_failed", fn, write=False)

    # --- contract methods that are not plain transactions

    async def migrate(self, *, target_version: int | None = None) -> int:
        """Create the schema if needed and apply pending migrations; return the version."""
        bootstrap: list[str] = [
            # Serialises concurrent bootstraps of one schema (CREATE ... IF NOT EXISTS races).
            f"SELECT pg_advisory_xact_lock({_MIGRATE_LOCK_NAMESPACE},"
            " hashtext(current_setting('search_path')))"
        ]
        if self._schema is not None:
            bootstrap.append(f'CREATE SCHEMA IF NOT EXISTS "{self._schema}"')

        def work(conn: psycopg.Connection[Any], op: _Operation) -> int:
            def transact(fn: Callable[[Session], T]) -> T:
                with conn.transaction():
                    return fn(_PgSession(conn, op))

            return run_migrations(
                transact, "postgres", target_version=target_version, bootstrap=tuple(bootstrap)
            )

        return await self._run_in_connection("migration_failed", work)

    async def close(self) -> None:
        """Close the pool (waiting for connections in use); idempotent."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(pool.close)
