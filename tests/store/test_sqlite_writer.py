"""The SQLite writer process (``SqliteStore(writer="process")``): where its writes run, how
it batches, and what its callers see when it is lost, interrupted, closed or cannot start.

The contract suite runs over this writer too (the ``sqlite-process`` adapter); these are the
rules only a process has.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import socket
import sqlite3
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import anyio
import pytest
import trio
import trio.testing

from svc.store import (
    MessageRecord,
    PersistenceError,
    PersistenceValidationError,
    SqliteStore,
    UpdatesRecorded,
)
from svc.store import _writer as writer_module
from svc.store._sqlite_writer import sqlite_writer
from svc.store._writer import WriterProcess, WriterUnavailable, outcome

from .conftest import T0


def _inbound(i: int) -> MessageRecord:
    at = T0 + timedelta(seconds=i)
    return MessageRecord(
        row_id=f"row-{i}",
        wa_message_id=f"wamid.{i}",
        direction="inbound",
        type="text",
        status="received",
        created_at=at,
        updated_at=at,
        from_phone="16505551234",
    )


async def _deliver(store: SqliteStore, i: int) -> UpdatesRecorded:
    return await store.record_webhook_updates(
        event_key=f"ev-{i}",
        event_hash="h",
        received_at=T0 + timedelta(seconds=i),
        update_keys=(f"u{i}",),
        messages=[_inbound(i)],
    )


def _stored(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _writer(store: SqliteStore) -> WriterProcess:
    assert store._writer is not None
    return store._writer


def _child_pid(store: SqliteStore) -> int:
    proc = _writer(store)._proc
    assert proc is not None
    return proc.pid


@pytest.fixture
def path(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "writer.db"


async def test_deliveries_and_marks_run_in_the_child_on_its_own_connection(path: Path) -> None:
    store = SqliteStore(path, writer="process")
    await store.migrate()
    parent_statements: list[str] = []
    try:
        assert store._conn is not None
        store._conn.set_trace_callback(parent_statements.append)
        assert _child_pid(store) != os.getpid()
        recorded = await _deliver(store, 1)
        assert recorded.to_run == ("u1",) and recorded.event == "recorded"
        assert await store.mark_webhook_updates_handled(update_keys=["u1"], handled_at=T0) == 1
        again = await _deliver(store, 1)
        assert again.event == "duplicate" and again.to_run == ()
        stored = await store.get_message(wa_message_id="wamid.1", direction="inbound")
        assert stored is not None and stored.from_phone == "16505551234"
    finally:
        await store.close()
    assert parent_statements  # the read of the message ran on the parent's connection
    assert not any("webhook_" in sql or "INSERT" in sql for sql in parent_statements)
    assert _stored(path, "SELECT event_key FROM svc_webhook_events") == [("ev-1",)]


async def test_concurrent_deliveries_are_all_answered_and_stored(path: Path) -> None:
    store = SqliteStore(path, writer="process")
    await store.migrate()
    answers: dict[int, UpdatesRecorded] = {}

    async def deliver(i: int) -> None:
        answers[i] = await _deliver(store, i)

    try:
        async with trio.open_nursery() as nursery:
            for i in range(64):
                nursery.start_soon(deliver, i)
    finally:
        await store.close()
    assert {i: a.to_run for i, a in answers.items()} == {i: (f"u{i}",) for i in range(64)}
    assert _stored(path, "SELECT count(*) FROM svc_webhook_events") == [(64,)]
    assert _stored(path, "SELECT count(*) FROM svc_messages") == [(64,)]


def test_the_child_runs_every_frame_it_holds_as_one_batch() -> None:
    ours, theirs = socket.socketpair()
    try:
        frames = [pickle.dumps(("delivery", (i,))) for i in range(5)]
        ours.sendall(b"".join(len(f).to_bytes(4, "big") + f for f in frames))
        ours.shutdown(socket.SHUT_WR)
        batches = list(writer_module._batches(theirs, writer_module._Inbox()))
    finally:
        ours.close()
        theirs.close()
    assert batches == [[("delivery", (i,)) for i in range(5)]]


async def test_a_writer_that_exited_is_started_again_before_the_next_call(path: Path) -> None:
    store = SqliteStore(path, writer="process")
    await store.migrate()
    try:
        first = _child_pid(store)
        os.kill(first, signal.SIGKILL)
        proc = _writer(store)._proc
        assert proc is not None
        await proc.wait()
        assert (await _deliver(store, 1)).to_run == ("u1",)
        assert _child_pid(store) != first
    finally:
        await store.close()
    assert _stored(path, "SELECT event_key FROM svc_webhook_events") == [("ev-1",)]


async def test_a_writer_lost_mid_call_fails_that_call_and_the_next_one_runs(path: Path) -> None:
    """The call in flight when the child dies gets the pessimistic error (the platform
    redelivers); nothing is half-stored, and the next call starts a new child."""
    store = SqliteStore(path, writer="process")
    await store.migrate()
    child = _child_pid(store)
    failed: list[PersistenceError] = []

    async def deliver() -> None:
        try:
            await _deliver(store, 1)
        except PersistenceError as exc:
            failed.append(exc)

    try:
        os.kill(child, signal.SIGSTOP)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(deliver)
            await trio.testing.wait_all_tasks_blocked()
            assert len(_writer(store)._inflight) == 1
            os.kill(child, signal.SIGKILL)
        assert [e.code for e in failed] == ["outbox_failed"]
        assert _stored(path, "SELECT count(*) FROM svc_webhook_events") == [(0,)]
        assert (await _deliver(store, 2)).to_run == ("u2",)
        assert _child_pid(store) != child
    finally:
        await store.close()


async def test_a_cancelled_caller_still_gets_its_sent_call_committed(path: Path) -> None:
    store = SqliteStore(path, writer="process")
    await store.migrate()
    child = _child_pid(store)
    outcome: list[object] = []

    async def deliver(scope: trio.CancelScope) -> None:
        with scope:
            outcome.append(await _deliver(store, 1))
            await trio.lowlevel.checkpoint()
        outcome.append(scope.cancelled_caught)

    try:
        os.kill(child, signal.SIGSTOP)
        scope = trio.CancelScope()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(deliver, scope)
            await trio.testing.wait_all_tasks_blocked()
            scope.cancel()
            await trio.testing.wait_all_tasks_blocked()
            assert outcome == []  # still waiting for the child, cancelled or not
            os.kill(child, signal.SIGCONT)
    finally:
        await store.close()
    assert isinstance(outcome[0], UpdatesRecorded) and outcome[1] is True
    assert _stored(path, "SELECT event_key FROM svc_webhook_events") == [("ev-1",)]


async def test_ctrl_c_at_the_terminal_does_not_stop_the_writer(path: Path) -> None:
    """The terminal sends SIGINT to its whole foreground group; the parent drains and closes
    the writer itself."""
    store = SqliteStore(path, writer="process")
    await store.migrate()
    try:
        child = _child_pid(store)
        os.kill(child, signal.SIGINT)
        assert (await _deliver(store, 1)).to_run == ("u1",)
        assert _child_pid(store) == child
    finally:
        await store.close()


async def test_close_answers_the_calls_in_flight_then_ends_the_writer(path: Path) -> None:
    store = SqliteStore(path, writer="process")
    await store.migrate()
    proc = _writer(store)._proc
    assert proc is not None
    answers: list[UpdatesRecorded] = []

    async def deliver() -> None:
        answers.append(await _deliver(store, 1))

    os.kill(proc.pid, signal.SIGSTOP)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(deliver)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(store.close)
        await trio.testing.wait_all_tasks_blocked()
        os.kill(proc.pid, signal.SIGCONT)
    assert [a.to_run for a in answers] == [("u1",)]
    assert proc.returncode == 0


async def test_a_writer_that_cannot_start_leaves_the_writes_on_the_thread(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", str(path.parent / "no-such-python"))
    store = SqliteStore(path, writer="process")
    await store.migrate()
    try:
        assert store._writer is None
        assert (await _deliver(store, 1)).to_run == ("u1",)
    finally:
        await store.close()
    assert _stored(path, "SELECT event_key FROM svc_webhook_events") == [("ev-1",)]


async def test_a_child_that_cannot_open_the_database_is_unavailable(tmp_path: Path) -> None:
    writer = sqlite_writer(
        str(tmp_path / "missing" / "dir" / "x.db"), busy_timeout_ms=100, synchronous="full"
    )
    with pytest.raises(WriterUnavailable):
        await writer.ready()
    await writer.aclose()


def test_an_error_that_does_not_survive_pickling_is_answered_pessimistically() -> None:
    class Unpicklable(Exception):
        def __init__(self, a: str, b: str) -> None:
            super().__init__(a)

    refusal = PersistenceValidationError("invalid_record", "row_id must be text.")
    kept = outcome(False, None, refusal)
    dropped = outcome(False, None, Unpicklable("a", "b"))
    frame = writer_module._frame((False, [kept, dropped]))
    (answer,) = _inbox_of(frame).take(2)
    assert isinstance(answer, tuple)
    (ok_a, _, error_a), (ok_b, _, error_b) = answer[1]
    assert (ok_a, ok_b, error_b) == (False, False, None)
    assert isinstance(error_a, PersistenceValidationError) and error_a.code == "invalid_record"


def _inbox_of(frame: bytes) -> writer_module._Inbox:
    inbox = writer_module._Inbox()
    inbox.feed(frame)
    return inbox


@pytest.mark.parametrize(
    ("location", "writer"), [(":memory:", "process"), ("x.db", "child"), ("x.db", "")]
)
def test_the_writer_option_is_checked(tmp_path: Path, location: str, writer: str) -> None:
    target = location if location == ":memory:" else str(tmp_path / location)
    with pytest.raises(PersistenceValidationError) as caught:
        SqliteStore(target, writer=writer)
    assert caught.value.code == "invalid_options"


def test_the_writer_process_runs_under_asyncio_too(path: Path) -> None:
    async def main() -> tuple[UpdatesRecorded, ...]:
        store = SqliteStore(path, writer="process")
        await store.migrate()
        try:
            return tuple(await asyncio.gather(*(_deliver(store, i) for i in range(8))))
        finally:
            await store.close()

    answers = anyio.run(main, backend="asyncio")
    assert [a.to_run for a in answers] == [(f"u{i}",) for i in range(8)]
    assert _stored(path, "SELECT count(*) FROM svc_webhook_events") == [(8,)]
