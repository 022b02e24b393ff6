"""The webhook answer's counters, exactly, with and without a store and a handler.

``received`` counts the normalized updates, ``dispatched`` the new updates accepted and
handed to the facade whether or not it handles them, ``skipped`` the updates not accepted
(malformed parts, duplicates, updates for a number the service does not serve), and
``queued`` the updates recorded for a handler run (``docs/http.md``, "Webhook").
"""

from __future__ import annotations

from typing import Any

import pytest

from svc.webhook import DefaultFacade

from .conftest import PHONE_ID, AppFactory, RecordingFacade, post_webhook

USER = "16505551234"
OTHER_NUMBER = "999000111222333"


def _message(message_id: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "from": USER,
        "timestamp": "1749416383",
        "type": "text",
        "text": {"body": "hi"},
    }
    if message_id is not None:
        message["id"] = f"wamid.{message_id}"
    return message


def _entry(*message_ids: str | None, phone_number_id: str = PHONE_ID) -> dict[str, Any]:
    """One entry with one inbound text per id; None makes a message without an id."""
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": phone_number_id},
        "contacts": [{"profile": {"name": "A"}, "wa_id": USER}],
        "messages": [_message(message_id) for message_id in message_ids],
    }
    return {"id": "102290129340398", "changes": [{"field": "messages", "value": value}]}


def _delivery(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"object": "whatsapp_business_account", "entry": list(entries)}


def _answer(received: int, dispatched: int, skipped: int, queued: int) -> dict[str, Any]:
    return {
        "status": "ok",
        "received": received,
        "dispatched": dispatched,
        "skipped": skipped,
        "queued": queued,
    }


def _facade(handles: bool) -> Any:
    """A facade that handles every update, or the default facade with no handler (the
    served service without ``--app``)."""
    return RecordingFacade() if handles else DefaultFacade()


@pytest.mark.parametrize("handles", [True, False], ids=["handled", "unhandled"])
async def test_the_answer_counts_each_update_once_with_a_store(
    make_app: AppFactory, store: Any, handles: bool
) -> None:
    client = make_app(facade=_facade(handles), store=store).test_client()
    queued = 1 if handles else 0

    new = await post_webhook(client, _delivery(_entry("n1")))
    assert await new.get_json() == _answer(1, 1, 0, queued)

    copy = await post_webhook(client, _delivery(_entry("n1")))
    assert await copy.get_json() == _answer(1, 0, 1, 0)

    regrouped = await post_webhook(client, _delivery(_entry("n2", "n1")))
    assert await regrouped.get_json() == _answer(2, 1, 1, queued)

    foreign = await post_webhook(client, _delivery(_entry("f1", phone_number_id=OTHER_NUMBER)))
    assert await foreign.get_json() == _answer(1, 0, 1, 0)

    malformed = await post_webhook(client, _delivery(_entry(None, "n3")))
    assert await malformed.get_json() == _answer(1, 1, 1, queued)

    mixed = _delivery(_entry(None, "n4", "n1"), _entry("f2", phone_number_id=OTHER_NUMBER))
    answer = await post_webhook(client, mixed)
    # n4 new; a part without an id, the duplicate n1 and the foreign f2 skipped.
    assert await answer.get_json() == _answer(3, 1, 3, queued)


@pytest.mark.parametrize("handles", [True, False], ids=["handled", "unhandled"])
async def test_the_answer_counts_each_update_once_without_a_store(
    make_app: AppFactory, handles: bool
) -> None:
    """Without a store the keys of queued updates are remembered, so their copy is a
    duplicate; an update no handler takes is not remembered, so its copy is new again."""
    client = make_app(facade=_facade(handles)).test_client()
    queued = 1 if handles else 0

    new = await post_webhook(client, _delivery(_entry("n1")))
    assert await new.get_json() == _answer(1, 1, 0, queued)

    copy = await post_webhook(client, _delivery(_entry("n1")))
    if handles:
        assert await copy.get_json() == _answer(1, 0, 1, 0)
    else:
        assert await copy.get_json() == _answer(1, 1, 0, 0)

    foreign = await post_webhook(client, _delivery(_entry("f1", phone_number_id=OTHER_NUMBER)))
    assert await foreign.get_json() == _answer(1, 0, 1, 0)

    malformed = await post_webhook(client, _delivery(_entry(None, "n3")))
    assert await malformed.get_json() == _answer(1, 1, 1, queued)

    mixed = _delivery(_entry(None, "n4", "n4"), _entry("f2", phone_number_id=OTHER_NUMBER))
    answer = await post_webhook(client, mixed)
    # The same message twice in one delivery is normalized once (a skipped part).
    assert await answer.get_json() == _answer(2, 1, 3, queued)


async def test_three_thousand_statuses_without_a_handler_are_all_dispatched(
    make_app: AppFactory, store: Any
) -> None:
    """Statuses no handler wants are accepted, recorded and dispatched; none is skipped."""
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": PHONE_ID},
        "statuses": [
            {"id": f"wamid.S{n}", "status": "delivered", "timestamp": "1749416385"}
            for n in range(3000)
        ],
    }
    envelope = _delivery(
        {"id": "102290129340398", "changes": [{"field": "messages", "value": value}]}
    )
    client = make_app(facade=DefaultFacade(), store=store).test_client()
    answer = await post_webhook(client, envelope)
    assert await answer.get_json() == _answer(3000, 3000, 0, 0)
    again = await post_webhook(client, envelope)
    assert await again.get_json() == _answer(3000, 0, 3000, 0)
