"""The OpenAPI 3.1 document: quart-schema's description of the routes, completed.

Every operation gets the spec's error answers (one shared ``ErrorBody``
schema) and a description on every answer, which OpenAPI 3.1 requires.
"""

from __future__ import annotations

import json
from typing import Any, Final

from quart_trio import QuartTrio

from ._models import ErrorBody

__all__ = ["BEARER", "openapi_document"]

BEARER: Final[list[dict[str, list[str]]]] = [{"bearerAuth": []}]
"""The security requirement of the bearer-protected routes."""

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
    for operations in schema.get("paths", {}).values():
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
