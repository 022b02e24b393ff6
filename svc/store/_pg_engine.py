"""The PostgreSQL engine behind ``PostgresStore``: psycopg 3 (sync API) and a psycopg_pool pool.

This is the only module that imports psycopg; ``PostgresStore`` loads it when it
is constructed, so ``svc.store`` imports without the ``postgres`` extra.

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
COMMIT.

While the server is out of reach, calls fail at once (see ``_ensure_pool``).
"""

from __future__ import annotations

import contextlib
import enum
import itertools
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, Generic, Literal, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread
import psycopg
import psycopg.conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from . import _batch
from ._batch import DEFER, BatchHint, BatchKind
from ._errors import (
    REDACTED_POSTGRES_LOCATION,
    FaultCode,
    PersistenceError,
    PersistenceValidationError,
)
from ._migrations import run_migrations
from ._pg_arrays import array_casts, packed, placeholders
from ._session import Row, Session

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


class _OperationCancelled(Exception):
    """Raised in the worker thread when the caller was cancelled before a statement."""


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


_MAX_BATCH: Final = 256
_MAX_DRAINERS: Final = 1
"""How many group-commit batches of one store may run at once (each on its own connection)."""
_PHASES: Final[tuple[tuple[BatchKind, ...], ...]] = (
    ("message", "status", "delivery"),
    ("claim", "complete"),
    ("event",),
    ("handled",),
    ("pause",),
)
"""Batch order: every batch takes its locks in this order, so batches never deadlock.

Marks of handled updates go last (SQLite runs them first): a mark holds its update keys'
rows until COMMIT, and a copy of that update in another instance's batch waits on it while
holding its own batch's locks, so marks first made two instances deadlock on each other's
copies. A copy in the same batch as the mark of its update is answered in progress."""
_SET_BASED: Final[dict[BatchKind, Callable[[Session, list[tuple[object, ...]]], list[object]]]] = {
    "message": _batch.record_messages,
    "status": _batch.append_message_statuses,
    "claim": _batch.claim_service_requests,
    "complete": _batch.complete_service_requests,
    "event": _batch.record_webhook_events,
    "delivery": _batch.record_webhook_deliveries,
    "handled": _batch.mark_webhook_updates_handled,
    "pause": _batch.pause_broadcasts_for_templates,
}


class _State(enum.Enum):
    QUEUED = "queued"  # in the store's queue
    TAKEN = "taken"  # in a batch, not started
    RUNNING = "running"  # its statement is on the connection now
    EXECUTED = "executed"  # done inside the open transaction, waiting for COMMIT
    SETTLED = "settled"  # finished, failed or skipped


class _Job(Generic[T]):
    """One queued call of the group commit; it counts as failed until its batch has committed."""

    __slots__ = (
        "batch",
        "cancelled",
        "code",
        "done",
        "error",
        "fn",
        "hint",
        "holds_slot",
        "ok",
        "result",
        "state",
        "wake",
    )

    def __init__(self, *, fn: Callable[[Session], T], hint: BatchHint, code: FaultCode) -> None:
        self.fn = fn
        self.hint = hint
        self.code: FaultCode = code
        self.state = _State.QUEUED
        self.cancelled = False
        self.holds_slot = False
        self.batch: _Batch | None = None
        self.done = False  # settled: its batch ended (committed or not), or it never ran
        # Made only by a caller that waits in the queue (not by a draining one): set once
        # the job is done, or promoted to drain the queue.
        self.wake: anyio.Event | None = None
        self.result: T | None = None
        self.ok = False  # set only once COMMIT has succeeded
        self.error: Exception | None = None  # the call's own non-driver exception

    def settle(self) -> None:
        """Mark the job done and wake its caller if it waits in the queue."""
        self.state, self.done = _State.SETTLED, True
        if self.wake is not None:
            self.wake.set()


