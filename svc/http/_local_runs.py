"""This process's own runs of webhook updates, by update key: being recorded, running, finished.

A copy of a delivery whose updates another task of this process is recording or
running waits for that run instead of answering 503 ``webhook_in_progress``;
only a run of another process (which cannot be awaited) makes it answer 503.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Final

import anyio

__all__ = [
    "LOCAL_RUN_WAIT_SECONDS",
    "MAX_FINISHED_KEYS",
    "MAX_LOCAL_COPIES",
    "LocalCopies",
    "LocalRuns",
    "RecentKeys",
]

MAX_FINISHED_KEYS: Final = 4096
MAX_LOCAL_COPIES: Final = 4096
"""How many deliveries ``LocalCopies`` remembers at least (a body hash each; at most twice as
many, ``RecentKeys``)."""
LOCAL_RUN_WAIT_SECONDS: Final = 10.0
"""How long a webhook copy waits for this process's own run of its updates before a 503."""
LOCAL_CLAIM_GRACE_SECONDS: Final = 0.2


class LocalRuns:
    """The keys this process is recording, running and lately finished (``RecentKeys``).

    A waiting copy sleeps on one shared "changed" event, set whenever a key's
    state moves (recording ends, a run starts or finishes); a run's own event is
    made only when a copy waits on it, so the path without copies creates none.
    """

    def __init__(self) -> None:
        self._recording: dict[str, int] = {}
        self._running: dict[str, anyio.Event | None] = {}
        self._finished = RecentKeys(MAX_FINISHED_KEYS)
        self._changed: anyio.Event | None = None

    @contextlib.contextmanager
    def recording(self, keys: Iterable[str]) -> Iterator[None]:
        """Mark ``keys`` as being recorded by this task, from its store call to its run's start."""
        held = list(keys)
        for key in held:
            self._recording[key] = self._recording.get(key, 0) + 1
        try:
            yield
        finally:
            for key in held:
                left = self._recording[key] - 1
                if left:
                    self._recording[key] = left
                else:
                    del self._recording[key]
            self._notify()

    def start(self, keys: Iterable[str], *, finished: Iterable[str] = ()) -> None:
        """``keys`` run now, in this task; ``finished`` (updates with no work) were recorded
        finished with the delivery, so a copy waiting on one answers at once."""
        for key in keys:
            self._running[key] = None
        if finished:
            self._finished.add(finished)
        self._notify()

    def finish(self, keys: Collection[str], *, unfinished: Collection[str] = ()) -> None:
        """``keys`` ran (their handlers returned or raised): wake the copies waiting on them.

        A key in ``unfinished`` (its run is to be repeated) is not kept as finished: a
        copy waiting on it answers as for another process's run.
        """
        if not keys:
            return
        for key in keys:
            event = self._running.pop(key)
            if event is not None:
                event.set()
        self._finished.add([key for key in keys if key not in unfinished])
        self._notify()

    def _notify(self) -> None:
        """Wake every copy waiting for a key's state to move."""
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def _wait_while(self, blocked: Callable[[], bool]) -> None:
        """Return once ``blocked()`` is false, checked again at every state change."""
        while blocked():
            if self._changed is None:
                self._changed = anyio.Event()
            await self._changed.wait()

    def _unseen(self, key: str) -> bool:
        return key not in self._running and key not in self._finished

    async def wait(self, keys: set[str]) -> bool:
        """Wait (bounded) for this process's own runs of ``keys``; True once all finished.

        A key another task of this process is still recording may be about to
        run here, so the copy waits for it to start; a run whose claim committed
        with this copy's record may not have resumed yet (a short grace). A key
        that is then neither running nor finished here is another process's (False).
        """
        with anyio.move_on_after(LOCAL_RUN_WAIT_SECONDS):
            await self._wait_while(
                lambda: any(key in self._recording and self._unseen(key) for key in keys)
            )
        with anyio.move_on_after(LOCAL_CLAIM_GRACE_SECONDS):
            await self._wait_while(lambda: any(self._unseen(key) for key in keys))
        events: list[anyio.Event] = []
        for key in keys:
            if key in self._finished:
                continue
            if key not in self._running:
                return False
            event = self._running[key]
            if event is None:
                event = self._running[key] = anyio.Event()
            events.append(event)
        with anyio.move_on_after(LOCAL_RUN_WAIT_SECONDS):
            for event in events:
                await event.wait()
            return True
        return False


class RecentKeys:
    """The keys added lately: at least the latest ``limit`` of them, and at most about twice
    as many (twice ``limit`` plus the keys of one ``add``).

    Two generations: keys go into the current one, and once it holds ``limit`` keys it
    becomes the previous one and the one before is forgotten whole. Nothing is dropped
    key by key, so adding a delivery's keys costs a set update (an ordered set that
    dropped its oldest key one at a time cost a linked-list step per key).
    """

    __slots__ = ("_current", "_limit", "_previous")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._current: set[str] = set()
        self._previous: set[str] = set()

    def __contains__(self, key: object) -> bool:
        return key in self._current or key in self._previous

    def add(self, keys: Iterable[str]) -> None:
        """Remember ``keys`` (forgetting the older generation once this one is full)."""
        self._current.update(keys)
        if len(self._current) >= self._limit:
            self._previous, self._current = self._current, set()


class LocalCopies(RecentKeys):
    """The body hashes of the deliveries this process recorded and ran to the end.

    Kept once a delivery was recorded with its projection, nothing of it was in progress
    elsewhere, it asked for no identity change, and every update it ran had its hooks and
    its handled mark stored: a copy of it, byte for byte (the platform's retry), has then
    nothing left to record or run, as the store would answer (every update finished).
    A finished update never becomes unfinished, so what is kept stays true; it is
    forgotten a generation at a time (``RecentKeys``), and a copy not found here goes to
    the store as any delivery.
    """

    __slots__ = ()

    def __init__(self, limit: int = MAX_LOCAL_COPIES) -> None:
        super().__init__(limit)
