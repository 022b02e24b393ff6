"""The call-by-call reference form of recording a webhook delivery, which the adapters' set-based
forms (``svc/store/sqlite/_writes.py``, ``svc/store/postgres/_writes.py``) must equal: same
answers, same tables (the Hypothesis equivalence tests of both adapters)."""

from __future__ import annotations

from svc.store import UpdatesRecorded, _identity, _ops, _person
from svc.store._kinds import DeliveryWrite
from svc.store._session import Session


def record_webhook_delivery(s: Session, item: DeliveryWrite) -> UpdatesRecorded:
    """The event row, the update keys and the delivery's projection, call by call, in the
    caller's transaction.

    The projection (messages, statuses, then the identity sightings) runs for a duplicate
    too (a repeated delivery retries it; every step is idempotent); the inbox rows of the
    keys it recorded new go in last, one by one, in order (a key's first row only), each in
    its person's queue. On PostgreSQL the caller holds the advisory locks.
    """
    at = item.received_at
    result = _ops.record_webhook_event(s, item.event_key, item.event_hash, at)
    new = record_update_keys(s, item.event_key, at, item.update_keys)
    for values in item.messages:
        _ops.record_message(s, values)
    for wa_message_id, status, occurred_at, category in item.statuses:
        _ops.append_message_status(s, wa_message_id, status, occurred_at, category)
    absorbed = _identity.upsert_identities(s, item.identities)
    first = {row[0]: row for row in reversed(item.inbox) if row[0] in new}  # a key's first row
    rows = [
        (key, queue, number, kind, sealed, at, user_id, wa_id, aliases)
        for key, queue, number, kind, sealed, user_id, wa_id, aliases in item.inbox
        if first.get(key) is not None and first.pop(key) is not None
    ]
    for update_key, queue_key, number, kind, sealed, _ in _person.place_inbox_rows(
        s, rows, absorbed
    ):
        s.run(
            "INSERT INTO svc_inbox (update_key, queue_key, phone_number_id, kind, sealed,"
            " next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (update_key) DO NOTHING",
            (update_key, queue_key, number, kind, sealed, at, at, at),
        )
    return UpdatesRecorded(event=result, new=new)


def record_update_keys(
    s: Session, event_key: str, at: int, keys: tuple[str, ...]
) -> tuple[str, ...]:
    """Record each update key (``claimed_at`` and ``handled_at`` the received time, as the
    adapters write them); the keys recorded new. A key stored before is a duplicate."""
    new: list[str] = []
    for update_key in dict.fromkeys(keys):
        inserted = s.run(
            "INSERT INTO svc_webhook_updates"
            " (update_key, event_key, received_at, claimed_at, handled_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (update_key, event_key, at, at, at),
        )
        if inserted == 1:
            new.append(update_key)
    return tuple(new)
