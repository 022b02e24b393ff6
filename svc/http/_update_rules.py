"""The update hooks the service runs at ingest, and the skip reason of a foreign number.

Updates for another business number are set apart by ``_numbers.route_delivery``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

from svc.webhook import Update

__all__ = ["FOREIGN_NUMBER", "UpdateHook"]

FOREIGN_NUMBER: Final = "foreign_number"
"""The skip reason and metric outcome of an update for another business phone number."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateHook:
    """Work the service runs in the request, beside the record, on the updates it ``wants``.

    ``run`` is awaited with those updates while the delivery is recorded (its store
    writes join the record's group-commit batch) and returns the ones whose work was not
    stored: the delivery is then answered 503, and the platform's redelivery, a
    duplicate, runs the hook again (its work must be idempotent).
    """

    wants: Callable[[Update], bool]
    run: Callable[[Sequence[Update]], Awaitable[Sequence[Update]]]
