"""``create_app``: the Quart-Trio ASGI application of the service, with every route of the spec.

The webhook POST, the hottest route, is served by a lean ASGI path in front of
Quart (same checks, same reply, no per-request Quart machinery); every other
route is a Quart view. Background work (the outbox worker) runs in the app's
own serving nursery, so ``svc serve`` and a plain ``hypercorn --worker-class
trio`` run the same app the same way.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any, Final, TextIO

import httpx
import trio
from prometheus_client import CollectorRegistry, generate_latest
from pydantic import BaseModel
from quart import Response, request
from quart_schema import (
    QuartSchema,
    document_headers,
    document_querystring,
    document_request,
    document_response,
    hide,
    security_scheme,
)
from quart_trio import QuartTrio
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound, RequestEntityTooLarge

from svc import crypto
from svc._version import __version__
from svc.flows import MAX_FLOW_BYTES, FlowHandler, FlowPrivateKey, handle_flow_request
from svc.graph import GraphClient, GraphRequestValidationError, GroupClient
from svc.store import (
    SCHEMA_VERSION,
    OutboxHandler,
    OutboxReport,
    OutboxReporter,
    OutboxWorkerHandle,
    OutboxWorkerOptions,
    PersistenceStore,
    run_outbox_worker,
    utc_now,
)
from svc.webhook import (
    BoundedBody,
    DefaultFacade,
    FacadeFlags,
    PayloadTooLargeError,
    WebhookError,
    WebhookFacade,
    WebhookMetrics,
    check_content_length,
    verify_challenge,
)

from ._bodies import (
    MessageBody,
    SendAnswer,
    TextSendBody,
    is_group_body,
    is_read_receipt,
    parse_body,
    parse_message_body,
    parse_text_body,
    to_payload,
)
from ._errors import HttpError, ServiceError
from ._models import (
    ChallengeQuery,
    DiagnosticsOut,
    ErrorBody,
    FieldsQuery,
    GraphAnswer,
    GroupCreateBody,
    GroupUpdateBody,
    Health,
    IdempotencyHeaders,
    JoinRequestsBody,
    MessagePageOut,
    MessageRecordOut,
    MessagesQuery,
    PageQuery,
    RemoveParticipantsBody,
    SignatureHeaders,
    StatusOut,
    WebhookAck,
    WindowOut,
)
from ._profile import Profile, ServiceSecrets
from ._protocols import CryptoProvider, TelemetrySink
from ._routes import Route, route_inventory, route_labeler
from ._service import (
    Reply,
    Service,
    check_idempotency_key,
    error_reply,
    has_control_character,
    json_bytes,
    refusal_message,
)
from ._telemetry import Telemetry

__all__ = ["SERVICE_NAME", "create_app", "openapi_document"]

SERVICE_NAME: Final = "svc"
RUNTIME: Final = "python-trio"
METRICS_CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
BEARER: Final[list[dict[str, list[str]]]] = [{"bearerAuth": []}]
_NOT_FOUND = HttpError(404, "not_found", "Not found.")
_NOT_FOUND_REPLY = error_reply(_NOT_FOUND)
_OPTIONAL_STORE_METHODS: Final = frozenset(
    {"claim_service_request", "complete_service_request", "record_webhook_delivery"}
)
"""The spec's optional atomic methods (and the one-call delivery): used when present."""
_STORE_METHODS: Final = tuple(
    name
    for name, member in vars(PersistenceStore).items()
    if callable(member) and not name.startswith("_") and name not in _OPTIONAL_STORE_METHODS
)
"""The required method set, read from the contract so the two never drift apart."""
_MAX_PATH_ID: Final = 256
_ERROR_STATUSES: Final = {
    "400": "Malformed request (JSON, body, query, path or Idempotency-Key).",
    "401": "Missing or invalid bearer token, or webhook signature.",
    "404": "Not found (also the hidden operator routes without the bearer).",
    "405": "Method not allowed.",
    "409": "Idempotency conflict or pending claim.",
    "413": "Request body over the size limit.",
    "502": "Upstream Graph request failed.",
    "503": "Rate limited upstream, or persistence unavailable or not configured.",
}
_STRICT_JSON = json.JSONDecoder(parse_constant=lambda name: _raise_constant(name))

Scope = Any
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


def _raise_constant(name: str) -> Any:
    raise ValueError(name)


# --- construction checks --------------------------------------------------------------


def _check_profile(profile: object) -> Profile:
    if isinstance(profile, Profile):
        return profile
    if isinstance(profile, Mapping):
        return Profile.from_mapping(profile)
    raise ServiceError("invalid_profile", "profile must be a Profile or a mapping.")


def _check_secrets(secrets: object) -> ServiceSecrets:
    if isinstance(secrets, ServiceSecrets):
        return secrets
    if isinstance(secrets, Mapping):
        return ServiceSecrets.from_mapping(secrets)
    raise ServiceError("invalid_secrets", "secrets must be ServiceSecrets or a mapping.")


