"""A run's control: its deadline stands still while it waits for the user, its lease is
renewed while it lives, it is stopped when the lease is lost or no renewal is confirmed
before the lease ends (its settlement then refused), and what it consumed and the state
it set commit with its success only.

Over a real store (``StoreQueue`` on SQLite) where the old worker tests were, over fakes of
``MemoryQueue`` for the renewals a store cannot be made to refuse or fail on cue.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime, timedelta
from typing import Any

import pytest
import trio
import trio.testing

from svc.runtime import LEASE_EXPIRED, LEASE_LOST, Claim, MemoryQueue, RunControl, RunSlots
from svc.store import InboxStatus

from .conftest import (
    LOGGER,
    T0,
    Context,
    Events,
    HeldStore,
    deliver,
    make_runtime,
    memory_queue,
    store_queue,
)


async def test_pauses_nest_and_the_deadline_stands_still_inside(
    autojump_clock: trio.testing.MockClock,
) -> None:
    control = RunControl(10.0, None)
    assert control.scope.deadline == 10.0
    await trio.sleep(4)
    async with control.paused():
        assert control.scope.deadline == math.inf
        async with control.paused():
            await trio.sleep(100)
        assert control.scope.deadline == math.inf  # the outer pause still holds
        await trio.sleep(100)
    assert control.scope.deadline == 210.0  # 6 s left, counted from the end of the pause
    control.lose(LEASE_LOST)
    control.lose(LEASE_EXPIRED)
    assert control.lost == LEASE_LOST and control.scope.cancel_called


async def test_a_pause_gives_its_slot_back_and_takes_one_again(
    autojump_clock: trio.testing.MockClock,
) -> None:
    slots = RunSlots(1, 1, lambda: None)
    slots.take(1)
    control = RunControl(10.0, slots)
    async with control.paused():
        assert not control.holds_slot and (slots.free, slots.waiting) == (1, 1)
    assert control.holds_slot and (slots.free, slots.waiting) == (0, 0)


async def test_time_paused_does_not_count_against_the_deadline(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    events = Events()

    async def handler(ctx: Context) -> None:
        if ctx.key == "a1":
            await trio.sleep(6)
            assert await ctx.wait_for("a2") == "a2"  # 25 s
            await trio.sleep(3)  # 6 + 3 s run, 25 s waited: within the 10 s deadline

    runtime = make_runtime(store_queue(store), handler, timeout=10.0, events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1")
        await trio.sleep(31)
        await deliver(runtime, "a2")
        await trio.sleep(10)
        await runtime.stop()
    assert [(e.update_key, e.outcome, e.seconds) for e in events.ended()] == [
        ("a1", "success", 34.0)
    ]
    assert await store.list_inbox_items() == []


async def test_time_outside_pauses_still_counts(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    events = Events()

    async def handler(ctx: Context) -> None:
        await trio.sleep(6)
        await ctx.wait_for("a2")
        await trio.sleep_forever()  # overruns the 4 s left of its deadline

    runtime = make_runtime(store_queue(store), handler, timeout=10.0, events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1")
        await trio.sleep(31)
        await deliver(runtime, "a2")
        while not events.ended():
            await trio.sleep(0.25)  # back before the retry at 36 s
        await runtime.stop(grace=0)
    assert [(e.outcome, e.seconds, e.reason) for e in events.ended()] == [
        ("timeout", 35.0, "timeout")
    ]
    items = await store.items()
    assert (items["a1"].status, items["a1"].last_error) == (InboxStatus.PENDING, "timeout")
    assert "a2" in items  # what a failed run took stays for its rerun


async def test_the_lease_is_renewed_while_a_run_waits_so_no_other_claim_takes_it(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    async def handler(ctx: Context) -> None:
        await ctx.wait_for("a2")

    runtime = make_runtime(store_queue(store), handler, lease=3.0, timeout=2.0)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1")
        await trio.sleep(3.5)  # past the claim's lease (3 s) and its deadline, paused
        assert store.calls.count("extend_inbox_lease") == 3  # at 1, 2 and 3 s
        assert (
            await store.claim_inbox_items(now=T0 + timedelta(seconds=3.5), limit=10, lease_ms=1)
            == []
        )
        assert (await store.items())["a1"].lease_expires_at == T0 + timedelta(seconds=6)
        await deliver(runtime, "a2")
        await runtime.wait_idle()
        await runtime.stop()
    assert await store.list_inbox_items() == []


async def test_a_run_whose_lease_was_taken_is_stopped_and_completes_nothing(
    store: HeldStore, caplog: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    events = Events()
    left: list[float] = []

    async def handler(ctx: Context) -> None:
        assert await ctx.wait_for("a2") == "a2"
        ctx.state["step"] = 2
        try:
            await trio.sleep_forever()
        finally:
            left.append(trio.current_time())

    caplog.set_level(logging.WARNING, logger=LOGGER)
    runtime = make_runtime(store_queue(store), handler, lease=3.0, events=events)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1", "a2")
        await trio.sleep(0.5)
        # Another worker, whose clock runs 10 s ahead, takes the item: the lease is lost.
        (taken,) = await store.claim_inbox_items(
            now=T0 + timedelta(seconds=10), limit=10, lease_ms=60_000
        )
        await trio.sleep(1)
        await runtime.stop()
    assert left == [1.0]  # stopped at its first renewal, refused
    ended = events.ended()
    assert [(e.outcome, e.reason, e.seconds) for e in ended] == [("error", LEASE_LOST, 1.0)]
    assert "handler run fenced kind=message outcome=error error=lease_lost" in caplog.text
    items = await store.items()
    assert sorted(items) == ["a1", "a2"]  # a2 was not consumed
    assert (items["a1"].lease_id, items["a1"].attempts) == (taken.lease_id, 2)
    assert await store.get_user_state(queue_key=taken.queue_key, now=T0) is None


class RefusedRenewal(MemoryQueue):
    """A memory queue whose items are taken by another claim at their first renewal: the
    renewal answers False, and every settlement of that claim is refused."""

    def __init__(self) -> None:
        super().__init__(capacity=10, seen_window=10, state_ttl=timedelta(days=1))
        self.lost: set[str] = set()
        self.refused: list[str] = []

    async def renew(self, claim: Claim, *, until: datetime) -> bool:
        self.lost.add(claim.lease_id)
        return False

    def _refuse(self, claim: Claim, name: str) -> bool:
        if claim.lease_id in self.lost:
            self.refused.append(name)
            return True
        return False

    async def complete(self, claim: Claim, **kwargs: Any) -> bool:
        return False if self._refuse(claim, "complete") else await super().complete(claim, **kwargs)

    async def fail(self, claim: Claim, **kwargs: Any) -> bool:
        return False if self._refuse(claim, "fail") else await super().fail(claim, **kwargs)

    async def bury(self, claim: Claim, **kwargs: Any) -> bool:
        return False if self._refuse(claim, "bury") else await super().bury(claim, **kwargs)


async def test_a_renewal_refused_stops_the_run_at_once_and_its_settlement_is_refused(
    caplog: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    queue = RefusedRenewal()
    events = Events()
    cancelled: list[float] = []

    async def handler(ctx: Context) -> None:
        ctx.state["seen"] = True
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.append(trio.current_time())
            raise

    caplog.set_level(logging.WARNING, logger=LOGGER)
    runtime = make_runtime(queue, handler, lease=6.0, timeout=30.0, events=events)
    await deliver(runtime, "a1")
    await runtime.run_until_idle()
    assert cancelled == [2.0]  # the first renewal (a third of the lease), not its end
    assert [(e.outcome, e.reason) for e in events.ended()] == [("error", LEASE_LOST)]
    assert queue.refused == ["fail"]
    assert "handler run fenced kind=message outcome=error error=lease_lost" in caplog.text
    assert "StateWritten" not in {type(e).__name__ for e in events}


class FailingRenewal(MemoryQueue):
    """A memory queue whose renewals all raise (a store that cannot be reached)."""

    def __init__(self) -> None:
        super().__init__(capacity=10, seen_window=10, state_ttl=timedelta(days=1))
        self.renewals: list[float] = []

    async def renew(self, claim: Claim, *, until: datetime) -> bool:
        self.renewals.append(trio.current_time())
        raise ConnectionError("the store is down")


async def test_a_run_whose_renewals_fail_is_stopped_when_its_lease_ends(
    caplog: pytest.LogCaptureFixture, autojump_clock: trio.testing.MockClock
) -> None:
    queue = FailingRenewal()
    events = Events()

    async def handler(ctx: Context) -> None:
        await trio.sleep_forever()

    caplog.set_level(logging.WARNING, logger=LOGGER)
    runtime = make_runtime(queue, handler, lease=3.0, timeout=30.0, events=events)
    await deliver(runtime, "a1")
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        while not events.ended():
            await trio.sleep(0.5)
        await runtime.stop(grace=0)
    (ended,) = events.ended()
    assert (ended.outcome, ended.reason, ended.seconds) == ("error", LEASE_EXPIRED, 3.0)
    assert queue.renewals[:3] == [1.0, 2.0, 2.5]  # tried again, each time before the end
    assert all(at < 3.0 for at in queue.renewals)
    assert "inbox worker store call failed error=ConnectionError" in caplog.text
    assert ended.retry_in == 1.0  # the memory queue kept it: it runs again


async def test_consumed_items_and_the_state_commit_with_the_success(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    calls: list[str] = []
    states: dict[str, Any] = {}

    async def handler(ctx: Context) -> None:
        calls.append(ctx.key)
        states[ctx.key] = dict(ctx.state)
        if ctx.key == "a1":
            assert await ctx.wait_for("a2", "a4") == "a2"
            assert await ctx.wait_for("a2", "a4") == "a4"  # a2 is taken: once is enough
            ctx.state["step"] = 2

    runtime = make_runtime(store_queue(store), handler)
    await deliver(runtime, "a1", "a2", "b1", "a3", "a4")
    await runtime.run_until_idle()
    assert sorted(calls) == ["a1", "a3", "b1"]  # the consumed a2 and a4 never ran
    assert states["a3"] == {"step": 2}
    assert await store.list_inbox_items() == []


async def test_a_failed_run_commits_neither_and_its_rerun_finds_the_same_items(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    async def handler(ctx: Context) -> None:
        taken = await ctx.wait_for("a2")
        seen.append((taken, dict(ctx.state)))
        ctx.state["try"] = len(seen)
        if len(seen) == 1:
            raise ValueError

    runtime = make_runtime(store_queue(store), handler)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1", "a2")
        await runtime.wait_idle()
        items = await store.items()
        assert sorted(items) == ["a1", "a2"] and items["a1"].status is InboxStatus.PENDING
        await trio.sleep(1)  # a1 retries: the same later item, now committed
        runtime.wake()
        await runtime.wait_idle()
        await runtime.stop()
    assert seen == [("a2", {}), ("a2", {})]
    assert await store.list_inbox_items() == []


async def test_a_memory_run_s_state_is_kept_for_the_queue_s_next_run(
    autojump_clock: trio.testing.MockClock,
) -> None:
    states: list[dict[str, Any]] = []

    async def handler(ctx: Context) -> None:
        states.append(dict(ctx.state))
        ctx.state["count"] = ctx.state.get("count", 0) + 1

    runtime = make_runtime(memory_queue(), handler)
    await deliver(runtime, "a1", "a2", "b1")
    await runtime.run_until_idle()
    assert sorted(map(str, states)) == ["{'count': 1}", "{}", "{}"]


@pytest.mark.parametrize("mode", ["store", "memory"])
async def test_a_state_json_cannot_hold_dead_letters_at_once_and_writes_nothing(
    mode: str, store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    """A value JSON cannot hold, put in ``ctx.state`` in place (past ``__setitem__``'s check)
    or over the cap, is a dead letter at once (no rerun can write it); the queue goes on."""
    calls: list[str] = []
    states: dict[str, dict[str, Any]] = {}
    events = Events()

    async def handler(ctx: Context) -> None:
        calls.append(ctx.key)
        states[ctx.key] = dict(ctx.state)
        ctx.state["cart"] = []
        if ctx.key == "a1":
            ctx.state["cart"].append({1, 2})  # a set, in place: no JSON
        elif ctx.key == "a2":
            ctx.state["cart"].append(math.nan)
        elif ctx.key == "a3":
            ctx.state["cart"].append("x" * 20_000)

    queue = store_queue(store) if mode == "store" else memory_queue()
    runtime = make_runtime(queue, handler, events=events)
    await deliver(runtime, "a1", "a2", "a3", "a4")
    await runtime.run_until_idle()
    assert calls == ["a1", "a2", "a3", "a4"]  # one run each: none retried
    assert [(e.update_key, e.outcome, e.reason) for e in events.ended()] == [
        ("a1", "dead", "state_not_json"),
        ("a2", "dead", "state_not_json"),
        ("a3", "dead", "state_too_large"),
        ("a4", "success", None),
    ]
    assert states["a4"] == {}  # none of them wrote a state
    if mode == "store":
        dead = await store.list_inbox_items(status="dead")
        assert [(i.update_key, i.attempts, i.last_error) for i in dead] == [
            ("a1", 1, "state_not_json"),
            ("a2", 1, "state_not_json"),
            ("a3", 1, "state_too_large"),
        ]


@pytest.mark.parametrize("mode", ["store", "memory"])
async def test_a_state_unwritten_for_its_ttl_reads_as_empty(
    mode: str, store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    """A state lasts ``state_ttl`` (here a day) after its last write, whether or not a tidy
    ran since: a1 writes it at 0, a2 rewrites it a second before it lapses, a3 a day on
    still finds a2's, a4 a day after a2's write finds none."""
    states: list[dict[str, Any]] = []

    async def handler(ctx: Context) -> None:
        states.append(dict(ctx.state))
        if ctx.key in ("a1", "a2"):
            ctx.state["n"] = len(states)

    ttl = timedelta(days=1)
    queue = store_queue(store, state_ttl=ttl) if mode == "store" else memory_queue(state_ttl=ttl)
    day = ttl.total_seconds()
    runtime = make_runtime(queue, handler, poll_interval=day)  # no turn a virtual second
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        for key, then in (("a1", day - 1), ("a2", 2), ("a3", day), ("a4", 0)):
            await deliver(runtime, key)
            await runtime.wait_idle()
            await trio.sleep(then)
        await runtime.stop()
    assert states == [{}, {"n": 1}, {"n": 2}, {}]
