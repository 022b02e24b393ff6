"""The broadcast routes, the sender's place in the app's lifespan, and the template-pause hook.

``POST {prefix}/broadcasts`` stores a validated broadcast (202); ``GET
{prefix}/broadcasts/{id}`` reads its counts; ``.../pause`` and ``.../resume``
stop and restart its sends. The paced sender (``_broadcast_sender``) runs in
the app's serving nursery whenever the store has the broadcast surface.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import trio
from quart import Response, request
from quart_trio import QuartTrio

from svc import crypto
from svc.store import BroadcastStatus, BroadcastStore, PersistenceValidationError
from svc.webhook import AccountUpdate, TemplateStatusChange, Update, canonical_json

from ._broadcast_sender import (
    BroadcastOptions,
    BroadcastSenderHandle,
    run_broadcast_sender,
)
from ._broadcasts import (
    BroadcastAnswer,
    BroadcastBody,
    BroadcastOut,
    broadcast_json,
    plan_broadcast,
)
from ._errors import (
    HttpError,
    idempotency_conflict,
    malformed_body,
    not_found,
)
from ._models import IdempotencyHeaders
from ._openapi import document_bearer_route
from ._replies import Reply, json_bytes
from ._requests import (
    check_path_id,
    json_response,
    parse_json,
    reply_response,
    request_body,
    require_bearer,
)
from ._service import Service, check_idempotency_key
from ._update_rules import UpdateHook

__all__ = [
    "PAUSING_TEMPLATE_EVENTS",
    "BroadcastRuntime",
    "register_broadcast_routes",
]

PAUSING_TEMPLATE_EVENTS = frozenset(
    {"PAUSED", "DISABLED", "PENDING_DELETION", "DELETED", "ARCHIVED", "REJECTED"}
)
"""Template status events after which a broadcast using the template stops sending."""


class BroadcastRuntime:
    """One app's sender: its options, and its handle while the app serves."""

    __slots__ = ("handle", "options")

    def __init__(self, options: BroadcastOptions) -> None:
        self.options = options
        self.handle: BroadcastSenderHandle | None = None

    def wake(self) -> None:
        if self.handle is not None:
            self.handle.wake()

    async def start(self, nursery: trio.Nursery, service: Service) -> None:
        """Start the sender when the service has a store."""
        store = service.store
        if not self.options.enabled or store is None:
            return
        numbers = _numbers(service)

        async def post(number: str, payload: Mapping[str, Any]) -> Mapping[str, Any]:
            served = service.numbers.get(number)
            client = service.client if served is None else served.client
            answer: Mapping[str, Any] = await client.request(
                "POST", f"/{number}/messages", json=dict(payload)
            )
            return answer

        self.handle = await nursery.start(run_broadcast_sender, store, post, numbers, self.options)

    async def stop(self) -> None:
        if self.handle is not None:
            await self.handle.stop()
            self.handle = None


def _numbers(service: Service) -> Sequence[str]:
    """The business numbers the sender serves: every number the service serves."""
    return tuple(sorted(service.numbers.ids))


def pausing_template(update: Update) -> TemplateStatusChange | None:
    """The named template status change of ``update`` that pauses its broadcasts, if any."""
    if not isinstance(update, AccountUpdate):
        return None
    details = update.details
    if not isinstance(details, TemplateStatusChange) or details.name is None:
        return None
    if (details.event or "").upper() not in PAUSING_TEMPLATE_EVENTS:
        return None
    return details


def template_pause_hook(service: Service) -> UpdateHook:
    """An update hook that pauses the broadcasts of a template the platform paused or disabled;
    it wants only those template status changes, and returns the ones whose pause was not
    stored."""

    async def run(updates: Sequence[Update]) -> Sequence[Update]:
        store = service.store
        if store is None:
            return ()  # nothing to pause
        failed: list[Update] = []
        for update in updates:
            details = pausing_template(update)
            if details is None or details.name is None:
                continue
            try:
                paused = await service.store_call(
                    store.pause_broadcasts_for_template(
                        name=details.name, language=details.language, now=service.now()
                    )
                )
            except HttpError:
                service.logger.warning("broadcast pause for a template status failed")
                failed.append(update)
                continue
            if paused:
                service.logger.warning("broadcasts paused by a template status count=%d", paused)
        return failed

    return UpdateHook(wants=lambda update: pausing_template(update) is not None, run=run)


def _broadcast_store(service: Service) -> BroadcastStore:
    return service.require_store()


def _status_reply(status: BroadcastStatus | None) -> Response:
    if status is None:
        raise not_found("No broadcast with this id.")
    return json_response(broadcast_json(status))


