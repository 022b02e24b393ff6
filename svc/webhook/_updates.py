"""The update kinds: the ``UpdateKind`` literal, the message-field updates and the kind table.

Every update has a ``kind`` (one of ``UPDATE_KINDS``), its ``source`` change
and its ``raw`` item (see ``_base``). ``UPDATE_CLASSES`` maps each kind to its
class, once: ``UPDATE_KINDS`` and the facade's typed registration derive from
it, so a new kind is added here and in the normalizer only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal, TypeAlias, get_args

from ._agent_updates import MessagingHandoverUpdate, StandbyUpdate
from ._base import ECHO_FIELD, StatusReads, UpdateBase, UpdateSource, required
from ._coexistence_updates import HistoryUpdate, SmbAppStateSyncUpdate
from ._field_updates import (
    AccountUpdate,
    CallConnectUpdate,
    CallStatusUpdate,
    CallTerminateUpdate,
    GroupLifecycleUpdate,
    GroupParticipantsUpdate,
    GroupSettingsUpdate,
    GroupStatusUpdate,
    UnknownUpdate,
    UserPreferencesUpdate,
)
from ._read import (
    RECIPIENT_KEYS,
    SENDER_KEYS,
    TO_KEYS,
    UserMemo,
    contact_user,
    message_type,
    profile_name,
    read_content,
    read_context,
    read_dict,
    read_id,
    read_identity,
    read_referral,
    read_str,
    read_timestamp,
    read_timestamp_or,
    read_user_at,
    text_body,
)
from ._values import (
    IdentityInfo,
    MessageContent,
    MessageContext,
    Referral,
    UserIdentity,
)

__all__ = [
    "ECHO_FIELD",
    "UPDATE_CLASSES",
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
    "HistoryUpdate",
    "MessageUpdate",
    "MessagingHandoverUpdate",
    "NormalizationResult",
    "Skip",
    "SmbAppStateSyncUpdate",
    "StandbyUpdate",
    "StatusUpdate",
    "SystemUpdate",
    "UnknownUpdate",
    "Update",
    "UpdateKind",
    "UpdateSource",
    "UserIdUpdate",
    "UserPreferencesUpdate",
    "read_users",
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
    "userIdUpdate",
    "history",
    "smbAppStateSync",
    "standby",
    "messagingHandover",
    "unknown",
]

UPDATE_KINDS: Final[tuple[UpdateKind, ...]] = get_args(UpdateKind)


# --- the message-field kinds -------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class _MessageItem(UpdateBase):
    """What an item of ``messages[]`` (or ``message_echoes[]``) has: an id, a user and a time.

    A message is delivered even without a readable ``timestamp``: it then
    reads the time the caller received the delivery, and says so.
    """

    @property
    def message_id(self) -> str:
        """The platform message id (``wamid....``)."""
        return required(self.raw, "id")

    @property
    def from_(self) -> str | None:
        """The sender's WhatsApp id (for an echo, the business display phone number)."""
        return read_id(self.raw.get("from"))

    @property
    def profile_name(self) -> str | None:
        """The sender's profile name from the change's ``contacts`` (``None`` for echoes)."""
        if self.source.field == ECHO_FIELD:
            return None
        return profile_name(self.source.value, self.user)

    @property
    def timestamp(self) -> int | None:
        """The platform timestamp (Unix seconds), else the receipt time the caller passed in."""
        return read_timestamp_or(self.raw.get("timestamp"), self.source.received_at)

    @property
    def timestamp_missing(self) -> bool:
        """True when the item had no readable ``timestamp`` (``timestamp`` is the receipt time)."""
        return read_timestamp(self.raw.get("timestamp")) is None

    @property
    def user(self) -> UserIdentity | None:
        """The user who sent the item (for an echo, the user it went to).

        Read from ``from``/``from_user_id``/``from_parent_user_id`` (an echo's
        ``to``/``to_user_id``/``to_parent_user_id``) and completed from the
        matching ``contacts[]`` entry; for an item that names nobody, the
        identity of the change's only ``contacts[]`` entry.
        """
        return self._user(None)

    def _user(self, memo: UserMemo | None) -> UserIdentity | None:
        value = self.source.value
        if self.source.field == ECHO_FIELD:
            return read_user_at(value, self.raw, TO_KEYS, memo)
        user = read_user_at(value, self.raw, SENDER_KEYS, memo)
        return user if user is not None else contact_user(value, memo)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class MessageUpdate(_MessageItem):
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
        return message_type(self.raw)

    @property
    def content(self) -> MessageContent:
        """The typed body: ``TextContent``, ``MediaContent``, ... or ``UnsupportedContent``."""
        return read_content(self.raw, self.source.value)

    @property
    def text(self) -> str | None:
        """The body of a text message, else ``None``."""
        return text_body(self.raw)

    @property
    def group_id(self) -> str | None:
        """The group the message was sent in, for group messages."""
        return read_id(self.raw.get("group_id"))

    @property
    def context(self) -> MessageContext | None:
        """Reply/forward information."""
        return read_context(self.raw.get("context"))

    @property
    def referral(self) -> Referral | None:
        """The click-to-WhatsApp ad or post the user came from (``referral``), when sent."""
        return read_referral(self.raw.get("referral"))

    @property
    def answers_contact_request(self) -> bool:
        """True for a ``contacts`` message the user sent in answer to a contact-info request.

        The platform marks it with an ``origin`` (a string or ``{"type": ...}``,
        on the message or its ``context``) of ``request_contact_info``, in any case.
        """
        if self.raw.get("type") != "contacts":
            return False
        return _CONTACT_REQUEST in (
            _origin(self.raw.get("origin")),
            _origin(read_dict(self.raw.get("context")).get("origin")),
        )


