"""Per-update keys: recorded with the delivery; a key recorded before is a duplicate."""

from __future__ import annotations

from datetime import timedelta

import pytest

from svc.store import PersistenceValidationError, UpdatesRecorded, WebhookEventResult

from .conftest import T0, AnyStore, Backend


async def test_regrouped_deliveries_record_each_update_once(store: AnyStore) -> None:
    first = await store.record_webhook_updates(
        event_key="d1", event_hash="h", received_at=T0, update_keys=["m1"]
    )
    assert first == UpdatesRecorded(event=WebhookEventResult.RECORDED, new=("m1",))
    second = await store.record_webhook_updates(
        event_key="d2", event_hash="h", received_at=T0, update_keys=["m1", "m2", "m2"]
    )
    assert second == UpdatesRecorded(event=WebhookEventResult.RECORDED, new=("m2",))
    third = await store.record_webhook_updates(
        event_key="d3", event_hash="h", received_at=T0, update_keys=["m2", "m1"]
    )
    assert third == UpdatesRecorded(event=WebhookEventResult.RECORDED)
    later = T0 + timedelta(hours=1)
    again = await store.record_webhook_updates(
        event_key="d3", event_hash="h", received_at=later, update_keys=["m2", "m1"]
    )
    assert again == UpdatesRecorded(event=WebhookEventResult.DUPLICATE)


async def test_pruned_update_keys_are_new_again(store: AnyStore) -> None:
    old = T0 - timedelta(days=30)
    await store.record_webhook_updates(
        event_key="d", event_hash="h", received_at=old, update_keys=["m1"]
    )
    report = await store.prune(older_than=T0 - timedelta(days=14))
    assert (report.webhook_events, report.webhook_updates) == (1, 1)
    after = await store.record_webhook_updates(
        event_key="d", event_hash="h", received_at=T0, update_keys=["m1"]
    )
    assert after == UpdatesRecorded(event=WebhookEventResult.RECORDED, new=("m1",))


async def test_update_keys_are_checked(store: AnyStore) -> None:
    for bad in ("m1", [""], [None]):
        with pytest.raises(PersistenceValidationError):
            await store.record_webhook_updates(
                event_key="d",
                event_hash="h",
                received_at=T0,
                update_keys=bad,  # type: ignore[arg-type]
            )


async def test_an_update_key_row_holds_the_received_time(persistent_backend: Backend) -> None:
    """``claimed_at`` and ``handled_at`` are no longer read (docs/store.md): a new key's row
    sets both to its received time, and a key an older version left unfinished is a
    duplicate all the same."""
    store = persistent_backend.open()
    await store.migrate()
    at = int(T0.timestamp() * 1000)
    persistent_backend.raw_sql(
        "INSERT INTO svc_webhook_updates (update_key, event_key, received_at, claimed_at)"
        " VALUES ('old', 'd0', ?, ?)",
        (at, at),
    )
    recorded = await store.record_webhook_updates(
        event_key="d1", event_hash="h", received_at=T0, update_keys=["work", "old"]
    )
    assert recorded == UpdatesRecorded(event=WebhookEventResult.RECORDED, new=("work",))
    rows = persistent_backend.raw_sql(
        "SELECT update_key, claimed_at, handled_at FROM svc_webhook_updates ORDER BY update_key"
    )
    assert [tuple(row) for row in rows] == [("old", at, None), ("work", at, at)]
