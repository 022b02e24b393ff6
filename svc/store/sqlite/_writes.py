# ruff: noqa: S608  -- only constant column lists, conditions and placeholder runs are interpolated.
"""SQLite's set-based forms of the group commit's writes (``_kinds.Forms``).

A batch's webhook deliveries go in as a few multi-row statements: their event keys, update
keys, message rows and status events one statement run each (rows chunked under SQLite's
oldest default variable limit, 999), their identity sightings in one read and one write per
changed row. The tables and the answers equal running the deliveries call by call, one after
another, in the given order (tested with Hypothesis against the call-by-call reference form
in ``tests/store/_reference.py``): rows are inserted in order (a row that conflicts with an
earlier one, stored or in the same insert, is skipped, as ``record_message`` skips it),
inserted rows fold the status events logged before them, then the delivery's statuses apply
in order to every row of their message id. The other kinds run their single calls one after
another (SQLite's statements are calls into the library, not round trips).

Plain placeholders, no JSON functions, so any SQLite with ``RETURNING`` (3.35, which the
single-call form needs too) runs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar

from .. import _broadcasts, _identity, _ops, _person
from .._kinds import (
    DeliveryWrite,
    MessageArgs,
    StatusArgs,
    event_answers,
    first_events,
    first_recordings,
    place_inbox,
    recorded_new,
    updates_recorded,
)
from .._records import UpdatesRecorded, WebhookEventResult
from .._session import Row, Session, in_list
from .._status import apply_status_events

__all__ = [
    "SqliteForms",
    "append_statuses",
    "claim_requests",
    "complete_requests",
    "pause_templates",
    "record_deliveries",
    "record_delivery",
    "record_messages",
]

T = TypeVar("T")

_MAX_VARIABLES: Final = 999
_MAX_IN: Final = 512


def record_delivery(s: Session, item: DeliveryWrite) -> UpdatesRecorded:
    """One delivery on its own, in the caller's transaction (``record_deliveries`` of one)."""
    result = record_deliveries(s, [item])[0]
    assert isinstance(result, UpdatesRecorded)
    return result


def record_deliveries(s: Session, items: Sequence[DeliveryWrite]) -> list[object]:
    """Record each delivery, in order, as a few multi-row statements: the production form.

    The group commit hands it the deliveries queued together: their event keys, update
    keys, messages and statuses go in one statement run each, the identity sightings
    together, in delivery order, then the inbox rows, each in its person's queue
    (``place_inbox``); an update key repeated across them is
    new for its first delivery only (``recorded_new``, as on PostgreSQL).
    """
    events = _record_events(s, items)
    new = _record_update_keys(s, items)
    messages = [values for item in items for values in item.messages]
    if messages:
        _record_messages(s, messages)
    statuses = [event for item in items for event in item.statuses]
    if statuses:
        _append_statuses(s, statuses)
    _record_inbox(s, place_inbox(s, items, new, _identity.upsert_identities_together))
    return updates_recorded(items, events, new)


def _record_events(s: Session, deliveries: Sequence[DeliveryWrite]) -> list[WebhookEventResult]:
    """The event row of each delivery: only a key's first delivery can be new."""
    keys, first, rows = first_events(deliveries)
    inserted = _insert_rows(
        s,
        "INSERT INTO svc_webhook_events (event_key, event_hash, received_at)",
        rows,
        " ON CONFLICT DO NOTHING RETURNING event_key",
    )
    return event_answers(keys, first, {str(row[0]) for row in inserted})


def _record_update_keys(s: Session, deliveries: Sequence[DeliveryWrite]) -> set[tuple[int, str]]:
    """Record the update keys of every delivery, in order; answers ``(delivery index, key)``
    of each key recorded for the first time (``recorded_new``).

    The stored keys (usually the fewer) are read first, in the caller's transaction, so
    the new keys' insert returns no rows: each returned row is a step on which the writer
    thread takes the GIL again. ``claimed_at`` and ``handled_at`` are set to the received
    time: no reader uses them.
    """
    first = first_recordings(deliveries)
    known = _stored_keys(s, list(first))
    fresh = [row for key, row in first.items() if key not in known]
    _insert_rows(
        s,
        "INSERT INTO svc_webhook_updates (update_key, event_key, received_at, claimed_at,"
        " handled_at)",
        [(key, event_key, at, at, at) for key, event_key, at, _ in fresh],
    )
    return recorded_new(first, {row[0] for row in fresh})


def _record_inbox(s: Session, rows: Sequence[_person.InboxInsert]) -> None:
    """Insert the inbox rows in order (ids rise with it), each pending and due at once; a
    key already in the inbox keeps its row."""
    _insert_rows(
        s,
        "INSERT INTO svc_inbox (update_key, queue_key, phone_number_id, kind, sealed,"
        " next_attempt_at, created_at, updated_at)",
        [(*row, row[5], row[5]) for row in rows],
        " ON CONFLICT (update_key) DO NOTHING",
    )


def _stored_keys(s: Session, keys: Sequence[str]) -> set[str]:
    """Which of ``keys`` are stored already.

    Each ``IN`` list is padded to a power of two by repeating its last key (membership
    is unchanged), so one statement reads up to ``_MAX_IN`` keys with a handful of texts.
    """
    found: set[str] = set()
    for start in range(0, len(keys), _MAX_IN):
        part = list(keys[start : start + _MAX_IN])
        part += part[-1:] * ((1 << (len(part) - 1).bit_length()) - len(part))
        found.update(
            str(key)
            for (key,) in s.fetchall(
                f"SELECT update_key FROM svc_webhook_updates WHERE update_key IN {in_list(part)}",
                part,
            )
        )
    return found


