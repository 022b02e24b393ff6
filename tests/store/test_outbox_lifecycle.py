"""The outbox cannot wedge: per-item timeout, backoff with jitter, dead items, retry, metrics."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import httpx
import pytest
import trio
from prometheus_client import CollectorRegistry

from svc.graph import GraphClient
from svc.store import (
    OutboxItem,
    OutboxReport,
    OutboxReporter,
    OutboxStatus,
    OutboxWorkerOptions,
    PersistenceValidationError,
    run_outbox_worker,
    run_outbox_worker_once,
)
from svc.store._leases import retry_delay_for

from ._fake_outbox import FakeOutboxStore
from .conftest import T0, AnyStore


def test_backoff_doubles_per_attempt_up_to_the_cap_and_jitter_spreads_it() -> None:
    delays = [
        retry_delay_for(n, retry_delay_ms=1000, max_retry_delay_ms=10_000, jitter=None)
        for n in range(1, 7)
    ]
    assert delays == [1000, 2000, 4000, 8000, 10_000, 10_000]
    low = retry_delay_for(3, retry_delay_ms=1000, max_retry_delay_ms=10_000, jitter=lambda: 0.0)
    high = retry_delay_for(3, retry_delay_ms=1000, max_retry_delay_ms=10_000, jitter=lambda: 0.5)
    assert (low, high) == (2000, 3000)


async def test_a_hung_handler_times_out_without_holding_up_the_others(
    autojump_clock: object,
) -> None:
    store = FakeOutboxStore()
    store.enqueue("hung", "ok", at=T0)
    finished: list[str] = []

    async def handler(item: OutboxItem) -> None:
        if item.id == "hung":
            await trio.sleep_forever()
        finished.append(f"{item.id}@{trio.current_time():.0f}")

    start = trio.current_time()
    report = await run_outbox_worker_once(
        store, now=T0, limit=10, retry_delay_ms=1000, handler=handler, handler_timeout=30
    )
    assert finished == [f"ok@{start:.0f}"]  # done at once, not after the hung one's timeout
    assert trio.current_time() - start == pytest.approx(30)
    assert report == OutboxReport(processed=2, succeeded=1, failed=1, pending=1, timed_out=1)
    hung = store.items["hung"]
    assert hung.status is OutboxStatus.PENDING and hung.last_error == "timeout"
    assert hung.next_attempt_at == T0 + timedelta(seconds=1)


async def test_a_failing_item_backs_off_then_dies_and_is_never_claimed_again() -> None:
    store = FakeOutboxStore()
    store.enqueue("bad", at=T0)
    calls: list[int] = []

    async def handler(item: OutboxItem) -> None:
        calls.append(item.attempts)
        raise ValueError("never shown")

    now, due = T0, []
    for _ in range(3):
        report = await run_outbox_worker_once(
            store,
            now=now,
            limit=10,
            retry_delay_ms=1000,
            handler=handler,
            max_attempts=3,
            max_retry_delay_ms=60_000,
            jitter=lambda: 0.5,
        )
        due.append(store.items["bad"].next_attempt_at - now)
        now = store.items["bad"].next_attempt_at
    assert calls == [1, 2, 3]
    # Equal jitter at 0.5: three quarters of 1 s, then of 2 s; the third failure buries it.
    assert due[:2] == [timedelta(milliseconds=750), timedelta(milliseconds=1500)]
    assert report.dead == 1 and report.dead_depth == 1 and report.failed == 1
    bad = store.items["bad"]
    assert bad.status is OutboxStatus.DEAD and bad.last_error == "ValueError"
    later = await run_outbox_worker_once(
        store,
        now=now + timedelta(days=1),
        limit=10,
        retry_delay_ms=1000,
        handler=handler,
        max_attempts=3,
    )
    assert later.processed == 0 and calls == [1, 2, 3]


OUTCOMES: dict[str, httpx.Response | Exception] = {
    "undeliverable": httpx.Response(400, json={"error": {"code": 131026}}),
    "bad-parameter": httpx.Response(400, json={"error": {"code": 131009}}),
    "no-code": httpx.Response(400, text="bad request"),
    "upgrade": httpx.Response(400, json={"error": {"code": 131057}}),
    "rate": httpx.Response(429, headers={"Retry-After": "120"}, json={"error": {"code": 4}}),
    "token": httpx.Response(401, json={"error": {"code": 190}}),
    "outage": httpx.Response(500, json={"error": {"code": 131000}}),
    "refused": httpx.ConnectError("connection refused"),
    "lost": httpx.ReadTimeout("sent, no answer"),
}


async def test_a_graph_error_is_read_by_its_retry_hint() -> None:
    """Through the real Graph client and a fake Graph: fix_request and do_not_retry bury the
    item at once, retry_later waits at least the hint's wait, the rest back off as any failure."""
    store = FakeOutboxStore()
    store.enqueue(*OUTCOMES, at=T0)

    def graph(request: httpx.Request) -> httpx.Response:
        answer = OUTCOMES[request.url.params["item"]]
        if isinstance(answer, Exception):
            raise answer
        return answer

    client = GraphClient(access_token="EAAG-token", transport=httpx.MockTransport(graph))

    async def handler(item: OutboxItem) -> None:
        await client.request("POST", "/1/messages", query={"item": item.id}, json={})

    report = await run_outbox_worker_once(
        store,
        now=T0,
        limit=20,
        retry_delay_ms=1000,
        handler=handler,
        max_attempts=10,
        jitter=None,
    )
    await client.aclose()
    assert (report.processed, report.failed, report.dead) == (9, 9, 3)
    seen = {
        item.id: (item.status, item.last_error, item.next_attempt_at - T0)
        for item in store.items.values()
    }
    second = timedelta(seconds=1)
    assert seen == {
        "undeliverable": (OutboxStatus.DEAD, "MessageUndeliverableError", timedelta(0)),
        "bad-parameter": (OutboxStatus.DEAD, "InvalidParameterError", timedelta(0)),
        "no-code": (OutboxStatus.DEAD, "GraphApiError", timedelta(0)),
        "upgrade": (OutboxStatus.PENDING, "AccountInMaintenanceModeError", 60 * second),
        "rate": (OutboxStatus.PENDING, "ToManyAPICallsError", 120 * second),
        "token": (OutboxStatus.PENDING, "ExpiredAccessTokenError", second),
        "outage": (OutboxStatus.PENDING, "SomethingWentWrongError", second),
        "refused": (OutboxStatus.PENDING, "GraphNetworkError", second),
        "lost": (OutboxStatus.PENDING, "GraphNetworkError", second),
    }


