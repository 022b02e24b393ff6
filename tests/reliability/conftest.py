"""The reliability harness: real ``svc serve`` processes, a recording fake Graph, real databases.

Everything talks to 127.0.0.1 only. Every response body, response header, log
line and metric text a test sees goes through a ``Captured``, and each test ends
with a scan of what it captured for every secret value it used. The process
wrapper, the fake Graph, the project writer and the private PostgreSQL server are
shared with the other suites (``tests/_support``). ``SVC_RELIABILITY_LONG=1``
selects the long variants (larger counts); CI runs the short ones.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psycopg
import pytest

from tests._support import (
    PHONE_ID,
    WABA_ID,
    Captured,
    FakeGraph,
    PrivatePostgres,
    Project,
    ServeProcess,
    drop_run_schemas,
    new_run_prefix,
    sign,
    start_serve,
    with_search_path,
)

if TYPE_CHECKING:
    from ._handlers import StoreBot

REPO = Path(__file__).resolve().parents[2]
LONG = os.environ.get("SVC_RELIABILITY_LONG") == "1"


# --- what the tests saw -------------------------------------------------------------------


@pytest.fixture
def captured() -> Iterator[Captured]:
    """This test's capture; at teardown it must hold no secret value."""
    capture = Captured()
    yield capture
    assert capture.leaks() == [], f"secret values leaked into: {capture.leaks()}"


# --- a live service of a project ----------------------------------------------------------


def start_live(
    capture: Captured,
    project: Project,
    *database: str,
    env: Mapping[str, str] | None = None,
) -> ServeProcess:
    """A live ``svc serve`` of ``project`` on a free port with ``database`` flags."""
    capture.secret(*project.secrets.values())
    return start_serve(
        *project.live_args(),
        *database,
        "--port",
        "0",
        capture=capture,
        cwd=project.root,
        env={"SVC_LIVE_ENABLE": "1", "SVC_YES_LIVE": "1", **(env or {})},
        secrets_used=project.used(),
    )


def serve_live(
    capture: Captured,
    serving: list[ServeProcess],
    project: Project,
    *args: str,
    env: Mapping[str, str] | None = None,
) -> ServeProcess:
    """``start_live`` with ``args``, added to ``serving`` (stopped at the test's end)."""
    served = start_live(capture, project, *args, env=env)
    serving.append(served)
    return served


def wait_until(check: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Poll ``check`` (a real process's effects) until true, or fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def serve_database(store: str, request: pytest.FixtureRequest) -> tuple[list[str], dict[str, str]]:
    """``svc serve``'s database flags and environment for ``store`` (``"sqlite"``: a file in
    the project; ``"postgres"``: the test's own schema, ``pg_schema``)."""
    if store == "sqlite":
        return ["--database", "svc.db"], {}
    dsn, _ = request.getfixturevalue("pg_schema")
    return ["--database-url-env", "SVC_REL_DB"], {"SVC_REL_DB": dsn}


@pytest.fixture
def store_bot(
    backend: str,
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    request: pytest.FixtureRequest,
) -> StoreBot:
    """The handler proofs' bot (``_handlers.BOT``) in a project on the test's ``backend``
    (``serve_database``); ``serve`` starts its processes, stopped at the test's end."""
    from ._handlers import store_bot  # not at the top: _handlers imports this module

    database, env = serve_database(backend, request)
    return store_bot(tmp_path, graph.url, captured, serving, database, env)


def post_webhook(served: ServeProcess, secret: str, body: bytes) -> httpx.Response:
    """POST ``body`` to ``served``'s webhook route, signed with ``secret``."""
    with served.client() as client:
        return client.post(
            "/webhooks/whatsapp",
            content=body,
            headers={
                "Content-Type": "application/json",
                "X-Hub-Signature-256": sign(body=body, secret=secret),
            },
        )


def children(pid: int) -> list[int]:
    """The processes ``pid`` started that still run (its writer process, say)."""
    return [
        int(child)
        for task in Path(f"/proc/{pid}/task").iterdir()
        for child in (task / "children").read_text().split()
    ]


def ended(pid: int) -> bool:
    """Gone, or a zombie its new parent has not reaped yet (it runs no code either way)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def inbound_text(message_id: str, text: str, sender: str = "16505551234") -> bytes:
    """A signed-ready webhook envelope with one inbound text message."""
    envelope = {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": WABA_ID,
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "messaging_product": "whatsapp",
                            "metadata": {
                                "display_phone_number": "15550783881",
                                "phone_number_id": PHONE_ID,
                            },
                            "contacts": [{"profile": {"name": "Rel"}, "wa_id": sender}],
                            "messages": [
                                {
                                    "from": sender,
                                    "id": message_id,
                                    "timestamp": "1749416383",
                                    "type": "text",
                                    "text": {"body": text},
                                }
                            ],
                        },
                    }
                ],
            }
        ],
    }
    return json.dumps(envelope).encode()


# --- the fake Graph API -------------------------------------------------------------------


@pytest.fixture
def graph() -> Iterator[FakeGraph]:
    fake = FakeGraph()
    yield fake
    fake.close()


# --- PostgreSQL ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_run_prefix(postgres_url: str) -> Iterator[str]:
    """This run's schema prefix on the shared server; its schemas are dropped at the end."""
    prefix = new_run_prefix("rel")
    yield prefix
    drop_run_schemas(postgres_url, prefix)


@pytest.fixture
def pg_schema(postgres_url: str, postgres_run_prefix: str) -> Iterator[tuple[str, str]]:
    """A fresh schema on the shared server: (DSN pinned to it, schema name); dropped after."""
    schema = f"{postgres_run_prefix}_{secrets.token_hex(4)}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    yield with_search_path(postgres_url, schema), schema
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    server.start()
    try:
        yield server
    finally:
        server.close()


# --- small helpers ------------------------------------------------------------------------


def in_threads(count: int, work: Callable[[int], Any], width: int = 50) -> list[Any]:
    """Run ``work(i)`` for i in range(count) on ``width`` threads, started together."""
    results: list[Any] = [None] * count
    start = threading.Barrier(min(width, count))
    numbers: queue.Queue[int] = queue.Queue()
    for i in range(count):
        numbers.put(i)

    def worker() -> None:
        with contextlib.suppress(threading.BrokenBarrierError):
            start.wait(timeout=30)
        while True:
            try:
                i = numbers.get_nowait()
            except queue.Empty:
                return
            try:
                results[i] = work(i)
            except Exception as exc:  # noqa: BLE001 - reported as the item's result
                results[i] = exc

    threads = [threading.Thread(target=worker) for _ in range(min(width, count))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return results


def error_code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = body["error"].get("code")
        return code if isinstance(code, str) else None
    return None
