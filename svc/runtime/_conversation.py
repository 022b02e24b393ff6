"""One run's conversation: the call's updates (a burst), the user's state, and waits for the
later updates of the run's own queue, written once for both modes over ``RunQueue.later``.

Per-user order holds a user's later updates behind the running head, so a wait is a read
of them: the first later item its listener matches that the run has not taken yet. What
a wait or a burst takes is only noted (``RunControl.consumed``) and goes with the run's
success; until then nothing is gone, so a rerun after a crash finds the same items. A
burst is judged by record times alone (each later item of the head's kind joins while it
was recorded within ``window`` of the newest one and ``max_wait`` of the head), so a rerun
gathers exactly the burst the first run gathered, however late it runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Final, Protocol

import trio

from svc.webhook import Coalesce, Listener, ListenerTimeout, Update, UserState

from ._control import RunControl, RunTasks
from ._events import Observer, UpdateTaken, WaitEnded, WaitStarted
from ._queue import Claim, Entry, RunQueue

__all__ = ["Arrivals", "Conversation", "Detached", "RunConversation"]

BURST_GRACE: Final = 0.2
"""Seconds a burst waits past its window's end for items recorded just before it (their
transactions may still be committing), so the first run sees what a rerun will."""


class Conversation(Protocol):
    """One run's view of its queue: its updates, the user's state, and waits."""

    @property
    def updates(self) -> Sequence[Update]: ...

    @property
    def state(self) -> UserState: ...

    async def listen(self, listener: Listener, timeout: float) -> Update:
        """The first later update of the queue ``listener`` matches and no earlier wait of
        the run took; ``ListenerTimeout`` after ``timeout`` seconds."""
        ...

    def start_soon(self, task: Callable[[], Awaitable[None]]) -> None:
        """Run ``task`` beside the handler until the run ends (it is cancelled then): the
        run's own background work, such as renewing a typing indicator."""
        ...


class Arrivals:
    """A notice board of new updates: waiters take ``event()`` before they look, ``notify()``
    sets it (and starts a fresh one), so an arrival between a look and the wait is not missed.
    """

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event: trio.Event | None = None
        """Made by the first waiter after a ``notify()`` (most arrivals find none)."""

    def event(self) -> trio.Event:
        """The event the next ``notify()`` sets."""
        if self._event is None:
            self._event = trio.Event()
        return self._event

    def notify(self) -> None:
        """New updates were recorded: wake every waiter."""
        event, self._event = self._event, None
        if event is not None:
            event.set()


class Detached:
    """The conversation of a context outside a runtime: its one update, a state that is never
    kept, and no waits."""

    __slots__ = ("state", "updates")

    def __init__(self, update: Update) -> None:
        self.updates: Sequence[Update] = (update,)
        self.state = UserState()

    async def listen(self, listener: Listener, timeout: float) -> Update:
        raise RuntimeError("waits need the handler runtime (a context it runs)")

    def start_soon(self, task: Callable[[], Awaitable[None]]) -> None:
        raise RuntimeError("a run's background work needs the handler runtime")


class RunConversation:
    """The conversation of one claimed head, over its mode's queue."""

    __slots__ = (
        "_arrivals",
        "_claim",
        "_control",
        "_now",
        "_observer",
        "_poll",
        "_queue",
        "_tasks",
        "state",
        "updates",
    )

    def __init__(
        self,
        *,
        queue: RunQueue,
        claim: Claim,
        update: Update,
        state: UserState,
        control: RunControl,
        arrivals: Arrivals,
        poll_interval: float,
        now: Callable[[], datetime],
        observer: Observer,
        tasks: RunTasks,
    ) -> None:
        self._queue = queue
        self._tasks = tasks
        self._claim = claim
        self._control = control
        self._arrivals = arrivals
        self._poll = poll_interval
        self._now = now
        self._observer = observer
        self.updates: Sequence[Update] = (update,)
        self.state = state

    async def _later(self) -> list[Entry]:
        taken = self._control.consumed
        return [entry for entry in await self._queue.later(self._claim) if entry.id not in taken]

    def _take(self, entry: Entry, how: str) -> None:
        self._control.consumed[entry.id] = entry.update_key
        self._observer(
            UpdateTaken(
                update_key=entry.update_key,
                queue=self._claim.queue,
                by=self._claim.update_key,
                how="wait" if how == "wait" else "burst",
            )
        )

    async def listen(self, listener: Listener, timeout: float) -> Update:
        """The first later update of the queue ``listener`` matches (``ListenerTimeout``
        after ``timeout`` seconds); it looks again at each arrival in this process and every
        ``poll_interval`` (items other processes recorded)."""
        claim = self._claim
        until = trio.current_time() + timeout
        read_again = True
        self._observer(
            WaitStarted(
                update_key=claim.update_key,
                queue=claim.queue,
                listener=listener.name,
                timeout=timeout,
            )
        )
        async with self._control.paused():
            while True:
                arrived = self._arrivals.event()
                for entry in await self._later():
                    if listener.matches(entry.update):
                        self._take(entry, "wait")
                        await self._queue.note_taken(self._claim, (entry.id,))
                        self._wait_ended(listener, entry.update_key)
                        return entry.update
                left = until - trio.current_time()
                if left <= 0:
                    if not (read_again and arrived.is_set()):
                        self._wait_ended(listener, None)
                        raise ListenerTimeout(listener.name, timeout)
                    # An item came while that read was under way: it may have been recorded
                    # in time yet be missing from it, so the time's end reads once more.
                    read_again = False
                    continue
                with trio.move_on_after(min(left, self._poll)):
                    await arrived.wait()

    def start_soon(self, task: Callable[[], Awaitable[None]]) -> None:
        """Run ``task`` as a task of the run (beside its lease's renewals), cancelled when
        the run ends."""
        self._tasks.start_soon(task)

    def _wait_ended(self, listener: Listener, taken: str | None) -> None:
        claim = self._claim
        self._observer(
            WaitEnded(
                update_key=claim.update_key, queue=claim.queue, listener=listener.name, taken=taken
            )
        )

    async def gather(self, coalesce: Coalesce) -> None:
        """Make ``updates`` the burst the head starts: the later items of its kind, in
        order, each recorded within ``window`` of the newest one taken and ``max_wait`` of
        the head, at most ``max_count``; it waits until that window has passed."""
        head = self._claim
        burst = list(self.updates)
        window = timedelta(seconds=coalesce.window)
        last = head.recorded_at + timedelta(seconds=coalesce.max_wait)
        newest = head.recorded_at
        taken: list[int] = []
        read_again = True
        async with self._control.paused():
            while True:
                arrived = self._arrivals.event()
                closed = False
                for entry in await self._later():
                    if entry.kind != head.kind or entry.update.kind != head.kind:
                        continue
                    if len(burst) >= coalesce.max_count or entry.recorded_at > min(
                        newest + window, last
                    ):
                        closed = True
                        break
                    self._take(entry, "burst")
                    taken.append(entry.id)
                    burst.append(entry.update)
                    newest = max(newest, entry.recorded_at)
                ends = min(newest + window, last)
                left = (ends - self._now()).total_seconds() + BURST_GRACE
                if closed or len(burst) >= coalesce.max_count:
                    break
                if left <= 0:
                    if not (read_again and arrived.is_set()):
                        break
                    read_again = False  # see ``listen``: an item came during that read
                    continue
                with trio.move_on_after(min(left, self._poll)):
                    await arrived.wait()
            if taken:
                await self._queue.note_taken(self._claim, taken)
        self.updates = tuple(burst)
