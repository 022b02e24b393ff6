"""``kill -9`` of a service mid-broadcast, then a restart: nobody is sent twice, and it finishes.

Real ``svc serve`` processes against the socket fake Graph enforcing the
platform's throughput (``GraphLimits``). The restarted service fails the sends
the dead one had in flight (``interrupted``: they may have reached the platform)
once their lease expires, and sends everyone else, still under the limit.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests._support import Captured, FakeGraph, GraphLimits, ServeProcess, make_project

from .conftest import serve_database, start_live

pytestmark = pytest.mark.slow

RATE = 100
RECIPIENTS = 400
LEASE = "3"


def _wait_done(served: ServeProcess, broadcast_id: str, timeout: float = 90) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    with served.client() as client:
        while time.monotonic() < deadline:
            status = client.get(f"/api/broadcasts/{broadcast_id}").json()
            if status["state"] == "done":
                return dict(status)
            time.sleep(0.2)
    raise AssertionError("the broadcast did not finish")


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_kill9_mid_broadcast_then_restart_sends_nobody_twice(
    backend: str,
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    request: pytest.FixtureRequest,
) -> None:
    db, env = serve_database(backend, request)
    limits = GraphLimits(rate=RATE)
    graph.limits = limits
    project = make_project(tmp_path, graph.url)
    flags = [*db, "--broadcast-rate", str(RATE), "--broadcast-lease", LEASE]
    first = start_live(captured, project, *flags, env=env)
    serving.append(first)
    body = {
        "message": {"type": "template", "name": "promo", "languageCode": "en"},
        "recipients": [{"to": f"1650{n:07d}"} for n in range(RECIPIENTS)],
    }
    with first.client() as client:
        answer = client.post("/api/broadcasts", json=body, headers={"Idempotency-Key": "crash"})
    assert answer.status_code == 202
    broadcast_id = answer.json()["broadcastId"]
    graph.wait_for_requests(RECIPIENTS // 3)
    first.kill9()
    assert first.process.returncode == -9
    reached_before_restart = sum(limits.accepted.values())
    assert reached_before_restart < RECIPIENTS

    second = start_live(captured, project, *flags, env=env)
    serving.append(second)
    status = _wait_done(second, broadcast_id)
    counts = status["counts"]
    failed_by_code = status["failedByCode"]
    assert isinstance(counts, dict) and isinstance(failed_by_code, dict)

    assert limits.duplicates() == {}  # nobody got the message twice
    assert limits.refused[130429] == 0  # and the restart kept to the limit
    interrupted = failed_by_code.get("interrupted", 0)
    assert set(failed_by_code) <= {"interrupted"}
    assert counts["queued"] == 0 and counts["skipped"] == 0
    assert counts["sent"] + counts["failed"] == RECIPIENTS
    # Each recipient the fake accepted is counted sent, or interrupted mid-send.
    assert counts["sent"] <= len(limits.accepted) <= counts["sent"] + interrupted
    assert interrupted < RECIPIENTS // 4  # only the sends in flight at the kill
    assert second.stop() == 0
    print(
        f"broadcast kill -9 {backend}: recipients={RECIPIENTS} sent={counts['sent']}"
        f" interrupted={interrupted} duplicates=0"
    )
