"""The app over a real socket: hypercorn's trio worker on 127.0.0.1, driven by httpx."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
import trio.testing
from hypercorn.config import Config
from hypercorn.trio import serve
from hypercorn.utils import wrap_app
from prometheus_client import CollectorRegistry

from svc.cli._serving import ConnectionGuard, serve_guarded
from svc.http import BodyLimits
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


@asynccontextmanager
async def _served_guarded(
    app: Any, errors: logging.Logger
) -> AsyncIterator[tuple[int, io.StringIO]]:
    """``app`` as ``svc serve`` serves it (``serve_guarded``) on 127.0.0.1 for the block:
    its port and the guard's log; hypercorn's own error log goes to ``errors``."""
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = errors
    guard_log = io.StringIO()
    guard = ConnectionGuard(CollectorRegistry(), log_stream=guard_log)
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(
            lambda task_status: serve_guarded(
                wrap_app(app, config.wsgi_max_body_size, "asgi"),
                config,
                guard,
                shutdown_trigger=stop.wait,
                task_status=task_status,
            )
        )
        try:
            yield int(binds[0].rsplit(":", 1)[1]), guard_log
        finally:
            stop.set()


async def _read_to_end(stream: trio.SocketStream) -> bytes:
    data = b""
    with trio.fail_after(5):
        while chunk := await stream.receive_some(65536):
            data += chunk
    return data


COLLISION_ATTEMPTS = 24
"""Connections of the collision test: trio runs the two tasks that collide in the order it
draws for their batch, so each attempt collides with probability 1/2 (without the fix)."""

BROKEN_AFTER_CONTINUE = (
    b"POST /webhooks/whatsapp HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
    b"Transfer-Encoding: chunked\r\n\r\nzz\r\n"
)
"""A webhook that waits for ``100 Continue``, sent with a malformed chunk after its head."""


@pytest.mark.slow
async def test_a_request_broken_while_its_early_503_is_sent_closes_without_a_collision(
    make_app: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """The connection's reader closes it (its request broke) while the app sends its answer.

    With the body gate full, the webhook is answered 503 before its body is read. The
    request waits for ``100 Continue`` and its chunked body is malformed: the reader task
    sends the 100 under the send lock while the app waits on that lock with its 503, hands
    the lock over and at once finds the bad chunk and closes the connection. Its EOF must
    not be written beside the app's send (trio's ``BusyResourceError`` in the app, the
    answer cut mid-way): no error is logged, the client reads the 100 and then either a
    whole answer or the end of the connection, and the server serves on.
    """
    errors = logging.getLogger("tests.hypercorn.error")
    app = make_app(limits=BodyLimits(max_pending_bodies=1, body_read_timeout=30))
    async with (
        _served_guarded(app, errors) as (port, guard_log),
        await trio.open_tcp_stream("127.0.0.1", port) as holder,
    ):
        # A body left unfinished holds the one body slot.
        await holder.send_all(
            b"POST /webhooks/whatsapp HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"
        )
        await trio.testing.wait_all_tasks_blocked()
        with caplog.at_level(logging.INFO, logger=errors.name):
            for _ in range(COLLISION_ATTEMPTS):
                async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
                    await stream.send_all(BROKEN_AFTER_CONTINUE)
                    answer = await _read_to_end(stream)
                interim, _, rest = answer.partition(b"\r\n\r\n")
                assert interim.startswith(b"HTTP/1.1 100 "), answer
                assert rest == b"" or (rest.startswith(b"HTTP/1.1 503 ") and _complete(rest))
            await trio.testing.wait_all_tasks_blocked()
        logged = [r for r in caplog.records if r.name == errors.name and r.levelno >= logging.ERROR]
        assert [(r.getMessage(), r.exc_info and r.exc_info[0]) for r in logged] == []
        assert guard_log.getvalue() == ""
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
            assert (await client.get("/healthz")).status_code == 200


def _complete(answer: bytes) -> bool:
    """Whether ``answer`` is one whole answer: its head and its Content-Length body."""
    head, found, body = answer.partition(b"\r\n\r\n")
    lengths = [
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    ]
    return bool(found) and lengths == [len(body)]
