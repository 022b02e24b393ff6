"""Default facade: typed handlers, error isolation, the privacy-safe log and the echo reply."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio

from svc.graph import DEFAULT_API_VERSION, GraphClient, PhoneNumberClient
from svc.webhook import (
    DefaultFacade,
    FacadeFlags,
    HandlerContext,
    ListenerTimeout,
    MessageUpdate,
    SentMessage,
    StatusUpdate,
    Update,
    WebhookFacade,
    dispatch_delivery,
    facade_flags_from_env,
    normalize,
    receive_delivery,
    safe_detail,
)
from tests._support import sign

from .conftest import fixture_names, load

SECRET = b"facade-test-secret"


TEXT = "Does it come in another color?"
USER = "16505551234"
PNID = "106540352242922"
WABA = "102290129340398"
DISPLAY = "15550783881"
TEXT_ID = "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA="


def updates(name: str) -> tuple[Update, ...]:
    return normalize(load(name)).updates


def all_updates() -> list[Update]:
    return [u for name in fixture_names() for u in updates(name)]


async def test_handlers_run_per_kind_sync_and_async_in_order() -> None:
    facade = DefaultFacade()
    seen: list[str] = []

    def on_message(update: MessageUpdate) -> None:
        seen.append(f"sync:{update.type}")

    @facade.on("message")
    async def on_message_async(update: MessageUpdate) -> None:
        await trio.lowlevel.checkpoint()
        seen.append(f"async:{update.message_id}")

    assert facade.on("message", on_message) is on_message
    facade.on("status", lambda update: seen.append(f"status:{update.status}"))
    for update in updates("batch_mixed.json"):
        await facade.dispatch(update)
    assert seen == [
        "async:wamid.B1",
        "sync:text",
        "async:wamid.B2",
        "sync:text",
        "status:delivered",
        "status:read",
    ]
    assert facade.handlers("message") == (on_message_async, on_message)
    assert facade.statistics().dispatched == 8


async def test_every_kind_can_be_handled() -> None:
    facade = DefaultFacade()
    seen: set[str] = set()
    kinds = {u.kind for u in all_updates()}
    for kind in kinds:
        facade.on(kind, lambda update: seen.add(update.kind))  # type: ignore[call-overload]
    for update in all_updates():
        await facade.dispatch(update)
    assert seen == kinds


def test_unknown_kind_and_non_callable_are_refused() -> None:
    facade = DefaultFacade()
    with pytest.raises(ValueError, match="unknown update kind"):
        facade.on("messages", print)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="callable"):
        facade.on("message", "not callable")  # type: ignore[call-overload]


async def test_handler_errors_are_caught_counted_and_logged_without_payload(
    caplog: pytest.LogCaptureFixture,
) -> None:
    facade = DefaultFacade()
    after: list[str] = []

    @facade.on("message")
    def boom(update: MessageUpdate) -> None:
        raise ValueError(f"bad text {update.text} from {update.from_}")

    @facade.on("message")
    async def boom_async(update: MessageUpdate) -> None:
        raise KeyError(update.message_id)

    facade.on("message", lambda update: after.append(update.type))
    caplog.set_level(logging.DEBUG, logger="svc.webhook")
    [update] = updates("message_text.json")
    await facade.dispatch(update)
    await facade.dispatch(update)
    assert after == ["text", "text"]  # a failing handler never stops the next one
    assert dict(facade.statistics().handler_errors) == {"ValueError": 2, "KeyError": 2}
    logged = caplog.text
    assert "ValueError" in logged and "KeyError" in logged
    for private in (TEXT, USER, TEXT_ID, PNID, DISPLAY, WABA):
        assert private not in logged


async def test_error_classes_are_capped_at_ten_oldest_dropped() -> None:
    facade = DefaultFacade()
    classes = [type(f"Error{n}", (Exception,), {}) for n in range(12)]
    for cls in classes:

        def raiser(update: Update, cls: type[Exception] = cls) -> None:
            raise cls

        facade.on("status", raiser)
    await facade.dispatch(updates("status_batch.json")[0])
    errors = facade.statistics().handler_errors
    assert list(errors) == [f"Error{n}" for n in range(2, 12)]


async def test_cancellation_is_not_swallowed() -> None:
    facade = DefaultFacade()
    facade.on("status", lambda update: trio.sleep_forever())
    with trio.CancelScope() as scope:
        scope.cancel()
        await facade.dispatch(updates("status_batch.json")[0])
    assert scope.cancelled_caught
    assert facade.statistics().handler_errors == {}


async def test_event_log_is_privacy_safe(caplog: pytest.LogCaptureFixture) -> None:
    facade = DefaultFacade(log_webhook_events=True)
    caplog.set_level(logging.INFO, logger="svc.webhook")
    everything = all_updates()
    for update in everything:
        await facade.dispatch(update)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == len(everything)
    assert "webhook update kind=message detail=text" in lines
    assert "webhook update kind=status detail=delivered" in lines
    assert "webhook update kind=account detail=message_template_status_update:APPROVED" in lines
    assert "webhook update kind=groupStatus detail=group_suspend" in lines
    assert "webhook update kind=callConnect detail=USER_INITIATED" in lines
    logged = "\n".join(lines)
    raw = "\n".join(json.dumps(load(name)) for name in fixture_names())
    assert not any(ch.isdigit() for ch in logged.replace("kind=", "").replace("detail=", ""))
    for private in (
        TEXT,
        "still here",
        "Sheena",
        USER,
        DISPLAY,
        PNID,
        WABA,
        "wamid.",
        "wacid.",
        "Y2Fwa",
        "bjohnson@example.com",
        "campaign-spring",
        "https://",
    ):
        assert private in raw  # the fixtures do carry it...
        assert private not in logged  # ...the log never does


def test_safe_detail_clamps_anything_that_is_not_a_word() -> None:
    envelope = {
        "object": "x",
        "entry": [
            {
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "statuses": [
                                {"id": "wamid.X", "status": "16505551234"},
                                {"id": "wamid.Y", "status": "delivered now"},
                            ],
                            "messages": [
                                {
                                    "id": "wamid.Z",
                                    "type": "Hello there",
                                    "from": USER,
                                    "timestamp": "1749416383",
                                }
                            ],
                        },
                    }
                ]
            }
        ],
    }
    details = [safe_detail(u) for u in normalize(envelope).updates]
    assert details == ["other", "other", "other"]


def test_flags_from_env_mapping() -> None:
    assert facade_flags_from_env({}) == FacadeFlags(log_webhook_events=False, echo_reply=False)
    flags = facade_flags_from_env({"SVC_LOG_WEBHOOK_EVENTS": "1", "SVC_ECHO_REPLY": "1"})
    assert flags == FacadeFlags(log_webhook_events=True, echo_reply=True)
    assert (
        facade_flags_from_env({"SVC_LOG_WEBHOOK_EVENTS": "true", "SVC_ECHO_REPLY": "0"})
        == FacadeFlags()
    )


async def test_echo_without_a_client_or_context_is_counted_as_an_echo_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    facade = DefaultFacade(echo_reply=True)
    caplog.set_level(logging.DEBUG, logger="svc.webhook")
    [update] = updates("message_text.json")
    assert facade.handles(update)
    await facade.dispatch(update)
    stats = facade.statistics()
    assert (stats.echo_sent, stats.echo_errors) == (0, 1)
    assert "webhook echo reply failed error=NoHandlerContext" in caplog.text


class RecordingContext:
    """A ``HandlerContext`` that records what its handler sent."""

    def __init__(self, update: Update) -> None:
        self.update = update
        self.phone_number_id = PNID
        self.texts: list[tuple[str, bool]] = []
        self.sent: list[dict[str, Any]] = []

    async def reply_text(
        self, text: str, *, preview_url: bool | None = None, quote: bool = False
    ) -> SentMessage:
        self.texts.append((text, quote))
        return SentMessage(message_id="wamid.REPLY")

    async def send(self, message: Mapping[str, Any]) -> SentMessage:
        self.sent.append(dict(message))
        return SentMessage(message_id="wamid.SENT")

    @asynccontextmanager
    async def typing(self) -> AsyncIterator[None]:
        self.texts.append(("<typing>", False))
        try:
            yield
        finally:
            self.texts.append(("</typing>", False))


async def test_context_handlers_are_chosen_at_registration_and_get_the_context() -> None:
    facade = DefaultFacade()
    seen: list[str] = []

    @facade.on("message", context=True)
    async def answer(ctx: HandlerContext) -> None:
        sent = await ctx.reply_text(f"got {ctx.update.kind}", quote=True)
        seen.append(f"context:{ctx.phone_number_id}:{sent.message_id}")

    def plain(update: MessageUpdate) -> None:  # one argument: the update, as before
        seen.append(f"plain:{update.message_id}")

    # A handler that takes any argument is still called with what its registration chose.
    facade.on("message", lambda anything: seen.append(type(anything).__name__), context=True)
    facade.on(MessageUpdate, plain)
    [update] = updates("message_text.json")
    context = RecordingContext(update)
    await facade.run(context)
    assert seen == [f"context:{PNID}:wamid.REPLY", "RecordingContext", f"plain:{TEXT_ID}"]
    assert context.texts == [("got message", True)]
    assert facade.handlers("message") == (answer, facade.handlers("message")[1], plain)
    with pytest.raises(TypeError, match="context"):
        facade.on("message", plain, context=1)  # type: ignore[call-overload]


async def test_typing_true_runs_the_context_handler_inside_ctx_typing() -> None:
    facade = DefaultFacade()

    @facade.on("message", context=True, typing=True)
    async def slow(ctx: HandlerContext) -> None:
        await ctx.reply_text("done")
        raise RuntimeError("after the reply")

    facade.on("message", lambda ctx: ctx.reply_text("plain"), context=True)
    [update] = updates("message_text.json")
    context = RecordingContext(update)
    with pytest.raises(RuntimeError):
        await facade.run(context)  # the handler's own exception, out of the block
    assert [text for text, _ in context.texts] == ["<typing>", "done", "</typing>"]
    for kind, wants in (("status", True), ("message", False)):
        with pytest.raises(ValueError, match="typing goes with a context handler of messages"):
            facade.on(kind, slow, context=wants, typing=True)  # type: ignore[call-overload]


async def test_a_context_handler_dispatched_without_a_context_is_an_error_not_a_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    facade = DefaultFacade()
    called: list[object] = []
    facade.on("message", called.append, context=True)
    facade.on("message", called.append)
    caplog.set_level(logging.DEBUG, logger="svc.webhook")
    [update] = updates("message_text.json")
    await facade.dispatch(update)
    assert called == [update]  # only the plain handler ran
    assert facade.statistics().handler_errors == {"NoHandlerContext": 1}
    assert "webhook handler failed kind=message error=NoHandlerContext" in caplog.text


async def test_the_echo_goes_through_the_context_when_there_is_one() -> None:
    facade = DefaultFacade(echo_reply=True)
    [update] = updates("message_text.json")
    context = RecordingContext(update)
    await facade.run(context)
    assert context.texts == [(f"Echo: {TEXT}", True)]
    assert facade.statistics().echo_sent == 1


async def test_the_echo_answers_a_user_without_a_phone_at_their_bsuid() -> None:
    class Recorder:
        def __init__(self) -> None:
            self.sent: list[dict[str, Any]] = []

        async def send_text(self, **kwargs: Any) -> Any:
            self.sent.append(kwargs)

    recorder = Recorder()
    facade = DefaultFacade(echo_reply=True, echo_client=recorder)
    [update] = updates("bsuid_message_username_no_phone.json")
    await facade.dispatch(update)
    assert recorder.sent == [
        {
            "to": "US.13491208655302741918",
            "text": "Echo: hello without a phone",
            "reply_to_message_id": "wamid.BSUID1",
        }
    ]
    context = RecordingContext(update)
    await facade.run(context)
    assert context.texts == [("Echo: hello without a phone", True)]
    assert facade.statistics().echo_sent == 2


async def test_run_raises_the_first_failure_counted_by_class_so_the_runtime_retries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    facade = DefaultFacade()
    ran: list[str] = []

    def first(update: MessageUpdate) -> None:
        ran.append("first")

    def failing(update: MessageUpdate) -> None:
        raise LookupError(f"no answer for {TEXT}")

    facade.on("message", first)
    facade.on("message", failing)
    facade.on("message", lambda update: ran.append("after"))
    caplog.set_level(logging.DEBUG, logger="svc.webhook")
    [update] = updates("message_text.json")
    with pytest.raises(LookupError):
        await facade.run(RecordingContext(update))
    assert ran == ["first"]  # the handlers after the failed one wait for the retry
    assert facade.statistics().handler_errors == {"LookupError": 1}
    assert "webhook handler failed kind=message error=LookupError" in caplog.text
    assert TEXT not in caplog.text
    await facade.dispatch(update)  # library use: counted, never raised, the rest still run
    assert ran == ["first", "first", "after"]
    assert facade.statistics().handler_errors == {"LookupError": 2}


async def test_a_wait_s_timeout_is_raised_uncounted_alone_or_from_a_nursery() -> None:
    """A wait's timeout is no handler error, alone or as all an exception group holds (a
    handler's own nursery); a group with anything else beside it is one."""
    facade = DefaultFacade()
    raised: list[BaseException] = []
    timeout = ListenerTimeout("reply", 5.0)
    nested = ExceptionGroup("nursery", [ExceptionGroup("inner", [timeout]), timeout])
    mixed = ExceptionGroup("nursery", [timeout, LookupError()])

    @facade.on("message")
    def handler(update: MessageUpdate) -> None:
        raise raised[-1]

    [update] = updates("message_text.json")
    for exc in (timeout, nested, mixed):
        raised.append(exc)
        with pytest.raises(type(exc)):
            await facade.run(RecordingContext(update))
    assert facade.statistics().handler_errors == {"ExceptionGroup": 1}  # the mixed one


