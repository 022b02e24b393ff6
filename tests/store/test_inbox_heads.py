"""The heads table (``svc_inbox_heads``, migration 016): its triggers keep one row per queue
that has a row not dead (the queue's head and when it is claimable) through every change the
store makes, the migration fills it from the rows already stored, and a claim reads it by
index: its work does not grow with a queue's depth."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from svc.store import InboxItem, SqliteStore, _inbox_ops, _person
from svc.store._session import Session
from svc.store.sqlite._store import SqliteSession

from .conftest import T0, AnyStore, Backend, migrated_sqlite_file
from .test_inbox import record

LEASE = 60_000
T0_MS = int(T0.timestamp() * 1000)
Heads = dict[str, tuple[int, int | None]]


def ms(n: int) -> timedelta:
    return timedelta(milliseconds=n)


def expected_heads(rows: Sequence[Sequence[Any]]) -> Heads:
    """The definition, from ``(id, queue_key, status, next_attempt_at, lease_expires_at)``
    rows: each queue's lowest id not dead, claimable when pending and due or running with a
    lapsed lease, and not before the live lease of a later running or dropping row."""
    heads: Heads = {}
    for item_id, queue, status, next_at, lease in sorted(rows, key=lambda r: int(r[0])):
        if status == "dead":
            continue
        if queue not in heads:
            due = {"pending": next_at, "running": lease}.get(status)
            heads[queue] = (int(item_id), None if due is None else int(due))
        elif status in ("running", "dropping"):
            head, due = heads[queue]
            heads[queue] = (head, None if due is None else max(due, int(lease)))
    return heads


def _read(s: Session) -> tuple[Heads, Heads]:
    rows = s.fetchall(
        "SELECT id, queue_key, status, next_attempt_at, lease_expires_at FROM svc_inbox"
    )
    kept = {
        str(q): (int(i), None if d is None else int(d))
        for i, q, d in s.fetchall("SELECT id, queue_key, due_at FROM svc_inbox_heads")
    }
    return kept, expected_heads(rows)


async def assert_heads_kept(store: AnyStore) -> Heads:
    kept, expected = await store._call("query_failed", _read, write=False)
    assert kept == expected
    return kept


async def test_every_change_keeps_the_heads_table(store: AnyStore) -> None:
    """Record, claim, complete (consuming later rows), fail, kill, retry a dead letter while a
    later item runs (it blocks the queue), take, extend, drop, fold, prune: after each the
    table equals the definition computed from the rows."""
    await record(store, ("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("c1", "c"))
    assert (await assert_heads_kept(store)).keys() == {"a", "b", "c"}
    a1, b1, c1 = await store.claim_inbox_items(now=T0, limit=10, lease_ms=LEASE)
    await assert_heads_kept(store)
    assert await store.mark_inbox_item_dead(id=a1.id, lease_id=a1.lease_id or "", now=T0)
    await assert_heads_kept(store)
    (a2,) = await store.claim_inbox_items(now=T0 + ms(1), limit=10, lease_ms=LEASE)
    assert a2.update_key == "a2"
    # The dead letter retried while a2 runs: it is the head, blocked until a2's lease ends.
    assert await store.retry_inbox_item(id=a1.id, now=T0 + ms(2)) is not None
    heads = await assert_heads_kept(store)
    assert heads["a"] == (a1.id, T0_MS + 1 + LEASE)
    assert await store.extend_inbox_lease(
        id=a2.id, lease_id=a2.lease_id or "", until=T0 + ms(5 * LEASE)
    )
    assert (await assert_heads_kept(store))["a"] == (a1.id, T0_MS + 5 * LEASE)
    a3 = {i.update_key: i for i in await store.list_inbox_items()}["a3"]
    assert await store.mark_inbox_items_taken(id=a2.id, lease_id=a2.lease_id or "", taken=[a3.id])
    await assert_heads_kept(store)
    assert await store.mark_inbox_item_failed(
        id=b1.id, lease_id=b1.lease_id or "", now=T0, retry_delay_ms=500
    )
    assert (await assert_heads_kept(store))["b"] == (b1.id, T0_MS + 500)
    assert await store.drop_inbox_item(id=c1.id, now=T0)  # running: dropping, then gone
    await assert_heads_kept(store)
    assert await store.mark_inbox_item_succeeded(id=c1.id, lease_id=c1.lease_id or "") is False
    assert "c" not in await assert_heads_kept(store)
    assert await store.mark_inbox_item_succeeded(
        id=a2.id, lease_id=a2.lease_id or "", consumed=[a3.id]
    )
    await assert_heads_kept(store)
    await record(store, ("d1", "d"), ("d2", "d"), ("e1", "e"), offset=10)
    await store._call(
        "outbox_failed", lambda s: _person.move_queues(s, {"d": "a", "e": "b"}), write=True
    )
    heads = await assert_heads_kept(store)
    assert heads.keys() == {"a", "b"}
    claimed = await store.claim_inbox_items(now=T0 + ms(6 * LEASE), limit=10, lease_ms=LEASE)
    assert [i.update_key for i in claimed] == ["a1", "b1"]
    await assert_heads_kept(store)
    for item in claimed:
        assert await store.mark_inbox_item_dead(
            id=item.id, lease_id=item.lease_id or "", now=T0 + ms(6 * LEASE)
        )
    await assert_heads_kept(store)
    assert await store.delete_dead_inbox_items(older_than=T0 + ms(7 * LEASE)) == 2
    heads = await assert_heads_kept(store)
    assert set(heads) == {"a", "b"}  # d1, d2 wait in a; e1 in b


async def test_a_fold_moving_earlier_rows_in_makes_them_the_head(store: AnyStore) -> None:
    """Rows a fold moves keep their ids: earlier than the target's head, the first of them is
    its head (whichever queue's row a trigger recomputes first)."""
    await record(store, ("z1", "z"), ("m1", "m"), ("z2", "z"))
    await record(store, ("a1", "a"), ("y1", "y"), offset=1)
    await store._call(
        "outbox_failed", lambda s: _person.move_queues(s, {"z": "a", "m": "y"}), write=True
    )
    heads = await assert_heads_kept(store)
    ids = {i.update_key: i.id for i in await store.list_inbox_items()}
    assert heads == {"a": (ids["z1"], T0_MS), "y": (ids["m1"], T0_MS)}
    claimed = await store.claim_inbox_items(now=T0 + ms(1), limit=10, lease_ms=LEASE)
    assert [i.update_key for i in claimed] == ["z1", "m1"]


async def test_the_migration_fills_the_heads_of_stored_rows(persistent_backend: Backend) -> None:
    """Rows stored before migration 016 get their heads: a dead letter skipped, a retrying
    head, a running head, a later running row blocking its queue."""
    store = persistent_backend.open()
    await store.migrate(target_version=15)
    persistent_backend.raw_sql(
        "INSERT INTO svc_inbox (update_key, queue_key, kind, sealed, status, next_attempt_at,"
        " lease_id, lease_expires_at, created_at, updated_at) VALUES"
        " ('k1', 'a', 'm', ?, 'dead', 1, NULL, NULL, 1, 1),"
        " ('k2', 'a', 'm', ?, 'pending', 7, NULL, NULL, 1, 1),"
        " ('k3', 'a', 'm', ?, 'running', 1, 'l', 90, 1, 1),"
        " ('k4', 'b', 'm', ?, 'running', 1, 'l', 40, 1, 1),"
        " ('k5', 'b', 'm', ?, 'pending', 1, NULL, NULL, 1, 1),"
        " ('k6', 'c', 'm', ?, 'dead', 1, NULL, NULL, 1, 1)",
        (b"x",) * 6,
    )
    await store.migrate()
    kept = {
        str(q): (int(i), d)
        for i, q, d in persistent_backend.raw_sql(
            "SELECT id, queue_key, due_at FROM svc_inbox_heads"
        )
    }
    ids = dict(persistent_backend.raw_sql("SELECT update_key, id FROM svc_inbox"))
    assert kept == {"a": (ids["k2"], 90), "b": (ids["k4"], 40)}


# --- the claim's cost does not grow with a queue's depth ---------------------------------

DEPTHS = (5, 5000)
OTHER_QUEUES = 5


def _fill_sqlite(path: Path, depth: int) -> sqlite3.Connection:
    conn = sqlite3.connect(migrated_sqlite_file(path), isolation_level=None)
    rows = [(f"deep{n}", "deep") for n in range(depth)]
    rows += [(f"other{n}", f"q{n}") for n in range(OTHER_QUEUES)]
    conn.executemany(
        "INSERT INTO svc_inbox (update_key, queue_key, kind, sealed, next_attempt_at,"
        " created_at, updated_at) VALUES (?, ?, 'm', x'00', 0, 0, 0)",
        rows,
    )
    conn.execute("ANALYZE")
    return conn


def _sqlite_claim_work(conn: sqlite3.Connection) -> tuple[int, list[str]]:
    """The virtual-machine steps (in thousands) of one claim of every due head, and the
    statements it ran."""
    steps = 0
    statements: list[str] = []

    def step() -> int:
        nonlocal steps
        steps += 1
        return 0

    conn.set_progress_handler(step, 1000)
    conn.set_trace_callback(statements.append)
    conn.execute("BEGIN IMMEDIATE")
    claimed = _claim(SqliteSession(conn), 1, 100)
    conn.execute("COMMIT")
    conn.set_progress_handler(None, 0)
    conn.set_trace_callback(None)
    assert [i.update_key for i in claimed] == ["deep0", *(f"other{n}" for n in range(5))]
    return steps, statements


def test_a_sqlite_claim_reads_the_heads_not_the_queue(tmp_path: Path) -> None:
    work = {}
    for depth in DEPTHS:
        conn = _fill_sqlite(tmp_path / f"d{depth}.sqlite3", depth)
        try:
            work[depth], statements = _sqlite_claim_work(conn)
            (select,) = [sql for sql in statements if "FROM svc_inbox_heads" in sql]
            plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + select)]
            # The due heads, in turn, by their (due_at, id) index.
            assert plan[0].startswith("SEARCH i USING INDEX svc_inbox_heads_due"), plan
            assert all("TEMP B-TREE" not in line for line in plan), plan
            # Every statement of the claim on svc_inbox finds its rows by an index.
            for sql in statements:
                if "svc_inbox " in sql and "svc_inbox_heads" not in sql:
                    lines = [r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql)]
                    assert all("USING" in line for line in lines if "svc_inbox" in line), lines
        finally:
            conn.close()
    # A thousand times the waiting rows: the same work (the triggers' included).
    assert work[5000] <= work[5] + 2, work


