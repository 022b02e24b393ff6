"""Template creation builders: the platform's creation form, its limits, and the request sent."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from svc.graph import (
    GraphClient,
    GraphRequestValidationError,
    WABAClient,
    build_definition_body,
    build_definition_buttons,
    build_definition_catalog_button,
    build_definition_copy_code_button,
    build_definition_flow_button,
    build_definition_footer,
    build_definition_header_location,
    build_definition_header_media,
    build_definition_header_product,
    build_definition_header_text,
    build_definition_limited_time_offer,
    build_definition_mpm_button,
    build_definition_phone_number_button,
    build_definition_quick_reply_button,
    build_definition_request_contact_info_button,
    build_definition_url_button,
    build_otp_button,
)


def test_headers_exact_wire() -> None:
    assert build_definition_header_text("Our {{1}} is on!", example="Summer Sale") == {
        "type": "HEADER",
        "format": "TEXT",
        "text": "Our {{1}} is on!",
        "example": {"header_text": ["Summer Sale"]},
    }
    assert build_definition_header_text("Hi {{name}}", example="Pablo")["example"] == {
        "header_text_named_params": [{"param_name": "name", "example": "Pablo"}]
    }
    assert build_definition_header_text("Fixed") == {
        "type": "HEADER",
        "format": "TEXT",
        "text": "Fixed",
    }
    assert build_definition_header_media("GIF", header_handle="4::aW1hZ2U=:ARa1") == {
        "type": "HEADER",
        "format": "GIF",
        "example": {"header_handle": ["4::aW1hZ2U=:ARa1"]},
    }
    assert build_definition_header_location() == {"type": "HEADER", "format": "LOCATION"}
    assert build_definition_header_product() == {"type": "HEADER", "format": "PRODUCT"}


def test_body_examples_positional_and_named() -> None:
    assert build_definition_body(
        "Shop now through {{1}} and use code {{2}} to get {{3}} off.",
        examples=["the end of August", "25OFF", "25%"],
    ) == {
        "type": "BODY",
        "text": "Shop now through {{1}} and use code {{2}} to get {{3}} off.",
        "example": {"body_text": [["the end of August", "25OFF", "25%"]]},
    }
    assert build_definition_body(
        "Thank you, {{first_name}}! Order {{order_number}} is ready.",
        examples={"order_number": "860198-230332", "first_name": "Pablo"},
    )["example"] == {
        "body_text_named_params": [
            {"param_name": "first_name", "example": "Pablo"},
            {"param_name": "order_number", "example": "860198-230332"},
        ]
    }
    assert build_definition_body("No placeholders.") == {"type": "BODY", "text": "No placeholders."}


def test_footer_and_limited_time_offer() -> None:
    assert build_definition_footer("Reply STOP to opt out") == {
        "type": "FOOTER",
        "text": "Reply STOP to opt out",
    }
    assert build_definition_limited_time_offer("Expiring offer!", has_expiration=True) == {
        "type": "LIMITED_TIME_OFFER",
        "limited_time_offer": {"text": "Expiring offer!", "has_expiration": True},
    }


def test_every_button_kind_exact_wire() -> None:
    buttons = build_definition_buttons(
        [
            build_definition_quick_reply_button("Unsubscribe"),
            build_definition_url_button(
                "Shop",
                url="https://www.luckyshrub.com/shop?promo={{1}}",
                example="https://www.luckyshrub.com/shop?promo=summer",
            ),
            build_definition_phone_number_button("Call", phone_number="15550051310"),
            build_definition_copy_code_button(example="250FF"),
            build_definition_flow_button(
                "Book now",
                flow_id="1197715005513101",
                flow_action="navigate",
                navigate_screen="BOOKING",
                icon="PROMOTION",
            ),
            build_definition_catalog_button(),
            build_definition_mpm_button(),
            build_definition_request_contact_info_button(),
            build_otp_button(otp_type="copy_code", text="Copy code"),
        ]
    )
    assert buttons == {
        "type": "BUTTONS",
        "buttons": [
            {"type": "QUICK_REPLY", "text": "Unsubscribe"},
            {
                "type": "URL",
                "text": "Shop",
                "url": "https://www.luckyshrub.com/shop?promo={{1}}",
                "example": ["https://www.luckyshrub.com/shop?promo=summer"],
            },
            {"type": "PHONE_NUMBER", "text": "Call", "phone_number": "15550051310"},
            {"type": "COPY_CODE", "example": "250FF"},
            {
                "type": "FLOW",
                "text": "Book now",
                "flow_id": "1197715005513101",
                "flow_action": "navigate",
                "navigate_screen": "BOOKING",
                "icon": "PROMOTION",
            },
            {"type": "CATALOG", "text": "View catalog"},
            {"type": "MPM", "text": "View items"},
            {"type": "REQUEST_CONTACT_INFO"},
            {"type": "otp", "otp_type": "copy_code", "text": "Copy code"},
        ],
    }


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: build_definition_header_text("x" * 61), "text"),
        (lambda: build_definition_header_text("{{1}} and {{2}}", example="a"), "text"),
        (lambda: build_definition_header_text("Hi {{1}}"), "examples"),
        (lambda: build_definition_header_media("AUDIO", header_handle="h"), "format"),  # type: ignore[arg-type]
        (lambda: build_definition_body("x" * 1025), "text"),
        (lambda: build_definition_body("{{1}} {{3}}", examples=["a", "b"]), "text"),
        (lambda: build_definition_body("{{1}} {{name}}", examples=["a", "b"]), "text"),
        (lambda: build_definition_body("{{1}} {{2}}", examples=["a"]), "examples"),
        (lambda: build_definition_body("{{a}}", examples={"b": "x"}), "examples"),
        (lambda: build_definition_body("{{Name}}", examples={"Name": "x"}), "text"),
        (lambda: build_definition_body("plain", examples=["a"]), "examples"),
        (lambda: build_definition_footer("x" * 61), "text"),
        (lambda: build_definition_limited_time_offer("x" * 17, has_expiration=False), "text"),
        (lambda: build_definition_quick_reply_button("x" * 26), "text"),
        (lambda: build_definition_url_button("Go", url="https://x.test/{{1}}"), "example"),
        (
            lambda: build_definition_url_button("Go", url="https://x.test/{{1}}/a", example="e"),
            "url",
        ),
        (lambda: build_definition_url_button("Go", url="https://x.test", example="e"), "example"),
        (lambda: build_definition_url_button("Go", url="x.test"), "url"),
        (
            lambda: build_definition_phone_number_button("Call", phone_number="1" * 21),
            "phone_number",
        ),
        (lambda: build_definition_copy_code_button(example="x" * 16), "example"),
        (lambda: build_definition_flow_button("Go"), "flow_id"),
        (lambda: build_definition_flow_button("Go", flow_id="1", flow_name="n"), "flow_id"),
        (
            lambda: build_definition_flow_button(
                "Go", flow_id="1", flow_action="data_exchange", navigate_screen="S"
            ),
            "navigate_screen",
        ),
        (
            lambda: build_definition_buttons([build_definition_quick_reply_button("a")] * 11),
            "buttons",
        ),
        (
            lambda: build_definition_buttons(
                [build_definition_url_button("Go", url="https://x.test")] * 3
            ),
            "buttons",
        ),
    ],
)
def test_limits_are_refused_naming_the_field(build: Any, field: str) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        build()
    assert caught.value.field == field


ONE_OF_EACH_KIND: dict[str, Any] = {
    "URL": build_definition_url_button("Go", url="https://x.test"),
    "PHONE_NUMBER": build_definition_phone_number_button("Call", phone_number="15550051310"),
    "COPY_CODE": build_definition_copy_code_button(example="250FF"),
    "FLOW": build_definition_flow_button("Book", flow_id="1197715005513101"),
    "CATALOG": build_definition_catalog_button(),
    "MPM": build_definition_mpm_button(),
    "REQUEST_CONTACT_INFO": build_definition_request_contact_info_button(),
    "OTP": build_otp_button(otp_type="copy_code"),  # lower-case "otp" counts as OTP
}


@pytest.mark.parametrize(("kind", "limit"), [(k, 2 if k == "URL" else 1) for k in ONE_OF_EACH_KIND])
def test_each_button_kind_is_held_to_its_count(kind: str, limit: int) -> None:
    """Two URL buttons and one of each other kind, as the platform allows, and no more."""
    button = ONE_OF_EACH_KIND[kind]
    assert build_definition_buttons([button] * limit)["buttons"] == [button] * limit
    with pytest.raises(GraphRequestValidationError) as caught:
        build_definition_buttons([button] * (limit + 1))
    assert caught.value.field == "buttons"


async def test_create_template_sends_the_built_components() -> None:
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(
            200, json={"id": "546151681022936", "status": "PENDING", "category": "MARKETING"}
        )

    client = GraphClient(access_token="t", transport=httpx.MockTransport(handler))
    components = [
        build_definition_header_media("IMAGE", header_handle="4::aW1h:ARa1"),
        build_definition_body("Hi {{1}}, 20% off!", examples=["Pablo"]),
        build_definition_footer("Lucky Shrub"),
        build_definition_buttons([build_definition_quick_reply_button("Stop promotions")]),
    ]
    created = await WABAClient(client, waba_id="102290129340398").create_template(
        name="summer_sale", language="en_US", category="MARKETING", components=components
    )
    [request] = requests
    assert request.url.path.endswith("/102290129340398/message_templates")
    assert json.loads(request.content) == {
        "name": "summer_sale",
        "language": "en_US",
        "category": "MARKETING",
        "components": components,
    }
    assert created.id == "546151681022936"
