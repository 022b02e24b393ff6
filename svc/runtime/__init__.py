"""The handler runtime: runs the facade's handlers after the answer, one queue at a time.

Its rules (``docs/handlers.md``) are written once here and serve both modes: the
store's durable inbox and the in-memory queue of a service without a store.
"""

from ._events import Observer as Observer
from ._events import RunEnded as RunEnded
from ._events import RunStarted as RunStarted
from ._events import RuntimeEvent as RuntimeEvent
from ._events import StateWritten as StateWritten
from ._events import UpdateQueued as UpdateQueued
from ._events import UpdateTaken as UpdateTaken
from ._events import WaitEnded as WaitEnded
from ._events import WaitStarted as WaitStarted

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