def _check_store(store: object) -> PersistenceStore | None:
    if store is None:
        return None
    missing = [name for name in _STORE_METHODS if not callable(getattr(store, name, None))]
    if missing or not isinstance(getattr(store, "backend", None), str):
        raise ServiceError(
            "invalid_persistence",
            "store lacks required methods: " + ", ".join(missing or ["backend"]) + ".",
        )
    return store  # type: ignore[return-value]


def _check_options(
    *,
    transport: object,
    crypto_provider: object,
    facade: object,
    enable_group_routes: object,
    telemetry_sink: object,
    metrics_registry: object,
) -> None:
    if transport is not None and not isinstance(transport, httpx.AsyncBaseTransport):
        raise ServiceError("invalid_transport", "transport must be an httpx.AsyncBaseTransport.")
    if crypto_provider is not None and not callable(
        getattr(crypto_provider, "hmac_sha256_matches", None)
    ):
        raise ServiceError(
            "invalid_crypto_provider", "crypto_provider must have hmac_sha256_matches()."
        )
    if facade is not None and not callable(getattr(facade, "dispatch", None)):
        raise ServiceError("invalid_whatsapp", "facade must have a dispatch(update) method.")
    if not isinstance(enable_group_routes, bool):
        raise ServiceError("invalid_config", "enable_group_routes must be a bool.")
    if telemetry_sink is not None and not (
        callable(getattr(telemetry_sink, "increment_counter", None))
        and callable(getattr(telemetry_sink, "record_histogram", None))
    ):
        raise ServiceError(
            "invalid_config",
            "telemetry_sink needs increment_counter() and record_histogram().",
        )
    if metrics_registry is not None and not isinstance(metrics_registry, CollectorRegistry):
        raise ServiceError("invalid_config", "metrics_registry must be a CollectorRegistry.")


def _check_flows(profile: Profile, handler: object, key: object) -> None:
    """The Flows route needs a path, a handler and a private key, all three or none."""
    given = (profile.flows_path is not None, handler is not None, key is not None)
    if any(given) and not all(given):
        raise ServiceError(
            "invalid_config",
            "the Flows endpoint needs profile.flows_path, flow_handler and flows_private_key.",
        )
    if handler is not None and not callable(handler):
        raise ServiceError("invalid_config", "flow_handler must be callable.")
    if key is not None and not isinstance(key, FlowPrivateKey):
        raise ServiceError("invalid_config", "flows_private_key must be a loaded FlowPrivateKey.")


# --- the app ---------------------------------------------------------------------------


def create_app(
    *,
    profile: Profile | Mapping[str, Any],
    secrets: ServiceSecrets | Mapping[str, str],
    transport: httpx.AsyncBaseTransport | None = None,
    crypto_provider: CryptoProvider | None = None,
    facade: WebhookFacade | None = None,
    store: PersistenceStore | None = None,
    enable_group_routes: bool = False,
    telemetry_sink: TelemetrySink | None = None,
    metrics_registry: CollectorRegistry | None = None,
    metrics_exposition: Callable[[], bytes] | None = None,
    facade_flags: FacadeFlags | None = None,
    outbox_handler: OutboxHandler | None = None,
    outbox_options: Mapping[str, Any] | None = None,
    flow_handler: FlowHandler | None = None,
    flows_private_key: FlowPrivateKey | None = None,
    now: Callable[[], datetime] = utc_now,
    logger: logging.Logger | None = None,
    log_stream: TextIO | None = None,
) -> QuartTrio:
    """Build the service's ASGI app (a Quart-Trio app) from in-memory configuration.

    Reads no environment. Raises ``ServiceError`` with the spec's construction
    code when an argument is invalid. ``metrics_exposition`` replaces the text
    ``/metrics`` serves (the CLI's multi-worker mode aggregates across
    processes); ``outbox_handler`` (with a store) starts the outbox worker in
    the app's serving nursery.
    """
    checked_profile = _check_profile(profile)
    checked_secrets = _check_secrets(secrets)
    _check_options(
        transport=transport,
        crypto_provider=crypto_provider,
        facade=facade,
        enable_group_routes=enable_group_routes,
        telemetry_sink=telemetry_sink,
        metrics_registry=metrics_registry,
    )
    checked_store = _check_store(store)
    _check_flows(checked_profile, flow_handler, flows_private_key)
    if outbox_handler is not None and checked_store is None:
        raise ServiceError("invalid_config", "outbox_handler needs a store.")
    if outbox_handler is not None and not callable(outbox_handler):
        raise ServiceError("invalid_config", "outbox_handler must be an async callable.")
    log = logger if logger is not None else logging.getLogger("svc.http")
    registry = metrics_registry if metrics_registry is not None else CollectorRegistry()
    try:
        client = GraphClient(
            access_token=checked_secrets.access_token,
            api_version=checked_profile.api_version,
            base_url=checked_profile.base_url,
            transport=transport,
        )
    except GraphRequestValidationError:
        raise ServiceError("invalid_secret", "access_token is not usable.") from None
    telemetry = Telemetry(
        registry,
        sink=telemetry_sink,
        logger=log,
        log_stream=log_stream if log_stream is not None else sys.stderr,
        adapter=checked_store.backend if checked_store is not None else None,
    )
    webhook_metrics = WebhookMetrics(registry, sink=telemetry_sink, logger=log)
    flags = facade_flags if facade_flags is not None else FacadeFlags()
    service_facade: WebhookFacade = (
        facade
        if facade is not None
        else DefaultFacade(log_webhook_events=flags.log_webhook_events, logger=log)
    )
    service = Service(
        profile=checked_profile,
        secrets=checked_secrets,
        client=client,
        store=checked_store,
        facade=service_facade,
        crypto_provider=crypto_provider,
        telemetry=telemetry,
        webhook_metrics=webhook_metrics,
        now=now,
        logger=log,
        enable_group_routes=enable_group_routes,
    )
    if facade is None and flags.echo_reply:
        # The echo reply needs the service's own phone client, built with the service.
        service.facade = DefaultFacade.from_flags(flags, echo_client=service.phone, logger=log)
    outbox = None
    if outbox_handler is not None and checked_store is not None:
        try:
            outbox = _outbox_options(
                outbox_handler, outbox_options or {}, now, registry, checked_store, telemetry, log
            )
        except Exception as exc:
            raise ServiceError("invalid_config", "outbox_options are invalid.") from exc
    routes = route_inventory(checked_profile, enable_group_routes=enable_group_routes)
    app = _build_quart_app(service, routes, registry, metrics_exposition, outbox)
    if flow_handler is not None and flows_private_key is not None:
        _register_flows_route(app, service, flow_handler, flows_private_key)
    return app


