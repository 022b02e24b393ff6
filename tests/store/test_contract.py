"""The shared contract suite: every rule of the spec, on every adapter."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
import trio

from svc.store import (
    OUTBOX_LEASE_MS,
    SCHEMA_VERSION,
    Claimed,
    Conflict,
    MessageRecord,
    OutboxStatus,
    Pending,
    PersistenceError,
    PersistenceStore,
    PersistenceValidationError,
    Replay,
    ServiceRequestState,
    StatusEvent,
    UserIdentityRecord,
    WebhookEventResult,
)

from .conftest import POSTGRES_KINDS, T0, AnyStore, Backend


def ms(n: int) -> timedelta:
    return timedelta(milliseconds=n)


def message(
    row_id: str,
    wa_message_id: str,
    *,
    direction: str = "outbound",
    status: str = "sent",
    at: datetime = T0,
    from_phone: str | None = None,
    to_phone: str | None = "15551234567",
) -> MessageRecord:
    return MessageRecord(
        row_id=row_id,
        wa_message_id=wa_message_id,
        direction=direction,  # type: ignore[arg-type]
        from_phone=from_phone,
        to_phone=to_phone,
        type="text",
        status=status,
        graph_message_id=wa_message_id,
        created_at=at,
        updated_at=at,
    )


async def test_store_satisfies_the_protocol(store: AnyStore) -> None:
    assert isinstance(store, PersistenceStore)
    assert store.backend in {"sqlite", "postgres"}


async def test_migrate_is_idempotent_and_health_reports_the_version(store: AnyStore) -> None:
    assert await store.migrate() == SCHEMA_VERSION
    health = await store.health()
    assert health.ok and health.current_version == SCHEMA_VERSION
    assert health.backend == store.backend
    assert health.redacted_location in {
        "[REDACTED_SQLITE_DATABASE]",
        "[REDACTED_POSTGRES_DATABASE]",
    }


async def test_health_before_migrate_is_not_ok(backend: Backend) -> None:
    fresh = backend.open()
    health = await fresh.health()
    assert not health.ok and health.current_version is None


# --- rule 1: webhook events


async def test_duplicate_webhook_event_keys(store: AnyStore) -> None:
    first = await store.record_webhook_event(event_key="e1", event_hash="h1", received_at=T0)
    again = await store.record_webhook_event(event_key="e1", event_hash="h2", received_at=T0)
    other = await store.record_webhook_event(event_key="e2", event_hash="h1", received_at=T0)
    assert first is WebhookEventResult.RECORDED and first == "recorded"
    assert again is WebhookEventResult.DUPLICATE
    assert other is WebhookEventResult.RECORDED


# --- service request claims


async def test_claim_results_and_completion_only_on_matching_hash(store: AnyStore) -> None:
    claim = store.claim_service_request
    assert await claim(idempotency_key="k", request_hash="h", created_at=T0) == Claimed()
    assert await claim(idempotency_key="k", request_hash="h", created_at=T0) == Pending()
    assert await claim(idempotency_key="k", request_hash="x", created_at=T0) == Conflict()
    assert not await store.complete_service_request(
        idempotency_key="k", request_hash="x", response_json='{"no":1}', created_at=T0
    )
    assert await store.complete_service_request(
        idempotency_key="k", request_hash="h", response_json='{"messages": [1]}', created_at=T0
    )
    replay = await claim(idempotency_key="k", request_hash="h", created_at=T0)
    assert replay == Replay(response_json='{"messages": [1]}')
    assert await claim(idempotency_key="k", request_hash="x", created_at=T0) == Conflict()
    # A second completion never overwrites the stored answer.
    assert not await store.complete_service_request(
        idempotency_key="k", request_hash="h", response_json='{"other":2}', created_at=T0
    )
    stored = await store.get_service_request(idempotency_key="k")
    assert stored is not None and stored.response_json == '{"messages": [1]}'
    assert stored.state is ServiceRequestState.COMPLETED and stored.completed_at == T0


async def test_a_refusal_completes_the_claim_and_replays_its_status(store: AnyStore) -> None:
    claim = store.claim_service_request
    assert await claim(idempotency_key="r", request_hash="h", created_at=T0) == Claimed()
    with pytest.raises(PersistenceValidationError):
        await store.complete_service_request(
            idempotency_key="r",
            request_hash="h",
            response_json="{}",
            created_at=T0,
            response_status=99,
        )
    assert await store.complete_service_request(
        idempotency_key="r",
        request_hash="h",
        response_json='{"error":1}',
        created_at=T0,
        response_status=502,
    )
    replay = await claim(idempotency_key="r", request_hash="h", created_at=T0)
    assert replay == Replay(response_json='{"error":1}', status=502)
    stored = await store.get_service_request(idempotency_key="r")
    assert stored is not None and stored.response_status == 502
    assert stored.state is ServiceRequestState.COMPLETED


async def test_release_forgets_only_a_pending_claim_of_the_same_hash(store: AnyStore) -> None:
    """A released key claims anew; a completed key, another hash or no claim is never released."""
    claim = store.claim_service_request
    assert await claim(idempotency_key="t", request_hash="h", created_at=T0) == Claimed()
    assert not await store.release_service_request(idempotency_key="t", request_hash="x")
    assert await claim(idempotency_key="t", request_hash="h", created_at=T0) == Pending()
    assert await store.release_service_request(idempotency_key="t", request_hash="h")
    assert await store.get_service_request(idempotency_key="t") is None
    assert not await store.release_service_request(idempotency_key="t", request_hash="h")
    # The key is free: the next claim owns it, with whatever payload it carries.
    assert await claim(idempotency_key="t", request_hash="h2", created_at=T0 + ms(1)) == Claimed()
    assert await store.complete_service_request(
        idempotency_key="t", request_hash="h2", response_json='{"ok":1}', created_at=T0
    )
    assert not await store.release_service_request(idempotency_key="t", request_hash="h2")
    replay = await claim(idempotency_key="t", request_hash="h2", created_at=T0)
    assert replay == Replay(response_json='{"ok":1}')
    stored = await store.get_service_request(idempotency_key="t")
    assert stored is not None and stored.state is ServiceRequestState.COMPLETED
    with pytest.raises(PersistenceValidationError):
        await store.release_service_request(idempotency_key="", request_hash="h")


async def test_claim_persists_without_timeout(store: AnyStore) -> None:
    await store.claim_service_request(idempotency_key="k", request_hash="h", created_at=T0)
    later = T0 + timedelta(days=365)
    result = await store.claim_service_request(
        idempotency_key="k", request_hash="h", created_at=later
    )
    assert result == Pending()


async def test_complete_without_reservation_stores_nothing(store: AnyStore) -> None:
    assert not await store.complete_service_request(
        idempotency_key="nope", request_hash="h", response_json="{}", created_at=T0
    )
    assert await store.get_service_request(idempotency_key="nope") is None


async def test_record_service_request_never_overwrites(store: AnyStore) -> None:
    first = await store.record_service_request(
        idempotency_key="k", request_hash="h", response_json='{"a":1}', created_at=T0
    )
    assert first.response_json == '{"a":1}' and first.state is ServiceRequestState.COMPLETED
    second = await store.record_service_request(
        idempotency_key="k", request_hash="other", response_json='{"b":2}', created_at=T0 + ms(5)
    )
    assert second == first
    # ...not even a pending reservation.
    await store.claim_service_request(idempotency_key="p", request_hash="h", created_at=T0)
    kept = await store.record_service_request(
        idempotency_key="p", request_hash="h", response_json='{"c":3}', created_at=T0
    )
    assert kept.state is ServiceRequestState.PENDING and kept.response_json is None
    # A matching key and hash replays; another hash conflicts.
    assert await store.claim_service_request(
        idempotency_key="k", request_hash="h", created_at=T0
    ) == Replay(response_json='{"a":1}')
    assert (
        await store.claim_service_request(idempotency_key="k", request_hash="z", created_at=T0)
        == Conflict()
    )


async def test_replayed_response_is_byte_for_byte(store: AnyStore) -> None:
    body = '{ "messaging_product":"whatsapp",\n "messages":[{"id":"wamid.é✓"}] }'
    await store.claim_service_request(idempotency_key="k", request_hash="h", created_at=T0)
    await store.complete_service_request(
        idempotency_key="k", request_hash="h", response_json=body, created_at=T0
    )
    result = await store.claim_service_request(idempotency_key="k", request_hash="h", created_at=T0)
    assert isinstance(result, Replay) and result.response_json == body


@pytest.mark.slow
async def test_fifty_concurrent_claims_give_exactly_one_claimed(backend: Backend) -> None:
    stores = [backend.open() for _ in range(2 if backend.kind != "sqlite-memory" else 1)]
    await stores[0].migrate()
    results: list[object] = []

    async def claim(i: int) -> None:
        results.append(
            await stores[i % len(stores)].claim_service_request(
                idempotency_key="same", request_hash="h", created_at=T0
            )
        )

    async with trio.open_nursery() as nursery:
        for i in range(50):
            nursery.start_soon(claim, i)
    assert len(results) == 50
    assert results.count(Claimed()) == 1
    assert results.count(Pending()) == 49


# --- rule 2: message idempotence


async def test_record_message_is_idempotent_on_row_id_and_pair(store: AnyStore) -> None:
    first = await store.record_message(message("r1", "wamid.1"))
    assert first == message("r1", "wamid.1")
    same_row = await store.record_message(message("r1", "wamid.other", status="read"))
    assert same_row == first
    same_pair = await store.record_message(message("r2", "wamid.1", status="read"))
    assert same_pair == first
    # The same platform id in the other direction is a different message.
    inbound = await store.record_message(
        message("r3", "wamid.1", direction="inbound", from_phone="1555", to_phone=None)
    )
    assert inbound.row_id == "r3"
    page = await store.list_messages(limit=10)
    assert sorted(m.row_id for m in page.items) == ["r1", "r3"]


# --- rule 3 and the status ranks

RANK_CASES = [
    # (stored status, event status, event offset ms, expected status, expected updated offset)
    ("sent", "delivered", 1000, "delivered", 1000),
    ("sent", "read", 0, "read", 0),
    ("pending", "sent", 0, "sent", 0),
    ("delivered", "sent", 5000, "delivered", 0),
    ("read", "delivered", 5000, "read", 0),
    ("sent", "failed", 1000, "failed", 1000),
    ("pending", "failed", 1000, "failed", 1000),
    ("delivered", "failed", 9000, "delivered", 0),
    ("read", "failed", 9000, "read", 0),
    ("sent", "weird_unknown", 9000, "sent", 0),
    ("pending", "weird_unknown", 9000, "pending", 0),
    ("failed", "sent", 9000, "failed", 0),
    ("failed", "delivered", 9000, "delivered", 9000),
    # same second as the send: still advances
    ("sent", "delivered", 400, "delivered", 400),
    # an event stamped before the row's updated_at advances the rank, not the time
    ("sent", "delivered", -2000, "delivered", 0),
]


@pytest.mark.parametrize(("stored", "event", "offset", "expected", "updated"), RANK_CASES)
async def test_status_ranking(
    store: AnyStore, stored: str, event: str, offset: int, expected: str, updated: int
) -> None:
    await store.record_message(message("r1", "wamid.1", status=stored))
    assert await store.append_message_status(
        wa_message_id="wamid.1", status=event, timestamp=T0 + ms(offset)
    )
    row = await store.get_message(wa_message_id="wamid.1")
    assert row is not None
    assert (row.status, row.updated_at) == (expected, T0 + ms(updated))
    assert row.created_at == T0


async def test_updated_at_never_moves_backward(store: AnyStore) -> None:
    await store.record_message(message("r1", "wamid.1", status="sent"))
    await store.append_message_status(
        wa_message_id="wamid.1", status="delivered", timestamp=T0 + ms(5000)
    )
    await store.append_message_status(
        wa_message_id="wamid.1", status="read", timestamp=T0 + ms(3000)
    )
    row = await store.get_message(wa_message_id="wamid.1")
    assert row is not None and row.status == "read" and row.updated_at == T0 + ms(5000)


async def test_append_status_without_message_is_a_logged_no_op(store: AnyStore) -> None:
    matched = await store.append_message_status(
        wa_message_id="wamid.ghost", status="read", timestamp=T0
    )
    assert matched is False
    assert await store.get_message(wa_message_id="wamid.ghost") is None


async def test_status_before_message_reconciles(store: AnyStore) -> None:
    await store.append_message_status(
        wa_message_id="wamid.1", status="delivered", timestamp=T0 + ms(200)
    )
    await store.append_message_status(
        wa_message_id="wamid.1", status="read", timestamp=T0 + ms(900)
    )
    row = await store.record_message(message("r1", "wamid.1", status="sent"))
    assert row.status == "read" and row.updated_at == T0 + ms(900)
    assert await store.get_message(wa_message_id="wamid.1") == row


async def test_status_before_message_never_regresses_with_failed(store: AnyStore) -> None:
    await store.append_message_status(wa_message_id="w", status="read", timestamp=T0)
    await store.append_message_status(wa_message_id="w", status="failed", timestamp=T0 + ms(1))
    row = await store.record_message(message("r1", "w", status="sent"))
    assert row.status == "read"


async def test_duplicate_status_events_are_harmless(store: AnyStore) -> None:
    await store.record_message(message("r1", "wamid.1"))
    for _ in range(3):
        await store.append_message_status(wa_message_id="wamid.1", status="read", timestamp=T0)
    row = await store.get_message(wa_message_id="wamid.1")
    assert row is not None and row.status == "read"


async def test_get_message_by_direction(store: AnyStore) -> None:
    await store.record_message(message("out", "w", direction="outbound"))
    await store.record_message(
        message("in", "w", direction="inbound", at=T0 + ms(1), from_phone="1", to_phone=None)
    )
    assert (await store.get_message(wa_message_id="w", direction="outbound")).row_id == "out"  # type: ignore[union-attr]
    assert (await store.get_message(wa_message_id="w", direction="inbound")).row_id == "in"  # type: ignore[union-attr]
    assert (await store.get_message(wa_message_id="w")).row_id == "in"  # type: ignore[union-attr]


# --- rule 4: listing


async def test_list_messages_order_and_cursor(store: AnyStore) -> None:
    # Ties on created_at are broken by row id, descending.
    rows = [("a", 0), ("b", 0), ("c", 1000), ("d", 1000), ("e", 2000), ("f", -1000), ("g", 500)]
    for row_id, offset in rows:
        await store.record_message(message(row_id, f"wamid.{row_id}", at=T0 + ms(offset)))
    expected = ["e", "d", "c", "g", "b", "a", "f"]
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await store.list_messages(limit=2, before_row_id=cursor)
        seen.extend(m.row_id for m in page.items)
        pages += 1
        if page.next_cursor is None:
            break
        assert page.next_cursor == page.items[-1].row_id
        cursor = page.next_cursor
    assert seen == expected
    assert pages == 4
    full = await store.list_messages(limit=7)
    assert [m.row_id for m in full.items] == expected and full.next_cursor is None
    exact = await store.list_messages(limit=6)
    assert exact.next_cursor == "a"


async def test_listing_orders_row_ids_bytewise(backend: Backend) -> None:
    store = backend.open()
    await store.migrate()
    ids = ["a", "B", "b", "Z", "10", "9", "~", "\u00e9", "\u00ff", "\u0100", "\U0001f600"]
    for n, row_id in enumerate(ids):
        await store.record_message(message(row_id, f"w{n}"))
    newest_first = sorted(ids, key=lambda row_id: row_id.encode(), reverse=True)
    listed: list[str] = []
    cursor = None
    while True:
        page = await store.list_messages(limit=3, before_row_id=cursor)
        listed += [row.row_id for row in page.items]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert listed == newest_first
    if backend.kind in POSTGRES_KINDS:  # whatever the database's own collation
        [(collation,)] = backend.raw_sql(
            "SELECT collation_name FROM information_schema.columns WHERE table_schema ="
            " current_schema() AND table_name = 'svc_messages' AND column_name = 'row_id'"
        )
        assert collation == "C"


async def test_list_messages_empty_and_unknown_cursor(store: AnyStore) -> None:
    empty = await store.list_messages()
    assert empty.items == () and empty.next_cursor is None
    await store.record_message(message("r1", "w1"))
    unknown = await store.list_messages(before_row_id="missing")
    assert unknown.items == () and unknown.next_cursor is None
    assert unknown.cursor_found is False
    oldest = await store.list_messages(before_row_id="r1")
    assert oldest.items == () and oldest.cursor_found is True


async def test_text_utf8_cannot_carry_is_a_validation_error_never_the_drivers(
    store: AnyStore,
) -> None:
    """A lone surrogate (JSON's ``\\ud800``) is refused before any I/O, as the contract's
    validation error: the drivers would raise ``UnicodeEncodeError`` on it."""
    with pytest.raises(PersistenceValidationError) as info:
        await store.record_message(message("r-odd", "wamid.\ud800"))
    assert info.value.code == "invalid_record"
    with pytest.raises(PersistenceValidationError):
        await store.get_message(wa_message_id="wamid.\ud800")
    assert (await store.list_messages()).items == ()


@pytest.mark.parametrize(
    "cursor", ["r\x00", "r\ud800", "r" * 257], ids=["nul", "surrogate", "long"]
)
async def test_a_cursor_no_row_can_have_is_unknown(store: AnyStore, cursor: str) -> None:
    await store.record_message(message("r", "w1"))
    page = await store.list_messages(before_row_id=cursor)
    assert page.items == () and page.next_cursor is None and page.cursor_found is False
    await store.close()
    with pytest.raises(PersistenceError) as info:
        await store.list_messages(before_row_id=cursor)
    assert info.value.code == "store_closed"


@pytest.mark.parametrize("limit", [0, 101, -1, True, 2.5, "10"])
async def test_list_messages_limit_is_validated(store: AnyStore, limit: object) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        await store.list_messages(limit=limit)  # type: ignore[arg-type]
    assert info.value.code == "invalid_options"


# --- rule 5: latest inbound


async def test_latest_inbound_per_phone(store: AnyStore) -> None:
    assert await store.get_latest_inbound_message_at(phone="15550001") is None
    await store.record_message(
        message("i1", "w1", direction="inbound", from_phone="15550001", at=T0)
    )
    await store.record_message(
        message("i2", "w2", direction="inbound", from_phone="15550001", at=T0 + ms(7))
    )
    await store.record_message(
        message("i3", "w3", direction="inbound", from_phone="15550002", at=T0 + ms(99))
    )
    # Outbound rows to (or even "from") the phone never count.
    await store.record_message(
        message("o1", "w4", direction="outbound", from_phone="15550001", at=T0 + ms(500))
    )
    assert await store.get_latest_inbound_message_at(phone="15550001") == T0 + ms(7)
    assert await store.get_latest_inbound_message_at(phone="15550002") == T0 + ms(99)
    assert await store.get_latest_inbound_message_at(phone="15550003") is None


# --- outbox


async def test_outbox_lease_and_success(store: AnyStore) -> None:
    enqueued = await store.enqueue_outbox_item(id="o1", payload_hash="p", created_at=T0)
    assert enqueued.status is OutboxStatus.PENDING and enqueued.attempts == 0
    again = await store.enqueue_outbox_item(id="o1", payload_hash="other", created_at=T0 + ms(9))
    assert again == enqueued
    assert await store.count_outbox_pending() == 1
    assert await store.claim_outbox_items(now=T0 - ms(1), limit=10) == []  # not yet due
    [item] = await store.claim_outbox_items(now=T0, limit=10)
    assert item.status is OutboxStatus.PROCESSING and item.attempts == 1
    assert item.lease_id and item.lease_expires_at == T0 + ms(OUTBOX_LEASE_MS)
    assert await store.count_outbox_pending() == 0
    # Leased: nobody else gets it until the lease is stale.
    assert await store.claim_outbox_items(now=T0 + ms(OUTBOX_LEASE_MS - 1), limit=10) == []
    assert not await store.mark_outbox_item_succeeded(id="o1", lease_id="wrong", now=T0)
    assert await store.mark_outbox_item_succeeded(id="o1", lease_id=item.lease_id, now=T0)
    assert not await store.mark_outbox_item_succeeded(id="o1", lease_id=item.lease_id, now=T0)
    assert await store.claim_outbox_items(now=T0 + timedelta(days=1), limit=10) == []


async def test_an_expired_lease_completes_until_another_worker_reclaims(store: AnyStore) -> None:
    for item_id in ("o1", "o2"):
        await store.enqueue_outbox_item(id=item_id, payload_hash="p", created_at=T0)
    leases = {i.id: i.lease_id or "" for i in await store.claim_outbox_items(now=T0, limit=2)}
    late = T0 + ms(2 * OUTBOX_LEASE_MS)
    assert await store.mark_outbox_item_succeeded(id="o1", lease_id=leases["o1"], now=late)
    assert await store.mark_outbox_item_failed(
        id="o2", lease_id=leases["o2"], now=late, retry_delay_ms=0
    )
    assert [i.status for i in await store.list_outbox_items(limit=10)] == [
        OutboxStatus.SUCCEEDED,
        OutboxStatus.PENDING,
    ]


async def test_stale_lease_is_reclaimed_and_fenced(store: AnyStore) -> None:
    await store.enqueue_outbox_item(id="o1", payload_hash="p", created_at=T0)
    [first] = await store.claim_outbox_items(now=T0, limit=1)
    stale_at = T0 + ms(OUTBOX_LEASE_MS)
    [second] = await store.claim_outbox_items(now=stale_at, limit=1)
    assert second.id == "o1" and second.lease_id != first.lease_id and second.attempts == 2
    assert first.lease_id is not None and second.lease_id is not None
    # The stale lease can neither complete nor fail the newer lease.
    assert not await store.mark_outbox_item_succeeded(
        id="o1", lease_id=first.lease_id, now=stale_at
    )
    assert not await store.mark_outbox_item_failed(
        id="o1", lease_id=first.lease_id, now=stale_at, retry_delay_ms=10
    )
    assert await store.mark_outbox_item_succeeded(id="o1", lease_id=second.lease_id, now=stale_at)


async def test_failure_reschedules_at_now_plus_retry_delay(store: AnyStore) -> None:
    await store.enqueue_outbox_item(id="o1", payload_hash="p", created_at=T0)
    [item] = await store.claim_outbox_items(now=T0, limit=1)
    assert item.lease_id is not None
    now = T0 + ms(250)
    assert await store.mark_outbox_item_failed(
        id="o1", lease_id=item.lease_id, now=now, retry_delay_ms=30_000
    )
    assert await store.count_outbox_pending() == 1
    assert await store.claim_outbox_items(now=now + ms(29_999), limit=1) == []
    [retry] = await store.claim_outbox_items(now=now + ms(30_000), limit=1)
    assert retry.attempts == 2 and retry.next_attempt_at == now + ms(30_000)
    # The old lease was consumed by the failure.
    assert not await store.mark_outbox_item_failed(
        id="o1", lease_id=item.lease_id, now=now, retry_delay_ms=1
    )


async def test_claim_respects_limit_and_due_order(store: AnyStore) -> None:
    for i in range(5):
        await store.enqueue_outbox_item(id=f"o{i}", payload_hash="p", created_at=T0 + ms(10 - i))
    first = await store.claim_outbox_items(now=T0 + ms(100), limit=2)
    assert [i.id for i in first] == ["o4", "o3"]
    rest = await store.claim_outbox_items(now=T0 + ms(100), limit=10)
    assert [i.id for i in rest] == ["o2", "o1", "o0"]


# --- validation, closing, redaction


@pytest.mark.parametrize(
    "kwargs",
    [
        {"event_key": "", "event_hash": "h", "received_at": T0},
        {"event_key": "   ", "event_hash": "h", "received_at": T0},
        {"event_key": "a\nb", "event_hash": "h", "received_at": T0},
        {"event_key": "x" * 257, "event_hash": "h", "received_at": T0},
        {"event_key": "k", "event_hash": "h", "received_at": datetime(2026, 1, 1)},
        {"event_key": 5, "event_hash": "h", "received_at": T0},
    ],
)
async def test_invalid_records_are_refused_before_io(store: AnyStore, kwargs: dict) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        await store.record_webhook_event(**kwargs)
    assert info.value.code == "invalid_record"


# A lone surrogate (JSON's "\\ud800") passes a str check but no database driver can encode it.
LONE_SURROGATE_CALLS = {
    "event_key": lambda s: s.record_webhook_event(
        event_key="k\ud800", event_hash="h", received_at=T0
    ),
    "update_key": lambda s: s.record_webhook_updates(
        event_key="k", event_hash="h", received_at=T0, update_keys=("u\udfff",)
    ),
    "row_id": lambda s: s.record_message(message("r\ud800", "w")),
    "wa_id": lambda s: s.record_user_identities(
        [UserIdentityRecord(wa_id="1555\ud800", last_seen_at=T0)]
    ),
    "user": lambda s: s.find_user_identity(user="US.\udc00"),
    "outbox id": lambda s: s.enqueue_outbox_item(id="o\ud800", payload_hash="p", created_at=T0),
    "idempotency_key": lambda s: s.claim_service_request(
        idempotency_key="i\ud800", request_hash="h", created_at=T0
    ),
}


@pytest.mark.parametrize("call", LONE_SURROGATE_CALLS.values(), ids=LONE_SURROGATE_CALLS)
async def test_a_lone_surrogate_is_refused_before_io(store: AnyStore, call: Any) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        await call(store)
    assert info.value.code == "invalid_record"
    assert "\ud800" not in str(info.value) and "\udfff" not in str(info.value)
    assert await store.record_webhook_event(
        event_key="k", event_hash="h", received_at=T0
    ) is WebhookEventResult.RECORDED


@pytest.mark.parametrize(
    "response",
    ['{"a":"\x00"}', '{"a":"\ud800"}', "x" * (1_048_576 + 1), b"{}", None],
    ids=["nul", "lone-surrogate", "over-1-mib", "bytes", "none"],
)
async def test_a_response_the_store_cannot_replay_is_refused(
    store: AnyStore, response: object
) -> None:
    assert await store.claim_service_request(
        idempotency_key="i", request_hash="h", created_at=T0
    ) == Claimed()
    for call in (
        lambda: store.record_service_request(
            idempotency_key="j", request_hash="h", response_json=response, created_at=T0
        ),
        lambda: store.complete_service_request(
            idempotency_key="i", request_hash="h", response_json=response, created_at=T0
        ),
    ):
        with pytest.raises(PersistenceValidationError) as info:
            await call()
        assert info.value.code == "invalid_record"
    assert await store.get_service_request(idempotency_key="j") is None
    stored = await store.get_service_request(idempotency_key="i")
    assert stored is not None and stored.state is ServiceRequestState.PENDING


async def test_a_response_of_1_mib_is_replayed_byte_for_byte(store: AnyStore) -> None:
    response = '{"e":"\u00e9\U0001f600\\u0000"}'.ljust(1_048_576, " ")
    assert await store.claim_service_request(
        idempotency_key="i", request_hash="h", created_at=T0
    ) == Claimed()
    assert await store.complete_service_request(
        idempotency_key="i", request_hash="h", response_json=response, created_at=T0
    )
    claim = await store.claim_service_request(idempotency_key="i", request_hash="h", created_at=T0)
    assert isinstance(claim, Replay) and claim.response_json == response


async def test_a_time_past_the_year_9998_is_refused_before_io(store: AnyStore) -> None:
    # A lease or delay (at most 7 days) added to it must still read back as a datetime.
    late = datetime(9999, 1, 1, tzinfo=UTC)
    await store.enqueue_outbox_item(id="o", payload_hash="p", created_at=T0)
    for call in (
        lambda: store.claim_outbox_items(now=late, limit=1),
        lambda: store.enqueue_outbox_item(
            id="p", payload_hash="p", created_at=datetime.max.replace(tzinfo=UTC)
        ),
        lambda: store.record_webhook_event(
            event_key="k",
            event_hash="h",
            received_at=datetime.min.replace(tzinfo=timezone(timedelta(hours=1))),
        ),
    ):
        with pytest.raises(PersistenceValidationError) as info:
            await call()
        assert info.value.code == "invalid_record"
    [item] = await store.claim_outbox_items(now=late - ms(1), limit=1)
    assert item.id == "o" and item.attempts == 1


async def test_a_direction_of_any_type_is_checked(store: AnyStore) -> None:
    odd = dataclasses.replace(message("r", "w"), direction=["outbound"])
    for call in (
        lambda: store.record_message(odd),
        lambda: store.record_webhook_delivery(
            event_key="k", event_hash="h", received_at=T0, messages=(odd,)
        ),
    ):
        with pytest.raises(PersistenceValidationError) as info:
            await call()
        assert info.value.code == "invalid_record"
    assert await store.get_message(wa_message_id="w") is None


async def test_invalid_options_are_refused(store: AnyStore) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        await store.claim_outbox_items(now=T0, limit=0)
    assert info.value.code == "invalid_options"
    with pytest.raises(PersistenceValidationError):
        await store.mark_outbox_item_failed(id="o", lease_id="l", now=T0, retry_delay_ms=-1)
    with pytest.raises(PersistenceValidationError):
        await store.get_message(wa_message_id="w", direction="sideways")
    with pytest.raises(PersistenceValidationError):
        await store.record_message(message("r", "w", direction="sideways"))


async def test_times_are_kept_at_millisecond_precision_in_utc(store: AnyStore) -> None:
    local = datetime(2026, 11, 21, 12, 15, 30, 123_999, tzinfo=timezone(timedelta(hours=2)))
    row = await store.record_message(message("r1", "w1", at=local))
    assert row.created_at == datetime(2026, 11, 21, 10, 15, 30, 123_000, tzinfo=UTC)
    assert row.created_at.tzinfo is UTC


async def test_closed_store_refuses_calls(backend: Backend) -> None:
    store = backend.open()
    await store.migrate()
    await store.close()
    await store.close()  # idempotent
    with pytest.raises(PersistenceError) as info:
        await store.count_outbox_pending()
    assert info.value.code == "store_closed"
    health = await store.health()
    assert not health.ok


async def test_no_path_or_dsn_in_repr_errors_or_health(backend: Backend) -> None:
    store = backend.open()
    texts = [repr(store), str(store)]
    await store.migrate()
    texts.append(repr(await store.health()))
    if backend.kind != "sqlite-memory":
        backend.raw_sql("DROP TABLE svc_outbox")
        with pytest.raises(PersistenceError) as info:
            await store.count_outbox_pending()
        assert info.value.code == "query_failed"
        cause = info.value
        assert cause.__cause__ is None
        assert cause.__context__ is None or cause.__suppress_context__
        texts += [str(info.value), repr(info.value), info.value.message]
    for text in texts:
        for secret in backend.secrets:
            assert secret not in text


# --- one store call per webhook delivery


NAIVE = datetime(2026, 1, 1)


def delivery_status(wa_message_id: str, status: str, offset: int = 0) -> StatusEvent:
    return StatusEvent(wa_message_id=wa_message_id, status=status, timestamp=T0 + ms(offset))


def inbound(row_id: str, wa_message_id: str, offset: int = 0) -> MessageRecord:
    return message(
        row_id,
        wa_message_id,
        direction="inbound",
        status="received",
        at=T0 + ms(offset),
        from_phone="15550001",
        to_phone=None,
    )


async def _event_is_new(store: AnyStore, event_key: str) -> bool:
    """Whether the event key was unknown (it is recorded by asking)."""
    result = await store.record_webhook_event(event_key=event_key, event_hash="x", received_at=T0)
    return result is WebhookEventResult.RECORDED


async def _install_status_fault(store: AnyStore) -> None:
    """A database constraint that refuses the status ``explode`` (through the store's session)."""
    if store.backend == "postgres":
        sql = (
            "ALTER TABLE svc_message_status_events"
            " ADD CONSTRAINT svc_test_fault CHECK (status <> 'explode')"
        )
    else:
        sql = (
            "CREATE TRIGGER svc_test_fault BEFORE INSERT ON svc_message_status_events"
            " WHEN NEW.status = 'explode' BEGIN SELECT RAISE(ABORT, 'injected fault'); END"
        )
    await store._call("query_failed", lambda s: s.run(sql), write=True)


def _unrelated_statuses(count: int) -> list[StatusEvent]:
    """Statuses of messages no test looks at: they grow a delivery (a few rows of each
    multi-row statement) without changing what the test asserts."""
    return [delivery_status(f"wamid.elsewhere.{i}", "read", 400 + i) for i in range(count)]


# A delivery with its own rows only, and one grown by unrelated statuses.
PADDINGS = pytest.mark.parametrize("padding", [0, 5], ids=["small", "large"])


@PADDINGS
async def test_delivery_records_the_event_and_projects_it(store: AnyStore, padding: int) -> None:
    result = await store.record_webhook_delivery(
        event_key="e1",
        event_hash="h1",
        received_at=T0,
        messages=[inbound("r-in", "wamid.in")],
        statuses=[
            delivery_status("wamid.out", "delivered", 100),
            delivery_status("wamid.out", "read", 200),
            delivery_status("wamid.ghost", "read", 300),
            *_unrelated_statuses(padding),
        ],
    )
    assert result is WebhookEventResult.RECORDED
    stored = await store.get_message(wa_message_id="wamid.in")
    assert stored == inbound("r-in", "wamid.in")
    # The statuses were logged before their message existed: recording it reconciles them.
    sent = await store.record_message(message("r-out", "wamid.out", status="sent"))
    assert (sent.status, sent.updated_at) == ("read", T0 + ms(200))
    again = await store.record_webhook_delivery(
        event_key="e1", event_hash="h1", received_at=T0 + ms(5)
    )
    assert again is WebhookEventResult.DUPLICATE
    other = await store.record_webhook_delivery(event_key="e2", event_hash="h1", received_at=T0)
    assert other is WebhookEventResult.RECORDED
    assert not await _event_is_new(store, "e1")


@PADDINGS
async def test_a_duplicate_delivery_retries_the_projection_idempotently(
    store: AnyStore, padding: int
) -> None:
    await store.record_message(message("r-out", "wamid.out", status="sent"))
    # An earlier attempt kept the event key but not the projection (the old two-step path).
    await store.record_webhook_event(event_key="e1", event_hash="h1", received_at=T0)
    delivery = {
        "event_key": "e1",
        "event_hash": "h1",
        "received_at": T0,
        "messages": (inbound("r-in", "wamid.in"),),
        "statuses": (delivery_status("wamid.out", "delivered", 50), *_unrelated_statuses(padding)),
    }
    for _ in range(3):
        assert await store.record_webhook_delivery(**delivery) is WebhookEventResult.DUPLICATE
    page = await store.list_messages(limit=10)
    assert sorted(m.row_id for m in page.items) == ["r-in", "r-out"]
    out = await store.get_message(wa_message_id="wamid.out")
    assert out is not None and (out.status, out.updated_at) == ("delivered", T0 + ms(50))
    # A retried delivery carries fresh row ids: the pair (direction, id) keeps one row.
    retried = {**delivery, "messages": (inbound("r-in-2", "wamid.in"),)}
    assert await store.record_webhook_delivery(**retried) is WebhookEventResult.DUPLICATE
    assert (await store.get_message(wa_message_id="wamid.in")).row_id == "r-in"  # type: ignore[union-attr]


@PADDINGS
async def test_a_failing_projection_leaves_no_event_row(store: AnyStore, padding: int) -> None:
    await _install_status_fault(store)
    good = store.record_webhook_delivery(
        event_key="good",
        event_hash="h",
        received_at=T0,
        statuses=[delivery_status("wamid.good", "read")],
    )
    outcomes: dict[str, object] = {}

    async def bad() -> None:
        try:
            await store.record_webhook_delivery(
                event_key="bad",
                event_hash="h",
                received_at=T0,
                messages=[inbound("r-bad", "wamid.bad")],
                statuses=[
                    delivery_status("wamid.bad", "delivered"),
                    *_unrelated_statuses(padding),
                    delivery_status("wamid.bad", "explode"),
                ],
            )
        except PersistenceError as exc:
            outcomes["bad"] = exc

    async def run_good() -> None:
        outcomes["good"] = await good

    # Together, so a group-committing store puts both in one batch: the bad one fails alone.
    async with trio.open_nursery() as nursery:
        nursery.start_soon(bad)
        nursery.start_soon(run_good)
    error = outcomes["bad"]
    assert isinstance(error, PersistenceError) and not isinstance(error, PersistenceValidationError)
    assert error.code == "outbox_failed"
    assert outcomes["good"] is WebhookEventResult.RECORDED
    assert await store.get_message(wa_message_id="wamid.bad") is None
    assert await _event_is_new(store, "bad")
    assert not await _event_is_new(store, "good")


@pytest.mark.slow
async def test_twenty_concurrent_identical_deliveries_record_once(backend: Backend) -> None:
    stores = [backend.open() for _ in range(2 if backend.kind != "sqlite-memory" else 1)]
    await stores[0].migrate()
    await stores[0].record_message(message("r-out", "wamid.out", status="sent"))
    results: list[WebhookEventResult] = []

    async def deliver(i: int) -> None:
        results.append(
            await stores[i % len(stores)].record_webhook_delivery(
                event_key="same",
                event_hash="h",
                received_at=T0,
                messages=[inbound(f"r-in-{i}", "wamid.in")],
                statuses=[
                    delivery_status("wamid.out", "delivered", 10),
                    delivery_status("wamid.in", "read", 20),
                ],
            )
        )

    async with trio.open_nursery() as nursery:
        for i in range(20):
            nursery.start_soon(deliver, i)
    assert results.count(WebhookEventResult.RECORDED) == 1
    assert results.count(WebhookEventResult.DUPLICATE) == 19
    page = await stores[0].list_messages(limit=10)
    assert sorted(m.wa_message_id for m in page.items) == ["wamid.in", "wamid.out"]
    out = await stores[0].get_message(wa_message_id="wamid.out")
    assert out is not None and out.status == "delivered"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"event_key": "", "event_hash": "h", "received_at": T0},
        {"event_key": "e", "event_hash": "h", "received_at": datetime(2026, 1, 1)},
        {"messages": "wamid.1"},
        {"messages": [object()]},
        {"messages": [message("r", "w", direction="sideways")]},
        {"messages": [message("r", "")]},
        {"statuses": [("wamid.1", "read", T0)]},
        {"statuses": [StatusEvent(wa_message_id="w", status="", timestamp=T0)]},
        {"statuses": [StatusEvent(wa_message_id="w\n", status="read", timestamp=T0)]},
        {
            "statuses": [
                StatusEvent(wa_message_id="w", status="read", timestamp=datetime(2026, 1, 1))
            ]
        },
        {"statuses": None},
    ],
)
async def test_invalid_deliveries_are_refused_before_io(store: AnyStore, kwargs: dict) -> None:
    call = {
        "event_key": "e",
        "event_hash": "h",
        "received_at": T0,
        "messages": [inbound("r-ok", "wamid.ok")],
        "statuses": [delivery_status("wamid.ok", "read")],
    } | kwargs
    with pytest.raises(PersistenceValidationError) as info:
        await store.record_webhook_delivery(**call)
    assert info.value.code == "invalid_record"
    assert await store.get_message(wa_message_id="wamid.ok") is None
    assert await _event_is_new(store, "e")
