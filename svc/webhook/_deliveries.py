"""The deliveries a simulated user's action makes: the platform's webhook JSON, built sans-IO.

Each action of a user the developer plays (on the ``svc dev`` page, or scripted in a
test with ``svc.testing``: a text, a tap on a reply button, a location, ...) is
checked here and turned into the ``messages`` change the platform would post for it,
in the shapes of the project's webhook fixtures; statuses of the bot's sends are built
the same way. Nothing here signs, posts or reads a clock: ``now`` and the message id
are arguments.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from svc._json import loads_strict
from svc._text import has_surrogate
from svc.graph import is_bsuid, is_phone_number

from ._read import CONTACT_KEYS, RECIPIENT_KEYS, SENDER_KEYS, UserKeys

__all__ = [
    "DevActionError",
    "DevUser",
    "action_message",
    "message_delivery",
    "new_message_id",
    "status_delivery",
]

MAX_TEXT: Final = 4096
MAX_FIELD: Final = 1024
_USERNAME: Final = re.compile(r"@?[A-Za-z0-9._]{1,35}")
_MESSAGE_ID: Final = re.compile(r"[A-Za-z0-9._=+/:-]{1,200}")
_MEDIA_KINDS: Final = {"image": "image/jpeg", "document": "application/pdf"}
_MEDIA_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")
_SHA256: Final = re.compile(r"[0-9a-f]{64}")


class DevActionError(ValueError):
    """A simulated user's action cannot make a delivery (a missing or bad field)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DevUser:
    """A user the developer plays: by phone, or by BSUID (with a username) and no phone."""

    name: str
    phone: str | None = None
    bsuid: str | None = None
    username: str | None = None

    @property
    def key(self) -> str:
        """The user's address the bot replies to (the BSUID first, as ``update.user.key``)."""
        return self.bsuid or self.phone or ""

    @classmethod
    def from_json(cls, value: object) -> DevUser:
        """The user of an action (``{"name", "phone"}`` or ``{"name", "bsuid", "username"}``)."""
        if not isinstance(value, Mapping):
            raise DevActionError("user must be an object")
        name = _text(value.get("name") or "Developer", "user.name", limit=64)
        phone = value.get("phone") or None
        bsuid = value.get("bsuid") or None
        username = value.get("username") or None
        if phone is not None and not (is_phone_number(phone) and not str(phone).startswith("+")):
            raise DevActionError("user.phone must be 1-15 digits")
        if bsuid is not None and not is_bsuid(bsuid):
            raise DevActionError("user.bsuid must look like US.13491208655302741918")
        if username is not None and not (
            isinstance(username, str) and _USERNAME.fullmatch(username)
        ):
            raise DevActionError("user.username must be 1-35 letters, digits, '.' or '_'")
        if phone is None and bsuid is None:
            raise DevActionError("a user needs a phone or a bsuid")
        return cls(name=name, phone=phone, bsuid=bsuid, username=username)

    def contact(self) -> dict[str, Any]:
        """The change's ``contacts[]`` entry naming this user."""
        profile: dict[str, Any] = {"name": self.name}
        if self.username is not None:
            profile["username"] = self.username if self.username.startswith("@") else (
                "@" + self.username
            )
        return {"profile": profile, **self._ids(CONTACT_KEYS)}

    def sender(self) -> dict[str, str]:
        """The sender fields of a message from this user."""
        return self._ids(SENDER_KEYS)

    def recipient(self) -> dict[str, str]:
        """The recipient fields of a status of a message to this user."""
        return self._ids(RECIPIENT_KEYS)

    def _ids(self, keys: UserKeys) -> dict[str, str]:
        """The user's phone and BSUID under the keys an item names them by (the ones it has)."""
        phone_key, bsuid_key, _ = keys
        fields: dict[str, str] = {}
        if self.phone is not None:
            fields[phone_key] = self.phone
        if self.bsuid is not None:
            fields[bsuid_key] = self.bsuid
        return fields


def new_message_id() -> str:
    """A fresh id for a message the developer sends (``wamid.DEV.<hex>``)."""
    return f"wamid.DEV.{secrets.token_hex(12).upper()}"


def _text(value: object, name: str, *, limit: int = MAX_FIELD, empty: bool = False) -> str:
    if (
        not isinstance(value, str)
        or (not empty and not value.strip())
        or len(value) > limit
        or has_surrogate(value)  # JSON's \ud800: UTF-8 cannot carry it
    ):
        raise DevActionError(f"{name} must be a text of 1-{limit} characters")
    return value


def _message_id(value: object, name: str) -> str:
    if not isinstance(value, str) or not _MESSAGE_ID.fullmatch(value):
        raise DevActionError(f"{name} must be a message id")
    return value


