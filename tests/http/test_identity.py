"""Users without phone numbers over HTTP, with a store: projection, window, list, sends, changes.

Every test runs on SQLite and, when ``SVC_TEST_POSTGRES_URL`` names a server,
on PostgreSQL (a fresh schema each, dropped after).
"""

from __future__ import annotations

import copy
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from svc.store import SqliteStore
from tests._support import FakeGraphTransport

from .conftest import AUTH, AppFactory, Clock, FailingStore, RecordingFacade, fixture, post_webhook

BSUID = "US.13491208655302741918"
PARENT = "US.ENT.11815799212886844830"
PHONE = "16505551234"
NEW_PHONE = "12195555358"
NEW_BSUID = "US.99887766554433221100"
USERNAME = "@sheena"
BSUID_ONLY_AT = datetime.fromtimestamp(1779321024, tz=UTC)
PII = (BSUID, PARENT, PHONE, NEW_PHONE, NEW_BSUID, USERNAME, "13491208655302741918")


def _value(payload: dict[str, Any]) -> dict[str, Any]:
    value: dict[str, Any] = payload["entry"][0]["changes"][0]["value"]
    return value


def _status(message_id: str, status: str, **user: str) -> dict[str, Any]:
    """A status delivery naming its user only by the given recipient fields (no contacts)."""
    payload = copy.deepcopy(fixture("bsuid_statuses.json"))
    value = _value(payload)
    del value["contacts"]
    value["statuses"] = [{"id": message_id, "status": status, "timestamp": "1779321100", **user}]
    return payload


def _system(*, system: dict[str, str], message_id: str, **sender: str) -> dict[str, Any]:
    """A system-message delivery from ``sender`` (``from``/``from_user_id`` fields)."""
    payload = copy.deepcopy(fixture("bsuid_identity_changes.json"))
    payload["entry"][0]["changes"] = payload["entry"][0]["changes"][:1]
    _value(payload)["messages"] = [
        {"id": message_id, "timestamp": "1779321200", "type": "system", "system": system, **sender}
    ]
    return payload


async def _json(response: Any) -> Any:
    return await response.get_json()


async def test_a_bsuid_only_inbound_is_dispatched_listed_and_opens_its_window(
    make_app: AppFactory, store: Any, clock: Clock
) -> None:
    facade = RecordingFacade()
    client = make_app(store=store, facade=facade).test_client()
    ack = await post_webhook(client, fixture("bsuid_message_username_no_phone.json"))
    assert await _json(ack) == {
        "status": "ok",
        "received": 1,
        "dispatched": 1,
        "skipped": 0,
        "queued": 1,
    }
    assert [u.user.user_id for u in facade.updates] == [BSUID]

    expected = {
        "waMessageId": "wamid.BSUID1",
        "direction": "inbound",
        "fromPhone": None,
        "userId": BSUID,
        "parentUserId": PARENT,
        "status": "received",
        "createdAt": "2026-05-20T23:50:24.000Z",
    }
    for query in ("", f"?user={BSUID}", f"?user={PARENT}"):
        page = await _json(await client.get(f"/api/messages{query}", headers=AUTH))
        assert len(page["items"]) == 1, query
        assert {k: page["items"][0][k] for k in expected} == expected
    other = await _json(await client.get("/api/messages?user=US.1", headers=AUTH))
    assert other["items"] == []

    clock.value = BSUID_ONLY_AT + timedelta(hours=1)
    for user in (BSUID, PARENT):
        window = await _json(await client.get(f"/api/conversations/{user}/window", headers=AUTH))
        assert window == {
            "open": True,
            "lastInboundAt": "2026-05-20T23:50:24.000Z",
            "expiresAt": "2026-05-21T23:50:24.000Z",
            "remainingMs": 23 * 3600 * 1000,
        }
    # The phone is not linked to the BSUID yet: its window is unknown.
    by_phone = await _json(await client.get(f"/api/conversations/{PHONE}/window", headers=AUTH))
    assert by_phone["open"] is False

    # A later delivery (a status naming both ids) links phone and BSUID: the phone finds it too.
    link = _status("wamid.ELSEWHERE", "delivered", recipient_id=PHONE, recipient_user_id=BSUID)
    assert (await post_webhook(client, link)).status_code == 200
    by_phone = await _json(await client.get(f"/api/conversations/+{PHONE}/window", headers=AUTH))
    assert by_phone["open"] is True
    assert by_phone["lastInboundAt"] == "2026-05-20T23:50:24.000Z"
    listed = await _json(await client.get(f"/api/messages?user={PHONE}", headers=AUTH))
    assert [item["waMessageId"] for item in listed["items"]] == ["wamid.BSUID1"]

    identity = await store.find_user_identity(user=PHONE)
    assert (identity.user_id, identity.parent_user_id, identity.wa_id, identity.username) == (
        BSUID,
        PARENT,
        PHONE,
        USERNAME,
    )


