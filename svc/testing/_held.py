"""A store whose calls hold trio's autojump clock still while they run in a thread.

An autojump clock jumps as soon as every task waits, and a task waiting for a store's
thread counts as waiting: without a hold, a lease or a wait would lapse during a plain
``INSERT``. ``HeldStore`` sets the clock's ``autojump_threshold`` to infinity while one of
its calls is in flight, so virtual time passes only when every task truly waits, and
tells the harness when the last call in flight ends.

It implements ``svc.store.PersistenceStore`` member by member: each async method is a
``_Held`` delegation to the wrapped store through ``_hold``, typed by the contract's own
method (mypy checks the class against the contract, and ``isinstance`` accepts it on every
Python); ``backend`` reads the wrapped store and ``watch_inbox`` waits for as long as the
runtime lives (a listener, not I/O), so neither is held.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

import trio
import trio.testing

from svc.store import PersistenceStore

__all__ = ["HeldStore"]

P = ParamSpec("P")
T = TypeVar("T")


class _Held(Generic[P, T]):
    """A ``HeldStore`` method: the wrapped store's method of the same name, called through
    ``HeldStore._hold``, with the signature of the contract's ``method``."""

    __slots__ = ("_name",)

    def __init__(self, method: Callable[Concatenate[Any, P], Coroutine[Any, Any, T]]) -> None:
        self._name = method.__name__

    def __set_name__(self, owner: type[HeldStore], name: str) -> None:
        if name != self._name:  # mypy checks the signature, this the name it delegates to
            raise TypeError(f"HeldStore.{name} is typed as {self._name}")

    def __get__(
        self, store: HeldStore, owner: type[HeldStore] | None = None
    ) -> Callable[P, Coroutine[Any, Any, T]]:
        method: Callable[P, Awaitable[T]] = getattr(store.inner, self._name)

        async def held(*args: P.args, **kwargs: P.kwargs) -> T:
            return await store._hold(method, *args, **kwargs)

        held.__name__ = self._name  # what ``on_call`` is told, through a HeldStore in a HeldStore
        return held


