"""Graph-layer errors as the service answers them: refusal texts and upstream failures."""

from __future__ import annotations

import math
import re
from typing import Final

from svc._text import is_printable_ascii
from svc.graph import (
    GraphApiError,
    GraphError,
    GraphRateLimitError,
    GraphRequestValidationError,
    PhoneOnlyRecipientError,
    RetryAction,
)

from ._errors import HttpError, graph_request_failed
from ._telemetry import upstream_fields

__all__ = ["refusal_message", "upstream_http_error"]

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


def _wait(error: GraphError) -> str | None:
    """``Retry-After`` for an answer whose retry hint is ``retry_later``: the platform's own
    header when it is printable, else the hint's wait in whole seconds (rounded up)."""
    hint = error.retry_hint
    if hint.action is not RetryAction.RETRY_LATER:
        return None
    upstream = _retry_after(error.retry_after) if isinstance(error, GraphApiError) else None
    if upstream is not None or hint.after is None:
        return upstream
    return str(math.ceil(hint.after))


def upstream_http_error(error: GraphError) -> HttpError:
    """502 ``graph_request_failed``, or 503 for a rate limit.

    What counts as a rate limit is the Graph layer's error tree alone
    (``GraphRateLimitError``), including its rule that an HTTP 5xx is an outage.
    An answer whose retry hint is ``retry_later`` carries ``Retry-After``: the
    platform's, or the hint's wait (131057, a throughput upgrade: 60).
    """
    return graph_request_failed(
        rate_limited=isinstance(error, GraphRateLimitError),
        extra=upstream_fields(error),
        retry_after=_wait(error),
    )
