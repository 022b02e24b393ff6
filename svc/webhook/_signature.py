"""Sans-IO checks of a webhook POST: size cap, signature, JSON, envelope, in that order.

The order is the contract of decisions.md section 3: a body over the cap is
refused before its signature is looked at, and a body is parsed only after its
signature passed, so unsigned input never reaches the JSON parser.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from svc._json import STRICT_DECODER, decode_bounded, finite_float
from svc.crypto import hmac_sha256, hmac_sha256_matches

from ._errors import (
    InvalidEnvelopeError,
    InvalidJsonError,
    InvalidSignatureFormatError,
    MissingSignatureError,
    PayloadTooLargeError,
    SignatureMismatchError,
)

__all__ = [
    "SIGNATURE_HEADER",
    "SIGNATURE_PREFIX",
    "BoundedBody",
    "check_content_length",
    "parse_envelope",
    "parse_signature_header",
    "sign_body",
    "verify_signature",
]

SIGNATURE_HEADER = "X-Hub-Signature-256"
SIGNATURE_PREFIX = "sha256="
_OWS = " \t"
_PREFIX_LENGTH = len(SIGNATURE_PREFIX)
_HEADER_LENGTH = _PREFIX_LENGTH + 64


def sign_body(body: bytes, app_secret: str) -> str:
    """The ``X-Hub-Signature-256`` value the platform sends with ``body`` (a simulated
    delivery's: ``svc dev``, ``svc.testing``)."""
    return SIGNATURE_PREFIX + hmac_sha256(app_secret.encode("utf-8"), body).hex()


def check_content_length(content_length: int | None, *, max_body_bytes: int) -> None:
    """Refuse a declared Content-Length over the cap, before any byte is read."""
    _check_cap(max_body_bytes)
    if content_length is not None and content_length > max_body_bytes:
        raise PayloadTooLargeError


class BoundedBody:
    """Collects body chunks and refuses the body as soon as it grows past the cap.

    The HTTP layer feeds chunks as they arrive and stops reading at the first
    ``PayloadTooLargeError``, so an oversized body is never held in memory.
    """

    __slots__ = ("_chunks", "_max", "_size")

    def __init__(self, *, max_body_bytes: int) -> None:
        _check_cap(max_body_bytes)
        self._max = max_body_bytes
        self._size = 0
        self._chunks: list[bytes] = []

    @property
    def size(self) -> int:
        return self._size

    def feed(self, chunk: bytes) -> None:
        """Add one chunk, or raise ``PayloadTooLargeError`` once the total is over the cap."""
        self._size += len(chunk)
        if self._size > self._max:
            self._chunks.clear()
            raise PayloadTooLargeError
        if chunk:
            self._chunks.append(bytes(chunk))

    def body(self) -> bytes:
        """The bytes fed so far."""
        return b"".join(self._chunks)


def parse_signature_header(header: str | None) -> bytes:
    """Return the 32-byte tag of ``sha256=<64 hex>``, or raise the missing/format error.

    Surrounding spaces and tabs (HTTP optional whitespace) are ignored; an
    empty header counts as missing. Hex digits may be either case.
    """
    if not (
        type(header) is str
        and len(header) == _HEADER_LENGTH
        and header.startswith(SIGNATURE_PREFIX)
    ):
        # Not the common form (no surrounding whitespace): strip it, then check its shape.
        if header is None:
            raise MissingSignatureError
        if not isinstance(header, str):
            raise InvalidSignatureFormatError
        header = header.strip(_OWS)
        if not header:
            raise MissingSignatureError
        if len(header) != _HEADER_LENGTH or not header.startswith(SIGNATURE_PREFIX):
            raise InvalidSignatureFormatError
    try:
        digest = bytes.fromhex(header[_PREFIX_LENGTH:])
    except ValueError:
        raise InvalidSignatureFormatError from None
    # fromhex skips whitespace between pairs: 32 bytes from 64 characters means 64 hex digits.
    if len(digest) != 32:
        raise InvalidSignatureFormatError
    return digest


def verify_signature(
    *,
    body: bytes,
    header: str | None,
    app_secret: str | bytes,
    max_body_bytes: int,
    content_length: int | None = None,
) -> None:
    """Check size cap, then header presence, format and HMAC-SHA256 match, in that order.

    Raises ``PayloadTooLargeError``, ``MissingSignatureError``,
    ``InvalidSignatureFormatError`` or ``SignatureMismatchError``; the
    comparison is constant-time (``svc.crypto``).
    """
    _verify(body, header, app_secret, max_body_bytes, content_length)


def _verify(
    body: bytes,
    header: str | None,
    app_secret: str | bytes,
    max_body_bytes: int,
    content_length: int | None,
) -> None:
    """``verify_signature`` with positional arguments and the common types checked first."""
    # bytes is immutable: a non-empty bytes secret is used as is (no copy).
    key = app_secret if type(app_secret) is bytes and app_secret else _secret_bytes(app_secret)
    if type(max_body_bytes) is not int or max_body_bytes < 1:
        _check_cap(max_body_bytes)
    if content_length is not None and content_length > max_body_bytes:
        raise PayloadTooLargeError
    if len(body) > max_body_bytes:
        raise PayloadTooLargeError
    expected = None
    if (
        type(header) is str
        and len(header) == _HEADER_LENGTH
        and header[:_PREFIX_LENGTH] == SIGNATURE_PREFIX
    ):
        # parse_signature_header's common case inline (saves a call per delivery).
        try:
            expected = bytes.fromhex(header[_PREFIX_LENGTH:])
        except ValueError:
            raise InvalidSignatureFormatError from None
    if expected is None or len(expected) != 32:
        expected = parse_signature_header(header)
    if not hmac_sha256_matches(key, body, expected):
        raise SignatureMismatchError


_FLOATS_READ = itertools.count()
"""Ticks once per float literal any parse reads; ``next`` on it is atomic under the GIL."""


def _counted_float(text: str) -> float:
    next(_FLOATS_READ)
    return finite_float(text)


# STRICT_DECODER's rules, with every float literal counted (the event key's fast form
# needs an envelope without floats): the C scanner calls parse_float for floats only.
_DECODER = json.JSONDecoder(
    parse_constant=STRICT_DECODER.parse_constant, parse_float=_counted_float
)


# The decoder's own scanner (C when available), set by JSONDecoder.__init__; not in the stubs.
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


def _decode(text: str) -> Any:
    """``_DECODER.decode(text)``, scanning a bare ``{...}`` document directly.

    ``JSONDecoder.decode`` skips whitespace around the value and then calls
    the scanner; a text that opens with ``{`` and ends with ``}`` has none
    to skip, so the scanner is called at once. The value must span the
    whole text, exactly as ``decode`` requires; anything else (and every
    error) goes through ``decode`` itself, which raises the usual
    ``JSONDecodeError``.
    """
    if text[:1] == "{" and text[-1:] == "}":
        try:
            value, end = _SCAN(text, 0)
        except StopIteration:
            pass
        else:
            if end == len(text):
                return value
    return _DECODER.decode(text)


def parse_envelope(body: bytes) -> dict[str, Any]:
    """Parse signed bytes into an envelope: ``invalid_json``, then ``invalid_envelope``.

    Strict JSON: ``NaN``/``Infinity`` and invalid UTF-8 are refused, and so is
    nesting deeper than ``MAX_JSON_DEPTH``.
    """
    return parse_envelope_floats(body)[0]


def parse_envelope_floats(body: bytes) -> tuple[dict[str, Any], bool]:
    """``parse_envelope(body)``, and whether the envelope may hold a float (False: it holds none).

    True as well when another thread read a float during this parse (never a
    false False).
    """
    before = next(_FLOATS_READ)
    try:
        # The same encoding detection as json.loads(bytes): UTF-8, UTF-16 or UTF-32. A body
        # opening with "{" and a non-NUL byte has no BOM and is not UTF-16/32: UTF-8, as
        # json.detect_encoding would say, without its Python-level checks.
        if body[:1] == b"{" and body[1:2] != b"\x00":
            text = body.decode("utf-8", "surrogatepass")
        else:
            text = body.decode(json.detect_encoding(body), "surrogatepass")
        data = decode_bounded(_decode, text)
    except ValueError:
        # ValueError covers JSONDecodeError, UnicodeDecodeError, int-size limits and
        # JsonTooDeepError (nesting past MAX_JSON_DEPTH).
        raise InvalidJsonError from None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("object"), str)
        or not isinstance(data.get("entry"), list)
    ):
        raise InvalidEnvelopeError
    return data, next(_FLOATS_READ) != before + 1


def _secret_bytes(app_secret: str | bytes) -> bytes:
    if isinstance(app_secret, str):
        key = app_secret.encode("utf-8")
    elif isinstance(app_secret, bytes | bytearray):
        key = bytes(app_secret)
    else:
        raise TypeError("app_secret must be str or bytes")
    if not key:
        raise ValueError("app_secret must not be empty")
    return key


def _check_cap(max_body_bytes: int) -> None:
    if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int):
        raise TypeError("max_body_bytes must be an int")
    if max_body_bytes < 1:
        raise ValueError("max_body_bytes must be positive")
