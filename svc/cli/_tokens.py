"""Generated tokens: fixed prefixes and 43 URL-safe characters (256 bits) from ``secrets``."""

from __future__ import annotations

import secrets
from typing import Final

__all__ = [
    "APP_SECRET_PREFIX",
    "SERVICE_TOKEN_PREFIX",
    "VERIFY_TOKEN_PREFIX",
    "generate_app_secret",
    "generate_service_token",
    "generate_verify_token",
]

VERIFY_TOKEN_PREFIX: Final = "svc_vt_"  # noqa: S105 - a public prefix
SERVICE_TOKEN_PREFIX: Final = "svc_st_"  # noqa: S105 - a public prefix
APP_SECRET_PREFIX: Final = "svc_as_"  # noqa: S105 - a public prefix
_RANDOM_BYTES: Final = 32


def generate_verify_token() -> str:
    """A fresh webhook verify token: ``svc_vt_`` and 43 random URL-safe characters."""
    return VERIFY_TOKEN_PREFIX + secrets.token_urlsafe(_RANDOM_BYTES)


def generate_service_token() -> str:
    """A fresh service bearer token: ``svc_st_`` and 43 random URL-safe characters."""
    return SERVICE_TOKEN_PREFIX + secrets.token_urlsafe(_RANDOM_BYTES)


def generate_app_secret() -> str:
    """A synthetic app secret for dry runs (unusable upstream): ``svc_as_`` and 43 characters."""
    return APP_SECRET_PREFIX + secrets.token_urlsafe(_RANDOM_BYTES)
