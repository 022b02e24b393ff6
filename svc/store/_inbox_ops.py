# ruff: noqa: S608  -- only constant columns, the lock clause and placeholders are interpolated.
"""The inbox operations, written once over :class:`Session` for both backends.

Only the head of a queue is ever claimed: the lowest ``id`` among that queue's rows that are
not dead, whatever its state. So a running or retrying item holds back its queue's later
items, and a dead letter releases them. Each queue's head and the time it is claimable are
kept in ``svc_inbox_heads`` by triggers (migration 016), so a claim's cost does not grow
with any queue's depth. Times are epoch milliseconds; each function runs in
the one transaction its adapter opened (SQLite's ``BEGIN IMMEDIATE`` excludes every other
writer; PostgreSQL locks the heads it takes with ``FOR UPDATE SKIP LOCKED``).
"""

from __future__ import annotations

import enum
import uuid
from typing import Any, Final

from ._errors import PersistenceValidationError
from ._records import InboxItem, InboxStatistics, InboxStatus, UserStateRecord
from ._session import Row, Session, chunks, in_list
from ._time import from_ms

__all__ = [
    "ClaimedRow",
    "InboxJob",
    "InboxWrite",
    "claim_inbox_rows",
    "claimed_item",
    "delete_dead_inbox_items",
    "delete_expired_user_states",
    "drop_inbox_item",
    "extend_inbox_lease",
    "get_inbox_item",
    "get_user_state",
    "inbox_statistics",
    "list_inbox_items",
    "list_inbox_queue",
    "mark_inbox_item_dead",
    "mark_inbox_item_failed",
    "mark_inbox_item_succeeded",
    "mark_inbox_item_succeeded_and_claim",
    "mark_inbox_items_taken",
    "retry_inbox_item",
    "run_inbox_write",
    "write_user_state",
]

_COLUMNS: Final = (
    "id, update_key, queue_key, phone_number_id, kind, sealed, status, attempts,"
    " next_attempt_at, lease_id, lease_expires_at, last_error, created_at, updated_at"
)
_HEADS: Final = (
    "SELECT i.id, i.queue_key, u.sealed, u.expires_at, u.updated_at, u.sealed_for"
    " FROM svc_inbox_heads AS i"
    " LEFT JOIN svc_user_state AS u ON u.queue_key = i.queue_key AND u.expires_at > ?"
    " WHERE i.due_at <= ?"
)
_IN_TURN: Final = " ORDER BY i.due_at, i.id"
_DUE_HEADS: Final = _HEADS + _IN_TURN + " LIMIT ?"
"""The due heads in turn (the order they became due: ``_take_turn``), from
``svc_inbox_heads`` (one row per queue with a row not dead, kept by
the triggers of migration 016 in the transaction of every change to ``svc_inbox``): its
``due_at`` says when the head is pending and due, or running with a lapsed lease (its run
crashed), and no later row of its queue runs under a live lease (a dead letter retried
while a later item runs waits for it: one run per queue). Read in turn by the index on
``(due_at, id)`` (migration 017), so a claim never reads a queue's waiting rows. Each comes
with its queue's state unless expired (a run's state write commits with its completion,
before its queue's next head is claimable, so it is current; ``sealed_for`` names the key
it was sealed under when a fold moved it)."""
_TAKE: Final = (
    "UPDATE svc_inbox SET status = 'running', lease_id = ?, lease_expires_at = ?,"
    " attempts = attempts + 1, updated_at = ?, folded_from = NULL WHERE id = ?"
    " AND ((status = 'pending' AND next_attempt_at <= ?)"
    " OR (status = 'running' AND lease_expires_at <= ?))"
    f" RETURNING {_COLUMNS}"
)
"""Lease one head, if it is still due (a head row left due at once by a queue emptied while
a record was inserting into it names a row that is gone)."""
_TURN: Final = (
    "UPDATE svc_inbox SET next_attempt_at = ? WHERE id = (SELECT id FROM svc_inbox_heads"
    " WHERE queue_key = ?) AND status = 'pending' AND next_attempt_at < ?"
)


def _take_turn(s: Session, queue_key: str, now: int) -> None:
    """A queue whose run ended and does not go on at once goes behind the queues already
    due: its next head is due from ``now`` (``next_attempt_at`` is a not-before time), so
    claims, in due order, take turns between queues and a long backlog never goes first."""
    s.run(_TURN, (now, queue_key, now))


