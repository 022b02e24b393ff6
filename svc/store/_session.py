"""The tiny synchronous SQL surface both adapters expose to the shared operations.

Shared SQL uses ``?`` placeholders; the PostgreSQL session rewrites them.
Everything here runs in a worker thread inside one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, Protocol, TypeVar

__all__ = ["Dialect", "Row", "Session", "Transact", "chunks", "in_list"]

Dialect = Literal["sqlite", "postgres"]
Row = tuple[Any, ...]
T = TypeVar("T")


class Session(Protocol):
    """One connection inside one open transaction."""

    @property
    def dialect(self) -> Dialect: ...

    def run(self, sql: str, params: Sequence[object] = ()) -> int:
        """Execute a statement; return the affected row count."""
        ...

    def fetchall(self, sql: str, params: Sequence[object] = ()) -> list[Row]: ...

    def fetchone(self, sql: str, params: Sequence[object] = ()) -> Row | None: ...


class Transact(Protocol):
    """Run ``fn`` in its own transaction (committed on return, rolled back on error)."""

    def __call__(self, fn: Callable[[Session], T], /) -> T: ...


ADVISORY_NAMESPACE: Final = 0x5C5C
"""First key of the PostgreSQL advisory locks of the projection and the inbox queues (the
second is a hash of a message id or a prefixed key)."""


def in_list(values: Sequence[object]) -> str:
    """The ``(?,?,...)`` placeholders of an ``IN`` list of ``values``."""
    return "(" + ",".join("?" * len(values)) + ")"


def chunks(items: Sequence[T], size: int) -> list[Sequence[T]]:
    """``items`` in runs of at most ``size``: one statement each, under a variable limit."""
    return [items[i : i + size] for i in range(0, len(items), size)]
