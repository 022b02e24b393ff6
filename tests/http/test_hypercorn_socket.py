"""The app over a real socket: hypercorn's trio worker on 127.0.0.1, driven by httpx."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from svc.store import SqliteStore
from tests._support import FakeGraphTransport, free_port, sign

from .conftest import APP_SECRET, AUTH, BEARER, AppFactory, RecordingFacade, fixture


@asynccontextmanager
async def _served(app: Any, *, keep_alive_timeout: float | None = None) -> AsyncIterator[int]:
    """``app`` under hypercorn's trio worker on a free port of 127.0.0.1 for the block."""
    port = free_port()
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.errorlog = None
    if keep_alive_timeout is not None:
        config.keep_alive_timeout = keep_alive_timeout
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        await nursery.start(
            lambda task_status: serve(
                app, config, shutdown_trigger=stop.wait, task_status=task_status
            )
        )
        try:
            yield port
        finally:
            stop.set()


@pytest.mark.slow
async def test_webhook_send_and_metrics_over_a_real_socket(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore
) -> None:
    app = make_app(store=sqlite_store, facade=RecordingFacade())
    async with (
        _served(app) as port,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client,
    ):
        health = await client.get("/healthz")
        assert health.json() == {"ok": True, "service": "svc"}
        body = json.dumps(fixture("message_text.json")).encode()
        hook = await client.post(
            "/webhooks/whatsapp",
            content=body,
            headers={"X-Hub-Signature-256": sign(body=body, secret=APP_SECRET)},
        )
        assert hook.json()["dispatched"] == 1
        again = await client.post(
            "/webhooks/whatsapp",
            content=body,
            headers={"X-Hub-Signature-256": sign(body=body, secret=APP_SECRET)},
        )
        assert again.json()["dispatched"] == 0
        # Refused on the declared length alone: the body is never sent.
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        await stream.send_all(
            b"POST /webhooks/whatsapp HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n"
        )
        head = await stream.receive_some(4096)
        assert head.startswith(b"HTTP/1.1 413")
        await stream.aclose()
        send = await client.post(
            "/api/messages/text", headers=AUTH, json={"to": "15551234567", "text": "hi"}
        )
        assert send.status_code == 200
        metrics = await client.get("/metrics", headers=AUTH)
        assert 'route="/webhooks/whatsapp"' in metrics.text
        ready = await client.get("/readyz")
        assert ready.status_code == 200
    assert len(graph.requests) == 1
    page: Any = await sqlite_store.list_messages(limit=10)
    assert {record.direction for record in page.items} == {"inbound", "outbound"}


@pytest.mark.slow
async def test_an_answer_given_before_the_body_was_read_closes_the_connection(
    make_app: AppFactory,
) -> None:
    """A keep-alive client must not reuse a connection whose body was left unread."""
    app = make_app()
    async with _served(app) as port:
        # Raw sockets: the early answer must arrive while most of the body is unsent.
        for head, status in (
            (
                b"POST /api/messages/text HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n"
                + f"Authorization: Bearer {BEARER}\r\n\r\n".encode(),
                b"413",
            ),
            (
                b"POST /api/messages/text HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n",
                b"401",
            ),
        ):
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.send_all(head + b"{" * 1000)
            answer = b""
            with trio.fail_after(5):
                while b"\r\n\r\n" not in answer:
                    answer += await stream.receive_some(65536)
            assert answer.startswith(b"HTTP/1.1 " + status)
            # The client is told not to reuse the connection (its body is still unread).
            assert b"connection: close" in answer.lower()
            await stream.aclose()
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
            # A request whose body was read keeps its connection.
            ok = await client.post(
                "/api/messages/text", json={"to": "15551234567", "text": "x"}, headers=AUTH
            )
            assert ok.status_code == 200
            assert ok.headers.get("connection") != "close"


async def _read_answer(stream: trio.SocketStream) -> bytes:
    """One whole answer (head and Content-Length body) from ``stream``."""
    data = b""
    with trio.fail_after(5):
        while b"\r\n\r\n" not in data:
            data += await stream.receive_some(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(body) < length:
            body += await stream.receive_some(65536)
    return head


@pytest.mark.slow
@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",  # answered by Quart
        b"GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n",  # Quart's 404
        b"POST /webhooks/whatsapp HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",  # lean path
    ],
    ids=["quart-route", "not-found", "webhook"],
)
async def test_an_idle_keep_alive_connection_is_closed_after_the_keep_alive_timeout(
    make_app: AppFactory, request_bytes: bytes
) -> None:
    """The server's idle timer runs after every answer, whichever path gave it.

    Quart-Trio cancels a request's tasks as soon as the server reports the
    stream closed, which happens inside the last send; unless that send
    finishes, hypercorn never starts its keep-alive timer and an idle client
    holds the connection (and a shutdown) forever.
    """
    app = make_app()
    async with (
        _served(app, keep_alive_timeout=0.3) as port,
        await trio.open_tcp_stream("127.0.0.1", port) as stream,
    ):
        await stream.send_all(request_bytes)
        head = await _read_answer(stream)
        assert b"connection: close" not in head.lower()  # kept alive, then idle
        with trio.fail_after(3):
            assert await stream.receive_some(10) == b""  # closed by the server