StateArgs = tuple[bytes, int] | None
"""A checked state write: the sealed state and its expiry (ms), or None to delete it."""
ClaimedRow = tuple[Row, tuple[str, bytes, int, int] | None]
"""A head a claim leased, as the hot writes answer it: its ``_COLUMNS`` and its queue's state
(the key it was sealed for, the sealed bytes, its expiry and update time in ms; None: none
or expired). Plain values, which a writer process's frame pickles and loads in C, where an
``InboxItem`` runs Python code on each side; ``claimed_item`` makes the record."""
_IDS_PER_STATEMENT: Final = 500


def claimed_item(claimed: ClaimedRow) -> InboxItem:
    """The record of a head a claim leased (``ClaimedRow``)."""
    row, state = claimed
    if state is None:
        return _item(row)
    sealed_for, sealed, expires_at, updated_at = state
    return _item(
        row,
        UserStateRecord(
            queue_key=sealed_for,
            sealed=sealed,
            expires_at=from_ms(expires_at),
            updated_at=from_ms(updated_at),
        ),
    )


def _item(row: Row, state: UserStateRecord | None = None) -> InboxItem:
    return InboxItem(
        id=int(row[0]),
        update_key=row[1],
        queue_key=row[2],
        phone_number_id=row[3],
        kind=row[4],
        sealed=bytes(row[5]),
        status=InboxStatus(row[6]),
        attempts=int(row[7]),
        next_attempt_at=from_ms(row[8]),
        lease_id=row[9],
        lease_expires_at=None if row[10] is None else from_ms(row[10]),
        last_error=row[11],
        created_at=from_ms(row[12]),
        updated_at=from_ms(row[13]),
        state=state,
    )


def claim_inbox_rows(s: Session, now: int, limit: int, lease_ms: int) -> list[ClaimedRow]:
    """Lease up to ``limit`` due heads, in turn (``_DUE_HEADS``): running, a fresh lease id,
    one more attempt, the lease until ``now + lease_ms``; each carries its queue's state
    unless expired at ``now`` (``ClaimedRow``s: ``claimed_item`` makes the records)."""
    # A drop whose run never settled (its process died): the lease lapsed, the row goes.
    s.run("DELETE FROM svc_inbox WHERE status = 'dropping' AND lease_expires_at <= ?", (now,))
    return _take(s, _DUE_HEADS, (now, now, limit), now, lease_ms)


def _take(
    s: Session, heads: str, params: tuple[object, ...], now: int, lease_ms: int
) -> list[ClaimedRow]:
    """Lease the heads the ``heads`` query (a form of ``_HEADS``) finds, in its order.
    PostgreSQL: a head another instance holds is skipped (its queue waits: no later row of
    it is a head); SQLite: BEGIN IMMEDIATE already excludes every other writer."""
    postgres = s.dialect == "postgres"
    lock = " FOR UPDATE OF i SKIP LOCKED" if postgres else ""
    claimed: list[ClaimedRow] = []
    for item_id, queue_key, sealed, expires_at, updated_at, sealed_for in s.fetchall(
        heads + lock, params
    ):
        row = s.fetchone(_TAKE, (uuid.uuid4().hex, now + lease_ms, now, item_id, now, now))
        if row is None:
            if postgres:  # the queue's head row was left to recompute
                s.fetchone("SELECT svc_inbox_heads_refresh(?, ?)", (queue_key, item_id))
            continue
        state = None
        if sealed is not None:
            state = (sealed_for or row[2], bytes(sealed), int(expires_at), int(updated_at))
        claimed.append((tuple(row), state))
    return claimed


def mark_inbox_item_succeeded_and_claim(
    s: Session,
    item_id: int,
    lease_id: str,
    consumed: tuple[int, ...],
    state: tuple[StateArgs, int] | None,
    now: int,
    lease_ms: int,
    others_first: bool,
) -> tuple[bool, ClaimedRow | None]:
    """Complete a run (``mark_inbox_item_succeeded``) and, in the same transaction, lease its
    queue's next head if it is due (carrying the state the completion wrote); with
    ``others_first``, the first due head of another queue in turn when there is one (its own
    queue then takes its turn), else its own. Whether the completion applied, and the head
    leased (``ClaimedRow``; None: none due; never after a stale lease). Other queues' heads
    are left to the claims: a burst of many users' runs does not crowd out the ingestion that
    records them."""
    queue_key = _succeed(s, item_id, lease_id, consumed, state)
    if queue_key is None:
        return False, None
    if others_first:
        others = _HEADS + " AND i.queue_key <> ?" + _IN_TURN + " LIMIT 1"
        other = _take(s, others, (now, now, queue_key), now, lease_ms)
        if other:
            _take_turn(s, queue_key, now)
            return True, other[0]
    own = _take(s, _HEADS + " AND i.queue_key = ?", (now, now, queue_key), now, lease_ms)
    return True, own[0] if own else None


