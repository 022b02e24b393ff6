"""The SQLite writer thread: it overlaps the event loop, keeps queued calls, ends when done."""

from __future__ import annotations

import threading
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from svc.store import Claimed, PersistenceError, SqliteStore
from svc.store._writer import WriterJob, WriterThread

from .conftest import T0

WAIT = 5.0


async def test_the_writer_starts_the_next_batch_while_the_event_loop_is_busy(
    tmp_path: Path,
) -> None:
    """A call queued while a batch runs starts when that batch ends, not when the event
    loop next schedules someone to start it (the loop is blocked here meanwhile)."""
    store = SqliteStore(tmp_path / "overlap.db")
    await store.migrate()
    started, release, second_ran = threading.Event(), threading.Event(), threading.Event()

    def first(_: object) -> int:
        started.set()
        release.wait(WAIT)
        return 1

    def second(_: object) -> int:
        second_ran.set()
        return 2

    answers: list[int] = []

    async def call(fn: Any) -> None:
        answers.append(await store._call("query_failed", fn, write=False))

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, first)
            await trio.to_thread.run_sync(started.wait, WAIT)
            nursery.start_soon(call, second)
            await trio.testing.wait_all_tasks_blocked()  # the second call is queued
            release.set()
            # Blocking the event loop: only the writer thread can start the second call.
            assert second_ran.wait(WAIT)
        assert sorted(answers) == [1, 2]
    finally:
        await store.close()


async def test_close_runs_the_calls_already_queued_then_ends_the_thread(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "close.db")
    await store.migrate()
    writers: set[int] = set()
    claimed: list[object] = []

    def note_thread(_: object) -> None:
        writers.add(threading.get_ident())

    async def claim(i: int) -> None:
        claimed.append(
            await store.claim_service_request(
                idempotency_key=f"k{i}", request_hash="h", created_at=T0
            )
        )

    async with trio.open_nursery() as nursery:
        for i in range(10):
            nursery.start_soon(claim, i)
        nursery.start_soon(partial(store._call, "query_failed", note_thread, write=False))
        await trio.testing.wait_all_tasks_blocked()
        await store.close()
    assert claimed == [Claimed()] * 10
    with pytest.raises(PersistenceError) as info:
        await store.claim_service_request(idempotency_key="late", request_hash="h", created_at=T0)
    assert info.value.code == "store_closed"
    (writer,) = writers
    assert writer not in {thread.ident for thread in threading.enumerate() if thread.is_alive()}


class _Probe(WriterJob):
    __slots__ = ("thread",)

    def __init__(self) -> None:
        super().__init__()
        self.thread = 0


def _record_threads(batch: list[Any]) -> None:
    for job in batch:
        job.thread = threading.get_ident()


async def test_an_idle_writer_thread_ends_and_the_next_call_starts_another() -> None:
    writer = WriterThread(_record_threads, max_batch=4, name="probe", idle_seconds=0.01)
    first = _Probe()
    await writer.call(first)
    with trio.fail_after(WAIT):
        while first.thread in {t.ident for t in threading.enumerate() if t.is_alive()}:
            await trio.sleep(0.01)
    second = _Probe()
    await writer.call(second)
    assert second.thread != 0  # run by a new writer thread (its id may be reused)


async def test_a_batch_that_raises_still_wakes_its_callers() -> None:
    def explode(batch: list[Any]) -> None:
        raise RuntimeError("boom")

    writer = WriterThread(explode, max_batch=4, name="probe")
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(writer.call, _Probe())


async def test_a_store_dropped_without_close_is_collected_and_its_file_closed(
    tmp_path: Path,
) -> None:
    """The writer thread does not keep a forgotten store (and its connection) alive."""
    import gc
    import weakref

    store = SqliteStore(tmp_path / "dropped.db")
    await store.migrate()
    await store.claim_service_request(idempotency_key="k", request_hash="h", created_at=T0)
    assert (tmp_path / "dropped.db-wal").exists()
    ref = weakref.ref(store)
    del store
    gc.collect()
    assert ref() is None
    assert not (tmp_path / "dropped.db-wal").exists()  # the last connection closed
