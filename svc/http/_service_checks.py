"""Request checks and error counts the service shares with its routes."""

from __future__ import annotations

import re
from typing import Final

from svc._text import has_control

from ._errors import invalid_idempotency_key

__all__ = ["MAX_ERROR_NAME", "ForeignNumbers", "RecentErrors", "check_idempotency_key"]

MAX_IDEMPOTENCY_KEY: Final = 256

MAX_RECENT_ERRORS: Final = 10
MAX_ERROR_NAME: Final = 80


class RecentErrors:
    """Error class names with counts: at most 10 distinct, oldest dropped, names cut to 80."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def add(self, error: BaseException | str) -> None:
        name = (error if isinstance(error, str) else type(error).__name__)[:MAX_ERROR_NAME]
        if name not in self._counts and len(self._counts) >= MAX_RECENT_ERRORS:
            del self._counts[next(iter(self._counts))]
        self._counts[name] = self._counts.get(name, 0) + 1

    def snapshot(self) -> list[dict[str, object]]:
        return [{"errorClass": name, "count": count} for name, count in self._counts.items()]


class ForeignNumbers:
    """The business numbers this service skipped updates for, so each is logged once.

    A phone number id is the business's, not user data; one that is not a
    digit string is remembered as ``other``. At most ``limit`` ids are kept
    (then no new id is logged: the metrics still count every update).
    """

    _DIGITS: Final = re.compile(r"[0-9]{1,32}")

    def __init__(self, limit: int = 256) -> None:
        self._seen: set[str] = set()
        self._limit = limit

    def first_sightings(self, ids: set[str | None]) -> list[str]:
        """The ids of ``ids`` not seen before (as logged: digits, else ``other``), now seen."""
        new: list[str] = []
        for value in sorted(ids, key=str):
            shown = value if value is not None and self._DIGITS.fullmatch(value) else "other"
            if shown not in self._seen and len(self._seen) < self._limit:
                self._seen.add(shown)
                new.append(shown)
        return new


def check_idempotency_key(value: str | None) -> str | None:
    """The ``Idempotency-Key`` header, validated whenever present (400 otherwise)."""
    if value is None:
        return None
    if not value.strip() or len(value) > MAX_IDEMPOTENCY_KEY or has_control(value):
        raise invalid_idempotency_key()
    return value
