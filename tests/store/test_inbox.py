"""The inbox contract on every adapter: heads-only claims, lease fencing, retries, dead
letters, the operator's list, retry and drop, statistics and the dead-letter horizon."""

from __future__ import annotations

from datetime import timedelta

import pytest
import trio

from svc.store import (
    InboxItem,
    InboxRow,
    InboxStatistics,
    InboxStatus,
    PersistenceStore,
    PersistenceValidationError,
)

from .conftest import T0, AnyStore, Backend

LEASE = 60_000


def ms(n: int) -> timedelta:
    return timedelta(milliseconds=n)


async def record(store: AnyStore, *items: tuple[str, str], offset: int = 0) -> None:
    """One delivery recording each ``(update key, queue)`` item, in order, at ``T0 + offset``."""
    keys = [key for key, _ in items]
    await store.record_webhook_updates(
        event_key=f"d-{'-'.join(keys)}",
        event_hash="h",
        received_at=T0 + ms(offset),
        update_keys=keys,
        inbox=[
            InboxRow(
                update_key=key,
                queue_key=queue,
                phone_number_id=None,
                kind="message",
                sealed=key.encode(),
            )
            for key, queue in items
        ],
    )


async def claim(store: AnyStore, at: int = 0, limit: int = 10, lease: int = LEASE) -> list[str]:
    return [i.update_key for i in await claimed(store, at, limit, lease)]


async def claimed(
    store: AnyStore, at: int = 0, limit: int = 10, lease: int = LEASE
) -> list[InboxItem]:
    return await store.claim_inbox_items(now=T0 + ms(at), limit=limit, lease_ms=lease)


async def by_key(store: AnyStore) -> dict[str, InboxItem]:
    return {i.update_key: i for i in await store.list_inbox_items()}


async def test_store_has_the_inbox_methods(store: AnyStore) -> None:
    assert isinstance(store, PersistenceStore)


async def test_only_the_head_of_each_queue_is_claimed(store: AnyStore) -> None:
    await record(store, ("a1", "qa"), ("b1", "qb"), ("a2", "qa"), ("a3", "qa"))
    first = await claimed(store)
    assert [i.update_key for i in first] == ["a1", "b1"]
    a1 = first[0]
    assert a1.status is InboxStatus.RUNNING and a1.attempts == 1 and a1.sealed == b"a1"
    assert a1.lease_expires_at == T0 + ms(LEASE) and a1.lease_id
    # a1 runs: its queue waits, however late it gets.
    assert await claim(store, at=LEASE - 1) == []
    assert a1.lease_id is not None
    assert await store.mark_inbox_item_succeeded(id=a1.id, lease_id=a1.lease_id)
    assert await claim(store) == ["a2"]
    assert "a1" not in await by_key(store)


async def test_claims_follow_record_order_and_the_limit(store: AnyStore) -> None:
    await record(store, *[(f"k{i}", f"q{i}") for i in range(5)])
    assert await claim(store, limit=2) == ["k0", "k1"]
    assert await claim(store, limit=2) == ["k2", "k3"]
    assert await claim(store, limit=2) == ["k4"]


async def test_a_queue_whose_run_ended_takes_its_turn_behind_the_queues_waiting(
    store: AnyStore,
) -> None:
    # a's three items were recorded first; b's and c's after. Claims go in turn: a queue's
    # next item is due from the end of its run, not from its (older) record time.
    await record(store, ("a1", "qa"), ("a2", "qa"), ("a3", "qa"))
    await record(store, ("b1", "qb"), ("c1", "qc"), offset=5)
    (a1,) = await claimed(store, at=10, limit=1)
    assert a1.lease_id is not None
    assert await store.mark_inbox_item_succeeded(id=a1.id, lease_id=a1.lease_id, now=T0 + ms(20))
    assert await claim(store, at=30, limit=1) == ["b1"]  # not a2, though recorded before b1
    # A dead letter hands the turn on too.
    (c1,) = await claimed(store, at=30, limit=1)
    assert c1.update_key == "c1" and c1.lease_id is not None
    (b1,) = [i for i in await store.list_inbox_items() if i.update_key == "b1"]
    assert b1.lease_id is not None
    await record(store, ("b2", "qb"), offset=25)
    assert await store.mark_inbox_item_dead(
        id=b1.id, lease_id=b1.lease_id, now=T0 + ms(40), error="not_for_us"
    )
    assert await claim(store, at=50, limit=1) == ["a2"]  # due from 20, b2 from 40
    assert await claim(store, at=50, limit=1) == ["b2"]


