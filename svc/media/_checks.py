"""Input checks shared by the media operations: path segments, caps, digests, byte buffers.

Every check raises ``MediaValidationError`` with a stable code and a message
that names the argument but never echoes its value.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from ._errors import MediaValidationError

__all__ = [
    "HEX64",
    "MAX_DOWNLOAD_BYTES",
    "MAX_ID_LENGTH",
    "MAX_SESSION_BYTES",
    "MAX_UPLOAD_BYTES",
    "check_app_id",
    "check_cap",
    "check_media_id",
    "check_phone_number_id",
    "check_upload_session_id",
    "parse_expected_sha256",
    "session_id_segment",
]

MIB: Final = 1024 * 1024
MAX_UPLOAD_BYTES: Final = 16 * MIB
"""Media upload cap: the default and the maximum (spec, Limits)."""
MAX_DOWNLOAD_BYTES: Final = 16 * MIB
"""Media download cap: the default and the maximum."""
MAX_SESSION_BYTES: Final = 64 * MIB
"""Resumable upload session cap: the default and the maximum."""
MAX_ID_LENGTH: Final = 2048
"""Longest id accepted in a path segment (the message helpers' media id bound)."""


@dataclass(frozen=True, slots=True)
class _Charset:
    """The characters a path segment may hold, and the words its error message says."""

    pattern: re.Pattern[str]
    words: str


# Character classes of the spec's "Path-parameter rules for media". Each one
# already excludes whitespace, control characters, '/', '\\', '?', '#', '%',
# '.', so dot-segments and (double-)encoded traversal cannot be expressed.
_DIGITS = _Charset(re.compile(r"[0-9]+"), "ASCII digits")
_MEDIA_ID = _Charset(re.compile(r"[A-Za-z0-9_-]+"), "ASCII letters, digits, '_' or '-'")
_SESSION_ID = _Charset(re.compile(r"[A-Za-z0-9_:-]+"), "ASCII letters, digits, '_', '-' or ':'")
HEX64 = re.compile(r"[0-9a-fA-F]{64}")
"""A SHA-256 digest as 64 hex digits."""


def _check_segment(value: object, *, field: str, charset: _Charset) -> str:
    if not isinstance(value, str):
        raise MediaValidationError(f"invalid_{field}", f"{field} must be a string")
    if not value.strip():
        raise MediaValidationError(f"invalid_{field}", f"{field} must not be empty")
    if len(value) > MAX_ID_LENGTH:
        raise MediaValidationError(
            f"invalid_{field}", f"{field} must be at most {MAX_ID_LENGTH} characters"
        )
    if not charset.pattern.fullmatch(value):
        raise MediaValidationError(f"invalid_{field}", f"{field} must be {charset.words}")
    return value


def check_phone_number_id(value: object) -> str:
    """A phone number id: a non-empty ASCII digit string."""
    return _check_segment(value, field="phone_number_id", charset=_DIGITS)


def check_app_id(value: object) -> str:
    """An app id: a non-empty ASCII digit string."""
    return _check_segment(value, field="app_id", charset=_DIGITS)


def check_media_id(value: object) -> str:
    """A media id: ASCII letters, digits, underscore or hyphen."""
    return _check_segment(value, field="media_id", charset=_MEDIA_ID)


def check_upload_session_id(value: object) -> str:
    """An upload session id: ASCII letters, digits, underscore, hyphen or colon."""
    return _check_segment(value, field="upload_session_id", charset=_SESSION_ID)


def session_id_segment(value: object) -> str:
    """The checked session id as a path segment, its colons percent-encoded (``upload%3A...``)."""
    return quote(check_upload_session_id(value), safe="")


def check_cap(value: object, *, maximum: int, field: str = "max_bytes") -> int:
    """A cap override: ``None`` means the maximum; otherwise a positive int no greater than it."""
    if value is None:
        return maximum
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= maximum:
        raise MediaValidationError(
            f"invalid_{field}", f"{field} must be a positive integer no greater than {maximum}"
        )
    return value


def parse_expected_sha256(value: object) -> bytes:
    """The 32-byte digest of an expected SHA-256 given as 64 hex digits or base64 of 32 bytes."""
    if isinstance(value, str):
        if HEX64.fullmatch(value):
            return bytes.fromhex(value)
        try:
            digest = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            digest = b""
        if len(digest) == 32:
            return digest
    raise MediaValidationError(
        "invalid_sha256", "expected_sha256 must be 64 hex digits or base64 of a 32-byte digest"
    )
