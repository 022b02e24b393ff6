"""Template send components (carousel, limited-time offer, MPM, product, GIF) and their checks.

Wire forms follow the platform's published template-send examples; each
component is checked by ``check_template_send`` against a realistic definition.
"""

from __future__ import annotations

from typing import Any

import pytest

from svc.graph import (
    GraphRequestValidationError,
    TemplateCheckError,
    build_template_body,
    build_template_carousel,
    build_template_carousel_card,
    build_template_catalog_button,
    build_template_copy_code_button,
    build_template_header_gif,
    build_template_header_media,
    build_template_header_product,
    build_template_limited_time_offer,
    build_template_mpm_button,
    build_template_quick_reply_button,
    check_template_send,
    template_text_parameter,
)


def test_catalog_button_without_thumbnail_sends_no_parameters() -> None:
    assert build_template_catalog_button(index=0) == {
        "type": "button",
        "sub_type": "CATALOG",
        "index": 0,
    }
    assert build_template_catalog_button(index=0, thumbnail_product_retailer_id="2lc20305pt")[
        "parameters"
    ] == [{"type": "action", "action": {"thumbnail_product_retailer_id": "2lc20305pt"}}]


def test_limited_time_offer_exact_wire() -> None:
    assert build_template_limited_time_offer(expiration_time_ms=1209600000) == {
        "type": "limited_time_offer",
        "parameters": [
            {"type": "limited_time_offer", "limited_time_offer": {"expiration_time_ms": 1209600000}}
        ],
    }


def test_mpm_button_exact_wire() -> None:
    assert build_template_mpm_button(
        index=0,
        thumbnail_product_retailer_id="2lc20305pt",
        sections=[
            {"title": "Popular Bundles", "product_retailer_ids": ["3bw20305pt", "pr9n7o6n0e"]},
            {"title": "Premium Packages", "product_retailer_ids": ["3bw20305pt"]},
        ],
    ) == {
        "type": "button",
        "sub_type": "mpm",
        "index": "0",
        "parameters": [
            {
                "type": "action",
                "action": {
                    "thumbnail_product_retailer_id": "2lc20305pt",
                    "sections": [
                        {
                            "title": "Popular Bundles",
                            "product_items": [
                                {"product_retailer_id": "3bw20305pt"},
                                {"product_retailer_id": "pr9n7o6n0e"},
                            ],
                        },
                        {
                            "title": "Premium Packages",
                            "product_items": [{"product_retailer_id": "3bw20305pt"}],
                        },
                    ],
                },
            }
        ],
    }


def test_product_and_gif_headers_exact_wire() -> None:
    assert build_template_header_product(
        catalog_id="194836987003835", product_retailer_id="sku1"
    ) == {
        "type": "header",
        "parameters": [
            {
                "type": "product",
                "product": {"product_retailer_id": "sku1", "catalog_id": "194836987003835"},
            }
        ],
    }
    assert build_template_header_gif(link="https://x.test/a.mp4") == {
        "type": "header",
        "parameters": [{"type": "gif", "gif": {"link": "https://x.test/a.mp4"}}],
    }
    assert build_template_header_gif(media_id="77")["parameters"][0]["gif"] == {"id": "77"}


def card(index: int) -> dict[str, Any]:
    return build_template_carousel_card(
        card_index=index,
        components=[
            build_template_header_media("image", media_id=f"24230790383178{index}"),
            build_template_body([template_text_parameter("10OFF")]),
            build_template_quick_reply_button(index=0, payload=f"more-{index}"),
        ],
    )


def test_carousel_exact_wire() -> None:
    assert build_template_carousel([card(0), card(1)]) == {
        "type": "carousel",
        "cards": [
            {
                "card_index": index,
                "components": [
                    {
                        "type": "header",
                        "parameters": [
                            {"type": "image", "image": {"id": f"24230790383178{index}"}}
                        ],
                    },
                    {"type": "body", "parameters": [{"type": "text", "text": "10OFF"}]},
                    {
                        "type": "button",
                        "sub_type": "quick_reply",
                        "index": "0",
                        "parameters": [{"type": "payload", "payload": f"more-{index}"}],
                    },
                ],
            }
            for index in (0, 1)
        ],
    }


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: build_template_carousel([card(0)]), "cards"),
        (lambda: build_template_carousel([card(0), card(0)]), "cards[1].card_index"),
        (lambda: build_template_carousel_card(card_index=10, components=[]), "card_index"),
        (
            lambda: build_template_carousel_card(card_index=0, components=[{"type": "footer"}]),
            "components[0].type",
        ),
        (lambda: build_template_limited_time_offer(expiration_time_ms=0), "expiration_time_ms"),
        (lambda: build_template_header_gif(), "media_id"),
        (
            lambda: build_template_mpm_button(
                index=0,
                thumbnail_product_retailer_id="t",
                sections=[{"title": "s", "product_retailer_ids": ["p"] * 31}],
            ),
            "sections[0].product_retailer_ids",
        ),
        (
            lambda: build_template_mpm_button(
                index=0,
                thumbnail_product_retailer_id="t",
                sections=[{"title": f"s{i}", "product_retailer_ids": ["p"] * 8} for i in range(4)],
            ),
            "sections",
        ),
    ],
)
def test_component_builders_refuse_bad_input(build: Any, field: str) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        build()
    assert caught.value.field == field


# --- check_template_send ------------------------------------------------------------------

