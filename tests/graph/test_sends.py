"""Every send helper against the exact wire request, captured with ``httpx.MockTransport``."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from svc.graph import (
    DEFAULT_API_VERSION,
    GraphClient,
    GraphRequestValidationError,
    GraphSerializationError,
)
from svc.graph._scoped import PhoneNumberClient
from svc.graph._send import SendResult
from svc.graph._send_interactive import InteractiveSender
from svc.graph.messages import TextMessage

PHONE_ID = "106540352242922"
TOKEN = "test-token-abc"
GROUP = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD"
ANSWER: dict[str, Any] = {
    "messaging_product": "whatsapp",
    "contacts": [{"input": "15551234567", "wa_id": "15551234567"}],
    "messages": [{"id": "wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI"}],
}


class Recorder:
    """A MockTransport handler that keeps every request and answers with ``answer``."""

    def __init__(self, answer: Any = None, status: int = 200) -> None:
        self.requests: list[httpx.Request] = []
        self.answer = ANSWER if answer is None else answer
        self.status = status

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(self.status, json=self.answer)


def make_sender(recorder: Recorder) -> PhoneNumberClient:
    client = GraphClient(access_token=TOKEN, transport=httpx.MockTransport(recorder))
    return PhoneNumberClient(client, phone_number_id=PHONE_ID)


def individual(type_: str, body: Any, **extra: Any) -> dict[str, Any]:
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": "15551234567",
        "type": type_,
        type_: body,
        **extra,
    }


def group(type_: str, body: Any, **extra: Any) -> dict[str, Any]:
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "group",
        "to": GROUP,
        "type": type_,
        type_: body,
        **extra,
    }


TO = "15551234567"
REPLY = {"context": {"message_id": "wamid.PREV"}}

# (helper, positional args, keyword args, expected wire JSON)
CASES: list[tuple[str, tuple[Any, ...], dict[str, Any], dict[str, Any]]] = [
    ("send_text", (), {"to": TO, "text": "hi\nthere"}, individual("text", {"body": "hi\nthere"})),
    (
        "send_text",
        (),
        {
            "to": TO,
            "text": "see https://x.test",
            "preview_url": True,
            "reply_to_message_id": "wamid.PREV",
        },
        individual("text", {"body": "see https://x.test", "preview_url": True}, **REPLY),
    ),
    (
        "send_image",
        (),
        {"to": TO, "media_id": "1234", "caption": "cat"},
        individual("image", {"id": "1234", "caption": "cat"}),
    ),
    (
        "send_video",
        (),
        {"to": TO, "link": "https://cdn.test/v.mp4", "reply_to_message_id": "wamid.PREV"},
        individual("video", {"link": "https://cdn.test/v.mp4"}, **REPLY),
    ),
    (
        "send_audio",
        (),
        {"to": TO, "media_id": "55", "voice": True},
        individual("audio", {"id": "55", "voice": True}),
    ),
    ("send_audio", (), {"to": TO, "media_id": "55"}, individual("audio", {"id": "55"})),
    (
        "send_document",
        (),
        {"to": TO, "link": "https://cdn.test/a.pdf", "caption": "Invoice", "filename": "a.pdf"},
        individual(
            "document",
            {"link": "https://cdn.test/a.pdf", "caption": "Invoice", "filename": "a.pdf"},
        ),
    ),
    ("send_sticker", (), {"to": TO, "media_id": "st1"}, individual("sticker", {"id": "st1"})),
    ("send_media", ("image",), {"to": TO, "media_id": "9"}, individual("image", {"id": "9"})),
    (
        "send_location",
        (),
        {"to": TO, "latitude": 52.52, "longitude": -13.4, "name": "HQ", "address": "Main St 1"},
        individual(
            "location",
            {"latitude": 52.52, "longitude": -13.4, "name": "HQ", "address": "Main St 1"},
        ),
    ),
    (
        "send_reaction",
        (),
        {"to": TO, "message_id": "wamid.PREV", "emoji": "\N{THUMBS UP SIGN}"},
        individual("reaction", {"message_id": "wamid.PREV", "emoji": "\N{THUMBS UP SIGN}"}),
    ),
    (
        "send_remove_reaction",
        (),
        {"to": TO, "message_id": "wamid.PREV"},
        individual("reaction", {"message_id": "wamid.PREV", "emoji": ""}),
    ),
    (
        "send_contacts",
        (),
        {
            "to": TO,
            "contacts": [
                {
                    "name": {
                        "formatted_name": "Ada Lovelace",
                        "first_name": "Ada",
                        "last_name": "Lovelace",
                    },
                    "phones": [
                        {"phone": "+44 20 7946 0000", "type": "WORK", "wa_id": "442079460000"}
                    ],
                    "emails": [{"email": "ada@example.test", "type": "WORK"}],
                    "urls": [{"url": "https://example.test"}],
                    "addresses": [{"city": "London", "country_code": "GB"}],
                    "org": {"company": "Analytical Engines"},
                    "birthday": "1815-12-10",
                }
            ],
        },
        individual(
            "contacts",
            [
                {
                    "addresses": [{"city": "London", "country_code": "GB"}],
                    "birthday": "1815-12-10",
                    "emails": [{"email": "ada@example.test", "type": "WORK"}],
                    "name": {
                        "formatted_name": "Ada Lovelace",
                        "first_name": "Ada",
                        "last_name": "Lovelace",
                    },
                    "org": {"company": "Analytical Engines"},
                    "phones": [
                        {"phone": "+44 20 7946 0000", "type": "WORK", "wa_id": "442079460000"}
                    ],
                    "urls": [{"url": "https://example.test"}],
                }
            ],
        ),
    ),
    (
        "send_interactive_buttons",
        (),
        {
            "to": TO,
            "body_text": "Pick one",
            "buttons": [{"id": "yes", "title": "Yes"}, {"id": "no", "title": "No"}],
            "header_text": "Question",
            "footer_text": "Thanks",
            "reply_to_message_id": "wamid.PREV",
        },
        individual(
            "interactive",
            {
                "type": "button",
                "header": {"type": "text", "text": "Question"},
                "body": {"text": "Pick one"},
                "footer": {"text": "Thanks"},
                "action": {
                    "buttons": [
                        {"type": "reply", "reply": {"id": "yes", "title": "Yes"}},
                        {"type": "reply", "reply": {"id": "no", "title": "No"}},
                    ]
                },
            },
            **REPLY,
        ),
    ),
    (
        "send_interactive_list",
        (),
        {
            "to": TO,
            "body_text": "Menu",
            "button_text": "Open",
            "sections": [
                {"title": "Food", "rows": [{"id": "r1", "title": "Pizza", "description": "Hot"}]},
                {"title": "Drinks", "rows": [{"id": "r2", "title": "Tea"}]},
            ],
        },
        individual(
            "interactive",
            {
                "type": "list",
                "body": {"text": "Menu"},
                "action": {
                    "button": "Open",
                    "sections": [
                        {
                            "title": "Food",
                            "rows": [{"id": "r1", "title": "Pizza", "description": "Hot"}],
                        },
                        {"title": "Drinks", "rows": [{"id": "r2", "title": "Tea"}]},
                    ],
                },
            },
        ),
    ),
    (
        "send_interactive_cta_url",
        (),
        {"to": TO, "body_text": "Visit", "display_text": "Open site", "url": "https://shop.test/x"},
        individual(
            "interactive",
            {
                "type": "cta_url",
                "body": {"text": "Visit"},
                "action": {
                    "name": "cta_url",
                    "parameters": {"display_text": "Open site", "url": "https://shop.test/x"},
                },
            },
        ),
    ),
    (
        "send_interactive_product",
        (),
        {"to": TO, "catalog_id": "cat1", "product_retailer_id": "sku1"},
        individual(
            "interactive",
            {"type": "product", "action": {"catalog_id": "cat1", "product_retailer_id": "sku1"}},
        ),
    ),
    (
        "send_interactive_products",
        (),
        {
            "to": TO,
            "catalog_id": "cat1",
            "header_text": "Sale",
            "body_text": "Our picks",
            "sections": [{"title": "Shoes", "product_retailer_ids": ["s1", "s2"]}],
            "footer_text": "Limited",
        },
        individual(
            "interactive",
            {
                "type": "product_list",
                "header": {"type": "text", "text": "Sale"},
                "body": {"text": "Our picks"},
                "footer": {"text": "Limited"},
                "action": {
                    "catalog_id": "cat1",
                    "sections": [
                        {
                            "title": "Shoes",
                            "product_items": [
                                {"product_retailer_id": "s1"},
                                {"product_retailer_id": "s2"},
                            ],
                        }
                    ],
                },
            },
        ),
    ),
    (
        "send_interactive_catalog",
        (),
        {"to": TO, "body_text": "Browse", "thumbnail_product_retailer_id": "sku9"},
        individual(
            "interactive",
            {
                "type": "catalog_message",
                "body": {"text": "Browse"},
                "action": {
                    "name": "catalog_message",
                    "parameters": {"thumbnail_product_retailer_id": "sku9"},
                },
            },
        ),
    ),
    (
        "send_interactive_location_request",
        (),
        {"to": TO, "body_text": "Where are you?"},
        individual(
            "interactive",
            {
                "type": "location_request_message",
                "body": {"text": "Where are you?"},
                "action": {"name": "send_location"},
            },
        ),
    ),
    (
        "send_call_permission_request",
        (),
        {
            "to": TO,
            "body_text": "May we call?",
            "footer_text": "Support",
            "reply_to_message_id": "wamid.PREV",
        },
        individual(
            "interactive",
            {
                "type": "call_permission_request",
                "body": {"text": "May we call?"},
                "footer": {"text": "Support"},
                "action": {"name": "call_permission_request"},
            },
            **REPLY,
        ),
    ),
    (
        "send_voice_call_button",
        (),
        {
            "to": TO,
            "recipient": "US.13491208655302741918",
            "body_text": "Call us",
            "display_text": "Call now",
            "ttl_minutes": 100,
            "payload": "campaign-7",
        },
        individual(
            "interactive",
            {
                "type": "voice_call",
                "body": {"text": "Call us"},
                "action": {
                    "name": "voice_call",
                    "parameters": {
                        "display_text": "Call now",
                        "ttl_minutes": 100,
                        "payload": "campaign-7",
                    },
                },
            },
        ),
    ),
    (
        "send_template",
        (),
        {
            "to": TO,
            "name": "order_update",
            "language_code": "en_US",
            "components": [{"type": "body", "parameters": [{"type": "text", "text": "42"}]}],
        },
        individual(
            "template",
            {
                "name": "order_update",
                "language": {"code": "en_US"},
                "components": [{"type": "body", "parameters": [{"type": "text", "text": "42"}]}],
            },
        ),
    ),
    (
        "send_group_text",
        (),
        {"to": GROUP, "text": "hello all"},
        group("text", {"body": "hello all"}),
    ),
    (
        "send_group_media",
        ("image",),
        {"to": GROUP, "link": "https://cdn.test/p.png", "caption": "pic"},
        group("image", {"link": "https://cdn.test/p.png", "caption": "pic"}),
    ),
    (
        "send_group_template",
        (),
        {
            "to": GROUP,
            "name": "weekly_digest",
            "language_code": "en",
            "template_category": "UTILITY",
        },
        group("template", {"name": "weekly_digest", "language": {"code": "en"}}),
    ),
    (
        "send_group_pin",
        (),
        {"to": GROUP, "pin_type": "pin", "message_id": "wamid.G1", "expiration_days": 7},
        group("pin", {"type": "pin", "message_id": "wamid.G1", "expiration_days": 7}),
    ),
    (
        "send_group_pin",
        (),
        {"to": GROUP, "pin_type": "unpin", "message_id": "wamid.G1"},
        group("pin", {"type": "unpin", "message_id": "wamid.G1"}),
    ),
    (
        "send_message",
        ({"messaging_product": "whatsapp", "to": TO, "type": "text", "text": {"body": "raw"}},),
        {},
        {"messaging_product": "whatsapp", "to": TO, "type": "text", "text": {"body": "raw"}},
    ),
]


@pytest.mark.parametrize(
    ("helper", "args", "kwargs", "wire"),
    CASES,
    ids=[f"{case[0]}-{index}" for index, case in enumerate(CASES)],
)
async def test_send_helper_wire_request(
    helper: str, args: tuple[Any, ...], kwargs: dict[str, Any], wire: dict[str, Any]
) -> None:
    recorder = Recorder()
    result = await getattr(make_sender(recorder), helper)(*args, **kwargs)
    [request] = recorder.requests
    assert request.method == "POST"
    assert request.url.path == f"/{DEFAULT_API_VERSION}/{PHONE_ID}/messages"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == wire
    assert isinstance(result, SendResult)
    assert result.message_id == "wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI"


async def test_send_posts_any_declared_message_to_its_edge() -> None:
    recorder = Recorder()
    message = TextMessage(to=TO, text="declared", biz_opaque_callback_data="order:1")
    result = await make_sender(recorder).send(message)
    [request] = recorder.requests
    assert request.url.path == f"/{DEFAULT_API_VERSION}/{PHONE_ID}/messages"
    assert json.loads(request.content) == message.to_payload()
    assert json.loads(request.content)["biz_opaque_callback_data"] == "order:1"
    assert result.message_id == "wamid.HBgLMTU1NTEyMzQ1NjcVAgARGBI"


async def test_send_helpers_cover_every_public_send() -> None:
    public = {name for name in dir(InteractiveSender) if name.startswith("send")}
    # Flow and carousel sends are tested in test_interactive_sends.
    tested = {case[0] for case in CASES} | {
        "send",
        "send_marketing_template",
        "send_interactive_flow",
        "send_interactive_carousel",
        # Payments sends are tested against the published examples (test_meta_send_examples).
        "send_order_details",
        "send_order_status",
    }
    assert public == tested


@pytest.mark.parametrize(
    ("kwargs", "routing"),
    [
        ({"to": TO}, {"to": TO}),
        ({"recipient": "US.13491208655302741918"}, {"recipient": "US.13491208655302741918"}),
        ({"to": TO, "recipient": "US.13491208655302741918"}, {"to": TO}),
    ],
)
async def test_send_marketing_template(kwargs: dict[str, Any], routing: dict[str, str]) -> None:
    recorder = Recorder(
        answer={**ANSWER, "messages": [{"id": "wamid.M", "message_status": "accepted"}]}
    )
    result = await make_sender(recorder).send_marketing_template(
        name="spring_sale",
        language_code="en_US",
        components=[{"type": "header", "parameters": [{"type": "image", "image": {"id": "77"}}]}],
        product_policy="STRICT",
        message_activity_sharing=True,
        **kwargs,
    )
    [request] = recorder.requests
    assert request.method == "POST"
    assert request.url.path == f"/{DEFAULT_API_VERSION}/{PHONE_ID}/marketing_messages"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert json.loads(request.content) == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        **routing,
        "type": "template",
        "template": {
            "name": "spring_sale",
            "language": {"code": "en_US"},
            "components": [
                {"type": "header", "parameters": [{"type": "image", "image": {"id": "77"}}]}
            ],
        },
        "product_policy": "STRICT",
        "message_activity_sharing": True,
    }
    assert result.message_id == "wamid.M"
    assert result.message_status == "accepted"


async def test_send_marketing_template_minimal() -> None:
    recorder = Recorder()
    await make_sender(recorder).send_marketing_template(to=TO, name="promo", language_code="en")
    [request] = recorder.requests
    assert json.loads(request.content) == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": TO,
        "type": "template",
        "template": {"name": "promo", "language": {"code": "en"}},
    }


async def test_voice_call_button_by_recipient_only() -> None:
    recorder = Recorder()
    await make_sender(recorder).send_voice_call_button(
        recipient="US.13491208655302741918", body_text="Call us"
    )
    [request] = recorder.requests
    assert json.loads(request.content) == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "recipient": "US.13491208655302741918",
        "type": "interactive",
        "interactive": {
            "type": "voice_call",
            "body": {"text": "Call us"},
            "action": {"name": "voice_call"},
        },
    }


async def test_send_result_keeps_raw_answer_and_contacts() -> None:
    answer = {**ANSWER, "extra": {"nested": [1, 2]}}
    recorder = Recorder(answer=answer)
    result = await make_sender(recorder).send_text(to=TO, text="hi")
    assert result.raw == answer
    assert result.contacts == ({"input": "15551234567", "wa_id": "15551234567"},)
    assert result.message_status is None


@pytest.mark.parametrize(
    "answer",
    [
        {},
        {"messages": []},
        {"messages": [{}]},
        {"messages": [{"id": ""}]},
        {"messages": [{"id": 5}]},
        {"messages": "wamid.X"},
        {"messages": [{"id": "wamid.X"}], "contacts": "nope"},
        [1, 2],
    ],
)
async def test_answer_without_message_id_is_a_serialization_error(answer: Any) -> None:
    recorder = Recorder(answer=answer)
    with pytest.raises(GraphSerializationError):
        await make_sender(recorder).send_text(to=TO, text="hi")
    assert len(recorder.requests) == 1


# --- every validation row: rejected before the transport --------------------------------

VALID_MEDIA = {"to": TO, "media_id": "123"}

REJECTIONS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    # to
    ("send_text", (), {"to": "https://evil.test/1", "text": "x"}),
    ("send_text", (), {"to": "1234567890123456", "text": "x"}),
    ("send_text", (), {"to": "123/../456", "text": "x"}),
    ("send_text", (), {"to": "1555\n1234", "text": "x"}),
    ("send_text", (), {"to": "user@example.test", "text": "x"}),
    ("send_text", (), {"to": "", "text": "x"}),
    ("send_text", (), {"to": 15551234567, "text": "x"}),
    # text
    ("send_text", (), {"to": TO, "text": ""}),
    ("send_text", (), {"to": TO, "text": "x" * 4097}),
    ("send_text", (), {"to": TO, "text": "bell\x07"}),
    ("send_text", (), {"to": TO, "text": "cr\r"}),
    # preview_url
    ("send_text", (), {"to": TO, "text": "x", "preview_url": "true"}),
    ("send_text", (), {"to": TO, "text": "x", "preview_url": 1}),
    # reply_to_message_id
    ("send_text", (), {"to": TO, "text": "x", "reply_to_message_id": ""}),
    ("send_text", (), {"to": TO, "text": "x", "reply_to_message_id": "a" * 257}),
    ("send_text", (), {"to": TO, "text": "x", "reply_to_message_id": "wamid\x00"}),
    # media_id
    ("send_image", (), {"to": TO, "media_id": ""}),
    ("send_image", (), {"to": TO, "media_id": "1" * 2049}),
    ("send_image", (), {"to": TO, "media_id": "12\t3"}),
    # link
    ("send_image", (), {"to": TO, "link": ""}),
    ("send_image", (), {"to": TO, "link": "ftp://cdn.test/a.png"}),
    ("send_image", (), {"to": TO, "link": "javascript:alert(1)"}),
    ("send_image", (), {"to": TO, "link": "https://cdn.test/" + "a" * 2040}),
    # exactly one of media_id / link
    ("send_image", (), {"to": TO}),
    ("send_image", (), {"to": TO, "media_id": "1", "link": "https://cdn.test/a.png"}),
    # caption
    ("send_media", ("audio",), {**VALID_MEDIA, "caption": "no"}),
    ("send_media", ("sticker",), {**VALID_MEDIA, "caption": "no"}),
    ("send_image", (), {**VALID_MEDIA, "caption": ""}),
    ("send_image", (), {**VALID_MEDIA, "caption": "c" * 1025}),
    # filename
    ("send_media", ("image",), {**VALID_MEDIA, "filename": "a.pdf"}),
    ("send_document", (), {**VALID_MEDIA, "filename": ""}),
    ("send_document", (), {**VALID_MEDIA, "filename": "f" * 257}),
    # voice
    ("send_media", ("video",), {**VALID_MEDIA, "voice": True}),
    ("send_audio", (), {**VALID_MEDIA, "voice": "yes"}),
    ("send_media", ("gif",), VALID_MEDIA),
    # location
    ("send_location", (), {"to": TO, "latitude": 91, "longitude": 0}),
    ("send_location", (), {"to": TO, "latitude": 0, "longitude": -180.5}),
    ("send_location", (), {"to": TO, "latitude": float("nan"), "longitude": 0}),
    ("send_location", (), {"to": TO, "latitude": 0, "longitude": float("inf")}),
    ("send_location", (), {"to": TO, "latitude": True, "longitude": 0}),
    ("send_location", (), {"to": TO, "latitude": "1", "longitude": 0}),
    # reactions
    ("send_reaction", (), {"to": TO, "message_id": "wamid.X", "emoji": ""}),
    ("send_reaction", (), {"to": TO, "message_id": "", "emoji": "x"}),
    ("send_remove_reaction", (), {"to": TO, "message_id": ""}),
    # contacts
    ("send_contacts", (), {"to": TO, "contacts": []}),
    ("send_contacts", (), {"to": TO, "contacts": [{"name": {"formatted_name": "A"}}]}),
    (
        "send_contacts",
        (),
        {"to": TO, "contacts": [{"name": {"formattedName": "A"}, "phones": [{"phone": "1"}]}]},
    ),
    (
        "send_contacts",
        (),
        {
            "to": TO,
            "contacts": [{"name": {"formatted_name": "A"}, "phones": [{"phone": "1"}], "x": 1}],
        },
    ),
    (
        "send_contacts",
        (),
        {
            "to": TO,
            "contacts": [
                {
                    "name": {"formatted_name": "A"},
                    "phones": [{"phone": "1"}],
                    "birthday": "10/12/1815",
                }
            ],
        },
    ),
    # interactive
    ("send_interactive_buttons", (), {"to": TO, "body_text": "b", "buttons": []}),
    (
        "send_interactive_buttons",
        (),
        {
            "to": TO,
            "body_text": "b",
            "buttons": [{"id": str(i), "title": str(i)} for i in range(4)],
        },
    ),
    (
        "send_interactive_buttons",
        (),
        {"to": TO, "body_text": "b", "buttons": [{"id": "1", "title": "t" * 21}]},
    ),
    (
        "send_interactive_buttons",
        (),
        {"to": TO, "body_text": "b", "buttons": [{"id": "i" * 257, "title": "t"}]},
    ),
    (
        "send_interactive_buttons",
        (),
        {"to": TO, "body_text": "b", "buttons": [{"id": "1", "title": "t", "x": "y"}]},
    ),
    (
        "send_interactive_buttons",
        (),
        {
            "to": TO,
            "body_text": "b",
            "buttons": [{"id": "1", "title": "a"}, {"id": "1", "title": "b"}],
        },
    ),
    (
        "send_interactive_buttons",
        (),
        {"to": TO, "body_text": "b" * 1025, "buttons": [{"id": "1", "title": "t"}]},
    ),
    (
        "send_interactive_buttons",
        (),
        {
            "to": TO,
            "body_text": "b",
            "header_text": "h" * 61,
            "buttons": [{"id": "1", "title": "t"}],
        },
    ),
    (
        "send_interactive_buttons",
        (),
        {
            "to": TO,
            "body_text": "b",
            "footer_text": "f" * 61,
            "buttons": [{"id": "1", "title": "t"}],
        },
    ),
    (
        "send_interactive_list",
        (),
        {
            "to": TO,
            "body_text": "b",
            "button_text": "x" * 21,
            "sections": [{"rows": [{"id": "1", "title": "t"}]}],
        },
    ),
    (
        "send_interactive_list",
        (),
        {
            "to": TO,
            "body_text": "b",
            "button_text": "Open",
            "sections": [
                {"title": str(i), "rows": [{"id": str(i), "title": "t"}]} for i in range(11)
            ],
        },
    ),
    (
        "send_interactive_list",
        (),
        {
            "to": TO,
            "body_text": "b",
            "button_text": "Open",
            "sections": [
                {"title": "a", "rows": [{"id": f"a{i}", "title": "t"} for i in range(6)]},
                {"title": "b", "rows": [{"id": f"b{i}", "title": "t"} for i in range(5)]},
            ],
        },
    ),
    (
        "send_interactive_list",
        (),
        {
            "to": TO,
            "body_text": "b",
            "button_text": "Open",
            "sections": [{"rows": [{"id": "1", "title": "t" * 25}]}],
        },
    ),
    (
        "send_interactive_list",
        (),
        {
            "to": TO,
            "body_text": "b",
            "button_text": "Open",
            "sections": [{"rows": [{"id": "1", "title": "t", "description": "d" * 73}]}],
        },
    ),
    (
        "send_interactive_cta_url",
        (),
        {"to": TO, "body_text": "b", "display_text": "Go", "url": "ftp://x.test"},
    ),
    (
        "send_interactive_cta_url",
        (),
        {"to": TO, "body_text": "b", "display_text": "d" * 21, "url": "https://x.test"},
    ),
    ("send_interactive_product", (), {"to": TO, "catalog_id": "", "product_retailer_id": "s"}),
    (
        "send_interactive_products",
        (),
        {
            "to": TO,
            "catalog_id": "c",
            "header_text": "h",
            "body_text": "b",
            "sections": [{"title": "t", "product_retailer_ids": []}],
        },
    ),
    (
        "send_interactive_products",
        (),
        {
            "to": TO,
            "catalog_id": "c",
            "header_text": "h",
            "body_text": "b",
            "sections": [{"title": "t", "ids": ["1"]}],
        },
    ),
    (
        "send_interactive_catalog",
        (),
        {"to": TO, "body_text": "b", "thumbnail_product_retailer_id": ""},
    ),
    ("send_interactive_location_request", (), {"to": TO, "body_text": ""}),
    ("send_call_permission_request", (), {"to": TO, "body_text": ""}),
    ("send_call_permission_request", (), {"to": GROUP, "body_text": "b"}),
    # voice call button
    ("send_voice_call_button", (), {"body_text": "b"}),
    ("send_voice_call_button", (), {"to": TO, "body_text": "b", "ttl_minutes": 0}),
    ("send_voice_call_button", (), {"to": TO, "body_text": "b", "ttl_minutes": 43201}),
    ("send_voice_call_button", (), {"to": TO, "body_text": "b", "display_text": "d" * 21}),
    ("send_voice_call_button", (), {"to": TO, "recipient": "bad\nid", "body_text": "b"}),
    # templates
    ("send_template", (), {"to": TO, "name": "Bad Name", "language_code": "en"}),
    ("send_template", (), {"to": TO, "name": "ok", "language_code": "english!"}),
    (
        "send_template",
        (),
        {"to": TO, "name": "ok", "language_code": "en", "components": [{"parameters": []}]},
    ),
    (
        "send_template",
        (),
        {"to": TO, "name": "ok", "language_code": "en", "components": {"type": "body"}},
    ),
    (
        "send_template",
        (),
        {
            "to": TO,
            "name": "ok",
            "language_code": "en",
            "components": [
                {
                    "type": "buttons",
                    "buttons": [
                        {
                            "type": "otp",
                            "otp_type": "one_tap",
                            "package_name": "a.b",
                            "signature_hash": "K8a/AINcGX7",
                        }
                    ],
                }
            ],
        },
    ),
    ("send_marketing_template", (), {"name": "promo", "language_code": "en"}),
    (
        "send_marketing_template",
        (),
        {"to": TO, "name": "promo", "language_code": "en", "product_policy": "LOOSE"},
    ),
    (
        "send_marketing_template",
        (),
        {"to": TO, "name": "promo", "language_code": "en", "message_activity_sharing": "true"},
    ),
    # groups
    ("send_group_text", (), {"to": "", "text": "x"}),
    ("send_group_text", (), {"to": "a/b", "text": "x"}),
    ("send_group_text", (), {"to": "a\\b", "text": "x"}),
    ("send_group_text", (), {"to": "g" * 257, "text": "x"}),
    ("send_group_text", (), {"to": "g\x01", "text": "x"}),
    (
        "send_group_template",
        (),
        {"to": GROUP, "name": "otp", "language_code": "en", "template_category": "AUTHENTICATION"},
    ),
    (
        "send_group_template",
        (),
        {"to": GROUP, "name": "otp", "language_code": "en", "template_category": None},
    ),
    ("send_group_pin", (), {"to": GROUP, "pin_type": "pin", "message_id": "m"}),
    (
        "send_group_pin",
        (),
        {"to": GROUP, "pin_type": "pin", "message_id": "m", "expiration_days": 0},
    ),
    (
        "send_group_pin",
        (),
        {"to": GROUP, "pin_type": "pin", "message_id": "m", "expiration_days": 31},
    ),
    (
        "send_group_pin",
        (),
        {"to": GROUP, "pin_type": "unpin", "message_id": "m", "expiration_days": 3},
    ),
    (
        "send_group_pin",
        (),
        {"to": GROUP, "pin_type": "stick", "message_id": "m", "expiration_days": 3},
    ),
    # prebuilt payloads
    ("send_message", (["not", "a", "mapping"],), {}),
    ("send_message", ({"recipient_type": "group", "to": GROUP, "type": "interactive"},), {}),
    ("send_message", ({"recipient_type": "group", "to": GROUP, "type": "reaction"},), {}),
    ("send_message", ({"recipient_type": "group", "to": GROUP, "type": "location"},), {}),
    ("send_message", ({"recipient_type": "group", "to": GROUP, "type": "template"},), {}),
    ("send_message", ({"to": "+1 555", "type": "text"},), {}),
    ("send_message", ({"type": "text"},), {}),
]


@pytest.mark.parametrize(
    ("helper", "args", "kwargs"),
    REJECTIONS,
    ids=[f"{case[0]}-{index}" for index, case in enumerate(REJECTIONS)],
)
async def test_rejected_before_transport(
    helper: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    recorder = Recorder()
    with pytest.raises(GraphRequestValidationError):
        await getattr(make_sender(recorder), helper)(*args, **kwargs)
    assert recorder.requests == []


@pytest.mark.parametrize(
    ("helper", "kwargs"),
    [
        ("send_call_permission_request", {"to": TO, "body_text": "b", "header_text": "h"}),
        ("send_text", {"to": TO, "text": "x", "previewUrl": True}),
        ("send_image", {"to": TO, "media_id": "1", "filename": "a.png"}),
    ],
)
async def test_unknown_keyword_arguments_are_rejected(helper: str, kwargs: dict[str, Any]) -> None:
    recorder = Recorder()
    with pytest.raises(TypeError):
        await getattr(make_sender(recorder), helper)(**kwargs)
    assert recorder.requests == []


async def test_non_group_types_are_rejected_for_group_ids() -> None:
    recorder = Recorder()
    sender = make_sender(recorder)
    calls: list[Callable[[], Awaitable[SendResult]]] = [
        lambda: sender.send_reaction(to=GROUP, message_id="m", emoji="x"),
        lambda: sender.send_location(to=GROUP, latitude=0, longitude=0),
        lambda: sender.send_interactive_buttons(
            to=GROUP, body_text="b", buttons=[{"id": "1", "title": "t"}]
        ),
        lambda: sender.send_template(to=GROUP, name="t", language_code="en"),
        lambda: sender.send_contacts(
            to=GROUP, contacts=[{"name": {"formatted_name": "A"}, "phones": [{"phone": "1"}]}]
        ),
    ]
    for call in calls:
        with pytest.raises(GraphRequestValidationError):
            await call()
    assert recorder.requests == []


@pytest.mark.parametrize("code", ["en", "en_US", "pt_BR", "fil", "prs_AF"])
async def test_a_template_language_code_is_sent_as_given(code: str) -> None:
    recorder = Recorder()
    await make_sender(recorder).send_template(to=TO, name="hello", language_code=code)
    assert json.loads(recorder.requests[0].content)["template"]["language"] == {"code": code}


@pytest.mark.parametrize("code", ["en-US", "EN", "En_US", "en_U5", "english"])
async def test_a_template_language_code_the_platform_does_not_use_is_refused(code: str) -> None:
    """Template languages are written ``en`` or ``en_US``, as on creation; ``en-US`` is not one."""
    recorder = Recorder()
    sender = make_sender(recorder)
    for send in (
        lambda: sender.send_template(to=TO, name="hello", language_code=code),
        lambda: sender.send_marketing_template(to=TO, name="hello", language_code=code),
        lambda: sender.send_group_template(
            to=GROUP, name="hello", language_code=code, template_category="UTILITY"
        ),
    ):
        with pytest.raises(GraphRequestValidationError) as caught:
            await send()
        assert caught.value.field == "language_code"
    assert recorder.requests == []


def _list_sections(title: str = "s", row_id: str = "r") -> dict[str, Any]:
    return {
        "to": TO,
        "body_text": "b",
        "button_text": "Open",
        "sections": [{"title": title, "rows": [{"id": row_id, "title": "t"}]}],
    }


def _product_sections(count: int) -> dict[str, Any]:
    return {
        "to": TO,
        "catalog_id": "c",
        "header_text": "h",
        "body_text": "b",
        "sections": [{"title": f"s{n}", "product_retailer_ids": [f"p{n}"]} for n in range(count)],
    }


def _link(length: int) -> str:
    return "https://cdn.test/" + "x" * (length - len("https://cdn.test/"))


# (helper, keywords at the documented limit, keywords one past it, the field refused)
LIMITS: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    (
        "send_interactive_list",
        _list_sections(title="s" * 24),
        _list_sections(title="s" * 25),
        "sections[0].title",
    ),
    (
        "send_interactive_list",
        _list_sections(row_id="r" * 200),
        _list_sections(row_id="r" * 201),
        "sections[0].rows[0].id",
    ),
    ("send_interactive_products", _product_sections(10), _product_sections(11), "sections"),
    (
        "send_voice_call_button",
        {"to": TO, "body_text": "b", "payload": "p" * 512},
        {"to": TO, "body_text": "b", "payload": "p" * 513},
        "payload",
    ),
    (
        "send_image",
        {"to": TO, "link": _link(2048)},
        {"to": TO, "link": _link(2049)},
        "link",
    ),
    (
        "send_interactive_cta_url",
        {"to": TO, "body_text": "b", "display_text": "Go", "url": _link(2048)},
        {"to": TO, "body_text": "b", "display_text": "Go", "url": _link(2049)},
        "url",
    ),
]


@pytest.mark.parametrize(
    ("helper", "at_limit", "past_limit", "field"),
    LIMITS,
    ids=[f"{case[0]}-{case[3]}" for case in LIMITS],
)
async def test_a_documented_limit_is_sent_at_its_value_and_refused_past_it(
    helper: str, at_limit: dict[str, Any], past_limit: dict[str, Any], field: str
) -> None:
    recorder = Recorder()
    sender = make_sender(recorder)
    await getattr(sender, helper)(**at_limit)
    assert len(recorder.requests) == 1
    with pytest.raises(GraphRequestValidationError) as caught:
        await getattr(sender, helper)(**past_limit)
    assert caught.value.field == field
    assert len(recorder.requests) == 1


FLOW = {"to": TO, "body_text": "b", "flow_cta": "Go", "flow_id": "1197715005513101"}
OTP_BUTTON = {"type": "buttons", "buttons": [{"type": "otp", "otp_type": "copy-code"}]}


@pytest.mark.parametrize(
    ("helper", "kwargs", "field"),
    [
        ("send_interactive_flow", {**FLOW, "screen": "S", "mode": "preview"}, "mode"),
        ("send_interactive_flow", {**FLOW, "flow_action": "open"}, "flow_action"),
        ("send_group_pin", {"to": GROUP, "pin_type": "stick", "message_id": "m"}, "pin_type"),
        (
            "send_template",
            {"to": TO, "name": "otp", "language_code": "en", "components": [OTP_BUTTON]},
            "otp_type",
        ),
    ],
    ids=["flow-mode", "flow-action", "pin-type", "otp-type"],
)
async def test_a_choice_the_platform_does_not_offer_is_refused(
    helper: str, kwargs: dict[str, Any], field: str
) -> None:
    recorder = Recorder()
    with pytest.raises(GraphRequestValidationError) as caught:
        await getattr(make_sender(recorder), helper)(**kwargs)
    assert caught.value.field == field
    assert recorder.requests == []
