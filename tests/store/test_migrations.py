"""Forward-only migrations: checksums, the lock, and 006's deduplication."""

from __future__ import annotations

import hashlib
import importlib.resources
import time

import pytest

import svc.store
from svc.store import SCHEMA_VERSION, PersistenceError, PersistenceValidationError, SqliteStore
from svc.store._migrations import LOCK_STALE_MS, load_migrations, split_statements
from svc.store._session import Dialect

from .conftest import POSTGRES_KINDS, Backend
from .test_contract import message

SPEC_NAMES = [
    "001_initial",
    "002_outbox_lease_id",
    "003_message_projection",
    "004_inbound_window_index",
    "005_service_request_claims",
    "006_message_uniqueness",
    "007_user_identity",
]


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
def test_schema_version_is_the_highest_packaged_migration(dialect: str) -> None:
    assert isinstance(SCHEMA_VERSION, int) and not isinstance(SCHEMA_VERSION, bool)
    assert max(m.version for m in load_migrations(dialect)) == SCHEMA_VERSION  # type: ignore[arg-type]
    assert svc.store.SCHEMA_VERSION is SCHEMA_VERSION


@pytest.mark.parametrize("dialect", ["sqlite", "postgres"])
def test_packaged_migrations_match_the_spec_and_hash_their_bytes(dialect: str) -> None:
    migrations = load_migrations(dialect)  # type: ignore[arg-type]
    names = [m.name for m in migrations]
    assert names[: len(SPEC_NAMES)] == SPEC_NAMES
    # Later migrations are named, not numbered, here: parallel branches renumber them at merge.
    later = names[len(SPEC_NAMES) :]
    for suffix in (
        "_business_phone_number",
        "_delivery_guarantees",
        "_broadcasts",
        "_lean_message_indexes",
    ):
        assert any(name.endswith(suffix) for name in later), suffix
    folder = importlib.resources.files("svc.store.migrations").joinpath(dialect)
    for m in migrations:
        data = folder.joinpath(f"{m.name}.sql").read_bytes()
        assert m.checksum == hashlib.sha256(data).hexdigest()
        assert split_statements(m.sql)


def test_migration_sql_keeps_no_content_columns() -> None:
    forbidden = ("body", "text", "contact", "payload ", "raw")
    for dialect in ("sqlite", "postgres"):
        for m in load_migrations(dialect):  # type: ignore[arg-type]
            for statement in split_statements(m.sql):
                columns = statement.lower().replace("text not null", "").replace(" text", "")
                for word in forbidden:
                    assert f" {word} " not in columns.replace("(", " ").replace(",", " ")


async def test_changed_checksum_fails_closed(persistent_backend: Backend) -> None:
    store = persistent_backend.open()
    await store.migrate()
    persistent_backend.raw_sql(
        "UPDATE svc_schema_migrations SET checksum = ? WHERE version = 1", ("0" * 64,)
    )
    with pytest.raises(PersistenceError) as info:
        await persistent_backend.open().migrate()
    assert info.value.code == "migration_checksum_mismatch"
    # The failed run released its lock: fixing the drift lets migrate run again.
    assert persistent_backend.raw_sql("SELECT COUNT(*) FROM svc_persistence_lock") == [(0,)]


async def test_held_lock_fails_and_stale_lock_is_taken_over(persistent_backend: Backend) -> None:
    store = persistent_backend.open()
    await store.migrate(target_version=1)
    now = time.time_ns() // 1_000_000
    persistent_backend.raw_sql(
        "INSERT INTO svc_persistence_lock (id, owner, acquired_at) VALUES (1, 'other', ?)", (now,)
    )
    with pytest.raises(PersistenceError) as info:
        await store.migrate()
    assert info.value.code == "migration_lock_failed"
    assert persistent_backend.raw_sql("SELECT owner FROM svc_persistence_lock") == [("other",)]
    assert (await store.health()).current_version == 1
    persistent_backend.raw_sql(
        "UPDATE svc_persistence_lock SET acquired_at = ?", (now - LOCK_STALE_MS - 1,)
    )
    assert await store.migrate() == SCHEMA_VERSION
    assert persistent_backend.raw_sql("SELECT COUNT(*) FROM svc_persistence_lock") == [(0,)]


