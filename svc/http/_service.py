"""The service's request logic, independent of Quart: webhook ingest, sends, reads, groups.

Each method takes parsed inputs and returns a ``Reply`` or raises ``HttpError``;
the Quart routes and the lean webhook path in front of Quart only move bytes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, TypeVar

import anyio

from svc import crypto
from svc._text import has_control, is_printable_ascii
from svc.graph import (
    GraphApiError,
    GraphClient,
    GraphError,
    GraphRateLimitError,
    GraphRequestValidationError,
    PhoneNumberClient,
    PhoneOnlyRecipientError,
)
from svc.store import (
    Claimed,
    Conflict,
    MessageRecord,
    Pending,
    PersistenceError,
    PersistenceStore,
    PersistenceValidationError,
    Replay,
    StatusEvent,
    UserIdentityRecord,
    WebhookEventResult,
    conversation_window,
    format_timestamp,
)
from svc.webhook import (
    Delivery,
    Update,
    WebhookError,
    WebhookFacade,
    WebhookMetrics,
    canonical_json,
    dispatch_delivery,
    receive_delivery,
)

from ._errors import (
    HttpError,
    conversation_window_unavailable,
    graph_request_failed,
    idempotency_conflict,
    idempotency_pending,
    invalid_idempotency_key,
    malformed_body,
    not_found,
    persistence_not_atomic,
    persistence_not_configured,
    persistence_unavailable,
)
from ._profile import Profile, ServiceSecrets
from ._projection import DeliveryProjection, IdentityChange, delivery_projection, send_projection
from ._protocols import CryptoProvider
from ._telemetry import Telemetry, upstream_fields

__all__ = ["RecentErrors", "Reply", "Service"]

MAX_IDEMPOTENCY_KEY: Final = 256
MAX_RECENT_ERRORS: Final = 10
MAX_ERROR_NAME: Final = 80
JSON_TYPE: Final = "application/json"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Reply:
    """A finished answer: status, body bytes, content type and extra headers."""

    status: int
    body: bytes
    content_type: str = JSON_TYPE
    headers: Mapping[str, str] = field(default_factory=dict)


# The encoder json.dumps(data, separators=(",", ":"), ensure_ascii=False) would build on
# every call (non-default arguments skip its cached default encoder), built once: same output.
_JSON_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def json_bytes(data: object) -> bytes:
    """Compact UTF-8 JSON."""
    return _JSON_ENCODER.encode(data).encode("utf-8")


def error_reply(error: HttpError) -> Reply:
    return Reply(error.status, json_bytes(error.body()), headers=error.headers)


class RecentErrors:
    """Error class names with counts: at most 10 distinct, oldest dropped, names cut to 80."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def add(self, error: BaseException | str) -> None:
        name = (error if isinstance(error, str) else type(error).__name__)[:MAX_ERROR_NAME]
        if name not in self._counts and len(self._counts) >= MAX_RECENT_ERRORS:
            del self._counts[next(iter(self._counts))]
        self._counts[name] = self._counts.get(name, 0) + 1

    def snapshot(self) -> list[dict[str, object]]:
        return [{"errorClass": name, "count": count} for name, count in self._counts.items()]


def check_idempotency_key(value: str | None) -> str | None:
    """The ``Idempotency-Key`` header, validated whenever present (400 otherwise)."""
    if value is None:
        return None
    if not value.strip() or len(value) > MAX_IDEMPOTENCY_KEY or has_control(value):
        raise invalid_idempotency_key()
    return value


def record_json(record: MessageRecord) -> dict[str, object]:
    """A ``MessageRecord`` as the spec's camelCase JSON."""
    return {
        "rowId": record.row_id,
        "waMessageId": record.wa_message_id,
        "direction": record.direction,
        "fromPhone": record.from_phone,
        "toPhone": record.to_phone,
        "type": record.type,
        "status": record.status,
        "graphMessageId": record.graph_message_id,
        "userId": record.user_id,
        "parentUserId": record.parent_user_id,
        "createdAt": format_timestamp(record.created_at),
        "updatedAt": format_timestamp(record.updated_at),
    }


