"""One run's control: its deadline (which stands still while the run waits for the user),
its run slot (given back while it waits), its lease (renewed while it lives), its background
tasks and what its success will commit (the later items it consumed).

A run ends at its deadline at its next checkpoint, whatever it awaits; it also ends when
its lease is lost (another claim took the item, or an operator dropped it) or when a
renewal is not confirmed before the lease runs out, so a run never outlives its lease.
Renewals start a third of the way into the lease (``LeaseKeeper``), as tasks of the run
(``RunTasks``: cancelled and waited for when it ends, like a nursery of its own): most runs
end before and start no task at all.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Final

import trio

from ._queue import Claim, RunQueue
from ._slots import RunSlots

__all__ = ["LEASE_EXPIRED", "LEASE_LOST", "LeaseKeeper", "RunControl", "RunTasks", "keep_lease"]

LEASE_LOST: Final = "lease_lost"
"""Why a run was stopped: another claim holds its item, or it was dropped."""
LEASE_EXPIRED: Final = "lease_expired"
"""Why a run was stopped: no renewal was confirmed before its lease ran out."""
_RETRY: Final = 0.25
"""Seconds at least between two renewals after a failed one (a store outage logs a few
lines per run, not a storm)."""


class RunControl:
    """The deadline, slot and consumed items of one run (one per run)."""

    __slots__ = ("_depth", "_left", "_slots", "consumed", "holds_slot", "lost", "scope")

    def __init__(self, timeout: float, slots: RunSlots | None) -> None:
        self.scope: Final = trio.CancelScope(deadline=trio.current_time() + timeout)
        """The run's cancel scope: its deadline, and how a lost lease stops it."""
        self._depth = 0
        self._left = timeout
        self._slots = slots
        self.holds_slot = slots is not None
        """Whether the run holds a run slot (False while it waits without one)."""
        self.consumed: dict[int, str] = {}
        """Later items the run used up (id -> update key), deleted with its success."""
        self.lost: str | None = None
        """``LEASE_LOST`` or ``LEASE_EXPIRED`` once the run was stopped for its lease."""

    def lose(self, reason: str) -> None:
        """Stop the run: its lease is gone (its settlement will be refused)."""
        if self.lost is None:
            self.lost = reason
        self.scope.cancel()

    @asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """Waiting for the user: the deadline stands still inside and the run's slot is free
        for another queue's head until it is taken again on the way out (waiting for one,
        still paused). Pauses nest; the outermost gives the slot back."""
        released = False
        if self._depth == 0:
            self._left = self.scope.deadline - trio.current_time()
            self.scope.deadline = math.inf
            if self._slots is not None and self.holds_slot and self._slots.pause():
                released, self.holds_slot = True, False
        self._depth += 1
        try:
            yield
        finally:
            try:
                if released:
                    assert self._slots is not None
                    await self._slots.resume()
                    self.holds_slot = True
            finally:
                self._depth -= 1
                if self._depth == 0 and self.lost is None:
                    self.scope.deadline = trio.current_time() + max(self._left, 0.0)


class RunTasks:
    """One run's background tasks, started in ``home`` (the runtime's nursery) only when the
    run has any, each under a cancel scope of its own: ``aclose`` at the run's end cancels them
    and waits for them, as a nursery of the run's own would, which every run would pay for
    (a cancel scope and a schedule point) and few use."""

    __slots__ = ("_closed", "_done", "_home", "_scopes")

    def __init__(self, home: trio.Nursery) -> None:
        self._home = home
        self._scopes: set[trio.CancelScope] = set()
        self._done: trio.Event | None = None
        self._closed = False

    def start_soon(self, task: Callable[..., Awaitable[None]], *args: object) -> None:
        """Run ``task(*args)`` beside the run until it ends (cancelled then)."""
        if self._closed:
            raise RuntimeError("the run has ended")
        scope = trio.CancelScope()
        self._scopes.add(scope)
        self._home.start_soon(self._run, scope, task, args)

    async def _run(
        self,
        scope: trio.CancelScope,
        task: Callable[..., Awaitable[None]],
        args: tuple[object, ...],
    ) -> None:
        try:
            with scope:
                await task(*args)
        finally:
            self._scopes.discard(scope)
            if not self._scopes and self._done is not None:
                self._done.set()

    async def aclose(self) -> None:
        """The run ends: cancel its tasks and wait until they have ended."""
        self._closed = True
        if not self._scopes:
            return
        self._done = trio.Event()
        for scope in self._scopes:
            scope.cancel()
        with trio.CancelScope(shield=True):
            await self._done.wait()


