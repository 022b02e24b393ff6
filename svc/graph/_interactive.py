"""Interactive Flow and media-carousel message builders (pure, validated, exact wire JSON).

A Flow message opens a published (or draft) WhatsApp Flow from a CTA button;
a carousel shows 2..10 horizontally scrolling cards with an image or video
header and either one URL button or quick-reply buttons each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ._envelope import Payload, address, interactive_message
from ._errors import GraphRequestValidationError
from ._interactive_header import interactive_media_header
from ._interactive_messages import MAX_BUTTON_ID, MAX_BUTTON_TITLE
from ._message import Message, builder
from ._validate import (
    check_choice,
    check_id,
    check_label,
    check_link,
    check_mapping,
    check_sequence,
    check_text,
    checked_objects,
)

__all__ = [
    "FLOW_MESSAGE_VERSION",
    "InteractiveCarouselMessage",
    "InteractiveFlowMessage",
    "build_interactive_carousel_message",
    "build_interactive_flow_message",
]


FLOW_MESSAGE_VERSION: Final = "3"
"""The only ``flow_message_version`` the platform accepts."""
MAX_FLOW_CTA: Final = 30
MAX_FLOW_TOKEN: Final = 2048
MAX_FLOW_NAME: Final = 512
MAX_SCREEN_ID: Final = 256
MIN_CAROUSEL_CARDS: Final = 2
MAX_CAROUSEL_CARDS: Final = 10
MAX_CARD_BODY: Final = 160
MAX_CARD_BODY_LINE_BREAKS: Final = 2
MAX_CARD_QUICK_REPLIES: Final = 3
MAX_URL_DISPLAY_TEXT: Final = 20

_FLOW_ACTIONS: Final = frozenset({"navigate", "data_exchange"})
_FLOW_MODES: Final = frozenset({"draft", "published"})
_CARD_HEADER_KINDS: Final = frozenset({"image", "video"})
_BUTTON_KEYS: Final = ("type", "display_text", "url", "id", "title")


def _flow_parameters(
    *,
    flow_cta: object,
    flow_id: object,
    flow_name: object,
    flow_token: object,
    flow_action: object,
    screen: object,
    data: object,
    mode: object,
) -> Payload:
    if (flow_id is None) == (flow_name is None):
        raise GraphRequestValidationError(
            "exactly one of flow_id or flow_name is required", field="flow_id"
        )
    parameters: Payload = {"flow_message_version": FLOW_MESSAGE_VERSION}
    if flow_token is not None:
        parameters["flow_token"] = check_label(flow_token, "flow_token", max_length=MAX_FLOW_TOKEN)
    if flow_id is not None:
        parameters["flow_id"] = check_id(flow_id, "flow_id")
    else:
        parameters["flow_name"] = check_label(flow_name, "flow_name", max_length=MAX_FLOW_NAME)
    parameters["flow_cta"] = check_label(flow_cta, "flow_cta", max_length=MAX_FLOW_CTA)
    action = "navigate"
    if flow_action is not None:
        action = check_choice(flow_action, "flow_action", _FLOW_ACTIONS)
        parameters["flow_action"] = action
    if mode is not None:
        parameters["mode"] = check_choice(mode, "mode", _FLOW_MODES)
    if action == "data_exchange":
        if screen is not None or data is not None:
            raise GraphRequestValidationError(
                "screen and data are for navigate only; data_exchange asks your endpoint",
                field="screen" if screen is not None else "data",
            )
        return parameters
    if screen is None:
        raise GraphRequestValidationError("screen is required to navigate", field="screen")
    payload: Payload = {"screen": check_label(screen, "screen", max_length=MAX_SCREEN_ID)}
    if data is not None:
        if not isinstance(data, Mapping) or not data or not all(isinstance(k, str) for k in data):
            raise GraphRequestValidationError("data must be a non-empty object", field="data")
        payload["data"] = dict(data)
    parameters["flow_action_payload"] = payload
    return parameters


@dataclass(frozen=True, slots=True, kw_only=True)
class InteractiveFlowMessage(Message):
    """A Flow message: a CTA button (<= 30) that opens the Flow ``flow_id`` or ``flow_name``.

    ``flow_action`` is sent only when given (the platform's default is
    ``navigate``); navigating needs ``screen`` (the first screen) and may carry
    ``data`` (a non-empty object); ``data_exchange`` takes neither. ``mode`` and
    ``flow_token`` are sent only when given. The header is ``header_text`` or a
    media ``header`` (image, video or document by id or link).
    """

    to: str
    body_text: str
    flow_cta: str
    flow_id: str | None = None
    flow_name: str | None = None
    flow_token: str | None = None
    flow_action: Literal["navigate", "data_exchange"] | None = None
    screen: str | None = None
    data: Mapping[str, Any] | None = None
    mode: Literal["draft", "published"] | None = None
    header_text: str | None = None
    header: Mapping[str, Any] | None = None
    footer_text: str | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        parameters = _flow_parameters(
            flow_cta=self.flow_cta,
            flow_id=self.flow_id,
            flow_name=self.flow_name,
            flow_token=self.flow_token,
            flow_action=self.flow_action,
            screen=self.screen,
            data=self.data,
            mode=self.mode,
        )
        return interactive_message(
            addressee,
            "flow",
            action={"name": "flow", "parameters": parameters},
            body_text=self.body_text,
            header_text=self.header_text,
            header=self.header,
            footer_text=self.footer_text,
            reply_to_message_id=self.reply_to_message_id,
        )


def _card_buttons(value: object, field: str) -> tuple[str, Payload]:
    """A card's action and its shape (``url`` or ``quick_reply:<count>``)."""
    items = check_sequence(value, field, minimum=1, maximum=MAX_CARD_QUICK_REPLIES)
    kinds: set[object] = set()
    for _, button in checked_objects(items, field, allowed=_BUTTON_KEYS, required=("type",)):
        kinds.add(button["type"])
    if kinds == {"url"}:
        if len(items) != 1:
            raise GraphRequestValidationError(
                "a card has exactly one url button", field=f"{field}[1]"
            )
        button = check_mapping(
            items[0],
            f"{field}[0]",
            allowed=("type", "display_text", "url"),
            required=("type", "display_text", "url"),
        )
        parameters = {
            "display_text": check_label(
                button["display_text"], f"{field}[0].display_text", max_length=MAX_URL_DISPLAY_TEXT
            ),
            "url": check_link(button["url"], f"{field}[0].url"),
        }
        return "url", {"name": "cta_url", "parameters": parameters}
    if kinds != {"quick_reply"}:
        raise GraphRequestValidationError(
            "card buttons are one url button or 1..3 quick_reply buttons",
            field=f"{field}[0].type",
        )
    wire: list[Payload] = []
    ids: set[str] = set()
    for where, button in checked_objects(
        items, field, allowed=("type", "id", "title"), required=("type", "id", "title")
    ):
        button_id = check_id(button["id"], f"{where}.id", max_length=MAX_BUTTON_ID)
        if button_id in ids:
            raise GraphRequestValidationError(
                "quick-reply ids must be unique in a card", field=f"{where}.id"
            )
        ids.add(button_id)
        title = check_label(button["title"], f"{where}.title", max_length=MAX_BUTTON_TITLE)
        wire.append({"type": "quick_reply", "quick_reply": {"id": button_id, "title": title}})
    return f"quick_reply:{len(wire)}", {"buttons": wire}


