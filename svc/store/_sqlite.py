"""``SqliteStore``: stdlib sqlite3 on one connection, driven from a worker thread.

All calls go through ``anyio.to_thread.run_sync`` with a capacity limiter of 1,
so one connection serves every call in order, under trio or asyncio. Concurrent
callers are group-committed: calls queued while a batch runs go together into
the next transaction, each under its own savepoint. Files use WAL; every
read-modify-write runs in ``BEGIN IMMEDIATE`` so claims stay atomic across
processes sharing the file.
"""

from __future__ import annotations

import contextlib
import math
import os
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, Final, Generic, Literal, TypeVar

import anyio
import anyio.to_thread

from svc._text import has_ascii_control

from . import _sqlite_delivery
from ._base import StoreBase
from ._batch_kinds import BatchHint, BatchKind
from ._errors import (
    REDACTED_SQLITE_LOCATION,
    FaultCode,
    PersistenceError,
    PersistenceValidationError,
)
from ._migrations import run_migrations
from ._session import Row, Session

__all__ = ["SQLITE_SYNCHRONOUS_MODES", "SqliteStore"]

SQLITE_SYNCHRONOUS_MODES: Final = ("full", "normal")
"""The ``synchronous`` values of ``SqliteStore`` (``"full"`` first: the default)."""

T = TypeVar("T")
_MESSAGES: Final[dict[str, str]] = {
    "migration_failed": "SQLite migration failed.",
    "claim_failed": "SQLite service-request transaction failed.",
    "completion_failed": "SQLite service-request completion failed.",
    "outbox_failed": "SQLite outbox or message transaction failed.",
    "query_failed": "SQLite query failed.",
}


_MERGED: Final[dict[BatchKind, Callable[[Session, list[tuple[object, ...]]], list[object]]]] = {
    "delivery": _sqlite_delivery.record_webhook_deliveries,
    "handled": _sqlite_delivery.mark_webhook_updates_handled,
}
"""The write kinds whose consecutive calls in a batch run as one set-based call (answering
every call: none is deferred)."""

_ORDER: Final[dict[BatchKind, int]] = {"handled": 0, "delivery": 1}
"""Where a batch runs each merged kind's calls: marks of handled updates, then deliveries, then
every other call, each in arrival order. Marks first: a copy of a delivery queued in the same
batch as the mark of its updates finds them finished (skipped), not in progress."""


def _in_batch_order(batch: list[_Job[Any]]) -> list[_Job[Any]]:
    """The batch with each merged kind's calls together (a stable sort by ``_ORDER``).

    The calls of one batch are concurrent: each caller waits for its call's batch to
    commit before it can queue another, so no call of a batch follows from another and
    any order of them is one they could have run in.
    """
    other = len(_ORDER)
    return sorted(batch, key=lambda job: _ORDER.get(job.hint.kind, other) if job.hint else other)


def _merged_kind(job: _Job[Any]) -> BatchKind | None:
    return job.hint.kind if job.hint is not None and job.hint.kind in _MERGED else None


def _hint(job: _Job[Any]) -> BatchHint:
    assert job.hint is not None
    return job.hint


_NOT_A_DATABASE: Final = "SQLite migration failed: the file is not an SQLite database."
_MAX_BATCH: Final = 256
_CHECKPOINT_PAGES: Final = 4000
"""WAL pages (16 MB at 4 KiB) after which a commit copies the WAL back into the file."""


class _Job(Generic[T]):
    """One queued call of the group-commit loop: it fails unless its batch commits."""

    __slots__ = ("code", "done", "error", "finished", "fn", "hint", "ok", "result", "write")

    def __init__(
        self, *, fn: Callable[[Session], T], write: bool, code: FaultCode, hint: BatchHint | None
    ) -> None:
        self.fn = fn
        self.write = write
        self.hint = hint
        self.code: FaultCode = code
        self.done: anyio.Event | None = None
        """Set when its batch has run; shared by the waiting jobs of one batch, and made
        only for a caller that waits (the draining caller runs its own job)."""
        self.finished = False
        self.ok = False
        self.result: T | None = None
        self.error: Exception | None = None

    def outcome(self) -> T:
        """The call's answer once its batch has run: its result if the batch committed,
        else its own error, else the pessimistic error of its kind."""
        if self.ok:
            return self.result  # type: ignore[return-value]
        if self.error is not None:
            raise self.error
        raise PersistenceError(self.code, _MESSAGES[self.code])

    async def wait(self) -> None:
        """Wait until its batch has run. The job runs to completion whatever happens to the
        caller: a cancellation is held until then and delivered at the caller's next
        checkpoint, as after a thread call; one that no cancel scope repeats (asyncio's
        ``Task.cancel``) is raised here, after the job has run."""
        try:
            while not self.finished:
                assert self.done is not None
                await self.done.wait()
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                while not self.finished:
                    assert self.done is not None
                    await self.done.wait()
            if anyio.current_effective_deadline() != -math.inf:
                raise


