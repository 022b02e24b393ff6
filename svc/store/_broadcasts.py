# ruff: noqa: S608  -- only constant column lists are interpolated; values are bound.
"""Paced broadcasts in the store: records and the operations, written once over ``Session``.

A broadcast is one row of metadata plus one row per recipient, a small state
machine (``queued -> sending -> sent | failed``, ``skipped`` for a repeat) whose
``sending`` lease makes each send happen at most once: a lease that expires
(its sender crashed mid-send) ends ``failed`` with code ``interrupted``, never
``queued`` again. The recipient's payload is kept only until the row ends.
Pacing is one row per business number holding the next free send slot
(microseconds), advanced in the same transaction that claims recipients, so
every instance sharing the database draws from one token bucket.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Final, Literal

from ._session import Row, Session, chunks
from ._time import _EPOCH, from_ms

__all__ = [
    "BROADCAST_INTERRUPTED",
    "BroadcastCreateResult",
    "BroadcastRecipientInput",
    "BroadcastSend",
    "BroadcastState",
    "BroadcastStatus",
]

BROADCAST_INTERRUPTED: Final = "interrupted"
"""``failedByCode`` key of a recipient whose send was in flight when its sender died."""

_RECIPIENT_STATES: Final = ("queued", "sending", "sent", "failed", "skipped")
_COUNTED: Final = {"queued": "queued", "sending": "queued"}


class BroadcastState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"


@dataclass(frozen=True, slots=True, kw_only=True)
class BroadcastRecipientInput:
    """One recipient of a new broadcast: who (phone or BSUID) and the wire payload (JSON)."""

    recipient: str
    payload_json: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BroadcastCreateResult:
    """``created``, ``replay`` (same key and hash) or ``conflict`` (same key, other hash)."""

    broadcast_id: str
    outcome: Literal["created", "replay", "conflict"]


@dataclass(frozen=True, slots=True, kw_only=True)
class BroadcastStatus:
    """A broadcast's state and counts; ``queued`` includes sends in flight."""

    id: str
    state: BroadcastState
    phone_number_id: str
    template_name: str | None
    template_language: str | None
    total: int
    queued: int
    sent: int
    failed: int
    skipped: int
    failed_by_code: Mapping[str, int] = field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class BroadcastSend:
    """A claimed recipient: send ``payload_json`` at ``send_at``, complete it with ``lease_id``."""

    broadcast_id: str
    seq: int
    recipient: str
    payload_json: str
    lease_id: str
    attempts: int
    send_at: datetime


def from_us(value: int) -> datetime:
    """The UTC datetime of epoch microseconds."""
    return _EPOCH + timedelta(microseconds=value)


# --- creation and reads ------------------------------------------------------------


def create_broadcast(
    s: Session,
    broadcast_id: str,
    request_key: str,
    request_hash: str,
    phone_number_id: str,
    template: tuple[str | None, str | None],
    recipients: Sequence[tuple[str, str]],
    at: int,
) -> BroadcastCreateResult:
    inserted = s.run(
        "INSERT INTO svc_broadcasts (id, request_key, request_hash, phone_number_id,"
        " template_name, template_language, state, total, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?) ON CONFLICT DO NOTHING",
        (
            broadcast_id,
            request_key,
            request_hash,
            phone_number_id,
            template[0],
            template[1],
            len(recipients),
            at,
            at,
        ),
    )
    if inserted != 1:
        row = s.fetchone(
            "SELECT id, request_hash FROM svc_broadcasts WHERE request_key = ?", (request_key,)
        )
        if row is None:  # the id itself collided: a new uuid never does
            return BroadcastCreateResult(broadcast_id=broadcast_id, outcome="conflict")
        outcome: Literal["replay", "conflict"] = "replay" if row[1] == request_hash else "conflict"
        return BroadcastCreateResult(broadcast_id=str(row[0]), outcome=outcome)
    seen: set[str] = set()
    rows: list[tuple[object, ...]] = []
    for seq, (recipient, payload) in enumerate(recipients):
        repeat = recipient in seen
        seen.add(recipient)
        state = "skipped" if repeat else "queued"
        rows.append((broadcast_id, seq, recipient, state, None if repeat else payload, at, at))
    for chunk in chunks(rows, 200):
        s.run(
            "INSERT INTO svc_broadcast_recipients (broadcast_id, seq, recipient, state,"
            " payload_json, next_attempt_at, updated_at) VALUES "
            + ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * len(chunk)),
            [value for row in chunk for value in row],
        )
    return BroadcastCreateResult(broadcast_id=broadcast_id, outcome="created")


