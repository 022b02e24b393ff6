"""The group commit's pipeline: a runner of depth 2 (the writer process) holds a second batch
while the first is in flight, once ``PIPELINE_AFTER`` jobs wait; a runner of depth 1 (a
worker thread) never does; every job is answered with its own result, whichever batch ran it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.lowlevel
import trio.testing

from svc.store import SqliteStore
from svc.store._commit import PIPELINE_AFTER, Batch, GroupCommit, Job
from svc.store._errors import FaultCode
from svc.store._kinds import Kind

from ._writer_calls import deliver, writer_of


class HeldRunner:
    """A runner whose batches wait until the test releases them; it records each batch's
    size and the most batches it held at once."""

    withdraws = False

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.sizes: list[int] = []
        self.running = 0
        self.most = 0
        self.release = trio.Event()

    async def run(self, batch: Batch) -> None:
        self.sizes.append(len(batch.jobs))
        self.running += 1
        self.most = max(self.most, self.running)
        await self.release.wait()
        for job in batch.jobs:
            job.ok, job.result, job.error = True, job.args, None
        self.running -= 1


def _job(i: int) -> Job[Any]:
    code: FaultCode = "persistence_unavailable"
    return Job(Kind.DELIVERY, i, code=code)


async def _run_jobs(runner: HeldRunner, count: int) -> list[object]:
    commit = GroupCommit(runner, messages={})
    answers: list[object] = [None] * count

    async def one(i: int) -> None:
        answers[i] = await commit.run(_job(i))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(one, 0)
        await trio.testing.wait_all_tasks_blocked()
        for i in range(1, count):
            nursery.start_soon(one, i)
        await trio.testing.wait_all_tasks_blocked()
        runner.release.set()
    return answers


@pytest.mark.parametrize("backlog", [PIPELINE_AFTER - 1, PIPELINE_AFTER, 3 * PIPELINE_AFTER])
async def test_depth_two_sends_a_second_batch_once_enough_jobs_wait(backlog: int) -> None:
    runner = HeldRunner(depth=2)
    answers = await _run_jobs(runner, 1 + backlog)
    assert answers == list(range(1 + backlog))
    if backlog < PIPELINE_AFTER:
        assert runner.most == 1
        assert runner.sizes == [1, backlog]
    else:
        assert runner.most == 2
        # The first job's batch, then the one that reached PIPELINE_AFTER; the rest after.
        assert runner.sizes[:2] == [1, PIPELINE_AFTER]
        assert sum(runner.sizes) == 1 + backlog


async def test_depth_one_runs_one_batch_at_a_time() -> None:
    runner = HeldRunner(depth=1)
    answers = await _run_jobs(runner, 1 + 3 * PIPELINE_AFTER)
    assert answers == list(range(1 + 3 * PIPELINE_AFTER))
    assert runner.most == 1
    assert runner.sizes == [1, 3 * PIPELINE_AFTER]


async def test_the_writer_process_answers_two_batches_in_flight_in_order(tmp_path: Path) -> None:
    """200 concurrent deliveries through SQLite's writer process, 199 sent while the first is
    in the child: two batches were in flight at once, and each caller got its own delivery's
    answer (new, once) and row."""
    store = SqliteStore(tmp_path / "svc.db", writer="process")
    await store.migrate()
    try:
        child = writer_of(store)
        batches_in_flight: list[int] = []
        answers: dict[int, tuple[str, ...]] = {}

        async def one(i: int) -> None:
            recorded = await deliver(store, i)
            answers[i] = recorded.new

        async def watch() -> None:
            while len(answers) < 200:
                batches_in_flight.append(len(child._answers))
                await trio.lowlevel.checkpoint()

        # The file's write lock, held here: the child's first batch waits for it, so the
        # rest queue behind a batch still in flight, whatever the host's speed.
        blocker = sqlite3.connect(tmp_path / "svc.db", isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watch)
            nursery.start_soon(one, 0)
            try:
                while not child.in_flight:
                    await trio.lowlevel.checkpoint()
                for i in range(1, 200):
                    nursery.start_soon(one, i)
                with trio.fail_after(10):
                    while max(batches_in_flight, default=0) < 2:
                        await trio.lowlevel.checkpoint()
            finally:
                blocker.execute("COMMIT")  # the batches go on, the test passing or not
                blocker.close()
        assert answers == {i: (f"u{i}",) for i in range(200)}
        assert max(batches_in_flight) == 2
        assert child.in_flight == 0
        for i in range(200):
            record = await store.get_message(wa_message_id=f"wamid.{i}")
            assert record is not None and record.row_id == f"row-{i}"
    finally:
        await store.close()


async def test_a_claim_drain_goes_at_once() -> None:
    """A claim's drain forms its batch at once: a delivery started after it was asked is not
    in it, so a claim takes only what was recorded before it was asked."""
    runner = HeldRunner(depth=1)
    commit = GroupCommit(runner, messages={})
    code: FaultCode = "claim_failed"

    async with trio.open_nursery() as nursery:
        nursery.start_soon(commit.run, Job(Kind.INBOX, "claim", code=code))
        while not commit._drains:
            await trio.lowlevel.checkpoint()
        nursery.start_soon(commit.run, _job(1))
        await trio.testing.wait_all_tasks_blocked()
        runner.release.set()
    assert runner.sizes == [1, 1]
