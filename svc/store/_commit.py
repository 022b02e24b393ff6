"""The group commit both adapters share: one queue, one drain, one ``Job``, one batch runner.

Concurrent writes share a transaction. A caller queues its job (``GroupCommit.run``); one
caller at a time drains the queue, batch by batch (at most ``MAX_BATCH`` jobs), until it is
empty, and the others sleep until their batch has ended. A batch runs
where its ``Runner`` puts it: on the adapter's connection in a worker thread
(``sqlite/_store.py``, ``postgres/_engine.py``) or in a child process (``_child.py``).
There, ``run_batch`` runs it as one transaction, phase by phase (``_kinds.PHASES``), each
kind's jobs through one set-based call (``_kinds.set_based``) under one savepoint, and a
job that call could not settle, or every job of a phase whose call failed, alone under a
savepoint of its own (``_kinds.run_alone``). A job succeeds only once COMMIT has; a failing
job fails alone; a failed COMMIT fails every job of the batch (none was acknowledged).

A caller's cancellation: with a runner that ``withdraws`` (PostgreSQL's thread) a queued
job is withdrawn and a running one has its statement cancelled on the server; otherwise a
job, once queued, runs to its end and the cancellation comes after (``held_to_completion``).
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Sequence
from typing import Any, Final, Generic, Protocol, TypeVar

import anyio
import anyio.to_thread

from ._errors import FaultCode, PersistenceError
from ._held import held_to_completion
from ._kinds import DEFER, PHASES, Forms, Kind, lock_keys, run_alone, set_based
from ._session import Session

__all__ = [
    "MAX_BATCH",
    "PIPELINE_AFTER",
    "Batch",
    "BatchConnection",
    "GroupCommit",
    "Job",
    "OperationCancelled",
    "Runner",
    "State",
    "run_batch",
]

T = TypeVar("T")
MAX_BATCH: Final = 256
"""Most jobs in one batch (one transaction)."""
PIPELINE_AFTER: Final = 8
"""With a runner of depth 2, the queued jobs that start a second batch while one is in flight."""
_CANCEL_RETRY_SECONDS: Final = 0.1


class OperationCancelled(Exception):
    """Raised in the batch's worker before a statement when a caller it serves was cancelled."""


class State(enum.Enum):
    QUEUED = "queued"  # in the queue
    TAKEN = "taken"  # in a batch, not started
    RUNNING = "running"  # its statement is on the connection now
    EXECUTED = "executed"  # done inside the open transaction, waiting for COMMIT
    SETTLED = "settled"  # finished, failed or withdrawn


class Job(Generic[T]):
    """One call of the group commit: a ``Kind``, its checked arguments and the fault code its
    caller hears if its batch does not commit (``outcome``)."""

    __slots__ = (
        "args",
        "batch",
        "cancelled",
        "code",
        "done",
        "drains",
        "error",
        "key",
        "kind",
        "ok",
        "result",
        "state",
        "write",
    )

    def __init__(
        self, kind: Kind, args: Any, *, code: FaultCode, key: str = "", write: bool = True
    ) -> None:
        self.kind = kind
        self.args = args
        """The single form's arguments (``_kinds.run_alone``); a ``CALL``'s function and its
        arguments after the session."""
        self.key = key
        """What a phase sorts its jobs by (the row each contends for)."""
        self.code: FaultCode = code
        self.write = write
        self.state = State.QUEUED
        self.cancelled = False
        self.drains = False
        """This job's caller drains the queue (one at a time)."""
        self.batch: Batch | None = None
        self.done = False
        """Settled: its batch ended (committed or not), or it was withdrawn."""
        self.ok = False
        """Set only once COMMIT has succeeded."""
        self.result: T | None = None
        self.error: Exception | None = None
        """The call's own exception (not a driver fault), handed to its caller."""

    def settle(self) -> None:
        """Mark the job done (its caller wakes with its batch's event, or withdrew it)."""
        self.state, self.done = State.SETTLED, True

    def outcome(self, messages: dict[str, str]) -> T:
        """Its result if its batch committed, else its own error, else the pessimistic error
        of its code (``messages``: the adapter's sentence per code)."""
        if self.ok:
            return self.result  # type: ignore[return-value]
        if self.error is not None:
            raise self.error
        raise PersistenceError(self.code, messages[self.code])


class Batch:
    """The jobs of one transaction; its lock orders their state changes against cancels.

    ``interrupt`` (PostgreSQL: cancel the running statement on the server) is set while a
    connection runs it; ``lost`` is set when the batch found the database server out of reach.
    """

    __slots__ = ("_current", "_lock", "finished", "interrupt", "jobs", "lost")

    def __init__(self, jobs: list[Job[Any]]) -> None:
        self.jobs = jobs
        self._lock = threading.Lock()
        self._current: list[Job[Any]] = []
        self.interrupt: Any = None
        self.lost = False
        self.finished: anyio.Event | None = None
        """Set once the batch has ended and its jobs are settled (the group commit's)."""
        for job in jobs:
            job.state, job.batch = State.TAKEN, self

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
        """Blocking: flag ``job``; if its statement runs, cancel it (the lock held)."""
        with self._lock:
            job.cancelled = True
            if job.state is State.RUNNING and self.interrupt is not None:
                self.interrupt()
            return job.state


