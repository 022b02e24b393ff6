"""Conversations with a store: waits, bursts and per-user state over the inbox.

Real SQLite (a file) and PostgreSQL, the fake Graph at the transport. A wait takes the user's
next matching update from the later rows of the queue (recorded by any instance); what it
skips runs after; a timeout ends the run cleanly; a rerun finds the same reply and replays
its sends; a burst is one call; the state is kept encrypted, untouched by a failed run, and
sealed again under the current key when written. The waits are woken by the ingest (or the
runtime's ``wake()``) and the test clock: nothing sleeps.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import trio

from svc.crypto import InboxKeyring, sealed_key_id
from svc.runtime import HandlerOptions
from svc.store import PostgresStore, SqliteStore
from svc.store._person import person_queue_key
from svc.webhook import (
    DefaultFacade,
    HandlerContext,
    ListenerTimeout,
    MessageUpdate,
    normalize,
)
from tests._support import FakeGraphTransport, drop_run_schemas, new_run_prefix, sign

from .conftest import APP_SECRET, T0, WEBHOOK, AppFactory, Clock, fixture, settle

USER_A = "16505551234"
USER_B = "16505559876"
OLD_KEY = bytes(range(32))
NEW_KEY = bytes(range(1, 33))
SLOW_POLL = HandlerOptions(retry_delay=0.0, poll_interval=60.0)
"""Only the ingest's wake (or ``wake()``) makes a wait look again: no test waits on time."""


def text(sender: str, message_id: str, body: str) -> dict[str, Any]:
    return {
        "from": sender,
        "id": message_id,
        "timestamp": "1749416383",
        "type": "text",
        "text": {"body": body},
    }


def click(sender: str, message_id: str, choice: str) -> dict[str, Any]:
    return {
        "from": sender,
        "id": message_id,
        "timestamp": "1749416383",
        "type": "interactive",
        "interactive": {"type": "button_reply", "button_reply": {"id": choice, "title": choice}},
    }


def delivery(*messages: dict[str, Any]) -> dict[str, Any]:
    payload = fixture("message_text.json")
    value = payload["entry"][0]["changes"][0]["value"]
    value.pop("contacts", None)
    value["messages"] = list(messages)
    return payload


async def record(client: Any, payload: dict[str, Any]) -> None:
    """Post a delivery; the answer waits only for its record (the runs come after)."""
    body = json.dumps(payload).encode()
    headers = {"X-Hub-Signature-256": sign(body=body, secret=APP_SECRET)}
    answer = await client.post(WEBHOOK, data=body, headers=headers)
    assert answer.status_code == 200


async def queue_of(store: Any, payload: dict[str, Any]) -> str:
    """The queue of the payload's user: the person's, from the store's identity map."""
    update = normalize(payload).updates[0]
    user = update.user
    assert user is not None
    found = await store._call(
        "query_failed",
        lambda s: s.fetchone(
            "SELECT identity_id FROM svc_user_identities WHERE user_id = ? OR wa_id = ?",
            (user.user_id, user.wa_id),
        ),
        write=False,
    )
    assert found is not None
    return person_queue_key(update.phone_number_id, int(found[0]))


@pytest.fixture
async def stores(store_url: str | None, tmp_path: Path) -> AsyncIterator[tuple[Any, Any]]:
    """Two stores on one database (two instances): a SQLite file, or one PostgreSQL schema."""
    if store_url is None:
        path = str(tmp_path / "svc.db")
        first: Any = SqliteStore(path)
        await first.migrate()
        second: Any = SqliteStore(path)
        yield first, second
        await second.close()
        await first.close()
        return
    schema = new_run_prefix("conv")
    first = PostgresStore(store_url, schema=schema, min_size=1, max_size=4)
    second = PostgresStore(store_url, schema=schema, min_size=1, max_size=4)
    try:
        await first.migrate()
        yield first, second
    finally:
        await second.close()
        await first.close()
        drop_run_schemas(store_url, schema)


@pytest.fixture
def store(stores: tuple[Any, Any]) -> Any:
    return stores[0]


