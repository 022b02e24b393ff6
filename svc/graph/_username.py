"""Business usernames: the optional @name a WhatsApp user sees for a business phone number."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from ._admin_checks import PhoneScoped, check_choice
from ._endpoint import route
from ._errors import GraphRequestValidationError
from ._parse import ApiRecord, Raw, as_object, object_list, str_tuple
from ._results import Success

__all__ = [
    "USERNAME_TRANSFER_ACTIONS",
    "BusinessUsername",
    "BusinessUsernames",
    "UsernameSuggestions",
    "check_username",
]

USERNAME_TRANSFER_ACTIONS: Final = ("none", "force_transfer")
"""``force_transfer`` moves a username held by another number of the same portfolio."""
USERNAME_LENGTH: Final = range(3, 36)
_USERNAME = re.compile(r"[A-Za-z0-9._]+")
_DOMAIN_SUFFIXES: Final = (".com", ".org", ".net", ".edu", ".gov", ".mil", ".us", ".in", ".html")

GET_USERNAME = route("GET", "/{phone_number_id}/username")
SET_USERNAME = route("POST", "/{phone_number_id}/username")
DELETE_USERNAME = route("DELETE", "/{phone_number_id}/username")
USERNAME_SUGGESTIONS = route("GET", "/{phone_number_id}/username_suggestions")


@dataclass(frozen=True, slots=True, kw_only=True)
class BusinessUsername(ApiRecord):
    """A number's username and its ``status`` (``reserved`` until live, then ``approved``).

    ``username`` is ``None`` when the number has none (the platform leaves it out).
    """

    _what = "business username"

    username: str | None
    status: str | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class UsernameSuggestions:
    """``GET /{phone_number_id}/username_suggestions``: names reserved for the business."""

    suggestions: tuple[str, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> UsernameSuggestions:
        obj = as_object(raw, what="username suggestions")
        return cls(
            suggestions=tuple(
                name
                for item in object_list(obj.get("data"))
                for name in str_tuple(item.get("username_suggestions"))
            ),
            raw=obj,
        )


def check_username(value: object) -> str:
    """A username the platform accepts, or ``GraphRequestValidationError``.

    3..35 letters, digits, ``.`` and ``_`` with at least one letter; no leading,
    trailing or doubled ``.``; not starting ``www``; not ending in a domain suffix.
    """
    rule = (
        "username must be 3..35 letters, digits, '.' or '_' with a letter, no leading, "
        "trailing or doubled '.', not starting with www or ending in a domain suffix"
    )
    if (
        not isinstance(value, str)
        or len(value) not in USERNAME_LENGTH
        or not _USERNAME.fullmatch(value)
        or not any(ch.isalpha() for ch in value)
        or value.startswith(".")
        or value.endswith(".")
        or ".." in value
        or value.lower().startswith("www")
        or value.lower().endswith(_DOMAIN_SUFFIXES)
    ):
        raise GraphRequestValidationError(rule, field="username")
    return value


class BusinessUsernames(PhoneScoped):
    """The username of one business phone number (``PhoneNumberClient``)."""

    async def get_username(self) -> BusinessUsername:
        """``GET /{phone_number_id}/username``."""
        return BusinessUsername.from_api(await self._on_scope(GET_USERNAME))

    async def set_username(
        self, *, username: str, transfer_action: str | None = None
    ) -> BusinessUsername:
        """``POST /{phone_number_id}/username``: claim or change the number's username."""
        body = {"username": check_username(username)}
        if transfer_action is not None:
            body["transfer_action"] = check_choice(
                transfer_action, field="transfer_action", choices=USERNAME_TRANSFER_ACTIONS
            )
        return BusinessUsername.from_api(await self._on_scope(SET_USERNAME, body=body))

    async def delete_username(self) -> Success:
        """``DELETE /{phone_number_id}/username``."""
        return Success.from_api(await self._on_scope(DELETE_USERNAME))

    async def list_username_suggestions(self) -> UsernameSuggestions:
        """``GET /{phone_number_id}/username_suggestions``."""
        return UsernameSuggestions.from_api(await self._on_scope(USERNAME_SUGGESTIONS))
