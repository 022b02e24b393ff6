"""What the group commit knows of a write (its kind and arguments, the ``DEFER`` answer) and the
sans-IO rules the adapters' set-based forms share."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final, Literal, cast

from ._records import UpdatesRecorded, WebhookEventResult
from ._validate import IdentityArgs, StatusArgs

__all__ = [
    "CLAIM_BUSY",
    "CLAIM_RUN",
    "DEFER",
    "BatchHint",
    "BatchKind",
    "ClaimRow",
    "DeliveryArgs",
    "event_answers",
    "finished_claims",
    "finished_marks",
    "first_of_each_key",
    "settle_claims",
    "unwritten_claims_busy",
    "updates_recorded",
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
    tuple[StatusArgs, ...],
    tuple[IdentityArgs, ...],
    tuple[str, ...],
    int,
    tuple[str, ...],
]
"""A checked delivery: event key, event hash, received-at ms, message values, status events,
identity sightings, update keys, the claim cutoff ms (claims at or before it have lapsed), and
the finished keys (updates with no work: a claim of one marks it handled at once)."""


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


CLAIM_RUN: Final = "run"
CLAIM_BUSY: Final = "busy"
ClaimRow = tuple[str, str, int, int, int]
"""One claim of an update key in a batch: key, event key, received-at ms, cutoff ms, the
index of its delivery."""


def finished_claims(deliveries: Sequence[tuple[object, ...]]) -> set[tuple[int, str]]:
    """``(delivery index, key)`` of each delivery's finished keys (its ninth value, if any)."""
    return {
        (index, key)
        for index, item in enumerate(deliveries)
        if len(item) > 8
        for key in cast(tuple[str, ...], item[8])
    }


def settle_claims(
    rows: Sequence[ClaimRow],
    first: dict[str, ClaimRow],
    won: Collection[str],
    claimed: dict[str, int | None],
    finished: Collection[tuple[int, str]] = (),
) -> tuple[dict[tuple[int, str], str], dict[str, int], dict[str, int]]:
    """``_ops.record_update_keys``'s answers for every claim of a batch, in order.

    Each key's first claim went to the database: ``won`` are the keys it inserted or
    reclaimed, ``claimed`` each key's claim time while unfinished (None: finished or
    gone). A key's later claims are settled from the state the earlier ones left; a
    claim that wins a key in ``finished`` (its delivery's updates with no work) marks it
    handled at its received-at, so the key's later claims find it finished.
    Answers ``(delivery index, key) -> CLAIM_RUN or CLAIM_BUSY`` (no answer: finished),
    the later reclaims to write back (key -> new claim time) and the keys marked handled
    (key -> handled-at ms, each at most once); ``claimed`` is updated.
    """
    answers: dict[tuple[int, str], str] = {}
    later: dict[str, int] = {}
    done: dict[str, int] = {}
    for key, _, at, cutoff, index in rows:
        if first[key][4] == index:
            if key in won:
                answers[(index, key)] = CLAIM_RUN
                if (index, key) in finished:
                    claimed[key] = None
                    done[key] = at
            elif claimed.get(key) is not None:
                answers[(index, key)] = CLAIM_BUSY
            continue
        current = claimed.get(key)
        if current is None:
            continue
        if current <= cutoff:
            claimed[key] = later[key] = at
            answers[(index, key)] = CLAIM_RUN
            if (index, key) in finished:
                claimed[key] = None
                done[key] = at
        else:
            answers[(index, key)] = CLAIM_BUSY
    return answers, later, done


def finished_marks(
    done: dict[str, int],
    unwritten: Collection[str],
    new: Collection[str],
    first: dict[str, ClaimRow],
    finished: Collection[tuple[int, str]],
) -> list[tuple[tuple[str, ...], int]]:
    """The ``(keys, at)`` marks the keys ``settle_claims`` marked handled still need: not a
    new key inserted finished by its first claim, nor one whose write-back was not written."""
    return [
        ((key,), at)
        for key, at in done.items()
        if key not in unwritten and not (key in new and (first[key][4], key) in finished)
    ]


def unwritten_claims_busy(
    answers: dict[tuple[int, str], str],
    rows: Sequence[ClaimRow],
    first: dict[str, ClaimRow],
    unwritten: Collection[str],
) -> None:
    """A later reclaim whose write-back found the row changed by another process keeps
    that state: this batch's later claims of it count as in progress (retried), and so do
    those after a reclaim that finished it (it was not written)."""
    for key, _, _, _, index in rows:
        if key in unwritten and first[key][4] != index:
            answers[(index, key)] = CLAIM_BUSY


def updates_recorded(
    deliveries: Sequence[DeliveryArgs],
    events: Sequence[WebhookEventResult],
    claims: dict[tuple[int, str], str],
) -> list[object]:
    """Each delivery's answer from its event's and its update keys' claims (``settle_claims``)."""
    return [
        UpdatesRecorded(
            event=event,
            to_run=tuple(k for k in dict.fromkeys(item[6]) if claims.get((i, k)) == CLAIM_RUN),
            in_progress=tuple(
                k for k in dict.fromkeys(item[6]) if claims.get((i, k)) == CLAIM_BUSY
            ),
        )
        for i, (event, item) in enumerate(zip(events, deliveries, strict=True))
    ]
