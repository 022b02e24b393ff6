"""The message projection's mapping: webhook updates and send answers to store records.

Pure functions (the clock is passed in): they decide which rows, status events,
identity sightings and identity changes a delivery or a send projects, never
how or when they are written. Only metadata is projected, never message text.
The way back, a stored row as the HTTP JSON, lives here too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from svc.graph import is_bsuid, is_parent_bsuid
from svc.store import (
    CheckedRows,
    CheckedRowsBuilder,
    MessageRecord,
    PersistenceValidationError,
    StatusEvent,
    UserIdentityRecord,
    format_timestamp,
    from_ms,
    new_row_id,
    storable_phone,
    storable_user_id,
    to_ms,
)
from svc.webhook import (
    GroupParticipantsUpdate,
    MessageUpdate,
    StandbyUpdate,
    StatusUpdate,
    SystemUpdate,
    Update,
    UserIdentity,
    UserIdUpdate,
    read_users,
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


_NO_ROWS: Final = CheckedRowsBuilder().seal()
_ROWS: Final = (MessageUpdate, StandbyUpdate)
"""The updates that may project a message row (each takes a row id)."""
_NAMES_ANOTHER: Final = (SystemUpdate, UserIdUpdate)
"""The updates that name a second identity, and may ask for an identity change."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliveryProjection:
    """What a delivery writes: rows, status events, identity sightings, then identity changes.

    ``rows`` are checked by the store's rules as they were built (the store
    takes them without checking again); ``refusal`` is the store's refusal of
    a field no row can leave out (``rows`` is then empty, as the store would
    have refused the whole projection). ``unprojected`` counts message updates
    that name no storable user (no row is built for them: the store would refuse it).
    """

    rows: CheckedRows = _NO_ROWS
    changes: tuple[IdentityChange, ...] = ()
    unprojected: int = 0
    refusal: PersistenceValidationError | None = None

    @property
    def messages(self) -> tuple[MessageRecord, ...]:
        """The rows as records, for a store without the checked form."""
        return self.rows.message_records()

    @property
    def statuses(self) -> tuple[StatusEvent, ...]:
        return self.rows.status_events()

    @property
    def identities(self) -> tuple[UserIdentityRecord, ...]:
        return self.rows.identity_records()


def delivery_projection(
    updates: tuple[Update, ...], now: Callable[[], datetime]
) -> DeliveryProjection:
    """The rows, events, sightings and changes of a delivery's updates.

    A status event keeps the category the status says its message is priced in
    (billing metadata). A status the store cannot hold is not projected; a status event is keyed
    by message id alone, so one naming its user by ``recipient_user_id`` only
    advances the outbound row like any other. One pass: each update's time
    (epoch ms) and user are read once (a user the change names again, once
    for the change: ``read_users``), each field is checked once by the
    store's rules (``CheckedRowsBuilder``), and one random draw gives every row id.
    """
    rows = CheckedRowsBuilder(row_ids=sum(isinstance(u, _ROWS) for u in updates))
    changes: list[IdentityChange] = []
    unprojected = 0
    refusal: PersistenceValidationError | None = None
    seen: tuple[UserIdentity | None, int] = (None, 0)
    """The last user sighting added (a batch names one user again and again, at one time)."""
    for update, user in zip(updates, read_users(updates), strict=True):
        seconds = update.timestamp
        if seconds is not None and 0 < seconds < _LATEST_EVENT_SECONDS:
            at = seconds * 1000  # ``_event_ms`` inlined for its common case (once per update)
        else:
            at = _event_ms(None, now)
        try:
            if isinstance(update, MessageUpdate):
                if not _add_inbound(rows, update, user, at):
                    unprojected += 1
            elif isinstance(update, StatusUpdate):
                rows.status(
                    wa_message_id=update.message_id,
                    status=update.status,
                    at_ms=at,
                    pricing_category=_pricing_category(update.raw),
                )
            elif isinstance(update, StandbyUpdate):
                # A thread another responder holds: its messages and statuses, as metadata.
                if update.status is not None:
                    rows.status(
                        wa_message_id=update.message_id,
                        status=update.status,
                        at_ms=at,
                        pricing_category=_pricing_category(update.raw),
                    )
                elif not _add_inbound(rows, update, user, at):
                    unprojected += 1
        except PersistenceValidationError as exc:
            refusal = refusal or exc
        if user is not None and (user is not seen[0] or at != seen[1]):
            # The same sighting again would add nothing (``_add_identity`` inlined).
            rows.identity(
                user_id=user.user_id,
                parent_user_id=user.parent_user_id,
                wa_id=user.wa_id,
                username=user.username,
                at_ms=at,
            )
            seen = (user, at)
        if isinstance(update, _NAMES_ANOTHER):
            change, other = _identity_event(update, user, at)
            if change is not None:
                changes.append(change)
            if other is not None:
                _add_identity(rows, other, at)
        elif isinstance(update, GroupParticipantsUpdate):
            for participant in update.participant_users:
                _add_identity(rows, participant, at)
    return DeliveryProjection(
        rows=_NO_ROWS if refusal is not None else rows.seal(),
        changes=tuple(changes),
        unprojected=unprojected,
        refusal=refusal,
    )


