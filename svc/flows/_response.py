"""Flow replies and the response cipher: JSON payload -> AES-GCM under the inverted IV -> base64.

The platform decrypts the response with the request's AES key and the
request's IV with every bit inverted; the tag follows the ciphertext and the
whole is sent base64-encoded as ``text/plain``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from svc import crypto

from ._errors import FlowResponseError

__all__ = [
    "PING_RESPONSE",
    "FlowClose",
    "FlowReply",
    "FlowScreen",
    "encrypt_response",
    "error_acknowledgement",
    "invert_iv",
    "response_payload",
]

PING_RESPONSE: Final = {"data": {"status": "active"}}
"""What the endpoint answers to the platform's health check (``action: ping``)."""

_INVERT: Final = bytes(255 - value for value in range(256))
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _check_reply(text: object, text_name: str, mapping: object, mapping_name: str) -> None:
    """What both replies require: a non-empty string (the screen, the flow token) and a
    mapping (the screen's data, the closing params)."""
    if not isinstance(text, str) or not text:
        raise ValueError(f"{text_name} must be a non-empty string")
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{mapping_name} must be a mapping")


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowScreen:
    """Reply "show ``screen`` with ``data``" (the usual answer to INIT, BACK and data_exchange)."""

    screen: str
    data: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        _check_reply(self.screen, "screen", self.data, "data")

    def to_payload(self) -> dict[str, Any]:
        """The wire JSON object: ``{"screen": ..., "data": {...}}``."""
        return {"screen": self.screen, "data": dict(self.data)}


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowClose:
    """Reply "close the Flow": the platform sends ``params`` (with the flow token) to the chat."""

    flow_token: str = field(repr=False)
    params: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        _check_reply(self.flow_token, "flow_token", self.params, "params")

    def to_payload(self) -> dict[str, Any]:
        """``{"screen": "SUCCESS", "data": {"extension_message_response": {"params": ...}}}``."""
        params = {**self.params, "flow_token": self.flow_token}
        return {"screen": "SUCCESS", "data": {"extension_message_response": {"params": params}}}


FlowReply = FlowScreen | FlowClose
"""The typed replies a handler may return (a plain JSON object mapping works too)."""


def error_acknowledgement(version: str | None) -> dict[str, Any]:
    """The answer to an error notification: ``{"data": {"acknowledged": true}}`` (+ ``version``)."""
    payload: dict[str, Any] = {"data": {"acknowledged": True}}
    if version is not None:
        payload["version"] = version
    return payload


def response_payload(reply: object) -> dict[str, Any]:
    """Turn a handler's answer into the JSON object to encrypt, or raise ``FlowResponseError``."""
    if isinstance(reply, FlowScreen | FlowClose):
        return reply.to_payload()
    if isinstance(reply, Mapping):
        return dict(reply)
    raise FlowResponseError(
        f"a Flow handler must return FlowScreen, FlowClose or a mapping, not {type(reply).__name__}"
    )


def invert_iv(iv: bytes) -> bytes:
    """The response IV: the request IV with every bit flipped."""
    return iv.translate(_INVERT)


def encrypt_response(payload: FlowReply | Mapping[str, Any], *, aes_key: bytes, iv: bytes) -> bytes:
    """Encrypt a response for the platform; returns the ASCII base64 body (``text/plain``).

    ``aes_key`` and ``iv`` are the request's (``DecryptedFlowRequest``); the
    payload is compact UTF-8 JSON. Raises ``FlowResponseError`` when the
    payload is not a JSON object or holds values JSON cannot carry (NaN too).
    """
    document = response_payload(payload)
    try:
        plaintext = _ENCODER.encode(document).encode("utf-8")
    except (TypeError, ValueError, RecursionError):
        raise FlowResponseError("the Flow response is not JSON-serializable") from None
    sealed = crypto.aes_gcm_encrypt(aes_key, invert_iv(bytes(iv)), plaintext)
    return base64.b64encode(sealed)
