"""Frozen value objects the store takes and returns.

The store keeps keys, hashes and metadata in the clear: no message text, raw webhook
bodies, request bodies or contacts. The stored payloads are a completed service
request's ``response_json`` (the upstream send answer, replayed byte-for-byte) and
an inbox item's ``sealed`` update (encrypted by the caller before it reaches the store).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Literal

__all__ = [
    "OUTBOX_LEASE_MS",
    "ClaimResult",
    "Claimed",
    "Conflict",
    "InboxItem",
    "InboxRow",
    "InboxStatistics",
    "InboxStatus",
    "MessageDirection",
    "MessagePage",
    "MessageRecord",
    "OutboxItem",
    "OutboxStatus",
    "Pending",
    "PersistenceHealth",
    "PruneReport",
    "Replay",
    "ServiceRequestRecord",
    "ServiceRequestState",
    "StatusEvent",
    "UpdatesRecorded",
    "UserIdentityRecord",
    "UserStateRecord",
    "UserStateWrite",
    "WebhookEventResult",
]

OUTBOX_LEASE_MS: Final = 5 * 60 * 1000
"""How long a claimed outbox item stays leased before another worker may reclaim it."""

MessageDirection = Literal["inbound", "outbound"]


class WebhookEventResult(enum.StrEnum):
    """Outcome of ``record_webhook_event``."""

    RECORDED = "recorded"
    DUPLICATE = "duplicate"


class OutboxStatus(enum.StrEnum):
    """An outbox item's state: pending -> processing -> succeeded (or back to pending).

    After its last allowed attempt an item is ``dead``: never claimed again
    until an operator retries it (``retry_outbox_item``).
    """

    PENDING = "pending"
    PROCESSING = "processing"
    SUCCEEDED = "succeeded"
    DEAD = "dead"


class InboxStatus(enum.StrEnum):
    """An inbox item's state: pending -> running -> (deleted on success, or back to pending).

    After its last allowed attempt, or a ``DeadLetter``, an item is ``dead``: kept (never
    claimed) until an operator retries or drops it, or the dead-letter horizon deletes it.
    """

    PENDING = "pending"
    RUNNING = "running"
    DEAD = "dead"
    CONSUMED = "consumed"
    """A running run's wait or burst took it: deleted with that run's success, pending again
    if the run ends otherwise."""
    DROPPING = "dropping"
    """An operator dropped it while it ran: its run is being stopped, then it is deleted."""


class ServiceRequestState(enum.StrEnum):
    """A service request is reserved (``pending``) before the send, ``completed`` after."""

    PENDING = "pending"
    COMPLETED = "completed"


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageRecord:
    """One row of the message projection (metadata only, never the text).

    ``from_phone``/``to_phone`` are the user's wa_id (phone) and ``user_id`` /
    ``parent_user_id`` their business-scoped user ids (BSUIDs): an inbound row
    names its sender by at least one of from_phone, user_id, parent_user_id, an
    outbound row its recipient by at least one of to_phone, user_id, parent_user_id.
    ``business_phone_number_id`` is the business number the row belongs to (None on
    rows stored before a service could serve several: read as its default number).
    """

    row_id: str
    wa_message_id: str
    direction: MessageDirection
    type: str
    status: str
    created_at: datetime
    updated_at: datetime
    from_phone: str | None = None
    to_phone: str | None = None
    graph_message_id: str | None = None
    user_id: str | None = None
    parent_user_id: str | None = None
    business_phone_number_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UserIdentityRecord:
    """One WhatsApp user's known identifiers, as last seen (metadata, never content).

    ``user_id`` is the business-scoped user id (BSUID), ``parent_user_id`` the
    portfolio-wide parent BSUID, ``wa_id`` the phone number (absent for a user
    who shares only a username). A record names at least ``user_id`` or ``wa_id``.
    """

    user_id: str | None = None
    parent_user_id: str | None = None
    wa_id: str | None = None
    username: str | None = None
    last_seen_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusEvent:
    """A status update of a webhook delivery, as ``append_message_status`` takes it.

    ``pricing_category`` is the category the platform prices the message in
    (``marketing``, ``utility``, ``service``, ``marketing_lite``, ...), when the
    status says: billing metadata, kept with the event in a delivery's projection.
    """

    wa_message_id: str
    status: str
    timestamp: datetime
    pricing_category: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagePage:
    """A page of ``list_messages``; ``next_cursor`` is the last row id when more rows exist.

    ``cursor_found`` is False when the cursor given names no stored row (the
    page is then empty): callers can tell a mistyped cursor from the end.
    """

    items: tuple[MessageRecord, ...]
    next_cursor: str | None
    cursor_found: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class OutboxItem:
    """An outbox item; ``lease_id`` fences completion to the current claim."""

    id: str
    payload_hash: str
    status: OutboxStatus
    attempts: int
    lease_id: str | None
    lease_expires_at: datetime | None
    next_attempt_at: datetime
    created_at: datetime
    updated_at: datetime
    last_error: str | None = None
    """The class name of the last handler failure (``"timeout"`` for a timeout), never a message."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InboxRow:
    """An update to run, as ``record_webhook_updates(inbox=...)`` takes it.

    ``update_key`` is the update's key (one of the delivery's ``update_keys``),
    ``queue_key`` the hashed key of its own queue (never a raw phone or user id), ``kind``
    the update's kind (a label) and ``sealed`` the update encrypted by the caller: the
    store never sees it in the clear.

    For an update that waits in its user's queue, ``user_id`` and ``wa_id`` are the user's
    BSUID and phone (as its identity sighting names them) and ``aliases`` the hashed keys
    the user's queue had on its own; the store resolves the row into its person's queue
    (``svc.store._person``) and stores neither identifier in the inbox. Left None (a group's
    or a number's update, or a user the identity map does not know), the row keeps
    ``queue_key``.
    """

    update_key: str
    queue_key: str
    phone_number_id: str | None
    kind: str
    sealed: bytes = field(repr=False)
    user_id: str | None = field(default=None, repr=False)
    wa_id: str | None = field(default=None, repr=False)
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class InboxItem:
    """A stored inbox item; ``lease_id`` fences its completion to the current claim.

    ``last_error`` is a class name, ``"timeout"`` or a dead letter's reason: never a
    message. ``sealed`` is left out of the repr (it is ciphertext, and large). ``state``
    is its queue's unexpired state as a claim read it (None when there is none, and on
    items that were not claimed): a run reads it with no store call of its own.
    """

    id: int
    update_key: str
    queue_key: str
    phone_number_id: str | None
    kind: str
    sealed: bytes = field(repr=False)
    status: InboxStatus
    attempts: int
    next_attempt_at: datetime
    lease_id: str | None
    lease_expires_at: datetime | None
    last_error: str | None
    created_at: datetime
    updated_at: datetime
    state: UserStateRecord | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class InboxStatistics:
    """How many inbox items are in each state, and when the oldest unfinished one (pending
    or running) was recorded (None: none is)."""

    pending: int
    running: int
    dead: int
    oldest_pending_at: datetime | None


