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
Every error also carries ``retry_hint``: what a caller should do about it
(``RetryHint``); for an upstream answer the error registry's table says it.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

__all__ = [
    "GraphApiError",
    "GraphAuthError",
    "GraphError",
    "GraphNetworkError",
    "GraphRateLimitError",
    "GraphRequestValidationError",
    "GraphSerializationError",
    "PhoneOnlyRecipientError",
    "RetryAction",
    "RetryHint",
    "TemplateCheckError",
]


class RetryAction(enum.StrEnum):
    """What to do about a failed Graph call.

    ``RETRY_LATER``: the platform did not carry it out and the same request may
    succeed later (after ``RetryHint.after`` seconds when known).
    ``REFRESH_CREDENTIALS``: the token or its permissions were refused; the
    request may succeed with new or wider credentials. ``FIX_REQUEST``: the
    request itself is wrong; sent again unchanged it fails again.
    ``DO_NOT_RETRY``: the request was refused for good (the recipient, the
    account or a policy): sent again unchanged it fails again.
    ``UNKNOWN``: the outcome is not known (an HTTP 5xx, or the connection
    lost after the request went out): the platform may have carried it out,
    so sending it again may do it twice.
    """

    RETRY_LATER = "retry_later"
    REFRESH_CREDENTIALS = "refresh_credentials"
    FIX_REQUEST = "fix_request"
    DO_NOT_RETRY = "do_not_retry"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class RetryHint:
    """A retry hint: the ``action`` and, for ``RETRY_LATER``, the wait in seconds (``after``,
    None when nothing says how long)."""

    action: RetryAction
    after: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.action, RetryAction):
            raise TypeError("action must be a RetryAction")
        after = self.after
        if after is None:
            return
        if self.action is not RetryAction.RETRY_LATER:
            raise ValueError("only a RETRY_LATER hint has a wait")
        if isinstance(after, bool) or not isinstance(after, int | float):
            raise TypeError("after must be a number of seconds")
        if not (math.isfinite(after) and after >= 0):
            raise ValueError("after must be a finite, non-negative number of seconds")

    @property
    def retry_may_succeed(self) -> bool:
        """Whether the same request sent again can have another outcome (later, or with new
        credentials): ``RETRY_LATER`` and ``REFRESH_CREDENTIALS``."""
        return self.action in (RetryAction.RETRY_LATER, RetryAction.REFRESH_CREDENTIALS)

    @property
    def outcome_known(self) -> bool:
        """False for ``UNKNOWN``: the platform may have carried the request out."""
        return self.action is not RetryAction.UNKNOWN


UNKNOWN_OUTCOME: Final = RetryHint(RetryAction.UNKNOWN)
RETRY_LATER: Final = RetryHint(RetryAction.RETRY_LATER)
REFRESH_CREDENTIALS: Final = RetryHint(RetryAction.REFRESH_CREDENTIALS)
FIX_REQUEST: Final = RetryHint(RetryAction.FIX_REQUEST)
DO_NOT_RETRY: Final = RetryHint(RetryAction.DO_NOT_RETRY)


class GraphError(Exception):
    """Base of every error raised by ``svc.graph``.

    ``retry_hint`` says what to do about it; ``UNKNOWN`` unless a subclass knows better.
    """

    retry_hint: RetryHint = UNKNOWN_OUTCOME


class GraphRequestValidationError(GraphError, ValueError):
    """An input was rejected before the transport was touched.

    ``field`` names the offending argument when one can be named. Its hint is
    ``FIX_REQUEST``: nothing was sent.
    """

    retry_hint: RetryHint = FIX_REQUEST

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class GraphNetworkError(GraphError):
    """The transport failed before an upstream answer arrived (DNS, connect, timeout, reset).

    ``request_sent`` is False when the failure came before any byte of the
    request left (no connection was made: refused, DNS, connect timeout, no
    pooled connection free): the hint is then ``RETRY_LATER``. Otherwise the
    request may have reached the platform, and the hint is ``UNKNOWN``.
    """

    def __init__(self, message: str, *, request_sent: bool = True) -> None:
        super().__init__(message)
        self.request_sent = request_sent
        self.retry_hint = UNKNOWN_OUTCOME if request_sent else RETRY_LATER


class GraphSerializationError(GraphError):
    """A 2xx answer whose body is not the JSON object the caller expects."""


class GraphApiError(GraphError):
    """A non-2xx answer from the Graph API.

    ``classification`` is ``"auth"``, ``"rate_limit"`` or ``"other"``; the
    subclasses ``GraphAuthError`` and ``GraphRateLimitError`` mark the first
    two axes so callers can ``except`` on them. ``str(error)`` is a fixed,
    safe summary; the platform's free-form text stays in ``upstream_message``
    (and ``payload``) so it is never logged by accident. ``retry_hint`` is the
    registry's hint for the code at this status (``resolve_retry_hint``); an
    error built without one gets the hint of its status and axis.
    """

    classification: ClassVar[str] = "other"

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
        retry_hint: RetryHint | None = None,
    ) -> None:
        super().__init__(message)
        self.retry_hint = (
            retry_hint if retry_hint is not None else status_hint(status, self.classification)
        )
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

    classification: ClassVar[str] = "auth"


class GraphRateLimitError(GraphApiError):
    """The platform throttled the caller; ``retry_after`` keeps the upstream header verbatim."""

    classification: ClassVar[str] = "rate_limit"


def status_hint(status: int, classification: str = "other") -> RetryHint:
    """The hint of an answer the table says nothing about: by HTTP status, then axis.

    5xx (and any status that is neither 4xx nor 5xx) leaves the outcome
    ``UNKNOWN``; 429, 408 and 425 (and the rate-limit axis) are
    ``RETRY_LATER``; 401, 403 (and the auth axis) ``REFRESH_CREDENTIALS``;
    any other 4xx ``FIX_REQUEST``.
    """
    if not 400 <= status < 500:
        return UNKNOWN_OUTCOME
    if status in (408, 425, 429) or classification == "rate_limit":
        return RETRY_LATER
    if status in (401, 403) or classification == "auth":
        return REFRESH_CREDENTIALS
    return FIX_REQUEST


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
