"""Continuation, in both modes: a success completes its run and claims its queue's next due head
in one step (``RunQueue.complete_and_continue``), which the same slot runs next, while other
queues' heads are left to the loop's claims; a queue that ran
``CONTINUED_RUNS`` times in a row in a slot lets another queue's due head go first; a
failure, a dead letter or a refused completion never continues."""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from svc.runtime import CONTINUED_RUNS, MemoryQueue, StoreQueue
from svc.store import DeadLetter

from .conftest import SENDERS, Context, HeldStore, deliver, make_runtime, memory_queue, store_queue

RUN_CALLS = {
    "claim_inbox_items",
    "mark_inbox_item_succeeded",
    "mark_inbox_item_succeeded_and_claim",
}
"""The store calls that take or settle a run."""


@pytest.fixture(params=["memory", "store"])
async def queue(request: pytest.FixtureRequest, store: HeldStore) -> MemoryQueue | StoreQueue:
    """Each mode's queue (the store's: a held in-memory SQLite store)."""
    return memory_queue(capacity=1000) if request.param == "memory" else store_queue(store)


async def run_one_slot(store: HeldStore, keys: list[str]) -> list[str]:
    """Deliver ``keys`` and run them with one slot until idle, in order; the store calls
    that took or settled their runs."""
    log: list[str] = []

    async def handler(ctx: Context) -> None:
        log.append(ctx.key)

    runtime = make_runtime(store_queue(store), handler, concurrency=1)
    await deliver(runtime, *keys)
    store.calls.clear()
    await runtime.run_until_idle()
    assert log == keys
    assert await store.list_inbox_items() == []
    return [c for c in store.calls if c in RUN_CALLS]


async def test_a_queue_runs_in_order_with_one_store_call_a_run(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    # One claim, then each run's completion claims the next; the last claim finds none.
    assert await run_one_slot(store, [f"a{n}" for n in range(1, 11)]) == [
        "claim_inbox_items",
        *["mark_inbox_item_succeeded_and_claim"] * 10,
        "claim_inbox_items",
    ]


async def test_other_users_runs_are_left_to_the_claims(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    """Each user's message: no completion continues into another user's run; each is taken
    by a claim of the loop (in record order)."""
    keys = [f"{user}1" for user in sorted(SENDERS)]
    assert await run_one_slot(store, keys) == [
        "claim_inbox_items",
        *["mark_inbox_item_succeeded_and_claim", "claim_inbox_items"] * len(keys),
    ]


async def test_a_busy_queue_lets_another_queue_go_after_its_continued_runs(
    queue: MemoryQueue | StoreQueue, autojump_clock: trio.testing.MockClock
) -> None:
    log: list[str] = []

    async def handler(ctx: Context) -> None:
        log.append(ctx.key)

    runtime = make_runtime(queue, handler, concurrency=1)
    busy = [f"a{n}" for n in range(1, CONTINUED_RUNS + 10)]
    await deliver(runtime, *busy)
    await deliver(runtime, "b1")  # recorded after all of a's
    await runtime.run_until_idle()
    # a1 was claimed, CONTINUED_RUNS runs of a continued it, then b1 went first.
    assert log.index("b1") == CONTINUED_RUNS + 1
    assert [key for key in log if key != "b1"] == busy


async def test_a_busy_queue_that_handed_its_turn_on_waits_behind_every_queue_due(
    queue: MemoryQueue | StoreQueue, autojump_clock: trio.testing.MockClock
) -> None:
    log: list[str] = []

    async def handler(ctx: Context) -> None:
        log.append(ctx.key)
        await trio.sleep(0.01)  # runs take time: a's turn comes after b1 and c1 were recorded

    runtime = make_runtime(queue, handler, concurrency=1)
    busy = [f"a{n}" for n in range(1, CONTINUED_RUNS + 10)]
    await deliver(runtime, *busy)
    await deliver(runtime, "b1", "c1")
    await runtime.run_until_idle()
    # After its continued runs a let b1 go; its next item is due from then, behind c1.
    assert log[CONTINUED_RUNS + 1 : CONTINUED_RUNS + 3] == ["b1", "c1"]
    assert [key for key in log if key[0] == "a"] == busy


async def test_a_failure_or_a_dead_letter_does_not_continue(
    queue: MemoryQueue | StoreQueue, autojump_clock: trio.testing.MockClock
) -> None:
    log: list[tuple[str, float]] = []

    async def handler(ctx: Context) -> None:
        log.append((ctx.key, trio.current_time()))
        if ctx.key == "a1" and len(log) == 1:
            raise RuntimeError("first run fails")
        if ctx.key == "a2":
            raise DeadLetter("not_for_us")

    runtime = make_runtime(queue, handler, concurrency=1)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1", "a2", "a3")
        await trio.sleep(5)  # past a1's retry delay
        await runtime.wait_idle()
        await runtime.stop()
    # a1 retries after its 1 s delay before a2 runs; a2's dead letter lets a3 go.
    assert [key for key, _ in log] == ["a1", "a1", "a2", "a3"]
    assert log[1][1] - log[0][1] >= 1.0


async def test_a_dropped_run_does_not_continue(
    store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    log: list[str] = []
    started = trio.Event()
    release = trio.Event()

    async def handler(ctx: Context) -> None:
        log.append(ctx.key)
        if ctx.key == "a1":
            started.set()
            await release.wait()

    runtime = make_runtime(store_queue(store), handler, concurrency=1)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "a1", "a2")
        await started.wait()
        (a1,) = [i for i in await store.list_inbox_items() if i.update_key == "a1"]
        assert await store.drop_inbox_item(id=a1.id)
        store.calls.clear()
        release.set()
        await runtime.wait_idle()
        await runtime.stop()
    assert log == ["a1", "a2"]
    # a1's refused completion claimed nothing: a2 came from a claim of its own.
    calls: list[Any] = [c for c in store.calls if c in RUN_CALLS]
    assert calls[:3] == [
        "mark_inbox_item_succeeded_and_claim",
        "claim_inbox_items",
        "mark_inbox_item_succeeded_and_claim",
    ]
    assert await store.list_inbox_items() == []
