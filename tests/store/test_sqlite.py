"""SQLite specifics: filenames, asyncio compatibility, claims across OS processes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest
import trio

from svc.store import (
    SCHEMA_VERSION,
    Claimed,
    PersistenceError,
    PersistenceValidationError,
    SqliteStore,
    UpdatesRecorded,
)
from svc.store._commit import MAX_BATCH
from svc.store._kinds import DeliveryWrite, Kind

from .conftest import T0, message_row

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "bad", ["", "   ", "a\x00b", "bad\nname.db", "bad\udcffname.db", 42, None, b"x.db"]
)
def test_unsafe_filenames_are_refused_without_echo(bad: object) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        SqliteStore(bad)  # type: ignore[arg-type]
    assert info.value.code == "invalid_filename"
    if isinstance(bad, str) and bad.strip():
        assert bad not in str(info.value)


def test_a_directory_is_not_a_filename(tmp_path: Path) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        SqliteStore(tmp_path)
    assert info.value.code == "invalid_filename"
    assert str(tmp_path) not in str(info.value)


async def test_file_store_uses_wal_and_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "wal.db"
    store = SqliteStore(path)
    await store.migrate()
    await store.claim_service_request(idempotency_key="k", request_hash="h", created_at=T0)
    await store.close()
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        conn.close()
    reopened = SqliteStore(path)
    try:
        assert await reopened.migrate() == SCHEMA_VERSION
        record = await reopened.get_service_request(idempotency_key="k")
        assert record is not None and record.state == "pending"
    finally:
        await reopened.close()


def test_runs_under_asyncio_too(tmp_path: Path) -> None:
    async def main() -> object:
        store = SqliteStore(tmp_path / "asyncio.db")
        try:
            await store.migrate()
            return await store.claim_service_request(
                idempotency_key="k", request_hash="h", created_at=T0
            )
        finally:
            await store.close()

    assert anyio.run(main, backend="asyncio") == Claimed()


@pytest.mark.slow
async def test_two_os_processes_claim_each_key_exactly_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    store = SqliteStore(path)
    await store.migrate()
    await store.close()
    keys = 200
    command = [sys.executable, str(Path(__file__).with_name("_claim_process.py")), str(path)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outputs: list[list[int]] = []

    async with trio.open_nursery() as nursery:
        processes = [
            await trio.lowlevel.open_process(
                [*command, str(keys)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                cwd=ROOT,
            )
            for _ in range(2)
        ]
        try:
            # Both processes have the file open before either starts claiming.
            for process in processes:
                assert process.stdout is not None
                assert await _read_line(process.stdout) == "ready"
            for process in processes:
                assert process.stdin is not None
                await process.stdin.send_all(b"go\n")

            async def collect(process: trio.Process) -> None:
                assert process.stdout is not None
                outputs.append(json.loads(await _read_line(process.stdout)))
                assert await process.wait() == 0

            for process in processes:
                nursery.start_soon(collect, process)
        finally:
            for process in processes:
                if process.stdin is not None:
                    await process.stdin.aclose()
    for process in processes:
        if process.stdout is not None:
            await process.stdout.aclose()
        await process.wait()
    claimed = [key for output in outputs for key in output]
    assert sorted(claimed) == list(range(keys))  # every key exactly once
    assert len(outputs) == 2


async def _read_line(stream: trio.abc.ReceiveStream) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = await stream.receive_some(1)
        if not chunk:
            break
        data += chunk
    return data.decode().strip()


async def _claims_around_a_failing_call(
    path: Path, before: int, after: int
) -> tuple[dict[str, object], int]:
    """``before`` claims, a failing call, ``after`` claims, all concurrent on one store:
    each claim's answer and the failing call's code (``"bad"``), and the pending outbox."""
    store = SqliteStore(path)
    await store.migrate()
    results: dict[str, object] = {}

    async def good(i: int) -> None:
        results[f"k{i}"] = await store.claim_service_request(
            idempotency_key=f"k{i}", request_hash="h", created_at=T0
        )

    async def bad() -> None:
        try:
            await store._call("query_failed", lambda s: s.run("SELECT * FROM missing"), write=True)
        except PersistenceError as exc:
            results["bad"] = exc.code

    try:
        async with anyio.create_task_group() as group:
            for i in range(before):
                group.start_soon(good, i)
            group.start_soon(bad)
            for i in range(before, before + after):
                group.start_soon(good, i)
        return results, await store.count_outbox_pending()
    finally:
        await store.close()


async def test_group_commit_isolates_a_failing_call(tmp_path: Path) -> None:
    results, pending = await _claims_around_a_failing_call(tmp_path / "batch.db", 10, 10)
    assert results.pop("bad") == "query_failed"
    assert set(results.values()) == {Claimed()} and len(results) == 20
    assert pending == 0


async def test_a_cancelled_caller_still_gets_its_queued_call_run(tmp_path: Path) -> None:
    """A queued call runs to completion; the cancellation arrives at the next checkpoint."""
    store = SqliteStore(tmp_path / "cancel.db")
    await store.migrate()
    try:
        with trio.CancelScope() as scope:
            scope.cancel()
            answer = await store.claim_service_request(
                idempotency_key="k", request_hash="h", created_at=T0
            )
            assert answer == Claimed()
            await trio.lowlevel.checkpoint()
        assert scope.cancelled_caught
        record = await store.get_service_request(idempotency_key="k")
        assert record is not None and record.state == "pending"
    finally:
        await store.close()


async def _held_first_call(store: SqliteStore, gate: threading.Event) -> str:
    """A call whose batch runs until ``gate`` is set: calls queued meanwhile wait, not drain."""
    return await store._call(
        "query_failed", lambda s: "first" if gate.wait(10) else "", write=False
    )


async def _open_when_queued(store: SqliteStore, gate: threading.Event, count: int) -> None:
    while store._writers.thread.queued < count:
        await anyio.lowlevel.checkpoint()
    gate.set()


async def _cancelled_waiting_claim(tmp_path: Path) -> tuple[object, bool, object]:
    """A claim queued behind a running batch, its caller cancelled before it waits: its
    answer, whether the cancellation came at the next checkpoint, and the stored record."""
    store = SqliteStore(tmp_path / "wait.db")
    await store.migrate()
    gate = threading.Event()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_held_first_call, store, gate)
            while not store._writers.thread._drains:
                await anyio.lowlevel.checkpoint()
            group.start_soon(_open_when_queued, store, gate, 1)
            answer: object = None
            with anyio.CancelScope() as scope:
                scope.cancel()
                answer = await store.claim_service_request(
                    idempotency_key="k", request_hash="h", created_at=T0
                )
                await anyio.lowlevel.checkpoint()
        record = await store.get_service_request(idempotency_key="k")
        return answer, scope.cancelled_caught, record and record.state
    finally:
        await store.close()


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_a_cancelled_waiting_caller_still_gets_its_answer(tmp_path: Path, backend: str) -> None:
    """A caller queued behind another's batch (it waits, the other drains) gets its call's
    answer though cancelled; the cancellation arrives at its next checkpoint."""
    answer, caught, state = anyio.run(_cancelled_waiting_claim, tmp_path, backend=backend)
    assert answer == Claimed() and caught and state == "pending"


def test_a_waiting_caller_cancelled_by_its_task_is_cancelled_after_its_call_ran(
    tmp_path: Path,
) -> None:
    """asyncio's ``Task.cancel`` (no cancel scope repeats it) is raised to the waiting
    caller, but only once its queued call has run and committed."""

    async def main() -> tuple[bool, bool, object]:
        store = SqliteStore(tmp_path / "task.db")
        await store.migrate()
        gate = threading.Event()
        try:
            first = asyncio.ensure_future(_held_first_call(store, gate))
            while not store._writers.thread._drains:
                await asyncio.sleep(0)
            waiter = asyncio.ensure_future(
                store.claim_service_request(idempotency_key="k", request_hash="h", created_at=T0)
            )
            while not store._writers.thread.queued:
                await asyncio.sleep(0)
            waiter.cancel()
            for _ in range(10):
                await asyncio.sleep(0)
            early = waiter.done()
            gate.set()
            assert await first == "first"
            with pytest.raises(asyncio.CancelledError):
                await waiter
            record = await store.get_service_request(idempotency_key="k")
            return early, waiter.cancelled(), record and record.state
        finally:
            await store.close()

    early, cancelled, state = asyncio.run(main())
    assert not early and cancelled and state == "pending"


async def test_calls_past_one_batch_each_get_their_own_answer(tmp_path: Path) -> None:
    """More callers queued than one batch takes: the rest run in the next batches and each
    caller is woken with its own call's answer."""
    store = SqliteStore(tmp_path / "many.db")
    await store.migrate()
    gate = threading.Event()
    count = MAX_BATCH * 2 + 3
    answers: dict[int, object] = {}

    async def call(i: int) -> None:
        answers[i] = await store._call("query_failed", lambda s: i, write=False)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_held_first_call, store, gate)
            while not store._writers.thread._drains:
                await anyio.lowlevel.checkpoint()
            for i in range(count):
                group.start_soon(call, i)
            group.start_soon(_open_when_queued, store, gate, count)
        assert answers == {i: i for i in range(count)}
    finally:
        await store.close()