def asking_bot(runs: list[str], asked: trio.Event) -> DefaultFacade:
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def ask(ctx: HandlerContext) -> None:
        assert isinstance(ctx.update, MessageUpdate)
        runs.append(ctx.update.message_id)
        await ctx.reply_text("What is your name?")
        asked.set()
        answer = await ctx.wait_for_reply()
        await ctx.reply_text(f"Hello {answer.text}")

    return bot


def ask_or_echo_bot(
    asked: trio.Event, echoed: trio.Event, release: trio.Event | None = None
) -> DefaultFacade:
    """Text "hi" asks for a name and waits for the reply; any other text is echoed (after
    ``release`` when given), then ``echoed`` is set."""
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def answer(ctx: HandlerContext) -> None:
        assert isinstance(ctx.update, MessageUpdate)
        if ctx.update.text == "hi":
            await ctx.reply_text("What is your name?")
            asked.set()
            reply = await ctx.wait_for_reply()
            await ctx.reply_text(f"Hello {reply.text}")
            return
        if release is not None:
            await release.wait()
        await ctx.reply_text(f"Echo {ctx.update.text}")
        echoed.set()

    return bot


async def ask_while_another_is_echoed(app: Any, asked: trio.Event, echoed: trio.Event) -> None:
    """Serve ``app`` (an ``ask_or_echo_bot``): A is asked and waits, B's message is echoed
    meanwhile, then A's reply arrives; return once every run settled."""
    async with app.test_app() as served:
        client = served.test_client()
        await record(client, delivery(text(USER_A, "wamid.A1", "hi")))
        await asked.wait()  # A's run waits for its reply, without the one slot
        await record(client, delivery(text(USER_B, "wamid.B1", "ping")))
        await echoed.wait()  # B's run answers meanwhile
        await record(client, delivery(text(USER_A, "wamid.A2", "Ada")))
        await settle(served)