class _SqliteSession:
    __slots__ = ("_conn",)
    dialect: Final[Literal["sqlite"]] = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def run(self, sql: str, params: Sequence[object] = ()) -> int:
        return self._conn.execute(sql, params).rowcount

    def fetchall(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        return self._conn.execute(sql, params).fetchall()

    def fetchone(self, sql: str, params: Sequence[object] = ()) -> Row | None:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else None


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
    )

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout_ms: int = 5000,
        synchronous: str = "full",
    ) -> None:
        """``synchronous`` is SQLite's ``PRAGMA synchronous`` in WAL mode: ``"full"`` (the
        default) syncs the WAL at every commit, so an acknowledged write survives a power
        loss; ``"normal"`` syncs only at checkpoints and may lose the last commits."""
        if synchronous not in SQLITE_SYNCHRONOUS_MODES:
            modes = ", ".join(SQLITE_SYNCHRONOUS_MODES)
            message = f"synchronous must be one of {modes}"
            raise PersistenceValidationError("invalid_options", message)
        self._synchronous: Final = synchronous
        self._path: Final = _check_filename(path)
        self._memory: Final = self._path == ":memory:"
        self._busy_timeout_ms: Final = busy_timeout_ms
        self._conn: sqlite3.Connection | None = None
        self._limiter: Final = anyio.CapacityLimiter(1)
        self._queue: list[_Job[Any]] = []
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
            conn = sqlite3.connect(
                self._path,
                timeout=self._busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
                # Each group-committed job runs under a savepoint, whose journal of the
                # pages it changes otherwise spills to a temporary file past 64 KiB: in
                # memory, as a rolled-back savepoint needs it only inside the transaction.
                conn.execute("PRAGMA temp_store = MEMORY")
                if not self._memory:
                    conn.execute("PRAGMA journal_mode = WAL")
                    conn.execute(f"PRAGMA synchronous = {self._synchronous.upper()}")
                    if self._synchronous == "full":
                        # Checkpoint every _CHECKPOINT_PAGES WAL pages, not SQLite's 1,000:
                        # a page many commits rewrite is copied back once, and the syncs
                        # of a checkpoint come a quarter as often. Not under "normal",
                        # whose commits are synced only by checkpoints.
                        conn.execute(f"PRAGMA wal_autocheckpoint = {_CHECKPOINT_PAGES}")
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _transaction(self, fn: Callable[[Session], T], write: bool) -> T:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            result = fn(_SqliteSession(conn))
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return result

    def _run_batch(self, batch: list[_Job[Any]]) -> None:
        """Group commit: one transaction, one savepoint per job (runs in the thread).

        Every job starts failed; a job succeeds only once COMMIT has. A failing
        job rolls back to its savepoint and fails alone. The batch's marks of
        handled updates, then its webhook deliveries, run together as one
        set-based call each (``_MERGED``, ``_in_batch_order``) under one
        savepoint; if that fails, each of them runs alone.
        """
        batch = _in_batch_order(batch)
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE" if any(j.write for j in batch) else "BEGIN")
        session = _SqliteSession(conn)
        results: list[tuple[_Job[Any], object]] = []
        try:
            start = 0
            while start < len(batch):
                end = start + 1
                kind = _merged_kind(batch[start])
                while kind is not None and end < len(batch) and _merged_kind(batch[end]) == kind:
                    end += 1
                if end - start > 1:
                    assert kind is not None
                    self._run_merged(conn, session, kind, batch[start:end], results)
                else:
                    self._run_alone(conn, session, batch[start], results)
                start = end
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise
        for job, result in results:
            job.result, job.ok = result, True

    @staticmethod
    def _run_alone(
        conn: sqlite3.Connection,
        session: Session,
        job: _Job[Any],
        results: list[tuple[_Job[Any], object]],
    ) -> None:
        conn.execute("SAVEPOINT svc_job")
        try:
            results.append((job, job.fn(session)))
        except sqlite3.Error:
            conn.execute("ROLLBACK TO svc_job")
        except Exception as exc:  # noqa: BLE001 -- handed back to the job's caller
            job.error = exc
            conn.execute("ROLLBACK TO svc_job")
        conn.execute("RELEASE svc_job")

    def _run_merged(
        self,
        conn: sqlite3.Connection,
        session: Session,
        kind: BatchKind,
        jobs: list[_Job[Any]],
        results: list[tuple[_Job[Any], object]],
    ) -> None:
        """``jobs`` (consecutive, of ``kind``) as one set-based call under one savepoint;
        if it fails, each job runs alone, so only a failing one fails."""
        conn.execute("SAVEPOINT svc_merged")
        try:
            answers = _MERGED[kind](session, [_hint(job).args for job in jobs])
        except Exception:  # noqa: BLE001 -- every job gets its own run and its own error
            conn.execute("ROLLBACK TO svc_merged")
            conn.execute("RELEASE svc_merged")
            for job in jobs:
                self._run_alone(conn, session, job, results)
            return
        conn.execute("RELEASE svc_merged")
        results += zip(jobs, answers, strict=True)

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
        job: _Job[T] = _Job(fn=fn, write=write, code=code, hint=batch)
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
            return await anyio.to_thread.run_sync(work, limiter=self._limiter)
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc):
                raise PersistenceError("migration_failed", _NOT_A_DATABASE) from None
            raise PersistenceError("migration_failed", _MESSAGES["migration_failed"]) from None
        except sqlite3.Error:
            raise PersistenceError("migration_failed", _MESSAGES["migration_failed"]) from None

    async def close(self) -> None:
        """Close the connection after the call in flight; idempotent."""
        self._closed = True

        def work() -> None:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                conn.close()

        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(work, limiter=self._limiter)
