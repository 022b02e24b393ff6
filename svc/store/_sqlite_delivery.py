# ruff: noqa: S608  -- only constant column lists and placeholder runs are interpolated.
"""SQLite's set-based form of one webhook delivery's projection.

``_ops.record_webhook_delivery`` runs three to four statements per message and
status; a delivery of 8-12 updates spent most of the SQLite writer thread's
time on statement overhead. Here the messages go in as multi-row inserts, the
statuses as multi-row inserts plus one read and the changed rows' updates.
The tables and the answer equal running the single-call operations one after
another in the given order (tested with Hypothesis against ``_ops``): rows are
inserted in order (a row that conflicts with an earlier one, stored or in the
same insert, is skipped, as ``record_message`` skips it), inserted rows fold
the status events logged before them, then the delivery's statuses apply in
order to every row of their message id.

Plain placeholders, no JSON functions, so any SQLite with ``RETURNING`` (3.35,
which the single-call form needs too) runs it; runs of rows are chunked under
SQLite's oldest default variable limit (999).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar, cast

from . import _identity, _ops
from ._batch_kinds import DEFER, DeliveryArgs, event_answers, first_of_each_key
from ._records import UpdatesRecorded, WebhookEventResult
from ._session import Row, Session, chunks, in_list
from ._status import apply_status_events
from ._validate import IdentityArgs

__all__ = ["record_webhook_deliveries", "record_webhook_delivery"]

T = TypeVar("T")

_MAX_VARIABLES: Final = 999
_MESSAGE_WIDTH: Final = 13
_STATUS_WIDTH: Final = 3
_UPDATE_WIDTH: Final = 4
_RECLAIM_WIDTH: Final = 3
_EVENT_WIDTH: Final = 3


def record_webhook_delivery(
    s: Session,
    key: str,
    digest: str,
    at: int,
    messages: tuple[tuple[object, ...], ...],
    statuses: tuple[tuple[str, str, int], ...],
    identities: tuple[IdentityArgs, ...] = (),
    update_keys: tuple[str, ...] = (),
    claim_cutoff: int = 0,
) -> UpdatesRecorded:
    """``_ops.record_webhook_delivery`` in a few statements, in the caller's transaction."""
    item = (key, digest, at, messages, statuses, identities, update_keys, claim_cutoff)
    result = record_webhook_deliveries(s, [item])[0]
    assert isinstance(result, UpdatesRecorded)
    return result


def record_webhook_deliveries(s: Session, items: Sequence[tuple[object, ...]]) -> list[object]:
    """``_ops.record_webhook_delivery`` for each item, in order, as a few multi-row statements.

    The group commit hands it the deliveries queued together: their event keys,
    update keys, messages and statuses go in one statement run each, the identity
    sightings together, in delivery order. From the first delivery sharing an
    update key with an earlier one, the rest are ``DEFER`` (the caller runs them
    next, the first of them alone at the head); the answers and tables equal running
    the deliveries one after another (tested with Hypothesis against ``_ops``).
    """
    deliveries = cast(list[DeliveryArgs], list(items))
    seen: set[str] = set()
    for index, item in enumerate(deliveries):
        if index and seen.intersection(item[6]):
            later, deliveries = len(deliveries) - index, deliveries[:index]
            break
        seen.update(item[6])
    else:
        later = 0
    events = _record_events(s, deliveries)
    run, busy = _record_update_keys(s, deliveries)
    messages = [values for item in deliveries for values in item[3]]
    if messages:
        _record_messages(s, messages)
    statuses = [event for item in deliveries for event in item[4]]
    if statuses:
        _append_statuses(s, statuses)
    _identity.upsert_identities_together(s, [seen for item in deliveries for seen in item[5]])
    results: list[object] = [
        UpdatesRecorded(
            event=event,
            to_run=tuple(k for k in dict.fromkeys(item[6]) if k in run),
            in_progress=tuple(k for k in dict.fromkeys(item[6]) if k in busy),
        )
        for event, item in zip(events, deliveries, strict=True)
    ]
    return results + [DEFER] * later


def _record_events(s: Session, deliveries: Sequence[DeliveryArgs]) -> list[WebhookEventResult]:
    """``_ops.record_webhook_event`` of each delivery: only a key's first item can be new."""
    first = first_of_each_key(deliveries)
    rows = [deliveries[i][:3] for i in first.values()]
    inserted: set[str] = set()
    for chunk in _chunks(rows, _EVENT_WIDTH):
        inserted.update(
            str(row[0])
            for row in s.fetchall(
                "INSERT INTO svc_webhook_events (event_key, event_hash, received_at) VALUES "
                + ",".join(["(?,?,?)"] * len(chunk))
                + " ON CONFLICT DO NOTHING RETURNING event_key",
                [value for row in chunk for value in row],
            )
        )
    return event_answers(deliveries, first, inserted)


