"""The PostgreSQL engine behind ``PostgresStore``: psycopg 3 (sync API) and a psycopg_pool pool.

This module (with ``_pg_batch`` and ``_pg_writer``, which only it imports) is where psycopg
is imported; ``PostgresStore`` loads it when it is constructed, so ``svc.store`` imports
without the ``postgres`` extra.

psycopg's async API is asyncio-only, so every call runs the sync API in an
``anyio`` worker thread; that works under trio and asyncio alike. When the
calling task is cancelled mid-query, the query is cancelled server-side
(``cancel_safe``), the transaction rolls back in the thread, and the
connection goes back to the pool healthy before the cancellation propagates.

The hot writes (messages, status events, webhook events, whole webhook
deliveries, claims, completions) are group-committed: calls that queue up while
a batch runs share the next transaction. Their locks are taken in one global
order (advisory locks, then claims, then webhook events, each sorted by key),
most calls of a kind run as one set-based statement, and everything else (and a
set-based statement that fails) runs call by call, each under its own
savepoint, so a failing call fails alone. A caller hears of success only after
COMMIT. The batches' synchronous side is ``_pg_batch``; with ``writer="process"`` the
webhook deliveries and handled marks run in a writer process instead (``_pg_writer``).

While the server is out of reach, calls fail at once (see ``_ensure_pool``).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, Final, TypeVar, cast

import anyio
import anyio.lowlevel
import anyio.to_thread
import psycopg
import psycopg.conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from ._batch import BatchHint
from ._errors import (
    REDACTED_POSTGRES_LOCATION,
    FaultCode,
    PersistenceError,
    PersistenceValidationError,
)
from ._migrations import run_migrations
from ._pg_batch import Batch, Job, OperationCancelled, PgSession, State, run_batch
from ._pg_writer import pg_writer
from ._session import Session
from ._writer import WRITER_KINDS, WriterProcess, WriterUnavailable, started

__all__ = ["PgEngine"]

T = TypeVar("T")
_POOL_NAMES: Final = itertools.count(1)
_MIGRATE_LOCK_NAMESPACE: Final = 0x5C5D
_CANCEL_RETRY_SECONDS: Final = 0.1
_OLD_POOL_CLOSE_SECONDS: Final = 1.0
"""How long closing a replaced pool waits for its background threads."""
_RECONNECT_TIMEOUT_SECONDS: Final = 30.0
"""How long a pool keeps retrying a lost connection in the background (calls probe anyway)."""
_MESSAGES: Final[dict[str, str]] = {
    "migration_failed": "PostgreSQL migration failed.",
    "claim_failed": "PostgreSQL service-request transaction failed.",
    "completion_failed": "PostgreSQL service-request completion failed.",
    "outbox_failed": "PostgreSQL outbox or message transaction failed.",
    "query_failed": "PostgreSQL query failed.",
}


def _connect_failure(exc: psycopg.Error) -> str:
    """Which way a connection attempt failed, in a fixed sentence (libpq's text names the server).

    libpq reports connection failures as text without an SQLSTATE, so its wording is matched.
    """
    text = str(exc)
    if "FATAL" not in text:
        return (
            "PostgreSQL connection failed: the server cannot be reached"
            " (is it running, are host and port right?)."
        )
    if "database" in text and "does not exist" in text:
        return "PostgreSQL connection failed: the database does not exist (create it first)."
    if "role" in text or "authentication" in text or "password" in text:
        return "PostgreSQL connection failed: the server refused the user or password."
    return "PostgreSQL connection failed: the server refused the connection."


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


class _Operation:
    """What a cancelled caller needs to stop the worker thread's current query."""

    __slots__ = ("_conn", "_lock", "cancelled", "lost")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self.cancelled = False
        self.lost = False  # the server could not be reached (see _pooled)

    def attach(self, conn: psycopg.Connection[Any] | None) -> None:
        with self._lock:
            self._conn = conn

    def check(self) -> None:
        if self.cancelled:
            raise OperationCancelled

    def cancel(self) -> None:
        """Blocking: ask the server to cancel the running statement (runs in a thread)."""
        with self._lock:
            self.cancelled = True
            conn = self._conn
        if conn is not None:
            # An error means the statement finished or the connection broke: nothing to stop.
            with contextlib.suppress(psycopg.Error):
                conn.cancel_safe(timeout=2.0)


_MAX_BATCH: Final = 256
_MAX_DRAINERS: Final = 1
"""How many group-commit batches of one store may run at once (each on its own connection)."""


@contextlib.contextmanager
def _pooled(
    pool: ConnectionPool[psycopg.Connection[Any]], marker: _Operation | Batch
) -> Iterator[psycopg.Connection[Any]]:
    """Blocking: a pooled connection; flags ``marker.lost`` when the server is out of reach.

    Out of reach means no pooled connection came within the pool timeout, or the
    connection broke under the work (server gone, network cut). A query error on
    a healthy connection (constraint, cancel, deadlock) is not a loss.
    """
    try:
        with pool.connection() as conn:
            try:
                yield conn
            except psycopg.Error:
                if conn.broken or conn.closed:
                    marker.lost = True
                raise
    except PoolTimeout:
        marker.lost = True
        raise


class PgEngine:
    """The pool, the cancellable thread calls and the group commit of one ``PostgresStore``.

    Options arrive checked, except the connection string, which only psycopg parses.
    """

    __slots__ = (
        "_closed",
        "_connect_timeout",
        "_drainers",
        "_dsn",
        "_kwargs",
        "_limiter",
        "_max_size",
        "_min_size",
        "_open_lock",
        "_pool",
        "_pool_timeout",
        "_queue",
        "_reconnect_interval",
        "_retry_at",
        "_schema",
        "_unreachable",
        "_writer",
    )

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        min_size: int = 1,
        max_size: int = 10,
        connect_timeout: float = 10.0,
        pool_timeout: float = 2.0,
        reconnect_interval: float = 0.5,
        writer: str = "thread",
    ) -> None:
        try:
            psycopg.conninfo.conninfo_to_dict(dsn)
        except psycopg.Error:
            raise PersistenceValidationError(
                "invalid_options", "The PostgreSQL connection string is malformed."
            ) from None
        self._dsn: Final = dsn
        self._schema: Final = schema
        self._min_size: Final = min_size
        self._max_size: Final = max_size
        self._connect_timeout: Final = float(connect_timeout)
        self._pool_timeout: Final = float(pool_timeout)
        self._reconnect_interval: Final = float(reconnect_interval)
        kwargs: dict[str, Any] = {"autocommit": True}
        if schema is not None:
            kwargs["options"] = f"-c search_path={schema}"
        self._kwargs: Final = kwargs
        self._writer: WriterProcess | None = (
            pg_writer(dsn, kwargs=kwargs, connect_timeout=self._connect_timeout)
            if writer == "process"
            else None
        )
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._limiter: Final = anyio.CapacityLimiter(max_size)
        self._open_lock: Final = anyio.Lock()
        self._queue: list[Job[Any]] = []
        self._drainers = 0
        self._closed = False
        self._unreachable = False  # a call found the server out of reach; probe before use
        self._retry_at = 0.0  # while unreachable, no connection attempt before this time

    def __repr__(self) -> str:
        return f"PgEngine(location={REDACTED_POSTGRES_LOCATION!r}, schema={self._schema!r})"

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
            timeout=self._pool_timeout,
            reconnect_timeout=_RECONNECT_TIMEOUT_SECONDS,
        )
        try:
            pool.open(wait=self._min_size > 0, timeout=self._connect_timeout)
        except BaseException:
            pool.close()
            raise
        return pool

    def _refuse(self, code: FaultCode) -> PersistenceError:
        return PersistenceError(code, "PostgreSQL is unreachable; a recent connection failed.")

    async def _ensure_pool(self, code: FaultCode) -> ConnectionPool[psycopg.Connection[Any]]:
        """The pool to use; while the server is out of reach, fail at once or probe it.

        After a call found the server out of reach, calls fail immediately except
        one connection attempt per ``reconnect_interval`` (others fail while it
        runs); when an attempt succeeds, a fresh pool replaces the old one, so
        recovery never waits for the old pool's reconnect backoff.
        """
        if self._closed:
            raise PersistenceError("store_closed", "The store is closed.")
        pool = self._pool
        if pool is not None and not self._unreachable:
            return pool
        if self._unreachable and (
            self._open_lock.locked() or anyio.current_time() < self._retry_at
        ):
            raise self._refuse(code)
        async with self._open_lock:
            if self._pool is not None and not self._unreachable:
                return self._pool
            if self._unreachable and anyio.current_time() < self._retry_at:
                raise self._refuse(code)
            try:
                with anyio.CancelScope(shield=True):
                    fresh = await anyio.to_thread.run_sync(self._open_pool)
            except psycopg.Error as exc:
                self._unreachable = True
                self._retry_at = anyio.current_time() + self._reconnect_interval
                raise PersistenceError(code, _connect_failure(exc)) from None
            old, self._pool, self._unreachable = self._pool, fresh, False
            with anyio.CancelScope(shield=True):
                if old is not None:
                    # Its connections in use are closed as they come back.
                    await anyio.to_thread.run_sync(old.close, _OLD_POOL_CLOSE_SECONDS)
                if self._closed:
                    await anyio.to_thread.run_sync(fresh.close)
                    raise PersistenceError("store_closed", "The store is closed.")
            return fresh

    def _note(self, marker: _Operation | Batch) -> None:
        """After a thread call: remember when it found the server out of reach."""
        self._note_lost(marker.lost)

    def _note_lost(self, lost: bool) -> None:
        if lost and not self._unreachable:
            self._unreachable = True
            self._retry_at = anyio.current_time()  # the next call probes at once

    # --- the cancellable thread call

    async def _run_in_connection(
        self, code: FaultCode, work: Callable[[psycopg.Connection[Any], _Operation], T]
    ) -> T:
        pool = await self._ensure_pool(code)
        op = _Operation()

        def in_thread() -> T:
            with _pooled(pool, op) as conn:
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
                    self._note(op)
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
            if isinstance(exc, psycopg.Error | OperationCancelled):
                raise PersistenceError(code, _MESSAGES[code]) from None
            raise exc
        return outcome[0]

    async def call(
        self,
        code: FaultCode,
        fn: Callable[[Session], T],
        *,
        write: bool,
        batch: BatchHint | None = None,
    ) -> T:
        if write and batch is not None:
            return await self._call_batched(code, fn, batch)

        def work(conn: psycopg.Connection[Any], op: _Operation) -> T:
            with conn.transaction():
                return fn(PgSession(conn, op))

        return await self._run_in_connection(code, work)

    # --- group commit

    async def _call_batched(
        self, code: FaultCode, fn: Callable[[Session], T], hint: BatchHint
    ) -> T:
        """Queue the call; up to ``_MAX_DRAINERS`` waiting callers run the queue in batches.

        With a writer process, deliveries and handled marks go to it instead (its batches
        run on its own connection); while the server is out of reach they fail at once,
        as every call does (``_ensure_pool``).
        """
        pool = await self._ensure_pool(code)
        if self._writer is not None and hint.kind in WRITER_KINDS:
            try:
                ok, result, error = await self._writer.run(hint)
            except WriterUnavailable:
                self._writer = None  # the thread runs them, now and from now on
            else:
                self._note_lost(self._writer.take_server_lost())
                if not ok:
                    raise error or PersistenceError(code, _MESSAGES[code])
                return cast(T, result)
        job: Job[T] = Job(fn=fn, hint=hint, code=code)
        self._queue.append(job)
        if self._drainers < _MAX_DRAINERS:
            self._drainers += 1
            job.holds_slot = True
        else:
            job.wake = anyio.Event()
            try:
                await job.wake.wait()
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self._abandon(job)
                raise
        if job.holds_slot:
            await self._drain(pool, job)
        if not job.ok:
            raise job.error or PersistenceError(code, _MESSAGES[code])
        return job.result  # type: ignore[return-value]

    def _release_slot(self, job: Job[Any]) -> None:
        """Give back ``job``'s drainer slot and hand it to the first queued job."""
        if not job.holds_slot:
            return
        job.holds_slot = False
        self._drainers -= 1
        for queued in self._queue:
            if self._drainers >= _MAX_DRAINERS:
                break
            if not queued.holds_slot:
                queued.holds_slot = True
                self._drainers += 1
                if queued.wake is not None:
                    queued.wake.set()

    async def _drain(self, pool: ConnectionPool[psycopg.Connection[Any]], own: Job[Any]) -> None:
        """Run batches from the head of the queue until ``own`` is in one, then wait for it."""
        try:
            while own.state is State.QUEUED:
                jobs = self._queue[:_MAX_BATCH]
                del self._queue[:_MAX_BATCH]
                if self._unreachable:
                    # An earlier batch lost the server: the rest fail now, not one timeout each.
                    for job in jobs:
                        job.error = self._refuse(job.code)
                        job.settle()
                    continue
                batch = Batch(anyio.Event())
                for job in jobs:
                    job.state, job.batch = State.TAKEN, batch
                current = self._pool if self._pool is not None else pool
                await self._run_batch(current, batch, jobs, own)
        finally:
            self._release_slot(own)
        if not own.done and own.batch is not None:
            try:
                await own.batch.finished.wait()
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self._abandon(own)
                raise

    async def _run_batch(
        self,
        pool: ConnectionPool[psycopg.Connection[Any]],
        batch: Batch,
        jobs: list[Job[Any]],
        own: Job[Any],
    ) -> None:
        """Run one batch in a worker thread (shielded: the others depend on it)."""
        finished = batch.finished
        failure: list[Exception] = []

        async def run_thread() -> None:
            with anyio.CancelScope(shield=True):
                try:
                    await anyio.to_thread.run_sync(
                        self._batch_in_thread, pool, batch, jobs, limiter=self._limiter
                    )
                except psycopg.Error:
                    pass  # every job of the batch keeps its pessimistic error
                except Exception as exc:  # noqa: BLE001 -- re-raised after the jobs are settled
                    failure.append(exc)
                finally:
                    self._note(batch)
                    for job in jobs:
                        job.settle()
                    finished.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run_thread)
            try:
                await finished.wait()
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self._abandon(own, draining=True)
                    await finished.wait()
                raise
        if failure:
            raise failure[0]

    async def _abandon(self, job: Job[Any], *, draining: bool = False) -> None:
        """The caller of ``job`` was cancelled: withdraw or cancel it, as far as still possible.

        Queued or not yet started: it never runs. Running: its statement is
        cancelled server-side (repeated until it stops) and only its savepoint
        rolls back. Executed: it waits for the batch's COMMIT, like a thread call
        that already finished. A draining caller keeps its slot until its batch ends.
        """
        if job.state is State.QUEUED:
            self._queue.remove(job)
            job.state = State.SETTLED
            if not draining:
                self._release_slot(job)
            return
        batch = job.batch
        while batch is not None and not job.done:
            state = await anyio.to_thread.run_sync(batch.cancel, job)
            if state in (State.TAKEN, State.SETTLED):
                return
            if state is State.EXECUTED:
                await batch.finished.wait()
                return
            with anyio.move_on_after(_CANCEL_RETRY_SECONDS):
                await batch.finished.wait()

    def _batch_in_thread(
        self,
        pool: ConnectionPool[psycopg.Connection[Any]],
        batch: Batch,
        jobs: list[Job[Any]],
    ) -> None:
        """Blocking: the batch on a pooled connection (``run_batch``); on an exception the
        pool's connection context rolls its transaction back before the connection goes back."""
        with _pooled(pool, batch) as conn:
            run_batch(conn, batch, jobs)

    async def sleep_in_query(
        self, seconds: float, *, on_start: Callable[[], None] | None = None
    ) -> None:
        """Test seam: ``SELECT pg_sleep(seconds)`` through the normal cancellable path.

        ``on_start`` runs in the worker thread just before the statement is sent.
        """

        def fn(session: Session) -> None:
            if on_start is not None:
                on_start()
            session.fetchone("SELECT pg_sleep(?)", (seconds,))

        await self.call("query_failed", fn, write=False)

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
                    return fn(PgSession(conn, op))

            return run_migrations(
                transact, "postgres", target_version=target_version, bootstrap=tuple(bootstrap)
            )

        version = await self._run_in_connection("migration_failed", work)
        # Started now, not by the first delivery: the first ones wait for no start.
        self._writer = await started(self._writer)
        return version

    async def close(self) -> None:
        """Close the writer process after the jobs in flight, then the pool (waiting for
        connections in use); idempotent."""
        self._closed = True
        if self._writer is not None:
            await self._writer.aclose()
        pool, self._pool = self._pool, None
        if pool is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(pool.close)