def mark_inbox_item_succeeded(
    s: Session,
    item_id: int,
    lease_id: str,
    consumed: tuple[int, ...] = (),
    state: tuple[StateArgs, int] | None = None,
    now: int | None = None,
) -> bool:
    """Complete a run, all or nothing: delete the running head whose lease is ``lease_id``,
    the later rows of its queue the run ``consumed``, and write (or delete) its queue's
    state (``state``: the write and the time, ms). False, and nothing changed, when the lease
    is not current; a consumed id of another queue or not after the head raises (rolled
    back with the rest). The state is kept under the head's queue now, with the key the
    run sealed it under when a fold moved the head meanwhile (``sealed_for``). With ``now``
    the queue takes its turn (``_take_turn``)."""
    queue_key = _succeed(s, item_id, lease_id, consumed, state)
    if queue_key is None:
        return False
    if now is not None:
        _take_turn(s, queue_key, now)
    return True


def _succeed(
    s: Session,
    item_id: int,
    lease_id: str,
    consumed: tuple[int, ...],
    state: tuple[StateArgs, int] | None,
) -> str | None:
    """``mark_inbox_item_succeeded``: the queue the head was in, or None (a dropped item's
    row goes with the same statement, and nothing else happens: fenced)."""
    head = s.fetchone(
        "DELETE FROM svc_inbox WHERE id = ? AND lease_id = ?"
        " AND status IN ('running', 'dropping')"
        " RETURNING status, queue_key, phone_number_id, folded_from",
        (item_id, lease_id),
    )
    if head is None:
        return None
    status, queue_key, phone_number_id, sealed_for = head
    if status == "dropping":
        _release_taken(s, queue_key)
        return None
    for part in chunks(consumed, _IDS_PER_STATEMENT):
        s.run(
            f"DELETE FROM svc_inbox WHERE id IN {in_list(part)} AND queue_key = ? AND id > ?",
            (*part, queue_key, item_id),
        )
        # What is left of them belongs to another queue or comes before the head.
        if s.fetchone(f"SELECT 1 FROM svc_inbox WHERE id IN {in_list(part)} LIMIT 1", part):
            raise PersistenceValidationError(
                "invalid_options", "consumed must name later items of the head's queue."
            )
    _release_taken(s, queue_key)
    if state is not None:
        write, now = state
        if write is None:
            s.run("DELETE FROM svc_user_state WHERE queue_key = ?", (queue_key,))
        else:
            sealed, expires_at = write
            write_user_state(s, queue_key, phone_number_id, sealed, expires_at, now, sealed_for)
    return str(queue_key)


def write_user_state(
    s: Session,
    queue_key: str,
    phone_number_id: str | None,
    sealed: bytes,
    expires_at: int,
    updated_at: int,
    sealed_for: str | None,
) -> None:
    """Store a queue's sealed state, replacing the one it had (``sealed_for``: the key it was
    sealed under, when a fold moved the queue since)."""
    s.run(
        "INSERT INTO svc_user_state"
        " (queue_key, phone_number_id, sealed, expires_at, updated_at, sealed_for)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (queue_key) DO UPDATE SET"
        " phone_number_id = excluded.phone_number_id, sealed = excluded.sealed,"
        " expires_at = excluded.expires_at, updated_at = excluded.updated_at,"
        " sealed_for = excluded.sealed_for",
        (queue_key, phone_number_id, sealed, expires_at, updated_at, sealed_for),
    )


def extend_inbox_lease(s: Session, item_id: int, lease_id: str, until: int) -> bool:
    """Move a running item's lease (still ``lease_id``) to end at ``until``."""
    return (
        s.run(
            "UPDATE svc_inbox SET lease_expires_at = ?"
            " WHERE id = ? AND lease_id = ? AND status = 'running'",
            (until, item_id, lease_id),
        )
        == 1
    )


def list_inbox_queue(s: Session, queue_key: str, after_id: int, limit: int) -> list[InboxItem]:
    """Up to ``limit`` rows of one queue after ``after_id`` that are not dead, in id order:
    what waits behind a running head. A key a fold moved rows from (``_person``) while
    they wait or run names the queue they are in now."""
    rows = s.fetchall(
        f"SELECT {_COLUMNS} FROM svc_inbox WHERE queue_key = COALESCE((SELECT queue_key"
        " FROM svc_inbox WHERE folded_from = ? LIMIT 1), ?) AND id > ?"
        " AND status <> 'dead' ORDER BY id LIMIT ?",
        (queue_key, queue_key, after_id, limit),
    )
    return [_item(row) for row in rows]


