"""The service's request logic, independent of Quart: webhook ingest, sends, reads, groups.

Each method takes parsed inputs and returns a ``Reply`` or raises ``HttpError``;
the Quart routes and the lean webhook path in front of Quart only move bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

import anyio

from svc import crypto
from svc.graph import (
    GraphApiError,
    GraphClient,
    GraphError,
    GraphRequestValidationError,
    PhoneNumberClient,
    is_read_receipt_payload,
)
from svc.runtime import Conversation, HandlerRuntime
from svc.store import (
    CheckedRows,
    Claimed,
    Conflict,
    InboxRow,
    Pending,
    PersistenceError,
    PersistenceStore,
    PersistenceValidationError,
    Replay,
)
from svc.webhook import (
    Delivery,
    ReplyOutcomeUnknown,
    Update,
    WebhookError,
    WebhookFacade,
    WebhookMetrics,
    canonical_json,
    receive_delivery,
    safe_detail,
    update_key,
)

from ._context import ServiceContext
from ._errors import (
    HttpError,
    handlers_busy,
    idempotency_conflict,
    idempotency_pending,
    malformed_body,
    persistence_not_configured,
    persistence_unavailable,
)
from ._local_copies import LocalCopies
from ._numbers import NumberRouter, ServedNumber, build_numbers, route_delivery
from ._profile import Profile, ServiceSecrets
from ._projection import IdentityChange, delivery_projection, send_projection
from ._protocols import CryptoProvider
from ._replies import Reply, error_reply, json_bytes
from ._send_keys import (
    CONTEXT_SEND_HASH,
    SendKey,
    complete_request,
    release_request,
    replayed_refusal,
)
from ._service_checks import MAX_ERROR_NAME, ForeignNumbers, RecentErrors, check_idempotency_key
from ._telemetry import Telemetry
from ._update_rules import FOREIGN_NUMBER, UpdateHook, hook_work, record_beside
from ._upstream import refusal_message, upstream_http_error

__all__ = ["RecentErrors", "Reply", "Service", "check_idempotency_key"]

T = TypeVar("T")


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
        numbers: NumberRouter | None = None,
    ) -> None:
        self.profile = profile
        self.secrets = secrets
        self.client = client
        self.numbers = numbers if numbers is not None else build_numbers(profile, secrets, client)
        self.phone: PhoneNumberClient = self.numbers.default.phone
        self.store = store
        self.facade = facade
        self.telemetry = telemetry
        self.webhook_metrics = webhook_metrics
        self.now = now
        self.logger = logger
        self.enable_group_routes = enable_group_routes
        self.recent_errors = RecentErrors()
        self.foreign_numbers = ForeignNumbers()
        self.update_hooks: list[UpdateHook] = []
        """Run beside the record on the updates of a delivery each wants (the broadcast
        template pause); each returns those whose hook work was not stored."""
        self._wake_after_answer = False
        """Whether updates were handed to the runtime since the last answer (``answered``)."""
        self.runtime: HandlerRuntime | None = None
        """The handler runtime (``create_app`` sets it: over the store's inbox with an inbox
        keyring, else over the in-memory queue)."""
        self.log_webhook_events = False
        """``SVC_LOG_WEBHOOK_EVENTS``: one privacy-safe line per update at ingest."""
        self._app_secret = secrets.webhook_app_secret.encode("utf-8")
        self._matches = (
            crypto_provider.hmac_sha256_matches
            if crypto_provider is not None
            else crypto.hmac_sha256_matches
        )
        self.local_copies = LocalCopies()
        """The deliveries this process recorded whole, by body hash."""
        self.fault_hook: Callable[[str], None] | None = None
        """A test-only seam, set by the CLI from its fault-injection option: called with
        ``"after_record"`` between recording a delivery and answering it."""

    # --- store calls ----------------------------------------------------------------

    async def store_call(self, call: Awaitable[T], *, validation_errors: bool = False) -> T:
        """Await one store method's call (``store_call(store.get_message(...))``), counted; a
        fault becomes 503 ``persistence_unavailable``.

        With ``validation_errors`` a ``PersistenceValidationError`` (a refused
        record, not a fault) propagates for the caller to handle.
        """
        try:
            result = await call
        except PersistenceError as exc:
            self.telemetry.persistence(ok=False)
            if validation_errors and isinstance(exc, PersistenceValidationError):
                raise
            self.recent_errors.add(exc)
            raise persistence_unavailable() from None
        self.telemetry.persistence(ok=True)
        return result

    async def store_try(self, call: Awaitable[T]) -> T | None:
        """A best-effort store call: a fault is counted, logged by class and yields None."""
        try:
            return await self.store_call(call)
        except HttpError:
            self.logger.warning("persistence write failed; continuing")
            return None

    def require_store(self) -> PersistenceStore:
        if self.store is None:
            raise persistence_not_configured()
        return self.store

    # --- webhook --------------------------------------------------------------------

    async def ingest_webhook(self, body: bytes, signature: str | None) -> Reply:
        """Receive (signature, JSON, envelope: decisions.md section 3), record, hand over, reply.

        The answer waits only for the record: the delivery, its update keys, its projection
        and the updates the facade ``handles`` (sealed inbox rows) are recorded in one store
        call, the update hooks' work (the broadcast pause) queued beside it (``record_beside``),
        and the runtime runs those updates after the answer.
        Without a store the updates go to the in-memory queue (full: 503 ``handlers_busy``).
        A redelivery of a recorded update is a plain duplicate. A byte-for-byte copy of a
        delivery this process recorded (``local_copies``) makes no store trip. The answer's
        counters: ``_ack``.
        """
        now = self.now()
        try:
            delivery = receive_delivery(
                body,
                signature,
                self._app_secret,
                matches=self._matches,
                received_at=int(now.timestamp()),
            )
        except WebhookError as exc:
            return error_reply(HttpError(exc.http_status, exc.code, exc.message))
        self.webhook_metrics.observe(delivery.result)
        delivery, foreign = self._route_delivery(delivery)
        updates = delivery.updates
        if self.log_webhook_events:
            for update in updates:
                self.logger.info(
                    "webhook update kind=%s detail=%s", update.kind, safe_detail(update)
                )
        digest = delivery.body_hash if self.store is not None else ""
        if digest in self.local_copies:
            # Recorded here already: every update of it is a duplicate, nothing to record.
            self._count_outcomes(updates, set(), {id(update) for update in updates})
            return _ack(delivery, foreign, dispatched=0, queued=0)
        handled = self._handled(updates)
        floats = delivery.may_hold_floats
        keys = [update_key(update, may_hold_floats=floats) for update in updates]
        by_id = {id(update): key for update, key in zip(updates, keys, strict=True)}
        pairs = [(u, by_id[id(u)]) for u in handled]
        runtime = self.runtime
        if self.store is None:
            return self._hand_to_memory(delivery, foreign, pairs)
        rows = runtime.rows(pairs) if runtime is not None and pairs else []
        hooks = hook_work(self.update_hooks, updates)
        try:
            (new, changes, projected), hooks_stored = await record_beside(
                self._record_delivery(delivery, digest, keys, now, rows), hooks
            )
        except HttpError as exc:
            return error_reply(exc)
        handed = {row.update_key for row in rows} & new
        if handed and runtime is not None:
            runtime.accepted(pairs, handed, wake=False)
            self._wake_after_answer = True
        if self.fault_hook is not None:
            self.fault_hook("after_record")  # test-only: the crash between record and answer
        changes_stored = await self._apply_identity_changes(changes)
        ran: set[int] = set()
        duplicate: set[int] = set()
        seen: set[str] = set()
        for update, key in zip(updates, keys, strict=True):
            if key not in new or key in seen:
                duplicate.add(id(update))
            elif key in handed:
                ran.add(id(update))
            seen.add(key)
        self._count_outcomes(updates, ran, duplicate)
        if not (changes_stored and hooks_stored):
            # Recorded and handed over; the redelivery is a duplicate, and re-applies the
            # changes and runs the hooks again.
            return error_reply(persistence_unavailable())
        if projected and not changes:
            self.local_copies.add((digest,))
        dispatched = len(updates) - len(duplicate)
        return _ack(delivery, foreign, dispatched=dispatched, queued=len(ran))

    def answered(self) -> None:
        """A webhook answer was written (or its client left): wake the runtime if a delivery
        handed it updates, so that runs start after the answer, never racing it."""
        if self._wake_after_answer and self.runtime is not None:
            self._wake_after_answer = False
            self.runtime.wake()

    def _handled(self, updates: tuple[Update, ...]) -> list[Update]:
        """The updates the facade handles. A ``handles`` that raises counts as True (the run
        decides), logged by class: an update is never dropped for a faulty predicate."""
        handles = self.facade.handles
        handled: list[Update] = []
        for update in updates:
            try:
                wanted = handles(update)
            except Exception as exc:  # noqa: BLE001 - user code; never a 500
                self.recent_errors.add(exc)
                self.logger.warning(
                    "webhook facade handles() failed kind=%s error=%s",
                    update.kind,
                    type(exc).__name__[:MAX_ERROR_NAME],
                )
                wanted = True
            if wanted:
                handled.append(update)
        return handled

    def _hand_to_memory(
        self,
        delivery: Delivery,
        foreign: int,
        pairs: list[tuple[Update, str]],
    ) -> Reply:
        """Without a store: the handled updates go to the in-memory queue (full: 503
        ``handlers_busy``); one it accepted before (a redelivery) is a duplicate."""
        runtime = self.runtime
        accepted: list[str] | None = []
        if pairs and runtime is not None:
            accepted = runtime.accept(pairs, wake=False)
            if accepted:
                self._wake_after_answer = True
        if accepted is None:
            self.logger.warning("webhook handler queue full count=%d", len(pairs))
            return error_reply(handlers_busy())
        fresh = set(accepted)
        ran = {id(update) for update, key in pairs if key in fresh}
        duplicate = {id(update) for update, key in pairs if key not in fresh}
        self._count_outcomes(delivery.updates, ran, duplicate)
        dispatched = len(delivery.updates) - len(duplicate)
        return _ack(delivery, foreign, dispatched=dispatched, queued=len(ran))

    def handler_context(
        self, update: Update, key: str | None = None, conversation: Conversation | None = None
    ) -> ServiceContext:
        """The context a handler of ``update`` runs in: its sends go out from the number the
        update came to (the default number for WABA-level updates), through ``send``, keyed
        by ``key`` (the update's key) when given; its waits, updates and state are the
        runtime's ``conversation`` of the run."""
        number = self.numbers.get(update.phone_number_id) or self.numbers.default
        return ServiceContext(
            update,
            number=number,
            send=self._send_from,
            logger=self.logger,
            update_key=key,
            conversation=conversation,
        )

    async def _send_from(
        self, payload: Mapping[str, Any], number: ServedNumber, key: str | None
    ) -> Reply:
        # A read receipt (a context's typing indicator) is sent like the read route's:
        # answered by the platform's success, never projected as an outbound message.
        return await self.send(
            payload,
            idempotency_key=key,
            project=not is_read_receipt_payload(payload),
            number=number,
            from_context=True,
        )

    def _route_delivery(self, delivery: Delivery) -> tuple[Delivery, int]:
        """The delivery reduced to the served numbers' updates, and how many were set apart.

        An update for a number this service does not serve (``metadata.phone_number_id``)
        is skipped with the reason ``foreign_number``: counted, logged once per number id
        (the business's, not user data), never projected or dispatched. Updates without a
        number (WABA-level changes) stay.
        """
        routed = route_delivery(delivery, self.numbers.ids)
        for update in routed.foreign:
            self.webhook_metrics.record(update.kind, FOREIGN_NUMBER)
        if routed.foreign:
            self.telemetry.webhook_updates(
                phone_number_id=None, outcome="foreign_number", count=len(routed.foreign)
            )
            numbers = {update.phone_number_id for update in routed.foreign}
            for number in self.foreign_numbers.first_sightings(numbers):
                self.logger.warning(
                    "webhook updates skipped reason=foreign_number phone_number_id=%s: "
                    "not a number this service serves (%s); logged once per id",
                    number,
                    ", ".join(sorted(self.numbers.ids)),
                )
        return routed.delivery, len(routed.foreign)

    def _count_outcomes(
        self, updates: tuple[Update, ...], ran: set[int], duplicate: set[int]
    ) -> None:
        """Count each update ``dispatched`` (id in ``ran``: handed to the runtime),
        ``duplicate`` (recorded before) or ``recorded`` (new, no handler), by kind and number."""
        by_kind: dict[tuple[str, str], int] = {}
        by_number: dict[tuple[str | None, str], int] = {}
        for update in updates:
            key = id(update)
            outcome = (
                "dispatched" if key in ran else "duplicate" if key in duplicate else "recorded"
            )
            kind = (update.kind, outcome)
            by_kind[kind] = by_kind.get(kind, 0) + 1
            number = (update.phone_number_id, outcome)
            by_number[number] = by_number.get(number, 0) + 1
        for (name, outcome), count in by_kind.items():
            self.webhook_metrics.record(name, outcome, count)
        for (phone_number_id, outcome), count in by_number.items():
            self.telemetry.webhook_updates(
                phone_number_id=phone_number_id, outcome=outcome, count=count
            )

    async def _record_delivery(
        self,
        delivery: Delivery,
        digest: str,
        keys: list[str],
        received_at: datetime,
        rows: Sequence[InboxRow],
    ) -> tuple[set[str], tuple[IdentityChange, ...], bool]:
        """Record the delivery (``digest``: its body hash, read once), its update keys, its
        projection and its inbox rows; return the keys recorded for the first time, the identity
        changes to apply and whether the projection was stored.

        One atomic store call (``record_webhook_updates``) records the event key, the update
        keys (a key stored before is a duplicate), the rows, the status events,
        the identity sightings and the inbox rows of the new keys: if it fails, nothing was
        recorded, the answer is 503 and the platform redelivers. A projection the store
        refuses is left out and the delivery (with its inbox rows) recorded without it.
        """
        projection = delivery_projection(delivery.updates, self.now)
        event = (delivery.event_key, digest)
        if projection.unprojected:
            self.logger.warning(
                "webhook message not projected reason=no_user_identity count=%d",
                projection.unprojected,
            )
        try:
            if projection.refusal is not None:
                raise projection.refusal
            new = await self._record_updates(
                event, keys, received_at, rows, projection.rows, validation_errors=True
            )
        except PersistenceValidationError as exc:
            # A record the store refuses must not turn the delivery into a poison pill
            # (503, redelivered forever): keep the dedupe rows and skip the projection.
            self.recent_errors.add(exc)
            self.logger.warning("webhook projection refused by the store; delivery recorded")
            new = await self._record_updates(event, keys, received_at, rows, None)
            return new, projection.changes, False
        return new, projection.changes, True

    async def _record_updates(
        self,
        event: tuple[str, str],
        keys: list[str],
        received_at: datetime,
        inbox: Sequence[InboxRow],
        rows: CheckedRows | None,
        *,
        validation_errors: bool = False,
    ) -> set[str]:
        """One ``record_webhook_updates`` of the delivery (``event``: its event key and body hash)
        with its projection's ``rows`` (or none); the update keys it recorded for the first time."""
        recorded = await self.store_call(
            self.require_store().record_webhook_updates(
                event_key=event[0],
                event_hash=event[1],
                received_at=received_at,
                update_keys=keys,
                rows=rows,
                inbox=inbox,
            ),
            validation_errors=validation_errors,
        )
        return set(recorded.new)

    async def _apply_identity_changes(self, changes: tuple[IdentityChange, ...]) -> bool:
        """Re-key the identity map for each change, in order; False after a store fault.

        They run for a duplicate delivery too: its sightings were merged again
        (possibly with the old identifiers), and the changes re-apply on top.
        A change the store refuses is logged by class and skipped.
        """
        store = self.require_store()
        for change in changes:
            try:
                await self.store_call(
                    store.record_identity_change(
                        user=change.user,
                        new_user_id=change.new_user_id,
                        new_wa_id=change.new_wa_id,
                        at=change.at,
                    ),
                    validation_errors=True,
                )
            except PersistenceValidationError as exc:
                self.recent_errors.add(exc)
                self.logger.warning("identity change refused by the store; skipped")
            except HttpError:
                self.logger.warning("identity change not stored; asking for a redelivery")
                return False
        return True

    # --- sends ----------------------------------------------------------------------

    def _scoped_key(self, key: str, operation: str, number: ServedNumber) -> str:
        scope = "\x00".join((number.phone_number_id, number.waba_id or "", operation, key))
        return crypto.sha256_hex(scope.encode("utf-8"))

    async def send(
        self,
        payload: Mapping[str, Any],
        *,
        idempotency_key: str | None,
        operation: str = "messages",
        project: bool = True,
        number: ServedNumber | None = None,
        from_context: bool = False,
    ) -> Reply:
        """Send one message payload from ``number`` (default: the default number).

        Claim the key, call upstream on the number's ``/{id}/messages``, complete, project.
        ``from_context`` (a handler context's send): the key is claimed by itself alone (a
        fixed request hash, so a rerun that builds another text replays the first answer),
        and an outcome that cannot be known (a claim left pending, a lost answer) raises
        ``ReplyOutcomeUnknown`` instead of an ``HttpError``.
        """
        sender = number if number is not None else self.numbers.default
        claimed: SendKey | None = None
        if idempotency_key is not None and self.store is not None:
            key = self._scoped_key(idempotency_key, operation, sender)
            claim = await self._claim_send_key(self.store, key, payload, sender, from_context)
            if isinstance(claim, Reply):
                return claim
            claimed = claim
        unknown: list[bool] = []

        async def failed(error: HttpError, cause: GraphError) -> None:
            if not cause.retry_hint.outcome_known:
                unknown.append(True)
            elif claimed is not None:
                await self._settle_refused_key(claimed, error, cause)

        try:
            answer = await self.graph_call(
                "messages",
                lambda: sender.client.request(
                    "POST", f"/{sender.phone_number_id}/messages", json=dict(payload)
                ),
                on_failed=failed,
            )
        except HttpError:
            if from_context and unknown:
                raise ReplyOutcomeUnknown("the platform's answer to a send was lost") from None
            raise
        body = json_bytes(answer)
        stored = await self._record_sent(payload, answer, body, claimed, sender, project=project)
        headers = {} if stored else {"x-svc-persistence": "degraded"}
        self._count_send(sender, "sent" if stored else "degraded")
        return Reply(200, body, headers=headers)

    def _count_send(self, sender: ServedNumber, outcome: str) -> None:
        self.telemetry.send(
            family="messages", outcome=outcome, phone_number_id=sender.phone_number_id
        )

    async def _claim_send_key(
        self,
        store: PersistenceStore,
        key: str,
        payload: Mapping[str, Any],
        sender: ServedNumber,
        from_context: bool,
    ) -> SendKey | Reply:
        """Claim a send's scoped key: the claim, or the replayed answer; a pending or
        conflicting key raises (a context send's pending key: ``ReplyOutcomeUnknown``)."""
        request_hash = (
            CONTEXT_SEND_HASH if from_context else crypto.sha256_hex(canonical_json(payload))
        )
        claim = await self.store_call(
            store.claim_service_request(
                idempotency_key=key, request_hash=request_hash, created_at=self.now()
            )
        )
        if isinstance(claim, Replay):
            self._count_send(sender, "replayed")
            if from_context and claim.status != 200:
                raise replayed_refusal(claim.status, claim.response_json)
            return Reply(
                claim.status,
                claim.response_json.encode("utf-8"),
                headers={"Idempotent-Replayed": "true"},
            )
        if isinstance(claim, Pending):
            self._count_send(sender, "pending")
            if from_context:
                raise ReplyOutcomeUnknown("a send of an earlier run was never completed")
            raise idempotency_pending()
        if isinstance(claim, Conflict):
            self._count_send(sender, "conflict")
            raise idempotency_conflict()
        assert isinstance(claim, Claimed)
        return SendKey(key, request_hash)

    async def _settle_refused_key(
        self, claimed: SendKey, error: HttpError, cause: GraphError
    ) -> None:
        """The rule per known refusal (docs/http.md): one retrying cannot change is the key's
        answer, replayed; a transient one frees the key, so a retry goes through. (An
        unknown outcome, which the platform may have sent, leaves the key pending.)"""
        store = self.require_store()
        settle: Awaitable[bool | None]
        if cause.retry_hint.retry_may_succeed:
            settle = release_request(store, claimed)
        else:
            settle = complete_request(
                store,
                claimed,
                response_json=json_bytes(error.body()).decode("utf-8"),
                completed_at=self.now(),
                response_status=error.status,
            )
        if not await self._write_together([settle]):
            self.logger.warning("keyed send outcome not stored; the key stays pending")

    async def _record_sent(
        self,
        payload: Mapping[str, Any],
        answer: Any,
        body: bytes,
        claimed: SendKey | None,
        sender: ServedNumber,
        *,
        project: bool,
    ) -> bool:
        """Store a sent message's answer under its key and its projection (the message and
        its ``sent`` status), in one batch; False when any of it was not stored."""
        store = self.store
        if store is None:
            return True
        writes: list[Awaitable[object]] = []
        if claimed is not None:
            writes.append(
                complete_request(
                    store, claimed, response_json=body.decode("utf-8"), completed_at=self.now()
                )
            )
        projected = send_projection(payload, answer, self.now) if project else None
        if projected is not None:
            record, event = projected
            record = replace(record, business_phone_number_id=sender.phone_number_id)
            writes += [
                store.record_message(record),
                store.append_message_status(
                    wa_message_id=event.wa_message_id,
                    status=event.status,
                    timestamp=event.timestamp,
                ),
            ]
        return not writes or await self._write_together(writes)

    async def _write_together(self, calls: Sequence[Awaitable[object]]) -> bool:
        """Best-effort store calls awaited together (one group-commit batch); True if all
        stored.

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

    async def graph_call(
        self,
        family: str,
        call: Callable[[], Awaitable[T]],
        *,
        on_failed: Callable[[HttpError, GraphError], Awaitable[None]] | None = None,
    ) -> T:
        """One upstream call, counted; a Graph failure becomes 400, 502 or 503.

        ``on_failed`` is awaited with the answer and the Graph error (its
        ``retry_hint`` says what the failure means) before the answer is raised.
        """
        try:
            result = await call()
        except GraphRequestValidationError as exc:
            error = malformed_body(refusal_message(exc))
            if on_failed is not None:
                await on_failed(error, exc)
            raise error from None
        except GraphError as exc:
            status = exc.status if isinstance(exc, GraphApiError) else None
            self.telemetry.graph_call(family=family, status=status, outcome="error")
            self.telemetry.graph_failure(exc, at=self.now())
            self.recent_errors.add(exc)
            error = upstream_http_error(exc)
            if on_failed is not None:
                await on_failed(error, exc)
            raise error from None
        self.telemetry.graph_call(family=family, status=200, outcome="success")
        return result


def _ack(delivery: Delivery, foreign: int, *, dispatched: int, queued: int) -> Reply:
    """The 200 of a delivery; the counters are decisions.md section 7's (``docs/http.md``).

    ``received``: the normalized updates in the delivery, ``foreign`` ones (for numbers this
    service does not serve) included. ``dispatched``: the updates handed to the facade (new
    and accepted, whether or not it handles them). ``skipped``: the updates not dispatched
    (recorded before, ``foreign``) and the malformed parts. ``queued``: the dispatched
    updates recorded for a handler run.
    """
    received = len(delivery.updates)
    reply = {
        "status": "ok",
        "received": received + foreign,
        "dispatched": dispatched,
        "skipped": delivery.skipped_count + received - dispatched + foreign,
        "queued": queued,
    }
    return Reply(200, json_bytes(reply))
