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

    __slots__ = ()

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
        """Store a broadcast and its recipients atomically, idempotent on ``request_key``.

        A repeated recipient is stored ``skipped`` without its payload. A known key answers
        ``replay`` (same hash) or ``conflict`` with the stored id.
        """
        ...

    async def get_broadcast(self, *, id: str) -> BroadcastStatus | None:
        """A broadcast's state and counts, or None."""
        ...

    async def set_broadcast_paused(self, *, id: str, paused: bool, now: datetime) -> bool:
        """Pause (queued/running) or resume (paused) a broadcast; False when it is unknown."""
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
        """Lease due recipients of a number, each with a send slot ``1/rate`` after the last.

        The number's next free slot is shared by every instance on the database; slots are
        handed out only up to ``now + horizon_ms``.
        """
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
        """End a leased send as ``sent`` or ``failed``, dropping its payload; True if the lease was
        current.
        """
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
        """Queue a leased send again from ``next_attempt_at`` (the platform refused it, nothing
        was sent); True if the lease was current.
        """
        ...

    async def delay_broadcast_pacing(self, *, phone_number_id: str, until: datetime) -> None:
        """No send slot of this number before ``until`` (a rate-limit backoff on every instance)."""
        ...


@runtime_checkable
class PersistenceStore(BroadcastStore, Protocol):
    """Webhook keys, idempotent sends, the message projection, the outbox, the inbox and
    broadcasts.

    Every method but ``backend`` is async and raises only ``PersistenceError``. The service
    calls every method and keyword declared here, and only those: a store passed to
    ``create_app`` must have them all.
    """

    __slots__ = ()  # the adapters implement it with slots (``StoreBase``)

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgres"``."""
        ...

    async def migrate(self) -> int:
        """Apply pending forward-only migrations; return the schema version."""
        ...

    async def health(self) -> PersistenceHealth:
        """A redacted health snapshot (``ok`` with the schema version).

        Never raises for a backend fault.
        """
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

        One group-commit job: the event row, the projection and the identity-map merge
        commit together or not at all. The projection (as ``record_message`` and
        ``append_message_status``, idempotent) runs for a ``duplicate`` too, so a repeated
        delivery retries it; the result says whether the key was new. ``rows``: the
        projection already checked (see ``record_webhook_updates``).
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

        ``new`` names the keys recorded for the first time (first occurrence order); a key
        stored before, by this delivery or another, is a duplicate, in whatever delivery it
        comes. ``rows`` (instead of ``messages``, ``statuses`` and ``identities``) is the
        projection as ``CheckedRowsBuilder`` checked it while building it: taken as is.
        ``inbox`` holds the updates a handler runs: the rows whose ``update_key`` this call
        records new (``new``) go in the inbox in the same commit, in the given order, pending
        and due at ``received_at``; the others are left out (a redelivery adds none).
        """
        ...

    async def get_service_request(self, *, idempotency_key: str) -> ServiceRequestRecord | None:
        """The stored request for a key, if any."""
        ...

    async def record_service_request(
        self, *, idempotency_key: str, request_hash: str, response_json: str, created_at: datetime
    ) -> ServiceRequestRecord:
        """Store a completed request unless the key exists (never overwrites).

        Returns the stored record.
        """
        ...

    async def claim_service_request(
        self, *, idempotency_key: str, request_hash: str, created_at: datetime
    ) -> ClaimResult:
        """Atomically reserve a key before the upstream send: Claimed, Pending, Conflict, Replay."""
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

        ``response_status`` is the HTTP status of a definitive refusal (a claim completed
        with the error answer, replayed as such); None for a successful send.
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
        """Add a pending item due at ``created_at``; return the stored item.

        A known id is a no-op.
        """
        ...

    async def claim_outbox_items(self, *, now: datetime, limit: int) -> list[OutboxItem]:
        """Lease up to ``limit`` due items for five minutes.

        Due: pending, or processing with a stale lease.
        """
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
        """Insert a message row idempotently on row id and (direction, wa_message_id); return the
        stored (reconciled) row.
        """
        ...

    async def append_message_status(
        self, *, wa_message_id: str, status: str, timestamp: datetime
    ) -> bool:
        """Log a status event and advance matching rows by rank; True if a row matched."""
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
        """Rows newest first (created_at, then row id, both descending), after an optional cursor;
        an unknown cursor gives an empty page.

        ``user`` (a phone, a BSUID or a parent BSUID) keeps the rows of that user: rows
        naming it or any identifier the identity map links to it.
        ``business_phone_number_id`` keeps one business number's rows (with
        ``include_unassigned``, also rows stored without a number).
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

        ``user`` is a phone (wa_id), a BSUID or a parent BSUID; rows of every identifier the
        identity map links to it count: the window of one user, whichever identifier names
        it. ``business_phone_number_id`` keeps one business number's rows (the window is per
        number; with ``include_unassigned``, rows stored without a number count too).
        """
        ...

    async def record_user_identities(self, identities: Sequence[UserIdentityRecord]) -> None:
        """Merge user sightings into the identity map, in order, in one transaction.

        A sighting merges by ``user_id`` when it has one, else by ``wa_id``; a newer
        sighting updates the values it knows, None never erases a value, and
        ``last_seen_at`` only moves forward.
        """
        ...

    async def record_identity_change(
        self,
        *,
        user: str,
        new_user_id: str | None = None,
        new_wa_id: str | None = None,
        at: datetime,
    ) -> UserIdentityRecord:
        """Apply "user changed number" (new wa_id and BSUID) or "user changed user id".

        The identity ``user`` names (a BSUID or a wa_id) moves to the new identifiers; the
        old ones stop resolving, the username and parent BSUID carry over. Returns the
        identity as stored after the change.
        """
        ...

    async def find_user_identity(self, *, user: str) -> UserIdentityRecord | None:
        """The known identity of ``user`` (a phone, a BSUID or a parent BSUID), or None.

        Answers which identifiers the service can reply to: a BSUID match wins over a
        parent-BSUID match over a phone match, then the most recently seen.
        """
        ...

    async def prune(
        self,
        *,
        older_than: datetime,
        messages_older_than: datetime | None = None,
        batch_size: int = 500,
    ) -> PruneReport:
        """Delete records older than the cutoffs, ``batch_size`` rows per transaction; the counts.

        Before ``older_than``: webhook event and update keys, completed claims (sends and
        definitive refusals), succeeded outbox items. Before ``messages_older_than`` (only
        when given): projected messages and status events. Pending claims and pending or
        dead outbox items are kept.
        """
        ...

    async def claim_inbox_items(
        self, *, now: datetime, limit: int, lease_ms: int
    ) -> list[InboxItem]:
        """Lease up to ``limit`` due heads of queues, in turn (the order they became due).

        A queue's head is its lowest id among the rows not dead (a later item never runs
        while an earlier one waits, runs or retries); it is due when pending and
        ``next_attempt_at <= now``, or running with a lease expired at ``now`` (its run
        crashed). Each item
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
        its queue's ``state`` at ``now`` (required with a state); with ``now`` the queue's next
        item is due from then, behind the queues already due. True if so; a stale lease
        changes nothing (False); a consumed id of another queue or not after the item is
        refused (``PersistenceValidationError``) and changes nothing."""
        ...

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
        """``mark_inbox_item_succeeded`` and, in the same transaction, the claim of the item's
        queue's next head if due at ``now``, as a claim would (running, one more attempt, a
        lease until ``now + lease_ms``; its queue's state as this completion left it); with
        ``others_first``, another queue's first due head in turn when there is one (the
        completed queue then takes its turn at ``now``), else its own. Whether the completion
        applied, and the item leased (None: none due; never after a stale lease): one round
        trip where a completion and a claim take two."""
        ...

    async def extend_inbox_lease(self, *, id: int, lease_id: str, until: datetime) -> bool:
        """Move a running item's lease to end at ``until`` if ``lease_id`` is current (a run
        waiting for its user keeps its item); True if so."""
        ...

    async def list_inbox_queue(
        self, *, queue_key: str, after_id: int, limit: int = 100
    ) -> list[InboxItem]:
        """Up to ``limit`` items of one queue after ``after_id`` not dead, in id order: the
        updates waiting behind a running item."""
        ...

    async def get_user_state(self, *, queue_key: str, now: datetime) -> UserStateRecord | None:
        """A queue's stored state; None when there is none or it expired at ``now``."""
        ...

    async def delete_expired_user_states(self, *, now: datetime, batch_size: int = 500) -> int:
        """Delete the states expired at ``now``, ``batch_size`` per transaction; how many."""
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
        """Dead (kept, never claimed; its queue's later items go on) if ``lease_id`` is
        current; ``error`` is kept as ``last_error``. True if so."""
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
        """Drop an item (an operator's call); True if it existed. Pending or dead: deleted at
        once. Running under a live lease at ``now``: marked ``dropping``; its run is stopped at
        its next lease renewal and every settlement of it refused, which deletes it."""
        ...

    async def mark_inbox_items_taken(
        self, *, id: int, lease_id: str, taken: Sequence[int]
    ) -> int:
        """Show the later items of its queue a running head's wait or burst took as
        ``consumed`` while ``lease_id`` is current (deleted with its success, pending again if
        it ends otherwise); how many."""
        ...

    async def watch_inbox(self, on_signal: Callable[[], None]) -> None:
        """Call ``on_signal`` whenever another process commits inbox rows, until cancelled
        (PostgreSQL: ``LISTEN``/``NOTIFY``; a SQLite file: a datagram to a socket beside it;
        ``:memory:``: never, it only waits)."""
        ...

    async def get_inbox_item(self, *, id: int) -> InboxItem | None:
        """One item by id, or None."""
        ...

    async def inbox_statistics(self) -> InboxStatistics:
        """Items per state and the oldest unfinished (pending or running) one's record time."""
        ...

    async def delete_dead_inbox_items(self, *, older_than: datetime, batch_size: int = 500) -> int:
        """Delete dead items last changed before ``older_than``, ``batch_size`` per
        transaction; how many."""
        ...

    async def count_outbox_pending(self) -> int:
        """How many outbox items are pending (not processing, not succeeded)."""
        ...

    async def close(self) -> None:
        """Release the connections; later calls raise ``store_closed``. Idempotent."""
        ...
