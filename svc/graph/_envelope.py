"""The wire pieces every message payload shares: the envelope, the addressee, the interactive frame.

Pure and validated like the messages that use them: a bad addressee, reply id,
body or footer raises ``GraphRequestValidationError`` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._errors import GraphRequestValidationError
from ._interactive_header import interactive_header
from ._recipient import Recipient
from ._validate import check_recipient, check_reply_to, check_text

__all__ = [
    "MAX_FOOTER_TEXT",
    "MAX_INTERACTIVE_BODY",
    "Payload",
    "address",
    "envelope",
    "interactive_message",
    "routing",
]

Payload = dict[str, Any]

MAX_INTERACTIVE_BODY: Final = 1024
MAX_FOOTER_TEXT: Final = 60


def envelope(
    addressee: Mapping[str, str],
    message_type: str,
    body: Any,
    *,
    reply_to_message_id: str | None = None,
    recipient_type: str = "individual",
) -> Payload:
    """``{messaging_product, recipient_type, <addressee>, type, <type>: body, context?}``."""
    payload: Payload = {"messaging_product": "whatsapp", "recipient_type": recipient_type}
    payload.update(addressee)
    payload["type"] = message_type
    payload[message_type] = body
    if reply_to_message_id is not None:
        payload["context"] = {"message_id": check_reply_to(reply_to_message_id)}
    return payload


def address(to: object) -> dict[str, str]:
    """A one-to-one addressee: ``{"to": phone}`` or ``{"recipient": bsuid}`` (``_recipient``)."""
    return Recipient.parse(to, field="to").wire()


def routing(to: object, recipient: object) -> dict[str, str]:
    """``to`` (phone or BSUID) or ``recipient`` (BSUID); both are validated and ``to`` wins."""
    if to is None and recipient is None:
        raise GraphRequestValidationError("to or recipient is required", field="to")
    if recipient is not None:
        check_recipient(recipient)
    if to is not None:
        return address(to)
    assert isinstance(recipient, str)
    return {"recipient": recipient}


def interactive_message(
    addressee: Mapping[str, str],
    interactive_type: str,
    *,
    action: Mapping[str, Any],
    body_text: object = None,
    header_text: object = None,
    footer_text: object = None,
    body_required: bool = True,
    header: Mapping[str, Any] | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """An ``interactive`` message: the object (type, header?, body unless optional, footer?,
    action) in its envelope."""
    wire: Payload = {"type": interactive_type}
    wire_header = interactive_header(header_text, header)
    if wire_header is not None:
        wire["header"] = wire_header
    if body_text is not None or body_required:
        wire["body"] = {"text": check_text(body_text, "body_text", max_length=MAX_INTERACTIVE_BODY)}
    if footer_text is not None:
        wire["footer"] = {
            "text": check_text(footer_text, "footer_text", max_length=MAX_FOOTER_TEXT)
        }
    wire["action"] = dict(action)
    return envelope(addressee, "interactive", wire, reply_to_message_id=reply_to_message_id)
