"""The customer-service conversation window (sans-IO)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from ._errors import PersistenceValidationError
from ._time import from_ms, to_ms
from ._validate import option_int

__all__ = ["DEFAULT_WINDOW_MS", "MAX_WINDOW_MS", "ConversationWindow", "conversation_window"]

DEFAULT_WINDOW_MS: Final = 86_400_000
MAX_WINDOW_MS: Final = 604_800_000


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationWindow:
    """Whether a free-form reply is allowed now, and for how long."""

    open: bool
    last_inbound_at: datetime | None
    expires_at: datetime | None
    remaining_ms: int


def conversation_window(
    *, now: datetime, last_inbound_at: datetime | None, window_ms: int = DEFAULT_WINDOW_MS
) -> ConversationWindow:
    """The window at ``now`` given the latest inbound message time.

    Open while the inbound is strictly less than ``window_ms`` old; closed at
    exactly ``window_ms``. An inbound after ``now`` (clock skew) counts as open
    with the full window remaining. Times are compared at millisecond precision.
    """
    if not 1 <= option_int(window_ms, "window_ms") <= MAX_WINDOW_MS:
        raise PersistenceValidationError(
            "invalid_options", f"window_ms must be between 1 and {MAX_WINDOW_MS}."
        )
    now_ms = to_ms(now, field="now")
    if last_inbound_at is None:
        return ConversationWindow(open=False, last_inbound_at=None, expires_at=None, remaining_ms=0)
    last_ms = to_ms(last_inbound_at, field="last_inbound_at")
    if last_ms > now_ms:
        return ConversationWindow(
            open=True,
            last_inbound_at=from_ms(last_ms),
            expires_at=from_ms(now_ms + window_ms),
            remaining_ms=window_ms,
        )
    age = now_ms - last_ms
    is_open = age < window_ms
    return ConversationWindow(
        open=is_open,
        last_inbound_at=from_ms(last_ms),
        expires_at=from_ms(last_ms + window_ms),
        remaining_ms=window_ms - age if is_open else 0,
    )
