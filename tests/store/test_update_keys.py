"""Per-update keys: recorded with the delivery, unfinished until their handlers finish."""

from __future__ import annotations

from datetime import timedelta

import pytest

from svc.store import (
    UPDATE_CLAIM_LEASE_MS,
    PersistenceValidationError,
    UpdatesRecorded,
    WebhookEventResult,
)

from .conftest import T0, AnyStore, Backend


async def test_regrouped_deliveries_run_each_update_until_it_is_handled(store: AnyStore) -> None:
    first = await store.record_webhook_updates(
        event_key="d1", event_hash="h", received_at=T0, update_keys=["m1"]
    )
    assert first == UpdatesRecorded(event=WebhookEventResult.RECORDED, to_run=("m1",), new=("m1",))
    assert await store.mark_webhook_updates_handled(update_keys=["m1"], handled_at=T0) == 1
    assert await store.mark_webhook_updates_handled(update_keys=["m1"], handled_at=T0) == 0
    second = await store.record_webhook_updates(
        event_key="d2", event_hash="h", received_at=T0, update_keys=["m1", "m2", "m2"]
    )
    assert second == UpdatesRecorded(event=WebhookEventResult.RECORDED, to_run=("m2",), new=("m2",))
    # d3 regroups them while d2 is still running m2: in progress, not run twice.
    third = await store.record_webhook_updates(
        event_key="d3", event_hash="h", received_at=T0, update_keys=["m2", "m1"]
    )
    assert third == UpdatesRecorded(
        event=WebhookEventResult.RECORDED, to_run=(), in_progress=("m2",)
    )
    # After the claim lease d2 is taken to have crashed: the redelivery runs m2.
    later = T0 + timedelta(milliseconds=UPDATE_CLAIM_LEASE_MS)
    fourth = await store.record_webhook_updates(
        event_key="d3", event_hash="h", received_at=later, update_keys=["m2", "m1"]
    )
    assert fourth == UpdatesRecorded(event=WebhookEventResult.DUPLICATE, to_run=("m2",))
    # ...and now holds the claim again; a shorter lease lets the next copy take it.
    assert (
        await store.record_webhook_updates(
            event_key="d3", event_hash="h", received_at=later, update_keys=["m2"]
        )
    ).in_progress == ("m2",)
    fifth = await store.record_webhook_updates(
        event_key="d3", event_hash="h", received_at=later, update_keys=["m2"], claim_lease_ms=0
    )
    assert fifth.to_run == ("m2",)
    await store.mark_webhook_updates_handled(update_keys=["m2"], handled_at=later)
    again = await store.record_webhook_updates(
        event_key="d3",
        event_hash="h",
        received_at=later,
        update_keys=["m2", "m1"],
        claim_lease_ms=0,
    )
    assert again == UpdatesRecorded(event=WebhookEventResult.DUPLICATE)


async def test_pruned_update_keys_are_new_again(store: AnyStore) -> None:
    old = T0 - timedelta(days=30)
    await store.record_webhook_updates(
        event_key="d", event_hash="h", received_at=old, update_keys=["m1"]
    )
    await store.mark_webhook_updates_handled(update_keys=["m1"], handled_at=old)
    report = await store.prune(older_than=T0 - timedelta(days=14))
    assert (report.webhook_events, report.webhook_updates) == (1, 1)
    after = await store.record_webhook_updates(
        event_key="d", event_hash="h", received_at=T0, update_keys=["m1"]
    )
    assert after == UpdatesRecorded(event=WebhookEventResult.RECORDED, to_run=("m1",), new=("m1",))


async def test_update_keys_are_checked(store: AnyStore) -> None:
    with pytest.raises(PersistenceValidationError):
        await store.record_webhook_updates(
            event_key="d", event_hash="h", received_at=T0, update_keys=[""]
        )
    with pytest.raises(PersistenceValidationError):
        await store.mark_webhook_updates_handled(update_keys="m1", handled_at=T0)


async def test_finished_keys_are_claimed_and_marked_handled_in_one_call(store: AnyStore) -> None:
    """``finished_keys`` (updates with no work) = record, then mark the keys this call claims
    among them: the answer is unchanged; a key another delivery holds is not marked."""
    held = await store.record_webhook_updates(
        event_key="d0", event_hash="h", received_at=T0, update_keys=["held"]
    )
    assert held.to_run == ("held",)
    first = await store.record_webhook_updates(
        event_key="d1",
        event_hash="h",
        received_at=T0,
        update_keys=["work", "idle", "idle", "held"],
        finished_keys=["idle", "held", "elsewhere"],
    )
    assert first == UpdatesRecorded(
        event=WebhookEventResult.RECORDED,
        to_run=("work", "idle"),
        in_progress=("held",),
        new=("work", "idle"),
    )
    # "idle" was marked with the record; "work" and "held" are still unfinished.
    assert await store.mark_webhook_updates_handled(update_keys=["idle"], handled_at=T0) == 0
    copy = await store.record_webhook_updates(
        event_key="d1", event_hash="h", received_at=T0, update_keys=["work", "idle", "held"]
    )
    assert copy == UpdatesRecorded(event=WebhookEventResult.DUPLICATE, in_progress=("work", "held"))
    assert (
        await store.mark_webhook_updates_handled(update_keys=["work", "held"], handled_at=T0) == 2
    )


async def test_a_lapsed_claim_of_a_finished_key_is_marked_handled(store: AnyStore) -> None:
    await store.record_webhook_updates(
        event_key="d1", event_hash="h", received_at=T0, update_keys=["crashed"]
    )
    later = T0 + timedelta(milliseconds=UPDATE_CLAIM_LEASE_MS)
    again = await store.record_webhook_updates(
        event_key="d1",
        event_hash="h",
        received_at=later,
        update_keys=["crashed"],
        finished_keys=["crashed"],
    )
    assert again == UpdatesRecorded(event=WebhookEventResult.DUPLICATE, to_run=("crashed",))
    after = await store.record_webhook_updates(
        event_key="d1", event_hash="h", received_at=later, update_keys=["crashed"], claim_lease_ms=0
    )
    assert after == UpdatesRecorded(event=WebhookEventResult.DUPLICATE)


async def test_finished_keys_are_handled_at_the_received_time(
    persistent_backend: Backend,
) -> None:
    store = persistent_backend.open()
    await store.migrate()
    await store.record_webhook_updates(
        event_key="d1",
        event_hash="h",
        received_at=T0,
        update_keys=["work", "idle"],
        finished_keys=["idle"],
    )
    rows = persistent_backend.raw_sql(
        "SELECT update_key, claimed_at, handled_at FROM svc_webhook_updates ORDER BY update_key"
    )
    at = int(T0.timestamp() * 1000)
    assert [tuple(row) for row in rows] == [("idle", at, at), ("work", at, None)]


async def test_finished_keys_are_checked(store: AnyStore) -> None:
    for bad in ("idle", [""], [None]):
        with pytest.raises(PersistenceValidationError):
            await store.record_webhook_updates(
                event_key="d",
                event_hash="h",
                received_at=T0,
                update_keys=["idle"],
                finished_keys=bad,  # type: ignore[arg-type]
            )
