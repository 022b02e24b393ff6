"""The SQLite writer process (``SqliteStore(writer="process")``): where its writes run, how
it batches, and what its callers see when it is lost, interrupted, closed or cannot start.

The contract suite runs over this writer too (the ``sqlite-process`` adapter), and
``test_writer_process`` its losses, interruptions and close (``test_pg_writer``: a child that
cannot start, the wire); these are SQLite's own rules.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import trio

from svc.store import (
    PersistenceValidationError,
    SqliteStore,
    UpdatesRecorded,
)
from svc.store._child import Child
from svc.store.sqlite._store import run_writer

from ._writer_calls import child_pid, deliver


def _stored(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.fixture
def path(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "writer.db"


async def test_deliveries_run_in_the_child_on_its_own_connection(path: Path) -> None:
    store = SqliteStore(path, writer="process")
    await store.migrate()
    parent_statements: list[str] = []
    try:
        assert store._conn is not None
        store._conn.set_trace_callback(parent_statements.append)
        assert child_pid(store) != os.getpid()
        recorded = await deliver(store, 1)
        assert recorded.new == ("u1",) and recorded.event == "recorded"
        again = await deliver(store, 1)
        assert again.event == "duplicate" and again.new == ()
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

    async def call(i: int) -> None:
        answers[i] = await deliver(store, i)

    try:
        async with trio.open_nursery() as nursery:
            for i in range(64):
                nursery.start_soon(call, i)
    finally:
        await store.close()
    assert {i: a.new for i, a in answers.items()} == {i: (f"u{i}",) for i in range(64)}
    assert _stored(path, "SELECT count(*) FROM svc_webhook_events") == [(64,)]
    assert _stored(path, "SELECT count(*) FROM svc_messages") == [(64,)]


async def test_a_child_that_cannot_open_the_database_is_unavailable(tmp_path: Path) -> None:
    config = (str(tmp_path / "missing" / "dir" / "x.db"), 100, "full")
    writer = Child(run_writer, config, fallback=None)
    assert not await writer.start()
    assert writer.unavailable
    await writer.aclose()


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
            return tuple(await asyncio.gather(*(deliver(store, i) for i in range(8))))
        finally:
            await store.close()

    answers = anyio.run(main, backend="asyncio")
    assert [a.new for a in answers] == [(f"u{i}",) for i in range(8)]
    assert _stored(path, "SELECT count(*) FROM svc_webhook_events") == [(8,)]
