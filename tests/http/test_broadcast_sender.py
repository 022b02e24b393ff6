"""The sender's decisions (sans-IO) and its loop: retries, number-wide backoff, stop releases."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import pytest
import trio
import trio.testing

from svc.graph import GraphNetworkError
from svc.graph._error_codes import api_error_from_response
from svc.http._broadcast_sender import (
    BroadcastOptions,
    backoff_seconds,
    decide,
    run_broadcast_sender,
)
from svc.store import BroadcastRecipientInput, SqliteStore

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


async def test_rate_limit_pushes_the_number_back_and_retries(
    autojump_clock: trio.testing.MockClock,
) -> None:
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
            for p in ("1", "2")
        ],
        created_at=now(),
    )
    posted: list[tuple[float, str]] = []

    async def post(number: str, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        assert number == NUMBER
        posted.append((trio.current_time(), payload["to"]))
        if len(posted) == 1:
            raise error(130429, 429, retry_after="5")
        return {"messages": [{"id": f"wamid.{len(posted)}"}]}

    options = BroadcastOptions(rate_per_second=10, now=now, random=lambda: 0.0)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_broadcast_sender, store, post, (NUMBER,), options)
        while (status := await store.get_broadcast(id="b")) is None or status.state != "done":
            await trio.sleep(0.5)
        await handle.stop()
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
    store = SqliteStore(":memory:")
    await store.migrate()
    now = lambda: T0 + timedelta(seconds=trio.current_time())  # noqa: E731
    await store.create_broadcast(
        id="b",
        request_key="k",
        request_hash="h",
        phone_number_id=NUMBER,
        recipients=[
            BroadcastRecipientInput(recipient=str(n), payload_json=json.dumps({"to": str(n)}))
            for n in range(20)
        ],
        created_at=now(),
    )
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
            for p in ("1", "2")
        ],
        created_at=now(),
    )

    async def post(number: str, payload: Mapping[str, Any]) -> Mapping[str, Any]:
        if payload["to"] == "1":
            raise RuntimeError("a bug")
        return {"messages": [{"id": "wamid.2"}]}

    options = BroadcastOptions(rate_per_second=10, lease=5, now=now)
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_broadcast_sender, store, post, (NUMBER,), options)
        while (status := await store.get_broadcast(id="b")) is None or status.state != "done":
            await trio.sleep(0.5)
        await handle.stop()
    assert (status.sent, status.failed) == (1, 1)
    assert dict(status.failed_by_code) == {"interrupted": 1}
    assert handle.statistics().errors == 1
    await store.close()
