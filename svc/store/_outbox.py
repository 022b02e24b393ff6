"""The outbox worker: one tick (``run_outbox_worker_once``), the interval loop, the reporter.

Start the loop with structured concurrency::

    handle = await nursery.start(run_outbox_worker, store, OutboxWorkerOptions(handler=send))
    ...
    await handle.stop()   # stops the timer, waits for the tick in flight

The worker is single-process by design (spec rule 9); several workers on one
PostgreSQL still never claim the same item because claims use SKIP LOCKED.
"""

from __future__ import annotations

import functools
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

import anyio
import anyio.abc
from prometheus_client import CollectorRegistry, Counter, Gauge

from . import _validate as check
from ._base import MAX_CLAIM_LIMIT
from ._contract import PersistenceStore
from ._errors import PersistenceError, PersistenceValidationError
from ._leases import (
    EXHAUSTED,
    MAX_RETRY_DELAY_MS,
    TIMEOUT,
    Failure,
    RetryPolicy,
    Verdict,
    attempt,
    exhausted,
    settle,
)
from ._records import OUTBOX_LEASE_MS, OutboxItem, OutboxStatus
from ._time import utc_now

__all__ = [
    "OutboxHandler",
    "OutboxReport",
    "OutboxReporter",
    "OutboxWorkerHandle",
    "OutboxWorkerOptions",
    "OutboxWorkerStatistics",
    "run_outbox_worker",
    "run_outbox_worker_once",
]

OutboxHandler = Callable[[OutboxItem], Awaitable[None]]
"""Delivers one item; returning means success, raising ``Exception`` means retry later (a
``GraphError``'s retry hint may say sooner never, or not before a wait)."""

_log: Final = logging.getLogger("svc.store.outbox")


@dataclass(frozen=True, slots=True, kw_only=True)
class OutboxReport:
    """What one tick did; ``pending`` is ``count_outbox_pending()`` after the tick.

    ``failed`` counts every unsuccessful item; ``timed_out`` those whose
    handler overran its timeout and ``dead`` those moved to ``dead`` (last
    attempt spent) are among them. ``dead_depth`` is the dead items after the tick.
    """

    processed: int
    succeeded: int
    failed: int
    pending: int
    timed_out: int = 0
    dead: int = 0
    dead_depth: int = 0


async def run_outbox_worker_once(
    store: PersistenceStore,
    *,
    now: datetime,
    limit: int,
    retry_delay_ms: int,
    handler: OutboxHandler,
    max_attempts: int | None = None,
    handler_timeout: float | None = None,
    max_retry_delay_ms: int | None = None,
    jitter: Callable[[], float] | None = None,
) -> OutboxReport:
    """Claim due items, run their handlers side by side, mark success, reschedule or bury.

    Each handler runs under ``handler_timeout`` seconds (a hung one is
    cancelled), so one item never holds up the others of its tick. A failure
    reschedules the item with exponential backoff from ``retry_delay_ms``
    (capped at ``max_retry_delay_ms``, jittered by ``jitter``); the failure of
    attempt ``max_attempts`` marks it ``dead``, as does claiming an item whose
    attempts already exceed it (a crash loop). A ``GraphError`` raised by the
    handler is read by its retry hint: ``fix_request`` and ``do_not_retry``
    bury the item at once (no retry can change them), ``retry_later`` waits at
    least the hint's wait; a ``DeadLetter`` buries it at once with its reason; any
    other failure retries as above (the shared policy, ``_leases``). A completion
    refused because the lease moved on counts as failed.
    """
    items = await store.claim_outbox_items(now=now, limit=limit)
    policy = RetryPolicy(
        retry_delay_ms=retry_delay_ms,
        max_retry_delay_ms=retry_delay_ms if max_retry_delay_ms is None else max_retry_delay_ms,
        max_attempts=max_attempts,
        jitter=jitter,
    )
    tally = _Tally()
    async with anyio.create_task_group() as group:
        for item in items:
            group.start_soon(
                _settle_item, store, item, handler, now, policy, handler_timeout, tally
            )
    if tally.faults:
        raise tally.faults[0]
    pending = await store.count_outbox_pending()
    dead_depth = await store.count_outbox_items(status=OutboxStatus.DEAD)
    return OutboxReport(
        processed=len(items),
        succeeded=tally.succeeded,
        failed=tally.failed,
        pending=pending,
        timed_out=tally.timed_out,
        dead=tally.dead,
        dead_depth=dead_depth,
    )


@dataclass(slots=True)
class _Tally:
    """What one tick's items ended as, and the store errors met marking them; its tasks share
    it, each adding only after its own awaits."""

    succeeded: int = 0
    failed: int = 0
    timed_out: int = 0
    dead: int = 0
    faults: list[Exception] = field(default_factory=list)


