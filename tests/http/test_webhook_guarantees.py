"""Delivery guarantees per update: foreign numbers, regrouped redeliveries, handler completion."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import trio
import trio.testing

from svc.store import UPDATE_CLAIM_LEASE_MS, SqliteStore
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


async def test_a_failed_handler_is_acknowledged_and_not_run_again(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    facade = RecordingFacade(fail_kinds=frozenset({"message"}))
    client = make_app(facade=facade, store=sqlite_store).test_client()
    first = await post_webhook(client, delivery("e1"))
    assert first.status_code == 200
    again = await post_webhook(client, delivery("e1", "e2"))
    assert (await again.get_json())["dispatched"] == 1
    assert [u.message_id for u in facade.updates] == ["wamid.e1", "wamid.e2"]


async def test_an_update_recorded_but_never_finished_runs_on_redelivery(
    make_app: AppFactory, sqlite_store: SqliteStore, clock: Clock
) -> None:
    """The crash case in process: both keys recorded, only the first one's handler finished.

    Within the claim lease the copy is "in progress" (503, nothing dispatched: the
    platform redelivers); after it, the unfinished update runs, and only it.
    """
    facade = RecordingFacade()
    client = make_app(facade=facade, store=sqlite_store).test_client()
    body = json.dumps(delivery("c1", "c2")).encode()
    parsed = receive_delivery(body, sign(body=body, secret=APP_SECRET), APP_SECRET)
    keys = [update_key(u) for u in parsed.updates]
    at = clock()
    await sqlite_store.record_webhook_updates(
        event_key=parsed.event_key, event_hash=parsed.body_hash, received_at=at, update_keys=keys
    )
    await sqlite_store.mark_webhook_updates_handled(update_keys=keys[:1], handled_at=at)
    early = await post_webhook(client, body)
    assert early.status_code == 503
    assert (await early.get_json())["error"]["code"] == "webhook_in_progress"
    assert early.headers["Retry-After"] == "5"
    assert facade.updates == []
    clock.value = at + timedelta(milliseconds=UPDATE_CLAIM_LEASE_MS)
    response = await post_webhook(client, body)
    assert await response.get_json() == {
        "status": "ok",
        "received": 2,
        "dispatched": 1,
        "skipped": 1,
    }
    assert [u.message_id for u in facade.updates] == ["wamid.c2"]
    again = await post_webhook(client, body)
    assert (await again.get_json())["dispatched"] == 0


async def test_a_concurrent_copy_in_the_same_process_waits_for_the_run_and_skips_it(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    release = trio.Event()
    entered = trio.Event()
    seen: list[str] = []

    class SlowFacade:
        async def dispatch(self, update: Any) -> None:
            seen.append(update.message_id)
            entered.set()
            await release.wait()

    client = make_app(facade=SlowFacade(), store=sqlite_store).test_client()
    answers: dict[str, Any] = {}

    async def post(name: str) -> None:
        response = await post_webhook(client, delivery("w1"))
        answers[name] = (response.status_code, await response.get_json())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(post, "first")
        await entered.wait()
        nursery.start_soon(post, "copy")
        await trio.testing.wait_all_tasks_blocked()
        assert "copy" not in answers  # it waits for the first run, neither 503 nor a rerun
        release.set()
    assert answers["first"] == (200, {"status": "ok", "received": 1, "dispatched": 1, "skipped": 0})
    assert answers["copy"] == (200, {"status": "ok", "received": 1, "dispatched": 0, "skipped": 1})
    assert seen == ["wamid.w1"]


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
    response = await post_webhook(client, body)
    assert response.status_code == 200
    assert await response.get_json() == {
        "status": "ok",
        "received": 10_000,
        "dispatched": 10_000,
        "skipped": 0,
    }
    assert [u.message_id for u in facade.updates] == [s["id"] for s in statuses]
    rows = await sqlite_store._call(
        "query_failed",
        lambda s: s.fetchall("SELECT COUNT(*), COUNT(handled_at) FROM svc_webhook_updates"),
        write=False,
    )
    assert tuple(rows[0]) == (10_000, 10_000)
