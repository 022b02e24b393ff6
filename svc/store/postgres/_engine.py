"""The PostgreSQL engine behind ``PostgresStore``: psycopg 3 (sync API) and a psycopg_pool pool.

This module is where psycopg is imported (with ``_writes``, ``_arrays`` and the child's
``run_writer``, which only it and the writer process import); ``PostgresStore`` loads it when it
is constructed, so ``svc.store`` imports without the ``postgres`` extra.

psycopg's async API is asyncio-only, so every call runs the sync API in an ``anyio`` worker
thread; that works under trio and asyncio alike. When the calling task is cancelled
mid-query, the query is cancelled server-side (``cancel_safe``), the transaction rolls back
in the thread, and the connection goes back to the pool healthy before the cancellation
propagates.

The hot writes (``_kinds.Kind``) go through the store's group commit (``_commit``): a batch
runs on one pooled connection in a worker thread (``_Thread``), its advisory locks taken
phase by phase in one sorted statement, so batches never deadlock. With
``writer="process"`` the webhook deliveries and the inbox's writes run in a writer
process on a connection of its own instead (``_child``; this module's ``run_writer`` is the
child's). While the server is out of reach, calls fail at once (see ``_ensure_pool``).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import secrets
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, Literal, TypeVar, TypeVarTuple

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import psycopg
import psycopg.conninfo
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolTimeout

from .. import _child
from .._commit import Batch, Job, OperationCancelled, run_batch
from .._errors import (
    REDACTED_POSTGRES_LOCATION,
    FaultCode,
    PersistenceError,
    PersistenceValidationError,
    fault_messages,
)
from .._kinds import Forms
from .._migrations import run_migrations
from .._session import Row, Session
from . import _writes
from ._arrays import array_casts, packed, placeholders

__all__ = ["APPLICATION_NAME", "PgEngine", "PgSession", "run_writer"]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")
_POOL_NAMES: Final = itertools.count(1)
_MIGRATE_LOCK_NAMESPACE: Final = 0x5C5D
_CANCEL_RETRY_SECONDS: Final = 0.1
_OLD_POOL_CLOSE_SECONDS: Final = 1.0
"""How long closing a replaced pool waits for its background threads."""
_RECONNECT_TIMEOUT_SECONDS: Final = 30.0
"""How long a pool keeps retrying a lost connection in the background (calls probe anyway)."""
_LISTEN_TICK: Final = 1.0
"""Seconds a listening thread waits for a notification before it looks at its stop flag."""
MESSAGES: Final = fault_messages("PostgreSQL")
APPLICATION_NAME: Final = "svc-writer"
"""The writer process's connection's ``application_name`` (in ``pg_stat_activity``), unless the
connection string names one."""


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


class PgSession:
    """``Session`` over one psycopg connection; ``op.check()`` runs before each statement."""

    __slots__ = ("_conn", "_op")
    dialect: Final[Literal["postgres"]] = "postgres"

    def __init__(self, conn: psycopg.Connection[Any], op: _Operation | Batch) -> None:
        self._conn = conn
        self._op = op

    def _execute(self, sql: str, params: Sequence[object]) -> psycopg.Cursor[Any]:
        self._op.check()
        if not any(isinstance(param, list) for param in params):
            return self._conn.execute(placeholders(sql), params or None)
        # Array columns go packed where that is exact (see _arrays), else binary.
        values = list(params)
        forms = [0] * len(values)
        for i, cast in enumerate(array_casts(sql)):
            param = values[i]
            if isinstance(param, list):
                joined = packed(param, cast) if cast is not None else None
                forms[i] = 1 if joined is None else 2
                if joined is not None:
                    values[i] = joined
        return self._conn.execute(placeholders(sql, tuple(forms)), values)

    def run(self, sql: str, params: Sequence[object] = ()) -> int:
        return self._execute(sql, params).rowcount

    def fetchall(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        cursor = self._execute(sql, params)
        return cursor.fetchall() if cursor.description is not None else []

    def fetchone(self, sql: str, params: Sequence[object] = ()) -> Row | None:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else None


_BEGIN_BATCH: Final = (
    # Every batch statement looks rows up by key: a table scan is never the right plan,
    # though a young table's statistics (and a generic plan made while it was small) can
    # make it look cheaper.
    "BEGIN; SET LOCAL enable_seqscan = off; "
)


class PgBatchConnection:
    """The connection as ``_commit.run_batch`` drives it. The statements that need no answer
    (the batch's ``BEGIN``, a savepoint's release) wait and go in one round trip with the
    next savepoint or the ``COMMIT``; a phase's advisory locks are one sorted statement."""

    __slots__ = ("_conn", "_pending", "_sent", "session")
    forms: Final[Forms] = _writes.PostgresForms()
    faults: Final = (psycopg.Error, OperationCancelled)
    locks: Final = True

    def __init__(self, conn: psycopg.Connection[Any], batch: Batch) -> None:
        self._conn = conn
        self.session = PgSession(conn, batch)
        self._pending = ""
        self._sent = False

    def _send(self, sql: str) -> None:
        self._conn.execute(self._pending + sql)
        self._pending = ""
        self._sent = True

    def begin(self, *, write: bool) -> None:
        self._pending = _BEGIN_BATCH

    def savepoint(self, name: str) -> None:
        self._send(f"SAVEPOINT {name}")

    def rollback_to(self, name: str) -> None:
        self._send(f"ROLLBACK TO SAVEPOINT {name}")

    def release(self, name: str) -> None:
        self._pending += f"RELEASE SAVEPOINT {name}; "

    def lock(self, keys: Sequence[str]) -> None:
        _writes.lock_message_ids(self.session, keys)

    def commit(self) -> None:
        if self._sent:
            self._send("COMMIT")


