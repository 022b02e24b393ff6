"""``PostgresStore(writer="process")``: webhook deliveries and inbox writes run in a writer
process (``_child``) on a connection of its own; every other call stays on the engine's worker
thread. ``test_writer_process`` covers the child's losses, interruptions and close; these
tests its connection, a server lost under a batch, the engine's refusal until its probe
reconnects, a child that cannot start, and the wire.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

import psycopg
import pytest
import trio
import trio.testing

from svc.store import (
    PersistenceError,
    PersistenceValidationError,
    PostgresStore,
    UpdatesRecorded,
    _child,
)
from svc.store._commit import Batch, Job
from svc.store._kinds import DeliveryWrite, Kind
from svc.store.postgres import _engine
from svc.store.postgres._engine import APPLICATION_NAME

from ._writer_calls import child_pid, deliver, writer_of
from .conftest import Backend

pytestmark = pytest.mark.postgres


async def _open(pg: Backend) -> PostgresStore:
    assert pg.url is not None
    store = PostgresStore(pg.url, schema=pg.schema, writer="process")
    pg.opened.append(store)
    await store.migrate()
    return store


def _writer_backends(url: str) -> list[int]:
    """The server's backends of this database that the writer's connections run on."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s"
            " AND datname = current_database()",
            (APPLICATION_NAME,),
        ).fetchall()
    return [int(row[0]) for row in rows]


async def test_deliveries_go_to_the_child_and_reads_stay_on_the_thread(
    pg: Backend,
) -> None:
    store = await _open(pg)
    child = child_pid(store)
    assert child != os.getpid()
    answers: list[UpdatesRecorded] = []

    async def call() -> None:
        answers.append(await deliver(store, 1))

    os.kill(child, signal.SIGSTOP)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(call)
            await trio.testing.wait_all_tasks_blocked()
            # The delivery waits on the stopped child; a read runs on the thread meanwhile.
            assert writer_of(store).in_flight == 1 and answers == []
            assert await store.get_message(wa_message_id="wamid.1", direction="inbound") is None
            os.kill(child, signal.SIGCONT)
    finally:
        os.kill(child, signal.SIGCONT)
    assert [a.new for a in answers] == [("u1",)] and answers[0].event == "recorded"
    again = await deliver(store, 1)
    assert (again.event, again.new) == ("duplicate", ())
    stored = await store.get_message(wa_message_id="wamid.1", direction="inbound")
    assert stored is not None and stored.from_phone == "16505551234"
    assert store._engine.queued == 0


async def test_concurrent_deliveries_and_copies_are_all_answered_and_stored_once(
    pg: Backend,
) -> None:
    store = await _open(pg)
    answers: dict[tuple[int, int], UpdatesRecorded] = {}

    async def call(i: int, copy: int) -> None:
        answers[i, copy] = await deliver(store, i)

    async with trio.open_nursery() as nursery:
        for i in range(48):
            for copy in range(2 if i % 4 == 0 else 1):
                nursery.start_soon(call, i, copy)
    assert pg.count("SELECT count(*) FROM svc_webhook_events") == 48
    assert pg.count("SELECT count(*) FROM svc_messages") == 48
    for i in range(48):
        copies = [answers[i, c] for c in range(2 if i % 4 == 0 else 1)]
        events = ["recorded", "duplicate"][: len(copies)]
        assert sorted(a.event for a in copies) == sorted(events)
        # Each update is recorded new once; a copy finds it recorded (a duplicate).
        assert sum(len(a.new) for a in copies) == 1


async def test_a_server_lost_under_a_batch_fails_it_and_the_next_call_reconnects(
    pg: Backend,
) -> None:
    """The writer's backend ends (as when the server restarts): that delivery fails with the
    pessimistic error (the platform redelivers), nothing is half-stored, the engine probes
    the server, and the next delivery runs on a new connection of the same child."""
    store = await _open(pg)
    assert pg.url is not None
    assert (await deliver(store, 1)).event == "recorded"
    child = child_pid(store)
    (backend,) = _writer_backends(pg.url)
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (backend,))
    with pytest.raises(PersistenceError) as caught:
        await deliver(store, 2)
    assert caught.value.code == "outbox_failed"
    assert store._engine._unreachable  # the next call probes before anything else runs
    assert (await deliver(store, 3)).event == "recorded"
    assert (await deliver(store, 2)).event == "recorded"  # the redelivery
    assert child_pid(store) == child
    assert _writer_backends(pg.url) != [backend]
    assert pg.count("SELECT count(*) FROM svc_webhook_events") == 3


@pytest.mark.parametrize("writer", ["child", "", "Process"])
def test_the_writer_option_is_checked(writer: str) -> None:
    with pytest.raises(PersistenceValidationError) as caught:
        PostgresStore("postgresql://localhost/x", writer=writer)
    assert caught.value.code == "invalid_options"
    assert "writer must be one of thread, process" in caught.value.message


def test_the_writer_runs_under_asyncio_too(postgres_url: str, postgres_run_prefix: str) -> None:
    async def main() -> UpdatesRecorded:
        store = PostgresStore(postgres_url, schema=f"{postgres_run_prefix}_aio", writer="process")
        await store.migrate()
        try:
            return await deliver(store, 1)
        finally:
            await store.close()

    assert asyncio.run(main()).new == ("u1",)


async def test_a_writer_started_while_the_server_is_out_of_reach_still_starts() -> None:
    """The child connects at its first batch: one started during an outage answers "lost"
    (the store then refuses calls until its probe reconnects) instead of leaving the store
    on its thread for good."""
    config = ("postgresql://postgres@127.0.0.1:1/nothing", {"autocommit": True}, 1.0)
    writer = _child.Child(_engine.run_writer, config, fallback=None)
    assert await writer.start()
    try:
        delivery = DeliveryWrite(event_key="e1", event_hash="h", received_at=0)
        batch = Batch([Job(Kind.DELIVERY, delivery, code="outbox_failed")])
        await writer.run(batch)
        assert batch.lost is True
        assert [(job.ok, job.result, job.error) for job in batch.jobs] == [(False, None, None)]
    finally:
        await writer.aclose()


async def test_a_writer_that_cannot_start_leaves_the_writes_on_the_thread(
    pg: Backend,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="svc.store.writer")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    store = await _open(pg)
    assert writer_of(store).unavailable
    assert (await deliver(store, 1)).new == ("u1",)
    assert pg.count("SELECT count(*) FROM svc_webhook_events") == 1
    said = [r.getMessage() for r in caplog.records if r.name == "svc.store.writer"]
    assert said == [
        "store writer process could not start; these writes run on the store's thread from now on"
    ]


def test_an_error_that_does_not_survive_pickling_is_answered_pessimistically() -> None:
    class Unpicklable(Exception):
        def __init__(self, a: str, b: str) -> None:
            super().__init__(a)

    kept: Job[object] = Job(Kind.INBOX, (), code="outbox_failed")
    kept.error = PersistenceValidationError("invalid_record", "row_id must be text.")
    dropped: Job[object] = Job(Kind.INBOX, (), code="outbox_failed")
    dropped.error = Unpicklable("a", "b")
    frames = _child._Frames()
    outcomes = (_child._outcome(kept), _child._outcome(dropped))
    response: _child.WriteResponse = (False, outcomes)
    frames.feed(_child._frame(response))
    answer = frames.take()
    assert type(answer) is tuple
    (ok_a, _, error_a), (ok_b, _, error_b) = answer[1]
    assert (ok_a, ok_b, error_b) == (False, False, None)
    assert isinstance(error_a, PersistenceValidationError) and error_a.code == "invalid_record"
