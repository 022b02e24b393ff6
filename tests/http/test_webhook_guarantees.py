"""Delivery guarantees per update: foreign numbers, regrouped redeliveries, handler completion."""

from __future__ import annotations

from typing import Any

from svc.store import SqliteStore

from .conftest import AUTH, PHONE_ID, AppFactory, RecordingFacade, post_webhook

USER = "16505551234"
OTHER_NUMBER = "999000111222333"


def delivery(
    *message_ids: str, phone_number_id: str = PHONE_ID, at: int = 1749416383
) -> dict[str, Any]:
    """A signed-ready envelope with one inbound text per id, in the given order."""
    return {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": "102290129340398",
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "messaging_product": "whatsapp",
                            "metadata": {
                                "display_phone_number": "15550783881",
                                "phone_number_id": phone_number_id,
                            },
                            "contacts": [{"profile": {"name": "A"}, "wa_id": USER}],
                            "messages": [
                                {
                                    "from": USER,
                                    "id": f"wamid.{message_id}",
                                    "timestamp": str(at),
                                    "type": "text",
                                    "text": {"body": "hi"},
                                }
                                for message_id in message_ids
                            ],
                        },
                    }
                ],
            }
        ],
    }


async def test_a_delivery_for_another_number_is_skipped_and_leaves_the_window_closed(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    facade = RecordingFacade()
    app = make_app(facade=facade, store=sqlite_store)
    client = app.test_client()
    response = await post_webhook(client, delivery("f1", phone_number_id=OTHER_NUMBER))
    assert response.status_code == 200
    assert await response.get_json() == {
        "status": "ok",
        "received": 1,
        "dispatched": 0,
        "skipped": 1,
    }
    assert facade.updates == []
    assert await sqlite_store.get_message(wa_message_id="wamid.f1") is None
    window = await client.get(f"/api/conversations/{USER}/window", headers=AUTH)
    assert window.status_code == 200
    assert (await window.get_json())["open"] is False
    metrics = await (await client.get("/metrics", headers=AUTH)).get_data(as_text=True)
    assert 'outcome="foreign_number",update_kind="message"} 1.0' in metrics
    assert OTHER_NUMBER not in metrics


async def test_own_updates_of_a_mixed_delivery_still_go_through(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    facade = RecordingFacade()
    client = make_app(facade=facade, store=sqlite_store).test_client()
    mixed = delivery("own1")
    foreign = delivery("f2", phone_number_id=OTHER_NUMBER)["entry"][0]
    mixed["entry"].append(foreign)
    response = await post_webhook(client, mixed)
    assert await response.get_json() == {
        "status": "ok",
        "received": 2,
        "dispatched": 1,
        "skipped": 1,
    }
    assert [u.message_id for u in facade.updates] == ["wamid.own1"]
    assert await sqlite_store.get_message(wa_message_id="wamid.own1") is not None
    assert await sqlite_store.get_message(wa_message_id="wamid.f2") is None