CAROUSEL_DEFINITION = {
    "name": "summer_carousel",
    "language": "en_US",
    "status": "APPROVED",
    "category": "MARKETING",
    "components": [
        {
            "type": "BODY",
            "text": "Rare succulents for sale! {{1}}",
            "example": {"body_text": [["x"]]},
        },
        {
            "type": "CAROUSEL",
            "cards": [
                {
                    "components": [
                        {"type": "HEADER", "format": "IMAGE"},
                        {"type": "BODY", "text": "Use code {{1}}"},
                        {"type": "BUTTONS", "buttons": [{"type": "QUICK_REPLY", "text": "More"}]},
                    ]
                }
                for _ in range(2)
            ],
        },
    ],
}
CAROUSEL_BODY = build_template_body([template_text_parameter("Shop now")])


def test_carousel_send_fits_its_definition() -> None:
    check_template_send(
        CAROUSEL_DEFINITION, "en_US", [CAROUSEL_BODY, build_template_carousel([card(0), card(1)])]
    )


@pytest.mark.parametrize(
    ("components", "field"),
    [
        ([CAROUSEL_BODY], "components"),
        (
            [CAROUSEL_BODY, {"type": "carousel", "cards": [card(0)]}],
            "components[1].cards",
        ),
        (
            [
                CAROUSEL_BODY,
                {
                    "type": "carousel",
                    "cards": [
                        card(0),
                        {
                            **card(1),
                            "components": card(1)["components"][:1] + card(1)["components"][2:],
                        },
                    ],
                },
            ],
            "components[1].cards[1].components",
        ),
        (
            [
                CAROUSEL_BODY,
                {"type": "carousel", "cards": [card(0), {**card(1), "card_index": 0}]},
            ],
            "components[1].cards[1].card_index",
        ),
    ],
)
def test_carousel_send_mismatch_names_the_place(components: list[Any], field: str) -> None:
    with pytest.raises(TemplateCheckError) as caught:
        check_template_send(CAROUSEL_DEFINITION, "en_US", components)
    assert caught.value.field == field


LTO_DEFINITION = {
    "name": "limited_time_offer_caribbean_pkg_2023",
    "language": "en_US",
    "status": "APPROVED",
    "components": [
        {"type": "HEADER", "format": "IMAGE"},
        {
            "type": "LIMITED_TIME_OFFER",
            "limited_time_offer": {"text": "Expiring offer!", "has_expiration": True},
        },
        {"type": "BODY", "text": "Good news, {{1}}! Use code {{2}}."},
        {
            "type": "BUTTONS",
            "buttons": [
                {"type": "COPY_CODE", "example": "CARIBE25"},
                {"type": "URL", "text": "Book now!", "url": "https://x.test/{{1}}"},
            ],
        },
    ],
}


def lto_send(offer: bool = True) -> list[dict[str, Any]]:
    components = [
        build_template_header_media("image", link="https://x.test/a.png"),
        build_template_body(
            [template_text_parameter("Pablo"), template_text_parameter("CARIBE25")]
        ),
        build_template_copy_code_button(index=0, coupon_code="CARIBE25"),
        {
            "type": "button",
            "sub_type": "url",
            "index": "1",
            "parameters": [{"type": "text", "text": "n3mtql"}],
        },
    ]
    if offer:
        components.insert(1, build_template_limited_time_offer(expiration_time_ms=1209600000))
    return components


def test_limited_time_offer_send_fits_and_its_expiry_is_required() -> None:
    check_template_send(LTO_DEFINITION, "en_US", lto_send())
    with pytest.raises(TemplateCheckError) as caught:
        check_template_send(LTO_DEFINITION, "en_US", lto_send(offer=False))
    assert caught.value.field == "components"
    bad = lto_send()
    bad[1] = {
        "type": "limited_time_offer",
        "parameters": [{"type": "limited_time_offer", "limited_time_offer": {}}],
    }
    with pytest.raises(TemplateCheckError) as caught:
        check_template_send(LTO_DEFINITION, "en_US", bad)
    assert caught.value.field == "components[1].parameters"


MPM_DEFINITION = {
    "name": "abandoned_cart",
    "language": "en_US",
    "status": "APPROVED",
    "components": [
        {"type": "HEADER", "format": "TEXT", "text": "Forget something?"},
        {"type": "BODY", "text": "Your cart is waiting."},
        {"type": "BUTTONS", "buttons": [{"type": "MPM", "text": "View items"}]},
    ],
}


def test_mpm_button_is_required_and_checked() -> None:
    button = build_template_mpm_button(
        index=0,
        thumbnail_product_retailer_id="t",
        sections=[{"title": "Cart", "product_retailer_ids": ["p1"]}],
    )
    check_template_send(MPM_DEFINITION, "en_US", [button])
    with pytest.raises(TemplateCheckError) as caught:
        check_template_send(MPM_DEFINITION, "en_US", [])
    assert caught.value.field == "components"


@pytest.mark.parametrize(
    ("header_format", "good", "bad"),
    [
        (
            "GIF",
            build_template_header_gif(link="https://x.test/a.mp4"),
            build_template_header_media("video", link="https://x.test/a.mp4"),
        ),
        (
            "PRODUCT",
            build_template_header_product(catalog_id="1", product_retailer_id="s"),
            build_template_header_media("image", media_id="1"),
        ),
    ],
)
def test_gif_and_product_headers_are_checked(
    header_format: str, good: dict[str, Any], bad: dict[str, Any]
) -> None:
    definition = {
        "name": "t",
        "language": "en_US",
        "status": "APPROVED",
        "components": [{"type": "HEADER", "format": header_format}, {"type": "BODY", "text": "Hi"}],
    }
    check_template_send(definition, "en_US", [good])
    with pytest.raises(TemplateCheckError) as caught:
        check_template_send(definition, "en_US", [bad])
    assert caught.value.field == "components[0].parameters[0].type"
    with pytest.raises(TemplateCheckError):
        check_template_send(definition, "en_US", [])
