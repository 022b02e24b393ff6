"""Message status ranking (sans-IO).

Rank order pending 0 < sent 1 < delivered 2 < read 3; unknown statuses rank 0.
``failed`` may replace pending or sent but never delivered or read. A status
only ever moves up; ``updated_at`` only moves forward.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = ["STATUS_RANKS", "apply_status", "apply_status_events", "fold_statuses", "status_rank"]

STATUS_RANKS: Final[dict[str, int]] = {"pending": 0, "sent": 1, "delivered": 2, "read": 3}
_FAILED: Final = "failed"


def status_rank(status: str) -> int:
    """The spec's rank of a status; unknown statuses (``failed`` included) rank 0."""
    return STATUS_RANKS.get(status, 0)


def _replaces(current: str, new: str) -> bool:
    if new == current:
        return False
    if new == _FAILED:
        return status_rank(current) < STATUS_RANKS["delivered"]
    if current == _FAILED:
        # A failure sits between sent and delivered: only proof of delivery supersedes it.
        return status_rank(new) >= STATUS_RANKS["delivered"]
    return status_rank(new) > status_rank(current)


def apply_status(
    current_status: str, current_updated_ms: int, event_status: str, event_ms: int
) -> tuple[str, int]:
    """The (status, updated_ms) after one status event.

    The status advances on rank alone, so an event in the same second (or even
    stamped a little earlier) than the send still advances it; ``updated_ms``
    moves only when the status changes and the event is newer.
    """
    if not _replaces(current_status, event_status):
        return current_status, current_updated_ms
    return event_status, max(current_updated_ms, event_ms)


def fold_statuses(
    status: str, updated_ms: int, events: Iterable[tuple[str, int]]
) -> tuple[str, int]:
    """Apply stored ``(status, event_ms)`` events in order (status-before-message reconcile)."""
    for event_status, event_ms in events:
        status, updated_ms = apply_status(status, updated_ms, event_status, event_ms)
    return status, updated_ms


def apply_status_events(
    rows: Iterable[tuple[object, object, object, object]],
    events: Iterable[tuple[object, ...]],
) -> tuple[list[bool], list[tuple[str, str, int]]]:
    """Status events applied in order to every stored row of their message id.

    ``rows`` are ``(row_id, wa_message_id, status, updated_ms)`` as read,
    ``events`` ``(wa_message_id, status, event_ms, ...)`` (the rest is not read).
    Returns whether each event matched a row, and the rows that changed as ``(row_id, status,
    updated_ms)``, in the order they were read: what ``append_message_status``
    does one event at a time, for a set-based form to write back at once.
    """
    current: dict[str, tuple[str, int]] = {}
    by_message: dict[str, list[str]] = {}
    for row_id, wa_message_id, status, updated_ms in rows:
        current[str(row_id)] = (str(status), int(str(updated_ms)))
        by_message.setdefault(str(wa_message_id), []).append(str(row_id))
    before = dict(current)
    matched: list[bool] = []
    for wa_message_id, status, event_ms, *_ in events:
        ids = by_message.get(str(wa_message_id), [])
        for row_id in ids:
            current[row_id] = apply_status(*current[row_id], str(status), int(str(event_ms)))
        matched.append(bool(ids))
    changed = [(row_id, *value) for row_id, value in current.items() if value != before[row_id]]
    return matched, changed
