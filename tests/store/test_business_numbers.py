"""The business phone number on the projection: stored, filtered, and older rows as the default."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from svc.store import (
    SCHEMA_VERSION,
    MessageRecord,
    PersistenceValidationError,
    StatusEvent,
)
from svc.store._migrations import load_migrations

from .conftest import T0, AnyStore, Backend

A = "106540352242922"
B = "106540352242933"
USER = "15551234567"


def inbound(row_id: str, number: str | None, *, seconds: int = 0) -> MessageRecord:
    at = T0 + timedelta(seconds=seconds)
    return MessageRecord(
        row_id=row_id,
        wa_message_id=f"wamid.{row_id}",
        direction="inbound",
        from_phone=USER,
        type="text",
        status="received",
        created_at=at,
        updated_at=at,
        business_phone_number_id=number,
    )


async def test_the_number_is_stored_and_read_back(store: AnyStore) -> None:
    stored = await store.record_message(inbound("r1", A))
    assert stored.business_phone_number_id == A
    fetched = await store.get_message(wa_message_id="wamid.r1")
    assert fetched is not None and fetched.business_phone_number_id == A


async def test_the_window_is_per_business_number(store: AnyStore) -> None:
    await store.record_message(inbound("a", A, seconds=10))
    await store.record_message(inbound("b", B, seconds=20))
    latest_a = await store.get_latest_inbound_message_at(user=USER, business_phone_number_id=A)
    latest_b = await store.get_latest_inbound_message_at(user=USER, business_phone_number_id=B)
    assert latest_a == T0 + timedelta(seconds=10)
    assert latest_b == T0 + timedelta(seconds=20)
    assert await store.get_latest_inbound_message_at(user=USER) == T0 + timedelta(seconds=20)
    assert (
        await store.get_latest_inbound_message_at(user=USER, business_phone_number_id="1") is None
    )


async def test_list_filters_by_number_and_unassigned_rows_count_when_asked(
    store: AnyStore,
) -> None:
    await store.record_message(inbound("old", None, seconds=1))
    await store.record_message(inbound("a", A, seconds=2))
    await store.record_message(inbound("b", B, seconds=3))
    everything = await store.list_messages()
    assert [r.row_id for r in everything.items] == ["b", "a", "old"]
    only_b = await store.list_messages(business_phone_number_id=B)
    assert [r.row_id for r in only_b.items] == ["b"]
    default_a = await store.list_messages(business_phone_number_id=A, include_unassigned=True)
    assert [r.row_id for r in default_a.items] == ["a", "old"]
    by_user = await store.list_messages(user=USER, business_phone_number_id=A)
    assert [r.row_id for r in by_user.items] == ["a"]
    window = await store.get_latest_inbound_message_at(
        user=USER, business_phone_number_id=B, include_unassigned=True
    )
    assert window == T0 + timedelta(seconds=3)


async def test_a_delivery_projects_the_number(store: AnyStore) -> None:
    await store.record_webhook_delivery(
        event_key="k",
        event_hash="h",
        received_at=T0,
        messages=[inbound("d1", B)],
        statuses=[StatusEvent(wa_message_id="wamid.d1", status="read", timestamp=T0)],
    )
    page = await store.list_messages(business_phone_number_id=B)
    assert [(r.row_id, r.business_phone_number_id) for r in page.items] == [("d1", B)]
    assert await store.list_messages(business_phone_number_id=A) == replace(page, items=())


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"business_phone_number_id": ""}, "business_phone_number_id"),
        ({"business_phone_number_id": "1\n2"}, "business_phone_number_id"),
        ({"include_unassigned": True}, "include_unassigned"),
        ({"business_phone_number_id": A, "include_unassigned": 1}, "include_unassigned"),
    ],
)
async def test_bad_number_filters_are_refused(
    store: AnyStore, kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        await store.list_messages(**kwargs)  # type: ignore[arg-type]
    assert field in info.value.message


async def test_a_bad_number_on_a_record_is_refused(store: AnyStore) -> None:
    with pytest.raises(PersistenceValidationError):
        await store.record_message(inbound("x", "1" * 65))


async def test_rows_written_before_the_column_read_as_unassigned(
    persistent_backend: Backend,
) -> None:
    store = persistent_backend.open()
    before = (
        next(
            m.version
            for m in load_migrations("sqlite")
            if m.name.endswith("_business_phone_number")
        )
        - 1
    )
    assert await store.migrate(target_version=before) == before
    persistent_backend.raw_sql(
        "INSERT INTO svc_messages (row_id, wa_message_id, direction, from_phone, to_phone,"
        " type, status, graph_message_id, created_at, updated_at)"
        " VALUES ('old', 'wamid.old', 'inbound', ?, NULL, 'text', 'received', NULL, ?, ?)",
        (USER, 1_763_720_130_000, 1_763_720_130_000),
    )
    assert await store.migrate() == SCHEMA_VERSION
    old = await store.get_message(wa_message_id="wamid.old")
    assert old is not None and old.business_phone_number_id is None
    assert await store.get_latest_inbound_message_at(user=USER, business_phone_number_id=A) is None
    as_default = await store.get_latest_inbound_message_at(
        user=USER, business_phone_number_id=A, include_unassigned=True
    )
    assert as_default == old.created_at