@dataclass(frozen=True, slots=True, kw_only=True)
class UserStateRecord:
    """A user's stored state: the queue key it was sealed under (its queue's, or the one a
    fold of two queues of one person moved it from), the state sealed by the caller (never
    in the clear here, left out of the repr), when it expires and when it was last written."""

    queue_key: str
    sealed: bytes = field(repr=False)
    expires_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class UserStateWrite:
    """A state write a run's completion commits (``mark_inbox_item_succeeded(state=)``):
    ``sealed`` (the state encrypted by the caller) until ``expires_at``, or ``sealed=None``
    to delete the state (``expires_at`` then unused)."""

    sealed: bytes | None = field(repr=False)
    expires_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceRequestRecord:
    """An idempotent send: the key, the request hash and (once completed) the response."""

    idempotency_key: str
    request_hash: str
    state: ServiceRequestState
    response_json: str | None
    created_at: datetime
    completed_at: datetime | None
    response_status: int | None = None
    """The HTTP status of a stored refusal (None: the send succeeded, replayed as 200)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Claimed:
    """A new reservation was made; the caller owns the upstream send."""

    kind: Literal["claimed"] = "claimed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Pending:
    """The key is reserved by an earlier call that has not completed."""

    kind: Literal["pending"] = "pending"


@dataclass(frozen=True, slots=True, kw_only=True)
class Conflict:
    """The key is known with a different request hash."""

    kind: Literal["conflict"] = "conflict"


@dataclass(frozen=True, slots=True, kw_only=True)
class Replay:
    """The key and hash completed before; ``response_json`` is the stored answer.

    ``status`` is 200 for a completed send, or the status of the stored
    definitive refusal, replayed as it was first answered.
    """

    response_json: str
    status: int = 200
    kind: Literal["replay"] = "replay"


ClaimResult = Claimed | Pending | Conflict | Replay


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdatesRecorded:
    """What ``record_webhook_updates`` did: the delivery key's outcome and the new updates.

    ``new`` holds the given update keys (first occurrence order) this call recorded for
    the first time; the others were recorded before (duplicates).
    """

    event: WebhookEventResult
    new: tuple[str, ...] = ()

    def __reduce__(self) -> tuple[object, ...]:
        # The writer process's answer per delivery: pickled as its two values (a frozen
        # dataclass's own pickling runs its fields' Python code on each side).
        return (_updates_recorded, (self.event, self.new))


def _updates_recorded(event: WebhookEventResult, new: tuple[str, ...]) -> UpdatesRecorded:
    return UpdatesRecorded(event=event, new=new)


@dataclass(frozen=True, slots=True, kw_only=True)
class PruneReport:
    """Rows ``prune`` deleted, per kind of record."""

    webhook_events: int = 0
    webhook_updates: int = 0
    service_requests: int = 0
    outbox_items: int = 0
    messages: int = 0
    status_events: int = 0

    @property
    def total(self) -> int:
        """Every row deleted."""
        return (
            self.webhook_events
            + self.webhook_updates
            + self.service_requests
            + self.outbox_items
            + self.messages
            + self.status_events
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class PersistenceHealth:
    """A health snapshot; ``redacted_location`` never names the path or DSN."""

    ok: bool
    backend: str
    current_version: int | None
    redacted_location: str
