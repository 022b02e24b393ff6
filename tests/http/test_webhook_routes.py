"""Webhook GET (challenge) and POST (signature, envelope, dedupe, projection, dispatch)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from svc.store import SqliteStore
from tests._support import sign

from .conftest import (
    APP_SECRET,
    VERIFY_TOKEN,
    WEBHOOK,
    AppFactory,
    CountingStore,
    FailingStore,
    RecordingFacade,
    fixture,
    post_webhook,
)


async def _client(make_app: AppFactory, **options: Any) -> Any:
    return make_app(**options).test_client()


# --- challenge -----------------------------------------------------------------------


async def test_challenge_echoes_the_challenge_as_plain_text(make_app: AppFactory) -> None:
    client = await _client(make_app)
    response = await client.get(
        WEBHOOK,
        query_string={
            "hub.mode": "subscribe",
            "hub.verify_token": VERIFY_TOKEN,
            "hub.challenge": "1158201444",
        },
    )
    assert response.status_code == 200
    assert response.content_type.startswith("text/plain")
    # The echoed text is the caller's: a browser must not sniff it into HTML.
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert await response.get_data() == b"1158201444"


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        (
            {"hub.mode": "unsubscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "c1"},
            400,
            "invalid_mode",
        ),
        ({"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN}, 400, "missing_challenge"),
        (
            {"hub.mode": "subscribe", "hub.verify_token": "wrong", "hub.challenge": "c1"},
            403,
            "invalid_verify_token",
        ),
        ({"hub.mode": "subscribe", "hub.challenge": "c1"}, 403, "invalid_verify_token"),
    ],
)
async def test_challenge_refusals_never_echo_the_challenge(
    make_app: AppFactory, query: dict[str, str], status: int, code: str
) -> None:
    client = await _client(make_app)
    response = await client.get(WEBHOOK, query_string=query)
    assert response.status_code == status
    body = await response.get_data(as_text=True)
    assert json.loads(body)["error"]["code"] == code
    assert "c1" not in body
    assert VERIFY_TOKEN not in body


# --- signature and envelope, in the order of decisions.md section 3 ---------------------


async def test_missing_signature_is_401(make_app: AppFactory) -> None:
    response = await post_webhook(
        await _client(make_app), fixture("message_text.json"), signature=None
    )
    assert response.status_code == 401
    assert (await response.get_json())["error"]["code"] == "missing_signature"


async def test_malformed_signature_is_400(make_app: AppFactory) -> None:
    response = await post_webhook(
        await _client(make_app), fixture("message_text.json"), signature="sha1=abc"
    )
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == "invalid_signature_format"


async def test_wrong_signature_is_401_and_dispatches_nothing(make_app: AppFactory) -> None:
    facade = RecordingFacade()
    client = await _client(make_app, facade=facade)
    body = json.dumps(fixture("message_text.json")).encode()
    response = await post_webhook(client, body, signature=sign(body=body, secret="another-secret"))
    assert response.status_code == 401
    assert (await response.get_json())["error"]["code"] == "signature_mismatch"
    assert facade.updates == []


async def test_signature_is_checked_before_json(make_app: AppFactory) -> None:
    client = await _client(make_app)
    response = await post_webhook(client, b"{not json", signature="sha256=" + "0" * 64)
    assert (await response.get_json())["error"]["code"] == "signature_mismatch"
    response = await post_webhook(client, b"{not json")
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == "invalid_json"


async def test_signed_non_envelope_is_invalid_envelope(make_app: AppFactory) -> None:
    response = await post_webhook(await _client(make_app), {"hello": "world"})
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == "invalid_envelope"


async def test_body_over_the_cap_is_413_before_the_signature(
    make_app: AppFactory, profile: Any
) -> None:
    from dataclasses import replace

    small = replace(profile, max_body_bytes=64)
    client = await _client(make_app, profile=small)
    response = await post_webhook(client, b"x" * 65, signature=None)
    assert response.status_code == 413
    assert (await response.get_json())["error"]["code"] == "payload_too_large"


async def test_streamed_body_over_the_cap_without_length_is_413(
    make_app: AppFactory, profile: Any
) -> None:
    """Chunks without Content-Length: refused once the total passes the cap."""
    from dataclasses import replace

    app = make_app(profile=replace(profile, max_body_bytes=100))
    sent: list[dict[str, Any]] = []
    chunks = [b"a" * 60, b"b" * 60, b"c" * 60]
    pulled = 0

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        chunk = chunks[pulled]
        pulled += 1
        return {"type": "http.request", "body": chunk, "more_body": pulled < len(chunks)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "path": WEBHOOK,
        "raw_path": WEBHOOK.encode(),
        "query_string": b"",
        "headers": [(b"x-hub-signature-256", sign(body=b"a", secret=APP_SECRET).encode())],
        "scheme": "http",
        "server": ("127.0.0.1", 8787),
        "client": ("127.0.0.1", 5000),
        "root_path": "",
    }
    await app(scope, receive, send)
    assert sent[0]["status"] == 413
    assert pulled == 2  # the third chunk is never read


# --- accepted deliveries ---------------------------------------------------------------


async def test_accepted_delivery_dispatches_every_update(make_app: AppFactory) -> None:
    facade = RecordingFacade()
    client = await _client(make_app, facade=facade)
    response = await post_webhook(client, fixture("status_batch.json"))
    assert response.status_code == 200
    assert await response.get_json() == {
        "status": "ok",
        "received": 4,
        "dispatched": 4,
        "skipped": 0,
        "queued": 4,
    }
    # Each user's updates run in order; different users' in parallel.
    assert sorted(u.status for u in facade.updates) == ["delivered", "failed", "read", "sent"]


async def test_malformed_parts_are_counted_as_skipped(make_app: AppFactory) -> None:
    facade = RecordingFacade()
    client = await _client(make_app, facade=facade)
    response = await post_webhook(client, fixture("malformed_mixed.json"))
    body = await response.get_json()
    assert response.status_code == 200
    assert body["received"] == len(facade.updates) == body["dispatched"]
    assert body["skipped"] > 0


async def test_handler_failure_is_still_acknowledged(make_app: AppFactory) -> None:
    facade = RecordingFacade(fail_kinds=frozenset({"status"}))
    client = await _client(make_app, facade=facade)
    response = await post_webhook(client, fixture("status_batch.json"))
    assert response.status_code == 200
    assert (await response.get_json())["dispatched"] == 4


async def test_default_facade_is_used_without_an_injected_one(make_app: AppFactory) -> None:
    """The default facade handles nothing unless its echo is on: the update is dispatched
    (counted), not queued for a handler."""
    response = await post_webhook(await _client(make_app), fixture("message_text.json"))
    assert response.status_code == 200
    assert await response.get_json() == {
        "status": "ok",
        "received": 1,
        "dispatched": 1,
        "skipped": 0,
        "queued": 0,
    }
    from svc.webhook import FacadeFlags

    echo = await _client(make_app, facade_flags=FacadeFlags(echo_reply=True))
    response = await post_webhook(echo, fixture("message_text.json"))
    assert (await response.get_json())["queued"] == 1


# --- with a store: dedupe and projection ----------------------------------------------


async def test_duplicate_delivery_is_acknowledged_without_dispatch(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    facade = RecordingFacade()
    client = await _client(make_app, facade=facade, store=sqlite_store)
    first = await post_webhook(client, fixture("message_text.json"))
    second = await post_webhook(client, fixture("message_text.json"))
    assert (await first.get_json())["dispatched"] == 1
    assert await second.get_json() == {
        "status": "ok",
        "received": 1,
        "dispatched": 0,
        "skipped": 1,
        "queued": 0,
    }
    assert len(facade.updates) == 1


async def test_key_order_does_not_make_a_new_delivery(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    facade = RecordingFacade()
    client = await _client(make_app, facade=facade, store=sqlite_store)
    payload = fixture("message_text.json")
    await post_webhook(client, json.dumps(payload).encode())
    await post_webhook(client, json.dumps(payload, sort_keys=True, indent=2).encode())
    assert len(facade.updates) == 1


async def test_inbound_message_is_projected_before_handlers_run(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    seen: list[Any] = []

    class Facade:
        def coalesce_for(self, update: Any) -> None:
            return None

        def handles(self, update: Any) -> bool:
            return True

        async def run(self, context: Any) -> None:
            message_id = context.update.message_id
            seen.append(await sqlite_store.get_message(wa_message_id=message_id))

    client = await _client(make_app, facade=Facade(), store=sqlite_store)
    await post_webhook(client, fixture("message_text.json"))
    record = seen[0]
    assert record is not None
    assert record.direction == "inbound"
    assert record.from_phone == "16505551234"
    assert record.type == "text"
    # Inbound rows carry the message's event time, not the receipt time.
    assert record.created_at.timestamp() == 1749416383


async def test_status_callbacks_advance_the_projected_status(
    make_app: AppFactory, sqlite_store: SqliteStore, graph: Any
) -> None:
    client = await _client(make_app, store=sqlite_store)
    await client.post(
        "/api/messages/text",
        json={"to": "16505551234", "text": "hi"},
        headers={"Authorization": "Bearer serviceBEARERvalue3456"},
    )
    payload = fixture("status_batch.json")
    for status in payload["entry"][0]["changes"][0]["value"]["statuses"]:
        status["id"] = "wamid.TEST1"
    await post_webhook(client, payload)
    record = await sqlite_store.get_message(wa_message_id="wamid.TEST1")
    assert record is not None
    # read (rank 3) wins; the later failure never replaces delivered or read.
    assert record.status == "read"


async def test_store_outage_on_the_delivery_is_503_and_dispatches_nothing(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    facade = RecordingFacade()
    store = FailingStore(sqlite_store, {"record_webhook_updates"})
    client = await _client(make_app, facade=facade, store=store)
    response = await post_webhook(client, fixture("message_text.json"))
    assert response.status_code == 503
    assert (await response.get_json())["error"]["code"] == "persistence_unavailable"
    assert facade.updates == []
    # Nothing was recorded: when the store is back, the redelivery is dispatched once.
    store.failing.clear()
    again = await post_webhook(client, fixture("message_text.json"))
    assert (await again.get_json())["dispatched"] == 1
    assert len(facade.updates) == 1
    assert await sqlite_store.get_message(wa_message_id=facade.updates[0].message_id) is not None


async def test_delivery_and_projection_are_one_store_call(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    store = CountingStore(sqlite_store)
    client = await _client(make_app, store=store)
    response = await post_webhook(client, fixture("status_batch.json"))
    assert response.status_code == 200
    writes = {n: c for n, c in store.names.items() if n.startswith(("record_", "append_"))}
    assert writes == {"record_webhook_updates": 1}


async def test_app_secret_is_the_signing_key(make_app: AppFactory) -> None:
    body = json.dumps(fixture("message_text.json")).encode()
    response = await post_webhook(
        await _client(make_app), body, signature=sign(body=body, secret=APP_SECRET)
    )
    assert response.status_code == 200


async def test_echo_flag_replies_through_the_graph_with_the_access_token(
    make_app: AppFactory, graph: Any
) -> None:
    from svc.webhook import FacadeFlags

    client = await _client(make_app, facade_flags=FacadeFlags(echo_reply=True))
    await post_webhook(client, fixture("message_text.json"))
    [request] = graph.requests
    assert json.loads(request.content)["text"] == {"body": "Echo: Does it come in another color?"}
    assert request.headers["authorization"].startswith("Bearer EAAG")


async def test_flags_are_ignored_with_an_injected_facade(make_app: AppFactory, graph: Any) -> None:
    from svc.webhook import FacadeFlags

    client = await _client(
        make_app, facade=RecordingFacade(), facade_flags=FacadeFlags(echo_reply=True)
    )
    await post_webhook(client, fixture("message_text.json"))
    assert graph.requests == []


async def test_event_log_flag_logs_kind_without_pii(make_app: AppFactory, caplog: Any) -> None:
    import logging

    from svc.webhook import FacadeFlags

    caplog.set_level(logging.INFO)
    client = await _client(make_app, facade_flags=FacadeFlags(log_webhook_events=True))
    await post_webhook(client, fixture("message_text.json"))
    assert "webhook update kind=message detail=text" in caplog.text
    assert "16505551234" not in caplog.text
    assert "another color" not in caplog.text


async def test_business_app_echo_is_projected_as_outbound(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    facade = RecordingFacade()
    client = await _client(make_app, facade=facade, store=sqlite_store)
    response = await post_webhook(client, fixture("smb_message_echoes.json"))
    assert response.status_code == 200
    echoes = [u for u in facade.updates if u.kind == "message"]
    assert echoes and all(u.is_echo for u in echoes)
    record = await sqlite_store.get_message(wa_message_id=echoes[0].message_id)
    assert record is not None
    assert record.direction == "outbound"
    assert record.from_phone is None
    assert record.to_phone == echoes[0].to


async def test_a_record_the_store_refuses_never_blocks_the_delivery(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    """A refused projection keeps the dedupe row and the dispatch: no poison redelivery loop."""
    from svc.store import PersistenceValidationError

    class RefusingStore(FailingStore):
        def __getattr__(self, name: str) -> Any:
            attr = super().__getattr__(name)
            if name != "record_webhook_updates":
                return attr

            async def refuse_projections(**kwargs: Any) -> Any:
                if kwargs.get("messages") or kwargs.get("statuses"):
                    raise PersistenceValidationError("invalid_record", "refused")
                return await attr(**kwargs)

            return refuse_projections

    facade = RecordingFacade()
    client = await _client(make_app, facade=facade, store=RefusingStore(sqlite_store, set()))
    first = await post_webhook(client, fixture("message_text.json"))
    assert first.status_code == 200
    assert (await first.get_json())["dispatched"] == 1
    again = await post_webhook(client, fixture("message_text.json"))
    assert (await again.get_json())["dispatched"] == 0
    assert len(facade.updates) == 1


async def test_an_over_long_sender_with_no_bsuid_is_dispatched_but_not_projected(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    payload = fixture("message_text.json")
    message = payload["entry"][0]["changes"][0]["value"]["messages"][0]
    message["from"] = "1" * 100
    client = await _client(make_app, store=sqlite_store, facade=RecordingFacade())
    response = await post_webhook(client, payload)
    assert (await response.get_json())["dispatched"] == 1
    # The phone is dropped and no BSUID names the sender: no row is built (the store
    # would refuse a row naming nobody), and the rest of the delivery is recorded.
    assert await sqlite_store.get_message(wa_message_id=message["id"]) is None
