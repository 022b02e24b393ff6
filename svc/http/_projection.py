"""The message projection's mapping: webhook updates and send answers to store records.

Pure functions (the clock is passed in): they decide which rows, status events,
identity sightings and identity changes a delivery or a send projects, never
how or when they are written. Only metadata is projected, never message text.
The way back, a stored row as the HTTP JSON, lives here too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from svc._text import has_ascii_control, is_printable_label
from svc.graph import is_bsuid, is_parent_bsuid
from svc.store import (
    MessageRecord,
    StatusEvent,
    UserIdentityRecord,
    format_timestamp,
    new_row_id,
    new_row_ids,
)
from svc.webhook import (
    MessageUpdate,
    StatusUpdate,
    SystemUpdate,
    Update,
    UserIdentity,
    UserIdUpdate,
)

from ._numbers import ServedNumber

__all__ = [
    "IDENTITY_CHANGES",
    "DeliveryProjection",
    "IdentityChange",
    "belongs_to_number",
    "delivery_projection",
    "inbound_record",
    "record_json",
    "send_projection",
]

MAX_PHONE_FIELD: Final = 64
MAX_USER_ID_FIELD: Final = 160
MAX_USERNAME_FIELD: Final = 128
MAX_STATUS: Final = 64
MAX_TYPE: Final = 64
_LATEST_EVENT_SECONDS: Final = 32_503_680_000
"""Timestamps at or past the year 3000 are absurd: the receipt time is used instead."""
IDENTITY_CHANGES: Final = frozenset({"user_changed_number", "user_changed_user_id"})
"""The system message types that move a user to a new phone number or BSUID."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IdentityChange:
    """An identity event as ``record_identity_change`` takes it: who, to what, when."""

    user: str
    new_user_id: str | None
    new_wa_id: str | None
    at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliveryProjection:
    """What a delivery writes: rows, status events, identity sightings, then identity changes.

    ``unprojected`` counts message updates that name no storable user (no row
    is built for them: the store would refuse it).
    """

    messages: tuple[MessageRecord, ...] = ()
    statuses: tuple[StatusEvent, ...] = ()
    identities: tuple[UserIdentityRecord, ...] = ()
    changes: tuple[IdentityChange, ...] = ()
    unprojected: int = 0


def delivery_projection(
    updates: tuple[Update, ...], now: Callable[[], datetime]
) -> DeliveryProjection:
    """The rows, events, sightings and changes of a delivery's updates.

    A status longer than the store's column is not projected; a status event
    is keyed by message id alone, so one naming its user by ``recipient_user_id``
    only advances the outbound row like any other. One pass: each update's
    time, user and bounded fields are read once, and one random draw gives
    every row id.
    """
    messages: list[MessageRecord] = []
    statuses: list[StatusEvent] = []
    changes: list[IdentityChange] = []
    seen: dict[UserIdentityRecord, None] = {}
    row_ids = iter(new_row_ids(sum(isinstance(u, MessageUpdate) for u in updates)))
    unprojected = 0
    for update in updates:
        moment = _event_moment(update.timestamp, now)
        user: UserIdentity | None = getattr(update, "user", None)
        sighting = _identity_record(user, moment) if user is not None else None
        if isinstance(update, MessageUpdate):
            record = _inbound_record(update, user, moment, next(row_ids))
            if record is None:
                unprojected += 1
            else:
                messages.append(record)
        elif isinstance(update, StatusUpdate) and len(update.status) <= MAX_STATUS:
            statuses.append(
                StatusEvent(wa_message_id=update.message_id, status=update.status, timestamp=moment)
            )
        if sighting is not None:
            seen.setdefault(sighting, None)
        other: UserIdentity | None = None
        change: IdentityChange | None = None
        if isinstance(update, SystemUpdate):
            new_user = update.new_user
            if update.system_type in IDENTITY_CHANGES:
                change = _identity_change(user, new_user, moment)
                if new_user is not None and new_user.user_id is not None:
                    other = new_user
            else:
                other = new_user
        elif isinstance(update, UserIdUpdate):
            other = update.previous
            change = _identity_change(other, user, moment)
        if change is not None:
            changes.append(change)
        if other is not None:
            record_other = _identity_record(other, moment)
            if record_other is not None:
                seen.setdefault(record_other, None)
    return DeliveryProjection(
        messages=tuple(messages),
        statuses=tuple(statuses),
        identities=tuple(seen),
        changes=tuple(changes),
        unprojected=unprojected,
    )


def inbound_record(update: MessageUpdate, now: Callable[[], datetime]) -> MessageRecord | None:
    """The projected row of a message update (a Business-app echo is outbound).

    The row names the user by phone and BSUIDs as far as they fit the store's
    columns; None when none does (a row naming nobody is refused by the store).
    """
    return _inbound_record(
        update, update.user, _event_moment(update.timestamp, now), new_row_id()
    )


def _inbound_record(
    update: MessageUpdate, user: UserIdentity | None, moment: datetime, row_id: str
) -> MessageRecord | None:
    """``inbound_record`` with the update's user, time and row id already read."""
    echo = update.is_echo
    phone = _phone_field(update.to if echo else update.from_)
    user_id = _bounded(user.user_id if user else None, MAX_USER_ID_FIELD)
    parent_user_id = _bounded(user.parent_user_id if user else None, MAX_USER_ID_FIELD)
    if phone is None and user_id is None and parent_user_id is None:
        return None
    return MessageRecord(
        row_id=row_id,
        wa_message_id=update.message_id,
        direction="outbound" if echo else "inbound",
        from_phone=None if echo else phone,
        to_phone=phone if echo else _phone_field(update.display_phone_number),
        type=(update.type or "unknown")[:MAX_TYPE],
        status="sent" if echo else "received",
        created_at=moment,
        updated_at=moment,
        graph_message_id=update.message_id if echo else None,
        user_id=user_id,
        parent_user_id=parent_user_id,
        business_phone_number_id=update.phone_number_id,
    )


