"""Template send components for carousel, limited-time offer, multi-product, product and GIF.

The companions of ``_template_params`` for the richer marketing templates:
each builder validates its inputs (``GraphRequestValidationError`` naming the
argument) and returns the exact object the platform reads inside
``template.components`` (or inside a carousel card's ``components``).
``check_template_send`` checks them against the template's definition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ._errors import GraphRequestValidationError
from ._interactive_messages import product_sections
from ._template_params import MAX_BUTTON_INDEX
from ._validate import (
    check_id,
    check_int,
    check_media_source,
    check_sequence,
    checked_objects,
)

__all__ = [
    "build_template_carousel",
    "build_template_carousel_card",
    "build_template_header_gif",
    "build_template_header_product",
    "build_template_limited_time_offer",
    "build_template_mpm_button",
]

Component = dict[str, Any]

MIN_TEMPLATE_CAROUSEL_CARDS: Final = 2
MAX_TEMPLATE_CAROUSEL_CARDS: Final = 10
MAX_EXPIRATION_TIME_MS: Final = 2**53
_CARD_COMPONENT_TYPES: Final = frozenset({"header", "body", "button"})


def build_template_header_gif(*, media_id: str | None = None, link: str | None = None) -> Component:
    """A GIF header (templates whose header format is GIF) by ``media_id`` or ``link``."""
    gif = check_media_source(media_id, link)
    return {"type": "header", "parameters": [{"type": "gif", "gif": gif}]}


def build_template_header_product(*, catalog_id: str, product_retailer_id: str) -> Component:
    """A product header (single-product and product-card carousel templates)."""
    product = {
        "product_retailer_id": check_id(product_retailer_id, "product_retailer_id"),
        "catalog_id": check_id(catalog_id, "catalog_id"),
    }
    return {"type": "header", "parameters": [{"type": "product", "product": product}]}


def build_template_limited_time_offer(*, expiration_time_ms: int) -> Component:
    """The offer's expiry of a limited-time-offer template, as a UNIX time in milliseconds."""
    expiry = check_int(
        expiration_time_ms, "expiration_time_ms", minimum=1, maximum=MAX_EXPIRATION_TIME_MS
    )
    return {
        "type": "limited_time_offer",
        "parameters": [
            {"type": "limited_time_offer", "limited_time_offer": {"expiration_time_ms": expiry}}
        ],
    }


def build_template_mpm_button(
    *,
    index: int,
    thumbnail_product_retailer_id: str,
    sections: Sequence[Mapping[str, Any]],
) -> Component:
    """A multi-product button: 1..10 titled sections of ``product_retailer_ids`` (<= 30 in all)."""
    thumbnail = check_id(thumbnail_product_retailer_id, "thumbnail_product_retailer_id")
    wire = product_sections(sections, holder="multi-product button")
    return {
        "type": "button",
        "sub_type": "mpm",
        "index": str(check_int(index, "index", minimum=0, maximum=MAX_BUTTON_INDEX)),
        "parameters": [
            {
                "type": "action",
                "action": {"thumbnail_product_retailer_id": thumbnail, "sections": wire},
            }
        ],
    }


def build_template_carousel_card(
    *, card_index: int, components: Sequence[Mapping[str, Any]]
) -> Component:
    """One carousel card: its header, body and button components (``build_template_*``)."""
    position = check_int(
        card_index, "card_index", minimum=0, maximum=MAX_TEMPLATE_CAROUSEL_CARDS - 1
    )
    items = check_sequence(components, "components", minimum=1, maximum=12)
    out: list[Component] = []
    for number, item in enumerate(items):
        field = f"components[{number}]"
        if not isinstance(item, Mapping) or item.get("type") not in _CARD_COMPONENT_TYPES:
            raise GraphRequestValidationError(
                f"{field} must be a header, body or button component", field=f"{field}.type"
            )
        out.append(dict(item))
    return {"card_index": position, "components": out}


def build_template_carousel(cards: Sequence[Mapping[str, Any]]) -> Component:
    """The carousel component: 2..10 cards (``build_template_carousel_card``), unique indexes."""
    items = check_sequence(
        cards, "cards", minimum=MIN_TEMPLATE_CAROUSEL_CARDS, maximum=MAX_TEMPLATE_CAROUSEL_CARDS
    )
    seen: set[int] = set()
    out: list[Component] = []
    for field, card in checked_objects(
        items, "cards", allowed=("card_index", "components"), required=("card_index", "components")
    ):
        rebuilt = build_template_carousel_card(
            card_index=card["card_index"], components=card["components"]
        )
        if rebuilt["card_index"] in seen:
            raise GraphRequestValidationError(
                "card indexes must be unique", field=f"{field}.card_index"
            )
        seen.add(rebuilt["card_index"])
        out.append(rebuilt)
    return {"type": "carousel", "cards": out}
