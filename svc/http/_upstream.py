"""Graph-layer errors as the service answers them: refusal texts and upstream failures."""

from __future__ import annotations

import re
from typing import Final

from svc._text import is_printable_ascii
from svc.graph import (
    GraphApiError,
    GraphAuthError,
    GraphError,
    GraphRateLimitError,
    GraphRequestValidationError,
    PhoneOnlyRecipientError,
)

from ._errors import HttpError, graph_request_failed
from ._telemetry import upstream_fields

__all__ = ["is_definitive_refusal", "refusal_message", "upstream_http_error"]

_LIMIT: Final = re.compile(r"(?:at most|at least|between) [0-9]+(?:\.\.[0-9]+)? [a-z]+")
"""A limit a graph-layer refusal states ("at most 4096 characters"): fixed text, shown."""


def refusal_message(error: GraphRequestValidationError) -> str:
    """The 400 message of a graph-layer refusal: the field and any limit it states, no value.

    A phone-only refusal also names the platform rule (a constant of the graph layer).
    """
    field = error.field if isinstance(error.field, str) and len(error.field) <= 80 else None
    limit = _LIMIT.search(str(error))
    said = f": {limit.group(0)}" if field and limit else ""
    where = f" ({field}{said})" if field else ""
    if isinstance(error, PhoneOnlyRecipientError):
        return (
            f"The message was refused by validation{where}: {error.rule}; send to a phone number."
        )
    return f"The message was refused by validation{where}."


def _retry_after(value: str | None) -> str | None:
    if value is None or not 0 < len(value) <= 64:
        return None
    return value if is_printable_ascii(value) else None


def is_definitive_refusal(error: GraphError) -> bool:
    """Whether the platform said, with a 4xx and an error code, that nothing was sent.

    Rate limits (the request may be sent later) and auth refusals (about our
    credentials, not the request) are excluded, as are 5xx answers and
    transport failures, which leave the outcome unknown.
    """
    return (
        isinstance(error, GraphApiError)
        and not isinstance(error, GraphRateLimitError | GraphAuthError)
        and 400 <= error.status < 500
        and error.status != 429
        and error.code is not None
    )


def upstream_http_error(error: GraphError) -> HttpError:
    """502 ``graph_request_failed``, or 503 for a rate limit (``Retry-After`` echoed).

    What counts as a rate limit is the Graph layer's error tree alone
    (``GraphRateLimitError``), including its rule that an HTTP 5xx is an outage.
    """
    if isinstance(error, GraphRateLimitError):
        return graph_request_failed(
            rate_limited=True,
            extra=upstream_fields(error),
            retry_after=_retry_after(error.retry_after),
        )
    return graph_request_failed(rate_limited=False, extra=upstream_fields(error))
