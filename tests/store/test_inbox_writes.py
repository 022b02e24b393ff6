"""The inbox's hot writes are cheap for ingestion: a claim reads the due heads of
``svc_inbox_heads`` (one row per queue, kept by migration 016's triggers) in turn by its
``(due_at, id)`` index and stops at the limit, with no sort, no scan of ``svc_inbox``'s status
indexes and one primary-key lookup of each queue's state (a plan that reads and sorts every due row
costs milliseconds per claim at thousands of waiting rows, under the write lock the webhook
writes wait for); claims and completions share a group-commit batch with the webhook writes
(one transaction)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from svc.store import (
    InboxRow,
    PersistenceValidationError,
    SqliteStore,
    UpdatesRecorded,
    _inbox_ops,
)
from svc.store._commit import Batch, Job
from svc.store._inbox_ops import InboxWrite
from svc.store._kinds import DeliveryWrite, Kind
from svc.store.sqlite._store import SqliteSession

from .conftest import T0, migrated_sqlite_file


def _plain(value: object) -> bool:
    """Whether ``value`` holds only builtin scalars in lists and tuples."""
    if isinstance(value, list | tuple):
        return all(_plain(item) for item in value)
    return value is None or type(value) in (bool, int, str, bytes)


@pytest.mark.parametrize("analyzed", [False, True], ids=["no-statistics", "analyzed"])
def test_the_claim_walks_the_heads_in_turn_without_sorting(tmp_path: Path, analyzed: bool) -> None:
    conn = sqlite3.connect(migrated_sqlite_file(tmp_path / "svc.sqlite3"), isolation_level=None)
    try:
        conn.executemany(
            "INSERT INTO svc_inbox (update_key, queue_key, kind, sealed, status,"
            " next_attempt_at, created_at, updated_at)"
            " VALUES (?, ?, 'message', x'00', ?, ?, 1, 1)",
            [
                (f"k{n}", f"q{n % 300}", "dead" if n % 7 == 0 else "pending", n % 50)
                for n in range(2000)
            ],
        )
        conn.executemany(
            "INSERT INTO svc_user_state (queue_key, sealed, expires_at, updated_at)"
            " VALUES (?, x'01', ?, 1)",
            [(f"q{n}", 20 if n % 4 == 0 else 30) for n in range(0, 300, 2)],  # expired at 25
        )
        if analyzed:
            conn.execute("ANALYZE")
        in_turn = [
            row[0]
            for row in conn.execute(
                "SELECT id FROM svc_inbox_heads WHERE due_at <= 25 ORDER BY due_at, id LIMIT 8"
            )
        ]
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        claimed = [
            _inbox_ops.claimed_item(row)
            for row in _inbox_ops.claim_inbox_rows(SqliteSession(conn), 25, 8, 60_000)
        ]
        conn.set_trace_callback(None)
        assert [item.id for item in claimed] == in_turn and len(in_turn) == 8
        (select,) = [sql for sql in statements if sql.startswith("SELECT i.id")]
        plan = " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + select))
        assert "TEMP B-TREE" not in plan
        assert "USING INDEX svc_inbox_heads_due" in plan
        assert "svc_inbox_due" not in plan and "svc_inbox_updated" not in plan
        assert "SCAN u" not in plan  # each item's state: one primary-key lookup
        with_state = {i.queue_key for i in claimed if i.state is not None}
        queues = [int(i.queue_key[1:]) for i in claimed]
        assert with_state == {f"q{n}" for n in queues if n % 2 == 0 and n % 4 != 0} != set()
    finally:
        conn.close()


def test_an_item_s_writes_touch_no_status_index_and_pruning_reads_the_dead_ones(
    tmp_path: Path,
) -> None:
    """Migration 018: no index of ``svc_inbox`` holds a pending or running row by its status
    (a record, claim and completion write none); the pruning of old dead letters and a
    settlement's release of the items its run took read only their rows' partial indexes
    (the release, once by the queue's index, walked a deep queue at every completion)."""
    conn = sqlite3.connect(migrated_sqlite_file(tmp_path / "svc.sqlite3"), isolation_level=None)
    try:
        indexes = dict(
            conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index'"
                " AND tbl_name = 'svc_inbox' AND sql IS NOT NULL"
            )
        )
        assert "svc_inbox_due" not in indexes and "svc_inbox_updated" not in indexes
        columns = [sql.split("(", 1)[1].split(")", 1)[0] for sql in indexes.values()]
        assert all("status" not in named for named in columns)
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        _inbox_ops.delete_dead_inbox_items(SqliteSession(conn), 1_000, 500)
        _inbox_ops._release_taken(SqliteSession(conn), "q1")
        conn.set_trace_callback(None)
        # Each reads its own rows' partial index: neither walks a queue's or the inbox's rows.
        for statement, index in zip(
            statements, ("svc_inbox_dead", "svc_inbox_consumed"), strict=True
        ):
            plan = " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + statement))
            assert f"INDEX {index} " in plan and "SCAN" not in plan
    finally:
        conn.close()


