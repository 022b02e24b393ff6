"""No secret value reaches a response body, a header, a log line, a metric or the OpenAPI text."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx

from svc.store import SqliteStore
from tests._support import FakeGraphTransport, sign

from .conftest import (
    ACCESS_TOKEN,
    APP_SECRET,
    AUTH,
    SECRET_VALUES,
    VERIFY_TOKEN,
    WEBHOOK,
    AppFactory,
    fixture,
    post_webhook,
)


async def test_no_secret_in_any_output(
    make_app: AppFactory,
    graph: FakeGraphTransport,
    sqlite_store: SqliteStore,
    log_stream: Any,
    caplog: Any,
) -> None:
    caplog.set_level(logging.DEBUG)
    # The upstream echoes the token back in its error text: it must not travel further.
    graph.answers.append(
        httpx.Response(
            401,
            json={
                "error": {
                    "code": 190,
                    "type": "OAuthException",
                    "message": f"Invalid token {ACCESS_TOKEN}",
                    "fbtrace_id": "T1",
                }
            },
        )
    )
    client = make_app(store=sqlite_store, enable_group_routes=True).test_client()
    responses = []
    text_body = {"to": "15551234567", "text": f"hi {APP_SECRET}"}
    responses.append(await client.post("/api/messages/text", json=text_body, headers=AUTH))
    responses.append(await client.post("/api/messages/text", json=text_body, headers=AUTH))
    responses.append(
        await client.post(
            "/api/messages/text", json=text_body, headers={**AUTH, "Idempotency-Key": "k1"}
        )
    )
    responses.append(
        await client.post(
            "/api/messages/text", json=text_body, headers={**AUTH, "Idempotency-Key": "k1"}
        )
    )
    responses.append(
        await client.post("/api/messages/text", json={"to": VERIFY_TOKEN}, headers=AUTH)
    )
    responses.append(
        await client.post("/api/messages", json={"type": "x", "to": ACCESS_TOKEN}, headers=AUTH)
    )
    responses.append(
        await client.post(
            "/api/messages/text",
            json=text_body,
            headers={"Authorization": f"Bearer {ACCESS_TOKEN}"},
        )
    )
    responses.append(
        await client.get(
            WEBHOOK,
            query_string={
                "hub.mode": "subscribe",
                "hub.verify_token": APP_SECRET,
                "hub.challenge": "c",
            },
        )
    )
    responses.append(
        await client.get(
            WEBHOOK,
            query_string={
                "hub.mode": "subscribe",
                "hub.verify_token": VERIFY_TOKEN,
                "hub.challenge": "c",
            },
        )
    )
    responses.append(await post_webhook(client, fixture("message_text.json")))
    body = json.dumps(fixture("message_text.json")).encode()
    responses.append(
        await post_webhook(client, body, signature=sign(body=body, secret=VERIFY_TOKEN))
    )
    responses.append(await client.get("/api/messages", headers=AUTH))
    responses.append(await client.get("/api/messages/wamid.X", headers=AUTH))
    responses.append(await client.get("/api/conversations/1555/window", headers=AUTH))
    responses.append(await client.get("/api/groups", headers=AUTH))
    responses.append(await client.post("/api/groups", json={"subject": ACCESS_TOKEN}, headers=AUTH))
    for path in (
        "/healthz",
        "/readyz",
        "/status",
        "/debug/diagnostics",
        "/metrics",
        "/openapi.json",
        "/nope",
    ):
        responses.append(await client.get(path, headers=AUTH))
        responses.append(await client.get(path))
    outputs = [log_stream.getvalue(), caplog.text]
    for response in responses:
        outputs.append(await response.get_data(as_text=True))
        outputs.append(str(dict(response.headers)))
    everything = "\n".join(outputs)
    for secret in SECRET_VALUES:
        assert secret not in everything
    # The webhook challenge with the right token is the one place a value is echoed: the challenge.
    assert "svc.graph.failure" in log_stream.getvalue()