def get_broadcast(s: Session, broadcast_id: str) -> BroadcastStatus | None:
    row = s.fetchone(
        "SELECT id, state, phone_number_id, template_name, template_language, total,"
        " created_at, updated_at FROM svc_broadcasts WHERE id = ?",
        (broadcast_id,),
    )
    if row is None:
        return None
    counts = {"queued": 0, "sent": 0, "failed": 0, "skipped": 0}
    for state, count in s.fetchall(
        "SELECT state, COUNT(*) FROM svc_broadcast_recipients WHERE broadcast_id = ?"
        " GROUP BY state",
        (broadcast_id,),
    ):
        key = _COUNTED.get(str(state), str(state))
        counts[key] = counts.get(key, 0) + int(count)
    by_code = {
        str(code): int(count)
        for code, count in s.fetchall(
            "SELECT error_code, COUNT(*) FROM svc_broadcast_recipients"
            " WHERE broadcast_id = ? AND state = 'failed' GROUP BY error_code ORDER BY error_code",
            (broadcast_id,),
        )
    }
    return BroadcastStatus(
        id=str(row[0]),
        state=BroadcastState(row[1]),
        phone_number_id=str(row[2]),
        template_name=row[3],
        template_language=row[4],
        total=int(row[5]),
        failed_by_code=by_code,
        created_at=from_ms(row[6]),
        updated_at=from_ms(row[7]),
        **counts,
    )


def set_broadcast_paused(s: Session, broadcast_id: str, paused: bool, at: int) -> bool:
    """Pause a queued or running broadcast, or resume a paused one; True if it exists."""
    if paused:
        s.run(
            "UPDATE svc_broadcasts SET state = 'paused', updated_at = ?"
            " WHERE id = ? AND state IN ('queued', 'running')",
            (at, broadcast_id),
        )
    else:
        s.run(
            "UPDATE svc_broadcasts SET state = 'running', updated_at = ?"
            " WHERE id = ? AND state = 'paused'",
            (at, broadcast_id),
        )
        _finish_if_drained(s, broadcast_id, at)
    row = s.fetchone("SELECT 1 FROM svc_broadcasts WHERE id = ?", (broadcast_id,))
    return row is not None


def pause_broadcasts_for_template(s: Session, name: str, language: str | None, at: int) -> int:
    """Pause every unfinished broadcast of a template (any language when ``language`` is None)."""
    sql = (
        "UPDATE svc_broadcasts SET state = 'paused', updated_at = ?"
        " WHERE template_name = ? AND state IN ('queued', 'running')"
    )
    params: list[object] = [at, name]
    if language is not None:
        sql += " AND template_language = ?"
        params.append(language)
    return s.run(sql, params)


# --- the paced sender's claims -------------------------------------------------------


def _finish_if_drained(s: Session, broadcast_id: str, at: int) -> None:
    s.run(
        "UPDATE svc_broadcasts SET state = 'done', updated_at = ?"
        " WHERE id = ? AND state IN ('queued', 'running') AND NOT EXISTS ("
        "  SELECT 1 FROM svc_broadcast_recipients"
        "  WHERE broadcast_id = ? AND state IN ('queued', 'sending'))",
        (at, broadcast_id, broadcast_id),
    )


