"""The in-memory queue: the runtime's mode without a store, in this process only.

The same rules as the store's inbox: one queue per ``queue_key`` whose head alone runs,
one run per queue at a time, settlements fenced by the claim's lease, retries due later,
the users' states kept until their expiry. It holds ``capacity`` updates at most (a
delivery that does not fit is refused whole: the service answers 503) and remembers the
last ``seen_window`` update keys, so the platform's redelivery of an update this process
already accepted runs nothing. A crash or a stop loses what it holds, and dead letters
are not kept.

One queue per person, in this process: an update that names its user by more than one
identifier (a phone and a BSUID) links their own queue keys (``user_queue_keys``) to the
queue of the update's own key, in a map of at most ``LINKS_MAX`` links (the oldest
forgotten first); later updates by any of them go to that queue, and the items already
waiting under a linked key join it in recorded order, with the state written last. A key
linked before to another queue is pointed to the new one and that queue stays apart.
"""

from __future__ import annotations

import heapq
import itertools
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from svc.store import InboxStatistics
from svc.webhook import Update, UserState, queue_key, user_queue_keys

from ._queue import Claim, Entry, StateChange

__all__ = ["LINKS_MAX", "MemoryQueue"]

LINKS_MAX: Final = 100_000
"""The most identifier links the memory queue keeps (one per linked queue key)."""


@dataclass(slots=True, eq=False)
class _Item:
    id: int
    update_key: str
    queue: str
    update: Update
    recorded_at: datetime
    attempts: int = 0
    lease_id: str | None = None
    due: datetime | None = None


