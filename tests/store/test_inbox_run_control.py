"""The worker's ``RunControl``: time paused (waiting for the user) does not count against the
deadline, the lease is renewed while paused (a run whose lease was taken is cancelled), and
what a run consumed and the state it set commit with its success only.

Timers follow trio's ``MockClock`` (jumped by the tests), due times the injected ``Clock``,
as in ``test_inbox_worker``; tests wait on events, never on time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest
import trio
import trio.testing

from svc.store import (
    InboxItem,
    InboxRun,
    InboxStatus,
    PersistenceValidationError,
    RunControl,
    SqliteStore,
    UserStateWrite,
    run_inbox_worker,
)

from .conftest import T0
from .test_inbox_worker import Clock, items, options, record

DAY = timedelta(days=1)


@pytest.fixture
async def store() -> AsyncIterator[SqliteStore]:
    opened = SqliteStore(":memory:")
    await opened.migrate()
    yield opened
    await opened.close()


class Observed:
    """The store, with each lease extension counted (a test double by delegation)."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self.extensions: list[bool] = []
        self._changed = trio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def extend_inbox_lease(self, **kwargs: Any) -> bool:
        kept = await self._store.extend_inbox_lease(**kwargs)
        self.extensions.append(kept)
        self._changed.set()
        self._changed = trio.Event()
        return kept

    async def extended(self, count: int) -> None:
        """Return once ``count`` extensions have ended."""
        while len(self.extensions) < count:
            await self._changed.wait()


Handler = Callable[[InboxItem, RunControl], Awaitable[None]]


async def _paused_for_25_seconds(
    store: SqliteStore,
    mock_clock: trio.testing.MockClock,
    handler: Handler,
    events: tuple[trio.Event, trio.Event, trio.Event, trio.Event],
    *,
    then: float,
) -> list[InboxRun]:
    """Run ``handler`` (deadline 10 s) over the recorded item: 6 s once it is ``entered``,
    25 s once ``paused``, ``gate`` set, ``then`` s once ``resumed``; return its runs."""
    entered, paused, resumed, gate = events
    runs: list[InboxRun] = []
    worker = options(handler, handler_timeout=10.0, on_run=runs.append)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, worker)
        await entered.wait()
        mock_clock.jump(6)
        await paused.wait()
        mock_clock.jump(25)
        gate.set()
        await resumed.wait()
        mock_clock.jump(then)
        await handle.wait_idle()
        await handle.stop()
    return runs