_CONTACT_REQUEST: Final = "request_contact_info"


def _origin(value: Any) -> str | None:
    if type(value) is dict:
        value = value.get("type")
    return value.lower() if type(value) is str else None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class StatusUpdate(StatusReads, UpdateBase):
    """A status of an outbound message (``statuses[]``): sent, delivered, read, failed, ..."""

    kind: ClassVar[Literal["status"]] = "status"
    _repr_fields: ClassVar[tuple[str, ...]] = ("status",)

    @property
    def message_id(self) -> str:
        """The id of the outbound message this status is about."""
        return required(self.raw, "id")

    @property
    def status(self) -> str:
        """``sent``, ``delivered``, ``read``, ``failed``, ..."""
        return required(self.raw, "status")

    @property
    def recipient_type(self) -> str | None:
        """``individual`` or ``group`` when sent."""
        return read_str(self.raw.get("recipient_type"))

    @property
    def recipient_user_id(self) -> str | None:
        """The recipient's BSUID (``recipient_user_id``), when sent."""
        return read_id(self.raw.get("recipient_user_id"))

    @property
    def user(self) -> UserIdentity | None:
        """The user the message went to (``None`` for a group recipient).

        From ``recipient_id``/``recipient_user_id``/``recipient_parent_user_id``,
        completed from the matching ``contacts[]`` entry (failed statuses
        come without ``contacts``).
        """
        return self._user(None)

    def _user(self, memo: UserMemo | None) -> UserIdentity | None:
        if self.raw.get("recipient_type") == "group":
            return None
        return read_user_at(self.source.value, self.raw, RECIPIENT_KEYS, memo)

    @property
    def recipient_participant_id(self) -> str | None:
        """For group statuses with participant details: the participant."""
        raw = self.raw
        value = raw.get("recipient_participant_id")
        if value is None:
            value = raw.get("recipient_participant_user_id")
        return read_id(value)

    @property
    def biz_opaque_callback_data(self) -> str | None:
        return read_str(self.raw.get("biz_opaque_callback_data"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class SystemUpdate(_MessageItem):
    """A ``type: system`` message: the user changed phone number or business-scoped user id.

    ``user`` is the identity the message came from (the old one) and
    ``new_user`` the one the platform reports: ``user_changed_number`` gives
    the new ``wa_id`` (``system.wa_id``), ``user_changed_user_id`` the new
    ``user_id`` (``system.user_id``, and ``system.parent_user_id`` when sent)
    and no phone number. System messages carry no ``contacts``.
    """

    kind: ClassVar[Literal["system"]] = "system"
    _repr_fields: ClassVar[tuple[str, ...]] = ("system_type",)

    @property
    def _system(self) -> Mapping[str, Any]:
        """The item's ``system`` object (empty when missing)."""
        return read_dict(self.raw.get("system"))

    @property
    def system_type(self) -> str | None:
        """``user_changed_number``, ``user_changed_user_id`` (older: ``customer_changed_number``,
        ``customer_identity_changed``)."""
        return read_str(self._system.get("type"))

    @property
    def body(self) -> str | None:
        return read_str(self._system.get("body"))

    @property
    def new_wa_id(self) -> str | None:
        system = self._system
        value = system.get("wa_id")
        return read_id(value if value is not None else system.get("new_wa_id"))

    @property
    def new_user_id(self) -> str | None:
        """The new BSUID of a ``user_changed_user_id`` message."""
        return read_id(self._system.get("user_id"))

    @property
    def new_user(self) -> UserIdentity | None:
        """The user's new identity as the system message reports it (``None`` if none)."""
        system = self._system
        if (
            self.new_wa_id is None
            and self.new_user_id is None
            and (read_id(system.get("parent_user_id")) is None)
        ):
            return None
        return UserIdentity(
            wa_id=self.new_wa_id,
            user_id=self.new_user_id,
            parent_user_id=read_id(system.get("parent_user_id")),
        )

    @property
    def customer(self) -> str | None:
        return read_id(self._system.get("customer"))

    @property
    def identity(self) -> IdentityInfo | None:
        return read_identity(self.raw.get("identity"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ChatOpenedUpdate(_MessageItem):
    """A ``type: request_welcome`` message: the user opened the chat for the first time."""

    kind: ClassVar[Literal["chatOpened"]] = "chatOpened"


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UserIdUpdate(UpdateBase):
    """An item of ``user_id_update[]``: the platform changed a user's business-scoped user id.

    The item names the user (``wa_id`` when the phone number may be shared)
    and gives ``user_id`` (and ``parent_user_id``, for linked portfolios) as
    ``{"previous": ..., "current": ...}``.
    """

    kind: ClassVar[Literal["userIdUpdate"]] = "userIdUpdate"

    @property
    def wa_id(self) -> str | None:
        return read_id(self.raw.get("wa_id"))

    @property
    def previous(self) -> UserIdentity | None:
        """The identity before the change (``None`` when no previous id was sent)."""
        return self._side("previous")

    @property
    def current(self) -> UserIdentity | None:
        """The identity after the change."""
        return self._side("current")

    @property
    def user(self) -> UserIdentity | None:
        """The user now: ``current``."""
        return self.current

    @property
    def timestamp(self) -> int | None:
        """The item's ``timestamp``, else the entry ``time``."""
        return read_timestamp_or(self.raw.get("timestamp"), self.source.entry_time)

    def _side(self, side: str) -> UserIdentity | None:
        user_id = read_id(read_dict(self.raw.get("user_id")).get(side))
        parent = read_id(read_dict(self.raw.get("parent_user_id")).get(side))
        if user_id is None and parent is None:
            return None
        return UserIdentity(wa_id=self.wa_id, user_id=user_id, parent_user_id=parent)


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
    | UserIdUpdate
    | HistoryUpdate
    | SmbAppStateSyncUpdate
    | StandbyUpdate
    | MessagingHandoverUpdate
    | UnknownUpdate
)

UPDATE_CLASSES: Final[Mapping[UpdateKind, type[Update]]] = {
    "message": MessageUpdate,
    "status": StatusUpdate,
    "account": AccountUpdate,
    "callConnect": CallConnectUpdate,
    "callTerminate": CallTerminateUpdate,
    "callStatus": CallStatusUpdate,
    "groupLifecycle": GroupLifecycleUpdate,
    "groupParticipants": GroupParticipantsUpdate,
    "groupSettings": GroupSettingsUpdate,
    "groupStatus": GroupStatusUpdate,
    "userPreferences": UserPreferencesUpdate,
    "system": SystemUpdate,
    "chatOpened": ChatOpenedUpdate,
    "userIdUpdate": UserIdUpdate,
    "history": HistoryUpdate,
    "smbAppStateSync": SmbAppStateSyncUpdate,
    "standby": StandbyUpdate,
    "messagingHandover": MessagingHandoverUpdate,
    "unknown": UnknownUpdate,
}
"""The class of each kind, in ``UPDATE_KINDS`` order (``UPDATE_CLASSES[k].kind == k``)."""


def read_users(updates: Sequence[Update]) -> list[UserIdentity | None]:
    """Each update's ``user`` (``None`` for a kind without one), in order.

    Equal to reading ``update.user`` of each, but a user a change names again
    and again (a batch from one sender, statuses to one recipient) is read
    from the change once.
    """
    memo: UserMemo = {}
    return [
        update._user(memo)
        if isinstance(update, (_MessageItem, StatusUpdate))
        else getattr(update, "user", None)
        for update in updates
    ]


# --- the result ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Skip:
    """A part of the envelope that was not turned into an update, and why.

    ``location`` is a structural path (``entry[0].changes[1].value.messages[2]``)
    that never holds a value from the payload; ``kind`` is the update kind the
    part would have produced, when known; ``count`` is how many items the skip
    stands for.
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