def _number(value: object, name: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise DevActionError(f"{name} must be a number in {low:g}..{high:g}")
    return float(value)


def _media_fields(action: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """The id, type and SHA-256 of an image or document: an uploaded file's (``media_id``,
    ``mime_type``, ``sha256`` of its bytes), else made up for a file that does not exist."""
    if action.get("media_id") is None:
        return {
            "id": f"dev-media-{secrets.token_hex(8)}",
            "mime_type": _MEDIA_KINDS[kind],
            "sha256": secrets.token_hex(32),
        }
    media_id = action.get("media_id")
    sha256 = action.get("sha256")
    if not isinstance(media_id, str) or not _MEDIA_ID.fullmatch(media_id):
        raise DevActionError("media_id must be letters, digits, '_' or '-'")
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise DevActionError("sha256 must be 64 hex digits")
    return {
        "id": media_id,
        "mime_type": _text(action.get("mime_type"), "mime_type", limit=255),
        "sha256": sha256,
    }


def action_message(action: Mapping[str, Any], business_phone: str) -> dict[str, Any]:
    """The ``messages[]`` item of one action, without the sender, id and timestamp.

    ``action["kind"]`` names it: ``text``, ``reaction``, ``location``, ``contact``,
    ``button_reply``, ``list_reply``, ``quick_reply``, ``flow``, ``image``, ``document``.
    ``context`` (a message id) quotes a message of the bot's, as a tap does. An image or
    document with ``media_id`` (and its ``mime_type`` and ``sha256``) names a real file.
    """
    kind = action.get("kind")
    if not isinstance(kind, str):
        raise DevActionError("kind must be one of the actions the page offers")
    message: dict[str, Any]
    if kind == "text":
        body = _text(action.get("text"), "text", limit=MAX_TEXT)
        message = {"type": "text", "text": {"body": body}}
    elif kind == "reaction":
        emoji = _text(action.get("emoji", ""), "emoji", limit=16, empty=True)
        target = _message_id(action.get("message_id"), "message_id")
        message = {"type": "reaction", "reaction": {"message_id": target, "emoji": emoji}}
    elif kind == "location":
        location: dict[str, Any] = {
            "latitude": _number(action.get("latitude"), "latitude", -90, 90),
            "longitude": _number(action.get("longitude"), "longitude", -180, 180),
        }
        for field in ("name", "address"):
            if action.get(field):
                location[field] = _text(action.get(field), field)
        message = {"type": "location", "location": location}
    elif kind == "contact":
        name = _text(action.get("name"), "name", limit=256)
        phone = _text(action.get("phone"), "phone", limit=32)
        card: dict[str, Any] = {
            "name": {"formatted_name": name, "first_name": name.split()[0]},
            "phones": [{"phone": phone, "type": "CELL"}],
        }
        digits = re.sub(r"\D", "", phone)
        if is_phone_number(digits):
            card["phones"][0]["wa_id"] = digits
        message = {"type": "contacts", "contacts": [card]}
    elif kind in ("button_reply", "list_reply"):
        reply: dict[str, Any] = {
            "id": _text(action.get("id"), "id", limit=256),
            "title": _text(action.get("title"), "title", limit=72),
        }
        if kind == "list_reply" and action.get("description"):
            reply["description"] = _text(action.get("description"), "description", limit=72)
        message = {"type": "interactive", "interactive": {"type": kind, kind: reply}}
    elif kind == "quick_reply":
        message = {
            "type": "button",
            "button": {
                "payload": _text(action.get("payload"), "payload", limit=256),
                "text": _text(action.get("text"), "text", limit=72),
            },
        }
    elif kind == "flow":
        response = _text(action.get("response_json"), "response_json", limit=MAX_TEXT)
        try:
            parsed = loads_strict(response)
        except ValueError:
            raise DevActionError("response_json must be a JSON object") from None
        if not isinstance(parsed, dict):
            raise DevActionError("response_json must be a JSON object")
        message = {
            "type": "interactive",
            "interactive": {
                "type": "nfm_reply",
                "nfm_reply": {"name": "flow", "body": "Sent", "response_json": response},
            },
        }
    elif kind in _MEDIA_KINDS:
        media = _media_fields(action, kind)
        if action.get("caption"):
            media["caption"] = _text(action.get("caption"), "caption")
        if kind == "document":
            media["filename"] = _text(action.get("filename") or "file.pdf", "filename", limit=240)
        message = {"type": kind, kind: media}
    else:
        raise DevActionError("kind must be one of the actions the page offers")
    quoted = action.get("context")
    if quoted is not None:
        message["context"] = {"from": business_phone, "id": _message_id(quoted, "context")}
    return message


def _envelope(
    metadata: Mapping[str, str], waba_id: str, value: dict[str, Any]
) -> dict[str, Any]:
    body = {
        "messaging_product": "whatsapp",
        "metadata": {
            "display_phone_number": metadata["display_phone_number"],
            "phone_number_id": metadata["phone_number_id"],
        },
        **value,
    }
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": waba_id, "changes": [{"field": "messages", "value": body}]}],
    }


def message_delivery(
    user: DevUser,
    message: Mapping[str, Any],
    *,
    message_id: str,
    now: int,
    metadata: Mapping[str, str],
    waba_id: str,
) -> dict[str, Any]:
    """The delivery of one message ``user`` sends (``message`` from ``action_message``)."""
    item = {**user.sender(), "id": message_id, "timestamp": str(now), **message}
    return _envelope(metadata, waba_id, {"contacts": [user.contact()], "messages": [item]})


def status_delivery(
    user: DevUser,
    *,
    message_id: str,
    status: str,
    now: int,
    metadata: Mapping[str, str],
    waba_id: str,
    error: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The delivery of one status (``sent``, ``delivered``, ``read``, ``failed``) of a send."""
    item: dict[str, Any] = {
        "id": message_id,
        "status": status,
        "timestamp": str(now),
        **user.recipient(),
    }
    if error is not None:
        item["errors"] = [dict(error)]
    value: dict[str, Any] = {"statuses": [item]}
    if user.bsuid is not None:
        value = {"contacts": [user.contact()], **value}
    return _envelope(metadata, waba_id, value)
