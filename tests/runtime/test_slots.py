"""Run slots: a run waiting for the user gives its slot back, so with concurrency 1 another
queue's head runs meanwhile; the waiting run takes a slot again before it goes on (waiting
for one, ahead of new claims, its deadline and lease kept); past ``max_waiting`` waiting
runs a wait keeps its slot. Over SQLite (memory, file) and PostgreSQL.
"""

from __future__ import annotations

from datetime import timedelta

import trio
import trio.testing

from svc.runtime import RunSlots

from .conftest import T0, Context, Events, HeldStore, deliver, make_runtime, store_queue


class Script:
    """What the handlers did, in order, and the gates the test opens."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.gates: dict[str, trio.Event] = {}
        self._changed = trio.Event()

    def note(self, entry: str) -> None:
        self.log.append(entry)
        self._changed.set()
        self._changed = trio.Event()

    def gate(self, name: str) -> trio.Event:
        return self.gates.setdefault(name, trio.Event())

    async def reached(self, entry: str) -> None:
        with trio.fail_after(300):  # virtual time: a wrong turn fails, never spins
            while entry not in self.log:
                await self._changed.wait()

    async def handler(self, ctx: Context) -> None:
        """``a1`` waits for its reply ``a2`` and then runs 3 s; the others wait for their gate
        without pausing (holding their slot)."""
        self.note(f"{ctx.key} start")
        if ctx.key == "a1":
            await ctx.wait_for("a2")
            self.note("a1 resumed")
            await trio.sleep(3)  # 3 s of its 10 s deadline: the waits did not count
        else:
            await self.gate(ctx.key).wait()
        self.note(f"{ctx.key} end")


async def test_a_waiting_run_lets_another_queue_run_and_resumes_after_its_reply(
    any_store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    script, events = Script(), Events()
    runtime = make_runtime(
        store_queue(any_store), script.handler, concurrency=1, timeout=10.0, events=events
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1", "b1")
        await script.reached("b1 start")  # concurrency 1: a1's slot went to b's head
        await trio.sleep(8)  # within b1's deadline
        assert "a1 resumed" not in script.log
        script.gate("b1").set()
        await script.reached("b1 end")
        await deliver(runtime, "a2")  # the reply, at 8 s: a1 ends at 11 s, within its deadline
        await script.reached("a1 end")
        await runtime.wait_idle()
        await runtime.stop()
    assert script.log == ["a1 start", "b1 start", "b1 end", "a1 resumed", "a1 end"]
    assert sorted(events.outcomes()) == [("a1", "success"), ("b1", "success")]  # a2 taken
    assert await any_store.list_inbox_items() == []


async def test_a_resumed_run_waits_for_a_free_slot_ahead_of_new_claims(
    any_store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    script, events = Script(), Events()
    runtime = make_runtime(
        store_queue(any_store), script.handler, concurrency=1, timeout=10.0, events=events
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1", "b1")
        await script.reached("b1 start")
        await deliver(runtime, "a2", "c1")  # a1's reply came, but b1 holds the only slot
        await trio.sleep(8)  # waiting for a slot does not count against a1's deadline
        assert "a1 resumed" not in script.log
        script.gate("b1").set()
        await script.reached("c1 start")
        script.gate("c1").set()
        await runtime.wait_idle()
        await runtime.stop()
    assert script.log == [
        "a1 start",
        "b1 start",
        "b1 end",
        "a1 resumed",  # before c's head, recorded while it waited
        "a1 end",
        "c1 start",
        "c1 end",
    ]
    assert [outcome for _, outcome in events.outcomes()] == ["success"] * 3
    assert await any_store.list_inbox_items() == []


async def test_the_lease_is_renewed_while_a_resumed_run_waits_for_a_slot(
    any_store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    script, events = Script(), Events()
    runtime = make_runtime(
        store_queue(any_store),
        script.handler,
        concurrency=1,
        timeout=10.0,
        lease=3.0,
        events=events,
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1", "b1")
        await script.reached("b1 start")
        await deliver(runtime, "a2")  # a1 waits for b1's slot now
        await trio.sleep(7.5)  # renewed every second; the claim's own lease ended at 3 s
        assert "a1 resumed" not in script.log
        items = await any_store.items()
        assert items["a1"].lease_expires_at == T0 + timedelta(seconds=10)  # renewed at 7 s
        script.gate("b1").set()
        await script.reached("a1 end")
        await runtime.wait_idle()
        await runtime.stop()
    assert events.outcomes() == [("b1", "success"), ("a1", "success")]
    assert await any_store.list_inbox_items() == []


async def test_past_max_waiting_a_waiting_run_keeps_its_slot(
    any_store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    script = Script()

    async def handler(ctx: Context) -> None:
        script.note(f"{ctx.key} start")
        await ctx.wait_for(ctx.key[0] + "2")
        script.note(f"{ctx.key} end")

    runtime = make_runtime(store_queue(any_store), handler, concurrency=1, max_waiting=1)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1", "b1", "c1")
        await script.reached("b1 start")  # a1 waits without its slot: the one allowed
        await deliver(runtime, "a2")  # a1 wants b1's slot, kept while b1 waits
        await trio.sleep(5)
        assert script.log == ["a1 start", "b1 start"]
        await deliver(runtime, "b2")
        await script.reached("c1 start")
        await deliver(runtime, "c2")
        await runtime.wait_idle()
        await runtime.stop()
    assert script.log == ["a1 start", "b1 start", "b1 end", "a1 end", "c1 start", "c1 end"]
    assert await any_store.list_inbox_items() == []


def test_slots_count_claims_pauses_and_resumes() -> None:
    freed: list[int] = []
    slots = RunSlots(2, 1, lambda: freed.append(slots.free))
    slots.take(2)
    assert slots.free == 0
    assert slots.pause() and (slots.free, slots.waiting) == (1, 1)
    assert not slots.pause()  # past max_waiting: the run keeps its slot
    slots.release(1, wake=False)  # a claim's unused slot: no wake-up
    assert freed == [1] and slots.free == 2
