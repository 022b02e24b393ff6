"""The deliveries this process recorded whole, by body hash: a copy of one needs no store trip."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = ["MAX_LOCAL_COPIES", "LocalCopies", "RecentKeys"]

MAX_LOCAL_COPIES: Final = 4096
"""How many deliveries ``LocalCopies`` remembers at least (a body hash each; at most twice as
many, ``RecentKeys``)."""


class RecentKeys:
    """The keys added lately: at least the latest ``limit`` of them, and at most about twice
    as many (twice ``limit`` plus the keys of one ``add``).

    Two generations: keys go into the current one, and once it holds ``limit`` keys it
    becomes the previous one and the one before is forgotten whole. Nothing is dropped
    key by key, so adding a delivery's keys costs a set update (an ordered set that
    dropped its oldest key one at a time cost a linked-list step per key).
    """

    __slots__ = ("_current", "_limit", "_previous")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._current: set[str] = set()
        self._previous: set[str] = set()

    def __contains__(self, key: object) -> bool:
        return key in self._current or key in self._previous

    def add(self, keys: Iterable[str]) -> None:
        """Remember ``keys`` (forgetting the older generation once this one is full)."""
        self._current.update(keys)
        if len(self._current) >= self._limit:
            self._previous, self._current = self._current, set()


class LocalCopies(RecentKeys):
    """The body hashes of the deliveries this process recorded whole.

    Kept once a delivery was recorded with its projection (its updates handed to the
    handler runtime) and asked for no identity change: a copy of it, byte for byte (the
    platform's retry), has then nothing left to record or run, as the store would answer
    (every update recorded before).
    A finished update never becomes unfinished, so what is kept stays true; it is
    forgotten a generation at a time (``RecentKeys``), and a copy not found here goes to
    the store as any delivery.
    """

    __slots__ = ()

    def __init__(self, limit: int = MAX_LOCAL_COPIES) -> None:
        super().__init__(limit)
