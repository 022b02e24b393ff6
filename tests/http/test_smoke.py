from __future__ import annotations

import json
from typing import Any

from tests._support import FakeGraphTransport, sign

from .conftest import APP_SECRET, AUTH


async def test_healthz(client: Any) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert await response.get_json() == {"ok": True, "service": "svc"}


async def test_text_send_reaches_graph(client: Any, graph: FakeGraphTransport) -> None:
    response = await client.post(
        "/api/messages/text", json={"to": "15551234567", "text": "hi"}, headers=AUTH
    )
    assert response.status_code == 200, await response.get_data()
    assert graph.bodies() == [
        {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": "15551234567",
            "type": "text",
            "text": {"body": "hi"},
        }
    ]


async def test_webhook_post(client: Any) -> None:
    body = json.dumps({"object": "whatsapp_business_account", "entry": []}).encode()
    response = await client.post(
        "/webhooks/whatsapp",
        data=body,
        headers={
            "X-Hub-Signature-256": sign(body=body, secret=APP_SECRET),
            "Content-Type": "application/json",
        },
    )
    assert response.status_code == 200
    assert await response.get_json() == {
        "status": "ok",
        "received": 0,
        "dispatched": 0,
        "skipped": 0,
        "queued": 0,
    }
