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
from dataclasses import field as _field
from typing import Any, Final
from urllib.parse import urlsplit

from svc._text import is_visible_ascii
from svc.graph import DEFAULT_API_VERSION, DEFAULT_BASE_URL

from ._errors import ServiceError

__all__ = [
    "DEFAULT_API_PREFIX",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_WEBHOOK_PATH",
    "MAX_BODY_BYTES_LIMIT",
    "MAX_PHONE_NUMBERS",
    "MAX_SECRET_LENGTH",
    "RESERVED_PATHS",
    "BusinessNumber",
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
MAX_PHONE_NUMBERS: Final = 64
"""How many business phone numbers one profile may serve (metric labels stay bounded)."""
RESERVED_PATHS: Final = frozenset(
    {"/healthz", "/readyz", "/status", "/metrics", "/debug", "/openapi.json"}
)
"""Fixed routes no configured path may take or sit under."""

_API_VERSION = re.compile(r"v\d+(\.\d+)?")
_HOST: Final = re.compile(r"[A-Za-z0-9._%:\[\]-]+")
"""A host name, an IPv4 or IPv6 address (a zone id too): no ``/``, so never a bind string
of another kind (``unix:/path``, ``fd://3``)."""
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
class BusinessNumber:
    """One more business phone number a profile serves, and its WABA when it differs.

    Its access token, when it has its own, is a secret: ``ServiceSecrets.phone_number_tokens``.
    """

    phone_number_id: str
    waba_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.phone_number_id, str) or not _DIGITS.fullmatch(self.phone_number_id):
            raise ServiceError(
                "invalid_profile",
                "phone_numbers[].phone_number_id must be a digit string.",
                field="phone_numbers",
            )
        if self.waba_id is not None and (
            not isinstance(self.waba_id, str) or not _DIGITS.fullmatch(self.waba_id)
        ):
            raise ServiceError(
                "invalid_profile",
                "phone_numbers[].waba_id must be a digit string.",
                field="phone_numbers",
            )


def _business_number(value: object) -> BusinessNumber:
    if isinstance(value, BusinessNumber):
        return value
    if not isinstance(value, Mapping) or not set(value) <= {"phone_number_id", "waba_id"}:
        raise ServiceError(
            "invalid_profile",
            "phone_numbers items must be BusinessNumber or mappings of phone_number_id, waba_id.",
            field="phone_numbers",
        )
    return BusinessNumber(
        phone_number_id=value.get("phone_number_id"),  # type: ignore[arg-type]
        waba_id=value.get("waba_id"),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """One profile of the config file: upstream coordinates and the service's own paths.

    ``phone_number_id`` (with ``waba_id``) is the default business number;
    ``phone_numbers`` lists the other numbers the service also serves (mappings
    of ``phone_number_id``/``waba_id`` are accepted and turned into ``BusinessNumber``).
    """

    phone_number_id: str
    waba_id: str | None = None
    api_version: str = DEFAULT_API_VERSION
    base_url: str = DEFAULT_BASE_URL
    webhook_path: str = DEFAULT_WEBHOOK_PATH
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    api_prefix: str = DEFAULT_API_PREFIX
    host: str = "127.0.0.1"
    port: int = 8787
    name: str = "default"
    flows_path: str | None = None
    phone_numbers: tuple[BusinessNumber, ...] = ()

    def __post_init__(self) -> None:
        _profile_checks(self)
        numbers = self.phone_numbers
        if isinstance(numbers, (str, bytes, Mapping)) or not isinstance(numbers, (list, tuple)):
            raise ServiceError(
                "invalid_profile", "phone_numbers must be a list.", field="phone_numbers"
            )
        if len(numbers) > MAX_PHONE_NUMBERS - 1:
            raise ServiceError(
                "invalid_profile",
                f"a profile serves at most {MAX_PHONE_NUMBERS} phone numbers.",
                field="phone_numbers",
            )
        checked = tuple(_business_number(item) for item in numbers)
        ids = [self.phone_number_id, *(number.phone_number_id for number in checked)]
        if len(set(ids)) != len(ids):
            raise ServiceError(
                "invalid_profile",
                "phone_numbers must not repeat a phone number id (nor the default one).",
                field="phone_numbers",
            )
        object.__setattr__(self, "phone_numbers", checked)

    @property
    def served_numbers(self) -> tuple[BusinessNumber, ...]:
        """Every business number served, the default first."""
        default = BusinessNumber(phone_number_id=self.phone_number_id, waba_id=self.waba_id)
        return (default, *self.phone_numbers)

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
        raise bad("api_version", f"api_version must look like {DEFAULT_API_VERSION}.")
    _check_base_url(profile.base_url)
    size = profile.max_body_bytes
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_BODY_BYTES_LIMIT:
        raise bad("max_body_bytes", f"max_body_bytes must be an integer 1..{MAX_BODY_BYTES_LIMIT}.")
    port = profile.port
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise bad("port", "port must be an integer 0..65535.")
    if not isinstance(profile.host, str) or not _HOST.fullmatch(profile.host):
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
    phone_number_tokens: Mapping[str, str] = _field(default_factory=dict, compare=False)
    """Access tokens of business numbers that do not use ``access_token``, by phone number id."""

    def __post_init__(self) -> None:
        for name in _SECRET_NAMES:
            _check_secret(getattr(self, name), name)
        tokens = self.phone_number_tokens
        if not isinstance(tokens, Mapping):
            raise ServiceError(
                "invalid_secret",
                "phone_number_tokens must map phone number ids to tokens.",
                field="phone_number_tokens",
            )
        for number, token in tokens.items():
            if not isinstance(number, str) or not _DIGITS.fullmatch(number):
                raise ServiceError(
                    "invalid_secret",
                    "phone_number_tokens keys must be phone number ids (digit strings).",
                    field="phone_number_tokens",
                )
            _check_secret(token, "phone_number_tokens")
        object.__setattr__(self, "phone_number_tokens", dict(tokens))

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

    def access_token_for(self, phone_number_id: str) -> str:
        """The token of one business number: its own when configured, else ``access_token``."""
        return self.phone_number_tokens.get(phone_number_id, self.access_token)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ServiceSecrets:
        """Build from the four snake_case keys, plus ``phone_number_tokens`` when given."""
        names = set(_SECRET_NAMES)
        if not isinstance(data, Mapping) or not names <= set(data) <= names | {
            "phone_number_tokens"
        }:
            raise ServiceError(
                "invalid_secrets",
                "secrets must hold exactly access_token, webhook_verify_token, "
                "webhook_app_secret and service_bearer_token (and optionally "
                "phone_number_tokens).",
            )
        return cls(**{name: data[name] for name in data})


_SECRET_NAMES: Final = (
    "access_token",
    "webhook_verify_token",
    "webhook_app_secret",
    "service_bearer_token",
)


def _check_secret(value: object, name: str) -> None:
    if (
        not isinstance(value, str)
        or not 1 <= len(value) <= MAX_SECRET_LENGTH
        or not is_visible_ascii(value)
    ):
        raise ServiceError(
            "invalid_secret",
            f"{name} must be 1..{MAX_SECRET_LENGTH} visible ASCII characters.",
            field=name,
        )
