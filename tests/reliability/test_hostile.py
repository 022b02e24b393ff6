"""Hostile HTTP against a running dry-run ``svc serve``: schemathesis, then hand-made attacks.

Each attack gets a 4xx or a closed connection, never a 5xx or a traceback,
and the service answers the next request. One service (module scope) serves
every test here, so the attacks also pile up on one process.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests._support import Captured, ServeProcess, child_env, make_project, sign, start_serve

from .conftest import LONG, error_code

pytestmark = pytest.mark.slow

EXAMPLES = 100 if LONG else 40
# The coverage phase alone makes ~1,300 cases: the long variant only.
PHASES = "examples,coverage,fuzzing,stateful" if LONG else "examples,fuzzing,stateful"
PHONE = "15551234567"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServeProcess, Captured]]:
    root = tmp_path_factory.mktemp("hostile")
    project = make_project(root)
    capture = Captured()
    served = start_serve(
        *project.dry_args(), "--database", "svc.db", "--port", "0", capture=capture, cwd=root
    )
    yield served, capture
    code = served.stop()
    assert code == 0


@pytest.fixture
def served(service: tuple[ServeProcess, Captured], captured: Captured) -> ServeProcess:
    """The module's service, its captures routed to this test's scan."""
    serve, _ = service
    serve.capture = captured
    captured.secret(*serve.secrets.values())
    return serve


def _still_serving(served: ServeProcess) -> None:
    with served.client(timeout=10) as client:
        health = client.get("/healthz")
        sent = client.post("/api/messages/text", json={"to": PHONE, "text": "next request"})
    assert health.status_code == 200
    assert sent.status_code == 200


def _raw(served: ServeProcess, data: bytes, timeout: float = 10) -> bytes:
    """Send raw bytes on a fresh connection; return what came back until close or a full head."""
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            answer += chunk
            if b"\r\n\r\n" in answer:
                break
    served.capture.add("raw", answer.decode("latin-1"))
    return answer


def _status(answer: bytes) -> int | None:
    match = re.match(rb"HTTP/1\.1 (\d{3})", answer)
    return int(match.group(1)) if match else None


def test_schemathesis_finds_no_5xx_and_no_schema_violation(
    served: ServeProcess, tmp_path: Path
) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemathesis.cli",
            "run",
            f"{served.url}/openapi.json",
            "-H",
            f"Authorization: Bearer {served.bearer}",
            "--max-examples",
            str(EXAMPLES),
            "--seed",
            "20261122",
            "--no-shrink",
            "--phases",
            PHASES,
            "--checks",
            "not_a_server_error,response_schema_conformance,content_type_conformance,"
            "status_code_conformance",
            "--request-timeout",
            "20",
            "--workers",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
        env=child_env(),
    )
    served.capture.add("schemathesis", result.stdout + result.stderr)
    cases = re.search(r"(\d+) generated", result.stdout)
    assert result.returncode == 0, result.stdout[-4000:]
    assert cases is not None and int(cases.group(1)) >= 200
    print(f"schemathesis: cases={cases.group(1)} operations=all failures=0")
    _still_serving(served)


def test_slow_loris_partial_heads_and_bodies_do_not_stop_the_service(served: ServeProcess) -> None:
    host, port = served.url.removeprefix("http://").rsplit(":", 1)
    stalled: list[socket.socket] = []
    try:
        for i in range(40):
            sock = socket.create_connection((host, int(port)), timeout=10)
            if i % 2:
                sock.sendall(b"POST /api/messages/text HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            else:
                sock.sendall(
                    b"POST /api/messages/text HTTP/1.1\r\nHost: x\r\n"
                    b'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"to":'
                )
            stalled.append(sock)
        started = time.monotonic()
        _still_serving(served)
        assert time.monotonic() - started < 5
    finally:
        for sock in stalled:
            sock.close()
    _still_serving(served)


def test_oversized_headers_are_431_and_closed(served: ServeProcess) -> None:
    answer = _raw(
        served, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n"
    )
    assert _status(answer) == 431
    assert b"connection: close" in answer.lower()
    _still_serving(served)


@pytest.mark.parametrize("path", ["/api/messages/text", "/webhooks/whatsapp"])
def test_oversized_bodies_are_413(served: ServeProcess, path: str) -> None:
    body = b'{"to":"15551234567","text":"' + b"a" * (2 * 1024 * 1024) + b'"}'
    with served.client(timeout=10) as client:
        answer = client.post(
            path,
            content=body,
            headers={
                "Content-Type": "application/json",
                "X-Hub-Signature-256": sign(body=body, secret=served.app_secret),
            },
        )
    assert (answer.status_code, error_code(answer)) == (413, "payload_too_large")
    _still_serving(served)


@pytest.mark.parametrize("early", ["413-oversized", "401-no-bearer"])
def test_the_connection_after_an_early_answer_still_serves(
    served: ServeProcess, early: str
) -> None:
    # A plain keep-alive client, no default bearer: the 401 case sends none at all.
    with httpx.Client(base_url=served.url, timeout=3) as client:
        if early == "413-oversized":
            body = b'{"to":"15551234567","text":"' + b"a" * (2 * 1024 * 1024) + b'"}'
            first = client.post(
                "/api/messages/text",
                content=body,
                headers={
                    "Content-Type": "application/json",
                    "Authorization": f"Bearer {served.bearer}",
                },
            )
        else:
            # Under the size limit, but too large to have been read with the head.
            filler = b'{"to":"15551234567","text":"' + b"a" * (512 * 1024) + b'"}'
            first = client.post(
                "/api/messages/text", content=filler, headers={"Content-Type": "application/json"}
            )
        served.capture.response(first)
        assert first.status_code in {401, 413}
        second = client.get("/healthz")
    assert second.status_code == 200


def _signed_webhook(served: ServeProcess, body: bytes) -> httpx.Response:
    with served.client(timeout=10) as client:
        return client.post(
            "/webhooks/whatsapp",
            content=body,
            headers={
                "Content-Type": "application/json",
                "X-Hub-Signature-256": sign(body=body, secret=served.app_secret),
            },
        )


def _send(served: ServeProcess, path: str, body: bytes) -> httpx.Response:
    with served.client(timeout=10) as client:
        return client.post(path, content=body, headers={"Content-Type": "application/json"})


NESTED_LIST = b"[" * 10_000 + b"]" * 10_000
NESTED_OBJECT = b'{"a":' * 10_000 + b"1" + b"}" * 10_000
HUGE_INT = b'{"to":' + b"9" * 100_000 + b',"text":"x"}'
HUGE_FLOAT = b'{"to":"15551234567","text":"x","previewUrl":1e999999}'
HUGE_IN_ENVELOPE = (
    b'{"object":"whatsapp_business_account","entry":[{"id":' + b"9" * 50_000 + b',"changes":[]}]}'
)
BAD_UTF8 = b'{"to":"15551234567","text":"\xff\xfe\xc3("}'


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/messages/text", BAD_UTF8),
        ("/api/messages/text", NESTED_LIST),
        ("/api/messages", NESTED_OBJECT),
        ("/api/messages/text", HUGE_INT),
        ("/api/messages/text", HUGE_FLOAT),
        ("/webhooks/whatsapp", BAD_UTF8),
        ("/webhooks/whatsapp", NESTED_LIST),
        ("/webhooks/whatsapp", NESTED_OBJECT),
        ("/webhooks/whatsapp", HUGE_IN_ENVELOPE),
    ],
    ids=[
        "send-bad-utf8",
        "send-nested-list",
        "generic-nested-object",
        "send-huge-int",
        "send-huge-float",
        "webhook-bad-utf8",
        "webhook-nested-list",
        "webhook-nested-object",
        "webhook-huge-int",
    ],
)
def test_hostile_json_is_400_and_the_service_keeps_serving(
    served: ServeProcess, path: str, body: bytes
) -> None:
    answer = (
        _signed_webhook(served, body) if path.startswith("/webhooks") else _send(served, path, body)
    )
    assert answer.status_code == 400, answer.text[:200]
    assert error_code(answer) in {
        "malformed_json",
        "malformed_body",
        "invalid_json",
        "invalid_envelope",
    }
    assert "Traceback" not in answer.text
    _still_serving(served)
