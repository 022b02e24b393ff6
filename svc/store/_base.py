"""The method layer both adapters share: validation, time conversion, error codes.

An adapter supplies ``_call`` (run a sync operation in one transaction in a worker thread,
mapping driver errors to ``PersistenceError``) and ``_writers`` (``_child.Writers``: the
group commits its hot writes run through); ``_write`` hands each hot write of one
``_kinds.Kind`` to the group commit that runs it. Everything else here is backend-neutral.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, ClassVar, TypeVar, TypeVarTuple

from . import _ops
from . import _validate as check
from ._broadcast_methods import BroadcastMethods
from ._checked import CheckedRows, MessageArgs, StatusArgs
from ._child import Writers
from ._commit import Job
from ._contract import PersistenceStore
from ._errors import FaultCode, PersistenceError, PersistenceValidationError
from ._inbox_methods import InboxMethods
from ._kinds import DeliveryWrite, InboxArgs, Kind
from ._leases import MAX_ERROR_LEN, MAX_RETRY_DELAY_MS
from ._migrations import current_version
from ._records import (
    ClaimResult,
    InboxRow,
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
    WebhookEventResult,
)
from ._session import Session
from ._time import from_ms, to_ms

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

MAX_CLAIM_LIMIT = 1000
PRUNE_BATCH = 500


def _inbox_row(row: object) -> InboxArgs:
    """An ``InboxRow`` checked field by field (the sealed update must be non-empty bytes)."""
    if type(row) is not InboxRow:
        raise PersistenceValidationError("invalid_record", "inbox must hold InboxRow records.")
    if type(row.sealed) is not bytes or not row.sealed:
        raise PersistenceValidationError("invalid_record", "sealed must be non-empty bytes.")
    return (
        check.text(row.update_key, "update_key"),
        check.text(row.queue_key, "queue_key"),
        check.optional_text(row.phone_number_id, "phone_number_id", max_len=check.PHONE_MAX),
        check.text(row.kind, "kind", max_len=64),
        row.sealed,
        # An identifier the identity map cannot hold resolves no person: left out.
        check.fit(row.user_id, check.USER_ID_MAX),
        check.fit(row.wa_id, check.PHONE_MAX),
        check.texts(row.aliases, "aliases"),
    )


def _checked_rows(
    rows: object, messages: object, statuses: object, identities: object
) -> tuple[tuple[MessageArgs, ...], tuple[StatusArgs, ...], tuple[check.IdentityArgs, ...]]:
    """The column tuples of a sealed ``CheckedRows``; records alongside it are refused."""
    if type(rows) is not CheckedRows:
        raise PersistenceValidationError("invalid_record", "rows must be CheckedRows.")
    if messages or statuses or identities:
        raise PersistenceValidationError(
            "invalid_record", "Pass rows or messages, statuses and identities, not both."
        )
    return rows.messages, rows.statuses, rows.identities


def delivery_write(
    *,
    event_key: object,
    event_hash: object,
    received_at: datetime,
    update_keys: Sequence[str],
    messages: Sequence[MessageRecord],
    statuses: Sequence[StatusEvent],
    identities: Sequence[UserIdentityRecord],
    rows: CheckedRows | None,
    inbox: Sequence[InboxRow] = (),
) -> DeliveryWrite:
    """``record_webhook_updates``'s arguments checked, as the record the group commit runs.

    Records are checked field by field; ``rows`` (a sealed ``CheckedRows``) are taken as
    they are, their column tuples handed on unchanged (checked once, while they were built).
    """
    key = check.text(event_key, "event_key")
    digest = check.text(event_hash, "event_hash")
    at = to_ms(received_at, field="received_at")
    keys = check.texts(update_keys, "update_keys")
    if rows is None:
        values = tuple(check.message(r) for r in check.records(messages, "messages"))
        events = tuple(check.status_event(e) for e in check.records(statuses, "statuses"))
        users = tuple(check.identity(i) for i in check.records(identities, "identities"))
    else:
        values, events, users = _checked_rows(rows, messages, statuses, identities)
    return DeliveryWrite(
        event_key=key,
        event_hash=digest,
        received_at=at,
        messages=values,
        statuses=events,
        identities=users,
        update_keys=keys,
        inbox=tuple(_inbox_row(row) for row in check.records(inbox, "inbox")),
    )


class StoreBase(BroadcastMethods, InboxMethods, PersistenceStore, abc.ABC):
    """Implements the :class:`PersistenceStore` methods over ``_call`` and ``_write``.

    Each method is documented once, at its declaration in ``PersistenceStore``.
    """

    __slots__ = ()

    _backend: ClassVar[str]
    """What ``backend`` answers: ``"sqlite"`` or ``"postgres"``."""
    _redacted_location: ClassVar[str]
    """What health and diagnostics show instead of the path or DSN."""
    _closed: bool
    _writers: Writers
    """The group commits of the hot writes (the thread's, and the writer process's)."""

    @property
    def backend(self) -> str:
        return self._backend

    @abc.abstractmethod
    async def _call(
        self, code: FaultCode, fn: Callable[[Session, *Ts], T], *args: *Ts, write: bool
    ) -> T:
        """Run ``fn(session, *args)`` in one transaction in a worker thread."""

    async def _write(
        self, kind: Kind, args: Any, *, code: FaultCode, key: str = "", write: bool = True
    ) -> Any:
        """Run a hot write of ``kind`` (checked ``args``) through the group commit that runs
        it (``Writers.commit_for``), with the concurrent ones; ``key`` is the row it contends
        for (a batch's phase sorts by it)."""
        await self._writable(code)
        job: Job[Any] = Job(kind, args, code=code, key=key, write=write)
        try:
            return await self._writers.commit_for(kind).run(job)
        finally:
            self._written(job)

    async def _writable(self, code: FaultCode) -> None:
        """Refuse a write the store cannot take now: it is closed."""
        if self._closed:
            raise PersistenceError("store_closed", "The store is closed.")

    def _written(self, job: Job[Any]) -> None:
        """After a write's batch (PostgreSQL notes a server found out of reach)."""

    @abc.abstractmethod
    async def migrate(self, *, target_version: int | None = None) -> int:
        """Apply pending migrations (up to ``target_version``); return the version."""

    async def health(self) -> PersistenceHealth:
        version: int | None = None
        if not self._closed:
            try:
                version = await self._call("query_failed", current_version, write=False)
            except PersistenceError:
                version = None
        return PersistenceHealth(
            ok=version is not None,
            backend=self.backend,
            current_version=version,
            redacted_location=self._redacted_location,
        )

    @abc.abstractmethod
    async def close(self) -> None:
        ...

    async def record_webhook_event(
        self, *, event_key: str, event_hash: str, received_at: datetime
    ) -> WebhookEventResult:
        key = check.text(event_key, "event_key")
        digest = check.text(event_hash, "event_hash")
        at = to_ms(received_at, field="received_at")
        return await self._call(
            "query_failed", _ops.record_webhook_event, key, digest, at, write=True
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
        recorded = await self.record_webhook_updates(
            event_key=event_key,
            event_hash=event_hash,
            received_at=received_at,
            messages=messages,
            statuses=statuses,
            identities=identities,
            rows=rows,
        )
        return recorded.event

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
        delivery = delivery_write(
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
        recorded: UpdatesRecorded = await self._write(
            Kind.DELIVERY, delivery, code="outbox_failed", key=delivery.event_key
        )
        return recorded

    async def get_service_request(self, *, idempotency_key: str) -> ServiceRequestRecord | None:
        key = check.text(idempotency_key, "idempotency_key")
        return await self._call(
            "query_failed", _ops.get_service_request, key, write=False
        )

    async def record_service_request(
        self, *, idempotency_key: str, request_hash: str, response_json: str, created_at: datetime
    ) -> ServiceRequestRecord:
        key = check.text(idempotency_key, "idempotency_key")
        digest = check.text(request_hash, "request_hash")
        response = check.response_json(response_json)
        at = to_ms(created_at, field="created_at")
        return await self._call(
            "claim_failed",
            _ops.record_service_request, key, digest, response, at,
            write=True,
        )

    async def claim_service_request(
        self, *, idempotency_key: str, request_hash: str, created_at: datetime
    ) -> ClaimResult:
        key = check.text(idempotency_key, "idempotency_key")
        digest = check.text(request_hash, "request_hash")
        at = to_ms(created_at, field="created_at")
        claim: ClaimResult = await self._write(
            Kind.CLAIM, (key, digest, at), code="claim_failed", key=key
        )
        return claim

    async def complete_service_request(
        self,
        *,
        idempotency_key: str,
        request_hash: str,
        response_json: str,
        created_at: datetime,
        response_status: int | None = None,
    ) -> bool:
        key = check.text(idempotency_key, "idempotency_key")
        digest = check.text(request_hash, "request_hash")
        response = check.response_json(response_json)
        at = to_ms(created_at, field="created_at")
        status = (
            None
            if response_status is None
            else check.integer(response_status, "response_status", low=100, high=599)
        )
        stored: bool = await self._write(
            Kind.COMPLETE, (key, digest, response, at, status), code="completion_failed", key=key
        )
        return stored

    async def release_service_request(self, *, idempotency_key: str, request_hash: str) -> bool:
        key = check.text(idempotency_key, "idempotency_key")
        digest = check.text(request_hash, "request_hash")
        return await self._call(
            "completion_failed",
            _ops.release_service_request, key, digest,
            write=True,
        )

    async def enqueue_outbox_item(
        self, *, id: str, payload_hash: str, created_at: datetime
    ) -> OutboxItem:
        item_id = check.text(id, "id")
        digest = check.text(payload_hash, "payload_hash")
        at = to_ms(created_at, field="created_at")
        return await self._call(
            "outbox_failed", _ops.enqueue_outbox_item, item_id, digest, at, write=True
        )

    async def claim_outbox_items(self, *, now: datetime, limit: int) -> list[OutboxItem]:
        at = to_ms(now, field="now")
        count = check.integer(limit, "limit", low=1, high=MAX_CLAIM_LIMIT)
        return await self._call(
            "outbox_failed", _ops.claim_outbox_items, at, count, write=True
        )

    async def mark_outbox_item_failed(
        self,
        *,
        id: str,
        lease_id: str,
        now: datetime,
        retry_delay_ms: int,
        error: str | None = None,
    ) -> bool:
        item_id = check.text(id, "id")
        lease = check.text(lease_id, "lease_id")
        at = to_ms(now, field="now")
        delay = check.integer(retry_delay_ms, "retry_delay_ms", low=0, high=MAX_RETRY_DELAY_MS)
        reason = check.optional_text(error, "error", max_len=MAX_ERROR_LEN)
        return await self._call(
            "outbox_failed",
            _ops.mark_outbox_item_failed, item_id, lease, at, delay, reason,
            write=True,
        )

    async def mark_outbox_item_dead(
        self, *, id: str, lease_id: str, now: datetime, error: str | None = None
    ) -> bool:
        item_id = check.text(id, "id")
        lease = check.text(lease_id, "lease_id")
        at = to_ms(now, field="now")
        reason = check.optional_text(error, "error", max_len=MAX_ERROR_LEN)
        return await self._call(
            "outbox_failed",
            _ops.mark_outbox_item_dead, item_id, lease, at, reason,
            write=True,
        )

    async def list_outbox_items(
        self, *, status: OutboxStatus | str | None = None, limit: int = 100
    ) -> list[OutboxItem]:
        state = None if status is None else check.status(status, OutboxStatus, "outbox")
        count = check.integer(limit, "limit", low=1, high=MAX_CLAIM_LIMIT)
        return await self._call(
            "query_failed", _ops.list_outbox_items, state, count, write=False
        )

    async def retry_outbox_item(self, *, id: str, now: datetime) -> OutboxItem | None:
        item_id = check.text(id, "id")
        at = to_ms(now, field="now")
        return await self._call(
            "outbox_failed", _ops.retry_outbox_item, item_id, at, write=True
        )

    async def count_outbox_items(self, *, status: OutboxStatus | str) -> int:
        state = check.status(status, OutboxStatus, "outbox")
        return await self._call(
            "query_failed", _ops.count_outbox_items, state, write=False
        )

    async def mark_outbox_item_succeeded(self, *, id: str, lease_id: str, now: datetime) -> bool:
        item_id = check.text(id, "id")
        lease = check.text(lease_id, "lease_id")
        at = to_ms(now, field="now")
        return await self._call(
            "outbox_failed",
            _ops.mark_outbox_item_succeeded, item_id, lease, at,
            write=True,
        )

    async def record_message(self, record: MessageRecord) -> MessageRecord:
        values = check.message(record)
        stored: MessageRecord = await self._write(
            Kind.MESSAGE, values, code="outbox_failed", key=str(values[1])
        )
        return stored

    async def append_message_status(
        self, *, wa_message_id: str, status: str, timestamp: datetime
    ) -> bool:
        message_id = check.text(wa_message_id, "wa_message_id")
        value = check.text(status, "status", max_len=64)
        at = to_ms(timestamp, field="timestamp")
        matched: bool = await self._write(
            Kind.STATUS, (message_id, value, at, None), code="outbox_failed", key=message_id
        )
        return matched

    async def get_message(
        self, *, wa_message_id: str, direction: str | None = None
    ) -> MessageRecord | None:
        message_id = check.text(wa_message_id, "wa_message_id")
        if direction not in (None, "inbound", "outbound"):
            raise PersistenceValidationError(
                "invalid_options", "direction must be 'inbound', 'outbound' or None."
            )
        return await self._call(
            "query_failed", _ops.get_message, message_id, direction, write=False
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
        count = check.integer(limit, "limit", low=1, high=100)
        if before_row_id is not None and not isinstance(before_row_id, str):
            raise PersistenceValidationError("invalid_options", "before_row_id must be a string.")
        cursor = before_row_id
        if cursor is not None and check.fit(cursor) is None:
            cursor = ""  # no row id can be it (NUL, a lone surrogate, too long): unknown, as ""
        who = None if user is None else check.user(user)
        number = check.number_scope(business_phone_number_id, include_unassigned)
        return await self._call(
            "query_failed",
            _ops.list_messages, count, cursor, who, number,
            write=False,
        )

    async def get_latest_inbound_message_at(
        self,
        *,
        user: str | None = None,
        phone: str | None = None,
        business_phone_number_id: str | None = None,
        include_unassigned: bool = False,
    ) -> datetime | None:
        if (user is None) == (phone is None):
            raise PersistenceValidationError(
                "invalid_options", "Pass exactly one of user and phone."
            )
        value = check.user(user if user is not None else phone)
        number = check.number_scope(business_phone_number_id, include_unassigned)
        ms = await self._call(
            "query_failed",
            _ops.get_latest_inbound_message_at, value, number,
            write=False,
        )
        return None if ms is None else from_ms(ms)

    async def record_user_identities(self, identities: Sequence[UserIdentityRecord]) -> None:
        users = tuple(check.identity(i) for i in check.records(identities, "identities"))
        if users:
            await self._call(
                "outbox_failed", _ops.record_user_identities, users, write=True
            )

    async def record_identity_change(
        self,
        *,
        user: str,
        new_user_id: str | None = None,
        new_wa_id: str | None = None,
        at: datetime,
    ) -> UserIdentityRecord:
        old = check.user(user)
        new_id = check.optional_text(new_user_id, "new_user_id", max_len=check.USER_ID_MAX)
        new_wa = check.optional_text(new_wa_id, "new_wa_id", max_len=check.PHONE_MAX)
        if new_id is None and new_wa is None:
            raise PersistenceValidationError(
                "invalid_record", "An identity change needs new_user_id or new_wa_id."
            )
        moment = to_ms(at, field="at")
        return await self._call(
            "outbox_failed",
            _ops.record_identity_change, old, new_id, new_wa, moment,
            write=True,
        )

    async def find_user_identity(self, *, user: str) -> UserIdentityRecord | None:
        value = check.user(user)
        return await self._call(
            "query_failed", _ops.find_user_identity, value, write=False
        )

    async def prune(
        self,
        *,
        older_than: datetime,
        messages_older_than: datetime | None = None,
        batch_size: int = PRUNE_BATCH,
    ) -> PruneReport:
        cutoff = to_ms(older_than, field="older_than")
        messages_cutoff = (
            None
            if messages_older_than is None
            else to_ms(messages_older_than, field="messages_older_than")
        )
        size = check.batch_size(batch_size)
        counts: dict[str, int] = {}
        for target in _ops.PRUNE_TARGETS:
            at = cutoff if target not in ("messages", "status_events") else messages_cutoff
            if at is None:
                continue
            counts[target] = await self._delete_in_batches(size, _ops.prune_batch, target, at, size)
        return PruneReport(**counts)

    async def count_outbox_pending(self) -> int:
        return await self._call("query_failed", _ops.count_outbox_pending, write=False)
