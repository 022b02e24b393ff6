"""GET {prefix}/messages, {prefix}/messages/{id} and {prefix}/conversations/{user}/window."""

from __future__ import annotations

from datetime import timedelta

import pytest

from svc.store import MessageRecord, SqliteStore

from .conftest import AUTH, T0, AppFactory, Clock, FailingStore


async def _seed(store: SqliteStore, count: int) -> None:
    for index in range(count):
        moment = T0 + timedelta(seconds=index)
        await store.record_message(
            MessageRecord(
                row_id=f"row-{index:03d}",
                wa_message_id=f"wamid.{index}",
                direction="inbound",
                type="text",
                status="received",
                from_phone="16505551234",
                created_at=moment,
                updated_at=moment,
            )
        )


async def test_list_pages_newest_first_with_a_cursor(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    await _seed(sqlite_store, 5)
    client = make_app(store=sqlite_store).test_client()
    first = await (await client.get("/api/messages?limit=2", headers=AUTH)).get_json()
    assert [item["waMessageId"] for item in first["items"]] == ["wamid.4", "wamid.3"]
    assert first["nextCursor"] == "row-003"
    assert first["items"][0] == {
        "rowId": "row-004",
        "waMessageId": "wamid.4",
        "direction": "inbound",
        "fromPhone": "16505551234",
        "toPhone": None,
        "type": "text",
        "status": "received",
        "graphMessageId": None,
        "userId": None,
        "parentUserId": None,
        "createdAt": "2026-11-21T10:15:34.000Z",
        "updatedAt": "2026-11-21T10:15:34.000Z",
    }
    second = await (
        await client.get(f"/api/messages?limit=2&cursor={first['nextCursor']}", headers=AUTH)
    ).get_json()
    assert [item["waMessageId"] for item in second["items"]] == ["wamid.2", "wamid.1"]


async def test_list_defaults_to_fifty(make_app: AppFactory, sqlite_store: SqliteStore) -> None:
    await _seed(sqlite_store, 60)
    client = make_app(store=sqlite_store).test_client()
    page = await (await client.get("/api/messages", headers=AUTH)).get_json()
    assert len(page["items"]) == 50
    assert page["nextCursor"] is not None


@pytest.mark.parametrize(
    "query",
    ["limit=0", "limit=101", "limit=abc", "limit=-1", "limit=1.5", "cursor=", "cursor=%01x"],
)
async def test_bad_query_is_malformed_query(
    make_app: AppFactory, sqlite_store: SqliteStore, query: str
) -> None:
    client = make_app(store=sqlite_store).test_client()
    response = await client.get(f"/api/messages?{query}", headers=AUTH)
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == "malformed_query"


async def test_get_one_message_and_404(make_app: AppFactory, sqlite_store: SqliteStore) -> None:
    await _seed(sqlite_store, 1)
    client = make_app(store=sqlite_store).test_client()
    found = await client.get("/api/messages/wamid.0", headers=AUTH)
    assert found.status_code == 200
    assert (await found.get_json())["rowId"] == "row-000"
    missing = await client.get("/api/messages/wamid.nope", headers=AUTH)
    assert missing.status_code == 404
    assert await missing.get_json() == {
        "error": {"code": "not_found", "message": "No message with this id."}
    }


@pytest.mark.parametrize(
    "path",
    [
        "/api/messages/a%2Fb",
        "/api/messages/a%5Cb",
        "/api/messages/" + "x" * 257,
        "/api/messages/a%01b",
        "/api/messages/",
    ],
)
async def test_unsafe_message_id_is_malformed_path(
    make_app: AppFactory, sqlite_store: SqliteStore, path: str
) -> None:
    client = make_app(store=sqlite_store).test_client()
    # The undecoded path as a server hands it over (the test client would re-encode %2F).
    response = await client.get(path, headers=AUTH, scope_base={"raw_path": path.encode()})
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == "malformed_path"


async def test_get_on_the_text_route_is_405(make_app: AppFactory) -> None:
    response = await make_app().test_client().get("/api/messages/text", headers=AUTH)
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"
    assert (await response.get_json())["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize(
    "path", ["/api/messages", "/api/messages/wamid.1", "/api/conversations/15551234567/window"]
)
async def test_read_routes_without_a_store_are_503_not_configured(
    make_app: AppFactory, path: str
) -> None:
    response = await make_app().test_client().get(path, headers=AUTH)
    assert response.status_code == 503
    assert (await response.get_json())["error"]["code"] == "persistence_not_configured"


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("/api/messages", "list_messages"),
        ("/api/messages/wamid.1", "get_message"),
        ("/api/conversations/15551234567/window", "get_latest_inbound_message_at"),
    ],
)
async def test_store_failure_is_503_unavailable_never_404(
    make_app: AppFactory, sqlite_store: SqliteStore, path: str, method: str
) -> None:
    client = make_app(store=FailingStore(sqlite_store, {method})).test_client()
    response = await client.get(path, headers=AUTH)
    assert response.status_code == 503
    assert (await response.get_json())["error"]["code"] == "persistence_unavailable"