def _run_on(conn: psycopg.Connection[Any], batch: Batch) -> None:
    """Blocking: ``batch`` on ``conn``, its statements cancellable through ``batch.cancel``."""
    batch.interrupt = lambda: _cancel(conn)
    try:
        run_batch(PgBatchConnection(conn, batch), batch)
    finally:
        batch.interrupt = None


def _cancel(conn: psycopg.Connection[Any]) -> None:
    # An error means the statement finished or the connection broke: nothing to stop.
    with contextlib.suppress(psycopg.Error):
        conn.cancel_safe(timeout=2.0)


class _Thread:
    """The engine's runner: a batch on a pooled connection, in a worker thread; a cancelled
    caller's job is withdrawn or has its statement cancelled (``withdraws``)."""

    __slots__ = ("_engine",)
    withdraws: Final = True
    depth: Final = 1

    def __init__(self, engine: PgEngine) -> None:
        self._engine = engine

    async def run(self, batch: Batch) -> None:
        engine = self._engine
        pool = engine._pool
        if engine._unreachable or pool is None:
            # An earlier batch lost the server: the rest fail now, not one timeout each.
            for job in batch.jobs:
                job.error = engine._refuse(job.code)
            return
        try:
            await anyio.to_thread.run_sync(self._in_thread, pool, batch, limiter=engine._limiter)
        except psycopg.Error:
            pass  # every job of the batch keeps its pessimistic error
        finally:
            engine._note(batch)

    @staticmethod
    def _in_thread(pool: ConnectionPool[psycopg.Connection[Any]], batch: Batch) -> None:
        """Blocking: the batch on a pooled connection; on an exception the pool's connection
        context rolls its transaction back before the connection goes back."""
        with _pooled(pool, batch) as conn:
            _run_on(conn, batch)


