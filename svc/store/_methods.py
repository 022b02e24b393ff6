"""What the method mixins (``BroadcastMethods``, ``InboxMethods``) run over, declared once.

``StoreBase`` supplies ``_call`` and ``_write``; the mixins only check arguments and hand
them on. ``_delete_in_batches`` is the one loop of every batched delete (``prune``, old dead
letters, expired states): small transactions, until one deletes fewer than a batch.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, TypeVar, TypeVarTuple

from ._errors import FaultCode
from ._kinds import Kind
from ._session import Session

__all__ = ["StoreCalls"]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


class StoreCalls(abc.ABC):
    """``_call`` (a sync operation in one transaction in a worker thread) and ``_write`` (a
    hot write of one ``Kind`` through its group commit), as the mixins call them."""

    __slots__ = ()

    @abc.abstractmethod
    async def _call(
        self, code: FaultCode, fn: Callable[[Session, *Ts], T], *args: *Ts, write: bool
    ) -> T: ...

    @abc.abstractmethod
    async def _write(self, kind: Kind, args: Any, *, code: FaultCode, key: str) -> Any: ...

    async def _delete_in_batches(
        self, size: int, fn: Callable[[Session, *Ts], int], *args: *Ts
    ) -> int:
        """Run the batched delete ``fn(session, *args)`` (at most ``size`` rows, one
        transaction a run) until a run deletes fewer than ``size``; how many in all."""
        total = 0
        while True:
            deleted = await self._call("outbox_failed", fn, *args, write=True)
            total += deleted
            if deleted < size:
                return total

