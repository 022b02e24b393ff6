"""The ``/dev/`` routes in front of the service's ASGI app: the page, its stream, its actions.

``mount_dev(app, session)`` answers every path under ``/dev/`` itself and hands
every other request (and the lifespan) to ``app`` unchanged. Each ``/dev/`` request
needs the token: ``/dev/?token=...`` once (it is then kept in an HttpOnly, SameSite
cookie) or the ``X-Svc-Dev-Token`` header; a missing one is answered 401, a wrong one
403. A request whose Host is not a loopback name is refused (403), and every POST must
be JSON (415 otherwise), so another site cannot drive the page's actions; the one
exception, ``/dev/api/upload``, takes a file's bytes as ``application/octet-stream``
(the file's name and type in the query), never a form's body type.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from importlib import resources
from typing import Any, Final
from urllib.parse import parse_qs

import trio

from svc import crypto
from svc._json import MAX_JSON_DEPTH, loads_strict
from svc._text import decimal_int
from svc.graph import FAILURES
from svc.webhook import DevActionError

from ._media import MAX_UPLOAD
from ._session import DevSession

__all__ = ["COOKIE", "PREFIX", "TOKEN_HEADER", "mount_dev"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

PREFIX: Final = "/dev/"
COOKIE: Final = "svc_dev_token"
TOKEN_HEADER: Final = "x-svc-dev-token"  # noqa: S105 - a header name, not a secret
MAX_BODY: Final = 64 * 1024
MAX_CHAT_KEY: Final = 128
"""The longest chat key ``/dev/api/open`` takes (a phone number or a BSUID is far shorter)."""
MAX_ROW_ID: Final = 2**63 - 1
"""The largest inbox item id (a 64-bit row id): a larger one names no item."""
KEEPALIVE_SECONDS: Final = 15.0
_LOOPBACK: Final = frozenset({"127.0.0.1", "localhost", "[::1]"})
UPLOAD_TYPE: Final = "application/octet-stream"
"""The body type of an upload: one another site's form cannot post without a preflight."""
_THUMBNAIL_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The uploads the page may show as images (raster only: an SVG could carry a script)."""
_STATIC: Final = {
    "dev.js": "text/javascript; charset=utf-8",
    "dev.css": "text/css; charset=utf-8",
}
_PAGE_HEADERS: Final = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
]


def _asset(name: str) -> bytes:
    return resources.files("svc.dev").joinpath("static", name).read_bytes()


async def _answer(
    send: Send,
    status: int,
    body: bytes,
    content_type: str = "application/json",
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type.encode()),
                (b"content-length", str(len(body)).encode()),
                *_PAGE_HEADERS,
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _json(send: Send, status: int, value: Any) -> None:
    # ASCII with escapes: any string, even one UTF-8 cannot carry, makes a valid answer.
    await _answer(send, status, json.dumps(value).encode("ascii"))


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _host_is_loopback(headers: dict[str, str]) -> bool:
    host = headers.get("host", "")
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name in _LOOPBACK


def _presented_token(headers: dict[str, str]) -> str | None:
    if TOKEN_HEADER in headers:
        return headers[TOKEN_HEADER]
    cookie: SimpleCookie = SimpleCookie()
    try:
        cookie.load(headers.get("cookie", ""))
    except Exception:  # noqa: BLE001 - a malformed cookie header carries no token
        return None
    morsel = cookie.get(COOKIE)
    return morsel.value if morsel is not None else None


class _TooLarge(Exception):
    """A body past its route's cap."""


async def _read_body(receive: Receive, limit: int = MAX_BODY) -> bytes | None:
    """The request's body; None if the client left, ``_TooLarge`` past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def query_of(scope: Scope) -> dict[str, list[str]]:
    """The request's query parameters."""
    return parse_qs(scope.get("query_string", b"").decode("latin-1"))


