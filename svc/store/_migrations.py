"""Forward-only migrations: SQL files per backend, checksums, and a migration lock."""

from __future__ import annotations

import importlib.resources
import re
import sqlite3
import time
import uuid
from dataclasses import dataclass
from typing import Final

from ..crypto import sha256_hex
from . import _validate as check
from ._errors import PersistenceError
from ._session import Dialect, Session, Transact

__all__ = [
    "LOCK_STALE_MS",
    "SCHEMA_VERSION",
    "Migration",
    "current_version",
    "load_migrations",
    "run_migrations",
    "split_statements",
]

SCHEMA_VERSION: Final = 18
"""The highest packaged migration of every backend (a test checks it against the files):
what ``migrate()`` reaches and what a ready service's ``health().current_version`` is."""

LOCK_STALE_MS: Final = 10 * 60 * 1000
"""A migration lock older than this is taken to belong to a crashed process."""

_NAME: Final = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")

_BOOTSTRAP: Final = (
    "CREATE TABLE IF NOT EXISTS svc_schema_migrations ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL,"
    " applied_at {bigint} NOT NULL)",
    "CREATE TABLE IF NOT EXISTS svc_persistence_lock ("
    " id INTEGER PRIMARY KEY CHECK (id = 1), owner TEXT NOT NULL,"
    " acquired_at {bigint} NOT NULL)",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Migration:
    """One SQL file: its version, name, text and sha256 checksum of its bytes."""

    version: int
    name: str
    sql: str
    checksum: str


def load_migrations(dialect: Dialect) -> tuple[Migration, ...]:
    """The packaged migrations of a backend, in version order."""
    folder = importlib.resources.files("svc.store.migrations").joinpath(dialect)
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match is None:
            continue
        data = entry.read_bytes()
        found.append(
            Migration(
                version=int(match.group(1)),
                name=f"{match.group(1)}_{match.group(2)}",
                sql=data.decode("utf-8"),
                checksum=sha256_hex(data),
            )
        )
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise PersistenceError("migration_failed", "Packaged migrations are not contiguous.")
    return tuple(found)


def split_statements(sql: str) -> list[str]:
    """Split a migration file into statements; a PostgreSQL function's ``$$``-quoted body
    (its semicolons included) stays in its statement."""
    statements: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        if line.lstrip().startswith("--") and not buffer.strip():
            continue
        buffer += line
        if buffer.count("$$") % 2 == 0 and sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def run_migrations(
    transact: Transact,
    dialect: Dialect,
    *,
    target_version: int | None = None,
    bootstrap: tuple[str, ...] = (),
) -> int:
    """Apply pending migrations under the lock row; return the resulting version.

    ``bootstrap`` statements run first in the same transaction that creates the
    bookkeeping tables (PostgreSQL uses it for an advisory lock and the schema).
    """
    migrations = load_migrations(dialect)
    target = len(migrations) if target_version is None else target_version
    check.integer(target, "target_version", low=0, high=len(migrations))
    _create_bookkeeping(transact, dialect, bootstrap)
    known = {m.version: m for m in migrations}
    applied = _read_applied(transact, known)
    pending = [m for m in migrations if m.version <= target and m.version not in applied]
    if not pending:
        # Nothing to apply: a start-up on a current schema never needs (or waits for) the lock.
        return max([*applied, target])
    owner = uuid.uuid4().hex
    if not transact(lambda session: _acquire_lock(session, owner)):
        raise PersistenceError("migration_lock_failed", "Another process holds the migration lock.")
    try:
        # Read again under the lock: another process may have applied some meanwhile.
        applied = _read_applied(transact, known)
        for migration in migrations:
            if migration.version > target or migration.version in applied:
                continue
            _apply(transact, migration)
        return max([*applied, target])
    finally:
        transact(
            lambda s: s.run("DELETE FROM svc_persistence_lock WHERE id = 1 AND owner = ?", (owner,))
        )


def _create_bookkeeping(transact: Transact, dialect: Dialect, bootstrap: tuple[str, ...]) -> None:
    """The ``bootstrap`` statements, then the migrations and lock tables, in one transaction."""
    bigint = "BIGINT" if dialect == "postgres" else "INTEGER"

    def create(session: Session) -> None:
        for statement in bootstrap:
            session.run(statement)
        for statement in _BOOTSTRAP:
            session.run(statement.format(bigint=bigint))

    transact(create)


def _acquire_lock(session: Session, owner: str) -> bool:
    """Take the migration lock row for ``owner`` (a stale one is taken over); False when
    another process holds it."""
    now = _now_ms()
    session.run(
        "DELETE FROM svc_persistence_lock WHERE id = 1 AND acquired_at < ?",
        (now - LOCK_STALE_MS,),
    )
    inserted = session.run(
        "INSERT INTO svc_persistence_lock (id, owner, acquired_at) VALUES (1, ?, ?)"
        " ON CONFLICT DO NOTHING",
        (owner, now),
    )
    return inserted == 1


def _apply(transact: Transact, migration: Migration) -> None:
    """Run one migration and record it, in one transaction; a driver error of either dialect
    becomes ``migration_failed`` naming the migration only."""

    def apply(session: Session) -> None:
        for statement in split_statements(migration.sql):
            session.run(statement)
        session.run(
            "INSERT INTO svc_schema_migrations (version, name, checksum, applied_at)"
            " VALUES (?, ?, ?, ?)",
            (migration.version, migration.name, migration.checksum, _now_ms()),
        )

    try:
        transact(apply)
    except PersistenceError:
        raise
    except Exception:  # noqa: BLE001 - a driver error of either dialect, named safely
        raise PersistenceError(
            "migration_failed",
            f"Migration {migration.name} failed and was rolled back.",
        ) from None


def _read_applied(transact: Transact, known: dict[int, Migration]) -> dict[int, str]:
    """The applied versions and checksums, checked against the packaged migrations."""
    applied = dict(
        transact(
            lambda s: [
                (int(r[0]), str(r[1]))
                for r in s.fetchall("SELECT version, checksum FROM svc_schema_migrations")
            ]
        )
    )
    for version, checksum in applied.items():
        if version not in known:
            raise PersistenceError(
                "migration_failed", "The database schema is newer than this code."
            )
        if known[version].checksum != checksum:
            raise PersistenceError(
                "migration_checksum_mismatch",
                f"Applied migration {known[version].name} changed; refusing to continue.",
            )
    return applied


def current_version(session: Session) -> int | None:
    """The highest applied migration, or None before the first ``migrate``."""
    row = session.fetchone("SELECT MAX(version) FROM svc_schema_migrations")
    return None if row is None or row[0] is None else int(row[0])