async def test_a_current_schema_opens_while_another_process_holds_the_lock(
    persistent_backend: Backend,
) -> None:
    # Workers starting together on a migrated store must not fail on each other's lock.
    store = persistent_backend.open()
    await store.migrate()
    now = time.time_ns() // 1_000_000
    persistent_backend.raw_sql(
        "INSERT INTO svc_persistence_lock (id, owner, acquired_at) VALUES (1, 'other', ?)", (now,)
    )
    assert await persistent_backend.open().migrate() == SCHEMA_VERSION
    assert await store.migrate(target_version=1) == SCHEMA_VERSION
    assert persistent_backend.raw_sql("SELECT owner FROM svc_persistence_lock") == [("other",)]


async def test_schema_newer_than_code_fails(persistent_backend: Backend) -> None:
    store = persistent_backend.open()
    await store.migrate()
    persistent_backend.raw_sql(
        "INSERT INTO svc_schema_migrations (version, name, checksum, applied_at)"
        " VALUES (99, '099_future', 'x', 0)"
    )
    with pytest.raises(PersistenceError) as info:
        await store.migrate()
    assert info.value.code == "migration_failed"


async def test_step_by_step_migration_reaches_the_same_schema(persistent_backend: Backend) -> None:
    store = persistent_backend.open()
    for version in range(1, SCHEMA_VERSION + 1):
        assert await store.migrate(target_version=version) == version
        assert (await store.health()).current_version == version
    rows = persistent_backend.raw_sql(
        "SELECT version, name FROM svc_schema_migrations ORDER BY version"
    )
    assert [r[1] for r in rows] == [m.name for m in load_migrations(_dialect(persistent_backend))]


@pytest.mark.parametrize("target", [True, 1.5, "3", -1, SCHEMA_VERSION + 1, 2**80])
async def test_a_target_that_is_no_schema_version_is_refused(
    backend: Backend, target: object
) -> None:
    store = backend.open()
    with pytest.raises(PersistenceValidationError) as info:
        await store.migrate(target_version=target)  # type: ignore[arg-type]
    assert info.value.code == "invalid_options"
    assert (await store.health()).current_version is None


async def test_005_marks_old_rows_completed(persistent_backend: Backend) -> None:
    store = persistent_backend.open()
    await store.migrate(target_version=4)
    persistent_backend.raw_sql(
        "INSERT INTO svc_service_requests (idempotency_key, request_hash, response_json,"
        " created_at) VALUES ('k', 'h', '{}', 1000)"
    )
    await store.migrate()
    record = await store.get_service_request(idempotency_key="k")
    assert record is not None and record.state == "completed" and record.response_json == "{}"


async def test_006_deduplicates_rows_migrated_at_005(persistent_backend: Backend) -> None:
    store = persistent_backend.open()
    assert await store.migrate(target_version=5) == 5
    rows = [
        # (row_id, direction, wa_message_id, status)
        ("r3", "outbound", "w1", "sent"),
        ("r2", "outbound", "w1", "read"),
        ("r1", "outbound", "w1", "read"),  # best rank, smallest row id: kept
        ("r5", "outbound", "w2", "failed"),
        ("r4", "outbound", "w2", "pending"),  # both rank 0: smallest row id kept
        ("r6", "outbound", "w3", "delivered"),  # best rank kept although larger id
        ("r0", "outbound", "w3", "sent"),
        ("r9", "inbound", "w1", "received"),  # other direction: its own message
    ]
    for row_id, direction, wa_id, status in rows:
        persistent_backend.raw_sql(
            "INSERT INTO svc_messages (row_id, wa_message_id, direction, from_phone, to_phone,"
            " type, status, graph_message_id, created_at, updated_at)"
            " VALUES (?, ?, ?, NULL, NULL, 'text', ?, NULL, 1000, 1000)",
            (row_id, wa_id, direction, status),
        )
    for _ in range(3):
        persistent_backend.raw_sql(
            "INSERT INTO svc_message_status_events (wa_message_id, status, occurred_at)"
            " VALUES ('w1', 'read', 5)"
        )
    assert await store.migrate() == SCHEMA_VERSION
    kept = persistent_backend.raw_sql(
        "SELECT row_id, direction, wa_message_id FROM svc_messages ORDER BY row_id"
    )
    assert kept == [
        ("r1", "outbound", "w1"),
        ("r4", "outbound", "w2"),
        ("r6", "outbound", "w3"),
        ("r9", "inbound", "w1"),
    ]
    assert persistent_backend.raw_sql("SELECT COUNT(*) FROM svc_message_status_events") == [(1,)]
    # The unique index now makes the pair idempotent.
    again = await store.record_message(message("r7", "w1"))
    assert again.row_id == "r1"


