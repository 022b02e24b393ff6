"""Graceful shutdown under load: SIGTERM while 32 keyed sends wait at the fake Graph.

Every accepted request gets its answer, the process exits 0 within the drain
window, and no claim is left half-written: after a restart on the same
database every key replays its stored result (none is ``idempotency_pending``).
"""

from __future__ import annotations

import re
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest

from svc.cli._runtime import DRAIN_SECONDS
from tests._support import Captured, FakeGraph, ServeProcess, make_project

from .conftest import in_threads, start_live

pytestmark = pytest.mark.slow

IN_FLIGHT = 32
SIGNAL_LINE = re.compile(r"^svc: SIGTERM received")


@pytest.mark.parametrize(
    "keep_alive_open", [False, True], ids=["clients-close", "clients-keep-alive"]
)
def test_sigterm_with_32_sends_in_flight_answers_them_all_and_exits_0_within_the_drain_window(
    keep_alive_open: bool,
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
) -> None:
    project = make_project(tmp_path, graph.url)
    served = start_live(captured, project, "--database", "svc.db")
    serving.append(served)
    graph.hold()
    client = served.client(timeout=60)
    results: list[object] = []

    def send(i: int) -> httpx.Response:
        return client.post(
            "/api/messages/text",
            json={"to": "15551234567", "text": f"drain {i}"},
            headers={"Idempotency-Key": f"drain-{i}"},
        )

    runner = threading.Thread(
        target=lambda: results.extend(in_threads(IN_FLIGHT, send, width=IN_FLIGHT))
    )
    runner.start()
    graph.wait_for_requests(IN_FLIGHT)  # all 32 accepted and waiting upstream
    served.process.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    served.wait_for_line(SIGNAL_LINE)
    graph.release()
    runner.join(timeout=30)
    if not keep_alive_open:
        client.close()  # the clients hang up once answered (a keep-alive pool would not)
    code = served.process.wait(timeout=DRAIN_SECONDS + 20)
    exit_seconds = time.monotonic() - signalled
    client.close()
    served.close()
    assert code == 0
    assert exit_seconds < DRAIN_SECONDS
    assert served.lines[-1] == "svc: stopped."
    assert [getattr(r, "status_code", r) for r in results] == [200] * IN_FLIGHT
    answered = {r.json()["messages"][0]["id"] for r in results if isinstance(r, httpx.Response)}
    assert len(answered) == IN_FLIGHT
    assert len(graph.sends()) == IN_FLIGHT

    again = start_live(captured, project, "--database", "svc.db")
    serving.append(again)
    with again.client() as replay_client:
        replays = [send_again(replay_client, i) for i in range(IN_FLIGHT)]
    assert [r.status_code for r in replays] == [200] * IN_FLIGHT
    assert {r.json()["messages"][0]["id"] for r in replays} == answered
    assert len(graph.sends()) == IN_FLIGHT  # replays, no new upstream request
    assert again.stop() == 0
    print(
        f"shutdown: in_flight={IN_FLIGHT} answered={len(answered)} exit=0 "
        f"seconds={exit_seconds:.2f}"
    )


def send_again(client: httpx.Client, i: int) -> httpx.Response:
    return client.post(
        "/api/messages/text",
        json={"to": "15551234567", "text": f"drain {i}"},
        headers={"Idempotency-Key": f"drain-{i}"},
    )
