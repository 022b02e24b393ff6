"""Several business numbers in one service, over HTTP with a store (SQLite and PostgreSQL).

A two-number profile serves both numbers: inbound deliveries open each number's
own window, sends choose the number with ``phoneNumberId`` (its Graph path and
its token), reads and windows choose it with the query parameter, an unknown
number is 400, and updates for a number the service does not serve are skipped.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import trio
import trio.testing
from prometheus_client import CollectorRegistry

from svc.graph import DEFAULT_API_VERSION as VERSION
from svc.http import BusinessNumber, Profile, ServiceError, ServiceSecrets
from svc.store import MessageRecord
from tests._support import FakeGraphTransport

from .conftest import (
    ACCESS_TOKEN,
    APP_SECRET,
    AUTH,
    BEARER,
    PHONE_ID,
    VERIFY_TOKEN,
    WABA_ID,
    AppFactory,
    Clock,
    RecordingFacade,
    fixture,
    post_webhook,
)

OTHER_ID = "106540352249999"
OTHER_WABA = "102290129349999"
OTHER_TOKEN = "EAAGotherNUMBERtoken777"
FOREIGN_ID = "106540352200000"
USER = "16505551234"
SENT_AT = datetime.fromtimestamp(1749416383, tz=UTC)

TWO_NUMBERS = Profile(
    phone_number_id=PHONE_ID,
    waba_id=WABA_ID,
    phone_numbers=(BusinessNumber(phone_number_id=OTHER_ID, waba_id=OTHER_WABA),),
)
TWO_SECRETS = ServiceSecrets(
    access_token=ACCESS_TOKEN,
    webhook_verify_token=VERIFY_TOKEN,
    webhook_app_secret=APP_SECRET,
    service_bearer_token=BEARER,
    phone_number_tokens={OTHER_ID: OTHER_TOKEN},
)


def inbound(number: str, message_id: str) -> dict[str, Any]:
    """The text-message fixture, addressed to business number ``number``."""
    payload = copy.deepcopy(fixture("message_text.json"))
    value = payload["entry"][0]["changes"][0]["value"]
    value["metadata"]["phone_number_id"] = number
    value["messages"][0]["id"] = message_id
    return payload


def two_number_app(make_app: AppFactory, store: Any, **options: Any) -> Any:
    return make_app(profile=TWO_NUMBERS, secrets=TWO_SECRETS, store=store, **options)


async def window(client: Any, query: str = "") -> dict[str, Any]:
    response = await client.get(f"/api/conversations/{USER}/window{query}", headers=AUTH)
    assert response.status_code == 200
    data: dict[str, Any] = await response.get_json()
    return data


async def listed(client: Any, query: str = "") -> list[str]:
    response = await client.get(f"/api/messages{query}", headers=AUTH)
    assert response.status_code == 200
    return [item["waMessageId"] for item in (await response.get_json())["items"]]


async def test_an_inbound_for_each_number_opens_its_own_window(
    make_app: AppFactory, store: Any, clock: Clock
) -> None:
    facade = RecordingFacade()
    client = two_number_app(make_app, store, facade=facade).test_client()
    clock.value = SENT_AT + timedelta(hours=1)

    ack = await post_webhook(client, inbound(OTHER_ID, "wamid.B1"))
    assert await ack.get_json() == {
        "status": "ok",
        "received": 1,
        "dispatched": 1,
        "skipped": 0,
        "queued": 1,
    }
    assert (await window(client, f"?phoneNumberId={OTHER_ID}"))["open"] is True
    # The default number's window with the same user stays closed.
    assert (await window(client))["open"] is False
    assert (await window(client, f"?phoneNumberId={PHONE_ID}"))["open"] is False

    await post_webhook(client, inbound(PHONE_ID, "wamid.A1"))
    assert (await window(client))["open"] is True
    assert [u.phone_number_id for u in facade.updates] == [OTHER_ID, PHONE_ID]

    assert await listed(client) == ["wamid.A1"]
    assert await listed(client, f"?phoneNumberId={OTHER_ID}") == ["wamid.B1"]
    assert await listed(client, f"?phoneNumberId={OTHER_ID}&user={USER}") == ["wamid.B1"]
    one = await client.get(f"/api/messages/wamid.B1?phoneNumberId={OTHER_ID}", headers=AUTH)
    assert one.status_code == 200 and (await one.get_json())["waMessageId"] == "wamid.B1"
    # Absent means the default number: the other number's message is not found there.
    assert (await client.get("/api/messages/wamid.B1", headers=AUTH)).status_code == 404


async def test_a_send_with_phone_number_id_uses_that_numbers_path_and_token(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    registry = CollectorRegistry()
    client = two_number_app(make_app, store, metrics_registry=registry).test_client()
    body = {"to": USER, "text": "hello", "phoneNumberId": OTHER_ID}
    sent = await client.post("/api/messages/text", json=body, headers=AUTH)
    assert sent.status_code == 200
    composer = {"type": "text", "to": USER, "text": "hi"}
    assert (await client.post("/api/messages", json=composer, headers=AUTH)).status_code == 200

    paths = [r.url.path for r in graph.requests]
    assert paths == [f"/{VERSION}/{OTHER_ID}/messages", f"/{VERSION}/{PHONE_ID}/messages"]
    tokens = [r.headers["Authorization"] for r in graph.requests]
    assert tokens == [f"Bearer {OTHER_TOKEN}", f"Bearer {ACCESS_TOKEN}"]
    # The field chooses the number; it never reaches the platform payload.
    assert "phoneNumberId" not in graph.bodies()[0]

    assert await listed(client, f"?phoneNumberId={OTHER_ID}") == ["wamid.TEST1"]
    assert await listed(client) == ["wamid.TEST2"]
    for number in (OTHER_ID, PHONE_ID):
        value = registry.get_sample_value(
            "send_number_outcomes_total", {"phone_number_id": number, "outcome": "sent"}
        )
        assert value == 1.0


async def test_one_key_on_two_numbers_is_two_sends(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    client = two_number_app(make_app, store).test_client()
    headers = {**AUTH, "Idempotency-Key": "order-42"}
    for number in (PHONE_ID, OTHER_ID, OTHER_ID):
        body = {"type": "text", "to": USER, "text": "hi", "phoneNumberId": number}
        assert (await client.post("/api/messages", json=body, headers=headers)).status_code == 200
    assert [r.url.path for r in graph.requests] == [
        f"/{VERSION}/{PHONE_ID}/messages",
        f"/{VERSION}/{OTHER_ID}/messages",
    ]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/messages/text", {"to": USER, "text": "x", "phoneNumberId": FOREIGN_ID}),
        ("/api/messages", {"type": "text", "to": USER, "text": "x", "phoneNumberId": FOREIGN_ID}),
        ("/api/messages", {"type": "read", "messageId": "wamid.1", "phoneNumberId": "x"}),
        (
            "/api/messages",
            {
                "messaging_product": "whatsapp",
                "to": USER,
                "type": "text",
                "text": {"body": "x"},
                "phoneNumberId": FOREIGN_ID,
            },
        ),
    ],
)
async def test_an_unknown_number_in_a_send_body_is_400(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport, path: str, body: dict[str, Any]
) -> None:
    client = two_number_app(make_app, store).test_client()
    response = await client.post(path, json=body, headers=AUTH)
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == "malformed_body"
    assert graph.requests == []


async def test_a_non_string_number_in_a_send_body_is_400(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    client = two_number_app(make_app, store).test_client()
    body = {"to": USER, "text": "x", "phoneNumberId": int(OTHER_ID)}
    response = await client.post("/api/messages/text", json=body, headers=AUTH)
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == "malformed_body"
    assert graph.requests == []


@pytest.mark.parametrize(
    "path",
    [
        f"/api/messages?phoneNumberId={FOREIGN_ID}",
        "/api/messages/wamid.1?phoneNumberId=abc",
        f"/api/conversations/{USER}/window?phoneNumberId={FOREIGN_ID}",
        f"/api/conversations/{USER}/window?phoneNumberId=",
    ],
)
async def test_an_unknown_number_in_a_query_is_400(
    make_app: AppFactory, store: Any, path: str
) -> None:
    client = two_number_app(make_app, store).test_client()
    response = await client.get(path, headers=AUTH)
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == "malformed_query"


async def test_updates_for_a_number_not_served_are_skipped_and_counted(
    make_app: AppFactory, store: Any, clock: Clock
) -> None:
    registry = CollectorRegistry()
    facade = RecordingFacade()
    client = two_number_app(make_app, store, facade=facade, metrics_registry=registry)
    client = client.test_client()
    clock.value = SENT_AT + timedelta(hours=1)
    ack = await post_webhook(client, inbound(FOREIGN_ID, "wamid.F1"))
    assert await ack.get_json() == {
        "status": "ok",
        "received": 1,
        "dispatched": 0,
        "skipped": 1,
        "queued": 0,
    }
    assert facade.updates == []
    assert (await window(client))["open"] is False
    assert (await window(client, f"?phoneNumberId={OTHER_ID}"))["open"] is False
    assert await listed(client) == []
    assert await listed(client, f"?phoneNumberId={OTHER_ID}") == []
    assert (
        registry.get_sample_value(
            "webhook_number_updates_total",
            {"phone_number_id": "other", "outcome": "foreign_number"},
        )
        == 1.0
    )
    await post_webhook(client, inbound(OTHER_ID, "wamid.B2"))
    assert (
        registry.get_sample_value(
            "webhook_number_updates_total", {"phone_number_id": OTHER_ID, "outcome": "dispatched"}
        )
        == 1.0
    )
    # No label is ever minted from a payload: only configured ids, "none" and "other".
    labels = {
        sample.labels["phone_number_id"]
        for family in registry.collect()
        if family.name in ("webhook_number_updates", "send_number_outcomes")
        for sample in family.samples
    }
    assert labels <= {PHONE_ID, OTHER_ID, "none", "other"}
    assert FOREIGN_ID not in labels


async def test_one_number_profile_reads_older_rows_as_its_own(
    make_app: AppFactory, store: Any, clock: Clock, graph: FakeGraphTransport
) -> None:
    """Rows stored before the column (no number) are the default number's, as before."""
    client = make_app(store=store).test_client()
    clock.value = SENT_AT + timedelta(hours=1)
    await store.record_message(
        MessageRecord(
            row_id="old",
            wa_message_id="wamid.OLD",
            direction="inbound",
            from_phone=USER,
            type="text",
            status="received",
            created_at=SENT_AT,
            updated_at=SENT_AT,
        )
    )
    assert (await window(client))["open"] is True
    assert (await window(client, f"?phoneNumberId={PHONE_ID}"))["open"] is True
    assert await listed(client) == ["wamid.OLD"]
    assert (await client.get("/api/messages/wamid.OLD", headers=AUTH)).status_code == 200
    sent = await client.post("/api/messages/text", json={"to": USER, "text": "x"}, headers=AUTH)
    assert sent.status_code == 200
    assert [r.url.path for r in graph.requests] == [f"/{VERSION}/{PHONE_ID}/messages"]
    unknown = await client.get(f"/api/messages?phoneNumberId={OTHER_ID}", headers=AUTH)
    assert unknown.status_code == 400


