"""Metrics families of the service, the telemetry sink fan-out, and the upstream-failure log line.

One ``Telemetry`` per app registers the spec's families in the app's own
registry (never the process-global one). Every label is clamped to a known
value, so a request can never mint a label: no phone number, id, text or token.
A sink (``telemetry_sink``) receives the same counters and histograms with the
spec's attribute keys; a sink that raises is isolated and logged by class.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, Final, TextIO

from prometheus_client import CollectorRegistry, Counter, Histogram

from svc.graph import GraphApiError, GraphError, GraphNetworkError
from svc.store import format_timestamp

from ._access_log import AccessLog
from ._protocols import TelemetrySink

__all__ = [
    "ENDPOINT_FAMILIES",
    "GRAPH_OUTCOMES",
    "SEND_OUTCOMES",
    "Telemetry",
    "clamp_method",
    "status_class",
]

ENDPOINT_FAMILIES: Final = frozenset({"messages", "groups", "media", "unknown"})
GRAPH_OUTCOMES: Final = frozenset({"success", "error"})
SEND_OUTCOMES: Final = frozenset(
    {"sent", "failed", "replayed", "conflict", "pending", "degraded", "rejected", "unknown"}
)
PERSISTENCE_OUTCOMES: Final = frozenset({"ok", "error"})
NUMBER_UPDATE_OUTCOMES: Final = frozenset({"dispatched", "recorded", "duplicate", "foreign_number"})
NO_NUMBER: Final = "none"
OTHER_NUMBER: Final = "other"
_METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_TYPE_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.")
_TRACE_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def status_class(status: int) -> str:
    """``2xx`` .. ``5xx`` (``unknown`` outside 100..599)."""
    return f"{status // 100}xx" if 100 <= status <= 599 else "unknown"


def clamp_method(method: str) -> str:
    """The request method when it is a standard one, else ``other``."""
    return method if method in _METHODS else "other"


def _clamp(value: str, known: frozenset[str]) -> str:
    return value if value in known else "unknown"


def safe_upstream_type(value: object) -> str | None:
    """The upstream error type (``OAuthException``) when it is a short identifier."""
    if isinstance(value, str) and 0 < len(value) <= 64 and set(value) <= _TYPE_CHARS:
        return value
    return None


def safe_trace_id(value: object) -> str | None:
    """The upstream ``fbtrace_id`` when it is a short opaque token."""
    if isinstance(value, str) and 0 < len(value) <= 64 and set(value) <= _TRACE_CHARS:
        return value
    return None


def upstream_fields(error: GraphError) -> dict[str, object]:
    """Sanitized ``upstreamCode/Subcode/Type/TraceId`` of a failure, each present when known."""
    fields: dict[str, object] = {}
    if isinstance(error, GraphApiError):
        if isinstance(error.code, int) and not isinstance(error.code, bool):
            fields["upstreamCode"] = error.code
        if isinstance(error.error_subcode, int) and not isinstance(error.error_subcode, bool):
            fields["upstreamSubcode"] = error.error_subcode
        upstream_type = safe_upstream_type(error.type)
        if upstream_type is not None:
            fields["upstreamType"] = upstream_type
        trace = safe_trace_id(error.fbtrace_id)
        if trace is not None:
            fields["upstreamTraceId"] = trace
    return fields


class Telemetry:
    """The app's metric families plus the sink fan-out and the ``svc.graph.failure`` line."""

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        sink: TelemetrySink | None,
        logger: logging.Logger,
        log_stream: TextIO,
        adapter: str | None,
        phone_number_ids: Iterable[str] = (),
        access_log: AccessLog | None = None,
    ) -> None:
        self.registry = registry
        self._numbers = frozenset(phone_number_ids)
        self._access_log = access_log
        self._sink = sink
        self._logger = logger
        self._log_stream = log_stream
        self._adapter = adapter if adapter in ("sqlite", "postgres") else "unknown"
        self._requests = Counter(
            "http_requests_total",
            "HTTP requests by templated route, method and status class.",
            ("route", "method", "status_class"),
            registry=registry,
        )
        self._duration = Histogram(
            "http_request_duration_seconds",
            "HTTP request duration by templated route and status class.",
            ("route", "status_class"),
            registry=registry,
        )
        self._graph = Counter(
            "graph_operations_total",
            "Upstream Graph API calls by endpoint family, status class and outcome.",
            ("endpoint_family", "status_class", "outcome"),
            registry=registry,
        )
        self._sends = Counter(
            "send_outcomes_total",
            "Send route outcomes by endpoint family.",
            ("endpoint_family", "outcome"),
            registry=registry,
        )
        # The business number as a label: a configured id, "none" or "other" (never a user's id).
        self._number_updates = Counter(
            "webhook_number_updates_total",
            "Webhook updates by business phone number and outcome.",
            ("phone_number_id", "outcome"),
            registry=registry,
        )
        self._number_sends = Counter(
            "send_number_outcomes_total",
            "Send route outcomes by business phone number.",
            ("phone_number_id", "outcome"),
            registry=registry,
        )
        self._number_children: dict[tuple[str, str], Any] = {}
        self._request_children: dict[tuple[str, str, str], tuple[Any, Any]] = {}
        self._persistence: Counter | None = None
        self._persistence_children: dict[str, Any] = {}
        if adapter is not None:
            self._persistence = Counter(
                "persistence_operations_total",
                "Store calls made by the service, by adapter and outcome.",
                ("adapter", "outcome"),
                registry=registry,
            )

    # --- sink fan-out -----------------------------------------------------------------

    def _sink_counter(self, name: str, value: float, attributes: Mapping[str, str]) -> None:
        if self._sink is not None:
            self._to_sink(self._sink.increment_counter, name, value, attributes)

    def _sink_histogram(self, name: str, value: float, attributes: Mapping[str, str]) -> None:
        if self._sink is not None:
            self._to_sink(self._sink.record_histogram, name, value, attributes)

    def _to_sink(
        self,
        method: Callable[[str, float, Mapping[str, str]], object],
        name: str,
        value: float,
        attributes: Mapping[str, str],
    ) -> None:
        try:
            method(name, value, attributes)
        except Exception as exc:  # noqa: BLE001 - a sink never breaks a request
            self._logger.warning("telemetry sink failed error=%s", type(exc).__name__[:80])

    # --- families ---------------------------------------------------------------------

    def request(self, *, route: str, method: str, status: int, seconds: float) -> None:
        """One answered HTTP request (``route`` is already templated)."""
        method = clamp_method(method)
        klass = status_class(status)
        key = (route, method, klass)
        children = self._request_children.get(key)
        if children is None:
            # Labels are templated and clamped, so this cache is bounded by the route table.
            children = (
                self._requests.labels(route=route, method=method, status_class=klass),
                self._duration.labels(route=route, status_class=klass),
            )
            self._request_children[key] = children
        children[0].inc()
        children[1].observe(seconds)
        if self._access_log is not None:
            self._access_log.record(method=method, route=route, status=status, seconds=seconds)
        if self._sink is None:
            return
        attributes = {
            "http.route": route,
            "http.request.method": method,
            "http.status_code": str(status),
            "http.response.status.class": klass,
        }
        self._sink_counter("http_requests_total", 1.0, attributes)
        self._sink_histogram("http_request_duration_seconds", seconds, attributes)

    def graph_call(self, *, family: str, status: int | None, outcome: str) -> None:
        """One upstream call; ``status`` is None when no upstream answer arrived."""
        family = _clamp(family, ENDPOINT_FAMILIES)
        outcome = _clamp(outcome, GRAPH_OUTCOMES)
        klass = status_class(status) if status is not None else "unknown"
        self._graph.labels(endpoint_family=family, status_class=klass, outcome=outcome).inc()
        self._sink_counter(
            "graph_operations_total",
            1.0,
            {
                "svc.graph.endpoint_family": family,
                "http.status_code": str(status) if status is not None else "none",
                "http.response.status.class": klass,
                "svc.operation.outcome": outcome,
            },
        )

    def number_label(self, phone_number_id: str | None) -> str:
        """A configured business number id, ``none`` (no number) or ``other`` (not served)."""
        if phone_number_id is None:
            return NO_NUMBER
        return phone_number_id if phone_number_id in self._numbers else OTHER_NUMBER

    def send(self, *, family: str, outcome: str, phone_number_id: str | None = None) -> None:
        """One send-route outcome; with the number that sent it, also counted by number."""
        family = _clamp(family, ENDPOINT_FAMILIES)
        outcome = _clamp(outcome, SEND_OUTCOMES)
        self._sends.labels(endpoint_family=family, outcome=outcome).inc()
        self._sink_counter(
            "send_outcomes_total",
            1.0,
            {"svc.graph.endpoint_family": family, "svc.operation.outcome": outcome},
        )
        if phone_number_id is not None:
            number = self.number_label(phone_number_id)
            self._number_sends.labels(phone_number_id=number, outcome=outcome).inc()
            self._sink_counter(
                "send_number_outcomes_total",
                1.0,
                {"svc.phone_number_id": number, "svc.operation.outcome": outcome},
            )

    def webhook_updates(self, *, phone_number_id: str | None, outcome: str, count: int) -> None:
        """``count`` webhook updates of one business number (``None``: none or not served)."""
        if count <= 0:
            return
        number = self.number_label(phone_number_id)
        if outcome == "foreign_number":
            number = OTHER_NUMBER
        outcome = _clamp(outcome, NUMBER_UPDATE_OUTCOMES)
        child = self._number_children.get((number, outcome))
        if child is None:
            # Both labels are clamped (configured ids), so this cache stays bounded.
            child = self._number_updates.labels(phone_number_id=number, outcome=outcome)
            self._number_children[(number, outcome)] = child
        child.inc(count)
        self._sink_counter(
            "webhook_number_updates_total",
            float(count),
            {"svc.phone_number_id": number, "svc.operation.outcome": outcome},
        )

    def persistence(self, *, ok: bool) -> None:
        """One store call made by the service."""
        if self._persistence is None:
            return
        outcome = "ok" if ok else "error"
        child = self._persistence_children.get(outcome)
        if child is None:
            child = self._persistence.labels(adapter=self._adapter, outcome=outcome)
            self._persistence_children[outcome] = child
        child.inc()
        if self._sink is None:
            return
        self._sink_counter(
            "persistence_operations_total",
            1.0,
            {"svc.persistence.adapter": self._adapter, "svc.operation.outcome": outcome},
        )

    def outbox_processed(self, *, succeeded: int, failed: int) -> None:
        """Forward an outbox tick's counts to the sink (the store's reporter fills the registry)."""
        for outcome, count in (("success", succeeded), ("error", failed)):
            if count > 0:
                self._sink_counter(
                    "outbox_processed_total", float(count), {"svc.operation.outcome": outcome}
                )

    def graph_failure(self, error: GraphError, *, at: datetime) -> None:
        """Write the one-line ``svc.graph.failure`` JSON record (sanitized ids only)."""
        fields = upstream_fields(error)
        record: dict[str, object] = {
            "level": "warn",
            "event": "svc.graph.failure",
            "upstreamCode": fields.get("upstreamCode"),
            "upstreamSubcode": fields.get("upstreamSubcode"),
            "upstreamType": fields.get("upstreamType"),
            "upstreamTraceId": fields.get("upstreamTraceId"),
            "network": isinstance(error, GraphNetworkError),
            "at": format_timestamp(at),
        }
        try:
            self._log_stream.write(json.dumps(record, separators=(",", ":")) + "\n")
            self._log_stream.flush()
        except (OSError, ValueError):
            self._logger.warning("could not write the svc.graph.failure line")
