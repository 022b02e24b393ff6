"""The handler runtime with a store: updates sealed into the inbox at ingest, run after the answer.

At ingest ``rows`` seals each update the facade handles (``update_to_json``,
encrypted by the keyring's writing key, bound to its update key) into an
``InboxRow`` the store commits with the delivery. The store's inbox worker
(``svc.store.run_inbox_worker``) claims each queue's head, and ``handle`` runs
it: open the row (a key no longer held makes a ``key_unavailable`` dead
letter), rebuild the update, load the user's state, gather the burst of a
coalesced kind, run the facade in a context whose sends are keyed by the update's
key (a send whose outcome cannot be known makes a ``send_outcome_unknown`` dead
letter: it is never made again) and whose waits read the queue's later rows
(``StoreConversation``), then hand the worker the state to write with the
completion. An uncaught ``ListenerTimeout`` ends the run as a success.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import trio
from prometheus_client import CollectorRegistry

from svc.crypto import InboxKeyring, InvalidCiphertextError, KeyUnavailableError
from svc.store import (
    DeadLetter,
    InboxItem,
    InboxReporter,
    InboxRow,
    InboxRun,
    InboxWorkerHandle,
    InboxWorkerOptions,
    PersistenceStore,
    RetryPolicy,
    RunControl,
    run_inbox_worker,
)
from svc.webhook import (
    HandlerContext,
    ListenerTimeout,
    ReplyOutcomeUnknown,
    Update,
    WebhookFacade,
    queue_key,
    update_from_json,
    update_to_json,
)

from ._conversation import Arrivals, Conversation, coalesce_of
from ._handler_options import HandlerOptions
from ._store_conversation import StoreConversation

__all__ = ["InboxRuntime"]


class InboxRuntime:
    """Seals the handled updates of a delivery, and runs the store's inbox worker over them."""

    def __init__(
        self,
        *,
        store: PersistenceStore,
        keyring: InboxKeyring,
        facade: WebhookFacade,
        context_for: Callable[[Update, str, Conversation], HandlerContext],
        options: HandlerOptions,
        now: Callable[[], datetime],
        logger: logging.Logger,
        registry: CollectorRegistry,
    ) -> None:
        self._store = store
        self._keyring = keyring
        self._facade = facade
        self._context_for = context_for
        self._options = options
        self._now = now
        self._logger = logger
        self._arrivals = Arrivals()
        self._reporter = InboxReporter(registry)
        self._worker_options = InboxWorkerOptions(
            handler=self.handle,
            concurrency=options.concurrency,
            max_waiting=options.max_waiting,
            handler_timeout=options.timeout,
            policy=RetryPolicy(
                retry_delay_ms=int(options.retry_delay * 1000),
                max_retry_delay_ms=int(options.max_retry_delay * 1000),
                max_attempts=options.max_attempts,
                jitter=random.random,
            ),
            poll_interval=options.poll_interval,
            dead_horizon=options.dead_horizon,
            now=now,
            on_run=self._on_run,
            on_statistics=self._reporter.refresh,
            on_error=self._on_error,
            after_run=options.after_run,
        )
        self._handle: InboxWorkerHandle | None = None

    def rows(self, updates: Sequence[tuple[Update, str]]) -> list[InboxRow]:
        """The sealed inbox rows of ``(update, update key)`` pairs, in order, each key once."""
        rows: list[InboxRow] = []
        seen: set[str] = set()
        encrypt = self._keyring.encrypt
        for update, key in updates:
            if key in seen:
                continue
            seen.add(key)
            rows.append(
                InboxRow(
                    update_key=key,
                    queue_key=queue_key(update),
                    phone_number_id=update.phone_number_id,
                    kind=update.kind,
                    sealed=encrypt(update_to_json(update), key.encode("ascii")),
                )
            )
        return rows

    async def handle(self, item: InboxItem, control: RunControl) -> None:
        """Run one inbox item: open, rebuild, load the state, gather a burst, run the facade
        in a keyed context, hand the state's write to ``control``.

        ``DeadLetter`` buries the item at once: ``key_unavailable`` (sealed under a key
        the keyring no longer holds), ``sealed_invalid`` / ``update_unreadable`` (a row
        that cannot be what this service wrote), ``send_outcome_unknown`` (a reply that
        may have gone out). Any other exception is a failure the worker retries.
        """
        try:
            data = self._keyring.decrypt(item.sealed, item.update_key.encode("ascii"))
        except KeyUnavailableError:
            raise DeadLetter("key_unavailable") from None
        except InvalidCiphertextError:
            raise DeadLetter("sealed_invalid") from None
        try:
            update = update_from_json(data)
        except ValueError:
            raise DeadLetter("update_unreadable") from None
        conversation = StoreConversation(
            store=self._store,
            keyring=self._keyring,
            item=item,
            update=update,
            control=control,
            arrivals=self._arrivals,
            poll_interval=self._options.poll_interval,
            now=self._now,
            logger=self._logger,
        )
        conversation.load_state()
        coalesce = coalesce_of(self._facade, update)
        if coalesce is not None:
            await conversation.gather(coalesce)
        try:
            await self._facade.run(self._context_for(update, item.update_key, conversation))
        except ReplyOutcomeUnknown:
            raise DeadLetter("send_outcome_unknown") from None
        except ListenerTimeout as exc:
            self._logger.info(
                "listener timed out kind=%s listener=%s; the run ends", update.kind, exc.listener
            )
        conversation.completion(self._options.state_ttl)

    def _on_run(self, run: InboxRun) -> None:
        self._reporter(run)
        if run.outcome != "success":
            self._logger.warning(
                "handler run ended kind=%s outcome=%s seconds=%.3f",
                run.kind,
                run.outcome,
                run.duration,
            )

    def _on_error(self, exc: Exception) -> None:
        code = getattr(exc, "code", None)
        self._logger.warning(
            "inbox worker store call failed error=%s",
            code if isinstance(code, str) else type(exc).__name__[:80],
        )

    async def start(self, nursery: trio.Nursery) -> None:
        """Start the inbox worker in ``nursery`` (the app's serving nursery)."""
        self._handle = await nursery.start(run_inbox_worker, self._store, self._worker_options)

    @property
    def running(self) -> bool:
        """Whether the inbox worker runs (started, not stopped)."""
        return self._handle is not None

    def wake(self) -> None:
        """New rows were recorded: claim now rather than at the next poll, and let the
        waiting runs look at their queues now."""
        self._arrivals.notify()
        if self._handle is not None:
            self._handle.wake()

    async def wait_idle(self) -> None:
        """Return once nothing is due and no run is in flight (what tests await)."""
        if self._handle is not None:
            await self._handle.wait_idle()

    async def run_until_idle(self) -> None:
        """Run the inbox worker in the caller's task until nothing is due and no run is in
        flight (tests and scripts that do not serve the app)."""
        async with trio.open_nursery() as nursery:
            await self.start(nursery)
            await self.wait_idle()
            await self.stop()

    async def stop(self) -> None:
        """Stop claiming and wait for the runs in flight."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            await handle.stop()

    def statistics(self) -> Any:
        """The reporter (its gauges refresh from the store)."""
        return self._reporter
