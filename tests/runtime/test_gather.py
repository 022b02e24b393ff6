"""A burst's gather (``RunConversation.gather``, both modes' one rule) against a queue whose
reads the test controls: an item that arrives while a read is under way is read again."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import trio
import trio.testing

from svc.runtime._control import RunControl
from svc.runtime._conversation import Arrivals, RunConversation
from svc.runtime._queue import Claim, Entry
from svc.webhook import Update, UserState
from svc.webhook._conversation import Coalesce

from .conftest import T0, message


class SlowReadQueue:
    """``later()`` answers the items recorded when the read began, after ``hold`` is set."""

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


async def test_an_item_recorded_during_the_last_read_joins_the_burst() -> None:
    """The window (2 s) ends while the read is under way; the item recorded at 1.5 s, within
    the window, arrived during that read: the gather reads once more and takes it."""
    clock = [T0]
    queue = SlowReadQueue()
    arrivals = Arrivals()
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
    async with trio.open_nursery() as nursery:
        conversation = RunConversation(
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
