"""An outbox worker process killed (``kill -9``) mid-batch; every item still completes once.

The outbox lease is fixed at five minutes (``OUTBOX_LEASE_MS``), so "after
the lease expires" is a later worker whose injected clock runs
``OUTBOX_LEASE_MS`` + 1 s ahead, instead of a test that waits five minutes.
A worker on the real clock first shows the dead worker's leases are respected.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from svc.store import OUTBOX_LEASE_MS, PostgresStore, SqliteStore
from tests._support import Captured, FakeGraph, child_env

from .conftest import REPO

pytestmark = pytest.mark.slow

ITEMS = 25
BATCH = 10
WORKER = Path(__file__).with_name("_outbox_worker.py")


def _worker(
    target: list[str], graph: FakeGraph, env: dict[str, str], *extra: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WORKER), *target, "--graph", graph.url, "--batch", str(BATCH), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=child_env(env),
    )


def _finish(process: subprocess.Popen[str], captured: Captured) -> tuple[int, list[str]]:
    out, err = process.communicate(timeout=60)
    captured.add("worker stdout", out)
    captured.add("worker stderr", err)
    return process.returncode, out.splitlines()


def _handled(lines: list[str]) -> list[tuple[str, str]]:
    return [(line.split()[1], line.split()[2]) for line in lines if line.startswith("handling ")]


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def test_worker_killed_mid_batch_then_every_item_completes_once_and_stale_leases_cannot(
    backend: str,
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    request: pytest.FixtureRequest,
) -> None:
    env: dict[str, str] = {}
    if backend == "sqlite":
        target = ["--sqlite", str(tmp_path / "outbox.db")]
    else:
        dsn, _ = request.getfixturevalue("pg_schema")
        env = {"SVC_REL_DB": dsn}
        target = ["--dsn-env", "SVC_REL_DB"]

    # Worker A enqueues 25 items, claims a batch of 10 and runs their handlers side by side:
    # 3 deliveries succeed (and are marked), 7 hang: kill -9.
    graph.hold(from_request=4)
    first = _worker(target, graph, env, "--enqueue", str(ITEMS))
    graph.wait_for_requests(BATCH)
    _wait_for_succeeded(backend, tmp_path, request, 3)
    first.kill()
    code, first_lines = _finish(first, captured)
    graph.release()
    assert code == -9
    first_handled = _handled(first_lines)
    assert len(first_handled) == BATCH

    # Worker B on the real clock: the 15 unclaimed items; the dead worker's 7 leases hold.
    code, second_lines = _finish(_worker(target, graph, env), captured)
    assert code == 0
    second_handled = _handled(second_lines)
    assert len(second_handled) == ITEMS - BATCH

    # Worker C after the lease: the 7 items the dead worker held (the in-flight one included).
    offset = str(OUTBOX_LEASE_MS / 1000 + 1)
    code, third_lines = _finish(_worker(target, graph, env, "--clock-offset", offset), captured)
    assert code == 0
    third_handled = _handled(third_lines)
    assert len(third_handled) == BATCH - 3

    handled_ids = Counter(i for i, _ in [*first_handled, *second_handled, *third_handled])
    assert set(handled_ids) == {f"item-{n:04d}" for n in range(ITEMS)}
    # At-least-once delivery: only the 7 deliveries in flight at the kill were made twice.
    assert {i for i, n in handled_ids.items() if n > 1} == {i for i, _ in third_handled}
    assert len(graph.requests) == ITEMS + BATCH - 3

    rows = _rows(backend, tmp_path, request)
    assert len(rows) == ITEMS
    assert {status for status, _ in rows.values()} == {"succeeded"}
    # The 7 reclaimed items were attempted twice (the dead claim and the new one).
    assert Counter(attempts for _, attempts in rows.values()) == Counter({1: ITEMS - 7, 2: 7})

    # A stale lease (the dead worker's) can neither complete nor reschedule its items.
    store = (
        SqliteStore(tmp_path / "outbox.db")
        if backend == "sqlite"
        else PostgresStore(env["SVC_REL_DB"])
    )
    now = datetime.now(UTC) + timedelta(milliseconds=OUTBOX_LEASE_MS * 2)
    try:
        for item_id, lease in first_handled:
            assert (
                await store.mark_outbox_item_succeeded(id=item_id, lease_id=lease, now=now) is False
            )
            assert (
                await store.mark_outbox_item_failed(
                    id=item_id, lease_id=lease, now=now, retry_delay_ms=0
                )
                is False
            )
        assert await store.count_outbox_pending() == 0
    finally:
        await store.close()
    print(
        f"outbox {backend}: items={ITEMS} killed_workers=1 "
        f"deliveries={len(graph.requests)} completed={ITEMS} lost=0"
    )


def _wait_for_succeeded(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest, count: int
) -> None:
    """Poll the worker's store (a real process) until ``count`` items are marked succeeded."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            rows = _rows(backend, tmp_path, request)
        except (sqlite3.Error, psycopg.Error):
            rows = {}
        if sum(status == "succeeded" for status, _ in rows.values()) >= count:
            return
        time.sleep(0.02)
    raise AssertionError("the worker never marked its first deliveries")


def _rows(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> dict[str, tuple[str, int]]:
    query = "SELECT id, status, attempts FROM svc_outbox"
    if backend == "sqlite":
        with sqlite3.connect(tmp_path / "outbox.db") as conn:
            found = conn.execute(query).fetchall()
        conn.close()
    else:
        dsn, _ = request.getfixturevalue("pg_schema")
        with psycopg.connect(dsn) as pg:
            found = pg.execute(query).fetchall()
    return {row[0]: (row[1], row[2]) for row in found}
