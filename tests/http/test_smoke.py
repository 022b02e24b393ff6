from __future__ import annotations

import gc
import json
from typing import Any

from tests._support import FakeGraphTransport, sign

from .conftest import APP_SECRET, AUTH, AppFactory


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


async def test_serving_freezes_what_start_up_made_out_of_the_collector(
    make_app: AppFactory,
) -> None:
    """While the app serves, what existed when it started is out of the cyclic collector's
    full passes (their pause grew with it); stopping gives it back."""
    gc.unfreeze()
    app = make_app()
    made_before: list[object] = [[]]
    assert any(o is made_before for o in gc.get_objects())
    async with app.test_app() as served:
        assert gc.get_freeze_count() > 0
        assert not any(o is made_before for o in gc.get_objects())  # frozen: never walked
        response = await served.test_client().get("/healthz")
        assert response.status_code == 200
    assert gc.get_freeze_count() == 0
    assert any(o is made_before for o in gc.get_objects())


async def test_stopping_leaves_a_freeze_made_before_the_app_served(make_app: AppFactory) -> None:
    """A host process's own freeze, or an outer app's still serving, outlives the app's stop."""
    gc.unfreeze()
    outer, inner = make_app(), make_app()
    async with outer.test_app():
        made_while_outer_serves: list[object] = [[]]
        async with inner.test_app():
            assert not any(o is made_while_outer_serves for o in gc.get_objects())
        assert gc.get_freeze_count() > 0  # the outer app still serves: still frozen
        assert not any(o is made_while_outer_serves for o in gc.get_objects())
    assert gc.get_freeze_count() == 0
    gc.freeze()  # the host's own
    try:
        async with make_app().test_app():
            pass
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
