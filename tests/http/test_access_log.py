"""Issue 26 item 13: the opt-in access log writes method, templated route, status, duration."""

from __future__ import annotations

import io
import json
from pathlib import Path

import httpx
import pytest

from svc.http import LogOptions
from svc.store import SqliteStore
from tests._support import ServeProcess, start_serve

from .conftest import AUTH, SECRET_VALUES, AppFactory


def _lines(stream: io.StringIO) -> list[dict[str, object]]:
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    return [record for record in records if record.get("event") == "svc.access"]


async def test_one_line_per_request_with_the_templated_route_only(
    make_app: AppFactory, sqlite_store: SqliteStore, log_stream: io.StringIO
) -> None:
    log = LogOptions(log_stream=log_stream, access_log=True)
    client = make_app(store=sqlite_store, log=log).test_client()
    await client.get("/healthz")
    await client.get("/api/messages/wamid.SECRETID123", headers=AUTH)
    await client.get("/api/conversations/+15551234567/window", headers=AUTH)
    await client.post(
        "/api/messages/text", json={"to": "15557654321", "text": "hi there"}, headers=AUTH
    )
    await client.get("/no/such/16505551234?token=abc")
    records = _lines(log_stream)
    assert [(r["method"], r["route"], r["status"]) for r in records] == [
        ("GET", "/healthz", 200),
        ("GET", "/api/messages/:id", 404),
        ("GET", "/api/conversations/:user/window", 200),
        ("POST", "/api/messages/text", 200),
        ("GET", "unmatched", 404),
    ]
    for record in records:
        assert set(record) == {"event", "method", "route", "status", "durationMs"}
        assert isinstance(record["durationMs"], float | int)
        assert record["durationMs"] >= 0
    text = log_stream.getvalue()
    for value in ("SECRETID123", "15551234567", "15557654321", "hi there", "token", *SECRET_VALUES):
        assert value not in text


async def test_the_access_log_is_off_by_default(
    make_app: AppFactory, log_stream: io.StringIO
) -> None:
    client = make_app().test_client()
    await client.get("/healthz")
    assert _lines(log_stream) == []


@pytest.mark.slow
def test_svc_serve_access_log_writes_lines_to_stderr(
    tmp_path: Path, serving: list[ServeProcess]
) -> None:
    from click.testing import CliRunner

    from svc.cli import cli

    assert CliRunner().invoke(cli, ["init", str(tmp_path / "p")]).exit_code == 0
    config = str(tmp_path / "p" / "svc.config.yaml")
    served = start_serve("--config", config, "--dry-run", "--port", "0", "--access-log")
    serving.append(served)
    assert httpx.get(served.url + "/healthz", timeout=10).status_code == 200
    assert httpx.get(served.url + "/api/messages/wamid.X1", timeout=10).status_code == 401
    assert served.stop() == 0
    access = [json.loads(line) for line in served.lines if line.startswith('{"event":"svc.access"')]
    assert [(r["method"], r["route"], r["status"]) for r in access] == [
        ("GET", "/healthz", 200),
        ("GET", "/api/messages/:id", 401),
    ]
