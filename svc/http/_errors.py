"""Errors of the HTTP layer, in one tree.

    ServiceError                 construction refused (``create_app``); ``code`` is one of
                                 ``CONSTRUCTION_CODES`` (spec: "Construction")
    HttpError                    a request refused with a JSON error body
                                 (``status``, ``code``, optional headers and upstream fields)

Messages are fixed sentences: they never hold a token, a secret, a path, a
request body or the upstream platform's free-form text. Every request refusal
is built by one named constructor below, so each error code (and its status)
is stated once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from svc.webhook import WebhookError

__all__ = [
    "CONSTRUCTION_CODES",
    "CURSOR_REFUSED",
    "HttpError",
    "ServiceError",
    "bad_request",
    "body_timeout",
    "conversation_window_unavailable",
    "graph_request_failed",
    "handlers_busy",
    "idempotency_conflict",
    "idempotency_pending",
    "internal_error",
    "invalid_idempotency_key",
    "malformed_body",
    "malformed_cursor",
    "malformed_json",
    "malformed_path",
    "malformed_query",
    "method_not_allowed",
    "not_found",
    "payload_too_large",
    "persistence_not_configured",
    "persistence_unavailable",
    "too_many_bodies",
    "unauthorized",
    "webhook_refused",
]

CONSTRUCTION_CODES: Final = frozenset(
    {
        "invalid_config",
        "invalid_profile",
        "invalid_secrets",
        "invalid_secret",
        "invalid_path",
        "invalid_transport",
        "invalid_crypto_provider",
        "invalid_whatsapp",
        "invalid_persistence",
    }
)


class ServiceError(Exception):
    """``create_app`` refused its configuration; ``code`` names what was wrong."""

    def __init__(self, code: str, message: str, *, field: str | None = None) -> None:
        if code not in CONSTRUCTION_CODES:
            raise ValueError("unknown service error code")
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field

    def __repr__(self) -> str:
        return f"ServiceError(code={self.code!r}, field={self.field!r})"


class HttpError(Exception):
    """A refusal answered as ``{"error": {"code", "message", ...}}`` with ``status``."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, object] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})

    def body(self) -> dict[str, object]:
        """The JSON error body of decisions.md section 4."""
        return {"error": {"code": self.code, "message": self.message, **self.extra}}

    def __repr__(self) -> str:
        return f"HttpError(status={self.status}, code={self.code!r})"


# --- named refusals: one constructor per error code -----------------------------------


def malformed_json(*, empty: bool = False, too_deep: int | None = None) -> HttpError:
    """400: the body is empty, not strict JSON, or nests deeper than ``too_deep`` levels."""
    if empty:
        message = "The request body is empty."
    elif too_deep is not None:
        message = f"The request body nests deeper than {too_deep} levels."
    else:
        message = "The request body is not valid JSON."
    return HttpError(400, "malformed_json", message)


def malformed_body(message: str) -> HttpError:
    """400: the JSON body failed validation; ``message`` names a field, never a value."""
    return HttpError(400, "malformed_body", message)


def malformed_query(field: str, *, bounds: tuple[int, int] | None = None) -> HttpError:
    """400: the query parameter ``field`` is unusable (or an integer outside ``bounds``)."""
    if bounds is None:
        return HttpError(400, "malformed_query", f"'{field}' is not a usable value.")
    low, high = bounds
    return HttpError(400, "malformed_query", f"'{field}' must be an integer {low}..{high}.")


CURSOR_REFUSED: Final = (
    "'cursor' names no stored message (mistyped, or removed since): "
    "use nextCursor of the previous page, or start again without a cursor."
)


def malformed_cursor() -> HttpError:
    """400: ``cursor`` names no stored message, so it could never have been issued.

    A cursor is a ``rowId``; one the store does not hold (a typo, ``nonsense``,
    a row removed since) would otherwise end the paging with a silent empty
    page. A cursor naming the oldest row is valid and answers an empty page.
    """
    return HttpError(400, "malformed_query", CURSOR_REFUSED)


def malformed_path(message: str = "The id in the path is not a safe segment.") -> HttpError:
    """400: a path segment (message id, phone, group id) is unusable."""
    return HttpError(400, "malformed_path", message)