async def test_a_batch_settles_then_claims_in_the_webhook_writes_transaction(
    tmp_path: Path,
) -> None:
    """Completions and a claim queued with a delivery run in its one transaction, the
    completions first (the claim finds the queue a success released); a refused completion
    fails alone with its own error."""
    store = SqliteStore(tmp_path / "inbox-batch.db")
    await store.migrate()
    statements: list[str] = []

    def row(key: str, queue: str) -> InboxRow:
        return InboxRow(
            update_key=key, queue_key=queue, phone_number_id=None, kind="message", sealed=b"x"
        )

    def job(args: Any, key: str = "") -> Job[Any]:
        return Job(Kind.INBOX, args, code="outbox_failed", key=key)

    try:
        keys = ("a1", "a2", "b1")
        await store.record_webhook_updates(
            event_key="ev-1",
            event_hash="h",
            received_at=T0,
            update_keys=keys,
            inbox=[row("a1", "qa"), row("a2", "qa"), row("b1", "qb")],
        )
        now = int(T0.timestamp() * 1000)
        a1, b1 = await store.claim_inbox_items(now=T0, limit=10, lease_ms=60_000)
        a2 = (await store.list_inbox_queue(queue_key="qa", after_id=a1.id))[0]
        assert store._conn is not None
        store._conn.set_trace_callback(statements.append)
        batch = [
            job((InboxWrite.CLAIM, (now, 10, 60_000)), key="claim"),
            job((InboxWrite.SUCCEEDED, (a1.id, a1.lease_id, (), None))),
            job((InboxWrite.SUCCEEDED, (b1.id, b1.lease_id, (a2.id,), None))),  # a2 is not qb's
            Job(
                Kind.DELIVERY,
                DeliveryWrite(
                    event_key="ev-2",
                    event_hash="h",
                    received_at=now,
                    update_keys=("c1",),
                    inbox=(("c1", "qc", None, "message", b"x", None, None, ()),),
                ),
                code="outbox_failed",
            ),
        ]
        store._run_batch(Batch(batch))
        store._conn.set_trace_callback(None)
        claim, done, refused, delivery = batch
        assert done.ok and done.result is True
        assert not refused.ok and isinstance(refused.error, PersistenceValidationError)
        assert isinstance(delivery.result, UpdatesRecorded) and delivery.result.new == ("c1",)
        assert claim.ok and claim.result is not None
        # Plain values (a writer process's frame pickles them in C), made records here.
        assert _plain(claim.result)
        claimed = [_inbox_ops.claimed_item(row) for row in claim.result]
        assert [item.update_key for item in claimed] == ["a2", "c1"]
        assert [s for s in statements if s.startswith(("BEGIN", "COMMIT"))] == [
            "BEGIN IMMEDIATE",
            "COMMIT",
        ]
        left = await store.list_inbox_items()
        assert [(i.update_key, i.status.value) for i in left] == [
            ("a2", "running"),
            ("b1", "running"),
            ("c1", "running"),
        ]
    finally:
        await store.close()
