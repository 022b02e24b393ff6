"""The validated configuration ``create_app`` takes: a ``Profile`` and the four ``ServiceSecrets``.

Both are frozen; building one checks every field and raises ``ServiceError``
with the construction code of the spec (``invalid_profile``, ``invalid_path``,
``invalid_secret``). Nothing here reads the environment or the disk: the CLI
turns a config file into these objects.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Final
from urllib.parse import urlsplit

from svc._text import is_visible_ascii

from ._errors import ServiceError

__all__ = [
    "DEFAULT_API_PREFIX",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_WEBHOOK_PATH",
    "MAX_BODY_BYTES_LIMIT",
    "MAX_SECRET_LENGTH",
    "RESERVED_PATHS",
    "Profile",
    "ServiceSecrets",
    "check_service_path",
]

DEFAULT_WEBHOOK_PATH: Final = "/webhooks/whatsapp"
DEFAULT_API_PREFIX: Final = "/api"
DEFAULT_MAX_BODY_BYTES: Final = 1_048_576
MAX_BODY_BYTES_LIMIT: Final = 10_485_760
MAX_SECRET_LENGTH: Final = 4096
MAX_PATH_LENGTH: Final = 256
RESERVED_PATHS: Final = frozenset(
    {"/healthz", "/readyz", "/status", "/metrics", "/debug", "/openapi.json"}
)
"""Fixed routes no configured path may take or sit under."""

_API_VERSION = re.compile(r"v\d+(\.\d+)?")
_DIGITS = re.compile(r"[0-9]{1,64}")
_SAFE_PATH = re.compile(r"(?:/[A-Za-z0-9._~-]+)+")
_PROFILE_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")


def check_service_path(value: object, field: str) -> str:
    """An absolute path of safe segments (``/a/b``): no dot segments, no trailing slash."""
    if (
        not isinstance(value, str)
        or len(value) > MAX_PATH_LENGTH
        or not _SAFE_PATH.fullmatch(value)
        or any(part in (".", "..") for part in value.split("/"))
    ):
        raise ServiceError(
            "invalid_path",
            f"{field} must be an absolute path of letters, digits and ._~- segments.",
            field=field,
        )
    return value


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """One profile of the config file: upstream coordinates and the service's own paths."""

    phone_number_id: str
    waba_id: str | None = None
    api_version: str = "v25.0"
    base_url: str = "https://graph.facebook.com"
    webhook_path: str = DEFAULT_WEBHOOK_PATH
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    api_prefix: str = DEFAULT_API_PREFIX
    host: str = "127.0.0.1"
    port: int = 8787
    name: str = "default"
    flows_path: str | None = None

    def __post_init__(self) -> None:
        _profile_checks(self)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Profile:
        """Build from snake_case keys (the dataclass fields); unknown keys are refused."""
        if not isinstance(data, Mapping):
            raise ServiceError("invalid_profile", "profile must be a Profile or a mapping.")
        known = {f.name for f in fields(cls)}
        unknown = [key for key in data if key not in known]
        if unknown:
            raise ServiceError("invalid_profile", "profile has unknown fields.", field="profile")
        try:
            return cls(**dict(data))
        except TypeError:
            raise ServiceError(
                "invalid_profile", "profile is missing phone_number_id.", field="phone_number_id"
            ) from None


def _profile_checks(profile: Profile) -> None:
    def bad(field: str, message: str) -> ServiceError:
        return ServiceError("invalid_profile", message, field=field)

    if not isinstance(profile.name, str) or not _PROFILE_NAME.fullmatch(profile.name):
        raise bad("name", "name must be 1..32 letters, digits, '_' or '-'.")
    if not isinstance(profile.phone_number_id, str) or not _DIGITS.fullmatch(
        profile.phone_number_id
    ):
        raise bad("phone_number_id", "phone_number_id must be a digit string.")
    if profile.waba_id is not None and (
        not isinstance(profile.waba_id, str) or not _DIGITS.fullmatch(profile.waba_id)
    ):
        raise bad("waba_id", "waba_id must be a digit string.")
    if not isinstance(profile.api_version, str) or not _API_VERSION.fullmatch(profile.api_version):
        raise bad("api_version", "api_version must look like v25.0.")
    _check_base_url(profile.base_url)
    size = profile.max_body_bytes
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_BODY_BYTES_LIMIT:
        raise bad("max_body_bytes", f"max_body_bytes must be an integer 1..{MAX_BODY_BYTES_LIMIT}.")
    port = profile.port
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise bad("port", "port must be an integer 0..65535.")
    if (
        not isinstance(profile.host, str)
        or not profile.host
        or not is_visible_ascii(profile.host)
    ):
        raise bad("host", "host must be a host name or address.")
    webhook = check_service_path(profile.webhook_path, "webhook_path")
    prefix = check_service_path(profile.api_prefix, "api_prefix")
    paths = {"webhook_path": webhook, "api_prefix": prefix}
    if profile.flows_path is not None:
        paths["flows_path"] = check_service_path(profile.flows_path, "flows_path")
    for field, path in paths.items():
        for reserved in RESERVED_PATHS:
            if _under(path, reserved) or _under(reserved, path):
                raise ServiceError(
                    "invalid_path", f"{field} collides with a built-in route.", field=field
                )
    items = list(paths.items())
    for index, (field, path) in enumerate(items):
        for _other_field, other in items[index + 1 :]:
            if _under(path, other) or _under(other, path):
                raise ServiceError(
                    "invalid_path", f"{field} overlaps another configured path.", field=field
                )


def _check_base_url(value: object) -> None:
    error = ServiceError(
        "invalid_profile",
        "base_url must be an http(s) URL without credentials, query or fragment.",
        field="base_url",
    )
    if not isinstance(value, str) or not is_visible_ascii(value):
        raise error
    try:
        url = urlsplit(value)
        host = url.hostname
        url.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        raise error from None
    if url.scheme not in ("http", "https") or not host or "@" in url.netloc:
        raise error
    if url.query or url.fragment or "?" in value or "#" in value:
        raise error


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ServiceSecrets:
    """The four secrets; ``repr`` never shows them.

    Each is 1..4096 visible ASCII characters (they travel in headers or are
    compared to header and query values).
    """

    access_token: str
    webhook_verify_token: str
    webhook_app_secret: str
    service_bearer_token: str

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if (
                not isinstance(value, str)
                or not 1 <= len(value) <= MAX_SECRET_LENGTH
                or not is_visible_ascii(value)
            ):
                raise ServiceError(
                    "invalid_secret",
                    f"{f.name} must be 1..{MAX_SECRET_LENGTH} visible ASCII characters.",
                    field=f.name,
                )

    def __repr__(self) -> str:
        return "ServiceSecrets([REDACTED])"

    def values(self) -> tuple[str, str, str, str]:
        """The four values, for leak scans and redaction."""
        return (
            self.access_token,
            self.webhook_verify_token,
            self.webhook_app_secret,
            self.service_bearer_token,
        )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ServiceSecrets:
        """Build from a mapping with exactly the four snake_case keys."""
        names = {f.name for f in fields(cls)}
        if not isinstance(data, Mapping) or set(data) != names:
            raise ServiceError(
                "invalid_secrets",
                "secrets must hold exactly access_token, webhook_verify_token, "
                "webhook_app_secret and service_bearer_token.",
            )
        return cls(**{name: data[name] for name in names})
