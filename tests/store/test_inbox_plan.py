"""The claim's plan on SQLite: it walks the inbox in id order and stops at the limit. A plan
that reads every due row and sorts them (a temp B-tree) costs milliseconds per claim at
thousands of waiting rows, under the write lock the webhook writes wait for."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from svc.store import _inbox_ops
from svc.store.sqlite._store import SqliteSession

from .conftest import migrated_sqlite_file


@pytest.mark.parametrize("analyzed", [False, True], ids=["no-statistics", "analyzed"])
def test_the_claim_walks_ids_in_order_without_sorting(tmp_path: Path, analyzed: bool) -> None:
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
        if analyzed:
            conn.execute("ANALYZE")
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        claimed = _inbox_ops.claim_inbox_items(SqliteSession(conn), 25, 8, 60_000)
        conn.set_trace_callback(None)
        assert len(claimed) == 8
        assert [item.id for item in claimed] == sorted(item.id for item in claimed)
        (select,) = [sql for sql in statements if sql.startswith("SELECT i.id")]
        plan = " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + select))
        assert "TEMP B-TREE" not in plan
        assert "SCAN i" in plan or "USING INTEGER PRIMARY KEY" in plan
        assert "svc_inbox_due" not in plan and "svc_inbox_updated" not in plan
    finally:
        conn.close()
