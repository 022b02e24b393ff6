"""The rich composer bodies (Flow, carousel, media headers) and ``bizOpaqueCallbackData``.

Each body goes through POST {prefix}/messages to the exact platform wire JSON
captured by the fake Graph transport; refusals send nothing; the OpenAPI
document carries every new body.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests._support import FakeGraphTransport

from .conftest import AUTH, AppFactory

TO = "15551234567"
ENVELOPE = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": TO}
IMAGE = "https://www.luckyshrub.com/assets/blue-echeveria.jpeg"


async def _post(client: Any, path: str, body: Any) -> Any:
    return await client.post(
        path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", **AUTH}
    )


def _card(index: int) -> dict[str, Any]:
    return {
        "header": {"type": "image", "link": IMAGE},
        "bodyText": f"Card {index}",
        "buttons": [{"type": "quickReply", "id": f"more-{index}", "title": "Learn more"}],
    }


CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (
        {
            "type": "interactiveFlow",
            "to": TO,
            "bodyText": "Book your appointment",
            "flowCta": "Book now",
            "flowId": "1197715005513101",
            "flowToken": "tok-1",
            "flowAction": "navigate",
            "screen": "BOOKING",
            "data": {"available_dates": ["2024-01-15"]},
            "header": {"type": "image", "id": "2762702990552401"},
            "footerText": "Lucky Shrub",
            "bizOpaqueCallbackData": "booking:77",
        },
        {
            **ENVELOPE,
            "type": "interactive",
            "interactive": {
                "type": "flow",
                "header": {"type": "image", "image": {"id": "2762702990552401"}},
                "body": {"text": "Book your appointment"},
                "footer": {"text": "Lucky Shrub"},
                "action": {
                    "name": "flow",
                    "parameters": {
                        "flow_message_version": "3",
                        "flow_token": "tok-1",
                        "flow_id": "1197715005513101",
                        "flow_cta": "Book now",
                        "flow_action": "navigate",
                        "flow_action_payload": {
                            "screen": "BOOKING",
                            "data": {"available_dates": ["2024-01-15"]},
                        },
                    },
                },
            },
            "biz_opaque_callback_data": "booking:77",
        },
    ),
    (
        {
            "type": "interactiveCarousel",
            "to": TO,
            "bodyText": "Here are our latest arrivals:",
            "cards": [_card(0), _card(1)],
        },
        {
            **ENVELOPE,
            "type": "interactive",
            "interactive": {
                "type": "carousel",
                "body": {"text": "Here are our latest arrivals:"},
                "action": {
                    "cards": [
                        {
                            "card_index": index,
                            "type": "cta_url",
                            "header": {"type": "image", "image": {"link": IMAGE}},
                            "body": {"text": f"Card {index}"},
                            "action": {
                                "buttons": [
                                    {
                                        "type": "quick_reply",
                                        "quick_reply": {
                                            "id": f"more-{index}",
                                            "title": "Learn more",
                                        },
                                    }
                                ]
                            },
                        }
                        for index in (0, 1)
                    ]
                },
            },
        },
    ),
    (
        {
            "type": "interactiveCarousel",
            "to": TO,
            "bodyText": "Shop",
            "cards": [
                {
                    "header": {"type": "video", "id": "55"},
                    "buttons": [{"type": "url", "displayText": "Buy", "url": "https://x.test/1"}],
                }
            ]
            * 2,
        },
        {
            **ENVELOPE,
            "type": "interactive",
            "interactive": {
                "type": "carousel",
                "body": {"text": "Shop"},
                "action": {
                    "cards": [
                        {
                            "card_index": index,
                            "type": "cta_url",
                            "header": {"type": "video", "video": {"id": "55"}},
                            "action": {
                                "name": "cta_url",
                                "parameters": {"display_text": "Buy", "url": "https://x.test/1"},
                            },
                        }
                        for index in (0, 1)
                    ]
                },
            },
        },
    ),
    (
        {
            "type": "interactiveButtons",
            "to": TO,
            "bodyText": "Pick",
            "buttons": [{"id": "a", "title": "A"}],
            "header": {"type": "document", "link": "https://x.test/d.pdf", "filename": "d.pdf"},
        },
        {
            **ENVELOPE,
            "type": "interactive",
            "interactive": {
                "type": "button",
                "header": {
                    "type": "document",
                    "document": {"link": "https://x.test/d.pdf", "filename": "d.pdf"},
                },
                "body": {"text": "Pick"},
                "action": {"buttons": [{"type": "reply", "reply": {"id": "a", "title": "A"}}]},
            },
        },
    ),
    (
        {
            "type": "interactiveCtaUrl",
            "to": TO,
            "bodyText": "See",
            "displayText": "Open",
            "url": "https://x.test",
            "header": {"type": "video", "link": "https://x.test/v.mp4"},
            "bizOpaqueCallbackData": "cta",
        },
        {
            **ENVELOPE,
            "type": "interactive",
            "interactive": {
                "type": "cta_url",
                "header": {"type": "video", "video": {"link": "https://x.test/v.mp4"}},
                "body": {"text": "See"},
                "action": {
                    "name": "cta_url",
                    "parameters": {"display_text": "Open", "url": "https://x.test"},
                },
            },
            "biz_opaque_callback_data": "cta",
        },
    ),
    (
        {"type": "text", "to": TO, "text": "hi", "bizOpaqueCallbackData": "t-1"},
        {**ENVELOPE, "type": "text", "text": {"body": "hi"}, "biz_opaque_callback_data": "t-1"},
    ),
    (
        {
            "type": "template",
            "to": TO,
            "name": "hello_world",
            "languageCode": "en_US",
            "bizOpaqueCallbackData": "tpl",
        },
        {
            **ENVELOPE,
            "type": "template",
            "template": {"name": "hello_world", "language": {"code": "en_US"}},
            "biz_opaque_callback_data": "tpl",
        },
    ),
    (
        {
            "messaging_product": "whatsapp",
            "to": TO,
            "type": "text",
            "text": {"body": "native"},
            "biz_opaque_callback_data": "n-1",
        },
        {**ENVELOPE, "type": "text", "text": {"body": "native"}, "biz_opaque_callback_data": "n-1"},
    ),
]


@pytest.mark.parametrize(("body", "wire"), CASES, ids=lambda v: str(v.get("type")))
async def test_rich_composer_body_becomes_the_wire_payload(
    make_app: AppFactory, graph: FakeGraphTransport, body: dict[str, Any], wire: dict[str, Any]
) -> None:
    response = await _post(make_app().test_client(), "/api/messages", body)
    assert response.status_code == 200, await response.get_data()
    assert graph.bodies() == [wire]


async def test_text_route_carries_biz_opaque_callback_data(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    body = {"to": TO, "text": "hi", "bizOpaqueCallbackData": "route-text"}
    response = await _post(make_app().test_client(), "/api/messages/text", body)
    assert response.status_code == 200
    assert graph.bodies() == [
        {
            **ENVELOPE,
            "type": "text",
            "text": {"body": "hi"},
            "biz_opaque_callback_data": "route-text",
        }
    ]


FLOW = {"type": "interactiveFlow", "to": TO, "bodyText": "b", "flowCta": "Go"}


@pytest.mark.parametrize(
    "body",
    [
        {**FLOW, "screen": "S"},
        {**FLOW, "flowId": "1", "flowName": "n", "screen": "S"},
        {**FLOW, "flowId": "1"},
        {**FLOW, "flowId": "1", "flowAction": "data_exchange", "screen": "S"},
        {**FLOW, "flowId": "1", "screen": "S", "flowCta": "x" * 31},
        {**FLOW, "flowId": "1", "screen": "S", "mode": "live"},
        {**FLOW, "flowId": "1", "screen": "S", "header": {"type": "audio", "id": "1"}},
        {"type": "interactiveCarousel", "to": TO, "bodyText": "b", "cards": [_card(0)]},
        {
            "type": "interactiveCarousel",
            "to": TO,
            "bodyText": "b",
            "cards": [_card(0), {**_card(1), "header": {"type": "document", "id": "1"}}],
        },
        {
            "type": "interactiveCarousel",
            "to": TO,
            "bodyText": "b",
            "cards": [_card(0), {**_card(1), "buttons": [{"type": "call", "id": "x"}]}],
        },
        {"type": "text", "to": TO, "text": "hi", "bizOpaqueCallbackData": "x" * 513},
        {"type": "text", "to": TO, "text": "hi", "bizOpaqueCallbackData": 5},
    ],
)
async def test_rich_refusals_send_nothing(
    make_app: AppFactory, graph: FakeGraphTransport, body: dict[str, Any]
) -> None:
    response = await _post(make_app().test_client(), "/api/messages", body)
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == "malformed_body"
    assert graph.requests == []


async def test_openapi_carries_the_new_composer_bodies(make_app: AppFactory) -> None:
    document = await (await make_app().test_client().get("/openapi.json")).get_json()
    schemas = document["components"]["schemas"]
    assert {
        "InteractiveFlowBody",
        "InteractiveCarouselBody",
        "CarouselCard",
        "MediaHeaderIn",
    } <= set(schemas)
    assert "bizOpaqueCallbackData" in schemas["InteractiveFlowBody"]["properties"]
    text_route = json.dumps(document["paths"]["/api/messages/text"]["post"]["requestBody"])
    assert "bizOpaqueCallbackData" in text_route
    assert "header" in schemas["InteractiveButtonsBody"]["properties"]
    text = json.dumps(document["paths"]["/api/messages"]["post"]["requestBody"])
    assert "InteractiveFlowBody" in text and "InteractiveCarouselBody" in text
