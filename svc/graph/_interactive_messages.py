"""Interactive messages: reply buttons, lists, CTA URL, commerce, location and call requests.

One declaration each; ``to_payload()`` checks the platform limits below and
renders the ``interactive`` message (``_envelope.interactive_message``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ._envelope import Payload, address, interactive_message, routing
from ._errors import GraphRequestValidationError
from ._message import Message, builder
from ._validate import (
    check_id,
    check_int,
    check_label,
    check_link,
    check_sequence,
    checked_objects,
)

__all__ = [
    "CallPermissionRequestMessage",
    "InteractiveButtonsMessage",
    "InteractiveCatalogMessage",
    "InteractiveCtaUrlMessage",
    "InteractiveListMessage",
    "InteractiveLocationRequestMessage",
    "InteractiveProductMessage",
    "InteractiveProductsMessage",
    "VoiceCallButtonMessage",
    "build_call_permission_request_message",
    "build_interactive_buttons_message",
    "build_interactive_catalog_message",
    "build_interactive_cta_url_message",
    "build_interactive_list_message",
    "build_interactive_location_request_message",
    "build_interactive_product_message",
    "build_interactive_products_message",
    "build_voice_call_button_message",
    "product_sections",
]

MAX_BUTTON_TITLE: Final = 20
MAX_BUTTON_ID: Final = 256
MAX_LIST_BUTTON_TEXT: Final = 20
MAX_LIST_SECTIONS: Final = 10
MAX_LIST_ROWS: Final = 10
MAX_SECTION_TITLE: Final = 24
MAX_ROW_ID: Final = 200
MAX_ROW_TITLE: Final = 24
MAX_ROW_DESCRIPTION: Final = 72
MAX_CTA_DISPLAY_TEXT: Final = 20
MAX_PRODUCT_SECTIONS: Final = 10
MAX_PRODUCT_ITEMS: Final = 30
MAX_CALL_DISPLAY_TEXT: Final = 20
MAX_CALL_TTL_MINUTES: Final = 43200
MAX_CALL_PAYLOAD: Final = 512


@dataclass(frozen=True, slots=True, kw_only=True)
class InteractiveButtonsMessage(Message):
    """Reply buttons: 1..3 ``{id, title}`` with unique ids and titles (title <= 20, id <= 256).

    The header is ``header_text`` or a media ``header`` (``{"type": "image" | "video" |
    "document", "id" | "link"}``), not both.
    """

    to: str
    body_text: str
    buttons: Sequence[Mapping[str, str]]
    header_text: str | None = None
    footer_text: str | None = None
    header: Mapping[str, Any] | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        items = check_sequence(self.buttons, "buttons", minimum=1, maximum=3)
        reply_buttons: list[Payload] = []
        ids: set[str] = set()
        titles: set[str] = set()
        for field, button in checked_objects(
            items, "buttons", allowed=("id", "title"), required=("id", "title")
        ):
            button_id = check_id(button["id"], f"{field}.id", max_length=MAX_BUTTON_ID)
            title = check_label(button["title"], f"{field}.title", max_length=MAX_BUTTON_TITLE)
            if button_id in ids or title in titles:
                raise GraphRequestValidationError(
                    "button ids and titles must be unique",
                    field=f"{field}.id" if button_id in ids else f"{field}.title",
                )
            ids.add(button_id)
            titles.add(title)
            reply_buttons.append({"type": "reply", "reply": {"id": button_id, "title": title}})
        return interactive_message(
            addressee,
            "button",
            action={"buttons": reply_buttons},
            body_text=self.body_text,
            header_text=self.header_text,
            footer_text=self.footer_text,
            header=self.header,
            reply_to_message_id=self.reply_to_message_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class InteractiveListMessage(Message):
    """A list: 1..10 sections, 1..10 rows in total, unique row ids.

    A section title (<= 24) is required when there is more than one section.
    """

    to: str
    body_text: str
    button_text: str
    sections: Sequence[Mapping[str, Any]]
    header_text: str | None = None
    footer_text: str | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        button = check_label(self.button_text, "button_text", max_length=MAX_LIST_BUTTON_TEXT)
        items = check_sequence(self.sections, "sections", minimum=1, maximum=MAX_LIST_SECTIONS)
        wire_sections: list[Payload] = []
        row_ids: set[str] = set()
        for field, section in checked_objects(
            items, "sections", allowed=("title", "rows"), required=("rows",)
        ):
            wire_section: Payload = {}
            if section.get("title") is not None:
                wire_section["title"] = check_label(
                    section["title"], f"{field}.title", max_length=MAX_SECTION_TITLE
                )
            elif len(items) > 1:
                raise GraphRequestValidationError(
                    "every section needs a title when there are several", field=f"{field}.title"
                )
            rows = check_sequence(
                section["rows"], f"{field}.rows", minimum=1, maximum=MAX_LIST_ROWS
            )
            wire_rows: list[Payload] = []
            for row_field, row in checked_objects(
                rows,
                f"{field}.rows",
                allowed=("id", "title", "description"),
                required=("id", "title"),
            ):
                row_id = check_id(row["id"], f"{row_field}.id", max_length=MAX_ROW_ID)
                if row_id in row_ids:
                    raise GraphRequestValidationError(
                        "row ids must be unique across the list", field=f"{row_field}.id"
                    )
                row_ids.add(row_id)
                wire_row: Payload = {
                    "id": row_id,
                    "title": check_label(
                        row["title"], f"{row_field}.title", max_length=MAX_ROW_TITLE
                    ),
                }
                if row.get("description") is not None:
                    wire_row["description"] = check_label(
                        row["description"],
                        f"{row_field}.description",
                        max_length=MAX_ROW_DESCRIPTION,
                    )
                wire_rows.append(wire_row)
            wire_section["rows"] = wire_rows
            wire_sections.append(wire_section)
        if len(row_ids) > MAX_LIST_ROWS:
            raise GraphRequestValidationError(
                f"a list holds at most {MAX_LIST_ROWS} rows in total", field="sections"
            )
        return interactive_message(
            addressee,
            "list",
            action={"button": button, "sections": wire_sections},
            body_text=self.body_text,
            header_text=self.header_text,
            footer_text=self.footer_text,
            reply_to_message_id=self.reply_to_message_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class InteractiveCtaUrlMessage(Message):
    """A call-to-action URL button (``display_text`` <= 20, ``url`` http or https).

    The header is ``header_text`` or a media ``header``, as for reply buttons.
    """

    to: str
    body_text: str
    display_text: str
    url: str
    header_text: str | None = None
    footer_text: str | None = None
    header: Mapping[str, Any] | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        parameters = {
            "display_text": check_label(
                self.display_text, "display_text", max_length=MAX_CTA_DISPLAY_TEXT
            ),
            "url": check_link(self.url, "url"),
        }
        return interactive_message(
            addressee,
            "cta_url",
            action={"name": "cta_url", "parameters": parameters},
            body_text=self.body_text,
            header_text=self.header_text,
            footer_text=self.footer_text,
            header=self.header,
            reply_to_message_id=self.reply_to_message_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class InteractiveProductMessage(Message):
    """A single-product message from a catalog."""

    to: str
    catalog_id: str
    product_retailer_id: str
    body_text: str | None = None
    footer_text: str | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        action = {
            "catalog_id": check_id(self.catalog_id, "catalog_id"),
            "product_retailer_id": check_id(self.product_retailer_id, "product_retailer_id"),
        }
        return interactive_message(
            addressee,
            "product",
            action=action,
            body_text=self.body_text,
            footer_text=self.footer_text,
            body_required=False,
            reply_to_message_id=self.reply_to_message_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class InteractiveProductsMessage(Message):
    """A multi-product message: 1..10 titled sections of ``product_retailer_ids`` (<= 30 items)."""

    to: str
    catalog_id: str
    header_text: str
    body_text: str
    sections: Sequence[Mapping[str, Any]]
    footer_text: str | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        catalog = check_id(self.catalog_id, "catalog_id")
        wire_sections = product_sections(self.sections, holder="multi-product message")
        return interactive_message(
            addressee,
            "product_list",
            action={"catalog_id": catalog, "sections": wire_sections},
            body_text=self.body_text,
            header_text=self.header_text,
            footer_text=self.footer_text,
            reply_to_message_id=self.reply_to_message_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class InteractiveCatalogMessage(Message):
    """A catalog message, optionally naming the product shown as thumbnail."""

    to: str
    body_text: str
    thumbnail_product_retailer_id: str | None = None
    footer_text: str | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        action: Payload = {"name": "catalog_message"}
        if self.thumbnail_product_retailer_id is not None:
            action["parameters"] = {
                "thumbnail_product_retailer_id": check_id(
                    self.thumbnail_product_retailer_id, "thumbnail_product_retailer_id"
                )
            }
        return interactive_message(
            addressee,
            "catalog_message",
            action=action,
            body_text=self.body_text,
            footer_text=self.footer_text,
            reply_to_message_id=self.reply_to_message_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class InteractiveLocationRequestMessage(Message):
    """Ask the user to share a location (``action.name = send_location``)."""

    to: str
    body_text: str
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        return interactive_message(
            addressee,
            "location_request_message",
            action={"name": "send_location"},
            body_text=self.body_text,
            reply_to_message_id=self.reply_to_message_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CallPermissionRequestMessage(Message):
    """Ask the user for permission to call (``call_permission_request``)."""

    to: str
    body_text: str
    footer_text: str | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        return interactive_message(
            addressee,
            "call_permission_request",
            action={"name": "call_permission_request"},
            body_text=self.body_text,
            footer_text=self.footer_text,
            reply_to_message_id=self.reply_to_message_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class VoiceCallButtonMessage(Message):
    """A WhatsApp call button (``voice_call``), addressed by ``to``, ``recipient`` or both.

    When both are given only ``to`` is sent. ``ttl_minutes`` is 1..43200,
    ``display_text`` <= 20, ``payload`` <= 512 characters.
    """

    body_text: str
    to: str | None = None
    recipient: str | None = None
    display_text: str | None = None
    ttl_minutes: int | None = None
    payload: str | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = routing(self.to, self.recipient)
        parameters: Payload = {}
        if self.display_text is not None:
            parameters["display_text"] = check_label(
                self.display_text, "display_text", max_length=MAX_CALL_DISPLAY_TEXT
            )
        if self.ttl_minutes is not None:
            parameters["ttl_minutes"] = check_int(
                self.ttl_minutes, "ttl_minutes", minimum=1, maximum=MAX_CALL_TTL_MINUTES
            )
        if self.payload is not None:
            parameters["payload"] = check_label(
                self.payload, "payload", max_length=MAX_CALL_PAYLOAD
            )
        action: Payload = {"name": "voice_call"}
        if parameters:
            action["parameters"] = parameters
        return interactive_message(
            addressee,
            "voice_call",
            action=action,
            body_text=self.body_text,
            reply_to_message_id=self.reply_to_message_id,
        )


def product_sections(sections: Sequence[Mapping[str, Any]], *, holder: str) -> list[Payload]:
    """Titled sections of ``product_retailer_ids`` as the wire's ``product_items``.

    The platform's one rule for multi-product messages and multi-product template
    buttons: 1..10 sections, a title each, 1..30 products in all. ``holder`` names
    the message or button in the refusal.
    """
    items = check_sequence(sections, "sections", minimum=1, maximum=MAX_PRODUCT_SECTIONS)
    wire_sections: list[Payload] = []
    total = 0
    for field, section in checked_objects(
        items,
        "sections",
        allowed=("title", "product_retailer_ids"),
        required=("title", "product_retailer_ids"),
    ):
        ids = check_sequence(
            section["product_retailer_ids"],
            f"{field}.product_retailer_ids",
            minimum=1,
            maximum=MAX_PRODUCT_ITEMS,
        )
        total += len(ids)
        wire_sections.append(
            {
                "title": check_label(
                    section["title"], f"{field}.title", max_length=MAX_SECTION_TITLE
                ),
                "product_items": [
                    {
                        "product_retailer_id": check_id(
                            product, f"{field}.product_retailer_ids[{product_index}]"
                        )
                    }
                    for product_index, product in enumerate(ids)
                ],
            }
        )
    if total > MAX_PRODUCT_ITEMS:
        raise GraphRequestValidationError(
            f"a {holder} holds at most {MAX_PRODUCT_ITEMS} products",
            field="sections",
        )
    return wire_sections


build_interactive_buttons_message = builder(InteractiveButtonsMessage)
build_interactive_list_message = builder(InteractiveListMessage)
build_interactive_cta_url_message = builder(InteractiveCtaUrlMessage)
build_interactive_product_message = builder(InteractiveProductMessage)
build_interactive_products_message = builder(InteractiveProductsMessage)
build_interactive_catalog_message = builder(InteractiveCatalogMessage)
build_interactive_location_request_message = builder(InteractiveLocationRequestMessage)
build_call_permission_request_message = builder(CallPermissionRequestMessage)
build_voice_call_button_message = builder(VoiceCallButtonMessage)