class Service:
    """Everything a request needs: profile, secrets, clients, store, facade, telemetry, clock."""

    def __init__(
        self,
        *,
        profile: Profile,
        secrets: ServiceSecrets,
        client: GraphClient,
        store: PersistenceStore | None,
        facade: WebhookFacade,
        crypto_provider: CryptoProvider | None,
        telemetry: Telemetry,
        webhook_metrics: WebhookMetrics,
        now: Callable[[], datetime],
        logger: logging.Logger,
        enable_group_routes: bool,
    ) -> None:
        self.profile = profile
        self.secrets = secrets
        self.client = client
        self.phone = PhoneNumberClient(client, phone_number_id=profile.phone_number_id)
        self.store = store
        self.facade = facade
        self.telemetry = telemetry
        self.webhook_metrics = webhook_metrics
        self.now = now
        self.logger = logger
        self.enable_group_routes = enable_group_routes
        self.recent_errors = RecentErrors()
        self.update_hooks: list[Callable[[Sequence[Update]], Awaitable[None]]] = []
        """Awaited with every delivery's updates before dispatch (the broadcast template pause)."""
        self._app_secret = secrets.webhook_app_secret.encode("utf-8")
        self._matches = (
            crypto_provider.hmac_sha256_matches
            if crypto_provider is not None
            else crypto.hmac_sha256_matches
        )
        self._delivery_calls = store is not None and callable(
            getattr(store, "record_webhook_delivery", None)
        )
        self.atomic_claims = store is not None and all(
            callable(getattr(store, name, None))
            for name in ("claim_service_request", "complete_service_request")
        )

    # --- store calls ----------------------------------------------------------------

    async def store_call(
        self,
        make: Callable[[PersistenceStore], Awaitable[T]],
        *,
        validation_errors: bool = False,
    ) -> T:
        """One store call, counted; a fault becomes 503 ``persistence_unavailable``.

        With ``validation_errors`` a ``PersistenceValidationError`` (a refused
        record, not a fault) propagates for the caller to handle.
        """
        store = self.require_store()
        try:
            result = await make(store)
        except PersistenceError as exc:
            self.telemetry.persistence(ok=False)
            if validation_errors and isinstance(exc, PersistenceValidationError):
                raise
            self.recent_errors.add(exc)
            raise persistence_unavailable() from None
        self.telemetry.persistence(ok=True)
        return result

    async def store_try(self, make: Callable[[PersistenceStore], Awaitable[T]]) -> T | None:
        """A best-effort store call: a fault is counted, logged by class and yields None."""
        try:
            return await self.store_call(make)
        except HttpError:
            self.logger.warning("persistence write failed; continuing")
            return None

    def require_store(self) -> PersistenceStore:
        if self.store is None:
            raise persistence_not_configured()
        return self.store

    # --- webhook --------------------------------------------------------------------

    async def ingest_webhook(self, body: bytes, signature: str | None) -> Reply:
        """Receive (signature, JSON, envelope: decisions.md section 3), record, dispatch, reply."""
        try:
            delivery = receive_delivery(
                body,
                signature,
                self._app_secret,
                matches=self._matches,
                received_at=int(self.now().timestamp()),
            )
        except WebhookError as exc:
            return error_reply(HttpError(exc.http_status, exc.code, exc.message))
        self.webhook_metrics.observe(delivery.result)
        duplicate = False
        changes_stored = True
        if self.store is not None:
            try:
                duplicate, changes = await self._record_delivery(delivery)
            except HttpError as exc:
                return error_reply(exc)
            changes_stored = await self._apply_identity_changes(changes)

        def handler_failed(update: Update, exc: Exception) -> None:
            self.recent_errors.add(exc)
            self.webhook_metrics.record(update.kind, "handler_error")
            self.logger.warning(
                "webhook handler failed kind=%s error=%s",
                update.kind,
                type(exc).__name__[:MAX_ERROR_NAME],
            )

        for hook in self.update_hooks:
            await hook(delivery.updates)
        if not duplicate:
            await dispatch_delivery(self.facade, delivery, on_error=handler_failed)
        updates = delivery.updates
        tally: dict[str, int] = {}
        for update in updates:
            tally[update.kind] = tally.get(update.kind, 0) + 1
        label = "duplicate" if duplicate else "dispatched"
        for kind, count in tally.items():
            self.webhook_metrics.record(kind, label, count)
        dispatched = 0 if duplicate else len(updates)
        if not changes_stored:
            # Handlers ran; the redelivery is a duplicate that re-applies the changes.
            return error_reply(persistence_unavailable())
        reply = {
            "status": "ok",
            "received": len(updates),
            "dispatched": dispatched,
            "skipped": delivery.skipped_count + len(updates) - dispatched,
        }
        return Reply(200, json_bytes(reply))

    async def _record_delivery(self, delivery: Delivery) -> tuple[bool, tuple[IdentityChange, ...]]:
        """Record the delivery and project it before handlers run; True for a duplicate.

        A store with ``record_webhook_delivery`` records the event key, the rows,
        the status events and the identity sightings in one atomic call: if it
        fails, nothing was recorded, the answer is 503 and the platform
        redelivers. A store without it gets the event record, then one write
        per update (best effort, retried when the delivery comes again). The
        identity changes are returned for ``_apply_identity_changes``.
        """
        key, digest, received_at = delivery.event_key, delivery.body_hash, self.now()
        projection = delivery_projection(delivery.updates, self.now)
        if projection.unprojected:
            self.logger.warning(
                "webhook message not projected reason=no_user_identity count=%d",
                projection.unprojected,
            )
        if self._delivery_calls:
            try:
                outcome = await self.store_call(
                    lambda s: s.record_webhook_delivery(
                        event_key=key,
                        event_hash=digest,
                        received_at=received_at,
                        messages=projection.messages,
                        statuses=projection.statuses,
                        identities=projection.identities,
                    ),
                    validation_errors=True,
                )
            except PersistenceValidationError as exc:
                # A record the store refuses must not turn the delivery into a poison pill
                # (503, redelivered forever): keep the dedupe row and skip the projection.
                self.recent_errors.add(exc)
                self.logger.warning("webhook projection refused by the store; delivery recorded")
                outcome = await self.store_call(
                    lambda s: s.record_webhook_delivery(
                        event_key=key, event_hash=digest, received_at=received_at
                    )
                )
            return outcome == WebhookEventResult.DUPLICATE, projection.changes
        outcome = await self.store_call(
            lambda s: s.record_webhook_event(
                event_key=key, event_hash=digest, received_at=received_at
            )
        )
        await self._project(projection)
        return outcome == WebhookEventResult.DUPLICATE, projection.changes

    async def _project(self, projection: DeliveryProjection) -> None:
        """One best-effort write per update, started together (one group-commit batch)."""
        calls: list[StoreCall] = [_record_message_call(record) for record in projection.messages]
        calls += [_status_call(event) for event in projection.statuses]
        if projection.identities:
            calls.append(_identities_call(projection.identities))
        if calls:
            await self._write_together(calls)

    async def _apply_identity_changes(self, changes: tuple[IdentityChange, ...]) -> bool:
        """Re-key the identity map for each change, in order; False after a store fault.

        They run for a duplicate delivery too: its sightings were merged again
        (possibly with the old identifiers), and the changes re-apply on top.
        A change the store refuses is logged by class and skipped.
        """
        for change in changes:
            try:
                await self.store_call(_identity_change_call(change), validation_errors=True)
            except PersistenceValidationError as exc:
                self.recent_errors.add(exc)
                self.logger.warning("identity change refused by the store; skipped")
            except HttpError:
                self.logger.warning("identity change not stored; asking for a redelivery")
                return False
        return True

    # --- sends ----------------------------------------------------------------------

    def _scoped_key(self, key: str, operation: str) -> str:
        scope = "\x00".join(
            (self.profile.phone_number_id, self.profile.waba_id or "", operation, key)
        )
        return crypto.sha256_hex(scope.encode("utf-8"))

    async def send(
        self,
        payload: Mapping[str, Any],
        *,
        idempotency_key: str | None,
        operation: str = "messages",
        project: bool = True,
    ) -> Reply:
        """Send one message payload: claim the key, call upstream, complete, project."""
        claimed_key: str | None = None
        request_hash = ""
        if idempotency_key is not None and self.store is not None:
            if not self.atomic_claims:
                self.telemetry.send(family="messages", outcome="rejected")
                raise persistence_not_atomic()
            scoped = self._scoped_key(idempotency_key, operation)
            request_hash = crypto.sha256_hex(canonical_json(payload))
            created = self.now()
            claim = await self.store_call(
                lambda s: s.claim_service_request(
                    idempotency_key=scoped, request_hash=request_hash, created_at=created
                )
            )
            if isinstance(claim, Replay):
                self.telemetry.send(family="messages", outcome="replayed")
                return Reply(
                    200,
                    claim.response_json.encode("utf-8"),
                    headers={"Idempotent-Replayed": "true"},
                )
            if isinstance(claim, Pending):
                self.telemetry.send(family="messages", outcome="pending")
                raise idempotency_pending()
            if isinstance(claim, Conflict):
                self.telemetry.send(family="messages", outcome="conflict")
                raise idempotency_conflict()
            assert isinstance(claim, Claimed)
            claimed_key = scoped
        answer = await self.graph_call(
            "messages",
            lambda: self.client.request(
                "POST", f"/{self.profile.phone_number_id}/messages", json=dict(payload)
            ),
        )
        body = json_bytes(answer)
        writes: list[StoreCall] = []
        if claimed_key is not None:
            writes.append(
                _completion_call(
                    idempotency_key=claimed_key,
                    request_hash=request_hash,
                    response_json=body.decode("utf-8"),
                    completed_at=self.now(),
                )
            )
        if project and self.store is not None:
            projected = send_projection(payload, answer, self.now)
            if projected is not None:
                record, event = projected
                writes += [_record_message_call(record), _status_call(event)]
        headers: dict[str, str] = {}
        if writes and not await self._write_together(writes):
            headers["x-svc-persistence"] = "degraded"
        self.telemetry.send(family="messages", outcome="degraded" if headers else "sent")
        return Reply(200, body, headers=headers)

    async def _write_together(self, calls: list[StoreCall]) -> bool:
        """Best-effort writes started together (one group-commit batch); True if all stored.

        A write that answers None (a fault, or a completion the store did not
        take) counts as not stored.
        """
        results: list[object] = [None] * len(calls)

        async def write(index: int) -> None:
            results[index] = await self.store_try(calls[index])

        if len(calls) == 1:
            await write(0)
        else:
            async with anyio.create_task_group() as group:
                for index in range(len(calls)):
                    group.start_soon(write, index)
        return all(result is not None for result in results)

    async def graph_call(self, family: str, call: Callable[[], Awaitable[T]]) -> T:
        """One upstream call, counted; a Graph failure becomes 400, 502 or 503."""
        try:
            result = await call()
        except GraphRequestValidationError as exc:
            raise malformed_body(refusal_message(exc)) from None
        except GraphError as exc:
            status = exc.status if isinstance(exc, GraphApiError) else None
            self.telemetry.graph_call(family=family, status=status, outcome="error")
            self.telemetry.graph_failure(exc, at=self.now())
            self.recent_errors.add(exc)
            raise upstream_http_error(exc) from None
        self.telemetry.graph_call(family=family, status=200, outcome="success")
        return result

    # --- reads ----------------------------------------------------------------------

    async def list_messages(
        self, *, limit: int, cursor: str | None, user: str | None = None
    ) -> Reply:
        """A page of the projection, newest first; ``user`` keeps one user's rows."""
        self.require_store()
        page = await self.store_call(
            lambda s: s.list_messages(limit=limit, before_row_id=cursor, user=user)
        )
        body = {"items": [record_json(r) for r in page.items], "nextCursor": page.next_cursor}
        return Reply(200, json_bytes(body))

    async def get_message(self, message_id: str) -> Reply:
        self.require_store()
        record = await self.store_call(lambda s: s.get_message(wa_message_id=message_id))
        if record is None:
            raise not_found("No message with this id.")
        return Reply(200, json_bytes(record_json(record)))

    async def conversation_window(self, user: str) -> Reply:
        """The 24-hour window of ``user``: a phone, BSUID or parent BSUID, as the store keeps it."""
        self.require_store()
        last = await self.store_call(lambda s: s.get_latest_inbound_message_at(user=user))
        try:
            window = conversation_window(now=self.now(), last_inbound_at=last)
        except Exception as exc:  # noqa: BLE001 - the spec's own 503 for a window failure
            self.recent_errors.add(exc)
            raise conversation_window_unavailable() from None
        body = {
            "open": window.open,
            "lastInboundAt": _iso(window.last_inbound_at),
            "expiresAt": _iso(window.expires_at),
            "remainingMs": window.remaining_ms,
        }
        return Reply(200, json_bytes(body))