class _Batch:
    """The jobs of one transaction; the lock orders their state changes against cancels.

    ``finished`` is set once the batch has ended and every job of it is done: the
    one event its callers wait on for the COMMIT.
    """

    __slots__ = ("_conn", "_current", "_lock", "finished", "lost")

    def __init__(self) -> None:
        self.finished = anyio.Event()
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._current: list[_Job[Any]] = []
        self.lost = False  # the server could not be reached (see _pooled)

    def attach(self, conn: psycopg.Connection[Any] | None) -> None:
        with self._lock:
            self._conn = conn

    def begin(self, jobs: list[_Job[Any]]) -> list[_Job[Any]]:
        """Mark the jobs not cancelled as running (and return them); skip the others."""
        with self._lock:
            live = []
            for job in jobs:
                if job.cancelled:
                    job.state = _State.SETTLED
                else:
                    job.state = _State.RUNNING
                    live.append(job)
            self._current = live
            return live

    def end(self, state: _State, jobs: list[_Job[Any]]) -> None:
        with self._lock:
            for job in jobs:
                job.state = _State.SETTLED if job.cancelled and state is _State.TAKEN else state
            self._current = []

    def check(self) -> None:
        """Refuse the next statement when a caller it serves was cancelled."""
        if any(job.cancelled for job in self._current):
            raise _OperationCancelled

    def cancel(self, job: _Job[Any]) -> _State:
        """Blocking: flag ``job``; if its statement runs, cancel it server-side (lock held)."""
        with self._lock:
            job.cancelled = True
            if job.state is _State.RUNNING and self._conn is not None:
                with contextlib.suppress(psycopg.Error):
                    self._conn.cancel_safe(timeout=2.0)
            return job.state


