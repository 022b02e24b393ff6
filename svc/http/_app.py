"""``create_app``: the Quart-Trio ASGI application of the service, with every route of the spec.

The webhook POST is answered by the lean ASGI front (``_front``) before Quart;
every other route is a Quart view, registered here from its group's module.
Background work (the handler runtime, the outbox worker) runs in the app's own serving
nursery, so
``svc serve`` and a plain ``hypercorn --worker-class trio`` run the same app
the same way.
"""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

import httpx
from prometheus_client import CollectorRegistry
from quart import Response, request
from quart_schema import QuartSchema
from quart_trio import QuartTrio
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound, RequestEntityTooLarge

from svc._version import __version__
from svc.crypto import InboxKeyring
from svc.graph import GraphClient, GraphRequestValidationError
from svc.runtime import (
    HandlerOptions,
    HandlerRuntime,
    MemoryQueue,
    StoreQueue,
    TrioClock,
)
from svc.store import (
    OutboxReport,
    OutboxReporter,
    OutboxWorkerHandle,
    OutboxWorkerOptions,
    PersistenceStore,
    run_outbox_worker,
    utc_now,
)
from svc.webhook import DefaultFacade, FacadeFlags, WebhookFacade, WebhookMetrics

from ._access_log import AccessLog
from ._body import BodyGate
from ._broadcast_routes import BroadcastRuntime, register_broadcast_routes
from ._broadcast_sender import BroadcastOptions
from ._checks import CheckedArguments, check_arguments
from ._errors import (
    HttpError,
    ServiceError,
    bad_request,
    internal_error,
    method_not_allowed,
    not_found,
    payload_too_large,
)
from ._front import front
from ._group_routes import register_group_routes
from ._message_routes import register_message_routes
from ._numbers import build_numbers
from ._openapi import openapi_document as openapi_document
from ._operator_routes import SERVICE_NAME as SERVICE_NAME
from ._operator_routes import register_operator_routes
from ._options import BodyLimits, FlowsEndpoint, LogOptions
from ._profile import Profile, ServiceSecrets
from ._protocols import CryptoProvider, TelemetrySink
from ._replies import error_reply
from ._requests import BODY_GATE_KEY, configure_url_map, operator_gate, reply_response
from ._routes import Route, route_inventory
from ._service import Service
from ._telemetry import Telemetry
from ._webhook_routes import register_flows_route, register_webhook_routes

__all__ = ["SERVICE_NAME", "create_app", "openapi_document"]


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
    handler_options: HandlerOptions | None = None,
    inbox_keyring: InboxKeyring | None = None,
    outbox: OutboxWorkerOptions | None = None,
    broadcast_options: BroadcastOptions | None = None,
    flows: FlowsEndpoint | None = None,
    limits: BodyLimits | None = None,
    log: LogOptions | None = None,
    now: Callable[[], datetime] = utc_now,
) -> QuartTrio:
    """Build the service's ASGI app (a Quart-Trio app) from in-memory configuration.

    Reads no environment. Raises ``ServiceError`` with the spec's construction code when an
    argument is invalid. The first nine keywords are the spec's; the rest are typed option
    records. ``metrics_exposition`` replaces the text ``/metrics`` serves (the CLI's
    multi-worker mode aggregates across processes). The facade's updates run after the answer
    in the handler runtime (``handler_options``, a ``HandlerOptions``): with a
    store, sealed into the inbox under ``inbox_keyring`` (required when a facade is given, or
    the echo reply is on); without one, from a bounded in-memory queue.
    ``app.extensions["svc.handlers"]`` is that runtime (``await runtime.wait_idle()``). With a
    store, ``outbox`` starts the outbox worker (on the app's clock unless its options name
    another) and the paced broadcast sender runs (``broadcast_options``, a ``BroadcastOptions``,
    on the app's clock unless it names another), both in the app's serving nursery. ``flows`` serves
    the Flows data endpoint at ``profile.flows_path``; ``limits`` bounds request bodies;
    ``log`` says where the service logs.
    """
    checked = check_arguments(
        profile=profile,
        secrets=secrets,
        transport=transport,
        crypto_provider=crypto_provider,
        facade=facade,
        store=store,
        enable_group_routes=enable_group_routes,
        telemetry_sink=telemetry_sink,
        metrics_registry=metrics_registry,
        outbox=outbox,
        flows=flows,
        inbox_keyring=inbox_keyring,
        echo_reply=facade_flags is not None and facade_flags.echo_reply,
    )
    gate, handling, logging_to = _request_options(limits, log, handler_options)
    registry = metrics_registry if metrics_registry is not None else CollectorRegistry()
    service = _build_service(
        checked,
        transport=transport,
        crypto_provider=crypto_provider,
        facade=facade,
        facade_flags=facade_flags if facade_flags is not None else FacadeFlags(),
        telemetry_sink=telemetry_sink,
        registry=registry,
        now=now,
        log=logging_to,
        enable_group_routes=enable_group_routes,
    )
    _attach_runtime(service, handling, inbox_keyring, registry)
    outbox_run = None
    if outbox is not None and checked.store is not None:
        outbox_run = _outbox_run(outbox, registry, checked.store, service)
    broadcasts = BroadcastRuntime(_broadcast_run(broadcast_options, service))
    routes = route_inventory(checked.profile, enable_group_routes=enable_group_routes)
    app = _build_quart_app(
        service, routes, registry, metrics_exposition, outbox_run, gate, broadcasts
    )
    if flows is not None:
        register_flows_route(app, service, flows.handler, flows.private_key)
    return app