async def test_a_completion_continuing_into_another_queue_hands_its_own_turn_on(
    store: AnyStore,
) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"))
    await record(store, ("b1", "qb"), ("c1", "qc"), offset=5)
    (a1,) = await claimed(store, at=10, limit=1)
    assert a1.lease_id is not None
    kept, following = await store.mark_inbox_item_succeeded_and_claim(
        id=a1.id, lease_id=a1.lease_id, now=T0 + ms(20), lease_ms=LEASE, others_first=True
    )
    assert kept and following is not None and following.update_key == "b1"
    assert await claim(store, at=30) == ["c1", "a2"]  # a's next from 20, behind c1


async def test_a_retrying_item_holds_its_queue_back_and_a_dead_one_releases_it(
    store: AnyStore,
) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"), ("a3", "qa"))
    (a1,) = await claimed(store)
    assert a1.lease_id is not None
    assert await store.mark_inbox_item_failed(
        id=a1.id, lease_id=a1.lease_id, now=T0, retry_delay_ms=1000, error="ValueError"
    )
    stored = (await by_key(store))["a1"]
    assert (stored.status, stored.next_attempt_at, stored.last_error) == (
        InboxStatus.PENDING,
        T0 + ms(1000),
        "ValueError",
    )
    assert stored.lease_id is None and stored.lease_expires_at is None
    assert await claim(store, at=999) == []  # pending, not due: a2 still waits
    (again,) = await claimed(store, at=1000)
    assert (again.update_key, again.attempts) == ("a1", 2)
    assert again.lease_id is not None
    assert await store.mark_inbox_item_dead(
        id=again.id, lease_id=again.lease_id, now=T0 + ms(1000), error="send_outcome_unknown"
    )
    assert await claim(store, at=1000) == ["a2"]
    dead = (await by_key(store))["a1"]
    assert (dead.status, dead.last_error, dead.attempts) == (
        InboxStatus.DEAD,
        "send_outcome_unknown",
        2,
    )


async def test_an_expired_lease_is_reclaimed_and_the_stale_lease_fenced(store: AnyStore) -> None:
    await record(store, ("a1", "qa"), ("a2", "qa"))
    (first,) = await claimed(store, lease=1000)
    assert await claim(store, at=999) == []
    (second,) = await claimed(store, at=1000, lease=1000)
    assert second.id == first.id and second.attempts == 2
    assert second.lease_id != first.lease_id
    assert first.lease_id is not None and second.lease_id is not None
    stale = {"id": first.id, "lease_id": first.lease_id}
    assert not await store.mark_inbox_item_succeeded(**stale)
    assert not await store.mark_inbox_item_failed(**stale, now=T0, retry_delay_ms=0)
    assert not await store.mark_inbox_item_dead(**stale, now=T0)
    assert (await by_key(store))["a1"].status is InboxStatus.RUNNING
    assert await store.mark_inbox_item_succeeded(id=second.id, lease_id=second.lease_id)
    assert not await store.mark_inbox_item_succeeded(id=second.id, lease_id=second.lease_id)
    assert await claim(store, at=1000) == ["a2"]


async def test_attempts_count_every_claim(store: AnyStore) -> None:
    await record(store, ("a1", "qa"))
    for attempt in range(1, 4):
        (item,) = await claimed(store, at=attempt * 10)
        assert item.attempts == attempt and item.lease_id is not None
        await store.mark_inbox_item_failed(
            id=item.id, lease_id=item.lease_id, now=T0 + ms(attempt * 10), retry_delay_ms=0
        )


async def test_list_retry_drop_and_statistics(store: AnyStore) -> None:
    assert await store.inbox_statistics() == InboxStatistics(
        pending=0, running=0, dead=0, oldest_pending_at=None
    )
    await record(store, ("a1", "qa"), ("b1", "qb"))
    await record(store, ("c1", "qc"), offset=500)
    a1, b1, c1 = await claimed(store, at=600)
    assert a1.lease_id is not None and c1.lease_id is not None
    await store.mark_inbox_item_dead(id=a1.id, lease_id=a1.lease_id, now=T0 + ms(600), error="E")
    await store.mark_inbox_item_failed(
        id=c1.id, lease_id=c1.lease_id, now=T0 + ms(600), retry_delay_ms=1000
    )
    assert await store.inbox_statistics() == InboxStatistics(
        pending=1, running=1, dead=1, oldest_pending_at=T0
    )
    assert [i.update_key for i in await store.list_inbox_items()] == ["a1", "b1", "c1"]
    assert [i.update_key for i in await store.list_inbox_items(limit=2)] == ["a1", "b1"]
    assert [i.update_key for i in await store.list_inbox_items(status="dead")] == ["a1"]
    running = await store.list_inbox_items(status=InboxStatus.RUNNING)
    assert [i.update_key for i in running] == ["b1"]
    # Only a dead item is retried: pending again, due at once, attempts reset.
    assert await store.retry_inbox_item(id=b1.id, now=T0 + ms(700)) is None
    retried = await store.retry_inbox_item(id=a1.id, now=T0 + ms(700))
    assert retried is not None
    assert (retried.status, retried.attempts, retried.next_attempt_at, retried.last_error) == (
        InboxStatus.PENDING,
        0,
        T0 + ms(700),
        "E",
    )
    assert await claim(store, at=700) == ["a1"]
    # Dropping deletes any item, once; an unknown id is no item.
    assert await store.drop_inbox_item(id=b1.id)
    assert not await store.drop_inbox_item(id=b1.id)
    assert await store.retry_inbox_item(id=b1.id, now=T0) is None
    stats = await store.inbox_statistics()
    assert (stats.pending, stats.running, stats.dead) == (1, 1, 0)
    assert stats.oldest_pending_at == T0


