"""The lease/retry/dead-letter policy the outbox and inbox workers share.

A worker leases an item, runs its handler once (``attempt``, under a deadline), reads how the
run ended (``failure_of``: a class name, a ``GraphError``'s retry hint, a ``DeadLetter``'s
reason) and lets ``settle`` decide what the store is told: succeeded, retry after a delay
(exponential backoff with jitter, at least a retry hint's wait), or dead (the last attempt
spent, a failure no retry can change, or a dead letter).
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

import anyio

__all__ = [
    "EXHAUSTED",
    "MAX_ERROR_LEN",
    "MAX_RETRY_DELAY_MS",
    "TIMEOUT",
    "DeadLetter",
    "Decision",
    "Failure",
    "RetryPolicy",
    "Verdict",
    "attempt",
    "exhausted",
    "failure_of",
    "retry_delay_for",
    "settle",
]

MAX_RETRY_DELAY_MS: Final = 7 * 86_400_000
"""The longest retry delay a store takes (seven days)."""
MAX_ERROR_LEN: Final = 80
"""Characters of a ``last_error`` kept: a class name, ``"timeout"`` or a dead letter's reason."""
TIMEOUT: Final = "timeout"
"""The ``last_error`` of an item whose handler overran its deadline."""
EXHAUSTED: Final = "attempts_exhausted"
"""The ``last_error`` of an item claimed with no attempt left (a crash loop)."""


class DeadLetter(Exception):
    """Raised by a handler: bury the item at once (no retry), ``reason`` kept as its
    ``last_error``. ``reason`` is a short label (``key_unavailable``,
    ``send_outcome_unknown``): never user data, at most 80 characters kept."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How failed runs are retried: after ``retry_delay_ms``, doubling per attempt up to
    ``max_retry_delay_ms``, jittered by ``jitter`` (floats in [0, 1); None for none); the
    failure of attempt ``max_attempts`` makes the item dead (None: never)."""

    retry_delay_ms: int
    max_retry_delay_ms: int
    max_attempts: int | None
    jitter: Callable[[], float] | None = None


def retry_delay_for(
    attempts: int,
    *,
    retry_delay_ms: int,
    max_retry_delay_ms: int,
    jitter: Callable[[], float] | None,
) -> int:
    """Exponential backoff: ``retry_delay_ms * 2 ** (attempts - 1)`` capped at the maximum.

    With ``jitter`` (a source of floats in [0, 1)) the delay is drawn from
    [delay / 2, delay): equal jitter, so retries of items that failed together spread out.
    """
    delay: int = min(max_retry_delay_ms, retry_delay_ms * 2 ** min(max(attempts - 1, 0), 40))
    if jitter is not None:
        delay = delay // 2 + int((delay - delay // 2) * min(max(jitter(), 0.0), 1.0))
    return max(0, min(delay, MAX_RETRY_DELAY_MS))


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed attempt: what ``last_error`` keeps; whether no retry can change it
    (``final``: a dead letter, a request to fix) and the least wait before one (``wait``)."""

    error: str
    final: bool = False
    wait: float | None = None


def failure_of(exc: Exception) -> Failure:
    """The failure of ``exc``: a ``DeadLetter`` is final with its reason; a ``GraphError`` is
    read through its retry hint; anything else is its class name, retried. An exception
    group (a handler's own nursery wraps what its tasks raised) is read as its one
    exception, and is final with the reason of a ``DeadLetter`` among several.

    ``svc.graph`` is imported here, and only once it is loaded: no ``GraphError``
    exists before, and the store's import stays free of the HTTP client.
    """
    if isinstance(exc, ExceptionGroup):
        exc = _read_group(exc)
    if isinstance(exc, DeadLetter):
        return Failure(str(exc.reason)[:MAX_ERROR_LEN] or "dead_letter", final=True)
    error = type(exc).__name__[:MAX_ERROR_LEN]
    if "svc.graph" not in sys.modules:
        return Failure(error)
    from svc.graph import GraphError, RetryAction

    if not isinstance(exc, GraphError):
        return Failure(error)
    hint = exc.retry_hint
    final = hint.action in (RetryAction.FIX_REQUEST, RetryAction.DO_NOT_RETRY)
    return Failure(error, final, hint.after if hint.action is RetryAction.RETRY_LATER else None)


def _read_group(group: ExceptionGroup[Exception]) -> Exception:
    """What a group's failure is read as: a ``DeadLetter`` in it, else its one exception
    (through nested groups of one), else the group itself."""
    dead = group.subgroup(DeadLetter)
    found: Exception = dead if dead is not None else group
    while isinstance(found, ExceptionGroup) and (dead is not None or len(found.exceptions) == 1):
        found = found.exceptions[0]
    return found


async def attempt(run: Callable[[], Awaitable[None]], timeout: float | None) -> Failure | None:
    """Run once; None on success, else the failure (``TIMEOUT`` when the deadline passed: the
    run is cancelled there)."""
    try:
        if timeout is None:
            await run()
        else:
            with anyio.fail_after(timeout):
                await run()
    except TimeoutError:
        return Failure(TIMEOUT)
    except Exception as exc:  # noqa: BLE001 -- any handler failure is settled by the policy
        return failure_of(exc)
    return None


def exhausted(attempts: int, policy: RetryPolicy) -> bool:
    """Whether an item claimed for its ``attempts``-th time is past its last attempt (its
    earlier runs crashed before they settled): it is buried without a run."""
    return policy.max_attempts is not None and attempts > policy.max_attempts


class Verdict(enum.Enum):
    """What the store is told about a run."""

    SUCCEEDED = "succeeded"
    RETRY = "retry"
    DEAD = "dead"


@dataclass(frozen=True, slots=True)
class Decision:
    """``settle``'s answer: the verdict, the retry delay (ms) and the error kept."""

    verdict: Verdict
    delay_ms: int = 0
    error: str | None = None


def settle(failure: Failure | None, *, attempts: int, policy: RetryPolicy) -> Decision:
    """The verdict on a run that was attempt ``attempts``: succeeded; dead when the failure
    is final or the last attempt is spent; else retry after the backoff, or the retry
    hint's wait when that is longer (a rate limit, an upgrade)."""
    if failure is None:
        return Decision(Verdict.SUCCEEDED)
    if failure.final or (policy.max_attempts is not None and attempts >= policy.max_attempts):
        return Decision(Verdict.DEAD, error=failure.error)
    backoff = retry_delay_for(
        attempts,
        retry_delay_ms=policy.retry_delay_ms,
        max_retry_delay_ms=policy.max_retry_delay_ms,
        jitter=policy.jitter,
    )
    if failure.wait is not None:
        backoff = max(backoff, min(round(failure.wait * 1000), MAX_RETRY_DELAY_MS))
    return Decision(Verdict.RETRY, delay_ms=backoff, error=failure.error)