def _card_body(value: object, field: str) -> str:
    text = check_text(value, field, max_length=MAX_CARD_BODY)
    if text.count("\n") > MAX_CARD_BODY_LINE_BREAKS:
        raise GraphRequestValidationError(
            f"{field} holds at most {MAX_CARD_BODY_LINE_BREAKS} line breaks", field=field
        )
    return text


@dataclass(frozen=True, slots=True, kw_only=True)
class InteractiveCarouselMessage(Message):
    """A media carousel: 2..10 cards, each ``{header, body_text?, buttons}``.

    ``header`` is ``{"type": "image" | "video", "id" | "link"}``; ``body_text``
    is at most 160 characters and 2 line breaks; ``buttons`` is one
    ``{"type": "url", "display_text", "url"}`` or 1..3
    ``{"type": "quick_reply", "id", "title"}``, and every card has the same
    kind and number of buttons. Cards are numbered (``card_index``) in order.
    """

    to: str
    body_text: str
    cards: Sequence[Mapping[str, Any]]
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        items = check_sequence(
            self.cards, "cards", minimum=MIN_CAROUSEL_CARDS, maximum=MAX_CAROUSEL_CARDS
        )
        wire_cards: list[Payload] = []
        shape: str | None = None
        cards = checked_objects(
            items,
            "cards",
            allowed=("header", "body_text", "buttons"),
            required=("header", "buttons"),
        )
        for index, (field, card) in enumerate(cards):
            header = interactive_media_header(
                card["header"], f"{field}.header", kinds=_CARD_HEADER_KINDS
            )
            wire_card: Payload = {"card_index": index, "type": "cta_url", "header": header}
            if card.get("body_text") is not None:
                wire_card["body"] = {"text": _card_body(card["body_text"], f"{field}.body_text")}
            card_shape, action = _card_buttons(card["buttons"], f"{field}.buttons")
            if shape is not None and card_shape != shape:
                raise GraphRequestValidationError(
                    "every card needs the same kind and number of buttons", field=f"{field}.buttons"
                )
            shape = card_shape
            wire_card["action"] = action
            wire_cards.append(wire_card)
        return interactive_message(
            addressee,
            "carousel",
            action={"cards": wire_cards},
            body_text=self.body_text,
            reply_to_message_id=self.reply_to_message_id,
        )


build_interactive_flow_message = builder(InteractiveFlowMessage)
build_interactive_carousel_message = builder(InteractiveCarouselMessage)
