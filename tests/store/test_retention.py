"""Retention: ``prune`` on every adapter, and the ``run_retention`` loop."""

from __future__ import annotations

from datetime import timedelta

import pytest
import trio

from svc.store import (
    MessageRecord,
    PersistenceValidationError,
    PruneReport,
    RetentionOptions,
    WebhookEventResult,
    prune_once,
    run_retention,
)

from .conftest import T0, AnyStore

OLD = T0 - timedelta(days=30)
HORIZON = T0 - timedelta(days=14)


def _message(row_id: str, at: object) -> MessageRecord:
    return MessageRecord(
        row_id=row_id,
        wa_message_id=f"wamid.{row_id}",
        direction="inbound",
        from_phone="15551234567",
        type="text",
        status="received",
        created_at=at,  # type: ignore[arg-type]
        updated_at=at,  # type: ignore[arg-type]
    )


async def _seed(store: AnyStore) -> None:
    for n in range(5):
        await store.record_webhook_event(event_key=f"old-{n}", event_hash="h", received_at=OLD)
    await store.record_webhook_event(event_key="new", event_hash="h", received_at=T0)
    # Completed (a send and a refusal), pending (kept however old), and a recent one.
    for key, status in (("done", None), ("refused", 502)):
        await store.claim_service_request(idempotency_key=key, request_hash="h", created_at=OLD)
        await store.complete_service_request(
            idempotency_key=key,
            request_hash="h",
            response_json="{}",
            created_at=OLD,
            response_status=status,
        )
    await store.claim_service_request(idempotency_key="pending", request_hash="h", created_at=OLD)
    await store.claim_service_request(idempotency_key="recent", request_hash="h", created_at=T0)
    await store.complete_service_request(
        idempotency_key="recent", request_hash="h", response_json="{}", created_at=T0
    )
    for item_id in ("ok", "dead", "waiting"):
        await store.enqueue_outbox_item(id=item_id, payload_hash="h", created_at=OLD)
    leases = {i.id: i.lease_id or "" for i in await store.claim_outbox_items(now=OLD, limit=10)}
    await store.mark_outbox_item_succeeded(id="ok", lease_id=leases["ok"], now=OLD)
    await store.mark_outbox_item_dead(id="dead", lease_id=leases["dead"], now=OLD)
    await store.mark_outbox_item_failed(
        id="waiting", lease_id=leases["waiting"], now=OLD, retry_delay_ms=0
    )
    await store.record_message(_message("m-old", OLD))
    await store.record_message(_message("m-new", T0))
    await store.append_message_status(wa_message_id="wamid.m-old", status="read", timestamp=OLD)


async def test_prune_deletes_what_is_past_the_horizon_in_small_batches(store: AnyStore) -> None:
    await _seed(store)
    report = await store.prune(older_than=HORIZON, batch_size=2)
    assert report == PruneReport(webhook_events=5, service_requests=2, outbox_items=1)
    assert report.total == 8
    assert await store.get_service_request(idempotency_key="pending") is not None
    assert await store.get_service_request(idempotency_key="recent") is not None
    assert await store.get_service_request(idempotency_key="done") is None
    assert {i.id for i in await store.list_outbox_items()} == {"dead", "waiting"}
    # Messages are kept unless asked.
    assert await store.get_message(wa_message_id="wamid.m-old") is not None
    assert await store.prune(older_than=HORIZON) == PruneReport()
    again = await store.prune(older_than=HORIZON, messages_older_than=HORIZON)
    assert again == PruneReport(messages=1, status_events=1)
    assert await store.get_message(wa_message_id="wamid.m-old") is None
    assert await store.get_message(wa_message_id="wamid.m-new") is not None


async def test_a_redelivery_older_than_the_horizon_is_new_after_pruning(store: AnyStore) -> None:
    await store.record_webhook_event(event_key="k", event_hash="h", received_at=OLD)
    again = await store.record_webhook_event(event_key="k", event_hash="h", received_at=T0)
    assert again is WebhookEventResult.DUPLICATE
    await store.prune(older_than=HORIZON)
    after = await store.record_webhook_event(event_key="k", event_hash="h", received_at=T0)
    assert after is WebhookEventResult.RECORDED


async def test_a_horizon_longer_than_all_time_keeps_everything(store: AnyStore) -> None:
    await _seed(store)
    forever = timedelta(days=999_999_999)
    options = RetentionOptions(older_than=forever, messages_older_than=forever, now=lambda: T0)
    assert await prune_once(store, options) == PruneReport()


async def test_prune_arguments_are_checked(store: AnyStore) -> None:
    with pytest.raises(PersistenceValidationError):
        await store.prune(older_than=HORIZON, batch_size=0)
    with pytest.raises(PersistenceValidationError):
        await store.prune(older_than="yesterday")  # type: ignore[arg-type]


class _PruneCounter:
    """A store whose ``prune`` records its cutoffs (the loop's only call)."""

    def __init__(self) -> None:
        self.cutoffs: list[object] = []

    async def prune(self, **kwargs: object) -> PruneReport:
        self.cutoffs.append((kwargs["older_than"], kwargs["messages_older_than"]))
        return PruneReport(webhook_events=1)


async def test_run_retention_prunes_at_start_then_every_interval(autojump_clock: object) -> None:
    store = _PruneCounter()
    reports: list[PruneReport] = []
    start = trio.current_time()
    options = RetentionOptions(
        older_than=timedelta(days=14),
        messages_older_than=timedelta(days=90),
        interval=3600,
        now=lambda: T0 + timedelta(seconds=trio.current_time() - start),
        on_report=reports.append,
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(run_retention, store, options)
        await trio.sleep(2 * 3600 + 1)
        nursery.cancel_scope.cancel()
    assert store.cutoffs == [
        (T0 + timedelta(hours=h) - timedelta(days=14), T0 + timedelta(hours=h) - timedelta(days=90))
        for h in range(3)
    ]
    assert len(reports) == 3


@pytest.mark.parametrize(
    "kwargs",
    [
        {"older_than": timedelta(0)},
        {"older_than": 5},
        {"older_than": timedelta(days=1), "messages_older_than": timedelta(seconds=-1)},
        {"older_than": timedelta(days=1), "interval": 0},
        {"older_than": timedelta(days=1), "batch_size": 0},
    ],
)
def test_retention_options_are_validated(kwargs: dict[str, object]) -> None:
    with pytest.raises(PersistenceValidationError):
        RetentionOptions(**kwargs)  # type: ignore[arg-type]