def _identity_event(
    update: SystemUpdate | UserIdUpdate, user: UserIdentity | None, at: int
) -> tuple[IdentityChange | None, UserIdentity | None]:
    """The identity change an update asks for (``_identity_change``), and the other identity
    it names (a sighting of its own)."""
    if isinstance(update, UserIdUpdate):
        return _identity_change(update.previous, user, at), update.previous
    new_user = update.new_user
    if update.system_type not in IDENTITY_CHANGES:
        return None, new_user
    other = new_user if new_user is not None and new_user.user_id is not None else None
    return _identity_change(user, new_user, at), other


def _pricing_category(status: Mapping[str, Any]) -> str | None:
    """The category a status says its message is priced in (``pricing.category``), if any."""
    pricing = status.get("pricing")
    category = pricing.get("category") if type(pricing) is dict else None
    return category if type(category) is str else None


def inbound_record(update: MessageUpdate, now: Callable[[], datetime]) -> MessageRecord | None:
    """The projected row of a message update (a Business-app echo is outbound).

    The row names the user by phone and BSUIDs as far as they fit the store's
    columns; None when none does (a row naming nobody is refused by the store).
    """
    rows = CheckedRowsBuilder(row_ids=1)
    at = _event_ms(update.timestamp, now)
    if not _add_inbound(rows, update, update.user, at):
        return None
    return rows.seal().message_records()[0]


def _add_inbound(
    rows: CheckedRowsBuilder,
    update: MessageUpdate | StandbyUpdate,
    user: UserIdentity | None,
    at: int,
) -> bool:
    """Add the row of a message update (or a standby message or echo) with its user and time
    already read (the builder draws its row id). The business number's fields are read from
    the update's ``source`` (what its properties return) once."""
    echo = update.is_echo
    message_id = update.message_id
    source = update.source
    phone = user.wa_id if user else None  # the item's from (an echo's to), else its contact's
    return rows.message(
        wa_message_id=message_id,
        direction="outbound" if echo else "inbound",
        from_phone=None if echo else phone,
        to_phone=phone if echo else source.display_phone_number,
        type=(update.type or "unknown")[:MAX_TYPE],
        status="sent" if echo else "received",
        graph_message_id=message_id if echo else None,
        at_ms=at,
        user_id=user.user_id if user else None,
        parent_user_id=user.parent_user_id if user else None,
        business_phone_number_id=source.phone_number_id,
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


def _add_identity(rows: CheckedRowsBuilder, identity: UserIdentity, at: int) -> None:
    """Add a sighting of ``identity`` (the fields the store takes) if it names a BSUID or phone."""
    rows.identity(
        user_id=identity.user_id,
        parent_user_id=identity.parent_user_id,
        wa_id=identity.wa_id,
        username=identity.username,
        at_ms=at,
    )


def _identity_change(
    old: UserIdentity | None, new: UserIdentity | None, at: int
) -> IdentityChange | None:
    """The re-keying from ``old`` to ``new`` a ``user_changed_number``/``user_changed_user_id``
    message or a ``userIdUpdate`` asks for; None when a side is missing or nothing changes."""
    if old is None or new is None:
        return None
    user = storable_user_id(old.user_id) or storable_phone(old.wa_id)
    new_user_id = storable_user_id(new.user_id)
    new_wa_id = storable_phone(new.wa_id) if new.wa_id != old.wa_id else None
    if new_user_id == old.user_id:
        new_user_id = None
    if user is None or (new_user_id is None and new_wa_id is None):
        return None
    return IdentityChange(user=user, new_user_id=new_user_id, new_wa_id=new_wa_id, at=from_ms(at))


def _event_ms(timestamp: int | None, now: Callable[[], datetime]) -> int:
    """The platform event time (Unix seconds) as epoch ms, or the receipt time when it is
    missing or absurd."""
    if timestamp is not None and 0 < timestamp < _LATEST_EVENT_SECONDS:
        return timestamp * 1000
    return to_ms(now(), field="now")


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
