"""The paced sender against a fake Graph enforcing 50 msg/s and the pair limit (trio's mock clock).

2,000 recipients complete with no 130429 and no recipient sent twice, on one
instance (SQLite) and on two instances sharing PostgreSQL. The fake Graph and the
app read trio's mock clock running five times faster than real time, so a
40-second broadcast takes about eight real seconds. (An autojump clock would leap
ahead whenever every task waits on a store thread, which is not how time passes
for a real sender.)
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
import trio
import trio.testing
from prometheus_client import CollectorRegistry

from svc.http import BroadcastOptions, create_app
from svc.store import PostgresStore, SqliteStore
from tests._support import GraphLimits, drop_run_schemas, new_run_prefix

from .conftest import AUTH, SECRETS, T0, profile

pytestmark = pytest.mark.slow

RATE = 50
PAIR_SEEDED = 100
REPEATS = 10


@pytest.fixture
def fast_clock() -> trio.testing.MockClock:
    """trio's clock for the test (pytest-trio uses a Clock fixture): 5x real time.

    Faster would make a store call slowed by a busy machine look like a sender seconds late.
    """
    return trio.testing.MockClock(rate=5)


def virtual_now() -> datetime:
    return T0 + timedelta(seconds=trio.current_time())


def limited_transport(limits: GraphLimits, seen: Counter[str], label: str) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        refused = limits.check(request.content, trio.current_time())
        if refused is not None:
            return httpx.Response(GraphLimits.status(refused), json=GraphLimits.error_body(refused))
        seen[label] += 1
        to = json.loads(request.content).get("to")
        return httpx.Response(
            200,
            json={
                "messaging_product": "whatsapp",
                "contacts": [{"input": to, "wa_id": to}],
                "messages": [{"id": f"wamid.{label}{seen[label]}"}],
            },
        )

    return httpx.MockTransport(handler)


def make(store: Any, transport: httpx.MockTransport) -> Any:
    return create_app(
        profile=profile.__wrapped__(),  # type: ignore[attr-defined]
        secrets=SECRETS,
        transport=transport,
        store=store,
        now=virtual_now,
        metrics_registry=CollectorRegistry(),
        broadcast_options=BroadcastOptions(rate_per_second=RATE),
    )


def phones() -> list[str]:
    unique = [f"1650{n:07d}" for n in range(2000)]
    return unique + unique[:REPEATS]


async def run_broadcast(apps: list[Any], limits: GraphLimits) -> dict[str, Any]:
    recipients = phones()
    async with apps[0].test_app() as first:
        client = first.test_client()
        if len(apps) == 2:
            async with apps[1].test_app():
                return await _drive(client, recipients, limits)
        return await _drive(client, recipients, limits)


async def _drive(client: Any, recipients: list[str], limits: GraphLimits) -> dict[str, Any]:
    limits.just_messaged.update(recipients[:PAIR_SEEDED])  # 131056 at their first send
    payload = {
        "message": {"type": "template", "name": "promo", "languageCode": "en"},
        "recipients": [{"to": who} for who in recipients],
    }
    response = await client.post(
        "/api/broadcasts", json=payload, headers={**AUTH, "Idempotency-Key": "big"}
    )
    assert response.status_code == 202
    bid = (await response.get_json())["broadcastId"]
    with trio.fail_after(600):  # virtual seconds
        while True:
            await trio.sleep(1)
            status: dict[str, Any] = await (
                await client.get(f"/api/broadcasts/{bid}", headers=AUTH)
            ).get_json()
            if status["state"] == "done":
                return status


def check_outcome(status: dict[str, Any], limits: GraphLimits) -> None:
    assert status["counts"] == {"queued": 0, "sent": 2000, "failed": 0, "skipped": REPEATS}
    assert limits.refused[130429] == 0
    # The pair limit was hit (each seeded recipient's first send) and backed off.
    assert limits.refused[131056] >= PAIR_SEEDED
    assert limits.duplicates() == {}
    assert len(limits.accepted) == 2000
    times = sorted(limits.accepted_times)
    # Paced at the limit: 2,000 sends take at least 2,000 / RATE seconds (give or take one
    # late first send), and the fake's one-second bucket never ran dry (no 130429 above).
    assert (len(times) - 1) / (times[-1] - times[0]) <= RATE * 1.05


async def test_2000_recipients_one_instance(fast_clock: trio.testing.MockClock) -> None:
    limits = GraphLimits(rate=RATE)
    seen: Counter[str] = Counter()
    store = SqliteStore(":memory:")
    await store.migrate()
    try:
        status = await run_broadcast([make(store, limited_transport(limits, seen, "A"))], limits)
    finally:
        await store.close()
    check_outcome(status, limits)


@pytest.fixture
async def shared_schema(postgres_url: str) -> AsyncIterator[tuple[str, str]]:
    schema = new_run_prefix("broadcast")
    yield postgres_url, schema
    drop_run_schemas(postgres_url, schema)


async def test_2000_recipients_two_instances_on_postgres(
    fast_clock: trio.testing.MockClock, shared_schema: tuple[str, str]
) -> None:
    url, schema = shared_schema
    limits = GraphLimits(rate=RATE)
    seen: Counter[str] = Counter()
    stores = [PostgresStore(url, schema=schema, min_size=1, max_size=4) for _ in range(2)]
    await stores[0].migrate()
    await stores[1].migrate()
    apps = [
        make(stores[0], limited_transport(limits, seen, "A")),
        make(stores[1], limited_transport(limits, seen, "B")),
    ]
    try:
        status = await run_broadcast(apps, limits)
    finally:
        for store in stores:
            await store.close()
    check_outcome(status, limits)
    assert seen["A"] > 0 and seen["B"] > 0  # both instances sent, together under the limit
