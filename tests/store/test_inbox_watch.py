"""``watch_inbox``: another process's commit of inbox rows wakes a watcher at once
(PostgreSQL's ``LISTEN``/``NOTIFY``; SQLite's datagrams: ``test_sqlite_wake.py``)."""

from __future__ import annotations

import time

import pytest
import trio
import trio.testing

from svc.store import SCHEMA_VERSION, PostgresStore, utc_now

from .conftest import Backend
from .test_inbox import record


async def test_a_commit_of_inbox_rows_on_another_store_wakes_the_watcher(pg: Backend) -> None:
    writer, watcher = pg.open(), pg.open()
    await writer.migrate()
    signals: list[float] = []
    got = trio.Event()

    def on_signal() -> None:
        signals.append(time.monotonic())
        got.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(watcher.watch_inbox, on_signal)
        with trio.fail_after(10):
            await got.wait()  # the first signal: listening (rows may have come before)
        got = trio.Event()
        before = len(signals)
        await record(writer, ("w1", "qw"))
        sent = time.monotonic()
        with trio.fail_after(5):
            await got.wait()
        assert len(signals) > before
        assert signals[-1] - sent < 1.0  # a notification, not the one-second tick
        # A commit with no inbox rows sends nothing.
        got = trio.Event()
        await writer.record_webhook_updates(
            event_key="d-none",
            event_hash="h",
            received_at=utc_now(),
            update_keys=["none1"],
        )
        with trio.move_on_after(1.5):
            await got.wait()
        assert not got.is_set()
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("writer", ["thread", "process"])
async def test_a_store_is_not_woken_by_its_own_commits(pg: Backend, writer: str) -> None:
    # Its runtime is woken in process once the answer is written; its own NOTIFY must not wake
    # it earlier (a run would then race the webhook's answer).
    own = PostgresStore(pg.url or "", schema=pg.schema, writer=writer)
    other = pg.open()
    pg.opened.append(own)
    await own.migrate()
    signals: list[str] = []
    got = trio.Event()

    def on_signal() -> None:
        signals.append("signal")
        got.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(own.watch_inbox, on_signal)
        with trio.fail_after(10):
            await got.wait()  # listening
        got = trio.Event()
        await record(own, ("own1", "q1"))
        await record(other, ("other1", "q2"))  # committed after: its notification comes after
        with trio.fail_after(5):
            await got.wait()
        await trio.testing.wait_all_tasks_blocked()
        assert signals == ["signal", "signal"]  # the listening one and the other store's
        nursery.cancel_scope.cancel()


async def test_the_dsn_options_are_kept_beside_the_instance_setting(pg: Backend) -> None:
    import psycopg

    assert pg.url is not None and pg.schema is not None
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {pg.schema}")
    separator = "&" if "?" in pg.url else "?"
    store = PostgresStore(f"{pg.url}{separator}options=-c%20search_path%3D{pg.schema}")
    pg.opened.append(store)
    assert await store.migrate() == SCHEMA_VERSION
    # The DSN's search_path took effect: the tables are in its schema.
    assert pg.raw_sql("SELECT MAX(version) FROM svc_schema_migrations") == [(SCHEMA_VERSION,)]
