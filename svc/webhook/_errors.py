"""Errors of the webhook layer, in one tree.

    WebhookError                        every refusal of an inbound webhook request
    ├── PayloadTooLargeError            413 payload_too_large
    ├── SignatureError                  the X-Hub-Signature-256 check failed
    │   ├── MissingSignatureError       401 missing_signature
    │   ├── InvalidSignatureFormatError 400 invalid_signature_format
    │   └── SignatureMismatchError      401 signature_mismatch
    ├── InvalidJsonError                400 invalid_json (only after the signature passed)
    ├── InvalidEnvelopeError            400 invalid_envelope
    └── ChallengeError                  the GET verification failed
        ├── InvalidModeError            400 invalid_mode
        ├── MissingChallengeError       400 missing_challenge
        └── InvalidVerifyTokenError     403 invalid_verify_token

Each error carries the JSON error ``code`` and the ``http_status`` the HTTP
layer answers with. Messages are fixed sentences: they never hold the body,
the signature, the challenge, the verify token or the app secret.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "ChallengeError",
    "InvalidEnvelopeError",
    "InvalidJsonError",
    "InvalidModeError",
    "InvalidSignatureFormatError",
    "InvalidVerifyTokenError",
    "MissingChallengeError",
    "MissingSignatureError",
    "PayloadTooLargeError",
    "SignatureError",
    "SignatureMismatchError",
    "WebhookError",
]


class WebhookError(Exception):
    """Base of every webhook refusal; ``code`` and ``http_status`` map to the error body."""

    code: ClassVar[str] = "invalid_webhook"
    http_status: ClassVar[int] = 400
    default_message: ClassVar[str] = "The webhook request was refused."

    def __init__(self, message: str | None = None) -> None:
        self.message = message if message is not None else self.default_message
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, http_status={self.http_status})"


class PayloadTooLargeError(WebhookError):
    """The body (or its declared Content-Length) is over ``maxBodyBytes``."""

    code = "payload_too_large"
    http_status = 413
    default_message = "The webhook body is over the size limit."


class SignatureError(WebhookError):
    """The signature header is missing, malformed or does not match the body."""

    code = "invalid_signature"
    http_status = 401
    default_message = "The webhook signature was refused."


class MissingSignatureError(SignatureError):
    """No ``X-Hub-Signature-256`` header."""

    code = "missing_signature"
    http_status = 401
    default_message = "The X-Hub-Signature-256 header is missing."


class InvalidSignatureFormatError(SignatureError):
    """The header is not ``sha256=`` followed by exactly 64 hex digits."""

    code = "invalid_signature_format"
    http_status = 400
    default_message = "The X-Hub-Signature-256 header must be sha256=<64 hex digits>."


class SignatureMismatchError(SignatureError):
    """The HMAC-SHA256 of the body under the app secret is not the one in the header."""

    code = "signature_mismatch"
    http_status = 401
    default_message = "The webhook signature does not match the body."


class InvalidJsonError(WebhookError):
    """The (signed) body is not JSON."""

    code = "invalid_json"
    http_status = 400
    default_message = "The webhook body is not valid JSON."


class InvalidEnvelopeError(WebhookError):
    """The JSON is not an envelope: an object with a string ``object`` and an ``entry`` list."""

    code = "invalid_envelope"
    http_status = 400
    default_message = "The webhook body is not an envelope with 'object' and 'entry'."


class ChallengeError(WebhookError):
    """The GET verification (``hub.mode``, ``hub.verify_token``, ``hub.challenge``) failed."""

    code = "invalid_challenge"
    http_status = 400
    default_message = "The webhook verification request was refused."


class InvalidModeError(ChallengeError):
    """``hub.mode`` is missing or not ``subscribe``."""

    code = "invalid_mode"
    http_status = 400
    default_message = "hub.mode must be 'subscribe'."


class MissingChallengeError(ChallengeError):
    """``hub.challenge`` is missing or empty."""

    code = "missing_challenge"
    http_status = 400
    default_message = "hub.challenge is missing."


class InvalidVerifyTokenError(ChallengeError):
    """``hub.verify_token`` is missing or is not the configured token."""

    code = "invalid_verify_token"
    http_status = 403
    default_message = "hub.verify_token does not match."
