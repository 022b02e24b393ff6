"""The secret scan: no secret value in any response, log line, metric text or OpenAPI document.

Each test produces what it scans: a live service it drives through every route
family, or a dry-run service and a refused start. (Every other reliability test
also scans its own captures at teardown, through the ``captured`` fixture.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._support import (
    Captured,
    FakeGraph,
    ServeProcess,
    make_project,
    run_svc,
    sign,
    start_serve,
)

from ._handlers import inbox_key, wait_until
from .conftest import inbound_text, start_live

pytestmark = pytest.mark.slow


def test_no_secret_in_anything_captured_from_a_live_service(
    tmp_path: Path, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    project = make_project(tmp_path, graph.url)
    captured.secret(inbox_key(project))  # the echo runs from the inbox
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
                "X-Hub-Signature-256": sign(body=body, secret=project.secrets["SVC_APP_SECRET"]),
            },
        )
        client.post(
            "/webhooks/whatsapp", content=body, headers={"X-Hub-Signature-256": "sha256=00"}
        )
        client.get("/api/messages", headers={"Authorization": "Bearer " + project.bearer[:-1]})
        client.get("/metrics", headers={"Authorization": "Bearer wrong"})
        assert client.get("/metrics").status_code == 200
    wait_until(lambda: any(b"Echo: scan me" in r.body for r in graph.sends()), "the echo", 30)
    assert served.stop() == 0
    # The upstream got the access token (that is its job) and never the service bearer.
    assert graph.sends()
    for request in graph.requests:
        assert request.authorization == f"Bearer {project.secrets['SVC_ACCESS_TOKEN']}"
        assert project.bearer.encode() not in request.body
    assert captured.leaks() == []
    assert captured.size() > 10_000


def test_nothing_captured_from_a_dry_run_service_or_a_refused_start_holds_a_secret(
    tmp_path: Path, captured: Captured, serving: list[ServeProcess]
) -> None:
    project = make_project(tmp_path)
    captured.secret(*project.secrets.values())
    refused = run_svc(
        "serve",
        *project.live_args(),
        "--database",
        "missing-folder/svc.db",
        capture=captured,
        cwd=tmp_path,
        env={"SVC_LIVE_ENABLE": "1", "SVC_YES_LIVE": "1"},
    )
    assert refused.returncode == 1
    assert "the store could not be opened or migrated" in refused.stderr
    served = start_serve(
        *project.dry_args(), "--database", "svc.db", "--port", "0", capture=captured, cwd=tmp_path
    )
    serving.append(served)
    body = inbound_text("wamid.SCAN2", "scan me too")
    with served.client() as client:
        for path in ("/openapi.json", "/metrics", "/status", "/debug/diagnostics", "/readyz"):
            assert client.get(path).status_code == 200
        sent = client.post("/api/messages/text", json={"to": "15551234567", "text": "scan"})
        assert sent.status_code == 200
        signed = client.post(
            "/webhooks/whatsapp",
            content=body,
            headers={
                "Content-Type": "application/json",
                "X-Hub-Signature-256": sign(body=body, secret=served.app_secret),
            },
        )
        assert signed.status_code == 200
        client.post(
            "/webhooks/whatsapp", content=body, headers={"X-Hub-Signature-256": "sha256=00"}
        )
        client.get("/api/messages", headers={"Authorization": "Bearer " + served.bearer[:-1]})
    assert served.stop() == 0
    assert len(captured.secrets) == 7  # the project's four and the three dry-run values
    assert captured.leaks() == []
    print(
        f"secret scan: texts={len(captured.texts)} chars={captured.size()} "
        f"secret_values={len(captured.secrets)} leaks=0"
    )
