"""The update hooks the service runs at ingest, and the skip reason of a foreign number.

Updates for another business number are set apart by ``_numbers.route_delivery``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

import anyio

from svc.webhook import Update

__all__ = ["FOREIGN_NUMBER", "UpdateHook", "hook_work", "record_beside"]

T = TypeVar("T")

FOREIGN_NUMBER: Final = "foreign_number"
"""The skip reason and metric outcome of an update for another business phone number."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateHook:
    """Work the service runs in the request, beside the record, on the updates it ``wants``.

    ``run`` is awaited with those updates while the delivery is recorded (its store
    writes are queued beside the record's) and returns the ones whose work was not
    stored: the delivery is then answered 503, and the platform's redelivery, a
    duplicate, runs the hook again (its work must be idempotent).
    """

    wants: Callable[[Update], bool]
    run: Callable[[Sequence[Update]], Awaitable[Sequence[Update]]]


def hook_work(
    hooks: Sequence[UpdateHook], updates: Sequence[Update]
) -> list[tuple[UpdateHook, list[Update]]]:
    """Each hook that wants some of ``updates``, with those updates."""
    work = []
    for hook in hooks:
        wanted = [update for update in updates if hook.wants(update)]
        if wanted:
            work.append((hook, wanted))
    return work


async def record_beside(
    record: Awaitable[T], work: Sequence[tuple[UpdateHook, list[Update]]]
) -> tuple[T, bool]:
    """Await ``record`` with the hooks' ``work`` beside it, so that their store writes are
    queued with it (under load they join its group-commit batch; on an idle store its batch
    has gone first and theirs is the next); the record's answer and whether every hook's
    work was stored. The record's exception is raised as
    is, whatever the hooks did."""
    if not work:
        return await record, True
    failed: list[bool] = []
    answer: list[T] = []
    raised: list[Exception] = []

    async def run(hook: UpdateHook, wanted: list[Update]) -> None:
        if await hook.run(wanted):
            failed.append(True)

    async with anyio.create_task_group() as group:
        for hook, wanted in work:
            group.start_soon(run, hook, wanted)
        try:
            answer.append(await record)
        except Exception as exc:  # noqa: BLE001 -- raised below, outside the task group
            raised.append(exc)
    if raised:
        raise raised[0]
    return answer[0], not failed
