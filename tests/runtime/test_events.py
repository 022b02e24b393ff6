"""What the runtime tells an observer: each step of an update's life, in order, naming
updates by key and queues by their hashed key; an observer's failure never stops a run."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing

from svc.runtime import (
    RunEnded,
    RunStarted,
    RuntimeEvent,
    StateWritten,
    UpdateQueued,
    UpdateTaken,
    WaitEnded,
    WaitStarted,
)
from svc.webhook import queue_key

from .conftest import LOGGER, Context, Events, deliver, make_runtime, memory_queue, message


async def test_a_run_that_waits_and_writes_state_is_told_step_by_step(
    autojump_clock: trio.testing.MockClock,
) -> None:
    events = Events()

    async def handler(ctx: Context) -> None:
        ctx.state["name"] = await ctx.wait_for("a2", timeout=60)

    runtime = make_runtime(memory_queue(), handler, events=events)
    queue = queue_key(message("a1"))
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1")
        await trio.sleep(5)
        await deliver(runtime, "a2")
        await runtime.wait_idle()
        await runtime.stop()
    expected: list[RuntimeEvent] = [
        UpdateQueued(update_key="a1", queue=queue, kind="message"),
        RunStarted(update_key="a1", queue=queue, kind="message", attempt=1),
        WaitStarted(update_key="a1", queue=queue, listener="reply", timeout=60),
        UpdateQueued(update_key="a2", queue=queue, kind="message"),
        UpdateTaken(update_key="a2", queue=queue, by="a1", how="wait"),
        WaitEnded(update_key="a1", queue=queue, listener="reply", taken="a2"),
        StateWritten(queue=queue, document=b'{"name":"a2"}'),
        RunEnded(
            update_key="a1", queue=queue, kind="message", attempt=1, outcome="success", seconds=5.0
        ),
    ]
    assert list(events) == expected


async def test_a_wait_that_times_out_is_told_without_an_update(
    autojump_clock: trio.testing.MockClock,
) -> None:
    events = Events()

    async def handler(ctx: Context) -> None:
        await ctx.wait_for("a2", timeout=30)

    runtime = make_runtime(memory_queue(), handler, events=events)
    await deliver(runtime, "a1")
    await runtime.run_until_idle()
    ends = [e for e in events if isinstance(e, WaitEnded)]
    assert [(e.update_key, e.taken) for e in ends] == [("a1", None)]
    assert events.outcomes() == [("a1", "success")]  # an uncaught ListenerTimeout ends it


async def test_an_observer_that_fails_never_stops_a_run_or_the_loop(
    caplog: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    ran: list[str] = []

    def broken(event: RuntimeEvent) -> None:
        raise RuntimeError("the inspector broke")

    async def handler(ctx: Context) -> None:
        ran.append(ctx.key)

    caplog.set_level(logging.WARNING, logger=LOGGER)
    runtime = make_runtime(memory_queue(), handler, observer=broken)
    await deliver(runtime, "a1", "a2", "b1")
    await runtime.run_until_idle()
    assert sorted(ran) == ["a1", "a2", "b1"]
    assert "runtime observer failed error=RuntimeError" in caplog.text
