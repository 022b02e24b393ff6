"""The service's request logic, independent of Quart: webhook ingest, sends, reads, groups.

Each method takes parsed inputs and returns a ``Reply`` or raises ``HttpError``;
the Quart routes and the lean webhook path in front of Quart only move bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
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
)
from svc.store import (
    UPDATE_CLAIM_LEASE_MS,
    Claimed,
    Conflict,
    Pending,
    PersistenceError,
    PersistenceStore,
    PersistenceValidationError,
    Replay,
)
from svc.webhook import (
    Delivery,
    NormalizationResult,
    Update,
    WebhookError,
    WebhookFacade,
    WebhookMetrics,
    canonical_json,
    dispatch_delivery,
    receive_delivery,
    update_key,
)

from ._context import ServiceContext
from ._errors import (
    HttpError,
    idempotency_conflict,
    idempotency_pending,
    malformed_body,
    persistence_not_configured,
    persistence_unavailable,
)
from ._local_runs import LocalCopies, LocalRuns
from ._numbers import NumberRouter, ServedNumber, build_numbers, route_delivery
from ._profile import Profile, ServiceSecrets
from ._projection import IdentityChange, delivery_projection, send_projection
from ._protocols import CryptoProvider
from ._replies import Reply, error_reply, json_bytes
from ._service_checks import MAX_ERROR_NAME, ForeignNumbers, RecentErrors, check_idempotency_key
from ._store_calls import (
    StoreCall,
    completion_call,
    identity_change_call,
    record_message_call,
    release_call,
    status_call,
)
from ._telemetry import Telemetry
from ._update_rules import (
    FOREIGN_NUMBER,
    UpdateHook,
    keys_without_work,
    updates_to_run,
    webhook_in_progress,
)
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
        """Run before dispatch on the updates of this delivery each wants (the broadcast
        template pause); each returns those whose hook work was not stored, left unmarked."""
        self._app_secret = secrets.webhook_app_secret.encode("utf-8")
        self._matches = (
            crypto_provider.hmac_sha256_matches
            if crypto_provider is not None
            else crypto.hmac_sha256_matches
        )
        self.local_runs = LocalRuns()
        self.local_copies = LocalCopies()
        """The deliveries this process recorded and ran to the end, by body hash."""
        self.update_claim_lease_ms = UPDATE_CLAIM_LEASE_MS
        """How long an update claimed by one delivery is "in progress" for its copies."""
        self.fault_hook: Callable[[str], None] | None = None
        """A test-only seam, set by the CLI from its fault-injection option: called with
        ``"after_record"`` between recording a delivery and dispatching it."""

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
        """Receive (signature, JSON, envelope: decisions.md section 3), record, dispatch, reply.

        The updates with no work (``keys_without_work``) are recorded finished with the
        delivery; only the ones that ran work are marked handled after dispatch, so a
        delivery without work makes one store trip. A byte-for-byte copy of a delivery
        this process recorded and ran to the end (``local_copies``) makes none.
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
        digest = delivery.body_hash if self.store is not None else ""
        if digest in self.local_copies:
            # Recorded and run to the end here already: the store would claim none of its
            # updates, so it is answered as a copy without projecting or recording it again.
            self._count_outcomes(updates, set())
            return _ack(delivery, foreign, dispatched=0)
        floats = delivery.may_hold_floats
        keys = (
            [update_key(update, may_hold_floats=floats) for update in updates]
            if self.store is not None
            else []
        )
        finished = keys_without_work(updates, keys, self.facade, self.update_hooks)
        to_run: set[str] | None = None  # None: no store, every update runs
        busy: set[str] = set()
        changes_stored = True
        settled = bool(digest)  # whether a copy will find nothing left to record or run
        with self.local_runs.recording(keys):  # until the won keys are started below
            if self.store is not None:
                try:
                    to_run, changes, projected = await self._record_delivery(
                        delivery, keys, busy, now, finished
                    )
                except HttpError as exc:
                    return error_reply(exc)
                changes_stored = await self._apply_identity_changes(changes)
                settled = settled and projected and not changes and not busy
            if self.fault_hook is not None:
                self.fault_hook("after_record")  # test-only: the crash between record and run
            chosen, running = updates_to_run(updates, keys, to_run)
            hooks_failed = await self._run_update_hooks(chosen, keys, updates)
            recorded_done: list[str] = []  # claimed and finished by the store with the record
            if finished:
                done = set(finished)
                recorded_done = [key for key in running if key in done]
                running = [key for key in running if key not in done]
            self.local_runs.start(running, finished=recorded_done)

        def handler_failed(update: Update, exc: Exception) -> None:
            self.recent_errors.add(exc)
            self.webhook_metrics.record(update.kind, "handler_error")
            self.logger.warning(
                "webhook handler failed kind=%s error=%s",
                update.kind,
                type(exc).__name__[:MAX_ERROR_NAME],
            )

        try:
            if chosen:
                result = NormalizationResult(updates=chosen, skipped=delivery.result.skipped)
                await dispatch_delivery(
                    self.facade,
                    replace(delivery, result=result),
                    on_error=handler_failed,
                    context=self.handler_context,
                )
            handled = [key for key in running if key not in hooks_failed]
            if handled:
                # Handler exceptions are acknowledged too: a finished run is a finished update.
                marked = await self.store_try(
                    lambda s: s.mark_webhook_updates_handled(
                        update_keys=handled, handled_at=self.now()
                    )
                )
                settled = settled and marked is not None
        finally:
            self.local_runs.finish(running, unfinished=hooks_failed)
        if busy and await self.local_runs.wait(busy):
            busy = set()
        self._count_outcomes(updates, {id(update) for update in chosen})
        dispatched = len(chosen)
        if busy:
            # Another delivery is running some of these updates: answer so the platform
            # redelivers later, when they are finished (skipped) or their claim has lapsed.
            return error_reply(webhook_in_progress())
        if not changes_stored or hooks_failed:
            # Handlers ran; the redelivery skips them and re-applies the changes.
            return error_reply(persistence_unavailable())
        if settled:
            self.local_copies.add((digest,))
        return _ack(delivery, foreign, dispatched=dispatched)

    def handler_context(self, update: Update) -> ServiceContext:
        """The context a handler of ``update`` runs in: its sends go out from the number the
        update came to (the default number for WABA-level updates), through ``send``."""
        number = self.numbers.get(update.phone_number_id) or self.numbers.default
        return ServiceContext(update, number=number, send=self._send_from, logger=self.logger)

    async def _send_from(self, payload: Mapping[str, Any], number: ServedNumber) -> Reply:
        return await self.send(payload, idempotency_key=None, number=number)

    async def _run_update_hooks(
        self, chosen: tuple[Update, ...], keys: list[str], updates: tuple[Update, ...]
    ) -> set[str]:
        """Await each update hook with the updates this delivery runs that it wants; the keys
        of those whose hook work was not stored (an empty set without a store: nothing is
        marked).

        A duplicate costs its hooks nothing: the run that marked it handled ran them.
        A failed one stays unmarked, so the platform's redelivery (asked for with a 503)
        runs it, and its hooks, again.
        """
        failed: set[int] = set()
        for hook in self.update_hooks:
            wanted = [update for update in chosen if hook.wants(update)]
            if wanted:
                failed.update(id(update) for update in await hook.run(wanted))
        if not failed or self.store is None:
            return set()
        return {key for update, key in zip(updates, keys, strict=True) if id(update) in failed}

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

    def _count_outcomes(self, updates: tuple[Update, ...], ran: set[int]) -> None:
        """Count each update ``dispatched`` (id in ``ran``) or ``duplicate``, by kind and number."""
        by_kind: dict[tuple[str, str], int] = {}
        by_number: dict[tuple[str | None, str], int] = {}
        for update in updates:
            outcome = "dispatched" if id(update) in ran else "duplicate"
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
        keys: list[str],
        busy: set[str],
        received_at: datetime,
        finished: list[str],
    ) -> tuple[set[str], tuple[IdentityChange, ...], bool]:
        """Record the delivery, its update keys and its projection before handlers run;
        return the keys of the updates to run, the identity changes to apply and whether
        the projection was stored, and add to ``busy`` the keys another delivery is running
        right now.

        One atomic store call (``record_webhook_updates``) records the event key, the update
        keys, the rows, the status events and the identity sightings, and marks ``finished``
        (the keys with no work) handled: if it fails, nothing was recorded, the answer is 503
        and the platform redelivers. A projection the store refuses is left out and the
        delivery recorded without it.
        """
        projection = delivery_projection(delivery.updates, self.now)
        if projection.unprojected:
            self.logger.warning(
                "webhook message not projected reason=no_user_identity count=%d",
                projection.unprojected,
            )

        async def record(store: PersistenceStore, project: bool) -> set[str]:
            recorded = await store.record_webhook_updates(
                event_key=delivery.event_key,
                event_hash=delivery.body_hash,
                received_at=received_at,
                update_keys=keys,
                rows=projection.rows if project else None,
                claim_lease_ms=self.update_claim_lease_ms,
                finished_keys=finished,
            )
            busy.update(recorded.in_progress)
            return set(recorded.to_run)

        try:
            if projection.refusal is not None:
                raise projection.refusal
            to_run = await self.store_call(lambda s: record(s, True), validation_errors=True)
        except PersistenceValidationError as exc:
            # A record the store refuses must not turn the delivery into a poison pill
            # (503, redelivered forever): keep the dedupe rows and skip the projection.
            self.recent_errors.add(exc)
            self.logger.warning("webhook projection refused by the store; delivery recorded")
            to_run = await self.store_call(lambda s: record(s, False))
            return to_run, projection.changes, False
        return to_run, projection.changes, True

    async def _apply_identity_changes(self, changes: tuple[IdentityChange, ...]) -> bool:
        """Re-key the identity map for each change, in order; False after a store fault.

        They run for a duplicate delivery too: its sightings were merged again
        (possibly with the old identifiers), and the changes re-apply on top.
        A change the store refuses is logged by class and skipped.
        """
        for change in changes:
            try:
                await self.store_call(identity_change_call(change), validation_errors=True)
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
    ) -> Reply:
        """Send one message payload from ``number`` (default: the default number).

        Claim the key, call upstream on the number's ``/{id}/messages``, complete, project.
        """
        sender = number if number is not None else self.numbers.default

        def count(outcome: str) -> None:
            self.telemetry.send(
                family="messages", outcome=outcome, phone_number_id=sender.phone_number_id
            )

        claimed_key: str | None = None
        request_hash = ""
        if idempotency_key is not None and self.store is not None:
            scoped = self._scoped_key(idempotency_key, operation, sender)
            request_hash = crypto.sha256_hex(canonical_json(payload))
            created = self.now()
            claim = await self.store_call(
                lambda s: s.claim_service_request(
                    idempotency_key=scoped, request_hash=request_hash, created_at=created
                )
            )
            if isinstance(claim, Replay):
                count("replayed")
                return Reply(
                    claim.status,
                    claim.response_json.encode("utf-8"),
                    headers={"Idempotent-Replayed": "true"},
                )
            if isinstance(claim, Pending):
                count("pending")
                raise idempotency_pending()
            if isinstance(claim, Conflict):
                count("conflict")
                raise idempotency_conflict()
            assert isinstance(claim, Claimed)
            claimed_key = scoped

        async def failed(error: HttpError, cause: GraphError) -> None:
            # The rule per outcome (docs/http.md): a refusal retrying cannot change is the
            # key's answer, replayed; a transient one frees the key, so a retry goes through;
            # an unknown outcome (the platform may have sent it) leaves the key pending.
            if claimed_key is None or not cause.retry_hint.outcome_known:
                return
            if cause.retry_hint.retry_may_succeed:
                call = release_call(idempotency_key=claimed_key, request_hash=request_hash)
            else:
                call = completion_call(
                    idempotency_key=claimed_key,
                    request_hash=request_hash,
                    response_json=json_bytes(error.body()).decode("utf-8"),
                    completed_at=self.now(),
                    response_status=error.status,
                )
            if not await self._write_together([call]):
                self.logger.warning("keyed send outcome not stored; the key stays pending")

        answer = await self.graph_call(
            "messages",
            lambda: sender.client.request(
                "POST", f"/{sender.phone_number_id}/messages", json=dict(payload)
            ),
            on_failed=failed,
        )
        body = json_bytes(answer)
        writes: list[StoreCall] = []
        if claimed_key is not None:
            writes.append(
                completion_call(
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
                record = replace(record, business_phone_number_id=sender.phone_number_id)
                writes += [record_message_call(record), status_call(event)]
        headers: dict[str, str] = {}
        if writes and not await self._write_together(writes):
            headers["x-svc-persistence"] = "degraded"
        count("degraded" if headers else "sent")
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


def _ack(delivery: Delivery, foreign: int, *, dispatched: int) -> Reply:
    """The 200 of a delivery: how many updates it had, ran and skipped (``foreign``: set
    apart for numbers this service does not serve)."""
    received = len(delivery.updates)
    reply = {
        "status": "ok",
        "received": received + foreign,
        "dispatched": dispatched,
        "skipped": delivery.skipped_count + received - dispatched + foreign,
    }
    return Reply(200, json_bytes(reply))
