"""Fixtures every suite may use; the helpers behind them live in ``tests/_support``."""

from __future__ import annotations

import os
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


POSTGRES_ENV = "SVC_TEST_POSTGRES_URL"


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The shared PostgreSQL server's URL; skips when unset, fails when set but unreachable."""
    import psycopg

    url = os.environ.get(POSTGRES_ENV, "")
    if not url:
        pytest.skip(f"{POSTGRES_ENV} is not set; the PostgreSQL tests need a server")
    try:
        psycopg.connect(url, connect_timeout=5).close()
    except psycopg.Error as exc:
        raise RuntimeError(
            f"{POSTGRES_ENV} is set but the server is unreachable ({type(exc).__name__})"
        ) from None
    return url
