"""The outbox worker: one tick (``run_outbox_worker_once``), the interval loop, the reporter.

Start the loop with structured concurrency::

    handle = await nursery.start(run_outbox_worker, store, OutboxWorkerOptions(handler=send))
    ...
    await handle.stop()   # stops the timer, waits for the tick in flight

The worker is single-process by design (spec rule 9); several workers on one
PostgreSQL still never claim the same item because claims use SKIP LOCKED.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

import anyio
import anyio.abc
from prometheus_client import CollectorRegistry, Counter, Gauge

from ._base import MAX_CLAIM_LIMIT, MAX_RETRY_DELAY_MS
from ._contract import PersistenceStore
from ._errors import PersistenceError, PersistenceValidationError
from ._records import OutboxItem
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
"""Delivers one item; returning means success, raising ``Exception`` means retry later."""

_log: Final = logging.getLogger("svc.store.outbox")


@dataclass(frozen=True, slots=True, kw_only=True)
class OutboxReport:
    """What one tick did; ``pending`` is ``count_outbox_pending()`` after the tick."""

    processed: int
    succeeded: int
    failed: int
    pending: int


async def run_outbox_worker_once(
    store: PersistenceStore,
    *,
    now: datetime,
    limit: int,
    retry_delay_ms: int,
    handler: OutboxHandler,
) -> OutboxReport:
    """Claim due items, hand each to ``handler`` in turn, mark success or reschedule.

    A handler ``Exception`` reschedules the item at ``now + retry_delay_ms``; a
    completion refused because the lease moved on counts as failed.
    """
    items = await store.claim_outbox_items(now=now, limit=limit)
    succeeded = failed = 0
    for item in items:
        assert item.lease_id is not None
        try:
            await handler(item)
        except Exception:  # noqa: BLE001 -- any handler failure means retry later
            await store.mark_outbox_item_failed(
                id=item.id, lease_id=item.lease_id, now=now, retry_delay_ms=retry_delay_ms
            )
            failed += 1
            continue
        if await store.mark_outbox_item_succeeded(id=item.id, lease_id=item.lease_id, now=now):
            succeeded += 1
        else:
            failed += 1
    pending = await store.count_outbox_pending()
    return OutboxReport(processed=len(items), succeeded=succeeded, failed=failed, pending=pending)


def _invalid(message: str) -> PersistenceValidationError:
    return PersistenceValidationError("invalid_options", message)


@dataclass(frozen=True, slots=True, kw_only=True)
class OutboxWorkerOptions:
    """Loop options. ``interval`` and ``retry_delay`` are seconds (trio style).

    ``now`` is the injected clock; ``schedule(seconds)`` is awaited between
    ticks (default ``anyio.sleep``; tests drive it with trio's MockClock or
    their own trigger).
    """

    handler: OutboxHandler
    interval: float = 1.0
    batch_limit: int = 10
    retry_delay: float = 30.0
    on_report: Callable[[OutboxReport], None] | None = None
    on_error: Callable[[Exception], None] | None = None
    now: Callable[[], datetime] = utc_now
    schedule: Callable[[float], Awaitable[None]] = field(default=anyio.sleep)

    def __post_init__(self) -> None:
        if not callable(self.handler):
            raise _invalid("handler must be an async callable.")
        if isinstance(self.interval, bool) or not isinstance(self.interval, int | float):
            raise _invalid("interval must be a number of seconds.")
        if not 0 < self.interval <= 86_400:
            raise _invalid("interval must be in (0, 86400] seconds.")
        if isinstance(self.batch_limit, bool) or not isinstance(self.batch_limit, int):
            raise _invalid("batch_limit must be an integer.")
        if not 1 <= self.batch_limit <= MAX_CLAIM_LIMIT:
            raise _invalid(f"batch_limit must be in 1..{MAX_CLAIM_LIMIT}.")
        if isinstance(self.retry_delay, bool) or not isinstance(self.retry_delay, int | float):
            raise _invalid("retry_delay must be a number of seconds.")
        if not 0 <= self.retry_delay * 1000 <= MAX_RETRY_DELAY_MS:
            raise _invalid("retry_delay must be between 0 and 7 days.")

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
        self._in_flight = False
        self._ticks = 0
        self._skipped = 0
        self._errors = 0

    def running(self) -> bool:
        """True until ``stop()`` is called or the loop ends."""
        return self._running

    def statistics(self) -> OutboxWorkerStatistics:
        """Ticks started, ticks skipped because one was in flight, tick errors."""
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
        )
        if options.on_report is not None:
            options.on_report(report)
    except Exception as exc:  # noqa: BLE001 -- errors go to on_error, never kill the loop
        handle._errors += 1
        _report_error(options, exc)
    finally:
        handle._in_flight = False


async def run_outbox_worker(
    store: PersistenceStore,
    options: OutboxWorkerOptions,
    *,
    task_status: anyio.abc.TaskStatus[OutboxWorkerHandle] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Run one tick per ``interval`` until ``stop()`` or cancellation.

    A tick due while the previous one still runs is skipped; tick errors go to
    ``on_error`` and never end the loop.
    """
    handle = OutboxWorkerHandle()
    try:
        async with anyio.create_task_group() as ticks:
            with handle._timer:
                task_status.started(handle)
                while True:
                    await options.schedule(options.interval)
                    if handle._in_flight:
                        handle._skipped += 1
                        continue
                    handle._in_flight = True
                    handle._ticks += 1
                    ticks.start_soon(_tick, store, options, handle)
    finally:
        handle._running = False
        handle._finished.set()


class OutboxReporter:
    """Publishes reports to a caller-owned prometheus registry (never the global one).

    Use it as ``on_report``: sets ``outbox_depth{adapter, state="pending"}`` and
    increments ``outbox_processed_total{outcome="success"|"error"}``.
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
        self._processed.labels(outcome="success")
        self._processed.labels(outcome="error")

    def __call__(self, report: OutboxReport) -> None:
        self._depth.labels(adapter=self._adapter, state="pending").set(report.pending)
        self._processed.labels(outcome="success").inc(report.succeeded)
        self._processed.labels(outcome="error").inc(report.failed)