async def _settle_item(
    store: PersistenceStore,
    item: OutboxItem,
    handler: OutboxHandler,
    now: datetime,
    policy: RetryPolicy,
    handler_timeout: float | None,
    tally: _Tally,
) -> None:
    """Run one claimed item's handler (unless its attempts are spent) and mark the item at
    once, whatever the others of its tick do; a store error is kept in ``tally.faults``."""
    assert item.lease_id is not None
    failure = (
        Failure(EXHAUSTED)
        if exhausted(item.attempts, policy)
        else await attempt(functools.partial(handler, item), handler_timeout)
    )
    decision = settle(failure, attempts=item.attempts, policy=policy)
    try:
        if decision.verdict is Verdict.SUCCEEDED:
            ok = await store.mark_outbox_item_succeeded(id=item.id, lease_id=item.lease_id, now=now)
            if ok:
                tally.succeeded += 1
            else:
                tally.failed += 1
            return
        tally.failed += 1
        tally.timed_out += decision.error == TIMEOUT
        if decision.verdict is Verdict.DEAD:
            buried = await store.mark_outbox_item_dead(
                id=item.id, lease_id=item.lease_id, now=now, error=decision.error
            )
            tally.dead += buried  # after the await: tasks share the tally
            return
        await store.mark_outbox_item_failed(
            id=item.id,
            lease_id=item.lease_id,
            now=now,
            retry_delay_ms=decision.delay_ms,
            error=decision.error,
        )
    except Exception as exc:  # noqa: BLE001 -- re-raised once every item has settled
        tally.faults.append(exc)


def _invalid(message: str) -> PersistenceValidationError:
    return PersistenceValidationError("invalid_options", message)


@dataclass(frozen=True, slots=True, kw_only=True)
class OutboxWorkerOptions:
    """Loop options. ``interval``, the delays and ``handler_timeout`` are seconds (trio style).

    ``now`` is the injected clock; ``schedule(seconds)`` is awaited between
    ticks (default ``anyio.sleep``; tests drive it with trio's MockClock or
    their own trigger). A failed item is retried after ``retry_delay``,
    doubling per attempt up to ``max_retry_delay``, jittered by ``jitter`` (a
    source of floats in [0, 1); None for none); the failure of attempt
    ``max_attempts`` makes it ``dead``. ``handler_timeout`` stays under the
    claim lease so a hung handler is cancelled before another worker may take its item;
    up to ``max_ticks_in_flight`` ticks overlap, so items due later are not held up by it.
    """

    handler: OutboxHandler
    interval: float = 1.0
    batch_limit: int = 10
    retry_delay: float = 30.0
    max_retry_delay: float = 3600.0
    max_attempts: int = 10
    handler_timeout: float = 60.0
    jitter: Callable[[], float] | None = random.random
    max_ticks_in_flight: int = 4
    on_report: Callable[[OutboxReport], None] | None = None
    on_error: Callable[[Exception], None] | None = None
    now: Callable[[], datetime] = utc_now
    schedule: Callable[[float], Awaitable[None]] = field(default=anyio.sleep)

    def __post_init__(self) -> None:
        if not callable(self.handler):
            raise _invalid("handler must be an async callable.")
        check.interval(self.interval)
        if not 1 <= check.option_int(self.batch_limit, "batch_limit") <= MAX_CLAIM_LIMIT:
            raise _invalid(f"batch_limit must be in 1..{MAX_CLAIM_LIMIT}.")
        retry_delay = check.option_seconds(self.retry_delay, "retry_delay")
        if not 0 <= retry_delay * 1000 <= MAX_RETRY_DELAY_MS:
            raise _invalid("retry_delay must be between 0 and 7 days.")
        max_retry_delay = check.option_seconds(self.max_retry_delay, "max_retry_delay")
        if not retry_delay <= max_retry_delay <= MAX_RETRY_DELAY_MS / 1000:
            raise _invalid("max_retry_delay must be between retry_delay and 7 days.")
        if not 1 <= check.option_int(self.max_attempts, "max_attempts") <= 1000:
            raise _invalid("max_attempts must be in 1..1000.")
        handler_timeout = check.option_seconds(self.handler_timeout, "handler_timeout")
        if not 0 < handler_timeout < OUTBOX_LEASE_MS / 1000:
            raise _invalid("handler_timeout must be positive and under the claim lease.")
        if not 1 <= check.option_int(self.max_ticks_in_flight, "max_ticks_in_flight") <= 64:
            raise _invalid("max_ticks_in_flight must be in 1..64.")
        if self.jitter is not None and not callable(self.jitter):
            raise _invalid("jitter must be a callable or None.")

    @property
    def retry_delay_ms(self) -> int:
        """``retry_delay`` in whole milliseconds."""
        return round(self.retry_delay * 1000)


@dataclass(frozen=True, slots=True, kw_only=True)
class OutboxWorkerStatistics:
    """An immutable snapshot of the loop's counters."""

    ticks: int
    skipped: int
    errors: int


