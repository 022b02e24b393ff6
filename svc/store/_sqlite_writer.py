"""The SQLite writer process (``_writer``): its child opens a second connection to the file
and runs the batches of webhook deliveries and handled marks through the same ``run_batch``
as the store's thread.
"""

from __future__ import annotations

import contextlib
import sqlite3
from typing import Any

from ._batch_kinds import BatchHint
from ._sqlite_run import Job, open_connection, run_batch
from ._writer import Outcome, WriterProcess, alone, outcome, serve

__all__ = ["main", "sqlite_writer"]


def sqlite_writer(path: str, *, busy_timeout_ms: int, synchronous: str) -> WriterProcess:
    """The parent's end of a writer process on the SQLite file ``path`` (not started yet)."""
    return WriterProcess(__name__, (path, busy_timeout_ms, synchronous))


class _Runner:
    """The child's connection and its batches."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def run(self, hints: list[BatchHint]) -> tuple[bool, list[Outcome]]:
        jobs: list[Job[Any]] = [
            Job(fn=alone(hint.kind, hint.args), write=True, code="outbox_failed", hint=hint)
            for hint in hints
        ]
        with contextlib.suppress(sqlite3.Error):  # every job keeps its pessimistic error
            run_batch(self._conn, jobs)
        return False, [outcome(job.ok, job.result, job.error) for job in jobs]

    def close(self) -> None:
        self._conn.close()


def _open(config: tuple[str, int, str]) -> _Runner | None:
    path, busy_timeout_ms, synchronous = config
    try:
        conn = open_connection(path, busy_timeout_ms=busy_timeout_ms, synchronous=synchronous)
    except sqlite3.Error:
        return None
    return _Runner(conn)


def main(fd: int) -> None:
    """The child: open the connection, then run batches until the parent's end closes."""
    serve(fd, _open)
