"""``await ctx.typing()``: the indicator from the await to the run's first send or its end,
renewed every 20 s by a task of the run, in virtual time (``autojump_clock``)."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from svc.http._context import TYPING_RENEWAL
from svc.runtime import HandlerOptions
from svc.testing import BotTest
from svc.webhook import DefaultFacade, HandlerContext
from tests._support import doc_example

PHONE = "16505551234"


def kinds(chat: Any) -> list[str]:
    """The bot's requests so far: ``typing`` for a read mark with the indicator, else the
    send's type."""
    return [
        "typing" if r.payload.get("typing_indicator") else r.payload["type"] for r in chat.sends
    ]


async def test_the_awaited_indicator_is_renewed_until_the_first_reply(
    autojump_clock: trio.testing.MockClock, mode: str
) -> None:
    bot = doc_example("handlers.md", "handlers", "typing-await")["bot"]
    async with BotTest(bot, store=mode, handler_options=HandlerOptions(timeout=300.0)) as chat:
        user = chat.user(phone=PHONE)
        await user.says("where is my order?")
        start = trio.current_time()
        assert (await user.next_message()).text == "Found it."
        assert trio.current_time() - start >= 45
        await trio.sleep(100)  # after the reply: the indicator is never shown again
        await chat.idle()
        assert kinds(chat) == ["typing", "typing", "typing", "text"]  # at 0, 20 and 40 s
        assert chat.last_run.outcome == "success"


async def test_the_awaited_indicator_stops_at_the_end_of_the_run(
    autojump_clock: trio.testing.MockClock, mode: str
) -> None:
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def think(ctx: HandlerContext) -> None:
        await ctx.typing()
        await trio.sleep(TYPING_RENEWAL + 5)  # one renewal, then the run ends with no reply

    async with BotTest(bot, store=mode) as chat:
        user = chat.user(phone=PHONE)
        await user.says("hmm")
        await chat.idle()
        await trio.sleep(10 * TYPING_RENEWAL)
        await chat.idle()
        assert kinds(chat) == ["typing", "typing"]  # at 0 and 20 s, none after the run
        assert chat.last_run.outcome == "success"


async def test_a_block_stops_its_renewal_at_its_end(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def think(ctx: HandlerContext) -> None:
        async with ctx.typing():
            await trio.sleep(5)
        await trio.sleep(3 * TYPING_RENEWAL)  # after the block: no renewal
        await ctx.reply_text("done")

    async with BotTest(bot, handler_options=HandlerOptions(timeout=300.0)) as chat:
        user = chat.user(phone=PHONE)
        await user.says("hi")
        assert (await user.next_message()).text == "done"
        assert kinds(chat) == ["typing", "text"]
