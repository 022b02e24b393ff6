"""Read receipts and prebuilt payloads: the sends that are not a ``Message`` declaration.

A read receipt marks an inbound message read (it creates no message); a
prebuilt payload is checked and readdressed like the typed messages before it
is sent as is. Both raise ``GraphRequestValidationError`` on bad input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._callback_data import CALLBACK_DATA_KEY, check_callback_data
from ._content_messages import MEDIA_KINDS
from ._envelope import Payload, address
from ._errors import GraphRequestValidationError
from ._recipient import AUTHENTICATION_OTP_RULE, require_phone_number
from ._template_messages import has_otp_button
from ._validate import check_bool, check_group_id, check_mapping, check_recipient, check_reply_to

__all__ = [
    "GROUP_MESSAGE_TYPES",
    "build_read_receipt",
    "check_message_payload",
    "is_read_receipt_payload",
]

GROUP_MESSAGE_TYPES: Final = frozenset({"text", "template", "pin"} | MEDIA_KINDS)
"""Message types a group send may carry; every other type is rejected for groups."""


# --- read receipts ---------------------------------------------------------------------

_READ_RECEIPT_KEYS = frozenset({"messaging_product", "status", "message_id", "typing_indicator"})
_TYPING_INDICATOR: Final = {"type": "text"}


def build_read_receipt(*, message_id: str, typing_indicator: bool = False) -> Payload:
    """Mark an inbound message as read, optionally showing the typing indicator.

    ``message_id`` follows the reply-context rules; the wire form is exactly
    ``{"messaging_product", "status": "read", "message_id"}`` plus
    ``"typing_indicator": {"type": "text"}`` when asked.
    """
    receipt: Payload = {
        "messaging_product": "whatsapp",
        "status": "read",
        "message_id": check_reply_to(message_id, "message_id"),
    }
    if check_bool(typing_indicator, "typing_indicator"):
        receipt["typing_indicator"] = dict(_TYPING_INDICATOR)
    return receipt


def is_read_receipt_payload(payload: Mapping[str, Any]) -> bool:
    """Whether a send payload is a read receipt (it carries ``status``, messages never do).

    The one definition: the fake transport, the send path and the HTTP layer
    all ask this.
    """
    return "status" in payload


def _check_read_receipt(payload: Mapping[str, Any]) -> Payload:
    receipt = check_mapping(
        payload, "payload", allowed=_READ_RECEIPT_KEYS, required=("status", "message_id")
    )
    if receipt.get("messaging_product", "whatsapp") != "whatsapp":
        raise GraphRequestValidationError(
            "messaging_product must be whatsapp", field="messaging_product"
        )
    if receipt["status"] != "read":
        raise GraphRequestValidationError("status must be read", field="status")
    indicator = receipt.get("typing_indicator")
    if indicator is not None and indicator != _TYPING_INDICATOR:
        raise GraphRequestValidationError(
            'typing_indicator must be {"type": "text"}', field="typing_indicator"
        )
    return build_read_receipt(
        message_id=receipt["message_id"], typing_indicator=indicator is not None
    )


# --- prebuilt payloads -----------------------------------------------------------------

_HEAD = ("messaging_product", "recipient_type")


def _template_part(message: Mapping[str, Any]) -> Mapping[str, Any]:
    template = message.get("template")
    return template if isinstance(template, Mapping) else {}


def check_message_payload(payload: object) -> Payload:
    """Check a prebuilt send payload and return a shallow copy of it.

    It must be a JSON object with string keys. An individual payload is
    addressed like the typed builders: a phone number stays in ``to``, a
    BSUID (in ``to`` or ``recipient``) ends up in ``recipient`` alone, and
    ``to`` wins when both are given. ``to`` is a group id when
    ``recipient_type`` is ``group``; group
    payloads may carry only text, media and pin (group templates go through
    ``GroupTemplateMessage``, which checks the template category). A
    read receipt (``status: read``, see ``build_read_receipt``) is checked
    against its exact shape instead.
    """
    if not isinstance(payload, Mapping) or not all(isinstance(key, str) for key in payload):
        raise GraphRequestValidationError("payload must be an object", field="payload")
    if is_read_receipt_payload(payload):
        return _check_read_receipt(payload)
    message: Payload = dict(payload)
    if message.get(CALLBACK_DATA_KEY) is not None:
        check_callback_data(message[CALLBACK_DATA_KEY])
    recipient_type = message.get("recipient_type", "individual")
    message_type = message.get("type")
    if recipient_type == "group":
        check_group_id(message.get("to"))
        if message_type == "template":
            raise GraphRequestValidationError(
                "group templates need a template_category: use send_group_template",
                field="template_category",
            )
        if message_type not in GROUP_MESSAGE_TYPES:
            raise GraphRequestValidationError(
                "groups accept only text, media, template and pin messages", field="type"
            )
    elif recipient_type == "individual":
        if message.get("recipient") is not None:
            check_recipient(message["recipient"])
        if message.get("to") is not None:
            # A BSUID given as ``to`` moves to ``recipient``; ``to`` wins over ``recipient``.
            addressee = address(message.pop("to"))
            message.pop("recipient", None)
        elif message.get("recipient") is not None:
            addressee = {"recipient": message.pop("recipient")}
        else:
            raise GraphRequestValidationError("to or recipient is required", field="to")
        message = {**{k: message.pop(k) for k in _HEAD if k in message}, **addressee, **message}
        if message_type == "template" and has_otp_button(_template_part(message)):
            require_phone_number(addressee, rule=AUTHENTICATION_OTP_RULE)
    else:
        raise GraphRequestValidationError(
            "recipient_type must be individual or group", field="recipient_type"
        )
    return message
