"""A run's conversation over the store's inbox: waits and bursts read the later rows of the
run's own queue, and the user's state is sealed in the store.

Per-user order holds a user's later updates in the inbox behind the running head, so
a wait is a read of those rows (``list_inbox_queue``): the first later row its
listener matches, not taken by an earlier wait of the run, is consumed
(``RunControl.consume``) and deleted with the head's completion, in one
transaction; the rows it skips stay queued and run after the head. Until that
commit nothing is gone: a crashed run's rerun finds the same rows again. A wait
looks again when this process records rows (``Arrivals``) and every
``poll_interval`` (rows other processes recorded); its time does not count against
the run's deadline (``RunControl.paused``), and its timeout is judged by the
service clock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Final

import trio

from svc.crypto import InboxKeyring, InvalidCiphertextError, KeyUnavailableError
from svc.store import InboxItem, PersistenceStore, RunControl, UserStateWrite
from svc.webhook import Coalesce, Listener, ListenerTimeout, Update, UserState, update_from_json

from ._conversation import Arrivals, state_aad

__all__ = ["StoreConversation"]

_PAGE: Final = 100


class StoreConversation:
    """The conversation of one claimed inbox head (``item``), for one run."""

    __slots__ = (
        "_arrivals",
        "_control",
        "_item",
        "_keyring",
        "_logger",
        "_now",
        "_opened",
        "_poll",
        "_store",
        "_taken",
        "state",
        "updates",
    )

    def __init__(
        self,
        *,
        store: PersistenceStore,
        keyring: InboxKeyring,
        item: InboxItem,
        update: Update,
        control: RunControl,
        arrivals: Arrivals,
        poll_interval: float,
        now: Callable[[], datetime],
        logger: logging.Logger,
    ) -> None:
        self._store = store
        self._keyring = keyring
        self._item = item
        self._control = control
        self._arrivals = arrivals
        self._poll = poll_interval
        self._now = now
        self._logger = logger
        self._taken: set[int] = set()
        self._opened: dict[int, Update | None] = {}
        self.updates: Sequence[Update] = (update,)
        self.state = UserState()

    def load_state(self) -> None:
        """Open the user's state the claim read with the item (empty when none, expired,
        or unreadable: logged once): no store call of the run's own."""
        queue = self._item.queue_key
        record = self._item.state
        if record is None:
            return
        try:
            self.state = UserState.from_json(self._keyring.decrypt(record.sealed, state_aad(queue)))
        except KeyUnavailableError:
            self._unreadable("key_unavailable")
        except (InvalidCiphertextError, ValueError):
            self._unreadable("state_invalid")

    def _unreadable(self, reason: str) -> None:
        self._logger.warning(
            "handler state unreadable reason=%s; the run starts from an empty state", reason
        )

    def completion(self, ttl: timedelta) -> None:
        """Hand the state's write to the completion when it changed: sealed under the
        keyring's writing key until ``now + ttl``, or a delete when it was emptied.
        ``StateTooLarge`` (or ``TypeError``) fails the run, and nothing is written."""
        if not self.state.changed:
            return
        document = self.state.document()
        if document is None:
            self._control.set_state(UserStateWrite(sealed=None))
            return
        sealed = self._keyring.encrypt(document, state_aad(self._item.queue_key))
        self._control.set_state(UserStateWrite(sealed=sealed, expires_at=self._now() + ttl))

    async def listen(self, listener: Listener, timeout: float) -> Update:
        """The first later update of the queue ``listener`` matches (``ListenerTimeout``
        after ``timeout`` seconds of the service clock)."""
        until = self._now() + timedelta(seconds=timeout)
        async with self._control.paused():
            while True:
                arrived = self._arrivals.event()
                for row, update in await self._later():
                    if listener.matches(update):
                        self._take(row)
                        return update
                left = (until - self._now()).total_seconds()
                if left <= 0:
                    raise ListenerTimeout(listener.name, timeout)
                with trio.move_on_after(min(left, self._poll)):
                    await arrived.wait()

    async def gather(self, coalesce: Coalesce) -> None:
        """Make ``updates`` the burst the head starts: the later rows of its kind, in order,
        until none arrived for ``coalesce.window`` seconds (by their record time),
        ``max_wait`` seconds passed since the head's, or ``max_count`` are held."""
        head = self._item
        burst = list(self.updates)
        newest = head.created_at
        async with self._control.paused():
            while len(burst) < coalesce.max_count:
                arrived = self._arrivals.event()
                for row, update in await self._later():
                    if len(burst) >= coalesce.max_count:
                        break
                    if row.kind == head.kind and update.kind == head.kind:
                        self._take(row)
                        burst.append(update)
                        newest = max(newest, row.created_at)
                now = self._now()
                left = min(
                    coalesce.window - (now - newest).total_seconds(),
                    coalesce.max_wait - (now - head.created_at).total_seconds(),
                )
                if left <= 0 or len(burst) >= coalesce.max_count:
                    break
                with trio.move_on_after(min(left, self._poll)):
                    await arrived.wait()
        self.updates = tuple(burst)

    def _take(self, row: InboxItem) -> None:
        self._taken.add(row.id)
        self._control.consume(row.id)

    async def _later(self) -> list[tuple[InboxItem, Update]]:
        """The later rows of the queue not taken yet, opened, in id order (a row that does
        not open is skipped: it dead-letters when its turn comes)."""
        found: list[tuple[InboxItem, Update]] = []
        after = self._item.id
        while True:
            rows = await self._store.list_inbox_queue(
                queue_key=self._item.queue_key, after_id=after, limit=_PAGE
            )
            for row in rows:
                if row.id in self._taken:
                    continue
                update = self._open(row)
                if update is not None:
                    found.append((row, update))
            if len(rows) < _PAGE:
                return found
            after = rows[-1].id

    def _open(self, row: InboxItem) -> Update | None:
        if row.id not in self._opened:
            try:
                data = self._keyring.decrypt(row.sealed, row.update_key.encode("ascii"))
                self._opened[row.id] = update_from_json(data)
            except (KeyUnavailableError, InvalidCiphertextError, ValueError):
                self._opened[row.id] = None
        return self._opened[row.id]
