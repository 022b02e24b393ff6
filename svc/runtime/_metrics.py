"""The runtime's metrics, published to a caller-owned prometheus registry (never the global
one); no user data in any label."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from svc.store import InboxStatistics

from ._events import RunOutcome

__all__ = ["RuntimeReporter"]


class RuntimeReporter:
    """``svc_handler_runs_total{outcome}`` and ``svc_handler_duration_seconds`` per run;
    ``svc_inbox_items{state}`` and ``svc_inbox_oldest_pending_seconds`` from a snapshot."""

    __slots__ = ("_by_outcome", "_duration", "_items", "_now", "_oldest", "_runs")

    def __init__(self, registry: CollectorRegistry, *, now: Callable[[], datetime]) -> None:
        self._now = now
        self._items = Gauge(
            "svc_inbox_items", "Inbox items by state.", labelnames=("state",), registry=registry
        )
        self._oldest = Gauge(
            "svc_inbox_oldest_pending_seconds",
            "Age of the oldest inbox item not yet run to its end (0 when none).",
            registry=registry,
        )
        self._duration = Histogram(
            "svc_handler_duration_seconds", "Handler run time.", registry=registry
        )
        self._runs = Counter(
            "svc_handler_runs",
            "Handler runs, by outcome.",
            labelnames=("outcome",),
            registry=registry,
        )
        for state in ("pending", "running", "dead"):
            self._items.labels(state=state).set(0)
        self._by_outcome: Final = {
            outcome: self._runs.labels(outcome=outcome)
            for outcome in ("success", "error", "timeout", "dead")
        }

    def run(self, outcome: RunOutcome, seconds: float) -> None:
        """Count one finished run."""
        self._by_outcome[outcome].inc()
        self._duration.observe(seconds)

    def refresh(self, statistics: InboxStatistics) -> None:
        """Set the gauges from a snapshot."""
        self._items.labels(state="pending").set(statistics.pending)
        self._items.labels(state="running").set(statistics.running)
        self._items.labels(state="dead").set(statistics.dead)
        oldest = statistics.oldest_pending_at
        age = 0.0 if oldest is None else (self._now() - oldest).total_seconds()
        self._oldest.set(max(age, 0.0))
