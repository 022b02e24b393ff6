"""The pricing category a status reports is kept with its status event, on every adapter."""

from __future__ import annotations

from datetime import timedelta

import pytest

from svc.http._projection import delivery_projection
from svc.store import CheckedRowsBuilder, PersistenceValidationError, StatusEvent
from svc.store._migrations import load_migrations
from svc.webhook import normalize

from .conftest import T0, AnyStore, Backend

EVENTS = (
    "SELECT wa_message_id, status, pricing_category FROM svc_message_status_events ORDER BY 1, 2"
)


def _status(message_id: str, status: str, pricing: dict[str, object] | None) -> dict[str, object]:
    item: dict[str, object] = {
        "id": message_id,
        "status": status,
        "timestamp": "1762600000",
        "recipient_id": "16505551234",
    }
    if pricing is not None:
        item["pricing"] = pricing
    return item


def _envelope(*statuses: dict[str, object]) -> dict[str, object]:
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": "106540352242922"},
        "statuses": list(statuses),
    }
    return {
        "entry": [{"id": "102290129340398", "changes": [{"field": "messages", "value": value}]}]
    }


PMP = {"billable": True, "pricing_model": "PMP", "type": "regular"}


def test_the_migration_adds_the_column_on_both_backends() -> None:
    # Looked up by name: parallel branches renumber migrations when they merge.
    for dialect in ("sqlite", "postgres"):
        [migration] = [
            m
            for m in load_migrations(dialect)  # type: ignore[arg-type]
            if m.name.endswith("_status_pricing_category")
        ]
        assert "ADD COLUMN pricing_category TEXT" in migration.sql


def test_the_projection_keeps_each_status_s_category() -> None:
    updates = normalize(
        _envelope(
            _status("wamid.a", "sent", {**PMP, "category": "marketing_lite"}),
            _status("wamid.b", "delivered", {**PMP, "category": "authentication_international"}),
            _status("wamid.c", "read", None),
            _status("wamid.d", "sent", {**PMP, "category": 7}),
        )
    ).updates
    events = delivery_projection(updates, lambda: T0).statuses
    assert [(e.wa_message_id, e.pricing_category) for e in events] == [
        ("wamid.a", "marketing_lite"),
        ("wamid.b", "authentication_international"),
        ("wamid.c", None),
        ("wamid.d", None),
    ]


def test_a_category_the_store_cannot_hold_is_left_out_not_the_event() -> None:
    rows = CheckedRowsBuilder()
    assert rows.status(wa_message_id="wamid.a", status="sent", at_ms=1, pricing_category="x" * 65)
    assert rows.status(wa_message_id="wamid.b", status="sent", at_ms=1, pricing_category="a\nb")
    assert [e.pricing_category for e in rows.seal().status_events()] == [None, None]


async def test_both_projection_forms_store_the_category(persistent_backend: Backend) -> None:
    store: AnyStore = persistent_backend.open()
    await store.migrate()
    updates = normalize(
        _envelope(
            _status("wamid.a", "sent", {**PMP, "category": "marketing_lite"}),
            _status("wamid.a", "delivered", {**PMP, "category": "marketing_lite"}),
            _status("wamid.b", "read", None),
        )
    ).updates
    projection = delivery_projection(updates, lambda: T0)
    await store.record_webhook_updates(
        event_key="k1", event_hash="h", received_at=T0, update_keys=("u1",), rows=projection.rows
    )
    later = T0 + timedelta(seconds=5)
    await store.record_webhook_updates(
        event_key="k2",
        event_hash="h",
        received_at=T0,
        update_keys=("u2",),
        statuses=[
            StatusEvent(
                wa_message_id="wamid.c", status="sent", timestamp=later, pricing_category="utility"
            ),
        ],
    )
    # The single-status call has no pricing: its event keeps none.
    await store.append_message_status(wa_message_id="wamid.d", status="sent", timestamp=later)
    assert persistent_backend.raw_sql(EVENTS) == [
        ("wamid.a", "delivered", "marketing_lite"),
        ("wamid.a", "sent", "marketing_lite"),
        ("wamid.b", "read", None),
        ("wamid.c", "sent", "utility"),
        ("wamid.d", "sent", None),
    ]


async def test_a_record_with_a_bad_category_is_refused(store: AnyStore) -> None:
    with pytest.raises(PersistenceValidationError) as caught:
        await store.record_webhook_delivery(
            event_key="k",
            event_hash="h",
            received_at=T0,
            statuses=[
                StatusEvent(
                    wa_message_id="wamid.a", status="sent", timestamp=T0, pricing_category="x" * 65
                )
            ],
        )
    assert "pricing_category" in caught.value.message
