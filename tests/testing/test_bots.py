"""``svc.testing`` on the bots of the docs and on small ones of its own, in both modes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import trio
import trio.testing

from svc.graph import build_interactive_list_message
from svc.runtime import HandlerOptions
from svc.testing import BotTest
from svc.webhook import DefaultFacade, HandlerContext, MessageUpdate
from tests._support import doc_example

PHONE = "16505551234"


def handlers_example(name: str) -> Any:
    return doc_example("handlers.md", "handlers", name)["bot"]


async def test_the_readme_bot_answers_what_the_user_said(
    mode: str, autojump_clock: trio.testing.MockClock
) -> None:
    bot = doc_example("../README.md", "readme", "first-bot")["bot"]
    async with BotTest(bot, store=mode) as chat:  # type: ignore[arg-type]
        user = chat.user(phone=PHONE)
        answer = await user.says("Hello bot")
        reply = await user.next_message()
    assert answer["queued"] == 1
    assert (reply.kind, reply.text) == ("text", "You said: Hello bot")
    assert reply.payload["to"] == PHONE
    assert reply.payload["context"]["message_id"].startswith("wamid.DEV.")
    assert trio.current_time() < 1.0  # nothing waited


async def test_the_guides_order_bot_holds_the_conversation(
    mode: str, autojump_clock: trio.testing.MockClock
) -> None:
    async with BotTest(handlers_example("waits"), store=mode) as chat:  # type: ignore[arg-type]
        user = chat.user(phone=PHONE)
        await user.says("order")
        assert (await user.next_message()).text == "Your name?"
        await user.says("Kerry")
        confirm = await user.next_message()
        assert confirm.kind == "interactive"
        assert confirm.text == "Confirm the order, Kerry?"
        assert confirm.buttons == ["Yes", "No"]
        await user.taps("Yes")
        assert (await user.next_message()).text == "Ordered, thank you."
        await chat.idle()
        assert [run.outcome for run in chat.runs] == ["success"]  # one run, two waits
    assert trio.current_time() < 1.0


async def test_a_wait_runs_out_when_the_virtual_clock_jumps_past_it(
    mode: str, autojump_clock: trio.testing.MockClock
) -> None:
    async with BotTest(handlers_example("waits"), store=mode) as chat:  # type: ignore[arg-type]
        user = chat.user(phone=PHONE)
        await user.says("order")
        await user.next_message()
        await user.says("Kerry")
        await user.next_message()
        started = trio.current_time()
        await trio.sleep(600)  # the user never taps: the wait_for_click times out
        assert (await user.next_message()).text == "No answer: nothing was ordered."
        assert 600 <= trio.current_time() - started < 601
        await chat.idle()
        assert chat.last_run is not None and chat.last_run.outcome == "success"


async def test_a_burst_of_three_messages_gets_one_answer(
    mode: str, autojump_clock: trio.testing.MockClock
) -> None:
    async with BotTest(handlers_example("burst"), store=mode) as chat:  # type: ignore[arg-type]
        user = chat.user(phone=PHONE)
        for text in ("hi", "are you open", "today?"):
            await user.says(text)
        reply = await user.next_message()
        assert reply.text == "Got 3 messages: hi / are you open / today?"
        await chat.idle()
        assert len(chat.runs) == 1 and chat.received(user) == [reply]
    assert 2.0 <= trio.current_time() < 3.0  # the 2 s window passed in virtual time


def _raising_bot() -> DefaultFacade:
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def parse(ctx: HandlerContext) -> None:
        update = ctx.update
        assert isinstance(update, MessageUpdate)
        await ctx.reply_text(f"{int(update.text or ''):d} items")

    return bot


async def test_a_handler_that_raises_is_a_failed_run(
    mode: str, autojump_clock: trio.testing.MockClock
) -> None:
    options = HandlerOptions(max_attempts=2, retry_delay=5.0)
    async with BotTest(_raising_bot(), store=mode, handler_options=options) as chat:  # type: ignore[arg-type]
        user = chat.user(phone=PHONE)
        await user.says("three")
        await chat.idle()
        assert [run.outcome for run in chat.runs] == ["error", "dead"]
        assert chat.failures == chat.runs
        assert chat.last_run is not None
        assert isinstance(chat.last_run.error, ValueError)
        assert chat.received(user) == []
        await user.says("3")
        assert (await user.next_message()).text == "3 items"
        await chat.idle()  # the reply went out before the run's completion
        assert chat.last_run.outcome == "success"


async def test_a_platform_error_on_demand_fails_the_send(
    mode: str, autojump_clock: trio.testing.MockClock
) -> None:
    bot = doc_example("../README.md", "readme", "first-bot")["bot"]
    async with BotTest(bot, store=mode, handler_options=HandlerOptions(max_attempts=1)) as chat:  # type: ignore[arg-type]
        user = chat.user(phone=PHONE)
        chat.fail_next_send(code=131047)
        await user.says("Hello bot")
        await chat.idle()
        [refused] = [send for send in chat.sends if send.failure is not None]
        assert (refused.status, refused.answer["error"]["code"]) == (400, 131047)
        assert chat.received(user) == []
        assert chat.last_run is not None and chat.last_run.outcome != "success"
        await user.says("again")
        assert (await user.next_message()).text == "You said: again"


def _counting_bot() -> DefaultFacade:
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def count(ctx: HandlerContext) -> None:
        ctx.state["n"] = ctx.state.get("n", 0) + 1

    return bot


async def test_the_state_after_one_run(mode: str, autojump_clock: trio.testing.MockClock) -> None:
    async with BotTest(_counting_bot(), store=mode) as chat:  # type: ignore[arg-type]
        user = chat.user(phone=PHONE)
        other = chat.user(bsuid="US.13491208655302741918", username="kerry")
        assert chat.state(user) == {}
        await user.says("one")
        await chat.idle()
        assert chat.state(user) == {"n": 1}
        assert chat.state(other) == {}
        await user.says("two")
        await chat.idle()
        assert chat.state(user) == {"n": 2}


async def test_a_bsuid_user_is_answered_by_bsuid(autojump_clock: trio.testing.MockClock) -> None:
    bot = doc_example("../README.md", "readme", "first-bot")["bot"]
    async with BotTest(bot) as chat:
        user = chat.user(bsuid="US.13491208655302741918", username="kerry")
        await user.says("hi")
        reply = await user.next_message()
    assert reply.text == "You said: hi"
    assert "US.13491208655302741918" in (reply.payload.get("recipient"), reply.payload.get("to"))


async def test_next_message_fails_clearly_when_the_bot_says_nothing(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with BotTest(_counting_bot()) as chat:
        user = chat.user(phone=PHONE)
        await user.says("one")
        try:
            await user.next_message()
        except AssertionError as exc:
            assert "no further message" in str(exc) and "success" in str(exc)
        else:
            raise AssertionError("next_message returned a message the bot never sent")


def _kinds_bot() -> DefaultFacade:
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def name_it(ctx: HandlerContext) -> None:
        update = ctx.update
        assert isinstance(update, MessageUpdate)
        if update.text == "menu":
            await ctx.send(
                build_interactive_list_message(
                    to=update.from_ or "",
                    body_text="Pick a drink",
                    button_text="Drinks",
                    sections=[{"title": "Hot", "rows": [{"id": "tea", "title": "Tea"}]}],
                )
            )
            return
        reply_id = getattr(update.content, "reply_id", None)
        await ctx.reply_text(f"{update.type} {reply_id or ''}".strip())

    return bot


async def test_every_kind_of_action_reaches_the_handler(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with BotTest(_kinds_bot(), start=datetime(2027, 3, 1, tzinfo=UTC)) as chat:
        user = chat.user(phone=PHONE)
        await user.says("menu")
        menu = await user.next_message()
        assert (menu.buttons, menu.choices[0].id) == (["Tea"], "tea")
        await user.taps("Tea")
        assert (await user.next_message()).text == "interactive tea"
        await user.shares_location(37.48, -122.15, name="Office")
        assert (await user.next_message()).text == "location"
        await user.reacts("👍", to=menu)
        assert (await user.next_message()).text == "reaction"
        await user.answers_flow({"size": "L"})
        assert (await user.next_message()).text == "interactive"
        await user.shares_contact("Kerry Doe", "+1 650 555 1234")
        assert (await user.next_message()).text == "contacts"
        try:
            await user.taps("Coffee")
        except AssertionError as exc:
            assert "Coffee" in str(exc) and "Tea" in str(exc)
        else:
            raise AssertionError("a tap on a choice the bot never offered was delivered")
    assert chat.runs[0].outcome == "success"
