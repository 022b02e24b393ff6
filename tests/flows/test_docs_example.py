"""docs/flows.md examples run as written: the handler, the raw ASGI mount on trio and asyncio."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from svc.flows import MAX_FLOW_BYTES, FlowPrivateKey
from tests._support import doc_example, sign

from ._platform import APP_SECRET, seal_request
from .conftest import call


def example(name: str) -> dict[str, Any]:
    return doc_example("flows.md", "flows", name)


async def test_the_handler_example_behaves_as_documented(private_key: FlowPrivateKey) -> None:
    booking_flow = example("handler")["booking_flow"]
    token = "booking-7c1f"
    cases = [
        ({"action": "INIT"}, {"screen": "APPOINTMENT", "data": {"slots": ["10:00", "11:30"]}}),
        (
            {"action": "data_exchange", "screen": "APPOINTMENT", "data": {"time": "09:00"}},
            {"screen": "APPOINTMENT", "data": {"error_message": "Pick a listed time."}},
        ),
        (
            {"action": "data_exchange", "screen": "APPOINTMENT", "data": {"time": "11:30"}},
            {"screen": "SUMMARY", "data": {"summary": "Booked for 11:30"}},
        ),
        (
            {"action": "data_exchange", "screen": "SUMMARY", "data": {}},
            {
                "screen": "SUCCESS",
                "data": {
                    "extension_message_response": {"params": {"booked": True, "flow_token": token}}
                },
            },
        ),
    ]
    for payload, expected in cases:
        sealed = seal_request({"version": "3.0", "flow_token": token, **payload})
        response = await call(sealed, booking_flow, private_key)
        assert response.status == 200, payload
        assert sealed.open_response(response.body) == expected
    expired = seal_request({"version": "3.0", "action": "INIT", "flow_token": "unknown"})
    response = await call(expired, booking_flow, private_key)
    assert (response.status, json.loads(response.body)) == (
        427,
        {"error_msg": "This booking link has expired. Please ask again."},
    )


async def _drive(app: Any, method: str, body: bytes, headers: list[tuple[bytes, bytes]]) -> Any:
    chunks = [body[i : i + 16_384] for i in range(0, len(body), 16_384)] or [b""]
    messages = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({"type": "http", "method": method, "headers": headers}, receive, send)
    start, body_message = sent
    return start["status"], dict(start["headers"])[b"content-type"], body_message["body"], messages


def _app(private_key: FlowPrivateKey) -> Any:
    handler = example("handler")["booking_flow"]
    return example("asgi")["flows_asgi_app"](
        private_key=private_key, app_secret=APP_SECRET, handler=handler
    )


async def _exchange(app: Any) -> list[Any]:
    sealed = seal_request({"version": "3.0", "action": "ping"})
    signed = [(b"x-hub-signature-256", sign(body=sealed.body, secret=APP_SECRET).encode())]
    status, kind, body, _ = await _drive(app, "POST", sealed.body, signed)
    results: list[Any] = [status, kind, sealed.open_response(body)]
    results.append((await _drive(app, "POST", sealed.body, []))[:3])
    too_big = b"{" + b" " * (MAX_FLOW_BYTES + 40_000)
    status, _, body, unread = await _drive(app, "POST", too_big, signed)
    results.append((status, body, len(unread) > 0))
    results.append((await _drive(app, "GET", b"", []))[0])
    return results


EXPECTED = [
    200,
    b"text/plain",
    {"data": {"status": "active"}},
    (432, b"text/plain; charset=utf-8", b"Request signature authentication failed"),
    (413, b"Request body too large", True),
    405,
]


async def test_the_asgi_example_on_trio(private_key: FlowPrivateKey) -> None:
    assert await _exchange(_app(private_key)) == EXPECTED


def test_the_asgi_example_on_asyncio(private_key: FlowPrivateKey) -> None:
    assert asyncio.run(_exchange(_app(private_key))) == EXPECTED