class OutboxWorkerHandle:
    """Returned by ``nursery.start(run_outbox_worker, ...)``."""

    __slots__ = ("_errors", "_finished", "_in_flight", "_running", "_skipped", "_ticks", "_timer")

    def __init__(self) -> None:
        self._timer = anyio.CancelScope()
        self._finished = anyio.Event()
        self._running = True
        self._in_flight = 0
        self._ticks = 0
        self._skipped = 0
        self._errors = 0

    def running(self) -> bool:
        """True until ``stop()`` is called or the loop ends."""
        return self._running

    def statistics(self) -> OutboxWorkerStatistics:
        """Ticks started, ticks skipped (``max_ticks_in_flight`` running), tick errors."""
        return OutboxWorkerStatistics(ticks=self._ticks, skipped=self._skipped, errors=self._errors)

    async def stop(self) -> None:
        """Stop the timer and wait for the tick in flight to finish. Idempotent."""
        self._running = False
        self._timer.cancel()
        await self._finished.wait()


def _report_error(options: OutboxWorkerOptions, exc: Exception) -> None:
    if options.on_error is not None:
        try:
            options.on_error(exc)
        except Exception as callback_exc:  # noqa: BLE001 -- the loop must survive
            _log.warning("outbox on_error callback failed: %s", type(callback_exc).__name__)
        return
    code = exc.code if isinstance(exc, PersistenceError) else type(exc).__name__
    _log.warning("outbox tick failed: %s", code)


async def _tick(
    store: PersistenceStore, options: OutboxWorkerOptions, handle: OutboxWorkerHandle
) -> None:
    try:
        report = await run_outbox_worker_once(
            store,
            now=options.now(),
            limit=options.batch_limit,
            retry_delay_ms=options.retry_delay_ms,
            handler=options.handler,
            max_attempts=options.max_attempts,
            handler_timeout=options.handler_timeout,
            max_retry_delay_ms=round(options.max_retry_delay * 1000),
            jitter=options.jitter,
        )
        if options.on_report is not None:
            options.on_report(report)
    except Exception as exc:  # noqa: BLE001 -- errors go to on_error, never kill the loop
        handle._errors += 1
        _report_error(options, exc)
    finally:
        handle._in_flight -= 1


async def run_outbox_worker(
    store: PersistenceStore,
    options: OutboxWorkerOptions,
    *,
    task_status: anyio.abc.TaskStatus[OutboxWorkerHandle] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Run one tick per ``interval`` until ``stop()`` or cancellation.

    A tick due while ``max_ticks_in_flight`` still run is skipped (a hung handler
    holds one tick for at most ``handler_timeout``; the others go on); tick errors go to
    ``on_error`` and never end the loop.
    """
    handle = OutboxWorkerHandle()
    try:
        async with anyio.create_task_group() as ticks:
            with handle._timer:
                task_status.started(handle)
                while True:
                    await options.schedule(options.interval)
                    if handle._in_flight >= options.max_ticks_in_flight:
                        handle._skipped += 1
                        continue
                    handle._in_flight += 1
                    handle._ticks += 1
                    ticks.start_soon(_tick, store, options, handle)
    finally:
        handle._running = False
        handle._finished.set()


class OutboxReporter:
    """Publishes reports to a caller-owned prometheus registry (never the global one).

    Use it as ``on_report``: sets ``outbox_depth{adapter, state="pending"|"dead"}`` and
    increments ``outbox_processed_total{outcome="success"|"error"|"timeout"|"dead"}``
    (``error`` counts every failure; ``timeout`` and ``dead`` are among them).
    """

    __slots__ = ("_adapter", "_depth", "_processed")

    def __init__(self, registry: CollectorRegistry, *, adapter: str) -> None:
        self._adapter = adapter
        self._depth = Gauge(
            "outbox_depth",
            "Outbox items by state.",
            labelnames=("adapter", "state"),
            registry=registry,
        )
        self._processed = Counter(
            "outbox_processed",
            "Outbox items processed, by outcome.",
            labelnames=("outcome",),
            registry=registry,
        )
        self._depth.labels(adapter=adapter, state="pending").set(0)
        self._depth.labels(adapter=adapter, state="dead").set(0)
        for outcome in ("success", "error", "timeout", "dead"):
            self._processed.labels(outcome=outcome)

    def __call__(self, report: OutboxReport) -> None:
        self._depth.labels(adapter=self._adapter, state="pending").set(report.pending)
        self._depth.labels(adapter=self._adapter, state="dead").set(report.dead_depth)
        self._processed.labels(outcome="success").inc(report.succeeded)
        self._processed.labels(outcome="error").inc(report.failed)
        self._processed.labels(outcome="timeout").inc(report.timed_out)
        self._processed.labels(outcome="dead").inc(report.dead)
