"""The one bounded body reader, for the lean webhook path and the Quart routes alike.

A body is refused with 413 on its declared Content-Length before any byte is
read, and reading stops at the first chunk past the cap, so an oversized body
is never held in memory. A ``BodyGate`` bounds the rest: how many bodies one
worker reads at once (beyond it 503 with ``Retry-After``, before reading) and
how long one body may take (408, and the connection is closed), so stalled
clients hold neither memory nor a connection for long.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterable, Awaitable, Callable
from typing import Any, Final

import trio
from werkzeug.exceptions import RequestEntityTooLarge

from svc._text import decimal_int
from svc.webhook import BoundedBody, PayloadTooLargeError, check_content_length

from ._errors import body_timeout, payload_too_large, too_many_bodies

__all__ = [
    "DEFAULT_BODY_READ_TIMEOUT",
    "DEFAULT_MAX_PENDING_BODIES",
    "BodyGate",
    "ClientDisconnected",
    "ReceivedChunks",
    "read_body",
]

DEFAULT_BODY_READ_TIMEOUT: Final = 15.0
"""Seconds from the first wait for a body to its last byte."""
DEFAULT_MAX_PENDING_BODIES: Final = 64
"""Bodies one worker reads at once; with the body cap it bounds the memory they hold."""


class ClientDisconnected(Exception):
    """The client went away before its body was complete: there is nothing to answer."""


class BodyGate:
    """How many bodies one worker reads at once, and how long each may take.

    One per app (a worker): ``pending`` counts the bodies being read now.
    """

    __slots__ = ("max_pending", "pending", "timeout")

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_BODY_READ_TIMEOUT,
        max_pending: int = DEFAULT_MAX_PENDING_BODIES,
    ) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise TypeError("body_read_timeout must be a number of seconds")
        if not (math.isfinite(timeout) and 0 < timeout <= 3600):
            raise ValueError("body_read_timeout must be in (0, 3600] seconds")
        if isinstance(max_pending, bool) or not isinstance(max_pending, int):
            raise TypeError("max_pending_bodies must be an int")
        if not 1 <= max_pending <= 100_000:
            raise ValueError("max_pending_bodies must be in 1..100000")
        self.timeout: Final = float(timeout)
        self.max_pending: Final = max_pending
        self.pending = 0

    @property
    def retry_after(self) -> int:
        """Seconds a refused client should wait: the time a body slot may stay taken."""
        return max(1, math.ceil(self.timeout))


class ReceivedChunks:
    """An ASGI ``receive`` as an async iterator of body chunks, ended by the last chunk.

    Raises ``ClientDisconnected`` when the server reports anything but a body
    message (the client went away).
    """

    __slots__ = ("_done", "_receive")

    def __init__(self, receive: Callable[[], Awaitable[Any]]) -> None:
        self._receive = receive
        self._done = False

    def __aiter__(self) -> ReceivedChunks:
        return self

    async def __anext__(self) -> bytes:
        if self._done:
            raise StopAsyncIteration
        message = await self._receive()
        if message["type"] != "http.request":
            raise ClientDisconnected
        self._done = not message.get("more_body", False)
        body: bytes = message.get("body", b"")
        return body


async def read_body(
    chunks: AsyncIterable[bytes],
    *,
    declared: int | str | None,
    limit: int,
    gate: BodyGate | None = None,
) -> bytes:
    """The whole body, or ``HttpError`` 413 ``payload_too_large``.

    ``declared`` is the Content-Length (a header text that is not digits counts
    as over the cap). Quart's own cap (``RequestEntityTooLarge``) is answered
    the same way. With ``gate``: 503 ``server_busy`` when the worker already
    reads ``max_pending`` bodies (nothing is read), 408 ``request_timeout``
    when the body is not complete within ``timeout`` seconds.
    """
    try:
        if isinstance(declared, str):
            length = decimal_int(declared)
            if length is None:
                raise PayloadTooLargeError
            declared = length
        check_content_length(declared, max_body_bytes=limit)
        bounded = BoundedBody(max_body_bytes=limit)
        if gate is None:
            async for chunk in chunks:
                bounded.feed(chunk)
            return bounded.body()
        if gate.pending >= gate.max_pending:
            raise too_many_bodies(gate.retry_after)
        gate.pending += 1
        try:
            with trio.move_on_after(gate.timeout) as deadline:
                async for chunk in chunks:
                    bounded.feed(chunk)
        finally:
            gate.pending -= 1
        if deadline.cancelled_caught:
            raise body_timeout()
    except (PayloadTooLargeError, RequestEntityTooLarge):
        raise payload_too_large() from None
    return bounded.body()
