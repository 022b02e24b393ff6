"""Field validators for message helpers: every rule runs before the transport is touched.

Each check returns the accepted value (unchanged) or raises
``GraphRequestValidationError`` naming the offending field. "Control
characters" are the Unicode ``Cc`` range: U+0000..U+001F and U+007F..U+009F.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

import httpx

from svc._text import has_control, has_text_control

from ._errors import GraphRequestValidationError
from ._recipient import is_phone_number, is_user_id

__all__ = [
    "CURRENCY_CODE",
    "ISO_DATE",
    "MAX_CAPTION_LENGTH",
    "MAX_FILENAME_LENGTH",
    "MAX_GROUP_ID_LENGTH",
    "MAX_LINK_LENGTH",
    "MAX_MEDIA_ID_LENGTH",
    "MAX_MESSAGE_ID_LENGTH",
    "MAX_TEXT_LENGTH",
    "PARAMETER_NAME",
    "PLACEHOLDER",
    "TEMPLATE_LANGUAGE",
    "TEMPLATE_NAME",
    "check_bool",
    "check_caption",
    "check_choice",
    "check_filename",
    "check_group_id",
    "check_id",
    "check_int",
    "check_label",
    "check_latitude",
    "check_link",
    "check_longitude",
    "check_mapping",
    "check_match",
    "check_media_id",
    "check_media_source",
    "check_phone_to",
    "check_recipient",
    "check_reply_to",
    "check_sequence",
    "check_text",
    "checked_objects",
    "opt_mapping",
]

MAX_TEXT_LENGTH = 4096
MAX_MESSAGE_ID_LENGTH = 256
MAX_MEDIA_ID_LENGTH = 2048
MAX_LINK_LENGTH = 2048
MAX_CAPTION_LENGTH = 1024
MAX_FILENAME_LENGTH = 256
MAX_GROUP_ID_LENGTH = 256

_GROUP_ID_FORBIDDEN = re.compile(r"[\s/\\?#%]")

CURRENCY_CODE = re.compile(r"[A-Z]{3}")
"""An ISO 4217 currency code as the platform takes it: three capital letters."""
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_]+)\s*\}\}")
"""A template text's ``{{1}}`` or ``{{name}}`` placeholder (the group is the number or name)."""
PARAMETER_NAME = re.compile(r"[a-z_][a-z0-9_]*")
"""A named template parameter: lower-case letters, digits and ``_``, not starting with a digit."""
TEMPLATE_NAME = re.compile(r"[a-z0-9_]{1,512}")
"""A template's name: 1..512 lower-case letters, digits and underscores."""
TEMPLATE_LANGUAGE = re.compile(r"[a-z]{2,3}(?:_[A-Za-z]{2,4})?")
"""A template's language as the platform writes it, on creation and on sends: ``en``, ``en_US``."""
ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
"""A calendar date as the platform writes it: ``YYYY-MM-DD``."""


def _fail(message: str, field: str) -> GraphRequestValidationError:
    return GraphRequestValidationError(f"{field}: {message}", field=field)


def check_phone_to(value: object, field: str = "to") -> str:
    """A recipient phone number: digits with an optional leading ``+``, at most 15 digits."""
    if not isinstance(value, str) or not is_phone_number(value):
        raise _fail("must be digits with an optional leading '+', at most 15 digits", field)
    return value


def check_group_id(value: object, field: str = "to") -> str:
    """An opaque group id: a safe, non-empty segment of at most 256 characters."""
    if not isinstance(value, str) or not value:
        raise _fail("must be a non-empty group id", field)
    if len(value) > MAX_GROUP_ID_LENGTH:
        raise _fail(f"must be at most {MAX_GROUP_ID_LENGTH} characters", field)
    if has_control(value) or _GROUP_ID_FORBIDDEN.search(value) or value in (".", ".."):
        raise _fail("must hold no control characters, whitespace, '/', '\\', '?', '#', '%'", field)
    return value


def check_recipient(value: object, field: str = "recipient") -> str:
    """A business-scoped user id (BSUID) or parent BSUID, sent as ``recipient`` instead of ``to``.

    The format rules live in ``_recipient`` (``is_bsuid``, ``is_parent_bsuid``).
    """
    if not isinstance(value, str) or not is_user_id(value):
        raise _fail(
            "must be a business-scoped user id: a two-letter country code, '.', and up to 128 "
            "letters and digits (a parent id has '.ENT.' after the country code)",
            field,
        )
    return value


def _check_bounded(value: object, field: str, max_length: int) -> str:
    """A string that is not blank and holds at most ``max_length`` characters."""
    if not isinstance(value, str) or not value.strip():
        raise _fail("must be a non-empty string", field)
    if len(value) > max_length:
        raise _fail(f"must be at most {max_length} characters", field)
    return value


def check_text(value: object, field: str = "text", *, max_length: int = MAX_TEXT_LENGTH) -> str:
    """Message text: non-empty, bounded; newline and tab allowed, other control characters not."""
    text = _check_bounded(value, field, max_length)
    if has_text_control(text):
        raise _fail("must hold no control characters other than newline and tab", field)
    return text


def check_label(value: object, field: str, *, max_length: int) -> str:
    """A single-line label (titles, ids shown to users): non-empty, bounded, no control chars."""
    label = _check_bounded(value, field, max_length)
    if has_control(label):
        raise _fail("must hold no control characters", field)
    return label


def check_id(value: object, field: str, *, max_length: int = MAX_MESSAGE_ID_LENGTH) -> str:
    """An opaque identifier: non-empty, not blank, bounded, no control characters."""
    return check_label(value, field, max_length=max_length)


