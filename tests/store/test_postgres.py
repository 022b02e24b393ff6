"""PostgreSQL specifics: cancellation, SKIP LOCKED, unreachable servers, redaction."""

from __future__ import annotations

import logging

import anyio.from_thread
import psycopg
import pytest
import trio

from svc.store import PersistenceError, PersistenceValidationError, PostgresStore

from .conftest import T0, Backend

pytestmark = pytest.mark.postgres


def _sleeping_backends(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE query LIKE %s AND state = 'active'"
            " AND pid <> pg_backend_pid()",
            ("%pg_sleep%",),
        ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.slow
async def test_cancellation_cancels_the_query_and_keeps_the_pool_healthy(pg: Backend) -> None:
    store = pg.open()
    assert isinstance(store, PostgresStore)
    await store.migrate()
    started = trio.Event()

    def on_start() -> None:
        anyio.from_thread.run_sync(started.set)

    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:

            async def canceller() -> None:
                await started.wait()
                scope.cancel()

            nursery.start_soon(canceller)
            await store._sleep_in_query(60, on_start=on_start)
    assert scope.cancelled_caught
    assert pg.url is not None
    assert _sleeping_backends(pg.url) == 0
    # Every pooled connection is usable: run more calls than the pool has connections.
    async with trio.open_nursery() as nursery:
        for i in range(30):
            nursery.start_soon(
                lambda i=i: store.record_webhook_event(
                    event_key=f"e{i}", event_hash="h", received_at=T0
                )
            )
    assert (await store.health()).ok


async def test_cancel_before_the_statement_rolls_back(pg: Backend) -> None:
    store = pg.open()
    await store.migrate()
    with trio.CancelScope() as scope:
        scope.cancel()
        await store.claim_service_request(idempotency_key="k", request_hash="h", created_at=T0)
    record = await store.get_service_request(idempotency_key="k")
    assert record is None or record.state == "pending"
    assert (await store.health()).ok


@pytest.mark.slow
async def test_skip_locked_gives_concurrent_workers_disjoint_items(pg: Backend) -> None:
    first, second = pg.open(), pg.open()
    await first.migrate()
    for i in range(60):
        await first.enqueue_outbox_item(id=f"o{i:02d}", payload_hash="p", created_at=T0)
    claimed: list[str] = []

    async def worker(store: PostgresStore) -> None:
        while batch := await store.claim_outbox_items(now=T0, limit=3):
            claimed.extend(item.id for item in batch)

    async with trio.open_nursery() as nursery:
        for store in (first, second, first, second):
            nursery.start_soon(worker, store)
    assert sorted(claimed) == [f"o{i:02d}" for i in range(60)]


async def test_unreachable_server_fails_without_echoing_the_dsn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    dsn = "postgresql://svc_secret_user:hunter2@127.0.0.1:1/secretdb?connect_timeout=2"
    store = PostgresStore(dsn, connect_timeout=2)
    caplog.set_level(logging.DEBUG)
    try:
        with pytest.raises(PersistenceError) as info:
            await store.migrate()
        assert info.value.code == "migration_failed"
        with pytest.raises(PersistenceError) as again:
            await store.count_outbox_pending()
        assert again.value.code == "query_failed"
        health = await store.health()
        assert not health.ok
    finally:
        await store.close()
    texts = [str(info.value), repr(info.value), str(again.value), repr(store), repr(health)]
    texts += [record.getMessage() for record in caplog.records]
    for text in texts:
        for secret in ("hunter2", "svc_secret_user", "secretdb", dsn):
            assert secret not in text


@pytest.mark.parametrize(
    ("dsn", "kwargs"),
    [
        ("", {}),
        ("postgresql://x@127.0.0.1/unterminated\ud800", {}),
        ("postgresql://x@127.0.0.1/db", {"schema": "Bad-Schema"}),
        ("postgresql://x@127.0.0.1/db", {"schema": "x; drop"}),
        ("postgresql://x@127.0.0.1/db", {"min_size": 5, "max_size": 2}),
        ("host=127.0.0.1 password='unterminated", {}),
        ("postgresql://x@127.0.0.1/db", {"pool_timeout": 0}),
        ("postgresql://x@127.0.0.1/db", {"reconnect_interval": -1.0}),
        ("postgresql://x@127.0.0.1/db", {"connect_timeout": "5"}),
        ("postgresql://x@127.0.0.1/db", {"pool_timeout": True}),
        ("postgresql://x@127.0.0.1/db", {"connect_timeout": 1e300}),
        ("postgresql://x@127.0.0.1/db", {"min_size": True}),
        ("postgresql://x@127.0.0.1/db", {"max_size": True}),
        ("postgresql://x@127.0.0.1/db", {"pool_timeout": float("inf")}),
    ],
)
def test_bad_options_are_refused(dsn: str, kwargs: dict) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        PostgresStore(dsn, **kwargs)
    assert info.value.code == "invalid_options"
    assert "unterminated" not in str(info.value)


def test_pool_log_redaction_filter() -> None:
    from svc.store.postgres._engine import _RedactPoolLog

    record = logging.LogRecord(
        "psycopg.pool",
        logging.WARNING,
        __file__,
        1,
        "error connecting in %r: %s",
        ("svc-store-1", psycopg.OperationalError("host=10.0.0.1 password=hunter2")),
        None,
    )
    assert _RedactPoolLog().filter(record)
    assert "hunter2" not in record.getMessage() and "svc-store-1" in record.getMessage()