class MemoryQueue:
    """The in-process ``RunQueue``: accepts updates (``accept``) and serves them by queue."""

    keeps_dead_letters = False

    def __init__(
        self, *, capacity: int, seen_window: int, state_ttl: timedelta, links: int = LINKS_MAX
    ) -> None:
        self._capacity = capacity
        self._seen_window = seen_window
        self._ttl = state_ttl
        self._links_max = links
        self._queues: dict[str, deque[_Item]] = {}
        self._ready: dict[str, None] = {}
        """Queues whose head may be due, in the order they became so (checked at the claim)."""
        self._links: OrderedDict[str, str] = OrderedDict()
        """A linked queue key -> the queue it goes to (never itself a linked key)."""
        self._linked: dict[str, set[str]] = {}
        """A queue -> the keys linked to it."""
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
            name = self._link(update)
            queue = self._queues.get(name)
            if queue is None:
                queue = self._queues[name] = deque()
                self._ready[name] = None
            queue.append(_Item(next(self._ids), key, name, update, now))
        self._size += len(fresh)
        return [key for _, key in fresh]

    def _resolve(self, name: str) -> str:
        return self._links.get(name, name)

    def _link(self, update: Update) -> str:
        """The queue of ``update``: its own key's, as linked. An update naming its user by
        several identifiers first links their keys to that queue: a key's own queue joins
        it; a key linked to another queue is only pointed here (its queue stays: a number
        reassigned to a new BSUID is another person)."""
        name = self._resolve(queue_key(update))
        for key in user_queue_keys(update):
            if key == name or self._links.get(key) == name:
                continue
            if key in self._links:
                self._add_link(key, name)
            else:
                self._join(key, name)
        return name

    def _join(self, source: str, target: str) -> None:
        """Link ``source`` and every key linked to it to ``target``; move its items (in
        recorded order) and keep the state written last (the later expiry)."""
        for key in sorted(self._linked.pop(source, set())):
            self._add_link(key, target)
        self._add_link(source, target)
        moved = self._queues.pop(source, None)
        if moved:
            queue = self._queues.get(target)
            joined = heapq.merge(queue or (), moved, key=lambda item: item.id)
            self._queues[target] = deque(joined)
            self._ready[target] = None
        found = self._states.pop(source, None)
        kept = self._states.get(target)
        if found is not None and (kept is None or found[1] > kept[1]):
            self._states[target] = found

    def _add_link(self, key: str, target: str) -> None:
        old = self._links.pop(key, None)
        if old is not None:
            self._linked.get(old, set()).discard(key)
        self._links[key] = target
        self._linked.setdefault(target, set()).add(key)
        while len(self._links) > self._links_max:
            gone, to = self._links.popitem(last=False)
            self._linked.get(to, set()).discard(gone)

    def _claimable(self, name: str, now: datetime) -> _Item | None:
        """The head of ``name`` when it is pending, due, and nothing of its queue runs."""
        queue = self._queues.get(name)
        if not queue:
            return None
        head = queue[0]
        if head.due is not None and head.due > now:
            return None
        if any(item.lease_id is not None for item in queue):
            return None
        return head

    async def claim(self, *, now: datetime, limit: int, lease: float) -> Sequence[Claim]:
        while self._delayed and self._delayed[0][0] <= now:
            self._ready[self._resolve(heapq.heappop(self._delayed)[2])] = None
        claims: list[Claim] = []
        while self._ready and len(claims) < limit:
            name = next(iter(self._ready))
            claim = self._take(name, now)
            if claim is not None:
                claims.append(claim)
        return claims

    def _take(self, name: str, now: datetime) -> Claim | None:
        """Lease the head of ``name`` if it is claimable (``name`` leaves the ready queues:
        a change that may make it claimable puts it back)."""
        self._ready.pop(name, None)
        head = self._claimable(name, now)
        if head is None:
            return None
        head.due = None
        head.attempts += 1
        head.lease_id = f"m{head.id}.{head.attempts}"
        return Claim(
            id=head.id,
            update_key=head.update_key,
            queue=name,
            kind=head.update.kind,
            attempt=head.attempts,
            recorded_at=head.recorded_at,
            lease_id=head.lease_id,
            payload=head,
        )

    def _head(self, claim: Claim) -> _Item | None:
        """The claimed item while its lease holds, in the queue it is in now (a link may
        have joined its queue to another: it is the head there, or runs beside it)."""
        queue = self._queues.get(self._resolve(claim.queue))
        for item in queue or ():
            if item.id == claim.id:
                return item if item.lease_id == claim.lease_id else None
        return None

    async def renew(self, claim: Claim, *, until: datetime) -> bool:
        return self._head(claim) is not None

    def open(self, claim: Claim) -> Update:
        item = claim.payload
        assert isinstance(item, _Item)
        return item.update

    def load_state(self, claim: Claim, *, now: datetime) -> UserState:
        name = self._resolve(claim.queue)
        found = self._states.get(name)
        if found is None:
            return UserState()
        document, expires = found
        if expires <= now:
            del self._states[name]
            return UserState()
        return UserState.from_json(document)

    async def later(self, claim: Claim) -> Sequence[Entry]:
        queue = self._queues.get(self._resolve(claim.queue))
        return [
            Entry(
                id=item.id,
                update_key=item.update_key,
                kind=item.update.kind,
                recorded_at=item.recorded_at,
                update=item.update,
            )
            for item in queue or ()
            if item.id > claim.id
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
        name = self._resolve(claim.queue)
        queue = self._queues[name]
        if consumed:
            gone = set(consumed)
            kept = [item for item in queue if item.id not in gone]
            self._size -= len(queue) - len(kept)
            queue.clear()
            queue.extend(kept)
        if state is not None:
            if state.document is None:
                self._states.pop(name, None)
            else:
                self._states[name] = (state.document, now + self._ttl)
        self._next(name, head)
        return True

    async def complete_and_continue(
        self,
        claim: Claim,
        *,
        consumed: Sequence[int],
        state: StateChange | None,
        now: datetime,
        lease: float,
        others_first: bool,
    ) -> tuple[bool, Claim | None]:
        if not await self.complete(claim, consumed=consumed, state=state, now=now):
            return False, None
        name = self._resolve(claim.queue)
        if others_first:
            for other in [other for other in self._ready if other != name]:
                taken = self._take(other, now)
                if taken is not None:
                    return True, taken
        return True, self._take(name, now)

    async def fail(self, claim: Claim, *, now: datetime, delay: float, error: str) -> bool:
        head = self._head(claim)
        if head is None:
            return False
        head.lease_id = None
        name = self._resolve(claim.queue)
        self._ready[name] = None  # its head may be another item a link moved beside it
        if delay > 0:
            head.due = now + timedelta(seconds=delay)
            heapq.heappush(self._delayed, (head.due, head.id, name))
        return True

    async def bury(self, claim: Claim, *, now: datetime, error: str) -> bool:
        head = self._head(claim)
        if head is None:
            return False
        self._next(self._resolve(claim.queue), head)
        return True

    def _next(self, name: str, done: _Item) -> None:
        """``done`` (the head of ``name``, or an item a link moved beside it) is settled: the
        queue may have a head to claim, or it goes."""
        queue = self._queues[name]
        queue.remove(done)
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
        running = sum(
            1 for queue in self._queues.values() for item in queue if item.lease_id is not None
        )
        oldest = min((queue[0].recorded_at for queue in self._queues.values()), default=None)
        return InboxStatistics(
            pending=self._size - running, running=running, dead=0, oldest_pending_at=oldest
        )
