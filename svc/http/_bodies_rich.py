"""The parts every send-route body is made of: the bases, the recipient and the nested shapes.

``StrictModel`` (strict types, no unknown fields) and ``SendModel`` (plus
``phoneNumberId`` and ``bizOpaqueCallbackData``) are the bases of every body;
``BodyPart`` is a nested shape, camelCase in JSON, whose ``graph_input()`` is the
snake_case mapping the graph declaration checks. Field rules live in ``svc.graph``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_snake

__all__ = [
    "BodyPart",
    "CarouselCard",
    "MediaHeaderIn",
    "Recipient",
    "SendModel",
    "StrictModel",
]

Payload = dict[str, Any]

Recipient = Annotated[
    str,
    Field(
        description="The user: a phone number / wa_id (sent upstream as `to`), a "
        "business-scoped user id (BSUID, `US.13491208655302741918`) or a parent BSUID "
        "(`US.ENT.11815799212886844830`), both sent as `recipient`; a group id when "
        "`recipientType` is `group`. Authentication templates with a one-tap, zero-tap or "
        "copy-code button take a phone number only."
    ),
]


class StrictModel(BaseModel):
    """Strict JSON types, no unknown fields, immutable: the base of every request body."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SendModel(StrictModel):
    """A message body: the business number to send from, and ``bizOpaqueCallbackData``.

    ``phoneNumberId`` absent means the profile's default number; ``bizOpaqueCallbackData``
    (<= 512) is echoed on the message's status updates.
    """

    phoneNumberId: str | None = Field(
        default=None,
        description="The business phone number id to send from, one the service serves; "
        "absent: the profile's default number.",
    )
    bizOpaqueCallbackData: str | None = None


class BodyPart(StrictModel):
    """A nested shape of a body: camelCase in JSON, the graph's snake_case input out."""

    def graph_input(self) -> Payload:
        """The snake_case mapping the graph declaration checks (``None`` fields left out)."""
        return {to_snake(key): graph_input(value) for key, value in self if value is not None}


def graph_input(value: Any) -> Any:
    """A body field's value as the graph declaration takes it (parts in snake_case)."""
    if isinstance(value, BodyPart):
        return value.graph_input()
    if isinstance(value, list):
        return [graph_input(item) for item in value]
    return value


class MediaHeaderIn(BodyPart):
    """An image, video or document header by ``id`` or ``link`` (exactly one)."""

    type: Literal["image", "video", "document"]
    id: str | None = None
    link: str | None = None
    filename: str | None = None


class CarouselCardHeader(BodyPart):
    type: Literal["image", "video"]
    id: str | None = None
    link: str | None = None


class CarouselUrlButton(BodyPart):
    type: Literal["url"]
    displayText: str
    url: str


class CarouselQuickReplyButton(BodyPart):
    type: Literal["quickReply"]
    id: str
    title: str

    def graph_input(self) -> Payload:
        return {"type": "quick_reply", "id": self.id, "title": self.title}


CarouselButton = Annotated[
    CarouselUrlButton | CarouselQuickReplyButton, Field(discriminator="type")
]


class CarouselCard(BodyPart):
    """One card: one ``url`` button or 1..3 ``quickReply`` buttons, the same on every card."""

    header: CarouselCardHeader
    bodyText: str | None = None
    buttons: list[CarouselButton]
