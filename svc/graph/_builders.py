"""Message builders: pure functions from snake_case inputs to the exact Graph wire JSON.

Every builder validates all of its inputs first (``_validate``) and raises
``GraphRequestValidationError`` on the first rejected one; none does I/O.
Dict inputs (contacts, buttons, sections, components) reject unknown keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from ._callback_data import CALLBACK_DATA_KEY, check_callback_data
from ._errors import GraphRequestValidationError
from ._interactive_header import interactive_header
from ._recipient import AUTHENTICATION_OTP_RULE, Recipient, require_phone_number
from ._validate import (
    check_bool,
    check_caption,
    check_choice,
    check_filename,
    check_group_id,
    check_id,
    check_int,
    check_label,
    check_latitude,
    check_link,
    check_longitude,
    check_mapping,
    check_media_id,
    check_recipient,
    check_reply_to,
    check_sequence,
    check_text,
)

__all__ = [
    "GROUP_MESSAGE_TYPES",
    "MEDIA_KINDS",
    "MediaKind",
    "build_audio_message",
    "build_call_permission_request_message",
    "build_contacts_message",
    "build_document_message",
    "build_group_media_message",
    "build_group_pin_message",
    "build_group_template_message",
    "build_group_text_message",
    "build_image_message",
    "build_interactive_buttons_message",
    "build_interactive_catalog_message",
    "build_interactive_cta_url_message",
    "build_interactive_list_message",
    "build_interactive_location_request_message",
    "build_interactive_product_message",
    "build_interactive_products_message",
    "build_location_message",
    "build_marketing_template_message",
    "build_media_message",
    "build_otp_button",
    "build_reaction_message",
    "build_read_receipt",
    "build_remove_reaction_message",
    "build_sticker_message",
    "build_template_message",
    "build_text_message",
    "build_video_message",
    "build_voice_call_button_message",
    "check_message_payload",
    "is_read_receipt_payload",
]

MediaKind = Literal["image", "video", "audio", "document", "sticker"]
MEDIA_KINDS: Final = frozenset({"image", "video", "audio", "document", "sticker"})
GROUP_MESSAGE_TYPES: Final = frozenset({"text", "template", "pin"} | MEDIA_KINDS)
"""Message types a group send may carry; every other type is rejected for groups."""

_CAPTION_KINDS = frozenset({"image", "video", "document"})

# Platform limits for interactive messages.
MAX_INTERACTIVE_BODY = 1024
MAX_FOOTER_TEXT = 60
MAX_BUTTON_TITLE = 20
MAX_BUTTON_ID = 256
MAX_LIST_BUTTON_TEXT = 20
MAX_LIST_SECTIONS = 10
MAX_LIST_ROWS = 10
MAX_SECTION_TITLE = 24
MAX_ROW_ID = 200
MAX_ROW_TITLE = 24
MAX_ROW_DESCRIPTION = 72
MAX_CTA_DISPLAY_TEXT = 20
MAX_PRODUCT_SECTIONS = 10
MAX_PRODUCT_ITEMS = 30
MAX_CALL_DISPLAY_TEXT = 20
MAX_CALL_TTL_MINUTES = 43200
MAX_CALL_PAYLOAD = 512
MAX_EXPIRATION_DAYS = 30
MAX_REACTION_EMOJI = 32
MAX_LOCATION_FIELD = 1024
MAX_CONTACTS = 100
MAX_CONTACT_ITEMS = 20
MAX_CONTACT_FIELD = 1024
MAX_TEMPLATE_NAME = 512
MAX_TEMPLATE_COMPONENTS = 50
MAX_OTP_BUTTON_TEXT = 25
MAX_SUPPORTED_APPS = 5
MAX_PACKAGE_NAME = 224
MAX_SIGNATURE_HASH = 11

_TEMPLATE_NAME = re.compile(r"[a-z0-9_]+")
_LANGUAGE_CODE = re.compile(r"[A-Za-z]{2,3}(?:[_-][A-Za-z0-9]{2,4})?")
_BIRTHDAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

Payload = dict[str, Any]


# --- common envelope -------------------------------------------------------------------


def _envelope(
    address: Mapping[str, str],
    message_type: str,
    body: Any,
    *,
    reply_to_message_id: str | None = None,
    recipient_type: str = "individual",
) -> Payload:
    payload: Payload = {"messaging_product": "whatsapp", "recipient_type": recipient_type}
    payload.update(address)
    payload["type"] = message_type
    payload[message_type] = body
    if reply_to_message_id is not None:
        payload["context"] = {"message_id": check_reply_to(reply_to_message_id)}
    return payload


def _address(to: object) -> dict[str, str]:
    """A one-to-one addressee: ``{"to": phone}`` or ``{"recipient": bsuid}`` (``_recipient``)."""
    return Recipient.parse(to, field="to").wire()


def _routing(to: object, recipient: object) -> dict[str, str]:
    """``to`` (phone or BSUID) or ``recipient`` (BSUID); both are validated and ``to`` wins."""
    if to is None and recipient is None:
        raise GraphRequestValidationError("to or recipient is required", field="to")
    if recipient is not None:
        check_recipient(recipient)
    if to is not None:
        return _address(to)
    assert isinstance(recipient, str)
    return {"recipient": recipient}


def _body(text: object, field: str = "body_text") -> dict[str, str]:
    return {"text": check_text(text, field, max_length=MAX_INTERACTIVE_BODY)}


def _footer(text: object, field: str = "footer_text") -> dict[str, str]:
    return {"text": check_text(text, field, max_length=MAX_FOOTER_TEXT)}


def _interactive(
    interactive_type: str,
    *,
    action: Mapping[str, Any],
    body_text: object = None,
    header_text: object = None,
    footer_text: object = None,
    body_required: bool = True,
    header: Mapping[str, Any] | None = None,
) -> Payload:
    interactive: Payload = {"type": interactive_type}
    wire_header = interactive_header(header_text, header)
    if wire_header is not None:
        interactive["header"] = wire_header
    if body_text is not None or body_required:
        interactive["body"] = _body(body_text)
    if footer_text is not None:
        interactive["footer"] = _footer(footer_text)
    interactive["action"] = dict(action)
    return interactive


# --- text, media, location, reaction -------------------------------------------------


def build_text_message(
    *,
    to: str,
    text: str,
    preview_url: bool | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A text message; ``preview_url`` is sent only when given."""
    return _text(_address(to), text, preview_url, reply_to_message_id, "individual")


