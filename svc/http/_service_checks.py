"""Request checks and error counts the service shares with its routes."""

from __future__ import annotations

from typing import Final

from svc._text import has_control

from ._errors import invalid_idempotency_key

__all__ = ["MAX_ERROR_NAME", "RecentErrors", "check_idempotency_key"]

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


def check_idempotency_key(value: str | None) -> str | None:
    """The ``Idempotency-Key`` header, validated whenever present (400 otherwise)."""
    if value is None:
        return None
    if not value.strip() or len(value) > MAX_IDEMPOTENCY_KEY or has_control(value):
        raise invalid_idempotency_key()
    return value