def _request_options(
    limits: BodyLimits | None,
    log: LogOptions | None,
    handler_options: HandlerOptions | None,
) -> tuple[BodyGate, HandlerOptions, LogOptions]:
    """The body gate, the handler options and the log options, checked (``ServiceError``
    when invalid)."""
    limits = BodyLimits() if limits is None else limits
    if not isinstance(limits, BodyLimits):
        raise ServiceError("invalid_config", "limits must be a BodyLimits.")
    if log is not None and not isinstance(log, LogOptions):
        raise ServiceError("invalid_config", "log must be a LogOptions.")
    try:
        gate = BodyGate(timeout=limits.body_read_timeout, max_pending=limits.max_pending_bodies)
    except (TypeError, ValueError) as exc:
        raise ServiceError("invalid_config", str(exc)) from None
    handling = HandlerOptions() if handler_options is None else handler_options
    if not isinstance(handling, HandlerOptions):
        raise ServiceError("invalid_config", "handler_options must be a HandlerOptions.")
    return gate, handling, LogOptions() if log is None else log


def _build_service(
    checked: CheckedArguments,
    *,
    transport: httpx.AsyncBaseTransport | None,
    crypto_provider: CryptoProvider | None,
    facade: WebhookFacade | None,
    facade_flags: FacadeFlags,
    telemetry_sink: TelemetrySink | None,
    registry: CollectorRegistry,
    now: Callable[[], datetime],
    log: LogOptions,
    enable_group_routes: bool,
) -> Service:
    """The ``Service`` the routes share: its Graph client, telemetry, webhook metrics, facade
    (the default one, with the echo reply if flagged, when none is given) and numbers."""
    profile, secrets, store = checked.profile, checked.secrets, checked.store
    logger = log.logger if log.logger is not None else logging.getLogger("svc.http")
    log_stream = log.log_stream if log.log_stream is not None else sys.stderr
    try:
        client = GraphClient(
            access_token=secrets.access_token,
            api_version=profile.api_version,
            base_url=profile.base_url,
            transport=transport,
        )
    except GraphRequestValidationError:
        raise ServiceError("invalid_secret", "access_token is not usable.") from None
    telemetry = Telemetry(
        registry,
        sink=telemetry_sink,
        logger=logger,
        log_stream=log_stream,
        adapter=store.backend if store is not None else None,
        phone_number_ids=(n.phone_number_id for n in profile.served_numbers),
        access_log=AccessLog(log_stream, logger) if log.access_log is True else None,
    )
    # The echo reply goes out through the handler context the runtime gives every run; the
    # event log is written by the service at ingest, for every update.
    service_facade: WebhookFacade = (
        facade
        if facade is not None
        else DefaultFacade.from_flags(
            FacadeFlags(echo_reply=facade_flags.echo_reply), logger=logger
        )
    )
    service = Service(
        profile=profile,
        secrets=secrets,
        client=client,
        store=store,
        facade=service_facade,
        crypto_provider=crypto_provider,
        telemetry=telemetry,
        webhook_metrics=WebhookMetrics(registry, sink=telemetry_sink, logger=logger),
        now=now,
        logger=logger,
        enable_group_routes=enable_group_routes,
        numbers=build_numbers(
            profile,
            secrets,
            client,
            lambda token: _number_client(token, profile, transport),
        ),
    )
    service.log_webhook_events = facade_flags.log_webhook_events
    return service