def _text(
    address: Mapping[str, str],
    text: object,
    preview_url: object,
    reply_to_message_id: str | None,
    recipient_type: str,
) -> Payload:
    body: Payload = {"body": check_text(text)}
    if preview_url is not None:
        body["preview_url"] = check_bool(preview_url, "preview_url")
    return _envelope(
        address,
        "text",
        body,
        reply_to_message_id=reply_to_message_id,
        recipient_type=recipient_type,
    )


def _media_object(
    kind: object,
    *,
    media_id: object,
    link: object,
    caption: object,
    filename: object,
    voice: object,
) -> tuple[str, Payload]:
    if not isinstance(kind, str) or kind not in MEDIA_KINDS:
        raise GraphRequestValidationError(
            "kind must be one of audio, document, image, sticker, video", field="kind"
        )
    if (media_id is None) == (link is None):
        raise GraphRequestValidationError(
            "exactly one of media_id or link is required", field="media_id"
        )
    media: Payload = (
        {"id": check_media_id(media_id)} if media_id is not None else {"link": check_link(link)}
    )
    if caption is not None:
        if kind not in _CAPTION_KINDS:
            raise GraphRequestValidationError(
                f"caption is allowed for image, video and document only, not {kind}",
                field="caption",
            )
        media["caption"] = check_caption(caption)
    if filename is not None:
        if kind != "document":
            raise GraphRequestValidationError(
                f"filename is allowed for document only, not {kind}", field="filename"
            )
        media["filename"] = check_filename(filename)
    if voice is not None:
        if kind != "audio":
            raise GraphRequestValidationError(
                f"voice is allowed for audio only, not {kind}", field="voice"
            )
        if check_bool(voice, "voice"):
            media["voice"] = True
    return kind, media


