"""The handler runtime without a store: a bounded in-memory queue, run after the answer.

The same rules as the store's inbox, kept in this process only: one queue per
``queue_key`` (a user, a group, a business number) whose head alone runs, so a
user's updates run one at a time in the order they were received; up to
``concurrency`` queues run at once (a run waiting for the user gives its slot
back, up to ``max_waiting`` such runs: ``RunSlots``); each run has a deadline; a failed run is
retried with exponential backoff and jitter (holding back that queue's later
updates) up to ``max_attempts``, then dropped as a dead letter (at once for
``DeadLetter`` and ``ReplyOutcomeUnknown``). A full queue
refuses the whole delivery (503 ``handlers_busy``). A crash or a stop loses
what was not run: the start-up line and ``docs/handlers.md`` say so. Waits,
bursts and the users' states work as over the inbox (``MemoryConversation``),
the states kept in this process only.
"""

from __future__ import annotations

import heapq
import logging
import math
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

import trio

from svc.store import DeadLetter, RunSlots
from svc.webhook import (
    HandlerContext,
    ListenerTimeout,
    ReplyOutcomeUnknown,
    Update,
    WebhookFacade,
    queue_key,
)

from ._conversation import Arrivals, Conversation, coalesce_of
from ._handler_options import HandlerOptions
from ._memory_conversation import Deadline, MemoryConversation, MemoryStates, QueuedUpdate

__all__ = ["MemoryRuntime", "RunReport", "retry_delay"]

_MAX_ERROR_NAME: Final = 80


@dataclass(frozen=True, slots=True, kw_only=True)
class RunReport:
    """One finished run: its update kind, outcome and duration (no user data)."""

    kind: str
    outcome: str
    """``success``, ``error``, ``timeout`` or ``dead``."""
    seconds: float


def retry_delay(options: HandlerOptions, attempts: int, jitter: Callable[[], float]) -> float:
    """Seconds before the next run after ``attempts`` failed ones: ``retry_delay`` doubled per
    failure, capped at ``max_retry_delay``, times a jitter factor in [0.5, 1)."""
    base = min(options.max_retry_delay, options.retry_delay * math.pow(2, max(0, attempts - 1)))
    return base * (0.5 + jitter() / 2)


@dataclass(order=True, slots=True)
class _Delayed:
    due: float
    order: int
    queue: str = field(compare=False)


