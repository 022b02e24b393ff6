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
from typing import Final

from . import _identity, _ops
from ._records import UpdatesRecorded
from ._session import Row, Session
from ._status import apply_status_events
from ._validate import IdentityArgs

__all__ = ["record_webhook_delivery"]

_MAX_VARIABLES: Final = 999
_MESSAGE_WIDTH: Final = 13
_STATUS_WIDTH: Final = 3
_UPDATE_WIDTH: Final = 4


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
    """``_ops.record_webhook_delivery`` in a few statements, in the caller's transaction.

    The identity sightings (usually one per delivery) merge one by one, as there.
    """
    result = _ops.record_webhook_event(s, key, digest, at)
    to_run, busy = (
        _record_update_keys(s, key, at, update_keys, claim_cutoff) if update_keys else ((), ())
    )
    if messages:
        _record_messages(s, messages)
    if statuses:
        _append_statuses(s, statuses)
    _identity.upsert_identities(s, identities)
    return UpdatesRecorded(event=result, to_run=to_run, in_progress=busy)


def _record_update_keys(
    s: Session, event_key: str, at: int, keys: tuple[str, ...], cutoff: int
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``_ops.record_update_keys`` as multi-row statements: insert, reclaim, read."""
    unique = list(dict.fromkeys(keys))
    run: set[str] = set()
    rows = [(update_key, event_key, at, at) for update_key in unique]
    for chunk in _chunks(rows, _UPDATE_WIDTH):
        run.update(
            str(row[0])
            for row in s.fetchall(
                "INSERT INTO svc_webhook_updates"
                " (update_key, event_key, received_at, claimed_at, handled_at) VALUES "
                + ",".join(["(?,?,?,?,NULL)"] * len(chunk))
                + " ON CONFLICT DO NOTHING RETURNING update_key",
                [value for row in chunk for value in row],
            )
        )
    known = [k for k in unique if k not in run]
    busy: set[str] = set()
    for start in range(0, len(known), _MAX_VARIABLES - 2):
        part = known[start : start + _MAX_VARIABLES - 2]
        reclaimed = {
            str(row[0])
            for row in s.fetchall(
                "UPDATE svc_webhook_updates SET claimed_at = ?"
                f" WHERE update_key IN {_in_list(part)} AND handled_at IS NULL"
                " AND claimed_at <= ? RETURNING update_key",
                [at, *part, cutoff],
            )
        }
        run |= reclaimed
        rest = [k for k in part if k not in reclaimed]
        if rest:
            busy.update(
                str(row[0])
                for row in s.fetchall(
                    "SELECT update_key FROM svc_webhook_updates"
                    f" WHERE update_key IN {_in_list(rest)} AND handled_at IS NULL",
                    rest,
                )
            )
    return tuple(k for k in unique if k in run), tuple(k for k in unique if k in busy)


def _chunks(items: Sequence[tuple[object, ...]], width: int) -> list[Sequence[tuple[object, ...]]]:
    size = _MAX_VARIABLES // width
    return [items[i : i + size] for i in range(0, len(items), size)]


def _in_list(values: Sequence[object]) -> str:
    return "(" + ",".join("?" * len(values)) + ")"


def _record_messages(s: Session, messages: Sequence[tuple[object, ...]]) -> None:
    inserted: list[Row] = []
    row_marks = "(" + ",".join("?" * _MESSAGE_WIDTH) + ")"
    for chunk in _chunks(messages, _MESSAGE_WIDTH):
        inserted += s.fetchall(
            f"INSERT INTO svc_messages ({_ops._MESSAGE_COLUMNS}) VALUES "
            + ",".join([row_marks] * len(chunk))
            + f" ON CONFLICT DO NOTHING RETURNING {_ops._MESSAGE_COLUMNS}",
            [value for values in chunk for value in values],
        )
    if not inserted:
        return
    ids = sorted({str(row[1]) for row in inserted})
    events: dict[str, list[tuple[str, int]]] = {}
    for start in range(0, len(ids), _MAX_VARIABLES):
        part = ids[start : start + _MAX_VARIABLES]
        for wa_message_id, status, occurred_at in s.fetchall(
            "SELECT wa_message_id, status, occurred_at FROM svc_message_status_events"
            f" WHERE wa_message_id IN {_in_list(part)} ORDER BY wa_message_id, occurred_at, id",
            part,
        ):
            events.setdefault(str(wa_message_id), []).append((str(status), int(occurred_at)))
    for row in inserted:
        logged = events.get(str(row[1]))
        if logged:
            _ops.reconcile_inserted(s, row, logged)


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
    for start in range(0, len(ids), _MAX_VARIABLES):
        part = ids[start : start + _MAX_VARIABLES]
        found += s.fetchall(
            "SELECT row_id, wa_message_id, status, updated_at FROM svc_messages"
            f" WHERE wa_message_id IN {_in_list(part)}",
            part,
        )
    _matched, changed = apply_status_events(found, statuses)
    for row_id, status, updated_ms in changed:
        s.run(
            "UPDATE svc_messages SET status = ?, updated_at = ? WHERE row_id = ?",
            (status, updated_ms, row_id),
        )
