"""Message row ids that sort by creation time (UUID version 7, RFC 9562)."""

from __future__ import annotations

import os
import time
import uuid

__all__ = ["new_row_id"]


def new_row_id(*, now_ns: int | None = None) -> str:
    """A fresh row id: 48 bits of Unix milliseconds, then 74 random bits, as a UUID string.

    Row ids are keys of the message table's primary index: ids that grow with time
    land on its last pages, where random (version 4) ids dirtied a page per row.
    """
    ms = (time.time_ns() if now_ns is None else now_ns) // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & 0xFFFF_FFFF_FFFF) << 80 | rand
    value = (value & ~(0xF << 76)) | (0x7 << 76)  # version 7
    value = (value & ~(0x3 << 62)) | (0x2 << 62)  # RFC 4122 variant
    return str(uuid.UUID(int=value))