def _outbox_options(
    handler: OutboxHandler,
    options: Mapping[str, Any],
    now: Callable[[], datetime],
    registry: CollectorRegistry,
    store: PersistenceStore,
    telemetry: Telemetry,
    logger: logging.Logger,
) -> OutboxWorkerOptions:
    reporter = OutboxReporter(registry, adapter=store.backend)

    def on_report(report: OutboxReport) -> None:
        reporter(report)
        telemetry.outbox_processed(succeeded=report.succeeded, failed=report.failed)

    def on_error(exc: Exception) -> None:
        logger.warning("outbox worker tick failed error=%s", type(exc).__name__[:80])

    return OutboxWorkerOptions(
        handler=handler, on_report=on_report, on_error=on_error, now=now, **dict(options)
    )


def _reply_response(reply: Reply) -> Response:
    response = Response(reply.body, status=reply.status, content_type=reply.content_type)
    for name, value in reply.headers.items():
        response.headers[name] = value
    return response


def _json_response(data: object, status: int = 200) -> Response:
    return _reply_response(Reply(status, json_bytes(data)))


def _authorized(header: str | None, token: bytes) -> bool:
    """``Authorization: Bearer <token>`` compared in constant time."""
    if header is None:
        return False
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return False
    return crypto.constant_time_equal(value.strip().encode("utf-8", "surrogatepass"), token)


async def _read_body(limit: int) -> bytes:
    """The request body, refused on Content-Length and never read past ``limit``."""
    too_large = HttpError(413, "payload_too_large", "The request body is over the size limit.")
    try:
        check_content_length(request.content_length, max_body_bytes=limit)
        bounded = BoundedBody(max_body_bytes=limit)
        async for chunk in request.body:
            bounded.feed(chunk)
    except (PayloadTooLargeError, RequestEntityTooLarge):
        raise too_large from None
    return bounded.body()


def _parse_json(body: bytes) -> object:
    if not body:
        raise HttpError(400, "malformed_json", "The request body is empty.")
    try:
        return _STRICT_JSON.decode(body.decode("utf-8"))
    except (ValueError, RecursionError):
        raise HttpError(400, "malformed_json", "The request body is not valid JSON.") from None


def _query_int(name: str, *, default: int | None, low: int, high: int) -> int | None:
    raw = request.args.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or len(raw) > 6 or not low <= int(raw) <= high:
        raise HttpError(400, "malformed_query", f"'{name}' must be an integer {low}..{high}.")
    return int(raw)


def _query_text(name: str) -> str | None:
    raw = request.args.get(name)
    if raw is None:
        return None
    if not raw or len(raw) > 4096 or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in raw):
        raise HttpError(400, "malformed_query", f"'{name}' is not a usable value.")
    return raw


