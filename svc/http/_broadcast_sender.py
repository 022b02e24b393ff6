"""The paced broadcast sender: claims send slots from the store and posts each at its slot.

Start it with structured concurrency (``create_app`` does, in the app's nursery,
when a store is present)::

    handle = await nursery.start(run_broadcast_sender, store, post, numbers, options)
    ...
    await handle.stop()   # stops claiming, lets the claimed sends finish

The pacing is the store's: every instance on one database draws slots from the
same per-number row, so together they stay under ``rate_per_second``. A send is
claimed before it is posted and never claimed again once posted (see
``svc.store._broadcasts``). What to do with an upstream refusal is decided by
the pure ``decide`` below.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, Literal

import anyio
import anyio.abc

from svc._json import loads_strict
from svc.graph import (
    GraphApiError,
    GraphError,
    GraphNetworkError,
    RetryAction,
    TooManyMessagesError,
)
from svc.store import BroadcastSend, BroadcastStore, PersistenceError, utc_now

__all__ = [
    "DEFAULT_RATE_PER_SECOND",
    "MAX_RATE_PER_SECOND",
    "BroadcastOptions",
    "BroadcastPost",
    "BroadcastSenderHandle",
    "BroadcastSenderStatistics",
    "Decision",
    "backoff_seconds",
    "decide",
    "run_broadcast_sender",
]

DEFAULT_RATE_PER_SECOND: Final = 80.0
"""The platform's default throughput of a business number (messages per second)."""
MAX_RATE_PER_SECOND: Final = 1000.0
"""The platform's highest throughput tier."""

BroadcastPost = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
"""Posts one payload from a business number; raises ``GraphError`` when refused."""

_DURATIONS: Final = (
    "interval",
    "idle_interval",
    "horizon",
    "lease",
    "pair_backoff",
    "rate_backoff",
    "max_backoff",
)
_log: Final = logging.getLogger("svc.http.broadcasts")


def _invalid(message: str) -> ValueError:
    return ValueError(message)


