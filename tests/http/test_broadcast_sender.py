"""The sender's decisions (sans-IO) and its loop: retries, number-wide backoff, stop releases."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
import trio
import trio.testing

from svc.graph import GraphClient, GraphNetworkError
from svc.graph._error_codes import api_error_from_response
from svc.http._broadcast_sender import (
    BroadcastOptions,
    BroadcastPost,
    BroadcastSenderHandle,
    backoff_seconds,
    decide,
    run_broadcast_sender,
)
from svc.store import BroadcastRecipientInput, BroadcastStatus, SqliteStore

from .conftest import T0

NUMBER = "106540352242922"
OPTIONS = BroadcastOptions(random=lambda: 1.0)


def error(code: int, status: int = 400, retry_after: str | None = None) -> Any:
    payload = {"error": {"message": "x", "type": "OAuthException", "code": code}}
    return api_error_from_response(status=status, payload=payload, retry_after=retry_after)


def test_decisions() -> None:
    assert decide(None, attempts=1, options=OPTIONS).action == "sent"
    pair = decide(error(131056), attempts=1, options=OPTIONS)
    assert (pair.action, pair.code, pair.delay, pair.number_wide) == ("retry", "131056", 6.0, False)
    assert decide(error(131056), attempts=3, options=OPTIONS).delay == 24.0
    rate = decide(error(130429, 429), attempts=1, options=OPTIONS)
    assert (rate.action, rate.delay, rate.number_wide) == ("retry", 1.0, True)
    hinted = decide(error(130429, 429, retry_after="30"), attempts=1, options=OPTIONS)
    assert hinted.delay == 30.0
    last = decide(error(131056), attempts=OPTIONS.max_attempts, options=OPTIONS)
    assert (last.action, last.code) == ("failed", "131056")
    assert decide(error(131026), attempts=1, options=OPTIONS).code == "131026"
    # A network error may have reached the platform: never retried.
    network = decide(GraphNetworkError("down"), attempts=1, options=OPTIONS)
    assert (network.action, network.code) == ("failed", "network")


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        # retry_later: the whole number waits the longer of the backoff and the hint's wait
        (error(131057), ("retry", "131057", 60.0, True)),  # a throughput upgrade
        (error(2494100), ("retry", "2494100", 60.0, True)),
        (error(131057, retry_after="90"), ("retry", "131057", 90.0, True)),
        (error(80007), ("retry", "80007", 1.0, True)),
        (error(131000), ("retry", "131000", 1.0, True)),
        (GraphNetworkError("refused", request_sent=False), ("retry", "network", 1.0, True)),
        # every other hint fails the recipient at once
        (error(190, 401), ("failed", "190", 0.0, False)),  # refresh_credentials
        (error(131009), ("failed", "131009", 0.0, False)),  # fix_request
        (error(131049), ("failed", "131049", 0.0, False)),  # do_not_retry
        (error(130429, 503), ("failed", "130429", 0.0, False)),  # unknown: a 5xx
        (error(131057, 500), ("failed", "131057", 0.0, False)),  # unknown: a 5xx
        (GraphNetworkError("lost"), ("failed", "network", 0.0, False)),  # unknown: maybe sent
    ],
)
def test_the_retry_hint_decides(failure: Any, expected: tuple[Any, ...]) -> None:
    decision = decide(failure, attempts=1, options=OPTIONS)
    assert (decision.action, decision.code, decision.delay, decision.number_wide) == expected
    spent = decide(failure, attempts=OPTIONS.max_attempts, options=OPTIONS)
    assert spent.action == "failed"


def test_backoff_is_capped_and_jittered() -> None:
    assert backoff_seconds(1, base=2, cap=10, jitter=0.0) == 1.0
    assert backoff_seconds(10, base=2, cap=10, jitter=1.0) == 10.0
    assert backoff_seconds(10_000, base=2, cap=10, jitter=0.5) == 7.5


@pytest.mark.parametrize(
    "fields",
    [
        {"rate_per_second": 0},
        {"rate_per_second": 1001},
        {"rate_per_second": True},
        {"interval": 1, "horizon": 0.5},
        {"lease": 0.2},
        {"batch_limit": 0},
    ],
)
def test_invalid_options(fields: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        BroadcastOptions(**fields)


async def _one_broadcast(
    recipients: Sequence[str],
) -> tuple[SqliteStore, Callable[[], datetime]]:
    """A migrated SQLite store holding broadcast ``b`` to ``recipients`` (each payload names
    its recipient), and the clock of trio's current time."""
    store = SqliteStore(":memory:")
    await store.migrate()
    now = lambda: T0 + timedelta(seconds=trio.current_time())  # noqa: E731
    await store.create_broadcast(
        id="b",
        request_key="k",
        request_hash="h",
        phone_number_id=NUMBER,
        recipients=[
            BroadcastRecipientInput(recipient=p, payload_json=json.dumps({"to": p}))
            for p in recipients
        ],
        created_at=now(),
    )
    return store, now


