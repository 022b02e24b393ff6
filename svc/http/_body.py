"""The one bounded body reader, for the lean webhook path and the Quart routes alike.

A body is refused with 413 on its declared Content-Length before any byte is
read, and reading stops at the first chunk past the cap, so an oversized body
is never held in memory.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable
from typing import Any

from werkzeug.exceptions import RequestEntityTooLarge

from svc.webhook import BoundedBody, PayloadTooLargeError, check_content_length

from ._errors import payload_too_large

__all__ = ["ClientDisconnected", "ReceivedChunks", "read_body"]


class ClientDisconnected(Exception):
    """The client went away before its body was complete: there is nothing to answer."""


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
    chunks: AsyncIterable[bytes], *, declared: int | str | None, limit: int
) -> bytes:
    """The whole body, or ``HttpError`` 413 ``payload_too_large``.

    ``declared`` is the Content-Length (a header text that is not digits counts
    as over the cap). Quart's own cap (``RequestEntityTooLarge``) is answered
    the same way.
    """
    try:
        if isinstance(declared, str):
            if not declared.isdigit():
                raise PayloadTooLargeError
            declared = int(declared)
        check_content_length(declared, max_body_bytes=limit)
        bounded = BoundedBody(max_body_bytes=limit)
        async for chunk in chunks:
            bounded.feed(chunk)
    except (PayloadTooLargeError, RequestEntityTooLarge):
        raise payload_too_large() from None
    return bounded.body()
