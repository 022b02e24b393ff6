# ruff: noqa: S608  -- only the constant column list is interpolated; values are bound.
"""PostgreSQL's set-based forms of the group commit's writes (``_kinds.Forms``).

The jobs of one kind in a batch run as a few multi-row statements (``unnest`` arrays) whose
results equal running the single-call operations of ``_ops`` one after another in the given
order (tested with Hypothesis against them); a job a form cannot settle that way comes back
as ``DEFER`` and runs alone. The caller (``_commit.run_batch``) holds the jobs' advisory
locks (``lock_message_ids``), taken in one sorted statement per phase.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .. import _identity, _ops
from .._kinds import (
    DEFER,
    DeliveryWrite,
    MessageArgs,
    StatusArgs,
    event_answers,
    first_events,
    first_of_each_key,
    first_recordings,
    place_inbox,
    recorded_new,
    updates_recorded,
)
from .._records import (
    Claimed,
    ClaimResult,
    ServiceRequestState,
    UpdatesRecorded,
    WebhookEventResult,
)
from .._session import ADVISORY_NAMESPACE, Row, Session
from .._status import apply_status_events, fold_statuses
from .._validate import IdentityArgs

__all__ = [
    "INBOX_CHANNEL",
    "INSTANCE_SETTING",
    "PostgresForms",
    "append_statuses",
    "claim_requests",
    "complete_requests",
    "lock_message_ids",
    "pause_templates",
    "record_deliveries",
    "record_delivery",
    "record_messages",
    "upsert_identities",
]

INBOX_CHANNEL: Final = "svc_inbox"
"""The channel a commit that adds inbox rows notifies: the other instances' runtimes wake."""

INSTANCE_SETTING: Final = "svc.instance"
"""The session setting naming the store (set at connect): a notification's payload, so a
store's own listener skips its own commits (its runtime is woken in process)."""


def lock_message_ids(s: Session, ids: Sequence[str]) -> None:
    """Take the per-message advisory locks of ``ids`` in the given (sorted) order."""
    s.run(
        "SELECT pg_advisory_xact_lock(?, hashtext(x)) FROM unnest(?::text[]) AS x",
        (ADVISORY_NAMESPACE, list(ids)),
    )


def record_delivery(s: Session, item: DeliveryWrite) -> UpdatesRecorded:
    """One delivery on its own: its advisory locks in sorted order, then ``record_deliveries``
    of it alone."""
    ids = item.lock_keys()
    if ids:
        lock_message_ids(s, ids)
    result = record_deliveries(s, [item])[0]
    assert isinstance(result, UpdatesRecorded)
    return result


def record_deliveries(s: Session, items: Sequence[DeliveryWrite]) -> list[object]:
    """Record each delivery, in order: the production form; the caller holds every lock.

    All the deliveries' messages go through one ``record_messages`` (a deferred
    one runs alone right here: a delivery never waits for a later batch), all
    their statuses through one ``append_statuses``, then their event keys, their
    update keys (a key repeated across the deliveries is new for its first delivery
    only), their identity sightings in delivery order (``upsert_identities``) and the
    inbox rows of the keys recorded new, each in its person's queue (``place_inbox``). With
    fresh row ids per message (as the HTTP layer makes them), the result equals
    running the deliveries one after another in order; a row id reused for another
    message id settles in the order ``record_messages`` gives (first the rows it
    inserts, then the deferred ones), a serial order all the same.
    """
    deliveries = items
    messages = [values for item in deliveries for values in item.messages]
    statuses = [event for item in deliveries for event in item.statuses]
    if messages:
        deferred = [
            values
            for values, result in zip(
                messages, record_messages(s, messages, records=False), strict=True
            )
            if result is DEFER
        ]
        if deferred:
            # A deferred message whose row id or (direction, id) is stored already is a
            # no-op for record_message (the common case: a redelivered duplicate), so
            # only the others run alone; one query tells them apart.
            # Two index conditions (a pair IN a subquery would scan the table); the
            # pairs are matched below.
            found = s.fetchall(
                "SELECT row_id, direction, wa_message_id FROM svc_messages"
                " WHERE row_id = ANY(?::text[]) OR wa_message_id = ANY(?::text[])",
                ([str(v[0]) for v in deferred], [str(v[1]) for v in deferred]),
            )
            stored_rows = {str(row[0]) for row in found}
            stored_pairs = {(str(row[1]), str(row[2])) for row in found}
            for values in deferred:
                pair = (str(values[2]), str(values[1]))
                if pair not in stored_pairs and str(values[0]) not in stored_rows:
                    _ops.record_message(s, values)
    if statuses:
        append_statuses(s, statuses)
    events = _record_events(s, deliveries)
    new = _record_update_keys(s, deliveries)
    inbox = place_inbox(s, deliveries, new, upsert_identities)
    if inbox:
        # In order (ids rise with it), each pending and due at once, in its person's queue
        # (``_person``, which took the queues' locks); a key already in the inbox keeps its row.
        s.run(
            "INSERT INTO svc_inbox (update_key, queue_key, phone_number_id, kind, sealed,"
            " next_attempt_at, created_at, updated_at)"
            " SELECT k, q, p, n, b, a, a, a FROM unnest(?::text[], ?::text[], ?::text[],"
            " ?::text[], ?::bytea[], ?::bigint[]) WITH ORDINALITY AS t(k, q, p, n, b, a, o)"
            " ORDER BY o ON CONFLICT (update_key) DO NOTHING",
            _columns(inbox),
        )
        # Delivered to listening instances when this transaction commits (``watch_inbox``).
        s.fetchone(
            "SELECT pg_notify(?, coalesce(current_setting(?, true), ''))",
            (INBOX_CHANNEL, INSTANCE_SETTING),
        )
    return updates_recorded(deliveries, events, new)


