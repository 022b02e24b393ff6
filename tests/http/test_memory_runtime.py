"""Handlers without a store: answered first, run after from a bounded in-memory queue.

The answer does not wait for a handler (one that never returns included); a user's updates
run one at a time in order, other users' in parallel up to the concurrency; a failed run is
retried, up to the attempts, then dropped as a dead letter that releases the user's later
updates; a run past its deadline is a failure; a full queue answers 503 with Retry-After.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import trio
import trio.testing

from svc.http import HandlerOptions
from svc.http._memory_runtime import MemoryRuntime, RunReport
from svc.webhook import DefaultFacade, ReplyOutcomeUnknown, normalize
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


def _updates(*items: tuple[str, str]) -> list[Any]:
    return list(normalize(_inbound(*items)).updates)


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


def _runtime(bot: Any, *, reports: list[RunReport] | None = None, **options: Any) -> MemoryRuntime:
    settings = {"retry_delay": 0.0, **options}
    return MemoryRuntime(
        facade=bot,
        context_for=lambda update, key, conversation: _Context(update),
        options=HandlerOptions(**settings),
        logger=logging.getLogger("svc.http.test"),
        on_run=reports.append if reports is not None else None,
        jitter=lambda: 0.0,
    )


class _Context:
    def __init__(self, update: Any) -> None:
        self.update = update
        self.phone_number_id = update.phone_number_id


async def test_one_user_runs_in_order_one_at_a_time_and_users_run_in_parallel() -> None:
    bot = DefaultFacade()
    order: list[str] = []
    gates = {"wamid.A1": trio.Event(), "wamid.B1": trio.Event()}
    running: set[str] = set()
    both = trio.Event()

    @bot.on("message")
    async def handler(update: Any) -> None:
        running.add(update.message_id)
        if {"wamid.A1", "wamid.B1"} <= running:
            both.set()
        order.append(update.message_id)
        gate = gates.get(update.message_id)
        if gate is not None:
            await gate.wait()

    runtime = _runtime(bot, concurrency=4)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        assert runtime.submit(_updates((USER_A, "wamid.A1"), (USER_B, "wamid.B1")))
        assert runtime.submit(_updates((USER_A, "wamid.A2"), (USER_A, "wamid.A3")))
        await both.wait()  # two users at once
        assert "wamid.A2" not in order  # A's next waits for A1
        gates["wamid.A1"].set()
        gates["wamid.B1"].set()
        await runtime.wait_idle()
        await runtime.stop()
    a_runs = [message for message in order if message.startswith("wamid.A")]
    assert a_runs == ["wamid.A1", "wamid.A2", "wamid.A3"]
    assert runtime.size == 0


async def test_the_concurrency_bounds_the_runs_in_flight() -> None:
    bot = DefaultFacade()
    gate = trio.Event()
    in_flight: list[int] = []
    current = [0]

    @bot.on("message")
    async def handler(update: Any) -> None:
        current[0] += 1
        in_flight.append(current[0])
        await gate.wait()
        current[0] -= 1

    runtime = _runtime(bot, concurrency=2)
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        users = [(f"1650555{i:04d}", f"wamid.U{i}") for i in range(6)]
        assert runtime.submit(_updates(*users))
        await trio.testing.wait_all_tasks_blocked()
        assert max(in_flight) == 2
        gate.set()
        await runtime.wait_idle()
        await runtime.stop()
    assert len(in_flight) == 6 and max(in_flight) == 2


async def test_a_failed_run_is_retried_and_holds_back_the_user_s_later_updates() -> None:
    bot = DefaultFacade()
    runs: list[str] = []

    @bot.on("message")
    def flaky(update: Any) -> None:
        runs.append(update.message_id)
        if update.message_id == "wamid.A1" and runs.count("wamid.A1") < 3:
            raise ConnectionError("the model did not answer")

    reports: list[RunReport] = []
    runtime = _runtime(bot, reports=reports)
    assert runtime.submit(_updates((USER_A, "wamid.A1"), (USER_A, "wamid.A2")))
    await runtime.run_until_idle()
    assert runs == ["wamid.A1", "wamid.A1", "wamid.A1", "wamid.A2"]
    assert [r.outcome for r in reports] == ["error", "error", "success", "success"]


async def test_after_the_last_attempt_the_update_is_dropped_and_the_next_one_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bot = DefaultFacade()
    runs: list[str] = []

    @bot.on("message")
    def failing(update: Any) -> None:
        runs.append(update.message_id)
        if update.message_id == "wamid.A1":
            raise LookupError(f"no answer for {USER_A}")

    reports: list[RunReport] = []
    runtime = _runtime(bot, reports=reports, max_attempts=3)
    caplog.set_level(logging.INFO, logger="svc.http.test")
    assert runtime.submit(_updates((USER_A, "wamid.A1"), (USER_A, "wamid.A2")))
    await runtime.run_until_idle()
    assert runs == ["wamid.A1"] * 3 + ["wamid.A2"]
    assert [r.outcome for r in reports] == ["error", "error", "dead", "success"]
    assert "handler run dead-lettered kind=message reason=LookupError attempts=3" in caplog.text
    assert USER_A not in caplog.text


async def test_an_unknown_reply_outcome_is_never_retried() -> None:
    bot = DefaultFacade()
    runs: list[str] = []

    @bot.on("message")
    def unknown(update: Any) -> None:
        runs.append(update.message_id)
        raise ReplyOutcomeUnknown("lost")

    reports: list[RunReport] = []
    runtime = _runtime(bot, reports=reports)
    assert runtime.submit(_updates((USER_A, "wamid.A1")))
    await runtime.run_until_idle()
    assert runs == ["wamid.A1"]
    assert [r.outcome for r in reports] == ["dead"]


async def test_a_run_past_its_deadline_is_cancelled_and_retried(
    autojump_clock: trio.testing.MockClock,
) -> None:
    bot = DefaultFacade()
    attempts: list[float] = []
    cancelled: list[bool] = []

    @bot.on("message")
    async def hangs(update: Any) -> None:
        attempts.append(trio.current_time())
        try:
            if len(attempts) == 1:
                await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.append(True)
            raise

    reports: list[RunReport] = []
    runtime = _runtime(bot, reports=reports, timeout=5.0, retry_delay=1.0)
    assert runtime.submit(_updates((USER_A, "wamid.A1")))
    async with trio.open_nursery() as nursery:
        await nursery.start(runtime.run)
        while len(reports) < 2:
            await trio.sleep(1)  # the mock clock's time: jumped over, never waited
        await runtime.stop()
    assert [r.outcome for r in reports] == ["timeout", "success"]
    assert cancelled == [True]
    assert reports[0].seconds == pytest.approx(5.0)
    assert attempts[1] - attempts[0] == pytest.approx(5.5)  # deadline + half the delay


async def test_a_full_queue_answers_503_with_retry_after_and_queues_nothing(
    make_app: AppFactory,
) -> None:
    bot = DefaultFacade()
    ran: list[str] = []
    bot.on("message", lambda update: ran.append(update.message_id))
    app = make_app(facade=bot, handler_options={"queue_capacity": 2})
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


async def test_without_a_handler_an_update_is_dispatched_and_nothing_queued(
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
        {"x": 1},
    ],
)
def test_invalid_handler_options_are_refused(make_app: AppFactory, options: dict[str, Any]) -> None:
    from svc.http import ServiceError

    with pytest.raises(ServiceError) as refused:
        make_app(handler_options=options)
    assert refused.value.code == "invalid_config"


async def test_a_handles_that_raises_hands_the_update_over_and_never_answers_500(
    make_app: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    ran: list[str] = []

    class Faulty:
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
