"""``PostgresStore``: the PostgreSQL adapter, importable without psycopg.

psycopg and psycopg_pool come with the ``postgres`` extra only, so this module
never imports them: constructing a ``PostgresStore`` loads the engine
(``_engine``, where psycopg is imported) and refuses with a clear
``driver_missing`` error when the extra is missing. ``svc.store``, the HTTP
layer and ``SqliteStore`` therefore work on a plain install.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar, TypeVarTuple

from svc._text import has_surrogate

from .._base import StoreBase
from .._commit import Job
from .._errors import (
    REDACTED_POSTGRES_LOCATION,
    FaultCode,
    PersistenceError,
    PersistenceValidationError,
)
from .._session import Session

if TYPE_CHECKING:
    from ._engine import PgEngine

__all__ = ["MISSING_EXTRA_MESSAGE", "POSTGRES_WRITERS", "PostgresStore"]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")
MISSING_EXTRA_MESSAGE: Final = (
    "PostgreSQL support needs the postgres extra: pip install 'svc[postgres]'"
)
POSTGRES_WRITERS: Final = ("thread", "process")
"""Where ``PostgresStore`` runs its webhook writes (``"thread"`` first: the default)."""
_SCHEMA: Final = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_DRIVER_PACKAGES: Final = frozenset({"psycopg", "psycopg_pool", "psycopg_binary", "psycopg_c"})


def _load_engine() -> type[PgEngine]:
    """Import the psycopg engine; a missing driver is the fault ``driver_missing`` (the
    install lacks the extra: nothing the caller passed is wrong)."""
    try:
        from ._engine import PgEngine
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in _DRIVER_PACKAGES:
            raise
        raise PersistenceError("driver_missing", MISSING_EXTRA_MESSAGE) from None
    return PgEngine


def _positive(value: object, field: str) -> float:
    """Seconds in (0, 86400]: the clock and the driver take any of them."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86_400:
        raise PersistenceValidationError(
            "invalid_options", f"{field} must be a number of seconds in (0, 86400]."
        )
    return float(value)


class PostgresStore(StoreBase):
    """The shared store for several service instances on one PostgreSQL database.

    ``schema`` (a lower-case identifier) sets ``search_path`` on every pooled
    connection, so several deployments or test runs can share one database.
    ``connect_timeout`` bounds opening a connection, ``pool_timeout`` the wait
    for a pooled one. Once a call finds the server out of reach, calls fail at
    once except one connection attempt per ``reconnect_interval`` seconds; the
    first that succeeds replaces the pool, so service resumes right after the
    server does.

    ``writer="process"`` runs the group commit's webhook deliveries and inbox writes on
    a connection of their own in a child process, off this process's GIL (a delivery
    sent there runs to its end even if its caller is cancelled); if the child cannot
    start, they run on the worker thread as with ``"thread"``.
    """

    _backend = "postgres"
    _redacted_location = REDACTED_POSTGRES_LOCATION

    __slots__ = ("_closed", "_engine", "_schema", "_writers")

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        min_size: int = 1,
        max_size: int = 10,
        connect_timeout: float = 10.0,
        pool_timeout: float = 2.0,
        reconnect_interval: float = 0.5,
        writer: str = "thread",
    ) -> None:
        engine = _load_engine()
        if not isinstance(dsn, str) or not dsn.strip() or has_surrogate(dsn):
            raise PersistenceValidationError(
                "invalid_options", "dsn must be a non-empty string UTF-8 can carry."
            )
        if schema is not None and (not isinstance(schema, str) or not _SCHEMA.match(schema)):
            raise PersistenceValidationError(
                "invalid_options", "schema must match ^[a-z_][a-z0-9_]{0,62}$."
            )
        if not (type(min_size) is int and type(max_size) is int and min_size >= 0):
            raise PersistenceValidationError("invalid_options", "Pool sizes must be integers.")
        if max_size < max(min_size, 1):
            raise PersistenceValidationError(
                "invalid_options", "max_size must be at least 1 and at least min_size."
            )
        if writer not in POSTGRES_WRITERS:
            message = f"writer must be one of {', '.join(POSTGRES_WRITERS)}"
            raise PersistenceValidationError("invalid_options", message)
        self._engine: Final = engine(
            dsn,
            schema=schema,
            min_size=min_size,
            max_size=max_size,
            connect_timeout=_positive(connect_timeout, "connect_timeout"),
            pool_timeout=_positive(pool_timeout, "pool_timeout"),
            reconnect_interval=_positive(reconnect_interval, "reconnect_interval"),
            writer=writer,
        )
        self._schema: Final = schema
        self._writers = self._engine.writers
        self._closed = False

    def __repr__(self) -> str:
        return f"PostgresStore(location={REDACTED_POSTGRES_LOCATION!r}, schema={self._schema!r})"

    @property
    def schema(self) -> str | None:
        """The schema on ``search_path``, or None for the server default."""
        return self._schema

    async def _call(
        self, code: FaultCode, fn: Callable[[Session, *Ts], T], *args: *Ts, write: bool
    ) -> T:
        return await self._engine.call(code, fn, *args, write=write)

    async def _writable(self, code: FaultCode) -> None:
        await self._engine.writable(code)

    def _written(self, job: Job[Any]) -> None:
        self._engine.written(job)

    async def _sleep_in_query(
        self, seconds: float, *, on_start: Callable[[], None] | None = None
    ) -> None:
        """Test seam: ``SELECT pg_sleep(seconds)`` through the normal cancellable path."""
        await self._engine.sleep_in_query(seconds, on_start=on_start)

    async def watch_inbox(self, on_signal: Callable[[], None]) -> None:
        """Call ``on_signal`` whenever another process commits inbox rows, until cancelled
        (``LISTEN``/``NOTIFY``)."""
        await self._engine.watch_inbox(on_signal)

    async def migrate(self, *, target_version: int | None = None) -> int:
        """Create the schema if needed and apply pending migrations; return the version."""
        return await self._engine.migrate(target_version=target_version)

    async def close(self) -> None:
        """Close the writer process and the pool (waiting for calls in flight); idempotent."""
        self._closed = True
        await self._engine.close()