async def test_the_echo_failure_of_a_run_is_raised_for_a_retry() -> None:
    class Refusing(RecordingContext):
        async def reply_text(
            self, text: str, *, preview_url: bool | None = None, quote: bool = False
        ) -> SentMessage:
            raise ConnectionError("refused")

    facade = DefaultFacade(echo_reply=True)
    [update] = updates("message_text.json")
    with pytest.raises(ConnectionError):
        await facade.run(Refusing(update))
    assert facade.statistics().echo_errors == 1


def test_the_facade_contract_is_handles_and_run() -> None:
    class Minimal:
        def handles(self, update: Update) -> bool:
            return True

        async def run(self, context: HandlerContext) -> None: ...

        def coalesce_for(self, update: Update) -> None:
            return None

    class DispatchOnly:
        def dispatch(self, update: Update) -> None: ...

    assert isinstance(DefaultFacade(), WebhookFacade)
    assert isinstance(Minimal(), WebhookFacade)
    assert not isinstance(DispatchOnly(), WebhookFacade)


def graph(handler: Any) -> tuple[GraphClient, PhoneNumberClient]:
    client = GraphClient(access_token="EAAG-test-token", transport=httpx.MockTransport(handler))
    return client, PhoneNumberClient(client, phone_number_id=PNID)


