"""``docs/handlers.md``: every python example runs as written, and its handlers reply through
a service (``create_app`` with the fake Graph); the config and log excerpts are the real ones."""

from __future__ import annotations

import copy
import logging
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from svc.cli._config import parse_document
from svc.cli._inbox_keys import resolve_inbox_keys
from svc.cli._init import config_data
from svc.crypto import InboxKeyring, KeyUnavailableError
from tests._support import FakeGraphTransport, doc_example

from .conftest import AppFactory, fixture, post_webhook, settle

DOC = Path(__file__).resolve().parents[2] / "docs" / "handlers.md"
TEXT = "Does it come in another color?"
USER = "16505551234"


def example(name: str) -> dict[str, Any]:
    return doc_example("handlers.md", "handlers", name)


def blocks(kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```", DOC.read_text(), re.M | re.S)


async def test_the_plain_handlers_receive_the_updates_of_their_kind(make_app: AppFactory) -> None:
    namespace = example("plain")
    client = make_app(facade=namespace["bot"]).test_client()
    await post_webhook(client, fixture("message_text.json"))
    await post_webhook(client, fixture("status_batch.json"))
    seen = namespace["seen"]
    assert seen[0] == "text from 106540352242922"
    statuses = seen[1:]
    assert statuses and set(statuses) <= {"sent", "delivered", "read", "failed"}


async def test_the_context_handler_replies_quoting_the_message(
    make_app: AppFactory, graph: FakeGraphTransport, caplog: pytest.LogCaptureFixture
) -> None:
    bot = example("context")["bot"]
    client = make_app(facade=bot).test_client()
    caplog.set_level(logging.INFO)
    await post_webhook(client, fixture("message_text.json"))
    [body] = graph.bodies()
    assert body["to"] == USER
    assert body["text"] == {"body": f"You said: {TEXT}"}
    assert body["context"]["message_id"].startswith("wamid.")
    assert bot.statistics().handler_errors == {}  # the example's own assert held
    # The log excerpt of the page has the shape of the real line.
    [excerpt] = [b.strip() for b in blocks("text") if "message_id=" in b and "\n" not in b.strip()]
    shape = re.sub(r"message_id=\S+", "message_id=", excerpt)
    lines = [r.getMessage() for r in caplog.records if "reply sent" in r.getMessage()]
    assert [re.sub(r"message_id=\S+", "message_id=", line) for line in lines] == [shape]


async def test_the_typing_example_types_renews_once_and_replies(
    make_app: AppFactory, graph: FakeGraphTransport, autojump_clock: Any
) -> None:
    from .test_conversations import delivery, record, text

    bot = example("typing")["bot"]
    async with make_app(facade=bot).test_app() as served:  # trio's virtual clock runs it
        await record(served.test_client(), delivery(text(USER, "wamid.Y1", "hi")))
        await settle(served)
    typing = {
        "messaging_product": "whatsapp",
        "status": "read",
        "message_id": "wamid.Y1",
        "typing_indicator": {"type": "text"},
    }
    *receipts, reply = graph.bodies()
    assert receipts == [typing, typing]  # at the start, and renewed at 20 s
    assert reply["text"] == {"body": "Here is your answer."}
    assert bot.statistics().handler_errors == {}


async def test_the_buttons_example_sends_the_builders_payload(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    client = make_app(facade=example("buttons")["bot"]).test_client()
    await post_webhook(client, fixture("message_text.json"))
    [body] = graph.bodies()
    assert (body["type"], body["to"]) == ("interactive", USER)
    assert [b["reply"]["id"] for b in body["interactive"]["action"]["buttons"]] == ["track", "no"]


async def test_the_factory_builds_a_bot_that_replies(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    make_bot = example("factory")["make_bot"]
    client = make_app(facade=make_bot()).test_client()
    await post_webhook(client, fixture("message_text.json"))
    assert [body["text"]["body"] for body in graph.bodies()] == ["Hello from the factory"]


def test_the_keyring_example_rotates_and_names_the_missing_key() -> None:
    namespace = example("keyring")
    rotated: InboxKeyring = namespace["rotated"]
    assert namespace["unavailable"] == rotated.key_ids[1]
    assert issubclass(KeyUnavailableError, ValueError)


def test_the_config_excerpt_is_a_valid_inbox_section_and_the_refusal_is_the_real_one() -> None:
    [excerpt] = [b for b in blocks("yaml") if "inbox:" in b]
    data = copy.deepcopy(config_data("default"))
    data["profiles"]["default"].update(yaml.safe_load(excerpt))  # type: ignore[index]
    section = parse_document(data).profiles["default"]
    assert [ref.env for ref in section.inbox.keys] == ["SVC_INBOX_KEY", "SVC_INBOX_KEY_OLD"]
    [refusal] = [b.strip() for b in blocks("text") if b.startswith("Error:")]
    from svc.cli import SecretResolutionError

    with pytest.raises(SecretResolutionError) as caught:
        resolve_inbox_keys(section, {})
    assert refusal == f"Error: {caught.value.format_message()}"


async def test_the_waits_example_asks_waits_and_orders(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    from .test_conversations import click, delivery, record, text

    client = make_app(store=store, facade=example("waits")["bot"]).test_client()
    await record(client, delivery(text(USER, "wamid.W1", "order")))
    await record(client, delivery(text(USER, "wamid.W2", "Ada"), text(USER, "wamid.W3", "?")))
    await record(client, delivery(click(USER, "wamid.W4", "yes")))
    await settle(client)
    bodies = graph.bodies()
    assert [b["text"]["body"] for b in bodies if b["type"] == "text"] == [
        "Your name?",
        "Ordered, thank you.",
    ]
    [buttons] = [b for b in bodies if b["type"] == "interactive"]
    assert buttons["interactive"]["body"]["text"] == "Confirm the order, Ada?"
    assert await store.list_inbox_items() == []  # "?" ran after, and was not an order


async def test_the_waits_example_gives_up_after_its_timeout(
    make_app: AppFactory, graph: FakeGraphTransport, autojump_clock: Any
) -> None:
    from .test_conversations import delivery, record, text

    app = make_app(facade=example("waits")["bot"])  # no store: trio's virtual clock runs it
    async with app.test_app() as served:
        client = served.test_client()
        await record(
            client, delivery(text(USER, "wamid.W1", "order"), text(USER, "wamid.W2", "Al"))
        )
        await settle(served)  # 600 virtual seconds without a click
    assert graph.bodies()[-1]["text"]["body"] == "No answer: nothing was ordered."


async def test_the_burst_example_answers_three_messages_once(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport, clock: Any
) -> None:
    from datetime import timedelta

    from .test_conversations import delivery, record, text

    client = make_app(store=store, facade=example("burst")["bot"]).test_client()
    await record(client, delivery(text(USER, "wamid.B1", "hi"), text(USER, "wamid.B2", "I")))
    await record(client, delivery(text(USER, "wamid.B3", "need help")))
    clock.value += timedelta(seconds=3)  # quiet for longer than the window
    await settle(client)
    assert [b["text"]["body"] for b in graph.bodies()] == ["Got 3 messages: hi / I / need help"]


async def test_the_state_example_counts_visits_and_forgets(
    make_app: AppFactory, store: Any, graph: FakeGraphTransport
) -> None:
    from .test_conversations import delivery, record, text

    client = make_app(store=store, facade=example("state")["bot"]).test_client()
    for number, body in enumerate(["hi", "hi", "forget", "hi"]):
        await record(client, delivery(text(USER, f"wamid.S{number}", body)))
        await settle(client)
    assert [b["text"]["body"] for b in graph.bodies()] == [
        "Visit number 1",
        "Visit number 2",
        "Forgotten.",
        "Visit number 1",
    ]