def _pg_inbox_reads(s: Session) -> dict[str, int]:
    """This backend's counts of reads of svc_inbox not yet flushed to the shared statistics.
    PostgreSQL 15 flushes them at most once a second, so they may hold earlier transactions'
    reads too: a claim's own reads are the difference around it."""
    row = s.fetchone(
        "SELECT seq_scan, seq_tup_read, idx_tup_fetch FROM pg_stat_xact_user_tables"
        " WHERE relname = 'svc_inbox' AND schemaname = current_schema()"
    )
    assert row is not None
    return {"seq_scan": int(row[0]), "seq_tup_read": int(row[1]), "idx_tup_fetch": int(row[2])}


def _pg_claim(s: Session) -> tuple[list[str], dict[str, int], list[dict[str, Any]]]:
    """Claim every due head in one transaction; what it claimed, what it read of svc_inbox
    (this transaction's statistics: the triggers' reads included) and the due-heads plan."""
    ((plan,),) = s.fetchall(
        "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "
        + _inbox_ops._DUE_HEADS
        + " FOR UPDATE OF i SKIP LOCKED",
        (1, 1, 100),
    )
    before = _pg_inbox_reads(s)
    claimed = _claim(s, 1, 100)
    after = _pg_inbox_reads(s)
    reads = {name: after[name] - before[name] for name in after}
    nodes: list[dict[str, Any]] = []
    pending = [(json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]]
    while pending:
        node = pending.pop()
        nodes.append(node)
        pending.extend(node.get("Plans", ()))
    return [i.update_key for i in claimed], reads, nodes


