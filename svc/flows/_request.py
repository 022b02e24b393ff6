"""Decryption of a Flow data-endpoint request into a typed ``FlowRequest``.

Checks, in order (each failure is a ``FlowDecryptionError``, HTTP 421, except
the first, which is HTTP 413); nothing reaches RSA before the caps passed:

1. the raw body is at most 131,072 bytes                      -> ``payload_too_large``
2. the body is a JSON object with the three string fields     -> ``invalid_envelope``
3. each base64 field is at most 131,072 bytes before decoding -> ``field_too_large``
4. strict base64, IV of 12 to 16 bytes, data of at least a tag -> ``invalid_base64`` ...
5. the plaintext (ciphertext less the tag) is at most the cap  -> ``plaintext_too_large``
6. RSA-OAEP-SHA256 unwrap of the AES key (16, 24 or 32 bytes) -> ``key_unwrap_failed``
7. AES-GCM with the tag at the end of the data, no AAD         -> ``decryption_failed``
8. strict UTF-8 JSON object                                    -> ``invalid_json``
9. one of the five actions, and typed fields                   -> ``invalid_action`` ...
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, cast

from svc import crypto
from svc._json import loads_strict

from ._errors import FlowDecryptionError, FlowPayloadTooLargeError
from ._keys import FlowPrivateKey
from ._response import FlowReply, encrypt_response

__all__ = [
    "ENVELOPE_FIELDS",
    "FLOW_ACTIONS",
    "MAX_FLOW_BYTES",
    "DecryptedFlowRequest",
    "FlowAction",
    "FlowRequest",
    "decrypt_request",
]

MAX_FLOW_BYTES: Final = 131_072
"""Cap on the raw body, on each base64 field before decoding and on the plaintext before parsing."""
FlowAction = Literal["INIT", "BACK", "data_exchange", "navigate", "ping"]
FLOW_ACTIONS: Final[tuple[FlowAction, ...]] = ("INIT", "BACK", "data_exchange", "navigate", "ping")
"""The five actions the platform sends; anything else is refused (421)."""
ENVELOPE_FIELDS: Final = ("encrypted_flow_data", "encrypted_aes_key", "initial_vector")
"""The base64 fields of the request body."""

_IV_SIZES: Final = range(12, 17)
_AES_KEY_SIZES: Final = frozenset({16, 24, 32})


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowRequest:
    """One decrypted request; the repr shows only the action and version (never the content)."""

    action: FlowAction
    version: str | None = None
    screen: str | None = field(default=None, repr=False)
    data: Mapping[str, Any] = field(default_factory=dict, repr=False)
    flow_token: str | None = field(default=None, repr=False)

    @property
    def is_ping(self) -> bool:
        """The platform's health check (answered without the handler)."""
        return self.action == "ping"

    @property
    def has_error(self) -> bool:
        """An error notification (``data.error``): acknowledged without the handler."""
        return "error" in self.data


@dataclass(frozen=True, slots=True, kw_only=True)
class DecryptedFlowRequest:
    """A request with the AES key and IV its response is encrypted with (both hidden in repr)."""

    request: FlowRequest
    aes_key: bytes = field(repr=False)
    iv: bytes = field(repr=False)

    def encrypt_response(self, payload: FlowReply | Mapping[str, Any]) -> bytes:
        """``encrypt_response(payload, aes_key=..., iv=...)`` with this request's key and IV."""
        return encrypt_response(payload, aes_key=self.aes_key, iv=self.iv)


def decrypt_request(
    body: bytes | Mapping[str, object], *, private_key: FlowPrivateKey
) -> DecryptedFlowRequest:
    """Decrypt a data-endpoint request (raw body bytes, or the already parsed JSON object).

    Raises ``FlowPayloadTooLargeError`` (413) or ``FlowDecryptionError`` (421,
    ``code`` says which step, see the module docstring). The signature is not
    checked here: ``handle_flow_request`` does that first.
    """
    envelope = _envelope(body)
    encoded = [envelope.get(name) for name in ENVELOPE_FIELDS]
    for value in encoded:
        if not isinstance(value, str) or not value:
            raise FlowDecryptionError("invalid_envelope")
        if len(value) > MAX_FLOW_BYTES:
            raise FlowDecryptionError("field_too_large")
    flow_data, wrapped_key, iv = (_b64(cast(str, value)) for value in encoded)
    if len(iv) not in _IV_SIZES:
        raise FlowDecryptionError("invalid_iv")
    if len(flow_data) <= crypto.AES_GCM_TAG_SIZE:
        raise FlowDecryptionError("invalid_ciphertext")
    if len(flow_data) - crypto.AES_GCM_TAG_SIZE > MAX_FLOW_BYTES:
        raise FlowDecryptionError("plaintext_too_large")
    try:
        aes_key = crypto.rsa_oaep_sha256_unwrap(private_key, wrapped_key)
    except ValueError:
        raise FlowDecryptionError("key_unwrap_failed") from None
    if len(aes_key) not in _AES_KEY_SIZES:
        raise FlowDecryptionError("invalid_key_length")
    try:
        plaintext = crypto.aes_gcm_decrypt(aes_key, iv, flow_data)
    except ValueError:
        raise FlowDecryptionError("decryption_failed") from None
    return DecryptedFlowRequest(request=_parse_request(plaintext), aes_key=aes_key, iv=iv)


def _envelope(body: object) -> Mapping[str, object]:
    if isinstance(body, Mapping):
        return cast(Mapping[str, object], body)
    if not isinstance(body, bytes | bytearray | memoryview):
        raise TypeError("body must be bytes or a mapping")
    if len(body) > MAX_FLOW_BYTES:
        raise FlowPayloadTooLargeError
    document = _json(bytes(body), code="invalid_envelope")
    if not isinstance(document, dict):
        raise FlowDecryptionError("invalid_envelope")
    return document


def _b64(value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        # ValueError also covers non-ASCII characters in the string.
        raise FlowDecryptionError("invalid_base64") from None


def _json(raw: bytes, *, code: str) -> object:
    try:
        return loads_strict(raw)
    except ValueError:
        # JSONDecodeError, UnicodeDecodeError, int-size limits and nesting past MAX_JSON_DEPTH.
        raise FlowDecryptionError(code) from None


def _parse_request(plaintext: bytes) -> FlowRequest:
    if len(plaintext) > MAX_FLOW_BYTES:  # implied by step 5; kept next to the parser it guards
        raise FlowDecryptionError("plaintext_too_large")
    document = _json(plaintext, code="invalid_json")
    if not isinstance(document, dict):
        raise FlowDecryptionError("invalid_request")
    action = document.get("action")
    if action not in FLOW_ACTIONS:
        raise FlowDecryptionError("invalid_action")
    version = _optional_str(document.get("version"))
    flow_token = _optional_str(document.get("flow_token"))
    screen = _optional_str(document.get("screen")) or None
    data = document.get("data")
    if data is None:
        data = {}
    elif not isinstance(data, dict):
        raise FlowDecryptionError("invalid_request")
    return FlowRequest(
        action=cast(FlowAction, action),
        version=version,
        screen=screen,
        data=data,
        flow_token=flow_token,
    )


def _optional_str(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise FlowDecryptionError("invalid_request")
