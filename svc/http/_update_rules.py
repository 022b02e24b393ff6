"""Which updates of a webhook delivery the service handles: its own number's, each once.

Pure functions over a delivery's updates and the store's answer, so the rules are
tested without a server: an update key already finished (or running elsewhere)
is not dispatched again. Updates for another business number are set apart
earlier, by ``_numbers.route_delivery``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

from svc.webhook import DefaultFacade, Update

from ._errors import HttpError

__all__ = [
    "FOREIGN_NUMBER",
    "UpdateHook",
    "keys_without_work",
    "updates_to_run",
    "webhook_in_progress",
]

FOREIGN_NUMBER: Final = "foreign_number"
"""The skip reason and metric outcome of an update for another business phone number."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateHook:
    """Work the service runs before dispatch on the updates of a delivery that ``wants``.

    ``run`` is awaited with those updates and returns the ones whose work was not
    stored (left unfinished, for the redelivery to run again); an update no hook
    wants and the facade does not need to run is recorded finished with the delivery.
    """

    wants: Callable[[Update], bool]
    run: Callable[[Sequence[Update]], Awaitable[Sequence[Update]]]


def keys_without_work(
    updates: tuple[Update, ...], keys: list[str], facade: object, hooks: Sequence[UpdateHook]
) -> list[str]:
    """The keys of the updates neither the default facade (``DefaultFacade.needs_run``: a
    handler or the echo reply) nor a hook wants: finished once recorded. None for another
    facade (every update it is handed counts as work); a key repeated in the delivery has
    work if any of its updates has."""
    if not isinstance(facade, DefaultFacade) or not keys:
        return []
    wants: list[Callable[[Update], bool]] = [facade.needs_run, *(hook.wants for hook in hooks)]
    idle: list[str] = []
    work: set[str] = set()
    for update, key in zip(updates, keys, strict=True):
        for want in wants:
            if want(update):
                work.add(key)
                break
        else:
            idle.append(key)
    return [key for key in idle if key not in work] if work else idle


def updates_to_run(
    updates: tuple[Update, ...], keys: list[str], to_run: set[str] | None
) -> tuple[tuple[Update, ...], list[str]]:
    """The updates to dispatch (each key once) and their keys; every update without a store."""
    if to_run is None:
        return updates, []
    chosen: list[Update] = []
    running: list[str] = []
    taken: set[str] = set()  # a set: the list's own `in` made this quadratic in the items
    for update, key in zip(updates, keys, strict=True):
        if key in to_run and key not in taken:
            taken.add(key)
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
