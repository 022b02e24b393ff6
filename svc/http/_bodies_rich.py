"""Composer request bodies of the rich interactive kinds: Flow, media carousel, media headers.

Also the two bases every send-route body extends (``StrictModel``: strict
types, no unknown fields; ``SendModel``: plus ``bizOpaqueCallbackData``).
Field rules live in the ``svc.graph`` builders these bodies map to.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from svc.graph import build_interactive_carousel_message, build_interactive_flow_message

__all__ = [
    "CarouselCard",
    "InteractiveCarouselBody",
    "InteractiveFlowBody",
    "MediaHeaderIn",
    "Recipient",
    "SendModel",
    "StrictModel",
    "carousel_payload",
    "flow_payload",
    "media_header",
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


class MediaHeaderIn(StrictModel):
    """An image, video or document header by ``id`` or ``link`` (exactly one)."""

    type: Literal["image", "video", "document"]
    id: str | None = None
    link: str | None = None
    filename: str | None = None


class InteractiveFlowBody(SendModel):
    """A Flow message: ``flowId`` or ``flowName``; navigating needs ``screen``."""

    type: Literal["interactiveFlow"]
    to: Recipient
    bodyText: str
    flowCta: str
    flowId: str | None = None
    flowName: str | None = None
    flowToken: str | None = None
    flowAction: Literal["navigate", "data_exchange"] | None = None
    screen: str | None = None
    data: dict[str, Any] | None = None
    mode: Literal["draft", "published"] | None = None
    headerText: str | None = None
    header: MediaHeaderIn | None = None
    footerText: str | None = None
    replyToMessageId: str | None = None


class CarouselCardHeader(StrictModel):
    type: Literal["image", "video"]
    id: str | None = None
    link: str | None = None


class CarouselUrlButton(StrictModel):
    type: Literal["url"]
    displayText: str
    url: str


class CarouselQuickReplyButton(StrictModel):
    type: Literal["quickReply"]
    id: str
    title: str


CarouselButton = Annotated[
    CarouselUrlButton | CarouselQuickReplyButton, Field(discriminator="type")
]


class CarouselCard(StrictModel):
    """One card: one ``url`` button or 1..3 ``quickReply`` buttons, the same on every card."""

    header: CarouselCardHeader
    bodyText: str | None = None
    buttons: list[CarouselButton]


class InteractiveCarouselBody(SendModel):
    """A media carousel of 2..10 cards."""

    type: Literal["interactiveCarousel"]
    to: Recipient
    bodyText: str
    cards: list[CarouselCard]
    replyToMessageId: str | None = None


def media_header(header: MediaHeaderIn | None) -> Payload | None:
    """The graph builders' flat header input (``{type, id | link, filename?}``), or None."""
    return None if header is None else header.model_dump(exclude_none=True)


def _card(card: CarouselCard) -> Payload:
    buttons: list[Payload] = [
        {"type": "url", "display_text": button.displayText, "url": button.url}
        if isinstance(button, CarouselUrlButton)
        else {"type": "quick_reply", "id": button.id, "title": button.title}
        for button in card.buttons
    ]
    out: Payload = {"header": card.header.model_dump(exclude_none=True), "buttons": buttons}
    if card.bodyText is not None:
        out["body_text"] = card.bodyText
    return out


def flow_payload(b: InteractiveFlowBody) -> Payload:
    """The wire payload of a Flow body (``build_interactive_flow_message``)."""
    return build_interactive_flow_message(
        to=b.to,
        body_text=b.bodyText,
        flow_cta=b.flowCta,
        flow_id=b.flowId,
        flow_name=b.flowName,
        flow_token=b.flowToken,
        flow_action=b.flowAction,
        screen=b.screen,
        data=b.data,
        mode=b.mode,
        header_text=b.headerText,
        header=media_header(b.header),
        footer_text=b.footerText,
        reply_to_message_id=b.replyToMessageId,
    )


def carousel_payload(b: InteractiveCarouselBody) -> Payload:
    """The wire payload of a carousel body (``build_interactive_carousel_message``)."""
    return build_interactive_carousel_message(
        to=b.to,
        body_text=b.bodyText,
        cards=[_card(card) for card in b.cards],
        reply_to_message_id=b.replyToMessageId,
    )
