"""``kill -9`` of the service while a keyed send waits at the fake Graph, then a restart.

The claim was written before the upstream call, so after the crash the key is
unresolved: the resend answers 409 ``idempotency_pending`` and sends nothing
(claims are never released automatically, spec rule 11). SQLite and PostgreSQL.
"""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest

from tests._support import Captured, FakeGraph, ServeProcess, make_project

from .conftest import error_code, start_live

pytestmark = pytest.mark.slow

BODY = {"to": "15551234567", "text": "in flight at the crash"}
KEY = {"Idempotency-Key": "crash-key-1"}


def _crash_and_resend(
    captured: Captured,
    serving: list[ServeProcess],
    graph: FakeGraph,
    project_dir: Path,
    *db: str,
    env: dict[str, str] | None = None,
) -> None:
    project = make_project(project_dir, graph.url)
    served = start_live(captured, project, *db, env=env)
    serving.append(served)
    graph.hold()
    outcome: list[object] = []

    def send() -> None:
        try:
            with served.client() as client:
                outcome.append(client.post("/api/messages/text", json=BODY, headers=KEY))
        except httpx.HTTPError as exc:
            outcome.append(exc)

    sender = threading.Thread(target=send)
    sender.start()
    graph.wait_for_requests(1)
    served.kill9()  # the upstream call is in flight: the claim is written, not completed
    sender.join(timeout=30)
    graph.release()
    assert served.process.returncode == -9
    assert len(outcome) == 1 and isinstance(outcome[0], httpx.HTTPError)  # no answer came

    again = start_live(captured, project, *db, env=env)
    serving.append(again)
    with again.client() as client:
        resent = client.post("/api/messages/text", json=BODY, headers=KEY)
        other = client.post("/api/messages/text", json=BODY, headers={"Idempotency-Key": "k2"})
        ready = client.get("/readyz")
    assert resent.status_code == 409
    assert error_code(resent) == "idempotency_pending"
    assert ready.status_code == 200
    # One upstream request for the crashed key; the fresh key after restart makes the second.
    assert other.status_code == 200
    sends = graph.sends()
    assert len(sends) == 2
    assert again.stop() == 0


def test_kill9_mid_send_on_sqlite_then_resend_is_pending_with_one_upstream_request(
    tmp_path: Path, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    _crash_and_resend(captured, serving, graph, tmp_path, "--database", "svc.db")


@pytest.mark.postgres
def test_kill9_mid_send_on_postgres_then_resend_is_pending_with_one_upstream_request(
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    pg_schema: tuple[str, str],
) -> None:
    dsn, _ = pg_schema
    _crash_and_resend(
        captured,
        serving,
        graph,
        tmp_path,
        "--database-url-env",
        "SVC_REL_DB",
        env={"SVC_REL_DB": dsn},
    )
