"""The store contract every adapter implements (``SqliteStore``, ``PostgresStore``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

from ._broadcasts import (
    BroadcastCreateResult,
    BroadcastRecipientInput,
    BroadcastSend,
    BroadcastStatus,
)
from ._checked import CheckedRows
from ._records import (
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
    PruneReport,
    ServiceRequestRecord,
    StatusEvent,
    UpdatesRecorded,
    UserIdentityRecord,
    UserStateRecord,
    UserStateWrite,
    WebhookEventResult,
)

__all__ = ["BroadcastStore", "PersistenceStore"]


@runtime_checkable
class BroadcastStore(Protocol):
    """The broadcast surface of ``PersistenceStore`` (the paced sender takes a store by it)."""

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
        """Store a broadcast and its recipients atomically, idempotent on ``request_key``."""
        ...

    async def get_broadcast(self, *, id: str) -> BroadcastStatus | None:
        """A broadcast's state and counts, or None."""
        ...

    async def set_broadcast_paused(self, *, id: str, paused: bool, now: datetime) -> bool:
        """Pause or resume a broadcast; False when it is unknown."""
        ...

    async def pause_broadcasts_for_template(
        self, *, name: str, language: str | None = None, now: datetime
    ) -> int:
        """Pause the unfinished broadcasts of a template; return how many."""
        ...

    async def expire_broadcast_leases(self, *, now: datetime) -> int:
        """Fail (``interrupted``) in-flight sends whose lease expired; return how many."""
        ...

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
        """Lease due recipients of a number with paced send slots shared by every instance."""
        ...

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
        """End a leased send (its payload is dropped); True if the lease was current."""
        ...

    async def retry_broadcast_send(
        self,
        *,
        broadcast_id: str,
        seq: int,
        lease_id: str,
        next_attempt_at: datetime,
        now: datetime,
    ) -> bool:
        """Queue a leased send again (the platform refused it); True if the lease was current."""
        ...

    async def delay_broadcast_pacing(self, *, phone_number_id: str, until: datetime) -> None:
        """No send slot of this number before ``until``."""
        ...