def _record_update_keys(s: Session, deliveries: Sequence[DeliveryWrite]) -> set[tuple[int, str]]:
    """Record the update keys of every delivery, in order, in one statement; answers
    ``(delivery index, key)`` of each key recorded for the first time (``recorded_new``).

    ``claimed_at`` and ``handled_at`` are set to the received time: no reader uses them.
    """
    first = first_recordings(deliveries)
    if not first:
        return set()
    keys, event_keys, ats, _ = _columns(list(first.values()))
    inserted = {
        str(row[0])
        for row in s.fetchall(
            "INSERT INTO svc_webhook_updates"
            " (update_key, event_key, received_at, claimed_at, handled_at)"
            " SELECT k, e, a, a, a FROM unnest(?::text[], ?::text[], ?::bigint[]) AS t(k, e, a)"
            " ON CONFLICT DO NOTHING RETURNING update_key",
            (keys, event_keys, ats),
        )
    }
    return recorded_new(first, inserted)


def _set_statuses(s: Session, changed: Sequence[tuple[object, str, int]]) -> None:
    """Write each ``(row id, status, updated_at ms)`` back to its message row, in one statement."""
    s.run(
        "UPDATE svc_messages AS m SET status = u.status, updated_at = u.at"
        " FROM unnest(?::text[], ?::text[], ?::bigint[]) AS u(r, status, at)"
        " WHERE m.row_id = u.r",
        _columns(changed),
    )


def _first_of_each(
    s: Session, sql: str, items: Sequence[Sequence[object]]
) -> tuple[dict[object, int], set[object]]:
    """Run ``sql`` over the first item of each key (its first value), unnested; each key's
    first index, and the keys the statement returned (its first column)."""
    first = first_of_each_key([item[0] for item in items])
    rows = [items[i] for i in first.values()]
    return first, {row[0] for row in s.fetchall(sql, _columns(rows))}


def _columns(rows: Sequence[Sequence[object]]) -> tuple[list[object], ...]:
    """``rows`` as one list per column: the arrays a set-based statement unnests."""
    return tuple(list(column) for column in zip(*rows, strict=True))


def _record_events(s: Session, deliveries: Sequence[DeliveryWrite]) -> list[WebhookEventResult]:
    """The event row of each delivery: only a key's first delivery can be new."""
    if not deliveries:
        return []
    keys, first, rows = first_events(deliveries)
    inserted = {
        row[0]
        for row in s.fetchall(
            "INSERT INTO svc_webhook_events (event_key, event_hash, received_at)"
            " SELECT * FROM unnest(?::text[], ?::text[], ?::bigint[])"
            " ON CONFLICT DO NOTHING RETURNING event_key",
            _columns(rows),
        )
    }
    return event_answers(keys, first, inserted)