def _lock_broadcasts(s: Session, ids: Sequence[str]) -> None:
    """PostgreSQL: lock broadcast rows (sorted) before their recipient rows, in every writer
    that ends recipients, so the last two completions of a broadcast cannot both miss "done"."""
    if s.dialect == "postgres":
        for broadcast_id in sorted(set(ids)):
            s.fetchone("SELECT 1 FROM svc_broadcasts WHERE id = ? FOR UPDATE", (broadcast_id,))


def expire_broadcast_leases(s: Session, now: int) -> int:
    """Fail every ``sending`` row whose lease expired (its send may have happened), then
    mark done every unfinished broadcast with nothing left to send."""
    stale = s.fetchall(
        "SELECT broadcast_id, seq FROM svc_broadcast_recipients"
        " WHERE state = 'sending' AND lease_expires_at <= ?",
        (now,),
    )
    _lock_broadcasts(s, [str(row[0]) for row in stale])
    expired = 0
    for broadcast_id, seq in stale:
        expired += s.run(
            "UPDATE svc_broadcast_recipients SET state = 'failed', error_code = ?,"
            " payload_json = NULL, lease_id = NULL, updated_at = ?"
            " WHERE broadcast_id = ? AND seq = ? AND state = 'sending' AND lease_expires_at <= ?",
            (BROADCAST_INTERRUPTED, now, broadcast_id, seq, now),
        )
    s.run(
        "UPDATE svc_broadcasts SET state = 'done', updated_at = ?"
        " WHERE state IN ('queued', 'running') AND NOT EXISTS ("
        "  SELECT 1 FROM svc_broadcast_recipients r"
        "  WHERE r.broadcast_id = svc_broadcasts.id AND r.state IN ('queued', 'sending'))",
        (now,),
    )
    return expired


def claim_broadcast_sends(
    s: Session,
    phone_number_id: str,
    now_us: int,
    interval_us: int,
    horizon_us: int,
    limit: int,
    lease_ms: int,
) -> list[BroadcastSend]:
    """Reserve send slots from the number's pacing row and lease that many due recipients.

    Slots are ``interval_us`` apart from ``max(next_send_us, now)``; only slots
    starting before ``now + horizon`` are handed out, and only as many as there
    are due recipients, so an idle number never banks a burst.
    """
    now_ms = now_us // 1000
    start = max(_next_send_us(s, phone_number_id), now_us)
    room = (now_us + horizon_us - start) // interval_us
    wanted = min(limit, room)
    if wanted <= 0:
        return []
    skip = " FOR UPDATE OF r SKIP LOCKED" if s.dialect == "postgres" else ""
    due = s.fetchall(
        "SELECT r.broadcast_id, r.seq, r.recipient, r.payload_json, r.attempts"
        " FROM svc_broadcast_recipients r JOIN svc_broadcasts b ON b.id = r.broadcast_id"
        " WHERE r.state = 'queued' AND r.next_attempt_at <= ? AND b.phone_number_id = ?"
        "  AND b.state IN ('queued', 'running')"
        " ORDER BY r.next_attempt_at, b.created_at, r.broadcast_id, r.seq LIMIT ?" + skip,
        (now_ms, phone_number_id, wanted),
    )
    claimed = [
        _lease_send(s, row, now_ms=now_ms, lease_ms=lease_ms, send_us=start + index * interval_us)
        for index, row in enumerate(due)
    ]
    if claimed:
        s.run(
            "UPDATE svc_broadcast_pacing SET next_send_us = ? WHERE phone_number_id = ?",
            (start + len(claimed) * interval_us, phone_number_id),
        )
        for broadcast_id in sorted({c.broadcast_id for c in claimed}):
            s.run(
                "UPDATE svc_broadcasts SET state = 'running', updated_at = ?"
                " WHERE id = ? AND state = 'queued'",
                (now_ms, broadcast_id),
            )
    return claimed


