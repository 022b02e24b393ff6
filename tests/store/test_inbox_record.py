"""Inbox rows recorded with a delivery: the rows of the keys the call records new, in order,
in the same commit as the keys (every adapter, the writer processes included)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import trio
import trio.testing

from svc.store import (
    InboxRow,
    PersistenceError,
    PersistenceValidationError,
    SqliteStore,
    StatusEvent,
    UpdatesRecorded,
    WebhookEventResult,
)

from .conftest import T0, AnyStore, Backend
from .test_contract import _install_status_fault
from .test_postgres_batch import _open, _queue_behind_a_blocked_batch
from .test_sqlite import _held_first_call, _open_when_queued


def row(key: str, queue: str = "q1", sealed: bytes = b"\x00sealed") -> InboxRow:
    return InboxRow(
        update_key=key,
        queue_key=queue,
        phone_number_id="106540352242922",
        kind="message",
        sealed=sealed,
    )


async def inbox(store: AnyStore) -> list[tuple[object, ...]]:
    """The inbox rows in id order: key, queue, number, kind, sealed, status, attempts, due."""
    return await store._call(
        "query_failed",
        lambda s: s.fetchall(
            "SELECT update_key, queue_key, phone_number_id, kind, sealed, status, attempts,"
            " next_attempt_at FROM svc_inbox ORDER BY id"
        ),
        write=False,
    )


async def keys(store: AnyStore) -> list[str]:
    rows = await store._call(
        "query_failed",
        lambda s: s.fetchall("SELECT update_key FROM svc_webhook_updates ORDER BY 1"),
        write=False,
    )
    return [str(r[0]) for r in rows]


MS = int(T0.timestamp() * 1000)


async def test_rows_of_new_keys_go_in_with_the_delivery_in_order(store: AnyStore) -> None:
    first = await store.record_webhook_updates(
        event_key="d1",
        event_hash="h",
        received_at=T0,
        update_keys=["u2", "u1", "u3"],
        # u9 is none of the call's keys: left out.
        inbox=[row("u2", sealed=b"\xff2"), row("u9"), row("u1", queue="q2", sealed=b"\xff1")],
    )
    assert first.new == ("u2", "u1", "u3")
    assert await inbox(store) == [
        ("u2", "q1", "106540352242922", "message", b"\xff2", "pending", 0, MS),
        ("u1", "q2", "106540352242922", "message", b"\xff1", "pending", 0, MS),
    ]
    # A redelivery (and a regrouped copy with a new key) adds only the new key's row.
    later = T0 + timedelta(seconds=5)
    again = await store.record_webhook_updates(
        event_key="d1",
        event_hash="h",
        received_at=later,
        update_keys=["u2", "u1", "u4"],
        inbox=[row("u2", sealed=b"\xee"), row("u1"), row("u4", sealed=b"\xff4")],
    )
    assert again == UpdatesRecorded(event=WebhookEventResult.DUPLICATE, new=("u4",))
    assert [(r[0], r[4], r[7]) for r in await inbox(store)] == [
        ("u2", b"\xff2", MS),
        ("u1", b"\xff1", MS),
        ("u4", b"\xff4", MS + 5000),
    ]


async def test_a_duplicate_delivery_adds_no_row(store: AnyStore) -> None:
    call = {
        "event_key": "d1",
        "event_hash": "h",
        "received_at": T0,
        "update_keys": ["u1"],
        "inbox": [row("u1")],
    }
    assert (await store.record_webhook_updates(**call)).new == ("u1",)  # type: ignore[arg-type]
    for _ in range(2):
        assert (await store.record_webhook_updates(**call)).new == ()  # type: ignore[arg-type]
    assert len(await inbox(store)) == 1


async def test_a_key_recorded_before_adds_no_row(store: AnyStore) -> None:
    """Only a key the call records new brings its row: one recorded by an earlier delivery
    (without a row: it had no handler then) does not, however late it comes again."""
    await store.record_webhook_updates(
        event_key="d1", event_hash="h", received_at=T0, update_keys=["u1"]
    )
    again = await store.record_webhook_updates(
        event_key="d2",
        event_hash="h",
        received_at=T0 + timedelta(minutes=5),
        update_keys=["u1"],
        inbox=[row("u1")],
    )
    assert again == UpdatesRecorded(event=WebhookEventResult.RECORDED)
    assert await inbox(store) == []


async def test_a_key_already_in_the_inbox_keeps_its_row(store: AnyStore) -> None:
    """A pending item outlives its pruned update key: the key is new again, the row stays."""
    old = T0 - timedelta(days=30)
    await store.record_webhook_updates(
        event_key="d1",
        event_hash="h",
        received_at=old,
        update_keys=["u1"],
        inbox=[row("u1", sealed=b"\x01old")],
    )
    await store.prune(older_than=T0 - timedelta(days=14))
    again = await store.record_webhook_updates(
        event_key="d1",
        event_hash="h",
        received_at=T0,
        update_keys=["u1"],
        inbox=[row("u1", sealed=b"\x02new")],
    )
    assert again.new == ("u1",)
    assert [(r[0], r[4]) for r in await inbox(store)] == [("u1", b"\x01old")]


async def test_a_failing_delivery_leaves_neither_keys_nor_rows(store: AnyStore) -> None:
    await _install_status_fault(store)
    outcomes: dict[str, object] = {}

    async def deliver(name: str, status: str) -> None:
        try:
            outcomes[name] = await store.record_webhook_updates(
                event_key=name,
                event_hash="h",
                received_at=T0,
                update_keys=[f"{name}-u"],
                statuses=[StatusEvent(wa_message_id="wamid.x", status=status, timestamp=T0)],
                inbox=[row(f"{name}-u")],
            )
        except PersistenceError as exc:
            outcomes[name] = exc

    async with trio.open_nursery() as nursery:
        nursery.start_soon(deliver, "bad", "explode")
        nursery.start_soon(deliver, "good", "read")
    assert isinstance(outcomes["bad"], PersistenceError)
    assert isinstance(outcomes["good"], UpdatesRecorded)
    assert await keys(store) == ["good-u"]
    assert [r[0] for r in await inbox(store)] == ["good-u"]


@pytest.mark.parametrize(
    "rows",
    [
        "u1",
        [("u1", "q", None, "message", b"x")],
        [row("u1", sealed=b"")],
        [InboxRow(update_key="u1", queue_key="q", phone_number_id=None, kind="m", sealed="x")],  # type: ignore[arg-type]
        [row("")],
        [row("u1", queue="")],
        [InboxRow(update_key="u1", queue_key="q", phone_number_id="", kind="m", sealed=b"x")],
        [InboxRow(update_key="u1", queue_key="q", phone_number_id=None, kind="", sealed=b"x")],
    ],
)
async def test_invalid_inbox_rows_are_refused_before_io(store: AnyStore, rows: object) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        await store.record_webhook_updates(
            event_key="d",
            event_hash="h",
            received_at=T0,
            update_keys=["u1"],
            inbox=rows,  # type: ignore[arg-type]
        )
    assert info.value.code == "invalid_record"
    assert await keys(store) == [] and await inbox(store) == []


def test_an_inbox_row_never_shows_its_sealed_update() -> None:
    assert "secret" not in repr(row("u1", sealed=b"secret"))


# --- deliveries sharing one group commit


def _together(name: str, update_keys: list[str], sealed: bytes) -> dict[str, object]:
    return {
        "event_key": name,
        "event_hash": "h",
        "received_at": T0,
        "update_keys": update_keys,
        "inbox": [row(k, sealed=sealed) for k in update_keys],
    }


EXPECTED = [("u1", b"a"), ("u2", b"a"), ("u3", b"b")]


async def test_two_deliveries_of_one_batch_sharing_a_key_make_one_row_sqlite(
    tmp_path: object,
) -> None:
    store = SqliteStore(":memory:")
    await store.migrate()
    gate = threading.Event()
    answers: dict[str, object] = {}

    async def deliver(name: str, update_keys: list[str], sealed: bytes) -> None:
        answers[name] = await store.record_webhook_updates(**_together(name, update_keys, sealed))  # type: ignore[arg-type]

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_held_first_call, store, gate)
            while not store._writers.thread._drains:
                await trio.lowlevel.checkpoint()
            nursery.start_soon(deliver, "a", ["u1", "u2"], b"a")
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(deliver, "b", ["u2", "u3"], b"b")
            nursery.start_soon(_open_when_queued, store, gate, 2)
        assert [(r[0], r[4]) for r in await inbox(store)] == EXPECTED
        assert answers["b"] == UpdatesRecorded(
            event=WebhookEventResult.RECORDED, new=("u3",)
        )
    finally:
        await store.close()


@pytest.mark.postgres
async def test_two_deliveries_of_one_batch_sharing_a_key_make_one_row_postgres(
    pg: Backend,
) -> None:
    store = await _open(pg)
    assert pg.url is not None
    answers: dict[str, object] = {}

    async def deliver(name: str, update_keys: list[str], sealed: bytes) -> None:
        answers[name] = await store.record_webhook_updates(**_together(name, update_keys, sealed))  # type: ignore[arg-type]

    async with trio.open_nursery() as nursery:
        blocker = await _queue_behind_a_blocked_batch(store, pg.url, nursery)
        nursery.start_soon(deliver, "a", ["u1", "u2"], b"a")
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(deliver, "b", ["u2", "u3"], b"b")
        await trio.testing.wait_all_tasks_blocked()
        assert store._engine.queued == 2  # both wait for the same next batch
        await trio.to_thread.run_sync(blocker.release)
    assert [(r[0], r[4]) for r in await inbox(store)] == EXPECTED
    assert answers["b"] == UpdatesRecorded(
        event=WebhookEventResult.RECORDED, new=("u3",)
    )