def claim_requests(s: Session, items: Sequence[tuple[str, str, int]]) -> list[object]:
    """``claim_service_request`` for each item, as if run one after another in order."""
    first, inserted = _first_of_each(
        s,
        "INSERT INTO svc_service_requests"
        " (idempotency_key, request_hash, state, response_json, created_at, completed_at)"
        " SELECT k, h, 'pending', NULL, a, NULL"
        " FROM unnest(?::text[], ?::text[], ?::bigint[]) AS t(k, h, a)"
        " ON CONFLICT DO NOTHING RETURNING idempotency_key",
        items,
    )
    stored: dict[object, tuple[str, ServiceRequestState, str | None, int | None]] = {}
    existing = [key for key in first if key not in inserted]
    if existing:
        for key, digest, state, response, status in s.fetchall(
            "SELECT idempotency_key, request_hash, state, response_json, response_status"
            " FROM svc_service_requests WHERE idempotency_key = ANY(?::text[])",
            (existing,),
        ):
            stored[key] = (digest, ServiceRequestState(state), response, status)
    results: list[object] = []
    for i, (key, digest, _at) in enumerate(items):
        if key in inserted and first[key] == i:
            stored[key] = (str(digest), ServiceRequestState.PENDING, None, None)
            result: ClaimResult = Claimed()
        elif key in stored:
            digest_, state, response, status = stored[key]
            result = _ops.claim_outcome(digest_, state, response, str(digest), status)
        else:  # vanished between the insert and the read: settle it alone
            results.append(DEFER)
            continue
        results.append(result)
    return results


def record_messages(
    s: Session, items: Sequence[MessageArgs], *, records: bool = True
) -> list[object]:
    """``record_message`` for each item; the caller holds every item's advisory lock.

    Items that are new on both keys (row id, direction + platform id) are
    inserted together; every other item is a ``DEFER`` (it returns a stored
    row, which the single-call form finds once this insert is in place).
    Without ``records`` an inserted item answers True instead of its stored
    record (a delivery needs none), and the rows its earlier status events
    advance are written back in one statement.
    """
    rows: set[object] = set()
    pairs: set[tuple[object, object]] = set()
    chosen: list[int] = []
    for i, values in enumerate(items):
        pair = (values[2], values[1])
        if values[0] in rows or pair in pairs:
            continue
        rows.add(values[0])
        pairs.add(pair)
        chosen.append(i)
    columns = _columns([items[i] for i in chosen])
    returning = _ops._MESSAGE_COLUMNS if records else "row_id, wa_message_id, status, updated_at"
    width = len(returning.split(","))
    inserted: dict[object, Row] = {}
    events: dict[object, list[tuple[str, int]]] = {}  # by row id, in log order
    # One statement inserts the rows and reads the status events logged before them: the
    # join reads the statement's snapshot, which holds every such event (the caller holds
    # the advisory locks of these message ids, so none can be logged meanwhile).
    for joined in s.fetchall(
        f"WITH i AS (INSERT INTO svc_messages ({_ops._MESSAGE_COLUMNS})"
        " SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[],"
        " ?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::text[], ?::text[],"
        f" ?::text[]) ON CONFLICT DO NOTHING RETURNING {returning})"
        " SELECT i.*, e.status, e.occurred_at FROM i"
        " LEFT JOIN svc_message_status_events AS e ON e.wa_message_id = i.wa_message_id"
        " ORDER BY e.occurred_at, e.id",
        columns,
    ):
        inserted.setdefault(joined[0], joined[:width])
        if joined[width] is not None:
            events.setdefault(joined[0], []).append((joined[width], int(joined[width + 1])))
    results: list[object] = [DEFER] * len(items)
    changed: list[tuple[object, str, int]] = []
    for i in chosen:
        row = inserted.get(items[i][0])
        if row is None:
            continue
        if records:
            results[i] = _ops.reconcile_inserted(s, row, events.get(row[0], []))
            continue
        results[i] = True
        if row[0] in events:
            status, ms = fold_statuses(str(row[2]), int(row[3]), iter(events[row[0]]))
            if (status, ms) != (row[2], int(row[3])):
                changed.append((row[0], status, ms))
    if changed:
        _set_statuses(s, changed)
    return results


def complete_requests(
    s: Session, items: Sequence[tuple[str, str, str, int, int | None]]
) -> list[object]:
    """``complete_service_request`` for each item; a key's later items run alone (DEFER)."""
    first, stored = _first_of_each(
        s,
        "UPDATE svc_service_requests AS r SET state = 'completed',"
        " response_json = u.response, completed_at = u.at, response_status = u.status"
        " FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::integer[])"
        " AS u(k, h, response, at, status)"
        " WHERE r.idempotency_key = u.k AND r.request_hash = u.h AND r.state = 'pending'"
        " RETURNING r.idempotency_key",
        items,
    )
    return [(item[0] in stored) if first[item[0]] == i else DEFER for i, item in enumerate(items)]


