"""PostgreSQL made unreachable mid-run, then back, with no restart of the service.

The server is a private one the test starts itself (initdb + pg_ctl on a
spare port), stopped with ``pg_ctl -m immediate``; the shared server is never
touched.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests._support import Captured, FakeGraph, PrivatePostgres, ServeProcess, make_project

from .conftest import error_code, in_threads, inbound_text, post_webhook, start_live

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

BODY = {"to": "15551234567", "text": "through an outage"}


def _wait_ready(client: httpx.Client, timeout: float = 30) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        ready = client.get("/readyz")
        if ready.status_code == 200 or time.monotonic() > deadline:
            return ready
        time.sleep(0.1)


def test_postgres_outage_is_503_persistence_unavailable_and_the_service_recovers_without_restart(
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    private_postgres: PrivatePostgres,
) -> None:
    project = make_project(tmp_path / "p", graph.url)
    env = {"SVC_REL_DB": private_postgres.url}
    served = start_live(captured, project, "--database-url-env", "SVC_REL_DB", env=env)
    serving.append(served)
    secret = project.secrets["SVC_APP_SECRET"]
    inbound = [inbound_text(f"wamid.OUT{i}", f"webhook {i}") for i in range(3)]
    with served.client(timeout=60) as client:
        before = client.post("/api/messages/text", json=BODY, headers={"Idempotency-Key": "o-1"})
        assert before.status_code == 200
        assert client.get("/readyz").status_code == 200
        assert post_webhook(served, secret, inbound[0]).status_code == 200

        private_postgres.stop()
        # Webhook deliveries go to the writer process: its batch finds the server gone, the
        # delivery is refused (the platform redelivers) and the next one fails at once.
        webhooks_during = [post_webhook(served, secret, inbound[i]) for i in (1, 2)]
        ready = client.get("/readyz")
        health = client.get("/healthz")
        # Each store call waits out the pool timeout (http_bugs.md #1): ask them concurrently.
        calls = {
            "list": lambda: client.get("/api/messages"),
            "get": lambda: client.get("/api/messages/wamid.FAKE00000001"),
            "window": lambda: client.get("/api/conversations/15551234567/window"),
            "keyed": lambda: client.post(
                "/api/messages/text", json=BODY, headers={"Idempotency-Key": "o-2"}
            ),
            "unkeyed": lambda: client.post("/api/messages/text", json=BODY),
        }
        names = list(calls)
        started = time.monotonic()
        answers = in_threads(len(names), lambda i: _timed(calls[names[i]]))
        outage = dict(zip(names, answers, strict=True))
        outage_seconds = time.monotonic() - started
        sends_during_outage = len(graph.sends()) - 1

        private_postgres.start()
        back = time.monotonic()
        recovered = _wait_ready(client, timeout=120)
        recovery_seconds = time.monotonic() - back
        after_list = client.get("/api/messages")
        after = client.post("/api/messages/text", json=BODY, headers={"Idempotency-Key": "o-3"})
        replay = client.post("/api/messages/text", json=BODY, headers={"Idempotency-Key": "o-1"})
        redelivered = [post_webhook(served, secret, body).status_code for body in inbound]
        listed = client.get("/api/messages").json()["items"]
        inbound_ids = sorted(m["waMessageId"] for m in listed if m["direction"] == "inbound")

    for response in webhooks_during:
        assert (response.status_code, error_code(response)) == (503, "persistence_unavailable")
    assert redelivered == [200, 200, 200]
    assert inbound_ids == ["wamid.OUT0", "wamid.OUT1", "wamid.OUT2"]
    unkeyed, _ = outage.pop("unkeyed")
    for name, response in [("readyz", ready)] + [(n, r) for n, (r, _) in outage.items()]:
        assert (name, response.status_code, error_code(response)) == (
            name,
            503,
            "persistence_unavailable",
        )
        assert "Traceback" not in response.text
    assert health.status_code == 200  # liveness is not readiness
    # The keyed send could not reserve its key: nothing went upstream for it.
    # The unkeyed send went upstream and says its record was not kept.
    assert unkeyed.status_code == 200
    assert unkeyed.headers["x-svc-persistence"] == "degraded"
    assert sends_during_outage == 1
    assert recovered.status_code == 200
    assert after_list.status_code == 200
    assert after.status_code == 200
    assert replay.status_code == 200
    assert replay.json() == before.json()
    assert served.stop() == 0
    latencies = {name: round(seconds, 1) for name, (_, seconds) in outage.items()}
    print(
        f"postgres outage: outage_requests={len(names) + 1} faults=1 lost=0 "
        f"latencies={latencies} outage_phase={outage_seconds:.1f}s "
        f"recovered_after={recovery_seconds:.1f}s"
    )


def _timed(call: Callable[[], httpx.Response]) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started
