"""The operator routes: liveness, readiness, the hidden bearer routes, the OpenAPI document.

The hidden routes answer the catch-all 404 without the bearer, so an
unauthenticated caller cannot tell they exist; their bodies hold names,
counts and flags, never a secret or a location.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from prometheus_client import CollectorRegistry, generate_latest
from quart import Response
from quart_schema import document_response, hide
from quart_trio import QuartTrio

from svc._version import __version__
from svc.store import SCHEMA_VERSION, PersistenceHealth, PersistenceStore

from ._errors import persistence_unavailable
from ._models import DiagnosticsOut, ErrorBody, Health, StatusOut
from ._openapi import document_bearer_route, openapi_document
from ._requests import json_response, operator_gate
from ._routes import Route
from ._service import Service

__all__ = ["SERVICE_NAME", "register_operator_routes"]

SERVICE_NAME: Final = "svc"
RUNTIME: Final = "python-trio"
METRICS_CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
ALL_METHODS: Final = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
"""The hidden routes take every method, so a wrong one is refused only after the bearer."""


def register_operator_routes(
    app: QuartTrio,
    service: Service,
    routes: tuple[Route, ...],
    registry: CollectorRegistry,
    metrics_exposition: Callable[[], bytes] | None,
) -> None:
    """Add health, readiness, ``/status``, ``/metrics``, diagnostics and ``/openapi.json``."""
    snapshot = _Snapshot.of(service, routes)
    _register_probes(app, service)
    _register_status(app, snapshot)
    _register_metrics(app, snapshot.token, registry, metrics_exposition)
    _register_diagnostics(app, snapshot, registry)

    @app.route("/openapi.json", methods=["GET"])
    @hide
    async def openapi() -> Response:
        """The OpenAPI 3.1 document."""
        return json_response(openapi_document(app))


@dataclass(frozen=True, slots=True, kw_only=True)
class _Snapshot:
    """What ``/status`` and diagnostics report, fixed at construction like the flags, and the
    bearer that shows them."""

    service: Service
    token: bytes
    started: float
    """``time.monotonic()`` at construction: the uptime's origin."""
    service_mode: str
    """One of the spec's four serviceMode values."""
    route_lines: list[str]
    feature_flags: dict[str, bool]

    @classmethod
    def of(cls, service: Service, routes: tuple[Route, ...]) -> _Snapshot:
        started = time.monotonic()
        modes = (
            ("webhook", True),
            ("persistence", service.store is not None),
            ("groups", service.enable_group_routes),
        )
        return cls(
            service=service,
            token=service.secrets.service_bearer_token.encode("utf-8"),
            started=started,
            service_mode="+".join(part for part, on in modes if on),
            route_lines=[line for route in routes for line in route.lines()],
            feature_flags={
                "groupRoutes": service.enable_group_routes,
                "persistence": service.store is not None,
            },
        )

    async def persistence(self) -> dict[str, object] | None:
        """The store's health, its location redacted; None without a store."""
        store = self.service.store
        if store is None:
            return None
        health = await _store_health(store)
        backend = health.backend if health.backend in ("sqlite", "postgres") else "unknown"
        return {
            "ok": health.ok,
            "backend": backend,
            "currentVersion": health.current_version,
            "redactedLocation": health.redacted_location,
        }


async def _store_health(store: PersistenceStore) -> PersistenceHealth:
    """The store's health; a store whose check raises (the contract says it never does for a
    backend fault) reads as down, so a probe answers 503, never 500."""
    try:
        return await store.health()
    except Exception:  # noqa: BLE001 -- any failure of the check is a store not ready
        return PersistenceHealth(
            ok=False, backend="unknown", current_version=None, redacted_location=""
        )


def _register_probes(app: QuartTrio, service: Service) -> None:
    """``/healthz`` and ``/readyz``: open routes, no bearer."""

    @app.route("/healthz", methods=["GET"])
    @document_response(Health)
    async def healthz() -> Response:
        """Process liveness."""
        return json_response({"ok": True, "service": SERVICE_NAME})

    @app.route("/readyz", methods=["GET"])
    @document_response(Health)
    @document_response(ErrorBody, 503)
    async def readyz() -> Response:
        """Readiness: the store (when configured) is healthy and at the current schema version."""
        if service.store is not None:
            health = await _store_health(service.store)
            if not health.ok or health.current_version != SCHEMA_VERSION:
                raise persistence_unavailable()
        return json_response({"ok": True, "service": SERVICE_NAME})


def _register_status(app: QuartTrio, snapshot: _Snapshot) -> None:
    """``/status``: hidden without the bearer."""

    @app.route("/status", methods=ALL_METHODS, provide_automatic_options=False)
    @document_bearer_route(StatusOut)
    async def status() -> Response:
        """Operator status snapshot."""
        if (hidden := operator_gate(snapshot.token)) is not None:
            return hidden
        return json_response(
            {
                "version": __version__,
                "uptimeSeconds": round(time.monotonic() - snapshot.started, 3),
                "graphApiVersion": snapshot.service.profile.api_version,
                "serviceMode": snapshot.service_mode,
                "routes": snapshot.route_lines,
                "featureFlags": snapshot.feature_flags,
                "persistence": await snapshot.persistence(),
            }
        )


def _register_metrics(
    app: QuartTrio,
    token: bytes,
    registry: CollectorRegistry,
    metrics_exposition: Callable[[], bytes] | None,
) -> None:
    """``/metrics``: hidden without the bearer; ``metrics_exposition`` replaces the registry's
    text when given."""

    @app.route("/metrics", methods=ALL_METHODS, provide_automatic_options=False)
    @document_bearer_route()
    async def metrics() -> Response:
        """Prometheus text exposition (version 0.0.4)."""
        if (hidden := operator_gate(token)) is not None:
            return hidden
        text = metrics_exposition() if metrics_exposition is not None else generate_latest(registry)
        return Response(text, status=200, content_type=METRICS_CONTENT_TYPE)


def _register_diagnostics(app: QuartTrio, snapshot: _Snapshot, registry: CollectorRegistry) -> None:
    """``/debug/diagnostics``: hidden without the bearer."""
    service = snapshot.service

    @app.route("/debug/diagnostics", methods=ALL_METHODS, provide_automatic_options=False)
    @document_bearer_route(DiagnosticsOut)
    async def diagnostics() -> Response:
        """Diagnostics snapshot: names, counts and flags only."""
        if (hidden := operator_gate(snapshot.token)) is not None:
            return hidden
        families = sorted({metric.name for metric in registry.collect()})
        return json_response(
            {
                "service": SERVICE_NAME,
                "version": __version__,
                "graphApiVersion": service.profile.api_version,
                "serviceMode": snapshot.service_mode,
                "runtime": RUNTIME,
                "routes": snapshot.route_lines,
                "featureFlags": snapshot.feature_flags,
                "persistence": await snapshot.persistence(),
                "metricFamilies": families,
                "recentErrors": service.recent_errors.snapshot(),
                "configShape": _config_shape(service),
            }
        )


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
        # Every leaf redacted, set or not: a null would itself say which fields are unset.
        "persistence": redacted,
        "enableGroupRoutes": redacted,
        "telemetrySink": redacted,
        "metricsRegistry": redacted,
    }
