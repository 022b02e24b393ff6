"""What the handler runtime tells an observer: one frozen event per step of an update's life.

The runtime calls ``observer(event)`` (``HandlerOptions.observer``) synchronously at each
step; an observer must not block and its failure never stops a run. Events name an update
by its key and a queue by its hashed key, never by user data; ``RunEnded.error`` holds the
exception itself, so a development tool may show its traceback (the production log keeps
only its class name). ``StateWritten.document`` is the user's state as JSON: observers
outside ``svc dev`` must not show it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Observer",
    "RunEnded",
    "RunStarted",
    "RuntimeEvent",
    "StateWritten",
    "UpdateQueued",
    "UpdateTaken",
    "WaitEnded",
    "WaitStarted",
]

RunOutcome = Literal["success", "error", "timeout", "dead"]


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateQueued:
    """An update was accepted for the handlers: it waits in its queue (``pending``).
    ``queue`` is the queue its own identifiers name; with a store the record may place it
    in the person's queue instead (``RunStarted`` names the queue it runs in)."""

    update_key: str
    queue: str
    kind: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted:
    """A run of a queue's head began (``running``); ``attempt`` counts from 1."""

    update_key: str
    queue: str
    kind: str
    attempt: int


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitStarted:
    """A run waits for the user (``waiting``): ``listener`` names what it waits for."""

    update_key: str
    queue: str
    listener: str
    timeout: float


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitEnded:
    """A wait ended: ``taken`` is the key of the update it consumed, None on a timeout."""

    update_key: str
    queue: str
    listener: str
    taken: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateTaken:
    """A later update was consumed by a run's wait or burst (``how``): it never runs alone."""

    update_key: str
    queue: str
    by: str
    how: Literal["wait", "burst"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunEnded:
    """A run ended: ``success`` (done), ``error``/``timeout`` (retried in ``retry_in``
    seconds) or ``dead`` (a dead letter, ``reason``); ``error`` is the exception, if any."""

    update_key: str
    queue: str
    kind: str
    attempt: int
    outcome: RunOutcome
    seconds: float
    reason: str | None = None
    retry_in: float | None = None
    error: BaseException | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StateWritten:
    """A run's success wrote its queue's ``ctx.state`` (``document`` None: deleted)."""

    queue: str
    document: bytes | None


RuntimeEvent = (
    UpdateQueued | RunStarted | WaitStarted | WaitEnded | UpdateTaken | RunEnded | StateWritten
)
Observer = Callable[[RuntimeEvent], None]
"""Called with each event, synchronously, in the runtime's task."""