async def test_a_broadcast_from_a_number_goes_out_on_its_path_with_its_token(
    make_app: AppFactory,
    sqlite_store: Any,
    graph: FakeGraphTransport,
    autojump_clock: trio.testing.MockClock,
) -> None:
    """The paced sender posts a broadcast of ``phoneNumberId`` as that number: its Graph path
    and its own access token, never the default number's."""
    app = two_number_app(make_app, sqlite_store)  # the number's routing, not the store's
    payload = {
        "message": {"type": "text", "text": "hello"},
        "recipients": [{"to": USER}],
        "phoneNumberId": OTHER_ID,
    }
    async with app.test_app() as served:
        client = served.test_client()
        headers = {**AUTH, "Idempotency-Key": "b-other"}
        response = await client.post("/api/broadcasts", json=payload, headers=headers)
        assert response.status_code == 202
        with trio.fail_after(60):
            while not graph.requests:
                await trio.sleep(0.1)
    [sent] = graph.requests
    assert sent.url.path == f"/{VERSION}/{OTHER_ID}/messages"
    assert sent.headers["Authorization"] == f"Bearer {OTHER_TOKEN}"
    assert graph.bodies()[0]["to"] == USER


def test_profile_numbers_accept_mappings_and_refuse_repeats() -> None:
    profile = Profile.from_mapping(
        {"phone_number_id": PHONE_ID, "phone_numbers": [{"phone_number_id": OTHER_ID}]}
    )
    assert profile.phone_numbers == (BusinessNumber(phone_number_id=OTHER_ID),)
    assert [n.phone_number_id for n in profile.served_numbers] == [PHONE_ID, OTHER_ID]
    for numbers in (
        [{"phone_number_id": PHONE_ID}],
        [{"phone_number_id": OTHER_ID}, {"phone_number_id": OTHER_ID}],
        [{"phone_number_id": "12a"}],
        [{"phone_number_id": OTHER_ID, "token": "x"}],
        "123",
    ):
        with pytest.raises(ServiceError) as info:
            Profile(phone_number_id=PHONE_ID, phone_numbers=numbers)  # type: ignore[arg-type]
        assert info.value.code == "invalid_profile"
        assert info.value.field == "phone_numbers"