# --- the batch, where the connection is ----------------------------------------------------


class BatchConnection(Protocol):
    """An adapter's connection as ``run_batch`` drives it (in its worker thread or child)."""

    @property
    def session(self) -> Session: ...

    @property
    def forms(self) -> Forms: ...

    @property
    def faults(self) -> tuple[type[BaseException], ...]:
        """The driver's errors: a job they end fails with its pessimistic error."""
        ...

    @property
    def locks(self) -> bool:
        """Whether a phase takes its jobs' advisory locks first (PostgreSQL)."""
        ...

    def begin(self, *, write: bool) -> None: ...

    def savepoint(self, name: str) -> None: ...

    def rollback_to(self, name: str) -> None: ...

    def release(self, name: str) -> None: ...

    def lock(self, keys: Sequence[str]) -> None: ...

    def commit(self) -> None: ...


def run_batch(conn: BatchConnection, batch: Batch) -> None:
    """Blocking: the batch as one transaction; results count only after COMMIT.

    On an exception (a failed COMMIT, a lost connection) every job keeps its pessimistic
    error and the caller rolls the transaction back.
    """
    jobs = batch.jobs
    outcomes: list[tuple[Job[Any], object]] = []
    conn.begin(write=any(job.write for job in jobs))
    for kinds in PHASES:
        phase = sorted((job for job in jobs if job.kind in kinds), key=lambda job: job.key)
        if phase:
            outcomes += _run_phase(conn, batch, phase)
    conn.commit()
    for job, result in outcomes:
        job.result, job.ok = result, True


def _run_phase(
    conn: BatchConnection, batch: Batch, phase: list[Job[Any]]
) -> list[tuple[Job[Any], object]]:
    """One phase: its merged jobs as one set-based call per kind under one savepoint (their
    advisory locks taken first, sorted); if that fails, every job of the phase runs alone.
    Then the jobs left (a ``CALL``, a ``DEFER``) run alone, each under its own savepoint."""
    outcomes: list[tuple[Job[Any], object]] = []
    alone = [job for job in phase if job.kind is Kind.CALL]
    merged = [job for job in phase if job.kind is not Kind.CALL]
    if merged:
        # Savepoints are set before jobs count as running: a cancel only ever hits their work.
        conn.savepoint("svc_group")
        live = batch.begin(merged)
        try:
            if conn.locks:
                keys = sorted({key for job in live for key in lock_keys(job.kind, job.args)})
                if keys:
                    conn.lock(keys)
            answers: list[tuple[Job[Any], object]] = []
            for kind in dict.fromkeys(job.kind for job in live):
                of_kind = [job for job in live if job.kind is kind]
                results = set_based(conn.forms, conn.session, kind, [job.args for job in of_kind])
                answers += zip(of_kind, results, strict=True)
        except Exception:  # noqa: BLE001 -- every job gets its own run and its own error
            batch.end(State.TAKEN, live)
            conn.rollback_to("svc_group")
            conn.release("svc_group")
            alone = phase
        else:
            conn.release("svc_group")
            done = [(job, result) for job, result in answers if result is not DEFER]
            deferred = [job for job, result in answers if result is DEFER]
            batch.end(State.EXECUTED, [job for job, _ in done])
            batch.end(State.TAKEN, deferred)
            outcomes += done
            alone = sorted(alone + deferred, key=lambda job: job.key)
    for job in alone:
        if job.state is not State.TAKEN or job.cancelled:
            continue
        conn.savepoint("svc_job")
        if not batch.begin([job]):
            conn.release("svc_job")
            continue
        failed = True
        try:
            result = run_alone(conn.forms, conn.session, job.kind, job.args)
        except conn.faults:
            pass
        except Exception as exc:  # noqa: BLE001 -- handed back to the job's caller
            job.error = exc
        else:
            failed = False
        batch.end(State.SETTLED if failed else State.EXECUTED, [job])
        if failed:
            conn.rollback_to("svc_job")
        else:
            outcomes.append((job, result))
        conn.release("svc_job")
    return outcomes


# --- the queue, in the event loop ------------------------------------------------------------


class Runner(Protocol):
    """Where a batch runs: a worker thread on the adapter's connection, or a child process."""

    @property
    def withdraws(self) -> bool:
        """Whether a cancelled caller's job is withdrawn (queued) or has its statement
        cancelled (running); otherwise it runs to its end."""
        ...

    @property
    def depth(self) -> int:
        """How many batches it may hold at once: 1 runs them one after the other; the writer
        process takes 2, so it starts the next batch while the event loop settles the last."""
        ...

    async def run(self, batch: Batch) -> None:
        """Run the batch (its caller shields this); on return each job's ``ok``, ``result``
        and ``error`` are final."""
        ...


