# ruff: noqa: S608  -- only the constant column lists below are interpolated; values are bound.
"""The store operations, written once over :class:`Session` for both backends.

Each function runs inside one transaction the adapter opened (SQLite:
``BEGIN IMMEDIATE`` for writes; PostgreSQL: READ COMMITTED plus row locks).
Arguments are already validated and times are epoch milliseconds.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Final

from . import _identity, _person
from ._records import (
    OUTBOX_LEASE_MS,
    Claimed,
    ClaimResult,
    Conflict,
    MessagePage,
    MessageRecord,
    OutboxItem,
    OutboxStatus,
    Pending,
    Replay,
    ServiceRequestRecord,
    ServiceRequestState,
    UserIdentityRecord,
    WebhookEventResult,
)
from ._session import ADVISORY_NAMESPACE as _ADVISORY_NAMESPACE
from ._session import Row, Session, in_list
from ._status import apply_status, fold_statuses
from ._time import from_ms
from ._validate import IdentityArgs

_MESSAGE_COLUMNS: Final = (
    "row_id, wa_message_id, direction, from_phone, to_phone, type, status,"
    " graph_message_id, created_at, updated_at, user_id, parent_user_id, business_phone_number_id"
)
_OUTBOX_COLUMNS: Final = (
    "id, payload_hash, status, attempts, lease_id, lease_expires_at, next_attempt_at,"
    " created_at, updated_at, last_error"
)
_REQUEST_COLUMNS: Final = (
    "idempotency_key, request_hash, state, response_json, created_at, completed_at, response_status"
)


def message_record(row: Sequence[Any]) -> MessageRecord:
    """A message row in ``_MESSAGE_COLUMNS`` order (times as epoch ms) as a ``MessageRecord``."""
    return MessageRecord(
        row_id=row[0],
        wa_message_id=row[1],
        direction=row[2],
        from_phone=row[3],
        to_phone=row[4],
        type=row[5],
        status=row[6],
        graph_message_id=row[7],
        created_at=from_ms(row[8]),
        updated_at=from_ms(row[9]),
        user_id=row[10],
        parent_user_id=row[11],
        business_phone_number_id=row[12],
    )


def _outbox(row: Row) -> OutboxItem:
    return OutboxItem(
        id=row[0],
        payload_hash=row[1],
        status=OutboxStatus(row[2]),
        attempts=int(row[3]),
        lease_id=row[4],
        lease_expires_at=None if row[5] is None else from_ms(row[5]),
        next_attempt_at=from_ms(row[6]),
        created_at=from_ms(row[7]),
        updated_at=from_ms(row[8]),
        last_error=row[9],
    )


def _request(row: Row) -> ServiceRequestRecord:
    return ServiceRequestRecord(
        idempotency_key=row[0],
        request_hash=row[1],
        state=ServiceRequestState(row[2]),
        response_json=row[3],
        created_at=from_ms(row[4]),
        completed_at=None if row[5] is None else from_ms(row[5]),
        response_status=None if row[6] is None else int(row[6]),
    )


# --- webhook events


def record_webhook_event(s: Session, key: str, digest: str, at: int) -> WebhookEventResult:
    inserted = s.run(
        "INSERT INTO svc_webhook_events (event_key, event_hash, received_at) VALUES (?, ?, ?)"
        " ON CONFLICT DO NOTHING",
        (key, digest, at),
    )
    return WebhookEventResult.RECORDED if inserted == 1 else WebhookEventResult.DUPLICATE


# --- service requests


def get_service_request(s: Session, key: str) -> ServiceRequestRecord | None:
    row = s.fetchone(
        f"SELECT {_REQUEST_COLUMNS} FROM svc_service_requests WHERE idempotency_key = ?", (key,)
    )
    return None if row is None else _request(row)


def record_service_request(
    s: Session, key: str, digest: str, response: str, at: int
) -> ServiceRequestRecord:
    s.run(
        "INSERT INTO svc_service_requests"
        " (idempotency_key, request_hash, state, response_json, created_at, completed_at)"
        " VALUES (?, ?, 'completed', ?, ?, ?) ON CONFLICT DO NOTHING",
        (key, digest, response, at, at),
    )
    stored = get_service_request(s, key)
    assert stored is not None
    return stored


def claim_service_request(s: Session, key: str, digest: str, at: int) -> ClaimResult:
    inserted = s.run(
        "INSERT INTO svc_service_requests"
        " (idempotency_key, request_hash, state, response_json, created_at, completed_at)"
        " VALUES (?, ?, 'pending', NULL, ?, NULL) ON CONFLICT DO NOTHING",
        (key, digest, at),
    )
    if inserted == 1:
        return Claimed()
    stored = get_service_request(s, key)
    assert stored is not None
    return claim_outcome(
        stored.request_hash, stored.state, stored.response_json, digest, stored.response_status
    )


def claim_outcome(
    stored_hash: str,
    state: ServiceRequestState,
    response: str | None,
    digest: str,
    status: int | None = None,
) -> ClaimResult:
    """What a claim on an existing key gets: Conflict, Replay (with its status) or Pending."""
    if stored_hash != digest:
        return Conflict()
    if state is ServiceRequestState.COMPLETED and response is not None:
        return Replay(response_json=response, status=200 if status is None else status)
    return Pending()


def complete_service_request(
    s: Session, key: str, digest: str, response: str, at: int, status: int | None = None
) -> bool:
    return (
        s.run(
            "UPDATE svc_service_requests SET state = 'completed', response_json = ?,"
            " completed_at = ?, response_status = ? WHERE idempotency_key = ?"
            " AND request_hash = ? AND state = 'pending'",
            (response, at, status, key, digest),
        )
        == 1
    )


def release_service_request(s: Session, key: str, digest: str) -> bool:
    return (
        s.run(
            "DELETE FROM svc_service_requests WHERE idempotency_key = ?"
            " AND request_hash = ? AND state = 'pending'",
            (key, digest),
        )
        == 1
    )


# --- outbox


def _get_outbox(s: Session, item_id: str) -> OutboxItem | None:
    row = s.fetchone(f"SELECT {_OUTBOX_COLUMNS} FROM svc_outbox WHERE id = ?", (item_id,))
    return None if row is None else _outbox(row)


def enqueue_outbox_item(s: Session, item_id: str, digest: str, at: int) -> OutboxItem:
    s.run(
        "INSERT INTO svc_outbox (id, payload_hash, status, attempts, lease_id,"
        " lease_expires_at, next_attempt_at, created_at, updated_at)"
        " VALUES (?, ?, 'pending', 0, NULL, NULL, ?, ?, ?) ON CONFLICT DO NOTHING",
        (item_id, digest, at, at, at),
    )
    stored = _get_outbox(s, item_id)
    assert stored is not None
    return stored


def claim_outbox_items(s: Session, now: int, limit: int) -> list[OutboxItem]:
    if s.dialect == "postgres":
        # SKIP LOCKED: concurrent workers on other machines each get different items.
        due = s.fetchall(
            "SELECT id FROM svc_outbox"
            " WHERE (status = 'pending' AND next_attempt_at <= ?)"
            "  OR (status = 'processing' AND lease_expires_at <= ?)"
            " ORDER BY next_attempt_at, id LIMIT ? FOR UPDATE SKIP LOCKED",
            (now, now, limit),
        )
    else:
        # BEGIN IMMEDIATE already excludes every other writer of the file.
        due = s.fetchall(
            "SELECT id FROM ("
            " SELECT id, next_attempt_at AS due_at FROM svc_outbox"
            "  WHERE status = 'pending' AND next_attempt_at <= ?"
            " UNION ALL"
            " SELECT id, lease_expires_at AS due_at FROM svc_outbox"
            "  WHERE status = 'processing' AND lease_expires_at <= ?"
            ") AS due ORDER BY due_at, id LIMIT ?",
            (now, now, limit),
        )
    claimed: list[OutboxItem] = []
    for (item_id,) in due:
        row = s.fetchone(
            "UPDATE svc_outbox SET status = 'processing', lease_id = ?, lease_expires_at = ?,"
            " attempts = attempts + 1, updated_at = ? WHERE id = ?"
            f" RETURNING {_OUTBOX_COLUMNS}",
            (uuid.uuid4().hex, now + OUTBOX_LEASE_MS, now, item_id),
        )
        assert row is not None
        claimed.append(_outbox(row))
    return claimed


def mark_outbox_item_failed(
    s: Session,
    item_id: str,
    lease_id: str,
    now: int,
    retry_delay_ms: int,
    error: str | None = None,
) -> bool:
    return (
        s.run(
            "UPDATE svc_outbox SET status = 'pending', lease_id = NULL, lease_expires_at = NULL,"
            " next_attempt_at = ?, updated_at = ?, last_error = COALESCE(?, last_error)"
            " WHERE id = ? AND lease_id = ? AND status = 'processing'",
            (now + retry_delay_ms, now, error, item_id, lease_id),
        )
        == 1
    )


def mark_outbox_item_dead(
    s: Session, item_id: str, lease_id: str, now: int, error: str | None
) -> bool:
    return (
        s.run(
            "UPDATE svc_outbox SET status = 'dead', lease_id = NULL, lease_expires_at = NULL,"
            " updated_at = ?, last_error = COALESCE(?, last_error)"
            " WHERE id = ? AND lease_id = ? AND status = 'processing'",
            (now, error, item_id, lease_id),
        )
        == 1
    )


def list_outbox_items(s: Session, status: str | None, limit: int) -> list[OutboxItem]:
    where = "" if status is None else " WHERE status = ?"
    params: tuple[object, ...] = () if status is None else (status,)
    rows = s.fetchall(
        f"SELECT {_OUTBOX_COLUMNS} FROM svc_outbox{where} ORDER BY updated_at DESC, id LIMIT ?",
        (*params, limit),
    )
    return [_outbox(row) for row in rows]


def retry_outbox_item(s: Session, item_id: str, now: int) -> OutboxItem | None:
    """A dead item back to pending, due now, with a fresh attempt budget; None otherwise."""
    row = s.fetchone(
        "UPDATE svc_outbox SET status = 'pending', attempts = 0, next_attempt_at = ?,"
        f" updated_at = ? WHERE id = ? AND status = 'dead' RETURNING {_OUTBOX_COLUMNS}",
        (now, now, item_id),
    )
    return None if row is None else _outbox(row)


def mark_outbox_item_succeeded(s: Session, item_id: str, lease_id: str, now: int) -> bool:
    return (
        s.run(
            "UPDATE svc_outbox SET status = 'succeeded', lease_expires_at = NULL, updated_at = ?"
            " WHERE id = ? AND lease_id = ? AND status = 'processing'",
            (now, item_id, lease_id),
        )
        == 1
    )


def count_outbox_pending(s: Session) -> int:
    return count_outbox_items(s, "pending")


def count_outbox_items(s: Session, status: str) -> int:
    row = s.fetchone("SELECT COUNT(*) FROM svc_outbox WHERE status = ?", (status,))
    return 0 if row is None else int(row[0])


# --- message projection


def _lock_message_id(s: Session, wa_message_id: str) -> None:
    if s.dialect == "postgres":
        # Serialises record_message and append_message_status on one id, so an event
        # and its message arriving together cannot miss each other.
        s.fetchone(
            "SELECT pg_advisory_xact_lock(?, hashtext(?))", (_ADVISORY_NAMESPACE, wa_message_id)
        )


def record_message(s: Session, values: tuple[object, ...]) -> MessageRecord:
    row_id, wa_message_id = str(values[0]), str(values[1])
    _lock_message_id(s, wa_message_id)
    row = s.fetchone(
        f"INSERT INTO svc_messages ({_MESSAGE_COLUMNS})"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        f" ON CONFLICT DO NOTHING RETURNING {_MESSAGE_COLUMNS}",
        values,
    )
    if row is None:
        existing = s.fetchone(
            f"SELECT {_MESSAGE_COLUMNS} FROM svc_messages WHERE row_id = ?", (row_id,)
        ) or s.fetchone(
            f"SELECT {_MESSAGE_COLUMNS} FROM svc_messages"
            " WHERE direction = ? AND wa_message_id = ?",
            (values[2], wa_message_id),
        )
        assert existing is not None
        return message_record(existing)
    events = s.fetchall(
        "SELECT status, occurred_at FROM svc_message_status_events"
        " WHERE wa_message_id = ? ORDER BY occurred_at, id",
        (wa_message_id,),
    )
    return reconcile_inserted(s, row, [(e[0], int(e[1])) for e in events])


def reconcile_inserted(s: Session, row: Row, events: list[tuple[str, int]]) -> MessageRecord:
    """Fold the status events logged before a just-inserted message row into it."""
    stored = message_record(row)
    if not events:
        return stored
    status, new_ms = fold_inserted(s, str(row[0]), stored.status, int(row[9]), events)
    if (status, new_ms) == (stored.status, int(row[9])):
        return stored
    return message_record((*row[:6], status, row[7], row[8], new_ms, *row[10:]))


def fold_inserted(
    s: Session, row_id: str, status: str, updated_ms: int, events: list[tuple[str, int]]
) -> tuple[str, int]:
    """The status and time of a just-inserted row once the events logged before it are
    folded in (stored when they change it)."""
    folded, new_ms = fold_statuses(status, updated_ms, iter(events))
    if (folded, new_ms) != (status, updated_ms):
        s.run(
            "UPDATE svc_messages SET status = ?, updated_at = ? WHERE row_id = ?",
            (folded, new_ms, row_id),
        )
    return folded, new_ms


def append_message_status(
    s: Session, wa_message_id: str, status: str, at: int, pricing_category: str | None = None
) -> bool:
    _lock_message_id(s, wa_message_id)
    s.run(
        "INSERT INTO svc_message_status_events"
        " (wa_message_id, status, occurred_at, pricing_category)"
        " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (wa_message_id, status, at, pricing_category),
    )
    rows = s.fetchall(
        "SELECT row_id, status, updated_at FROM svc_messages WHERE wa_message_id = ?",
        (wa_message_id,),
    )
    for row_id, current, updated_ms in rows:
        new_status, new_ms = apply_status(current, int(updated_ms), status, at)
        if (new_status, new_ms) != (current, int(updated_ms)):
            s.run(
                "UPDATE svc_messages SET status = ?, updated_at = ? WHERE row_id = ?",
                (new_status, new_ms, row_id),
            )
    return bool(rows)


def get_message(s: Session, wa_message_id: str, direction: str | None) -> MessageRecord | None:
    if direction is None:
        row = s.fetchone(
            f"SELECT {_MESSAGE_COLUMNS} FROM svc_messages WHERE wa_message_id = ?"
            " ORDER BY created_at DESC, row_id DESC LIMIT 1",
            (wa_message_id,),
        )
    else:
        row = s.fetchone(
            f"SELECT {_MESSAGE_COLUMNS} FROM svc_messages"
            " WHERE direction = ? AND wa_message_id = ?",
            (direction, wa_message_id),
        )
    return None if row is None else message_record(row)


NumberScope = tuple[str, bool]
"""A business phone number id, and whether rows without one (older rows) count as its."""


def _number_clause(number: NumberScope | None) -> tuple[str, tuple[object, ...]]:
    if number is None:
        return "", ()
    phone_number_id, unassigned = number
    if unassigned:
        clause = "(business_phone_number_id = ? OR business_phone_number_id IS NULL)"
        return clause, (phone_number_id,)
    return "business_phone_number_id = ?", (phone_number_id,)


def list_messages(
    s: Session,
    limit: int,
    before_row_id: str | None,
    user: str | None = None,
    number: NumberScope | None = None,
) -> MessagePage:
    """A page newest first; ``user`` keeps the rows of every identifier linked to it,
    ``number`` the rows of one business phone number."""
    where: list[str] = []
    params: list[object] = []
    number_clause, number_params = _number_clause(number)
    if number_clause:
        where.append(number_clause)
        params += number_params
    if user is not None:
        ids = _identity.user_identifiers(s, user)
        marks = in_list(ids)
        where.append(
            f"((direction = 'inbound' AND from_phone IN {marks})"
            f" OR (direction = 'outbound' AND to_phone IN {marks})"
            f" OR user_id IN {marks} OR parent_user_id IN {marks})"
        )
        params += [*ids, *ids, *ids, *ids]
    if before_row_id is not None:
        cursor = s.fetchone(
            "SELECT created_at, row_id FROM svc_messages WHERE row_id = ?", (before_row_id,)
        )
        if cursor is None:
            return MessagePage(items=(), next_cursor=None, cursor_found=False)
        where.append("(created_at, row_id) < (?, ?)")
        params += [cursor[0], cursor[1]]
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    rows = s.fetchall(
        f"SELECT {_MESSAGE_COLUMNS} FROM svc_messages{clause}"
        " ORDER BY created_at DESC, row_id DESC LIMIT ?",
        (*params, limit + 1),
    )
    items = tuple(message_record(r) for r in rows[:limit])
    more = len(rows) > limit
    return MessagePage(items=items, next_cursor=items[-1].row_id if more else None)


def get_latest_inbound_message_at(
    s: Session, user: str, number: NumberScope | None = None
) -> int | None:
    """The newest inbound created_at over the rows of every identifier linked to ``user``.

    One indexed ``MAX`` per identity column (004's and 007's window indexes);
    ``number`` keeps the rows of one business phone number (the window is per number).
    """
    ids = _identity.user_identifiers(s, user)
    marks = in_list(ids)
    number_clause, number_params = _number_clause(number)
    extra = f" AND {number_clause}" if number_clause else ""
    row = s.fetchone(
        "SELECT MAX(latest) FROM ("
        " SELECT MAX(created_at) AS latest FROM svc_messages"
        f"  WHERE direction = 'inbound' AND from_phone IN {marks}{extra}"
        " UNION ALL SELECT MAX(created_at) FROM svc_messages"
        f"  WHERE direction = 'inbound' AND user_id IN {marks}{extra}"
        " UNION ALL SELECT MAX(created_at) FROM svc_messages"
        f"  WHERE direction = 'inbound' AND parent_user_id IN {marks}{extra}"
        ") AS window_rows",
        (*ids, *number_params, *ids, *number_params, *ids, *number_params),
    )
    return None if row is None or row[0] is None else int(row[0])


# --- user identities


def _lock_identities(s: Session, keys: Sequence[str]) -> None:
    for key in keys:  # sorted by the caller: one global order
        _lock_message_id(s, key)


def record_user_identities(s: Session, items: Sequence[IdentityArgs]) -> None:
    _lock_identities(s, _identity.lock_keys(items))
    _person.fold_people(s, _identity.upsert_identities(s, items))


def record_identity_change(
    s: Session, user: str, new_user_id: str | None, new_wa_id: str | None, at: int
) -> UserIdentityRecord:
    found = _identity.find_identity(s, user)
    sightings: list[IdentityArgs] = [(new_user_id, None, new_wa_id, None, at)]
    if found is not None:
        sightings.append((found.user_id, None, found.wa_id, None, at))
    keys = {*_identity.lock_keys(sightings), *_identity.lock_keys([(user, None, user, None, at)])}
    _lock_identities(s, sorted(keys))
    record, absorbed = _identity.apply_identity_change(s, user, new_user_id, new_wa_id, at)
    if absorbed is not None:
        _person.fold_people(s, [absorbed])
    return record


def find_user_identity(s: Session, user: str) -> UserIdentityRecord | None:
    return _identity.find_identity(s, user)


# --- retention

PRUNE_TARGETS: Final[dict[str, tuple[str, str, str]]] = {
    "webhook_events": ("svc_webhook_events", "event_key", "received_at < ?"),
    "webhook_updates": ("svc_webhook_updates", "update_key", "received_at < ?"),
    "service_requests": (
        "svc_service_requests",
        "idempotency_key",
        "state = 'completed' AND completed_at < ?",
    ),
    "outbox_items": ("svc_outbox", "id", "status = 'succeeded' AND updated_at < ?"),
    "messages": ("svc_messages", "row_id", "created_at < ?"),
    "status_events": ("svc_message_status_events", "id", "occurred_at < ?"),
}
"""What retention deletes: table, key column and the condition on the cutoff (ms)."""


def prune_batch(s: Session, target: str, cutoff: int, limit: int) -> int:
    """Delete up to ``limit`` rows of ``target`` older than ``cutoff``; the count deleted.

    PostgreSQL skips rows another transaction holds, so a prune never waits on a writer.
    """
    table, key, where = PRUNE_TARGETS[target]
    lock = " FOR UPDATE SKIP LOCKED" if s.dialect == "postgres" else ""
    return s.run(
        f"DELETE FROM {table} WHERE {key} IN"
        f" (SELECT {key} FROM {table} WHERE {where} LIMIT ?{lock})",
        (cutoff, limit),
    )
