"""``SqliteStore``: stdlib sqlite3 on one connection, driven from a worker thread.

All calls go through ``anyio.to_thread.run_sync`` with a capacity limiter of 1,
so one connection serves every call in order, under trio or asyncio. Concurrent
callers are group-committed: calls queued while a batch runs go together into
the next transaction, each under its own savepoint. Files use WAL; every
read-modify-write runs in ``BEGIN IMMEDIATE`` so claims stay atomic across
processes sharing the file. With ``writer="process"`` a batch's webhook deliveries
and handled marks run in a writer process instead (``_sqlite_writer``).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast

import anyio
import anyio.to_thread

from svc._text import has_ascii_control

from ._base import StoreBase
from ._batch_kinds import BatchHint
from ._errors import (
    REDACTED_SQLITE_LOCATION,
    FaultCode,
    PersistenceError,
    PersistenceValidationError,
)
from ._migrations import run_migrations
from ._session import Session
from ._sqlite_run import MESSAGES, Job, SqliteSession, open_connection, run_batch
from ._sqlite_writer import sqlite_writer
from ._writer import (
    WRITER_KINDS,
    WRITERS,
    WriterProcess,
    WriterUnavailable,
    check_writer,
    started,
)

__all__ = ["SQLITE_SYNCHRONOUS_MODES", "SQLITE_WRITERS", "SqliteStore"]

SQLITE_SYNCHRONOUS_MODES: Final = ("full", "normal")
"""The ``synchronous`` values of ``SqliteStore`` (``"full"`` first: the default)."""
SQLITE_WRITERS: Final = WRITERS
"""Where ``SqliteStore`` runs its hot writes (``"thread"`` first: the default)."""

T = TypeVar("T")
_NOT_A_DATABASE: Final = "SQLite migration failed: the file is not an SQLite database."
_MAX_BATCH: Final = 256


def _check_filename(path: object) -> str:
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str) or not path.strip() or has_ascii_control(path):
        raise PersistenceValidationError(
            "invalid_filename", "SQLite database filename must be a non-empty safe path."
        )
    if path != ":memory:" and (path.startswith("file:") or os.path.isdir(path)):
        raise PersistenceValidationError(
            "invalid_filename", "SQLite database filename must name a file."
        )
    return path


class SqliteStore(StoreBase):
    """The local single-file store (or ``":memory:"``)."""

    _redacted_location = REDACTED_SQLITE_LOCATION

    __slots__ = (
        "_busy_timeout_ms",
        "_closed",
        "_conn",
        "_draining",
        "_limiter",
        "_memory",
        "_next_done",
        "_path",
        "_queue",
        "_synchronous",
        "_writer",
    )

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout_ms: int = 5000,
        synchronous: str = "full",
        writer: str = "thread",
    ) -> None:
        """``synchronous`` is SQLite's ``PRAGMA synchronous`` in WAL mode: ``"full"`` (the
        default) syncs the WAL at every commit, so an acknowledged write survives a power
        loss; ``"normal"`` syncs only at checkpoints and may lose the last commits.

        ``writer="process"`` (files only) runs the batches' webhook deliveries and handled
        marks on a second connection in a child process, off this process's GIL; if the
        child cannot start, they run on the thread as with ``"thread"``."""
        if synchronous not in SQLITE_SYNCHRONOUS_MODES:
            modes = ", ".join(SQLITE_SYNCHRONOUS_MODES)
            message = f"synchronous must be one of {modes}"
            raise PersistenceValidationError("invalid_options", message)
        check_writer(writer)
        self._synchronous: Final = synchronous
        self._path: Final = _check_filename(path)
        self._memory: Final = self._path == ":memory:"
        if writer == "process" and self._memory:
            message = 'writer="process" needs a file: another process cannot see :memory:'
            raise PersistenceValidationError("invalid_options", message)
        self._writer: WriterProcess | None = (
            sqlite_writer(self._path, busy_timeout_ms=busy_timeout_ms, synchronous=synchronous)
            if writer == "process"
            else None
        )
        self._busy_timeout_ms: Final = busy_timeout_ms
        self._conn: sqlite3.Connection | None = None
        self._limiter: Final = anyio.CapacityLimiter(1)
        self._queue: list[Job[Any]] = []
        self._next_done: anyio.Event | None = None
        self._draining = False
        self._closed = False

    def __repr__(self) -> str:
        return f"SqliteStore(location={REDACTED_SQLITE_LOCATION!r})"

    @property
    def backend(self) -> str:
        """Always ``"sqlite"``."""
        return "sqlite"

    def _connection(self) -> sqlite3.Connection:
        """Open on first use, in the worker thread (runs under the limiter)."""
        if self._conn is None:
            self._conn = open_connection(
                self._path, busy_timeout_ms=self._busy_timeout_ms, synchronous=self._synchronous
            )
        return self._conn

    def _transaction(self, fn: Callable[[Session], T], write: bool) -> T:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            result = fn(SqliteSession(conn))
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return result

    def _run_batch(self, batch: list[Job[Any]]) -> None:
        """Group commit on the thread's connection (``run_batch``; runs in the thread)."""
        run_batch(self._connection(), batch)

    async def _call(
        self,
        code: FaultCode,
        fn: Callable[[Session], T],
        *,
        write: bool,
        batch: BatchHint | None = None,
    ) -> T:
        """Queue ``fn``; the first waiting caller drains the queue in batches (group commit).

        Every call is batched here; ``batch`` lets consecutive deliveries merge.
        """
        if self._closed:
            raise PersistenceError("store_closed", "The store is closed.")
        if self._writer is not None and batch is not None and batch.kind in WRITER_KINDS:
            try:
                ok, result, error = await self._writer.run(batch)
            except WriterUnavailable:
                self._writer = None  # the thread runs them, now and from now on
            else:
                if not ok:
                    raise error or PersistenceError(code, MESSAGES[code])
                return cast(T, result)
        job: Job[T] = Job(fn=fn, write=write, code=code, hint=batch)
        self._queue.append(job)
        if self._draining:
            if self._next_done is None:
                self._next_done = anyio.Event()
            job.done = self._next_done
            await job.wait()
        else:
            # Shielded: a job, once queued, runs to completion, as a thread call would;
            # the caller's cancellation is delivered at its next checkpoint.
            with anyio.CancelScope(shield=True):
                await self._drain()
        return job.outcome()

    async def _drain(self) -> None:
        """Run the queue batch by batch until it is empty, waking each batch's waiters."""
        self._draining = True
        try:
            while self._queue:
                jobs = self._queue[:_MAX_BATCH]
                del self._queue[:_MAX_BATCH]
                done, self._next_done = self._next_done, None
                if done is not None and self._queue:  # past _MAX_BATCH: the rest wait on
                    self._next_done = anyio.Event()  # the next batch's event
                    for job in self._queue:
                        job.done = self._next_done
                try:
                    await anyio.to_thread.run_sync(self._run_batch, jobs, limiter=self._limiter)
                except sqlite3.Error:
                    pass  # every job of the batch keeps its pessimistic error
                finally:
                    for queued in jobs:
                        queued.finished = True
                    if done is not None:
                        done.set()
        finally:
            self._draining = False

    async def migrate(self, *, target_version: int | None = None) -> int:
        """Apply pending migrations (each in ``BEGIN IMMEDIATE``); return the version."""
        if self._closed:
            raise PersistenceError("store_closed", "The store is closed.")

        def work() -> int:
            return run_migrations(
                lambda fn: self._transaction(fn, True), "sqlite", target_version=target_version
            )

        try:
            version = await anyio.to_thread.run_sync(work, limiter=self._limiter)
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc):
                raise PersistenceError("migration_failed", _NOT_A_DATABASE) from None
            raise PersistenceError("migration_failed", MESSAGES["migration_failed"]) from None
        except sqlite3.Error:
            raise PersistenceError("migration_failed", MESSAGES["migration_failed"]) from None
        # Started now, not by the first delivery: the first ones wait for no start.
        self._writer = await started(self._writer)
        return version

    async def close(self) -> None:
        """Close the connection after the call in flight, and the writer process after the
        batch in flight; idempotent."""
        self._closed = True
        if self._writer is not None:
            await self._writer.aclose()

        def work() -> None:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                conn.close()

        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(work, limiter=self._limiter)
