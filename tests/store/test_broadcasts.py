"""Broadcast contract: creation, dedupe, pacing slots, leases, exactly-once claims, pausing."""

from __future__ import annotations

import itertools
import json
from datetime import timedelta

import pytest
import trio

from svc.store import (
    BROADCAST_INTERRUPTED,
    BroadcastRecipientInput,
    BroadcastSend,
    BroadcastState,
    BroadcastStore,
    PersistenceValidationError,
)

from .conftest import T0, AnyStore, Backend

NUMBER = "1234567890"


def recipients(*phones: str) -> list[BroadcastRecipientInput]:
    return [
        BroadcastRecipientInput(recipient=p, payload_json=json.dumps({"to": p})) for p in phones
    ]


async def create(store: AnyStore, key: str = "k1", phones: tuple[str, ...] = ("1", "2")) -> str:
    result = await store.create_broadcast(
        id=f"b-{key}",
        request_key=key,
        request_hash="h",
        phone_number_id=NUMBER,
        recipients=recipients(*phones),
        created_at=T0,
        template_name="promo",
        template_language="en",
    )
    assert result.outcome == "created"
    return result.broadcast_id


async def claim(
    store: AnyStore,
    *,
    at: timedelta = timedelta(0),
    limit: int = 100,
    rate: float = 10,
    horizon_ms: int = 60_000,
    lease_ms: int = 30_000,
) -> list[BroadcastSend]:
    return await store.claim_broadcast_sends(
        phone_number_id=NUMBER,
        now=T0 + at,
        rate_per_second=rate,
        horizon_ms=horizon_ms,
        limit=limit,
        lease_ms=lease_ms,
    )


async def test_adapters_implement_the_broadcast_protocol(store: AnyStore) -> None:
    assert isinstance(store, BroadcastStore)


async def test_create_is_idempotent_and_dedupes(store: AnyStore) -> None:
    bid = await create(store, phones=("1", "2", "1", "3"))
    again = await store.create_broadcast(
        id="other",
        request_key="k1",
        request_hash="h",
        phone_number_id=NUMBER,
        recipients=recipients("9"),
        created_at=T0,
    )
    assert (again.broadcast_id, again.outcome) == (bid, "replay")
    clash = await store.create_broadcast(
        id="other",
        request_key="k1",
        request_hash="different",
        phone_number_id=NUMBER,
        recipients=recipients("9"),
        created_at=T0,
    )
    assert (clash.broadcast_id, clash.outcome) == (bid, "conflict")
    status = await store.get_broadcast(id=bid)
    assert status is not None
    assert status.state == BroadcastState.QUEUED
    assert (status.total, status.queued, status.sent, status.failed, status.skipped) == (
        4,
        3,
        0,
        0,
        1,
    )
    assert await store.get_broadcast(id="nope") is None


async def test_limits_are_validated_before_io(store: AnyStore) -> None:
    with pytest.raises(PersistenceValidationError):
        await store.create_broadcast(
            id="b",
            request_key="k",
            request_hash="h",
            phone_number_id=NUMBER,
            recipients=[],
            created_at=T0,
        )
    with pytest.raises(PersistenceValidationError):
        await claim(store, rate=0)


async def test_a_broadcast_holds_at_most_5000_recipients(store: AnyStore) -> None:
    phones = tuple(str(n) for n in range(5001))
    with pytest.raises(PersistenceValidationError) as info:
        await create(store, key="over", phones=phones)
    assert info.value.code == "invalid_record"
    assert await store.get_broadcast(id="b-over") is None
    status = await store.get_broadcast(id=await create(store, key="full", phones=phones[:5000]))
    assert status is not None and status.total == status.queued == 5000


async def test_slots_are_paced_and_bounded_by_the_horizon(store: AnyStore) -> None:
    bid = await create(store, phones=tuple(str(n) for n in range(30)))
    first = await claim(store, rate=10, horizon_ms=1000)
    # 10/s with a 1 s horizon: 10 slots 100 ms apart from now.
    assert [s.send_at - T0 for s in first] == [timedelta(milliseconds=100 * i) for i in range(10)]
    assert [s.seq for s in first] == list(range(10))
    assert await claim(store, rate=10, horizon_ms=1000) == []  # the bucket is drawn down
    later = await claim(store, at=timedelta(milliseconds=500), rate=10, horizon_ms=1000)
    assert [s.send_at - T0 for s in later] == [
        timedelta(milliseconds=1000 + 100 * i) for i in range(5)
    ]
    status = await store.get_broadcast(id=bid)
    assert status is not None and status.state == BroadcastState.RUNNING
    assert status.queued == 30


async def test_idle_number_banks_no_burst(store: AnyStore) -> None:
    await create(store, phones=("1",))
    (only,) = await claim(store)
    assert only.send_at == T0
    await create(store, "k2", phones=("5", "6"))
    # An hour idle: the next slots start at now, 100 ms apart, not all at once.
    sends = await claim(store, at=timedelta(hours=1))
    assert [s.send_at - T0 - timedelta(hours=1) for s in sends] == [
        timedelta(0),
        timedelta(milliseconds=100),
    ]


