"""Flow, carousel and media-header sends, and ``biz_opaque_callback_data`` on every helper.

Wire JSON is written from the platform's published examples (interactive Flow
message, interactive media carousel, reply buttons with a media header) and
captured at the transport with ``httpx.MockTransport``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from svc.graph import (
    DEFAULT_API_VERSION,
    GraphRequestValidationError,
    build_interactive_buttons_message,
    build_interactive_carousel_message,
    build_interactive_cta_url_message,
    build_interactive_flow_message,
)
from tests.graph.test_sends import CASES, PHONE_ID, TO, Recorder, individual, make_sender

BSUID = "US.13491208655302741918"
IMAGE = "https://www.luckyshrub.com/assets/blue-echeveria.jpeg"


def flow_wire(parameters: dict[str, Any], **interactive: Any) -> dict[str, Any]:
    return individual(
        "interactive",
        {"type": "flow", **interactive, "action": {"name": "flow", "parameters": parameters}},
    )


async def test_send_interactive_flow_navigate_exact_wire() -> None:
    recorder = Recorder()
    result = await make_sender(recorder).send_interactive_flow(
        to=TO,
        header_text="Flow message header",
        body_text="Flow message body",
        footer_text="Flow message footer",
        flow_cta="Book!",
        flow_id="1",
        flow_token="AQAAAAACS5FpgQ_cAAAAAD0QI3s.",
        flow_action="navigate",
        screen="<SCREEN_NAME>",
        data={"product_name": "name", "product_description": "description", "product_price": 100},
        biz_opaque_callback_data="campaign=spring",
    )
    [request] = recorder.requests
    assert request.url.path == f"/{DEFAULT_API_VERSION}/{PHONE_ID}/messages"
    expected = flow_wire(
        {
            "flow_message_version": "3",
            "flow_token": "AQAAAAACS5FpgQ_cAAAAAD0QI3s.",
            "flow_id": "1",
            "flow_cta": "Book!",
            "flow_action": "navigate",
            "flow_action_payload": {
                "screen": "<SCREEN_NAME>",
                "data": {
                    "product_name": "name",
                    "product_description": "description",
                    "product_price": 100,
                },
            },
        },
        header={"type": "text", "text": "Flow message header"},
        body={"text": "Flow message body"},
        footer={"text": "Flow message footer"},
    )
    expected["biz_opaque_callback_data"] = "campaign=spring"
    assert json.loads(request.content) == expected
    assert result.message_id == "wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI"


def test_flow_data_exchange_by_name_draft_with_media_header() -> None:
    payload = build_interactive_flow_message(
        to=TO,
        body_text="Sign up",
        flow_cta="Start",
        flow_name="signup_flow",
        flow_action="data_exchange",
        mode="draft",
        header={"type": "video", "link": "https://example.com/intro.mp4"},
    )
    assert payload == flow_wire(
        {
            "flow_message_version": "3",
            "flow_name": "signup_flow",
            "flow_cta": "Start",
            "flow_action": "data_exchange",
            "mode": "draft",
        },
        header={"type": "video", "video": {"link": "https://example.com/intro.mp4"}},
        body={"text": "Sign up"},
    )


def test_flow_to_a_bsuid_goes_to_recipient() -> None:
    payload = build_interactive_flow_message(
        to=BSUID, body_text="b", flow_cta="Go", flow_id="9", screen="FIRST"
    )
    assert payload["recipient"] == BSUID
    assert "to" not in payload
    assert payload["interactive"]["action"]["parameters"]["flow_action_payload"] == {
        "screen": "FIRST"
    }


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"flow_id": "1", "flow_name": "n", "screen": "S"}, "flow_id"),
        ({"screen": "S"}, "flow_id"),
        ({"flow_id": "1"}, "screen"),
        ({"flow_id": "1", "flow_action": "navigate"}, "screen"),
        ({"flow_id": "1", "flow_action": "data_exchange", "screen": "S"}, "screen"),
        ({"flow_id": "1", "flow_action": "data_exchange", "data": {"a": 1}}, "data"),
        ({"flow_id": "1", "screen": "S", "data": {}}, "data"),
        ({"flow_id": "1", "screen": "S", "flow_cta": "x" * 31}, "flow_cta"),
        ({"flow_id": "1", "screen": "S", "mode": "live"}, "mode"),
        ({"flow_id": "1", "screen": "S", "flow_action": "open"}, "flow_action"),
        (
            {
                "flow_id": "1",
                "screen": "S",
                "header_text": "h",
                "header": {"type": "image", "id": "1"},
            },
            "header",
        ),
    ],
)
async def test_flow_is_refused_before_any_request(kwargs: dict[str, Any], field: str) -> None:
    recorder = Recorder()
    arguments: dict[str, Any] = {"to": TO, "body_text": "b", "flow_cta": "Go", **kwargs}
    with pytest.raises(GraphRequestValidationError) as caught:
        await make_sender(recorder).send_interactive_flow(**arguments)
    assert caught.value.field == field
    assert recorder.requests == []


# --- media headers on reply buttons and CTA URL -------------------------------------------


@pytest.mark.parametrize(
    ("header", "wire"),
    [
        (
            {"type": "image", "id": "2762702990552401"},
            {"type": "image", "image": {"id": "2762702990552401"}},
        ),
        (
            {"type": "video", "link": "https://x.test/v.mp4"},
            {"type": "video", "video": {"link": "https://x.test/v.mp4"}},
        ),
        (
            {"type": "document", "link": "https://x.test/d.pdf", "filename": "d.pdf"},
            {"type": "document", "document": {"link": "https://x.test/d.pdf", "filename": "d.pdf"}},
        ),
    ],
)
def test_reply_buttons_and_cta_take_a_media_header(
    header: dict[str, str], wire: dict[str, Any]
) -> None:
    buttons = build_interactive_buttons_message(
        to=TO, body_text="Pick", buttons=[{"id": "a", "title": "A"}], header=header
    )
    assert buttons["interactive"]["header"] == wire
    cta = build_interactive_cta_url_message(
        to=TO, body_text="See", display_text="Open", url="https://x.test", header=header
    )
    assert cta["interactive"] == {
        "type": "cta_url",
        "header": wire,
        "body": {"text": "See"},
        "action": {
            "name": "cta_url",
            "parameters": {"display_text": "Open", "url": "https://x.test"},
        },
    }


@pytest.mark.parametrize(
    ("header", "field"),
    [
        ({"type": "audio", "id": "1"}, "header.type"),
        ({"type": "image"}, "header.id"),
        ({"type": "image", "id": "1", "link": "https://x.test/a.png"}, "header.id"),
        ({"type": "image", "id": "1", "filename": "a.png"}, "header.filename"),
        ({"type": "image", "link": "ftp://x.test/a.png"}, "header.link"),
        ({"type": "image", "id": "1", "caption": "no"}, "header.caption"),
    ],
)
def test_bad_media_headers_name_the_field(header: dict[str, str], field: str) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        build_interactive_buttons_message(
            to=TO, body_text="Pick", buttons=[{"id": "a", "title": "A"}], header=header
        )
    assert caught.value.field == field


# --- carousel -----------------------------------------------------------------------------


def url_card(index: int, link: str) -> dict[str, Any]:
    return {
        "header": {"type": "image", "link": link},
        "body_text": f"Card {index}",
        "buttons": [{"type": "url", "display_text": "Shop", "url": f"https://x.test/{index}"}],
    }


async def test_send_interactive_carousel_url_cards_exact_wire() -> None:
    recorder = Recorder()
    await make_sender(recorder).send_interactive_carousel(
        to=TO,
        body_text="Of course! Here are three of our latest arrivals, each under $25:",
        cards=[url_card(0, IMAGE), url_card(1, IMAGE)],
    )
    [request] = recorder.requests
    card = {
        "type": "cta_url",
        "header": {"type": "image", "image": {"link": IMAGE}},
    }
    assert json.loads(request.content) == individual(
        "interactive",
        {
            "type": "carousel",
            "body": {"text": "Of course! Here are three of our latest arrivals, each under $25:"},
            "action": {
                "cards": [
                    {
                        "card_index": index,
                        **card,
                        "body": {"text": f"Card {index}"},
                        "action": {
                            "name": "cta_url",
                            "parameters": {
                                "display_text": "Shop",
                                "url": f"https://x.test/{index}",
                            },
                        },
                    }
                    for index in (0, 1)
                ]
            },
        },
    )


def test_carousel_quick_reply_cards_with_video_by_id() -> None:
    card = {
        "header": {"type": "video", "id": "1234"},
        "buttons": [
            {"type": "quick_reply", "id": "learn-blue-echeveria", "title": "Learn more"},
            {"type": "quick_reply", "id": "fav", "title": "Add to favorites"},
        ],
    }
    payload = build_interactive_carousel_message(to=TO, body_text="Pick", cards=[card, card])
    first = payload["interactive"]["action"]["cards"][0]
    assert first == {
        "card_index": 0,
        "type": "cta_url",
        "header": {"type": "video", "video": {"id": "1234"}},
        "action": {
            "buttons": [
                {
                    "type": "quick_reply",
                    "quick_reply": {"id": "learn-blue-echeveria", "title": "Learn more"},
                },
                {"type": "quick_reply", "quick_reply": {"id": "fav", "title": "Add to favorites"}},
            ]
        },
    }
    assert "header" not in payload["interactive"] and "footer" not in payload["interactive"]


QUICK = {"type": "quick_reply", "id": "a", "title": "A"}


@pytest.mark.parametrize(
    ("cards", "field"),
    [
        ([url_card(0, IMAGE)], "cards"),
        ([url_card(i, IMAGE) for i in range(11)], "cards"),
        (
            [url_card(0, IMAGE), {"header": {"type": "image", "id": "1"}, "buttons": [QUICK]}],
            "cards[1].buttons",
        ),
        (
            [
                {"header": {"type": "image", "id": "1"}, "buttons": [QUICK]},
                {"header": {"type": "image", "id": "1"}, "buttons": [QUICK, {**QUICK, "id": "b"}]},
            ],
            "cards[1].buttons",
        ),
        (
            [
                {**url_card(0, IMAGE), "buttons": url_card(0, IMAGE)["buttons"] * 2},
                url_card(1, IMAGE),
            ],
            "cards[0].buttons[1]",
        ),
        (
            [{**url_card(0, IMAGE), "body_text": "x" * 161}, url_card(1, IMAGE)],
            "cards[0].body_text",
        ),
        (
            [{**url_card(0, IMAGE), "body_text": "a\nb\nc\nd"}, url_card(1, IMAGE)],
            "cards[0].body_text",
        ),
        (
            [{**url_card(0, IMAGE), "header": {"type": "document", "id": "1"}}, url_card(1, IMAGE)],
            "cards[0].header.type",
        ),
        (
            [{"header": {"type": "image", "id": "1"}, "buttons": [QUICK, QUICK]}] * 2,
            "cards[0].buttons[1].id",
        ),
        (
            [{"header": {"type": "image", "id": "1"}, "buttons": [QUICK] * 4}] * 2,
            "cards[0].buttons",
        ),
    ],
)
async def test_carousel_is_refused_before_any_request(cards: list[Any], field: str) -> None:
    recorder = Recorder()
    with pytest.raises(GraphRequestValidationError) as caught:
        await make_sender(recorder).send_interactive_carousel(to=TO, body_text="b", cards=cards)
    assert caught.value.field == field
    assert recorder.requests == []


# --- biz_opaque_callback_data ---------------------------------------------------------------

HELPER_CASES = [case for case in CASES if case[0] != "send_message"]


@pytest.mark.parametrize(
    ("helper", "args", "kwargs", "wire"),
    HELPER_CASES,
    ids=[f"{case[0]}-{index}" for index, case in enumerate(HELPER_CASES)],
)
async def test_every_send_helper_carries_biz_opaque_callback_data(
    helper: str, args: tuple[Any, ...], kwargs: dict[str, Any], wire: dict[str, Any]
) -> None:
    recorder = Recorder()
    await getattr(make_sender(recorder), helper)(
        *args, **kwargs, biz_opaque_callback_data="order:8841"
    )
    [request] = recorder.requests
    assert json.loads(request.content) == {**wire, "biz_opaque_callback_data": "order:8841"}


async def test_marketing_template_carries_biz_opaque_callback_data() -> None:
    recorder = Recorder()
    await make_sender(recorder).send_marketing_template(
        to=TO, name="spring_sale", language_code="en_US", biz_opaque_callback_data="c1"
    )
    [request] = recorder.requests
    assert request.url.path == f"/{DEFAULT_API_VERSION}/{PHONE_ID}/marketing_messages"
    assert json.loads(request.content)["biz_opaque_callback_data"] == "c1"


@pytest.mark.parametrize("value", ["", "x" * 513, "line\nbreak", 7])
async def test_bad_callback_data_is_refused_before_any_request(value: Any) -> None:
    recorder = Recorder()
    with pytest.raises(GraphRequestValidationError) as caught:
        await make_sender(recorder).send_text(to=TO, text="hi", biz_opaque_callback_data=value)
    assert caught.value.field == "biz_opaque_callback_data"
    assert recorder.requests == []


async def test_prebuilt_payload_keeps_and_checks_callback_data() -> None:
    recorder = Recorder()
    sender = make_sender(recorder)
    payload = {**individual("text", {"body": "hi"}), "biz_opaque_callback_data": "x" * 512}
    await sender.send_message(payload)
    assert json.loads(recorder.requests[0].content) == payload
    with pytest.raises(GraphRequestValidationError) as caught:
        await sender.send_message({**payload, "biz_opaque_callback_data": "x" * 513})
    assert caught.value.field == "biz_opaque_callback_data"
    assert len(recorder.requests) == 1
