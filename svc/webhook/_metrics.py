"""Metrics hooks of the webhook layer: ``webhook_normalization_total{update_kind,outcome}``.

Labels are clamped to known values (``unknown`` otherwise), so a payload can
never mint a label value: no phone number, id or text reaches the registry.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final, Protocol

from prometheus_client import CollectorRegistry, Counter

from ._updates import UPDATE_KINDS, NormalizationResult

__all__ = [
    "METRIC_NAME",
    "OUTCOMES",
    "TelemetrySink",
    "WebhookMetrics",
    "clamp_update_kind",
]

METRIC_NAME: Final = "webhook_normalization_total"
OUTCOMES: Final = frozenset(
    {
        "normalized",
        "skipped",
        "dispatched",
        "recorded",
        "duplicate",
        "handler_error",
        "foreign_number",
        "unknown",
    }
)
ATTR_UPDATE_KIND: Final = "svc.webhook.update_kind"
ATTR_OUTCOME: Final = "svc.operation.outcome"
_KINDS: Final = frozenset(UPDATE_KINDS)


class TelemetrySink(Protocol):
    """The counter method of a telemetry sink (the HTTP layer's ``telemetry_sink``)."""

    def increment_counter(
        self, name: str, value: float, attributes: Mapping[str, str]
    ) -> object: ...


def clamp_update_kind(kind: str | None) -> str:
    """``kind`` when it is one of ``UPDATE_KINDS``, else ``unknown``."""
    return kind if kind is not None and kind in _KINDS else "unknown"


class WebhookMetrics:
    """Counts normalization outcomes per update kind in the registry it is given.

    The registry is always passed in (never the process-global one); a sink,
    when given, receives the same increments with the spec's attribute keys,
    and a sink failure is logged by class and never propagates.
    """

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        sink: TelemetrySink | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self._counter = Counter(
            METRIC_NAME,
            "Webhook updates by normalized kind and outcome.",
            ("update_kind", "outcome"),
            registry=registry,
        )
        self._sink = sink
        self._logger = logger if logger is not None else logging.getLogger("svc.webhook")
        # Labelled children by (kind, outcome): both are clamped, so at most 14 x 6 entries,
        # and a dict lookup is far cheaper than prometheus-client's labels() on the hot path.
        self._children: dict[tuple[str, str], Any] = {}

    def record(self, update_kind: str | None, outcome: str, count: int = 1) -> None:
        """Add ``count`` to ``{update_kind, outcome}``, both clamped to known values."""
        if count <= 0:
            return
        kind = clamp_update_kind(update_kind)
        outcome = outcome if outcome in OUTCOMES else "unknown"
        child = self._children.get((kind, outcome))
        if child is None:
            child = self._counter.labels(update_kind=kind, outcome=outcome)
            self._children[(kind, outcome)] = child
        child.inc(count)
        if self._sink is not None:
            try:
                self._sink.increment_counter(
                    METRIC_NAME, float(count), {ATTR_UPDATE_KIND: kind, ATTR_OUTCOME: outcome}
                )
            except Exception as exc:  # noqa: BLE001 - a sink never breaks ingestion
                self._logger.warning("telemetry sink failed error=%s", type(exc).__name__[:80])

    def observe(self, result: NormalizationResult) -> None:
        """Count every update as ``normalized`` and every skip as ``skipped`` (by its kind)."""
        # Per kind, in order of first appearance: updates first, then skips (one record each).
        normalized: dict[str, int] = {}
        for update in result.updates:
            kind = update.kind
            normalized[kind] = normalized.get(kind, 0) + 1
        for update_kind, count in normalized.items():
            self.record(update_kind, "normalized", count)
        if result.skipped:
            skipped: dict[str | None, int] = {}
            for skip in result.skipped:
                skipped[skip.kind] = skipped.get(skip.kind, 0) + skip.count
            for skip_kind, count in skipped.items():
                self.record(skip_kind, "skipped", count)
