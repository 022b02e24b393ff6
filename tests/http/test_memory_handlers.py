"""Handlers without a store, at the HTTP layer: the answer comes before the handlers run
(one that never returns included), a redelivery runs nothing, a full in-memory queue answers
503 with Retry-After and queues nothing, invalid handler options are refused, and a facade
whose ``handles()`` raises still gets the update. The runtime's own rules: ``tests/runtime``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import trio

from svc.runtime import HandlerOptions
from svc.webhook import DefaultFacade
from tests._support import sign

from .conftest import APP_SECRET, WEBHOOK, AppFactory, fixture, post_webhook

USER_A = "16505551234"
USER_B = "16505559876"


def _inbound(*items: tuple[str, str]) -> dict[str, Any]:
    """One delivery of text messages ``(sender, message id)``, in order."""
    payload = fixture("message_text.json")
    value = payload["entry"][0]["changes"][0]["value"]
    template = value["messages"][0]
    value.pop("contacts", None)
    value["messages"] = [
        {**template, "from": sender, "id": message_id} for sender, message_id in items
    ]
    return payload


async def _raw_post(client: Any, payload: dict[str, Any]) -> Any:
    """A post that does not wait for the handlers (``post_webhook`` does)."""
    body = json.dumps(payload).encode()
    headers = {"X-Hub-Signature-256": sign(body=body, secret=APP_SECRET)}
    return await client.post(WEBHOOK, data=body, headers=headers)


async def test_the_answer_is_200_before_a_handler_that_never_returns_has_run(
    make_app: AppFactory,
) -> None:
    bot = DefaultFacade()
    started = trio.Event()
    never = trio.Event()  # never set: the handler awaits for ever
    events: list[str] = []

    @bot.on("message")
    async def slow(update: Any) -> None:
        events.append("handler started")
        started.set()
        await never.wait()
        events.append("handler finished")

    app = make_app(facade=bot)
    inner = app.asgi_app

    async def watched(scope: Any, receive: Any, send: Any) -> None:
        async def send_watched(message: Any) -> None:
            if message["type"] == "http.response.start":
                events.append(f"answer {message['status']}")
            await send(message)

        await inner(scope, receive, send_watched)

    app.asgi_app = watched
    async with app.test_app() as served:
        response = await _raw_post(served.test_client(), _inbound((USER_A, "wamid.A1")))
        assert response.status_code == 200
        assert await response.get_json() == {
            "status": "ok",
            "received": 1,
            "dispatched": 1,
            "skipped": 0,
            "queued": 1,
        }
        await started.wait()
        assert events == ["answer 200", "handler started"]  # the answer came first
        await app.extensions["svc.handlers"].stop(grace=0)  # cancels the run in flight
    assert events == ["answer 200", "handler started"]


async def test_a_full_queue_answers_503_with_retry_after_and_queues_nothing(
    make_app: AppFactory,
) -> None:
    bot = DefaultFacade()
    ran: list[str] = []
    bot.on("message", lambda update: ran.append(update.message_id))
    app = make_app(facade=bot, handler_options=HandlerOptions(queue_capacity=2))
    client = app.test_client()
    first = await _raw_post(client, _inbound((USER_A, "wamid.A1"), (USER_B, "wamid.B1")))
    assert first.status_code == 200
    full = await _raw_post(client, _inbound((USER_A, "wamid.A2")))
    assert full.status_code == 503
    assert full.headers["Retry-After"] == "5"
    assert (await full.get_json())["error"]["code"] == "handlers_busy"
    await post_webhook(client, _inbound())  # runs the queue until idle
    assert sorted(ran) == ["wamid.A1", "wamid.B1"]
    again = await post_webhook(client, _inbound((USER_A, "wamid.A2")))
    assert again.status_code == 200 and ran[-1] == "wamid.A2"


async def test_a_redelivery_of_an_accepted_update_runs_nothing(make_app: AppFactory) -> None:
    bot = DefaultFacade()
    ran: list[str] = []
    bot.on("message", lambda update: ran.append(update.message_id))
    client = make_app(facade=bot).test_client()
    first = await post_webhook(client, _inbound((USER_A, "wamid.A1")))
    again = await post_webhook(client, _inbound((USER_A, "wamid.A1"), (USER_B, "wamid.B1")))
    assert (await first.get_json())["queued"] == 1
    assert await again.get_json() == {
        "status": "ok",
        "received": 2,
        "dispatched": 1,
        "skipped": 1,
        "queued": 1,
    }
    assert ran == ["wamid.A1", "wamid.B1"]


async def test_without_a_handler_the_update_is_dispatched_and_nothing_queued(
    make_app: AppFactory,
) -> None:
    response = await post_webhook(make_app().test_client(), _inbound((USER_A, "wamid.A1")))
    assert await response.get_json() == {
        "status": "ok",
        "received": 1,
        "dispatched": 1,
        "skipped": 0,
        "queued": 0,
    }


@pytest.mark.parametrize(
    "options",
    [
        {"concurrency": 0},
        {"timeout": 0},
        {"max_attempts": -1},
        {"max_waiting": -1},
        {"max_waiting": 100_001},
        {"max_waiting": True},
        {"retry_delay": float("nan")},
    ],
)
def test_invalid_handler_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        HandlerOptions(**options)


@pytest.mark.parametrize("options", [{"timeout": 5.0}, "timeout=5", HandlerOptions])
def test_handler_options_other_than_the_record_are_refused(
    make_app: AppFactory, options: object
) -> None:
    from svc.http import ServiceError

    with pytest.raises(ServiceError) as refused:
        make_app(handler_options=options)
    assert refused.value.code == "invalid_config"
    assert "HandlerOptions" in str(refused.value)


async def test_a_handles_that_raises_hands_the_update_over_and_never_answers_500(
    make_app: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    ran: list[str] = []

    class Faulty:
        def coalesce_for(self, update: Any) -> None:
            return None

        def handles(self, update: Any) -> bool:
            raise KeyError(f"bad predicate for {USER_A}")

        async def run(self, context: Any) -> None:
            ran.append(context.update.message_id)

    client = make_app(facade=Faulty()).test_client()
    caplog.set_level(logging.WARNING)
    response = await post_webhook(client, _inbound((USER_A, "wamid.A1")))
    assert response.status_code == 200
    assert (await response.get_json())["dispatched"] == 1
    assert ran == ["wamid.A1"]
    assert "webhook facade handles() failed kind=message error=KeyError" in caplog.text
    assert USER_A not in caplog.text
