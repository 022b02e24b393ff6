"""The lean ASGI front: request metrics for every request, and the webhook POST without Quart.

The webhook POST, the hottest route, is answered here from
``Service.ingest_webhook`` (same checks, same reply as a Quart view would give,
none of the per-request Quart machinery); every other request passes through
to the Quart app.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import trio

from ._body import BodyGate, ClientDisconnected, ReceivedChunks, read_body
from ._errors import HttpError
from ._replies import Reply, error_reply
from ._routes import Route, route_labeler
from ._service import Service

__all__ = ["ASGIApp", "front"]

Scope = Any
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]
ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]

_LAST_SEND_SHIELD_SECONDS: Final = 10.0
"""How long a response's last send may run on after its request was cancelled."""


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


async def _send_reply(send: Send, reply: Reply) -> None:
    headers = [
        (b"content-type", reply.content_type.encode("latin-1")),
        (b"content-length", str(len(reply.body)).encode("latin-1")),
    ]
    headers += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers.items()]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body})


class _Watched:
    """One request's receive and send, watched: the answer's status (for the request metric),
    and whether the body is still unread when the answer starts (then the connection closes)."""

    __slots__ = ("_receive", "_send", "body_pending", "status")

    def __init__(self, scope: Scope, receive: Receive, send: Send, declared: str | None) -> None:
        self._receive = receive
        self._send = send
        self.status = 500
        # A body is still unread until the server hands over its last chunk.
        self.body_pending = (declared is not None and declared != "0") or _header(
            scope, b"transfer-encoding"
        ) is not None

    async def receive(self) -> Any:
        message = await self._receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            self.body_pending = False
        return message

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
            if self.body_pending:
                # Answered before the body was read (413, 401, 405...): the rest of the
                # body is still on the connection, so it cannot carry another request.
                headers = [*message.get("headers", ()), (b"connection", b"close")]
                message = {**message, "headers": headers}
        elif message["type"] == "http.response.body" and not message.get("more_body"):
            # Inside this last send the server reports the stream closed, Quart-Trio
            # cancels the request's tasks at once, and the server would be cut off
            # before it recycles the connection and starts its keep-alive timer.
            # (The server shields its HTTP/1.1 writes itself; the bound covers HTTP/2
            # flow control, where a peer could otherwise hold the send open.)
            with trio.CancelScope(
                shield=True, deadline=trio.current_time() + _LAST_SEND_SHIELD_SECONDS
            ):
                await self._send(message)
            return
        await self._send(message)


def front(
    service: Service, quart_asgi: ASGIApp, routes: tuple[Route, ...], gate: BodyGate
) -> ASGIApp:
    """Wrap ``quart_asgi``: time every HTTP request, and serve the webhook POST directly.

    ``gate`` is the app's one ``BodyGate``: the webhook body is read under it,
    as every Quart route's body is (``request_body``).
    """
    label = route_labeler(routes)
    webhook_path = service.profile.webhook_path
    limit = service.profile.max_body_bytes
    telemetry = service.telemetry

    async def webhook(scope: Scope, receive: Receive, send: Send, declared: str | None) -> None:
        # ``declared`` is the Content-Length that ``serve`` already read.
        try:
            body = await read_body(
                ReceivedChunks(receive), declared=declared, limit=limit, gate=gate
            )
        except ClientDisconnected:
            return  # nothing to answer
        except HttpError as error:
            await _send_reply(send, error_reply(error))
            return
        reply = await service.ingest_webhook(body, _header(scope, b"x-hub-signature-256"))
        try:
            await _send_reply(send, reply)
        finally:
            service.answered()  # the handed updates run after the answer

    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await quart_asgi(scope, receive, send)
            return
        begin = time.perf_counter()
        declared = _header(scope, b"content-length")
        watched = _Watched(scope, receive, send, declared)
        method = str(scope.get("method", "GET"))
        path = str(scope.get("path", ""))
        try:
            if method == "POST" and path == webhook_path:
                await webhook(scope, watched.receive, watched.send, declared)
            else:
                await quart_asgi(scope, watched.receive, watched.send)
        finally:
            telemetry.request(
                route=label(path),
                method=method,
                status=watched.status,
                seconds=time.perf_counter() - begin,
            )

    return serve
