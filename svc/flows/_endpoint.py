"""``handle_flow_request``: one data-endpoint call, bytes in, status and body out, never raising.

The order is the contract: size cap, then the ``X-Hub-Signature-256`` check
(``svc.webhook``'s, unchanged), then decryption, so an oversized or unsigned
body never reaches RSA. Pings and error notifications are answered here;
every other request goes to the handler. Nothing below awaits anything but
the handler, so the function runs on trio and asyncio alike.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

from svc.webhook import PayloadTooLargeError, SignatureError, verify_signature

from ._errors import (
    FlowDecryptionError,
    FlowPayloadTooLargeError,
    FlowSignatureError,
    FlowTokenNoLongerValidError,
)
from ._keys import FlowPrivateKey
from ._request import MAX_FLOW_BYTES, DecryptedFlowRequest, FlowRequest, decrypt_request
from ._response import PING_RESPONSE, FlowReply, error_acknowledgement

__all__ = [
    "ENCRYPTED_CONTENT_TYPE",
    "FLOW_OUTCOMES",
    "FlowHandler",
    "FlowHandlerResult",
    "FlowResponse",
    "handle_flow_request",
]

ENCRYPTED_CONTENT_TYPE: Final = "text/plain"
"""Content type of an encrypted answer (base64 text)."""
_PLAIN: Final = "text/plain; charset=utf-8"
FLOW_OUTCOMES: Final = (
    "ping",
    "error_acknowledged",
    "handled",
    "payload_too_large",
    "invalid_signature",
    "decryption_failed",
    "flow_token_no_longer_valid",
    "internal_error",
)
"""Every ``FlowResponse.outcome``: a closed set, safe as a metric label."""

FlowHandlerResult: TypeAlias = FlowReply | Mapping[str, Any]
FlowHandler: TypeAlias = Callable[[FlowRequest], FlowHandlerResult | Awaitable[FlowHandlerResult]]
"""Takes the ``FlowRequest``, returns (or awaits) the reply; a sync handler runs inline."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowResponse:
    """What to send back: HTTP status, body bytes and Content-Type, plus a label for metrics."""

    status: int
    body: bytes = field(repr=False)
    content_type: str
    outcome: str = "handled"


def _plain(status: int, body: bytes, outcome: str) -> FlowResponse:
    """A fixed plain-text answer: the refusals and the internal error never echo the request."""
    return FlowResponse(status=status, body=body, content_type=_PLAIN, outcome=outcome)


_TOO_LARGE = _plain(
    FlowPayloadTooLargeError.http_status, b"Request body too large", "payload_too_large"
)
_BAD_SIGNATURE = _plain(
    FlowSignatureError.http_status, b"Request signature authentication failed", "invalid_signature"
)
_UNDECRYPTABLE = _plain(
    FlowDecryptionError.http_status, b"Request decryption failed", "decryption_failed"
)
_INTERNAL = _plain(500, b"Internal server error", "internal_error")


async def handle_flow_request(
    raw_body: bytes,
    signature: str | None,
    *,
    private_key: FlowPrivateKey,
    app_secret: str | bytes,
    handler: FlowHandler,
    logger: logging.Logger | None = None,
) -> FlowResponse:
    """Answer one Flows data-endpoint POST; every failure becomes a status, nothing is raised.

    ``signature`` is the ``X-Hub-Signature-256`` header (or None). Outcomes:
    200 encrypted (ping, error acknowledgement, handler reply), 413 over the
    cap, 432 signature refused, 421 not decryptable, 427 ``{"error_msg": ...}``
    when the handler raises ``FlowTokenNoLongerValidError``, 500 with a fixed
    body for anything else. Cancellation (trio's or asyncio's) propagates.
    Log lines name the outcome and an exception class, never content.
    """
    log = logger if logger is not None else logging.getLogger("svc.flows")
    try:
        answer = await _answer(raw_body, signature, private_key, app_secret, handler, log)
    except Exception as exc:  # noqa: BLE001 - the endpoint answers 500 instead of raising
        log.warning("flow request failed outcome=internal_error error=%s", _name(exc))
        return _INTERNAL
    if answer.status >= 500:
        log.warning("flow request answered outcome=%s", answer.outcome)
    else:
        log.debug("flow request answered outcome=%s status=%d", answer.outcome, answer.status)
    return answer


async def _answer(
    raw_body: bytes,
    signature: str | None,
    private_key: FlowPrivateKey,
    app_secret: str | bytes,
    handler: FlowHandler,
    log: logging.Logger,
) -> FlowResponse:
    body = bytes(raw_body)
    try:
        verify_signature(
            body=body, header=signature, app_secret=app_secret, max_body_bytes=MAX_FLOW_BYTES
        )
    except PayloadTooLargeError:
        return _TOO_LARGE
    except SignatureError as exc:
        log.info("flow request refused outcome=invalid_signature code=%s", exc.code)
        return _BAD_SIGNATURE
    try:
        decrypted = decrypt_request(body, private_key=private_key)
    except FlowDecryptionError as exc:
        log.info("flow request refused outcome=decryption_failed code=%s", exc.code)
        return _UNDECRYPTABLE
    request = decrypted.request
    if request.is_ping:
        return _encrypted(decrypted, PING_RESPONSE, "ping")
    if request.has_error:
        log.info("flow error notification acknowledged action=%s", request.action)
        return _encrypted(decrypted, error_acknowledgement(request.version), "error_acknowledged")
    try:
        result = handler(request)
        if inspect.isawaitable(result):
            result = await result
    except FlowTokenNoLongerValidError as exc:
        body = json.dumps({"error_msg": exc.error_msg}, ensure_ascii=False).encode("utf-8")
        return FlowResponse(
            status=FlowTokenNoLongerValidError.http_status,
            body=body,
            content_type="application/json",
            outcome="flow_token_no_longer_valid",
        )
    return _encrypted(decrypted, result, "handled")


def _encrypted(
    decrypted: DecryptedFlowRequest, payload: FlowHandlerResult, outcome: str
) -> FlowResponse:
    return FlowResponse(
        status=200,
        body=decrypted.encrypt_response(payload),
        content_type=ENCRYPTED_CONTENT_TYPE,
        outcome=outcome,
    )


def _name(exc: BaseException) -> str:
    return type(exc).__name__[:80]
