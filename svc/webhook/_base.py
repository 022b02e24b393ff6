"""What every update has: its source change, its raw item and the routing read from them.

The identifying fields of each kind (``message_id``, ``status``, ``call_id``,
``group_id``, ...) are validated and stored when the envelope is normalized;
every other field is a typed, read-only property read from ``raw`` on access,
so normalization stays cheap next to the JSON parse and property reads never
raise. The platform time comes as ``timestamp`` (Unix seconds) and
``event_time`` (ISO 8601 UTC, ``YYYY-MM-DDTHH:MM:SS.mmmZ``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any, ClassVar, Final

from ._read import (
    format_event_time,
    read_conversation,
    read_errors,
    read_id,
    read_pricing,
    read_timestamp,
)
from ._values import ConversationInfo, PlatformError, PricingInfo

__all__ = ["ECHO_FIELD", "UpdateSource"]

ECHO_FIELD: Final = "smb_message_echoes"


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateSource:
    """The change an update came from, shared by all the updates of that change.

    ``value`` is the change's raw ``value`` object (not compared, not hashed,
    not in the repr); ``entry_time`` is the entry's ``time``, when sent;
    ``received_at`` is when the caller received the delivery (Unix seconds),
    when it passed one to the normalizer.
    """

    waba_id: str | None = None
    phone_number_id: str | None = None
    display_phone_number: str | None = None
    field: str = ""
    entry_time: int | None = None
    received_at: int | None = None
    value: Mapping[str, Any] = _field(repr=False, compare=False, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UpdateBase:
    """What every update has: its source change and its raw item, and the routing read from them.

    The identifying fields of each kind are validated and stored when the
    envelope is normalized; every other field is a typed property read from
    ``raw`` on access (see the module docstring).
    """

    kind: ClassVar[str]
    _repr_fields: ClassVar[tuple[str, ...]] = ()

    source: UpdateSource
    raw: Mapping[str, Any] = _field(hash=False)

    def __repr__(self) -> str:
        # Only the kind, the field and coarse labels: never ids, phone numbers or text.
        shown = "".join(f", {name}={getattr(self, name)!r}" for name in self._repr_fields)
        return f"{type(self).__name__}(kind={self.kind!r}, field={self.field!r}{shown})"

    @property
    def waba_id(self) -> str | None:
        """The WhatsApp Business Account id (the entry id)."""
        return self.source.waba_id

    @property
    def phone_number_id(self) -> str | None:
        """The business phone number id from ``metadata``."""
        return self.source.phone_number_id

    @property
    def display_phone_number(self) -> str | None:
        """The business display phone number from ``metadata``."""
        return self.source.display_phone_number

    @property
    def field(self) -> str:
        """The webhook field of the change (``messages``, ``calls``, ...)."""
        return self.source.field

    @property
    def timestamp(self) -> int | None:
        """The platform timestamp of the item, in Unix seconds."""
        return read_timestamp(self.raw.get("timestamp"))

    @property
    def event_time(self) -> str | None:
        """``timestamp`` as ISO 8601 UTC with milliseconds (``2026-11-21T10:15:30.000Z``)."""
        return format_event_time(self.timestamp)

    @property
    def change_errors(self) -> tuple[PlatformError, ...]:
        """The platform ``errors`` of the change this update came from (its ``value.errors``)."""
        return read_errors(self.source.value.get("errors"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ChangeUpdate(UpdateBase):
    """An update made of a whole change, not of an item of its lists: ``raw`` is the value."""

    @property
    def value(self) -> Mapping[str, Any]:
        """The raw change value."""
        return self.raw

    @property
    def timestamp(self) -> int | None:
        """The entry ``time``, else the value's ``timestamp``."""
        if self.source.entry_time is not None:
            return self.source.entry_time
        return read_timestamp(self.raw.get("timestamp"))


def required(raw: Mapping[str, Any], key: str) -> str:
    """A string the normalizer validated before building the update."""
    value = raw.get(key)
    return value if type(value) is str else ""


class StatusReads:
    """What a status of an outbound message says besides its status, read from ``raw``.

    Shared by ``StatusUpdate`` and a ``standby`` status (``StandbyUpdate``).
    """

    __slots__ = ()
    raw: Mapping[str, Any]

    @property
    def recipient_id(self) -> str | None:
        """The user (or, for group messages, the group) the message went to."""
        return read_id(self.raw.get("recipient_id"))

    @property
    def conversation(self) -> ConversationInfo | None:
        return read_conversation(self.raw.get("conversation"))

    @property
    def pricing(self) -> PricingInfo | None:
        """How the platform prices the message (``PMP``, its category and type), when sent."""
        return read_pricing(self.raw.get("pricing"))

    @property
    def errors(self) -> tuple[PlatformError, ...]:
        return read_errors(self.raw.get("errors"))
