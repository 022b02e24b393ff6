"""Message status ranking (sans-IO).

Rank order pending 0 < sent 1 < delivered 2 < read 3; unknown statuses rank 0.
``failed`` may replace pending or sent but never delivered or read. A status
only ever moves up; ``updated_at`` only moves forward.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = ["STATUS_RANKS", "apply_status", "fold_statuses", "status_rank"]

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