def get_user_state(s: Session, queue_key: str, now: int) -> UserStateRecord | None:
    """A queue's state unless it is missing or expired at ``now`` (its ``queue_key`` is the
    key it was sealed under)."""
    row = s.fetchone(
        "SELECT COALESCE(sealed_for, queue_key), sealed, expires_at, updated_at"
        " FROM svc_user_state WHERE queue_key = ? AND expires_at > ?",
        (queue_key, now),
    )
    if row is None:
        return None
    return UserStateRecord(
        queue_key=row[0],
        sealed=bytes(row[1]),
        expires_at=from_ms(row[2]),
        updated_at=from_ms(row[3]),
    )


def delete_expired_user_states(s: Session, now: int, limit: int) -> int:
    """Delete up to ``limit`` states expired at ``now``; the count deleted."""
    lock = " FOR UPDATE SKIP LOCKED" if s.dialect == "postgres" else ""
    return s.run(
        "DELETE FROM svc_user_state WHERE queue_key IN (SELECT queue_key FROM svc_user_state"
        f" WHERE expires_at <= ? LIMIT ?{lock})",
        (now, limit),
    )


def _dropped(s: Session, item_id: int, lease_id: str) -> bool:
    """Settle a dropped item's run: the row goes and nothing else happens (fenced)."""
    row = s.fetchone(
        "DELETE FROM svc_inbox WHERE id = ? AND lease_id = ? AND status = 'dropping'"
        " RETURNING queue_key",
        (item_id, lease_id),
    )
    if row is None:
        return False
    _release_taken(s, row[0])
    return True


def _release_taken(s: Session, queue_key: str) -> None:
    """The items a settled run's waits took and its success did not delete run on their own."""
    s.run(
        "UPDATE svc_inbox SET status = 'pending' WHERE queue_key = ? AND status = 'consumed'",
        (queue_key,),
    )


def mark_inbox_items_taken(s: Session, item_id: int, lease_id: str, taken: tuple[int, ...]) -> int:
    """Show later items a running head's wait or burst took as ``consumed`` (listing only:
    they are deleted with its success); how many."""
    head = s.fetchone(
        "SELECT queue_key FROM svc_inbox WHERE id = ? AND lease_id = ? AND status = 'running'",
        (item_id, lease_id),
    )
    if head is None or not taken:
        return 0
    return s.run(
        f"UPDATE svc_inbox SET status = 'consumed' WHERE id IN {in_list(taken)}"
        " AND queue_key = ? AND id > ? AND status = 'pending'",
        (*taken, head[0], item_id),
    )


def mark_inbox_item_failed(
    s: Session, item_id: int, lease_id: str, now: int, retry_delay_ms: int, error: str | None
) -> bool:
    """A running item whose lease is ``lease_id`` back to pending, due after the delay."""
    if _dropped(s, item_id, lease_id):
        return False
    return _settled(
        s.fetchone(
            "UPDATE svc_inbox SET status = 'pending', lease_id = NULL, lease_expires_at = NULL,"
            " next_attempt_at = ?, updated_at = ?, last_error = COALESCE(?, last_error)"
            " WHERE id = ? AND lease_id = ? AND status = 'running' RETURNING queue_key",
            (now + retry_delay_ms, now, error, item_id, lease_id),
        ),
        s,
    )


def mark_inbox_item_dead(
    s: Session, item_id: int, lease_id: str, now: int, error: str | None
) -> bool:
    """A running item whose lease is ``lease_id`` made dead (never claimed again)."""
    if _dropped(s, item_id, lease_id):
        return False
    return _settled(
        s.fetchone(
            "UPDATE svc_inbox SET status = 'dead', lease_id = NULL, lease_expires_at = NULL,"
            " updated_at = ?, last_error = COALESCE(?, last_error)"
            " WHERE id = ? AND lease_id = ? AND status = 'running' RETURNING queue_key",
            (now, error, item_id, lease_id),
        ),
        s,
        now,
    )


def _settled(row: Row | None, s: Session, turn_at: int | None = None) -> bool:
    """Whether a settlement applied; its queue's taken items are pending again if so, and
    with ``turn_at`` the queue takes its turn then (``_take_turn``)."""
    if row is None:
        return False
    _release_taken(s, row[0])
    if turn_at is not None:
        _take_turn(s, row[0], turn_at)
    return True


