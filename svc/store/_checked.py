"""A delivery's rows checked once, while they are built: the store's trusted input form.

``record_webhook_updates`` checks every record a caller passes. The service's
own projection builds its rows from webhook data instead, and checking them
there and again in the store was the same work twice. ``CheckedRowsBuilder``
applies the store's rules (``_validate``) to each field as it builds the
column tuples the adapters write; ``seal`` hands them over as ``CheckedRows``,
which the store takes (``rows=``) without checking again. Only a builder can
make ``CheckedRows``: its constructor refuses any caller without the module's
private seal, so the trusted form cannot be made from unchecked values by
accident (as pydantic's ``model_construct``, but closed to outside callers).
"""

from __future__ import annotations

from typing import Final, Literal, final

from . import _validate as check
from ._errors import PersistenceValidationError
from ._ops import message_record
from ._records import MessageRecord, StatusEvent, UserIdentityRecord
from ._row_ids import new_row_ids
from ._time import EARLIEST_MS, LATEST_MS, from_ms
from ._validate import IdentityArgs, StatusArgs

__all__ = [
    "CheckedRows",
    "CheckedRowsBuilder",
    "MessageArgs",
    "StatusArgs",
    "storable_phone",
    "storable_user_id",
]

MessageArgs = tuple[
    str,
    str,
    str,
    str | None,
    str | None,
    str,
    str,
    str | None,
    int,
    int,
    str | None,
    str | None,
    str | None,
]
"""A checked message row in ``_ops._MESSAGE_COLUMNS`` order, times as epoch ms."""

_SEAL: Final = object()


@final
class CheckedRows:
    """A delivery's checked message rows, status events and identity sightings.

    Made only by ``CheckedRowsBuilder.seal``; immutable (tuples of tuples).
    """

    __slots__ = ("_identities", "_messages", "_statuses")

    _messages: tuple[MessageArgs, ...]
    _statuses: tuple[StatusArgs, ...]
    _identities: tuple[IdentityArgs, ...]

    def __init__(
        self,
        seal: object,
        messages: tuple[MessageArgs, ...],
        statuses: tuple[StatusArgs, ...],
        identities: tuple[IdentityArgs, ...],
    ) -> None:
        if seal is not _SEAL:
            raise TypeError("CheckedRows are made by CheckedRowsBuilder.seal only.")
        object.__setattr__(self, "_messages", messages)
        object.__setattr__(self, "_statuses", statuses)
        object.__setattr__(self, "_identities", identities)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("CheckedRows are immutable.")

    def __repr__(self) -> str:
        return (
            f"CheckedRows(messages={len(self._messages)}, statuses={len(self._statuses)},"
            f" identities={len(self._identities)})"
        )

    @property
    def messages(self) -> tuple[MessageArgs, ...]:
        return self._messages

    @property
    def statuses(self) -> tuple[StatusArgs, ...]:
        return self._statuses

    @property
    def identities(self) -> tuple[IdentityArgs, ...]:
        return self._identities

    def message_records(self) -> tuple[MessageRecord, ...]:
        """The rows as ``MessageRecord`` (for a store that takes records only)."""
        return tuple(message_record(row) for row in self._messages)

    def status_events(self) -> tuple[StatusEvent, ...]:
        """The status events as ``StatusEvent``."""
        return tuple(
            StatusEvent(
                wa_message_id=message_id,
                status=status,
                timestamp=from_ms(ms),
                pricing_category=category,
            )
            for message_id, status, ms, category in self._statuses
        )

    def identity_records(self) -> tuple[UserIdentityRecord, ...]:
        """The identity sightings as ``UserIdentityRecord``."""
        return tuple(
            UserIdentityRecord(
                user_id=user_id,
                parent_user_id=parent_user_id,
                wa_id=wa_id,
                username=username,
                last_seen_at=from_ms(ms),
            )
            for user_id, parent_user_id, wa_id, username, ms in self._identities
        )


