"""Issue 26 items 5 and 7: a refused body names what is accepted; a nonsense cursor is 400."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from svc.store import MessageRecord, SqliteStore

from .conftest import AUTH, T0, AppFactory

ACCEPTED = (
    "text, image, video, audio, document, sticker, location, reaction, removeReaction, "
    "contacts, interactiveButtons, interactiveList, interactiveCtaUrl, interactiveFlow, "
    "interactiveCarousel, interactiveProduct, interactiveProducts, interactiveCatalog, "
    "interactiveLocationRequest, callPermissionRequest, template, pin, read"
)


async def _error(client: Any, path: str, body: object) -> dict[str, str]:
    response = await client.post(path, json=body, headers=AUTH)
    assert response.status_code == 400
    error: dict[str, str] = (await response.get_json())["error"]
    return error


async def test_an_unknown_type_lists_the_accepted_types(client: Any) -> None:
    error = await _error(client, "/api/messages", {"type": "nope", "to": "15551234567"})
    assert error == {
        "code": "malformed_body",
        "message": "The request body's 'type' is not a message type (union_tag_invalid); "
        f"accepted: {ACCEPTED}.",
    }


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        (
            "/api/messages",
            {"type": "text", "to": "15551234567", "text": "x" * 5000},
            "The message was refused by validation (text: at most 4096 characters).",
        ),
        (
            "/api/messages/text",
            {"to": "15551234567", "text": "x" * 5000},
            "The message was refused by validation (text: at most 4096 characters).",
        ),
        (
            "/api/messages",
            {"type": "image", "to": "15551234567", "link": "https://e.example/a.png",
             "caption": "c" * 1100},
            "The message was refused by validation (caption: at most 1024 characters).",
        ),
    ],
)  # fmt: skip
async def test_a_field_over_its_limit_says_the_limit(
    client: Any, path: str, body: dict[str, object], message: str
) -> None:
    error = await _error(client, path, body)
    assert error == {"code": "malformed_body", "message": message}
    assert "xxxx" not in message


async def _seed(store: SqliteStore) -> None:
    for index in range(3):
        moment = T0 + timedelta(seconds=index)
        await store.record_message(
            MessageRecord(
                row_id=f"row-{index}",
                wa_message_id=f"wamid.{index}",
                direction="inbound",
                type="text",
                status="received",
                from_phone="16505551234",
                created_at=moment,
                updated_at=moment,
            )
        )


@pytest.mark.parametrize("cursor", ["nonsense", "row-9", "00000000-0000-4000-8000-000000000000"])
async def test_a_cursor_that_names_no_stored_message_is_malformed_query(
    make_app: AppFactory, sqlite_store: SqliteStore, cursor: str
) -> None:
    await _seed(sqlite_store)
    client = make_app(store=sqlite_store).test_client()
    response = await client.get(f"/api/messages?cursor={cursor}", headers=AUTH)
    assert response.status_code == 400
    assert (await response.get_json())["error"] == {
        "code": "malformed_query",
        "message": "'cursor' names no stored message (mistyped, or removed since): "
        "use nextCursor of the previous page, or start again without a cursor.",
    }


async def test_the_oldest_row_id_as_cursor_is_an_empty_page(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    await _seed(sqlite_store)
    client = make_app(store=sqlite_store).test_client()
    response = await client.get("/api/messages?cursor=row-0", headers=AUTH)
    assert response.status_code == 200
    assert await response.get_json() == {"items": [], "nextCursor": None}


async def test_every_issued_cursor_pages_to_the_end(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    await _seed(sqlite_store)
    client = make_app(store=sqlite_store).test_client()
    seen: list[str] = []
    cursor = ""
    while True:
        query = f"limit=1&cursor={cursor}" if cursor else "limit=1"
        response = await client.get(f"/api/messages?{query}", headers=AUTH)
        assert response.status_code == 200
        page = await response.get_json()
        seen += [item["rowId"] for item in page["items"]]
        if page["nextCursor"] is None:
            break
        cursor = page["nextCursor"]
    assert seen == ["row-2", "row-1", "row-0"]
