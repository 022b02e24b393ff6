"""Status ranking and the conversation window: pure functions, property-tested."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc.store import (
    DEFAULT_WINDOW_MS,
    MAX_WINDOW_MS,
    PersistenceValidationError,
    apply_status,
    conversation_window,
    format_timestamp,
    status_rank,
)
from svc.store._status import fold_statuses
from svc.store._time import from_ms, to_ms, utc_now

from .conftest import T0

STATUSES = st.sampled_from(["pending", "sent", "delivered", "read", "failed", "deleted", "x"])
MILLIS = st.integers(min_value=0, max_value=4_102_444_800_000)


def test_ranks_match_the_spec() -> None:
    assert [status_rank(s) for s in ("pending", "sent", "delivered", "read")] == [0, 1, 2, 3]
    assert status_rank("failed") == 0 and status_rank("anything") == 0


@given(STATUSES, MILLIS, STATUSES, MILLIS)
def test_apply_status_properties(current: str, updated: int, event: str, at: int) -> None:
    status, new_updated = apply_status(current, updated, event, at)
    assert new_updated >= updated  # updated_at never moves backward
    assert status in (current, event)
    if status == current:
        assert new_updated == updated
    if current in ("delivered", "read"):
        assert status != "failed"
    if status != "failed" and current != "failed":
        assert status_rank(status) >= status_rank(current)  # rank never goes down


@given(STATUSES, MILLIS, st.lists(st.tuples(STATUSES, MILLIS), max_size=8))
def test_fold_is_monotone_in_time(status: str, updated: int, events: list[tuple[str, int]]) -> None:
    _, final_updated = fold_statuses(status, updated, events)
    assert final_updated >= updated
    assert final_updated in {updated, *(at for _, at in events)}


@given(st.lists(st.sampled_from(["sent", "delivered", "read"]), min_size=1, max_size=6))
def test_ranked_statuses_commute(events: list[str]) -> None:
    """Without ``failed``, the order in which events arrive does not matter."""
    forward = fold_statuses("pending", 0, [(s, 1) for s in events])
    backward = fold_statuses("pending", 0, [(s, 1) for s in reversed(events)])
    assert forward[0] == backward[0] == max(events, key=status_rank)


# --- conversation window


def test_no_inbound_history_is_closed() -> None:
    window = conversation_window(now=T0, last_inbound_at=None)
    assert (window.open, window.last_inbound_at, window.expires_at, window.remaining_ms) == (
        False,
        None,
        None,
        0,
    )


def test_open_strictly_below_the_window_and_closed_at_exactly_the_window() -> None:
    last = T0 - timedelta(milliseconds=DEFAULT_WINDOW_MS - 1)
    just_open = conversation_window(now=T0, last_inbound_at=last)
    assert just_open.open and just_open.remaining_ms == 1
    assert just_open.expires_at == T0 + timedelta(milliseconds=1)
    exact = conversation_window(now=T0, last_inbound_at=T0 - timedelta(hours=24))
    assert not exact.open and exact.remaining_ms == 0 and exact.expires_at == T0
    fresh = conversation_window(now=T0, last_inbound_at=T0)
    assert fresh.open and fresh.remaining_ms == DEFAULT_WINDOW_MS


def test_clock_skew_is_open_with_the_full_window() -> None:
    window = conversation_window(
        now=T0, last_inbound_at=T0 + timedelta(seconds=3), window_ms=60_000
    )
    assert window.open and window.remaining_ms == 60_000
    assert window.expires_at == T0 + timedelta(minutes=1)


def test_closed_long_ago_reports_zero() -> None:
    window = conversation_window(now=T0, last_inbound_at=T0 - timedelta(days=30))
    assert not window.open and window.remaining_ms == 0


@pytest.mark.parametrize("bad", [0, -1, MAX_WINDOW_MS + 1, 1.5, True, "86400000", None])
def test_window_ms_is_validated(bad: object) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        conversation_window(now=T0, last_inbound_at=None, window_ms=bad)  # type: ignore[arg-type]
    assert info.value.code == "invalid_options"


def test_window_bounds_are_accepted() -> None:
    assert conversation_window(now=T0, last_inbound_at=T0, window_ms=1).remaining_ms == 1
    longest = conversation_window(now=T0, last_inbound_at=T0, window_ms=MAX_WINDOW_MS)
    assert longest.remaining_ms == MAX_WINDOW_MS


def test_naive_times_are_refused() -> None:
    with pytest.raises(PersistenceValidationError):
        conversation_window(now=datetime(2026, 1, 1), last_inbound_at=None)


@given(MILLIS, st.integers(min_value=-(10**10), max_value=10**10), st.integers(1, MAX_WINDOW_MS))
def test_window_properties(now_ms: int, age: int, window_ms: int) -> None:
    now = from_ms(now_ms)
    window = conversation_window(
        now=now, last_inbound_at=now - timedelta(milliseconds=age), window_ms=window_ms
    )
    assert 0 <= window.remaining_ms <= window_ms
    assert window.open == (age < window_ms)
    assert window.open == (window.remaining_ms > 0)
    if age >= 0:
        assert window.remaining_ms == max(0, window_ms - age)
        assert window.expires_at == now - timedelta(milliseconds=age - window_ms)
    else:
        assert window.remaining_ms == window_ms


# --- timestamps


def test_timestamps_format_as_utc_z_milliseconds() -> None:
    assert format_timestamp(T0) == "2026-11-21T10:15:30.000Z"
    plus_two = timezone(timedelta(hours=2))
    moment = datetime(2026, 11, 21, 12, 15, 30, 987_654, tzinfo=plus_two)
    assert format_timestamp(moment) == "2026-11-21T10:15:30.987Z"


@given(st.datetimes(max_value=datetime(9998, 12, 31, 23, 59, 59, 999_999), timezones=st.just(UTC)))
def test_ms_round_trip_floors_to_milliseconds(moment: datetime) -> None:
    back = from_ms(to_ms(moment))
    assert back <= moment < back + timedelta(milliseconds=1)


@given(st.datetimes(min_value=datetime(9999, 1, 1), timezones=st.just(UTC)))
def test_times_from_the_year_9999_on_are_refused(moment: datetime) -> None:
    with pytest.raises(PersistenceValidationError):
        to_ms(moment)


def test_the_default_clock_reads_utc_truncated_to_the_millisecond() -> None:
    for _ in range(200):
        now = utc_now()
        assert now.tzinfo is UTC and now.microsecond % 1000 == 0
        assert from_ms(to_ms(now)) == now