async def test_an_item_claimed_past_its_attempts_is_buried_without_running() -> None:
    store = FakeOutboxStore()
    store.enqueue("loop", at=T0)
    store.items["loop"] = dataclasses.replace(store.items["loop"], attempts=3)
    ran: list[str] = []

    async def handler(item: OutboxItem) -> None:
        ran.append(item.id)

    report = await run_outbox_worker_once(
        store, now=T0, limit=10, retry_delay_ms=1000, handler=handler, max_attempts=3
    )
    assert ran == [] and report.dead == 1
    assert store.items["loop"].last_error == "attempts_exhausted"


def test_reporter_counts_timeouts_and_dead_items() -> None:
    registry = CollectorRegistry()
    reporter = OutboxReporter(registry, adapter="sqlite")
    reporter(
        OutboxReport(
            processed=3, succeeded=1, failed=2, pending=0, timed_out=1, dead=1, dead_depth=4
        )
    )

    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    assert value("outbox_processed_total", outcome="timeout") == 1
    assert value("outbox_processed_total", outcome="dead") == 1
    assert value("outbox_processed_total", outcome="error") == 2
    assert value("outbox_depth", adapter="sqlite", state="dead") == 4


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_attempts": 0},
        {"max_attempts": True},
        {"handler_timeout": 0},
        {"handler_timeout": 301},
        {"max_retry_delay": 1.0, "retry_delay": 2.0},
        {"jitter": 3},
    ],
)
def test_new_options_are_validated(kwargs: dict[str, object]) -> None:
    async def handler(item: OutboxItem) -> None:
        return None

    with pytest.raises(PersistenceValidationError):
        OutboxWorkerOptions(handler=handler, **kwargs)  # type: ignore[arg-type]


async def test_dead_items_are_listed_and_retried_on_every_adapter(store: AnyStore) -> None:
    await store.enqueue_outbox_item(id="a", payload_hash="h", created_at=T0)
    await store.enqueue_outbox_item(id="b", payload_hash="h", created_at=T0)
    claimed = {i.id: i for i in await store.claim_outbox_items(now=T0, limit=10)}
    assert await store.mark_outbox_item_dead(
        id="a", lease_id=claimed["a"].lease_id or "", now=T0, error="RuntimeError"
    )
    assert not await store.mark_outbox_item_dead(id="a", lease_id="stale", now=T0)
    assert await store.mark_outbox_item_failed(
        id="b", lease_id=claimed["b"].lease_id or "", now=T0, retry_delay_ms=5, error="timeout"
    )
    dead = await store.list_outbox_items(status=OutboxStatus.DEAD)
    assert [(i.id, i.status, i.last_error, i.attempts) for i in dead] == [
        ("a", OutboxStatus.DEAD, "RuntimeError", 1)
    ]
    assert {i.id for i in await store.list_outbox_items()} == {"a", "b"}
    assert await store.count_outbox_items(status="dead") == 1
    # A dead item is never claimed, however late.
    later = T0 + timedelta(days=30)
    assert [i.id for i in await store.claim_outbox_items(now=later, limit=10)] == ["b"]
    assert await store.retry_outbox_item(id="b", now=later) is None  # not dead
    assert await store.retry_outbox_item(id="missing", now=later) is None
    retried = await store.retry_outbox_item(id="a", now=later)
    assert retried is not None and retried.status is OutboxStatus.PENDING
    assert retried.attempts == 0 and retried.next_attempt_at == later
    assert [i.id for i in await store.claim_outbox_items(now=later, limit=10)] == ["a"]
    with pytest.raises(PersistenceValidationError):
        await store.list_outbox_items(status="zombie")


async def test_ticks_overlap_so_a_hung_handler_never_holds_up_later_items(
    autojump_clock: object,
) -> None:
    store = FakeOutboxStore()
    start = trio.current_time()
    store.enqueue("hung", at=T0)
    store.enqueue("late", at=T0 + timedelta(seconds=5))
    handled: dict[str, float] = {}

    async def handler(item: OutboxItem) -> None:
        handled[item.id] = trio.current_time() - start
        if item.id == "hung":
            await trio.sleep_forever()

    options = OutboxWorkerOptions(
        handler=handler,
        interval=1.0,
        handler_timeout=100.0,
        now=lambda: T0 + timedelta(seconds=trio.current_time() - start),
    )
    async with trio.open_nursery() as nursery:
        handle = await nursery.start(run_outbox_worker, store, options)
        await trio.sleep(10)
        assert handled == {"hung": 1.0, "late": 5.0}
        assert store.items["late"].status is OutboxStatus.SUCCEEDED
        await trio.sleep(100)
        await handle.stop()
    assert store.items["hung"].last_error == "timeout"