def check_reply_to(value: object, field: str = "reply_to_message_id") -> str:
    """The message a send replies to (``context.message_id``)."""
    return check_id(value, field, max_length=MAX_MESSAGE_ID_LENGTH)


def check_media_id(value: object, field: str = "media_id") -> str:
    """An uploaded media id: non-empty, at most 2048 characters, no control characters."""
    return check_id(value, field, max_length=MAX_MEDIA_ID_LENGTH)


def check_media_source(media_id: object, link: object) -> dict[str, str]:
    """``{"id": media_id}`` or ``{"link": link}``: exactly one of an uploaded media id or a URL."""
    if (media_id is None) == (link is None):
        raise GraphRequestValidationError(
            "exactly one of media_id or link is required", field="media_id"
        )
    return {"id": check_media_id(media_id)} if media_id is not None else {"link": check_link(link)}


def check_link(value: object, field: str = "link") -> str:
    """An absolute http or https URL of at most 2048 characters."""
    if not isinstance(value, str) or not value:
        raise _fail("must be a non-empty http or https URL", field)
    if len(value) > MAX_LINK_LENGTH:
        raise _fail(f"must be at most {MAX_LINK_LENGTH} characters", field)
    if has_control(value) or any(ch.isspace() for ch in value):
        raise _fail("must hold no whitespace or control characters", field)
    try:
        url = httpx.URL(value)
    except (httpx.InvalidURL, ValueError):
        raise _fail("must be a valid http or https URL", field) from None
    # raw_host, never .host: decoding a malformed "xn--" label raises idna's own error.
    if url.scheme not in ("http", "https") or not url.raw_host:
        raise _fail("must be an http or https URL with a host", field)
    return value


def check_caption(value: object, field: str = "caption") -> str:
    """A media caption: non-empty, at most 1024 characters (newline and tab allowed)."""
    return check_text(value, field, max_length=MAX_CAPTION_LENGTH)


def check_filename(value: object, field: str = "filename") -> str:
    """A document file name: non-empty, at most 256 characters, no control characters."""
    return check_label(value, field, max_length=MAX_FILENAME_LENGTH)


def check_bool(value: object, field: str) -> bool:
    """A real ``bool``; ``1``, ``"true"`` and other truthy stand-ins are rejected."""
    if not isinstance(value, bool):
        raise _fail("must be a boolean (true or false)", field)
    return value


def check_int(value: object, field: str, *, minimum: int, maximum: int) -> int:
    """An ``int`` (never a ``bool``) within ``minimum..maximum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail("must be an integer", field)
    if not minimum <= value <= maximum:
        raise _fail(f"must be between {minimum} and {maximum}", field)
    return value


def _check_coordinate(value: object, field: str, limit: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail("must be a number", field)
    number = float(value)
    if not math.isfinite(number) or not -limit <= number <= limit:
        raise _fail(f"must be a finite number between {-limit:g} and {limit:g}", field)
    return number


def check_latitude(value: object, field: str = "latitude") -> float:
    """A finite latitude in -90..90."""
    return _check_coordinate(value, field, 90.0)


def check_longitude(value: object, field: str = "longitude") -> float:
    """A finite longitude in -180..180."""
    return _check_coordinate(value, field, 180.0)


def check_choice(value: object, field: str, choices: Collection[str]) -> str:
    """One of a fixed set of strings."""
    if not isinstance(value, str) or value not in choices:
        raise _fail(f"must be one of {', '.join(sorted(choices))}", field)
    return value


def check_match(value: object, pattern: re.Pattern[str], field: str, message: str) -> str:
    """A string that ``pattern`` matches whole, else the refusal ``message`` naming ``field``.

    The one step behind each format rule (codes, ids, times, names); the caller states the rule.
    """
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise GraphRequestValidationError(message, field=field)
    return value


def opt_mapping(value: object, field: str) -> Mapping[Any, Any]:
    """An optional mapping argument: ``None`` reads as empty; anything else must be a mapping."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise GraphRequestValidationError(f"{field} must be a mapping", field=field)
    return value


def check_mapping(
    value: object,
    field: str,
    *,
    allowed: Collection[str],
    required: Collection[str] = (),
) -> Mapping[str, Any]:
    """A mapping whose keys are all in ``allowed`` and which holds every ``required`` key."""
    if not isinstance(value, Mapping):
        raise _fail("must be an object", field)
    for key in value:
        if not isinstance(key, str) or key not in allowed:
            raise GraphRequestValidationError(
                f"{field}: unknown field {key!r}", field=f"{field}.{key}"
            )
    for key in required:
        if value.get(key) is None:
            raise GraphRequestValidationError(
                f"{field}: missing required field {key!r}", field=f"{field}.{key}"
            )
    return value


def checked_objects(
    items: Sequence[Any], field: str, *, allowed: Collection[str], required: Collection[str] = ()
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each item of a list of objects as ``("<field>[i]", item)``, ``check_mapping``-ed in turn.

    Lazy: an item is checked when the loop reaches it, so refusals come in the list's order.
    """
    for index, item in enumerate(items):
        where = f"{field}[{index}]"
        yield where, check_mapping(item, where, allowed=allowed, required=required)


def check_sequence(value: object, field: str, *, minimum: int = 0, maximum: int) -> Sequence[Any]:
    """A list or tuple (never a string or mapping) holding ``minimum..maximum`` items."""
    if not isinstance(value, list | tuple):
        raise _fail("must be a list", field)
    if not minimum <= len(value) <= maximum:
        raise _fail(f"must hold between {minimum} and {maximum} items", field)
    return value
