"""The lease/retry/dead-letter policy the outbox and inbox workers share (sans-IO but for
``attempt``, which runs under trio's autojump clock)."""

from __future__ import annotations

import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from svc.graph import GraphNetworkError, GraphRequestValidationError
from svc.store import DeadLetter, RetryPolicy
from svc.store._leases import (
    EXHAUSTED,
    TIMEOUT,
    Decision,
    Failure,
    Verdict,
    attempt,
    exhausted,
    failure_of,
    settle,
)

POLICY = RetryPolicy(retry_delay_ms=1000, max_retry_delay_ms=8000, max_attempts=5)


def test_success_is_succeeded() -> None:
    assert settle(None, attempts=5, policy=POLICY) == Decision(Verdict.SUCCEEDED)


@pytest.mark.parametrize(("attempts", "delay"), [(1, 1000), (2, 2000), (3, 4000), (4, 8000)])
def test_a_failure_retries_with_exponential_backoff_capped(attempts: int, delay: int) -> None:
    assert settle(Failure("ValueError"), attempts=attempts, policy=POLICY) == Decision(
        Verdict.RETRY, delay_ms=delay, error="ValueError"
    )


def test_the_last_attempt_and_a_final_failure_are_dead() -> None:
    assert settle(Failure("ValueError"), attempts=5, policy=POLICY) == Decision(
        Verdict.DEAD, error="ValueError"
    )
    assert settle(Failure("x", final=True), attempts=1, policy=POLICY).verdict is Verdict.DEAD
    endless = RetryPolicy(retry_delay_ms=1, max_retry_delay_ms=1, max_attempts=None)
    assert settle(Failure("x"), attempts=10_000, policy=endless).verdict is Verdict.RETRY


def test_a_retry_hint_longer_than_the_backoff_wins() -> None:
    assert settle(Failure("E", wait=30.0), attempts=1, policy=POLICY).delay_ms == 30_000
    assert settle(Failure("E", wait=0.5), attempts=1, policy=POLICY).delay_ms == 1000


@given(attempts=st.integers(min_value=1, max_value=4), draw=st.floats(0.0, 0.999))
def test_jitter_draws_from_the_upper_half_of_the_delay(attempts: int, draw: float) -> None:
    policy = RetryPolicy(
        retry_delay_ms=1000, max_retry_delay_ms=8000, max_attempts=5, jitter=lambda: draw
    )
    full = 1000 * 2 ** (attempts - 1)
    delay = settle(Failure("E"), attempts=attempts, policy=policy).delay_ms
    assert full // 2 <= delay <= full


def test_an_item_past_its_attempts_is_exhausted() -> None:
    assert not exhausted(5, POLICY) and exhausted(6, POLICY)
    assert EXHAUSTED == "attempts_exhausted"


def test_how_failures_are_read() -> None:
    assert failure_of(DeadLetter("key_unavailable")) == Failure("key_unavailable", final=True)
    assert failure_of(DeadLetter("r" * 200)).error == "r" * 80
    assert failure_of(ValueError("secret text")) == Failure("ValueError")
    assert failure_of(GraphRequestValidationError("bad")).final
    assert failure_of(GraphNetworkError("down", request_sent=False)) == Failure(
        "GraphNetworkError", wait=None
    )
    assert DeadLetter("send_outcome_unknown").reason == "send_outcome_unknown"


def test_a_group_is_read_as_its_one_failure_or_its_dead_letter() -> None:
    """A handler's own nursery wraps what its tasks raised: a group of one (nested too) is
    read as that exception, its retry hint included; a dead letter among several is final;
    several other failures are the group's, retried."""
    dead = DeadLetter("key_unavailable")
    assert failure_of(ExceptionGroup("g", [ExceptionGroup("h", [dead])])) == Failure(
        "key_unavailable", final=True
    )
    assert failure_of(ExceptionGroup("g", [ValueError(), dead])) == Failure(
        "key_unavailable", final=True
    )
    assert failure_of(ExceptionGroup("g", [GraphRequestValidationError("bad")])).final
    assert failure_of(ExceptionGroup("g", [LookupError()])) == Failure("LookupError")
    assert failure_of(ExceptionGroup("g", [LookupError(), ValueError()])) == Failure(
        "ExceptionGroup"
    )


async def test_attempt_reports_success_failure_and_a_cancelled_overrun(
    autojump_clock: trio.testing.MockClock,
) -> None:
    cancelled: list[bool] = []

    async def ok() -> None:
        await trio.sleep(1)

    async def boom() -> None:
        raise DeadLetter("send_outcome_unknown")

    async def hang() -> None:
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            cancelled.append(True)
            raise

    assert await attempt(ok, 5.0) is None
    assert await attempt(boom, None) == Failure("send_outcome_unknown", final=True)
    start = trio.current_time()
    assert await attempt(hang, 30.0) == Failure(TIMEOUT)
    assert trio.current_time() - start == pytest.approx(30.0)
    assert cancelled == [True]