async def test_a_postgres_claim_reads_the_heads_not_the_queue(pg: Backend) -> None:
    reads = {}
    store = pg.open()
    await store.migrate()
    for depth in DEPTHS:
        pg.raw_sql("DELETE FROM svc_inbox")
        pg.raw_sql(
            "INSERT INTO svc_inbox (update_key, queue_key, kind, sealed, next_attempt_at,"
            " created_at, updated_at) SELECT 'deep' || n, 'deep', 'm', '\\x00', 0, 0, 0"
            " FROM generate_series(0, ? - 1) AS n",
            (depth,),
        )
        pg.raw_sql(
            "INSERT INTO svc_inbox (update_key, queue_key, kind, sealed, next_attempt_at,"
            " created_at, updated_at) SELECT 'other' || n, 'q' || n, 'm', '\\x00', 0, 0, 0"
            " FROM generate_series(0, 4) AS n"
        )
        pg.raw_sql("ANALYZE")
        claimed, reads[depth], nodes = await store._call("outbox_failed", _pg_claim, write=True)
        assert claimed == [f"deep{depth_base}" for depth_base in ("0",)] + [
            f"other{n}" for n in range(5)
        ]
        assert [n for n in nodes if n.get("Relation Name") == "svc_inbox"] == []
        heads = [n for n in nodes if n.get("Relation Name") == "svc_inbox_heads"]
        assert heads and all(n.get("Rows Removed by Filter", 0) <= 6 for n in heads)
    # At depth: no scan of svc_inbox; each claimed head its row and its queue's next head.
    assert reads[5000]["seq_scan"] == 0, reads
    assert reads[5000]["idx_tup_fetch"] <= 4 * (OTHER_QUEUES + 1), reads


