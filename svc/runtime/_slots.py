"""Run slots: at most ``concurrency`` runs execute at once, and a run paused waiting for the
user gives its slot back (up to ``max_waiting`` paused runs), so users who do not answer
never stall the others' handlers.

A paused run past ``max_waiting`` keeps its slot (the bound on paused runs, so memory and
leases stay bounded: ``concurrency + max_waiting`` runs at most). A resuming run waits for a
free slot and goes before new claims (``free`` leaves room for it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import anyio

__all__ = ["DEFAULT_MAX_WAITING", "RunSlots"]

DEFAULT_MAX_WAITING: Final = 1000
"""Paused runs without a slot at most, by default."""


class RunSlots:
    """The run slots of one worker: ``take`` for claims, ``pause``/``resume`` for waits,
    ``release`` when a run holding a slot ends. ``on_free`` is called whenever a slot frees
    (the claim loop's wake-up)."""

    __slots__ = (
        "_concurrency",
        "_freed",
        "_max_waiting",
        "_on_free",
        "_resuming",
        "held",
        "waiting",
    )

    def __init__(self, concurrency: int, max_waiting: int, on_free: Callable[[], None]) -> None:
        self._concurrency = concurrency
        self._max_waiting = max_waiting
        self._on_free = on_free
        self._resuming = 0
        self._freed: anyio.Event | None = None
        self.held = 0
        """Runs holding a slot (running, or paused past ``max_waiting``)."""
        self.waiting = 0
        """Paused runs that gave their slot back."""

    @property
    def free(self) -> int:
        """Slots a claim may take now (resuming runs go first)."""
        return max(0, self._concurrency - self.held - self._resuming)

    @property
    def resuming(self) -> bool:
        """Whether a resuming run waits for a slot (it goes before new claims and
        continuations)."""
        return self._resuming > 0

    def take(self, count: int) -> None:
        """``count`` claimed runs take a slot each (at most ``free``)."""
        self.held += count

    def release(self, count: int = 1, *, wake: bool = True) -> None:
        """``count`` slots free (a run ended or paused; ``wake=False``: a claim's unused
        ones, which do not wake the claim loop)."""
        if count <= 0:
            return
        self.held -= count
        event, self._freed = self._freed, None
        if event is not None:
            event.set()
        if wake:
            self._on_free()

    def pause(self) -> bool:
        """A run starts waiting: it gives its slot back unless ``max_waiting`` paused runs
        already did (then it keeps it); whether it gave it back."""
        if self.waiting >= self._max_waiting:
            return False
        self.waiting += 1
        self.release()
        return True

    async def resume(self) -> None:
        """A paused run that gave its slot back takes one again, waiting until one is free.
        Cancelled meanwhile, it holds none."""
        self._resuming += 1
        try:
            while self.held >= self._concurrency:
                if self._freed is None:
                    self._freed = anyio.Event()
                await self._freed.wait()
        finally:
            self._resuming -= 1
            self.waiting -= 1
        self.held += 1