class HeldStore:
    """``store`` with every async call holding ``clock`` still (``busy`` counts them).

    ``on_call(name)``, when given, is called before each held call reaches the store: a
    test's record of the calls, or a fault it injects by raising.
    """

    __slots__ = ("_clock", "_on_call", "_quiet", "_threshold", "busy", "inner")

    def __init__(
        self,
        store: PersistenceStore,
        clock: trio.testing.MockClock | None,
        *,
        on_call: Callable[[str], None] | None = None,
    ) -> None:
        self.inner = store
        self.busy = 0
        self._clock = clock
        self._on_call = on_call
        self._threshold = clock.autojump_threshold if clock is not None else 0.0
        self._quiet = trio.Event()
        self._quiet.set()

    async def wait_quiet(self) -> None:
        """Return once no call is in flight."""
        while self.busy:
            await self._quiet.wait()

    async def _hold(self, call: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
        """``call`` with the clock held still until it returns."""
        if self._on_call is not None:
            self._on_call(call.__name__)
        if self.busy == 0:
            self._quiet = trio.Event()
            if self._clock is not None:
                self._clock.autojump_threshold = math.inf
        self.busy += 1
        try:
            return await call(*args, **kwargs)
        finally:
            self.busy -= 1
            if self.busy == 0:
                if self._clock is not None:
                    self._clock.autojump_threshold = self._threshold
                self._quiet.set()

    @property
    def backend(self) -> str:
        return self.inner.backend

    async def watch_inbox(self, on_signal: Callable[[], None]) -> None:
        return await self.inner.watch_inbox(on_signal)

    create_broadcast = _Held(PersistenceStore.create_broadcast)
    get_broadcast = _Held(PersistenceStore.get_broadcast)
    set_broadcast_paused = _Held(PersistenceStore.set_broadcast_paused)
    pause_broadcasts_for_template = _Held(PersistenceStore.pause_broadcasts_for_template)
    expire_broadcast_leases = _Held(PersistenceStore.expire_broadcast_leases)
    claim_broadcast_sends = _Held(PersistenceStore.claim_broadcast_sends)
    complete_broadcast_send = _Held(PersistenceStore.complete_broadcast_send)
    retry_broadcast_send = _Held(PersistenceStore.retry_broadcast_send)
    delay_broadcast_pacing = _Held(PersistenceStore.delay_broadcast_pacing)
    migrate = _Held(PersistenceStore.migrate)
    health = _Held(PersistenceStore.health)
    record_webhook_event = _Held(PersistenceStore.record_webhook_event)
    record_webhook_delivery = _Held(PersistenceStore.record_webhook_delivery)
    record_webhook_updates = _Held(PersistenceStore.record_webhook_updates)
    get_service_request = _Held(PersistenceStore.get_service_request)
    record_service_request = _Held(PersistenceStore.record_service_request)
    claim_service_request = _Held(PersistenceStore.claim_service_request)
    complete_service_request = _Held(PersistenceStore.complete_service_request)
    release_service_request = _Held(PersistenceStore.release_service_request)
    enqueue_outbox_item = _Held(PersistenceStore.enqueue_outbox_item)
    claim_outbox_items = _Held(PersistenceStore.claim_outbox_items)
    mark_outbox_item_failed = _Held(PersistenceStore.mark_outbox_item_failed)
    mark_outbox_item_dead = _Held(PersistenceStore.mark_outbox_item_dead)
    list_outbox_items = _Held(PersistenceStore.list_outbox_items)
    retry_outbox_item = _Held(PersistenceStore.retry_outbox_item)
    count_outbox_items = _Held(PersistenceStore.count_outbox_items)
    mark_outbox_item_succeeded = _Held(PersistenceStore.mark_outbox_item_succeeded)
    record_message = _Held(PersistenceStore.record_message)
    append_message_status = _Held(PersistenceStore.append_message_status)
    get_message = _Held(PersistenceStore.get_message)
    list_messages = _Held(PersistenceStore.list_messages)
    get_latest_inbound_message_at = _Held(PersistenceStore.get_latest_inbound_message_at)
    record_user_identities = _Held(PersistenceStore.record_user_identities)
    record_identity_change = _Held(PersistenceStore.record_identity_change)
    find_user_identity = _Held(PersistenceStore.find_user_identity)
    prune = _Held(PersistenceStore.prune)
    claim_inbox_items = _Held(PersistenceStore.claim_inbox_items)
    mark_inbox_item_succeeded = _Held(PersistenceStore.mark_inbox_item_succeeded)
    mark_inbox_item_succeeded_and_claim = _Held(
        PersistenceStore.mark_inbox_item_succeeded_and_claim
    )
    extend_inbox_lease = _Held(PersistenceStore.extend_inbox_lease)
    list_inbox_queue = _Held(PersistenceStore.list_inbox_queue)
    get_user_state = _Held(PersistenceStore.get_user_state)
    delete_expired_user_states = _Held(PersistenceStore.delete_expired_user_states)
    mark_inbox_item_failed = _Held(PersistenceStore.mark_inbox_item_failed)
    mark_inbox_item_dead = _Held(PersistenceStore.mark_inbox_item_dead)
    list_inbox_items = _Held(PersistenceStore.list_inbox_items)
    retry_inbox_item = _Held(PersistenceStore.retry_inbox_item)
    drop_inbox_item = _Held(PersistenceStore.drop_inbox_item)
    mark_inbox_items_taken = _Held(PersistenceStore.mark_inbox_items_taken)
    get_inbox_item = _Held(PersistenceStore.get_inbox_item)
    inbox_statistics = _Held(PersistenceStore.inbox_statistics)
    delete_dead_inbox_items = _Held(PersistenceStore.delete_dead_inbox_items)
    count_outbox_pending = _Held(PersistenceStore.count_outbox_pending)
    close = _Held(PersistenceStore.close)
