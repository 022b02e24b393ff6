"""Who a one-to-one send goes to: a phone number (``to``) or a business-scoped user id.

The platform addresses a user by phone number / wa_id in ``to``, or by a
business-scoped user id (BSUID, ``US.13491208655302741918``) or parent BSUID
(``US.ENT.11815799212886844830``) in ``recipient``. The three forms are
disjoint (a phone number has no letters or dots), so one value names one
field; every typed send resolves its addressee here and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from ._errors import GraphRequestValidationError, PhoneOnlyRecipientError

__all__ = [
    "AUTHENTICATION_OTP_RULE",
    "MAX_BSUID_SUFFIX_LENGTH",
    "USER_ID_FIELD",
    "Recipient",
    "RecipientField",
    "RecipientKind",
    "check_user",
    "is_bsuid",
    "is_parent_bsuid",
    "is_phone_number",
    "is_user_id",
    "require_phone_number",
    "resolve_recipient",
    "user_entry",
]

RecipientField = Literal["to", "recipient"]

USER_ID_FIELD: Final = "recipient"
"""The field a (parent) BSUID goes in, for sends and for every user list that takes one."""
RecipientKind = Literal["phone", "bsuid", "parent_bsuid"]

MAX_BSUID_SUFFIX_LENGTH: Final = 128
"""A BSUID is an ISO 3166 alpha-2 country code, a dot and up to 128 alphanumerics."""

_PHONE: Final = re.compile(r"\+?[0-9]{1,15}")
_BSUID: Final = re.compile(rf"[A-Z]{{2}}\.[A-Za-z0-9]{{1,{MAX_BSUID_SUFFIX_LENGTH}}}")
_PARENT_BSUID: Final = re.compile(rf"[A-Z]{{2}}\.ENT\.[A-Za-z0-9]{{1,{MAX_BSUID_SUFFIX_LENGTH}}}")


def is_phone_number(value: object) -> bool:
    """Whether ``value`` is a phone number / wa_id: digits, optional leading ``+``, <= 15 digits."""
    return isinstance(value, str) and _PHONE.fullmatch(value) is not None


def is_bsuid(value: object) -> bool:
    """Whether ``value`` is a business-scoped user id (``US.13491208655302741918``).

    A parent BSUID is not a BSUID here: see ``is_parent_bsuid``.
    """
    return isinstance(value, str) and _BSUID.fullmatch(value) is not None


def is_parent_bsuid(value: object) -> bool:
    """Whether ``value`` is a parent BSUID (``US.ENT.11815799212886844830``)."""
    return isinstance(value, str) and _PARENT_BSUID.fullmatch(value) is not None


def is_user_id(value: object) -> bool:
    """Whether ``value`` is a BSUID or a parent BSUID (what the ``recipient`` field takes)."""
    return is_bsuid(value) or is_parent_bsuid(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class Recipient:
    """A resolved addressee: the wire ``field`` it goes in, its ``value`` and its ``kind``."""

    field: RecipientField
    value: str
    kind: RecipientKind

    @classmethod
    def parse(cls, value: object, *, field: str = "to") -> Recipient:
        """Resolve ``value``; anything but a phone number, BSUID or parent BSUID is refused.

        ``field`` only names the argument in the ``GraphRequestValidationError``.
        """
        if is_phone_number(value):
            assert isinstance(value, str)
            return cls(field="to", value=value, kind="phone")
        if is_parent_bsuid(value):
            assert isinstance(value, str)
            return cls(field=USER_ID_FIELD, value=value, kind="parent_bsuid")
        if is_bsuid(value):
            assert isinstance(value, str)
            return cls(field=USER_ID_FIELD, value=value, kind="bsuid")
        raise GraphRequestValidationError(
            f"{field}: must be a phone number (digits with an optional leading '+', at most "
            "15 digits) or a business-scoped user id (CC.alphanumerics or CC.ENT.alphanumerics)",
            field=field,
        )

    @property
    def is_user_id(self) -> bool:
        """Whether this addressee is a BSUID or parent BSUID (no phone number)."""
        return self.kind != "phone"

    def wire(self) -> dict[str, str]:
        """The addressing part of a send body: ``{"to": ...}`` or ``{"recipient": ...}``."""
        return {self.field: self.value}


def check_user(value: object, *, field: str = "to") -> str:
    """A phone number / wa_id, BSUID or parent BSUID, returned unchanged; anything else refused."""
    return Recipient.parse(value, field=field).value


def user_entry(value: str, *, phone_key: str) -> dict[str, str]:
    """One user of a user list: ``{phone_key: phone}`` or ``{"recipient": bsuid}``.

    Block users name a phone in ``user``, group participants in ``wa_id``; a
    (parent) BSUID goes in ``recipient`` in both.
    """
    recipient = Recipient.parse(value)
    return {phone_key if recipient.field == "to" else recipient.field: recipient.value}


def resolve_recipient(value: object, *, field: str = "to") -> tuple[RecipientField, str]:
    """``("to", phone)`` for a phone number / wa_id, ``("recipient", id)`` for a (parent) BSUID.

    Anything else raises ``GraphRequestValidationError`` naming ``field``.
    """
    recipient = Recipient.parse(value, field=field)
    return recipient.field, recipient.value


AUTHENTICATION_OTP_RULE: Final = (
    "authentication templates with a one-tap, zero-tap or copy-code button "
    "are delivered to phone numbers only"
)
"""The platform's phone-only rule for OTP authentication templates (its answer is 131062)."""


def require_phone_number(address: Mapping[str, str], *, rule: str, field: str = "to") -> None:
    """Raise ``PhoneOnlyRecipientError`` naming ``rule`` unless ``address`` uses ``to``."""
    if "to" not in address:
        raise PhoneOnlyRecipientError(
            f"{field}: {rule}; send to a phone number", rule=rule, field=field
        )