def test_number_tokens_are_secrets() -> None:
    assert OTHER_TOKEN not in repr(TWO_SECRETS)
    assert TWO_SECRETS.access_token_for(OTHER_ID) == OTHER_TOKEN
    assert TWO_SECRETS.access_token_for(PHONE_ID) == ACCESS_TOKEN
    from_mapping = ServiceSecrets.from_mapping(
        {
            "access_token": ACCESS_TOKEN,
            "webhook_verify_token": VERIFY_TOKEN,
            "webhook_app_secret": APP_SECRET,
            "service_bearer_token": BEARER,
            "phone_number_tokens": {OTHER_ID: OTHER_TOKEN},
        }
    )
    assert from_mapping.access_token_for(OTHER_ID) == OTHER_TOKEN
    for tokens in ({OTHER_ID: "bad token"}, {"abc": OTHER_TOKEN}, {OTHER_ID: ""}):
        with pytest.raises(ServiceError) as info:
            ServiceSecrets(
                access_token=ACCESS_TOKEN,
                webhook_verify_token=VERIFY_TOKEN,
                webhook_app_secret=APP_SECRET,
                service_bearer_token=BEARER,
                phone_number_tokens=tokens,
            )
        assert info.value.code == "invalid_secret"
        assert OTHER_TOKEN not in str(info.value)
