"""The retention loop: ``store.prune`` once at start, then once per ``interval``.

Start it with structured concurrency, beside the service::

    await nursery.start(run_retention, store, RetentionOptions(older_than=timedelta(days=14)))

and stop it by cancelling its scope (a prune in flight finishes its batch first).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

import anyio
import anyio.abc

from . import _validate as check
from ._contract import PersistenceStore
from ._errors import PersistenceError, PersistenceValidationError
from ._records import PruneReport
from ._time import utc_now

__all__ = ["RetentionOptions", "prune_once", "run_retention"]

_log: Final = logging.getLogger("svc.store.retention")


def _invalid(message: str) -> PersistenceValidationError:
    return PersistenceValidationError("invalid_options", message)


@dataclass(frozen=True, slots=True, kw_only=True)
class RetentionOptions:
    """What to keep and how often to prune. ``interval`` is seconds (trio style).

    ``older_than`` is how long dedupe keys, completed claims and succeeded
    outbox items are kept; ``messages_older_than`` (None: forever) how long
    projected messages and status events are. ``now`` is the injected clock,
    ``schedule(seconds)`` the sleep seam.
    """

    older_than: timedelta
    messages_older_than: timedelta | None = None
    interval: float = 3600.0
    batch_size: int = 500
    on_report: Callable[[PruneReport], None] | None = None
    now: Callable[[], datetime] = utc_now
    schedule: Callable[[float], Awaitable[None]] = field(default=anyio.sleep)

    def __post_init__(self) -> None:
        for name in ("older_than", "messages_older_than"):
            value = getattr(self, name)
            if value is None and name == "messages_older_than":
                continue
            if not isinstance(value, timedelta) or value <= timedelta(0):
                raise _invalid(f"{name} must be a positive timedelta.")
        check.interval(self.interval)
        if not 1 <= check.option_int(self.batch_size, "batch_size") <= check.MAX_BATCH:
            raise _invalid(f"batch_size must be in 1..{check.MAX_BATCH}.")


async def prune_once(store: PersistenceStore, options: RetentionOptions) -> PruneReport:
    """One pass: the cutoffs are ``now()`` minus the kept durations."""
    now = options.now()
    return await store.prune(
        older_than=_cutoff(now, options.older_than),
        messages_older_than=(
            None
            if options.messages_older_than is None
            else _cutoff(now, options.messages_older_than)
        ),
        batch_size=options.batch_size,
    )


def _cutoff(now: datetime, kept: timedelta) -> datetime:
    """``now - kept``; the first moment of the year 1 when that is earlier (nothing is older)."""
    try:
        return now - kept
    except OverflowError:
        return datetime.min.replace(tzinfo=UTC)


async def run_retention(
    store: PersistenceStore,
    options: RetentionOptions,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Prune now, then every ``interval``, until cancelled; a store fault is logged by code."""
    task_status.started()
    while True:
        try:
            report = await prune_once(store, options)
        except PersistenceError as exc:
            _log.warning("retention prune failed: %s", exc.code)
        else:
            if options.on_report is not None:
                options.on_report(report)
        await options.schedule(options.interval)
