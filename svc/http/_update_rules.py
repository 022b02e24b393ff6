"""Which updates of a webhook delivery the service handles: its own number's, each once.

Pure functions over a ``Delivery`` and the store's answer, so the rules are
tested without a server: updates for another business number are skipped,
an update key already finished (or running elsewhere) is not dispatched again.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from svc.webhook import Delivery, NormalizationResult, Skip, Update

from ._errors import HttpError

__all__ = [
    "FOREIGN_LOCATION",
    "FOREIGN_NUMBER",
    "updates_to_run",
    "webhook_in_progress",
    "without_foreign",
]

FOREIGN_NUMBER: Final = "foreign_number"
"""The skip reason and metric outcome of an update for another business phone number."""
FOREIGN_LOCATION: Final = "entry[].changes[].value.metadata.phone_number_id"


def without_foreign(
    delivery: Delivery, phone_number_id: str
) -> tuple[Delivery, tuple[Update, ...]]:
    """The delivery without the updates of another business number, and those updates.

    An update whose ``metadata.phone_number_id`` names another number is
    neither projected nor dispatched (it would open this number's window for
    that user): it becomes a ``Skip``. Updates without one (account-level
    changes) are kept.
    """
    foreign = tuple(
        update
        for update in delivery.updates
        if update.phone_number_id is not None and update.phone_number_id != phone_number_id
    )
    if not foreign:
        return delivery, ()
    skips = tuple(
        Skip(reason=FOREIGN_NUMBER, location=FOREIGN_LOCATION, kind=update.kind)
        for update in foreign
    )
    skipped = {id(update) for update in foreign}
    kept = tuple(update for update in delivery.updates if id(update) not in skipped)
    result = NormalizationResult(updates=kept, skipped=(*delivery.result.skipped, *skips))
    return replace(delivery, result=result), foreign


def updates_to_run(
    updates: tuple[Update, ...], keys: list[str], to_run: set[str] | None
) -> tuple[tuple[Update, ...], list[str]]:
    """The updates to dispatch (each key once) and their keys; every update without a store."""
    if to_run is None:
        return updates, []
    chosen: list[Update] = []
    running: list[str] = []
    for update, key in zip(updates, keys, strict=True):
        if key in to_run and key not in running:
            running.append(key)
            chosen.append(update)
    return tuple(chosen), running


def webhook_in_progress() -> HttpError:
    """503: another delivery is dispatching some of these updates; redeliver later."""
    return HttpError(
        503,
        "webhook_in_progress",
        "Some updates of this delivery are being handled by another delivery; retry later.",
        headers={"Retry-After": "5"},
    )
