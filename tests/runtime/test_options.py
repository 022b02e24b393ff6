"""``HandlerOptions``: one frozen record for both modes, refused when out of range."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from svc.runtime import DEFAULT_LEASE, DEFAULT_SEEN_WINDOW, HandlerOptions


@pytest.mark.parametrize(
    "options",
    [
        {"concurrency": 0},
        {"concurrency": True},
        {"timeout": 0},
        {"max_attempts": -1},
        {"max_waiting": -1},
        {"max_waiting": 100_001},
        {"max_waiting": True},
        {"max_waiting": 1.5},
        {"retry_delay": float("nan")},
        {"poll_interval": -1},
        {"poll_interval": 0},
        {"lease": 0.02},
        {"lease": -1},
        {"lease": float("inf")},
        {"lease": True},
        {"seen_window": 0},
        {"seen_window": True},
        {"seen_window": 1.5},
        {"queue_capacity": 0},
        {"dead_horizon": timedelta(0)},
        {"state_ttl": 30},
        {"observer": "print"},
        {"after_run": 1},
    ],
)
def test_options_out_of_range_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        HandlerOptions(**options)


def test_the_defaults() -> None:
    defaults = HandlerOptions()
    assert (defaults.lease, defaults.seen_window, defaults.observer) == (
        DEFAULT_LEASE,
        DEFAULT_SEEN_WINDOW,
        None,
    )
    with pytest.raises(TypeError):
        HandlerOptions(x=1)  # type: ignore[call-arg]
