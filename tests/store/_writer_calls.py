"""The calls the writer-process tests make: one inbound delivery per number ``i``."""

from __future__ import annotations

from datetime import timedelta

from svc.store import MessageRecord, PostgresStore, SqliteStore, UpdatesRecorded
from svc.store._child import Child

from .conftest import T0


def inbound(i: int) -> MessageRecord:
    at = T0 + timedelta(seconds=i)
    return MessageRecord(
        row_id=f"row-{i}",
        wa_message_id=f"wamid.{i}",
        direction="inbound",
        type="text",
        status="received",
        created_at=at,
        updated_at=at,
        from_phone="16505551234",
    )


async def deliver(store: SqliteStore | PostgresStore, i: int) -> UpdatesRecorded:
    """Delivery ``i``: event key ``ev-i``, update key ``ui``, message ``wamid.i``."""
    return await store.record_webhook_updates(
        event_key=f"ev-{i}",
        event_hash="h",
        received_at=T0 + timedelta(seconds=i),
        update_keys=(f"u{i}",),
        messages=[inbound(i)],
    )


def writer_of(store: SqliteStore | PostgresStore) -> Child:
    """The store's writer process (its parent's end)."""
    writer = store._writers.child
    assert writer is not None
    return writer


def child_pid(store: SqliteStore | PostgresStore) -> int:
    proc = writer_of(store)._proc
    assert proc is not None
    return proc.pid
