"""The message projection's mapping: webhook updates and send answers to store records.

Pure functions (the clock is passed in): they decide which rows and status
events a delivery or a send projects, never how or when they are written.
Only metadata is projected, never message text.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from svc.store import MessageRecord, StatusEvent
from svc.webhook import MessageUpdate, StatusUpdate, Update

__all__ = ["delivery_projection", "inbound_record", "send_projection"]

MAX_PHONE_FIELD: Final = 64
MAX_STATUS: Final = 64
MAX_TYPE: Final = 64
_LATEST_EVENT_SECONDS: Final = 32_503_680_000
"""Timestamps at or past the year 3000 are absurd: the receipt time is used instead."""


def delivery_projection(
    updates: tuple[Update, ...], now: Callable[[], datetime]
) -> tuple[list[MessageRecord], list[StatusEvent]]:
    """The rows of a delivery's message updates and the events of its status updates.

    A status longer than the store's column is not projected.
    """
    messages = [inbound_record(u, now) for u in updates if isinstance(u, MessageUpdate)]
    statuses = [
        StatusEvent(
            wa_message_id=u.message_id,
            status=u.status,
            timestamp=_event_moment(u.timestamp, now),
        )
        for u in updates
        if isinstance(u, StatusUpdate) and len(u.status) <= MAX_STATUS
    ]
    return messages, statuses


def inbound_record(update: MessageUpdate, now: Callable[[], datetime]) -> MessageRecord:
    """The projected row of a message update; a Business-app echo is outbound."""
    moment = _event_moment(update.timestamp, now)
    echo = update.is_echo
    sender = _phone_field(update.from_)
    recipient = _phone_field(update.to if echo else update.display_phone_number)
    return MessageRecord(
        row_id=str(uuid.uuid4()),
        wa_message_id=update.message_id,
        direction="outbound" if echo else "inbound",
        from_phone=None if echo else sender,
        to_phone=recipient,
        type=(update.type or "unknown")[:MAX_TYPE],
        status="sent" if echo else "received",
        created_at=moment,
        updated_at=moment,
        graph_message_id=update.message_id if echo else None,
    )


def send_projection(
    payload: Mapping[str, Any], answer: Mapping[str, Any], now: Callable[[], datetime]
) -> tuple[MessageRecord, StatusEvent] | None:
    """The outbound row (status ``sent``) and its first status event; None without a message id.

    The two may be written in either order: a status event logged before its
    row is applied when the row is inserted.
    """
    messages = answer.get("messages")
    first = messages[0] if isinstance(messages, list) and messages else None
    message_id = first.get("id") if isinstance(first, dict) else None
    if not isinstance(message_id, str) or not message_id:
        return None
    moment = now()
    to = payload.get("to")
    record = MessageRecord(
        row_id=str(uuid.uuid4()),
        wa_message_id=message_id,
        direction="outbound",
        to_phone=to if isinstance(to, str) else None,
        type=str(payload.get("type") or "unknown")[:MAX_TYPE],
        status="sent",
        created_at=moment,
        updated_at=moment,
        graph_message_id=message_id,
    )
    return record, StatusEvent(wa_message_id=message_id, status="sent", timestamp=moment)


def _phone_field(value: str | None) -> str | None:
    """A phone or WhatsApp id as the projection stores it (at most 64 characters), else None."""
    return value if value is not None and len(value) <= MAX_PHONE_FIELD else None


def _event_moment(timestamp: int | None, now: Callable[[], datetime]) -> datetime:
    """The platform event time (Unix seconds), or the receipt time when it is missing or absurd."""
    if timestamp is not None and 0 < timestamp < _LATEST_EVENT_SECONDS:
        return datetime.fromtimestamp(timestamp, tz=UTC)
    return now()
