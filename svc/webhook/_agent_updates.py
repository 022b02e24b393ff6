"""Updates of a number shared with another responder: ``standby`` items and ``messaging_handovers``.

With Meta's business agent (Meta Business AI) on a number, or conversation
routing between apps, one responder holds each user's thread at a time. The
threads the app does not hold arrive on the ``standby`` field, in
``value.standby``: the user's messages (``messages[]``), the messages the
holder sent (``message_echoes[]``, each with its ``message``) and their
statuses (``statuses[]``). A change of holder arrives on
``messaging_handovers``: ``type`` ``control_passed`` (to the new holder) or
``control_taken`` (to the previous one), the business number in
``recipient`` and the user in ``sender``. Both are kinds of their own, so a
handler of ``message`` never answers a thread another responder holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal

from ._base import ChangeUpdate, StatusReads, UpdateBase, required
from ._read import (
    RECIPIENT_KEYS,
    SENDER_KEYS,
    TO_KEYS,
    contact_user,
    message_type,
    profile_name,
    read_content,
    read_context,
    read_dict,
    read_id,
    read_str,
    read_timestamp_or,
    read_user,
    read_user_at,
    text_body,
)
from ._values import (
    MessageContent,
    MessageContext,
    UserIdentity,
)

__all__ = [
    "HANDOVER_FIELD",
    "STANDBY_FIELD",
    "MessagingHandoverUpdate",
    "StandbyItem",
    "StandbyUpdate",
]

STANDBY_FIELD: Final = "standby"
HANDOVER_FIELD: Final = "messaging_handovers"

StandbyItem = Literal["message", "echo", "status"]


def standby_container(value: Mapping[str, Any]) -> Mapping[str, Any]:
    """Where a standby change keeps its lists and contacts: ``value.standby``, else ``value``."""
    inner = value.get(STANDBY_FIELD)
    return inner if type(inner) is dict else value


def standby_item(raw: Mapping[str, Any]) -> StandbyItem:
    """Which list a standby item belongs to, read from the item itself.

    A status has a ``status`` string; an echo its sent ``message`` object (or,
    flat, a ``to``); anything else is a user's message.
    """
    if type(raw.get("status")) is str:
        return "status"
    if type(raw.get("message")) is dict or "to" in raw:
        return "echo"
    return "message"


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class StandbyUpdate(StatusReads, UpdateBase):
    """One item of a ``standby`` change: a thread another responder (Meta's agent) holds.

    ``item`` says what it is: the user's ``message``, an ``echo`` of a
    message the holder sent, or the ``status`` of such a message. Message
    and echo read like a ``MessageUpdate`` (``type``, ``content``, ``text``,
    ``context``, ``user``); a status like a ``StatusUpdate`` (``status``,
    ``pricing``, ``errors``).
    """

    kind: ClassVar[Literal["standby"]] = "standby"
    _repr_fields: ClassVar[tuple[str, ...]] = ("item",)

    @property
    def item(self) -> StandbyItem:
        """``message``, ``echo`` or ``status``."""
        return standby_item(self.raw)

    @property
    def is_echo(self) -> bool:
        """True for a message the holder of the thread sent (not inbound traffic)."""
        return self.item == "echo"

    @property
    def message_id(self) -> str:
        """The message id (for a status, the id of the message it is about)."""
        return required(self.raw, "id")

    @property
    def _message(self) -> Mapping[str, Any]:
        """The message object: an echo's sent ``message`` (when nested), else the item."""
        inner = self.raw.get("message")
        return inner if type(inner) is dict else self.raw

    @property
    def _container(self) -> Mapping[str, Any]:
        return standby_container(self.source.value)

    @property
    def type(self) -> str | None:
        """The message type (``unsupported`` when unreadable); ``None`` for a status."""
        if self.item == "status":
            return None
        return message_type(self._message)

    @property
    def content(self) -> MessageContent | None:
        """The typed body of a message or echo; ``None`` for a status."""
        if self.item == "status":
            return None
        return read_content(self._message, self._container)

    @property
    def text(self) -> str | None:
        """The body of a text message or echo, else ``None``."""
        if self.item == "status":
            return None
        return text_body(self._message)

    @property
    def context(self) -> MessageContext | None:
        return read_context(self._message.get("context"))

    @property
    def from_(self) -> str | None:
        """The user who sent a message (an echo's sender, when it names one)."""
        return read_id(self._message.get("from"))

    @property
    def to(self) -> str | None:
        """The user an echo went to; ``None`` for the user's own messages and statuses."""
        if self.item != "echo":
            return None
        return read_id(self._message.get("to"))

    @property
    def profile_name(self) -> str | None:
        """The user's profile name from the change's ``contacts`` (a user's message only)."""
        if self.item != "message":
            return None
        return profile_name(self._container, self.user)

    @property
    def user(self) -> UserIdentity | None:
        """The user of the thread: the sender of a message, the user an echo or status went to."""
        item = self.item
        container = self._container
        if item == "status":
            return read_user_at(container, self.raw, RECIPIENT_KEYS)
        keys = TO_KEYS if item == "echo" else SENDER_KEYS
        user = read_user_at(container, self._message, keys)
        return user if user is not None else contact_user(container)

    @property
    def status(self) -> str | None:
        """``sent``, ``delivered``, ``read``, ... of a status; ``None`` otherwise."""
        return read_str(self.raw.get("status"))



@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class MessagingHandoverUpdate(ChangeUpdate):
    """A ``messaging_handovers`` change: the thread of a user changed holder; ``raw`` is the value.

    ``event`` is ``control_passed`` (sent to the new holder) or
    ``control_taken`` (sent to the previous one). The roles are the
    platform's words (``ai_agent`` for Meta's agent, ``escalation`` for the
    escalation partner); ``metadata`` is what the app that moved the thread
    attached; ``summary`` is the conversation summary the previous holder
    handed over, when sent (message content: never logged or stored).
    """

    kind: ClassVar[Literal["messagingHandover"]] = "messagingHandover"
    _repr_fields: ClassVar[tuple[str, ...]] = ("event",)

    @property
    def event(self) -> str | None:
        """``control_passed`` or ``control_taken`` (the value's ``type``)."""
        return read_str(self.raw.get("type"))

    @property
    def _control(self) -> Mapping[str, Any]:
        event = self.event
        return read_dict(self.raw.get(event)) if event is not None else read_dict(None)

    @property
    def previous_owner_role(self) -> str | None:
        return read_str(self._control.get("previous_owner_role"))

    @property
    def new_owner_role(self) -> str | None:
        return read_str(self._control.get("new_owner_role"))

    @property
    def previous_owner_app_id(self) -> str | None:
        return read_id(self._control.get("previous_owner_app_id"))

    @property
    def previous_owner_app_role(self) -> str | None:
        """The previous holder's app role (``meta_business_agent`` for Meta's agent)."""
        return read_str(self._control.get("previous_owner_app_role"))

    @property
    def new_owner_app_id(self) -> str | None:
        return read_id(self._control.get("new_owner_app_id"))

    @property
    def metadata(self) -> str | None:
        """What the app that passed or took the thread attached (its ``metadata``)."""
        return read_str(self._control.get("metadata"))

    @property
    def summary(self) -> str | None:
        """The handed-over ``conversation_context.summary.text``, when sent."""
        context = self._control.get("conversation_context")
        if context is None:
            context = self.raw.get("conversation_context")
        return read_str(read_dict(read_dict(context).get("summary")).get("text"))

    @property
    def user(self) -> UserIdentity | None:
        """The user of the thread (``sender``: ``wa_id`` or ``phone_number``, ``user_id``)."""
        sender = read_dict(self.raw.get("sender"))
        phone = sender.get("wa_id")
        if phone is None:
            phone = sender.get("phone_number")
            if type(phone) is str and phone.startswith("+"):
                phone = phone[1:]
        return read_user(self.raw, phone, sender.get("user_id"), sender.get("parent_user_id"))

    @property
    def timestamp(self) -> int | None:
        """The value's ``timestamp``, else the entry ``time``."""
        return read_timestamp_or(self.raw.get("timestamp"), self.source.entry_time)
