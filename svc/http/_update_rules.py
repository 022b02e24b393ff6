"""Which updates of a webhook delivery the service handles: its own number's, each once.

Pure functions over a delivery's updates and the store's answer, so the rules are
tested without a server: an update key already finished (or running elsewhere)
is not dispatched again. Updates for another business number are set apart
earlier, by ``_numbers.route_delivery``.
"""

from __future__ import annotations

from typing import Final

from svc.webhook import Update

from ._errors import HttpError

__all__ = [
    "FOREIGN_NUMBER",
    "updates_to_run",
    "webhook_in_progress",
]

FOREIGN_NUMBER: Final = "foreign_number"
"""The skip reason and metric outcome of an update for another business phone number."""


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