class LeaseKeeper:
    """The lease renewals of a runtime's runs, each held from its start (``hold``) to its end
    (``release``): a run still held a third of the way into its lease gets ``keep_lease`` as a
    task of its own (``RunTasks``) then. The keeper is one task in ``home``, started by a
    ``hold`` when none runs and ending once no run is held at a renewal's time, or at once
    after ``close``."""

    __slots__ = (
        "_closed",
        "_held",
        "_home",
        "_lease",
        "_now",
        "_on_error",
        "_queue",
        "_running",
        "_sleep",
    )

    def __init__(
        self,
        home: trio.Nursery,
        queue: RunQueue,
        *,
        lease: float,
        now: Callable[[], datetime],
        on_error: Callable[[Exception], None],
    ) -> None:
        self._home = home
        self._queue = queue
        self._lease = lease
        self._now = now
        self._on_error = on_error
        self._held: dict[RunControl, tuple[float, Claim, RunTasks]] = {}
        """The runs whose renewals have not started, in the order of their leases' starts."""
        self._running = False
        self._closed = False
        self._sleep = trio.CancelScope()

    def hold(self, claim: Claim, control: RunControl) -> RunTasks:
        """The run of ``claim`` starts, its lease now: its tasks, in which its lease is renewed
        from a third of the way on, until ``release``."""
        tasks = RunTasks(self._home)
        self._held[control] = (trio.current_time(), claim, tasks)
        if not self._running:
            self._running = True
            self._home.start_soon(self._keep)
        return tasks

    def release(self, control: RunControl) -> None:
        """The run ends (before its tasks close): its renewals, if started, end with them."""
        self._held.pop(control, None)
        if self._closed and not self._held:
            self._sleep.cancel()

    def close(self) -> None:
        """No run starts any more (the runtime stops): the keeper ends with the last run."""
        self._closed = True
        if not self._held:
            self._sleep.cancel()

    async def _keep(self) -> None:
        interval = self._lease / 3
        try:
            while self._held:
                control, (since, claim, tasks) = next(iter(self._held.items()))
                if trio.current_time() < since + interval:
                    with trio.CancelScope() as self._sleep:
                        await trio.sleep_until(since + interval)
                    continue
                del self._held[control]
                tasks.start_soon(self._renew, claim, control, since)
        finally:
            self._running = False

    async def _renew(self, claim: Claim, control: RunControl, since: float) -> None:
        await keep_lease(
            self._queue,
            claim,
            control,
            lease=self._lease,
            now=self._now,
            on_error=self._on_error,
            since=since,
        )


async def keep_lease(
    queue: RunQueue,
    claim: Claim,
    control: RunControl,
    *,
    lease: float,
    now: Callable[[], datetime],
    on_error: Callable[[Exception], None],
    since: float,
) -> None:
    """Renew the claim's lease, taken at ``since`` (trio time), every third of it for as
    long as the run lives. A renewal the queue refuses stops the run (``LEASE_LOST``); one
    that fails is tried again, and if none is confirmed before the lease runs out the run is
    stopped (``LEASE_EXPIRED``)."""
    interval = lease / 3
    ends = since + lease
    renew_at = since + interval
    while True:
        with trio.move_on_at(ends) as scope:
            await trio.sleep_until(min(ends, renew_at))
            while True:
                asked = trio.current_time()
                try:
                    kept = await queue.renew(claim, until=now() + timedelta(seconds=lease))
                except Exception as exc:  # noqa: BLE001 -- reported; tried again before the end
                    on_error(exc)
                    await trio.sleep(min(interval, max((ends - trio.current_time()) / 2, _RETRY)))
                    continue
                if not kept:
                    control.lose(LEASE_LOST)
                    return
                ends = asked + lease
                break
        if scope.cancelled_caught:
            control.lose(LEASE_EXPIRED)
            return
        renew_at = trio.current_time() + interval
