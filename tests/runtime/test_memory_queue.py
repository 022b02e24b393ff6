"""The runtime without a store (``MemoryQueue``): a user's updates run one at a time in
order, other users' side by side up to the concurrency; a failed run is retried after its
backoff, up to the attempts, then dropped as a dead letter that frees the user's later
updates; a run past its deadline is a failure; a key accepted before is not accepted again
(within the seen window), and a delivery that does not fit is refused whole.
"""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing

from svc.webhook import ReplyOutcomeUnknown

from .conftest import (
    LOGGER,
    SENDERS,
    T0,
    Context,
    Events,
    deliver,
    make_runtime,
    memory_queue,
    run_until_ended,
)
from .conftest import message as update_of


async def test_one_user_runs_in_order_one_at_a_time_and_users_run_side_by_side(
    autojump_clock: trio.testing.MockClock,
) -> None:
    order: list[str] = []
    gates = {"a1": trio.Event(), "b1": trio.Event()}
    running: set[str] = set()
    both = trio.Event()

    async def handler(ctx: Context) -> None:
        running.add(ctx.key)
        if {"a1", "b1"} <= running:
            both.set()
        order.append(ctx.key)
        gate = gates.get(ctx.key)
        if gate is not None:
            await gate.wait()

    runtime = make_runtime(memory_queue(), handler, concurrency=4)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1", "b1")
        await deliver(runtime, "a2", "a3")
        await both.wait()  # two users at once
        assert "a2" not in order  # a's next waits for a1
        gates["a1"].set()
        gates["b1"].set()
        await runtime.wait_idle()
        await runtime.stop()
    assert [key for key in order if key[0] == "a"] == ["a1", "a2", "a3"]
    assert isinstance(runtime.queue, type(memory_queue())) and runtime.queue.size == 0


async def test_the_concurrency_bounds_the_runs_in_flight(
    autojump_clock: trio.testing.MockClock,
) -> None:
    in_flight: list[int] = []
    current = 0

    async def handler(ctx: Context) -> None:
        nonlocal current
        current += 1
        in_flight.append(current)
        await trio.sleep(1)
        current -= 1

    runtime = make_runtime(memory_queue(), handler, concurrency=2)
    await deliver(runtime, *(f"{user}1" for user in SENDERS))
    await runtime.run_until_idle()
    assert len(in_flight) == len(SENDERS) and max(in_flight) == 2
    assert trio.current_time() == 2.0  # two rounds of two


