"""``watch_inbox``: another process's commit of inbox rows wakes a watcher at once
(PostgreSQL's ``LISTEN``/``NOTIFY``; SQLite's datagrams: ``test_sqlite_wake.py``)."""

from __future__ import annotations

import time

import trio

from svc.store import utc_now

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
