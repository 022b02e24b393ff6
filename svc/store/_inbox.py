"""The inbox worker: claims the heads of the inbox's queues, runs the handler on each under a
deadline, and settles it by the shared policy (``_leases``); and its metrics reporter.

Start it with structured concurrency::

    handle = await nursery.start(run_inbox_worker, store, InboxWorkerOptions(handler=run))
    handle.wake()          # new rows were recorded: claim now
    await handle.stop()    # stop claiming, let the runs in flight end

Up to ``concurrency`` runs are in flight, each of another queue (only a queue's head is ever
claimed, ``claim_inbox_items``), so one queue runs strictly in order while different queues
run side by side. Several workers (processes, instances) on one database share the queues the
same way: a head another one holds is not claimable.

A handler gets its item and a ``RunControl``: time spent inside ``control.paused()`` (waiting
for the user) does not count against the deadline, keeps the lease renewed and gives the
run's slot back (``RunSlots``: up to ``max_waiting`` paused runs), so another queue's head
runs meanwhile; the later items it consumes and the state it sets commit with its success,
in one transaction.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final, Literal

import anyio
import anyio.abc
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from ._contract import PersistenceStore
from ._errors import PersistenceError, PersistenceValidationError
from ._inbox_methods import MAX_INBOX_CLAIM
from ._leases import (
    EXHAUSTED,
    MAX_RETRY_DELAY_MS,
    TIMEOUT,
    Decision,
    Failure,
    RetryPolicy,
    Verdict,
    attempt,
    exhausted,
    settle,
)
from ._records import InboxItem, InboxStatistics, UserStateWrite
from ._slots import DEFAULT_MAX_WAITING, RunSlots
from ._time import utc_now

__all__ = [
    "InboxHandler",
    "InboxReporter",
    "InboxRun",
    "InboxWorkerHandle",
    "InboxWorkerOptions",
    "RunControl",
    "run_inbox_worker",
]

LEASE_LOST: Final = "lease_lost"
"""The ``last_error`` of a run cancelled because another claim took its item."""
INVALID_COMPLETION: Final = "invalid_completion"
"""The ``last_error`` of a run whose completion the store refused (a consumed id not of its
queue): buried, as no rerun changes it."""

RunOutcome = Literal["success", "error", "timeout", "dead"]
_log: Final = logging.getLogger("svc.store.inbox")
_PRUNE_EVERY: Final = 3600.0
"""Seconds between two deletions of dead letters past the horizon."""
_STATISTICS_EVERY: Final = 1.0
"""Seconds between two statistics snapshots handed to ``on_statistics``."""
_MAX_WAITING: Final = 100_000
"""The largest ``max_waiting``: paused runs each hold a lease and a task."""


def default_policy() -> RetryPolicy:
    """Retry after 1 s, doubling up to 5 min, jittered; dead after the fifth failure."""
    return RetryPolicy(
        retry_delay_ms=1000, max_retry_delay_ms=300_000, max_attempts=5, jitter=random.random
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class InboxRun:
    """One finished run: the item's kind, how it ended and the handler's time in seconds.

    ``dead``: the item was buried (last attempt spent, a dead letter, a failure no retry
    changes); ``timeout``: it overran its deadline and will retry; ``error``: it failed
    otherwise and will retry.
    """

    kind: str
    outcome: RunOutcome
    duration: float


def _invalid(message: str) -> PersistenceValidationError:
    return PersistenceValidationError("invalid_options", message)


def _seconds(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise _invalid(f"{name} must be a positive number of seconds.")
    return float(value)


class RunControl:
    """What a run may ask of the worker that runs it (one per run).

    ``async with control.paused():`` around a wait for the user: the time inside does not
    count against the run's deadline (its cancel scope's deadline moves forward by it), the
    item's lease is renewed every third of the lease while paused and once on resume, so no
    other worker takes the item meanwhile, and the run's slot is given back (another queue's
    head may run) and taken again on the way out, waiting for a free one (still paused).
    Pauses nest; the outermost one releases and retakes the slot. ``consume(item_id)`` names a later
    item of the run's queue the run used up and ``set_state(write)`` the user's state to
    write: both commit with the run's success, in one transaction, and a failed run commits
    neither. If a renewal finds the lease taken, the run is cancelled (``lease_lost``).
    """

    __slots__ = (
        "_changed",
        "_consumed",
        "_depth",
        "_keep",
        "_lost",
        "_remaining",
        "_scope",
        "_slots",
        "_state",
        "holds_slot",
        "item",
    )

    def __init__(self, item: InboxItem) -> None:
        self.item: Final = item
        """The item being run."""
        self._consumed: dict[int, None] = {}
        self._state: UserStateWrite | None = None
        self._depth = 0
        self._remaining = 0.0
        self._scope: anyio.CancelScope | None = None
        self._changed: anyio.Event | None = None
        self._keep: Callable[[], None] | None = None
        """Starts the lease keeper (at the first pause; the worker sets it)."""
        self._lost = False
        self._slots: RunSlots | None = None
        """The worker's slots (set by the worker; None: outside a worker)."""
        self.holds_slot = True
        """Whether the run holds a run slot (False while paused without one)."""

    @property
    def consumed(self) -> tuple[int, ...]:
        """The ids consumed so far, in the order first named."""
        return tuple(self._consumed)

    @property
    def state(self) -> UserStateWrite | None:
        """The state write the run's success commits (None: the state is left as it is)."""
        return self._state

    @property
    def is_paused(self) -> bool:
        """Whether the run is inside ``paused()``."""
        return self._depth > 0

    @property
    def lease_lost(self) -> bool:
        """Whether another claim took the item (the run was cancelled)."""
        return self._lost

    def consume(self, item_id: int) -> None:
        """Delete the later item ``item_id`` of this run's queue with the run's success
        (it never runs on its own). The store refuses an item of another queue."""
        if (
            isinstance(item_id, bool)
            or not isinstance(item_id, int)
            or not self.item.id < item_id < 2**63
        ):
            raise _invalid("consume takes the id of a later item of the run's queue.")
        self._consumed[item_id] = None

    def set_state(self, state: UserStateWrite | None) -> None:
        """The user's state written with the run's success (``UserStateWrite(sealed=None)``
        deletes it; None writes nothing)."""
        if state is not None and type(state) is not UserStateWrite:
            raise _invalid("set_state takes a UserStateWrite or None.")
        self._state = state

    @contextlib.asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """The run's deadline stands still inside (waiting for the user), the lease is kept
        and the run's slot is free for another run until it is taken again on the way out."""
        self._depth += 1
        released = False
        if self._depth == 1:
            keep, self._keep = self._keep, None
            if keep is not None:
                keep()
            scope = self._scope
            if scope is not None:
                self._remaining = scope.deadline - anyio.current_time()
                scope.deadline = math.inf
            if self._slots is not None and self.holds_slot and self._slots.pause():
                released, self.holds_slot = True, False
            self._signal()
        try:
            yield
        finally:
            try:
                if released:
                    assert self._slots is not None
                    await self._slots.resume()  # still paused: no deadline, lease kept
                    self.holds_slot = True
            finally:
                self._depth -= 1
                if self._depth == 0:
                    scope = self._scope
                    if scope is not None:
                        scope.deadline = anyio.current_time() + max(self._remaining, 0.0)
                    self._signal()

    def _signal(self) -> None:
        event, self._changed = self._changed, None
        if event is not None:
            event.set()

    async def _wait_change(self, timeout: float = math.inf) -> None:
        if self._changed is None:
            self._changed = anyio.Event()
        with anyio.move_on_after(timeout):
            await self._changed.wait()

    def _lose(self) -> None:
        self._lost = True
        if self._scope is not None:
            self._scope.cancel()


