"""The handler runtime: runs the facade's handlers after the answer, one queue at a time.

Its rules (``docs/handlers.md``) are written once here and serve both modes over one
small queue interface (``RunQueue``): the store's durable, sealed inbox (``StoreQueue``)
and the in-memory queue of a service without a store (``MemoryQueue``). The HTTP layer
builds the context a handler runs in and hands accepted updates over; the store only
stores.
"""

from ._clock import TrioClock as TrioClock
from ._control import LEASE_EXPIRED as LEASE_EXPIRED
from ._control import LEASE_LOST as LEASE_LOST
from ._control import RunControl as RunControl
from ._conversation import Conversation as Conversation
from ._conversation import Detached as Detached
from ._events import Observer as Observer
from ._events import RunEnded as RunEnded
from ._events import RunStarted as RunStarted
from ._events import RuntimeEvent as RuntimeEvent
from ._events import StateWritten as StateWritten
from ._events import UpdateQueued as UpdateQueued
from ._events import UpdateTaken as UpdateTaken
from ._events import WaitEnded as WaitEnded
from ._events import WaitStarted as WaitStarted
from ._memory_queue import MemoryQueue as MemoryQueue
from ._metrics import RuntimeReporter as RuntimeReporter
from ._options import DEFAULT_LEASE as DEFAULT_LEASE
from ._options import DEFAULT_QUEUE_CAPACITY as DEFAULT_QUEUE_CAPACITY
from ._options import DEFAULT_SEEN_WINDOW as DEFAULT_SEEN_WINDOW
from ._options import HandlerOptions as HandlerOptions
from ._queue import Claim as Claim
from ._queue import Entry as Entry
from ._queue import RunQueue as RunQueue
from ._queue import StateChange as StateChange
from ._slots import DEFAULT_MAX_WAITING as DEFAULT_MAX_WAITING
from ._slots import RunSlots as RunSlots
from ._store_queue import StoreQueue as StoreQueue
from ._store_queue import state_aad as state_aad
from ._worker import CONTINUED_RUNS as CONTINUED_RUNS
from ._worker import INVALID_COMPLETION as INVALID_COMPLETION
from ._worker import ContextFor as ContextFor
from ._worker import HandlerRuntime as HandlerRuntime

__all__ = [
    "CONTINUED_RUNS",
    "DEFAULT_LEASE",
    "DEFAULT_MAX_WAITING",
    "DEFAULT_QUEUE_CAPACITY",
    "DEFAULT_SEEN_WINDOW",
    "INVALID_COMPLETION",
    "LEASE_EXPIRED",
    "LEASE_LOST",
    "Claim",
    "ContextFor",
    "Conversation",
    "Detached",
    "Entry",
    "HandlerOptions",
    "HandlerRuntime",
    "MemoryQueue",
    "Observer",
    "RunControl",
    "RunEnded",
    "RunQueue",
    "RunSlots",
    "RunStarted",
    "RuntimeEvent",
    "RuntimeReporter",
    "StateChange",
    "StateWritten",
    "StoreQueue",
    "TrioClock",
    "UpdateQueued",
    "UpdateTaken",
    "WaitEnded",
    "WaitStarted",
    "state_aad",
]
