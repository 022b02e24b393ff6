"""The endpoint primitive: one Graph route declared once, checked at define and call time.

    SEND = Endpoint(
        method="POST",
        path_template="/{phone_number_id}/messages",
        params={"phone_number_id": Param(in_="path")},
    )
    answer = await SEND.call(client, params={"phone_number_id": "1065"}, body={...})

Every rejection raises ``GraphRequestValidationError`` before the transport is
touched.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from svc._text import has_ascii_control

from ._client import GraphClient, QueryValue
from ._errors import GraphRequestValidationError
from ._paths import check_path_segment
from ._validate import check_match, opt_mapping

__all__ = ["HTTP_METHODS", "Endpoint", "Param", "route"]

HTTP_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})
"""The methods an endpoint may declare (exact, upper case)."""

_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_LITERAL_SEGMENT = re.compile(r"[A-Za-z0-9_.~-]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    """Where one endpoint parameter goes: ``in_="path"`` (always required) or ``"query"``.

    ``required`` defaults to ``True`` for path and ``False`` for query
    parameters; a path parameter cannot be made optional.
    """

    in_: Literal["path", "query"]
    required: bool | None = None

    def __post_init__(self) -> None:
        if self.in_ not in ("path", "query"):
            raise GraphRequestValidationError("Param.in_ must be 'path' or 'query'", field="in_")
        if self.required is not None and not isinstance(self.required, bool):
            raise GraphRequestValidationError("Param.required must be a bool", field="required")
        if self.in_ == "path" and self.required is False:
            raise GraphRequestValidationError(
                "path parameters are always required", field="required"
            )

    @property
    def is_required(self) -> bool:
        """Whether a call must supply this parameter."""
        return self.in_ == "path" or bool(self.required)


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """One Graph route: method, ``{name}`` path template, parameters and body rules.

    ``path_template`` starts with ``/`` and is relative to the API version;
    each ``{name}`` placeholder is a whole path segment with a matching
    ``Param(in_="path")`` entry. ``build_body`` (optional) maps the call's
    ``body`` to the wire body. ``body_content_type`` overrides the
    ``application/json`` default for dict/list bodies and labels verbatim
    (bytes or stream) bodies.
    """

    method: str
    path_template: str
    params: Mapping[str, Param] = field(default_factory=dict)
    build_body: Callable[[Any], Any] | None = None
    body_content_type: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.method, str) or self.method not in HTTP_METHODS:
            raise GraphRequestValidationError(
                "method must be one of DELETE, GET, PATCH, POST, PUT", field="method"
            )
        placeholders = _parse_template(self.path_template)
        if not isinstance(self.params, Mapping):
            raise GraphRequestValidationError("params must be a mapping", field="params")
        params = dict(self.params)
        for name, param in params.items():
            check_match(
                name, _NAME, "params", "params keys must match ^[a-zA-Z_][a-zA-Z0-9_]*$"
            )
            if not isinstance(param, Param):
                raise GraphRequestValidationError(
                    f"params[{name!r}] must be a Param", field="params"
                )
        path_params = {name for name, param in params.items() if param.in_ == "path"}
        if missing := sorted(set(placeholders) - path_params):
            raise GraphRequestValidationError(
                f"placeholder without a path param: {', '.join(missing)}", field="params"
            )
        if extra := sorted(path_params - set(placeholders)):
            raise GraphRequestValidationError(
                f"path param without a placeholder: {', '.join(extra)}", field="params"
            )
        if self.build_body is not None and not callable(self.build_body):
            raise GraphRequestValidationError("build_body must be callable", field="build_body")
        if self.body_content_type is not None and (
            not isinstance(self.body_content_type, str)
            or not self.body_content_type.strip()
            or has_ascii_control(self.body_content_type)
        ):
            raise GraphRequestValidationError(
                "body_content_type must be a non-empty string without control characters",
                field="body_content_type",
            )
        object.__setattr__(self, "params", MappingProxyType(params))

    def url_path(self, params: Mapping[str, object] | None = None) -> str:
        """The path (relative to the API version) for ``params``; path values are checked."""
        path, _ = self._split_params(params)
        return path

    async def call(
        self,
        client: GraphClient,
        *,
        params: Mapping[str, object] | None = None,
        body: object = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Check everything, send one request through ``client`` and return the parsed answer."""
        path, query = self._split_params(params)
        if headers is not None and not isinstance(headers, Mapping):
            raise GraphRequestValidationError("headers must be a mapping", field="headers")
        wire_body = self._build(body)
        merged = dict(headers) if headers is not None else None
        json_body: Any = None
        content: bytes | AsyncIterable[bytes] | None = None
        if isinstance(wire_body, Mapping | list | tuple):
            json_body = dict(wire_body) if isinstance(wire_body, Mapping) else list(wire_body)
            merged = _with_content_type(merged, self.body_content_type or "application/json")
        elif isinstance(wire_body, bytes | bytearray | memoryview):
            content = bytes(wire_body)
            if self.body_content_type is not None:
                merged = _with_content_type(merged, self.body_content_type)
        elif isinstance(wire_body, AsyncIterable):
            content = wire_body
            if self.body_content_type is not None:
                merged = _with_content_type(merged, self.body_content_type)
        elif wire_body is not None:
            raise GraphRequestValidationError(
                "body must be a dict or list (JSON), bytes, or an async iterable of bytes",
                field="body",
            )
        request = client.build_request(
            self.method,
            client.url_for(path),
            query=query,
            json=json_body,
            content=content,
            headers=merged,
        )
        response = await client.send(request)
        return client.parse_json(response)

    def _split_params(
        self, params: Mapping[str, object] | None
    ) -> tuple[str, dict[str, QueryValue]]:
        params = opt_mapping(params, "params")
        unknown = [key for key in params if key not in self.params]
        if unknown:
            raise GraphRequestValidationError(
                f"unknown params: {', '.join(sorted(map(str, unknown)))}", field="params"
            )
        segments: dict[str, str] = {}
        query: dict[str, QueryValue] = {}
        for name, param in self.params.items():
            value = params.get(name)
            if value is None:
                if param.is_required:
                    raise GraphRequestValidationError(f"{name} is required", field=name)
                continue
            if param.in_ == "path":
                segments[name] = check_path_segment(value, field=name)
            elif isinstance(value, str | int | float | bool):
                query[name] = value
            else:
                raise GraphRequestValidationError(
                    f"{name} must be a str, int, float or bool", field=name
                )
        path = self.path_template
        for name, segment in segments.items():
            path = path.replace("{" + name + "}", segment)
        return path, query

    def _build(self, body: object) -> object:
        if self.build_body is None:
            return body
        try:
            return self.build_body(body)
        except (TypeError, ValueError, KeyError) as exc:
            if isinstance(exc, GraphRequestValidationError):
                raise
            raise GraphRequestValidationError(
                f"build_body rejected the body: {type(exc).__name__}", field="body"
            ) from None


