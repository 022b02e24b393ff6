"""What the group commit knows of a write: its kind and arguments, and the ``DEFER`` answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from ._validate import IdentityArgs

__all__ = ["DEFER", "BatchHint", "BatchKind", "DeliveryArgs"]

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


