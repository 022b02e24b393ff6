"""Errors of the HTTP layer, in one tree.

    ServiceError                 construction refused (``create_app``); ``code`` is one of
                                 ``CONSTRUCTION_CODES`` (spec: "Construction")
    HttpError                    a request refused with a JSON error body
                                 (``status``, ``code``, optional headers and upstream fields)

Messages are fixed sentences: they never hold a token, a secret, a path, a
request body or the upstream platform's free-form text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["CONSTRUCTION_CODES", "HttpError", "ServiceError"]

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
