"""POST {prefix}/messages/text and {prefix}/messages: bodies, wire JSON, auth, upstream errors."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from svc.graph import DEFAULT_API_VERSION
from tests._support import FakeGraphTransport

from .conftest import ACCESS_TOKEN, AUTH, BEARER, PHONE_ID, AppFactory

TO = "15551234567"
ENVELOPE = {"messaging_product": "whatsapp", "recipient_type": "individual", "to": TO}


async def _post(client: Any, path: str, body: Any, headers: dict[str, str] | None = None) -> Any:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await client.post(
        path,
        data=raw,
        headers={"Content-Type": "application/json", **(AUTH if headers is None else headers)},
    )


# --- the text route ----------------------------------------------------------------------


async def test_text_route_sends_with_the_access_token_never_the_bearer(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    client = make_app().test_client()
    response = await _post(
        client, "/api/messages/text", {"to": TO, "text": "line 1\nline\t2", "previewUrl": True}
    )
    assert response.status_code == 200
    assert await response.get_json() == {
        "messaging_product": "whatsapp",
        "contacts": [{"input": TO, "wa_id": TO}],
        "messages": [{"id": "wamid.TEST1"}],
    }
    [request] = graph.requests
    assert request.method == "POST"
    assert request.url.path == f"/{DEFAULT_API_VERSION}/{PHONE_ID}/messages"
    assert request.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert BEARER not in request.content.decode() + str(request.headers)
    assert json.loads(request.content) == {
        **ENVELOPE,
        "type": "text",
        "text": {"body": "line 1\nline\t2", "preview_url": True},
    }


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"to": TO}, "malformed_body"),
        ({"to": TO, "text": ""}, "malformed_body"),
        ({"to": TO, "text": "bell\x07"}, "malformed_body"),
        ({"to": "1555\n1234", "text": "hi"}, "malformed_body"),
        ({"to": "", "text": "hi"}, "malformed_body"),
        ({"to": TO, "text": "hi", "previewUrl": "yes"}, "malformed_body"),
        ({"to": TO, "text": "hi", "extra": 1}, "malformed_body"),
        ({"to": 15551234567, "text": "hi"}, "malformed_body"),
        (["not", "an", "object"], "malformed_body"),
        (b"", "malformed_json"),
        (b"{nope", "malformed_json"),
        (b'{"to": "1", "text": NaN}', "malformed_json"),
    ],
)
async def test_text_route_refusals_send_nothing(
    make_app: AppFactory, graph: FakeGraphTransport, body: Any, code: str
) -> None:
    response = await _post(make_app().test_client(), "/api/messages/text", body)
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == code
    assert graph.requests == []


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": f"Basic {BEARER}"},
        {"Authorization": "Bearer"},
        {"Authorization": f"Bearer {BEARER}x"},
    ],
)
async def test_send_routes_need_the_bearer(
    make_app: AppFactory, graph: FakeGraphTransport, headers: dict[str, str]
) -> None:
    client = make_app().test_client()
    for path in ("/api/messages/text", "/api/messages"):
        response = await _post(client, path, {"to": TO, "text": "hi"}, headers=headers)
        assert response.status_code == 401
        assert await response.get_json() == {
            "error": {"code": "unauthorized", "message": "Missing or invalid bearer token."}
        }
    assert graph.requests == []


async def test_body_over_the_limit_is_413_on_content_length(
    make_app: AppFactory, graph: FakeGraphTransport, profile: Any
) -> None:
    from dataclasses import replace

    client = make_app(profile=replace(profile, max_body_bytes=50)).test_client()
    response = await _post(client, "/api/messages/text", {"to": TO, "text": "x" * 100})
    assert response.status_code == 413
    assert (await response.get_json())["error"]["code"] == "payload_too_large"
    assert graph.requests == []


async def test_the_default_body_cap_is_one_mib(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    """1 MiB is read (then refused as JSON, not as size); one byte more is 413 unread."""
    client = make_app().test_client()
    mib = 1_048_576
    at_cap = await client.post("/api/messages/text", data=b" " * mib, headers=AUTH)
    assert (await at_cap.get_json())["error"]["code"] == "malformed_json"
    over = await client.post("/api/messages/text", data=b" " * (mib + 1), headers=AUTH)
    assert over.status_code == 413
    assert graph.requests == []


# --- the generic route: every composer body -> the platform wire JSON ------------------

COMPOSER_CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (
        {"messaging_product": "whatsapp", "to": TO, "type": "text", "text": {"body": "native"}},
        {**ENVELOPE, "type": "text", "text": {"body": "native"}},
    ),
    (
        {
            "type": "image",
            "to": TO,
            "mediaId": "1234",
            "caption": "c",
            "replyToMessageId": "wamid.A",
        },
        {
            **ENVELOPE,
            "type": "image",
            "image": {"id": "1234", "caption": "c"},
            "context": {"message_id": "wamid.A"},
        },
    ),
    (
        {"type": "audio", "to": TO, "link": "https://example.com/a.ogg", "voice": True},
        {
            **ENVELOPE,
            "type": "audio",
            "audio": {"link": "https://example.com/a.ogg", "voice": True},
        },
    ),
    (
        {"type": "document", "to": TO, "mediaId": "9", "filename": "a.pdf"},
        {**ENVELOPE, "type": "document", "document": {"id": "9", "filename": "a.pdf"}},
    ),
    (
        {"type": "sticker", "to": TO, "mediaId": "7"},
        {**ENVELOPE, "type": "sticker", "sticker": {"id": "7"}},
    ),
    (
        {"type": "video", "to": TO, "link": "https://example.com/v.mp4"},
        {**ENVELOPE, "type": "video", "video": {"link": "https://example.com/v.mp4"}},
    ),
    (
        {"type": "location", "to": TO, "latitude": 52.5, "longitude": 13, "name": "Office"},
        {
            **ENVELOPE,
            "type": "location",
            "location": {"latitude": 52.5, "longitude": 13, "name": "Office"},
        },
    ),
    (
        {"type": "reaction", "to": TO, "messageId": "wamid.X", "emoji": "👍"},
        {**ENVELOPE, "type": "reaction", "reaction": {"message_id": "wamid.X", "emoji": "👍"}},
    ),
    (
        {"type": "removeReaction", "to": TO, "messageId": "wamid.X"},
        {**ENVELOPE, "type": "reaction", "reaction": {"message_id": "wamid.X", "emoji": ""}},
    ),
    (
        {
            "type": "contacts",
            "to": TO,
            "contacts": [
                {
                    "name": {"formattedName": "Ada L", "firstName": "Ada"},
                    "phones": [{"phone": "+1 555", "type": "WORK", "waId": "1555"}],
                    "addresses": [{"city": "London", "countryCode": "GB"}],
                }
            ],
        },
        {
            **ENVELOPE,
            "type": "contacts",
            "contacts": [
                {
                    "name": {"formatted_name": "Ada L", "first_name": "Ada"},
                    "phones": [{"phone": "+1 555", "type": "WORK", "wa_id": "1555"}],
                    "addresses": [{"city": "London", "country_code": "GB"}],
                }
            ],
        },
    ),
    (
        {
            "type": "interactiveButtons",
            "to": TO,
            "bodyText": "Pick",
            "buttons": [{"id": "y", "title": "Yes"}],
            "footerText": "f",
        },
        {
            **ENVELOPE,
            "type": "interactive",
            "interactive": {
                "type": "button",
                "body": {"text": "Pick"},
                "footer": {"text": "f"},
                "action": {"buttons": [{"type": "reply", "reply": {"id": "y", "title": "Yes"}}]},
            },
        },
    ),
    (
        {
            "type": "callPermissionRequest",
            "to": TO,
            "bodyText": "May we call?",
            "footerText": "thanks",
        },
        {
            **ENVELOPE,
            "type": "interactive",
            "interactive": {
                "type": "call_permission_request",
                "body": {"text": "May we call?"},
                "footer": {"text": "thanks"},
                "action": {"name": "call_permission_request"},
            },
        },
    ),
    (
        {"type": "template", "to": TO, "name": "hello_world", "languageCode": "en_US"},
        {
            **ENVELOPE,
            "type": "template",
            "template": {"name": "hello_world", "language": {"code": "en_US"}},
        },
    ),
    (
        {"type": "interactiveLocationRequest", "to": TO, "bodyText": "Where?"},
        {
            **ENVELOPE,
            "type": "interactive",
            "interactive": {
                "type": "location_request_message",
                "body": {"text": "Where?"},
                "action": {"name": "send_location"},
            },
        },
    ),
]


@pytest.mark.parametrize(("body", "wire"), COMPOSER_CASES, ids=lambda v: str(v.get("type")))
async def test_composer_body_becomes_the_wire_payload(
    make_app: AppFactory, graph: FakeGraphTransport, body: dict[str, Any], wire: dict[str, Any]
) -> None:
    response = await _post(make_app().test_client(), "/api/messages", body)
    assert response.status_code == 200, await response.get_data()
    assert graph.bodies() == [wire]


@pytest.mark.parametrize(
    "body",
    [
        {"type": "image", "to": TO},
        {"type": "image", "to": TO, "mediaId": "1", "link": "https://example.com/a"},
        {"type": "audio", "to": TO, "mediaId": "1", "caption": "no captions on audio"},
        {"type": "location", "to": TO, "latitude": 91, "longitude": 0},
        {"type": "reaction", "to": TO, "messageId": "wamid.X", "emoji": ""},
        {"type": "contacts", "to": TO, "contacts": []},
        {"type": "interactiveButtons", "to": TO, "bodyText": "b", "buttons": []},
        {"type": "nope", "to": TO},
        {"to": TO},
        {"messaging_product": "whatsapp", "to": TO, "type": "image", "image": {"id": "1"}},
        {"type": "text", "recipientType": "group", "to": "G1", "text": "hi"},
        {
            "type": "pin",
            "recipientType": "group",
            "to": "G1",
            "pinType": "pin",
            "messageId": "wamid.A",
            "expirationDays": 7,
        },
    ],
)
async def test_generic_refusals_send_nothing(
    make_app: AppFactory, graph: FakeGraphTransport, body: dict[str, Any]
) -> None:
    response = await _post(make_app().test_client(), "/api/messages", body)
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == "malformed_body"
    assert graph.requests == []


async def test_group_bodies_work_with_groups_enabled(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    client = make_app(enable_group_routes=True).test_client()
    text = await _post(
        client,
        "/api/messages",
        {"type": "text", "recipientType": "group", "to": "G1", "text": "hi"},
    )
    pin = await _post(
        client,
        "/api/messages",
        {
            "type": "pin",
            "recipientType": "group",
            "to": "G1",
            "pinType": "pin",
            "messageId": "wamid.A",
            "expirationDays": 7,
        },
    )
    assert text.status_code == pin.status_code == 200
    group_text, group_pin = graph.bodies()
    assert group_text["recipient_type"] == "group"
    assert group_text["to"] == "G1"
    assert group_pin["pin"] == {"type": "pin", "message_id": "wamid.A", "expiration_days": 7}


# --- upstream failures ----------------------------------------------------------------------


def _graph_error(
    status: int, code: int, *, headers: dict[str, str] | None = None
) -> httpx.Response:
    return httpx.Response(
        status,
        headers=headers,
        json={
            "error": {
                "message": f"(#{code}) secret user text {TO}",
                "type": "OAuthException",
                "code": code,
                "error_subcode": 2494010,
                "fbtrace_id": "AbCdEf123",
            }
        },
    )


@pytest.mark.parametrize(
    ("status", "code", "expected"),
    [
        (400, 100, 502),
        (401, 190, 502),
        (500, 1, 502),
        (400, 131048, 503),
        (400, 130429, 503),
        (400, 4, 503),
        (400, 80007, 503),
        (400, 131056, 503),
        (429, 100, 503),
        (500, 130429, 502),  # the Graph layer's 5xx rule: an outage, not a rate limit
    ],
)
async def test_upstream_errors_map_to_502_or_503(
    make_app: AppFactory,
    graph: FakeGraphTransport,
    log_stream: Any,
    status: int,
    code: int,
    expected: int,
) -> None:
    graph.answers.append(_graph_error(status, code, headers={"Retry-After": "37"}))
    response = await _post(make_app().test_client(), "/api/messages/text", {"to": TO, "text": "x"})
    assert response.status_code == expected
    body = await response.get_json()
    assert body == {
        "error": {
            "code": "graph_request_failed",
            "message": "Graph request failed.",
            "upstreamCode": code,
            "upstreamSubcode": 2494010,
            "upstreamType": "OAuthException",
            "upstreamTraceId": "AbCdEf123",
        }
    }
    assert "secret user text" not in json.dumps(body)
    assert response.headers.get("Retry-After") == ("37" if expected == 503 else None)
    [line] = log_stream.getvalue().splitlines()
    record = json.loads(line)
    assert record["event"] == "svc.graph.failure"
    assert record["upstreamCode"] == code
    assert record["upstreamTraceId"] == "AbCdEf123"
    assert TO not in line and "secret user text" not in line


async def test_transport_failure_is_502(make_app: AppFactory) -> None:
    def boom(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    client = make_app(transport=httpx.MockTransport(boom)).test_client()
    response = await _post(client, "/api/messages/text", {"to": TO, "text": "x"})
    assert response.status_code == 502
    assert await response.get_json() == {
        "error": {"code": "graph_request_failed", "message": "Graph request failed."}
    }


async def test_read_receipt_is_sent_and_never_projected(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: Any
) -> None:
    graph.answers.append(httpx.Response(200, json={"success": True}))
    client = make_app(store=sqlite_store).test_client()
    response = await _post(
        client, "/api/messages", {"type": "read", "messageId": "wamid.IN1", "typingIndicator": True}
    )
    assert response.status_code == 200
    assert await response.get_json() == {"success": True}
    assert graph.bodies() == [
        {
            "messaging_product": "whatsapp",
            "status": "read",
            "message_id": "wamid.IN1",
            "typing_indicator": {"type": "text"},
        }
    ]
    page = await sqlite_store.list_messages(limit=10)
    assert page.items == ()


async def test_read_receipt_without_typing_indicator(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    graph.answers.append(httpx.Response(200, json={"success": True}))
    response = await _post(
        make_app().test_client(), "/api/messages", {"type": "read", "messageId": "wamid.IN1"}
    )
    assert response.status_code == 200
    assert graph.bodies() == [
        {"messaging_product": "whatsapp", "status": "read", "message_id": "wamid.IN1"}
    ]
