"""The OpenAPI 3.1 document: quart-schema's description of the routes, completed.

Every operation gets the spec's error answers (one shared ``ErrorBody``
schema) and a description on every answer, which OpenAPI 3.1 requires.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final, TypeVar

from pydantic import BaseModel
from quart_schema import (
    document_headers,
    document_querystring,
    document_request,
    document_response,
    security_scheme,
)
from quart_trio import QuartTrio

from ._models import ErrorBody

__all__ = ["BEARER", "document_bearer_route", "openapi_document"]

V = TypeVar("V", bound=Callable[..., Any])

BEARER: Final[list[dict[str, list[str]]]] = [{"bearerAuth": []}]
"""The security requirement of the bearer-protected routes."""


def document_bearer_route(
    answer: type[BaseModel] | None = None,
    status: int = 200,
    *,
    headers: type[BaseModel] | None = None,
    body: type[BaseModel] | None = None,
    query: type[BaseModel] | None = None,
    error: int | None = None,
) -> Callable[[V], V]:
    """A bearer route's OpenAPI description, one decorator for quart-schema's several: the
    ``BEARER`` security, each request model given, the ``answer`` at ``status`` and the
    ``ErrorBody`` at ``error``."""

    def describe(view: V) -> V:
        security_scheme(BEARER)(view)
        if headers is not None:
            document_headers(headers)(view)
        if body is not None:
            document_request(body)(view)
        if query is not None:
            document_querystring(query)(view)
        # The error first: the answers keep the order the stacked decorators gave them.
        if error is not None:
            document_response(ErrorBody, error)(view)
        if answer is not None:
            document_response(answer, status)(view)
        return view

    return describe


_ERROR_STATUSES: Final = {
    "400": "Malformed request (JSON, body, query, path or Idempotency-Key).",
    "401": "Missing or invalid bearer token, or webhook signature.",
    "404": "Not found (also the hidden operator routes without the bearer).",
    "405": "Method not allowed.",
    "409": "Idempotency conflict or pending claim.",
    "413": "Request body over the size limit.",
    "502": "Upstream Graph request failed.",
    "503": "Rate limited upstream, or persistence unavailable or not configured.",
}


_OPERATION_ORDER: Final = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
"""A path item's operations in the order the OpenAPI specification lists them."""


def _operation_rank(entry: tuple[str, object]) -> tuple[int, str]:
    method = entry[0]
    order = _OPERATION_ORDER.index(method) if method in _OPERATION_ORDER else len(_OPERATION_ORDER)
    return order, method


def openapi_document(app: QuartTrio, *, server_url: str | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``app``'s routes (no secret, no env reference inside)."""
    extension = app.extensions["QUART_SCHEMA"]
    schema: dict[str, Any] = json.loads(json.dumps(extension.openapi_provider.schema()))
    error = {
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    }
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault(
        "ErrorBody", ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    )
    schemas.update(
        ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}").get("$defs", {})
    )
    schemas["ErrorBody"].pop("$defs", None)
    paths = schema.get("paths", {})
    for path, operations in paths.items():
        # A route's methods are a set in werkzeug: the document orders them as OpenAPI lists
        # them, so it is the same bytes in every process.
        paths[path] = operations = dict(sorted(operations.items(), key=_operation_rank))
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            if not responses:
                responses["200"] = {"description": "Success."}
            for status, text in _ERROR_STATUSES.items():
                responses.setdefault(status, {"description": text, **error})
            for answer in responses.values():
                if not answer.get("description"):
                    answer["description"] = "Answer."
    if server_url is not None:
        schema["servers"] = [{"url": server_url}]
    return schema
