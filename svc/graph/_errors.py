"""Errors of the Graph layer, in one tree.

    GraphError
    ├── GraphRequestValidationError   input rejected before any request is sent
    │   ├── TemplateCheckError        template components disagree with the template definition
    │   └── PhoneOnlyRecipientError   a phone-only message addressed to a business-scoped user id
    ├── GraphNetworkError             the transport failed (no upstream answer)
    ├── GraphSerializationError       a successful answer that is not the JSON we expect
    └── GraphApiError                 a non-2xx upstream answer, resolved by code
        ├── GraphAuthError            authentication / permission axis
        ├── GraphRateLimitError       rate-limit axis (keeps ``retry_after``)
        └── per-code subclasses       see ``_error_codes``

Errors carry context (status, code, subcode, type, trace id) and never a
secret: the access token is never part of a message, repr or payload copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "GraphApiError",
    "GraphAuthError",
    "GraphError",
    "GraphNetworkError",
    "GraphRateLimitError",
    "GraphRequestValidationError",
    "GraphSerializationError",
    "PhoneOnlyRecipientError",
    "TemplateCheckError",
]


class GraphError(Exception):
    """Base of every error raised by ``svc.graph``."""


class GraphRequestValidationError(GraphError, ValueError):
    """An input was rejected before the transport was touched.

    ``field`` names the offending argument when one can be named.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class GraphNetworkError(GraphError):
    """The transport failed before an upstream answer arrived (DNS, connect, timeout, reset)."""


class GraphSerializationError(GraphError):
    """A 2xx answer whose body is not the JSON object the caller expects."""


class GraphApiError(GraphError):
    """A non-2xx answer from the Graph API.

    ``classification`` is ``"auth"``, ``"rate_limit"`` or ``"other"``; the
    subclasses ``GraphAuthError`` and ``GraphRateLimitError`` mark the first
    two axes so callers can ``except`` on them. ``str(error)`` is a fixed,
    safe summary; the platform's free-form text stays in ``upstream_message``
    (and ``payload``) so it is never logged by accident.
    """

    classification: str = "other"

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: int | None = None,
        error_subcode: int | None = None,
        type: str | None = None,
        fbtrace_id: str | None = None,
        payload: Mapping[str, Any] | None = None,
        retry_after: str | None = None,
        upstream_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.error_subcode = error_subcode
        self.type = type
        self.fbtrace_id = fbtrace_id
        self.payload = payload
        self.retry_after = retry_after
        self.upstream_message = upstream_message

    @property
    def is_auth_error(self) -> bool:
        return self.classification == "auth"

    @property
    def is_rate_limit(self) -> bool:
        return self.classification == "rate_limit"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, "
            f"error_subcode={self.error_subcode!r}, type={self.type!r}, "
            f"fbtrace_id={self.fbtrace_id!r})"
        )


class GraphAuthError(GraphApiError):
    """Authentication or permission failure (expired token, missing permission, ...)."""

    classification = "auth"


class GraphRateLimitError(GraphApiError):
    """The platform throttled the caller; ``retry_after`` keeps the upstream header verbatim."""

    classification = "rate_limit"


class TemplateCheckError(GraphRequestValidationError):
    """``check_template_send`` found components that the template definition would refuse.

    ``field`` names the offending place (``language``, ``components[1].parameters``,
    ``components[2].index``, ...).
    """


class PhoneOnlyRecipientError(GraphRequestValidationError):
    """A message the platform delivers to phone numbers only was addressed to a BSUID.

    Refused locally because the platform would answer it with
    ``BsuidRecipientNotSupportedError``; ``rule`` names the platform rule that
    applies and ``field`` the addressee argument.
    """

    def __init__(self, message: str, *, rule: str, field: str | None = "to") -> None:
        super().__init__(message, field=field)
        self.rule = rule