def test_concurrent_calls_group_commit_under_asyncio_too(tmp_path: Path) -> None:
    results, _ = anyio.run(
        _claims_around_a_failing_call, tmp_path / "asyncio.db", 10, 0, backend="asyncio"
    )
    assert results.pop("bad") == "query_failed"
    assert results == {f"k{i}": Claimed() for i in range(10)}


@pytest.mark.parametrize(("option", "pragma"), [({}, 2), ({"synchronous": "normal"}, 1)])
async def test_sqlite_synchronous_is_full_unless_asked(
    tmp_path: Path, option: dict[str, str], pragma: int
) -> None:
    """Acknowledged writes survive a power loss by default (issue 22, item 8)."""
    store = SqliteStore(tmp_path / "s.db", **option)
    try:
        await store.migrate()
        assert store._conn is not None  # opened by migrate(); the pragma is per connection
        assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == pragma
    finally:
        await store.close()


async def test_sqlite_keeps_savepoint_journals_in_memory(tmp_path: Path) -> None:
    """The group commit's savepoints journal the pages a job changes; kept in memory, not
    written to a temporary file (issue 25: half the pages the writer wrote per delivery)."""
    store = SqliteStore(tmp_path / "s.db")
    try:
        await store.migrate()
        assert store._conn is not None
        assert store._conn.execute("PRAGMA temp_store").fetchone()[0] == 2  # MEMORY
    finally:
        await store.close()