def _next_send_us(s: Session, phone_number_id: str) -> int:
    """The number's next free send slot, its pacing row created at 0 if missing (and locked
    on PostgreSQL, so concurrent claims of one number take turns)."""
    s.run(
        "INSERT INTO svc_broadcast_pacing (phone_number_id, next_send_us) VALUES (?, 0)"
        " ON CONFLICT DO NOTHING",
        (phone_number_id,),
    )
    lock = " FOR UPDATE" if s.dialect == "postgres" else ""
    row = s.fetchone(
        "SELECT next_send_us FROM svc_broadcast_pacing WHERE phone_number_id = ?" + lock,
        (phone_number_id,),
    )
    assert row is not None
    return int(row[0])


def _lease_send(s: Session, row: Row, *, now_ms: int, lease_ms: int, send_us: int) -> BroadcastSend:
    """Lease one due recipient row (``sending``, one more attempt) for its slot at ``send_us``."""
    broadcast_id, seq, recipient, payload, attempts = row
    lease = uuid.uuid4().hex
    s.run(
        "UPDATE svc_broadcast_recipients SET state = 'sending', lease_id = ?,"
        " lease_expires_at = ?, attempts = attempts + 1, updated_at = ?"
        " WHERE broadcast_id = ? AND seq = ?",
        (lease, now_ms + lease_ms, now_ms, broadcast_id, seq),
    )
    return BroadcastSend(
        broadcast_id=str(broadcast_id),
        seq=int(seq),
        recipient=str(recipient),
        payload_json=str(payload),
        lease_id=lease,
        attempts=int(attempts) + 1,
        send_at=from_us(send_us),
    )


def complete_broadcast_send(
    s: Session,
    broadcast_id: str,
    seq: int,
    lease_id: str,
    outcome: Literal["sent", "failed"],
    error_code: str | None,
    wa_message_id: str | None,
    at: int,
) -> bool:
    """End a leased row as sent or failed (the payload is dropped); True if the lease held."""
    _lock_broadcasts(s, (broadcast_id,))
    done = s.run(
        "UPDATE svc_broadcast_recipients SET state = ?, error_code = ?, wa_message_id = ?,"
        " payload_json = NULL, lease_id = NULL, lease_expires_at = NULL, updated_at = ?"
        " WHERE broadcast_id = ? AND seq = ? AND state = 'sending' AND lease_id = ?",
        (outcome, error_code, wa_message_id, at, broadcast_id, seq, lease_id),
    )
    _finish_if_drained(s, broadcast_id, at)
    return done == 1


def retry_broadcast_send(
    s: Session, broadcast_id: str, seq: int, lease_id: str, next_attempt_at: int, at: int
) -> bool:
    """Put a leased row back in the queue (the platform refused it: nothing was sent)."""
    done = s.run(
        "UPDATE svc_broadcast_recipients SET state = 'queued', lease_id = NULL,"
        " lease_expires_at = NULL, next_attempt_at = ?, updated_at = ?"
        " WHERE broadcast_id = ? AND seq = ? AND state = 'sending' AND lease_id = ?",
        (next_attempt_at, at, broadcast_id, seq, lease_id),
    )
    return done == 1


def delay_broadcast_pacing(s: Session, phone_number_id: str, until_us: int) -> None:
    """Move a number's next free slot to at least ``until_us`` (a rate-limit backoff)."""
    s.run(
        "INSERT INTO svc_broadcast_pacing (phone_number_id, next_send_us) VALUES (?, ?)"
        " ON CONFLICT (phone_number_id) DO UPDATE SET next_send_us = CASE"
        "  WHEN svc_broadcast_pacing.next_send_us < excluded.next_send_us"
        "  THEN excluded.next_send_us ELSE svc_broadcast_pacing.next_send_us END",
        (phone_number_id, until_us),
    )