def register_broadcast_routes(app: QuartTrio, service: Service, runtime: BroadcastRuntime) -> None:
    """Add the broadcast routes under the API prefix."""
    token = service.secrets.service_bearer_token.encode("utf-8")
    _register_create(app, service, token, runtime)
    _register_state_routes(app, service, token, runtime)
    service.update_hooks.append(template_pause_hook(service))


async def _create(service: Service, runtime: BroadcastRuntime, key: str) -> Response:
    """Store the request's broadcast under its scoped ``key`` (202; a replay says so, a
    conflict is 409); a new one wakes the sender."""
    store = _broadcast_store(service)
    data = parse_json(await request_body(service.profile.max_body_bytes))
    plan = plan_broadcast(data, service.numbers)
    digest = crypto.sha256_hex(canonical_json(data))
    scoped = service._scoped_key(key, "broadcasts", plan.number)
    try:
        result = await service.store_call(
            store.create_broadcast(
                id=uuid.uuid4().hex,
                request_key=scoped,
                request_hash=digest,
                phone_number_id=plan.phone_number_id,
                recipients=plan.recipients,
                created_at=service.now(),
                template_name=plan.template_name,
                template_language=plan.template_language,
            ),
            validation_errors=True,
        )
    except PersistenceValidationError as exc:
        # A record the store refuses (a recipient's message past what it keeps of one) is
        # the request's fault, not an outage: nothing was stored.
        raise malformed_body(f"The store refused the broadcast: {exc.message}") from None
    if result.outcome == "conflict":
        raise idempotency_conflict()
    headers = {"Idempotent-Replayed": "true"} if result.outcome == "replay" else {}
    if result.outcome == "created":
        runtime.wake()
    body = json_bytes({"broadcastId": result.broadcast_id})
    return reply_response(Reply(202, body, headers=headers))


async def _set_paused(
    service: Service, runtime: BroadcastRuntime, broadcast_id: str, paused: bool
) -> Response:
    """Pause or resume the path's broadcast (404 when unknown); resuming wakes the sender."""
    store = _broadcast_store(service)
    bid = check_path_id(broadcast_id)
    found = await service.store_call(
        store.set_broadcast_paused(id=bid, paused=paused, now=service.now())
    )
    if not found:
        raise not_found("No broadcast with this id.")
    if not paused:
        runtime.wake()
    return _status_reply(await service.store_call(store.get_broadcast(id=bid)))


def _register_create(
    app: QuartTrio, service: Service, token: bytes, runtime: BroadcastRuntime
) -> None:
    """``POST {prefix}/broadcasts``: bearer, then a required ``Idempotency-Key``."""
    prefix = service.profile.api_prefix

    @app.route(f"{prefix}/broadcasts", methods=["POST"], endpoint="create_broadcast")
    @document_bearer_route(
        BroadcastAnswer, 202, headers=IdempotencyHeaders, body=BroadcastBody, error=400
    )
    async def create_broadcast() -> Response:
        """Store a broadcast: one message to many recipients, sent at the number's pace."""
        require_bearer(token)
        key = check_idempotency_key(request.headers.get("Idempotency-Key"))
        if key is None:
            raise HttpError(
                400, "invalid_idempotency_key", "A broadcast needs an Idempotency-Key header."
            )
        return await _create(service, runtime, key)


def _register_state_routes(
    app: QuartTrio, service: Service, token: bytes, runtime: BroadcastRuntime
) -> None:
    """A broadcast's state: read it, pause it, resume it."""
    prefix = service.profile.api_prefix

    @app.route(f"{prefix}/broadcasts/<broadcast_id>", methods=["GET"], endpoint="get_broadcast")
    @document_bearer_route(BroadcastOut, error=404)
    async def get_broadcast(broadcast_id: str) -> Response:
        """A broadcast's state, counts and failures by error code."""
        require_bearer(token)
        store = _broadcast_store(service)
        bid = check_path_id(broadcast_id)
        return _status_reply(await service.store_call(store.get_broadcast(id=bid)))

    @app.route(
        f"{prefix}/broadcasts/<broadcast_id>/pause", methods=["POST"], endpoint="pause_broadcast"
    )
    @document_bearer_route(BroadcastOut, error=404)
    async def pause_broadcast(broadcast_id: str) -> Response:
        """Stop sending a broadcast (sends in flight finish)."""
        require_bearer(token)
        return await _set_paused(service, runtime, broadcast_id, True)

    @app.route(
        f"{prefix}/broadcasts/<broadcast_id>/resume", methods=["POST"], endpoint="resume_broadcast"
    )
    @document_bearer_route(BroadcastOut, error=404)
    async def resume_broadcast(broadcast_id: str) -> Response:
        """Send a paused broadcast's remaining recipients again."""
        require_bearer(token)
        return await _set_paused(service, runtime, broadcast_id, False)