@contextlib.contextmanager
def _pooled(
    pool: ConnectionPool[psycopg.Connection[Any]], marker: _Operation | _Batch
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


class _PgSession:
    __slots__ = ("_conn", "_op")
    dialect: Final[Literal["postgres"]] = "postgres"

    def __init__(self, conn: psycopg.Connection[Any], op: _Operation | _Batch) -> None:
        self._conn = conn
        self._op = op

    def _execute(self, sql: str, params: Sequence[object]) -> psycopg.Cursor[Any]:
        self._op.check()
        if not any(isinstance(param, list) for param in params):
            return self._conn.execute(placeholders(sql), params or None)
        # Array columns go packed where that is exact (see _pg_arrays), else binary.
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
_NEXT_PHASE: Final = "RELEASE SAVEPOINT svc_group; "


def _run_phase(
    conn: psycopg.Connection[Any],
    session: _PgSession,
    batch: _Batch,
    phase: list[_Job[Any]],
    opening: str,
) -> list[tuple[_Job[Any], object]]:
    """Blocking: one phase of a batch (jobs sorted by key) inside the transaction.

    ``opening`` (parameterless statements: the batch's BEGIN, or the release of the
    previous phase's savepoint) goes in one round trip with this phase's savepoint.
    The set-based forms run together under that savepoint; when that fails (or a
    caller it serves is cancelled), it rolls back and every job runs alone. The
    savepoint is left open: the next phase's opening or the COMMIT releases it.
    """
    outcomes: list[tuple[_Job[Any], object]] = []
    alone = [job for job in phase if job.hint.kind not in _SET_BASED]
    locks = sorted(
        {job.hint.key for job in phase if job.hint.kind in ("message", "status")}
        | {key for job in phase for key in job.hint.locks}
    )
    # Savepoints are set before jobs count as running: a cancel only ever hits their work.
    conn.execute(opening + "SAVEPOINT svc_group")
    grouped = batch.begin([job for job in phase if job.hint.kind in _SET_BASED])
    try:
        if locks:
            _batch.lock_message_ids(session, locks)
        answers: list[tuple[_Job[Any], object]] = []
        for kind in dict.fromkeys(job.hint.kind for job in grouped):
            of_kind = [job for job in grouped if job.hint.kind == kind]
            results = _SET_BASED[kind](session, [job.hint.args for job in of_kind])
            answers += zip(of_kind, results, strict=True)
    except (psycopg.Error, _OperationCancelled):
        batch.end(_State.TAKEN, grouped)
        conn.execute("ROLLBACK TO SAVEPOINT svc_group")
        alone = phase
    else:
        done = [(job, result) for job, result in answers if result is not DEFER]
        deferred = [job for job, result in answers if result is DEFER]
        batch.end(_State.EXECUTED, [job for job, _ in done])
        batch.end(_State.TAKEN, deferred)
        outcomes += done
        alone = sorted(alone + deferred, key=lambda job: job.hint.key)
    for job in alone:
        if job.state is not _State.TAKEN or job.cancelled:
            continue
        conn.execute("SAVEPOINT svc_job")
        if not batch.begin([job]):
            conn.execute("RELEASE SAVEPOINT svc_job")
            continue
        try:
            result = job.fn(session)
        except (psycopg.Error, _OperationCancelled):
            failed = True
        except Exception as exc:  # noqa: BLE001 -- handed back to the job's caller
            job.error, failed = exc, True
        else:
            failed = False
        batch.end(_State.SETTLED if failed else _State.EXECUTED, [job])
        if failed:
            conn.execute("ROLLBACK TO SAVEPOINT svc_job")
        else:
            outcomes.append((job, result))
        conn.execute("RELEASE SAVEPOINT svc_job")
    return outcomes


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
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._limiter: Final = anyio.CapacityLimiter(max_size)
        self._open_lock: Final = anyio.Lock()
        self._queue: list[_Job[Any]] = []
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

    def _note(self, marker: _Operation | _Batch) -> None:
        """After a thread call: remember when it found the server out of reach."""
        if marker.lost and not self._unreachable:
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
            if isinstance(exc, psycopg.Error | _OperationCancelled):
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
                return fn(_PgSession(conn, op))

        return await self._run_in_connection(code, work)

    # --- group commit

    async def _call_batched(
        self, code: FaultCode, fn: Callable[[Session], T], hint: BatchHint
    ) -> T:
        """Queue the call; up to ``_MAX_DRAINERS`` waiting callers run the queue in batches."""
        pool = await self._ensure_pool(code)
        job: _Job[T] = _Job(fn=fn, hint=hint, code=code)
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

    def _release_slot(self, job: _Job[Any]) -> None:
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

    async def _drain(self, pool: ConnectionPool[psycopg.Connection[Any]], own: _Job[Any]) -> None:
        """Run batches from the head of the queue until ``own`` is in one, then wait for it."""
        try:
            while own.state is _State.QUEUED:
                jobs = self._queue[:_MAX_BATCH]
                del self._queue[:_MAX_BATCH]
                if self._unreachable:
                    # An earlier batch lost the server: the rest fail now, not one timeout each.
                    for job in jobs:
                        job.error = self._refuse(job.code)
                        job.settle()
                    continue
                batch = _Batch()
                for job in jobs:
                    job.state, job.batch = _State.TAKEN, batch
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
        batch: _Batch,
        jobs: list[_Job[Any]],
        own: _Job[Any],
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

    async def _abandon(self, job: _Job[Any], *, draining: bool = False) -> None:
        """The caller of ``job`` was cancelled: withdraw or cancel it, as far as still possible.

        Queued or not yet started: it never runs. Running: its statement is
        cancelled server-side (repeated until it stops) and only its savepoint
        rolls back. Executed: it waits for the batch's COMMIT, like a thread call
        that already finished. A draining caller keeps its slot until its batch ends.
        """
        if job.state is _State.QUEUED:
            self._queue.remove(job)
            job.state = _State.SETTLED
            if not draining:
                self._release_slot(job)
            return
        batch = job.batch
        while batch is not None and not job.done:
            state = await anyio.to_thread.run_sync(batch.cancel, job)
            if state in (_State.TAKEN, _State.SETTLED):
                return
            if state is _State.EXECUTED:
                await batch.finished.wait()
                return
            with anyio.move_on_after(_CANCEL_RETRY_SECONDS):
                await batch.finished.wait()

    def _batch_in_thread(
        self,
        pool: ConnectionPool[psycopg.Connection[Any]],
        batch: _Batch,
        jobs: list[_Job[Any]],
    ) -> None:
        """Blocking: one transaction for the whole batch; results count only after COMMIT.

        The transaction is opened and committed by hand (not ``conn.transaction()``), so
        its BEGIN shares a round trip with the first phase's savepoint; on an exception the
        pool's connection context rolls it back before the connection goes back.
        """
        outcomes: list[tuple[_Job[Any], object]] = []
        with _pooled(pool, batch) as conn:
            batch.attach(conn)
            try:
                session = _PgSession(conn, batch)
                opening = _BEGIN_BATCH
                for kinds in _PHASES:
                    phase = sorted(
                        (job for job in jobs if job.hint.kind in kinds),
                        key=lambda job: job.hint.key,
                    )
                    if phase:
                        outcomes += _run_phase(conn, session, batch, phase, opening)
                        opening = _NEXT_PHASE
                if opening is _NEXT_PHASE:
                    conn.execute("COMMIT")
            finally:
                batch.attach(None)
        for job, result in outcomes:
            job.result, job.ok = result, True

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