async def test_a_failed_run_is_retried_after_its_backoff_and_holds_back_the_user(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runs: list[tuple[str, float]] = []
    events = Events()

    async def handler(ctx: Context) -> None:
        runs.append((ctx.key, trio.current_time()))
        if ctx.key == "a1" and len(runs) < 3:
            raise ConnectionError("the model did not answer")

    runtime = make_runtime(memory_queue(), handler, events=events)
    await deliver(runtime, "a1", "a2")
    await run_until_ended(runtime, events, 4, step=0.5)
    assert runs == [("a1", 0.0), ("a1", 1.0), ("a1", 3.0), ("a2", 3.0)]
    assert [o for _, o in events.outcomes()] == ["error", "error", "success", "success"]


async def test_after_the_last_attempt_the_update_is_dropped_and_the_next_one_runs(
    caplog: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    runs: list[str] = []
    events = Events()

    async def handler(ctx: Context) -> None:
        runs.append(ctx.key)
        if ctx.key == "a1":
            raise LookupError(f"no answer for {SENDERS['a']}")

    caplog.set_level(logging.INFO, logger=LOGGER)
    runtime = make_runtime(memory_queue(), handler, max_attempts=3, events=events)
    await deliver(runtime, "a1", "a2")
    await run_until_ended(runtime, events, 4, step=0.5)
    assert runs == ["a1"] * 3 + ["a2"]
    assert [o for _, o in events.outcomes()] == ["error", "error", "dead", "success"]
    assert (
        "handler run dead-lettered kind=message reason=LookupError attempt=3"
        " (not kept: no store)" in caplog.text
    )
    assert SENDERS["a"] not in caplog.text


async def test_an_unknown_reply_outcome_is_never_retried(
    autojump_clock: trio.testing.MockClock,
) -> None:
    runs: list[str] = []
    events = Events()

    async def handler(ctx: Context) -> None:
        runs.append(ctx.key)
        raise ReplyOutcomeUnknown("lost")

    runtime = make_runtime(memory_queue(), handler, events=events)
    await deliver(runtime, "a1")
    await runtime.run_until_idle()
    assert runs == ["a1"]
    assert [(e.outcome, e.reason) for e in events.ended()] == [("dead", "send_outcome_unknown")]


async def test_a_run_past_its_deadline_is_cancelled_and_retried(
    autojump_clock: trio.testing.MockClock,
) -> None:
    attempts: list[float] = []
    cancelled: list[bool] = []
    events = Events()

    async def handler(ctx: Context) -> None:
        attempts.append(trio.current_time())
        try:
            if len(attempts) == 1:
                await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.append(True)
            raise

    runtime = make_runtime(memory_queue(), handler, timeout=5.0, events=events)
    await deliver(runtime, "a1")
    await run_until_ended(runtime, events, 2)
    assert [(e.outcome, e.seconds) for e in events.ended()] == [("timeout", 5.0), ("success", 0.0)]
    assert cancelled == [True]
    assert attempts == [0.0, 6.0]  # the deadline, then the retry's delay


async def test_wake_and_stop_with_a_grace(autojump_clock: trio.testing.MockClock) -> None:
    """The memory loop sleeps until a wake or a retry's due time; ``stop(grace)`` cancels a
    run still in flight after ``grace`` seconds, and the update is lost with it."""
    ran: list[tuple[str, float]] = []

    async def handler(ctx: Context) -> None:
        ran.append((ctx.key, trio.current_time()))
        await trio.sleep_forever()

    runtime = make_runtime(memory_queue(), handler, timeout=30.0)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await trio.sleep(100)  # nothing due: no poll, nothing to do
        await deliver(runtime, "a1")  # accepted: the loop is woken at once
        await trio.sleep(1)
        await runtime.stop(grace=2)
    assert ran == [("a1", 100.0)] and trio.current_time() == 103.0
    assert not runtime.running


async def test_a_key_accepted_before_is_not_accepted_again() -> None:
    queue = memory_queue(seen_window=2)
    pairs = [(update_of(key), key) for key in ("a1", "a1", "b1")]
    assert queue.accept(pairs, now=T0) == ["a1", "b1"]  # a key twice in one delivery: once
    assert queue.accept([(update_of("a1"), "a1")], now=T0) == []  # a redelivery: nothing
    assert queue.accept([(update_of("c1"), "c1")], now=T0) == ["c1"]
    assert queue.size == 3
    # The window holds the last two keys: a1 fell out of it and is accepted again.
    assert queue.accept([(update_of("a1"), "a1")], now=T0) == ["a1"]
    assert queue.accept([(update_of("c1"), "c1")], now=T0) == []


async def test_a_delivery_that_does_not_fit_is_refused_whole() -> None:
    queue = memory_queue(capacity=3)
    assert queue.accept([(update_of(key), key) for key in ("a1", "b1")], now=T0) == ["a1", "b1"]
    refused = [(update_of(key), key) for key in ("c1", "d1")]
    assert queue.accept(refused, now=T0) is None  # one would fit; neither is queued
    assert queue.size == 2
    assert queue.accept([(update_of("c1"), "c1")], now=T0) == ["c1"]  # not seen: refused
    assert queue.accept([(update_of("a1"), "a1"), (update_of("d1"), "d1")], now=T0) is None
    (claim,) = await queue.claim(now=T0, limit=1, lease=6.0)
    assert await queue.complete(claim, consumed=(), state=None, now=T0)
    assert queue.accept([(update_of("d1"), "d1")], now=T0) == ["d1"]  # room again


async def test_the_runtime_answers_none_when_a_delivery_does_not_fit(
    autojump_clock: trio.testing.MockClock,
) -> None:
    events = Events()
    runtime = make_runtime(memory_queue(capacity=1), lambda ctx: trio.sleep(0), events=events)
    assert runtime.accept([(update_of(key), key) for key in ("a1", "b1")]) is None
    assert events == []  # nothing queued, nothing told
    assert runtime.accept([(update_of("a1"), "a1")]) == ["a1"]
    assert runtime.accept([(update_of("a1"), "a1")]) == []  # seen: runs nothing
    assert [type(e).__name__ for e in events] == ["UpdateQueued"]
