"""The inbox worker over a real store: per-queue order with queues side by side, deadlines,
retries, dead letters, the after-run seam, stop, polling, pruning and metrics.

Due times follow an injected clock (``Clock``); the worker's own timers (deadlines, the poll
interval, the prune and statistics periods) follow trio's ``MockClock``, which stands still
unless a test jumps it: the store's calls run in threads, so an autojumping clock would jump
while one is in flight. Tests wait on ``wait_idle()`` and on events, never on time.
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
    DeadLetter,
    InboxItem,
    InboxReporter,
    InboxRow,
    InboxRun,
    InboxStatistics,
    InboxStatus,
    InboxWorkerHandle,
    InboxWorkerOptions,
    PersistenceValidationError,
    RetryPolicy,
    RunControl,
    SqliteStore,
    run_inbox_worker,
)

from .conftest import T0

POLICY = RetryPolicy(retry_delay_ms=1000, max_retry_delay_ms=8000, max_attempts=3)


class Clock:
    """The injected wall clock of due times: stands at ``at`` until advanced."""

    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> datetime:
        return self.at

    def advance(self, ms: int) -> None:
        self.at += timedelta(milliseconds=ms)


@pytest.fixture
async def store() -> AsyncIterator[SqliteStore]:
    opened = SqliteStore(":memory:")
    await opened.migrate()
    yield opened
    await opened.close()


async def record(store: SqliteStore, *items: tuple[str, str], at: datetime = T0) -> None:
    keys = [key for key, _ in items]
    await store.record_webhook_updates(
        event_key="d-" + "-".join(keys),
        event_hash="h",
        received_at=at,
        update_keys=keys,
        inbox=[
            InboxRow(update_key=k, queue_key=q, phone_number_id=None, kind="message", sealed=b"s")
            for k, q in items
        ],
    )


def options(
    handler: Callable[[InboxItem, RunControl], Awaitable[None]], **kwargs: Any
) -> InboxWorkerOptions:
    return InboxWorkerOptions(**({"handler": handler, "policy": POLICY} | kwargs))


async def items(store: SqliteStore) -> dict[str, InboxItem]:
    return {i.update_key: i for i in await store.list_inbox_items()}


async def test_one_queue_runs_in_sequence_while_queues_run_side_by_side(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("b1", "qb"), ("a2", "qa"), ("a3", "qa"), ("b2", "qb"))
    log: list[tuple[str, str]] = []
    started = {key: trio.Event() for key in ("a1", "b1")}
    running: set[str] = set()
    most = 0

    async def handler(item: InboxItem, control: RunControl) -> None:
        nonlocal most
        assert item.queue_key not in running
        running.add(item.queue_key)
        most = max(most, len(running))
        log.append(("start", item.update_key))
        if item.update_key in started:
            # a1 and b1 each wait until the other runs: both are in flight at once.
            started[item.update_key].set()
            await started["b1" if item.update_key == "a1" else "a1"].wait()
        await trio.lowlevel.checkpoint()
        log.append(("end", item.update_key))
        running.discard(item.queue_key)

    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, options(handler, concurrency=4))
        await handle.wait_idle()
        await handle.stop()
    assert most == 2
    queue_a = [entry for entry in log if entry[1].startswith("a")]
    assert queue_a == [(e, k) for k in ("a1", "a2", "a3") for e in ("start", "end")]
    queue_b = [entry for entry in log if entry[1].startswith("b")]
    assert queue_b == [(e, k) for k in ("b1", "b2") for e in ("start", "end")]
    assert await store.list_inbox_items() == []


async def test_concurrency_one_runs_every_queue_in_turn(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("b1", "qb"), ("a2", "qa"))
    log: list[str] = []
    in_flight = 0

    async def handler(item: InboxItem, control: RunControl) -> None:
        nonlocal in_flight
        in_flight += 1
        assert in_flight == 1
        await trio.lowlevel.checkpoint()
        log.append(item.update_key)
        in_flight -= 1

    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, options(handler, concurrency=1))
        await handle.wait_idle()
        await handle.stop()
    assert log == ["a1", "b1", "a2"]


async def test_a_hung_run_is_cancelled_at_its_deadline_and_retried(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"))
    clock = Clock()
    calls: list[str] = []
    cancelled: list[str] = []
    runs: list[InboxRun] = []
    hung = trio.Event()

    async def handler(item: InboxItem, control: RunControl) -> None:
        calls.append(item.update_key)
        if item.update_key == "a1" and item.attempts == 1:
            hung.set()
            try:
                await trio.sleep_forever()
            except trio.Cancelled:
                cancelled.append(item.update_key)
                raise

    worker = options(handler, handler_timeout=30.0, now=clock, on_run=runs.append)
    assert worker.lease == 50_000  # longer than the deadline
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, worker)
        await hung.wait()
        mock_clock.jump(30)
        await handle.wait_idle()
        stored = (await items(store))["a1"]
        assert (stored.status, stored.attempts, stored.last_error) == (
            InboxStatus.PENDING,
            1,
            "timeout",
        )
        assert stored.next_attempt_at == T0 + timedelta(seconds=1)
        assert calls == ["a1"] and cancelled == ["a1"]  # a2 waits behind its queue's head
        clock.advance(1000)
        handle.wake()
        await handle.wait_idle()
        await handle.stop()
    assert calls == ["a1", "a1", "a2"]
    assert [run.outcome for run in runs] == ["timeout", "success", "success"]
    assert runs[0].duration == pytest.approx(30.0)
    assert await store.list_inbox_items() == []


async def test_the_last_attempt_buries_the_item_and_releases_its_queue(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"), ("b1", "qb"))
    clock = Clock()
    calls: list[str] = []
    runs: list[tuple[str, str]] = []

    async def handler(item: InboxItem, control: RunControl) -> None:
        calls.append(item.update_key)
        if item.update_key == "a1":
            raise ValueError("the text of a message, never kept")

    worker = options(handler, now=clock, on_run=lambda run: runs.append((run.kind, run.outcome)))
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, worker)
        await handle.wait_idle()
        # a1 failed and retries later: its queue's a2 waits; b1 is of another queue.
        assert sorted(calls) == ["a1", "b1"]
        for delay in (1000, 2000):
            clock.advance(delay)
            handle.wake()
            await handle.wait_idle()
        await handle.stop()
    assert [c for c in calls if c.startswith("a")] == ["a1", "a1", "a1", "a2"]
    outcomes = [outcome for _, outcome in runs]
    assert sorted(outcomes[:2]) == ["error", "success"]  # a1's first run and b1's
    assert outcomes[2:] == ["error", "dead", "success"]
    dead = await store.list_inbox_items()
    assert [(i.update_key, i.status, i.attempts, i.last_error) for i in dead] == [
        ("a1", InboxStatus.DEAD, 3, "ValueError")
    ]


async def test_a_dead_letter_buries_at_once_with_its_reason(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"))
    calls: list[str] = []
    runs: list[str] = []

    async def handler(item: InboxItem, control: RunControl) -> None:
        calls.append(item.update_key)
        if item.update_key == "a1":
            raise DeadLetter("key_unavailable")

    worker = options(handler, on_run=lambda run: runs.append(run.outcome))
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, worker)
        await handle.wait_idle()
        await handle.stop()
    assert calls == ["a1", "a2"] and runs == ["dead", "success"]
    (dead,) = await store.list_inbox_items(status="dead")
    assert (dead.update_key, dead.attempts, dead.last_error) == ("a1", 1, "key_unavailable")


async def test_a_failed_item_holds_back_its_queue_until_it_succeeds(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"), ("b1", "qb"), ("b2", "qb"))
    clock = Clock()
    calls: list[str] = []

    async def handler(item: InboxItem, control: RunControl) -> None:
        calls.append(item.update_key)
        if item.update_key == "a1" and item.attempts == 1:
            raise RuntimeError

    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, options(handler, now=clock))
        await handle.wait_idle()
        assert sorted(calls) == ["a1", "b1", "b2"]
        assert sorted(await items(store)) == ["a1", "a2"]
        handle.wake()  # nothing new is due: a2 still waits for a1
        await handle.wait_idle()
        assert "a2" not in calls
        clock.advance(999)
        handle.wake()
        await handle.wait_idle()
        assert "a2" not in calls
        clock.advance(1)
        handle.wake()
        await handle.wait_idle()
        await handle.stop()
    assert [c for c in calls if c.startswith("a")] == ["a1", "a1", "a2"]


async def test_after_run_comes_between_the_handler_and_the_completion_mark(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"))
    log: list[str] = []

    class Recording:
        """The store, logging the completion marks it is asked for."""

        def __init__(self, inner: SqliteStore) -> None:
            self._inner = inner

        def __getattr__(self, name: str) -> Any:
            attr = getattr(self._inner, name)
            if not name.startswith("mark_inbox_item_"):
                return attr

            async def logged(**kwargs: Any) -> Any:
                log.append(name)
                return await attr(**kwargs)

            return logged

    async def handler(item: InboxItem, control: RunControl) -> None:
        log.append("handler")

    def after_run(item: InboxItem) -> None:
        log.append(f"after_run:{item.update_key}")

    async with trio.open_nursery() as nursery:
        handle = await nursery.start(
            run_inbox_worker, Recording(store), options(handler, after_run=after_run)
        )
        await handle.wait_idle()
        await handle.stop()
    assert log == ["handler", "after_run:a1", "mark_inbox_item_succeeded"]


async def test_stop_waits_for_the_runs_in_flight_and_claims_no_more(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"))
    started, release = trio.Event(), trio.Event()
    calls: list[str] = []
    stopped = False

    async def handler(item: InboxItem, control: RunControl) -> None:
        calls.append(item.update_key)
        started.set()
        await release.wait()

    async def stop(handle: InboxWorkerHandle) -> None:
        nonlocal stopped
        await handle.stop()
        stopped = True

    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, options(handler))
        await started.wait()
        nursery.start_soon(stop, handle)
        await record(store, ("b1", "qb"))
        handle.wake()
        await trio.testing.wait_all_tasks_blocked()
        assert not stopped and handle.in_flight == 1
        release.set()
    assert stopped and calls == ["a1"]
    assert [i.update_key for i in await store.list_inbox_items()] == ["b1"]


async def test_rows_recorded_elsewhere_are_found_at_the_poll_interval(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    ran = trio.Event()

    async def handler(item: InboxItem, control: RunControl) -> None:
        ran.set()

    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, options(handler, poll_interval=5))
        await handle.wait_idle()
        await record(store, ("a1", "qa"))  # no wake(): another process recorded it
        await trio.testing.wait_all_tasks_blocked()
        assert not ran.is_set()
        mock_clock.jump(5)
        await ran.wait()
        await handle.stop()


async def test_dead_letters_past_the_horizon_are_deleted(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("old", "q1"), ("new", "q2"))
    for item, at in zip(
        await store.claim_inbox_items(now=T0, limit=2, lease_ms=1000),
        (T0, T0 + timedelta(days=1)),
        strict=True,
    ):
        assert item.lease_id is not None
        await store.mark_inbox_item_dead(id=item.id, lease_id=item.lease_id, now=at)
    clock = Clock()
    clock.advance(7 * 86_400_000 + 1)

    async def handler(item: InboxItem, control: RunControl) -> None:
        raise AssertionError("no dead item runs")

    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, options(handler, now=clock))
        await handle.wait_idle()
        await handle.stop()
    assert [i.update_key for i in await store.list_inbox_items()] == ["new"]


async def test_metrics_from_runs_and_statistics(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("b1", "qb"), ("c1", "qc"))
    clock = Clock()
    registry = CollectorRegistry()
    reporter = InboxReporter(registry, now=clock)
    a1_started = trio.Event()

    async def handler(item: InboxItem, control: RunControl) -> None:
        if item.update_key == "b1":
            raise DeadLetter("send_outcome_unknown")
        if item.update_key == "c1":
            raise ValueError
        a1_started.set()
        await trio.sleep(0.25)

    def sample(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    worker = options(handler, now=clock, on_run=reporter, on_statistics=reporter.refresh)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, worker)
        # The first turn's snapshot, taken before its claim: all three pending.
        await a1_started.wait()
        assert sample("svc_inbox_items", state="pending") == 3
        mock_clock.jump(0.25)  # a1's handler ends
        await handle.wait_idle()
        clock.advance(500)  # c1 retries at 1 s: not due yet
        mock_clock.jump(1)  # the next snapshot is due
        handle.wake()
        await handle.wait_idle()
        await handle.stop()
    assert sample("svc_handler_runs_total", outcome="success") == 1
    assert sample("svc_handler_runs_total", outcome="dead") == 1
    assert sample("svc_handler_runs_total", outcome="error") == 1
    assert sample("svc_handler_runs_total", outcome="timeout") == 0
    assert sample("svc_handler_duration_seconds_count") == 3
    assert sample("svc_handler_duration_seconds_sum") == pytest.approx(0.25)
    assert sample("svc_inbox_items", state="pending") == 1
    assert sample("svc_inbox_items", state="running") == 0
    assert sample("svc_inbox_items", state="dead") == 1
    assert sample("svc_inbox_oldest_pending_seconds") == pytest.approx(0.5)
    reporter.refresh(InboxStatistics(pending=0, running=0, dead=0, oldest_pending_at=None))
    assert sample("svc_inbox_oldest_pending_seconds") == 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"concurrency": 0},
        {"concurrency": True},
        {"handler_timeout": 0},
        {"handler_timeout": 30, "lease_ms": 30_000},
        {"poll_interval": -1},
        {"dead_horizon": timedelta(0)},
        {"policy": None},
        {"handler": None},
    ],
)
def test_invalid_options_are_refused(kwargs: dict[str, Any]) -> None:
    async def handler(item: InboxItem, control: RunControl) -> None:
        pass

    with pytest.raises(PersistenceValidationError):
        InboxWorkerOptions(**({"handler": handler} | kwargs))


async def test_a_failing_reporter_never_ends_the_worker(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"))
    errors: list[str] = []
    calls: list[str] = []

    async def handler(item: InboxItem, control: RunControl) -> None:
        calls.append(item.update_key)

    def broken(value: object) -> None:
        raise RuntimeError

    worker = options(
        handler,
        on_run=broken,
        on_statistics=broken,
        on_error=lambda exc: errors.append(type(exc).__name__),
    )
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, worker)
        await handle.wait_idle()
        await handle.stop()
    assert calls == ["a1", "a2"]
    assert errors == ["RuntimeError"] * 3  # the first turn's snapshot, then each run
