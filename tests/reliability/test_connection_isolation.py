"""One connection cannot stop ``svc serve``: the attacks that ended the process, replayed.

Each attack runs against one real dry-run service (module scope, so they pile
up on one process) and must leave it serving: the process still runs,
``/healthz`` answers, and the protocol error that ended the attacker's
connection is counted in ``svc_connection_errors_total`` by class.

- HTTP/2 (prior knowledge and ``Upgrade: h2c``): a stream answered before its
  body was read (404, 401 without a bearer, 413 by declared length, 503 of the
  body gate), then more DATA on it.
- HTTP/1.1: a WebSocket upgrade request followed by one stray byte.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._support import (
    WEBSOCKET_HEAD,
    Captured,
    ServeProcess,
    data_after_answer,
    make_project,
    start_serve,
)

from .conftest import children, post_webhook

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServeProcess, Captured]]:
    root = tmp_path_factory.mktemp("isolation")
    project = make_project(root)
    capture = Captured()
    # One body at a time: a second one is refused 503 before it is read.
    served = start_serve(
        *project.dry_args(),
        *("--port", "0", "--max-pending-bodies", "1", "--body-read-timeout", "30"),
        capture=capture,
        cwd=root,
    )
    yield served, capture
    assert served.stop() == 0


@pytest.fixture
def served(service: tuple[ServeProcess, Captured], captured: Captured) -> ServeProcess:
    serve, _ = service
    serve.capture = captured
    captured.secret(*serve.secrets.values())
    return serve


def _address(served: ServeProcess) -> tuple[str, int]:
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def connection_errors(served: ServeProcess) -> dict[str, float]:
    """``svc_connection_errors_total`` by ``error_class``, read from ``/metrics``."""
    with served.client(timeout=10) as client:
        text = client.get("/metrics").text
    found: dict[str, float] = {}
    for match in re.finditer(
        r'^svc_connection_errors_total\{error_class="([^"]+)"\} (\S+)$', text, re.MULTILINE
    ):
        found[match.group(1)] = float(match.group(2))
    return found


def assert_serving(served: ServeProcess) -> None:
    """The process runs, health answers and a signed webhook is taken."""
    assert served.process.poll() is None, served.lines[-5:]
    with served.client(timeout=10) as client:
        health = client.get("/healthz")
    hook = post_webhook(
        served, served.app_secret, b'{"object":"whatsapp_business_account","entry":[]}'
    )
    assert health.status_code == 200
    assert hook.status_code == 200, hook.text


@contextlib.contextmanager
def _gate_held(served: ServeProcess) -> Iterator[None]:
    """An HTTP/1.1 body left unfinished holds the one body slot (the next body is 503)."""
    sock = socket.create_connection(_address(served), timeout=10)
    sock.sendall(
        b"POST /api/messages/text HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + served.bearer.encode() + b"\r\n"
        b"Content-Length: 1000\r\n\r\n{"
    )
    try:
        # Wait until the body is being read: a probe with a body is refused 503.
        deadline = time.monotonic() + 10
        while True:
            with served.client(timeout=10) as client:
                probe = client.post("/api/messages/text", json={"to": "1", "text": "x"})
            if probe.status_code == 503 or time.monotonic() > deadline:
                break
        assert probe.status_code == 503
        yield
    finally:
        sock.close()


EARLY_ANSWERS = {
    "404-unknown-path": ("/nope", False, "100", 404),
    "401-no-bearer": ("/api/messages/text", False, "100", 401),
    "413-declared-length": ("/api/messages/text", True, "2000000", 413),
    "413-declared-length-webhook": ("/webhooks/whatsapp", False, "2000000", 413),
    "503-body-gate": ("/api/messages/text", True, "100", 503),
}


@pytest.mark.parametrize("upgrade", [False, True], ids=["prior-knowledge", "upgrade"])
@pytest.mark.parametrize("case", list(EARLY_ANSWERS))
def test_data_after_an_early_h2_answer_ends_only_that_connection(
    served: ServeProcess, case: str, upgrade: bool
) -> None:
    path, bearer, length, status = EARLY_ANSWERS[case]
    before = connection_errors(served).get("KeyError", 0.0)
    headers = [(b"content-type", b"application/json")]
    if bearer:
        headers.append((b"authorization", b"Bearer " + served.bearer.encode()))
    with _gate_held(served) if status == 503 else contextlib.nullcontext():
        answered, closed = data_after_answer(
            *_address(served), path, headers, length=int(length), upgrade=upgrade
        )
    assert answered == status
    assert_serving(served)
    # Hypercorn raises KeyError for DATA on a stream it has forgotten: the guard closed
    # this connection and counted it.
    assert closed
    assert connection_errors(served).get("KeyError", 0.0) == before + 1


@pytest.mark.parametrize("path", [b"/healthz", b"/webhooks/whatsapp", b"/nope"])
def test_a_websocket_upgrade_with_a_stray_byte_ends_only_that_connection(
    served: ServeProcess, path: bytes
) -> None:
    before = connection_errors(served).get("h11.LocalProtocolError", 0.0)
    with socket.create_connection(_address(served), timeout=10) as sock:
        sock.sendall(WEBSOCKET_HEAD % path + b"x")
        answer = b""
        with contextlib.suppress(TimeoutError, ConnectionResetError):
            while chunk := sock.recv(65536):
                answer += chunk
    served.capture.add("raw", answer.decode("latin-1"))
    # Quart refuses the upgrade (400, closed); h11 then raises on the stray byte, which the
    # guard counts once for this connection.
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:80]
    assert_serving(served)
    assert connection_errors(served).get("h11.LocalProtocolError", 0.0) == before + 1


def test_an_h2c_upgrade_with_malformed_settings_ends_only_that_connection(
    served: ServeProcess,
) -> None:
    """``HTTP2-Settings`` that is not base64url: h2 raises ``binascii.Error`` at the upgrade."""
    before = connection_errors(served).get("binascii.Error", 0.0)
    with socket.create_connection(_address(served), timeout=10) as sock:
        sock.sendall(
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n"
            b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__A\r\n\r\n"
        )
        answer = b""
        with contextlib.suppress(TimeoutError, ConnectionResetError):
            while chunk := sock.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 101 "), answer[:80]
    assert_serving(served)
    assert connection_errors(served).get("binascii.Error", 0.0) == before + 1


def test_the_errors_that_ended_connections_are_counted_by_class(served: ServeProcess) -> None:
    """The KeyError of DATA on an answered stream is caught, counted and logged by class."""
    before = connection_errors(served).get("KeyError", 0.0)
    assert data_after_answer(*_address(served)) == (404, True)
    assert_serving(served)
    assert connection_errors(served).get("KeyError", 0.0) == before + 1
    served.wait_for_line(
        re.compile(r'"event":"svc.connection.error","errorClass":"KeyError","protocol":"h2"'),
        timeout=5,
    )


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_a_pipelined_request_whose_client_resets_mid_answer_releases_its_socket(
    served: ServeProcess,
) -> None:
    """The second request waits (h11 pauses it) while the first is answered; the client
    resets the connection meanwhile, the write fails and Quart cancels the answer. Every
    such connection must be closed, not left waiting for a cycle that never ends."""
    pid = served.process.pid
    with served.client(timeout=10) as client:
        assert client.get("/healthz").status_code == 200
    baseline = _fds(pid)
    body = b'{"to":"15551234567","text":"x"}'
    first = (
        b"POST /api/messages/text HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + served.bearer.encode() + b"\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    for attempt in range(100):
        sock = socket.create_connection(_address(served), timeout=10)
        sock.sendall(first + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        # Reset at a spread of moments, so some land while the first answer is written.
        time.sleep(0.0005 * (attempt % 20))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    deadline = time.monotonic() + 15
    while (open_now := _fds(pid)) > baseline:
        assert time.monotonic() < deadline, f"{open_now - baseline} sockets still held"
        time.sleep(0.1)
    assert_serving(served)


def test_metrics_name_no_peer(served: ServeProcess) -> None:
    """The counter's only label is the error class: no address, port or path in it."""
    errors = connection_errors(served)
    assert all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", name) for name in errors)


def test_with_workers_the_attacks_end_no_worker_and_are_counted_across_them(
    tmp_path: Path, captured: Captured
) -> None:
    """The same attack used to end one worker per request (never replaced), so the second
    ended the service. Now both workers live on, and ``/metrics`` sums their counts."""
    project = make_project(tmp_path)
    served = start_serve(
        *project.dry_args(), *("--workers", "2", "--port", "0"), capture=captured, cwd=tmp_path
    )
    try:
        captured.secret(*served.secrets.values())
        workers = sorted(children(served.process.pid))
        for _ in range(4):
            assert data_after_answer(*_address(served)) == (404, True)
        assert_serving(served)
        assert sorted(children(served.process.pid)) == workers
        assert connection_errors(served) == {"KeyError": 4.0}
        assert served.stop() == 0
        assert not any("ended by" in line for line in served.lines), served.lines
    finally:
        served.close()