async def test_time_paused_does_not_count_against_the_deadline(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"))
    entered, paused, resumed, gate = trio.Event(), trio.Event(), trio.Event(), trio.Event()

    async def handler(item: InboxItem, control: RunControl) -> None:
        entered.set()
        await trio.sleep(6)
        async with control.paused():
            async with control.paused():  # pauses nest
                assert control.is_paused
            paused.set()
            await gate.wait()
        assert not control.is_paused
        resumed.set()
        await trio.sleep(3)  # 6 + 3 s run, 25 s paused: within the 10 s deadline

    events = (entered, paused, resumed, gate)
    runs = await _paused_for_25_seconds(store, mock_clock, handler, events, then=3)
    assert [(run.outcome, run.duration) for run in runs] == [("success", 34.0)]
    assert await store.list_inbox_items() == []


async def test_time_outside_pauses_still_counts(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"))
    entered, paused, resumed, gate = trio.Event(), trio.Event(), trio.Event(), trio.Event()

    async def handler(item: InboxItem, control: RunControl) -> None:
        entered.set()
        await trio.sleep(6)
        async with control.paused():
            paused.set()
            await gate.wait()
        resumed.set()
        await trio.sleep_forever()  # overruns the 4 s left of its deadline

    events = (entered, paused, resumed, gate)
    runs = await _paused_for_25_seconds(store, mock_clock, handler, events, then=4)
    assert [(run.outcome, run.duration) for run in runs] == [("timeout", 35.0)]
    (item,) = await store.list_inbox_items()
    assert (item.status, item.last_error) == (InboxStatus.PENDING, "timeout")


async def test_the_lease_is_renewed_while_paused_so_no_other_claim_takes_the_item(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"))
    clock = Clock()
    observed = Observed(store)
    entered, gate = trio.Event(), trio.Event()

    async def handler(item: InboxItem, control: RunControl) -> None:
        async with control.paused():
            entered.set()
            await gate.wait()

    worker = options(handler, handler_timeout=2.0, lease_ms=3000, now=clock)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, observed, worker)
        await entered.wait()
        clock.advance(2000)
        mock_clock.jump(1)  # a third of the lease: renewed until T0 + 5 s
        await observed.extended(1)
        clock.advance(1500)  # past the claim's lease (T0 + 3 s)
        assert await store.claim_inbox_items(now=clock(), limit=10, lease_ms=1000) == []
        assert (await items(store))["a1"].lease_expires_at == T0 + timedelta(seconds=5)
        mock_clock.jump(1)
        await observed.extended(2)
        assert (await items(store))["a1"].lease_expires_at == T0 + timedelta(seconds=6.5)
        gate.set()  # resumed: renewed once more, then it completes
        await handle.wait_idle()
        await handle.stop()
    assert observed.extensions == [True, True, True]
    assert await store.list_inbox_items() == []


async def test_a_run_whose_lease_was_taken_is_cancelled_and_completes_nothing(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"))
    clock = Clock()
    observed = Observed(store)
    runs: list[InboxRun] = []
    entered, left = trio.Event(), trio.Event()

    async def handler(item: InboxItem, control: RunControl) -> None:
        (later,) = await store.list_inbox_queue(queue_key=item.queue_key, after_id=item.id)
        control.consume(later.id)
        control.set_state(UserStateWrite(sealed=b"s", expires_at=T0 + DAY))
        try:
            async with control.paused():
                entered.set()
                await trio.sleep_forever()
        finally:
            left.set()

    worker = options(handler, handler_timeout=2.0, lease_ms=3000, now=clock, on_run=runs.append)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, observed, worker)
        await entered.wait()
        clock.advance(3000)  # the claim's lease lapsed before any renewal: another takes it
        (taken,) = await store.claim_inbox_items(now=clock(), limit=10, lease_ms=60_000)
        mock_clock.jump(1)
        await left.wait()
        await handle.wait_idle()
        await handle.stop()
    assert observed.extensions == [False]
    assert [run.outcome for run in runs] == ["error"]
    left_items = await items(store)
    assert sorted(left_items) == ["a1", "a2"]
    assert (left_items["a1"].lease_id, left_items["a1"].attempts) == (taken.lease_id, 2)
    assert await store.get_user_state(queue_key="qa", now=T0) is None


async def test_consumed_items_and_the_state_commit_with_the_success(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"), ("b1", "qb"), ("a3", "qa"), ("a4", "qa"))
    clock = Clock()
    calls: list[str] = []

    async def handler(item: InboxItem, control: RunControl) -> None:
        calls.append(item.update_key)
        if item.update_key == "a1":
            later = await store.list_inbox_queue(queue_key=item.queue_key, after_id=item.id)
            assert [i.update_key for i in later] == ["a2", "a3", "a4"]
            control.consume(later[0].id)
            control.consume(later[2].id)
            control.consume(later[0].id)  # once is enough
            control.set_state(UserStateWrite(sealed=b"form:step2", expires_at=T0 + DAY))
            assert control.consumed == (later[0].id, later[2].id)

    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, options(handler, now=clock))
        await handle.wait_idle()
        await handle.stop()
    assert sorted(calls) == ["a1", "a3", "b1"]  # the consumed a2 and a4 never ran
    assert await store.list_inbox_items() == []
    state = await store.get_user_state(queue_key="qa", now=T0)
    assert state is not None
    assert (state.sealed, state.expires_at, state.updated_at) == (b"form:step2", T0 + DAY, T0)


async def test_a_failed_run_commits_neither_and_its_rerun_finds_the_same_items(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"))
    clock = Clock()
    seen: list[list[str]] = []

    async def handler(item: InboxItem, control: RunControl) -> None:
        later = await store.list_inbox_queue(queue_key=item.queue_key, after_id=item.id)
        seen.append([i.update_key for i in later])
        control.consume(later[0].id)
        control.set_state(
            UserStateWrite(sealed=f"try{item.attempts}".encode(), expires_at=T0 + DAY)
        )
        if item.attempts == 1:
            raise ValueError

    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, options(handler, now=clock))
        await handle.wait_idle()
        left = await items(store)
        assert sorted(left) == ["a1", "a2"] and left["a1"].status is InboxStatus.PENDING
        assert await store.get_user_state(queue_key="qa", now=T0) is None
        clock.advance(1000)  # a1 retries: the same later item, now committed
        handle.wake()
        await handle.wait_idle()
        await handle.stop()
    assert seen == [["a2"], ["a2"]]
    assert await store.list_inbox_items() == []
    state = await store.get_user_state(queue_key="qa", now=T0)
    assert state is not None and state.sealed == b"try2"


async def test_a_completion_the_store_refuses_buries_the_item(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("b1", "qb"))
    runs: list[tuple[str, str]] = []
    calls: list[str] = []
    b1 = (await items(store))["b1"]

    async def handler(item: InboxItem, control: RunControl) -> None:
        calls.append(item.update_key)
        if item.update_key == "a1":
            control.consume(b1.id)  # of another queue

    worker = options(
        handler, concurrency=1, on_run=lambda run: runs.append((run.kind, run.outcome))
    )
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, worker)
        await handle.wait_idle()
        await handle.stop()
    assert calls == ["a1", "b1"]
    assert [outcome for _, outcome in runs] == ["dead", "success"]
    (dead,) = await store.list_inbox_items()
    assert (dead.update_key, dead.status, dead.last_error) == (
        "a1",
        InboxStatus.DEAD,
        "invalid_completion",
    )


async def test_the_control_refuses_what_no_completion_takes(store: SqliteStore) -> None:
    await record(store, ("a1", "qa"))
    (item,) = await store.list_inbox_items()
    control = RunControl(item)
    for bad in (item.id, item.id - 1, True, "7", 2**63):
        with pytest.raises(PersistenceValidationError):
            control.consume(bad)  # type: ignore[arg-type]
    with pytest.raises(PersistenceValidationError):
        control.set_state(b"state")  # type: ignore[arg-type]
    control.set_state(UserStateWrite(sealed=None))
    control.set_state(None)
    assert control.state is None and control.consumed == ()
    async with control.paused():  # outside a worker: nothing to pause, nothing to renew
        assert control.is_paused
    assert not control.is_paused and not control.lease_lost


async def test_the_prune_deletes_expired_states(
    store: SqliteStore, mock_clock: trio.testing.MockClock
) -> None:
    await record(store, ("a1", "qa"), ("b1", "qb"))
    for item in await store.claim_inbox_items(now=T0, limit=10, lease_ms=1000):
        assert item.lease_id is not None
        until = T0 + (timedelta(seconds=1) if item.queue_key == "qa" else DAY)
        write = UserStateWrite(sealed=b"s", expires_at=until)
        assert await store.mark_inbox_item_succeeded(
            id=item.id, lease_id=item.lease_id, state=write, now=T0
        )
    clock = Clock()
    clock.advance(1000)

    async def handler(item: InboxItem, control: RunControl) -> None:
        raise AssertionError("nothing to run")

    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_inbox_worker, store, options(handler, now=clock))
        await handle.wait_idle()
        await handle.stop()
    # qa's state expired at T0 + 1 s and is gone; qb's is kept.
    assert await store.delete_expired_user_states(now=T0 + timedelta(seconds=1)) == 0
    assert await store.get_user_state(queue_key="qb", now=T0) is not None
