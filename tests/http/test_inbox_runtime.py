"""Handlers with a store: sealed into the inbox with the record, run after the answer.

Real SQLite and PostgreSQL, the fake Graph at the transport. The inbox row is written with
the delivery and holds no text in clear; the run replies once however often it is retried
(keyed sends replay the first answer); failures retry, then dead-letter; keys rotate; a row
whose key is gone dead-letters with ``key_unavailable``; a send whose outcome cannot be
known is never made again.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from prometheus_client import CollectorRegistry

from svc.crypto import InboxKeyring, sealed_key_id
from svc.http import HttpError, ServiceError
from svc.runtime import HandlerOptions
from svc.store import SqliteStore
from svc.webhook import DefaultFacade, HandlerContext, MessageUpdate, SentMessage
from tests._support import FakeGraphTransport, sign

from .conftest import (
    APP_SECRET,
    AUTH,
    WEBHOOK,
    AppFactory,
    Clock,
    fixture,
    inbox_keyring,
    post_webhook,
    settle,
)

USER_A = "16505551234"
USER_B = "16505559876"
OLD_KEY = bytes(range(32))
NEW_KEY = bytes(range(1, 33))
FAST = HandlerOptions(retry_delay=0.0, poll_interval=0.05)


def _inbound(*items: tuple[str, str, str]) -> dict[str, Any]:
    """One delivery of texts ``(sender, message id, text)``, in order."""
    payload = fixture("message_text.json")
    value = payload["entry"][0]["changes"][0]["value"]
    template = value["messages"][0]
    value.pop("contacts", None)
    value["messages"] = [
        {**template, "from": sender, "id": message_id, "text": {"body": text}}
        for sender, message_id, text in items
    ]
    return payload


async def _record_only(client: Any, payload: dict[str, Any]) -> Any:
    """Post without running the handlers (the answer waits only for the record)."""
    body = json.dumps(payload).encode()
    headers = {"X-Hub-Signature-256": sign(body=body, secret=APP_SECRET)}
    return await client.post(WEBHOOK, data=body, headers=headers)


def _replying_bot(replies: list[SentMessage], texts: list[str] | None = None) -> DefaultFacade:
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def reply(ctx: HandlerContext) -> None:
        assert isinstance(ctx.update, MessageUpdate)
        if texts is not None:
            texts.append(ctx.update.text or "")
        replies.append(await ctx.reply_text(f"You said: {ctx.update.text}"))

    return bot


async def test_the_handler_runs_after_the_answer_from_the_inbox(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    replies: list[SentMessage] = []
    client = make_app(store=store, facade=_replying_bot(replies)).test_client()
    answer = await _record_only(client, _inbound((USER_A, "wamid.A1", "hello")))
    assert await answer.get_json() == {
        "status": "ok",
        "received": 1,
        "dispatched": 1,
        "skipped": 0,
        "queued": 1,
    }
    assert graph.requests == []  # answered; nothing ran yet
    [waiting] = await store.list_inbox_items()
    assert waiting.kind == "message" and waiting.status == "pending"
    await settle(client)
    assert replies == [SentMessage(message_id="wamid.TEST1")]
    assert [body["text"]["body"] for body in graph.bodies()] == ["You said: hello"]
    assert await store.list_inbox_items() == []  # deleted when its run ended
    again = await post_webhook(client, _inbound((USER_A, "wamid.A1", "hello")))
    assert (await again.get_json())["dispatched"] == 0  # a redelivery is a plain duplicate
    assert len(graph.requests) == 1


async def test_a_user_s_updates_run_in_order_across_deliveries(
    make_app: AppFactory, store: Any
) -> None:
    order: list[str] = []
    bot = DefaultFacade()
    bot.on("message", lambda update: order.append(update.message_id))
    client = make_app(store=store, facade=bot, handler_options=FAST).test_client()
    await _record_only(client, _inbound((USER_A, "wamid.A1", "1"), (USER_B, "wamid.B1", "1")))
    await _record_only(client, _inbound((USER_A, "wamid.A2", "2"), (USER_A, "wamid.A3", "3")))
    await _record_only(client, _inbound((USER_B, "wamid.B2", "2"), (USER_A, "wamid.A4", "4")))
    await settle(client)
    assert [m for m in order if "A" in m] == ["wamid.A1", "wamid.A2", "wamid.A3", "wamid.A4"]
    assert [m for m in order if "B" in m] == ["wamid.B1", "wamid.B2"]


async def test_a_rerun_replays_the_first_reply_and_graph_receives_it_once(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    bot = DefaultFacade()
    runs: list[SentMessage] = []

    @bot.on("message", context=True)
    async def reply_then_fail(ctx: HandlerContext) -> None:
        # A language model writes another text at every run: the key alone decides.
        runs.append(await ctx.reply_text(f"answer number {len(runs) + 1}"))
        if len(runs) == 1:
            raise ConnectionError("the handler failed after its reply")

    client = make_app(store=store, facade=bot, handler_options=FAST).test_client()
    await post_webhook(client, _inbound((USER_A, "wamid.A1", "hi")))
    assert runs == [SentMessage(message_id="wamid.TEST1")] * 2  # the rerun got the first answer
    assert [body["text"]["body"] for body in graph.bodies()] == ["answer number 1"]
    assert await store.list_inbox_items() == []


async def test_a_failed_run_is_retried_then_succeeds(make_app: AppFactory, store: Any) -> None:
    bot = DefaultFacade()
    runs: list[str] = []

    @bot.on("message")
    def flaky(update: MessageUpdate) -> None:
        runs.append(update.message_id)
        if len(runs) < 3:
            raise TimeoutError("the model is slow")

    client = make_app(store=store, facade=bot, handler_options=FAST).test_client()
    await post_webhook(client, _inbound((USER_A, "wamid.A1", "hi")))
    assert runs == ["wamid.A1"] * 3
    assert await store.list_inbox_items() == []


async def test_after_the_last_attempt_the_update_is_a_dead_letter_that_releases_the_user(
    make_app: AppFactory, store: Any
) -> None:
    bot = DefaultFacade()
    runs: list[str] = []

    @bot.on("message")
    def failing(update: MessageUpdate) -> None:
        runs.append(update.message_id)
        if update.message_id == "wamid.A1":
            raise LookupError(f"no answer for {update.text}")

    options = dataclasses.replace(FAST, max_attempts=2)
    registry = CollectorRegistry()
    client = make_app(
        store=store, facade=bot, handler_options=options, metrics_registry=registry
    ).test_client()
    await post_webhook(client, _inbound((USER_A, "wamid.A1", "one"), (USER_A, "wamid.A2", "two")))
    assert runs == ["wamid.A1", "wamid.A1", "wamid.A2"]
    [dead] = await store.list_inbox_items(status="dead")
    assert (dead.attempts, dead.last_error) == (2, "LookupError")
    outcomes = {
        outcome: registry.get_sample_value("svc_handler_runs_total", {"outcome": outcome})
        for outcome in ("success", "error", "dead")
    }
    assert outcomes == {"success": 1.0, "error": 1.0, "dead": 1.0}
    metrics = await (await client.get("/metrics", headers=AUTH)).get_data(as_text=True)
    assert "svc_inbox_items" in metrics and "svc_handler_duration_seconds" in metrics


async def test_keys_rotate_the_old_key_reads_and_the_new_key_writes(
    make_app: AppFactory, store: Any
) -> None:
    seen: list[str] = []
    bot = DefaultFacade()
    bot.on("message", lambda update: seen.append(update.message_id))
    before = make_app(store=store, facade=bot, inbox_keyring=InboxKeyring([OLD_KEY]))
    await _record_only(before.test_client(), _inbound((USER_A, "wamid.A1", "old")))
    rotated = make_app(store=store, facade=bot, inbox_keyring=InboxKeyring([NEW_KEY, OLD_KEY]))
    client = rotated.test_client()
    await _record_only(client, _inbound((USER_A, "wamid.A2", "new")))
    old_row, new_row = await store.list_inbox_items()
    assert sealed_key_id(old_row.sealed) == InboxKeyring([OLD_KEY]).write_key_id
    assert sealed_key_id(new_row.sealed) == InboxKeyring([NEW_KEY]).write_key_id
    await settle(client)
    assert seen == ["wamid.A1", "wamid.A2"]


async def test_a_row_sealed_under_a_dropped_key_is_a_key_unavailable_dead_letter(
    make_app: AppFactory, store: Any
) -> None:
    seen: list[str] = []
    bot = DefaultFacade()
    bot.on("message", lambda update: seen.append(update.message_id))
    before = make_app(store=store, facade=bot, inbox_keyring=InboxKeyring([OLD_KEY]))
    await _record_only(before.test_client(), _inbound((USER_A, "wamid.A1", "lost")))
    after = make_app(store=store, facade=bot, inbox_keyring=InboxKeyring([NEW_KEY]))
    client = after.test_client()
    await post_webhook(client, _inbound((USER_A, "wamid.A2", "readable")))
    assert seen == ["wamid.A2"]  # the dead letter released the user's next update
    [dead] = await store.list_inbox_items(status="dead")
    assert (dead.attempts, dead.last_error) == (1, "key_unavailable")


async def test_a_send_whose_outcome_is_unknown_is_never_made_again(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport, clock: Clock
) -> None:
    graph.answers.append(httpx.ReadTimeout("sent, never answered"))
    replies: list[SentMessage] = []
    client = make_app(
        store=store, facade=_replying_bot(replies), handler_options=FAST
    ).test_client()
    await post_webhook(client, _inbound((USER_A, "wamid.A1", "hi")))
    [dead] = await store.list_inbox_items(status="dead")
    assert dead.last_error == "send_outcome_unknown"
    assert len(graph.requests) == 1 and replies == []
    # Run again by the operator: the send's key is still pending (the outcome is unknown),
    # so the rerun does not send; it is a dead letter again.
    assert await store.retry_inbox_item(id=dead.id, now=clock()) is not None
    await settle(client)
    [again] = await store.list_inbox_items(status="dead")
    assert again.last_error == "send_outcome_unknown"
    assert len(graph.requests) == 1


async def test_a_transient_refusal_frees_the_send_and_the_retry_sends_it(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    graph.answers.append(
        httpx.Response(
            429, json={"error": {"code": 130429, "message": "Rate limit hit", "type": "x"}}
        )
    )
    replies: list[SentMessage] = []
    client = make_app(
        store=store, facade=_replying_bot(replies), handler_options=FAST
    ).test_client()
    await post_webhook(client, _inbound((USER_A, "wamid.A1", "hi")))
    assert len(graph.requests) == 2
    assert replies == [SentMessage(message_id="wamid.TEST1")]
    assert await store.list_inbox_items() == []


async def test_a_refusal_retrying_cannot_change_is_raised_again_at_every_rerun(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    graph.answers.append(
        httpx.Response(400, json={"error": {"code": 131026, "message": "undeliverable"}})
    )
    raised: list[tuple[int, str]] = []
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def reply(ctx: HandlerContext) -> None:
        try:
            await ctx.reply_text("one answer")
        except HttpError as exc:
            raised.append((exc.status, exc.code))
            raise

    options = dataclasses.replace(FAST, max_attempts=3)
    client = make_app(store=store, facade=bot, handler_options=options).test_client()
    await post_webhook(client, _inbound((USER_A, "wamid.A1", "hi")))
    assert raised == [(502, "graph_request_failed")] * 3  # each rerun gets the kept refusal
    assert len(graph.requests) == 1  # and sends nothing again
    [dead] = await store.list_inbox_items(status="dead")
    assert (dead.attempts, dead.last_error) == (3, "HttpError")


async def test_a_refused_payload_is_a_dead_letter_at_once(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    runs: list[str] = []
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def send(ctx: HandlerContext) -> None:
        assert isinstance(ctx.update, MessageUpdate)
        runs.append(ctx.update.message_id)
        if ctx.update.message_id == "wamid.A1":
            await ctx.send({"type": "text"})  # no recipient: refused before it is sent

    client = make_app(store=store, facade=bot, handler_options=FAST).test_client()
    await post_webhook(client, _inbound((USER_A, "wamid.A1", "one"), (USER_A, "wamid.A2", "two")))
    assert runs == ["wamid.A1", "wamid.A2"]  # no retry can change it; the user goes on
    assert graph.requests == []
    [dead] = await store.list_inbox_items(status="dead")
    assert (dead.attempts, dead.last_error) == (1, "GraphRequestValidationError")


async def test_handlers_with_a_store_and_no_keyring_are_refused(
    make_app: AppFactory, store: Any
) -> None:
    with pytest.raises(ServiceError) as refused:
        make_app(store=store, facade=DefaultFacade(), inbox_keyring=None)
    assert refused.value.code == "invalid_config"
    assert "inbox_keyring" in str(refused.value) and "SVC_INBOX_KEY" in str(refused.value)


async def test_nothing_of_a_waiting_update_is_in_clear_in_the_database_file(
    make_app: AppFactory, tmp_path: Path
) -> None:
    secret_text = "my card number is 4111 1111 1111 1111"
    path = tmp_path / "svc.db"
    store = SqliteStore(str(path))
    await store.migrate()
    try:
        bot = DefaultFacade()
        bot.on("message", lambda update: None)
        client = make_app(store=store, facade=bot, inbox_keyring=inbox_keyring()).test_client()
        answer = await _record_only(client, _inbound((USER_A, "wamid.SECRET1", secret_text)))
        assert (await answer.get_json())["dispatched"] == 1
        [waiting] = await store.list_inbox_items()
        assert secret_text.encode() not in waiting.sealed
    finally:
        await store.close()
    with sqlite3.connect(path) as db:  # the WAL folded into the file
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    files = [p for p in tmp_path.iterdir() if p.name.startswith("svc.db") and p.is_file()]
    data = b"".join(p.read_bytes() for p in files)
    assert b"svc_inbox" in data  # the table is there
    for needle in (secret_text, "4111 1111"):
        assert needle.encode() not in data, needle


async def test_a_run_starts_only_once_its_webhook_answer_is_written(
    make_app: AppFactory, autojump_clock: Any
) -> None:
    """The runtime is woken when the answer has gone out, not when the updates were handed
    over: a client that takes (virtual) seconds to take the answer sees no run start before.
    (The in-memory queue, for virtual time; with a store the same ``Service.answered``
    wakes it.)"""
    events: list[str] = []
    ran = trio.Event()
    bot = DefaultFacade()

    @bot.on("message")
    def note(update: MessageUpdate) -> None:
        events.append("run")
        ran.set()

    app = make_app(facade=bot, handler_options=HandlerOptions(poll_interval=3600.0))
    body = json.dumps(_inbound((USER_A, "wamid.A1", "hello"))).encode()
    scope = {
        "type": "http",
        "method": "POST",
        "path": WEBHOOK,
        "headers": [
            (b"content-length", str(len(body)).encode()),
            (b"x-hub-signature-256", sign(body=body, secret=APP_SECRET).encode()),
        ],
    }
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return chunks.pop(0) if chunks else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            with trio.move_on_after(5):  # a slow client: a run started meanwhile would show
                await ran.wait()
            events.append("answer")

    async with app.test_app():
        await app.asgi_app(scope, receive, send)
        with trio.fail_after(60):
            await ran.wait()
    assert events == ["answer", "run"]
