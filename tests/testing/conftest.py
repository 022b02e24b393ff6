"""The kit's tests run each scenario in both modes: the in-memory queue and a SQLite store."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["memory", "sqlite"])
def mode(request: pytest.FixtureRequest) -> str:
    """The handler runtime's mode of the ``BotTest`` under test."""
    mode: str = request.param
    return mode
