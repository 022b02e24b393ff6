"""Stalled request bodies against a real ``svc serve`` (issue 22, item 1).

A client that sends the headers and all but the last byte of a large body,
then waits, must hold neither memory nor its connection for long: the worker
reads at most ``--max-pending-bodies`` bodies at once (the rest are answered
503 with ``Retry-After`` before reading), and each body has a deadline
(``--body-read-timeout``, 408, then the connection is closed). Polls with
deadlines; never sleeps blindly.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._support import Captured, ServeProcess, make_project, start_serve

pytestmark = pytest.mark.slow

STALLED = 100
MAX_PENDING = 16
DEADLINE_SECONDS = 4
BODY = 1024 * 1024  # the default body cap: every byte but the last is sent
MIB = 1024 * 1024


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture
def served(tmp_path: Path, captured: Captured) -> Iterator[ServeProcess]:
    project = make_project(tmp_path)
    serve = start_serve(
        *project.dry_args(),
        *("--port", "0", "--body-read-timeout", str(DEADLINE_SECONDS)),
        *("--max-pending-bodies", str(MAX_PENDING)),
        capture=captured,
        cwd=tmp_path,
    )
    captured.secret(*serve.secrets.values())
    yield serve
    assert serve.stop() == 0


def _stall(host: str, port: int, path: bytes, bearer: str) -> socket.socket:
    """Headers for a 1 MiB body, then every byte but the last; the socket stays open."""
    sock = socket.create_connection((host, port), timeout=10)
    head = (
        b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + bearer.encode() + b"\r\n"
        b"Content-Length: " + str(BODY).encode() + b"\r\n\r\n"
    )
    # OSError: answered 503 and closed before the body was sent, which is what a cap does.
    with contextlib.suppress(OSError):
        sock.sendall(head + b" " * (BODY - 1))
    return sock


def _answer_and_close(sock: socket.socket, deadline: float) -> bytes:
    """Everything the server sends until it closes the connection (fails at ``deadline``)."""
    received = b""
    while True:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            raise AssertionError("the stalled connection was not closed in time") from None
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk


def test_stalled_bodies_leave_memory_bounded_health_answering_and_are_closed(
    served: ServeProcess,
) -> None:
    host, port_text = served.url.removeprefix("http://").rsplit(":", 1)
    port = int(port_text)
    pid = served.process.pid
    with served.client(timeout=10) as client:
        assert client.get("/healthz").status_code == 200
    before = _rss(pid)
    paths = [b"/webhooks/whatsapp", b"/api/messages/text"]
    started = time.monotonic()
    stalled = [_stall(host, port, paths[i % 2], served.bearer) for i in range(STALLED)]
    try:
        peak = _rss(pid)
        # Health answers while the stalled connections are open.
        with served.client(timeout=10) as client:
            health_started = time.monotonic()
            assert client.get("/healthz").status_code == 200
            health_seconds = time.monotonic() - health_started
        assert health_seconds < 2
        # Every stalled connection is answered (503 at once, or 408 at the deadline) and
        # closed, all within the deadline plus a margin for a loaded machine.
        closed_by = started + DEADLINE_SECONDS + 15
        answers = [_answer_and_close(sock, closed_by) for sock in stalled]
        closed_after = time.monotonic() - started
    finally:
        for sock in stalled:
            sock.close()
    statuses = [answer.split(b" ", 2)[1] if answer else b"reset" for answer in answers]
    timed_out = statuses.count(b"408")
    refused = statuses.count(b"503")
    assert timed_out + refused + statuses.count(b"reset") == STALLED, set(statuses)
    assert 1 <= timed_out <= MAX_PENDING
    assert refused >= STALLED - MAX_PENDING - statuses.count(b"reset")
    assert all(b"retry-after: " in a.lower() for a in answers if a.split(b" ", 2)[1:2] == [b"503"])
    # Memory: at most MAX_PENDING bodies are ever held (plus their copies on the way in).
    growth = peak - before
    assert growth < (3 * MAX_PENDING + 24) * MIB, growth
    with served.client(timeout=10) as client:
        assert client.get("/healthz").status_code == 200
    print(
        f"stalled={STALLED} timed_out={timed_out} refused={refused} "
        f"rss_before_mib={before / MIB:.0f} rss_peak_mib={peak / MIB:.0f} "
        f"closed_after_s={closed_after:.1f} health_s={health_seconds:.3f} pid={os.getpid()}"
    )