@pytest.mark.parametrize("depth", [0, 3])
async def test_a_queue_emptied_and_refilled_gets_its_head_back(tmp_path: Path, depth: int) -> None:
    store = SqliteStore(tmp_path / "refill.db")
    await store.migrate()
    try:
        await record(store, *((f"x{n}", "x") for n in range(depth + 1)))
        for _ in range(depth + 1):
            (item,) = await store.claim_inbox_items(now=T0, limit=5, lease_ms=LEASE)
            assert await store.mark_inbox_item_succeeded(id=item.id, lease_id=item.lease_id or "")
        assert await assert_heads_kept(store) == {}
        await record(store, ("y", "x"), offset=1)
        assert [
            i.update_key for i in await store.claim_inbox_items(now=T0, limit=5, lease_ms=1)
        ] == []
        assert [
            i.update_key for i in await store.claim_inbox_items(now=T0 + ms(1), limit=5, lease_ms=1)
        ] == ["y"]
    finally:
        await store.close()


def _pg_consume_all(s: Session) -> dict[str, int]:
    """Claim the head, complete it consuming every later row of its queue, in one
    transaction; what that read of svc_inbox by index (the triggers' reads included)."""
    (head,) = _claim(s, 1, 1)
    later = tuple(
        int(row[0]) for row in s.fetchall("SELECT id FROM svc_inbox WHERE id > ?", (head.id,))
    )
    assert _inbox_ops.mark_inbox_item_succeeded(s, head.id, head.lease_id or "", later)
    row = s.fetchone(
        "SELECT idx_tup_fetch, seq_tup_read FROM pg_stat_xact_user_tables"
        " WHERE relname = 'svc_inbox' AND schemaname = current_schema()"
    )
    assert row is not None
    return {"idx_tup_fetch": int(row[0]), "seq_tup_read": int(row[1]), "consumed": len(later)}


async def test_a_postgres_completion_consuming_a_queue_refreshes_it_once(pg: Backend) -> None:
    """The heads triggers run once per statement: a completion deleting 3,000 rows of its
    queue reads each of them a few times, not once per row deleted before it."""
    store = pg.open()
    await store.migrate()
    pg.raw_sql(
        "INSERT INTO svc_inbox (update_key, queue_key, kind, sealed, next_attempt_at,"
        " created_at, updated_at) SELECT 'k' || n, 'deep', 'm', '\\x00', 0, 0, 0"
        " FROM generate_series(0, 3000) AS n"
    )
    pg.raw_sql("ANALYZE")
    reads = await store._call("outbox_failed", _pg_consume_all, write=True)
    assert reads["consumed"] == 3000
    assert reads["idx_tup_fetch"] <= 5 * 3000, reads
    assert pg.raw_sql("SELECT count(*) FROM svc_inbox_heads") == [(0,)]


async def test_a_postgres_queue_emptied_while_a_record_inserts_into_it_keeps_its_head(
    pg: Backend,
) -> None:
    """A record holding the queue's advisory lock saw the queue's heads row and skipped it;
    the completion that empties the queue meanwhile keeps the row (due at once) instead of
    deleting it, and the next claims find the recorded row."""
    store = pg.open()
    await store.migrate()
    await record(store, ("a1", "q"))
    (a1,) = await store.claim_inbox_items(now=T0, limit=5, lease_ms=LEASE)
    assert pg.url is not None
    with psycopg.connect(pg.url, options=f"-c search_path={pg.schema}") as other:
        other.execute("SELECT pg_advisory_xact_lock(23644, hashtext('inbox:q'))")
        other.execute(
            "INSERT INTO svc_inbox (update_key, queue_key, kind, sealed, next_attempt_at,"
            " created_at, updated_at) VALUES ('a2', 'q', 'm', '\\x00', 0, 0, 0)"
        )  # its trigger saw a1's heads row: nothing to insert
        assert await store.mark_inbox_item_succeeded(id=a1.id, lease_id=a1.lease_id or "")
        assert pg.raw_sql("SELECT id, due_at FROM svc_inbox_heads") == [(a1.id, 0)]
        assert await store.claim_inbox_items(now=T0, limit=5, lease_ms=LEASE) == []
        other.commit()
    claimed = await store.claim_inbox_items(now=T0, limit=5, lease_ms=LEASE)
    claimed += await store.claim_inbox_items(now=T0, limit=5, lease_ms=LEASE)
    assert [i.update_key for i in claimed] == ["a2"]


def _claim(s: Session, now: int, limit: int) -> list[InboxItem]:
    """The claim's SQL-level form, its heads as the store's records."""
    return [
        _inbox_ops.claimed_item(row) for row in _inbox_ops.claim_inbox_rows(s, now, limit, LEASE)
    ]
