"""Template component builders (exact wire JSON) and ``check_template_send`` against definitions."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from svc.graph import (
    DEFAULT_API_VERSION,
    GraphClient,
    GraphRequestValidationError,
    PhoneNumberClient,
    Template,
    TemplateCheckError,
    build_template_body,
    build_template_catalog_button,
    build_template_copy_code_button,
    build_template_flow_button,
    build_template_header_location,
    build_template_header_media,
    build_template_header_text,
    build_template_otp_button,
    build_template_quick_reply_button,
    build_template_url_button,
    check_template_send,
    template_currency_parameter,
    template_date_time_parameter,
    template_text_parameter,
)

# --- builders: exact wire form ---------------------------------------------------------

WIRE: list[tuple[Any, dict[str, Any]]] = [
    (
        template_text_parameter("Ana"),
        {"type": "text", "text": "Ana"},
    ),
    (
        template_text_parameter("Ana", parameter_name="first_name"),
        {"type": "text", "text": "Ana", "parameter_name": "first_name"},
    ),
    (
        template_currency_parameter(fallback_value="$100.99", code="USD", amount_1000=100990),
        {
            "type": "currency",
            "currency": {"fallback_value": "$100.99", "code": "USD", "amount_1000": 100990},
        },
    ),
    (
        template_currency_parameter(
            fallback_value="9,50 €", code="EUR", amount_1000=9500, parameter_name="total"
        ),
        {
            "type": "currency",
            "currency": {"fallback_value": "9,50 €", "code": "EUR", "amount_1000": 9500},
            "parameter_name": "total",
        },
    ),
    (
        template_date_time_parameter(fallback_value="February 25, 1977"),
        {"type": "date_time", "date_time": {"fallback_value": "February 25, 1977"}},
    ),
    (
        template_date_time_parameter(fallback_value="tomorrow", parameter_name="when"),
        {
            "type": "date_time",
            "date_time": {"fallback_value": "tomorrow"},
            "parameter_name": "when",
        },
    ),
    (
        build_template_header_text("Order 42"),
        {"type": "header", "parameters": [{"type": "text", "text": "Order 42"}]},
    ),
    (
        build_template_header_text("Order 42", parameter_name="order"),
        {
            "type": "header",
            "parameters": [{"type": "text", "text": "Order 42", "parameter_name": "order"}],
        },
    ),
    (
        build_template_header_media("image", media_id="1234567890"),
        {"type": "header", "parameters": [{"type": "image", "image": {"id": "1234567890"}}]},
    ),
    (
        build_template_header_media("video", link="https://example.com/v.mp4"),
        {
            "type": "header",
            "parameters": [{"type": "video", "video": {"link": "https://example.com/v.mp4"}}],
        },
    ),
    (
        build_template_header_media(
            "document", link="https://example.com/i.pdf", filename="invoice.pdf"
        ),
        {
            "type": "header",
            "parameters": [
                {
                    "type": "document",
                    "document": {"link": "https://example.com/i.pdf", "filename": "invoice.pdf"},
                }
            ],
        },
    ),
    (
        build_template_header_location(
            latitude=37.483307, longitude=-122.148981, name="Pablo Morales", address="1 Hacker Way"
        ),
        {
            "type": "header",
            "parameters": [
                {
                    "type": "location",
                    "location": {
                        "latitude": 37.483307,
                        "longitude": -122.148981,
                        "name": "Pablo Morales",
                        "address": "1 Hacker Way",
                    },
                }
            ],
        },
    ),
    (
        build_template_body(
            [
                template_text_parameter("Ana"),
                template_currency_parameter(fallback_value="$5", code="USD", amount_1000=5000),
                template_date_time_parameter(fallback_value="today"),
            ]
        ),
        {
            "type": "body",
            "parameters": [
                {"type": "text", "text": "Ana"},
                {
                    "type": "currency",
                    "currency": {"fallback_value": "$5", "code": "USD", "amount_1000": 5000},
                },
                {"type": "date_time", "date_time": {"fallback_value": "today"}},
            ],
        },
    ),
    (
        build_template_url_button(index=0, text="order/42"),
        {
            "type": "button",
            "sub_type": "url",
            "index": "0",
            "parameters": [{"type": "text", "text": "order/42"}],
        },
    ),
    (
        build_template_quick_reply_button(index=1, payload="STOP"),
        {
            "type": "button",
            "sub_type": "quick_reply",
            "index": "1",
            "parameters": [{"type": "payload", "payload": "STOP"}],
        },
    ),
    (
        build_template_copy_code_button(index=2, coupon_code="SAVE25"),
        {
            "type": "button",
            "sub_type": "copy_code",
            "index": "2",
            "parameters": [{"type": "coupon_code", "coupon_code": "SAVE25"}],
        },
    ),
    (
        build_template_flow_button(
            index=0, flow_token="tok-1", flow_action_data={"product": "x", "qty": 2}
        ),
        {
            "type": "button",
            "sub_type": "flow",
            "index": "0",
            "parameters": [
                {
                    "type": "action",
                    "action": {
                        "flow_token": "tok-1",
                        "flow_action_data": {"product": "x", "qty": 2},
                    },
                }
            ],
        },
    ),
    (
        build_template_flow_button(index=3),
        {
            "type": "button",
            "sub_type": "flow",
            "index": "3",
            "parameters": [{"type": "action", "action": {}}],
        },
    ),
    (
        build_template_catalog_button(index=0, thumbnail_product_retailer_id="SKU-1"),
        {
            "type": "button",
            "sub_type": "CATALOG",
            "index": 0,
            "parameters": [
                {"type": "action", "action": {"thumbnail_product_retailer_id": "SKU-1"}}
            ],
        },
    ),
    (
        build_template_otp_button(code="J$FpnYnP"),
        {
            "type": "button",
            "sub_type": "url",
            "index": "0",
            "parameters": [{"type": "text", "text": "J$FpnYnP"}],
        },
    ),
]


@pytest.mark.parametrize(("built", "wire"), WIRE, ids=[str(i) for i in range(len(WIRE))])
def test_builder_gives_the_exact_wire_form(built: dict[str, Any], wire: dict[str, Any]) -> None:
    assert built == wire
    assert json.loads(json.dumps(built)) == wire


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: template_text_parameter(""), "text"),
        (lambda: template_text_parameter("a", parameter_name="First"), "parameter_name"),
        (lambda: template_text_parameter("a", parameter_name="1x"), "parameter_name"),
        (
            lambda: template_currency_parameter(fallback_value="$1", code="usd", amount_1000=1),
            "code",
        ),
        (
            lambda: template_currency_parameter(fallback_value="$1", code="USD", amount_1000=1.5),
            "amount_1000",
        ),
        (lambda: template_date_time_parameter(fallback_value=""), "fallback_value"),
        (lambda: build_template_header_text("x" * 61), "text"),
        (lambda: build_template_header_media("audio", media_id="1"), "kind"),  # type: ignore[arg-type]
        (lambda: build_template_header_media("image"), "media_id"),
        (
            lambda: build_template_header_media("image", media_id="1", link="https://a.b"),
            "media_id",
        ),
        (lambda: build_template_header_media("image", link="ftp://a.b/x"), "link"),
        (lambda: build_template_header_media("image", media_id="1", filename="a"), "filename"),
        (lambda: build_template_header_location(latitude=91, longitude=0), "latitude"),
        (lambda: build_template_body([]), "parameters"),
        (lambda: build_template_body([{"type": "image", "image": {}}]), "parameters[0].image"),
        (lambda: build_template_body([{"type": "payload", "text": "a"}]), "parameters[0].type"),
        (lambda: build_template_body([{"type": "text", "text": "a", "x": 1}]), "parameters[0].x"),
        (
            lambda: build_template_body(
                [template_text_parameter("a", parameter_name="a"), template_text_parameter("b")]
            ),
            "parameters",
        ),
        (lambda: build_template_url_button(index=10, text="a"), "index"),
        (lambda: build_template_url_button(index=True, text="a"), "index"),
        (lambda: build_template_quick_reply_button(index=0, payload=""), "payload"),
        (lambda: build_template_copy_code_button(index=0, coupon_code="x" * 16), "coupon_code"),
        (lambda: build_template_flow_button(index=0, flow_action_data=[1]), "flow_action_data"),  # type: ignore[arg-type]
        (lambda: build_template_otp_button(code="1234567890123456"), "code"),
        (lambda: build_template_otp_button(code="12\n34"), "code"),
    ],
)
def test_builders_reject_bad_input_naming_the_argument(call: Any, field: str) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        call()
    assert caught.value.field == field


# --- check_template_send: examples --------------------------------------------------------

ORDER_DEFINITION: dict[str, Any] = {
    "id": "594425479261596",
    "name": "order_update",
    "language": "en_US",
    "status": "APPROVED",
    "category": "UTILITY",
    "parameter_format": "POSITIONAL",
    "components": [
        {"type": "HEADER", "format": "IMAGE", "example": {"header_handle": ["4::aW..."]}},
        {"type": "BODY", "text": "Hi {{1}}, order {{2}} costs {{3}}, due {{4}}."},
        {"type": "FOOTER", "text": "Reply STOP to opt out"},
        {
            "type": "BUTTONS",
            "buttons": [
                {"type": "URL", "text": "Track", "url": "https://shop.example/track/{{1}}"},
                {"type": "QUICK_REPLY", "text": "Stop"},
                {"type": "PHONE_NUMBER", "text": "Call", "phone_number": "+15550001111"},
                {"type": "COPY_CODE", "example": "SAVE25"},
            ],
        },
    ],
}
ORDER_COMPONENTS: list[dict[str, Any]] = [
    build_template_header_media("image", link="https://shop.example/p.png"),
    build_template_body(
        [
            template_text_parameter("Ana"),
            template_text_parameter("42"),
            template_currency_parameter(fallback_value="$9.99", code="USD", amount_1000=9990),
            template_date_time_parameter(fallback_value="May 1"),
        ]
    ),
    build_template_url_button(index=0, text="42"),
    build_template_copy_code_button(index=3, coupon_code="SAVE25"),
]
NAMED_DEFINITION: dict[str, Any] = {
    "id": "1",
    "name": "welcome",
    "language": "pt_BR",
    "status": "APPROVED",
    "parameter_format": "NAMED",
    "components": [
        {"type": "HEADER", "format": "TEXT", "text": "Olá {{first_name}}"},
        {"type": "BODY", "text": "Pedido {{order_id}} chega {{when}}."},
    ],
}
NAMED_COMPONENTS: list[dict[str, Any]] = [
    build_template_header_text("Ana", parameter_name="first_name"),
    build_template_body(
        [
            template_date_time_parameter(fallback_value="amanhã", parameter_name="when"),
            template_text_parameter("42", parameter_name="order_id"),
        ]
    ),
]
AUTH_DEFINITION: dict[str, Any] = {
    "id": "2",
    "name": "login_code",
    "language": "en",
    "status": "APPROVED",
    "category": "AUTHENTICATION",
    "components": [
        {"type": "BODY", "text": "*{{1}}* is your verification code."},
        {"type": "BUTTONS", "buttons": [{"type": "OTP", "otp_type": "ONE_TAP", "text": "Copy"}]},
    ],
}
AUTH_COMPONENTS = [
    build_template_body([template_text_parameter("123456")]),
    build_template_otp_button(code="123456"),
]


@pytest.mark.parametrize(
    ("definition", "language", "components"),
    [
        (ORDER_DEFINITION, "en_US", ORDER_COMPONENTS),
        (Template.from_api(ORDER_DEFINITION), "en_US", list(reversed(ORDER_COMPONENTS))),
        (NAMED_DEFINITION, "pt_BR", NAMED_COMPONENTS),
        (AUTH_DEFINITION, "en", AUTH_COMPONENTS),
        (
            ORDER_DEFINITION,
            "en_US",
            [*ORDER_COMPONENTS, build_template_quick_reply_button(index=1, payload="STOP")],
        ),
        (
            {
                "name": "hello_world",
                "language": "en_US",
                "components": [{"type": "BODY", "text": "Hello World"}],
            },
            "en_US",
            None,
        ),
    ],
)
def test_matching_components_pass(definition: Any, language: str, components: Any) -> None:
    assert check_template_send(definition, language, components) is None


def _replace(components: list[dict[str, Any]], index: int, new: Any) -> list[Any]:
    out: list[Any] = list(components)
    out[index] = new
    return out


@pytest.mark.parametrize(
    ("definition", "language", "components", "field"),
    [
        (ORDER_DEFINITION, "en_GB", ORDER_COMPONENTS, "language"),
        ({**ORDER_DEFINITION, "status": "PAUSED"}, "en_US", ORDER_COMPONENTS, "language"),
        (
            ORDER_DEFINITION,
            "en_US",
            _replace(ORDER_COMPONENTS, 1, build_template_body([template_text_parameter("Ana")])),
            "components[1].parameters",
        ),
        (
            ORDER_DEFINITION,
            "en_US",
            _replace(ORDER_COMPONENTS, 0, build_template_header_media("video", media_id="9")),
            "components[0].parameters[0].type",
        ),
        (ORDER_DEFINITION, "en_US", ORDER_COMPONENTS[1:], "components"),
        (
            ORDER_DEFINITION,
            "en_US",
            _replace(ORDER_COMPONENTS, 2, build_template_url_button(index=4, text="42")),
            "components[2].index",
        ),
        (
            ORDER_DEFINITION,
            "en_US",
            _replace(ORDER_COMPONENTS, 2, build_template_quick_reply_button(index=0, payload="x")),
            "components[2].sub_type",
        ),
        (
            ORDER_DEFINITION,
            "en_US",
            _replace(ORDER_COMPONENTS, 2, build_template_url_button(index=2, text="x")),
            "components[2].index",
        ),
        (ORDER_DEFINITION, "en_US", ORDER_COMPONENTS[:3], "components"),
        (
            ORDER_DEFINITION,
            "en_US",
            [*ORDER_COMPONENTS, build_template_url_button(index=0, text="43")],
            "components[4].index",
        ),
        (
            ORDER_DEFINITION,
            "en_US",
            [*ORDER_COMPONENTS, {"type": "footer", "parameters": []}],
            "components[4].type",
        ),
        (
            NAMED_DEFINITION,
            "pt_BR",
            _replace(
                NAMED_COMPONENTS,
                1,
                build_template_body([template_text_parameter("42", parameter_name="order_id")]),
            ),
            "components[1].parameters",
        ),
        (
            NAMED_DEFINITION,
            "pt_BR",
            _replace(NAMED_COMPONENTS, 0, build_template_header_text("Ana")),
            "components[0].parameters[0].parameter_name",
        ),
        (
            NAMED_DEFINITION,
            "pt_BR",
            _replace(NAMED_COMPONENTS, 0, build_template_header_text("Ana", parameter_name="nome")),
            "components[0].parameters[0].parameter_name",
        ),
        (AUTH_DEFINITION, "en", AUTH_COMPONENTS[:1], "components"),
        (
            AUTH_DEFINITION,
            "en",
            [AUTH_COMPONENTS[0], build_template_copy_code_button(index=0, coupon_code="1")],
            "components[1].sub_type",
        ),
        (
            AUTH_DEFINITION,
            "en",
            [
                build_template_body([template_text_parameter("1", parameter_name="code")]),
                AUTH_COMPONENTS[1],
            ],
            "components[0].parameters[0].parameter_name",
        ),
        (
            AUTH_DEFINITION,
            "en",
            [build_template_header_text("x"), *AUTH_COMPONENTS],
            "components[0].type",
        ),
        (ORDER_DEFINITION, "en_US", "body", "components"),
        ("not a definition", "en_US", [], "definition"),
    ],
)
def test_mismatches_name_the_field(
    definition: Any, language: str, components: Any, field: str
) -> None:
    with pytest.raises(TemplateCheckError) as caught:
        check_template_send(definition, language, components)
    assert caught.value.field == field
    assert isinstance(caught.value, GraphRequestValidationError)


# --- send_template(definition=...) ----------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json={"messages": [{"id": "wamid.T"}]})


def phone(recorder: Recorder) -> PhoneNumberClient:
    client = GraphClient(access_token="tok-tpl", transport=httpx.MockTransport(recorder))
    return PhoneNumberClient(client, phone_number_id="1065")


async def test_send_template_with_definition_sends_once_and_exactly() -> None:
    recorder = Recorder()
    definition = Template.from_api(ORDER_DEFINITION)
    result = await phone(recorder).send_template(
        to="15551234567",
        name="order_update",
        language_code="en_US",
        components=ORDER_COMPONENTS,
        definition=definition,
    )
    [request] = recorder.requests
    assert request.url.path == f"/{DEFAULT_API_VERSION}/1065/messages"
    assert json.loads(request.content) == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": "15551234567",
        "type": "template",
        "template": {
            "name": "order_update",
            "language": {"code": "en_US"},
            "components": ORDER_COMPONENTS,
        },
    }
    assert result.message_id == "wamid.T"


@pytest.mark.parametrize(
    ("name", "language", "components", "field"),
    [
        ("order_update", "en_US", ORDER_COMPONENTS[1:], "components"),
        ("order_update", "es", ORDER_COMPONENTS, "language"),
        ("other_template", "en_US", ORDER_COMPONENTS, "name"),
    ],
)
async def test_send_template_with_a_mismatch_sends_nothing(
    name: str, language: str, components: Any, field: str
) -> None:
    recorder = Recorder()
    with pytest.raises(TemplateCheckError) as caught:
        await phone(recorder).send_template(
            to="15551234567",
            name=name,
            language_code=language,
            components=components,
            definition=ORDER_DEFINITION,
        )
    assert caught.value.field == field
    assert recorder.requests == []


async def test_send_template_without_definition_stays_unchecked() -> None:
    recorder = Recorder()
    await phone(recorder).send_template(
        to="15551234567", name="order_update", language_code="es", components=ORDER_COMPONENTS[1:]
    )
    assert len(recorder.requests) == 1