def mount_dev(app: Any, session: DevSession) -> Any:
    """``app`` with the dev routes under ``/dev/`` in front of it (see the module docstring);
    the session's ``token`` opens them."""
    session.app = app
    token = session.token
    secret = token.encode("utf-8")

    def token_matches(value: str) -> bool:
        return crypto.constant_time_equal(value.encode("utf-8"), secret)

    async def dev_app(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == "/dev" or path.startswith(PREFIX)):
            await app(scope, receive, send)
            return
        headers = _headers(scope)
        if not _host_is_loopback(headers):
            await _json(send, 403, {"error": "the dev page answers on a loopback host only"})
            return
        query = query_of(scope)
        method = scope["method"]
        if path in ("/dev", PREFIX) and method == "GET" and "token" in query:
            if not token_matches(query["token"][0]):
                await _json(send, 403, {"error": "wrong token"})
                return
            cookie = f"{COOKIE}={token}; Path=/dev; HttpOnly; SameSite=Strict"
            await _answer(
                send,
                303,
                b"",
                "text/plain",
                [(b"location", PREFIX.encode()), (b"set-cookie", cookie.encode())],
            )
            return
        presented = _presented_token(headers)
        if presented is None:
            await _json(send, 401, {"error": "open the URL svc dev printed (it has the token)"})
            return
        if not token_matches(presented):
            await _json(send, 403, {"error": "wrong token"})
            return
        await _route(scope, receive, send, path, method, headers, session)

    return dev_app


async def _route(
    scope: Scope,
    receive: Receive,
    send: Send,
    path: str,
    method: str,
    headers: dict[str, str],
    session: DevSession,
) -> None:
    if method == "GET":
        if path in ("/dev", PREFIX):
            await _answer(send, 200, _asset("index.html"), "text/html; charset=utf-8")
        elif path.startswith("/dev/static/") and path.removeprefix("/dev/static/") in _STATIC:
            name = path.removeprefix("/dev/static/")
            await _answer(send, 200, _asset(name), _STATIC[name])
        elif path == "/dev/events":
            await _stream(receive, send, session, headers)
        elif path == "/dev/api/state":
            await _json(
                send,
                200,
                {
                    "boot": session.boot,
                    "business": session.metadata,
                    "failures": {name: f.label for name, f in FAILURES.items()},
                    "armed": session.transport.next_failure,
                },
            )
        elif path == "/dev/api/dead":
            await _json(send, 200, {"items": await session.dead_letters()})
        elif path.startswith("/dev/media/"):
            await _media(send, path.removeprefix("/dev/media/"), session)
        else:
            await _json(send, 404, {"error": "not found"})
        return
    if method != "POST":
        await _json(send, 405, {"error": "method not allowed"})
        return
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if path == "/dev/api/upload" and content_type == UPLOAD_TYPE:
        await _upload(receive, send, headers, query_of(scope), session)
        return
    if content_type != "application/json":
        await _json(send, 415, {"error": "send JSON"})
        return
    try:
        body = await _read_body(receive)
    except _TooLarge:
        body = None
    try:
        data = loads_strict(body) if body is not None else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        error = f"the body must be a JSON object of at most 64 KiB, {MAX_JSON_DEPTH} levels deep"
        await _json(send, 400, {"error": error})
        return
    try:
        await _post(send, path, data, session)
    except DevActionError as exc:
        await _json(send, 400, {"error": str(exc)})


async def _upload(
    receive: Receive,
    send: Send,
    headers: dict[str, str],
    query: dict[str, list[str]],
    session: DevSession,
) -> None:
    """Keep the body (a file; ``?filename=&type=``) as an upload; its media fields."""
    declared = headers.get("content-length", "")
    length = decimal_int(declared)
    if length is not None and length > MAX_UPLOAD:
        await _json(send, 413, {"error": f"a file may hold {MAX_UPLOAD} bytes at most"})
        return
    try:
        content = await _read_body(receive, MAX_UPLOAD)
    except _TooLarge:
        await _json(send, 413, {"error": f"a file may hold {MAX_UPLOAD} bytes at most"})
        return
    if content is None:
        return
    try:
        upload = session.upload(
            content,
            mime_type=query.get("type", [""])[0],
            filename=query.get("filename", ["file"])[0],
        )
    except ValueError as exc:
        await _json(send, 400, {"error": str(exc)})
        return
    await _json(
        send,
        200,
        {
            "media_id": upload.media_id,
            "mime_type": upload.mime_type,
            "sha256": upload.sha256,
            "file_size": upload.file_size,
            "filename": upload.filename,
        },
    )


