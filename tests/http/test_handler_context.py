"""Handlers with a context in the service: replies go through its send (counted, recorded,
logged by message id), from the number the update came to; the echo reply too; a skipped
foreign number is logged once per id."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from svc.graph import DEFAULT_API_VERSION as VERSION
from svc.graph import build_image_message
from svc.webhook import DefaultFacade, FacadeFlags, HandlerContext, MessageUpdate, SentMessage
from tests._support import FakeGraphTransport

from .conftest import AUTH, PHONE_ID, AppFactory, fixture, post_webhook
from .test_business_numbers import FOREIGN_ID, OTHER_ID, OTHER_TOKEN, inbound, two_number_app

USER = "16505551234"
TEXT = "Does it come in another color?"
GROUP = "Y2FwaV9ncm91cDoxNjUwNTU1MTIzNDo5ODc2NTQzMjE="
GRAPH_SUCCESS = {"endpoint_family": "messages", "status_class": "2xx", "outcome": "success"}


def _reply_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "reply sent" in r.getMessage()]


async def test_a_context_handler_replies_from_the_number_the_update_came_to(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport, caplog: pytest.LogCaptureFixture
) -> None:
    bot = DefaultFacade()
    sent: list[SentMessage] = []

    @bot.on("message", context=True)
    async def reply(ctx: HandlerContext) -> None:
        assert isinstance(ctx.update, MessageUpdate)
        assert ctx.phone_number_id == OTHER_ID
        sent.append(await ctx.reply_text(f"You said: {ctx.update.text}", quote=True))

    registry = CollectorRegistry()
    client = two_number_app(make_app, store, facade=bot, metrics_registry=registry).test_client()
    caplog.set_level(logging.INFO, logger="svc.http.test")
    ack = await post_webhook(client, inbound(OTHER_ID, "wamid.IN1"))
    assert await ack.get_json() == {
        "status": "ok",
        "received": 1,
        "dispatched": 1,
        "skipped": 0,
        "queued": 1,
    }

    [request] = graph.requests
    assert request.url.path == f"/{VERSION}/{OTHER_ID}/messages"
    assert request.headers["Authorization"] == f"Bearer {OTHER_TOKEN}"
    assert graph.bodies() == [
        {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": USER,
            "type": "text",
            "text": {"body": f"You said: {TEXT}"},
            "context": {"message_id": "wamid.IN1"},
        }
    ]
    assert sent == [SentMessage(message_id="wamid.TEST1")]
    # Recorded as the other number's outbound message, counted as a Graph call, logged by id.
    row = await client.get(f"/api/messages/wamid.TEST1?phoneNumberId={OTHER_ID}", headers=AUTH)
    assert row.status_code == 200
    assert (await row.get_json())["direction"] == "outbound"
    assert registry.get_sample_value("graph_operations_total", GRAPH_SUCCESS) == 1.0
    assert registry.get_sample_value(
        "send_number_outcomes_total", {"phone_number_id": OTHER_ID, "outcome": "sent"}
    )
    assert _reply_lines(caplog) == ["handler reply sent type=text message_id=wamid.TEST1"]
    assert TEXT not in caplog.text and USER not in caplog.text


async def test_a_group_message_is_answered_in_the_group_and_send_takes_builder_payloads(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    bot = DefaultFacade()

    @bot.on("message", context=True)
    async def reply(ctx: HandlerContext) -> None:
        await ctx.reply_text("to the group")
        await ctx.send(build_image_message(to=USER, link="https://example.com/a.jpg"))

    client = make_app(facade=bot).test_client()
    payload = copy.deepcopy(fixture("message_text.json"))
    payload["entry"][0]["changes"][0]["value"]["messages"][0]["group_id"] = GROUP
    await post_webhook(client, payload)
    first, second = graph.bodies()
    assert (first["recipient_type"], first["to"], first["text"]) == (
        "group",
        GROUP,
        {"body": "to the group"},
    )
    assert (second["type"], second["to"], second["image"]) == (
        "image",
        USER,
        {"link": "https://example.com/a.jpg"},
    )
    assert [r.url.path for r in graph.requests] == [f"/{VERSION}/{PHONE_ID}/messages"] * 2


async def test_a_refused_payload_is_a_handler_error_and_nothing_is_sent(
    make_app: AppFactory, graph: FakeGraphTransport, caplog: pytest.LogCaptureFixture
) -> None:
    bot = DefaultFacade()
    bot.on("message", lambda ctx: ctx.send({"type": "text"}), context=True)
    client = make_app(facade=bot).test_client()
    caplog.set_level(logging.INFO)
    ack = await post_webhook(client, fixture("message_text.json"))
    assert ack.status_code == 200  # a handler failure is still answered 200
    assert graph.requests == []
    assert bot.statistics().handler_errors == {"GraphRequestValidationError": 1}


async def test_a_reply_to_an_update_naming_no_user_raises_value_error_and_sends_nothing(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    refused: list[str] = []
    bot = DefaultFacade()

    @bot.on("account", context=True)
    async def reply(ctx: HandlerContext) -> None:
        try:
            await ctx.reply_text("to no one")
        except ValueError:
            refused.append(ctx.update.kind)

    await post_webhook(make_app(facade=bot).test_client(), fixture("account_events.json"))
    assert refused and set(refused) == {"account"}
    assert graph.requests == []


async def test_the_echo_reply_is_sent_recorded_counted_and_logged_by_id(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport, caplog: pytest.LogCaptureFixture
) -> None:
    registry = CollectorRegistry()
    client = make_app(
        store=store,
        metrics_registry=registry,
        facade_flags=FacadeFlags(echo_reply=True, log_webhook_events=True),
    ).test_client()
    caplog.set_level(logging.INFO)
    ack = await post_webhook(client, fixture("message_text.json"))
    assert (await ack.get_json())["dispatched"] == 1
    assert graph.bodies()[0]["text"] == {"body": f"Echo: {TEXT}"}
    row = await client.get("/api/messages/wamid.TEST1", headers=AUTH)
    assert row.status_code == 200 and (await row.get_json())["direction"] == "outbound"
    assert registry.get_sample_value("graph_operations_total", GRAPH_SUCCESS) == 1.0
    assert _reply_lines(caplog) == ["handler reply sent type=text message_id=wamid.TEST1"]
    assert "webhook update kind=message detail=text" in caplog.text
    assert TEXT not in caplog.text and USER not in caplog.text


async def test_a_foreign_number_is_logged_once_per_id_with_the_served_ids(
    make_app: AppFactory, store: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client = two_number_app(make_app, store).test_client()
    caplog.set_level(logging.INFO)
    for message_id in ("wamid.F1", "wamid.F2"):
        ack = await post_webhook(client, inbound(FOREIGN_ID, message_id))
        assert (await ack.get_json())["skipped"] == 1
    await post_webhook(client, inbound("not-digits", "wamid.F3"))
    lines = [r.getMessage() for r in caplog.records if "foreign_number" in r.getMessage()]
    served = ", ".join(sorted((PHONE_ID, OTHER_ID)))
    assert lines == [
        f"webhook updates skipped reason=foreign_number phone_number_id={FOREIGN_ID}: "
        f"not a number this service serves ({served}); logged once per id",
        "webhook updates skipped reason=foreign_number phone_number_id=other: "
        f"not a number this service serves ({served}); logged once per id",
    ]