async def test_echo_reply_sends_exactly_one_text_reply(caplog: pytest.LogCaptureFixture) -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(
            200,
            json={
                "messaging_product": "whatsapp",
                "contacts": [{"input": USER, "wa_id": USER}],
                "messages": [{"id": "wamid.ECHO"}],
            },
        )

    client, phone = graph(handler)
    async with client:
        facade = DefaultFacade.from_flags(
            facade_flags_from_env({"SVC_ECHO_REPLY": "1", "SVC_LOG_WEBHOOK_EVENTS": "1"}),
            echo_client=phone,
        )
        caplog.set_level(logging.DEBUG, logger="svc.webhook")
        for name in (
            "message_text.json",
            "message_media_batch.json",
            "message_group.json",
            "status_batch.json",
            "smb_message_echoes.json",
        ):
            for update in updates(name):
                await facade.dispatch(update)
    [request] = sent  # only the 1:1 text; media, group texts, statuses and echoes are not echoed
    assert request.method == "POST"
    assert str(request.url) == f"https://graph.facebook.com/{DEFAULT_API_VERSION}/{PNID}/messages"
    assert request.headers["Authorization"] == "Bearer EAAG-test-token"
    assert json.loads(request.content) == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": USER,
        "type": "text",
        "text": {"body": f"Echo: {TEXT}"},
        "context": {"message_id": TEXT_ID},
    }
    assert facade.statistics().echo_sent == 1
    assert TEXT not in caplog.text and USER not in caplog.text


