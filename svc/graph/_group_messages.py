"""Group messages: text, media, standard templates and pins, addressed by group id.

Each renders with ``recipient_type: group`` and ``to`` the checked group id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ._content_messages import MediaFields, text_object
from ._envelope import Payload, envelope
from ._errors import GraphRequestValidationError
from ._message import Message, builder
from ._template_messages import template_object
from ._validate import check_choice, check_group_id, check_id, check_int

__all__ = [
    "GroupMediaMessage",
    "GroupPinMessage",
    "GroupTemplateMessage",
    "GroupTextMessage",
    "build_group_media_message",
    "build_group_pin_message",
    "build_group_template_message",
    "build_group_text_message",
]

MAX_EXPIRATION_DAYS: Final = 30
_GROUP_TEMPLATE_CATEGORIES: Final = frozenset({"UTILITY", "MARKETING"})
_PIN_TYPES: Final = frozenset({"pin", "unpin"})


def _to_group(
    group: str, message_type: str, body: Payload, reply_to_message_id: str | None = None
) -> Payload:
    """The envelope of a group message: ``to`` the checked group id, ``recipient_type: group``."""
    return envelope(
        {"to": group},
        message_type,
        body,
        reply_to_message_id=reply_to_message_id,
        recipient_type="group",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupTextMessage(Message):
    """A text message to a group (``to`` is the group id)."""

    to: str
    text: str
    preview_url: bool | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        group = check_group_id(self.to)
        body = text_object(self.text, self.preview_url)
        return _to_group(group, "text", body, self.reply_to_message_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupMediaMessage(MediaFields):
    """A media message to a group, with the rules of ``MediaMessage``."""

    def render(self) -> Payload:
        group = check_group_id(self.to)
        name, media = self.media()
        return _to_group(group, name, media, self.reply_to_message_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupTemplateMessage(Message):
    """A standard template to a group: ``template_category`` must be UTILITY or MARKETING.

    The category is a local gate (authentication templates cannot go to
    groups); it is not part of the wire payload.
    """

    to: str
    name: str
    language_code: str
    template_category: str
    components: Sequence[Mapping[str, Any]] | None = None

    def render(self) -> Payload:
        group = check_group_id(self.to)
        check_choice(self.template_category, "template_category", _GROUP_TEMPLATE_CATEGORIES)
        template = template_object(self.name, self.language_code, self.components)
        return _to_group(group, "template", template)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupPinMessage(Message):
    """Pin (``expiration_days`` 1..30 required) or unpin (no expiration) a group message."""

    to: str
    pin_type: Literal["pin", "unpin"]
    message_id: str
    expiration_days: int | None = None

    def render(self) -> Payload:
        group = check_group_id(self.to)
        kind = check_choice(self.pin_type, "pin_type", _PIN_TYPES)
        pin: Payload = {"type": kind, "message_id": check_id(self.message_id, "message_id")}
        if kind == "pin":
            if self.expiration_days is None:
                raise GraphRequestValidationError(
                    "expiration_days (1..30) is required to pin", field="expiration_days"
                )
            pin["expiration_days"] = check_int(
                self.expiration_days, "expiration_days", minimum=1, maximum=MAX_EXPIRATION_DAYS
            )
        elif self.expiration_days is not None:
            raise GraphRequestValidationError(
                "expiration_days is only for pin, not unpin", field="expiration_days"
            )
        return _to_group(group, "pin", pin)


build_group_text_message = builder(GroupTextMessage)
build_group_media_message = builder(GroupMediaMessage)
build_group_template_message = builder(GroupTemplateMessage)
build_group_pin_message = builder(GroupPinMessage)