@pytest.mark.parametrize("query", ["user=", "user=abc", "user=us.1", "user=US.1.2", "user=%2B"])
async def test_a_bad_user_filter_is_malformed_query(
    make_app: AppFactory, sqlite_store: SqliteStore, query: str
) -> None:
    response = (
        await make_app(store=sqlite_store).test_client().get(f"/api/messages?{query}", headers=AUTH)
    )
    assert response.status_code == 400
    assert await _json(response) == {
        "error": {"code": "malformed_query", "message": "'user' is not a usable value."}
    }


@pytest.mark.parametrize(
    ("to", "column"), [(BSUID, "userId"), (PARENT, "parentUserId"), (PHONE, "toPhone")]
)
async def test_a_text_send_to_a_bsuid_goes_as_recipient_and_its_status_advances(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport, to: str, column: str
) -> None:
    client = make_app(store=store).test_client()
    sent = await client.post("/api/messages/text", json={"to": to, "text": "hi"}, headers=AUTH)
    assert sent.status_code == 200
    body = graph.bodies()[0]
    if to == PHONE:
        assert body["to"] == PHONE and "recipient" not in body
    else:
        assert body["recipient"] == to and "to" not in body
    row = await _json(await client.get("/api/messages/wamid.TEST1", headers=AUTH))
    assert row["direction"] == "outbound" and row["status"] == "sent"
    assert {k: row[k] for k in ("toPhone", "userId", "parentUserId")} == {
        "toPhone": None,
        "userId": None,
        "parentUserId": None,
        column: to,
    }
    listed = await _json(await client.get(f"/api/messages?user={to}", headers=AUTH))
    assert [item["waMessageId"] for item in listed["items"]] == ["wamid.TEST1"]

    # The status names the user by its BSUID only (no recipient_id): the row still advances.
    status = _status("wamid.TEST1", "delivered", recipient_user_id=BSUID)
    assert "recipient_id" not in _value(status)["statuses"][0]
    assert (await post_webhook(client, status)).status_code == 200
    row = await _json(await client.get("/api/messages/wamid.TEST1", headers=AUTH))
    assert row["status"] == "delivered"


async def test_a_composer_body_to_a_parent_bsuid_goes_as_recipient(
    make_app: AppFactory, sqlite_store: SqliteStore, graph: FakeGraphTransport
) -> None:
    client = make_app(store=sqlite_store).test_client()
    body = {"type": "image", "to": PARENT, "link": "https://example.com/a.png"}
    response = await client.post("/api/messages", json=body, headers=AUTH)
    assert response.status_code == 200
    assert graph.bodies()[0]["recipient"] == PARENT
    assert "to" not in graph.bodies()[0]
    row = await sqlite_store.get_message(wa_message_id="wamid.TEST1")
    assert row is not None and row.parent_user_id == PARENT and row.to_phone is None