async def test_echo_failure_is_counted_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            400, json={"error": {"code": 100, "message": f"bad {TEXT}", "type": "OAuthException"}}
        )

    client, phone = graph(handler)
    async with client:
        facade = DefaultFacade(echo_reply=True, echo_client=phone)
        caplog.set_level(logging.DEBUG, logger="svc.webhook")
        [update] = updates("message_text.json")
        await facade.dispatch(update)
    stats = facade.statistics()
    assert (stats.echo_sent, stats.echo_errors) == (0, 1)
    assert "echo reply failed" in caplog.text
    assert TEXT not in caplog.text


async def test_dispatch_delivery_awaits_async_calls_sync_and_reports_errors() -> None:
    seen: list[str] = []
    errors: list[tuple[str, str]] = []

    class SyncFacade:
        def dispatch(self, update: Update) -> None:
            seen.append(f"sync:{update.kind}")

    class AsyncFacade:
        async def dispatch(self, update: Update) -> None:
            seen.append(f"async:{update.kind}")

    class FailingFacade:
        def dispatch(self, update: Update) -> None:
            raise LookupError("handler data must not be needed")

    body = json.dumps(load("status_batch.json")).encode()
    delivery = receive_delivery(body, sign(body=body, secret=SECRET), SECRET)
    kinds = [update.kind for update in delivery.updates]
    for facade in (SyncFacade(), AsyncFacade(), DefaultFacade(), FailingFacade()):
        await dispatch_delivery(
            facade, delivery, on_error=lambda u, e: errors.append((u.kind, type(e).__name__))
        )
    assert seen == [f"sync:{k}" for k in kinds] + [f"async:{k}" for k in kinds]
    assert errors == [(k, "LookupError") for k in kinds]


