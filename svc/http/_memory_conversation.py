"""A run's conversation without a store: waits and bursts take the later entries of the run's
in-memory queue, and the users' states live in a dict of this process (lost at a restart).

The same rules as over the inbox: a wait takes the first later entry its
listener matches that no earlier wait took; the entries it skips stay queued and
run after the head; what the run took is removed only when it succeeds (a failed
run's retry finds the same entries). Time is trio's clock; a wait's time does not
count against the run's deadline and its run slot is free meanwhile (``Deadline.paused``).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import trio

from svc.store import RunSlots
from svc.webhook import Coalesce, Listener, ListenerTimeout, Update, UserState

from ._conversation import Arrivals

__all__ = ["Deadline", "MemoryConversation", "MemoryStates", "QueuedUpdate"]


@dataclass(slots=True, eq=False)
class QueuedUpdate:
    """One update in a memory queue: when it arrived (trio time) and its failed runs."""

    update: Update
    queue: str
    received: float
    attempts: int = 0


class Deadline:
    """A run's deadline as a cancel scope whose clock stops while ``paused()``, and its run
    slot, given back while paused (``RunSlots``)."""

    __slots__ = ("_depth", "_left", "_slots", "holds_slot", "scope")

    def __init__(self, seconds: float, slots: RunSlots | None = None) -> None:
        self.scope = trio.CancelScope(deadline=trio.current_time() + seconds)
        self._depth = 0
        self._left = seconds
        self._slots = slots
        self.holds_slot = slots is not None
        """Whether the run holds a slot (False while paused without one)."""

    @asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """The time spent inside does not count against the deadline, and the run's slot
        is free for another run until it is taken again on the way out, waiting for one
        (still paused). Nests; the outermost pause gives the slot back."""
        released = False
        if self._depth == 0:
            self._left = self.scope.deadline - trio.current_time()
            self.scope.deadline = math.inf
            if self._slots is not None and self.holds_slot and self._slots.pause():
                released, self.holds_slot = True, False
        self._depth += 1
        try:
            yield
        finally:
            try:
                if released:
                    assert self._slots is not None
                    await self._slots.resume()
                    self.holds_slot = True
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self.scope.deadline = trio.current_time() + self._left


class MemoryStates:
    """The users' states of this process: canonical JSON per queue, until its expiry."""

    __slots__ = ("_states", "_ttl")

    def __init__(self, ttl: float) -> None:
        self._ttl = ttl
        self._states: dict[str, tuple[bytes, float]] = {}

    def load(self, queue: str) -> UserState:
        """The queue's state (empty when none or expired)."""
        found = self._states.get(queue)
        if found is None or found[1] <= trio.current_time():
            self._states.pop(queue, None)
            return UserState()
        return UserState.from_json(found[0])

    def save(self, queue: str, state: UserState) -> None:
        """Keep ``state`` when it changed (an empty one is forgotten); ``StateTooLarge`` or
        ``TypeError`` (the run fails) leaves the kept one as it was."""
        if not state.changed:
            return
        document = state.document()
        if document is None:
            self._states.pop(queue, None)
        else:
            self._states[queue] = (document, trio.current_time() + self._ttl)


class MemoryConversation:
    """The conversation of one memory queue's running head."""

    __slots__ = ("_arrivals", "_deadline", "_queue", "state", "taken", "updates")

    def __init__(
        self,
        *,
        queue: deque[QueuedUpdate],
        arrivals: Arrivals,
        deadline: Deadline,
        state: UserState,
    ) -> None:
        self._queue = queue
        self._arrivals = arrivals
        self._deadline = deadline
        self.taken: list[QueuedUpdate] = []
        self.updates: Sequence[Update] = (queue[0].update,)
        self.state = state

    def _later(self) -> list[QueuedUpdate]:
        taken = self.taken
        return [entry for entry in list(self._queue)[1:] if entry not in taken]

    async def listen(self, listener: Listener, timeout: float) -> Update:
        """The first later entry ``listener`` matches; ``ListenerTimeout`` after ``timeout``."""
        until = trio.current_time() + timeout
        async with self._deadline.paused():
            while True:
                arrived = self._arrivals.event()
                for entry in self._later():
                    if listener.matches(entry.update):
                        self.taken.append(entry)
                        return entry.update
                with trio.move_on_at(until) as waited:
                    await arrived.wait()
                if waited.cancelled_caught:
                    raise ListenerTimeout(listener.name, timeout)

    async def gather(self, coalesce: Coalesce) -> None:
        """Make ``updates`` the burst the head starts (see ``StoreConversation.gather``)."""
        head = self._queue[0]
        burst = [head]
        async with self._deadline.paused():
            while len(burst) < coalesce.max_count:
                arrived = self._arrivals.event()
                for entry in self._later():
                    if len(burst) < coalesce.max_count and entry.update.kind == head.update.kind:
                        self.taken.append(entry)
                        burst.append(entry)
                newest = max(entry.received for entry in burst)
                until = min(newest + coalesce.window, head.received + coalesce.max_wait)
                if until <= trio.current_time() or len(burst) >= coalesce.max_count:
                    break
                with trio.move_on_at(until):
                    await arrived.wait()
        self.updates = tuple(entry.update for entry in burst)