async def test_a_phone_only_template_to_a_bsuid_is_refused_naming_the_rule(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    body = {
        "type": "template",
        "to": BSUID,
        "name": "verify_code",
        "languageCode": "en_US",
        "components": [
            {"type": "body", "parameters": [{"type": "text", "text": "123456"}]},
            {
                "type": "button",
                "sub_type": "url",
                "index": "0",
                "parameters": [{"type": "text", "text": "123456"}],
            },
        ],
    }
    # Only an OTP button makes a template phone-only; this one goes as recipient.
    client = make_app().test_client()
    assert (await client.post("/api/messages", json=body, headers=AUTH)).status_code == 200
    otp = {
        **body,
        "components": [{"type": "buttons", "buttons": [{"type": "otp", "otp_type": "copy_code"}]}],
    }
    response = await client.post("/api/messages", json=otp, headers=AUTH)
    assert response.status_code == 400
    error = (await _json(response))["error"]
    assert error["code"] == "malformed_body"
    assert "phone numbers only" in error["message"]
    assert BSUID not in error["message"]
    assert len(graph.requests) == 1


async def test_a_user_changed_number_event_moves_the_identity(
    make_app: AppFactory, store: Any, clock: Clock
) -> None:
    client = make_app(store=store).test_client()
    await post_webhook(client, fixture("bsuid_message_with_phone.json"))
    change = _system(
        message_id="wamid.SYS1",
        system={"type": "user_changed_number", "wa_id": NEW_PHONE, "body": "changed"},
        **{"from": PHONE, "from_user_id": BSUID},
    )
    for _ in range(2):  # the redelivery re-merges the old sighting and re-applies the change
        ack = await post_webhook(client, change)
        assert ack.status_code == 200
        moved = await store.find_user_identity(user=NEW_PHONE)
        assert moved is not None
        assert (moved.user_id, moved.wa_id) == (BSUID, NEW_PHONE)
        assert await store.find_user_identity(user=PHONE) is None
    clock.value = datetime.fromtimestamp(1779321025, tz=UTC) + timedelta(hours=1)
    window = await _json(await client.get(f"/api/conversations/{NEW_PHONE}/window", headers=AUTH))
    assert window["open"] is True


async def test_a_group_event_s_participants_join_the_identity_map(
    make_app: AppFactory, store: Any
) -> None:
    """A participant the platform names by phone and BSUID together links the two, as a
    sender does: a lookup by the phone finds the BSUID's row."""
    payload = copy.deepcopy(fixture("groups_participants.json"))
    events = _value(payload)["groups"]
    events[0]["added_participants"][0]["user_id"] = BSUID
    client = make_app(store=store).test_client()
    assert (await post_webhook(client, payload)).status_code == 200
    found = await store.find_user_identity(user=PHONE)
    assert found is not None and (found.user_id, found.wa_id) == (BSUID, PHONE)


async def test_a_user_changed_user_id_event_and_a_user_id_update_re_key_the_identity(
    make_app: AppFactory, store: Any
) -> None:
    client = make_app(store=store).test_client()
    await post_webhook(client, fixture("bsuid_message_with_phone.json"))
    change = _system(
        message_id="wamid.SYS2",
        system={"type": "user_changed_user_id", "user_id": NEW_BSUID, "body": "changed"},
        from_user_id=BSUID,
    )
    assert (await post_webhook(client, change)).status_code == 200
    moved = await store.find_user_identity(user=NEW_BSUID)
    assert moved is not None and moved.wa_id == PHONE
    assert (await store.find_user_identity(user=BSUID)) is None

    third = "US.55555555555555555555"
    update = copy.deepcopy(fixture("bsuid_identity_changes.json"))
    update["entry"][0]["changes"] = update["entry"][0]["changes"][1:]
    item = _value(update)["user_id_update"][0]
    item["user_id"] = {"previous": NEW_BSUID, "current": third}
    assert (await post_webhook(client, update)).status_code == 200
    current = await store.find_user_identity(user=third)
    assert current is not None
    assert (current.wa_id, current.parent_user_id) == (PHONE, "US.ENT.22334455667788990011")
    assert await store.find_user_identity(user=NEW_BSUID) is None


async def test_a_change_the_store_cannot_write_is_dispatched_then_redelivered(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    """Handlers run once; the 503 makes the platform redeliver, and the duplicate applies it."""
    facade = RecordingFacade()
    failing = FailingStore(sqlite_store, {"record_identity_change"})
    client = make_app(store=failing, facade=facade).test_client()
    change = _system(
        message_id="wamid.SYS2",
        system={"type": "user_changed_user_id", "user_id": NEW_BSUID, "body": "changed"},
        from_user_id=BSUID,
    )
    first = await post_webhook(client, change)
    assert first.status_code == 503
    assert (await _json(first))["error"]["code"] == "persistence_unavailable"
    assert len(facade.updates) == 1
    assert await sqlite_store.find_user_identity(user=BSUID) is not None
    failing.failing.clear()
    again = await post_webhook(client, change)
    assert await _json(again) == {
        "status": "ok",
        "received": 1,
        "dispatched": 0,
        "skipped": 1,
        "queued": 0,
    }
    assert len(facade.updates) == 1
    assert await sqlite_store.find_user_identity(user=BSUID) is None
    assert await sqlite_store.find_user_identity(user=NEW_BSUID) is not None


async def test_an_inbound_naming_no_storable_user_is_not_projected_the_rest_is(
    make_app: AppFactory, sqlite_store: SqliteStore, caplog: Any
) -> None:
    caplog.set_level(logging.WARNING)
    payload = copy.deepcopy(fixture("bsuid_message_with_phone.json"))
    value = _value(payload)
    del value["contacts"]
    good = value["messages"][0]
    bad = {**good, "id": "wamid.LONG", "from": "1" * 100}
    del bad["from_user_id"]
    value["messages"] = [bad, good]
    client = make_app(store=sqlite_store, facade=RecordingFacade()).test_client()
    ack = await _json(await post_webhook(client, payload))
    assert ack["dispatched"] == 2
    assert await sqlite_store.get_message(wa_message_id="wamid.LONG") is None
    assert await sqlite_store.get_message(wa_message_id=good["id"]) is not None
    assert "reason=no_user_identity" in caplog.text
    assert "1" * 100 not in caplog.text


async def test_no_phone_bsuid_or_username_in_logs_or_metrics(
    make_app: AppFactory, sqlite_store: SqliteStore, log_stream: Any, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    failing = FailingStore(sqlite_store, set())
    client = make_app(
        store=failing, facade=RecordingFacade(fail_kinds=frozenset({"message"}))
    ).test_client()
    await post_webhook(client, fixture("bsuid_message_username_no_phone.json"))
    await post_webhook(client, fixture("bsuid_message_with_phone.json"))
    await post_webhook(client, fixture("bsuid_statuses.json"))
    await post_webhook(client, fixture("bsuid_identity_changes.json"))
    failing.failing.add("record_identity_change")
    await post_webhook(
        client,
        _system(
            message_id="wamid.SYS9",
            system={"type": "user_changed_user_id", "user_id": "US.7", "body": "x"},
            from_user_id=NEW_BSUID,
        ),
    )
    failing.failing.clear()
    await client.post("/api/messages/text", json={"to": BSUID, "text": "hi"}, headers=AUTH)
    await client.post("/api/messages/text", json={"to": "US.1.2", "text": "hi"}, headers=AUTH)
    for user in (BSUID, PARENT, PHONE, "US.1.2"):
        await client.get(f"/api/conversations/{user}/window", headers=AUTH)
        await client.get(f"/api/messages?user={user}", headers=AUTH)
    metrics = await (await client.get("/metrics", headers=AUTH)).get_data(as_text=True)
    diagnostics = await (await client.get("/debug/diagnostics", headers=AUTH)).get_data(
        as_text=True
    )
    assert "webhook_normalization_total" in metrics
    everything = "\n".join([log_stream.getvalue(), caplog.text, metrics, diagnostics])
    for value in PII:
        assert value not in everything


async def test_the_openapi_document_describes_users_without_phone_numbers(
    make_app: AppFactory,
) -> None:
    document = await _json(await make_app().test_client().get("/openapi.json"))
    window = document["paths"]["/api/conversations/{user}/window"]["get"]
    assert "business-scoped user id" in window["description"]
    listing = document["paths"]["/api/messages"]["get"]
    [user] = [p for p in listing["parameters"] if p["name"] == "user"]
    assert "parent BSUID" in user["description"]
    schemas = document["components"]["schemas"]
    record = schemas["MessageRecordOut"]
    assert {"userId", "parentUserId"} <= set(record["required"])
    text_body = document["paths"]["/api/messages/text"]["post"]["requestBody"]
    to = text_body["content"]["application/json"]["schema"]["properties"]["to"]
    assert "both sent as `recipient`" in to["description"]


def test_the_docs_example_replies_to_a_bsuid_only_user(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/identity.md's example runs as written and sends to the BSUID."""
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "identity.md"
    match = re.search(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
    assert match
    namespace: dict[str, Any] = {"__name__": "identity_doc"}
    exec(compile(match.group(1), "docs/identity.md", "exec"), namespace)  # noqa: S102 - our docs
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "@sheena window open: False"
    assert lines[1].startswith(f"sent to {BSUID} -> wamid.DRYRUN.")