class CheckedRowsBuilder:
    """Builds a delivery's ``CheckedRows``, checking each field once by the store's rules.

    The fields that name a user (phones, BSUIDs, the username) are left out
    when the store could not hold them, and a row or sighting left naming
    nobody is not added (the method answers False); any other field the store
    refuses raises ``PersistenceValidationError``, as ``record_webhook_updates``
    would for the record. Sightings are kept once each, in first-seen order.
    """

    __slots__ = ("_identities", "_ids", "_messages", "_seen", "_shared", "_statuses")

    def __init__(self, *, row_ids: int = 0) -> None:
        """``row_ids``: how many rows will be given no id (their ids are drawn at once)."""
        self._messages: list[MessageArgs] = []
        self._ids: list[str] = new_row_ids(row_ids)
        """Fresh row ids for the rows given none, drawn together, taken from the end."""
        self._shared: dict[tuple[object, ...], _SharedFields | Literal[False]] = {}
        """Each set of a row's shared fields as given, and what checking it gave (once each)."""
        self._statuses: list[StatusArgs] = []
        self._identities: dict[IdentityArgs, None] = {}
        self._seen: dict[tuple[object, ...], _UserNames | Literal[False]] = {}
        """Each user's names as given, and as checked (False: none the store could key by)."""

    def message(
        self,
        *,
        row_id: str | None = None,
        wa_message_id: str,
        direction: str,
        from_phone: str | None,
        to_phone: str | None,
        type: str,
        status: str,
        graph_message_id: str | None,
        at_ms: int,
        user_id: str | None,
        parent_user_id: str | None,
        business_phone_number_id: str | None,
    ) -> bool:
        """Add a message row created (and updated) at ``at_ms``; False if it names no user.

        A delivery's rows share most fields (the business number, the user, the
        type, the status): each distinct set of them is checked once, and only
        the fields of the row itself (its ids, its time) are checked per row.
        Without a ``row_id`` the row takes a fresh one the builder drew (nothing to
        check): one random draw for the ``row_ids`` the builder was made for.
        """
        given = (
            direction,
            from_phone,
            to_phone,
            type,
            status,
            user_id,
            parent_user_id,
            business_phone_number_id,
        )
        try:
            shared = self._shared.get(given)
        except TypeError:  # an unhashable value: the row is refused below, as the store would
            shared = False
        if shared is None:
            shared = self._shared[given] = _shared_fields(given)
        if shared is False:  # names no user, or refused: the complete check says which
            return self._message_checked(row_id, wa_message_id, graph_message_id, at_ms, given)
        # The checks of epoch_ms, text and optional_text and ``_row_id`` inlined for their
        # common case: these run for every row of every delivery (``fit`` passes what
        # ``text`` passes; ``text`` says why it refuses the rest).
        # (``type`` names the message type here: ``__class__`` is the builtin's test.)
        at = (
            at_ms
            if at_ms.__class__ is int and EARLIEST_MS <= at_ms < LATEST_MS
            else check.epoch_ms(at_ms, "created_at")
        )
        from_phone, to_phone, type, status, user_id, parent_user_id, business = shared
        ids = self._ids
        self._messages.append(
            (
                (ids.pop() if ids else self._row_id())
                if row_id is None
                else check.text(row_id, "row_id"),
                check.fit(wa_message_id) or check.text(wa_message_id, "wa_message_id"),
                direction,
                from_phone,
                to_phone,
                type,
                status,
                None
                if graph_message_id is None
                else check.text(graph_message_id, "graph_message_id"),
                at,
                at,
                user_id,
                parent_user_id,
                business,
            )
        )
        return True

    def _row_id(self) -> str:
        """A fresh row id (one more draw once those drawn together are used)."""
        return self._ids.pop() if self._ids else new_row_ids(1)[0]

    def _message_checked(
        self,
        row_id: str | None,
        wa_message_id: str,
        graph_message_id: str | None,
        at_ms: int,
        given: _GivenFields,
    ) -> bool:
        """``message`` checking every field in the store's order (the first refusal is raised)."""
        direction, from_phone, to_phone, type, status, user_id, parent_user_id, business = given
        fit = check.fit
        from_phone = fit(from_phone, check.PHONE_MAX)
        to_phone = fit(to_phone, check.PHONE_MAX)
        user_id = fit(user_id, check.USER_ID_MAX)
        parent_user_id = fit(parent_user_id, check.USER_ID_MAX)
        if direction not in check.DIRECTIONS:
            raise PersistenceValidationError(
                "invalid_record", "direction must be 'inbound' or 'outbound'."
            )
        if not check.names_user(direction, from_phone, to_phone, user_id, parent_user_id):
            return False
        at = check.epoch_ms(at_ms, "created_at")
        self._messages.append(
            (
                self._row_id() if row_id is None else check.text(row_id, "row_id"),
                check.text(wa_message_id, "wa_message_id"),
                direction,
                from_phone,
                to_phone,
                check.text(type, "type", max_len=64),
                check.text(status, "status", max_len=64),
                check.optional_text(graph_message_id, "graph_message_id"),
                at,
                at,
                user_id,
                parent_user_id,
                check.optional_text(business, "business_phone_number_id", max_len=check.PHONE_MAX),
            )
        )
        return True

    def status(
        self, *, wa_message_id: str, status: str, at_ms: int, pricing_category: str | None = None
    ) -> bool:
        """Add a status event; False (nothing added) for a status the store cannot hold.

        A ``pricing_category`` the store cannot hold is left out (billing metadata
        never costs the event).
        """
        value = check.fit(status, 64)
        if value is None:
            return False
        at = (
            at_ms
            if type(at_ms) is int and EARLIEST_MS <= at_ms < LATEST_MS
            else check.epoch_ms(at_ms, "timestamp")
        )
        category = (
            None
            if pricing_category is None
            else check.fit(pricing_category, check.PRICING_CATEGORY_MAX)
        )
        message_id = check.fit(wa_message_id) or check.text(wa_message_id, "wa_message_id")
        self._statuses.append((message_id, value, at, category))
        return True

    def identity(
        self,
        *,
        user_id: str | None,
        parent_user_id: str | None,
        wa_id: str | None,
        username: str | None,
        at_ms: int,
    ) -> bool:
        """Add a sighting seen at ``at_ms`` (once); False if it names no BSUID or wa_id."""
        given = (user_id, parent_user_id, wa_id, username)
        names = self._seen.get(given)
        if names is None:  # a delivery names its users again and again: check each once
            fit = check.fit
            user_id = fit(user_id, check.USER_ID_MAX)
            wa_id = fit(wa_id, check.PHONE_MAX)
            names = (user_id is not None or wa_id is not None) and (
                user_id,
                fit(parent_user_id, check.USER_ID_MAX),
                wa_id,
                fit(username, check.USERNAME_MAX),
            )
            self._seen[given] = names
        if names is False:
            return False
        user, parent, phone, name = names
        at = (
            at_ms
            if type(at_ms) is int and EARLIEST_MS <= at_ms < LATEST_MS
            else check.epoch_ms(at_ms, "last_seen_at")
        )
        self._identities.setdefault((user, parent, phone, name, at), None)
        return True

    def seal(self) -> CheckedRows:
        """The rows built so far, as the store's trusted form."""
        return CheckedRows(
            _SEAL, tuple(self._messages), tuple(self._statuses), tuple(self._identities)
        )