def _attach_runtime(
    service: Service,
    options: HandlerOptions,
    keyring: InboxKeyring | None,
    registry: CollectorRegistry,
) -> None:
    """The handler runtime of the service: over the store's inbox (with a keyring), or over
    the in-memory queue (no store)."""
    queue: MemoryQueue | StoreQueue
    now = service.now
    if service.store is None:
        now = TrioClock(service.now)  # in this process only: trio's clock orders it
        queue = MemoryQueue(
            capacity=options.queue_capacity,
            seen_window=options.seen_window,
            state_ttl=options.state_ttl,
        )
    elif keyring is not None:
        queue = StoreQueue(
            store=service.store,
            keyring=keyring,
            state_ttl=options.state_ttl,
            dead_horizon=options.dead_horizon,
            logger=service.logger,
        )
    else:
        return
    service.runtime = HandlerRuntime(
        queue=queue,
        facade=service.facade,
        context_for=service.handler_context,
        options=options,
        now=now,
        logger=service.logger,
        registry=registry,
    )


def _number_client(
    token: str, profile: Profile, transport: httpx.AsyncBaseTransport | None
) -> GraphClient:
    """The client of a business number with its own access token."""
    try:
        return GraphClient(
            access_token=token,
            api_version=profile.api_version,
            base_url=profile.base_url,
            transport=transport,
        )
    except GraphRequestValidationError:
        raise ServiceError(
            "invalid_secret", "phone_number_tokens holds an unusable token."
        ) from None


def _outbox_run(
    options: OutboxWorkerOptions,
    registry: CollectorRegistry,
    store: PersistenceStore,
    service: Service,
) -> OutboxWorkerOptions:
    """The outbox worker's options as the app runs them: its reports counted in the app's
    metrics and telemetry (after the caller's own ``on_report`` / ``on_error``), its failed
    ticks logged by class, and the app's clock unless the options name another."""
    reporter = OutboxReporter(registry, adapter=store.backend)
    given_report, given_error = options.on_report, options.on_error

    def on_report(report: OutboxReport) -> None:
        if given_report is not None:
            given_report(report)
        reporter(report)
        service.telemetry.outbox_processed(succeeded=report.succeeded, failed=report.failed)

    def on_error(exc: Exception) -> None:
        if given_error is not None:
            given_error(exc)
        service.logger.warning("outbox worker tick failed error=%s", type(exc).__name__[:80])

    return replace(_on_app_clock(options, service), on_report=on_report, on_error=on_error)


def _broadcast_run(options: BroadcastOptions | None, service: Service) -> BroadcastOptions:
    """The broadcast sender's options as the app runs them: the defaults when none, on the
    app's clock unless they name another (``ServiceError`` when not a ``BroadcastOptions``)."""
    if options is None:
        options = BroadcastOptions()
    if not isinstance(options, BroadcastOptions):
        raise ServiceError("invalid_config", "broadcast_options must be a BroadcastOptions.")
    return _on_app_clock(options, service)


_Clocked = TypeVar("_Clocked", OutboxWorkerOptions, BroadcastOptions)


def _on_app_clock(options: _Clocked, service: Service) -> _Clocked:
    """``options`` on the app's clock when they keep the default one (``utc_now``)."""
    return replace(options, now=service.now) if options.now is utc_now else options