def invalid_idempotency_key() -> HttpError:
    """400: the ``Idempotency-Key`` header is empty, too long or holds a control character."""
    return HttpError(
        400,
        "invalid_idempotency_key",
        "Idempotency-Key must be 1..256 characters without control characters.",
    )


def bad_request(status: int) -> HttpError:
    """Any other HTTP refusal the framework raised, answered with its own status."""
    return HttpError(status, "bad_request", "Bad request.")


def unauthorized() -> HttpError:
    """401: the service bearer token is missing or wrong."""
    return HttpError(401, "unauthorized", "Missing or invalid bearer token.")


def not_found(message: str = "Not found.") -> HttpError:
    """404: no such route (also the hidden operator routes without the bearer), or no record."""
    return HttpError(404, "not_found", message)


def method_not_allowed(allow: Iterable[str]) -> HttpError:
    """405 with the ``Allow`` header listing ``allow`` in the given order."""
    return HttpError(
        405, "method_not_allowed", "Method not allowed.", headers={"Allow": ", ".join(allow)}
    )


def idempotency_pending() -> HttpError:
    """409: the key is claimed and its request has not completed (in flight, or its outcome
    unknown); the key stays pending for good, so the message says what to do instead."""
    return HttpError(
        409,
        "idempotency_pending",
        "A request with this Idempotency-Key is in flight, or its outcome is unknown (the"
        " connection was lost after sending, or the platform answered 5xx: it may have sent"
        " the message). The key stays pending and is never resent; check the message's"
        " status, then use a new key.",
    )


def idempotency_conflict() -> HttpError:
    """409: the key was claimed with a different payload."""
    return HttpError(
        409, "idempotency_conflict", "This Idempotency-Key was used with a different payload."
    )


def payload_too_large() -> HttpError:
    """413: the body is over the size limit (declared or read)."""
    return HttpError(413, "payload_too_large", "The request body is over the size limit.")


def body_timeout() -> HttpError:
    """408: the body did not arrive within the read deadline (the connection is closed)."""
    return HttpError(408, "request_timeout", "The request body did not arrive in time.")


def too_many_bodies(retry_after: int) -> HttpError:
    """503 with ``Retry-After``: this worker already reads its cap of bodies at once."""
    return HttpError(
        503,
        "server_busy",
        "Too many request bodies are being received; retry later.",
        headers={"Retry-After": str(retry_after)},
    )


def handlers_busy(retry_after: int = 5) -> HttpError:
    """503 with ``Retry-After``: without a store, the in-memory handler queue is full (nothing
    of the delivery was queued; the platform redelivers it)."""
    return HttpError(
        503,
        "handlers_busy",
        "The handler queue is full; retry later.",
        headers={"Retry-After": str(retry_after)},
    )


def internal_error() -> HttpError:
    """500: an unexpected failure in a route (its class is counted, never its text)."""
    return HttpError(500, "internal_error", "Internal error.")


def graph_request_failed(
    *, rate_limited: bool, extra: Mapping[str, object], retry_after: str | None = None
) -> HttpError:
    """502 for an upstream failure, 503 for a rate limit; ``Retry-After`` when given."""
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    status = 503 if rate_limited else 502
    return HttpError(
        status, "graph_request_failed", "Graph request failed.", headers=headers, extra=extra
    )


def persistence_unavailable() -> HttpError:
    """503: the store failed, or is not healthy at the current schema version."""
    return HttpError(503, "persistence_unavailable", "The persistence store is unavailable.")


def persistence_not_configured() -> HttpError:
    """503: a projection route was called with no store injected."""
    return HttpError(503, "persistence_not_configured", "No persistence store is configured.")


def conversation_window_unavailable() -> HttpError:
    """503: the conversation window could not be computed."""
    return HttpError(
        503,
        "conversation_window_unavailable",
        "The conversation window could not be computed.",
    )


def webhook_refused(error: WebhookError) -> HttpError:
    """The webhook layer's refusal, with the status and code that layer assigns."""
    return HttpError(error.http_status, error.code, error.message)