async def _media(send: Send, media_id: str, session: DevSession) -> None:
    """An uploaded image's bytes, for the chat's thumbnail (other types are not served)."""
    upload = session.uploads.get(media_id)
    if upload is None or upload.mime_type not in _THUMBNAIL_TYPES:
        await _json(send, 404, {"error": "no uploaded image with this id"})
        return
    await _answer(send, 200, session.uploads.content(upload), upload.mime_type)


async def _post(send: Send, path: str, data: dict[str, Any], session: DevSession) -> None:
    if path == "/dev/api/act":
        action = data.get("action")
        if not isinstance(action, dict):
            raise DevActionError("action must be an object")
        record = await session.act(data.get("user"), action)
        await _json(send, 200, record)
    elif path == "/dev/api/open":
        chat = data.get("chat") or None  # none, or an empty key: no chat is open
        if chat is not None and not (isinstance(chat, str) and 0 < len(chat) <= MAX_CHAT_KEY):
            raise DevActionError(f"chat must be a user's key of at most {MAX_CHAT_KEY} characters")
        session.open_chat(chat)
        await _json(send, 200, {"open": chat})
    elif path == "/dev/api/fail":
        name = data.get("failure")
        session.fail_next(name if isinstance(name, str) else None)
        await _json(send, 200, {"armed": session.transport.next_failure})
    elif path in ("/dev/api/dead/retry", "/dev/api/dead/drop"):
        item = data.get("id")
        if isinstance(item, bool) or not isinstance(item, int) or not 0 < item <= MAX_ROW_ID:
            raise DevActionError("id must be an inbox item id")
        done = (
            await session.retry_dead(item)
            if path.endswith("retry")
            else await session.drop_dead(item)
        )
        await _json(send, 200 if done else 404, {"done": done})
    else:
        await _json(send, 404, {"error": "not found"})


async def _stream(
    receive: Receive, send: Send, session: DevSession, headers: dict[str, str]
) -> None:
    """Server-sent events: every record after ``Last-Event-ID`` (of this boot), then live."""
    after = 0
    last = headers.get("last-event-id", "")
    boot, _, number = last.partition(":")
    if boot == session.boot:
        after = decimal_int(number) or 0
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"),
                *_PAGE_HEADERS,
            ],
        }
    )

    async def push(text: str) -> None:
        await send({"type": "http.response.body", "body": text.encode("utf-8"), "more_body": True})

    def frame(record: dict[str, Any]) -> str:
        data = json.dumps(record, default=str)  # ASCII, as ``_json``
        return f"id: {session.boot}:{record['id']}\ndata: {data}\n\n"

    disconnected = False
    with session.subscribe(after) as (backlog, records):
        async with trio.open_nursery() as nursery:

            async def until_disconnect() -> None:
                nonlocal disconnected
                while (await receive())["type"] != "http.disconnect":
                    pass
                disconnected = True
                nursery.cancel_scope.cancel()

            nursery.start_soon(until_disconnect)
            hello = {"type": "hello", "boot": session.boot, "id": 0}
            await push(f"retry: 500\ndata: {json.dumps(hello)}\n\n")
            for record in backlog:
                await push(frame(record))
            while True:
                with trio.move_on_after(KEEPALIVE_SECONDS):
                    try:
                        record = await records.receive()
                    except trio.EndOfChannel:
                        break
                    await push(frame(record))
                    continue
                await push(": keep-alive\n\n")
            nursery.cancel_scope.cancel()
    if not disconnected:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
