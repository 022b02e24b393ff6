"""``biz_opaque_callback_data``: an opaque tracker the platform echoes back on status updates.

Every send may carry it; it is checked here once (a single-line string of at
most 512 characters) and added at the payload's top level, where the
platform reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ._validate import check_label

__all__ = ["MAX_BIZ_OPAQUE_CALLBACK_DATA", "check_callback_data", "with_callback_data"]

MAX_BIZ_OPAQUE_CALLBACK_DATA: Final = 512
CALLBACK_DATA_KEY: Final = "biz_opaque_callback_data"


def check_callback_data(value: object, field: str = CALLBACK_DATA_KEY) -> str:
    """A non-empty single-line string of at most 512 characters."""
    return check_label(value, field, max_length=MAX_BIZ_OPAQUE_CALLBACK_DATA)


def with_callback_data(payload: Mapping[str, Any], value: str | None) -> dict[str, Any]:
    """``payload`` with ``biz_opaque_callback_data`` added when ``value`` is given (a copy)."""
    out = dict(payload)
    if value is not None:
        out[CALLBACK_DATA_KEY] = check_callback_data(value)
    return out
