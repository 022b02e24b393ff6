"""Input checks shared by both adapters; they run before any I/O."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Final, cast

from svc._text import has_ascii_control, has_surrogate, is_printable_label

from ._errors import PersistenceValidationError, ValidationCode
from ._records import MessageRecord, StatusEvent, UserIdentityRecord
from ._time import EARLIEST_MS, LATEST_MS, to_ms

KEY_MAX: Final = 256
PHONE_MAX: Final = 64
USER_ID_MAX: Final = 160
"""A BSUID is a country code, a dot and up to 128 alphanumerics; a parent adds ``ENT.``."""
USERNAME_MAX: Final = 128
DIRECTIONS: Final = ("inbound", "outbound")
"""A tuple: ``in`` compares, so a value of any type (a list too) is simply not one."""


def fit(value: object, max_len: int = KEY_MAX) -> str | None:
    """``value`` when the store takes it as text (see :func:`text`), else None.

    The storable-text rule in dropping form: the projection leaves out a field
    that fails it where :func:`text` refuses the record.
    """
    # The common case in C: a printable, non-blank string holds no control character.
    if type(value) is str and len(value) <= max_len and is_printable_label(value):
        return value
    if (
        not isinstance(value, str)
        or len(value) > max_len
        or not value.strip()
        or has_ascii_control(value)
        or has_surrogate(value)
    ):
        return None
    return value


def text(value: object, field: str, *, max_len: int = KEY_MAX) -> str:
    """A non-blank string of at most ``max_len`` characters without control characters, and
    text UTF-8 can carry (no lone surrogate: the drivers would raise on it)."""
    checked = fit(value, max_len)
    if checked is not None:
        return checked
    if not isinstance(value, str) or not value.strip():
        raise PersistenceValidationError("invalid_record", f"{field} must be a non-empty string.")
    if len(value) > max_len:
        raise PersistenceValidationError(
            "invalid_record", f"{field} must be at most {max_len} characters."
        )
    if has_surrogate(value):
        raise PersistenceValidationError(
            "invalid_record", f"{field} must not contain lone surrogates."
        )
    raise PersistenceValidationError(
        "invalid_record", f"{field} must not contain control characters."
    )


def optional_text(value: object, field: str, *, max_len: int = KEY_MAX) -> str | None:
    """Like :func:`text`, but ``None`` passes."""
    return None if value is None else text(value, field, max_len=max_len)


def integer(
    value: object, field: str, *, low: int, high: int, code: ValidationCode = "invalid_options"
) -> int:
    """An ``int`` (not a bool) in ``low..high``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise PersistenceValidationError(code, f"{field} must be an integer in {low}..{high}.")
    return value


MAX_BATCH: Final = 100_000
"""The most rows one transaction of a batched delete takes (retention, old dead letters,
expired states)."""


def batch_size(value: object) -> int:
    """A batched delete's ``batch_size``: rows per transaction, in ``1..MAX_BATCH``."""
    return integer(value, "batch_size", low=1, high=MAX_BATCH)


def option_int(value: object, field: str) -> int:
    """An option that must be an ``int`` (not a bool); its range is the caller's rule."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise PersistenceValidationError("invalid_options", f"{field} must be an integer.")
    return value


def option_seconds(value: object, field: str) -> float:
    """An option in seconds: an ``int`` or ``float`` (not a bool); its range is the caller's."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PersistenceValidationError(
            "invalid_options", f"{field} must be a number of seconds."
        )
    return value


def interval(value: object) -> float:
    """A worker loop's ``interval``: seconds in (0, 86400]."""
    seconds = option_seconds(value, "interval")
    if not 0 < seconds <= 86_400:
        raise PersistenceValidationError(
            "invalid_options", "interval must be in (0, 86400] seconds."
        )
    return seconds


def status(value: object, statuses: type[enum.StrEnum], queue: str) -> str:
    """``value`` as one of ``statuses`` (the outbox's or the inbox's), else ``invalid_options``."""
    try:
        return statuses(str(value)).value
    except ValueError:
        raise PersistenceValidationError(
            "invalid_options", f"status must be an {queue} status."
        ) from None


def response_json(value: object) -> str:
    """The stored upstream answer: a string kept verbatim (at most 1 MiB), without NUL
    (PostgreSQL text cannot hold it, and JSON escapes it) or a lone surrogate."""
    if (
        not isinstance(value, str)
        or len(value) > 1_048_576
        or "\x00" in value
        or has_surrogate(value)
    ):
        raise PersistenceValidationError(
            "invalid_record", "response_json must be JSON text of at most 1 MiB."
        )
    return value


def records(value: object, field: str) -> tuple[object, ...]:
    """A sequence of records (a string is not one)."""
    if not isinstance(value, Sequence) or isinstance(value, str | bytes | bytearray):
        raise PersistenceValidationError("invalid_record", f"{field} must be a sequence.")
    return tuple(value)


def texts(values: object, field: str) -> tuple[str, ...]:
    """A sequence of :func:`text` values (a string is not one), as a tuple."""
    items = records(values, field)
    for item in items:
        if fit(item) is None:
            text(item, field)  # refuses it with its reason
    return cast(tuple[str, ...], items)


