"""``svc serve --workers 2`` under load: a worker killed with SIGKILL is replaced.

The parent keeps the listening socket, so while one worker is gone the other
(and then the replacement) takes every new connection: only the requests the
killed worker held in flight may fail, as connection errors, never as a 5xx,
and every request started after it died succeeds. The replacement serves on
its own (the survivor is paused with SIGSTOP to prove it), counts itself in
``svc_worker_restarts_total``, and ``/metrics`` still sums every worker's
counters, the dead one's included. Workers that die faster than
``--max-worker-restarts`` allows stop the service with exit 1.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests._support import Captured, ServeProcess, make_project, start_serve

from .conftest import children, ended

pytestmark = pytest.mark.slow

LOAD_THREADS = 8
REPLACED = re.compile(
    r"^svc: worker (\d) \(pid (\d+)\) ended by SIGKILL; starting a replacement\.$"
)
SERVES_AGAIN = re.compile(r"^svc: worker (\d) serves again \(pid (\d+)\)\.$")
HEALTHZ = re.compile(
    r'^http_requests_total\{method="GET",route="/healthz",status_class="2xx"\} (\d+)\.0$', re.M
)


def _workers(parent: int) -> list[int]:
    """The parent's worker processes (not multiprocessing's resource tracker)."""
    return sorted(
        pid
        for pid in children(parent)
        if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    )


@dataclass
class Load:
    """Threads sending requests, each on a fresh connection, until stopped."""

    url: str
    bearer: str
    results: list[tuple[float, str, str]] = field(default_factory=list)
    """(started at, route, status or transport error class) per request."""
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _run(self, number: int) -> None:
        route = "/healthz" if number % 2 else "/api/messages/text"
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                if route == "/healthz":
                    answer = httpx.get(self.url + "/healthz", timeout=10)
                else:
                    answer = httpx.post(
                        self.url + "/api/messages/text",
                        json={"to": "15551234567", "text": "load"},
                        headers={"Authorization": f"Bearer {self.bearer}"},
                        timeout=10,
                    )
                outcome = str(answer.status_code)
            except httpx.TransportError as exc:
                outcome = type(exc).__name__
            with self._lock:
                self.results.append((started, route, outcome))

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        threads = [threading.Thread(target=self._run, args=(n,)) for n in range(LOAD_THREADS)]
        for thread in threads:
            thread.start()
        try:
            yield
        finally:
            self._stop.set()
            for thread in threads:
                thread.join(timeout=30)

    def count(self) -> int:
        with self._lock:
            return len(self.results)


def _wait_until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _metrics(served: ServeProcess) -> str:
    with served.client(timeout=10) as client:
        answer = client.get("/metrics")
    assert answer.status_code == 200
    return answer.text


@pytest.fixture
def workers(tmp_path: Path, captured: Captured) -> Iterator[ServeProcess]:
    project = make_project(tmp_path)
    served = start_serve(
        *project.dry_args(),
        *("--workers", "2", "--database", "svc.db", "--port", "0"),
        capture=captured,
        cwd=tmp_path,
    )
    captured.secret(*served.secrets.values())
    yield served
    served.close()


def test_a_worker_killed_under_load_is_replaced_and_no_later_request_fails(
    workers: ServeProcess,
) -> None:
    served = workers
    parent = served.process.pid
    first = _workers(parent)
    assert len(first) == 2
    killed, survivor = first
    load = Load(served.url, served.bearer)
    with load.running():
        _wait_until(lambda: load.count() >= 50, 30, "the load never got going")
        os.kill(killed, signal.SIGKILL)
        _wait_until(lambda: ended(killed), 10, "the killed worker still runs")
        died_at = time.monotonic()
        gone = served.wait_for_line(REPLACED, timeout=10)
        assert int(gone.group(2)) == killed
        again = served.wait_for_line(SERVES_AGAIN, timeout=60)
        assert again.group(1) == gone.group(1)
        replacement = int(again.group(2))
        replaced_after = time.monotonic() - died_at
        at_replacement = load.count()
        _wait_until(lambda: load.count() >= at_replacement + 100, 30, "no load after")
    outcomes = [outcome for _, _, outcome in load.results]
    failed = [outcome for outcome in outcomes if outcome != "200"]
    # Only requests the killed worker held may fail, and only as connection errors.
    assert len(failed) <= LOAD_THREADS, failed
    assert all(not outcome.isdigit() for outcome in failed), failed
    late = [outcome for started, _, outcome in load.results if started > died_at]
    assert len(late) >= 100
    assert set(late) == {"200"}
    assert sorted(_workers(parent)) == sorted([survivor, replacement])

    # The replacement serves on its own: the survivor is paused meanwhile.
    os.kill(survivor, signal.SIGSTOP)
    try:
        statuses = [httpx.get(served.url + "/healthz", timeout=10).status_code for _ in range(10)]
    finally:
        os.kill(survivor, signal.SIGCONT)
    assert statuses == [200] * 10

    text = _metrics(served)
    assert re.search(r"^svc_worker_restarts_total 1\.0$", text, re.M), text
    # The sum over every worker, the killed one's counts included (it served about half of
    # the requests before it died; a request cut off mid-answer may count on either side).
    healthz = HEALTHZ.search(text)
    assert healthz is not None
    answered = 10 + sum(
        1 for _, route, outcome in load.results if route == "/healthz" and outcome == "200"
    )
    assert abs(int(healthz.group(1)) - answered) <= LOAD_THREADS, (healthz.group(1), answered)
    assert served.stop(signal.SIGTERM) == 0
    assert served.lines[-1] == "svc: stopped."
    assert all(ended(pid) for pid in [survivor, replacement])
    print(
        f"supervision: requests={len(outcomes)} failed={len(failed)} ({sorted(set(failed))}) "
        f"after_death={len(late)} serving_again_after_s={replaced_after:.1f}"
    )


def test_workers_dying_faster_than_the_restart_limit_stop_the_service(
    tmp_path: Path, captured: Captured
) -> None:
    project = make_project(tmp_path)
    served = start_serve(
        *project.dry_args(),
        *("--workers", "2", "--max-worker-restarts", "1", "--port", "0"),
        capture=captured,
        cwd=tmp_path,
    )
    try:
        parent = served.process.pid
        first = _workers(parent)
        os.kill(first[0], signal.SIGKILL)
        served.wait_for_line(SERVES_AGAIN, timeout=60)
        second = [pid for pid in _workers(parent) if pid != first[1]]
        assert len(second) == 1
        os.kill(second[0], signal.SIGKILL)
        limit = served.wait_for_line(
            re.compile(r"workers exit faster than the restart limit \(1 in 60 s\): stopping\.$")
        )
        assert str(second[0]) in limit.string
        assert served.process.wait(timeout=60) == 1
        served.drain()
        assert served.lines[-1] == "svc: stopped."
        assert ended(first[1])
    finally:
        served.close()