InboxHandler = Callable[[InboxItem, RunControl], Awaitable[None]]
"""Runs one item with its ``RunControl``; returning means success (what the control holds
commits with it), raising ``Exception`` means retry by the policy (``DeadLetter``: bury it
at once)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InboxWorkerOptions:
    """What the worker runs and how. Times in seconds (trio style) but ``lease_ms``.

    ``concurrency`` runs execute at once; a run paused waiting for the user gives its slot
    back while fewer than ``max_waiting`` paused runs did (past that it keeps it; 0: a
    paused run always keeps it). ``lease_ms`` (default ``handler_timeout * 1500 + 5000``)
    is how long a claim holds an item; it is always longer than the deadline, so a hung
    run is cancelled before another worker may take its item (a paused run renews it every
    third of it). ``poll_interval`` is how often rows recorded elsewhere (other processes)
    are looked for; ``wake()`` claims at once. Dead letters last changed more than
    ``dead_horizon`` ago, and users' states expired at ``now``, are deleted (once an hour).
    ``now`` is the clock of due times; ``on_run`` gets one ``InboxRun`` per finished run,
    ``on_statistics`` a snapshot of the inbox at most once a second, ``on_error`` each
    store fault of the loop.
    ``after_run`` is a test seam: called between a handler's end and its completion mark.
    """

    handler: InboxHandler
    concurrency: int = 8
    max_waiting: int = DEFAULT_MAX_WAITING
    handler_timeout: float = 30.0
    lease_ms: int | None = None
    policy: RetryPolicy = field(default_factory=default_policy)
    poll_interval: float = 1.0
    dead_horizon: timedelta = timedelta(days=7)
    now: Callable[[], datetime] = utc_now
    on_run: Callable[[InboxRun], None] | None = None
    on_statistics: Callable[[InboxStatistics], None] | None = None
    on_error: Callable[[Exception], None] | None = None
    after_run: Callable[[InboxItem], None] | None = None

    def __post_init__(self) -> None:
        if not callable(self.handler):
            raise _invalid("handler must be an async callable.")
        if isinstance(self.concurrency, bool) or not isinstance(self.concurrency, int):
            raise _invalid("concurrency must be an integer.")
        if not 1 <= self.concurrency <= MAX_INBOX_CLAIM:
            raise _invalid(f"concurrency must be in 1..{MAX_INBOX_CLAIM}.")
        if (
            isinstance(self.max_waiting, bool)
            or not isinstance(self.max_waiting, int)
            or not 0 <= self.max_waiting <= _MAX_WAITING
        ):
            raise _invalid(f"max_waiting must be an integer in 0..{_MAX_WAITING}.")
        timeout = _seconds(self.handler_timeout, "handler_timeout")
        if timeout * 1000 >= MAX_RETRY_DELAY_MS:
            raise _invalid("handler_timeout must be under 7 days.")
        if self.lease_ms is not None and (
            isinstance(self.lease_ms, bool)
            or not isinstance(self.lease_ms, int)
            or not timeout * 1000 < self.lease_ms <= MAX_RETRY_DELAY_MS
        ):
            raise _invalid("lease_ms must be an integer over handler_timeout, at most 7 days.")
        if not isinstance(self.policy, RetryPolicy):
            raise _invalid("policy must be a RetryPolicy.")
        _seconds(self.poll_interval, "poll_interval")
        if not isinstance(self.dead_horizon, timedelta) or self.dead_horizon <= timedelta(0):
            raise _invalid("dead_horizon must be a positive timedelta.")

    @property
    def lease(self) -> int:
        """The claim lease in ms: ``lease_ms``, or the deadline and a half plus 5 s."""
        if self.lease_ms is not None:
            return self.lease_ms
        return min(round(self.handler_timeout * 1500) + 5000, MAX_RETRY_DELAY_MS)


class InboxWorkerHandle:
    """Returned by ``nursery.start(run_inbox_worker, ...)``: wake, stop, wait until idle."""

    __slots__ = ("_finished", "_idle", "_idle_event", "_in_flight", "_scope", "_slots", "_wakeup")

    def __init__(self, options: InboxWorkerOptions) -> None:
        self._scope = anyio.CancelScope()
        self._finished = anyio.Event()
        self._wakeup = anyio.Event()
        self._in_flight = 0
        self._idle = False
        self._idle_event: anyio.Event | None = None
        self._slots = RunSlots(options.concurrency, options.max_waiting, self._wakeup_set)

    @property
    def in_flight(self) -> int:
        """How many runs are in flight now (paused ones included)."""
        return self._in_flight

    @property
    def waiting(self) -> int:
        """How many paused runs gave their slot back."""
        return self._slots.waiting

    def _wakeup_set(self) -> None:
        self._wakeup.set()

    def wake(self) -> None:
        """New rows were recorded: claim now (not idle until a claim finds nothing due)."""
        self._set_idle(False)
        self._wakeup.set()

    async def stop(self) -> None:
        """Stop claiming, wait for the runs in flight to end and settle, then return.
        Idempotent."""
        self._scope.cancel()
        await self._finished.wait()

    async def wait_idle(self) -> None:
        """Return once a claim found nothing due and no run is in flight (or the worker
        ended). Items retrying later are not due: they do not keep it busy."""
        while not self._idle and not self._finished.is_set():
            if self._idle_event is None:
                self._idle_event = anyio.Event()
            await self._idle_event.wait()

    def _set_idle(self, idle: bool) -> None:
        self._idle = idle
        if idle or self._finished.is_set():
            event, self._idle_event = self._idle_event, None
            if event is not None:
                event.set()


def _report_error(options: InboxWorkerOptions, exc: Exception) -> None:
    if options.on_error is not None:
        try:
            options.on_error(exc)
        except Exception as callback_exc:  # noqa: BLE001 -- the loop must survive
            _log.warning("inbox on_error callback failed: %s", type(callback_exc).__name__)
        return
    code = exc.code if isinstance(exc, PersistenceError) else type(exc).__name__
    _log.warning("inbox worker store call failed: %s", code)


def _outcome(verdict: Verdict, error: str | None) -> RunOutcome:
    if verdict is Verdict.SUCCEEDED:
        return "success"
    if verdict is Verdict.DEAD:
        return "dead"
    return "timeout" if error == TIMEOUT else "error"


async def _keep_lease(
    store: PersistenceStore, options: InboxWorkerOptions, control: RunControl, last: float
) -> None:
    """Renew the run's lease while it is paused: a third of the lease after the last renewal
    (``last``: the claim), and once when a pause ends (the lease then outlasts the deadline
    again). A taken lease ends the run."""
    lease = options.lease
    interval = lease / 3000
    while True:
        while not control.is_paused:
            await control._wait_change()
        while control.is_paused:
            await control._wait_change(last + interval - anyio.current_time())
            if control.is_paused and anyio.current_time() >= last + interval:
                last = anyio.current_time()
                if not await _extend(store, options, control, lease):
                    return
        last = anyio.current_time()
        if not await _extend(store, options, control, lease):
            return


async def _extend(
    store: PersistenceStore, options: InboxWorkerOptions, control: RunControl, lease: int
) -> bool:
    """One renewal; False once the lease is taken (the run is cancelled). A store fault is
    reported and the next renewal tries again."""
    item = control.item
    assert item.lease_id is not None
    try:
        kept = await store.extend_inbox_lease(
            id=item.id,
            lease_id=item.lease_id,
            until=options.now() + timedelta(milliseconds=lease),
        )
    except Exception as exc:  # noqa: BLE001 -- reported; tried again at the next renewal
        _report_error(options, exc)
        return True
    if not kept:
        control._lose()
    return kept


async def _attempt(
    store: PersistenceStore, options: InboxWorkerOptions, control: RunControl
) -> tuple[Failure | None, float]:
    """The handler once under its deadline (paused time not counted), its lease kept from
    its first pause on; the failure (None on success) and the time it ended."""

    async def run() -> None:
        with anyio.fail_after(options.handler_timeout) as scope:
            control._scope = scope
            await options.handler(control.item, control)

    async with anyio.create_task_group() as keeper:
        claimed = anyio.current_time()

        def keep() -> None:
            keeper.start_soon(_keep_lease, store, options, control, claimed)

        control._keep = keep
        failure = await attempt(run, None)
        ended = anyio.current_time()
        control._keep = None
        keeper.cancel_scope.cancel()
    if control.lease_lost:
        return Failure(LEASE_LOST), ended
    return failure, ended


async def _settle(
    store: PersistenceStore, options: InboxWorkerOptions, control: RunControl, decision: Decision
) -> RunOutcome:
    """Tell the store how the run ended, under its lease; a success commits what the run
    consumed and its state. A completion the store refuses (a consumed id not of the
    queue) is buried (``invalid_completion``): no rerun changes it. The outcome reported."""
    item = control.item
    assert item.lease_id is not None
    if decision.verdict is Verdict.SUCCEEDED:
        try:
            await store.mark_inbox_item_succeeded(
                id=item.id,
                lease_id=item.lease_id,
                consumed=control.consumed,
                state=control.state,
                now=options.now(),
            )
        except PersistenceValidationError:
            decision = Decision(Verdict.DEAD, error=INVALID_COMPLETION)
        else:
            return "success"
    if decision.verdict is Verdict.DEAD:
        await store.mark_inbox_item_dead(
            id=item.id, lease_id=item.lease_id, now=options.now(), error=decision.error
        )
    else:
        await store.mark_inbox_item_failed(
            id=item.id,
            lease_id=item.lease_id,
            now=options.now(),
            retry_delay_ms=decision.delay_ms,
            error=decision.error,
        )
    return _outcome(decision.verdict, decision.error)


async def _run(
    store: PersistenceStore,
    options: InboxWorkerOptions,
    handle: InboxWorkerHandle,
    item: InboxItem,
) -> None:
    """Run one claimed item and settle it under its lease; a store fault leaves it leased
    (its lease runs out and it runs again)."""
    try:
        started = anyio.current_time()
        control = RunControl(item)
        control._slots = handle._slots
        failure: Failure | None
        if exhausted(item.attempts, options.policy):
            failure, ended = Failure(EXHAUSTED), started
        else:
            failure, ended = await _attempt(store, options, control)
            if options.after_run is not None:
                options.after_run(item)
        duration = ended - started
        decision = settle(failure, attempts=item.attempts, policy=options.policy)
        outcome = _outcome(decision.verdict, decision.error)
        try:
            outcome = await _settle(store, options, control, decision)
        except Exception as exc:  # noqa: BLE001 -- reported; the lease runs out, it reruns
            _report_error(options, exc)
        if options.on_run is not None:
            run_report = InboxRun(kind=item.kind, outcome=outcome, duration=duration)
            try:
                options.on_run(run_report)
            except Exception as exc:  # noqa: BLE001 -- a broken reporter never ends the worker
                _report_error(options, exc)
    finally:
        handle._in_flight -= 1
        if control.holds_slot:
            handle._slots.release()
        handle._wakeup.set()


async def run_inbox_worker(
    store: PersistenceStore,
    options: InboxWorkerOptions,
    *,
    task_status: anyio.abc.TaskStatus[InboxWorkerHandle] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Claim and run inbox items until ``stop()`` or cancellation.

    Each turn claims as many heads as there are free run slots (a paused run's is free);
    then it waits for a run to end or pause, ``wake()`` or ``poll_interval``. Store faults
    go to ``on_error`` and never end the loop. ``stop()`` ends the claiming; the runs in
    flight end and settle first.
    """
    handle = InboxWorkerHandle(options)
    lease = options.lease
    next_prune = next_statistics = anyio.current_time()
    try:
        async with anyio.create_task_group() as runs:
            with handle._scope:
                task_status.started(handle)
                while True:
                    # A fresh event before claiming: a run ending or a wake() meanwhile
                    # makes the wait below return at once.
                    handle._wakeup = anyio.Event()
                    clock = anyio.current_time()
                    if clock >= next_prune:
                        next_prune = clock + _PRUNE_EVERY
                        await _prune(store, options)
                    if options.on_statistics is not None and clock >= next_statistics:
                        next_statistics = clock + _STATISTICS_EVERY
                        await _statistics(store, options)
                    free = handle._slots.free
                    if free > 0:
                        handle._slots.take(free)  # held across the claim: no resume takes them
                        items: list[InboxItem] | None = None
                        try:
                            items = await store.claim_inbox_items(
                                now=options.now(), limit=free, lease_ms=lease
                            )
                        except Exception as exc:  # noqa: BLE001 -- reported, tried again
                            _report_error(options, exc)
                        finally:
                            handle._slots.release(free - len(items or ()), wake=False)
                        if items is not None:
                            for item in items:
                                handle._in_flight += 1
                                runs.start_soon(_run, store, options, handle, item)
                            # Idle: nothing due, nothing running, and no wake() or run end
                            # since this claim began (its rows may be past the claim's view).
                            handle._set_idle(
                                not items and handle._in_flight == 0 and not handle._wakeup.is_set()
                            )
                    with anyio.move_on_after(options.poll_interval):
                        await handle._wakeup.wait()
    finally:
        handle._finished.set()
        handle._set_idle(handle._idle)


