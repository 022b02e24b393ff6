"""Delivery guarantees per update: foreign numbers, regrouped redeliveries, handler completion."""

from __future__ import annotations

import json
from typing import Any

from svc.runtime import HandlerOptions
from svc.store import SqliteStore
from svc.webhook import receive_delivery, update_key
from tests._support import sign

from .conftest import (
    APP_SECRET,
    AUTH,
    PHONE_ID,
    AppFactory,
    Clock,
    RecordingFacade,
    post_webhook,
)

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
        "queued": 0,
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
        "queued": 1,
    }
    assert [u.message_id for u in facade.updates] == ["wamid.own1"]
    assert await sqlite_store.get_message(wa_message_id="wamid.own1") is not None
    assert await sqlite_store.get_message(wa_message_id="wamid.f2") is None


async def test_regrouped_redeliveries_dispatch_each_update_once(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    facade = RecordingFacade()
    client = make_app(facade=facade, store=sqlite_store).test_client()
    answers = []
    for ids in (["m1"], ["m1", "m2"], ["m2", "m1"], ["m3", "m3"]):
        response = await post_webhook(client, delivery(*ids))
        answers.append(await response.get_json())
    assert [u.message_id for u in facade.updates] == ["wamid.m1", "wamid.m2", "wamid.m3"]
    assert [(a["received"], a["dispatched"], a["skipped"]) for a in answers] == [
        (1, 1, 0),
        (2, 1, 1),
        (2, 0, 2),
        (1, 1, 1),  # the same update twice in one delivery: the normalizer keeps one
    ]
    metrics = await (await client.get("/metrics", headers=AUTH)).get_data(as_text=True)
    assert 'outcome="dispatched",update_kind="message"} 3.0' in metrics
    assert 'outcome="duplicate",update_kind="message"} 3.0' in metrics


async def test_a_failed_handler_is_retried_then_set_aside_and_never_rerun_by_a_redelivery(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    facade = RecordingFacade(fail_kinds=frozenset({"message"}))
    options = HandlerOptions(retry_delay=0.0, max_attempts=2)
    client = make_app(facade=facade, store=sqlite_store, handler_options=options).test_client()
    first = await post_webhook(client, delivery("e1"))
    assert first.status_code == 200
    assert [u.message_id for u in facade.updates] == ["wamid.e1", "wamid.e1"]
    again = await post_webhook(client, delivery("e1", "e2"))
    assert (await again.get_json())["dispatched"] == 1
    assert [u.message_id for u in facade.updates] == [
        "wamid.e1",
        "wamid.e1",
        "wamid.e2",
        "wamid.e2",
    ]
    assert [i.last_error for i in await sqlite_store.list_inbox_items(status="dead")] == [
        "RuntimeError",
        "RuntimeError",
    ]


async def test_a_redelivery_of_a_recorded_update_is_a_plain_duplicate(
    make_app: AppFactory, sqlite_store: SqliteStore, clock: Clock
) -> None:
    """Keys recorded and never finished (a claim of an older version) are duplicates too: no
    503 "in progress", nothing run, nothing handed over again."""
    facade = RecordingFacade()
    client = make_app(facade=facade, store=sqlite_store).test_client()
    body = json.dumps(delivery("c1", "c2")).encode()
    parsed = receive_delivery(body, sign(body=body, secret=APP_SECRET), APP_SECRET)
    keys = [update_key(u) for u in parsed.updates]
    at = clock()
    await sqlite_store.record_webhook_updates(
        event_key=parsed.event_key, event_hash=parsed.body_hash, received_at=at, update_keys=keys
    )
    response = await post_webhook(client, body)
    assert await response.get_json() == {
        "status": "ok",
        "received": 2,
        "dispatched": 0,
        "skipped": 2,
        "queued": 0,
    }
    assert facade.updates == []


async def test_a_concurrent_copy_is_answered_at_once_and_the_update_runs_once(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    facade = RecordingFacade()
    app = make_app(facade=facade, store=sqlite_store)
    client = app.test_client()
    body = json.dumps(delivery("w1")).encode()
    headers = {"X-Hub-Signature-256": sign(body=body, secret=APP_SECRET)}
    first = await client.post("/webhooks/whatsapp", data=body, headers=headers)
    copy = await client.post("/webhooks/whatsapp", data=body, headers=headers)
    assert await first.get_json() == {
        "status": "ok",
        "received": 1,
        "dispatched": 1,
        "skipped": 0,
        "queued": 1,
    }
    assert await copy.get_json() == {
        "status": "ok",
        "received": 1,
        "dispatched": 0,
        "skipped": 1,
        "queued": 0,
    }
    assert facade.updates == []  # neither answer waited for the handler
    await app.extensions["svc.handlers"].run_until_idle()
    assert [u.message_id for u in facade.updates] == ["wamid.w1"]


async def test_every_item_of_a_delivery_within_the_body_cap_is_processed(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    """10,000 tiny statuses (about 0.67 MB, inside the 1 MiB cap): each dispatched and recorded,
    none answered 200 and dropped."""
    statuses = [
        {"id": f"wamid.S{n}", "status": "delivered", "timestamp": "1749416385"}
        for n in range(10_000)
    ]
    envelope = delivery()
    envelope["entry"][0]["changes"][0]["value"] = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": PHONE_ID},
        "statuses": statuses,
    }
    body = json.dumps(envelope, separators=(",", ":")).encode()
    assert 600_000 < len(body) < 1_048_576
    facade = RecordingFacade()
    client = make_app(store=sqlite_store, facade=facade).test_client()
    headers = {"X-Hub-Signature-256": sign(body=body, secret=APP_SECRET)}
    response = await client.post("/webhooks/whatsapp", data=body, headers=headers)
    assert response.status_code == 200
    assert await response.get_json() == {
        "status": "ok",
        "received": 10_000,
        "dispatched": 10_000,
        "skipped": 0,
        "queued": 10_000,
    }
    rows = await sqlite_store._call(
        "query_failed",
        lambda s: s.fetchall("SELECT COUNT(*) FROM svc_webhook_updates"),
        write=False,
    )
    assert tuple(rows[0]) == (10_000,)
    waiting = await sqlite_store.inbox_statistics()
    assert waiting.pending == 10_000  # each one handed to the runtime, in the record's commit