def _record_update_keys(
    s: Session, deliveries: Sequence[DeliveryArgs]
) -> tuple[set[str], set[str]]:
    """``_ops.record_update_keys`` of every delivery (their keys are disjoint): insert the
    new keys, reclaim lapsed unfinished ones, read which of the rest are in progress."""
    rows = [
        (update_key, item[0], item[2], item[7])
        for item in deliveries
        for update_key in dict.fromkeys(item[6])
    ]
    run: set[str] = set()
    for chunk in _chunks(rows, _UPDATE_WIDTH):
        run.update(
            str(row[0])
            for row in s.fetchall(
                "INSERT INTO svc_webhook_updates"
                " (update_key, event_key, received_at, claimed_at, handled_at) VALUES "
                + ",".join(["(?,?,?,?,NULL)"] * len(chunk))
                + " ON CONFLICT DO NOTHING RETURNING update_key",
                [value for row in chunk for value in (row[0], row[1], row[2], row[2])],
            )
        )
    known = [(row[0], row[2], row[3]) for row in rows if row[0] not in run]
    busy: set[str] = set()
    for part_rows in _chunks(known, _RECLAIM_WIDTH):
        reclaimed = {
            str(row[0])
            for row in s.fetchall(
                "UPDATE svc_webhook_updates SET claimed_at = v.column2 FROM (VALUES "
                + ",".join(["(?,?,?)"] * len(part_rows))
                + ") AS v WHERE update_key = v.column1 AND handled_at IS NULL"
                " AND claimed_at <= v.column3 RETURNING update_key",
                [value for row in part_rows for value in row],
            )
        }
        run |= reclaimed
        rest = [str(row[0]) for row in part_rows if row[0] not in reclaimed]
        for part in _chunks(rest, 1):
            busy.update(
                str(row[0])
                for row in s.fetchall(
                    "SELECT update_key FROM svc_webhook_updates"
                    f" WHERE update_key IN {in_list(part)} AND handled_at IS NULL",
                    part,
                )
            )
    return run, busy


def _chunks(items: Sequence[T], width: int) -> list[Sequence[T]]:
    """``items`` in runs that keep a statement of ``width`` values a row under SQLite's
    variable limit."""
    return chunks(items, _MAX_VARIABLES // width)


def _record_messages(s: Session, messages: Sequence[tuple[object, ...]]) -> None:
    """Insert the rows (a conflicting one is skipped), then fold into each inserted row
    the status events logged before it (``_ops.fold_inserted``)."""
    inserted: list[Row] = []
    row_marks = "(" + ",".join("?" * _MESSAGE_WIDTH) + ")"
    for chunk in _chunks(messages, _MESSAGE_WIDTH):
        inserted += s.fetchall(
            f"INSERT INTO svc_messages ({_ops._MESSAGE_COLUMNS}) VALUES "
            + ",".join([row_marks] * len(chunk))
            + " ON CONFLICT DO NOTHING RETURNING row_id, wa_message_id, status, updated_at",
            [value for values in chunk for value in values],
        )
    if not inserted:
        return
    ids = sorted({str(row[1]) for row in inserted})
    events: dict[str, list[tuple[str, int]]] = {}
    for part in _chunks(ids, 1):
        for wa_message_id, status, occurred_at in s.fetchall(
            "SELECT wa_message_id, status, occurred_at FROM svc_message_status_events"
            f" WHERE wa_message_id IN {in_list(part)} ORDER BY wa_message_id, occurred_at, id",
            part,
        ):
            events.setdefault(str(wa_message_id), []).append((str(status), int(occurred_at)))
    for row_id, wa_message_id, status, updated_ms in inserted:
        logged = events.get(str(wa_message_id))
        if logged:
            _ops.fold_inserted(s, str(row_id), str(status), int(updated_ms), logged)


def _append_statuses(s: Session, statuses: Sequence[tuple[str, str, int]]) -> None:
    for chunk in _chunks(statuses, _STATUS_WIDTH):
        s.run(
            "INSERT INTO svc_message_status_events (wa_message_id, status, occurred_at) VALUES "
            + ",".join(["(?,?,?)"] * len(chunk))
            + " ON CONFLICT DO NOTHING",
            [value for event in chunk for value in event],
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
