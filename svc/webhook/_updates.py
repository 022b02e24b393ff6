"""Typed, frozen updates: what one webhook envelope normalizes into.

Every update has a ``kind`` (one of ``UPDATE_KINDS``), its ``source`` change
(``waba_id``, ``phone_number_id``, ``display_phone_number``, ``field``) and its
``raw`` item as the platform sent it. The identifying fields of each kind
(``message_id``, ``status``, ``call_id``, ``group_id``, ...) are validated and
stored when the envelope is normalized; every other field is a typed,
read-only property read from ``raw`` on access. That keeps normalization at a
fraction of the JSON parse (see ``bench/webhook_normalize.py``) while every
field stays typed; property reads never raise, and the platform time comes as
``timestamp`` (Unix seconds) and ``event_time`` (ISO 8601 UTC,
``YYYY-MM-DDTHH:MM:SS.mmmZ``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any, ClassVar, Final, Literal, TypeAlias

from ._read import (
    format_event_time,
    profile_name,
    read_content,
    read_context,
    read_conversation,
    read_dict,
    read_errors,
    read_id,
    read_identity,
    read_int,
    read_participants,
    read_pricing,
    read_session,
    read_setting,
    read_str,
    read_timestamp,
    read_type,
)
from ._values import (
    CallSession,
    ConversationInfo,
    GroupParticipant,
    GroupSettingChange,
    IdentityInfo,
    MessageContent,
    MessageContext,
    PlatformError,
    PricingInfo,
)

__all__ = [
    "ECHO_FIELD",
    "UPDATE_KINDS",
    "AccountUpdate",
    "CallConnectUpdate",
    "CallStatusUpdate",
    "CallTerminateUpdate",
    "ChatOpenedUpdate",
    "GroupLifecycleUpdate",
    "GroupParticipantsUpdate",
    "GroupSettingsUpdate",
    "GroupStatusUpdate",
    "MessageUpdate",
    "NormalizationResult",
    "Skip",
    "StatusUpdate",
    "SystemUpdate",
    "UnknownUpdate",
    "Update",
    "UpdateKind",
    "UpdateSource",
    "UserPreferencesUpdate",
]

UpdateKind: TypeAlias = Literal[
    "message",
    "status",
    "account",
    "callConnect",
    "callTerminate",
    "callStatus",
    "groupLifecycle",
    "groupParticipants",
    "groupSettings",
    "groupStatus",
    "userPreferences",
    "system",
    "chatOpened",
    "unknown",
]

UPDATE_KINDS: Final[tuple[UpdateKind, ...]] = (
    "message",
    "status",
    "account",
    "callConnect",
    "callTerminate",
    "callStatus",
    "groupLifecycle",
    "groupParticipants",
    "groupSettings",
    "groupStatus",
    "userPreferences",
    "system",
    "chatOpened",
    "unknown",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateSource:
    """The change an update came from, shared by all the updates of that change.

    ``value`` is the change's raw ``value`` object (not compared, not hashed,
    not in the repr); ``entry_time`` is the entry's ``time``, when sent.
    """

    waba_id: str | None = None
    phone_number_id: str | None = None
    display_phone_number: str | None = None
    field: str = ""
    entry_time: int | None = None
    value: Mapping[str, Any] = _field(repr=False, compare=False, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class _Update:
    """What every update has: its source change and its raw item, and the routing read from them.

    The identifying fields of each kind are validated and stored when the
    envelope is normalized; every other field is a typed property read from
    ``raw`` on access (see the module docstring).
    """

    kind: ClassVar[UpdateKind]
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


def _required(raw: Mapping[str, Any], key: str) -> str:
    """A string the normalizer validated before building the update."""
    value = raw.get(key)
    return value if type(value) is str else ""


# --- the 14 kinds ----------------------------------------------------------------------


ECHO_FIELD: Final = "smb_message_echoes"


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class MessageUpdate(_Update):
    """A message item: inbound (``messages[]``), or an echo of one the business sent.

    ``type`` is the platform type and ``content`` its typed body. An echo
    (``is_echo``: an item of ``message_echoes[]`` in an ``smb_message_echoes``
    change) is a message the business sent from the WhatsApp Business app:
    ``from_`` is the business number and ``to`` the recipient. It is not
    inbound traffic.
    """

    kind: ClassVar[Literal["message"]] = "message"
    _repr_fields: ClassVar[tuple[str, ...]] = ("type",)

    @property
    def message_id(self) -> str:
        """The platform message id (``wamid....``)."""
        return _required(self.raw, "id")

    @property
    def from_(self) -> str | None:
        """The sender's WhatsApp id (for an echo, the business display phone number)."""
        return read_id(self.raw.get("from"))

    @property
    def is_echo(self) -> bool:
        """True for a message the business sent from the WhatsApp Business app (not inbound)."""
        return self.source.field == ECHO_FIELD

    @property
    def to(self) -> str | None:
        """The recipient of an echo (the user's WhatsApp id); ``None`` for inbound messages."""
        if self.source.field != ECHO_FIELD:
            return None
        return read_id(self.raw.get("to"))

    @property
    def type(self) -> str:
        """The platform message type: ``text``, ``image``, ..., ``unsupported``.

        A type that is missing or not 1-64 printable characters reads as
        ``unsupported`` (its content says ``unknown_type``).
        """
        return read_type(self.raw.get("type")) or "unsupported"

    @property
    def content(self) -> MessageContent:
        """The typed body: ``TextContent``, ``MediaContent``, ... or ``UnsupportedContent``."""
        return read_content(self.raw, self.source.value)

    @property
    def text(self) -> str | None:
        """The body of a text message, else ``None``."""
        if self.raw.get("type") != "text":
            return None
        return read_str(read_dict(self.raw.get("text")).get("body"))

    @property
    def profile_name(self) -> str | None:
        """The sender's profile name from the change's ``contacts`` (``None`` for echoes)."""
        if self.source.field == ECHO_FIELD:
            return None
        return profile_name(self.source.value, self.from_)

    @property
    def group_id(self) -> str | None:
        """The group the message was sent in, for group messages."""
        return read_id(self.raw.get("group_id"))

    @property
    def context(self) -> MessageContext | None:
        """Reply/forward information."""
        return read_context(self.raw.get("context"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class StatusUpdate(_Update):
    """A status of an outbound message (``statuses[]``): sent, delivered, read, failed, ..."""

    kind: ClassVar[Literal["status"]] = "status"
    _repr_fields: ClassVar[tuple[str, ...]] = ("status",)

    @property
    def message_id(self) -> str:
        """The id of the outbound message this status is about."""
        return _required(self.raw, "id")

    @property
    def status(self) -> str:
        """``sent``, ``delivered``, ``read``, ``failed``, ..."""
        return _required(self.raw, "status")

    @property
    def recipient_id(self) -> str | None:
        """The user (or, for group messages, the group) the message went to."""
        return read_id(self.raw.get("recipient_id"))

    @property
    def recipient_type(self) -> str | None:
        """``individual`` or ``group`` when sent."""
        return read_str(self.raw.get("recipient_type"))

    @property
    def recipient_participant_id(self) -> str | None:
        """For group statuses with participant details: the participant."""
        raw = self.raw
        value = raw.get("recipient_participant_id")
        if value is None:
            value = raw.get("recipient_participant_user_id")
        return read_id(value)

    @property
    def conversation(self) -> ConversationInfo | None:
        return read_conversation(self.raw.get("conversation"))

    @property
    def pricing(self) -> PricingInfo | None:
        return read_pricing(self.raw.get("pricing"))

    @property
    def errors(self) -> tuple[PlatformError, ...]:
        return read_errors(self.raw.get("errors"))

    @property
    def biz_opaque_callback_data(self) -> str | None:
        return read_str(self.raw.get("biz_opaque_callback_data"))


_ACCOUNT_EVENT_KEYS = ("event", "decision", "new_quality_score", "new_category", "alert_type")


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class AccountUpdate(_Update):
    """Account, template and phone-number fields; ``raw`` is the change value."""

    kind: ClassVar[Literal["account"]] = "account"
    _repr_fields: ClassVar[tuple[str, ...]] = ("event",)

    @property
    def value(self) -> Mapping[str, Any]:
        """The raw change value."""
        return self.raw

    @property
    def event(self) -> str | None:
        """The value's ``event`` (or ``decision``, ``new_quality_score``, ``new_category``)."""
        raw = self.raw
        for key in _ACCOUNT_EVENT_KEYS:
            event = raw.get(key)
            if type(event) is str:
                return event
        return None

    @property
    def timestamp(self) -> int | None:
        """The entry ``time``, else the value's ``timestamp``."""
        if self.source.entry_time is not None:
            return self.source.entry_time
        return read_timestamp(self.raw.get("timestamp"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class _CallUpdate(_Update):
    @property
    def call_id(self) -> str:
        return _required(self.raw, "id")

    @property
    def deeplink_payload(self) -> str | None:
        """The ``biz_payload`` of the call deep link the user called through."""
        return read_str(self.raw.get("deeplink_payload"))

    @property
    def cta_payload(self) -> str | None:
        """The payload of the call button the user tapped."""
        return read_str(self.raw.get("cta_payload"))

    @property
    def biz_opaque_callback_data(self) -> str | None:
        return read_str(self.raw.get("biz_opaque_callback_data"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class CallConnectUpdate(_CallUpdate):
    """``calls[]`` with ``event: connect`` (an SDP offer, or the answer to a business call)."""

    kind: ClassVar[Literal["callConnect"]] = "callConnect"

    @property
    def from_(self) -> str | None:
        return read_id(self.raw.get("from"))

    @property
    def to(self) -> str | None:
        return read_id(self.raw.get("to"))

    @property
    def direction(self) -> str | None:
        """``USER_INITIATED`` or ``BUSINESS_INITIATED``."""
        return read_str(self.raw.get("direction"))

    @property
    def session(self) -> CallSession | None:
        return read_session(self.raw.get("session"))

    @property
    def profile_name(self) -> str | None:
        return profile_name(self.source.value, self.from_)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class CallTerminateUpdate(_CallUpdate):
    """``calls[]`` with ``event: terminate``; times are Unix seconds, ``duration`` seconds."""

    kind: ClassVar[Literal["callTerminate"]] = "callTerminate"
    _repr_fields: ClassVar[tuple[str, ...]] = ("status",)

    @property
    def from_(self) -> str | None:
        return read_id(self.raw.get("from"))

    @property
    def to(self) -> str | None:
        return read_id(self.raw.get("to"))

    @property
    def direction(self) -> str | None:
        return read_str(self.raw.get("direction"))

    @property
    def status(self) -> str | None:
        """``COMPLETED`` or ``FAILED``."""
        return read_str(self.raw.get("status"))

    @property
    def start_time(self) -> int | None:
        return read_timestamp(self.raw.get("start_time"))

    @property
    def end_time(self) -> int | None:
        return read_timestamp(self.raw.get("end_time"))

    @property
    def duration(self) -> int | None:
        return read_int(self.raw.get("duration"))

    @property
    def errors(self) -> tuple[PlatformError, ...]:
        """The call's ``errors``, else the change value's."""
        errors = self.raw.get("errors")
        return read_errors(errors if errors is not None else self.source.value.get("errors"))

    @property
    def profile_name(self) -> str | None:
        return profile_name(self.source.value, self.from_)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class CallStatusUpdate(_CallUpdate):
    """``statuses[]`` of the ``calls`` field: RINGING, ACCEPTED or REJECTED for business calls."""

    kind: ClassVar[Literal["callStatus"]] = "callStatus"
    _repr_fields: ClassVar[tuple[str, ...]] = ("status",)

    @property
    def status(self) -> str | None:
        return read_str(self.raw.get("status"))

    @property
    def recipient_id(self) -> str | None:
        return read_id(self.raw.get("recipient_id"))

    @property
    def errors(self) -> tuple[PlatformError, ...]:
        return read_errors(self.raw.get("errors"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class _GroupUpdate(_Update):
    _repr_fields: ClassVar[tuple[str, ...]] = ("event_type",)

    @property
    def group_id(self) -> str | None:
        return read_id(self.raw.get("group_id"))

    @property
    def event_type(self) -> str | None:
        """The item ``type``: ``group_create``, ``group_participants_add``, ``group_suspend``..."""
        return read_str(self.raw.get("type"))

    @property
    def request_id(self) -> str | None:
        """The ``request_id`` of the asynchronous group call this result answers."""
        return read_str(self.raw.get("request_id"))

    @property
    def errors(self) -> tuple[PlatformError, ...]:
        return read_errors(self.raw.get("errors"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GroupLifecycleUpdate(_GroupUpdate):
    """``group_lifecycle_update``: results of ``group_create``/``group_delete`` (invite link)."""

    kind: ClassVar[Literal["groupLifecycle"]] = "groupLifecycle"

    @property
    def subject(self) -> str | None:
        return read_str(self.raw.get("subject"))

    @property
    def description(self) -> str | None:
        return read_str(self.raw.get("description"))

    @property
    def invite_link(self) -> str | None:
        return read_str(self.raw.get("invite_link"))

    @property
    def join_approval_mode(self) -> str | None:
        return read_str(self.raw.get("join_approval_mode"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GroupParticipantsUpdate(_GroupUpdate):
    """``group_participants_update``: joins, join requests, approvals, removals, leaves."""

    kind: ClassVar[Literal["groupParticipants"]] = "groupParticipants"

    @property
    def added_participants(self) -> tuple[GroupParticipant, ...]:
        return read_participants(self.raw.get("added_participants"))

    @property
    def removed_participants(self) -> tuple[GroupParticipant, ...]:
        return read_participants(self.raw.get("removed_participants"))

    @property
    def failed_participants(self) -> tuple[GroupParticipant, ...]:
        return read_participants(self.raw.get("failed_participants"))

    @property
    def initiated_by(self) -> str | None:
        """``business`` or ``participant``."""
        return read_str(self.raw.get("initiated_by"))

    @property
    def reason(self) -> str | None:
        return read_str(self.raw.get("reason"))

    @property
    def join_request_id(self) -> str | None:
        return read_id(self.raw.get("join_request_id"))

    @property
    def wa_id(self) -> str | None:
        """The user of a join request."""
        return read_id(self.raw.get("wa_id"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GroupSettingsUpdate(_GroupUpdate):
    """``group_settings_update``: subject, description and profile picture results."""

    kind: ClassVar[Literal["groupSettings"]] = "groupSettings"

    @property
    def subject(self) -> GroupSettingChange | None:
        return read_setting(self.raw.get("group_subject"), "text")

    @property
    def description(self) -> GroupSettingChange | None:
        return read_setting(self.raw.get("group_description"), "text")

    @property
    def profile_picture(self) -> GroupSettingChange | None:
        """``value`` is the picture's sha256."""
        return read_setting(self.raw.get("profile_picture"), "sha256")


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GroupStatusUpdate(_GroupUpdate):
    """``group_status_update``: ``group_suspend`` or ``group_suspend_cleared``."""

    kind: ClassVar[Literal["groupStatus"]] = "groupStatus"

    @property
    def suspended(self) -> bool | None:
        """True once suspended (treat the group as unusable), False once cleared."""
        return _SUSPENDED.get(self.event_type) if self.event_type is not None else None


_SUSPENDED = {"group_suspend": True, "group_suspend_cleared": False}


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UserPreferencesUpdate(_Update):
    """``user_preferences[]``: a user stopped or resumed marketing messages."""

    kind: ClassVar[Literal["userPreferences"]] = "userPreferences"
    _repr_fields: ClassVar[tuple[str, ...]] = ("category", "value")

    @property
    def wa_id(self) -> str | None:
        return read_id(self.raw.get("wa_id"))

    @property
    def category(self) -> str | None:
        """``marketing_messages``."""
        return read_str(self.raw.get("category"))

    @property
    def value(self) -> str | None:
        """``stop`` or ``resume``."""
        return read_str(self.raw.get("value"))

    @property
    def detail(self) -> str | None:
        return read_str(self.raw.get("detail"))

    @property
    def profile_name(self) -> str | None:
        return profile_name(self.source.value, self.wa_id)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class SystemUpdate(_Update):
    """A ``type: system`` message: the customer changed number or identity."""

    kind: ClassVar[Literal["system"]] = "system"
    _repr_fields: ClassVar[tuple[str, ...]] = ("system_type",)

    @property
    def message_id(self) -> str:
        return _required(self.raw, "id")

    @property
    def from_(self) -> str | None:
        return read_id(self.raw.get("from"))

    @property
    def system_type(self) -> str | None:
        """``customer_changed_number`` or ``customer_identity_changed``."""
        return read_str(read_dict(self.raw.get("system")).get("type"))

    @property
    def body(self) -> str | None:
        return read_str(read_dict(self.raw.get("system")).get("body"))

    @property
    def new_wa_id(self) -> str | None:
        system = read_dict(self.raw.get("system"))
        value = system.get("wa_id")
        return read_id(value if value is not None else system.get("new_wa_id"))

    @property
    def customer(self) -> str | None:
        return read_id(read_dict(self.raw.get("system")).get("customer"))

    @property
    def identity(self) -> IdentityInfo | None:
        return read_identity(self.raw.get("identity"))

    @property
    def profile_name(self) -> str | None:
        return profile_name(self.source.value, self.from_)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ChatOpenedUpdate(_Update):
    """A ``type: request_welcome`` message: the user opened the chat for the first time."""

    kind: ClassVar[Literal["chatOpened"]] = "chatOpened"

    @property
    def message_id(self) -> str:
        return _required(self.raw, "id")

    @property
    def from_(self) -> str | None:
        return read_id(self.raw.get("from"))

    @property
    def profile_name(self) -> str | None:
        return profile_name(self.source.value, self.from_)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UnknownUpdate(_Update):
    """A change whose ``field`` this version does not know; ``value`` is the raw change value."""

    kind: ClassVar[Literal["unknown"]] = "unknown"

    @property
    def value(self) -> Mapping[str, Any]:
        return self.raw

    @property
    def timestamp(self) -> int | None:
        """The entry ``time``, else the value's ``timestamp``."""
        if self.source.entry_time is not None:
            return self.source.entry_time
        return read_timestamp(self.raw.get("timestamp"))


Update: TypeAlias = (
    MessageUpdate
    | StatusUpdate
    | AccountUpdate
    | CallConnectUpdate
    | CallTerminateUpdate
    | CallStatusUpdate
    | GroupLifecycleUpdate
    | GroupParticipantsUpdate
    | GroupSettingsUpdate
    | GroupStatusUpdate
    | UserPreferencesUpdate
    | SystemUpdate
    | ChatOpenedUpdate
    | UnknownUpdate
)


# --- the result ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Skip:
    """A part of the envelope that was not turned into an update, and why.

    ``location`` is a structural path (``entry[0].changes[1].value.messages[2]``)
    that never holds a value from the payload; ``kind`` is the update kind the
    part would have produced, when known; ``count`` is how many items the skip
    stands for (a lower bound for ``too_many_items``).
    """

    reason: str
    location: str
    kind: UpdateKind | None = None
    count: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class NormalizationResult:
    """Every update of an envelope, in payload order, and every skipped part."""

    updates: tuple[Update, ...] = ()
    skipped: tuple[Skip, ...] = ()

    @property
    def received(self) -> int:
        """How many updates the envelope normalized into."""
        return len(self.updates)
