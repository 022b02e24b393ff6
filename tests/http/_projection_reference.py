"""The delivery projection as it was before its one-pass rewrite: the reference it must equal.

A verbatim copy of ``svc/http/_projection.py``'s ``delivery_projection`` (and its
helpers) at the commit before the rewrite; ``test_projection_equivalence``
checks the new form gives the same rows, events, sightings and changes.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from svc._text import has_ascii_control
from svc.store import MessageRecord, StatusEvent, UserIdentityRecord
from svc.webhook import (
    GroupParticipantsUpdate,
    MessageUpdate,
    StatusUpdate,
    SystemUpdate,
    Update,
    UserIdentity,
    UserIdUpdate,
)
from svc.webhook._read import read_dict, read_id, read_list, read_str

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
    only advances the outbound row like any other.
    """
    messages: list[MessageRecord] = []
    unprojected = 0
    for update in updates:
        if isinstance(update, MessageUpdate):
            record = inbound_record(update, now)
            if record is None:
                unprojected += 1
            else:
                messages.append(record)
    statuses = tuple(
        StatusEvent(
            wa_message_id=u.message_id,
            status=u.status,
            timestamp=_event_moment(u.timestamp, now),
        )
        for u in updates
        if isinstance(u, StatusUpdate) and len(u.status) <= MAX_STATUS
    )
    changes = tuple(c for c in (_identity_change(u, now) for u in updates) if c is not None)
    return DeliveryProjection(
        messages=tuple(messages),
        statuses=statuses,
        identities=_sightings(updates, now),
        changes=changes,
        unprojected=unprojected,
    )


def inbound_record(update: MessageUpdate, now: Callable[[], datetime]) -> MessageRecord | None:
    """The projected row of a message update (a Business-app echo is outbound).

    The row names the user by phone and BSUIDs as far as they fit the store's
    columns; None when none does (a row naming nobody is refused by the store).
    """
    moment = _event_moment(update.timestamp, now)
    echo = update.is_echo
    user = update.user
    phone = _phone_field(user.wa_id if user else None)
    user_id = _bounded(user.user_id if user else None, MAX_USER_ID_FIELD)
    parent_user_id = _bounded(user.parent_user_id if user else None, MAX_USER_ID_FIELD)
    if phone is None and user_id is None and parent_user_id is None:
        return None
    return MessageRecord(
        row_id=str(uuid.uuid4()),
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


def _sightings(
    updates: tuple[Update, ...], now: Callable[[], datetime]
) -> tuple[UserIdentityRecord, ...]:
    """Every user the updates name, as identity-map sightings at the update's time.

    The same users as ``Delivery.identities``, minus the phone-only new identity
    of a number change: that change re-keys the user's row to the new number,
    and a sighting would first make a second, phone-only row for it.
    """
    seen: dict[UserIdentityRecord, None] = {}
    for update in updates:
        found: list[UserIdentity | None] = [getattr(update, "user", None)]
        if isinstance(update, SystemUpdate) and (
            update.system_type not in IDENTITY_CHANGES
            or (update.new_user is not None and update.new_user.user_id is not None)
        ):
            found.append(update.new_user)
        elif isinstance(update, UserIdUpdate):
            found.append(update.previous)
        elif isinstance(update, GroupParticipantsUpdate):
            found += update.participant_users
        moment = _event_moment(update.timestamp, now)
        for identity in found:
            record = _identity_record(identity, moment) if identity is not None else None
            if record is not None:
                seen.setdefault(record, None)
    return tuple(seen)


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


def _identity_change(update: Update, now: Callable[[], datetime]) -> IdentityChange | None:
    """The re-keying a ``user_changed_number``/``user_changed_user_id`` message or a
    ``userIdUpdate`` asks for; None for any other update or one missing a side."""
    if isinstance(update, SystemUpdate) and update.system_type in IDENTITY_CHANGES:
        old, new = update.user, update.new_user
    elif isinstance(update, UserIdUpdate):
        old, new = update.previous, update.current
    else:
        return None
    if old is None or new is None:
        return None
    user = _bounded(old.user_id, MAX_USER_ID_FIELD) or _phone_field(old.wa_id)
    new_user_id = _bounded(new.user_id, MAX_USER_ID_FIELD)
    new_wa_id = _phone_field(new.wa_id) if new.wa_id != old.wa_id else None
    if new_user_id == old.user_id:
        new_user_id = None
    if user is None or (new_user_id is None and new_wa_id is None):
        return None
    return IdentityChange(
        user=user,
        new_user_id=new_user_id,
        new_wa_id=new_wa_id,
        at=_event_moment(update.timestamp, now),
    )


def _bounded(value: str | None, limit: int) -> str | None:
    """``value`` when the store takes it (non-blank, at most ``limit``, no control character)."""
    if value is None or not value.strip() or len(value) > limit or has_ascii_control(value):
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


def read_user(
    value: Mapping[str, Any],
    wa_id: Any,
    user_id: Any,
    parent_user_id: Any,
    username: Any = None,
) -> UserIdentity | None:
    """``svc.webhook._read.read_user`` before its contacts were matched on raw values."""
    wa = read_id(wa_id)
    user = read_id(user_id)
    parent = read_id(parent_user_id)
    handle = read_str(username)
    name: str | None = None
    if wa is None and user is None and parent is None:
        return None
    for contact in read_list(value.get("contacts")):
        if type(contact) is not dict:
            continue
        c_wa = read_id(contact.get("wa_id"))
        c_user = read_id(contact.get("user_id"))
        c_parent = read_id(contact.get("parent_user_id"))
        if not (
            (wa is not None and wa == c_wa)
            or (user is not None and user == c_user)
            or (parent is not None and parent == c_parent)
        ):
            continue
        profile = read_dict(contact.get("profile"))
        wa = wa or c_wa
        user = user or c_user
        parent = parent or c_parent
        handle = handle or read_str(profile.get("username"))
        name = read_str(profile.get("name"))
        break
    return UserIdentity(wa_id=wa, user_id=user, parent_user_id=parent, username=handle, name=name)
