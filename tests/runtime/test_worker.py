"""The runtime's one loop over a real store (``StoreQueue`` on SQLite): per-queue order with
queues side by side, deadlines, retries with backoff, dead letters, attempts spent by
crashed runs, the after-run seam, wake, idle and stop, polling, tidying, store faults and
metrics.

trio's autojump clock drives every time (``conftest``); handlers note
``trio.current_time()`` where the moment of a run is the rule.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
import trio
import trio.testing
from prometheus_client import CollectorRegistry

from svc.runtime import INVALID_COMPLETION, Entry, RunStarted, StoreQueue
from svc.store import DeadLetter, InboxStatistics, InboxStatus
from svc.webhook import ReplyOutcomeUnknown

from .conftest import (
    LOGGER,
    T0,
    Context,
    Events,
    HeldStore,
    deliver,
    make_runtime,
    memory_queue,
    message,
    run_until_ended,
    store_queue,
)


async def test_one_queue_runs_in_sequence_while_queues_run_side_by_side(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    log: list[tuple[str, str]] = []
    started = {key: trio.Event() for key in ("a1", "b1")}
    running: set[str] = set()
    most = 0

    async def handler(ctx: Context) -> None:
        nonlocal most
        user = ctx.key[0]
        assert user not in running
        running.add(user)
        most = max(most, len(running))
        log.append(("start", ctx.key))
        if ctx.key in started:
            # a1 and b1 each wait until the other runs: both are in flight at once.
            started[ctx.key].set()
            await started["b1" if ctx.key == "a1" else "a1"].wait()
        await trio.sleep(1)
        log.append(("end", ctx.key))
        running.discard(user)

    runtime = make_runtime(store_queue(store), handler, concurrency=4)
    await deliver(runtime, "a1", "b1", "a2", "a3", "b2")
    await runtime.run_until_idle()
    assert most == 2
    assert [entry for entry in log if entry[1][0] == "a"] == [
        (e, k) for k in ("a1", "a2", "a3") for e in ("start", "end")
    ]
    assert [entry for entry in log if entry[1][0] == "b"] == [
        (e, k) for k in ("b1", "b2") for e in ("start", "end")
    ]
    assert await store.list_inbox_items() == []


async def test_concurrency_one_runs_one_run_at_a_time_every_queue_in_its_turn(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    log: list[str] = []
    in_flight = 0

    async def handler(ctx: Context) -> None:
        nonlocal in_flight
        in_flight += 1
        assert in_flight == 1
        await trio.sleep(1)
        log.append(ctx.key)
        in_flight -= 1

    runtime = make_runtime(store_queue(store), handler, concurrency=1)
    await deliver(runtime, "a1", "b1", "a2")
    await runtime.run_until_idle()
    # a's next update continues a1's slot; b1, recorded before a2, is the loop's next claim
    # (a queue yields after CONTINUED_RUNS runs in a row: test_continuation).
    assert log == ["a1", "a2", "b1"]


async def test_a_hung_run_is_cancelled_at_its_deadline_and_retried_after_its_delay(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    calls: list[tuple[str, float]] = []
    cancelled: list[str] = []
    events = Events()

    async def handler(ctx: Context) -> None:
        calls.append((ctx.key, trio.current_time()))
        if len(calls) == 1:
            try:
                await trio.sleep_forever()
            except trio.Cancelled:
                cancelled.append(ctx.key)
                raise

    runtime = make_runtime(store_queue(store), handler, timeout=30.0, events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1", "a2")
        await runtime.wait_idle()
        stored = (await store.items())["a1"]
        assert (stored.status, stored.attempts, stored.last_error) == (
            InboxStatus.PENDING,
            1,
            "timeout",
        )
        assert stored.next_attempt_at == T0 + timedelta(seconds=31)  # deadline + 1 s
        assert calls == [("a1", 0.0)] and cancelled == ["a1"]  # a2 waits behind its head
        await trio.sleep_until(31)
        runtime.wake()  # wait for the claim of this moment (a1 is due again)
        await runtime.wait_idle()
        await runtime.stop()
    assert calls == [("a1", 0.0), ("a1", 31.0), ("a2", 31.0)]
    assert events.outcomes() == [("a1", "timeout"), ("a1", "success"), ("a2", "success")]
    assert events.ended()[0].seconds == pytest.approx(30.0)
    assert events.ended()[0].retry_in == 1.0
    assert await store.list_inbox_items() == []


async def test_retries_back_off_and_the_last_attempt_buries_the_item_and_frees_its_queue(
    store: HeldStore,
    caplog: pytest.LogCaptureFixture,
    autojump_clock: trio.testing.MockClock,
) -> None:
    calls: list[tuple[str, float]] = []
    events = Events()

    async def handler(ctx: Context) -> None:
        calls.append((ctx.key, trio.current_time()))
        if ctx.key == "a1":
            raise ValueError("the text of a message, never kept")

    caplog.set_level(logging.WARNING, logger=LOGGER)
    runtime = make_runtime(store_queue(store), handler, max_attempts=3, events=events)
    await deliver(runtime, "a1", "a2", "b1")
    await run_until_ended(runtime, events, 5)
    # a1 at 0, then 1 s and 2 s after each failure; a2 waits for it; b1 is another queue.
    assert [c for c in calls if c[0][0] == "a"] == [
        ("a1", 0.0),
        ("a1", 1.0),
        ("a1", 3.0),
        ("a2", 3.0),
    ]
    assert ("b1", 0.0) in calls
    assert [e.retry_in for e in events.ended() if e.update_key == "a1"] == [1.0, 2.0, None]
    assert [o for o in events.outcomes() if o[0] != "b1"] == [
        ("a1", "error"),
        ("a1", "error"),
        ("a1", "dead"),
        ("a2", "success"),
    ]
    dead = await store.list_inbox_items()
    assert [(i.update_key, i.status, i.attempts, i.last_error) for i in dead] == [
        ("a1", InboxStatus.DEAD, 3, "ValueError")
    ]
    assert "handler run dead-lettered kind=message reason=ValueError attempt=3" in caplog.text
    assert "retry in 1.0 s" in caplog.text and "never kept" not in caplog.text


async def test_a_dead_letter_buries_at_once_with_its_reason(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    calls: list[str] = []
    events = Events()

    async def handler(ctx: Context) -> None:
        calls.append(ctx.key)
        if ctx.key == "a1":
            raise DeadLetter("key_unavailable")

    runtime = make_runtime(store_queue(store), handler, events=events)
    await deliver(runtime, "a1", "a2")
    await runtime.run_until_idle()
    assert calls == ["a1", "a2"]
    assert events.outcomes() == [("a1", "dead"), ("a2", "success")]
    assert events.ended()[0].reason == "key_unavailable"
    (dead,) = await store.list_inbox_items(status="dead")
    assert (dead.update_key, dead.attempts, dead.last_error) == ("a1", 1, "key_unavailable")


async def test_an_item_whose_attempts_crashed_away_is_buried_without_a_run(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    calls: list[str] = []
    events = Events()

    async def handler(ctx: Context) -> None:
        calls.append(ctx.key)

    runtime = make_runtime(store_queue(store), handler, max_attempts=2, events=events)
    await deliver(runtime, "a1", "a2", wake=False)
    for at in (T0, T0 + timedelta(seconds=2)):
        # Two claims whose runs crashed before they settled: their leases lapsed.
        (claimed,) = await store.claim_inbox_items(now=at, limit=10, lease_ms=1000)
        assert claimed.update_key == "a1"
    await trio.sleep(5)
    await runtime.run_until_idle()
    assert calls == ["a2"]
    assert events.outcomes() == [("a1", "dead"), ("a2", "success")]
    assert next(e for e in events if isinstance(e, RunStarted)).attempt == 3
    (dead,) = await store.list_inbox_items()
    assert (dead.update_key, dead.status, dead.attempts, dead.last_error) == (
        "a1",
        InboxStatus.DEAD,
        3,
        "attempts_exhausted",
    )


async def test_a_failed_item_holds_back_its_queue_until_it_succeeds(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    calls: list[tuple[str, float]] = []

    async def handler(ctx: Context) -> None:
        calls.append((ctx.key, trio.current_time()))
        if ctx.key == "a1" and len([c for c in calls if c[0] == "a1"]) == 1:
            raise RuntimeError

    runtime = make_runtime(store_queue(store), handler)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1", "a2", "b1", "b2")
        await runtime.wait_idle()
        assert sorted(calls) == [("a1", 0.0), ("b1", 0.0), ("b2", 0.0)]
        assert sorted(await store.items()) == ["a1", "a2"]
        runtime.wake()  # nothing new is due: a2 still waits for a1
        await runtime.wait_idle()
        assert len(calls) == 3
        await trio.sleep(0.999)
        runtime.wake()
        await runtime.wait_idle()
        assert len(calls) == 3
        await trio.sleep(0.001)
        runtime.wake()
        await runtime.wait_idle()
        await runtime.stop()
    assert [c for c in calls if c[0][0] == "a"] == [("a1", 0.0), ("a1", 1.0), ("a2", 1.0)]


async def test_after_run_comes_between_the_handler_and_the_completion_mark(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    async def handler(ctx: Context) -> None:
        store.calls.append("handler")

    def after_run(claim: Any) -> None:
        store.calls.append(f"after_run:{claim.update_key}")

    runtime = make_runtime(store_queue(store), handler, after_run=after_run)
    await deliver(runtime, "a1")
    store.calls.clear()
    await runtime.run_until_idle()
    log = [c for c in store.calls if c.startswith(("handler", "after_run", "mark_inbox_item_"))]
    assert log == ["handler", "after_run:a1", "mark_inbox_item_succeeded_and_claim"]


async def test_stop_waits_for_the_runs_in_flight_and_claims_no_more(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    started, release = trio.Event(), trio.Event()
    calls: list[str] = []
    stopped = False

    async def handler(ctx: Context) -> None:
        calls.append(ctx.key)
        started.set()
        await release.wait()

    runtime = make_runtime(store_queue(store), handler, timeout=30.0)

    async def stop() -> None:
        nonlocal stopped
        await runtime.stop()
        stopped = True

    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        assert runtime.running
        await deliver(runtime, "a1")
        await started.wait()
        nursery.start_soon(stop)
        await deliver(runtime, "b1")
        await trio.sleep(10)  # within the grace: the run in flight goes on
        assert not stopped
        release.set()
    assert stopped and not runtime.running and calls == ["a1"]
    assert [i.update_key for i in await store.list_inbox_items()] == ["b1"]


async def test_stop_cancels_the_runs_still_in_flight_after_its_grace(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    cancelled: list[float] = []

    async def handler(ctx: Context) -> None:
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.append(trio.current_time())
            raise

    runtime = make_runtime(store_queue(store), handler, timeout=30.0)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1")
        await trio.sleep(1)
        await runtime.stop(grace=2)
    assert cancelled == [3.0]
    (left,) = await store.list_inbox_items()  # runs again once its lease lapses
    assert (left.update_key, left.status) == ("a1", InboxStatus.RUNNING)


async def test_rows_recorded_elsewhere_are_found_at_the_poll_interval(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    ran: list[float] = []

    async def handler(ctx: Context) -> None:
        ran.append(trio.current_time())

    runtime = make_runtime(store_queue(store), handler, poll_interval=5)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await runtime.wait_idle()
        await deliver(runtime, "a1", wake=False)  # another process recorded it
        while not ran:
            await trio.sleep(1)
        await runtime.stop()
    assert ran == [5.0]


async def test_dead_letters_past_the_horizon_are_deleted(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    runtime = make_runtime(
        store_queue(store), lambda ctx: trio.lowlevel.checkpoint(), base=T0 + timedelta(days=7)
    )
    await deliver(runtime, "a1", "b1", wake=False)
    for item, at in zip(
        await store.claim_inbox_items(now=T0, limit=2, lease_ms=1000),
        (T0 - timedelta(seconds=1), T0 + timedelta(seconds=1)),
        strict=True,
    ):
        assert item.lease_id is not None
        await store.mark_inbox_item_dead(id=item.id, lease_id=item.lease_id, now=at)
    await runtime.run_until_idle()  # seven days after T0
    assert [i.update_key for i in await store.list_inbox_items()] == ["b1"]


async def test_the_tidy_deletes_expired_states(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    from svc.store import UserStateWrite

    runtime = make_runtime(
        store_queue(store), lambda ctx: trio.lowlevel.checkpoint(), base=T0 + timedelta(days=1)
    )
    await deliver(runtime, "a1", "b1", wake=False)
    for item in await store.claim_inbox_items(now=T0, limit=10, lease_ms=1000):
        assert item.lease_id is not None
        until = T0 + (timedelta(hours=1) if item.update_key == "a1" else timedelta(days=2))
        write = UserStateWrite(sealed=b"s", expires_at=until)
        assert await store.mark_inbox_item_succeeded(
            id=item.id, lease_id=item.lease_id, state=write, now=T0
        )
    await runtime.run_until_idle()  # a day after T0: a's state expired, b's not
    assert await store.delete_expired_user_states(now=T0 + timedelta(days=1)) == 0
    queue_b = store_queue(store).rows([(message("b1"), "b1")])[0].queue_key
    assert await store.get_user_state(queue_key=queue_b, now=T0) is not None


async def test_a_completion_the_store_refuses_buries_the_item(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    """A consumed id the store refuses (of another queue) is an invalid completion: buried,
    as no rerun changes it; the other queue goes on."""

    class Crossed(StoreQueue):
        """A queue whose later items of a's queue wrongly include b1 (another queue's)."""

        async def later(self, claim: Any) -> list[Entry]:
            found = list(await super().later(claim))
            if claim.update_key == "a1":
                b1 = (await store.items())["b1"]
                found.append(
                    Entry(
                        id=b1.id,
                        update_key="b1",
                        kind="message",
                        recorded_at=b1.created_at,
                        update=message("b1"),
                    )
                )
            return found

    calls: list[str] = []
    events = Events()

    async def handler(ctx: Context) -> None:
        calls.append(ctx.key)
        if ctx.key == "a1":
            assert await ctx.wait_for("b1") == "b1"

    queue = store_queue(store, Crossed)
    # One slot, kept while a1 waits: b1 runs only after a1's end.
    runtime = make_runtime(queue, handler, concurrency=1, max_waiting=0, events=events)
    await deliver(runtime, "a1", "b1")
    await runtime.run_until_idle()
    assert calls == ["a1", "b1"]
    assert events.outcomes() == [("a1", "dead"), ("b1", "success")]
    assert events.ended()[0].reason == INVALID_COMPLETION
    (dead,) = await store.list_inbox_items()
    assert (dead.update_key, dead.status, dead.last_error) == (
        "a1",
        InboxStatus.DEAD,
        "invalid_completion",
    )


async def test_store_faults_are_logged_and_never_end_the_loop(
    store: HeldStore,
    caplog: pytest.LogCaptureFixture,
    autojump_clock: trio.testing.MockClock,
) -> None:
    calls: list[tuple[str, float]] = []

    async def handler(ctx: Context) -> None:
        calls.append((ctx.key, trio.current_time()))

    caplog.set_level(logging.WARNING, logger=LOGGER)
    runtime = make_runtime(store_queue(store), handler, lease=3.0)
    await deliver(runtime, "a1", "a2")
    store.faults = {
        "delete_dead_inbox_items": 1,
        "inbox_statistics": 1,
        "claim_inbox_items": 2,
        "mark_inbox_item_succeeded_and_claim": 1,
    }
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        while len(calls) < 3:
            await trio.sleep(1)
        runtime.wake()
        await runtime.wait_idle()
        await runtime.stop()
    # Two failed claims: a1 runs at the third turn (polls at 1 s). Its completion fails: it
    # runs again once its lease lapsed (claimed at 2 s for 3 s), then a2.
    assert calls == [("a1", 2.0), ("a1", 5.0), ("a2", 5.0)]
    assert await store.list_inbox_items() == []
    assert caplog.text.count("inbox worker store call failed error=claim_failed") == 5


async def test_metrics_from_runs_and_statistics(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    registry = CollectorRegistry()
    a1_started = trio.Event()

    async def handler(ctx: Context) -> None:
        if ctx.key == "b1":
            raise DeadLetter("send_outcome_unknown")
        if ctx.key == "c1":
            raise ValueError
        a1_started.set()
        await trio.sleep(0.25)

    def sample(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    runtime = make_runtime(store_queue(store), handler, registry=registry, retry_delay=10.0)
    await deliver(runtime, "a1", "b1", "c1", wake=False)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await a1_started.wait()
        # The first turn's snapshot, taken beside its claim: all three, pending or running.
        first = [sample("svc_inbox_items", state=state) for state in ("pending", "running")]
        assert sum(value or 0 for value in first) == 3
        # The next snapshot comes with the first turn past 1 s, the poll at 1.25 s (a1 ended
        # at 0.25 s): c1 waits for its retry, recorded 1.25 s before.
        await trio.sleep_until(1.5)
        await runtime.stop()
    assert sample("svc_handler_runs_total", outcome="success") == 1
    assert sample("svc_handler_runs_total", outcome="dead") == 1
    assert sample("svc_handler_runs_total", outcome="error") == 1
    assert sample("svc_handler_runs_total", outcome="timeout") == 0
    assert sample("svc_handler_duration_seconds_count") == 3
    assert sample("svc_handler_duration_seconds_sum") == pytest.approx(0.25)
    assert sample("svc_inbox_items", state="pending") == 1
    assert sample("svc_inbox_items", state="running") == 0
    assert sample("svc_inbox_items", state="dead") == 1
    assert sample("svc_inbox_oldest_pending_seconds") == pytest.approx(1.25)


async def test_a_claim_never_waits_for_the_inbox_statistics(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    """The statistics count the whole inbox (slow behind a large backlog): they are read
    beside the loop's turns, so a statistics read that does not return holds no claim."""
    release = trio.Event()
    ran: list[str] = []

    class SlowStatistics(StoreQueue):
        async def statistics(self) -> InboxStatistics:
            await release.wait()
            return await super().statistics()

    async def handler(ctx: Context) -> None:
        ran.append(ctx.key)

    queue = store_queue(store, SlowStatistics)
    runtime = make_runtime(queue, handler)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1", "b1")
        with trio.fail_after(60):  # virtual seconds: the old loop waited here for ever
            await runtime.wait_idle()
        assert sorted(ran) == ["a1", "b1"]  # claimed and run, the statistics still unread
        release.set()
        await runtime.stop()