@pytest.mark.parametrize(("option", "pages"), [({}, 4000), ({"synchronous": "normal"}, 1000)])
async def test_sqlite_checkpoints_the_wal_every_4000_pages_when_each_commit_syncs(
    tmp_path: Path, option: dict[str, str], pages: int
) -> None:
    """A page many commits rewrite is copied back into the file once per 4,000 WAL pages
    (SQLite's default is 1,000): fewer pages written and synced per delivery (issue 25).
    Under ``synchronous="normal"`` only a checkpoint syncs the commits: SQLite's default
    stays, so no more commits are at risk than before."""
    store = SqliteStore(tmp_path / "s.db", **option)
    try:
        await store.migrate()
        assert store._conn is not None
        assert store._conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == pages
    finally:
        await store.close()


def test_sqlite_synchronous_refuses_other_values(tmp_path: Path) -> None:
    from svc.store import PersistenceValidationError

    with pytest.raises(PersistenceValidationError) as caught:
        SqliteStore(tmp_path / "s.db", synchronous="off")
    assert caught.value.code == "invalid_options"


@pytest.mark.parametrize("value", ["5000", None, 2.5, True, -1, 2**31])
def test_busy_timeout_ms_is_a_count_of_milliseconds(tmp_path: Path, value: object) -> None:
    with pytest.raises(PersistenceValidationError) as caught:
        SqliteStore(tmp_path / "s.db", busy_timeout_ms=value)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_options"


def _delivery(i: int, *, keys: tuple[str, ...], direction: str = "inbound") -> DeliveryWrite:
    """A checked delivery of one inbound message, as ``record_webhook_updates`` hands it over."""
    at = 1_763_720_130_000 + i
    message = message_row(
        f"row-{i}", f"wamid.{i}", at=at, direction=direction, from_phone="15551234567"
    )
    return DeliveryWrite(
        event_key=f"ev-{i}",
        event_hash="h",
        received_at=at,
        messages=(message,),
        update_keys=keys,
    )


async def test_concurrent_deliveries_run_as_one_set_based_call(tmp_path: Path) -> None:
    """Deliveries queued together share their statements; each answer is still its own,
    and of a copy queued with its original only one records the update new."""
    store = SqliteStore(tmp_path / "merge.db")
    await store.migrate()
    statements: list[str] = []
    answers: dict[int, UpdatesRecorded] = {}

    async def deliver(i: int, keys: tuple[str, ...]) -> None:
        delivery = _delivery(i, keys=keys)
        answers[i] = await store._write(
            Kind.DELIVERY, delivery, code="outbox_failed", key=delivery.event_key
        )

    try:
        await store.count_outbox_pending()  # opens the connection
        assert store._conn is not None
        store._conn.set_trace_callback(statements.append)
        async with trio.open_nursery() as nursery:
            for i in range(16):
                nursery.start_soon(deliver, i, (f"u{i}",))
            nursery.start_soon(deliver, 16, ("u3",))  # a copy of delivery 3's update
        inserts = [s for s in statements if s.startswith("INSERT INTO svc_webhook_events")]
        assert len(inserts) < 17  # merged: not one statement per delivery
        assert all(answers[i].new == (f"u{i}",) for i in range(16) if i != 3)
        # Trio may start either first: one of the two records u3, the other is a duplicate.
        assert sorted((answers[3].new, answers[16].new)) == [(), ("u3",)]
        page = await store.list_messages(limit=100)
        assert len(page.items) == 17  # every delivery projected its own message
    finally:
        await store.close()


async def test_a_failing_delivery_of_a_merged_run_fails_alone(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "merge-fail.db")
    await store.migrate()
    outcome: dict[int, object] = {}

    async def deliver(i: int) -> None:
        # Direction "sideways" breaks the table's CHECK: the merged call fails as a whole.
        delivery = _delivery(i, keys=(f"u{i}",), direction="sideways" if i == 5 else "inbound")
        try:
            outcome[i] = await store._write(
                Kind.DELIVERY, delivery, code="outbox_failed", key=delivery.event_key
            )
        except PersistenceError as exc:
            outcome[i] = exc.code

    try:
        async with trio.open_nursery() as nursery:
            for i in range(10):
                nursery.start_soon(deliver, i)
        assert outcome.pop(5) == "outbox_failed"
        assert all(isinstance(answer, UpdatesRecorded) for answer in outcome.values())
        assert len(outcome) == 9
        page = await store.list_messages(limit=100)
        assert sorted(m.row_id for m in page.items) == sorted(f"row-{i}" for i in outcome)
    finally:
        await store.close()