_UserNames = tuple[str | None, str | None, str | None, str | None]
"""A sighting's checked user_id, parent_user_id, wa_id and username."""
_GivenFields = tuple[str, str | None, str | None, str, str, str | None, str | None, str | None]
"""A row's shared fields as given: direction, from and to phone, type, status, BSUIDs, business
number (``message`` checks each distinct set once)."""
_SharedFields = tuple[str | None, str | None, str, str, str | None, str | None, str | None]
"""A row's checked shared fields: from and to phone, type, status, BSUIDs, business number."""


def _shared_fields(given: _GivenFields) -> _SharedFields | Literal[False]:
    """A row's shared fields checked by the store's rules; False when the row names no user
    or the store refuses one of them (``_message_checked`` then answers or raises)."""
    direction, from_phone, to_phone, type, status, user_id, parent_user_id, business_id = given
    fit = check.fit
    from_phone = fit(from_phone, check.PHONE_MAX)
    to_phone = fit(to_phone, check.PHONE_MAX)
    user_id = fit(user_id, check.USER_ID_MAX)
    parent_user_id = fit(parent_user_id, check.USER_ID_MAX)
    if direction not in check.DIRECTIONS:
        return False
    if not check.names_user(direction, from_phone, to_phone, user_id, parent_user_id):
        return False
    checked_type = fit(type, 64)
    checked_status = fit(status, 64)
    business = fit(business_id, check.PHONE_MAX)
    if (
        checked_type is None
        or checked_status is None
        or (business is None and business_id is not None)
    ):
        return False
    return (from_phone, to_phone, checked_type, checked_status, user_id, parent_user_id, business)


def storable_phone(value: str | None) -> str | None:
    """``value`` when the store takes it as a phone or WhatsApp id, else None."""
    return check.fit(value, check.PHONE_MAX)


def storable_user_id(value: str | None) -> str | None:
    """``value`` when the store takes it as a BSUID or parent BSUID, else None."""
    return check.fit(value, check.USER_ID_MAX)
