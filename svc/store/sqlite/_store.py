"""``SqliteStore``: stdlib sqlite3 on one connection, driven from one worker thread.

Every call is a job of the store's group commit (``_commit.GroupCommit``): calls queued while
a batch runs go together into the next transaction, on the one connection, in a worker
thread (``anyio.to_thread`` with a capacity limiter of 1), under trio or asyncio. Files use
WAL; every read-modify-write runs in ``BEGIN IMMEDIATE``, so claims stay atomic across
processes sharing the file.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, TypeVar, TypeVarTuple

import anyio
import anyio.to_thread

from svc._text import has_ascii_control, has_surrogate

from .. import _child
from .. import _validate as check
from .._base import StoreBase
from .._commit import Batch, Job, run_batch
from .._errors import (
    REDACTED_SQLITE_LOCATION,
    FaultCode,
    PersistenceError,
    PersistenceValidationError,
    fault_messages,
)
from .._kinds import Forms, Kind
from .._migrations import run_migrations
from .._session import Row, Session
from . import _writes
from ._wake import Wakes

__all__ = [
    "MESSAGES",
    "SQLITE_SYNCHRONOUS_MODES",
    "SQLITE_WRITERS",
    "SqliteBatchConnection",
    "SqliteSession",
    "SqliteStore",
    "open_connection",
]

SQLITE_SYNCHRONOUS_MODES: Final = ("full", "normal")
"""The ``synchronous`` values of ``SqliteStore`` (``"full"`` first: the default)."""
SQLITE_WRITERS: Final = ("thread", "process")
"""Where ``SqliteStore`` runs its webhook writes (``"thread"`` first: the default)."""

T = TypeVar("T")
Ts = TypeVarTuple("Ts")
MESSAGES: Final = fault_messages("SQLite")
_NOT_A_DATABASE: Final = "SQLite migration failed: the file is not an SQLite database."
_CHECKPOINT_PAGES: Final = 4000
"""WAL pages (16 MB at 4 KiB) after which a commit copies the WAL back into the file."""


def _check_filename(path: object) -> str:
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if (
        not isinstance(path, str)
        or not path.strip()
        or has_ascii_control(path)
        or has_surrogate(path)  # sqlite3 opens a name by its UTF-8
    ):
        raise PersistenceValidationError(
            "invalid_filename", "SQLite database filename must be a non-empty safe path."
        )
    if path != ":memory:" and (path.startswith("file:") or os.path.isdir(path)):
        raise PersistenceValidationError(
            "invalid_filename", "SQLite database filename must name a file."
        )
    return path


class SqliteSession:
    """``Session`` over one sqlite3 connection."""

    __slots__ = ("_conn",)
    dialect: Final[Literal["sqlite"]] = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def run(self, sql: str, params: Sequence[object] = ()) -> int:
        return self._conn.execute(sql, params).rowcount

    def fetchall(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        return self._conn.execute(sql, params).fetchall()

    def fetchone(self, sql: str, params: Sequence[object] = ()) -> Row | None:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else None


def open_connection(path: str, *, busy_timeout_ms: int, synchronous: str) -> sqlite3.Connection:
    """The store's connection to ``path`` with its pragmas (usable from any one thread)."""
    conn = sqlite3.connect(
        path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        # Each group-committed job runs under a savepoint, whose journal of the
        # pages it changes otherwise spills to a temporary file past 64 KiB: in
        # memory, as a rolled-back savepoint needs it only inside the transaction.
        conn.execute("PRAGMA temp_store = MEMORY")
        if path != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
            if synchronous == "full":
                # Checkpoint every _CHECKPOINT_PAGES WAL pages, not SQLite's 1,000:
                # a page many commits rewrite is copied back once, and the syncs
                # of a checkpoint come a quarter as often. Not under "normal",
                # whose commits are synced only by checkpoints.
                conn.execute(f"PRAGMA wal_autocheckpoint = {_CHECKPOINT_PAGES}")
    except BaseException:
        conn.close()
        raise
    return conn


class SqliteBatchConnection:
    """The connection as ``_commit.run_batch`` drives it: ``BEGIN IMMEDIATE`` for a batch that
    writes, savepoints by name, no advisory locks (the write lock is the whole file's)."""

    __slots__ = ("_conn", "session")
    forms: Final[Forms] = _writes.SqliteForms()
    faults: Final = (sqlite3.Error,)
    locks: Final = False

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.session = SqliteSession(conn)

    def begin(self, *, write: bool) -> None:
        self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")

    def savepoint(self, name: str) -> None:
        self._conn.execute(f"SAVEPOINT {name}")

    def rollback_to(self, name: str) -> None:
        self._conn.execute(f"ROLLBACK TO {name}")

    def release(self, name: str) -> None:
        self._conn.execute(f"RELEASE {name}")

    def lock(self, keys: Sequence[str]) -> None:
        raise AssertionError("SQLite takes no advisory locks")

    def commit(self) -> None:
        self._conn.execute("COMMIT")


def run_on(conn: sqlite3.Connection, batch: Batch) -> None:
    """Blocking: ``batch`` on ``conn`` (``run_batch``), rolled back if it fails."""
    try:
        run_batch(SqliteBatchConnection(conn), batch)
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


class _Thread:
    """The store's runner: each batch on the store's connection, in its worker thread."""

    __slots__ = ("_store",)
    withdraws: Final = False
    depth: Final = 1

    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    async def run(self, batch: Batch) -> None:
        # A failed batch (its COMMIT): every job of it keeps its pessimistic error.
        with contextlib.suppress(sqlite3.Error):
            await anyio.to_thread.run_sync(
                self._store._run_batch, batch, limiter=self._store._limiter
            )


def check_writer(writer: object) -> str:
    """``writer`` when it is one of ``SQLITE_WRITERS``; else ``invalid_options``."""
    if writer not in SQLITE_WRITERS:
        message = f"writer must be one of {', '.join(SQLITE_WRITERS)}"
        raise PersistenceValidationError("invalid_options", message)
    return str(writer)


class SqliteStore(StoreBase):
    """The local single-file store (or ``":memory:"``)."""

    _backend = "sqlite"
    _redacted_location = REDACTED_SQLITE_LOCATION

    __slots__ = (
        "_busy_timeout_ms",
        "_closed",
        "_conn",
        "_limiter",
        "_path",
        "_synchronous",
        "_wakes",
        "_writers",
    )

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout_ms: int = 5000,
        synchronous: str = "full",
        writer: str = "thread",
    ) -> None:
        """``synchronous`` is SQLite's ``PRAGMA synchronous`` in WAL mode: ``"full"`` (the
        default) syncs the WAL at every commit, so an acknowledged write survives a power
        loss; ``"normal"`` syncs only at checkpoints and may lose the last commits.

        ``writer="process"`` (files only) runs the webhook deliveries and the inbox's writes
        on a second connection in a child process (``_child``), off this process's
        GIL; if the child cannot start, they run on the thread as with ``"thread"``."""
        if synchronous not in SQLITE_SYNCHRONOUS_MODES:
            modes = ", ".join(SQLITE_SYNCHRONOUS_MODES)
            message = f"synchronous must be one of {modes}"
            raise PersistenceValidationError("invalid_options", message)
        check_writer(writer)
        self._synchronous: Final = synchronous
        self._path: Final = _check_filename(path)
        if writer == "process" and self._path == ":memory:":
            message = 'writer="process" needs a file: another process cannot see :memory:'
            raise PersistenceValidationError("invalid_options", message)
        self._busy_timeout_ms: Final = check.integer(
            busy_timeout_ms, "busy_timeout_ms", low=0, high=2_147_483_647  # SQLite's C int
        )
        self._conn: sqlite3.Connection | None = None
        self._limiter: Final = anyio.CapacityLimiter(1)
        thread = _Thread(self)
        child = None
        if writer == "process":
            config = (self._path, busy_timeout_ms, synchronous)
            child = _child.Child(run_writer, config, fallback=thread)
        self._writers = _child.Writers(thread, child, messages=MESSAGES)
        self._wakes: Final = None if self._path == ":memory:" else Wakes(self._path)
        self._closed = False

    def __repr__(self) -> str:
        return f"SqliteStore(location={REDACTED_SQLITE_LOCATION!r})"

    def _connection(self) -> sqlite3.Connection:
        """Open on first use, in the worker thread (runs under the limiter)."""
        if self._conn is None:
            self._conn = open_connection(
                self._path, busy_timeout_ms=self._busy_timeout_ms, synchronous=self._synchronous
            )
        return self._conn

    def _transaction(self, fn: Callable[[Session], T], write: bool) -> T:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            result = fn(SqliteSession(conn))
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return result

    def _run_batch(self, batch: Batch) -> None:
        """Blocking: one batch on the connection (runs in the worker thread)."""
        run_on(self._connection(), batch)

    async def _call(
        self, code: FaultCode, fn: Callable[[Session, *Ts], T], *args: *Ts, write: bool
    ) -> T:
        """``fn(session, *args)`` as a ``CALL`` job of the group commit."""
        result: T = await self._write(Kind.CALL, (fn, args), code=code, write=write)
        return result

    def _written(self, job: Job[Any]) -> None:
        """After a write's batch: a delivery that committed new inbox rows wakes the other
        processes' watches on this file."""
        if (
            self._wakes is not None
            and job.ok
            and job.kind is Kind.DELIVERY
            and job.args.inbox
            and job.result is not None
            and job.result.new
        ):
            self._wakes.signal()

    async def watch_inbox(self, on_signal: Callable[[], None]) -> None:
        """Call ``on_signal`` at once and whenever another store on this file commits inbox
        rows (a datagram to this watch's socket beside the file: ``_wake``), until cancelled
        or closed. ``:memory:`` has no other store: it only waits."""
        if self._closed:
            raise PersistenceError("store_closed", "The store is closed.")
        if self._wakes is None:
            await anyio.sleep_forever()
        else:
            await self._wakes.watch(on_signal)

    async def migrate(self, *, target_version: int | None = None) -> int:
        """Apply pending migrations (each in ``BEGIN IMMEDIATE``); return the version."""
        if self._closed:
            raise PersistenceError("store_closed", "The store is closed.")

        def work() -> int:
            return run_migrations(
                lambda fn: self._transaction(fn, True), "sqlite", target_version=target_version
            )

        try:
            version = await anyio.to_thread.run_sync(work, limiter=self._limiter)
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc):
                raise PersistenceError("migration_failed", _NOT_A_DATABASE) from None
            raise PersistenceError("migration_failed", MESSAGES["migration_failed"]) from None
        except sqlite3.Error:
            raise PersistenceError("migration_failed", MESSAGES["migration_failed"]) from None
        if self._writers.child is not None:
            # Started now, not by the first delivery: the first ones wait for no start.
            await self._writers.child.start()
        return version

    async def close(self) -> None:
        """Close the writer process after the batch in flight, then the connection after the
        call in flight; idempotent."""
        self._closed = True
        if self._wakes is not None:
            self._wakes.close()
        if self._writers.child is not None:
            await self._writers.child.aclose()

        def work() -> None:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                conn.close()

        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(work, limiter=self._limiter)


# --- the writer process's side (``_child``) ------------------------------------------------


class _ChildConnection:
    """The writer process's connection to the file and its batches."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def run(self, batch: Batch) -> bool:
        # A failed batch (its COMMIT): every job of it keeps its pessimistic error.
        with contextlib.suppress(sqlite3.Error):
            run_on(self._conn, batch)
        return False

    def close(self) -> None:
        self._conn.close()


def _open_child(config: tuple[str, int, str]) -> _ChildConnection | None:
    path, busy_timeout_ms, synchronous = config
    try:
        conn = open_connection(path, busy_timeout_ms=busy_timeout_ms, synchronous=synchronous)
    except sqlite3.Error:
        return None
    return _ChildConnection(conn)


def run_writer(fd: int) -> None:
    """The writer process: open the file, then run batches until the parent's end closes."""
    _child.serve(fd, _open_child)
