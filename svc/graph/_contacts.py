"""Contact-card messages: the declaration and the checks of each card's snake_case fields."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ._envelope import Payload, address, envelope
from ._errors import GraphRequestValidationError
from ._message import Message, builder
from ._validate import ISO_DATE, check_label, check_mapping, check_match, check_sequence

__all__ = ["ContactsMessage", "build_contacts_message"]

MAX_CONTACTS: Final = 100
MAX_CONTACT_ITEMS: Final = 20
MAX_CONTACT_FIELD: Final = 1024
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
        out["birthday"] = check_match(
            contact["birthday"], ISO_DATE,
            f"{field}.birthday", f"{field}.birthday must be YYYY-MM-DD",
        )
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


@dataclass(frozen=True, slots=True, kw_only=True)
class ContactsMessage(Message):
    """Contact cards. Each contact needs ``name.formatted_name`` and at least one phone.

    Inputs use the platform's snake_case keys (``formatted_name``, ``wa_id``,
    ``country_code``); unknown keys are rejected.
    """

    to: str
    contacts: Sequence[Mapping[str, Any]]
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        items = check_sequence(self.contacts, "contacts", minimum=1, maximum=MAX_CONTACTS)
        cards = [_contact(item, f"contacts[{index}]") for index, item in enumerate(items)]
        return envelope(addressee, "contacts", cards, reply_to_message_id=self.reply_to_message_id)


build_contacts_message = builder(ContactsMessage)
