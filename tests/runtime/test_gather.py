"""A burst's gather and a wait (``RunConversation``, both modes' one rule) against a queue
whose first read the test holds: an item that arrives while that read is under way, and so may
be missing from it, is read again once the time is up; and a burst's ends (``max_wait``,
``max_count``) over both modes' queues."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

import pytest
import trio
import trio.testing

from svc.runtime._control import RunControl
from svc.runtime._conversation import Arrivals, RunConversation
from svc.runtime._queue import Claim, Entry
from svc.webhook import Update, UserState
from svc.webhook._conversation import Coalesce

from .conftest import (
    T0,
    Bot,
    Context,
    HeldStore,
    deliver,
    key_of,
    make_runtime,
    memory_queue,
    message,
    reply_to,
    store_queue,
)


class SlowReadQueue:
    """``later()`` answers the items there when the read began; its first read returns only
    once ``hold`` is set."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.hold = trio.Event()
        self.reading = trio.Event()
        self.reads = 0

    async def later(self, claim: Claim) -> Sequence[Entry]:
        seen = list(self.entries)
        self.reads += 1
        if self.reads == 1:
            self.reading.set()
            await self.hold.wait()
        return seen

    async def note_taken(self, claim: Claim, ids: Sequence[int]) -> None:
        return None


def _entry(id: int, key: str, at: datetime) -> Entry:
    update: Update = message(key)
    return Entry(id=id, update_key=key, kind=update.kind, recorded_at=at, update=update)


def _conversation(
    queue: SlowReadQueue, arrivals: Arrivals, clock: list[datetime]
) -> tuple[Update, Callable[[trio.Nursery], RunConversation]]:
    """The head ``a1`` claimed at T0, and its conversation over ``queue`` in a nursery."""
    head = message("a1")
    claim = Claim(
        id=1,
        update_key="a1",
        queue="a",
        kind=head.kind,
        attempt=1,
        recorded_at=T0,
        lease_id="l",
        payload=head,
    )

    def make(nursery: trio.Nursery) -> RunConversation:
        return RunConversation(
            queue=queue,  # type: ignore[arg-type]
            claim=claim,
            update=head,
            state=UserState(),
            control=RunControl(30.0, None),
            arrivals=arrivals,
            poll_interval=60.0,
            now=lambda: clock[0],
            observer=lambda event: None,
            tasks=nursery,
        )

    return head, make


async def test_an_item_recorded_during_the_last_read_joins_the_burst() -> None:
    """The window (2 s) ends while the read is under way; the item recorded at 1.5 s, within
    the window, arrived during that read: the gather reads once more and takes it."""
    clock = [T0]
    queue = SlowReadQueue()
    arrivals = Arrivals()
    head, make = _conversation(queue, arrivals, clock)
    async with trio.open_nursery() as nursery:
        conversation = make(nursery)
        nursery.start_soon(conversation.gather, Coalesce.of(2.0))
        await queue.reading.wait()
        queue.entries.append(_entry(2, "a2", T0 + timedelta(seconds=1.5)))
        arrivals.notify()
        clock[0] = T0 + timedelta(seconds=4)
        queue.hold.set()
    assert [u.message_id for u in conversation.updates] == [
        head.message_id,  # type: ignore[attr-defined]
        message("a2").message_id,  # type: ignore[attr-defined]
    ]
    assert queue.reads == 2  # the read that missed it, and the one more


async def test_a_reply_recorded_during_the_wait_s_last_read_is_taken(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The wait's 5 s end while its read is under way; the reply came during that read: the
    wait reads once more and returns it instead of timing out."""
    queue = SlowReadQueue()
    arrivals = Arrivals()
    _, make = _conversation(queue, arrivals, [T0])
    taken: list[Update] = []
    async with trio.open_nursery() as nursery:
        conversation = make(nursery)

        async def wait() -> None:
            taken.append(await conversation.listen(reply_to("a2"), 5.0))

        nursery.start_soon(wait)
        await queue.reading.wait()
        queue.entries.append(_entry(2, "a2", T0 + timedelta(seconds=4)))
        arrivals.notify()
        await trio.sleep(6)  # the wait's time is up while its read is held
        queue.hold.set()
    assert taken == [queue.entries[0].update]
    assert queue.reads == 2


class BurstBot(Bot):
    """``Bot``, its messages coalesced by ``burst``."""

    def __init__(self, burst: Coalesce, calls: list[list[str]]) -> None:
        async def handler(ctx: Context) -> None:
            calls.append([key_of(update) for update in ctx.updates])

        super().__init__(handler)
        self._burst = burst

    def coalesce_for(self, update: Update) -> Coalesce:
        return self._burst


@pytest.mark.parametrize("mode", ["store", "memory"])
async def test_a_burst_ends_at_max_wait_or_max_count_and_the_rest_runs_after(
    mode: str, store: HeldStore, autojump_clock: trio.testing.MockClock
) -> None:
    """Window 2 s, ``max_wait`` 4 s, ``max_count`` 4: user a's messages 1.5 s apart close the
    burst at 4 s after the first (a4, at 4.5 s, runs next); user b's five at once make a burst
    of four and one of the fifth."""
    calls: list[list[str]] = []
    queue = store_queue(store) if mode == "store" else memory_queue()
    bot = BurstBot(Coalesce.of(2.0, 4.0, 4), calls)
    runtime = make_runtime(queue, lambda ctx: trio.sleep(0), facade=bot)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        await deliver(runtime, "b1", "b2", "b3", "b4", "b5")
        for key in ("a1", "a2", "a3", "a4"):
            await deliver(runtime, key)
            await trio.sleep(1.5)
        await trio.sleep(10)
        await runtime.wait_idle()
        await runtime.stop()
    assert sorted(calls) == [["a1", "a2", "a3"], ["a4"], ["b1", "b2", "b3", "b4"], ["b5"]]