StoreCall = Callable[[PersistenceStore], Awaitable[object]]


def _record_message_call(record: MessageRecord) -> StoreCall:
    async def call(store: PersistenceStore) -> object:
        return await store.record_message(record)

    return call


def _identities_call(identities: tuple[UserIdentityRecord, ...]) -> StoreCall:
    async def call(store: PersistenceStore) -> object:
        await store.record_user_identities(identities)
        return True

    return call


def _identity_change_call(change: IdentityChange) -> StoreCall:
    async def call(store: PersistenceStore) -> object:
        return await store.record_identity_change(
            user=change.user,
            new_user_id=change.new_user_id,
            new_wa_id=change.new_wa_id,
            at=change.at,
        )

    return call


def _completion_call(
    *, idempotency_key: str, request_hash: str, response_json: str, completed_at: datetime
) -> StoreCall:
    """Store a claimed key's answer; None when the store did not take it (key no longer pending)."""

    async def call(store: PersistenceStore) -> object:
        stored = await store.complete_service_request(
            idempotency_key=idempotency_key,
            request_hash=request_hash,
            response_json=response_json,
            created_at=completed_at,
        )
        return True if stored else None

    return call


def _status_call(event: StatusEvent) -> StoreCall:
    async def call(store: PersistenceStore) -> object:
        return await store.append_message_status(
            wa_message_id=event.wa_message_id, status=event.status, timestamp=event.timestamp
        )

    return call


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else format_timestamp(moment)


def refusal_message(error: GraphRequestValidationError) -> str:
    """The 400 message of a graph-layer refusal: the field it names (short), never a value.

    A phone-only refusal also names the platform rule (a constant of the graph layer).
    """
    field = error.field if isinstance(error.field, str) and len(error.field) <= 80 else None
    where = f" ({field})" if field else ""
    if isinstance(error, PhoneOnlyRecipientError):
        return (
            f"The message was refused by validation{where}: {error.rule}; send to a phone number."
        )
    return f"The message was refused by validation{where}."


def _retry_after(value: str | None) -> str | None:
    if value is None or not 0 < len(value) <= 64:
        return None
    return value if is_printable_ascii(value) else None


def upstream_http_error(error: GraphError) -> HttpError:
    """502 ``graph_request_failed``, or 503 for a rate limit (``Retry-After`` echoed).

    What counts as a rate limit is the Graph layer's error tree alone
    (``GraphRateLimitError``), including its rule that an HTTP 5xx is an outage.
    """
    if isinstance(error, GraphRateLimitError):
        return graph_request_failed(
            rate_limited=True,
            extra=upstream_fields(error),
            retry_after=_retry_after(error.retry_after),
        )
    return graph_request_failed(rate_limited=False, extra=upstream_fields(error))