async def test_dead_letters_past_the_horizon_are_deleted(store: AnyStore) -> None:
    await record(store, *[(f"k{i}", f"q{i}") for i in range(7)])
    items = await claimed(store)
    for i, item in enumerate(items[:6]):
        assert item.lease_id is not None
        await store.mark_inbox_item_dead(id=item.id, lease_id=item.lease_id, now=T0 + ms(i))
    # Dead at T0+0..T0+5 ms: those before T0+4 ms go, two per transaction.
    deleted = await store.delete_dead_inbox_items(older_than=T0 + ms(4), batch_size=2)
    assert deleted == 4
    left = await by_key(store)
    assert sorted(left) == ["k4", "k5", "k6"]
    assert left["k6"].status is InboxStatus.RUNNING
    assert await store.delete_dead_inbox_items(older_than=T0 + ms(4)) == 0


@pytest.mark.parametrize(
    "call",
    [
        {"limit": 0},
        {"limit": 1001},
        {"lease_ms": 0},
        {"lease_ms": True},
        {"now": T0.replace(tzinfo=None)},
    ],
)
async def test_invalid_claims_are_refused(store: AnyStore, call: dict[str, object]) -> None:
    with pytest.raises(PersistenceValidationError):
        await store.claim_inbox_items(**({"now": T0, "limit": 1, "lease_ms": 1} | call))  # type: ignore[arg-type]


async def test_invalid_options_are_refused(store: AnyStore) -> None:
    with pytest.raises(PersistenceValidationError):
        await store.list_inbox_items(status="done")
    with pytest.raises(PersistenceValidationError):
        await store.drop_inbox_item(id="1")  # type: ignore[arg-type]
    with pytest.raises(PersistenceValidationError):
        await store.mark_inbox_item_failed(
            id=1, lease_id="x", now=T0, retry_delay_ms=-1, error=None
        )
    with pytest.raises(PersistenceValidationError):
        await store.mark_inbox_item_dead(id=1, lease_id="x", now=T0, error="e" * 81)


# --- two stores claiming together


@pytest.mark.slow
async def test_two_stores_claiming_together_lease_each_head_once_in_queue_order(
    persistent_backend: Backend,
) -> None:
    """Two stores (two connections; on PostgreSQL, two pools) claim side by side, round after
    round, and complete what they leased: no item is leased twice, the items leased at once
    are of different queues, and each queue's items are leased in their order."""
    first, second = persistent_backend.open(), persistent_backend.open()
    await first.migrate()
    queues, per_queue = 5, 6
    await record(
        first, *[(f"q{q}-{n}", f"q{q}") for n in range(per_queue) for q in range(queues)]
    )
    leased: list[InboxItem] = []
    for _ in range(queues * per_queue):
        taken: list[tuple[AnyStore, InboxItem]] = []

        async def take(store: AnyStore, taken: list[tuple[AnyStore, InboxItem]]) -> None:
            taken += [(store, item) for item in await claimed(store, limit=3)]

        async with trio.open_nursery() as nursery:  # both claims at once
            nursery.start_soon(take, first, taken)
            nursery.start_soon(take, second, taken)
        if not taken:
            break
        at_once = [item.queue_key for _, item in taken]
        assert len(at_once) == len(set(at_once)), "two items of one queue at once"
        leased += [item for _, item in taken]
        for store, item in taken:
            assert item.lease_id is not None
            assert await store.mark_inbox_item_succeeded(id=item.id, lease_id=item.lease_id)
    assert len({item.id for item in leased}) == len(leased) == queues * per_queue
    for q in range(queues):
        order = [item.update_key for item in leased if item.queue_key == f"q{q}"]
        assert order == [f"q{q}-{n}" for n in range(per_queue)]
    assert await first.list_inbox_items() == []
