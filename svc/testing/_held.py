"""A store whose calls hold trio's autojump clock still while they run in a thread.

An autojump clock jumps as soon as every task waits, and a task waiting for a store's
thread counts as waiting: without a hold, a lease or a wait would lapse during a plain
``INSERT``. ``HeldStore`` sets the clock's ``autojump_threshold`` to infinity while one of
its calls is in flight, so virtual time passes only when every task truly waits, and
tells the harness when the last call in flight ends.

It implements ``svc.store.PersistenceStore`` method by method (mypy checks each against
the contract, and ``isinstance`` accepts it on every Python), each delegating to the
wrapped store through ``_hold``; ``watch_inbox`` waits for as long as the runtime lives
(a listener, not I/O) and is never held.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Literal, ParamSpec, TypeVar

import trio
import trio.testing

from svc.store import (
    BroadcastCreateResult,
    BroadcastRecipientInput,
    BroadcastSend,
    BroadcastStatus,
    CheckedRows,
    ClaimResult,
    InboxItem,
    InboxRow,
    InboxStatistics,
    InboxStatus,
    MessagePage,
    MessageRecord,
    OutboxItem,
    OutboxStatus,
    PersistenceHealth,
    PersistenceStore,
    PruneReport,
    ServiceRequestRecord,
    StatusEvent,
    UpdatesRecorded,
    UserIdentityRecord,
    UserStateRecord,
    UserStateWrite,
    WebhookEventResult,
)

__all__ = ["HeldStore"]

P = ParamSpec("P")
T = TypeVar("T")


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

    async def create_broadcast(
        self,
        *,
        id: str,
        request_key: str,
        request_hash: str,
        phone_number_id: str,
        recipients: Sequence[BroadcastRecipientInput],
        created_at: datetime,
        template_name: str | None = None,
        template_language: str | None = None,
    ) -> BroadcastCreateResult:
        return await self._hold(
            self.inner.create_broadcast,
            id=id,
            request_key=request_key,
            request_hash=request_hash,
            phone_number_id=phone_number_id,
            recipients=recipients,
            created_at=created_at,
            template_name=template_name,
            template_language=template_language,
        )

    async def get_broadcast(self, *, id: str) -> BroadcastStatus | None:
        return await self._hold(self.inner.get_broadcast, id=id)

    async def set_broadcast_paused(self, *, id: str, paused: bool, now: datetime) -> bool:
        return await self._hold(self.inner.set_broadcast_paused, id=id, paused=paused, now=now)

    async def pause_broadcasts_for_template(
        self, *, name: str, language: str | None = None, now: datetime
    ) -> int:
        return await self._hold(
            self.inner.pause_broadcasts_for_template, name=name, language=language, now=now
        )

    async def expire_broadcast_leases(self, *, now: datetime) -> int:
        return await self._hold(self.inner.expire_broadcast_leases, now=now)

    async def claim_broadcast_sends(
        self,
        *,
        phone_number_id: str,
        now: datetime,
        rate_per_second: float,
        horizon_ms: int,
        limit: int,
        lease_ms: int,
    ) -> list[BroadcastSend]:
        return await self._hold(
            self.inner.claim_broadcast_sends,
            phone_number_id=phone_number_id,
            now=now,
            rate_per_second=rate_per_second,
            horizon_ms=horizon_ms,
            limit=limit,
            lease_ms=lease_ms,
        )

    async def complete_broadcast_send(
        self,
        *,
        broadcast_id: str,
        seq: int,
        lease_id: str,
        outcome: Literal["sent", "failed"],
        now: datetime,
        error_code: str | None = None,
        wa_message_id: str | None = None,
    ) -> bool:
        return await self._hold(
            self.inner.complete_broadcast_send,
            broadcast_id=broadcast_id,
            seq=seq,
            lease_id=lease_id,
            outcome=outcome,
            now=now,
            error_code=error_code,
            wa_message_id=wa_message_id,
        )

    async def retry_broadcast_send(
        self,
        *,
        broadcast_id: str,
        seq: int,
        lease_id: str,
        next_attempt_at: datetime,
        now: datetime,
    ) -> bool:
        return await self._hold(
            self.inner.retry_broadcast_send,
            broadcast_id=broadcast_id,
            seq=seq,
            lease_id=lease_id,
            next_attempt_at=next_attempt_at,
            now=now,
        )

    async def delay_broadcast_pacing(self, *, phone_number_id: str, until: datetime) -> None:
        return await self._hold(
            self.inner.delay_broadcast_pacing, phone_number_id=phone_number_id, until=until
        )

    async def migrate(self) -> int:
        return await self._hold(self.inner.migrate)

    async def health(self) -> PersistenceHealth:
        return await self._hold(self.inner.health)

    async def record_webhook_event(
        self, *, event_key: str, event_hash: str, received_at: datetime
    ) -> WebhookEventResult:
        return await self._hold(
            self.inner.record_webhook_event,
            event_key=event_key,
            event_hash=event_hash,
            received_at=received_at,
        )

    async def record_webhook_delivery(
        self,
        *,
        event_key: str,
        event_hash: str,
        received_at: datetime,
        messages: Sequence[MessageRecord] = (),
        statuses: Sequence[StatusEvent] = (),
        identities: Sequence[UserIdentityRecord] = (),
        rows: CheckedRows | None = None,
    ) -> WebhookEventResult:
        return await self._hold(
            self.inner.record_webhook_delivery,
            event_key=event_key,
            event_hash=event_hash,
            received_at=received_at,
            messages=messages,
            statuses=statuses,
            identities=identities,
            rows=rows,
        )

    async def record_webhook_updates(
        self,
        *,
        event_key: str,
        event_hash: str,
        received_at: datetime,
        update_keys: Sequence[str] = (),
        messages: Sequence[MessageRecord] = (),
        statuses: Sequence[StatusEvent] = (),
        identities: Sequence[UserIdentityRecord] = (),
        rows: CheckedRows | None = None,
        inbox: Sequence[InboxRow] = (),
    ) -> UpdatesRecorded:
        return await self._hold(
            self.inner.record_webhook_updates,
            event_key=event_key,
            event_hash=event_hash,
            received_at=received_at,
            update_keys=update_keys,
            messages=messages,
            statuses=statuses,
            identities=identities,
            rows=rows,
            inbox=inbox,
        )

    async def get_service_request(self, *, idempotency_key: str) -> ServiceRequestRecord | None:
        return await self._hold(self.inner.get_service_request, idempotency_key=idempotency_key)

    async def record_service_request(
        self, *, idempotency_key: str, request_hash: str, response_json: str, created_at: datetime
    ) -> ServiceRequestRecord:
        return await self._hold(
            self.inner.record_service_request,
            idempotency_key=idempotency_key,
            request_hash=request_hash,
            response_json=response_json,
            created_at=created_at,
        )

    async def claim_service_request(
        self, *, idempotency_key: str, request_hash: str, created_at: datetime
    ) -> ClaimResult:
        return await self._hold(
            self.inner.claim_service_request,
            idempotency_key=idempotency_key,
            request_hash=request_hash,
            created_at=created_at,
        )

    async def complete_service_request(
        self,
        *,
        idempotency_key: str,
        request_hash: str,
        response_json: str,
        created_at: datetime,
        response_status: int | None = None,
    ) -> bool:
        return await self._hold(
            self.inner.complete_service_request,
            idempotency_key=idempotency_key,
            request_hash=request_hash,
            response_json=response_json,
            created_at=created_at,
            response_status=response_status,
        )

    async def release_service_request(self, *, idempotency_key: str, request_hash: str) -> bool:
        return await self._hold(
            self.inner.release_service_request,
            idempotency_key=idempotency_key,
            request_hash=request_hash,
        )

    async def enqueue_outbox_item(
        self, *, id: str, payload_hash: str, created_at: datetime
    ) -> OutboxItem:
        return await self._hold(
            self.inner.enqueue_outbox_item, id=id, payload_hash=payload_hash, created_at=created_at
        )

    async def claim_outbox_items(self, *, now: datetime, limit: int) -> list[OutboxItem]:
        return await self._hold(self.inner.claim_outbox_items, now=now, limit=limit)

    async def mark_outbox_item_failed(
        self,
        *,
        id: str,
        lease_id: str,
        now: datetime,
        retry_delay_ms: int,
        error: str | None = None,
    ) -> bool:
        return await self._hold(
            self.inner.mark_outbox_item_failed,
            id=id,
            lease_id=lease_id,
            now=now,
            retry_delay_ms=retry_delay_ms,
            error=error,
        )

    async def mark_outbox_item_dead(
        self, *, id: str, lease_id: str, now: datetime, error: str | None = None
    ) -> bool:
        return await self._hold(
            self.inner.mark_outbox_item_dead, id=id, lease_id=lease_id, now=now, error=error
        )

    async def list_outbox_items(
        self, *, status: OutboxStatus | str | None = None, limit: int = 100
    ) -> list[OutboxItem]:
        return await self._hold(self.inner.list_outbox_items, status=status, limit=limit)

    async def retry_outbox_item(self, *, id: str, now: datetime) -> OutboxItem | None:
        return await self._hold(self.inner.retry_outbox_item, id=id, now=now)

    async def count_outbox_items(self, *, status: OutboxStatus | str) -> int:
        return await self._hold(self.inner.count_outbox_items, status=status)

    async def mark_outbox_item_succeeded(self, *, id: str, lease_id: str, now: datetime) -> bool:
        return await self._hold(
            self.inner.mark_outbox_item_succeeded, id=id, lease_id=lease_id, now=now
        )

    async def record_message(self, record: MessageRecord) -> MessageRecord:
        return await self._hold(self.inner.record_message, record)

    async def append_message_status(
        self, *, wa_message_id: str, status: str, timestamp: datetime
    ) -> bool:
        return await self._hold(
            self.inner.append_message_status,
            wa_message_id=wa_message_id,
            status=status,
            timestamp=timestamp,
        )

    async def get_message(
        self, *, wa_message_id: str, direction: str | None = None
    ) -> MessageRecord | None:
        return await self._hold(
            self.inner.get_message, wa_message_id=wa_message_id, direction=direction
        )

    async def list_messages(
        self,
        *,
        limit: int = 50,
        before_row_id: str | None = None,
        user: str | None = None,
        business_phone_number_id: str | None = None,
        include_unassigned: bool = False,
    ) -> MessagePage:
        return await self._hold(
            self.inner.list_messages,
            limit=limit,
            before_row_id=before_row_id,
            user=user,
            business_phone_number_id=business_phone_number_id,
            include_unassigned=include_unassigned,
        )

    async def get_latest_inbound_message_at(
        self,
        *,
        user: str | None = None,
        phone: str | None = None,
        business_phone_number_id: str | None = None,
        include_unassigned: bool = False,
    ) -> datetime | None:
        return await self._hold(
            self.inner.get_latest_inbound_message_at,
            user=user,
            phone=phone,
            business_phone_number_id=business_phone_number_id,
            include_unassigned=include_unassigned,
        )

    async def record_user_identities(self, identities: Sequence[UserIdentityRecord]) -> None:
        return await self._hold(self.inner.record_user_identities, identities)

    async def record_identity_change(
        self,
        *,
        user: str,
        new_user_id: str | None = None,
        new_wa_id: str | None = None,
        at: datetime,
    ) -> UserIdentityRecord:
        return await self._hold(
            self.inner.record_identity_change,
            user=user,
            new_user_id=new_user_id,
            new_wa_id=new_wa_id,
            at=at,
        )

    async def find_user_identity(self, *, user: str) -> UserIdentityRecord | None:
        return await self._hold(self.inner.find_user_identity, user=user)

    async def prune(
        self,
        *,
        older_than: datetime,
        messages_older_than: datetime | None = None,
        batch_size: int = 500,
    ) -> PruneReport:
        return await self._hold(
            self.inner.prune,
            older_than=older_than,
            messages_older_than=messages_older_than,
            batch_size=batch_size,
        )

    async def claim_inbox_items(
        self, *, now: datetime, limit: int, lease_ms: int
    ) -> list[InboxItem]:
        return await self._hold(
            self.inner.claim_inbox_items, now=now, limit=limit, lease_ms=lease_ms
        )

    async def mark_inbox_item_succeeded(
        self,
        *,
        id: int,
        lease_id: str,
        consumed: Sequence[int] = (),
        state: UserStateWrite | None = None,
        now: datetime | None = None,
    ) -> bool:
        return await self._hold(
            self.inner.mark_inbox_item_succeeded,
            id=id,
            lease_id=lease_id,
            consumed=consumed,
            state=state,
            now=now,
        )

    async def mark_inbox_item_succeeded_and_claim(
        self,
        *,
        id: int,
        lease_id: str,
        consumed: Sequence[int] = (),
        state: UserStateWrite | None = None,
        now: datetime,
        lease_ms: int,
        others_first: bool = False,
    ) -> tuple[bool, InboxItem | None]:
        return await self._hold(
            self.inner.mark_inbox_item_succeeded_and_claim,
            id=id,
            lease_id=lease_id,
            consumed=consumed,
            state=state,
            now=now,
            lease_ms=lease_ms,
            others_first=others_first,
        )

    async def extend_inbox_lease(self, *, id: int, lease_id: str, until: datetime) -> bool:
        return await self._hold(
            self.inner.extend_inbox_lease, id=id, lease_id=lease_id, until=until
        )

    async def list_inbox_queue(
        self, *, queue_key: str, after_id: int, limit: int = 100
    ) -> list[InboxItem]:
        return await self._hold(
            self.inner.list_inbox_queue, queue_key=queue_key, after_id=after_id, limit=limit
        )

    async def get_user_state(self, *, queue_key: str, now: datetime) -> UserStateRecord | None:
        return await self._hold(self.inner.get_user_state, queue_key=queue_key, now=now)

    async def delete_expired_user_states(self, *, now: datetime, batch_size: int = 500) -> int:
        return await self._hold(
            self.inner.delete_expired_user_states, now=now, batch_size=batch_size
        )

    async def mark_inbox_item_failed(
        self,
        *,
        id: int,
        lease_id: str,
        now: datetime,
        retry_delay_ms: int,
        error: str | None = None,
    ) -> bool:
        return await self._hold(
            self.inner.mark_inbox_item_failed,
            id=id,
            lease_id=lease_id,
            now=now,
            retry_delay_ms=retry_delay_ms,
            error=error,
        )

    async def mark_inbox_item_dead(
        self, *, id: int, lease_id: str, now: datetime, error: str | None = None
    ) -> bool:
        return await self._hold(
            self.inner.mark_inbox_item_dead, id=id, lease_id=lease_id, now=now, error=error
        )

    async def list_inbox_items(
        self, *, status: InboxStatus | str | None = None, limit: int = 100
    ) -> list[InboxItem]:
        return await self._hold(self.inner.list_inbox_items, status=status, limit=limit)

    async def retry_inbox_item(self, *, id: int, now: datetime) -> InboxItem | None:
        return await self._hold(self.inner.retry_inbox_item, id=id, now=now)

    async def drop_inbox_item(self, *, id: int, now: datetime | None = None) -> bool:
        return await self._hold(self.inner.drop_inbox_item, id=id, now=now)

    async def mark_inbox_items_taken(self, *, id: int, lease_id: str, taken: Sequence[int]) -> int:
        return await self._hold(
            self.inner.mark_inbox_items_taken, id=id, lease_id=lease_id, taken=taken
        )

    async def watch_inbox(self, on_signal: Callable[[], None]) -> None:
        return await self.inner.watch_inbox(on_signal)

    async def get_inbox_item(self, *, id: int) -> InboxItem | None:
        return await self._hold(self.inner.get_inbox_item, id=id)

    async def inbox_statistics(self) -> InboxStatistics:
        return await self._hold(self.inner.inbox_statistics)

    async def delete_dead_inbox_items(self, *, older_than: datetime, batch_size: int = 500) -> int:
        return await self._hold(
            self.inner.delete_dead_inbox_items, older_than=older_than, batch_size=batch_size
        )

    async def count_outbox_pending(self) -> int:
        return await self._hold(self.inner.count_outbox_pending)

    async def close(self) -> None:
        return await self._hold(self.inner.close)
