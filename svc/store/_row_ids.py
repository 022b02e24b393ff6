"""Message row ids that sort by creation time (UUID version 7, RFC 9562)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

__all__ = ["new_row_id", "new_row_ids"]

_VARIANT: dict[str, str] = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}
"""The variant digit (RFC 9562: binary 10xx) a random hex digit becomes: its low two bits."""


def new_row_ids(
    count: int, *, now_ns: int | None = None, random: Callable[[int], bytes] = os.urandom
) -> list[str]:
    """``count`` fresh row ids: 48 bits of Unix milliseconds, then 74 random bits each.

    Row ids key the message table's primary index: ids that grow with time land
    on its last pages, where random (version 4) ids dirtied a page per row. One
    draw of random bytes serves all of them (a delivery's rows).
    """
    if count <= 0:
        return []
    ms = ((time.time_ns() if now_ns is None else now_ns) // 1_000_000) & 0xFFFF_FFFF_FFFF
    prefix = f"{ms >> 16:08x}-{ms & 0xFFFF:04x}-7"
    text = random(10 * count).hex()
    variant = _VARIANT
    return [
        f"{prefix}{text[i : i + 3]}-{variant[text[i + 3]]}"
        f"{text[i + 4 : i + 7]}-{text[i + 7 : i + 19]}"
        for i in range(0, 20 * count, 20)
    ]


def new_row_id(*, now_ns: int | None = None) -> str:
    """One fresh row id (see :func:`new_row_ids`)."""
    return new_row_ids(1, now_ns=now_ns)[0]