class PgEngine:
    """The pool, the cancellable thread calls and the group commit of one ``PostgresStore``.

    Options arrive checked, except the connection string, which only psycopg parses; their
    defaults are ``PostgresStore``'s.
    """

    __slots__ = (
        "_closed",
        "_connect_timeout",
        "_dsn",
        "_instance",
        "_kwargs",
        "_limiter",
        "_max_size",
        "_min_size",
        "_open_lock",
        "_pool",
        "_pool_timeout",
        "_reconnect_interval",
        "_retry_at",
        "_schema",
        "_unreachable",
        "writers",
    )

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None,
        min_size: int,
        max_size: int,
        connect_timeout: float,
        pool_timeout: float,
        reconnect_interval: float,
        writer: str,
    ) -> None:
        try:
            options = psycopg.conninfo.conninfo_to_dict(dsn)
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
        self._instance: Final = secrets.token_hex(8)
        # ``schema`` replaces the DSN's own options; the instance setting joins either.
        settings = [f"-c search_path={schema}"] if schema is not None else []
        if schema is None and options.get("options"):
            settings.append(str(options["options"]))
        settings.append(f"-c {_writes.INSTANCE_SETTING}={self._instance}")
        kwargs: dict[str, Any] = {"autocommit": True, "options": " ".join(settings)}
        self._kwargs: Final = kwargs
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._limiter: Final = anyio.CapacityLimiter(max_size)
        self._open_lock: Final = anyio.Lock()
        thread = _Thread(self)
        child = None
        if writer == "process":
            child_kwargs = dict(kwargs)
            if "application_name" not in options:
                child_kwargs["application_name"] = APPLICATION_NAME
            config = (dsn, child_kwargs, self._connect_timeout)
            child = _child.Child(run_writer, config, fallback=thread)
        self.writers: Final = _child.Writers(thread, child, messages=MESSAGES)
        """The group commits of the hot writes (``StoreBase._write``)."""
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
                raise PersistenceError(code, MESSAGES[code]) from None
            raise exc
        return outcome[0]

    async def call(
        self, code: FaultCode, fn: Callable[[Session, *Ts], T], *args: *Ts, write: bool
    ) -> T:
        """``fn(session, *args)`` in a transaction of its own on a pooled connection (not
        group-committed)."""

        def work(conn: psycopg.Connection[Any], op: _Operation) -> T:
            with conn.transaction():
                return fn(PgSession(conn, op), *args)

        return await self._run_in_connection(code, work)

    # --- group commit

    async def writable(self, code: FaultCode) -> None:
        """Before a group-commit write: while the server is out of reach it fails at once, as
        every call does (``_ensure_pool``)."""
        await self._ensure_pool(code)

    def written(self, job: Job[Any]) -> None:
        """After a group-commit write: remember when its batch found the server out of reach."""
        if job.batch is not None:
            self._note_lost(job.batch.lost)

    @property
    def queued(self) -> int:
        """How many group-commit jobs of the thread wait for a batch (tests)."""
        return self.writers.thread.queued

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
        if self.writers.child is not None:
            # Started now, not by the first delivery: the first ones wait for no start.
            await self.writers.child.start()
        return version

    async def watch_inbox(self, on_signal: Callable[[], None]) -> None:
        """Call ``on_signal`` (in the caller's event loop) each time another store's
        transaction adds inbox rows (``LISTEN`` on a connection of its own, in a thread), until
        cancelled; this store's own commits (their payload is its instance) are skipped. A
        lost connection is opened again after ``reconnect_interval``; notifications sent
        meanwhile are missed (the runtime's poll finds their rows)."""
        stop = threading.Event()

        def listen() -> None:
            while not stop.is_set():
                try:
                    with psycopg.connect(
                        self._dsn, connect_timeout=int(self._connect_timeout), **self._kwargs
                    ) as conn:
                        conn.execute(f"LISTEN {_writes.INBOX_CHANNEL}")
                        anyio.from_thread.run_sync(on_signal)  # rows may have come meanwhile
                        while not stop.is_set():
                            for note in conn.notifies(timeout=_LISTEN_TICK, stop_after=1):
                                if note.payload != self._instance:
                                    anyio.from_thread.run_sync(on_signal)
                except psycopg.Error:
                    stop.wait(self._reconnect_interval)

        try:
            await anyio.to_thread.run_sync(listen, abandon_on_cancel=True)
        finally:
            stop.set()

    async def close(self) -> None:
        """Close the writer process (after the batch in flight), then the pool (waiting for
        connections in use); idempotent."""
        self._closed = True
        if self.writers.child is not None:
            await self.writers.child.aclose()
        pool, self._pool = self._pool, None
        if pool is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(pool.close)


# --- the writer process's side (``_child``) ------------------------------------------------


class _ChildConnection:
    """The writer process's connection (made again after a loss) and its batches.

    A batch that finds the server out of reach answers every job with its pessimistic error
    and says so (the engine then refuses calls until its probe reconnects); the next batch
    connects again.
    """

    __slots__ = ("_config", "_conn")

    def __init__(self, config: tuple[str, dict[str, Any], float]) -> None:
        self._config = config
        self._conn: psycopg.Connection[Any] | None = None

    def _connect(self) -> psycopg.Connection[Any] | None:
        if self._conn is not None and not (self._conn.closed or self._conn.broken):
            return self._conn
        self.close()
        dsn, kwargs, connect_timeout = self._config
        try:
            self._conn = psycopg.connect(
                dsn, connect_timeout=max(1, int(connect_timeout)), **kwargs
            )
        except psycopg.Error:
            return None
        return self._conn

    def run(self, batch: Batch) -> bool:
        conn = self._connect()
        if conn is None:
            return True
        try:
            _run_on(conn, batch)
        except psycopg.Error:  # every job keeps its pessimistic error
            if conn.closed or conn.broken:
                return True
            if conn.info.transaction_status != TransactionStatus.IDLE:
                with contextlib.suppress(psycopg.Error):
                    conn.execute("ROLLBACK")
        return False

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


def run_writer(fd: int) -> None:
    """The writer process: run batches until the parent's end closes. It connects at its first
    batch, so a child started while the server restarts still starts: its batches answer
    "lost" until the server is back, and the engine goes on refusing calls until its own
    probe reconnects."""
    _child.serve(fd, _ChildConnection)
