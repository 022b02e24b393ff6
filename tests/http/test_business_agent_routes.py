"""A number shared with Meta's business agent: its threads are recorded and dispatched apart.

The agent's conversation (``standby``) is projected like any other, as
metadata: the user's message an inbound row, the agent's reply an outbound
row its statuses advance. A handover names its business number in
``recipient`` and is routed by it like any update.
"""

from __future__ import annotations

from typing import Any

from svc.store import SqliteStore

from .conftest import AppFactory, RecordingFacade, fixture, post_webhook

USER = "16505551234"
BSUID = "US.13491208655302741918"
INBOUND = "wamid.HBgLMTY1MDU1NTEyMzQVAgASGBRTVEFOREJZMDAwMDAwMDAwMDAxAA=="
ECHO = "wamid.HBgLMTY1MDU1NTEyMzQVAgARGBRTVEFOREJZMDAwMDAwMDAwMDAyAA=="


async def test_standby_threads_are_projected_and_dispatched_as_standby(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    facade = RecordingFacade()
    client = make_app(facade=facade, store=sqlite_store).test_client()
    response = await post_webhook(client, fixture("business_agent_standby.json"))
    assert await response.get_json() == {
        "status": "ok",
        "received": 3,
        "dispatched": 3,
        "skipped": 0,
        "queued": 3,
    }
    ran = [(u.kind, u.item) for u in facade.updates]
    # The echo names the user by phone only: another queue, run in parallel with the user's.
    assert sorted(ran) == [("standby", "echo"), ("standby", "message"), ("standby", "status")]
    assert ran.index(("standby", "message")) < ran.index(("standby", "status"))  # one queue
    inbound = await sqlite_store.get_message(wa_message_id=INBOUND)
    assert inbound is not None
    assert (inbound.direction, inbound.from_phone, inbound.user_id, inbound.type) == (
        "inbound",
        USER,
        BSUID,
        "text",
    )
    reply = await sqlite_store.get_message(wa_message_id=ECHO)
    assert reply is not None
    assert (reply.direction, reply.to_phone, reply.status) == ("outbound", USER, "delivered")


async def test_a_handover_is_routed_by_its_recipient_number(make_app: AppFactory) -> None:
    facade = RecordingFacade()
    client = make_app(facade=facade).test_client()
    payload: dict[str, Any] = fixture("business_agent_handovers.json")
    payload["entry"][0]["changes"][1]["value"]["recipient"]["phone_number_id"] = "999999999"
    response = await post_webhook(client, payload)
    body = await response.get_json()
    assert (body["received"], body["dispatched"]) == (2, 1)
    [update] = facade.updates
    assert (update.kind, update.event) == ("messagingHandover", "control_passed")