@pytest.mark.parametrize("mode", ["store", "memory"])
async def test_a_wait_s_timeout_or_an_unknown_send_raised_from_the_handler_s_nursery(
    mode: str,
    store: HeldStore,
    caplog: pytest.LogCaptureFixture,
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A handler's own nursery wraps what its task raised in an exception group: a wait's
    timeout alone there still ends the run as a success, an unknown send outcome still makes
    the dead letter ``send_outcome_unknown``, and anything else beside a timeout still fails."""
    calls: list[str] = []
    events = Events()

    async def handler(ctx: Context) -> None:
        calls.append(ctx.key)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ctx.wait_for, "zz", 5.0)
            if ctx.key == "b1":
                raise ReplyOutcomeUnknown("sent, never answered")
            if ctx.key == "c1":
                raise LookupError

    caplog.set_level(logging.INFO, logger=LOGGER)
    queue = store_queue(store) if mode == "store" else memory_queue()
    runtime = make_runtime(queue, handler, events=events, max_attempts=1)
    await deliver(runtime, "a1", "b1", "c1")
    await runtime.run_until_idle()
    assert sorted(calls) == ["a1", "b1", "c1"]
    assert sorted((e.update_key, e.outcome, e.reason) for e in events.ended()) == [
        ("a1", "success", None),
        ("b1", "dead", "send_outcome_unknown"),
        ("c1", "dead", "LookupError"),
    ]
    assert "listener timed out kind=message listener=reply; the run ends" in caplog.text


@pytest.mark.parametrize("mode", ["store", "memory"])
async def test_a_dead_letter_raised_from_the_handler_s_nursery_is_not_retried(
    mode: str, store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    """The shared retry policy reads an exception group through to its dead letter (and a
    group of one as its one exception): the run is buried at its first attempt, while a
    plain error in a group is retried under its own name."""
    calls: list[str] = []
    events = Events()

    async def handler(ctx: Context) -> None:
        calls.append(ctx.key)
        async with trio.open_nursery():
            if ctx.key == "a1":
                raise DeadLetter("key_unavailable")
            raise LookupError

    queue = store_queue(store) if mode == "store" else memory_queue()
    runtime = make_runtime(queue, handler, events=events, max_attempts=3)
    await deliver(runtime, "a1", "b1")
    await run_until_ended(runtime, events, 4)
    assert sorted(calls) == ["a1", "b1", "b1", "b1"]
    assert sorted((e.update_key, e.outcome, e.reason) for e in events.ended()) == [
        ("a1", "dead", "key_unavailable"),
        ("b1", "dead", "LookupError"),
        ("b1", "error", "LookupError"),
        ("b1", "error", "LookupError"),
    ]
