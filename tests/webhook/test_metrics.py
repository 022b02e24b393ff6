"""Metrics hooks: webhook_normalization_total{update_kind,outcome} in an injected registry."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest

from svc.webhook import METRIC_NAME, WebhookMetrics, clamp_update_kind, normalize

from .conftest import load


def value(registry: CollectorRegistry, kind: str, outcome: str) -> float:
    sample = registry.get_sample_value(METRIC_NAME, {"update_kind": kind, "outcome": outcome})
    return 0.0 if sample is None else sample


def test_observe_counts_updates_and_skips_by_kind() -> None:
    registry = CollectorRegistry()
    metrics = WebhookMetrics(registry)
    metrics.observe(normalize(load("batch_mixed.json")))
    metrics.observe(normalize(load("malformed_mixed.json")))
    assert value(registry, "message", "normalized") == 6  # two without timestamps among them
    assert value(registry, "status", "normalized") == 3
    assert value(registry, "groupLifecycle", "normalized") == 1
    assert value(registry, "history", "normalized") == 1
    assert value(registry, "message", "skipped") == 4
    assert value(registry, "unknown", "skipped") == 9  # skips of no known kind are clamped
    assert METRIC_NAME.encode() in generate_latest(registry)
    assert (
        REGISTRY.get_sample_value(METRIC_NAME, {"update_kind": "message", "outcome": "normalized"})
        is None
    )


def test_labels_are_clamped() -> None:
    registry = CollectorRegistry()
    metrics = WebhookMetrics(registry)
    metrics.record("16505551234", "normalized")
    metrics.record("message", "wamid.secret")
    metrics.record(None, "dispatched", count=3)
    metrics.record("status", "dispatched", count=0)
    text = generate_latest(registry).decode()
    assert "16505551234" not in text and "wamid" not in text
    assert value(registry, "unknown", "normalized") == 1
    assert value(registry, "message", "unknown") == 1
    assert value(registry, "unknown", "dispatched") == 3
    assert value(registry, "status", "dispatched") == 0
    assert clamp_update_kind("callConnect") == "callConnect"
    assert clamp_update_kind("callconnect") == "unknown"


class RecordingSink:
    def __init__(self) -> None:
        self.calls: list[tuple[str, float, dict[str, str]]] = []

    def increment_counter(self, name: str, value: float, attributes: Mapping[str, str]) -> None:
        self.calls.append((name, value, dict(attributes)))


class BrokenSink:
    def increment_counter(self, name: str, value: float, attributes: Mapping[str, str]) -> None:
        raise RuntimeError("sink down")


def test_sink_gets_the_spec_attribute_keys() -> None:
    sink = RecordingSink()
    WebhookMetrics(CollectorRegistry(), sink=sink).record("status", "normalized", 2)
    assert sink.calls == [
        (
            METRIC_NAME,
            2.0,
            {"svc.webhook.update_kind": "status", "svc.operation.outcome": "normalized"},
        )
    ]


def test_sink_failures_are_isolated(caplog: pytest.LogCaptureFixture) -> None:
    registry = CollectorRegistry()
    WebhookMetrics(registry, sink=BrokenSink()).record("status", "normalized")
    assert value(registry, "status", "normalized") == 1
    assert "RuntimeError" in caplog.text
    assert "sink down" not in caplog.text