def _check_path_id(value: str) -> str:
    if (
        not value
        or len(value) > _MAX_PATH_ID
        or "/" in value
        or "\\" in value
        or has_control_character(value)
    ):
        raise HttpError(400, "malformed_path", "The id in the path is not a safe segment.")
    return value


def _build_quart_app(
    service: Service,
    routes: tuple[Route, ...],
    registry: CollectorRegistry,
    metrics_exposition: Callable[[], bytes] | None,
    outbox: OutboxWorkerOptions | None,
) -> QuartTrio:
    profile = service.profile
    prefix = profile.api_prefix
    token = service.secrets.service_bearer_token.encode("utf-8")
    started = time.monotonic()
    app = QuartTrio(SERVICE_NAME, static_folder=None)
    app.config.update(
        MAX_CONTENT_LENGTH=profile.max_body_bytes,
        PROPAGATE_EXCEPTIONS=False,
        JSON_SORT_KEYS=False,
    )
    QuartSchema(
        app,
        openapi_path=None,
        redoc_ui_path=None,
        scalar_ui_path=None,
        swagger_ui_path=None,
        info={"title": "svc", "version": __version__},
        security_schemes={"bearerAuth": {"type": "http", "scheme": "bearer"}},
    )
    app.extensions["svc"] = service
    app.extensions["svc.routes"] = routes
    handle: list[OutboxWorkerHandle] = []

    # --- lifespan: the outbox worker lives in the app's serving nursery ---------------

    @app.before_serving
    async def _start_background() -> None:
        if outbox is not None and service.store is not None:
            handle.append(await app.nursery.start(run_outbox_worker, service.store, outbox))

    @app.after_serving
    async def _stop_background() -> None:
        while handle:
            await handle.pop().stop()
        await service.client.aclose()

    # --- errors -------------------------------------------------------------------------

    @app.errorhandler(HttpError)
    async def _http_error(error: HttpError) -> Response:
        return _reply_response(error_reply(error))

    @app.errorhandler(NotFound)
    async def _not_found(_: NotFound) -> Response:
        return _reply_response(_NOT_FOUND_REPLY)

    @app.errorhandler(MethodNotAllowed)
    async def _not_allowed(error: MethodNotAllowed) -> Response:
        allowed = sorted(error.valid_methods or ())
        return _reply_response(
            error_reply(
                HttpError(
                    405,
                    "method_not_allowed",
                    "Method not allowed.",
                    headers={"Allow": ", ".join(allowed)},
                )
            )
        )

    @app.errorhandler(RequestEntityTooLarge)
    async def _too_large(_: RequestEntityTooLarge) -> Response:
        return _reply_response(
            error_reply(
                HttpError(413, "payload_too_large", "The request body is over the size limit.")
            )
        )

    @app.errorhandler(HTTPException)
    async def _other_http(error: HTTPException) -> Response:
        status = error.code or 400
        return _reply_response(error_reply(HttpError(status, "bad_request", "Bad request.")))

    @app.errorhandler(Exception)
    async def _unexpected(error: Exception) -> Response:
        service.recent_errors.add(error)
        service.logger.error("unhandled error in a route error=%s", type(error).__name__[:80])
        return _reply_response(error_reply(HttpError(500, "internal_error", "Internal error.")))

    def require_bearer() -> None:
        if not _authorized(request.headers.get("Authorization"), token):
            raise HttpError(401, "unauthorized", "Missing or invalid bearer token.")

    def telemetry_gate() -> Response | None:
        """Hidden routes: the catch-all 404 on bad auth, 405 for a wrong method with good auth."""
        if not _authorized(request.headers.get("Authorization"), token):
            return _reply_response(_NOT_FOUND_REPLY)
        if request.method not in ("GET", "HEAD"):
            raise HttpError(
                405, "method_not_allowed", "Method not allowed.", headers={"Allow": "GET, HEAD"}
            )
        return None

    all_methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    # --- health -----------------------------------------------------------------------

    @app.route("/healthz", methods=["GET"])
    @document_response(Health)
    async def healthz() -> Response:
        """Process liveness."""
        return _json_response({"ok": True, "service": SERVICE_NAME})

    @app.route("/readyz", methods=["GET"])
    @document_response(Health)
    @document_response(ErrorBody, 503)
    async def readyz() -> Response:
        """Readiness: the store (when configured) is healthy and at the current schema version."""
        if service.store is not None:
            health = await service.store.health()
            if not health.ok or health.current_version != SCHEMA_VERSION:
                raise HttpError(
                    503, "persistence_unavailable", "The persistence store is unavailable."
                )
        return _json_response({"ok": True, "service": SERVICE_NAME})

    # --- telemetry (bearer, hidden) ---------------------------------------------------

    feature_flags = {
        "groupRoutes": service.enable_group_routes,
        "persistence": service.store is not None,
    }

    # Fixed at construction, like the flags: one of the spec's four serviceMode values.
    service_mode = "+".join(
        part
        for part, on in (
            ("webhook", True),
            ("persistence", service.store is not None),
            ("groups", service.enable_group_routes),
        )
        if on
    )

    route_lines = [line for route in routes for line in route.lines()]

    async def persistence_summary() -> dict[str, object] | None:
        if service.store is None:
            return None
        health = await service.store.health()
        backend = health.backend if health.backend in ("sqlite", "postgres") else "unknown"
        return {
            "ok": health.ok,
            "backend": backend,
            "currentVersion": health.current_version,
            "redactedLocation": health.redacted_location,
        }

    @app.route("/status", methods=all_methods, provide_automatic_options=False)
    @security_scheme(BEARER)
    @document_response(StatusOut)
    async def status() -> Response:
        """Operator status snapshot."""
        if (hidden := telemetry_gate()) is not None:
            return hidden
        return _json_response(
            {
                "version": __version__,
                "uptimeSeconds": round(time.monotonic() - started, 3),
                "graphApiVersion": profile.api_version,
                "serviceMode": service_mode,
                "routes": route_lines,
                "featureFlags": feature_flags,
                "persistence": await persistence_summary(),
            }
        )

    @app.route("/metrics", methods=all_methods, provide_automatic_options=False)
    @security_scheme(BEARER)
    async def metrics() -> Response:
        """Prometheus text exposition (version 0.0.4)."""
        if (hidden := telemetry_gate()) is not None:
            return hidden
        text = metrics_exposition() if metrics_exposition is not None else generate_latest(registry)
        return Response(text, status=200, content_type=METRICS_CONTENT_TYPE)

    @app.route("/debug/diagnostics", methods=all_methods, provide_automatic_options=False)
    @security_scheme(BEARER)
    @document_response(DiagnosticsOut)
    async def diagnostics() -> Response:
        """Diagnostics snapshot: names, counts and flags only."""
        if (hidden := telemetry_gate()) is not None:
            return hidden
        families = sorted({metric.name for metric in registry.collect()})
        return _json_response(
            {
                "service": SERVICE_NAME,
                "version": __version__,
                "graphApiVersion": profile.api_version,
                "serviceMode": service_mode,
                "runtime": RUNTIME,
                "routes": route_lines,
                "featureFlags": feature_flags,
                "persistence": await persistence_summary(),
                "metricFamilies": families,
                "recentErrors": service.recent_errors.snapshot(),
                "configShape": _config_shape(service),
            }
        )

    @app.route("/openapi.json", methods=["GET"])
    @hide
    async def openapi() -> Response:
        """The OpenAPI 3.1 document."""
        return _json_response(openapi_document(app))

    # --- webhook ----------------------------------------------------------------------

    @app.route(profile.webhook_path, methods=["GET"], endpoint="webhook_challenge")
    @document_querystring(ChallengeQuery)
    async def webhook_challenge() -> Response:
        """Webhook verification (hub.mode, hub.verify_token, hub.challenge)."""
        try:
            challenge = verify_challenge(
                request.args, verify_token=service.secrets.webhook_verify_token
            )
        except WebhookError as exc:
            raise HttpError(exc.http_status, exc.code, exc.message) from None
        return Response(challenge, status=200, content_type="text/plain; charset=utf-8")

    @app.route(profile.webhook_path, methods=["POST"], endpoint="webhook_ingest")
    @document_headers(SignatureHeaders)
    @document_response(WebhookAck)
    @document_response(ErrorBody, 401)
    async def webhook_ingest() -> Response:
        """Webhook ingress (signed with X-Hub-Signature-256); served by the lean path."""
        body = await _read_body(profile.max_body_bytes)
        reply = await service.ingest_webhook(body, request.headers.get("X-Hub-Signature-256"))
        return _reply_response(reply)

    # --- sends ------------------------------------------------------------------------

    async def send_body(parse: Callable[[object], BaseModel]) -> Response:
        require_bearer()
        key = check_idempotency_key(request.headers.get("Idempotency-Key"))
        body = parse(_parse_json(await _read_body(profile.max_body_bytes)))
        if is_group_body(body) and not service.enable_group_routes:
            raise HttpError(400, "malformed_body", "Group messages need the group routes enabled.")
        try:
            payload = to_payload(body)
        except GraphRequestValidationError as exc:
            service.telemetry.send(family="messages", outcome="rejected")
            raise HttpError(400, "malformed_body", refusal_message(exc)) from None
        return _reply_response(
            await service.send(payload, idempotency_key=key, project=not is_read_receipt(body))
        )

    @app.route(f"{prefix}/messages/text", methods=["POST"])
    @security_scheme(BEARER)
    @document_headers(IdempotencyHeaders)
    @document_request(TextSendBody)
    @document_response(SendAnswer)
    @document_response(ErrorBody, 400)
    async def send_text() -> Response:
        """Send a text message."""
        return await send_body(parse_text_body)

    @app.route(f"{prefix}/messages", methods=["POST"], endpoint="send_message")
    @security_scheme(BEARER)
    @document_headers(IdempotencyHeaders)
    @document_request(MessageBody)
    @document_response(SendAnswer)
    @document_response(ErrorBody, 400)
    async def send_message() -> Response:
        """Send any message: Graph-native text or a composer body."""
        return await send_body(parse_message_body)

    # --- reads ------------------------------------------------------------------------

    @app.route(f"{prefix}/messages", methods=["GET"], endpoint="list_messages")
    @security_scheme(BEARER)
    @document_querystring(MessagesQuery)
    @document_response(MessagePageOut)
    @document_response(ErrorBody, 503)
    async def list_messages() -> Response:
        """A page of projected messages, newest first."""
        require_bearer()
        limit = _query_int("limit", default=50, low=1, high=100)
        assert limit is not None
        cursor = _query_text("cursor")
        if cursor is not None and len(cursor) > _MAX_PATH_ID:
            raise HttpError(400, "malformed_query", "'cursor' is not a usable value.")
        return _reply_response(await service.list_messages(limit=limit, cursor=cursor))

    @app.route(f"{prefix}/messages/", methods=["GET"], endpoint="message_empty_id")
    @hide
    async def message_empty_id() -> Response:
        require_bearer()
        raise HttpError(400, "malformed_path", "The id in the path is not a safe segment.")

    @app.route(f"{prefix}/messages/<path:message_id>", methods=["GET"], endpoint="get_message")
    @security_scheme(BEARER)
    @document_response(MessageRecordOut)
    @document_response(ErrorBody, 404)
    async def get_message(message_id: str) -> Response:
        """One projected message by its platform id."""
        if message_id == "text":
            raise HttpError(
                405, "method_not_allowed", "Method not allowed.", headers={"Allow": "POST"}
            )
        require_bearer()
        return _reply_response(await service.get_message(_check_path_id(message_id)))

    @app.route(f"{prefix}/conversations/<path:phone>/window", methods=["GET"], endpoint="window")
    @security_scheme(BEARER)
    @document_response(WindowOut)
    @document_response(ErrorBody, 503)
    async def window(phone: str) -> Response:
        """The 24-hour customer-service window of one phone number."""
        require_bearer()
        digits = phone[1:] if phone.startswith("+") else phone
        if not (1 <= len(digits) <= 15 and digits.isascii() and digits.isdigit()):
            raise HttpError(400, "malformed_path", "The phone in the path must be digits.")
        return _reply_response(await service.conversation_window(digits))

    if service.enable_group_routes:
        _register_group_routes(app, service, prefix, require_bearer)

    quart_asgi = app.asgi_app
    app.asgi_app = _front(service, quart_asgi, routes)  # type: ignore[method-assign,assignment]
    return app


