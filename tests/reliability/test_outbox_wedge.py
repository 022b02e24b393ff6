"""The outbox on a real store cannot wedge: a hung and a failing handler beside good items.

Each tick is ``run_outbox_worker_once`` at an explicit ``now``; the hung
handler's 30 s timeout passes by a jump of trio's mock clock (an autojump clock
would race the store's worker threads).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import trio
import trio.testing

from svc.store import (
    OutboxItem,
    OutboxReport,
    OutboxStatus,
    PersistenceStore,
    PostgresStore,
    SqliteStore,
    run_outbox_worker_once,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
GOOD = [f"good-{n}" for n in range(5)]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def real_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[PersistenceStore]:
    store: SqliteStore | PostgresStore
    if request.param == "sqlite":
        store = SqliteStore(tmp_path / "outbox.db")
    else:
        dsn, _ = request.getfixturevalue("pg_schema")
        store = PostgresStore(dsn)
    await store.migrate()
    try:
        yield store
    finally:
        await store.close()


async def test_hung_and_failing_items_never_hold_up_the_others(
    real_store: PersistenceStore, mock_clock: trio.testing.MockClock
) -> None:
    store = real_store
    for item_id in [*GOOD, "hung", "bad"]:
        await store.enqueue_outbox_item(id=item_id, payload_hash="h", created_at=T0)
    delivered: dict[str, float] = {}
    calls: dict[str, int] = {"hung": 0, "bad": 0}
    hung_entered = trio.Event()

    async def handler(item: OutboxItem) -> None:
        if item.id == "hung":
            calls["hung"] += 1
            hung_entered.set()
            await trio.sleep_forever()
        if item.id == "bad":
            calls["bad"] += 1
            raise RuntimeError("upstream said no")
        delivered[item.id] = trio.current_time()

    async def tick(now: datetime) -> OutboxReport:
        """One worker tick; the hung handler's 30 s timeout passes by a clock jump."""
        nonlocal hung_entered
        hung_entered = trio.Event()
        result: list[OutboxReport] = []

        async def run() -> None:
            result.append(
                await run_outbox_worker_once(
                    store,
                    now=now,
                    limit=10,
                    retry_delay_ms=2000,
                    handler=handler,
                    max_attempts=3,
                    handler_timeout=30.0,
                    max_retry_delay_ms=8000,
                )
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            await _jump_when_hung(hung_entered, mock_clock, result)
        return result[0]

    first = await tick(T0)
    # Every good item went out at once, before the hung handler's timeout passed.
    assert set(delivered) == set(GOOD)
    assert set(delivered.values()) == {0.0}
    assert first == OutboxReport(
        processed=7, succeeded=5, failed=2, pending=2, timed_out=1, dead=0, dead_depth=0
    )
    # Backoff: 2 s after the first failure, 4 s after the second, then dead.
    items = {i.id: i for i in await store.list_outbox_items()}
    assert (
        items["bad"].next_attempt_at == items["hung"].next_attempt_at == T0 + timedelta(seconds=2)
    )
    assert (await tick(T0 + timedelta(seconds=1))).processed == 0
    second = await tick(T0 + timedelta(seconds=2))
    assert second.processed == 2 and second.dead == 0
    items = {i.id: i for i in await store.list_outbox_items()}
    assert items["bad"].next_attempt_at == T0 + timedelta(seconds=6)
    third = await tick(T0 + timedelta(seconds=6))
    assert third.dead == 2 and third.dead_depth == 2 and third.timed_out == 1
    assert calls == {"hung": 3, "bad": 3}
    dead = {i.id: i for i in await store.list_outbox_items(status=OutboxStatus.DEAD)}
    assert dead["hung"].last_error == "timeout" and dead["bad"].last_error == "RuntimeError"
    assert await store.count_outbox_items(status=OutboxStatus.SUCCEEDED) == len(GOOD)
    # A dead item is never claimed again, until an operator retries it.
    later = T0 + timedelta(days=1)
    assert await store.claim_outbox_items(now=later, limit=10) == []
    retried = await store.retry_outbox_item(id="bad", now=later)
    assert retried is not None and retried.attempts == 0
    assert [i.id for i in await store.claim_outbox_items(now=later, limit=10)] == ["bad"]


async def _jump_when_hung(
    entered: trio.Event, clock: trio.testing.MockClock, done: list[OutboxReport]
) -> None:
    """Once the hung handler runs, pass its timeout; return early when the tick ends first."""
    while not done and not entered.is_set():
        await trio.testing.wait_all_tasks_blocked()
        await trio.lowlevel.checkpoint()
    if entered.is_set():
        clock.jump(30)