async def _prune(store: PersistenceStore, options: InboxWorkerOptions) -> None:
    try:
        now = options.now()
        await store.delete_dead_inbox_items(older_than=now - options.dead_horizon)
        await store.delete_expired_user_states(now=now)
    except Exception as exc:  # noqa: BLE001 -- reported, tried again in an hour
        _report_error(options, exc)


async def _statistics(store: PersistenceStore, options: InboxWorkerOptions) -> None:
    assert options.on_statistics is not None
    try:
        snapshot = await store.inbox_statistics()
    except Exception as exc:  # noqa: BLE001 -- reported, tried again next turn
        _report_error(options, exc)
        return
    try:
        options.on_statistics(snapshot)
    except Exception as exc:  # noqa: BLE001 -- a broken reporter never ends the worker
        _report_error(options, exc)


class InboxReporter:
    """Publishes the inbox's metrics to a caller-owned prometheus registry (never the global
    one); no user data in any label.

    Use it as ``on_run`` (``svc_handler_runs_total{outcome}``,
    ``svc_handler_duration_seconds``) and its ``refresh`` as ``on_statistics``
    (``svc_inbox_items{state}``, ``svc_inbox_oldest_pending_seconds`` by ``now``).
    """

    __slots__ = ("_duration", "_items", "_now", "_oldest", "_runs")

    def __init__(
        self, registry: CollectorRegistry, *, now: Callable[[], datetime] = utc_now
    ) -> None:
        self._now = now
        self._items = Gauge(
            "svc_inbox_items", "Inbox items by state.", labelnames=("state",), registry=registry
        )
        self._oldest = Gauge(
            "svc_inbox_oldest_pending_seconds",
            "Age of the oldest inbox item not yet run to its end (0 when none).",
            registry=registry,
        )
        self._duration = Histogram(
            "svc_handler_duration_seconds", "Handler run time.", registry=registry
        )
        self._runs = Counter(
            "svc_handler_runs",
            "Handler runs, by outcome.",
            labelnames=("outcome",),
            registry=registry,
        )
        for state in ("pending", "running", "dead"):
            self._items.labels(state=state).set(0)
        for outcome in ("success", "error", "timeout", "dead"):
            self._runs.labels(outcome=outcome)

    def __call__(self, run: InboxRun) -> None:
        self._runs.labels(outcome=run.outcome).inc()
        self._duration.observe(run.duration)

    def refresh(self, statistics: InboxStatistics) -> None:
        """Set the gauges from a snapshot (``inbox_statistics()``)."""
        self._items.labels(state="pending").set(statistics.pending)
        self._items.labels(state="running").set(statistics.running)
        self._items.labels(state="dead").set(statistics.dead)
        oldest = statistics.oldest_pending_at
        age = 0.0 if oldest is None else (self._now() - oldest).total_seconds()
        self._oldest.set(max(age, 0.0))