async def _send_until_done(
    store: SqliteStore, post: BroadcastPost, options: BroadcastOptions
) -> tuple[BroadcastStatus, BroadcastSenderHandle]:
    """Run the sender on broadcast ``b`` until it is done; its last status and the handle."""
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_broadcast_sender, store, post, (NUMBER,), options)
        while (status := await store.get_broadcast(id="b")) is None or status.state != "done":
            await trio.sleep(0.5)
        await handle.stop()
    return status, handle


async def test_rate_limit_pushes_the_number_back_and_retries(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store, now = await _one_broadcast(("1", "2"))
    posted: list[tuple[float, str]] = []

    async def post(number: str, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        assert number == NUMBER
        posted.append((trio.current_time(), payload["to"]))
        if len(posted) == 1:
            raise error(130429, 429, retry_after="5")
        return {"messages": [{"id": f"wamid.{len(posted)}"}]}

    options = BroadcastOptions(rate_per_second=10, now=now, random=lambda: 0.0)
    status, handle = await _send_until_done(store, post, options)
    assert status.sent == 2
    # The refused send pushed the number back five seconds: nothing went out before then,
    # and the other claimed send went back to the queue instead of being posted meanwhile.
    # (Which of the two was first is up to the scheduler: a store thread lets the autojump
    # clock pass both slots.)
    assert len(posted) == 3
    assert {who for _, who in posted[1:]} == {"1", "2"}
    assert all(at - posted[0][0] >= 5.0 for at, _ in posted[1:])
    stats = handle.statistics()
    assert (stats.sent, stats.retried, stats.failed) == (2, 1, 0)
    await store.close()


async def test_stop_releases_claimed_sends_that_were_not_posted(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store, now = await _one_broadcast([str(n) for n in range(20)])
    posted: list[str] = []

    async def post(number: str, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        posted.append(payload["to"])
        return {"messages": [{"id": "wamid.x"}]}

    options = BroadcastOptions(rate_per_second=1, horizon=10, interval=0.5, lease=60, now=now)
    with trio.move_on_after(2.5):
        async with trio.open_nursery() as nursery:
            await nursery.start(run_broadcast_sender, store, post, (NUMBER,), options)
    status = await store.get_broadcast(id="b")
    assert status is not None
    # Ten slots were claimed; those whose time came were sent (three, or fewer when a store
    # thread let the autojump clock run ahead), the rest went back to the queue.
    assert status.sent == len(posted) <= 3
    assert status.queued == 20 - len(posted)
    assert await store.expire_broadcast_leases(now=now() + timedelta(hours=1)) == 0
    await store.close()


async def test_an_unexpected_error_leaves_the_row_to_its_lease_and_the_sender_runs_on(
    autojump_clock: trio.testing.MockClock,
) -> None:
    store, now = await _one_broadcast(("1", "2"))

    async def post(number: str, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        if payload["to"] == "1":
            raise RuntimeError("a bug")
        return {"messages": [{"id": "wamid.2"}]}

    options = BroadcastOptions(rate_per_second=10, lease=5, now=now)
    status, handle = await _send_until_done(store, post, options)
    assert (status.sent, status.failed) == (1, 1)
    assert dict(status.failed_by_code) == {"interrupted": 1}
    assert handle.statistics().errors == 1
    await store.close()


async def test_a_throughput_upgrade_holds_the_broadcast_and_fails_no_recipient(
    autojump_clock: trio.testing.MockClock,
) -> None:
    """Sends through the real Graph client to a fake Graph that answers 131057 for 45 s (the
    number is being upgraded): the sender pauses the number about a minute, then sends
    every recipient; none fails for the upgrade, and nothing is posted during the pause."""
    recipients = [str(15550000000 + n) for n in range(40)]
    store, now = await _one_broadcast(recipients)
    upgrade_ends = 45.0
    answered: list[tuple[float, str, int]] = []

    def graph(request: httpx.Request) -> httpx.Response:
        at, to = trio.current_time(), json.loads(request.content)["to"]
        assert request.url.path.endswith(f"/{NUMBER}/messages")
        if at < upgrade_ends:
            answered.append((at, to, 131057))
            return httpx.Response(
                400,
                json={"error": {"message": "(#131057) Maintenance mode", "code": 131057}},
            )
        answered.append((at, to, 200))
        return httpx.Response(200, json={"messages": [{"id": f"wamid.{to}"}]})

    client = GraphClient(access_token="EAAG-token", transport=httpx.MockTransport(graph))

    async def post(number: str, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        answer: Mapping[str, Any] = await client.request(
            "POST", f"/{number}/messages", json=dict(payload)
        )
        return answer

    options = BroadcastOptions(rate_per_second=20, now=now, random=lambda: 1.0)
    status, handle = await _send_until_done(store, post, options)
    await client.aclose()
    assert (status.sent, status.failed) == (40, 0)
    assert dict(status.failed_by_code) == {}
    refused = [(at, to) for at, to, code in answered if code == 131057]
    sent = [(at, to) for at, to, code in answered if code == 200]
    assert {to for _, to in sent} == set(recipients)
    assert 1 <= len(refused) <= 20  # only the sends in flight when the upgrade began
    # After the first 131057 nothing was posted for the hint's minute: the number was paused.
    first = refused[0][0]
    assert all(at - first >= 60.0 or math.isclose(at, first) for at, _, _ in answered)
    assert handle.statistics().retried == len(refused)
    await store.close()