def status_event(event: object) -> StatusArgs:
    """The checked ``(wa_message_id, status, epoch ms, pricing category)`` of a status event."""
    if not isinstance(event, StatusEvent):
        raise PersistenceValidationError("invalid_record", "statuses must be StatusEvent records.")
    return (
        text(event.wa_message_id, "wa_message_id"),
        text(event.status, "status", max_len=64),
        to_ms(event.timestamp, field="timestamp"),
        optional_text(event.pricing_category, "pricing_category", max_len=PRICING_CATEGORY_MAX),
    )


def user(value: object, field: str = "user") -> str:
    """A user to look up: a phone number (wa_id), a BSUID or a parent BSUID."""
    return text(value, field, max_len=USER_ID_MAX)


def message(record: object) -> tuple[object, ...]:
    """The checked column values of a message record, times as epoch ms.

    The order is ``_ops._MESSAGE_COLUMNS``'s. The row must name its user (the
    sender of an inbound row, the recipient of an outbound one) by a phone or a BSUID.
    """
    if not isinstance(record, MessageRecord):
        raise PersistenceValidationError("invalid_record", "record must be a MessageRecord.")
    if record.direction not in DIRECTIONS:
        raise PersistenceValidationError(
            "invalid_record", "direction must be 'inbound' or 'outbound'."
        )
    from_phone = optional_text(record.from_phone, "from_phone", max_len=PHONE_MAX)
    to_phone = optional_text(record.to_phone, "to_phone", max_len=PHONE_MAX)
    user_id = optional_text(record.user_id, "user_id", max_len=USER_ID_MAX)
    parent_user_id = optional_text(record.parent_user_id, "parent_user_id", max_len=USER_ID_MAX)
    if not names_user(record.direction, from_phone, to_phone, user_id, parent_user_id):
        phone = "from_phone" if record.direction == "inbound" else "to_phone"
        raise PersistenceValidationError(
            "invalid_record",
            f"An {record.direction} message needs {phone}, user_id or parent_user_id.",
        )
    return (
        text(record.row_id, "row_id"),
        text(record.wa_message_id, "wa_message_id"),
        record.direction,
        from_phone,
        to_phone,
        text(record.type, "type", max_len=64),
        text(record.status, "status", max_len=64),
        optional_text(record.graph_message_id, "graph_message_id"),
        to_ms(record.created_at, field="created_at"),
        to_ms(record.updated_at, field="updated_at"),
        user_id,
        parent_user_id,
        optional_text(
            record.business_phone_number_id, "business_phone_number_id", max_len=PHONE_MAX
        ),
    )


def names_user(
    direction: str,
    from_phone: str | None,
    to_phone: str | None,
    user_id: str | None,
    parent_user_id: str | None,
) -> bool:
    """Whether a message row names its user: the sender of an inbound row, the recipient
    of an outbound one, by a phone, a BSUID or a parent BSUID."""
    phone = from_phone if direction == "inbound" else to_phone
    return phone is not None or user_id is not None or parent_user_id is not None


def epoch_ms(value: object, field: str) -> int:
    """Epoch milliseconds given as an ``int`` (not a bool) in the range :func:`to_ms` makes."""
    if type(value) is not int or not EARLIEST_MS <= value < LATEST_MS:
        raise PersistenceValidationError(
            "invalid_record", f"{field} must be epoch milliseconds in the years 1 to 9998."
        )
    return value


def number_scope(value: object, include_unassigned: object) -> tuple[str, bool] | None:
    """A business phone number filter (its id, and whether rows without one count), or None."""
    if not isinstance(include_unassigned, bool):
        raise PersistenceValidationError("invalid_options", "include_unassigned must be a bool.")
    if value is None:
        if include_unassigned:
            raise PersistenceValidationError(
                "invalid_options", "include_unassigned needs business_phone_number_id."
            )
        return None
    return text(value, "business_phone_number_id", max_len=PHONE_MAX), include_unassigned


StatusArgs = tuple[str, str, int, str | None]
"""A checked status event: message id, status, epoch ms, pricing category."""
PRICING_CATEGORY_MAX = 64
IdentityArgs = tuple[str | None, str | None, str | None, str | None, int]
"""A checked identity: user_id, parent_user_id, wa_id, username, last-seen ms."""


def identity(record: object) -> IdentityArgs:
    """The checked values of a ``UserIdentityRecord``; it must name a user_id or a wa_id."""
    if not isinstance(record, UserIdentityRecord):
        raise PersistenceValidationError(
            "invalid_record", "identities must be UserIdentityRecord records."
        )
    user_id = optional_text(record.user_id, "user_id", max_len=USER_ID_MAX)
    wa_id = optional_text(record.wa_id, "wa_id", max_len=PHONE_MAX)
    if user_id is None and wa_id is None:
        raise PersistenceValidationError(
            "invalid_record", "A user identity needs a user_id or a wa_id."
        )
    return (
        user_id,
        optional_text(record.parent_user_id, "parent_user_id", max_len=USER_ID_MAX),
        wa_id,
        optional_text(record.username, "username", max_len=USERNAME_MAX),
        to_ms(record.last_seen_at, field="last_seen_at"),
    )