def _insert_rows(
    s: Session, insert: str, rows: Sequence[Sequence[object]], tail: str = ""
) -> list[Row]:
    """``insert VALUES (?,...),(?,...)... tail`` over ``rows`` (each one row's values, all of
    one width), in the runs ``_chunks`` gives; the rows the statements return, in order."""
    if not rows:
        return []
    width = len(rows[0])
    marks = "(" + ",".join("?" * width) + ")"
    returned: list[Row] = []
    for chunk in _chunks(rows, width):
        returned += s.fetchall(
            f"{insert} VALUES {','.join([marks] * len(chunk))}{tail}",
            [value for row in chunk for value in row],
        )
    return returned


def _chunks(items: Sequence[T], width: int) -> list[Sequence[T]]:
    """``items`` in runs that keep a statement of ``width`` values a row under SQLite's
    variable limit, each run's length a power of two (largest first).

    A multi-row statement's text is one per row count, and preparing a long one costs
    more than running it: with a few lengths only, each text recurs across batches and
    sqlite3's statement cache prepares it once.
    """
    cap = 1 << ((_MAX_VARIABLES // width).bit_length() - 1)
    runs: list[Sequence[T]] = []
    start = 0
    while start < len(items):
        size = min(cap, 1 << ((len(items) - start).bit_length() - 1))
        runs.append(items[start : start + size])
        start += size
    return runs


def _record_messages(s: Session, messages: Sequence[MessageArgs]) -> None:
    """Insert the rows (a conflicting one is skipped), then fold into each inserted row
    the status events logged before it (``_ops.fold_inserted``).

    The events are read first: when none is logged for any of the rows' message ids (the
    usual case), there is nothing to fold and the insert returns no rows (each returned
    row is a step of its own, on which the writer thread takes the GIL again).
    """
    ids = sorted({str(values[1]) for values in messages})
    events: dict[str, list[tuple[str, int]]] = {}
    for part in _chunks(ids, 1):
        for wa_message_id, status, occurred_at in s.fetchall(
            "SELECT wa_message_id, status, occurred_at FROM svc_message_status_events"
            f" WHERE wa_message_id IN {in_list(part)} ORDER BY wa_message_id, occurred_at, id",
            part,
        ):
            events.setdefault(str(wa_message_id), []).append((str(status), int(occurred_at)))
    returning = " RETURNING row_id, wa_message_id, status, updated_at" if events else ""
    inserted = _insert_rows(
        s,
        f"INSERT INTO svc_messages ({_ops._MESSAGE_COLUMNS})",
        messages,
        " ON CONFLICT DO NOTHING" + returning,
    )
    for row_id, wa_message_id, status, updated_ms in inserted:
        logged = events.get(str(wa_message_id))
        if logged:
            _ops.fold_inserted(s, str(row_id), str(status), int(updated_ms), logged)


def _append_statuses(s: Session, statuses: Sequence[StatusArgs]) -> None:
    _insert_rows(
        s,
        "INSERT INTO svc_message_status_events"
        " (wa_message_id, status, occurred_at, pricing_category)",
        statuses,
        " ON CONFLICT DO NOTHING",
    )
    ids = sorted({event[0] for event in statuses})
    found: list[Row] = []
    for part in _chunks(ids, 1):
        found += s.fetchall(
            "SELECT row_id, wa_message_id, status, updated_at FROM svc_messages"
            f" WHERE wa_message_id IN {in_list(part)}",
            part,
        )
    _matched, changed = apply_status_events(found, statuses)
    for row_id, status, updated_ms in changed:
        s.run(
            "UPDATE svc_messages SET status = ?, updated_at = ? WHERE row_id = ?",
            (status, updated_ms, row_id),
        )


# --- the other kinds: their single calls one after another ----------------------------------


def record_messages(s: Session, items: Sequence[MessageArgs]) -> list[object]:
    """``record_message`` for each row, in order."""
    return [_ops.record_message(s, values) for values in items]


def append_statuses(s: Session, items: Sequence[StatusArgs]) -> list[object]:
    """``append_message_status`` for each event, in order."""
    return [_ops.append_message_status(s, *event) for event in items]


def claim_requests(s: Session, items: Sequence[tuple[str, str, int]]) -> list[object]:
    """``claim_service_request`` for each claim, in order."""
    return [_ops.claim_service_request(s, *item) for item in items]


def complete_requests(
    s: Session, items: Sequence[tuple[str, str, str, int, int | None]]
) -> list[object]:
    """``complete_service_request`` for each completion, in order."""
    return [_ops.complete_service_request(s, *item) for item in items]


def pause_templates(s: Session, items: Sequence[tuple[str, str | None, int]]) -> list[object]:
    """``pause_broadcasts_for_template`` for each template, in order."""
    return [_broadcasts.pause_broadcasts_for_template(s, *item) for item in items]


class SqliteForms:
    """These forms as the one object ``_kinds.Forms`` names (the batch connection's ``forms``)."""

    __slots__ = ()
    record_deliveries: Final = staticmethod(record_deliveries)
    record_delivery: Final = staticmethod(record_delivery)
    record_messages: Final = staticmethod(record_messages)
    append_statuses: Final = staticmethod(append_statuses)
    claim_requests: Final = staticmethod(claim_requests)
    complete_requests: Final = staticmethod(complete_requests)
    pause_templates: Final = staticmethod(pause_templates)
