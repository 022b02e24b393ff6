"""Run slots: a run paused waiting for the user gives its slot back, so with concurrency 1
another queue's head runs meanwhile; the paused run takes a slot again before it goes on
(waiting for one, ahead of new claims, its deadline still); past ``max_waiting`` paused
runs a pause keeps its slot. On SQLite and PostgreSQL; trio's ``MockClock`` as in
``test_inbox_run_control``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from svc.store import (
    InboxItem,
    InboxRun,
    InboxWorkerOptions,
    PersistenceStore,
    PersistenceValidationError,
    RunControl,
    run_inbox_worker,
)

from .conftest import T0, _backend, _closing_opened
from .test_inbox_run_control import Observed
from .test_inbox_worker import Clock, items, options, record


@pytest.fixture(params=["sqlite-memory", "sqlite-file", "postgres"])
async def slotted(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """A migrated store of SQLite (memory, file) and PostgreSQL."""
    async with _closing_opened(_backend(request.param, request, tmp_path)) as backend:
        opened = backend.open()
        await opened.migrate()
        yield opened


class Script:
    """What the handlers did, in order, and the events the test releases them with."""

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
        while entry not in self.log:
            await self._changed.wait()


def waiting_handler(store: PersistenceStore, script: Script) -> Any:
    """``a1`` waits (paused) for its reply and consumes it; the others wait for their gate
    unpaused (holding their slot)."""

    async def handler(item: InboxItem, control: RunControl) -> None:
        name = item.update_key
        script.note(f"{name} start")
        if name == "a1":
            async with control.paused():
                script.note("a1 paused")
                await script.gate("reply").wait()
                (reply,) = await store.list_inbox_queue(queue_key=item.queue_key, after_id=item.id)
                control.consume(reply.id)
            script.note("a1 resumed")
            await trio.sleep(3)  # 3 s of its 10 s deadline: the waits did not count
        else:
            await script.gate(name).wait()
        script.note(f"{name} end")

    return handler


async def _two_queues(
    store: PersistenceStore, script: Script
) -> tuple[list[InboxRun], InboxWorkerOptions]:
    """``a1`` (queue qa) and ``b1`` (qb) recorded; a worker of ``waiting_handler`` with one
    slot and a 10 s deadline, and the list its runs are appended to."""
    await record(store, ("a1", "qa"))
    await record(store, ("b1", "qb"))
    runs: list[InboxRun] = []
    worker = options(
        waiting_handler(store, script), concurrency=1, handler_timeout=10.0, on_run=runs.append
    )
    return runs, worker


async def test_a_waiting_run_lets_another_queue_run_and_resumes_after_its_reply(
    slotted: Any, mock_clock: trio.testing.MockClock
) -> None:
    store, script = slotted, Script()
    runs, worker = await _two_queues(store, script)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, worker)
        await script.reached("a1 paused")
        await script.reached("b1 start")  # concurrency 1: a1's slot went to qb's head
        assert (handle.in_flight, handle.waiting) == (2, 1)
        mock_clock.jump(60)
        script.gate("b1").set()
        await script.reached("b1 end")
        await record(store, ("a2", "qa"))  # the reply
        handle.wake()
        script.gate("reply").set()
        await script.reached("a1 resumed")
        mock_clock.jump(3)
        await handle.wait_idle()
        await handle.stop()
    assert script.log == [
        "a1 start",
        "a1 paused",
        "b1 start",
        "b1 end",
        "a1 resumed",
        "a1 end",
    ]  # a2 never ran on its own: a1 consumed it
    assert sorted((run.kind, run.outcome) for run in runs) == [("message", "success")] * 2
    assert await store.list_inbox_items() == []


async def test_a_resumed_run_waits_for_a_free_slot_ahead_of_new_claims(
    slotted: Any, mock_clock: trio.testing.MockClock
) -> None:
    store, script = slotted, Script()
    runs, worker = await _two_queues(store, script)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, worker)
        await script.reached("b1 start")
        await record(store, ("a2", "qa"), ("c1", "qc"))
        script.gate("reply").set()  # a1's reply came, but b1 holds the only slot
        handle.wake()
        await trio.testing.wait_all_tasks_blocked()
        assert "a1 resumed" not in script.log
        mock_clock.jump(60)  # waiting for a slot does not count against a1's deadline
        script.gate("b1").set()
        await script.reached("a1 resumed")
        mock_clock.jump(3)
        await script.reached("c1 start")
        script.gate("c1").set()
        await handle.wait_idle()
        await handle.stop()
    assert script.log == [
        "a1 start",
        "a1 paused",
        "b1 start",
        "b1 end",
        "a1 resumed",  # before qc's head, recorded while it waited
        "a1 end",
        "c1 start",
        "c1 end",
    ]
    assert [run.outcome for run in runs] == ["success"] * 3
    assert await store.list_inbox_items() == []


async def test_the_lease_is_renewed_while_a_resumed_run_waits_for_a_slot(
    slotted: Any, mock_clock: trio.testing.MockClock
) -> None:
    store, script, clock = slotted, Script(), Clock()
    observed = Observed(store)

    async def handler(item: InboxItem, control: RunControl) -> None:
        name = item.update_key
        script.note(f"{name} start")
        if name == "a1":
            async with control.paused():
                await script.gate("reply").wait()
            script.note("a1 resumed")
        else:
            await script.gate(name).wait()

    await record(store, ("a1", "qa"))
    await record(store, ("b1", "qb"))
    worker = options(handler, concurrency=1, handler_timeout=2.0, lease_ms=3000, now=clock)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, observed, worker)
        await script.reached("b1 start")
        script.gate("reply").set()  # a1 waits for b1's slot now
        await trio.testing.wait_all_tasks_blocked()
        clock.advance(1000)
        mock_clock.jump(1)  # a third of the lease: a1's is renewed while it waits
        await observed.extended(1)
        assert "a1 resumed" not in script.log
        assert (await items(store))["a1"].lease_expires_at == T0 + timedelta(seconds=4)
        script.gate("b1").set()
        await script.reached("a1 resumed")
        await handle.wait_idle()
        await handle.stop()
    assert all(observed.extensions)  # never lost (the renewal on resume may be cut short)
    assert await store.list_inbox_items() == []


async def test_past_max_waiting_a_paused_run_keeps_its_slot(
    slotted: Any, mock_clock: trio.testing.MockClock
) -> None:
    store, script = slotted, Script()

    async def handler(item: InboxItem, control: RunControl) -> None:
        name = item.update_key
        script.note(f"{name} start")
        async with control.paused():
            await script.gate(name).wait()
        script.note(f"{name} end")

    await record(store, ("a1", "qa"))
    await record(store, ("b1", "qb"))
    await record(store, ("c1", "qc"))
    worker = options(handler, concurrency=1, max_waiting=1)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, worker)
        await script.reached("b1 start")  # a1 paused without its slot: the one allowed
        assert (handle.in_flight, handle.waiting) == (2, 1)
        script.gate("a1").set()  # a1 waits for b1's slot, kept while b1 is paused
        await trio.testing.wait_all_tasks_blocked()
        assert script.log == ["a1 start", "b1 start"]
        script.gate("b1").set()
        await script.reached("a1 end")
        await script.reached("c1 start")
        script.gate("c1").set()
        await handle.wait_idle()
        await handle.stop()
    assert script.log == ["a1 start", "b1 start", "b1 end", "a1 end", "c1 start", "c1 end"]
    assert await store.list_inbox_items() == []


@pytest.mark.parametrize("value", [-1, 100_001, True, 1.5])
def test_max_waiting_out_of_range_is_refused(value: Any) -> None:
    async def handler(item: InboxItem, control: RunControl) -> None:
        return None

    with pytest.raises(PersistenceValidationError):
        InboxWorkerOptions(handler=handler, max_waiting=value)
