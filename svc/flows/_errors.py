"""Errors of the flows layer, in one tree.

    FlowError                           base of every error raised by ``svc.flows``
    ├── FlowRequestError                the request was refused before any handler ran
    │   ├── FlowPayloadTooLargeError    413: the body is over 131,072 bytes (before any RSA work)
    │   ├── FlowSignatureError          432: X-Hub-Signature-256 missing, malformed or wrong
    │   └── FlowDecryptionError         421: envelope, base64, unwrap, GCM tag or plaintext refused
    ├── FlowHandlerError                base of the errors a handler raises on purpose
    │   └── FlowTokenNoLongerValidError 427 {"error_msg": ...}: the Flow is closed for the user
    ├── FlowResponseError               500: the handler's answer is not a JSON object
    └── FlowMediaError                  a Flow media item is malformed (``download_flow_media``)

Every error has a stable ``code``; request errors also carry the
``http_status`` the endpoint answers with. Messages are fixed sentences: they
never hold the body, a key, the IV, the app secret or decrypted content.
"""

from __future__ import annotations

from typing import ClassVar, Final

__all__ = [
    "MAX_ERROR_MESSAGE_LENGTH",
    "FlowDecryptionError",
    "FlowError",
    "FlowHandlerError",
    "FlowMediaError",
    "FlowPayloadTooLargeError",
    "FlowRequestError",
    "FlowResponseError",
    "FlowSignatureError",
    "FlowTokenNoLongerValidError",
]

MAX_ERROR_MESSAGE_LENGTH: Final = 1024
"""Longest ``error_msg`` a handler may show the user with ``FlowTokenNoLongerValidError``."""


class FlowError(Exception):
    """Base of every error raised by ``svc.flows``; ``code`` is stable and machine-readable."""

    code: str = "flow_error"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r})"


class FlowRequestError(FlowError):
    """The endpoint refused the request before any handler ran."""

    http_status: ClassVar[int] = 400
    default_message: ClassVar[str] = "The Flow request was refused."

    def __init__(self, code: str | None = None) -> None:
        if code is not None:
            self.code = code
        super().__init__(self.default_message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, http_status={self.http_status})"


class FlowPayloadTooLargeError(FlowRequestError):
    """The raw body is over the cap; refused before the signature and before any RSA work."""

    code = "payload_too_large"
    http_status = 413
    default_message = "The Flow request body is over the size limit."


class FlowSignatureError(FlowRequestError):
    """The ``X-Hub-Signature-256`` check failed (``code`` says how); the platform sees 432."""

    code = "invalid_signature"
    http_status = 432
    default_message = "The Flow request signature was refused."


class FlowDecryptionError(FlowRequestError):
    """The request could not be decrypted or is not a Flow request; the platform sees 421.

    421 makes the client download the business public key again and retry,
    which is the right reaction to a key rotation and harmless otherwise.
    """

    code = "decryption_failed"
    http_status = 421
    default_message = "The Flow request could not be decrypted."


class FlowHandlerError(FlowError):
    """Base of the errors a Flow handler raises on purpose to pick the endpoint's answer."""

    code = "handler_error"


class FlowTokenNoLongerValidError(FlowHandlerError):
    """Raise from a handler to close the Flow: the endpoint answers 427 ``{"error_msg": ...}``.

    ``error_msg`` is shown to the user by the WhatsApp client, so it is the
    handler's own wording; it is sent but never logged.
    """

    code = "flow_token_no_longer_valid"
    http_status: ClassVar[int] = 427

    def __init__(self, error_msg: str) -> None:
        if not isinstance(error_msg, str) or not error_msg.strip():
            raise ValueError("error_msg must be a non-empty string")
        if len(error_msg) > MAX_ERROR_MESSAGE_LENGTH:
            raise ValueError(f"error_msg must be at most {MAX_ERROR_MESSAGE_LENGTH} characters")
        super().__init__("The flow token is no longer valid.")
        self.error_msg = error_msg


class FlowResponseError(FlowError):
    """The handler's answer cannot be sent: not a JSON object, or not JSON-serializable."""

    code = "invalid_response"

    def __init__(self, message: str = "The Flow handler's answer is not a JSON object.") -> None:
        super().__init__(message)


class FlowMediaError(FlowError, ValueError):
    """A PhotoPicker/DocumentPicker item is malformed (``code`` says which field)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={str(self)!r})"