def _config_shape(service: Service) -> dict[str, object]:
    redacted = "[REDACTED]"
    return {
        "profile": dict.fromkeys(
            (
                "phone_number_id",
                "waba_id",
                "api_version",
                "base_url",
                "webhook_path",
                "max_body_bytes",
                "api_prefix",
                "host",
                "port",
                "flows_path",
            ),
            redacted,
        ),
        "secrets": dict.fromkeys(
            ("access_token", "webhook_verify_token", "webhook_app_secret", "service_bearer_token"),
            redacted,
        ),
        "transport": redacted,
        "facade": redacted,
        "persistence": redacted if service.store is not None else None,
        "enableGroupRoutes": redacted,
        "telemetrySink": redacted,
        "metricsRegistry": redacted,
    }


def _register_flows_route(
    app: QuartTrio, service: Service, handler: FlowHandler, key: FlowPrivateKey
) -> None:
    assert service.profile.flows_path is not None

    @app.route(service.profile.flows_path, methods=["POST"], endpoint="flows_endpoint")
    @document_headers(SignatureHeaders)
    async def flows_endpoint() -> Response:
        """WhatsApp Flows data endpoint: an encrypted request in, an encrypted answer out."""
        body = await _read_body(MAX_FLOW_BYTES)
        answer = await handle_flow_request(
            body,
            request.headers.get("X-Hub-Signature-256"),
            private_key=key,
            app_secret=service.secrets.webhook_app_secret,
            handler=handler,
            logger=service.logger,
        )
        return Response(answer.body, status=answer.status, content_type=answer.content_type)