def build_media_message(
    kind: MediaKind,
    *,
    to: str,
    media_id: str | None = None,
    link: str | None = None,
    caption: str | None = None,
    filename: str | None = None,
    voice: bool | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """An image, video, audio, document or sticker message from one of ``media_id``/``link``.

    ``caption`` is for image, video and document; ``filename`` for document;
    ``voice`` for audio (``True`` adds ``audio.voice``; ``False`` keeps the standard payload).
    """
    addressee = _address(to)
    name, media = _media_object(
        kind, media_id=media_id, link=link, caption=caption, filename=filename, voice=voice
    )
    return _envelope(addressee, name, media, reply_to_message_id=reply_to_message_id)


def build_image_message(
    *,
    to: str,
    media_id: str | None = None,
    link: str | None = None,
    caption: str | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """An image message (see ``build_media_message``)."""
    return build_media_message(
        "image",
        to=to,
        media_id=media_id,
        link=link,
        caption=caption,
        reply_to_message_id=reply_to_message_id,
    )


def build_video_message(
    *,
    to: str,
    media_id: str | None = None,
    link: str | None = None,
    caption: str | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A video message (see ``build_media_message``)."""
    return build_media_message(
        "video",
        to=to,
        media_id=media_id,
        link=link,
        caption=caption,
        reply_to_message_id=reply_to_message_id,
    )


def build_audio_message(
    *,
    to: str,
    media_id: str | None = None,
    link: str | None = None,
    voice: bool | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """An audio message; ``voice=True`` sends it as a voice note (see ``build_media_message``)."""
    return build_media_message(
        "audio",
        to=to,
        media_id=media_id,
        link=link,
        voice=voice,
        reply_to_message_id=reply_to_message_id,
    )


def build_document_message(
    *,
    to: str,
    media_id: str | None = None,
    link: str | None = None,
    caption: str | None = None,
    filename: str | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A document message (see ``build_media_message``)."""
    return build_media_message(
        "document",
        to=to,
        media_id=media_id,
        link=link,
        caption=caption,
        filename=filename,
        reply_to_message_id=reply_to_message_id,
    )


def build_sticker_message(
    *,
    to: str,
    media_id: str | None = None,
    link: str | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A sticker message (see ``build_media_message``)."""
    return build_media_message(
        "sticker", to=to, media_id=media_id, link=link, reply_to_message_id=reply_to_message_id
    )


def build_location_message(
    *,
    to: str,
    latitude: float,
    longitude: float,
    name: str | None = None,
    address: str | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A location pin: finite latitude in -90..90 and longitude in -180..180."""
    addressee = _address(to)
    location: Payload = {
        "latitude": check_latitude(latitude),
        "longitude": check_longitude(longitude),
    }
    if name is not None:
        location["name"] = check_label(name, "name", max_length=MAX_LOCATION_FIELD)
    if address is not None:
        location["address"] = check_text(address, "address", max_length=MAX_LOCATION_FIELD)
    return _envelope(addressee, "location", location, reply_to_message_id=reply_to_message_id)


def build_reaction_message(*, to: str, message_id: str, emoji: str) -> Payload:
    """A reaction with a non-empty ``emoji`` to ``message_id``."""
    addressee = _address(to)
    reaction = {
        "message_id": check_id(message_id, "message_id"),
        "emoji": check_label(emoji, "emoji", max_length=MAX_REACTION_EMOJI),
    }
    return _envelope(addressee, "reaction", reaction)


def build_remove_reaction_message(*, to: str, message_id: str) -> Payload:
    """Remove an earlier reaction: the reaction payload with an empty emoji."""
    addressee = _address(to)
    return _envelope(
        addressee, "reaction", {"message_id": check_id(message_id, "message_id"), "emoji": ""}
    )


# --- contacts --------------------------------------------------------------------------

_CONTACT_KEYS = frozenset({"name", "phones", "emails", "urls", "addresses", "org", "birthday"})
_NAME_KEYS = ("formatted_name", "first_name", "last_name", "middle_name", "suffix", "prefix")
_PHONE_KEYS = ("phone", "type", "wa_id")
_EMAIL_KEYS = ("email", "type")
_URL_KEYS = ("url", "type")
_ADDRESS_KEYS = ("street", "city", "state", "zip", "country", "country_code", "type")
_ORG_KEYS = ("company", "department", "title")


def _string_fields(
    value: object, field: str, keys: Sequence[str], required: Sequence[str] = ()
) -> dict[str, str]:
    checked = check_mapping(value, field, allowed=keys, required=required)
    out: dict[str, str] = {}
    for key in keys:
        item = checked.get(key)
        if item is not None:
            out[key] = check_label(item, f"{field}.{key}", max_length=MAX_CONTACT_FIELD)
    if not out:
        raise GraphRequestValidationError(f"{field} must not be empty", field=field)
    return out


def _string_field_list(
    value: object, field: str, keys: Sequence[str], required: Sequence[str], minimum: int = 0
) -> list[dict[str, str]]:
    items = check_sequence(value, field, minimum=minimum, maximum=MAX_CONTACT_ITEMS)
    return [
        _string_fields(item, f"{field}[{index}]", keys, required)
        for index, item in enumerate(items)
    ]


def _contact(value: object, field: str) -> Payload:
    contact = check_mapping(value, field, allowed=_CONTACT_KEYS, required=("name", "phones"))
    out: Payload = {}
    if contact.get("addresses") is not None:
        out["addresses"] = _string_field_list(
            contact["addresses"], f"{field}.addresses", _ADDRESS_KEYS, ()
        )
    if contact.get("birthday") is not None:
        birthday = contact["birthday"]
        if not isinstance(birthday, str) or not _BIRTHDAY.fullmatch(birthday):
            raise GraphRequestValidationError(
                f"{field}.birthday must be YYYY-MM-DD", field=f"{field}.birthday"
            )
        out["birthday"] = birthday
    if contact.get("emails") is not None:
        out["emails"] = _string_field_list(
            contact["emails"], f"{field}.emails", _EMAIL_KEYS, ("email",)
        )
    out["name"] = _string_fields(contact["name"], f"{field}.name", _NAME_KEYS, ("formatted_name",))
    if contact.get("org") is not None:
        out["org"] = _string_fields(contact["org"], f"{field}.org", _ORG_KEYS)
    out["phones"] = _string_field_list(
        contact["phones"], f"{field}.phones", _PHONE_KEYS, ("phone",), minimum=1
    )
    if contact.get("urls") is not None:
        out["urls"] = _string_field_list(contact["urls"], f"{field}.urls", _URL_KEYS, ("url",))
    return out


def build_contacts_message(
    *,
    to: str,
    contacts: Sequence[Mapping[str, Any]],
    reply_to_message_id: str | None = None,
) -> Payload:
    """Contact cards. Each contact needs ``name.formatted_name`` and at least one phone.

    Inputs use the platform's snake_case keys (``formatted_name``, ``wa_id``,
    ``country_code``); unknown keys are rejected.
    """
    addressee = _address(to)
    items = check_sequence(contacts, "contacts", minimum=1, maximum=MAX_CONTACTS)
    cards = [_contact(item, f"contacts[{index}]") for index, item in enumerate(items)]
    return _envelope(addressee, "contacts", cards, reply_to_message_id=reply_to_message_id)


# --- interactive -----------------------------------------------------------------------


def build_interactive_buttons_message(
    *,
    to: str,
    body_text: str,
    buttons: Sequence[Mapping[str, str]],
    header_text: str | None = None,
    footer_text: str | None = None,
    header: Mapping[str, Any] | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """Reply buttons: 1..3 ``{id, title}`` with unique ids and titles (title <= 20, id <= 256).

    The header is ``header_text`` or a media ``header`` (``{"type": "image" | "video" |
    "document", "id" | "link"}``), not both.
    """
    addressee = _address(to)
    items = check_sequence(buttons, "buttons", minimum=1, maximum=3)
    wire: list[Payload] = []
    ids: set[str] = set()
    titles: set[str] = set()
    for index, item in enumerate(items):
        field = f"buttons[{index}]"
        button = check_mapping(item, field, allowed=("id", "title"), required=("id", "title"))
        button_id = check_id(button["id"], f"{field}.id", max_length=MAX_BUTTON_ID)
        title = check_label(button["title"], f"{field}.title", max_length=MAX_BUTTON_TITLE)
        if button_id in ids or title in titles:
            raise GraphRequestValidationError(
                "button ids and titles must be unique", field=f"{field}.id"
            )
        ids.add(button_id)
        titles.add(title)
        wire.append({"type": "reply", "reply": {"id": button_id, "title": title}})
    interactive = _interactive(
        "button",
        action={"buttons": wire},
        body_text=body_text,
        header_text=header_text,
        footer_text=footer_text,
        header=header,
    )
    return _envelope(addressee, "interactive", interactive, reply_to_message_id=reply_to_message_id)


def build_interactive_list_message(
    *,
    to: str,
    body_text: str,
    button_text: str,
    sections: Sequence[Mapping[str, Any]],
    header_text: str | None = None,
    footer_text: str | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A list: 1..10 sections, 1..10 rows in total, unique row ids.

    A section title (<= 24) is required when there is more than one section.
    """
    addressee = _address(to)
    button = check_label(button_text, "button_text", max_length=MAX_LIST_BUTTON_TEXT)
    items = check_sequence(sections, "sections", minimum=1, maximum=MAX_LIST_SECTIONS)
    wire_sections: list[Payload] = []
    row_ids: set[str] = set()
    for index, item in enumerate(items):
        field = f"sections[{index}]"
        section = check_mapping(item, field, allowed=("title", "rows"), required=("rows",))
        wire_section: Payload = {}
        if section.get("title") is not None:
            wire_section["title"] = check_label(
                section["title"], f"{field}.title", max_length=MAX_SECTION_TITLE
            )
        elif len(items) > 1:
            raise GraphRequestValidationError(
                "every section needs a title when there are several", field=f"{field}.title"
            )
        rows = check_sequence(section["rows"], f"{field}.rows", minimum=1, maximum=MAX_LIST_ROWS)
        wire_rows: list[Payload] = []
        for row_index, row_item in enumerate(rows):
            row_field = f"{field}.rows[{row_index}]"
            row = check_mapping(
                row_item,
                row_field,
                allowed=("id", "title", "description"),
                required=("id", "title"),
            )
            row_id = check_id(row["id"], f"{row_field}.id", max_length=MAX_ROW_ID)
            if row_id in row_ids:
                raise GraphRequestValidationError(
                    "row ids must be unique across the list", field=f"{row_field}.id"
                )
            row_ids.add(row_id)
            wire_row: Payload = {
                "id": row_id,
                "title": check_label(row["title"], f"{row_field}.title", max_length=MAX_ROW_TITLE),
            }
            if row.get("description") is not None:
                wire_row["description"] = check_label(
                    row["description"], f"{row_field}.description", max_length=MAX_ROW_DESCRIPTION
                )
            wire_rows.append(wire_row)
        wire_section["rows"] = wire_rows
        wire_sections.append(wire_section)
    if len(row_ids) > MAX_LIST_ROWS:
        raise GraphRequestValidationError(
            f"a list holds at most {MAX_LIST_ROWS} rows in total", field="sections"
        )
    interactive = _interactive(
        "list",
        action={"button": button, "sections": wire_sections},
        body_text=body_text,
        header_text=header_text,
        footer_text=footer_text,
    )
    return _envelope(addressee, "interactive", interactive, reply_to_message_id=reply_to_message_id)


def build_interactive_cta_url_message(
    *,
    to: str,
    body_text: str,
    display_text: str,
    url: str,
    header_text: str | None = None,
    footer_text: str | None = None,
    header: Mapping[str, Any] | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A call-to-action URL button (``display_text`` <= 20, ``url`` http or https).

    The header is ``header_text`` or a media ``header``, as for reply buttons.
    """
    addressee = _address(to)
    parameters = {
        "display_text": check_label(display_text, "display_text", max_length=MAX_CTA_DISPLAY_TEXT),
        "url": check_link(url, "url"),
    }
    interactive = _interactive(
        "cta_url",
        action={"name": "cta_url", "parameters": parameters},
        body_text=body_text,
        header_text=header_text,
        footer_text=footer_text,
        header=header,
    )
    return _envelope(addressee, "interactive", interactive, reply_to_message_id=reply_to_message_id)


def build_interactive_product_message(
    *,
    to: str,
    catalog_id: str,
    product_retailer_id: str,
    body_text: str | None = None,
    footer_text: str | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A single-product message from a catalog."""
    addressee = _address(to)
    action = {
        "catalog_id": check_id(catalog_id, "catalog_id"),
        "product_retailer_id": check_id(product_retailer_id, "product_retailer_id"),
    }
    interactive = _interactive(
        "product",
        action=action,
        body_text=body_text,
        footer_text=footer_text,
        body_required=False,
    )
    return _envelope(addressee, "interactive", interactive, reply_to_message_id=reply_to_message_id)


def build_interactive_products_message(
    *,
    to: str,
    catalog_id: str,
    header_text: str,
    body_text: str,
    sections: Sequence[Mapping[str, Any]],
    footer_text: str | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A multi-product message: 1..10 titled sections of ``product_retailer_ids`` (<= 30 items)."""
    addressee = _address(to)
    catalog = check_id(catalog_id, "catalog_id")
    wire_sections = product_sections(sections, holder="multi-product message")
    interactive = _interactive(
        "product_list",
        action={"catalog_id": catalog, "sections": wire_sections},
        body_text=body_text,
        header_text=header_text,
        footer_text=footer_text,
    )
    return _envelope(addressee, "interactive", interactive, reply_to_message_id=reply_to_message_id)


def build_interactive_catalog_message(
    *,
    to: str,
    body_text: str,
    thumbnail_product_retailer_id: str | None = None,
    footer_text: str | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A catalog message, optionally naming the product shown as thumbnail."""
    addressee = _address(to)
    action: Payload = {"name": "catalog_message"}
    if thumbnail_product_retailer_id is not None:
        action["parameters"] = {
            "thumbnail_product_retailer_id": check_id(
                thumbnail_product_retailer_id, "thumbnail_product_retailer_id"
            )
        }
    interactive = _interactive(
        "catalog_message", action=action, body_text=body_text, footer_text=footer_text
    )
    return _envelope(addressee, "interactive", interactive, reply_to_message_id=reply_to_message_id)


def build_interactive_location_request_message(
    *, to: str, body_text: str, reply_to_message_id: str | None = None
) -> Payload:
    """Ask the user to share a location (``action.name = send_location``)."""
    addressee = _address(to)
    interactive = _interactive(
        "location_request_message", action={"name": "send_location"}, body_text=body_text
    )
    return _envelope(addressee, "interactive", interactive, reply_to_message_id=reply_to_message_id)


def build_call_permission_request_message(
    *,
    to: str,
    body_text: str,
    footer_text: str | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """Ask the user for permission to call (``call_permission_request``)."""
    addressee = _address(to)
    interactive = _interactive(
        "call_permission_request",
        action={"name": "call_permission_request"},
        body_text=body_text,
        footer_text=footer_text,
    )
    return _envelope(addressee, "interactive", interactive, reply_to_message_id=reply_to_message_id)


def build_voice_call_button_message(
    *,
    body_text: str,
    to: str | None = None,
    recipient: str | None = None,
    display_text: str | None = None,
    ttl_minutes: int | None = None,
    payload: str | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A WhatsApp call button (``voice_call``), addressed by ``to``, ``recipient`` or both.

    When both are given only ``to`` is sent. ``ttl_minutes`` is 1..43200,
    ``display_text`` <= 20, ``payload`` <= 512 characters.
    """
    routing = _routing(to, recipient)
    parameters: Payload = {}
    if display_text is not None:
        parameters["display_text"] = check_label(
            display_text, "display_text", max_length=MAX_CALL_DISPLAY_TEXT
        )
    if ttl_minutes is not None:
        parameters["ttl_minutes"] = check_int(
            ttl_minutes, "ttl_minutes", minimum=1, maximum=MAX_CALL_TTL_MINUTES
        )
    if payload is not None:
        parameters["payload"] = check_label(payload, "payload", max_length=MAX_CALL_PAYLOAD)
    action: Payload = {"name": "voice_call"}
    if parameters:
        action["parameters"] = parameters
    interactive = _interactive("voice_call", action=action, body_text=body_text)
    message: Payload = {"messaging_product": "whatsapp", "recipient_type": "individual"}
    message.update(routing)
    message["type"] = "interactive"
    message["interactive"] = interactive
    if reply_to_message_id is not None:
        message["context"] = {"message_id": check_reply_to(reply_to_message_id)}
    return message


# --- templates -------------------------------------------------------------------------

_OTP_TYPES = frozenset({"copy_code", "one_tap", "zero_tap"})
_OTP_KEYS = frozenset(
    {"type", "otp_type", "text", "autofill_text", "zero_tap_terms_accepted", "supported_apps"}
)


def build_otp_button(
    *,
    otp_type: str,
    text: str | None = None,
    autofill_text: str | None = None,
    zero_tap_terms_accepted: bool | None = None,
    supported_apps: Sequence[Mapping[str, str]] | None = None,
) -> Payload:
    """An authentication-template OTP button (``copy_code``, ``one_tap`` or ``zero_tap``).

    ``supported_apps`` is a list of ``{package_name, signature_hash}``; one-tap
    and zero-tap buttons need at least one.
    """
    kind = check_choice(
        otp_type.lower() if isinstance(otp_type, str) else otp_type, "otp_type", _OTP_TYPES
    )
    button: Payload = {"type": "otp", "otp_type": kind}
    if text is not None:
        button["text"] = check_label(text, "text", max_length=MAX_OTP_BUTTON_TEXT)
    if autofill_text is not None:
        button["autofill_text"] = check_label(
            autofill_text, "autofill_text", max_length=MAX_OTP_BUTTON_TEXT
        )
    if zero_tap_terms_accepted is not None:
        button["zero_tap_terms_accepted"] = check_bool(
            zero_tap_terms_accepted, "zero_tap_terms_accepted"
        )
    if supported_apps is not None:
        apps = check_sequence(
            supported_apps, "supported_apps", minimum=1, maximum=MAX_SUPPORTED_APPS
        )
        button["supported_apps"] = [
            _supported_app(item, f"supported_apps[{index}]") for index, item in enumerate(apps)
        ]
    elif kind != "copy_code":
        raise GraphRequestValidationError(
            f"a {kind} OTP button needs supported_apps", field="supported_apps"
        )
    return button


def _supported_app(value: object, field: str) -> dict[str, str]:
    app = check_mapping(
        value,
        field,
        allowed=("package_name", "signature_hash"),
        required=("package_name", "signature_hash"),
    )
    return {
        "package_name": check_label(
            app["package_name"], f"{field}.package_name", max_length=MAX_PACKAGE_NAME
        ),
        "signature_hash": check_label(
            app["signature_hash"], f"{field}.signature_hash", max_length=MAX_SIGNATURE_HASH
        ),
    }


def _check_otp_button(value: Mapping[str, Any], field: str) -> Payload:
    """Validate an OTP button given in the platform structure; the flat form is rejected."""
    if "package_name" in value or "signature_hash" in value:
        raise GraphRequestValidationError(
            "OTP buttons take supported_apps=[{package_name, signature_hash}], "
            "not a flat package_name/signature_hash",
            field=f"{field}.package_name",
        )
    button = check_mapping(value, field, allowed=_OTP_KEYS, required=("otp_type",))
    return build_otp_button(
        otp_type=button["otp_type"],
        text=button.get("text"),
        autofill_text=button.get("autofill_text"),
        zero_tap_terms_accepted=button.get("zero_tap_terms_accepted"),
        supported_apps=button.get("supported_apps"),
    )


def _components(value: object) -> list[Payload]:
    """Template components in the platform structure; OTP buttons are checked and normalized."""
    items = check_sequence(value, "components", maximum=MAX_TEMPLATE_COMPONENTS)
    out: list[Payload] = []
    for index, item in enumerate(items):
        field = f"components[{index}]"
        if not isinstance(item, Mapping) or not all(isinstance(key, str) for key in item):
            raise GraphRequestValidationError(f"{field} must be an object", field=field)
        component_type = item.get("type")
        if not isinstance(component_type, str) or not component_type:
            raise GraphRequestValidationError(f"{field}.type is required", field=f"{field}.type")
        component: Payload = dict(item)
        buttons = item.get("buttons")
        if buttons is not None:
            checked = check_sequence(buttons, f"{field}.buttons", maximum=10)
            component["buttons"] = [
                _button_in_component(button, f"{field}.buttons[{b}]")
                for b, button in enumerate(checked)
            ]
        out.append(component)
    return out


def _button_in_component(value: object, field: str) -> Any:
    if not isinstance(value, Mapping):
        raise GraphRequestValidationError(f"{field} must be an object", field=field)
    button_type = value.get("type")
    if isinstance(button_type, str) and button_type.lower() == "otp":
        return _check_otp_button(value, field)
    return dict(value)


def _has_otp_button(template: Mapping[str, Any]) -> bool:
    """Whether checked template components carry an OTP (authentication) button."""
    components = template.get("components")
    for component in components if isinstance(components, list) else ():
        buttons = component.get("buttons") if isinstance(component, Mapping) else None
        for button in buttons if isinstance(buttons, list) else ():
            if isinstance(button, Mapping) and str(button.get("type", "")).lower() == "otp":
                return True
    return False


_LANGUAGE_POLICIES = frozenset({"deterministic"})


def _template_object(
    name: object, language_code: object, components: object, language_policy: object = None
) -> Payload:
    if (
        not isinstance(name, str)
        or len(name) > MAX_TEMPLATE_NAME
        or not _TEMPLATE_NAME.fullmatch(name)
    ):
        raise GraphRequestValidationError(
            "name must be a template name: lowercase letters, digits and underscores",
            field="name",
        )
    if not isinstance(language_code, str) or not _LANGUAGE_CODE.fullmatch(language_code):
        raise GraphRequestValidationError(
            "language_code must look like en or en_US", field="language_code"
        )
    language: Payload = {"code": language_code}
    if language_policy is not None:
        language["policy"] = check_choice(language_policy, "language_policy", _LANGUAGE_POLICIES)
    template: Payload = {"name": name, "language": language}
    if components is not None:
        template["components"] = _components(components)
    return template


def build_template_message(
    *,
    to: str,
    name: str,
    language_code: str,
    components: Sequence[Mapping[str, Any]] | None = None,
    reply_to_message_id: str | None = None,
    language_policy: Literal["deterministic"] | None = None,
) -> Payload:
    """A template message; ``components`` use the platform's structure.

    ``language_policy`` (``deterministic``, the one policy the platform keeps)
    is sent as ``language.policy`` when given.
    """
    addressee = _address(to)
    template = _template_object(name, language_code, components, language_policy)
    if _has_otp_button(template):
        require_phone_number(addressee, rule=AUTHENTICATION_OTP_RULE)
    return _envelope(addressee, "template", template, reply_to_message_id=reply_to_message_id)


_PRODUCT_POLICIES = frozenset({"CLOUD_API_FALLBACK", "STRICT"})


def build_marketing_template_message(
    *,
    name: str,
    language_code: str,
    to: str | None = None,
    recipient: str | None = None,
    components: Sequence[Mapping[str, Any]] | None = None,
    product_policy: str | None = None,
    message_activity_sharing: bool | None = None,
) -> Payload:
    """A marketing template for ``/marketing_messages``, addressed by ``to`` or ``recipient``.

    ``to`` wins when both are given. ``product_policy`` is ``CLOUD_API_FALLBACK``
    or ``STRICT``; ``message_activity_sharing`` is a bool.
    """
    routing = _routing(to, recipient)
    template = _template_object(name, language_code, components)
    message: Payload = {"messaging_product": "whatsapp", "recipient_type": "individual"}
    message.update(routing)
    message["type"] = "template"
    message["template"] = template
    if product_policy is not None:
        message["product_policy"] = check_choice(
            product_policy, "product_policy", _PRODUCT_POLICIES
        )
    if message_activity_sharing is not None:
        message["message_activity_sharing"] = check_bool(
            message_activity_sharing, "message_activity_sharing"
        )
    return message


# --- groups ----------------------------------------------------------------------------

_GROUP_TEMPLATE_CATEGORIES = frozenset({"UTILITY", "MARKETING"})
_PIN_TYPES = frozenset({"pin", "unpin"})


def build_group_text_message(
    *,
    to: str,
    text: str,
    preview_url: bool | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A text message to a group (``to`` is the group id)."""
    return _text({"to": check_group_id(to)}, text, preview_url, reply_to_message_id, "group")


def build_group_media_message(
    kind: MediaKind,
    *,
    to: str,
    media_id: str | None = None,
    link: str | None = None,
    caption: str | None = None,
    filename: str | None = None,
    voice: bool | None = None,
    reply_to_message_id: str | None = None,
) -> Payload:
    """A media message to a group, with the rules of ``build_media_message``."""
    group = check_group_id(to)
    name, media = _media_object(
        kind, media_id=media_id, link=link, caption=caption, filename=filename, voice=voice
    )
    return _envelope(
        {"to": group}, name, media, reply_to_message_id=reply_to_message_id, recipient_type="group"
    )


def build_group_template_message(
    *,
    to: str,
    name: str,
    language_code: str,
    template_category: str,
    components: Sequence[Mapping[str, Any]] | None = None,
) -> Payload:
    """A standard template to a group: ``template_category`` must be UTILITY or MARKETING.

    The category is a local gate (authentication templates cannot go to
    groups); it is not part of the wire payload.
    """
    group = check_group_id(to)
    check_choice(template_category, "template_category", _GROUP_TEMPLATE_CATEGORIES)
    template = _template_object(name, language_code, components)
    return _envelope({"to": group}, "template", template, recipient_type="group")


def build_group_pin_message(
    *,
    to: str,
    pin_type: Literal["pin", "unpin"],
    message_id: str,
    expiration_days: int | None = None,
) -> Payload:
    """Pin (``expiration_days`` 1..30 required) or unpin (no expiration) a group message."""
    group = check_group_id(to)
    kind = check_choice(pin_type, "pin_type", _PIN_TYPES)
    pin: Payload = {"type": kind, "message_id": check_id(message_id, "message_id")}
    if kind == "pin":
        if expiration_days is None:
            raise GraphRequestValidationError(
                "expiration_days (1..30) is required to pin", field="expiration_days"
            )
        pin["expiration_days"] = check_int(
            expiration_days, "expiration_days", minimum=1, maximum=MAX_EXPIRATION_DAYS
        )
    elif expiration_days is not None:
        raise GraphRequestValidationError(
            "expiration_days is only for pin, not unpin", field="expiration_days"
        )
    return _envelope({"to": group}, "pin", pin, recipient_type="group")


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
    ``build_group_template_message``, which checks the template category). A
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
            address = _address(message.pop("to"))
            message.pop("recipient", None)
        elif message.get("recipient") is not None:
            address = {"recipient": message.pop("recipient")}
        else:
            raise GraphRequestValidationError("to or recipient is required", field="to")
        message = {**{k: message.pop(k) for k in _HEAD if k in message}, **address, **message}
        if message_type == "template" and _has_otp_button(_template_part(message)):
            require_phone_number(address, rule=AUTHENTICATION_OTP_RULE)
    else:
        raise GraphRequestValidationError(
            "recipient_type must be individual or group", field="recipient_type"
        )
    return message


def product_sections(sections: Sequence[Mapping[str, Any]], *, holder: str) -> list[Payload]:
    """Titled sections of ``product_retailer_ids`` as the wire's ``product_items``.

    The platform's one rule for multi-product messages and multi-product template
    buttons: 1..10 sections, a title each, 1..30 products in all. ``holder`` names
    the message or button in the refusal.
    """
    items = check_sequence(sections, "sections", minimum=1, maximum=MAX_PRODUCT_SECTIONS)
    wire_sections: list[Payload] = []
    total = 0
    for index, item in enumerate(items):
        field = f"sections[{index}]"
        section = check_mapping(
            item,
            field,
            allowed=("title", "product_retailer_ids"),
            required=("title", "product_retailer_ids"),
        )
        ids = check_sequence(
            section["product_retailer_ids"],
            f"{field}.product_retailer_ids",
            minimum=1,
            maximum=MAX_PRODUCT_ITEMS,
        )
        total += len(ids)
        wire_sections.append(
            {
                "title": check_label(
                    section["title"], f"{field}.title", max_length=MAX_SECTION_TITLE
                ),
                "product_items": [
                    {
                        "product_retailer_id": check_id(
                            product, f"{field}.product_retailer_ids[{product_index}]"
                        )
                    }
                    for product_index, product in enumerate(ids)
                ],
            }
        )
    if total > MAX_PRODUCT_ITEMS:
        raise GraphRequestValidationError(
            f"a {holder} holds at most {MAX_PRODUCT_ITEMS} products",
            field="sections",
        )
    return wire_sections
