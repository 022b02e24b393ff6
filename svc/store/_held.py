"""The rule for a write that has been handed on: it runs to its end whatever happens to
its caller, as a call in a worker thread does."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

import anyio

__all__ = ["held_to_completion"]


async def held_to_completion(wait: Callable[[], Awaitable[None]]) -> None:
    """Await ``wait()`` to its end whatever happens to the caller, as a thread call runs to
    its end: a cancellation is held until then and delivered at the caller's next
    checkpoint; one that no cancel scope repeats (asyncio's ``Task.cancel``) is raised
    here, after ``wait()`` has returned."""
    try:
        await wait()
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await wait()
        if anyio.current_effective_deadline() != -math.inf:
            raise