def _register_group_routes(
    app: QuartTrio, service: Service, prefix: str, require_bearer: Callable[[], None]
) -> None:
    def group(group_id: str) -> GroupClient:
        try:
            return GroupClient(service.client, group_id=_check_path_id(group_id))
        except GraphRequestValidationError:
            raise HttpError(400, "malformed_path", "The group id is not usable.") from None

    async def body_of(model: type[BaseModel]) -> Any:
        return parse_body(model, _parse_json(await _read_body(service.profile.max_body_bytes)))

    def page_args() -> dict[str, Any]:
        return {
            "limit": _query_int("limit", default=None, low=1, high=1000),
            "after": _query_text("after"),
            "before": _query_text("before"),
        }

    async def upstream(call: Callable[[], Awaitable[Any]]) -> Response:
        result = await service.graph_call("groups", call)
        return _json_response(dict(result.raw))

    @app.route(f"{prefix}/groups", methods=["GET"], endpoint="list_groups")
    @security_scheme(BEARER)
    @document_querystring(PageQuery)
    @document_response(GraphAnswer)
    async def list_groups() -> Response:
        """List groups of the business phone number."""
        require_bearer()
        args = page_args()
        return await upstream(lambda: service.phone.list_groups(**args))

    @app.route(f"{prefix}/groups", methods=["POST"], endpoint="create_group")
    @security_scheme(BEARER)
    @document_request(GroupCreateBody)
    @document_response(GraphAnswer)
    async def create_group() -> Response:
        """Create a group (asynchronous: the answer carries request_id)."""
        require_bearer()
        body = await body_of(GroupCreateBody)
        return await upstream(
            lambda: service.phone.create_group(
                subject=body.subject,
                description=body.description,
                join_approval_mode=body.joinApprovalMode,
            )
        )

    @app.route(f"{prefix}/groups/<group_id>", methods=["GET"], endpoint="get_group")
    @security_scheme(BEARER)
    @document_querystring(FieldsQuery)
    @document_response(GraphAnswer)
    async def get_group(group_id: str) -> Response:
        """Get one group."""
        require_bearer()
        client = group(group_id)
        fields = _query_text("fields")
        return await upstream(lambda: client.get_group(fields=fields))

    @app.route(f"{prefix}/groups/<group_id>", methods=["POST"], endpoint="update_group")
    @security_scheme(BEARER)
    @document_request(GroupUpdateBody)
    @document_response(GraphAnswer)
    async def update_group(group_id: str) -> Response:
        """Update a group's subject, description or join approval mode."""
        require_bearer()
        client = group(group_id)
        body = await body_of(GroupUpdateBody)
        return await upstream(
            lambda: client.update_group(
                subject=body.subject,
                description=body.description,
                join_approval_mode=body.joinApprovalMode,
            )
        )

    @app.route(f"{prefix}/groups/<group_id>", methods=["DELETE"], endpoint="delete_group")
    @security_scheme(BEARER)
    @document_response(GraphAnswer)
    async def delete_group(group_id: str) -> Response:
        """Delete a group."""
        require_bearer()
        client = group(group_id)
        return await upstream(client.delete_group)

    @app.route(
        f"{prefix}/groups/<group_id>/invite-link", methods=["GET"], endpoint="get_invite_link"
    )
    @security_scheme(BEARER)
    @document_response(GraphAnswer)
    async def get_invite_link(group_id: str) -> Response:
        """Get the group's invite link."""
        require_bearer()
        client = group(group_id)
        return await upstream(client.get_invite_link)

    @app.route(
        f"{prefix}/groups/<group_id>/invite-link", methods=["POST"], endpoint="reset_invite_link"
    )
    @security_scheme(BEARER)
    @document_response(GraphAnswer)
    async def reset_invite_link(group_id: str) -> Response:
        """Reset the invite link (POST, never DELETE): the previous link stops working."""
        require_bearer()
        client = group(group_id)
        return await upstream(client.reset_invite_link)

    @app.route(
        f"{prefix}/groups/<group_id>/participants",
        methods=["DELETE"],
        endpoint="remove_participants",
    )
    @security_scheme(BEARER)
    @document_request(RemoveParticipantsBody)
    @document_response(GraphAnswer)
    async def remove_participants(group_id: str) -> Response:
        """Remove up to 8 participants."""
        require_bearer()
        client = group(group_id)
        body = await body_of(RemoveParticipantsBody)
        return await upstream(lambda: client.remove_participants(wa_ids=list(body.waIds)))

    @app.route(
        f"{prefix}/groups/<group_id>/join-requests", methods=["GET"], endpoint="list_join_requests"
    )
    @security_scheme(BEARER)
    @document_querystring(PageQuery)
    @document_response(GraphAnswer)
    async def list_join_requests(group_id: str) -> Response:
        """List open join requests."""
        require_bearer()
        client = group(group_id)
        args = page_args()
        return await upstream(lambda: client.list_join_requests(**args))

    @app.route(
        f"{prefix}/groups/<group_id>/join-requests",
        methods=["POST"],
        endpoint="approve_join_requests",
    )
    @security_scheme(BEARER)
    @document_request(JoinRequestsBody)
    @document_response(GraphAnswer)
    async def approve_join_requests(group_id: str) -> Response:
        """Approve join requests."""
        require_bearer()
        client = group(group_id)
        body = await body_of(JoinRequestsBody)
        return await upstream(
            lambda: client.approve_join_requests(join_request_ids=list(body.joinRequestIds))
        )

    @app.route(
        f"{prefix}/groups/<group_id>/join-requests",
        methods=["DELETE"],
        endpoint="reject_join_requests",
    )
    @security_scheme(BEARER)
    @document_request(JoinRequestsBody)
    @document_response(GraphAnswer)
    async def reject_join_requests(group_id: str) -> Response:
        """Reject join requests (DELETE, never POST)."""
        require_bearer()
        client = group(group_id)
        body = await body_of(JoinRequestsBody)
        return await upstream(
            lambda: client.reject_join_requests(join_request_ids=list(body.joinRequestIds))
        )


