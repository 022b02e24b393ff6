"""Timestamps: aware ``datetime`` in Python, integer epoch milliseconds in storage."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final

from ._errors import PersistenceValidationError

__all__ = ["format_timestamp", "from_ms", "to_ms", "utc_now"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
EARLIEST_MS: Final = (datetime.min.replace(tzinfo=UTC) - _EPOCH) // timedelta(milliseconds=1)
LATEST_MS: Final = (datetime(9999, 1, 1, tzinfo=UTC) - _EPOCH) // timedelta(milliseconds=1)
"""The store's times are epoch ms in ``EARLIEST_MS <= ms < LATEST_MS`` (the years 1 to 9998),
so a lease or delay (at most 7 days) added to one still reads back as a ``datetime``."""


def utc_now() -> datetime:
    """The wall clock, UTC, truncated to milliseconds (the default injected clock)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond - now.microsecond % 1000)


def to_ms(value: datetime, *, field: str = "timestamp") -> int:
    """Epoch milliseconds of an aware datetime (floored, UTC in the years 1 to 9998); naive
    datetimes and others are refused."""
    clocks_own = value.__class__ is datetime and value.tzinfo is UTC  # aware: no more to ask
    if not clocks_own and (
        not isinstance(value, datetime) or value.tzinfo is None or value.utcoffset() is None
    ):
        raise PersistenceValidationError(
            "invalid_record", f"{field} must be a timezone-aware datetime."
        )
    delta = value - _EPOCH
    ms = (delta.days * 86_400_000) + (delta.seconds * 1000) + (delta.microseconds // 1000)
    if not EARLIEST_MS <= ms < LATEST_MS:
        raise PersistenceValidationError(
            "invalid_record", f"{field} must be in the years 1 to 9998 (UTC)."
        )
    return ms


def from_ms(value: int) -> datetime:
    """The UTC datetime of epoch milliseconds."""
    return _EPOCH + timedelta(milliseconds=value)


def format_timestamp(value: datetime) -> str:
    """ISO 8601 UTC with a ``Z`` and millisecond precision: ``2026-11-21T10:15:30.000Z``."""
    moment = from_ms(to_ms(value))
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