@pytest.mark.parametrize(
    "path", ["/api/messages", "/api/messages/wamid.1", "/api/conversations/15551234567/window"]
)
async def test_read_routes_answer_401_on_bad_bearer(make_app: AppFactory, path: str) -> None:
    response = await make_app().test_client().get(path)
    assert response.status_code == 401
    assert (await response.get_json())["error"]["code"] == "unauthorized"


async def test_window_open_closed_and_plus_prefix(
    make_app: AppFactory, sqlite_store: SqliteStore, clock: Clock
) -> None:
    await _seed(sqlite_store, 1)  # inbound from 16505551234 at T0
    client = make_app(store=sqlite_store).test_client()
    clock.value = T0 + timedelta(hours=1)
    body = await (
        await client.get("/api/conversations/+16505551234/window", headers=AUTH)
    ).get_json()
    assert body == {
        "open": True,
        "lastInboundAt": "2026-11-21T10:15:30.000Z",
        "expiresAt": "2026-11-22T10:15:30.000Z",
        "remainingMs": 23 * 3600 * 1000,
    }
    clock.value = T0 + timedelta(hours=24)
    closed = await (
        await client.get("/api/conversations/16505551234/window", headers=AUTH)
    ).get_json()
    assert closed["open"] is False
    assert closed["remainingMs"] == 0
    never = await (await client.get("/api/conversations/4470000/window", headers=AUTH)).get_json()
    assert never == {"open": False, "lastInboundAt": None, "expiresAt": None, "remainingMs": 0}


async def test_a_window_that_cannot_be_computed_is_503_window_unavailable(
    make_app: AppFactory, sqlite_store: SqliteStore, clock: Clock
) -> None:
    """The store answered, the window could not be computed (here: a clock without a zone)."""
    await _seed(sqlite_store, 1)
    client = make_app(store=sqlite_store).test_client()
    clock.value = T0.replace(tzinfo=None)
    response = await client.get("/api/conversations/16505551234/window", headers=AUTH)
    assert response.status_code == 503
    assert await response.get_json() == {
        "error": {
            "code": "conversation_window_unavailable",
            "message": "The conversation window could not be computed.",
        }
    }


@pytest.mark.parametrize(
    "user",
    [
        "abc",
        "1" * 16,
        "+",
        "++1",
        "1-2",
        "us.123",
        "US.12.3",
        "US." + "1" * 129,
        "US.ENT.",
        "US.1%20",
        "US.%01",
    ],
)
async def test_window_bad_user_is_malformed_path(
    make_app: AppFactory, sqlite_store: SqliteStore, user: str
) -> None:
    client = make_app(store=sqlite_store).test_client()
    response = await client.get(f"/api/conversations/{user}/window", headers=AUTH)
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == "malformed_path"


async def test_unknown_route_and_wrong_method(make_app: AppFactory) -> None:
    client = make_app().test_client()
    unknown = await client.get("/nope")
    assert unknown.status_code == 404
    assert await unknown.get_json() == {"error": {"code": "not_found", "message": "Not found."}}
    wrong = await client.delete("/api/messages/text", headers=AUTH)
    assert wrong.status_code == 405
    assert "POST" in wrong.headers["Allow"]
    put = await client.put("/healthz")
    assert put.status_code == 405
    assert "GET" in put.headers["Allow"]
