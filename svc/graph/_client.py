"""The Graph API client: one authenticated, versioned httpx client behind a small request API."""

from __future__ import annotations

import json as _json
import math
import re
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

import httpx

from svc._json import loads_strict
from svc._text import (
    breaks_url_path,
    has_ascii_control,
    has_header_break,
    is_visible_ascii,
)

from ._error_codes import api_error_from_response
from ._errors import (
    GraphNetworkError,
    GraphRequestValidationError,
    GraphSerializationError,
)
from ._parse import json_object
from ._transports import DEFAULT_TIMEOUT, default_transport
from ._validate import check_match, opt_mapping

__all__ = ["DEFAULT_API_VERSION", "DEFAULT_BASE_URL", "GraphClient"]

DEFAULT_API_VERSION = "v26.0"
"""The Graph API version svc speaks unless told otherwise; the one place it is spelled."""
DEFAULT_BASE_URL = "https://graph.facebook.com"
MAX_ACCESS_TOKEN_LENGTH = 4096

_API_VERSION = re.compile(r"v[0-9]+(\.[0-9]+)?")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""RFC 9110 token: HTTP method and header-name characters."""

QueryValue = str | int | float | bool | None


class GraphClient:
    """An authenticated client for one Graph API version.

    The ``Authorization: Bearer`` header is added here and only here; callers
    can never supply one. ``transport`` is any ``httpx.AsyncBaseTransport``
    (``httpx.MockTransport`` in tests, ``DryRunTransport`` for dry runs).
    The client runs on trio and asyncio alike (httpx through anyio).
    """

    def __init__(
        self,
        *,
        access_token: str,
        api_version: str = DEFAULT_API_VERSION,
        base_url: str = DEFAULT_BASE_URL,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
    ) -> None:
        _check_access_token(access_token)
        check_match(
            api_version, _API_VERSION,
            "api_version", f"api_version must look like {DEFAULT_API_VERSION}",
        )
        self._base_url = _check_base_url(base_url)
        if transport is not None and not isinstance(transport, httpx.AsyncBaseTransport):
            raise GraphRequestValidationError(
                "transport must be an httpx.AsyncBaseTransport", field="transport"
            )
        self._access_token = access_token
        self._api_version = api_version
        self._http = httpx.AsyncClient(
            transport=transport if transport is not None else default_transport(),
            timeout=timeout,
            follow_redirects=False,
        )

    @property
    def api_version(self) -> str:
        return self._api_version

    @property
    def base_url(self) -> str:
        return self._base_url

    def __repr__(self) -> str:
        return f"GraphClient(api_version={self._api_version!r}, base_url={self._base_url!r})"

    async def __aenter__(self) -> GraphClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the underlying connection pool."""
        await self._http.aclose()

    def url_for(self, path: str) -> httpx.URL:
        """The absolute URL of ``path``, relative to the API version (``"/123/messages"``).

        ``path`` is trusted code, not caller input (pass ids through
        ``check_path_segment``); it still may not hold whitespace, control
        characters, ``?``, ``#``, ``\\``, empty or dot segments.
        """
        if (
            not isinstance(path, str)
            or not path.startswith("/")
            or breaks_url_path(path)
            or any(part in ("", ".", "..") for part in path[1:].split("/"))
        ):
            raise GraphRequestValidationError(
                "path must start with '/' and be made of safe, non-empty segments", field="path"
            )
        return httpx.URL(f"{self._base_url}/{self._api_version}{path}")

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, QueryValue] | None = None,
        json: Any = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Send one request and return the parsed JSON answer, or raise a typed ``GraphError``.

        ``path`` is relative to the API version. ``json`` is serialized as JSON;
        ``content`` is sent verbatim (with the caller's content type). ``None``
        query values are omitted.
        """
        request = self.build_request(
            method, self.url_for(path), query=query, json=json, content=content, headers=headers
        )
        response = await self.send(request)
        return self.parse_json(response)

    def build_request(
        self,
        method: str,
        url: httpx.URL | str,
        *,
        query: Mapping[str, QueryValue] | None = None,
        json: Any = None,
        content: bytes | AsyncIterable[bytes] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Request:
        """Build an authenticated request after checking the method, headers, query and body."""
        check_match(method, _TOKEN, "method", "method must be an HTTP method name")
        if json is not None and content is not None:
            raise GraphRequestValidationError("pass json or content, not both", field="content")
        if content is not None and not isinstance(content, bytes | AsyncIterable):
            raise GraphRequestValidationError(
                "content must be bytes or an async iterable of bytes", field="content"
            )
        merged = _check_headers(headers)
        merged["Authorization"] = f"Bearer {self._access_token}"
        params = _check_query(query)
        if json is not None:
            body = self.encode_json(json)
            if not any(name.lower() == "content-type" for name in merged):
                merged["Content-Type"] = "application/json"
            content = body
        return self._http.build_request(
            method.upper(), url, params=params or None, content=content, headers=merged
        )

    async def send(self, request: httpx.Request, *, stream: bool = False) -> httpx.Response:
        """Send a built request; a non-2xx answer raises the typed ``GraphApiError``.

        With ``stream=True`` the body of a successful answer is left unread and
        the caller must close the response.
        """
        try:
            response = await self._http.send(request, stream=stream)
        except (httpx.HTTPError, OSError) as exc:
            raise GraphNetworkError(
                f"Graph transport failed: {type(exc).__name__}",
                request_sent=not isinstance(exc, _NOT_SENT),
            ) from None
        if response.is_success:
            return response
        try:
            await response.aread()
        except (httpx.HTTPError, OSError) as exc:
            raise GraphNetworkError(f"Graph transport failed: {type(exc).__name__}") from None
        finally:
            await response.aclose()
        raise api_error_from_response(
            status=response.status_code,
            payload=json_object(response.content),
            retry_after=response.headers.get("retry-after"),
        )

    @asynccontextmanager
    async def stream(
        self, method: str, url: httpx.URL | str, *, headers: Mapping[str, str] | None = None
    ) -> AsyncIterator[httpx.Response]:
        """Open a streamed, authenticated request to an absolute URL (media downloads)."""
        response = await self.send(self.build_request(method, url, headers=headers), stream=True)
        try:
            yield response
        finally:
            await response.aclose()

    @staticmethod
    def encode_json(value: Any) -> bytes:
        """``value`` as the UTF-8 JSON body a request sends: ``GraphRequestValidationError``
        when it is not JSON (a non-finite number, a lone surrogate UTF-8 cannot carry)."""
        try:
            return _json.dumps(value, ensure_ascii=False, allow_nan=False).encode()
        except (TypeError, ValueError) as exc:
            raise GraphRequestValidationError(
                f"body is not JSON-serializable: {type(exc).__name__}"
            ) from None

    @staticmethod
    def parse_json(response: httpx.Response) -> Any:
        """Parse a successful answer into a JSON object (an empty body is ``{}``).

        A body that is not JSON, or JSON that is not an object (every Graph
        answer is one), raises ``GraphSerializationError``.
        """
        if not response.content:
            return {}
        try:
            parsed = loads_strict(response.content)
        except ValueError:  # UnicodeDecodeError and JsonTooDeepError among them
            raise GraphSerializationError(
                f"Graph answered HTTP {response.status_code} with a body that is not JSON"
            ) from None
        if not isinstance(parsed, dict):
            raise GraphSerializationError(
                f"Graph answered HTTP {response.status_code} with JSON that is not an object"
            )
        return parsed


_NOT_SENT = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
    httpx.ProxyError,
    httpx.UnsupportedProtocol,
)
"""Transport failures raised before any byte of the request left: no connection was made."""


def _check_access_token(token: object) -> None:
    if not isinstance(token, str) or not token.strip():
        raise GraphRequestValidationError(
            "access_token must be a non-empty string", field="access_token"
        )
    if len(token) > MAX_ACCESS_TOKEN_LENGTH:
        raise GraphRequestValidationError(
            f"access_token must be at most {MAX_ACCESS_TOKEN_LENGTH} characters",
            field="access_token",
        )
    if not is_visible_ascii(token):
        raise GraphRequestValidationError(
            "access_token must be visible ASCII: no whitespace or control characters",
            field="access_token",
        )


def _check_base_url(base_url: object) -> str:
    if not isinstance(base_url, str) or has_ascii_control(base_url):
        raise GraphRequestValidationError("base_url must be an http(s) URL", field="base_url")
    try:
        url = httpx.URL(base_url)
    except httpx.InvalidURL:
        raise GraphRequestValidationError(
            "base_url must be an http(s) URL", field="base_url"
        ) from None
    # raw_host: the ASCII (IDNA-encoded) host as written; .host decodes it and raises
    # idna's own error for a malformed "xn--" label.
    if url.scheme not in ("http", "https") or not url.raw_host:
        raise GraphRequestValidationError("base_url must be an http(s) URL", field="base_url")
    if url.query or url.fragment or url.userinfo:
        raise GraphRequestValidationError(
            "base_url must carry no credentials, query or fragment", field="base_url"
        )
    return base_url.rstrip("/")


def _check_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    checked: dict[str, str] = {}
    for name, value in opt_mapping(headers, "headers").items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise GraphRequestValidationError(
                "header names and values must be strings", field="headers"
            )
        if has_header_break(name) or has_header_break(value):
            raise GraphRequestValidationError(
                "headers must not contain CR, LF or NUL", field="headers"
            )
        if (
            not _TOKEN.fullmatch(name)
            or not value.isascii()
            or has_ascii_control(value.replace("\t", " "))
        ):
            raise GraphRequestValidationError(
                "header names must be tokens and values visible ASCII", field="headers"
            )
        if name.strip().lower() == "authorization":
            raise GraphRequestValidationError(
                "the Authorization header is set by the client, never by callers",
                field="headers",
            )
        checked[name] = value
    return checked


def _check_query(query: Mapping[str, QueryValue] | None) -> dict[str, str]:
    params: dict[str, str] = {}
    for key, value in opt_mapping(query, "query").items():
        if not isinstance(key, str) or not key:
            raise GraphRequestValidationError("query keys must be non-empty strings", field="query")
        if value is None:
            continue
        text = _query_text(value, key)
        if has_header_break(key) or has_header_break(text):
            raise GraphRequestValidationError(
                "query keys and values must not contain CR, LF or NUL", field=key
            )
        params[key] = text
    return params


def _query_text(value: QueryValue, key: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        raise GraphRequestValidationError("query numbers must be finite", field=key)
    if isinstance(value, int | float | str):
        return str(value)
    raise GraphRequestValidationError("query values must be str, int, float or bool", field=key)
