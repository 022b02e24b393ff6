"""Resolution of an upstream error answer to the narrowest registered error class.

PLACEHOLDER owned by the foundation work: the registry and per-code classes land here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._errors import GraphApiError


def api_error_from_response(
    *, status: int, payload: Mapping[str, Any] | None, retry_after: str | None
) -> GraphApiError:
    """Build the typed error for a non-2xx answer (``payload`` is the parsed body, if any)."""
    error = payload.get("error") if isinstance(payload, Mapping) else None
    fields: Mapping[str, Any] = error if isinstance(error, Mapping) else {}
    code = fields.get("code")
    return GraphApiError(
        f"Graph API request failed with HTTP {status}",
        status=status,
        code=code if isinstance(code, int) else None,
        payload=payload,
        retry_after=retry_after,
    )
