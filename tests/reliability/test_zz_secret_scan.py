"""The secret scan: no secret value in any response, log line, metric text or OpenAPI document.

Runs last (file order). It scans what every earlier reliability test of this
session captured (each test also scans its own captures at teardown), and a
scenario of its own over a live service, so it means something when run alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import (
    SESSION_CAPTURE,
    Captured,
    FakeGraph,
    Serve,
    inbound_text,
    make_project,
    sign,
    start_live,
)

pytestmark = pytest.mark.slow


def test_no_secret_in_anything_captured_from_a_live_service(
    tmp_path: Path, graph: FakeGraph, captured: Captured, serving: list[Serve]
) -> None:
    project = make_project(tmp_path, graph.url)
    served = start_live(
        captured,
        project,
        "--database",
        "svc.db",
        env={"SVC_ECHO_REPLY": "1", "SVC_LOG_WEBHOOK_EVENTS": "1"},
    )
    serving.append(served)
    verify = project.secrets["SVC_VERIFY_TOKEN"]
    body = inbound_text("wamid.SCAN1", "scan me")
    with served.client() as client:
        for path in ("/openapi.json", "/metrics", "/status", "/debug/diagnostics", "/readyz"):
            assert client.get(path).status_code == 200
        client.post("/api/messages/text", json={"to": "15551234567", "text": "scan"})
        client.post("/api/messages/text", json={"to": "x"})
        client.get(
            "/webhooks/whatsapp",
            params={
                "hub.mode": "subscribe",
                "hub.verify_token": verify,
                "hub.challenge": "12345",
            },
        )
        client.get(
            "/webhooks/whatsapp",
            params={
                "hub.mode": "subscribe",
                "hub.verify_token": verify + "x",
                "hub.challenge": "1",
            },
        )
        client.post(
            "/webhooks/whatsapp",
            content=body,
            headers={
                "Content-Type": "application/json",
                "X-Hub-Signature-256": sign(body, project.secrets["SVC_APP_SECRET"]),
            },
        )
        client.post(
            "/webhooks/whatsapp", content=body, headers={"X-Hub-Signature-256": "sha256=00"}
        )
        client.get("/api/messages", headers={"Authorization": "Bearer " + project.bearer[:-1]})
        client.get("/metrics", headers={"Authorization": "Bearer wrong"})
        assert client.get("/metrics").status_code == 200
    assert served.stop() == 0
    # The upstream got the access token (that is its job) and never the service bearer.
    assert graph.sends()
    for request in graph.requests:
        assert request.authorization == f"Bearer {project.secrets['SVC_ACCESS_TOKEN']}"
        assert project.bearer.encode() not in request.body
    assert captured.leaks() == []
    assert captured.size() > 10_000


def test_nothing_captured_in_this_session_holds_a_secret() -> None:
    assert SESSION_CAPTURE.leaks() == []
    print(
        f"secret scan: texts={len(SESSION_CAPTURE.texts)} chars={SESSION_CAPTURE.size()} "
        f"secret_values={len(SESSION_CAPTURE.secrets)} leaks=0"
    )
