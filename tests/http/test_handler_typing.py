"""The typing indicator of a context handler: ``ctx.typing()`` and ``on(..., typing=True)``.

One read receipt with ``typing_indicator`` at the start, renewed every 20 s of trio's virtual
time (``autojump_clock``) while the handler works, never after its first reply; a failed
typing request is logged by class and the run goes on; other kinds send nothing.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import httpx
import pytest
import trio
import trio.testing

from svc.graph import DEFAULT_API_VERSION as VERSION
from svc.http._context import TYPING_RENEWAL
from svc.runtime import HandlerOptions
from svc.webhook import DefaultFacade, HandlerContext, ListenerTimeout
from tests._support import FakeGraphTransport

from .conftest import AUTH, PHONE_ID, AppFactory, Clock, fixture, post_webhook, settle
from .test_conversations import delivery, record, text

USER = "16505551234"
TYPING = {
    "messaging_product": "whatsapp",
    "status": "read",
    "message_id": "wamid.T1",
    "typing_indicator": {"type": "text"},
}


async def run_one(app: Any, *messages: dict[str, Any]) -> None:
    """Serve ``app``, post one delivery of ``messages`` and wait for its run to end."""
    async with app.test_app() as served:
        await record(served.test_client(), delivery(*messages))
        await settle(served)


def replies(graph: FakeGraphTransport) -> list[str]:
    return [body["text"]["body"] for body in graph.bodies() if "text" in body]


async def test_the_typing_request_is_sent_once_at_the_start_of_the_block(
    make_app: AppFactory, graph: FakeGraphTransport, autojump_clock: trio.testing.MockClock
) -> None:
    bot = DefaultFacade()
    seen: list[int] = []

    @bot.on("message", context=True)
    async def answer(ctx: HandlerContext) -> None:
        async with ctx.typing():
            seen.append(len(graph.requests))  # the indicator is up when the block starts
            await trio.sleep(5)
        await ctx.reply_text("done")

    await run_one(make_app(facade=bot), text(USER, "wamid.T1", "hi"))
    assert seen == [1]
    assert graph.bodies()[0] == TYPING
    assert [r.url.path for r in graph.requests] == [f"/{VERSION}/{PHONE_ID}/messages"] * 2
    assert replies(graph) == ["done"]


async def test_the_indicator_is_renewed_every_20_s_while_the_handler_works(
    make_app: AppFactory, graph: FakeGraphTransport, autojump_clock: trio.testing.MockClock
) -> None:
    bot = DefaultFacade()
    sent_at: list[float] = []
    start = trio.current_time()

    def timed(request: httpx.Request) -> httpx.Response:
        sent_at.append(trio.current_time() - start)
        return FakeGraphTransport.handler(graph, request)

    @bot.on("message", context=True)
    async def answer(ctx: HandlerContext) -> None:
        async with ctx.typing():
            await trio.sleep(45)  # slow work: two renewals (20 s, 40 s) before the reply
            await ctx.reply_text("done")
            await trio.sleep(30)  # after the reply: no renewal
        await trio.sleep(30)  # after the block: none either

    app = make_app(
        facade=bot,
        transport=httpx.MockTransport(timed),
        handler_options=HandlerOptions(timeout=300.0),
    )
    await run_one(app, text(USER, "wamid.T1", "hi"))
    assert graph.bodies() == [TYPING, TYPING, TYPING, graph.bodies()[3]]
    assert replies(graph) == ["done"]
    first = sent_at[0]
    assert [round(t - first) for t in sent_at] == [0, TYPING_RENEWAL, 2 * TYPING_RENEWAL, 45]


async def test_the_first_reply_stops_the_renewal(
    make_app: AppFactory, graph: FakeGraphTransport, autojump_clock: trio.testing.MockClock
) -> None:
    bot = DefaultFacade()

    @bot.on("message", context=True, typing=True)
    async def answer(ctx: HandlerContext) -> None:
        await ctx.reply_text("on it")  # hides the indicator
        await trio.sleep(100)  # more work after the reply: the indicator stays hidden
        await ctx.reply_text("done")

    await run_one(
        make_app(facade=bot, handler_options=HandlerOptions(timeout=300.0)),
        text(USER, "wamid.T1", "hi"),
    )
    bodies = graph.bodies()
    assert bodies[0] == TYPING
    assert len(bodies) == 3 and replies(graph) == ["on it", "done"]


async def test_a_failed_typing_request_is_logged_and_the_run_goes_on(
    make_app: AppFactory, graph: FakeGraphTransport, caplog: pytest.LogCaptureFixture
) -> None:
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def answer(ctx: HandlerContext) -> None:
        async with ctx.typing():
            await ctx.reply_text("still answered")

    graph.answers.append(httpx.Response(500, json={"error": {"message": "boom", "code": 1}}))
    caplog.set_level(logging.INFO)
    await post_webhook(make_app(facade=bot).test_client(), fixture("message_text.json"))
    assert "typing_indicator" in graph.bodies()[0]
    assert replies(graph) == ["still answered"]
    assert bot.statistics().handler_errors == {}
    [line] = [r.getMessage() for r in caplog.records if "typing" in r.getMessage()]
    assert line.startswith("handler typing failed error=")
    assert USER not in caplog.text


async def test_a_status_update_sends_no_typing_request(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    bot = DefaultFacade()
    ran: list[str] = []

    @bot.on("status", context=True)
    async def on_status(ctx: HandlerContext) -> None:
        async with ctx.typing():
            ran.append(ctx.update.kind)

    await post_webhook(make_app(facade=bot).test_client(), fixture("status_batch.json"))
    assert ran and set(ran) == {"status"}
    assert graph.requests == []


async def test_the_registration_option_types_before_the_handler_and_keeps_its_errors(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    bot = DefaultFacade()
    before: list[Any] = []

    @bot.on("message", context=True, typing=True)
    def answer(ctx: HandlerContext) -> None:  # a sync handler too
        before.append(graph.bodies())
        raise ListenerTimeout("reply", 1.0)  # the handler's exception passes through unchanged

    await post_webhook(make_app(facade=bot).test_client(), fixture("message_text.json"))
    [[receipt]] = before
    assert receipt["typing_indicator"] == {"type": "text"} and receipt["status"] == "read"
    assert bot.statistics().handler_errors == {}  # a listener timeout ends the run as a success


def test_typing_goes_with_a_context_handler_of_messages() -> None:
    bot = DefaultFacade()
    with pytest.raises(ValueError, match="typing goes with"):
        bot.on("status", lambda ctx: None, context=True, typing=True)
    with pytest.raises(ValueError, match="typing goes with"):
        bot.on("message", lambda update: None, typing=True)  # type: ignore[call-overload]


async def test_with_a_store_the_receipt_is_not_a_message_and_takes_no_send_position(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport, clock: Clock
) -> None:
    bot = DefaultFacade()
    runs: list[int] = []

    @bot.on("message", context=True, typing=True)
    async def answer(ctx: HandlerContext) -> None:
        runs.append(1)
        await ctx.reply_text("once")
        if len(runs) == 1:
            raise RuntimeError("retried")  # the rerun replays the reply by its position

    client = make_app(facade=bot, store=store).test_client()
    await post_webhook(client, fixture("message_text.json"))
    clock.value += timedelta(seconds=5)  # past the retry's delay
    await settle(client)
    assert len(runs) == 2
    kinds = ["typing" if "typing_indicator" in b else b["type"] for b in graph.bodies()]
    assert kinds == ["typing", "text", "typing"]  # the reply is sent once, then replayed
    receipt = await client.get("/api/messages/wamid.TEST1", headers=AUTH)
    assert receipt.status_code == 404  # the fake answers a receipt like a send: not recorded
    row = await client.get("/api/messages/wamid.TEST2", headers=AUTH)
    assert (await row.get_json())["direction"] == "outbound"


async def test_a_run_past_its_deadline_in_the_block_times_out_and_stops_typing(
    make_app: AppFactory,
    graph: FakeGraphTransport,
    autojump_clock: trio.testing.MockClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    bot = DefaultFacade()

    @bot.on("message", context=True, typing=True)
    async def answer(ctx: HandlerContext) -> None:
        await trio.sleep(1000)

    app = make_app(facade=bot, handler_options=HandlerOptions(timeout=30.0, max_attempts=1))
    await run_one(app, text(USER, "wamid.T1", "hi"))
    assert graph.bodies() == [TYPING, TYPING]  # at the start and at 20 s; the run ends at 30 s
    assert any("reason=timeout" in r.getMessage() for r in caplog.records)


async def test_a_reply_waits_for_a_typing_request_in_flight(
    make_app: AppFactory, graph: FakeGraphTransport, autojump_clock: trio.testing.MockClock
) -> None:
    bot = DefaultFacade()
    answered: list[str] = []

    async def slow_typing(request: httpx.Request) -> httpx.Response:
        kind = "typing" if b"typing_indicator" in request.content else "reply"
        answered.append(f"{kind} out")
        if kind == "typing" and len(graph.requests) > 0:
            await trio.sleep(3)  # the renewal at 20 s is answered at 23 s
        response = FakeGraphTransport.handler(graph, request)
        answered.append(f"{kind} answered")
        return response

    @bot.on("message", context=True, typing=True)
    async def answer(ctx: HandlerContext) -> None:
        await trio.sleep(21)  # the reply is due while the renewal is out
        await ctx.reply_text("done")

    app = make_app(facade=bot, transport=httpx.MockTransport(slow_typing))
    await run_one(app, text(USER, "wamid.T1", "hi"))
    # The indicator never lands after the reply (it would show "typing..." again).
    assert answered[2:] == ["typing out", "typing answered", "reply out", "reply answered"]