class MemoryRuntime:
    """Runs ``facade.run`` for each submitted update, after the answer, in this process."""

    def __init__(
        self,
        *,
        facade: WebhookFacade,
        context_for: Callable[[Update, None, Conversation], HandlerContext],
        options: HandlerOptions,
        logger: logging.Logger,
        on_run: Callable[[RunReport], None] | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self._facade = facade
        self._context_for = context_for
        self._options = options
        self._logger = logger
        self._on_run = on_run
        self._jitter = jitter
        self._queues: dict[str, deque[QueuedUpdate]] = {}
        self._arrivals = Arrivals()
        self._states = MemoryStates(options.state_ttl.total_seconds())
        self._ready: deque[str] = deque()
        self._delayed: list[_Delayed] = []
        self._running = 0
        self._slots = RunSlots(options.concurrency, options.max_waiting, self.wake)
        self._size = 0
        self._order = 0
        self._changed = trio.Event()
        self._settled = trio.Event()
        self._stopping = False
        self._done = trio.Event()
        self._started = False
        self._runs: trio.CancelScope | None = None

    @property
    def options(self) -> HandlerOptions:
        """The runtime's settings."""
        return self._options

    @property
    def running(self) -> bool:
        """Whether the runtime's loop runs (started, not stopped)."""
        return self._started and not self._done.is_set()

    @property
    def size(self) -> int:
        """Updates held: waiting, retrying later, or running."""
        return self._size

    def submit(self, updates: Sequence[Update]) -> bool:
        """Queue ``updates`` in order; False (nothing queued) when they do not all fit."""
        if self._size + len(updates) > self._options.queue_capacity:
            return False
        now = trio.current_time()
        for update in updates:
            key = queue_key(update)
            queue = self._queues.get(key)
            if queue is None:
                queue = self._queues[key] = deque()
                self._ready.append(key)
            queue.append(QueuedUpdate(update, key, now))
        self._size += len(updates)
        self._arrivals.notify()
        self.wake()
        return True

    def wake(self) -> None:
        """Look for due work now."""
        self._changed.set()

    def _notify_settled(self) -> None:
        self._settled.set()
        self._settled = trio.Event()

    def _idle(self) -> bool:
        if self._done.is_set():
            return True
        due_now = bool(self._delayed) and self._delayed[0].due <= trio.current_time()
        return self._running == 0 and not self._ready and not due_now

    async def wait_idle(self) -> None:
        """Return once no run is in flight and nothing is due (a retry due later is not)."""
        while not self._idle():
            await self._settled.wait()

    async def run(
        self, *, task_status: trio.TaskStatus[MemoryRuntime] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """The runtime's loop, for ``nursery.start``; returns after ``stop()`` and the runs in
        flight have ended. It may run again after that (what it held is kept)."""
        self._started, self._stopping, self._done = True, False, trio.Event()
        try:
            async with trio.open_nursery() as runs:
                self._runs = runs.cancel_scope
                task_status.started(self)
                while not self._stopping:
                    now = trio.current_time()
                    while self._delayed and self._delayed[0].due <= now:
                        self._ready.append(heapq.heappop(self._delayed).queue)
                    while self._ready and self._slots.free > 0:
                        key = self._ready.popleft()
                        self._running += 1
                        self._slots.take(1)
                        runs.start_soon(self._run_head, key)
                    if self._idle():
                        self._notify_settled()
                    deadline = self._delayed[0].due if self._delayed else math.inf
                    with trio.move_on_at(deadline):
                        await self._changed.wait()
                    self._changed = trio.Event()
        finally:
            self._done.set()
            self._notify_settled()

    async def run_until_idle(self) -> None:
        """Run the loop in the caller's task until nothing is due and no run is in flight
        (tests and scripts that do not serve the app)."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.run)
            await self.wait_idle()
            await self.stop()

    async def stop(self, grace: float | None = None) -> None:
        """Stop starting runs and wait for those in flight, for ``grace`` seconds at most
        (default: the run deadline), then cancel them; what is still queued is lost."""
        self._stopping = True
        self.wake()
        if not self._started:
            return
        with trio.move_on_after(self._options.timeout if grace is None else grace):
            await self._done.wait()
        if not self._done.is_set() and self._runs is not None:
            self._runs.cancel()
            await self._done.wait()

    async def _run_head(self, key: str) -> None:
        queue = self._queues[key]
        item = queue[0]
        item.attempts += 1
        started = trio.current_time()
        error: BaseException | None = None
        outcome = "success"
        deadline = Deadline(self._options.timeout, self._slots)
        conversation: MemoryConversation | None = None
        try:
            with deadline.scope:
                conversation = MemoryConversation(
                    queue=queue,
                    arrivals=self._arrivals,
                    deadline=deadline,
                    state=self._states.load(key),
                )
                await self._converse(item, conversation)
            if deadline.scope.cancelled_caught:
                outcome = "timeout"
        except (ReplyOutcomeUnknown, DeadLetter) as exc:
            outcome, error = "dead", exc
        except Exception as exc:  # noqa: BLE001 - a handler's failure is retried, never raised
            outcome, error = "error", exc
        seconds = trio.current_time() - started
        name = type(error).__name__[:_MAX_ERROR_NAME] if error is not None else outcome
        if (
            outcome != "success"
            and outcome != "dead"
            and item.attempts >= self._options.max_attempts
        ):
            outcome = "dead"
        if outcome == "success" and conversation is not None:
            for entry in conversation.taken:  # consumed by the run's waits and burst
                queue.remove(entry)
                self._size -= 1
        if outcome == "success" or outcome == "dead":
            self._finish(key)
            if outcome == "dead":
                if isinstance(error, ReplyOutcomeUnknown):
                    reason = "send_outcome_unknown"
                elif isinstance(error, DeadLetter):
                    reason = error.reason[:_MAX_ERROR_NAME]
                else:
                    reason = name
                self._logger.warning(
                    "handler run dead-lettered kind=%s reason=%s attempts=%d (not kept: no store)",
                    item.update.kind,
                    reason,
                    item.attempts,
                )
        else:
            delay = retry_delay(self._options, item.attempts, self._jitter)
            self._logger.warning(
                "handler run failed kind=%s outcome=%s error=%s attempt=%d; retry in %.1f s",
                item.update.kind,
                outcome,
                name,
                item.attempts,
                delay,
            )
            self._order += 1
            heapq.heappush(self._delayed, _Delayed(started + seconds + delay, self._order, key))
        self._running -= 1
        if deadline.holds_slot:
            self._slots.release()
        if self._on_run is not None:
            self._on_run(RunReport(kind=item.update.kind, outcome=outcome, seconds=seconds))
        self.wake()
        self._notify_settled()

    async def _converse(self, item: QueuedUpdate, conversation: MemoryConversation) -> None:
        """Gather the burst (a coalesced kind), run the facade, keep the state it left; an
        uncaught ``ListenerTimeout`` ends the run as a success."""
        coalesce = coalesce_of(self._facade, item.update)
        if coalesce is not None:
            await conversation.gather(coalesce)
        try:
            await self._facade.run(self._context_for(item.update, None, conversation))
        except ListenerTimeout as exc:
            self._logger.info(
                "listener timed out kind=%s listener=%s; the run ends",
                item.update.kind,
                exc.listener,
            )
        self._states.save(item.queue, conversation.state)

    def _finish(self, key: str) -> None:
        """The head of ``key`` is done: the next one becomes ready, or the queue goes."""
        queue = self._queues[key]
        queue.popleft()
        self._size -= 1
        if queue:
            self._ready.append(key)
        else:
            del self._queues[key]