def _build_quart_app(
    service: Service,
    routes: tuple[Route, ...],
    registry: CollectorRegistry,
    metrics_exposition: Callable[[], bytes] | None,
    outbox: OutboxWorkerOptions | None,
    gate: BodyGate,
    broadcasts: BroadcastRuntime,
) -> QuartTrio:
    """The Quart app: configuration, lifespan, error answers, the route table, the front."""
    app = QuartTrio(SERVICE_NAME, static_folder=None)
    configure_url_map(app.url_map)
    app.config.update(
        MAX_CONTENT_LENGTH=service.profile.max_body_bytes,
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
    app.extensions["svc.handlers"] = service.runtime
    app.extensions["svc.routes"] = routes
    app.extensions[BODY_GATE_KEY] = gate
    _register_lifespan(app, service, outbox, broadcasts)
    _register_error_answers(app, service, routes)
    # Registration order is the order of the OpenAPI document's paths.
    register_operator_routes(app, service, routes, registry, metrics_exposition)
    register_webhook_routes(app, service)
    register_message_routes(app, service)
    register_broadcast_routes(app, service, broadcasts)
    if service.enable_group_routes:
        register_group_routes(app, service)
    quart_asgi = app.asgi_app
    app.asgi_app = front(service, quart_asgi, routes, gate)  # type: ignore[method-assign,assignment]
    return app


def _register_lifespan(
    app: QuartTrio,
    service: Service,
    outbox: OutboxWorkerOptions | None,
    broadcasts: BroadcastRuntime,
) -> None:
    """The outbox worker and the broadcast sender live in the app's serving nursery; the
    Graph client closes after them. While the app serves, what existed when it started
    (modules, the app, its routes and schemas) is frozen out of the cyclic garbage
    collector's full passes, whose pause otherwise grows with all of it (docs/decisions.md);
    the app gives them back at its stop only if nothing was frozen before it started (a host
    process's own freeze, or another app's still serving, stays)."""
    handle: list[OutboxWorkerHandle] = []
    thaw_at_stop = False

    @app.before_serving
    async def _start_background() -> None:
        if service.runtime is not None:
            await app.nursery.start(service.runtime.run)
        if outbox is not None and service.store is not None:
            handle.append(await app.nursery.start(run_outbox_worker, service.store, outbox))
        await broadcasts.start(app.nursery, service)
        nonlocal thaw_at_stop
        thaw_at_stop = gc.get_freeze_count() == 0
        gc.freeze()

    @app.after_serving
    async def _stop_background() -> None:
        if thaw_at_stop:
            gc.unfreeze()
        if service.runtime is not None:
            await service.runtime.stop()
        while handle:
            await handle.pop().stop()
        await broadcasts.stop()
        await service.numbers.aclose()
        await service.client.aclose()


def _register_error_answers(app: QuartTrio, service: Service, routes: tuple[Route, ...]) -> None:
    """Every refusal, framework-raised or ours, answered as the spec's JSON error body."""
    hidden = frozenset(route.path for route in routes if route.auth == "bearer-hidden")
    token = service.secrets.service_bearer_token.encode("utf-8")

    @app.errorhandler(HttpError)
    async def _http_error(error: HttpError) -> Response:
        return reply_response(error_reply(error))

    @app.errorhandler(NotFound)
    async def _not_found(_: NotFound) -> Response:
        return reply_response(error_reply(not_found()))

    @app.errorhandler(MethodNotAllowed)
    async def _not_allowed(error: MethodNotAllowed) -> Response:
        # A method no hidden route lists (TRACE, any token): the hidden routes' own gate.
        if request.path in hidden and (gated := operator_gate(token)) is not None:
            return gated
        return reply_response(error_reply(method_not_allowed(sorted(error.valid_methods or ()))))

    @app.errorhandler(RequestEntityTooLarge)
    async def _too_large(_: RequestEntityTooLarge) -> Response:
        return reply_response(error_reply(payload_too_large()))

    @app.errorhandler(HTTPException)
    async def _other_http(error: HTTPException) -> Response:
        return reply_response(error_reply(bad_request(error.code or 400)))

    @app.errorhandler(Exception)
    async def _unexpected(error: Exception) -> Response:
        service.recent_errors.add(error)
        service.logger.error("unhandled error in a route error=%s", type(error).__name__[:80])
        return reply_response(error_reply(internal_error()))
