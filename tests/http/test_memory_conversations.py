"""Conversations without a store: the same waits, bursts and state over the in-memory queue.

Time is trio's virtual clock (``autojump_clock``): a wait's timeout, a burst's quiet window
and a run's deadline pass without the test sleeping.
"""

from __future__ import annotations

import json
from typing import Any

import trio
import trio.testing

from svc.runtime import HandlerOptions
from svc.webhook import DefaultFacade, HandlerContext, MessageUpdate
from tests._support import FakeGraphTransport, sign

from .conftest import APP_SECRET, WEBHOOK, AppFactory, settle
from .test_conversations import ask_or_echo_bot, ask_while_another_is_echoed, delivery, text

USER_A = "16505551234"
USER_B = "16505559876"


async def record(client: Any, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    headers = {"X-Hub-Signature-256": sign(body=body, secret=APP_SECRET)}
    assert (await client.post(WEBHOOK, data=body, headers=headers)).status_code == 200


async def test_a_wait_takes_the_next_message_and_its_time_is_not_the_run_s(
    make_app: AppFactory, graph: FakeGraphTransport, autojump_clock: trio.testing.MockClock
) -> None:
    bot = DefaultFacade()
    runs: list[str] = []
    asked = trio.Event()

    @bot.on("message", context=True)
    async def ask(ctx: HandlerContext) -> None:
        assert isinstance(ctx.update, MessageUpdate)
        runs.append(ctx.update.message_id)
        await ctx.reply_text("What is your name?")
        asked.set()
        answer = await ctx.wait_for_reply(timeout=600)
        await ctx.reply_text(f"Hello {answer.text}")

    app = make_app(facade=bot, handler_options=HandlerOptions(timeout=5.0))
    async with app.test_app() as served:
        client = served.test_client()
        await record(client, delivery(text(USER_A, "wamid.A1", "hi")))
        await asked.wait()
        await trio.sleep(60)  # virtual: far past the 5 s deadline, within the wait's timeout
        await record(client, delivery(text(USER_A, "wamid.A2", "Ada")))
        await settle(served)
    assert [body["text"]["body"] for body in graph.bodies()] == ["What is your name?", "Hello Ada"]
    assert runs == ["wamid.A1"]


async def test_a_timeout_ends_the_run_and_the_next_message_runs_on_its_own(
    make_app: AppFactory, graph: FakeGraphTransport, autojump_clock: trio.testing.MockClock
) -> None:
    bot = DefaultFacade()
    runs: list[str] = []

    @bot.on("message", context=True)
    async def ask(ctx: HandlerContext) -> None:
        assert isinstance(ctx.update, MessageUpdate)
        runs.append(ctx.update.message_id)
        await ctx.wait_for_reply()  # the default timeout: 300 s

    app = make_app(facade=bot)
    async with app.test_app() as served:
        client = served.test_client()
        await record(client, delivery(text(USER_A, "wamid.A1", "hi")))
        await settle(served)
        start = trio.current_time()
        await record(client, delivery(text(USER_A, "wamid.A2", "later")))
        await settle(served)
        assert trio.current_time() - start >= 300
    assert runs == ["wamid.A1", "wamid.A2"]
    assert bot.statistics().handler_errors == {}


async def test_a_burst_of_five_messages_in_three_deliveries_is_one_call(
    make_app: AppFactory, autojump_clock: trio.testing.MockClock
) -> None:
    bot = DefaultFacade()
    calls: list[list[str | None]] = []

    @bot.on("message", context=True, coalesce=2.0)
    async def answer(ctx: HandlerContext) -> None:
        calls.append([u.text for u in ctx.updates if isinstance(u, MessageUpdate)])

    app = make_app(facade=bot)
    async with app.test_app() as served:
        client = served.test_client()
        await record(client, delivery(text(USER_A, "wamid.A1", "1"), text(USER_A, "wamid.A2", "2")))
        await trio.sleep(1.5)
        await record(client, delivery(text(USER_A, "wamid.A3", "3"), text(USER_A, "wamid.A4", "4")))
        await trio.sleep(1.5)
        await record(client, delivery(text(USER_A, "wamid.A5", "5")))
        assert calls == []
        await settle(served)
    assert calls == [["1", "2", "3", "4", "5"]]


async def test_the_state_survives_across_runs_and_a_failed_run_leaves_it_as_it_was(
    make_app: AppFactory, autojump_clock: trio.testing.MockClock
) -> None:
    bot = DefaultFacade()
    seen: list[Any] = []

    @bot.on("message", context=True)
    async def count(ctx: HandlerContext) -> None:
        seen.append(ctx.state.get("visits"))
        ctx.state["visits"] = ctx.state.get("visits", 0) + 1
        if len(seen) == 2:
            raise ConnectionError("the run failed after changing the state")

    app = make_app(facade=bot, handler_options=HandlerOptions(retry_delay=0.0))
    async with app.test_app() as served:
        client = served.test_client()
        for number in (1, 2):
            await record(client, delivery(text(USER_A, f"wamid.A{number}", "hi")))
            await settle(served)
    assert seen == [None, 1, 1]


async def test_a_waiting_user_does_not_hold_the_only_run_slot(
    make_app: AppFactory, graph: FakeGraphTransport, autojump_clock: trio.testing.MockClock
) -> None:
    asked, echoed = trio.Event(), trio.Event()
    app = make_app(
        facade=ask_or_echo_bot(asked, echoed), handler_options=HandlerOptions(concurrency=1)
    )
    await ask_while_another_is_echoed(app, asked, echoed)
    assert [body["text"]["body"] for body in graph.bodies()] == [
        "What is your name?",
        "Echo ping",
        "Hello Ada",
    ]


async def test_a_resumed_run_waits_for_the_slot_another_run_holds(
    make_app: AppFactory, graph: FakeGraphTransport, autojump_clock: trio.testing.MockClock
) -> None:
    asked, echoed, release = trio.Event(), trio.Event(), trio.Event()
    bot = ask_or_echo_bot(asked, echoed, release)
    app = make_app(facade=bot, handler_options=HandlerOptions(concurrency=1, timeout=3600.0))
    async with app.test_app() as served:
        client = served.test_client()
        await record(client, delivery(text(USER_A, "wamid.A1", "hi")))
        await asked.wait()
        await record(client, delivery(text(USER_B, "wamid.B1", "slow")))
        await trio.testing.wait_all_tasks_blocked()  # B's run holds the slot
        await record(client, delivery(text(USER_A, "wamid.A2", "Ada")))  # A's reply
        await trio.testing.wait_all_tasks_blocked()
        assert [body["text"]["body"] for body in graph.bodies()] == ["What is your name?"]
        release.set()
        await settle(served)
    assert [body["text"]["body"] for body in graph.bodies()] == [
        "What is your name?",
        "Echo slow",
        "Hello Ada",
    ]
