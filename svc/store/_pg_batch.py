"""The synchronous side of the PostgreSQL group commit: its jobs, its batches, its phases.

Everything here runs where the connection is: the engine's worker thread (``_pg_engine``)
or the writer process (``_pg_writer``), which runs the same batches of the same jobs.
"""

from __future__ import annotations

import contextlib
import enum
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final, Generic, Literal, Protocol, TypeVar

import anyio
import psycopg

from . import _batch
from ._batch import DEFER, BatchHint, BatchKind
from ._errors import FaultCode
from ._pg_arrays import array_casts, packed, placeholders
from ._session import Row, Session

__all__ = ["Batch", "Checkpoint", "Job", "OperationCancelled", "PgSession", "State", "run_batch"]

T = TypeVar("T")


class OperationCancelled(Exception):
    """Raised in the worker thread when the caller was cancelled before a statement."""


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


class Checkpoint(Protocol):
    """What a session asks before each statement: ``check`` raises ``OperationCancelled``
    when the caller it serves was cancelled."""

    def check(self) -> None: ...


class State(enum.Enum):
    QUEUED = "queued"  # in the store's queue
    TAKEN = "taken"  # in a batch, not started
    RUNNING = "running"  # its statement is on the connection now
    EXECUTED = "executed"  # done inside the open transaction, waiting for COMMIT
    SETTLED = "settled"  # finished, failed or skipped


class Job(Generic[T]):
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
        self.state = State.QUEUED
        self.cancelled = False
        self.holds_slot = False
        self.batch: Batch | None = None
        self.done = False  # settled: its batch ended (committed or not), or it never ran
        # Made only by a caller that waits in the queue (not by a draining one): set once
        # the job is done, or promoted to drain the queue.
        self.wake: anyio.Event | None = None
        self.result: T | None = None
        self.ok = False  # set only once COMMIT has succeeded
        self.error: Exception | None = None  # the call's own non-driver exception

    def settle(self) -> None:
        """Mark the job done and wake its caller if it waits in the queue."""
        self.state, self.done = State.SETTLED, True
        if self.wake is not None:
            self.wake.set()


class Batch:
    """The jobs of one transaction; the lock orders their state changes against cancels.

    ``finished`` (the engine's batches have one; the writer process's none) is set once
    the batch has ended and every job of it is done: the one event its callers wait on for
    the COMMIT.
    """

    __slots__ = ("_conn", "_current", "_finished", "_lock", "lost")

    def __init__(self, finished: anyio.Event | None = None) -> None:
        self._finished = finished
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._current: list[Job[Any]] = []
        self.lost = False  # the server could not be reached (see _pooled)

    @property
    def finished(self) -> anyio.Event:
        assert self._finished is not None, "a batch of the writer process has no event"
        return self._finished

    def attach(self, conn: psycopg.Connection[Any] | None) -> None:
        with self._lock:
            self._conn = conn

    def begin(self, jobs: list[Job[Any]]) -> list[Job[Any]]:
        """Mark the jobs not cancelled as running (and return them); skip the others."""
        with self._lock:
            live = []
            for job in jobs:
                if job.cancelled:
                    job.state = State.SETTLED
                else:
                    job.state = State.RUNNING
                    live.append(job)
            self._current = live
            return live

    def end(self, state: State, jobs: list[Job[Any]]) -> None:
        with self._lock:
            for job in jobs:
                job.state = State.SETTLED if job.cancelled and state is State.TAKEN else state
            self._current = []

    def check(self) -> None:
        """Refuse the next statement when a caller it serves was cancelled."""
        if any(job.cancelled for job in self._current):
            raise OperationCancelled

    def cancel(self, job: Job[Any]) -> State:
        """Blocking: flag ``job``; if its statement runs, cancel it server-side (lock held)."""
        with self._lock:
            job.cancelled = True
            if job.state is State.RUNNING and self._conn is not None:
                with contextlib.suppress(psycopg.Error):
                    self._conn.cancel_safe(timeout=2.0)
            return job.state


class PgSession:
    __slots__ = ("_conn", "_op")
    dialect: Final[Literal["postgres"]] = "postgres"

    def __init__(self, conn: psycopg.Connection[Any], op: Checkpoint) -> None:
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
    session: PgSession,
    batch: Batch,
    phase: list[Job[Any]],
    opening: str,
) -> list[tuple[Job[Any], object]]:
    """Blocking: one phase of a batch (jobs sorted by key) inside the transaction.

    ``opening`` (parameterless statements: the batch's BEGIN, or the release of the
    previous phase's savepoint) goes in one round trip with this phase's savepoint.
    The set-based forms run together under that savepoint; when that fails (or a
    caller it serves is cancelled), it rolls back and every job runs alone. The
    savepoint is left open: the next phase's opening or the COMMIT releases it.
    """
    outcomes: list[tuple[Job[Any], object]] = []
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
        answers: list[tuple[Job[Any], object]] = []
        for kind in dict.fromkeys(job.hint.kind for job in grouped):
            of_kind = [job for job in grouped if job.hint.kind == kind]
            results = _SET_BASED[kind](session, [job.hint.args for job in of_kind])
            answers += zip(of_kind, results, strict=True)
    except (psycopg.Error, OperationCancelled):
        batch.end(State.TAKEN, grouped)
        conn.execute("ROLLBACK TO SAVEPOINT svc_group")
        alone = phase
    else:
        done = [(job, result) for job, result in answers if result is not DEFER]
        deferred = [job for job, result in answers if result is DEFER]
        batch.end(State.EXECUTED, [job for job, _ in done])
        batch.end(State.TAKEN, deferred)
        outcomes += done
        alone = sorted(alone + deferred, key=lambda job: job.hint.key)
    for job in alone:
        if job.state is not State.TAKEN or job.cancelled:
            continue
        conn.execute("SAVEPOINT svc_job")
        if not batch.begin([job]):
            conn.execute("RELEASE SAVEPOINT svc_job")
            continue
        try:
            result = job.fn(session)
        except (psycopg.Error, OperationCancelled):
            failed = True
        except Exception as exc:  # noqa: BLE001 -- handed back to the job's caller
            job.error, failed = exc, True
        else:
            failed = False
        batch.end(State.SETTLED if failed else State.EXECUTED, [job])
        if failed:
            conn.execute("ROLLBACK TO SAVEPOINT svc_job")
        else:
            outcomes.append((job, result))
        conn.execute("RELEASE SAVEPOINT svc_job")
    return outcomes


def run_batch(conn: psycopg.Connection[Any], batch: Batch, jobs: list[Job[Any]]) -> None:
    """Blocking: one transaction for the whole batch; results count only after COMMIT.

    The transaction is opened and committed by hand (not ``conn.transaction()``), so its
    BEGIN shares a round trip with the first phase's savepoint; on an exception the caller
    rolls it back (the engine's pooled connection does on its way back to the pool).
    """
    outcomes: list[tuple[Job[Any], object]] = []
    batch.attach(conn)
    try:
        session = PgSession(conn, batch)
        opening = _BEGIN_BATCH
        for kinds in _PHASES:
            phase = sorted(
                (job for job in jobs if job.hint.kind in kinds), key=lambda job: job.hint.key
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
