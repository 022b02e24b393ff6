"""The synchronous side of ``SqliteStore``: its connection, its jobs and the group commit.

Everything here runs where the connection lives: the store's worker thread, or the writer
process (``_sqlite_writer``, through ``_writer``), which runs the same batches of the same jobs.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, Final, Generic, Literal, TypeVar

import anyio

from . import _sqlite_delivery
from ._batch_kinds import BatchHint, BatchKind
from ._errors import FaultCode, PersistenceError
from ._held import held_to_completion
from ._session import Row, Session

__all__ = [
    "MERGED",
    "MESSAGES",
    "Job",
    "SqliteSession",
    "merged_kind",
    "open_connection",
    "run_batch",
]

T = TypeVar("T")

MESSAGES: Final[dict[str, str]] = {
    "migration_failed": "SQLite migration failed.",
    "claim_failed": "SQLite service-request transaction failed.",
    "completion_failed": "SQLite service-request completion failed.",
    "outbox_failed": "SQLite outbox or message transaction failed.",
    "query_failed": "SQLite query failed.",
}

MERGED: Final[dict[BatchKind, Callable[[Session, list[tuple[object, ...]]], list[object]]]] = {
    "delivery": _sqlite_delivery.record_webhook_deliveries,
    "handled": _sqlite_delivery.mark_webhook_updates_handled,
}
"""The write kinds whose consecutive calls in a batch run as one set-based call (answering
every call: none is deferred)."""

_ORDER: Final[dict[BatchKind, int]] = {"handled": 0, "delivery": 1}
"""Where a batch runs each merged kind's calls: marks of handled updates, then deliveries, then
every other call, each in arrival order. Marks first: a copy of a delivery queued in the same
batch as the mark of its updates finds them finished (skipped), not in progress."""

_CHECKPOINT_PAGES: Final = 4000
"""WAL pages (16 MB at 4 KiB) after which a commit copies the WAL back into the file."""


def _in_batch_order(batch: list[Job[Any]]) -> list[Job[Any]]:
    """The batch with each merged kind's calls together (a stable sort by ``_ORDER``).

    The calls of one batch are concurrent: each caller waits for its call's batch to
    commit before it can queue another, so no call of a batch follows from another and
    any order of them is one they could have run in.
    """
    other = len(_ORDER)
    return sorted(batch, key=lambda job: _ORDER.get(job.hint.kind, other) if job.hint else other)


def merged_kind(job: Job[Any]) -> BatchKind | None:
    """The job's kind if its calls merge into one set-based call, else ``None``."""
    return job.hint.kind if job.hint is not None and job.hint.kind in MERGED else None


def _hint(job: Job[Any]) -> BatchHint:
    assert job.hint is not None
    return job.hint


class Job(Generic[T]):
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
        """Set when its batch has run: shared by the waiting jobs of one batch and made only
        for a caller that waits (the draining caller runs its own job)."""
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
        raise PersistenceError(self.code, MESSAGES[self.code])

    async def wait(self) -> None:
        """Wait until its batch has run (``held_to_completion``)."""
        await held_to_completion(self._until_finished)

    async def _until_finished(self) -> None:
        while not self.finished:
            assert self.done is not None
            await self.done.wait()


class SqliteSession:
    """``Session`` over one sqlite3 connection."""

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


def open_connection(path: str, *, busy_timeout_ms: int, synchronous: str) -> sqlite3.Connection:
    """The store's connection to ``path`` with its pragmas (usable from any one thread)."""
    conn = sqlite3.connect(
        path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        # Each group-committed job runs under a savepoint, whose journal of the
        # pages it changes otherwise spills to a temporary file past 64 KiB: in
        # memory, as a rolled-back savepoint needs it only inside the transaction.
        conn.execute("PRAGMA temp_store = MEMORY")
        if path != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
            if synchronous == "full":
                # Checkpoint every _CHECKPOINT_PAGES WAL pages, not SQLite's 1,000:
                # a page many commits rewrite is copied back once, and the syncs
                # of a checkpoint come a quarter as often. Not under "normal",
                # whose commits are synced only by checkpoints.
                conn.execute(f"PRAGMA wal_autocheckpoint = {_CHECKPOINT_PAGES}")
    except BaseException:
        conn.close()
        raise
    return conn


def run_batch(conn: sqlite3.Connection, batch: list[Job[Any]]) -> None:
    """Group commit: one transaction, one savepoint per job.

    Every job starts failed; a job succeeds only once COMMIT has. A failing
    job rolls back to its savepoint and fails alone. The batch's marks of
    handled updates, then its webhook deliveries, run together as one
    set-based call each (``MERGED``, ``_in_batch_order``) under one
    savepoint; if that fails, each of them runs alone.
    """
    batch = _in_batch_order(batch)
    conn.execute("BEGIN IMMEDIATE" if any(j.write for j in batch) else "BEGIN")
    session = SqliteSession(conn)
    results: list[tuple[Job[Any], object]] = []
    try:
        start = 0
        while start < len(batch):
            end = start + 1
            kind = merged_kind(batch[start])
            while kind is not None and end < len(batch) and merged_kind(batch[end]) == kind:
                end += 1
            if end - start > 1:
                assert kind is not None
                _run_merged(conn, session, kind, batch[start:end], results)
            else:
                _run_alone(conn, session, batch[start], results)
            start = end
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise
    for job, result in results:
        job.result, job.ok = result, True


def _run_alone(
    conn: sqlite3.Connection,
    session: Session,
    job: Job[Any],
    results: list[tuple[Job[Any], object]],
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
    conn: sqlite3.Connection,
    session: Session,
    kind: BatchKind,
    jobs: list[Job[Any]],
    results: list[tuple[Job[Any], object]],
) -> None:
    """``jobs`` (consecutive, of ``kind``) as one set-based call under one savepoint;
    if it fails, each job runs alone, so only a failing one fails."""
    conn.execute("SAVEPOINT svc_merged")
    try:
        answers = MERGED[kind](session, [_hint(job).args for job in jobs])
    except Exception:  # noqa: BLE001 -- every job gets its own run and its own error
        conn.execute("ROLLBACK TO svc_merged")
        conn.execute("RELEASE svc_merged")
        for job in jobs:
            _run_alone(conn, session, job, results)
        return
    conn.execute("RELEASE svc_merged")
    results += zip(jobs, answers, strict=True)
