"""The in-memory queue: the runtime's mode without a store, in this process only.

The same rules as the store's inbox: one queue per ``queue_key`` whose head alone runs,
one run per queue at a time, settlements fenced by the claim's lease, retries due later,
the users' states kept until their expiry. It holds ``capacity`` updates at most (a
delivery that does not fit is refused whole: the service answers 503) and remembers the
last ``seen_window`` update keys, so the platform's redelivery of an update this process
already accepted runs nothing. A crash or a stop loses what it holds, and dead letters
are not kept.
"""

from __future__ import annotations

import heapq
import itertools
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from svc.store import InboxStatistics
from svc.webhook import Update, UserState, queue_key

from ._queue import Claim, Entry, StateChange

__all__ = ["MemoryQueue"]


@dataclass(slots=True, eq=False)
class _Item:
    id: int
    update_key: str
    queue: str
    update: Update
    recorded_at: datetime
    attempts: int = 0
    lease_id: str | None = None


class MemoryQueue:
    """The in-process ``RunQueue``: accepts updates (``accept``) and serves them by queue."""

    keeps_dead_letters = False

    def __init__(self, *, capacity: int, seen_window: int, state_ttl: timedelta) -> None:
        self._capacity = capacity
        self._seen_window = seen_window
        self._ttl = state_ttl
        self._queues: dict[str, deque[_Item]] = {}
        self._ready: dict[str, None] = {}
        """Queues whose head is pending and due, in the order they became so."""
        self._delayed: list[tuple[datetime, int, str]] = []
        self._states: dict[str, tuple[bytes, datetime]] = {}
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._ids = itertools.count(1)
        self._size = 0

    @property
    def size(self) -> int:
        """Updates held: waiting, retrying later, or running."""
        return self._size

    def accept(self, pairs: Sequence[tuple[Update, str]], *, now: datetime) -> list[str] | None:
        """Queue the ``(update, update key)`` pairs whose key was not seen before, in order;
        their keys, or None (nothing queued) when they do not all fit."""
        fresh: list[tuple[Update, str]] = []
        keys: set[str] = set()
        for update, key in pairs:
            if key not in self._seen and key not in keys:
                keys.add(key)
                fresh.append((update, key))
        if self._size + len(fresh) > self._capacity:
            return None
        for update, key in fresh:
            self._seen[key] = None
            if len(self._seen) > self._seen_window:
                self._seen.popitem(last=False)
            name = queue_key(update)
            queue = self._queues.get(name)
            if queue is None:
                queue = self._queues[name] = deque()
                self._ready[name] = None
            queue.append(_Item(next(self._ids), key, name, update, now))
        self._size += len(fresh)
        return [key for _, key in fresh]

    async def claim(self, *, now: datetime, limit: int, lease: float) -> Sequence[Claim]:
        while self._delayed and self._delayed[0][0] <= now:
            self._ready[heapq.heappop(self._delayed)[2]] = None
        claims: list[Claim] = []
        while self._ready and len(claims) < limit:
            name = next(iter(self._ready))
            del self._ready[name]
            head = self._queues[name][0]
            head.attempts += 1
            head.lease_id = f"m{head.id}.{head.attempts}"
            claims.append(
                Claim(
                    id=head.id,
                    update_key=head.update_key,
                    queue=name,
                    kind=head.update.kind,
                    attempt=head.attempts,
                    recorded_at=head.recorded_at,
                    lease_id=head.lease_id,
                    payload=head,
                )
            )
        return claims

    def _head(self, claim: Claim) -> _Item | None:
        queue = self._queues.get(claim.queue)
        if not queue or queue[0].id != claim.id or queue[0].lease_id != claim.lease_id:
            return None
        return queue[0]

    async def renew(self, claim: Claim, *, until: datetime) -> bool:
        return self._head(claim) is not None

    def open(self, claim: Claim) -> Update:
        item = claim.payload
        assert isinstance(item, _Item)
        return item.update

    def load_state(self, claim: Claim, *, now: datetime) -> UserState:
        found = self._states.get(claim.queue)
        if found is None:
            return UserState()
        document, expires = found
        if expires <= now:
            del self._states[claim.queue]
            return UserState()
        return UserState.from_json(document)

    async def later(self, claim: Claim) -> Sequence[Entry]:
        queue = self._queues.get(claim.queue)
        if not queue:
            return ()
        return [
            Entry(
                id=item.id,
                update_key=item.update_key,
                kind=item.update.kind,
                recorded_at=item.recorded_at,
                update=item.update,
            )
            for item in itertools.islice(queue, 1, None)
        ]

    async def note_taken(self, claim: Claim, ids: Sequence[int]) -> None:
        """Nothing to show: no operator lists the memory queue."""

    async def complete(
        self,
        claim: Claim,
        *,
        consumed: Sequence[int],
        state: StateChange | None,
        now: datetime,
    ) -> bool:
        head = self._head(claim)
        if head is None:
            return False
        queue = self._queues[claim.queue]
        if consumed:
            gone = set(consumed)
            kept = [item for item in queue if item.id not in gone]
            self._size -= len(queue) - len(kept)
            queue.clear()
            queue.extend(kept)
        if state is not None:
            if state.document is None:
                self._states.pop(claim.queue, None)
            else:
                self._states[claim.queue] = (state.document, now + self._ttl)
        self._next(claim.queue)
        return True

    async def fail(self, claim: Claim, *, now: datetime, delay: float, error: str) -> bool:
        head = self._head(claim)
        if head is None:
            return False
        head.lease_id = None
        if delay <= 0:
            self._ready[claim.queue] = None
        else:
            due = now + timedelta(seconds=delay)
            heapq.heappush(self._delayed, (due, head.id, claim.queue))
        return True

    async def bury(self, claim: Claim, *, now: datetime, error: str) -> bool:
        if self._head(claim) is None:
            return False
        self._next(claim.queue)
        return True

    def _next(self, name: str) -> None:
        """The head of ``name`` is done: the next one becomes ready, or the queue goes."""
        queue = self._queues[name]
        queue.popleft()
        self._size -= 1
        if queue:
            self._ready[name] = None
        else:
            del self._queues[name]

    def next_due(self) -> datetime | None:
        """When the earliest retry is due (None: none waits)."""
        return self._delayed[0][0] if self._delayed else None

    async def tidy(self, *, now: datetime) -> None:
        for name in [name for name, (_, expires) in self._states.items() if expires <= now]:
            del self._states[name]

    async def statistics(self) -> InboxStatistics:
        running = sum(1 for queue in self._queues.values() if queue[0].lease_id is not None)
        oldest = min((queue[0].recorded_at for queue in self._queues.values()), default=None)
        return InboxStatistics(
            pending=self._size - running, running=running, dead=0, oldest_pending_at=oldest
        )
