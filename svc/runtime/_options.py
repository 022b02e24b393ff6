"""How the service runs its handlers after the answer: concurrency, deadline, lease, retries.

One frozen record for both modes (the store's inbox, the in-memory queue);
``create_app(handler_options=...)`` takes it, and ``svc serve``'s ``--handler-*`` options
fill it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from ._events import Observer
from ._slots import DEFAULT_MAX_WAITING

__all__ = [
    "DEFAULT_LEASE",
    "DEFAULT_QUEUE_CAPACITY",
    "DEFAULT_SEEN_WINDOW",
    "HandlerOptions",
]

DEFAULT_QUEUE_CAPACITY: Final = 10_000
"""Updates the in-memory runtime holds at most (queued and running) before it answers 503."""
DEFAULT_SEEN_WINDOW: Final = 100_000
"""Without a store: the update keys remembered, so a redelivery of one runs nothing."""
DEFAULT_LEASE: Final = 6.0
"""Seconds a claim holds an item; renewed every third of it while the run lives, so a crashed
run's item is taken by another worker within about this long (plus a poll)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HandlerOptions:
    """The handler runtime's settings (defaults: ``svc serve``'s)."""

    concurrency: int = 8
    """Runs at once, each of another queue (user, group or number)."""
    max_waiting: int = DEFAULT_MAX_WAITING
    """Runs waiting for the user's reply without a run slot at most: a waiting run gives its
    slot back to another queue's head while fewer wait; past it, it keeps its slot (0: a
    waiting run always keeps it). Runs in flight stay under ``concurrency + max_waiting``."""
    timeout: float = 30.0
    """Seconds one run may take; a run past it is cancelled and counts as a failure."""
    max_attempts: int = 5
    """Runs of one update at most; after the last failure it becomes a dead letter."""
    retry_delay: float = 1.0
    """Seconds before the first retry; doubled per failure (with jitter) up to the next field."""
    max_retry_delay: float = 300.0
    queue_capacity: int = DEFAULT_QUEUE_CAPACITY
    """Without a store: updates held in memory at most; a delivery beyond it is answered 503."""
    poll_interval: float = 1.0
    """With a store: seconds between looks for items other processes recorded."""
    dead_horizon: timedelta = timedelta(days=7)
    """With a store: dead letters older than this are deleted."""
    state_ttl: timedelta = timedelta(days=30)
    """How long a user's ``ctx.state`` is kept after its last write."""
    lease: float = DEFAULT_LEASE
    """Seconds a claim holds an item before another worker may take it; the run renews it
    every third of it and stops when a renewal is not confirmed before it ends."""
    seen_window: int = DEFAULT_SEEN_WINDOW
    """Without a store: how many update keys are remembered to refuse redeliveries."""
    after_run: Callable[[Any], None] | None = None
    """Test-only seam: called between a handler's end and its completion mark."""
    observer: Observer | None = None
    """Told each step of an update's life (``svc.runtime`` events); ``svc dev`` draws them."""

    def __post_init__(self) -> None:
        for name in ("concurrency", "max_attempts", "queue_capacity", "seen_window"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be a positive integer")
        if type(self.max_waiting) is not int or not 0 <= self.max_waiting <= 100_000:
            raise ValueError("max_waiting must be an integer in 0..100000")
        for name in ("timeout", "retry_delay", "max_retry_delay", "poll_interval", "lease"):
            value = getattr(self, name)
            if (
                not isinstance(value, int | float)
                or isinstance(value, bool)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ValueError(f"{name} must be a finite number of seconds >= 0")
        if self.timeout <= 0 or self.poll_interval <= 0 or self.lease < 0.03:
            raise ValueError("timeout and poll_interval must be above 0, lease at least 0.03")
        for name in ("dead_horizon", "state_ttl"):
            value = getattr(self, name)
            if not isinstance(value, timedelta) or value <= timedelta(0):
                raise ValueError(f"{name} must be a positive timedelta")
        for name in ("after_run", "observer"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise ValueError(f"{name} must be callable")