# --- the lean front: metrics for every request, the webhook POST without Quart ----------


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


async def _send_reply(send: Send, reply: Reply) -> None:
    headers = [
        (b"content-type", reply.content_type.encode("latin-1")),
        (b"content-length", str(len(reply.body)).encode("latin-1")),
    ]
    headers += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers.items()]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body})


_LAST_SEND_SHIELD_SECONDS: Final = 10.0
"""How long a response's last send may run on after its request was cancelled."""


def _front(service: Service, quart_asgi: ASGIApp, routes: tuple[Route, ...]) -> ASGIApp:
    label = route_labeler(routes)
    webhook_path = service.profile.webhook_path
    limit = service.profile.max_body_bytes
    telemetry = service.telemetry
    too_large = error_reply(
        HttpError(413, "payload_too_large", "The request body is over the size limit.")
    )

    async def webhook(scope: Scope, receive: Receive, send: Send, declared: str | None) -> None:
        # ``declared`` is the Content-Length that ``front`` already read (one header scan less).
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await _send_reply(send, too_large)
            return
        bounded = BoundedBody(max_body_bytes=limit)
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away: nothing to answer
            try:
                bounded.feed(message.get("body", b""))
            except PayloadTooLargeError:
                await _send_reply(send, too_large)
                return
            more = bool(message.get("more_body", False))
        reply = await service.ingest_webhook(bounded.body(), _header(scope, b"x-hub-signature-256"))
        await _send_reply(send, reply)

    async def front(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await quart_asgi(scope, receive, send)
            return
        begin = time.perf_counter()
        status = 500
        declared = _header(scope, b"content-length")
        # A body is still unread until the server hands over its last chunk.
        body_pending = (declared is not None and declared != "0") or _header(
            scope, b"transfer-encoding"
        ) is not None

        async def receive_and_watch() -> Any:
            nonlocal body_pending
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_pending = False
            return message

        async def send_and_watch(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if body_pending:
                    # Answered before the body was read (413, 401, 405...): the rest of the
                    # body is still on the connection, so it cannot carry another request.
                    headers = [*message.get("headers", ()), (b"connection", b"close")]
                    message = {**message, "headers": headers}
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                # Inside this last send the server reports the stream closed, Quart-Trio
                # cancels the request's tasks at once, and the server would be cut off
                # before it recycles the connection and starts its keep-alive timer.
                # (The server shields its HTTP/1.1 writes itself; the bound covers HTTP/2
                # flow control, where a peer could otherwise hold the send open.)
                with trio.CancelScope(
                    shield=True, deadline=trio.current_time() + _LAST_SEND_SHIELD_SECONDS
                ):
                    await send(message)
                return
            await send(message)

        method = str(scope.get("method", "GET"))
        path = str(scope.get("path", ""))
        try:
            if method == "POST" and path == webhook_path:
                await webhook(scope, receive_and_watch, send_and_watch, declared)
            else:
                await quart_asgi(scope, receive_and_watch, send_and_watch)
        finally:
            telemetry.request(
                route=label(path),
                method=method,
                status=status,
                seconds=time.perf_counter() - begin,
            )

    return front


def openapi_document(app: QuartTrio, *, server_url: str | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``app``'s routes (no secret, no env reference inside)."""
    extension = app.extensions["QUART_SCHEMA"]
    schema: dict[str, Any] = json.loads(json.dumps(extension.openapi_provider.schema()))
    error = {
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    }
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault(
        "ErrorBody", ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    )
    schemas.update(
        ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}").get("$defs", {})
    )
    schemas["ErrorBody"].pop("$defs", None)
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            if not responses:
                responses["200"] = {"description": "Success."}
            for status, text in _ERROR_STATUSES.items():
                responses.setdefault(status, {"description": text, **error})
            for answer in responses.values():
                if not answer.get("description"):
                    answer["description"] = "Answer."
    if server_url is not None:
        schema["servers"] = [{"url": server_url}]
    return schema
