"""What a handler's context needs from the runtime that runs it: the call's updates, the
user's state, and waits for later updates of the same queue.

Both runtimes implement ``Conversation`` (``_store_conversation`` over the inbox,
``_memory_conversation`` over the in-memory queue); ``Arrivals`` is how the ingest
tells a waiting run that new updates were recorded in this process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import trio

from svc.webhook import Coalesce, Listener, Update, UserState, WebhookFacade

__all__ = ["Arrivals", "Conversation", "Detached", "coalesce_of", "state_aad"]


def coalesce_of(facade: WebhookFacade, update: Update) -> Coalesce | None:
    """The facade's quiet window for the update's kind (``DefaultFacade.coalesce_for``); a
    facade without one never coalesces."""
    coalesce_for = getattr(facade, "coalesce_for", None)
    found = coalesce_for(update) if callable(coalesce_for) else None
    return found if isinstance(found, Coalesce) else None


def state_aad(queue: str) -> bytes:
    """The associated data a user's state is sealed with: it opens only as that queue's."""
    return b"state:" + queue.encode("ascii")


class Arrivals:
    """A notice board of new updates: waiters take ``event()`` before they look, ``notify()``
    sets it (and starts a fresh one), so an arrival between a look and the wait is not missed.
    """

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = trio.Event()

    def event(self) -> trio.Event:
        """The event the next ``notify()`` sets."""
        return self._event

    def notify(self) -> None:
        """New updates were recorded: wake every waiter."""
        event, self._event = self._event, trio.Event()
        event.set()


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


class Detached:
    """The conversation of a context outside a runtime: its one update, a state that is never
    kept, and no waits."""

    __slots__ = ("state", "updates")

    def __init__(self, update: Update) -> None:
        self.updates: Sequence[Update] = (update,)
        self.state = UserState()

    async def listen(self, listener: Listener, timeout: float) -> Update:
        raise RuntimeError("waits need the handler runtime (a context it runs)")
