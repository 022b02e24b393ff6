"""What the group commit knows of a write (its kind and arguments, the ``DEFER`` answer) and the
sans-IO rules the adapters' set-based forms share."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from ._records import WebhookEventResult
from ._validate import IdentityArgs

__all__ = [
    "DEFER",
    "BatchHint",
    "BatchKind",
    "DeliveryArgs",
    "event_answers",
    "first_of_each_key",
]

BatchKind = Literal[
    "message", "status", "claim", "complete", "event", "delivery", "handled", "pause"
]


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchHint:
    """What a write is, for the group-commit planner: its kind, contended key and arguments."""

    kind: BatchKind
    key: str
    args: tuple[object, ...]
    locks: tuple[str, ...] = ()
    """Further message ids the call takes advisory locks on (a delivery's), besides ``key``."""


class _Defer:
    __slots__ = ()

    def __repr__(self) -> str:
        return "DEFER"


DEFER: Final = _Defer()
"""A set-based form's answer for a call that must run on its own."""


DeliveryArgs = tuple[
    str,
    str,
    int,
    tuple[tuple[object, ...], ...],
    tuple[tuple[str, str, int], ...],
    tuple[IdentityArgs, ...],
    tuple[str, ...],
    int,
]
"""A checked delivery: event key, event hash, received-at ms, message values, status events,
identity sightings, update keys, the claim cutoff ms (claims at or before it have lapsed)."""


def first_of_each_key(items: Sequence[tuple[object, ...]]) -> dict[object, int]:
    """Each key (an item's first value) and the index of its first item, in order."""
    first: dict[object, int] = {}
    for i, item in enumerate(items):
        first.setdefault(item[0], i)
    return first


def event_answers(
    items: Sequence[tuple[object, ...]], first: dict[object, int], inserted: Collection[object]
) -> list[WebhookEventResult]:
    """``record_webhook_event``'s answers for ``items`` run in order, given which keys the
    set-based insert stored: only a stored key's first item is new."""
    return [
        WebhookEventResult.RECORDED
        if item[0] in inserted and first[item[0]] == i
        else WebhookEventResult.DUPLICATE
        for i, item in enumerate(items)
    ]

