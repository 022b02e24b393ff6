"""psycopg is an extra: without it ``svc.store``, ``svc.http`` and SQLite work, PostgreSQL refuses.

The check runs in a fresh interpreter where importing psycopg or psycopg_pool
fails (``sys.modules[name] = None``), as on a plain ``pip install -e .``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from svc.store import SCHEMA_VERSION, PostgresStore
from svc.store.postgres._store import MISSING_EXTRA_MESSAGE

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys
sys.modules["psycopg"] = None
sys.modules["psycopg_pool"] = None

import trio
import svc.store
import svc.http
from svc.http import create_app
from svc.store import PersistenceError, PostgresStore, SqliteStore

async def sqlite_round_trip():
    store = SqliteStore(":memory:")
    try:
        version = await store.migrate()
        result = await store.record_webhook_event(
            event_key="k", event_hash="h", received_at=svc.store.utc_now()
        )
        return version, str(result)
    finally:
        await store.close()

version, result = trio.run(sqlite_round_trip)
try:
    PostgresStore("postgresql://svc_user:hunter2@127.0.0.1:5432/db")
except PersistenceError as exc:
    error = [type(exc).__name__, exc.code, exc.message, str(exc)]
else:
    error = None
print(json.dumps({
    "create_app": callable(create_app),
    "sqlite": [version, result],
    "error": error,
    "loaded": sorted(
        name for name, module in sys.modules.items()
        if module is not None and name.split(".")[0] in ("psycopg", "psycopg_pool")
    ),
}))
"""


@pytest.mark.slow
def test_without_the_postgres_extra_only_postgres_store_refuses() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == {
        "create_app": True,
        "sqlite": [SCHEMA_VERSION, "recorded"],
        "error": [  # an install fault, not the caller's options: not a validation error
            "PersistenceError",
            "driver_missing",
            MISSING_EXTRA_MESSAGE,
            f"driver_missing: {MISSING_EXTRA_MESSAGE}",
        ],
        "loaded": [],
    }
    assert "hunter2" not in done.stdout + done.stderr


def test_the_message_names_the_extra() -> None:
    assert MISSING_EXTRA_MESSAGE == (
        "PostgreSQL support needs the postgres extra: pip install 'svc[postgres]'"
    )
    # With the driver installed, construction works and touches no server.
    store = PostgresStore("postgresql://nobody@127.0.0.1:1/none")
    assert store.backend == "postgres"
