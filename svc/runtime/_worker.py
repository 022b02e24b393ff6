"""The handler runtime's one loop, for both modes: claim the due heads into free run slots,
run each under its deadline and lease, and settle it by the shared retry policy.

Start it with structured concurrency::

    runtime = HandlerRuntime(queue=..., facade=..., context_for=..., options=..., ...)
    await nursery.start(runtime.run)
    runtime.wake()           # new updates were accepted: claim now
    await runtime.stop()     # stop claiming; the runs in flight end (or are cancelled)

Every rule of ``docs/handlers.md`` about how a run goes lives in this module once: the
deadline (``RunControl``), the lease (``LeaseKeeper``, ``keep_lease``), the burst and the waits
(``RunConversation``), the state's write, the verdict (``svc.store.settle``), the log
line and the event of each outcome.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Final

import trio
from prometheus_client import CollectorRegistry

from svc.store import (
    EXHAUSTED,
    TIMEOUT,
    DeadLetter,
    Failure,
    InboxRow,
    PersistenceError,
    PersistenceValidationError,
    RetryPolicy,
    Verdict,
    failure_of,
    settle,
)
from svc.webhook import (
    HandlerContext,
    ReplyOutcomeUnknown,
    StateTooLarge,
    Update,
    UserState,
    WebhookFacade,
    queue_key,
    timed_out_wait,
)

from ._control import LeaseKeeper, RunControl, RunTasks
from ._conversation import Arrivals, Conversation, RunConversation
from ._events import (
    Observer,
    RunEnded,
    RunOutcome,
    RunStarted,
    RuntimeEvent,
    StateWritten,
    UpdateQueued,
)
from ._memory_queue import MemoryQueue
from ._metrics import RuntimeReporter
from ._options import HandlerOptions
from ._queue import Claim, StateChange
from ._slots import RunSlots
from ._store_queue import StoreQueue

__all__ = ["CONTINUED_RUNS", "INVALID_COMPLETION", "ContextFor", "HandlerRuntime"]

INVALID_COMPLETION: Final = "invalid_completion"
"""The error of a run whose completion the store refused (a consumed id not of its queue):
buried, as no rerun changes it."""
_MAX_NAME: Final = 80
CONTINUED_RUNS: Final = 32
"""After this many runs of one queue in a row in one slot, a success continues with another
queue's due head first, when there is one, whatever its record order: a user's backlog holds
a slot for this many runs at most while others wait."""
_TIDY_EVERY: Final = 3600.0
_STATISTICS_EVERY: Final = 1.0

ContextFor = Callable[[Update, str, Conversation], HandlerContext]
"""Builds the context a handler runs in: the update, its key (sends are keyed by it) and
the run's conversation (the HTTP layer's, whose sends go through the service)."""


def _ignore(event: RuntimeEvent) -> None:
    """The observer when none is given."""


def _shielded(observer: Observer, logger: logging.Logger) -> Observer:
    """``observer``, its failures logged (by class name) and never raised: an observer's
    failure never stops a run, the loop or the ingest that queues an update."""

    def observe(event: RuntimeEvent) -> None:
        try:
            observer(event)
        except Exception as exc:  # noqa: BLE001 -- reported; the run goes on
            logger.warning("runtime observer failed error=%s", type(exc).__name__[:_MAX_NAME])

    return observe


def _state_change(state: UserState) -> StateChange | None:
    """What a success writes of the state: None when unchanged. A state no rerun can write
    (over ``MAX_STATE_BYTES``, or not JSON) is a dead letter at once."""
    try:
        # Both read the canonical JSON: a value put in place (``state["cart"].append``) is
        # checked here first.
        return StateChange(state.document()) if state.changed else None
    except StateTooLarge:
        raise DeadLetter("state_too_large") from None
    except TypeError:
        raise DeadLetter("state_not_json") from None


class HandlerRuntime:
    """Runs ``facade.run`` for each accepted update, after the answer, over ``queue``."""

    def __init__(
        self,
        *,
        queue: MemoryQueue | StoreQueue,
        facade: WebhookFacade,
        context_for: ContextFor,
        options: HandlerOptions,
        now: Callable[[], datetime],
        logger: logging.Logger,
        registry: CollectorRegistry,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.queue: Final = queue
        self._facade = facade
        self._context_for = context_for
        self.options: Final = options
        self._now = now
        self._logger = logger
        self._observer = (
            _ignore if options.observer is None else _shielded(options.observer, logger)
        )
        self._reporter = RuntimeReporter(registry, now=now)
        self._policy = RetryPolicy(
            retry_delay_ms=round(options.retry_delay * 1000),
            max_retry_delay_ms=round(options.max_retry_delay * 1000),
            max_attempts=options.max_attempts,
            jitter=jitter,
        )
        self._arrivals = Arrivals()
        self._slots = RunSlots(options.concurrency, options.max_waiting, self._kick)
        self._wakeup = trio.Event()
        self._in_flight = 0
        self._refreshing = False
        """Whether a statistics refresh is under way (one at a time, beside the turns)."""
        self._idle = False
        self._idle_event = trio.Event()
        self._stopping = False
        self._done = trio.Event()
        self._started = False
        self._runs: trio.CancelScope | None = None
        self._leases: LeaseKeeper | None = None
        self._grace = options.timeout

    # --- what the HTTP layer calls ------------------------------------------------------

    @property
    def keeps_updates(self) -> bool:
        """Whether accepted updates survive a restart (a store holds them)."""
        return isinstance(self.queue, StoreQueue)

    def rows(self, pairs: Sequence[tuple[Update, str]]) -> list[InboxRow]:
        """With a store: the sealed inbox rows of ``(update, key)`` pairs, which the caller
        records with the delivery, then ``accepted``."""
        assert isinstance(self.queue, StoreQueue)
        return self.queue.rows(pairs)

    def accept(
        self, pairs: Sequence[tuple[Update, str]], *, wake: bool = True
    ) -> list[str] | None:
        """Without a store: queue the pairs not seen before; their keys, or None (nothing
        queued) when they do not all fit. ``wake``: as for ``accepted``."""
        assert isinstance(self.queue, MemoryQueue)
        keys = self.queue.accept(pairs, now=self._now())
        if keys:
            self.accepted(pairs, set(keys), wake=wake)
        return keys

    def accepted(
        self, pairs: Sequence[tuple[Update, str]], keys: set[str], *, wake: bool = True
    ) -> None:
        """The updates of ``keys`` were queued: tell the observer, and wake the loop and the
        waiting runs (``wake=False``: the caller calls ``wake()`` itself, as the webhook
        route does once its answer is written)."""
        if self._observer is not _ignore:
            for update, key in pairs:
                if key in keys:
                    self._observer(
                        UpdateQueued(update_key=key, queue=queue_key(update), kind=update.kind)
                    )
        if wake:
            self.wake()

    def wake(self) -> None:
        """New updates were accepted: claim now, and let waiting runs look again."""
        self._arrivals.notify()
        self._kick()

    def _kick(self) -> None:
        self._idle = False
        self._wakeup.set()

    @property
    def running(self) -> bool:
        """Whether the loop runs (started, not stopped)."""
        return self._started and not self._done.is_set()

    # --- the loop -----------------------------------------------------------------------

    async def run(
        self, *, task_status: trio.TaskStatus[HandlerRuntime] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """The loop, for ``nursery.start``: each turn claims as many due heads as there are
        free slots, then waits for a run to end or pause, ``wake()``, a retry's due time or
        ``poll_interval`` (items other processes recorded). Queue faults are logged and
        never end it. Returns after ``stop()``."""
        self._started, self._stopping, self._done = True, False, trio.Event()
        next_tidy = next_statistics = trio.current_time()
        try:
            async with trio.open_nursery() as runs:
                self._runs = runs.cancel_scope
                self._leases = LeaseKeeper(
                    runs,
                    self.queue,
                    lease=self.options.lease,
                    now=self._now,
                    on_error=self._queue_fault,
                )
                watching = trio.CancelScope()
                if isinstance(self.queue, StoreQueue):
                    runs.start_soon(self._watch, self.queue, watching)
                task_status.started(self)
                while not self._stopping:
                    self._wakeup = trio.Event()
                    clock = trio.current_time()
                    # Beside the turn, not in it: both read or delete across the whole inbox
                    # (a count of every item, a scan for old dead ones), and a claim must not
                    # wait for that however large one user's backlog grows.
                    if clock >= next_tidy:
                        next_tidy = clock + _TIDY_EVERY
                        runs.start_soon(self._guarded, self.queue.tidy(now=self._now()))
                    if clock >= next_statistics and not self._refreshing:
                        next_statistics = clock + _STATISTICS_EVERY
                        self._refreshing = True
                        runs.start_soon(self._refresh)
                    free = self._slots.free
                    if free > 0:
                        await self._claim(runs, free)
                    wait = self.options.poll_interval
                    if isinstance(self.queue, MemoryQueue):
                        due = self.queue.next_due()
                        wait = math.inf if due is None else (due - self._now()).total_seconds()
                    with trio.move_on_after(max(wait, 0.0)):
                        await self._wakeup.wait()
                watching.cancel()
                self._leases.close()
                runs.cancel_scope.deadline = trio.current_time() + self._grace
        finally:
            self._done.set()
            self._set_idle()

    async def _watch(self, queue: StoreQueue, scope: trio.CancelScope) -> None:
        """Wake at once when another process records items (the store's signal: PostgreSQL's
        ``NOTIFY``), rather than at the next poll; a failed watch leaves the poll alone."""
        with scope:
            await self._guarded(queue.store.watch_inbox(self.wake))

    async def _claim(self, runs: trio.Nursery, free: int) -> None:
        self._slots.take(free)  # held across the claim: no resuming run takes them
        claims: Sequence[Claim] | None = None
        try:
            claims = await self.queue.claim(now=self._now(), limit=free, lease=self.options.lease)
        except Exception as exc:  # noqa: BLE001 -- reported, tried again next turn
            self._queue_fault(exc)
        finally:
            self._slots.release(free - len(claims or ()), wake=False)
        if claims is None:
            return
        for claim in claims:
            self._in_flight += 1
            runs.start_soon(self._run, claim)
        # Idle: nothing due, nothing running, and no wake() since this claim began.
        if not claims and self._in_flight == 0 and not self._wakeup.is_set():
            self._idle = True
            self._set_idle()

    def _set_idle(self) -> None:
        if self._idle or self._done.is_set():
            event, self._idle_event = self._idle_event, trio.Event()
            event.set()

    async def wait_idle(self) -> None:
        """Return once a claim found nothing due and no run is in flight (or the loop
        ended); a retry due later does not keep it busy."""
        while not self._idle and not self._done.is_set():
            await self._idle_event.wait()

    async def stop(self, grace: float | None = None) -> None:
        """Stop claiming and wait for the runs in flight, ``grace`` seconds at most (default:
        the run deadline), then cancel them: with a store their items run again once their
        leases lapse; without one they are lost."""
        self._stopping = True
        self._grace = self.options.timeout if grace is None else grace
        self._kick()
        if self._started:
            await self._done.wait()

    async def run_until_idle(self) -> None:
        """Run the loop in the caller's task until nothing is due and no run is in flight
        (tests and scripts that do not serve the app)."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.run)
            await self.wait_idle()
            await self.stop()

    # --- one run ------------------------------------------------------------------------

    async def _run(self, claim: Claim) -> None:
        """Run ``claim`` in its slot, then each item its success continued with
        (``_settle``), until a run ends without one."""
        streak = 0
        try:
            following: Claim | None = claim
            while following is not None:
                current, following = following, None
                control = RunControl(self.options.timeout, self._slots)
                try:
                    following = await self._run_one(current, control, streak >= CONTINUED_RUNS)
                finally:
                    if following is None and control.holds_slot:
                        self._slots.release()
                if following is not None:
                    streak = streak + 1 if following.queue == current.queue else 0
        finally:
            self._in_flight -= 1
            self._kick()

    async def _run_one(self, claim: Claim, control: RunControl, others_first: bool) -> Claim | None:
        """One run, settled; the claim its success continued with, if any."""
        started = trio.current_time()
        if self._observer is not _ignore:
            self._observer(
                RunStarted(
                    update_key=claim.update_key,
                    queue=claim.queue,
                    kind=claim.kind,
                    attempt=claim.attempt,
                )
            )
        if self._policy.max_attempts is not None and claim.attempt > self._policy.max_attempts:
            failure: Failure | None = Failure(EXHAUSTED)  # its earlier runs crashed
            error: BaseException | None = None
            change: StateChange | None = None
        else:
            failure, error, change = await self._attempt(claim, control)
            if self.options.after_run is not None:
                self.options.after_run(claim)
        seconds = trio.current_time() - started
        return await self._settle(claim, control, failure, error, change, seconds, others_first)

    async def _attempt(
        self, claim: Claim, control: RunControl
    ) -> tuple[Failure | None, Exception | None, StateChange | None]:
        """The handler once, under its deadline and lease: the failure (None on success),
        the exception, and the state change its success writes."""
        error: Exception | None = None
        change: StateChange | None = None
        assert self._leases is not None
        tasks = self._leases.hold(claim, control)
        try:
            with control.scope:
                change = await self._converse(claim, control, tasks)
        except Exception as exc:  # noqa: BLE001 -- a handler's failure is settled, never raised
            error = exc
        finally:
            self._leases.release(control)
            await tasks.aclose()  # the lease's renewals, the handler's own background work
        if control.lost is not None:
            return Failure(control.lost), error, None
        if control.scope.cancelled_caught:
            return Failure(TIMEOUT), error, None
        if error is not None:
            return failure_of(error), error, None
        return None, None, change

    async def _converse(
        self, claim: Claim, control: RunControl, tasks: RunTasks
    ) -> StateChange | None:
        """Open the update and the user's state, gather the burst of a coalesced kind, run
        the facade (its background work in ``tasks``, the run's); the state change
        of its success. An uncaught ``ListenerTimeout`` (or a group of nothing else) ends the
        run as a success; a reply whose outcome is unknown (even in a group) is a dead letter."""
        update = self.queue.open(claim)
        conversation = RunConversation(
            queue=self.queue,
            claim=claim,
            update=update,
            state=self.queue.load_state(claim, now=self._now()),
            control=control,
            arrivals=self._arrivals,
            poll_interval=self.options.poll_interval,
            now=self._now,
            observer=self._observer,
            tasks=tasks,
        )
        coalesce = self._facade.coalesce_for(update)
        if coalesce is not None:
            await conversation.gather(coalesce)
        try:
            await self._facade.run(self._context_for(update, claim.update_key, conversation))
        except Exception as exc:
            # Also inside an exception group: a handler's own nursery wraps what it raised.
            if isinstance(exc, ReplyOutcomeUnknown) or (
                isinstance(exc, ExceptionGroup) and exc.subgroup(ReplyOutcomeUnknown) is not None
            ):
                raise DeadLetter("send_outcome_unknown") from None
            timeout = timed_out_wait(exc)
            if timeout is None:
                raise
            self._logger.info(
                "listener timed out kind=%s listener=%s; the run ends",
                update.kind,
                timeout.listener,
            )
        return _state_change(conversation.state)

    async def _settle(
        self,
        claim: Claim,
        control: RunControl,
        failure: Failure | None,
        error: BaseException | None,
        change: StateChange | None,
        seconds: float,
        others_first: bool,
    ) -> Claim | None:
        """Tell the queue how the run ended, under its lease; log, count and report it. A
        success of a run that holds its slot, while the loop runs and no paused run waits to
        resume (it goes first), is completed together with the claim of its queue's next due
        head (``others_first``: another queue's due head first, when there is one): the claim
        this slot runs next (None: none)."""
        decision = settle(failure, attempts=claim.attempt, policy=self._policy)
        now = self._now()
        outcome: RunOutcome
        kept = True
        following: Claim | None = None
        try:
            if decision.verdict is Verdict.SUCCEEDED:
                try:
                    if control.holds_slot and not (self._stopping or self._slots.resuming):
                        kept, following = await self.queue.complete_and_continue(
                            claim,
                            consumed=tuple(control.consumed),
                            state=change,
                            now=now,
                            lease=self.options.lease,
                            others_first=others_first,
                        )
                    else:
                        kept = await self.queue.complete(
                            claim, consumed=tuple(control.consumed), state=change, now=now
                        )
                except PersistenceValidationError:
                    decision = settle(
                        Failure(INVALID_COMPLETION, final=True),
                        attempts=claim.attempt,
                        policy=self._policy,
                    )
                else:
                    if kept and change is not None:
                        self._observer(StateWritten(queue=claim.queue, document=change.document))
            if decision.verdict is Verdict.RETRY:
                kept = await self.queue.fail(
                    claim, now=now, delay=decision.delay_ms / 1000, error=decision.error or ""
                )
            elif decision.verdict is Verdict.DEAD:
                kept = await self.queue.bury(claim, now=now, error=decision.error or "")
        except Exception as exc:  # noqa: BLE001 -- reported; the lease lapses and it reruns
            self._queue_fault(exc)
            return None
        if decision.verdict is Verdict.SUCCEEDED:
            outcome = "success"
        elif decision.verdict is Verdict.DEAD:
            outcome = "dead"
        else:
            outcome = "timeout" if decision.error == TIMEOUT else "error"
        retry_in = decision.delay_ms / 1000 if decision.verdict is Verdict.RETRY else None
        self._log(claim, outcome, decision.error, retry_in, kept)
        self._reporter.run(outcome, seconds)
        if self._observer is not _ignore:
            self._observer(
                RunEnded(
                    update_key=claim.update_key,
                    queue=claim.queue,
                    kind=claim.kind,
                    attempt=claim.attempt,
                    outcome=outcome,
                    seconds=seconds,
                    reason=decision.error,
                    retry_in=retry_in,
                    error=error,
                )
            )
        return following

    def _log(
        self,
        claim: Claim,
        outcome: RunOutcome,
        error: str | None,
        retry_in: float | None,
        kept: bool,
    ) -> None:
        """The one line a run's end writes: none for a success; a retry, a dead letter or a
        refused settlement (the lease was lost) name the kind and the cause, never user data."""
        if not kept:
            self._logger.warning(
                "handler run fenced kind=%s outcome=%s error=%s attempt=%d; its lease was lost",
                claim.kind,
                outcome,
                error,
                claim.attempt,
            )
        elif outcome == "dead":
            self._logger.warning(
                "handler run dead-lettered kind=%s reason=%s attempt=%d%s",
                claim.kind,
                (error or "dead")[:_MAX_NAME],
                claim.attempt,
                "" if self.queue.keeps_dead_letters else " (not kept: no store)",
            )
        elif outcome != "success":
            self._logger.warning(
                "handler run failed kind=%s outcome=%s error=%s attempt=%d; retry in %.1f s",
                claim.kind,
                outcome,
                (error or outcome)[:_MAX_NAME],
                claim.attempt,
                retry_in or 0.0,
            )

    # --- faults and statistics ----------------------------------------------------------

    def _queue_fault(self, exc: Exception) -> None:
        code = exc.code if isinstance(exc, PersistenceError) else type(exc).__name__[:_MAX_NAME]
        self._logger.warning("inbox worker store call failed error=%s", code)

    async def _guarded(self, call: Awaitable[None]) -> None:
        try:
            await call
        except Exception as exc:  # noqa: BLE001 -- reported, tried again later
            self._queue_fault(exc)

    async def _refresh(self) -> None:
        try:
            snapshot = await self.queue.statistics()
        except Exception as exc:  # noqa: BLE001 -- reported, tried again next turn
            self._queue_fault(exc)
            return
        finally:
            self._refreshing = False
        self._reporter.refresh(snapshot)

    def statistics(self) -> RuntimeReporter:
        """The reporter of the runtime's metrics."""
        return self._reporter
