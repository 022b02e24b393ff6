"""What callers of either store's writer process see when the child exits, is lost mid-call,
gets Ctrl+C, or is closed with a call in flight, and when the caller is cancelled
(``sqlite-process`` and ``postgres-process``: the same ``_child`` runner).
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio
import trio.testing

from svc.store import PersistenceError, UpdatesRecorded

from ._writer_calls import child_pid, deliver, writer_of
from .conftest import AnyStore, Backend, _backend, _closing_opened

_EVENTS = "SELECT count(*) FROM svc_webhook_events"


@pytest.fixture(params=["sqlite-process", "postgres-process"])
async def writer_backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with _closing_opened(_backend(request.param, request, tmp_path)) as result:
        yield result


async def _open(backend: Backend) -> AnyStore:
    store = backend.open()
    await store.migrate()
    return store


def _said(caplog: pytest.LogCaptureFixture, backend: Backend) -> list[str]:
    """The writer's log lines; none may carry the database's location."""
    lines = [r.getMessage() for r in caplog.records if r.name == "svc.store.writer"]
    assert not [line for line in lines for secret in backend.secrets if secret in line]
    return lines


async def test_a_writer_that_exited_is_started_again_before_the_next_call(
    writer_backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="svc.store.writer")
    store = await _open(writer_backend)
    first = child_pid(store)
    os.kill(first, signal.SIGKILL)
    proc = writer_of(store)._proc
    assert proc is not None
    await proc.wait()
    assert (await deliver(store, 1)).new == ("u1",)
    assert child_pid(store) != first
    assert writer_backend.count(_EVENTS) == 1
    assert _said(caplog, writer_backend) == ["store writer process exited; starting a new one"]


async def test_a_writer_lost_mid_call_fails_that_call_and_the_next_one_runs(
    writer_backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    """The call in flight when the child dies gets the pessimistic error (the platform
    redelivers); nothing is half-stored, the loss is logged, and the next call starts a
    new child."""
    caplog.set_level(logging.WARNING, logger="svc.store.writer")
    store = await _open(writer_backend)
    child = child_pid(store)
    failed: list[PersistenceError] = []

    async def call() -> None:
        try:
            await deliver(store, 1)
        except PersistenceError as exc:
            failed.append(exc)

    os.kill(child, signal.SIGSTOP)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(call)
        await trio.testing.wait_all_tasks_blocked()
        assert writer_of(store).in_flight == 1
        os.kill(child, signal.SIGKILL)
    assert [e.code for e in failed] == ["outbox_failed"]
    assert writer_backend.count(_EVENTS) == 0
    assert (await deliver(store, 2)).new == ("u2",)
    assert child_pid(store) != child
    assert _said(caplog, writer_backend) == [
        "store writer process lost; 1 call(s) in flight failed (a webhook is answered 503"
        " and redelivered); the next call starts a new one"
    ]


async def test_a_cancelled_caller_still_gets_its_sent_call_committed(
    writer_backend: Backend,
) -> None:
    """Unlike a PostgreSQL call on the thread (whose running statement is cancelled
    server-side), a call sent to the writer runs to its end; the cancellation comes after."""
    store = await _open(writer_backend)
    child = child_pid(store)
    outcome: list[object] = []

    async def call(scope: trio.CancelScope) -> None:
        with scope:
            outcome.append(await deliver(store, 1))
            await trio.lowlevel.checkpoint()
        outcome.append(scope.cancelled_caught)

    os.kill(child, signal.SIGSTOP)
    try:
        scope = trio.CancelScope()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(call, scope)
            await trio.testing.wait_all_tasks_blocked()
            scope.cancel()
            await trio.testing.wait_all_tasks_blocked()
            assert outcome == []  # still waiting for the child, cancelled or not
            os.kill(child, signal.SIGCONT)
    finally:
        os.kill(child, signal.SIGCONT)
    assert isinstance(outcome[0], UpdatesRecorded) and outcome[1] is True
    assert writer_backend.count(_EVENTS) == 1


async def test_ctrl_c_at_the_terminal_does_not_stop_the_writer(writer_backend: Backend) -> None:
    """The terminal sends SIGINT to its whole foreground group; the parent drains and closes
    the writer itself."""
    store = await _open(writer_backend)
    child = child_pid(store)
    os.kill(child, signal.SIGINT)
    assert (await deliver(store, 1)).new == ("u1",)
    assert child_pid(store) == child


async def test_close_answers_the_calls_in_flight_then_ends_the_writer(
    writer_backend: Backend,
) -> None:
    store = await _open(writer_backend)
    proc = writer_of(store)._proc
    assert proc is not None
    answers: list[UpdatesRecorded] = []

    async def call() -> None:
        answers.append(await deliver(store, 1))

    os.kill(proc.pid, signal.SIGSTOP)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(call)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(store.close)
        await trio.testing.wait_all_tasks_blocked()
        os.kill(proc.pid, signal.SIGCONT)
    assert [a.new for a in answers] == [("u1",)]
    assert proc.returncode == 0
    assert writer_backend.count(_EVENTS) == 1