async def test_not_a_database_is_a_migration_failure(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "garbage.db"
    path.write_bytes(b"this is not a sqlite database, not at all" * 100)
    store = SqliteStore(path)
    try:
        with pytest.raises(PersistenceError) as info:
            await store.migrate()
        assert info.value.code == "migration_failed"
        assert str(path) not in str(info.value) and "garbage" not in repr(info.value)
    finally:
        await store.close()


async def test_list_and_window_queries_use_their_indexes(tmp_path: object) -> None:
    import sqlite3
    from pathlib import Path

    path = Path(str(tmp_path)) / "plan.db"
    store = SqliteStore(path)
    await store.migrate()
    await store.close()
    conn = sqlite3.connect(path)
    try:
        conn.executemany(
            "INSERT INTO svc_messages (row_id, wa_message_id, direction, from_phone, to_phone,"
            " type, status, graph_message_id, created_at, updated_at, user_id, parent_user_id)"
            " VALUES (?, ?, ?, ?, NULL, 'text', 'sent', NULL, ?, ?, ?, ?)",
            [
                (
                    f"r{i:05d}",
                    f"w{i}",
                    ("inbound", "outbound")[i % 2],
                    f"1555{i % 50}",
                    i,
                    i,
                    f"US.{i % 70}",
                    f"US.ENT.{i % 90}",
                )
                for i in range(3000)
            ],
        )
        conn.commit()
        conn.execute("ANALYZE")

        def plan(sql: str) -> str:
            return " | ".join(
                r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, (1,) * sql.count("?"))
            )

        first = plan("SELECT * FROM svc_messages ORDER BY created_at DESC, row_id DESC LIMIT ?")
        paged = plan(
            "SELECT * FROM svc_messages WHERE (created_at, row_id) < (?, ?)"
            " ORDER BY created_at DESC, row_id DESC LIMIT ?"
        )
        window = plan(
            "SELECT created_at FROM svc_messages WHERE direction = 'inbound' AND from_phone = ?"
            " ORDER BY created_at DESC LIMIT ?"
        )
        by_user = {
            column: plan(
                "SELECT MAX(created_at) FROM svc_messages"  # noqa: S608 -- a constant column name
                f" WHERE direction = 'inbound' AND {column} IN (?, ?)"
            )
            for column in ("from_phone", "user_id", "parent_user_id")
        }
        # 011: lookups by message id use the unique (wa_message_id, direction) key, and the
        # status log's by its unique (wa_message_id, status, occurred_at) key.
        by_id = plan("SELECT row_id FROM svc_messages WHERE wa_message_id IN (?, ?)")
        pair = plan("SELECT row_id FROM svc_messages WHERE direction = ? AND wa_message_id = ?")
        events = plan(
            "SELECT status, occurred_at FROM svc_message_status_events"
            " WHERE wa_message_id IN (?, ?) ORDER BY wa_message_id, occurred_at, id"
        )
    finally:
        conn.close()
    assert "svc_messages_wa_message_id_direction" in by_id
    assert "svc_messages_wa_message_id_direction (wa_message_id=? AND direction=?)" in pair
    assert "svc_message_status_events_unique (wa_message_id=?)" in events
    for text in (first, paged):
        assert "svc_messages_list" in text and "TEMP B-TREE" not in text
    assert "svc_messages_inbound_window" in window and "TEMP B-TREE" not in window
    # 007: the window by user (any identifier column) is an index search per column.
    assert "svc_messages_inbound_window" in by_user["from_phone"]
    assert "svc_messages_user_window" in by_user["user_id"]
    assert "svc_messages_parent_user_window" in by_user["parent_user_id"]


def _dialect(backend: Backend) -> Dialect:
    return "postgres" if backend.kind in POSTGRES_KINDS else "sqlite"
