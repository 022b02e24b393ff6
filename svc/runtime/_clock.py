"""A wall clock that follows trio's clock, so one test clock drives every time the runtime
reads: deadlines and leases (trio's), record times, due times and burst windows (this)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import trio

__all__ = ["TrioClock"]


class TrioClock:
    """``now()`` as ``base()`` read once, moved on by trio's clock since then. Under trio's
    ``MockClock`` (``autojump_clock``) its time jumps with the mock clock's."""

    __slots__ = ("_anchor", "_base")

    def __init__(self, base: Callable[[], datetime]) -> None:
        self._base = base
        self._anchor: datetime | None = None

    def __call__(self) -> datetime:
        elapsed = timedelta(seconds=trio.current_time())
        if self._anchor is None:
            self._anchor = self._base() - elapsed
        return self._anchor + elapsed
