"""The outbox worker: one tick, the interval loop (autojump clock, no real sleeps), reporter.

Loop timing tests use an in-memory outbox because a real store waits on worker
threads, during which trio's autojump clock would move on; the real stores are
driven through ``run_outbox_worker_once`` and through the explicit schedule seam.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
import trio
import trio.testing
from prometheus_client import CollectorRegistry

from svc.store import (
    OutboxItem,
    OutboxReport,
    OutboxReporter,
    OutboxWorkerOptions,
    PersistenceError,
    PersistenceValidationError,
    SqliteStore,
    run_outbox_worker,
    run_outbox_worker_once,
)

from ._fake_outbox import FakeOutboxStore
from .conftest import T0, AnyStore


async def _enqueue(store: AnyStore, *ids: str) -> None:
    for item_id in ids:
        await store.enqueue_outbox_item(id=item_id, payload_hash="p", created_at=T0)


async def _ok(item: OutboxItem) -> None:
    return None


def _manual_schedule() -> tuple[trio.MemorySendChannel[None], Callable[[float], Awaitable[None]]]:
    """A schedule seam: each value sent on the channel fires one tick."""
    send, receive = trio.open_memory_channel[None](0)

    async def schedule(interval: float) -> None:
        await receive.receive()

    return send, schedule


@pytest.fixture
async def memory_store() -> AsyncIterator[SqliteStore]:
    store = SqliteStore(":memory:")
    await store.migrate()
    try:
        yield store
    finally:
        await store.close()


# --- one tick, on every adapter


async def test_run_once_marks_successes_and_reschedules_failures(store: AnyStore) -> None:
    await _enqueue(store, "ok1", "bad", "ok2")
    seen: list[str] = []

    async def handler(item: OutboxItem) -> None:
        seen.append(item.id)
        if item.id == "bad":
            raise RuntimeError("upstream said no")

    report = await run_outbox_worker_once(
        store, now=T0, limit=10, retry_delay_ms=60_000, handler=handler
    )
    assert report == OutboxReport(processed=3, succeeded=2, failed=1, pending=1)
    assert sorted(seen) == ["bad", "ok1", "ok2"]
    early = T0 + timedelta(seconds=59)
    assert (
        await run_outbox_worker_once(store, now=early, limit=10, retry_delay_ms=1, handler=handler)
    ).processed == 0
    again = await run_outbox_worker_once(
        store, now=T0 + timedelta(seconds=60), limit=10, retry_delay_ms=1, handler=handler
    )
    assert again.processed == 1 and seen[-1] == "bad"


# --- the loop, on trio's autojump clock


async def test_worker_ticks_per_interval_and_reports(autojump_clock: object) -> None:
    store = FakeOutboxStore()
    store.enqueue("a", "b", "c", at=T0)
    reports: list[OutboxReport] = []
    handled: list[str] = []

    async def handler(item: OutboxItem) -> None:
        handled.append(item.id)

    options = OutboxWorkerOptions(
        handler=handler, interval=5.0, batch_limit=2, on_report=reports.append, now=lambda: T0
    )
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_outbox_worker, store, options)
        assert handle.running()
        await trio.sleep(4.9)
        assert reports == []  # the first tick fires after one interval
        await trio.sleep(5.2)
        await handle.stop()
    assert not handle.running()
    assert reports == [
        OutboxReport(processed=2, succeeded=2, failed=0, pending=1),
        OutboxReport(processed=1, succeeded=1, failed=0, pending=0),
    ]
    assert sorted(handled) == ["a", "b", "c"]
    assert handle.statistics().ticks == 2


async def test_overlapping_ticks_are_skipped_and_stop_waits_for_the_tick(
    autojump_clock: object,
) -> None:
    store = FakeOutboxStore()
    store.enqueue("slow", at=T0)
    release = trio.Event()
    entered = trio.Event()
    finished: list[str] = []

    async def handler(item: OutboxItem) -> None:
        entered.set()
        await release.wait()
        finished.append(item.id)

    options = OutboxWorkerOptions(
        handler=handler, interval=1.0, now=lambda: T0, max_ticks_in_flight=1
    )
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_outbox_worker, store, options)
        await entered.wait()
        await trio.sleep(3.5)  # three more intervals pass while the tick is stuck
        assert handle.statistics().skipped == 3
        assert handle.statistics().ticks == 1
        stopped = trio.Event()

        async def stop() -> None:
            await handle.stop()
            stopped.set()

        nursery.start_soon(stop)
        await trio.sleep(10)
        assert not stopped.is_set()  # stop() waits for the tick in flight
        assert not handle.running()
        assert handle.statistics().ticks == 1  # ...and no new tick starts
        release.set()
        await stopped.wait()
    assert finished == ["slow"]
    assert await store.count_outbox_pending() == 0


async def test_errors_go_to_on_error_and_never_kill_the_loop(autojump_clock: object) -> None:
    store = FakeOutboxStore()
    errors: list[Exception] = []
    reports: list[OutboxReport] = []
    calls = 0

    def now() -> datetime:
        nonlocal calls
        calls += 1
        if calls in (1, 3):
            raise RuntimeError("clock broke")
        return T0

    def on_report(report: OutboxReport) -> None:
        reports.append(report)
        if len(reports) == 1:
            raise ValueError("reporter broke")

    def on_error(exc: Exception) -> None:
        errors.append(exc)
        raise KeyError("even on_error may fail")

    options = OutboxWorkerOptions(
        handler=_ok, interval=1.0, now=now, on_report=on_report, on_error=on_error
    )
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_outbox_worker, store, options)
        await trio.sleep(5.5)
        store.fail_claims = True
        await trio.sleep(1.0)
        assert handle.running()
        await handle.stop()
    kinds = [type(e) for e in errors]
    assert kinds == [RuntimeError, ValueError, RuntimeError, PersistenceError]
    assert len(reports) == 3 and handle.statistics().errors == 4


async def test_without_on_error_failures_are_logged_by_code(
    autojump_clock: object, caplog: pytest.LogCaptureFixture
) -> None:
    store = FakeOutboxStore()
    store.fail_claims = True
    options = OutboxWorkerOptions(handler=_ok, interval=1.0)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_outbox_worker, store, options)
        await trio.sleep(1.5)
        await handle.stop()
    assert [r.getMessage() for r in caplog.records] == ["outbox tick failed: outbox_failed"]


async def test_cancellation_is_clean(autojump_clock: object) -> None:
    store = FakeOutboxStore()
    store.enqueue("x", at=T0)
    entered = trio.Event()

    async def handler(item: OutboxItem) -> None:
        entered.set()
        await trio.sleep_forever()

    options = OutboxWorkerOptions(handler=handler, interval=1.0, now=lambda: T0)
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            handle = await nursery.start(run_outbox_worker, store, options)
            await entered.wait()
            scope.cancel()
    assert scope.cancelled_caught
    assert not handle.running()
    await handle.stop()  # after cancellation, stop() returns at once


# --- the loop on a real store, driven through the schedule seam


async def test_real_store_worker_with_reporter_and_clean_cancel(
    memory_store: SqliteStore,
) -> None:
    registry = CollectorRegistry()
    await _enqueue(memory_store, "a", "b", "stuck")
    reported = trio.Event()
    entered = trio.Event()

    async def handler(item: OutboxItem) -> None:
        if item.id == "b":
            raise RuntimeError("no")
        if item.id == "stuck":
            entered.set()
            await trio.sleep_forever()

    reporter = OutboxReporter(registry, adapter=memory_store.backend)

    def on_report(report: OutboxReport) -> None:
        reporter(report)
        reported.set()

    tick, schedule = _manual_schedule()
    options = OutboxWorkerOptions(
        handler=handler, batch_limit=2, schedule=schedule, on_report=on_report, now=lambda: T0
    )
    async with tick:
        async with trio.open_nursery() as nursery:
            handle = await nursery.start(run_outbox_worker, memory_store, options)
            await tick.send(None)
            await reported.wait()
            await handle.stop()
        labels = {"adapter": "sqlite", "state": "pending"}
        assert registry.get_sample_value("outbox_depth", labels) == 2  # "b" again and "stuck"
        assert registry.get_sample_value("outbox_processed_total", {"outcome": "error"}) == 1
        assert registry.get_sample_value("outbox_processed_total", {"outcome": "success"}) == 1

        # A tick cancelled mid-handler leaves the item leased, to be reclaimed when stale.
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                handle = await nursery.start(run_outbox_worker, memory_store, options)
                await tick.send(None)
                await entered.wait()
                scope.cancel()
        assert scope.cancelled_caught and not handle.running()
    later = T0 + timedelta(minutes=1)
    assert [i.id for i in await memory_store.claim_outbox_items(now=later, limit=5)] == ["b"]
    stale = T0 + timedelta(minutes=5)
    assert [i.id for i in await memory_store.claim_outbox_items(now=stale, limit=5)] == ["stuck"]


async def test_closed_store_faults_reach_on_error(autojump_clock: object) -> None:
    store = SqliteStore(":memory:")
    await store.close()
    errors: list[Exception] = []
    options = OutboxWorkerOptions(handler=_ok, interval=1.0, on_error=errors.append)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_outbox_worker, store, options)
        await trio.sleep(2.5)
        await handle.stop()
    assert len(errors) == 2
    assert all(isinstance(e, PersistenceError) and e.code == "store_closed" for e in errors)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"interval": 0},
        {"interval": -1},
        {"interval": True},
        {"batch_limit": 0},
        {"batch_limit": 1001},
        {"retry_delay": -0.5},
        {"retry_delay": 8 * 86_400},
    ],
)
def test_options_are_validated(kwargs: dict[str, Any]) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        OutboxWorkerOptions(handler=_ok, **kwargs)
    assert info.value.code == "invalid_options"


def test_reporter_sets_depth_and_counts_outcomes() -> None:
    registry = CollectorRegistry()
    reporter = OutboxReporter(registry, adapter="postgres")
    depth = {"adapter": "postgres", "state": "pending"}
    assert registry.get_sample_value("outbox_depth", depth) == 0
    assert registry.get_sample_value("outbox_processed_total", {"outcome": "success"}) == 0
    reporter(OutboxReport(processed=5, succeeded=3, failed=2, pending=7))
    reporter(OutboxReport(processed=1, succeeded=1, failed=0, pending=4))
    assert registry.get_sample_value("outbox_depth", depth) == 4
    assert registry.get_sample_value("outbox_processed_total", {"outcome": "success"}) == 4
    assert registry.get_sample_value("outbox_processed_total", {"outcome": "error"}) == 2