@runtime_checkable
class PersistenceStore(BroadcastStore, Protocol):
    """Webhook keys, idempotent sends, the message projection, the outbox, the inbox and
    broadcasts.

    Every method but ``backend`` is async and raises only ``PersistenceError``. The service
    calls every method and keyword declared here, and only those: a store passed to
    ``create_app`` must have them all.
    """

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgres"``."""
        ...

    async def migrate(self) -> int:
        """Apply pending forward-only migrations; return the schema version."""
        ...

    async def health(self) -> PersistenceHealth:
        """A redacted health snapshot; never raises for a backend fault."""
        ...

    async def record_webhook_event(
        self, *, event_key: str, event_hash: str, received_at: datetime
    ) -> WebhookEventResult:
        """Remember an event key; ``duplicate`` when it was seen before."""
        ...

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
        """Remember a delivery's event key, project its messages and statuses and merge its
        identity sightings (as ``record_user_identities``), atomically.

        The projection runs (idempotently) for a ``duplicate`` too; the result says
        whether the key was new. Everything commits together or not at all. ``rows``:
        the projection already checked (see ``record_webhook_updates``).
        """
        ...

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
        """``record_webhook_delivery`` and the delivery's update keys, in one atomic call.

        ``new``: the keys recorded for the first time; a key stored before is a duplicate.
        ``rows`` (instead of ``messages``, ``statuses`` and ``identities``) is the
        projection as ``CheckedRowsBuilder`` checked it. ``inbox``: the rows of the keys
        this call records new (``new``) are inserted in the same commit, in the given
        order; the others are ignored.
        """
        ...

    async def get_service_request(self, *, idempotency_key: str) -> ServiceRequestRecord | None:
        """The stored request for a key, if any."""
        ...

    async def record_service_request(
        self, *, idempotency_key: str, request_hash: str, response_json: str, created_at: datetime
    ) -> ServiceRequestRecord:
        """Store a completed request unless the key exists; return the stored record."""
        ...

    async def claim_service_request(
        self, *, idempotency_key: str, request_hash: str, created_at: datetime
    ) -> ClaimResult:
        """Atomically reserve a key before the upstream send."""
        ...

    async def complete_service_request(
        self,
        *,
        idempotency_key: str,
        request_hash: str,
        response_json: str,
        created_at: datetime,
        response_status: int | None = None,
    ) -> bool:
        """Store the response of a pending reservation with the same hash; True if stored.

        ``response_status`` marks a definitive refusal (its HTTP status), replayed as such.
        """
        ...

    async def release_service_request(self, *, idempotency_key: str, request_hash: str) -> bool:
        """Forget a pending reservation with the same hash (the send never started: a
        transient refusal), so the next claim of the key is ``Claimed``; True if one was.

        A completed key is never released, nor a pending one of another hash.
        """
        ...

    async def enqueue_outbox_item(
        self, *, id: str, payload_hash: str, created_at: datetime
    ) -> OutboxItem:
        """Add a pending item (a no-op for a known id); return the stored item."""
        ...

    async def claim_outbox_items(self, *, now: datetime, limit: int) -> list[OutboxItem]:
        """Lease up to ``limit`` due items (pending, or processing with a stale lease)."""
        ...

    async def mark_outbox_item_failed(
        self,
        *,
        id: str,
        lease_id: str,
        now: datetime,
        retry_delay_ms: int,
        error: str | None = None,
    ) -> bool:
        """Reschedule at ``now + retry_delay_ms`` if ``lease_id`` is current; True if so.

        ``error`` (a class name, at most 80 characters) is kept as ``last_error``.
        """
        ...

    async def mark_outbox_item_dead(
        self, *, id: str, lease_id: str, now: datetime, error: str | None = None
    ) -> bool:
        """Mark ``dead`` (never claimed again) if ``lease_id`` is current; True if so."""
        ...

    async def list_outbox_items(
        self, *, status: OutboxStatus | str | None = None, limit: int = 100
    ) -> list[OutboxItem]:
        """Up to ``limit`` items (of one ``status`` when given), most recently updated first."""
        ...

    async def retry_outbox_item(self, *, id: str, now: datetime) -> OutboxItem | None:
        """A ``dead`` item back to pending, due at ``now``, attempts reset; None if not dead."""
        ...

    async def count_outbox_items(self, *, status: OutboxStatus | str) -> int:
        """How many outbox items are in ``status``."""
        ...

    async def mark_outbox_item_succeeded(self, *, id: str, lease_id: str, now: datetime) -> bool:
        """Mark succeeded if ``lease_id`` is current; True if so."""
        ...

    async def record_message(self, record: MessageRecord) -> MessageRecord:
        """Insert a message row idempotently; return the stored (reconciled) row."""
        ...

    async def append_message_status(
        self, *, wa_message_id: str, status: str, timestamp: datetime
    ) -> bool:
        """Log a status event and advance matching rows; True if a row matched."""
        ...

    async def get_message(
        self, *, wa_message_id: str, direction: str | None = None
    ) -> MessageRecord | None:
        """The row for a platform message id (newest first when direction is omitted)."""
        ...

    async def list_messages(
        self,
        *,
        limit: int = 50,
        before_row_id: str | None = None,
        user: str | None = None,
        business_phone_number_id: str | None = None,
        include_unassigned: bool = False,
    ) -> MessagePage:
        """Rows by created_at then row id, both descending, after an optional cursor.

        ``user`` (a phone, a BSUID or a parent BSUID) keeps the rows of that user,
        resolved through the identity map to every identifier linked to it.
        ``business_phone_number_id`` keeps one business number's rows; with
        ``include_unassigned`` rows stored without a number count as its too.
        """
        ...

    async def get_latest_inbound_message_at(
        self,
        *,
        user: str | None = None,
        phone: str | None = None,
        business_phone_number_id: str | None = None,
        include_unassigned: bool = False,
    ) -> datetime | None:
        """created_at of the newest inbound row from ``user`` (``phone`` is an alias), or None.

        ``user`` is a phone, a BSUID or a parent BSUID, resolved through the
        identity map: the window of one user, whichever identifier names it.
        ``business_phone_number_id`` (and ``include_unassigned``) scope it to one
        business number, as in ``list_messages``.
        """
        ...

    async def record_user_identities(self, identities: Sequence[UserIdentityRecord]) -> None:
        """Merge user sightings into the identity map (by user_id, else by wa_id)."""
        ...

    async def record_identity_change(
        self,
        *,
        user: str,
        new_user_id: str | None = None,
        new_wa_id: str | None = None,
        at: datetime,
    ) -> UserIdentityRecord:
        """Move the identity ``user`` names to its new BSUID and/or wa_id; return it."""
        ...

    async def find_user_identity(self, *, user: str) -> UserIdentityRecord | None:
        """The known identity of a phone, BSUID or parent BSUID, or None."""
        ...

    async def prune(
        self,
        *,
        older_than: datetime,
        messages_older_than: datetime | None = None,
        batch_size: int = 500,
    ) -> PruneReport:
        """Delete dedupe keys, completed claims and succeeded outbox items before
        ``older_than``, and messages and status events before ``messages_older_than``
        when given, in small transactions; return the counts."""
        ...

    async def claim_inbox_items(
        self, *, now: datetime, limit: int, lease_ms: int
    ) -> list[InboxItem]:
        """Lease up to ``limit`` due heads of queues, in id order.

        A queue's head is its lowest id among the rows not dead (a later item never runs
        while an earlier one waits, runs or retries); it is due when pending and
        ``next_attempt_at <= now``, or running with a lease expired at ``now``. Each item
        claimed is running, with a fresh ``lease_id``, one more attempt and a lease until
        ``now + lease_ms``, and carries its queue's state unless expired at ``now``
        (``InboxItem.state``). PostgreSQL: heads another instance holds are skipped.
        """
        ...

    async def mark_inbox_item_succeeded(
        self,
        *,
        id: int,
        lease_id: str,
        consumed: Sequence[int] = (),
        state: UserStateWrite | None = None,
        now: datetime | None = None,
    ) -> bool:
        """Complete a run in one transaction if ``lease_id`` is current: delete the item and
        the later items of its queue it ``consumed``, and write (``sealed=None``: delete)
        its queue's ``state`` at ``now`` (required with a state). True if so; a stale lease
        changes nothing (False); a consumed id of another queue or not after the item is
        refused (``PersistenceValidationError``) and changes nothing."""
        ...

    async def extend_inbox_lease(self, *, id: int, lease_id: str, until: datetime) -> bool:
        """Move a running item's lease to end at ``until`` if ``lease_id`` is current."""
        ...

    async def list_inbox_queue(
        self, *, queue_key: str, after_id: int, limit: int = 100
    ) -> list[InboxItem]:
        """Up to ``limit`` items of one queue after ``after_id`` not dead, in id order."""
        ...

    async def get_user_state(self, *, queue_key: str, now: datetime) -> UserStateRecord | None:
        """A queue's stored state; None when there is none or it expired at ``now``."""
        ...

    async def delete_expired_user_states(self, *, now: datetime, batch_size: int = 500) -> int:
        """Delete the states expired at ``now``, in small transactions; how many."""
        ...

    async def mark_inbox_item_failed(
        self,
        *,
        id: int,
        lease_id: str,
        now: datetime,
        retry_delay_ms: int,
        error: str | None = None,
    ) -> bool:
        """Back to pending, due at ``now + retry_delay_ms``, if ``lease_id`` is current;
        ``error`` (at most 80 characters) is kept as ``last_error``. True if so."""
        ...

    async def mark_inbox_item_dead(
        self, *, id: int, lease_id: str, now: datetime, error: str | None = None
    ) -> bool:
        """Dead (kept, never claimed; its queue goes on) if ``lease_id`` is current."""
        ...

    async def list_inbox_items(
        self, *, status: InboxStatus | str | None = None, limit: int = 100
    ) -> list[InboxItem]:
        """Up to ``limit`` items (of one ``status`` when given), in id order."""
        ...

    async def retry_inbox_item(self, *, id: int, now: datetime) -> InboxItem | None:
        """A dead item back to pending, due at ``now``, attempts reset; None if not dead."""
        ...

    async def drop_inbox_item(self, *, id: int, now: datetime | None = None) -> bool:
        """Drop an item; True if it existed. Pending or dead: deleted at once. Running under
        a live lease at ``now``: marked ``dropping``; its run is stopped and every settlement
        of it refused, which deletes it."""
        ...

    async def mark_inbox_items_taken(
        self, *, id: int, lease_id: str, taken: Sequence[int]
    ) -> int:
        """Show the later items a running head's wait or burst took as ``consumed``."""
        ...

    async def watch_inbox(self, on_signal: Callable[[], None]) -> None:
        """Call ``on_signal`` whenever another process commits inbox rows, until cancelled
        (PostgreSQL: ``LISTEN``/``NOTIFY``; SQLite: never, it only waits)."""
        ...

    async def get_inbox_item(self, *, id: int) -> InboxItem | None:
        """One item by id, or None."""
        ...

    async def inbox_statistics(self) -> InboxStatistics:
        """Items per state and the oldest unfinished (pending or running) one's record time."""
        ...

    async def delete_dead_inbox_items(self, *, older_than: datetime, batch_size: int = 500) -> int:
        """Delete dead items last changed before ``older_than``, in small transactions."""
        ...

    async def count_outbox_pending(self) -> int:
        """How many outbox items are pending (not processing, not succeeded)."""
        ...

    async def close(self) -> None:
        """Release connections; later calls raise ``store_closed``. Idempotent."""
        ...