async def test_complete_drops_payload_and_finishes(store: AnyStore, backend: Backend) -> None:
    bid = await create(store, phones=("1", "2"))
    a, b = await claim(store)
    assert json.loads(a.payload_json) == {"to": "1"}
    assert await store.complete_broadcast_send(
        broadcast_id=bid, seq=a.seq, lease_id=a.lease_id, outcome="sent", now=T0,
        wa_message_id="wamid.1",
    )  # fmt: skip
    # A second completion with the same lease is refused: the row is no longer leased.
    assert not await store.complete_broadcast_send(
        broadcast_id=bid, seq=a.seq, lease_id=a.lease_id, outcome="failed", now=T0
    )
    assert await store.complete_broadcast_send(
        broadcast_id=bid, seq=b.seq, lease_id=b.lease_id, outcome="failed", now=T0,
        error_code="131026",
    )  # fmt: skip
    status = await store.get_broadcast(id=bid)
    assert status is not None
    assert status.state == BroadcastState.DONE
    assert (status.sent, status.failed, status.queued) == (1, 1, 0)
    assert dict(status.failed_by_code) == {"131026": 1}
    if backend.kind != "sqlite-memory":
        rows = backend.raw_sql("SELECT payload_json FROM svc_broadcast_recipients")
        assert rows == [(None,), (None,)]


async def test_retry_requeues_and_a_stale_lease_fails_interrupted(store: AnyStore) -> None:
    bid = await create(store, phones=("1", "2"))
    a, b = await claim(store, lease_ms=1000)
    assert await store.retry_broadcast_send(
        broadcast_id=bid, seq=a.seq, lease_id=a.lease_id, next_attempt_at=T0 + timedelta(seconds=6),
        now=T0,
    )  # fmt: skip
    assert await claim(store, at=timedelta(seconds=1)) == []  # a: not due; b: leased
    assert await store.expire_broadcast_leases(now=T0 + timedelta(seconds=1)) == 1
    # The crashed send of b is never offered again, even much later.
    (again,) = await claim(store, at=timedelta(seconds=7))
    assert (again.seq, again.attempts) == (a.seq, 2)
    assert not await store.complete_broadcast_send(
        broadcast_id=bid, seq=b.seq, lease_id=b.lease_id, outcome="sent", now=T0
    )
    await store.complete_broadcast_send(
        broadcast_id=bid, seq=again.seq, lease_id=again.lease_id, outcome="sent", now=T0
    )
    status = await store.get_broadcast(id=bid)
    assert status is not None and status.state == BroadcastState.DONE
    assert dict(status.failed_by_code) == {BROADCAST_INTERRUPTED: 1}


async def test_pause_resume_and_template_pause(store: AnyStore) -> None:
    bid = await create(store, phones=("1", "2"))
    assert await store.set_broadcast_paused(id=bid, paused=True, now=T0)
    assert await claim(store) == []
    assert await store.set_broadcast_paused(id=bid, paused=False, now=T0)
    assert len(await claim(store, limit=1)) == 1
    assert await store.pause_broadcasts_for_template(name="promo", language="fr", now=T0) == 0
    assert await store.pause_broadcasts_for_template(name="promo", now=T0) == 1
    status = await store.get_broadcast(id=bid)
    assert status is not None and status.state == BroadcastState.PAUSED
    assert not await store.set_broadcast_paused(id="nope", paused=True, now=T0)


async def test_delay_pacing_moves_the_next_slot(store: AnyStore) -> None:
    await create(store, phones=("1",))
    await store.delay_broadcast_pacing(phone_number_id=NUMBER, until=T0 + timedelta(seconds=30))
    assert await claim(store, horizon_ms=1000) == []
    (send,) = await claim(store, at=timedelta(seconds=29, milliseconds=500), horizon_ms=1000)
    assert send.send_at == T0 + timedelta(seconds=30)


async def test_concurrent_claimers_get_disjoint_rows_and_slots(
    persistent_backend: Backend,
) -> None:
    stores = [persistent_backend.open() for _ in range(4)]
    await stores[0].migrate()
    bid = await create(stores[0], phones=tuple(str(n) for n in range(200)))
    got: list[BroadcastSend] = []

    async def claimer(store: AnyStore) -> None:
        for _ in range(10):
            got.extend(await claim(store, limit=20, rate=1000, horizon_ms=60_000))

    async with trio.open_nursery() as nursery:
        for store in stores:
            nursery.start_soon(claimer, store)
    assert sorted(s.seq for s in got) == list(range(200))
    slots = sorted(s.send_at for s in got)
    assert len(set(slots)) == 200
    assert all(b - a == timedelta(milliseconds=1) for a, b in itertools.pairwise(slots))
    status = await stores[0].get_broadcast(id=bid)
    assert status is not None and status.queued == 200