def append_statuses(s: Session, items: Sequence[StatusArgs]) -> list[object]:
    """``append_message_status`` for each item, in order; the caller holds the advisory locks."""
    s.run(
        "INSERT INTO svc_message_status_events"
        " (wa_message_id, status, occurred_at, pricing_category)"
        " SELECT * FROM unnest(?::text[], ?::text[], ?::bigint[], ?::text[])"
        " ON CONFLICT DO NOTHING",
        _columns(items),
    )
    matched, changed = apply_status_events(
        s.fetchall(
            "SELECT row_id, wa_message_id, status, updated_at FROM svc_messages"
            " WHERE wa_message_id = ANY(?::text[])",
            (list({item[0] for item in items}),),
        ),
        items,
    )
    if changed:
        _set_statuses(s, changed)
    return list[object](matched)


def upsert_identities(
    s: Session, items: Sequence[IdentityArgs], probes: Sequence[_identity.Probe] = ()
) -> tuple[list[_identity.Absorbed], list[int | None]]:
    """``_identity.upsert_identities`` of the sightings, in order, in a few statements; the
    rows absorbed, in order, and the row each probe resolved to (``merge_sightings``).

    Every row a sighting can find (by its BSUID or its wa_id) is read at once,
    ``_identity.merge_sightings`` runs the merges over them, and the rows that
    changed are written back, the new ones inserted in order and the absorbed ones
    deleted; the caller holds the sightings' advisory locks.
    """
    if not items and not probes:
        return [], []
    stored: dict[int, IdentityArgs] = {}
    for row in s.fetchall(
        f"SELECT {_identity._COLUMNS} FROM svc_user_identities"
        " WHERE user_id = ANY(?::text[]) OR wa_id = ANY(?::text[])",
        _identity.lookup_ids(items, probes),
    ):
        stored[int(row[0])] = _identity._values(row)
    changed, added, absorbed, found = _identity.merge_sightings(stored, items, probes)
    if changed:
        s.run(
            "UPDATE svc_user_identities AS i SET user_id = u.user_id,"
            " parent_user_id = u.parent, wa_id = u.wa_id, username = u.username,"
            " last_seen_at = u.seen"
            " FROM unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[])"
            " AS u(id, user_id, parent, wa_id, username, seen) WHERE i.identity_id = u.id",
            _columns([(key, *values) for key, values in changed]),
        )
    ids: list[int] = []
    if added:
        # The identity column numbers the rows in insertion order (ORDER BY o).
        ids = sorted(
            int(row[0])
            for row in s.fetchall(
                "INSERT INTO svc_user_identities"
                " (user_id, parent_user_id, wa_id, username, last_seen_at)"
                " SELECT u, p, w, n, t FROM unnest(?::text[], ?::text[], ?::text[], ?::text[],"
                " ?::bigint[]) WITH ORDINALITY AS x(u, p, w, n, t, o) ORDER BY o"
                " RETURNING identity_id",
                _columns(added),
            )
        )
    return _identity.delete_absorbed(s, absorbed, ids), _identity.survivors(found, absorbed, ids)


def pause_templates(s: Session, items: Sequence[tuple[str, str | None, int]]) -> list[object]:
    """``pause_broadcasts_for_template`` for each ``(name, language, at)`` item, in order.

    An unfinished broadcast matched by several items is paused by the first (a later
    one finds it paused); the state is checked again on the locked row, as the
    single-call UPDATE does.
    """
    counts = [0] * len(items)
    for (ordinal,) in s.fetchall(
        "UPDATE svc_broadcasts AS b SET state = 'paused', updated_at = m.a FROM ("
        " SELECT DISTINCT ON (c.id) c.id, u.o, u.a FROM svc_broadcasts AS c"
        " JOIN unnest(?::text[], ?::text[], ?::bigint[]) WITH ORDINALITY AS u(n, l, a, o)"
        " ON c.template_name = u.n AND (u.l IS NULL OR c.template_language = u.l)"
        " WHERE c.state IN ('queued', 'running') ORDER BY c.id, u.o) AS m"
        " WHERE b.id = m.id AND b.state IN ('queued', 'running') RETURNING m.o",
        _columns(items),
    ):
        counts[int(ordinal) - 1] += 1
    return list[object](counts)


class PostgresForms:
    """These forms as the one object ``_kinds.Forms`` names (the batch connection's ``forms``)."""

    __slots__ = ()
    record_deliveries: Final = staticmethod(record_deliveries)
    record_delivery: Final = staticmethod(record_delivery)
    record_messages: Final = staticmethod(record_messages)
    append_statuses: Final = staticmethod(append_statuses)
    claim_requests: Final = staticmethod(claim_requests)
    complete_requests: Final = staticmethod(complete_requests)
    pause_templates: Final = staticmethod(pause_templates)
