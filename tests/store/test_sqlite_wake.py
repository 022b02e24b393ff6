"""SQLite's cross-process wake: a store that commits inbox rows sends a datagram to the
other stores' watch sockets in ``<file>.wake/`` (``svc/store/sqlite/_wake.py``)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import trio
import trio.testing

from svc.store import PersistenceError, SqliteStore, utc_now

from .conftest import SQLITE_FILES, AnyStore, Backend
from .test_inbox import record

pytestmark = pytest.mark.slow  # each opens a file store; the writer process starts in ~1 s


@pytest.fixture(params=SQLITE_FILES)
async def files(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """A fresh SQLite file (deliveries on the thread, or in the writer process)."""
    backend = Backend(request.param, path=tmp_path / "store.sqlite3", url=None, schema=None)
    try:
        yield backend
    finally:
        for store in backend.opened:
            await store.close()


def wake_folder(backend: Backend) -> Path:
    return Path(f"{backend.path}.wake")


def sockets(backend: Backend) -> list[str]:
    folder = wake_folder(backend)
    return sorted(p.name for p in folder.glob("*.sock")) if folder.exists() else []


@contextlib.contextmanager
def peer(backend: Backend, name: str) -> Iterator[socket.socket]:
    """A raw socket bound in the wake folder, as another process's watch binds one."""
    folder = wake_folder(backend)
    folder.mkdir(mode=0o700, exist_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.setblocking(False)
        sock.bind(str(folder / name))
        yield sock


async def migrated(backend: Backend) -> AnyStore:
    store = backend.open()
    await store.migrate()
    return store


def pending(sock: socket.socket) -> int:
    """Datagrams waiting on ``sock`` (read without blocking)."""
    count = 0
    while True:
        try:
            sock.recv(1)
        except BlockingIOError:
            return count
        count += 1


class Signals:
    def __init__(self) -> None:
        self.count = 0
        self.event = trio.Event()

    def __call__(self) -> None:
        self.count += 1
        self.event.set()

    async def next(self) -> None:
        with trio.fail_after(10):
            await self.event.wait()
        self.event = trio.Event()


async def test_a_record_on_one_store_wakes_the_watch_of_another_on_the_file(
    files: Backend,
) -> None:
    writer, watcher = await migrated(files), files.open()
    signals = Signals()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watcher.watch_inbox, signals)
        await signals.next()  # at once: rows may have come before the watch began
        assert len(sockets(files)) == 1
        await record(writer, ("w1", "qw"))
        await signals.next()
        assert signals.count == 2
        await record(writer, ("w2", "qw"), ("w3", "qx"))
        await signals.next()
        assert signals.count == 3
        nursery.cancel_scope.cancel()


async def test_only_a_commit_of_new_inbox_rows_sends_a_wake(files: Backend) -> None:
    writer = await migrated(files)
    with peer(files, "1-other.sock") as other:
        await writer.record_webhook_updates(
            event_key="d-none", event_hash="h", received_at=utc_now(), update_keys=["none1"]
        )
        assert pending(other) == 0  # no inbox rows
        await record(writer, ("k1", "q1"))
        assert pending(other) == 1  # sent before the record returned
        await record(writer, ("k1", "q1"))
        assert pending(other) == 0  # a duplicate delivery adds no rows


async def test_a_store_does_not_wake_its_own_watch(files: Backend) -> None:
    store = await migrated(files)
    signals = Signals()
    with peer(files, "1-other.sock") as other:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(store.watch_inbox, signals)
            await signals.next()
            await record(store, ("k1", "q1"))
            assert pending(other) == 1
            await trio.testing.wait_all_tasks_blocked()
            assert signals.count == 1  # this process learns of its own rows in process
            nursery.cancel_scope.cancel()


async def test_a_dead_processs_socket_is_removed_and_the_others_still_woken(
    files: Backend,
) -> None:
    writer = await migrated(files)
    with peer(files, "999999-dead.sock"):
        pass  # its file stays, bound by nobody: a killed process's
    with peer(files, "2-live.sock") as live:
        await record(writer, ("k1", "q1"))
        assert pending(live) == 1
        assert sockets(files) == ["2-live.sock"]


async def test_a_full_socket_never_fails_the_write(files: Backend) -> None:
    writer = await migrated(files)
    with peer(files, "3-slow.sock") as slow:
        for n in range(40):  # past the kernel's queue of unread datagrams (10 by default)
            await record(writer, (f"k{n}", "q1"))
        assert 0 < pending(slow) < 40
        assert await writer.claim_inbox_items(now=utc_now(), limit=1, lease_ms=1000)


async def test_closing_the_store_removes_its_socket_and_ends_its_watch(files: Backend) -> None:
    store = await migrated(files)
    signals = Signals()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(store.watch_inbox, signals)
            await signals.next()
            assert len(sockets(files)) == 1
            await store.close()
            assert sockets(files) == []
    # The nursery closed on its own: the watch returned.
    with pytest.raises(PersistenceError):
        await store.watch_inbox(signals)


async def test_a_cancelled_watch_removes_its_socket(files: Backend) -> None:
    store = await migrated(files)
    signals = Signals()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(store.watch_inbox, signals)
        await signals.next()
        assert len(sockets(files)) == 1
        nursery.cancel_scope.cancel()
    assert sockets(files) == []


async def test_a_path_too_long_for_a_socket_fails_the_watch_not_the_writes(
    tmp_path: Path,
) -> None:
    folder = tmp_path / ("d" * 120)
    folder.mkdir()
    store = SqliteStore(folder / "s.db")
    try:
        await store.migrate()
        with pytest.raises(PersistenceError) as caught:
            await store.watch_inbox(lambda: None)
        assert caught.value.code == "query_failed"
        assert str(folder) not in str(caught.value)
        await record(store, ("k1", "q1"))
    finally:
        await store.close()


async def test_memory_watch_only_waits() -> None:
    store = SqliteStore(":memory:")
    await store.migrate()
    called: list[int] = []
    try:
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(store.watch_inbox, lambda: called.append(1))
                await trio.testing.wait_all_tasks_blocked()
                scope.cancel()
        assert called == []
    finally:
        await store.close()
