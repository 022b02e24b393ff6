"""Errors of the media layer, in one tree.

    MediaError                  base; every instance has a stable ``code``
    ├── MediaValidationError    precondition, cap, unsupported body, malformed success answer
    │   └── MediaHostError      a download URL the access token must not be sent to
    ├── MediaCryptoError        bad bundle, base64, key length, ciphertext or padding
    └── MediaIntegrityError     a SHA-256, encrypted-hash, HMAC or plaintext-hash mismatch

Upstream failures keep their Graph types (``svc.graph.GraphApiError`` and
friends) and pass through unchanged. Messages never hold secrets, keys,
digests of secret material or local paths.
"""

from __future__ import annotations

__all__ = [
    "MediaCryptoError",
    "MediaError",
    "MediaHostError",
    "MediaIntegrityError",
    "MediaValidationError",
]


class MediaError(Exception):
    """Base of every error raised by ``svc.media``; ``code`` is stable and machine-readable."""

    code: str

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={str(self)!r})"


class MediaValidationError(MediaError, ValueError):
    """An input or an upstream success answer was rejected (codes such as ``upload_too_large``)."""


class MediaHostError(MediaValidationError):
    """A download URL that is not https on an allowed media host (code ``untrusted_media_url``).

    Raised before any request, so the access token never leaves for that URL.
    """


class MediaCryptoError(MediaError, ValueError):
    """Encrypted media could not be processed: bundle, base64, key length, ciphertext, padding."""


class MediaIntegrityError(MediaError):
    """A digest or tag did not match: the bytes are not the ones the platform described."""