def list_inbox_items(s: Session, status: str | None, limit: int) -> list[InboxItem]:
    """Up to ``limit`` items (of one status when given) in id order: the order they run in."""
    where = "" if status is None else " WHERE status = ?"
    params: tuple[object, ...] = () if status is None else (status,)
    rows = s.fetchall(
        f"SELECT {_COLUMNS} FROM svc_inbox{where} ORDER BY id LIMIT ?", (*params, limit)
    )
    return [_item(row) for row in rows]


def get_inbox_item(s: Session, item_id: int) -> InboxItem | None:
    """One item by id, or None."""
    row = s.fetchone(f"SELECT {_COLUMNS} FROM svc_inbox WHERE id = ?", (item_id,))
    return None if row is None else _item(row)


def retry_inbox_item(s: Session, item_id: int, now: int) -> InboxItem | None:
    """A dead item back to pending, due now, attempts reset; None if it is not dead."""
    row = s.fetchone(
        "UPDATE svc_inbox SET status = 'pending', attempts = 0, next_attempt_at = ?,"
        f" updated_at = ? WHERE id = ? AND status = 'dead' RETURNING {_COLUMNS}",
        (now, now, item_id),
    )
    return None if row is None else _item(row)


def drop_inbox_item(s: Session, item_id: int, now: int) -> InboxStatus | None:
    """Drop an item: deleted at once unless it runs under a live lease; a running one is
    marked ``dropping`` (its renewal and settlement are refused, its run stops and its
    settlement deletes it). What it was, or None when there is no such item."""
    row = s.fetchone(
        "UPDATE svc_inbox SET status = 'dropping' WHERE id = ?"
        " AND status IN ('running', 'dropping') AND lease_expires_at > ? RETURNING status",
        (item_id, now),
    )
    if row is not None:
        return InboxStatus.DROPPING
    gone = s.fetchone("DELETE FROM svc_inbox WHERE id = ? RETURNING status", (item_id,))
    return None if gone is None else InboxStatus(gone[0])


def inbox_statistics(s: Session) -> InboxStatistics:
    """The count of each state and the oldest unfinished item's record time."""
    counts = dict.fromkeys(InboxStatus, 0)
    oldest: int | None = None
    for status, count, first in s.fetchall(
        "SELECT status, COUNT(*), MIN(created_at) FROM svc_inbox GROUP BY status"
    ):
        state = InboxStatus(status)
        counts[state] = int(count)
        if state is not InboxStatus.DEAD and (oldest is None or int(first) < oldest):
            oldest = int(first)
    return InboxStatistics(
        pending=counts[InboxStatus.PENDING] + counts[InboxStatus.CONSUMED],
        running=counts[InboxStatus.RUNNING] + counts[InboxStatus.DROPPING],
        dead=counts[InboxStatus.DEAD],
        oldest_pending_at=None if oldest is None else from_ms(oldest),
    )


def delete_dead_inbox_items(s: Session, cutoff: int, limit: int) -> int:
    """Delete up to ``limit`` dead items last changed before ``cutoff``; the count deleted."""
    lock = " FOR UPDATE SKIP LOCKED" if s.dialect == "postgres" else ""
    return s.run(
        "DELETE FROM svc_inbox WHERE id IN (SELECT id FROM svc_inbox"
        f" WHERE status = 'dead' AND updated_at < ? LIMIT ?{lock})",
        (cutoff, limit),
    )


class InboxWrite(enum.Enum):
    """Which hot inbox write a group-commit job is (``_kinds.Kind.INBOX``): a claim or a
    completion, run by ``run_inbox_write``."""

    CLAIM = "claim"
    SUCCEEDED = "succeeded"
    SUCCEEDED_AND_CLAIM = "succeeded_and_claim"
    FAILED = "failed"
    DEAD = "dead"


InboxJob = tuple[InboxWrite, tuple[Any, ...]]
"""A hot inbox write as the group commit carries it (a plain record a writer process can
take): which write, and its checked arguments after the session."""


def run_inbox_write(s: Session, job: InboxJob) -> object:
    """One hot inbox write: a claim or a completion, with its arguments; a head it leased
    answers as a ``ClaimedRow`` (``InboxMethods`` makes the records)."""
    write, args = job
    match write:
        case InboxWrite.CLAIM:
            return claim_inbox_rows(s, *args)
        case InboxWrite.SUCCEEDED:
            return mark_inbox_item_succeeded(s, *args)
        case InboxWrite.SUCCEEDED_AND_CLAIM:
            return mark_inbox_item_succeeded_and_claim(s, *args)
        case InboxWrite.FAILED:
            return mark_inbox_item_failed(s, *args)
        case InboxWrite.DEAD:
            return mark_inbox_item_dead(s, *args)
