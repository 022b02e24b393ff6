"""Broadcast routes: validation, idempotent creation, status, pause/resume, the template pause."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from svc.http import create_app
from svc.http._broadcast_sender import BroadcastOptions
from svc.store import MAX_BROADCAST_RECIPIENTS, SqliteStore

from .conftest import (
    AUTH,
    PHONE_ID,
    WABA_ID,
    AppFactory,
    Clock,
    CountingStore,
    RecordingFacade,
    post_webhook,
)

TEMPLATE = {"type": "template", "name": "promo", "languageCode": "en"}
TEXT = {"type": "text", "text": "hi"}
KEY = {**AUTH, "Idempotency-Key": "b-1"}


def body(*phones: str, message: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"message": message or TEMPLATE, "recipients": [{"to": p} for p in phones], **extra}


QUIET = BroadcastOptions(enabled=False)  # the routes alone; the sender has its own tests


@pytest.fixture
async def app_client(make_app: AppFactory, sqlite_store: SqliteStore) -> Any:
    app = make_app(store=sqlite_store, broadcast_options=QUIET)
    async with app.test_app() as test_app:
        yield test_app.test_client()


async def error_code(response: Any) -> str:
    return str((await response.get_json())["error"]["code"])


async def test_create_read_and_replay(app_client: Any, graph: Any) -> None:
    response = await app_client.post(
        "/api/broadcasts", json=body("16505551234", "+16505551234", "US.13491208655302741918"),
        headers=KEY,
    )  # fmt: skip
    assert response.status_code == 202
    bid = (await response.get_json())["broadcastId"]
    status = await (await app_client.get(f"/api/broadcasts/{bid}", headers=AUTH)).get_json()
    assert status == {
        "id": bid,
        "state": "queued",
        "counts": {"queued": 2, "sent": 0, "failed": 0, "skipped": 1},
        "failedByCode": {},
    }
    again = await app_client.post(
        "/api/broadcasts", json=body("16505551234", "+16505551234", "US.13491208655302741918"),
        headers=KEY,
    )  # fmt: skip
    assert again.status_code == 202
    assert again.headers["Idempotent-Replayed"] == "true"
    assert (await again.get_json())["broadcastId"] == bid
    clash = await app_client.post("/api/broadcasts", json=body("16505550000"), headers=KEY)
    assert clash.status_code == 409
    assert graph.requests == []  # nothing is sent by the route itself


async def test_pause_resume_and_unknown(app_client: Any) -> None:
    response = await app_client.post("/api/broadcasts", json=body("16505551234"), headers=KEY)
    bid = (await response.get_json())["broadcastId"]
    paused = await app_client.post(f"/api/broadcasts/{bid}/pause", headers=AUTH)
    assert (await paused.get_json())["state"] == "paused"
    resumed = await app_client.post(f"/api/broadcasts/{bid}/resume", headers=AUTH)
    assert (await resumed.get_json())["state"] == "running"
    assert (await app_client.get("/api/broadcasts/nope", headers=AUTH)).status_code == 404
    assert (await app_client.post("/api/broadcasts/nope/pause", headers=AUTH)).status_code == 404


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        (body("16505551234", message={**TEMPLATE, "to": "1"}), "without 'to'"),
        (body("not-a-number"), "recipients[0]"),
        (body("16505551234", "bad"), "recipients[1]"),
        (body("16505551234", message={"type": "read", "messageId": "wamid.X"}), "'read'"),
        (body("16505551234", message={"type": "text"}), "recipients[0]"),
        (
            {"message": TEXT, "recipients": [{"to": "1650", "components": []}]},
            "components are for template messages",
        ),
        (body("16505551234", phoneNumberId="999"), "phoneNumberId"),
        ({"message": TEMPLATE, "recipients": []}, "recipients"),
        (body(*["16505551234"] * (MAX_BROADCAST_RECIPIENTS + 1)), "recipients"),
        # Text JSON's UTF-8 cannot carry (a lone surrogate): the send would be refused.
        (body("16505551234", message={"type": "text", "text": "\ud800"}), "recipients[0]"),
        # A recipient's message past what the store keeps of one (65,536 characters).
        (
            {"message": TEMPLATE, "recipients": [{"to": "16505551234"}, {"to": "16505551235",
             "components": [{"type": "body", "parameters": [{"type": "text", "text": "x" * 900}
                                                            for _ in range(80)]}]}]},
            "recipients[1]",
        ),
    ],
)  # fmt: skip
async def test_refusals_store_nothing(
    app_client: Any, sqlite_store: SqliteStore, payload: dict[str, Any], fragment: str
) -> None:
    response = await app_client.post("/api/broadcasts", json=payload, headers=KEY)
    assert response.status_code == 400
    answer = await response.get_json()
    assert answer["error"]["code"] == "malformed_body"
    assert fragment in answer["error"]["message"]
    # Nothing was stored under the key: a valid body with it is a new broadcast.
    fresh = await app_client.post("/api/broadcasts", json=body("16505551234"), headers=KEY)
    assert fresh.status_code == 202
    assert "Idempotent-Replayed" not in fresh.headers


async def test_key_bearer_and_store_are_required(app_client: Any, make_app: AppFactory) -> None:
    no_key = await app_client.post("/api/broadcasts", json=body("16505551234"), headers=AUTH)
    assert (no_key.status_code, await error_code(no_key)) == (400, "invalid_idempotency_key")
    no_auth = await app_client.post("/api/broadcasts", json=body("16505551234"))
    assert no_auth.status_code == 401
    stateless = make_app()
    async with stateless.test_app() as test_app:
        response = await test_app.test_client().post(
            "/api/broadcasts", json=body("16505551234"), headers=KEY
        )
    assert response.status_code == 503
    assert await error_code(response) == "persistence_not_configured"


@pytest.mark.parametrize(
    ("method", "path", "failing"),
    [
        ("POST", "/api/broadcasts", "create_broadcast"),
        ("GET", "/api/broadcasts/b1", "get_broadcast"),
        ("POST", "/api/broadcasts/b1/pause", "set_broadcast_paused"),
        ("POST", "/api/broadcasts/b1/resume", "set_broadcast_paused"),
    ],
)
async def test_a_store_fault_is_503_persistence_unavailable(
    make_app: AppFactory, sqlite_store: SqliteStore, method: str, path: str, failing: str
) -> None:
    """A fault, not a refusal: never a 400 (the body was fine) nor a 404 (the id may exist)."""
    app = make_app(store=CountingStore(sqlite_store, failing={failing}), broadcast_options=QUIET)
    client = app.test_client()
    response = await client.open(path, method=method, json=body("16505551234"), headers=KEY)
    assert response.status_code == 503
    assert await error_code(response) == "persistence_unavailable"


async def test_own_phone_number_id_and_per_recipient_components(
    app_client: Any, sqlite_store: SqliteStore
) -> None:
    components = [{"type": "body", "parameters": [{"type": "text", "text": "Ann"}]}]
    payload = {
        "message": TEMPLATE,
        "recipients": [{"to": "16505551234", "components": components}],
        "phoneNumberId": PHONE_ID,
    }
    response = await app_client.post("/api/broadcasts", json=payload, headers=KEY)
    assert response.status_code == 202
    status = await sqlite_store.get_broadcast(id=(await response.get_json())["broadcastId"])
    assert status is not None
    assert (status.template_name, status.template_language) == ("promo", "en")
    assert status.phone_number_id == PHONE_ID


def template_status(event: str = "PAUSED", name: str = "promo") -> dict[str, Any]:
    return {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": WABA_ID,
                "changes": [
                    {
                        "field": "message_template_status_update",
                        "value": {
                            "event": event,
                            "message_template_id": 1234,
                            "message_template_name": name,
                            "message_template_language": "en",
                            "reason": "LOW_QUALITY",
                        },
                    }
                ],
            }
        ],
    }


async def test_template_paused_by_the_platform_pauses_its_broadcasts(
    app_client: Any, sqlite_store: SqliteStore
) -> None:
    response = await app_client.post("/api/broadcasts", json=body("16505551234"), headers=KEY)
    bid = (await response.get_json())["broadcastId"]
    other = await app_client.post(
        "/api/broadcasts",
        json=body("16505551234", message={"type": "text", "text": "hi"}),
        headers={**AUTH, "Idempotency-Key": "b-2"},
    )
    other_id = (await other.get_json())["broadcastId"]
    assert (await post_webhook(app_client, template_status())).status_code == 200
    assert (await sqlite_store.get_broadcast(id=bid)).state == "paused"  # type: ignore[union-attr]
    assert (await sqlite_store.get_broadcast(id=other_id)).state == "queued"  # type: ignore[union-attr]


async def test_a_duplicate_template_status_costs_no_pause_call(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    """The run that handled a template status paused its broadcasts; copies skip the hook."""
    store = CountingStore(sqlite_store)
    client = make_app(store=store, broadcast_options=QUIET).test_client()
    for _ in range(3):
        assert (await post_webhook(client, template_status())).status_code == 200
    assert store.names["pause_broadcasts_for_template"] == 1


async def test_a_failed_template_pause_is_retried_by_the_redelivery(
    make_app: AppFactory, sqlite_store: SqliteStore, clock: Clock
) -> None:
    """A pause the store did not take answers 503; the delivery, recorded beside it in the
    same batch, was handed over once, and the redelivery (a duplicate) runs the pause again."""
    store = CountingStore(sqlite_store, failing={"pause_broadcasts_for_template"})
    facade = RecordingFacade()
    client = make_app(store=store, facade=facade, broadcast_options=QUIET).test_client()
    created = await client.post("/api/broadcasts", json=body("16505551234"), headers=KEY)
    bid = (await created.get_json())["broadcastId"]
    failed = await post_webhook(client, template_status())
    assert failed.status_code == 503
    assert (await failed.get_json())["error"]["code"] == "persistence_unavailable"
    assert (await sqlite_store.get_broadcast(id=bid)).state == "queued"  # type: ignore[union-attr]
    assert store.names["record_webhook_updates"] == 1  # recorded beside the failed pause
    assert len(facade.updates) == 1
    store.failing.clear()
    again = await post_webhook(client, template_status())
    assert again.status_code == 200
    assert (await again.get_json())["dispatched"] == 0  # a duplicate: handed over once
    assert (await sqlite_store.get_broadcast(id=bid)).state == "paused"  # type: ignore[union-attr]
    assert store.names["pause_broadcasts_for_template"] == 2
    assert len(facade.updates) == 1
    done = await post_webhook(client, template_status())
    assert (await done.get_json())["dispatched"] == 0
    assert store.names["pause_broadcasts_for_template"] == 2  # a copy answered from memory
    assert len(facade.updates) == 1


async def test_openapi_lists_the_broadcast_routes(app_client: Any) -> None:
    document = await (await app_client.get("/openapi.json")).get_json()
    assert {
        "/api/broadcasts",
        "/api/broadcasts/{broadcast_id}",
        "/api/broadcasts/{broadcast_id}/pause",
        "/api/broadcasts/{broadcast_id}/resume",
    } <= set(document["paths"])


def test_invalid_broadcast_options_are_a_construction_error(make_app: AppFactory) -> None:
    from svc.http import ServiceError

    with pytest.raises(ValueError, match="rate_per_second"):
        BroadcastOptions(rate_per_second=5000)
    with pytest.raises(ServiceError) as info:
        make_app(broadcast_options={"rate_per_second": 5})
    assert info.value.code == "invalid_config"
    assert create_app is not None and json is not None and trio is not None
