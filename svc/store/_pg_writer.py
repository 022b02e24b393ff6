"""The PostgreSQL writer process (``_writer``): its child holds one connection of its own
and runs the batches of webhook deliveries and handled marks through the same ``run_batch``
as the engine's worker thread.

A batch that finds the server out of reach answers every job with its pessimistic error
and says so (the engine then refuses calls until its probe reconnects); the next batch
connects again.
"""

from __future__ import annotations

import contextlib
from typing import Any, Final

import psycopg
import psycopg.conninfo
from psycopg.pq import TransactionStatus

from ._batch_kinds import BatchHint
from ._pg_batch import Batch, Job, run_batch
from ._writer import Outcome, WriterProcess, alone, outcome, serve

__all__ = ["APPLICATION_NAME", "main", "pg_writer"]

APPLICATION_NAME: Final = "svc-writer"
"""The writer's connection's ``application_name`` (in ``pg_stat_activity``), unless the
connection string names one."""


def pg_writer(dsn: str, *, kwargs: dict[str, Any], connect_timeout: float) -> WriterProcess:
    """The parent's end of a writer process on the server ``dsn`` names (not started yet);
    ``kwargs`` are the engine's connection options (autocommit, the schema's search path)."""
    if "application_name" not in psycopg.conninfo.conninfo_to_dict(dsn):
        kwargs = {**kwargs, "application_name": APPLICATION_NAME}
    return WriterProcess(__name__, (dsn, kwargs, connect_timeout))


class _Runner:
    """The child's connection (made again after a loss) and its batches."""

    __slots__ = ("_config", "_conn")

    def __init__(self, config: tuple[str, dict[str, Any], float]) -> None:
        self._config = config
        self._conn: psycopg.Connection[Any] | None = None

    def connect(self) -> psycopg.Connection[Any] | None:
        """The connection, made now unless it is open; ``None`` if the server is out of reach."""
        if self._conn is not None and not (self._conn.closed or self._conn.broken):
            return self._conn
        self.close()
        dsn, kwargs, connect_timeout = self._config
        try:
            self._conn = psycopg.connect(
                dsn, connect_timeout=max(1, int(connect_timeout)), **kwargs
            )
        except psycopg.Error:
            return None
        return self._conn

    def run(self, hints: list[BatchHint]) -> tuple[bool, list[Outcome]]:
        jobs: list[Job[Any]] = [
            Job(fn=alone(hint.kind, hint.args), hint=hint, code="outbox_failed") for hint in hints
        ]
        conn = self.connect()
        lost = conn is None
        if conn is not None:
            try:
                run_batch(conn, Batch(), jobs)
            except psycopg.Error:  # every job keeps its pessimistic error
                lost = conn.closed or conn.broken
                if not lost and conn.info.transaction_status != TransactionStatus.IDLE:
                    with contextlib.suppress(psycopg.Error):
                        conn.execute("ROLLBACK")
        return lost, [outcome(job.ok, job.result, job.error) for job in jobs]

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


def _open(config: tuple[str, dict[str, Any], float]) -> _Runner:
    """The child's runner; it connects at its first batch. A child that could not connect
    yet (the server restarting) still starts: its batches answer "lost" until the server is
    back, and the store goes on refusing calls until its own probe reconnects."""
    return _Runner(config)


def main(fd: int) -> None:
    """The child: connect, then run batches until the parent's end closes."""
    serve(fd, _open)
