"""The guarded connection's sends: one task at a time writes to a connection, its EOF included.

Hypercorn closes a connection from whichever task finds it over: the reader on a
broken request, the app's task after an answer that ends the connection. Here a
connection in memory runs the guarded server class with a stream whose EOF lets
every other task run before it is written: the widest schedule trio allows for a
socket's EOF, which holds the socket's send side across one checkpoint. The
served-socket version (``tests/http/test_hypercorn_socket.py``) meets the same
collision only when trio draws that order.
"""

from __future__ import annotations

import contextlib
import io
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest
import trio
import trio.testing
from hypercorn.config import Config
from hypercorn.trio.worker_context import WorkerContext
from hypercorn.utils import wrap_app
from prometheus_client import CollectorRegistry

from svc.cli import ConnectionGuard
from svc.cli._serving import guarded_server_class

BROKEN_AFTER_CONTINUE = (
    b"POST /hook HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
    b"Transfer-Encoding: chunked\r\n\r\nzz\r\n"
)
"""A request that waits for ``100 Continue``, sent with a malformed chunk after its head."""


class _Socket:
    family = socket.AF_INET

    def getpeername(self) -> tuple[str, int]:
        return ("127.0.0.1", 40000)

    def getsockname(self) -> tuple[str, int]:
        return ("127.0.0.1", 8000)


class SlowEofStream(trio.abc.HalfCloseableStream):
    """A connection in memory: ``incoming`` arrives at once, then nothing until it is closed.

    Like trio's ``SocketStream``, a send or the EOF while another task is sending raises
    ``BusyResourceError``; the EOF lets every other task run while it holds the send side.
    """

    def __init__(self, incoming: bytes) -> None:
        self.socket = _Socket()
        self.sent = bytearray()
        self._incoming = incoming
        self._sending = False
        self._eof = False
        self._closed = trio.Event()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self._eof or self._closed.is_set():
            raise trio.ClosedResourceError
        with self._send_side():
            await trio.lowlevel.checkpoint()
            if self._closed.is_set():
                raise trio.ClosedResourceError
            self.sent += data

    async def send_eof(self) -> None:
        with self._send_side():
            await trio.testing.wait_all_tasks_blocked()
            if self._closed.is_set():
                raise trio.ClosedResourceError
            self._eof = True

    @contextlib.contextmanager
    def _send_side(self) -> Iterator[None]:
        if self._sending:
            raise trio.BusyResourceError("another task is currently sending data on this stream")
        self._sending = True
        try:
            yield
        finally:
            self._sending = False

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        if self._incoming:
            data, self._incoming = self._incoming, b""
            await trio.lowlevel.checkpoint()
            return data
        await self._closed.wait()
        raise trio.ClosedResourceError

    async def aclose(self) -> None:
        self._closed.set()
        await trio.lowlevel.checkpoint()


async def _early_503(scope: Any, receive: Any, send: Any) -> None:
    """Answers every request 503 without reading its body (as the body gate does)."""
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [(b"content-length", b"4"), (b"connection", b"close")],
        }
    )
    await send({"type": "http.response.body", "body": b"busy"})


async def test_the_eof_is_never_written_beside_another_send(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The reader sends the 100 under the send lock while the app waits on it with its 503,
    hands the lock over, finds the bad chunk and closes the connection: the EOF must not be
    written while the app sends (``BusyResourceError`` in the app, its answer cut)."""
    errors = logging.getLogger("tests.hypercorn.error")
    config = Config()
    config.accesslog = None
    config.errorlog = errors
    guard_log = io.StringIO()
    server_class = guarded_server_class(ConnectionGuard(CollectorRegistry(), log_stream=guard_log))
    stream = SlowEofStream(BROKEN_AFTER_CONTINUE)
    server = server_class(
        wrap_app(_early_503, config.wsgi_max_body_size, "asgi"),
        config,
        WorkerContext(None),
        {},
        stream,
    )
    with caplog.at_level(logging.INFO, logger=errors.name), trio.fail_after(5):
        await server.run()
    logged = [r for r in caplog.records if r.name == errors.name and r.levelno >= logging.ERROR]
    assert [(r.getMessage(), r.exc_info and r.exc_info[0]) for r in logged] == []
    assert guard_log.getvalue() == ""
    interim, _, rest = bytes(stream.sent).partition(b"\r\n\r\n")
    assert interim.startswith(b"HTTP/1.1 100 ")
    # Nothing after the 100, or one whole answer: never a head without its body.
    assert rest == b"" or (rest.startswith(b"HTTP/1.1 503 ") and rest.endswith(b"\r\n\r\nbusy"))
