"""A store whose calls hold trio's autojump clock still while they run in a thread.

An autojump clock jumps as soon as every task waits, and a task waiting for a store's
thread counts as waiting: without a hold, a lease or a wait would lapse during a plain
``INSERT``. ``HeldStore`` sets the clock's ``autojump_threshold`` to infinity while one of
its calls is in flight, so virtual time passes only when every task truly waits, and
tells the harness when the last call in flight ends.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import trio
import trio.testing

__all__ = ["HeldStore"]


_NOT_HELD = frozenset({"watch_inbox"})
"""Calls that wait for as long as the runtime lives (a listener), not for I/O: never held."""


class HeldStore:
    """``store`` with every async call holding ``clock`` still (``busy`` counts them)."""

    def __init__(self, store: Any, clock: trio.testing.MockClock | None) -> None:
        self.inner = store
        self.busy = 0
        self._clock = clock
        self._threshold = clock.autojump_threshold if clock is not None else 0.0
        self._quiet = trio.Event()
        self._quiet.set()

    async def wait_quiet(self) -> None:
        """Return once no call is in flight."""
        while self.busy:
            await self._quiet.wait()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not inspect.iscoroutinefunction(attr) or name in _NOT_HELD:
            return attr

        async def held(*args: Any, **kwargs: Any) -> Any:
            if self.busy == 0:
                self._quiet = trio.Event()
                if self._clock is not None:
                    self._clock.autojump_threshold = math.inf
            self.busy += 1
            try:
                return await attr(*args, **kwargs)
            finally:
                self.busy -= 1
                if self.busy == 0:
                    if self._clock is not None:
                        self._clock.autojump_threshold = self._threshold
                    self._quiet.set()

        return held