class GroupCommit:
    """One queue of jobs and its drain, over one ``Runner``.

    The caller that finds fewer than the runner's ``depth`` drains under way drains the
    queue, batch by batch, until it is empty, so the next batch starts the moment the last
    one ends (its own answer waits for that). With a depth of 2 a second drain starts once
    ``PIPELINE_AFTER`` jobs wait behind a batch in flight, so the writer process commits one
    batch while the loop settles the other. The other callers sleep on one event per batch:
    the one their batch sets when it ends (``_waiting`` until a batch takes them).
    """

    __slots__ = ("_drains", "_messages", "_queue", "_waiting", "runner")

    def __init__(self, runner: Runner, *, messages: dict[str, str]) -> None:
        self.runner = runner
        self._messages = messages
        self._queue: list[Job[Any]] = []
        self._drains = 0
        """How many callers drain now (at most the runner's ``depth``)."""
        self._waiting: anyio.Event | None = None
        """What the queued callers sleep on: set when the batch that takes them ends."""

    @property
    def queued(self) -> int:
        """How many jobs wait in the queue (not yet in a batch)."""
        return len(self._queue)

    async def run(self, job: Job[T]) -> T:
        """Queue ``job`` and return its answer once its batch has committed (else raise its
        error)."""
        self._queue.append(job)
        drains = self._drains
        if drains == 0 or (drains < self.runner.depth and len(self._queue) >= PIPELINE_AFTER):
            self._drains, job.drains = drains + 1, True
        if self.runner.withdraws:
            try:
                await self._settled(job)
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self._abandon(job)
                raise
        else:
            await held_to_completion(lambda: self._settled(job))
        return job.outcome(self._messages)

    async def _settled(self, job: Job[Any]) -> None:
        """Until ``job`` is settled: drain while it holds the queue, else sleep on its batch's
        event (the queued callers' one while it is still queued)."""
        while not job.done:
            if job.drains:
                await self._drain(job)
            elif job.batch is not None and job.batch.finished is not None:
                await job.batch.finished.wait()
            else:
                if self._waiting is None:
                    self._waiting = anyio.Event()
                await self._waiting.wait()

    async def _drain(self, own: Job[Any]) -> None:
        """Run batches from the head of the queue until it is empty; a drain that ends early
        (its caller cancelled) hands the queue on."""
        try:
            while self._queue:
                batch = Batch(self._queue[:MAX_BATCH])
                del self._queue[:MAX_BATCH]
                # The callers taken sleep on the queued callers' event: it becomes the
                # batch's; the ones left (past MAX_BATCH) wake with it and sleep again.
                finished = self._waiting or anyio.Event()
                self._waiting = None
                batch.finished = finished
                await self._run(batch, own, finished)
        finally:
            own.drains = False
            self._hand_on()

    def _hand_on(self) -> None:
        """A drain ended: with no other drain under way, the first job still queued drains
        next (the queued callers are woken: it goes on, the others sleep again)."""
        if self._queue and self._drains == 1:
            self._queue[0].drains = True
            waiting, self._waiting = self._waiting, None
            if waiting is not None:
                waiting.set()
        else:
            self._drains -= 1

    async def _run(self, batch: Batch, own: Job[Any], finished: anyio.Event) -> None:
        """Run one batch through the runner, shielded (the other jobs depend on it), and
        settle its jobs. A withdrawing runner's draining caller, cancelled, has its own job
        cancelled and waits for the batch's end before the cancellation goes on."""
        failure: list[BaseException] = []

        async def run() -> None:
            with anyio.CancelScope(shield=True):
                try:
                    await self.runner.run(batch)
                except Exception as exc:  # noqa: BLE001 -- re-raised once the jobs are settled
                    failure.append(exc)
                finally:
                    for job in batch.jobs:
                        job.settle()
                    finished.set()

        if not self.runner.withdraws:
            await run()
        else:
            async with anyio.create_task_group() as group:
                group.start_soon(run)
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
        """``job``'s caller was cancelled (withdrawing runners): withdraw it or cancel its
        statement, as far as still possible.

        Queued: it never runs (a caller about to drain hands the queue on). Taken, not
        started: it is skipped. Running: its statement is cancelled on the server (again
        until it stops) and only its savepoint rolls back. Executed: it waits for the batch's
        COMMIT, as a thread call that already finished would. The draining caller keeps the
        queue until its drain ends.
        """
        if job.state is State.QUEUED:
            self._queue.remove(job)
            job.settle()
            if job.drains and not draining:
                job.drains = False
                self._hand_on()
            return
        batch = job.batch
        while batch is not None and batch.finished is not None and not job.done:
            state = await anyio.to_thread.run_sync(batch.cancel, job)
            if state in (State.TAKEN, State.SETTLED):
                return
            if state is State.EXECUTED:
                await batch.finished.wait()
                return
            with anyio.move_on_after(_CANCEL_RETRY_SECONDS):
                await batch.finished.wait()