def send_projection(
    payload: Mapping[str, Any], answer: Mapping[str, Any], now: Callable[[], datetime]
) -> tuple[MessageRecord, StatusEvent] | None:
    """The outbound row (status ``sent``) and its first status event; None without a message id.

    A phone recipient is the row's ``to_phone``; a BSUID or parent BSUID (sent
    in ``recipient``) its ``user_id`` or ``parent_user_id``. The two may be
    written in either order: a status event logged before its row is applied
    when the row is inserted.
    """
    messages = answer.get("messages")
    first = messages[0] if isinstance(messages, list) and messages else None
    message_id = first.get("id") if isinstance(first, dict) else None
    if not isinstance(message_id, str) or not message_id:
        return None
    moment = now()
    to, recipient = payload.get("to"), payload.get("recipient")
    to_phone = to if isinstance(to, str) else None
    user_id: str | None = None
    parent_user_id: str | None = None
    if to_phone is None and is_parent_bsuid(recipient):
        parent_user_id = str(recipient)
    elif to_phone is None and is_bsuid(recipient):
        user_id = str(recipient)
    record = MessageRecord(
        row_id=new_row_id(),
        wa_message_id=message_id,
        direction="outbound",
        to_phone=to_phone,
        type=str(payload.get("type") or "unknown")[:MAX_TYPE],
        status="sent",
        created_at=moment,
        updated_at=moment,
        graph_message_id=message_id,
        user_id=user_id,
        parent_user_id=parent_user_id,
    )
    return record, StatusEvent(wa_message_id=message_id, status="sent", timestamp=moment)


def _identity_record(identity: UserIdentity, moment: datetime) -> UserIdentityRecord | None:
    """A sighting of ``identity`` (fields that fit the store); None without a BSUID or phone."""
    user_id = _bounded(identity.user_id, MAX_USER_ID_FIELD)
    wa_id = _phone_field(identity.wa_id)
    if user_id is None and wa_id is None:
        return None
    return UserIdentityRecord(
        user_id=user_id,
        parent_user_id=_bounded(identity.parent_user_id, MAX_USER_ID_FIELD),
        wa_id=wa_id,
        username=_bounded(identity.username, MAX_USERNAME_FIELD),
        last_seen_at=moment,
    )


def _identity_change(
    old: UserIdentity | None, new: UserIdentity | None, at: datetime
) -> IdentityChange | None:
    """The re-keying from ``old`` to ``new`` a ``user_changed_number``/``user_changed_user_id``
    message or a ``userIdUpdate`` asks for; None when a side is missing or nothing changes."""
    if old is None or new is None:
        return None
    user = _bounded(old.user_id, MAX_USER_ID_FIELD) or _phone_field(old.wa_id)
    new_user_id = _bounded(new.user_id, MAX_USER_ID_FIELD)
    new_wa_id = _phone_field(new.wa_id) if new.wa_id != old.wa_id else None
    if new_user_id == old.user_id:
        new_user_id = None
    if user is None or (new_user_id is None and new_wa_id is None):
        return None
    return IdentityChange(user=user, new_user_id=new_user_id, new_wa_id=new_wa_id, at=at)


def _bounded(value: str | None, limit: int) -> str | None:
    """``value`` when the store takes it (non-blank, at most ``limit``, no control character)."""
    if value is None or len(value) > limit:
        return None
    if is_printable_label(value):  # the common case: printable holds no control character
        return value
    if not value.strip() or has_ascii_control(value):
        return None
    return value


def _phone_field(value: str | None) -> str | None:
    """A phone or WhatsApp id as the projection stores it (at most 64 characters), else None."""
    return _bounded(value, MAX_PHONE_FIELD)


def _event_moment(timestamp: int | None, now: Callable[[], datetime]) -> datetime:
    """The platform event time (Unix seconds), or the receipt time when it is missing or absurd."""
    if timestamp is not None and 0 < timestamp < _LATEST_EVENT_SECONDS:
        return datetime.fromtimestamp(timestamp, tz=UTC)
    return now()


def record_json(record: MessageRecord) -> dict[str, object]:
    """A ``MessageRecord`` as the spec's camelCase JSON."""
    return {
        "rowId": record.row_id,
        "waMessageId": record.wa_message_id,
        "direction": record.direction,
        "fromPhone": record.from_phone,
        "toPhone": record.to_phone,
        "type": record.type,
        "status": record.status,
        "graphMessageId": record.graph_message_id,
        "userId": record.user_id,
        "parentUserId": record.parent_user_id,
        "createdAt": format_timestamp(record.created_at),
        "updatedAt": format_timestamp(record.updated_at),
    }


def belongs_to_number(record: MessageRecord, number: ServedNumber) -> bool:
    """Whether a row is the number's: rows stored without a number are the default's."""
    owner = record.business_phone_number_id
    return owner == number.phone_number_id or (owner is None and number.default)