async def test_a_waiting_user_does_not_hold_the_only_run_slot(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    asked, echoed = trio.Event(), trio.Event()
    options = dataclasses.replace(SLOW_POLL, concurrency=1)
    app = make_app(store=store, facade=ask_or_echo_bot(asked, echoed), handler_options=options)
    await ask_while_another_is_echoed(app, asked, echoed)
    assert [body["text"]["body"] for body in graph.bodies()] == [
        "What is your name?",
        "Echo ping",
        "Hello Ada",
    ]
    assert await store.list_inbox_items() == []


async def test_a_wait_receives_the_user_s_next_message_recorded_by_a_later_delivery(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    runs: list[str] = []
    asked = trio.Event()
    app = make_app(store=store, facade=asking_bot(runs, asked), handler_options=SLOW_POLL)
    async with app.test_app() as served:
        client = served.test_client()
        await record(client, delivery(text(USER_A, "wamid.A1", "hi")))
        await asked.wait()  # the run waits now
        await record(client, delivery(text(USER_A, "wamid.A2", "Ada")))
        await settle(served)
    assert [body["text"]["body"] for body in graph.bodies()] == ["What is your name?", "Hello Ada"]
    assert runs == ["wamid.A1"]  # the reply it consumed never ran the handler
    assert await store.list_inbox_items() == []


async def test_a_second_instance_records_the_reply_and_the_waiting_instance_gets_it(
    make_app: AppFactory, stores: tuple[Any, Any], graph: FakeGraphTransport
) -> None:
    first, second = stores
    runs: list[str] = []
    asked = trio.Event()
    bot = asking_bot(runs, asked)
    waiting = make_app(store=first, facade=bot, handler_options=SLOW_POLL)
    other = make_app(store=second, facade=bot, handler_options=SLOW_POLL)
    async with waiting.test_app() as served, other.test_app() as served_other:
        await record(served.test_client(), delivery(text(USER_A, "wamid.A1", "hi")))
        await asked.wait()
        await record(served_other.test_client(), delivery(text(USER_A, "wamid.A2", "Grace")))
        await settle(served_other)  # the other instance cannot claim it: it is not a head
        waiting.extensions["svc.handlers"].wake()  # what its poll does every poll_interval
        await settle(served)
    assert [body["text"]["body"] for body in graph.bodies()] == [
        "What is your name?",
        "Hello Grace",
    ]
    assert runs == ["wamid.A1"]
    assert await first.list_inbox_items() == []


async def test_a_wait_that_times_out_ends_the_run_as_a_success(
    make_app: AppFactory,
    store: Any,
    graph: FakeGraphTransport,
    clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    bot = DefaultFacade()
    asked = trio.Event()
    after: list[str] = []

    @bot.on("message", context=True)
    async def ask(ctx: HandlerContext) -> None:
        asked.set()
        await ctx.wait_for_reply(timeout=20)
        after.append("answered")

    caplog.set_level(logging.INFO)
    app = make_app(store=store, facade=bot, handler_options=SLOW_POLL)
    async with app.test_app() as served:
        await record(served.test_client(), delivery(text(USER_A, "wamid.A1", "hi")))
        await asked.wait()
        clock.value = T0 + timedelta(seconds=21)  # within the claim's lease
        app.extensions["svc.handlers"].wake()
        await settle(served)
    assert after == []
    assert await store.list_inbox_items(status="dead") == []
    assert await store.list_inbox_items() == []
    assert bot.statistics().handler_errors == {}
    lines = [r.getMessage() for r in caplog.records if "listener timed out" in r.getMessage()]
    assert lines == ["listener timed out kind=message listener=reply; the run ends"]


async def test_a_timeout_the_handler_catches_lets_it_go_on(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport, clock: Clock
) -> None:
    bot = DefaultFacade()
    asked = trio.Event()

    @bot.on("message", context=True)
    async def ask(ctx: HandlerContext) -> None:
        asked.set()
        try:
            await ctx.wait_for_click(timeout=30)
        except ListenerTimeout:
            await ctx.reply_text("Still there?")

    app = make_app(store=store, facade=bot, handler_options=SLOW_POLL)
    async with app.test_app() as served:
        await record(served.test_client(), delivery(text(USER_A, "wamid.A1", "hi")))
        await asked.wait()
        clock.value = T0 + timedelta(seconds=31)
        app.extensions["svc.handlers"].wake()
        await settle(served)
    assert [body["text"]["body"] for body in graph.bodies()] == ["Still there?"]


async def test_an_update_the_wait_does_not_match_waits_behind_and_runs_after(
    make_app: AppFactory, store: Any
) -> None:
    bot = DefaultFacade()
    events: list[str] = []

    @bot.on("message", context=True)
    async def handler(ctx: HandlerContext) -> None:
        update = ctx.update
        assert isinstance(update, MessageUpdate)
        if update.text != "start":
            events.append(f"ran {update.message_id}")
            return
        chosen = await ctx.wait_for_click(ids=["yes", "no"])
        events.append(f"clicked {chosen.message_id}")

    client = make_app(store=store, facade=bot, handler_options=SLOW_POLL).test_client()
    await record(client, delivery(text(USER_A, "wamid.A1", "start")))
    await record(
        client, delivery(text(USER_A, "wamid.A2", "hello?"), click(USER_A, "wamid.A3", "maybe"))
    )
    await record(client, delivery(click(USER_A, "wamid.A4", "yes"), text(USER_A, "wamid.A5", "ok")))
    await settle(client)
    assert events == ["clicked wamid.A4", "ran wamid.A2", "ran wamid.A3", "ran wamid.A5"]
    assert await store.list_inbox_items() == []


async def test_a_rerun_after_a_failed_run_finds_the_same_reply_and_replays_its_sends(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    bot = DefaultFacade()
    answers: list[str | None] = []

    @bot.on("message", context=True)
    async def ask(ctx: HandlerContext) -> None:
        await ctx.reply_text(f"What is your name? (run {len(answers) + 1})")
        answer = await ctx.wait_for_reply()
        answers.append(answer.text)
        await ctx.reply_text(f"Hello {answer.text} (run {len(answers)})")
        if len(answers) == 1:
            raise ConnectionError("the handler failed after its replies")

    client = make_app(store=store, facade=bot, handler_options=SLOW_POLL).test_client()
    await record(client, delivery(text(USER_A, "wamid.A1", "hi")))
    await record(client, delivery(text(USER_A, "wamid.A2", "Ada")))
    await settle(client)
    assert answers == ["Ada", "Ada"]  # the rerun found the same reply
    assert [body["text"]["body"] for body in graph.bodies()] == [
        "What is your name? (run 1)",
        "Hello Ada (run 1)",  # sent once: the rerun replayed both by their keys
    ]
    assert await store.list_inbox_items() == []
    assert await store.list_inbox_items(status="dead") == []


async def test_a_burst_of_five_messages_in_three_deliveries_is_one_call_in_order(
    make_app: AppFactory, store: Any, clock: Clock
) -> None:
    bot = DefaultFacade()
    calls: list[list[str | None]] = []

    @bot.on("message", context=True, coalesce=2.0, max_wait=10.0)
    async def answer(ctx: HandlerContext) -> None:
        calls.append([u.text for u in ctx.updates if isinstance(u, MessageUpdate)])
        assert ctx.update is ctx.updates[0]

    app = make_app(store=store, facade=bot, handler_options=SLOW_POLL)
    runtime = app.extensions["svc.handlers"]
    async with app.test_app() as served:
        client = served.test_client()
        await record(client, delivery(text(USER_A, "wamid.A1", "1"), text(USER_A, "wamid.A2", "2")))
        await record(client, delivery(text(USER_A, "wamid.A3", "3"), text(USER_A, "wamid.A4", "4")))
        clock.value = T0 + timedelta(seconds=1.5)  # within the quiet window of the last one
        runtime.wake()
        await record(client, delivery(text(USER_A, "wamid.A5", "5")))
        assert calls == []
        clock.value = T0 + timedelta(seconds=4)  # 2.5 s without a new message
        runtime.wake()
        await settle(served)
    assert calls == [["1", "2", "3", "4", "5"]]
    assert await store.list_inbox_items() == []


async def test_a_plain_handler_with_coalesce_receives_the_list(
    make_app: AppFactory, store: Any, clock: Clock
) -> None:
    bot = DefaultFacade()
    calls: list[list[str]] = []
    bot.on("message", lambda burst: calls.append([u.message_id for u in burst]), coalesce=1.0)
    client = make_app(store=store, facade=bot, handler_options=SLOW_POLL).test_client()
    await record(client, delivery(text(USER_A, "wamid.A1", "1"), text(USER_B, "wamid.B1", "1")))
    await record(client, delivery(text(USER_A, "wamid.A2", "2")))
    clock.value = T0 + timedelta(seconds=5)  # the burst is older than its quiet window
    await settle(client)
    assert sorted(calls) == [["wamid.A1", "wamid.A2"], ["wamid.B1"]]


def counting_bot(seen: list[Any], *, fail_first: bool = False) -> DefaultFacade:
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def count(ctx: HandlerContext) -> None:
        seen.append(ctx.state.get("visits"))
        ctx.state["visits"] = ctx.state.get("visits", 0) + 1
        ctx.state["name"] = "Ada Lovelace"
        if fail_first and len(seen) == 1:
            raise ConnectionError("the run failed after changing the state")

    return bot


async def _database_bytes(store: Any, url: str | None, tmp_path: Path) -> bytes:
    """Every byte the database holds for the test: the SQLite files, or the state table."""
    if url is None:
        return b"".join(path.read_bytes() for path in tmp_path.iterdir() if path.is_file())
    rows = await store.list_inbox_items()
    assert rows == []
    import psycopg
    from psycopg import sql

    table = sql.Identifier(store.schema, "svc_user_state")
    with psycopg.connect(url) as conn:
        found = conn.execute(sql.SQL("SELECT * FROM {}").format(table)).fetchall()
    return repr(found).encode()


async def test_the_state_survives_across_runs_and_is_encrypted_at_rest(
    make_app: AppFactory, store: Any, store_url: str | None, tmp_path: Path
) -> None:
    seen: list[Any] = []
    client = make_app(store=store, facade=counting_bot(seen)).test_client()
    first = delivery(text(USER_A, "wamid.A1", "1"))
    await record(client, first)
    await record(client, delivery(text(USER_A, "wamid.A2", "2")))
    await record(client, delivery(text(USER_B, "wamid.B1", "1")))
    await settle(client)
    assert sorted(seen, key=str) == [1, None, None]
    stored = await store.get_user_state(queue_key=await queue_of(store, first), now=T0)
    assert stored is not None and b"Ada" not in stored.sealed
    data = await _database_bytes(store, store_url, tmp_path)
    assert b"Ada Lovelace" not in data and b"visits" not in data
    assert stored.expires_at == T0 + timedelta(days=30)


async def test_a_failed_run_leaves_the_state_as_it_was(make_app: AppFactory, store: Any) -> None:
    seen: list[Any] = []
    bot = counting_bot(seen, fail_first=True)
    client = make_app(store=store, facade=bot, handler_options=SLOW_POLL).test_client()
    await record(client, delivery(text(USER_A, "wamid.A1", "1")))
    await settle(client)
    await record(client, delivery(text(USER_A, "wamid.A2", "2")))
    await settle(client)
    assert seen == [None, None, 1]  # the failed run's change was never written


async def test_the_state_is_sealed_again_under_the_current_key_when_written(
    make_app: AppFactory, store: Any, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[Any] = []
    bot = counting_bot(seen)
    first = delivery(text(USER_A, "wamid.A1", "1"))
    before = make_app(store=store, facade=bot, inbox_keyring=InboxKeyring([OLD_KEY]))
    await record(before.test_client(), first)
    await settle(before)
    queue = await queue_of(store, first)
    old = await store.get_user_state(queue_key=queue, now=T0)
    assert sealed_key_id(old.sealed) == InboxKeyring([OLD_KEY]).write_key_id
    rotated = make_app(store=store, facade=bot, inbox_keyring=InboxKeyring([NEW_KEY, OLD_KEY]))
    await record(rotated.test_client(), delivery(text(USER_A, "wamid.A2", "2")))
    await settle(rotated)
    new = await store.get_user_state(queue_key=queue, now=T0)
    assert sealed_key_id(new.sealed) == InboxKeyring([NEW_KEY]).write_key_id
    assert seen == [None, 1]
    # The old key dropped before any write under the new one: the state reads empty, once.
    other = delivery(text(USER_B, "wamid.B1", "1"))
    await record(before.test_client(), other)
    await settle(before)
    caplog.set_level(logging.WARNING)
    forgot = make_app(store=store, facade=bot, inbox_keyring=InboxKeyring([NEW_KEY]))
    await record(forgot.test_client(), delivery(text(USER_B, "wamid.B2", "2")))
    await settle(forgot)
    assert seen == [None, 1, None, None]
    lines = [r.getMessage() for r in caplog.records if "state unreadable" in r.getMessage()]
    assert lines == [
        "handler state unreadable reason=key_unavailable; the run starts from an empty state"
    ]


def status_of(message_id: str, status: str, recipient: str) -> dict[str, Any]:
    payload = fixture("message_text.json")
    value = payload["entry"][0]["changes"][0]["value"]
    value.pop("contacts", None)
    value.pop("messages")
    value["statuses"] = [
        {"id": message_id, "status": status, "timestamp": "1750263773", "recipient_id": recipient}
    ]
    return payload


async def test_a_wait_for_status_takes_the_status_of_the_message_the_run_sent(
    make_app: AppFactory, store: Any
) -> None:
    bot = DefaultFacade()
    events: list[str] = []
    bot.on("status", lambda update: events.append(f"status {update.status}"))

    @bot.on("message", context=True)
    async def send_and_watch(ctx: HandlerContext) -> None:
        sent = await ctx.reply_text("Your code is 1234")
        assert sent.message_id is not None
        delivered = await ctx.wait_for_status(sent.message_id)
        events.append(f"watched {delivered.status}")

    client = make_app(store=store, facade=bot, handler_options=SLOW_POLL).test_client()
    await record(client, delivery(text(USER_A, "wamid.A1", "code please")))
    await record(client, status_of("wamid.OTHER", "read", USER_A))
    await record(client, status_of("wamid.TEST1", "delivered", USER_A))
    await settle(client)
    assert events == ["watched delivered", "status read"]
