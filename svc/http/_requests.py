"""Helpers of the Quart views: replies, bearer auth, the bounded body, strict JSON, query and path.

Each helper reads the current Quart ``request`` and either returns a checked
value or raises the named ``HttpError`` the error handler answers.
"""

from __future__ import annotations

from typing import Final

from quart import Response, current_app, request
from werkzeug.routing import Map, PathConverter

from svc import crypto
from svc._json import JsonTooDeepError, loads_strict
from svc._text import decimal_int, has_ascii_control, has_control
from svc.graph import is_phone_number, is_user_id

from ._body import read_body
from ._errors import (
    malformed_json,
    malformed_path,
    malformed_query,
    method_not_allowed,
    not_found,
    unauthorized,
)
from ._replies import Reply, error_reply, json_bytes

__all__ = [
    "BODY_GATE_KEY",
    "MAX_PATH_ID",
    "check_path_id",
    "check_user",
    "configure_url_map",
    "json_response",
    "operator_gate",
    "parse_json",
    "query_int",
    "query_text",
    "reply_response",
    "request_body",
    "require_bearer",
]

MAX_PATH_ID: Final = 256
MAX_QUERY_TEXT: Final = 4096


def reply_response(reply: Reply) -> Response:
    response = Response(reply.body, status=reply.status, content_type=reply.content_type)
    for name, value in reply.headers.items():
        response.headers[name] = value
    return response


def json_response(data: object, status: int = 200) -> Response:
    return reply_response(Reply(status, json_bytes(data)))


def _authorized(header: str | None, token: bytes) -> bool:
    """``Authorization: Bearer <token>`` compared in constant time."""
    if header is None:
        return False
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return False
    return crypto.constant_time_equal(value.strip().encode("utf-8", "surrogatepass"), token)


def require_bearer(token: bytes) -> None:
    """401 ``unauthorized`` unless the request carries the service bearer ``token``."""
    if not _authorized(request.headers.get("Authorization"), token):
        raise unauthorized()


def operator_gate(token: bytes) -> Response | None:
    """Hidden routes: the catch-all 404 on bad auth, 405 for a wrong method with good auth,
    whatever the method (the app's 405 handler asks it too, for a method no route lists)."""
    if not _authorized(request.headers.get("Authorization"), token):
        return reply_response(error_reply(not_found()))
    if request.method not in ("GET", "HEAD"):
        return reply_response(error_reply(method_not_allowed(("GET", "HEAD"))))
    return None


BODY_GATE_KEY: Final = "svc.body_gate"
"""Where ``create_app`` keeps the app's ``BodyGate`` (``app.extensions``)."""


async def request_body(limit: int) -> bytes:
    """The request body through the one bounded reader (413 over ``limit``), under the
    app's ``BodyGate`` (503 when too many bodies are being read, 408 past the deadline)."""
    gate = current_app.extensions.get(BODY_GATE_KEY)
    return await read_body(
        request.body, declared=request.content_length, limit=limit, gate=gate
    )


def parse_json(body: bytes) -> object:
    """Strict JSON of a non-empty body, else 400 ``malformed_json``."""
    if not body:
        raise malformed_json(empty=True)
    try:
        return loads_strict(body)
    except JsonTooDeepError as exc:
        raise malformed_json(too_deep=exc.limit) from None
    except ValueError:
        # Not UTF-8, not JSON, a non-finite number or nesting past MAX_JSON_DEPTH.
        raise malformed_json() from None


def query_int(name: str, *, default: int | None, low: int, high: int) -> int | None:
    """The query integer ``name`` in ``low..high`` (at most 6 digits), else 400."""
    raw = request.args.get(name)
    if raw is None:
        return default
    value = decimal_int(raw, max_digits=6)
    if value is None or not low <= value <= high:
        raise malformed_query(name, bounds=(low, high))
    return value


def query_text(name: str) -> str | None:
    """The query text ``name``: non-empty, bounded, no control character; else 400."""
    raw = request.args.get(name)
    if raw is None:
        return None
    if not raw or len(raw) > MAX_QUERY_TEXT or has_ascii_control(raw):
        raise malformed_query(name)
    return raw


def _encoded_slashes() -> int:
    """How many ``%2F`` the request's undecoded path holds (ASGI ``raw_path``)."""
    raw = request.scope.get("raw_path")
    if not isinstance(raw, bytes):
        return 0
    return raw.lower().count(b"%2f")


class _PathConverter(PathConverter):
    """Werkzeug's ``path`` converter, matching every character: its own ``.`` stops at a
    newline, which would turn an id holding ``%0A`` into a 404 instead of a 400."""

    regex = "[^/](?s:.)*?"


def configure_url_map(url_map: Map) -> None:
    """Route matching for untrusted paths, set before any route is added.

    Slashes are never merged: werkzeug would answer ``//`` with a 308 whose
    ``Location`` it builds from the request's ``Host`` header.
    """
    url_map.merge_slashes = False
    url_map.converters["path"] = _PathConverter


def check_path_id(value: str) -> str:
    """An id path segment: non-empty, bounded, no slash or control character; else 400.

    A slash written as such (not ``%2F``) ends the segment: the path has a
    segment more than the route, so it is an unknown route (404).
    """
    if "/" in value and value.count("/") > _encoded_slashes():
        raise not_found()
    if (
        not value
        or len(value) > MAX_PATH_ID
        or "/" in value
        or "\\" in value
        or has_control(value)
    ):
        raise malformed_path()
    return value


def check_user(value: str) -> str | None:
    """A user as the store keys it, or None when ``value`` names none.

    A phone number (digits, optional leading ``+``, which is dropped: wa_ids
    have none), a BSUID or a parent BSUID, by the graph layer's predicates.
    """
    if is_phone_number(value):
        return value.removeprefix("+")
    return value if is_user_id(value) else None