def route(method: str, path_template: str, /, **query: Param) -> Endpoint:
    """An ``Endpoint`` whose path params are the template's ``{name}`` placeholders, plus ``query``.

    The template already names every path parameter, so the declaration states it once.
    """
    path = {name: Param(in_="path") for name in _parse_template(path_template)}
    return Endpoint(method=method, path_template=path_template, params={**path, **query})


def _parse_template(template: object) -> list[str]:
    """Return the placeholder names of ``template``; reject anything unsafe or malformed."""
    if not isinstance(template, str) or not template:
        raise GraphRequestValidationError(
            "path_template must be a non-empty string", field="path_template"
        )
    if has_ascii_control(template):
        raise GraphRequestValidationError(
            "path_template must hold no control characters", field="path_template"
        )
    if template.count("{") != template.count("}"):
        raise GraphRequestValidationError(
            "path_template has unbalanced braces", field="path_template"
        )
    if not template.startswith("/"):
        raise GraphRequestValidationError(
            "path_template must start with '/'", field="path_template"
        )
    names: list[str] = []
    for segment in template[1:].split("/"):
        if segment.startswith("{") and segment.endswith("}"):
            name = segment[1:-1]
            if "{" in name or "}" in name:
                raise GraphRequestValidationError(
                    "path_template has unbalanced braces", field="path_template"
                )
            if not _NAME.fullmatch(name):
                raise GraphRequestValidationError(
                    "placeholders must match ^[a-zA-Z_][a-zA-Z0-9_]*$", field="path_template"
                )
            if name in names:
                raise GraphRequestValidationError(
                    f"duplicate placeholder {{{name}}}", field="path_template"
                )
            names.append(name)
        elif "{" in segment or "}" in segment:
            raise GraphRequestValidationError(
                "a placeholder must be a whole, balanced path segment", field="path_template"
            )
        elif not _LITERAL_SEGMENT.fullmatch(segment) or segment in (".", ".."):
            raise GraphRequestValidationError(
                "path_template segments must be non-empty and URL-safe (no dot segments)",
                field="path_template",
            )
    return names


def _with_content_type(headers: Mapping[str, str] | None, value: str) -> dict[str, str]:
    """Set Content-Type unless the caller already chose one (any casing)."""
    merged = dict(headers or {})
    if not any(isinstance(k, str) and k.lower() == "content-type" for k in merged):
        merged["Content-Type"] = value
    return merged