def test_facade_registers_by_update_class_and_refuses_other_classes() -> None:
    facade = DefaultFacade()

    def on_status(update: StatusUpdate) -> None: ...

    assert facade.on(StatusUpdate, on_status) is on_status
    assert facade.handlers("status") == (on_status,)
    with pytest.raises(ValueError, match="unknown update class"):
        facade.on(dict, print)  # type: ignore[call-overload]


def test_status_update_type_narrowing_example() -> None:
    update = updates("status_batch.json")[0]
    if update.kind == "status":
        assert isinstance(update, StatusUpdate)


class _NoSender:
    async def send_text(self, **kwargs: Any) -> Any:
        raise AssertionError("not sent")


def test_handles_is_a_registered_handler_or_the_echo_of_a_message() -> None:
    """The event log is diagnostics, not work: it never makes an update need a run."""
    mixed = all_updates()
    kinds = {update.kind for update in mixed}
    assert {"message", "status"} <= kinds
    logging_only = DefaultFacade(log_webhook_events=True)
    assert not any(logging_only.handles(update) for update in mixed)
    on_status = DefaultFacade()
    on_status.on("status", lambda update: None)
    assert [u for u in mixed if on_status.handles(u)] == [u for u in mixed if u.kind == "status"]
    echo = DefaultFacade(echo_reply=True, echo_client=_NoSender())
    assert [u for u in mixed if echo.handles(u)] == [
        u for u in mixed if isinstance(u, MessageUpdate)
    ]
