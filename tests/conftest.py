"""Fixtures every suite may use; the helpers behind them live in ``tests/_support``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests._support import ServeProcess


@pytest.fixture
def serving() -> Iterator[list[ServeProcess]]:
    """Processes started by a test; any still running at the end is killed and its pipes closed."""
    started: list[ServeProcess] = []
    yield started
    for served in started:
        served.close()
