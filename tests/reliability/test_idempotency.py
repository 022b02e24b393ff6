"""50 concurrent keyed sends with one Idempotency-Key: exactly one upstream request.

Over real processes: one ``svc serve`` on SQLite, then two sharing one
PostgreSQL schema. The fake Graph holds the one upstream request it gets until
every other send has been answered, so the 49 others really race the claim.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from tests._support import Captured, FakeGraph, ServeProcess, make_project

from .conftest import error_code, in_threads, start_live

pytestmark = pytest.mark.slow

SENDS = 50
BODY = {"to": "15551234567", "text": "exactly once"}


def _race(instances: list[ServeProcess], graph: FakeGraph, key: str) -> list[httpx.Response]:
    graph.hold()
    clients = [served.client() for served in instances]
    finished: list[int] = []

    def send(i: int) -> httpx.Response:
        response = clients[i % len(clients)].post(
            "/api/messages/text", json=BODY, headers={"Idempotency-Key": key}
        )
        finished.append(i)
        return response

    import threading

    results: list[httpx.Response] = []
    runner = threading.Thread(target=lambda: results.extend(in_threads(SENDS, send)))
    runner.start()
    graph.wait_for_requests(1)
    deadline = time.monotonic() + 60
    while len(finished) < SENDS - 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    graph.release()
    runner.join(timeout=60)
    for client in clients:
        client.close()
    return results


def _check(results: list[httpx.Response], graph: FakeGraph) -> dict[str, int]:
    assert all(isinstance(r, httpx.Response) for r in results), results
    statuses = [(r.status_code, error_code(r)) for r in results]
    ok = [r for r in results if r.status_code == 200]
    pending = [s for s in statuses if s == (409, "idempotency_pending")]
    assert len(ok) + len(pending) == SENDS, statuses
    assert len(ok) >= 1
    assert len({json.dumps(r.json()["messages"]) for r in ok}) == 1
    [upstream] = graph.sends()
    assert json.loads(upstream.body)["text"] == {"body": BODY["text"]}
    return {"sent": SENDS, "ok": len(ok), "pending": len(pending), "upstream": 1}


def test_fifty_concurrent_keyed_sends_on_one_sqlite_instance_make_one_upstream_request(
    tmp_path: Path, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    project = make_project(tmp_path, graph.url)
    served = start_live(captured, project, "--database", "svc.db")
    serving.append(served)
    figures = _check(_race([served], graph, "race-sqlite-1"), graph)
    # The key is completed now: a replay answers the stored result, still one upstream request.
    with served.client() as client:
        replay = client.post(
            "/api/messages/text", json=BODY, headers={"Idempotency-Key": "race-sqlite-1"}
        )
    assert replay.status_code == 200
    assert replay.json()["messages"] == [{"id": "wamid.FAKE00000001"}]
    assert len(graph.sends()) == 1
    assert served.stop() == 0
    print("idempotency sqlite", figures)


@pytest.mark.postgres
def test_fifty_concurrent_keyed_sends_on_two_instances_sharing_postgres_make_one_upstream_request(
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    pg_schema: tuple[str, str],
) -> None:
    dsn, _ = pg_schema
    project = make_project(tmp_path, graph.url)
    env = {"SVC_REL_DB": dsn}
    first = start_live(captured, project, "--database-url-env", "SVC_REL_DB", env=env)
    serving.append(first)
    second = start_live(captured, project, "--database-url-env", "SVC_REL_DB", env=env)
    serving.append(second)
    figures = _check(_race([first, second], graph, "race-pg-1"), graph)
    for served in (first, second):
        with served.client() as client:
            replay = client.post(
                "/api/messages/text", json=BODY, headers={"Idempotency-Key": "race-pg-1"}
            )
        assert replay.status_code == 200
        assert replay.json()["messages"] == [{"id": "wamid.FAKE00000001"}]
    assert len(graph.sends()) == 1
    assert first.stop() == 0
    assert second.stop() == 0
    print("idempotency postgres x2", figures)