@dataclass(frozen=True, slots=True, kw_only=True)
class BroadcastOptions:
    """The sender's pacing and backoff. Durations are seconds (trio style).

    ``interval`` is the pause between claim ticks while there is work,
    ``idle_interval`` while there is none (a new broadcast on this instance
    wakes the sender at once), ``horizon`` how far ahead slots are claimed,
    ``lease`` how long a claimed send may stay in flight before it counts as
    interrupted. ``now``, ``sleep`` and ``random`` are the
    injected clock, sleep and jitter source. ``enabled=False`` keeps this
    instance from sending (it still accepts broadcasts; another instance sends).
    """

    enabled: bool = True
    rate_per_second: float = DEFAULT_RATE_PER_SECOND
    interval: float = 0.1
    idle_interval: float = 1.0
    horizon: float = 0.5
    lease: float = 60.0
    batch_limit: int = 500
    pair_backoff: float = 6.0
    rate_backoff: float = 1.0
    max_backoff: float = 300.0
    max_attempts: int = 10
    now: Callable[[], datetime] = utc_now
    sleep: Callable[[float], Awaitable[None]] = field(default=anyio.sleep)
    random: Callable[[], float] = field(default=random.random)

    def __post_init__(self) -> None:
        rate = self.rate_per_second
        if isinstance(rate, bool) or not isinstance(rate, int | float):
            raise _invalid("rate_per_second must be a number.")
        if not 0 < rate <= MAX_RATE_PER_SECOND:
            raise _invalid(f"rate_per_second must be in (0, {MAX_RATE_PER_SECOND:g}].")
        for name in _DURATIONS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise _invalid(f"{name} must be a positive number of seconds.")
        if not self.interval < self.horizon <= 60 or not self.horizon < self.lease <= 3600:
            raise _invalid("need interval < horizon <= 60 and horizon < lease <= 3600 seconds.")
        for name, high in (("batch_limit", 1000), ("max_attempts", 100)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
                raise _invalid(f"{name} must be an integer in 1..{high}.")


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """What to do after one attempt: ``sent``, ``failed`` (with a code) or ``retry``.

    A retry waits ``delay`` seconds; ``number_wide`` retries also push the
    number's next slot back (the whole number hit its limit, not one pair).
    """

    action: Literal["sent", "failed", "retry"]
    code: str | None = None
    delay: float = 0.0
    number_wide: bool = False


def backoff_seconds(attempt: int, *, base: float, cap: float, jitter: float) -> float:
    """Exponential backoff with jitter: ``base * 2**(attempt-1)`` capped, scaled into [0.5, 1]."""
    raw = min(cap, base * float(2 ** max(0, min(attempt - 1, 30))))
    return raw * (0.5 + 0.5 * min(1.0, max(0.0, jitter)))


def decide(error: GraphError | None, *, attempts: int, options: BroadcastOptions) -> Decision:
    """The outcome of one attempt (``error`` None means the platform accepted it).

    The error's retry hint decides (``svc.graph`` "Retry hints"): ``retry_later``
    (a rate limit, a throughput upgrade's 131057, a connection never made)
    retries after the exponential backoff or the hint's wait, whichever is
    longer (capped at ``max_backoff``); the pair limit (``TooManyMessagesError``,
    131056) backs off that recipient, any other the whole number. After
    ``max_attempts`` it fails with its code. Every other hint fails at once:
    an ``unknown`` outcome (a 5xx, a connection lost after sending) may have
    reached the platform, so it is never retried (at most once).
    """
    if error is None:
        return Decision(action="sent")
    code = _code(error)
    hint = error.retry_hint
    if hint.action is RetryAction.RETRY_LATER and attempts < options.max_attempts:
        pair = isinstance(error, TooManyMessagesError)
        base = options.pair_backoff if pair else options.rate_backoff
        delay = backoff_seconds(
            attempts, base=base, cap=options.max_backoff, jitter=options.random()
        )
        if hint.after is not None:
            delay = max(delay, min(hint.after, options.max_backoff))
        return Decision(action="retry", code=code, delay=delay, number_wide=not pair)
    return Decision(action="failed", code=code)


def _code(error: GraphError) -> str:
    if isinstance(error, GraphApiError):
        if error.code is not None:
            return str(error.code)
        return f"http_{error.status}"
    return "network" if isinstance(error, GraphNetworkError) else "request"


@dataclass(frozen=True, slots=True, kw_only=True)
class BroadcastSenderStatistics:
    """An immutable snapshot of the sender's counters."""

    ticks: int
    claimed: int
    sent: int
    failed: int
    retried: int
    errors: int


class BroadcastSenderHandle:
    """Returned by ``nursery.start(run_broadcast_sender, ...)``."""

    __slots__ = ("_counts", "_finished", "_in_flight", "_running", "_timer", "_wake")

    def __init__(self) -> None:
        self._timer = anyio.CancelScope()
        self._finished = anyio.Event()
        self._wake = anyio.Event()
        self._running = True
        self._in_flight = 0
        self._counts = dict.fromkeys(("ticks", "claimed", "sent", "failed", "retried", "errors"), 0)

    def running(self) -> bool:
        return self._running

    def statistics(self) -> BroadcastSenderStatistics:
        return BroadcastSenderStatistics(**self._counts)

    def wake(self) -> None:
        """Claim now instead of at the end of an idle pause (a broadcast was just stored)."""
        self._wake.set()

    async def stop(self) -> None:
        """Stop claiming and wait for the claimed sends to finish. Idempotent."""
        self._running = False
        self._timer.cancel()
        await self._finished.wait()

    def _add(self, name: str, count: int = 1) -> None:
        self._counts[name] += count


def _message_id(answer: Mapping[str, Any]) -> str | None:
    messages = answer.get("messages")
    if isinstance(messages, list) and messages and isinstance(messages[0], dict):
        value = messages[0].get("id")
        if isinstance(value, str) and 0 < len(value) <= 256:
            return value
    return None


class _Sender:
    __slots__ = ("handle", "options", "paused_until", "post", "store")

    def __init__(
        self,
        store: BroadcastStore,
        post: BroadcastPost,
        options: BroadcastOptions,
        handle: BroadcastSenderHandle,
    ) -> None:
        self.store = store
        self.post = post
        self.options = options
        self.handle = handle
        self.paused_until: dict[str, datetime] = {}
        """Per number: no post before this (a rate-limit answer); claimed sends go back."""

    async def tick(self, numbers: Sequence[str], group: anyio.abc.TaskGroup) -> int:
        """Claim each number's due sends and start them; return how many were claimed."""
        options = self.options
        self.handle._add("ticks")
        total = 0
        for number in numbers:
            # Shielded: a claim that committed must reach its send tasks.
            with anyio.CancelScope(shield=True):
                claimed = await self.store.claim_broadcast_sends(
                    phone_number_id=number,
                    now=options.now(),
                    rate_per_second=options.rate_per_second,
                    horizon_ms=max(1, round(options.horizon * 1000)),
                    limit=options.batch_limit,
                    lease_ms=round(options.lease * 1000),
                )
            self.handle._add("claimed", len(claimed))
            total += len(claimed)
            for item in claimed:
                self.handle._in_flight += 1
                group.start_soon(self.send_one, number, item)
        return total

    async def send_one(self, number: str, item: BroadcastSend) -> None:
        """One claimed send; an unexpected error is counted and logged by class, and its row
        is left to its lease (it ends ``interrupted``: the request may have gone out)."""
        try:
            await self._send_one(number, item)
        except Exception as exc:  # noqa: BLE001 -- one send must never end the sender
            self.handle._add("errors")
            _log.warning("broadcast send failed: %s", type(exc).__name__[:80])
        finally:
            self.handle._in_flight -= 1

    async def _send_one(self, number: str, item: BroadcastSend) -> None:
        options = self.options
        delay = (item.send_at - options.now()).total_seconds()
        if delay > 0:
            try:
                await options.sleep(delay)
            except anyio.get_cancelled_exc_class():
                with anyio.CancelScope(shield=True):
                    await self._finish(item, "release", None, None, 0.0)
                raise
        paused = self.paused_until.get(number)
        if paused is not None and options.now() < paused:
            # The number hit its limit after this send was claimed: back in the queue.
            delay = (paused - options.now()).total_seconds()
            await self._finish(item, "release", None, None, delay)
            return
        error: GraphError | None = None
        answer: Mapping[str, Any] = {}
        try:
            answer = await self.post(number, loads_strict(item.payload_json))
        except GraphError as exc:
            error = exc
        # Shielded: once posted, the outcome must be written even while the sender stops.
        with anyio.CancelScope(shield=True):
            await self._settle(number, item, error, answer)

    async def _settle(
        self,
        number: str,
        item: BroadcastSend,
        error: GraphError | None,
        answer: Mapping[str, Any],
    ) -> None:
        options = self.options
        decision = decide(error, attempts=item.attempts, options=options)
        if decision.action == "retry" and decision.number_wide:
            until = options.now() + timedelta(seconds=decision.delay)
            self.paused_until[number] = max(until, self.paused_until.get(number, until))
            await self._guard(
                self.store.delay_broadcast_pacing(phone_number_id=number, until=until)
            )
        if decision.action == "sent":
            self.handle._add("sent")
            await self._finish(item, "sent", None, _message_id(answer), 0.0)
        elif decision.action == "failed":
            self.handle._add("failed")
            await self._finish(item, "failed", decision.code, None, 0.0)
        else:
            self.handle._add("retried")
            await self._finish(item, "retry", decision.code, None, decision.delay)

    async def _finish(
        self,
        item: BroadcastSend,
        how: Literal["sent", "failed", "retry", "release"],
        code: str | None,
        message_id: str | None,
        delay: float,
    ) -> None:
        now = self.options.now()
        if how in ("retry", "release"):
            await self._guard(
                self.store.retry_broadcast_send(
                    broadcast_id=item.broadcast_id,
                    seq=item.seq,
                    lease_id=item.lease_id,
                    next_attempt_at=now + timedelta(seconds=delay),
                    now=now,
                )
            )
            return
        outcome: Literal["sent", "failed"] = "sent" if how == "sent" else "failed"
        await self._guard(
            self.store.complete_broadcast_send(
                broadcast_id=item.broadcast_id,
                seq=item.seq,
                lease_id=item.lease_id,
                outcome=outcome,
                now=now,
                error_code=code,
                wa_message_id=message_id,
            )
        )

    async def _guard(self, call: Awaitable[object]) -> None:
        """A store write whose fault is counted and logged by code; the lease settles it later."""
        try:
            await call
        except PersistenceError as exc:
            self.handle._add("errors")
            _log.warning("broadcast store write failed: %s", exc.code)


async def run_broadcast_sender(
    store: BroadcastStore,
    post: BroadcastPost,
    numbers: Sequence[str],
    options: BroadcastOptions,
    *,
    task_status: anyio.abc.TaskStatus[BroadcastSenderHandle] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Claim and send every ``interval`` until ``stop()`` or cancellation.

    A tick's store fault is counted and logged by code; it never ends the loop.
    """
    handle = BroadcastSenderHandle()
    sender = _Sender(store, post, options, handle)
    expired_at: datetime | None = None
    try:
        async with anyio.create_task_group() as sends:
            with handle._timer:
                task_status.started(handle)
                while True:
                    claimed = 0
                    try:
                        now = options.now()
                        if expired_at is None or now - expired_at >= timedelta(seconds=1):
                            await store.expire_broadcast_leases(now=now)
                            expired_at = now
                        claimed = await sender.tick(numbers, sends)
                    except PersistenceError as exc:
                        handle._add("errors")
                        _log.warning("broadcast tick failed: %s", exc.code)
                    if claimed or handle._in_flight:
                        await options.sleep(options.interval)
                        continue
                    with anyio.move_on_after(options.idle_interval):
                        await handle._wake.wait()
                    handle._wake = anyio.Event()
    finally:
        handle._running = False
        handle._finished.set()
