"""One writer thread per SQLite store: it drains a thread-safe queue batch after batch.

The thread starts the next batch as soon as it finished one (the calls queued
meanwhile), and wakes each finished batch's callers back on their own event
loop with one non-blocking call into it, so the loop resumes callers while the
next batch runs. Callers wait uncancellably (a queued call runs to completion,
as a thread call would; a cancellation is delivered at the caller's next
checkpoint). The thread ends after ``close`` or once idle; the next call starts
another.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import weakref
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any, Final

import anyio

__all__ = ["WriterJob", "WriterThread"]

IDLE_SECONDS: Final = 5.0
"""How long an idle writer thread waits for work before it ends."""


class WriterJob:
    """One queued call: ``alone`` jobs (migrations, close) run outside any batch."""

    __slots__ = ("alone", "loop", "wake")

    def __init__(self, *, alone: bool = False) -> None:
        self.alone = alone
        self.loop: Any = None
        """The caller's trio token or asyncio loop."""
        self.wake: Callable[[], object] = _nothing


def _nothing() -> None:
    return None


def _never_abort(_: object) -> Any:
    import trio

    return trio.lowlevel.Abort.FAILED


def _wake_all(jobs: list[WriterJob]) -> None:
    """Runs in the callers' event loop: resume each caller."""
    for job in jobs:
        job.wake()


class WriterThread:
    """The queue and the thread draining it through ``run_batch`` (in the thread).

    ``run_batch`` gets at most ``max_batch`` consecutive jobs (or one ``alone``
    job) and must not raise for a job's own failure; whatever it raises is
    dropped (each job keeps the pessimistic error it was made with) and the
    thread goes on with the next batch. A job with ``stop`` set by ``run_batch``
    ends the thread after its batch. ``run_batch`` is held weakly, so a store
    dropped without ``close`` is still collected (and its connection closed).
    """

    __slots__ = (
        "_idle",
        "_idle_seconds",
        "_lock",
        "_max_batch",
        "_name",
        "_pending",
        "_run_batch",
        "_running",
    )

    def __init__(
        self,
        run_batch: Callable[[list[Any]], None],  # a bound method (held weakly)
        *,
        max_batch: int,
        name: str,
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        self._run_batch: Callable[[], Callable[[list[Any]], None] | None] = (
            weakref.WeakMethod(run_batch)
            if hasattr(run_batch, "__self__")
            else lambda: run_batch
        )
        self._idle_seconds = idle_seconds
        self._max_batch = max_batch
        self._name = name
        self._pending: deque[WriterJob] = deque()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._running = False

    async def call(self, job: WriterJob) -> None:
        """Queue ``job`` and wait, uncancellably, until its batch has run."""
        trio = sys.modules.get("trio")
        if trio is not None:
            try:
                token = trio.lowlevel.current_trio_token()
            except RuntimeError:
                token = None
            if token is not None:
                job.loop = token
                job.wake = partial(trio.lowlevel.reschedule, trio.lowlevel.current_task())
                self._submit(job)
                await trio.lowlevel.wait_task_rescheduled(_never_abort)
                return
        done = anyio.Event()
        job.loop = asyncio.get_running_loop()
        job.wake = done.set
        self._submit(job)
        with anyio.CancelScope(shield=True):
            await done.wait()

    def _submit(self, job: WriterJob) -> None:
        with self._lock:
            self._pending.append(job)
            if self._running:
                self._idle.notify()
                return
            self._running = True
        threading.Thread(target=self._drain, name=self._name, daemon=True).start()

    def _take(self) -> list[WriterJob] | None:
        """The next batch, waiting for one; None once idle for ``idle_seconds``."""
        with self._lock:
            while not self._pending:
                if not self._idle.wait(self._idle_seconds) and not self._pending:
                    self._running = False
                    return None
            pending = self._pending
            if pending[0].alone:
                return [pending.popleft()]
            batch: list[WriterJob] = []
            while pending and not pending[0].alone and len(batch) < self._max_batch:
                batch.append(pending.popleft())
            return batch

    def _drain(self) -> None:
        """The thread: run batch after batch, waking each batch's callers on their loop."""
        while (batch := self._take()) is not None:
            self._run_and_post(batch)
            stop = any(getattr(job, "stop", False) for job in batch if job.alone)
            del batch  # not kept while idle: its jobs may hold the store
            if stop:
                with self._lock:
                    if not self._pending:
                        self._running = False
                        return

    def _run_and_post(self, batch: list[WriterJob]) -> None:
        run = self._run_batch()
        try:
            if run is not None:
                run(batch)
        except Exception:  # noqa: BLE001, S110 -- every job keeps its pessimistic error
            pass
        finally:
            _post(batch)


def _post(batch: list[WriterJob]) -> None:
    """Hand ``batch`` back to its callers' loops: one non-blocking call per loop."""
    loop = batch[0].loop
    if all(job.loop is loop for job in batch):
        _post_to(loop, batch)
        return
    loops: dict[int, list[WriterJob]] = {}
    for job in batch:
        loops.setdefault(id(job.loop), []).append(job)
    for jobs in loops.values():
        _post_to(jobs[0].loop, jobs)


def _post_to(loop: Any, jobs: list[WriterJob]) -> None:
    try:
        if isinstance(loop, asyncio.AbstractEventLoop):
            loop.call_soon_threadsafe(_wake_all, jobs)
        else:
            loop.run_sync_soon(_wake_all, jobs)
    except RuntimeError:
        pass  # the loop has finished: nobody is waiting there any more
