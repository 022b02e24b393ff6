"""The queue interface the runtime's one loop runs over, and the records it passes.

Two modes implement ``RunQueue``: ``StoreQueue`` (the store's durable, sealed inbox,
shared by workers and instances) and ``MemoryQueue`` (this process only). Both keep
the same rule: only a queue's head is claimed, and only while no other item of the
queue runs, so a queue runs one item at a time in recorded order; a claim holds its
item under a lease that the run renews, and every settlement is fenced by the lease.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from svc.store import InboxStatistics
from svc.webhook import Update, UserState

__all__ = ["Claim", "Entry", "RunQueue", "StateChange"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Claim:
    """A claimed head: its id, update key, queue, kind, attempt (from 1), record time and
    the lease that fences its settlement. ``payload`` is the mode's own (a sealed row or
    the update itself), opened by ``RunQueue.open``."""

    id: int
    update_key: str
    queue: str
    kind: str
    attempt: int
    recorded_at: datetime
    lease_id: str
    payload: object


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """A later item of a claim's queue, opened: what waits and bursts choose from."""

    id: int
    update_key: str
    kind: str
    recorded_at: datetime
    update: Update


@dataclass(frozen=True, slots=True)
class StateChange:
    """The user's state a success writes: canonical JSON, or None to delete it."""

    document: bytes | None


class RunQueue(Protocol):
    """What the loop asks of a mode (``keeps_dead_letters``: whether buried items are kept
    for an operator). Every settlement returns False, changing nothing, when
    the claim's lease is no longer current (another claim took the item, or it was dropped)."""

    keeps_dead_letters: bool

    async def claim(self, *, now: datetime, limit: int, lease: float) -> Sequence[Claim]:
        """Lease up to ``limit`` due heads of queues that have nothing running."""
        ...

    async def renew(self, claim: Claim, *, until: datetime) -> bool:
        """Move the claim's lease to end at ``until``; False once it is lost."""
        ...

    def open(self, claim: Claim) -> Update:
        """The claimed update; ``DeadLetter`` when it cannot be read."""
        ...

    def load_state(self, claim: Claim, *, now: datetime) -> UserState:
        """The user's state as the claim found it (empty when none, expired at ``now`` or
        unreadable)."""
        ...

    async def later(self, claim: Claim) -> Sequence[Entry]:
        """The items after the claim's in its queue, in recorded order (unreadable ones left
        out: they dead-letter when their turn comes)."""
        ...

    async def note_taken(self, claim: Claim, ids: Sequence[int]) -> None:
        """Show later items the run's wait or burst took as consumed (for operators: what
        they are is decided by the run's settlement alone)."""
        ...

    async def complete(
        self,
        claim: Claim,
        *,
        consumed: Sequence[int],
        state: StateChange | None,
        now: datetime,
    ) -> bool:
        """Done: delete the claim, the later items it ``consumed``, and write ``state``
        (None: leave it), all at once."""
        ...

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
        """``complete``, and at once lease the claim's queue's next head if it is due
        (``others_first``: another queue's due head first, when there is one), which the same
        run slot runs next without a claim of its own: whether the completion applied, and
        the next claim (None: nothing due; never after a refused completion)."""
        ...

    async def fail(self, claim: Claim, *, now: datetime, delay: float, error: str) -> bool:
        """Back to pending, due ``delay`` seconds after ``now``; ``error`` kept."""
        ...

    async def bury(self, claim: Claim, *, now: datetime, error: str) -> bool:
        """A dead letter: never claimed again; the queue's later items go on."""
        ...

    async def tidy(self, *, now: datetime) -> None:
        """Periodic housekeeping (old dead letters, expired states)."""
        ...

    async def statistics(self) -> InboxStatistics:
        """How many items are pending, running and dead, and the oldest one's record time."""
        ...
