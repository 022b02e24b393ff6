"""The inspector's and the terminal's rendering of the runtime's events, fed directly."""

from __future__ import annotations

import pytest

from svc.dev import describe, terminal_line
from svc.runtime import (
    RunEnded,
    RunStarted,
    StateWritten,
    UpdateQueued,
    UpdateTaken,
    WaitEnded,
    WaitStarted,
)

KEY = "u" * 64
QUEUE = "q" * 64


def _boom() -> ValueError:
    try:
        raise ValueError("the order book is closed")
    except ValueError as exc:
        return exc


def test_an_update_walks_pending_running_waiting_done() -> None:
    steps = [
        describe(UpdateQueued(update_key=KEY, queue=QUEUE, kind="message")),
        describe(RunStarted(update_key=KEY, queue=QUEUE, kind="message", attempt=1)),
        describe(WaitStarted(update_key=KEY, queue=QUEUE, listener="reply", timeout=120.0)),
        describe(WaitEnded(update_key=KEY, queue=QUEUE, listener="reply", taken="t" * 64)),
        describe(
            RunEnded(
                update_key=KEY, queue=QUEUE, kind="message", attempt=1, outcome="success",
                seconds=0.01234,
            )
        ),
    ]
    assert [step["step"] for step in steps] == ["pending", "running", "waiting", "running", "done"]
    assert steps[2]["timeout"] == 120.0
    assert steps[4]["seconds"] == 0.0123
    assert terminal_line(steps[2]) == (
        f"dev: waiting update={KEY[:12]} listener=reply timeout=120 s"
    )
    assert terminal_line(steps[4]) == f"dev: done message update={KEY[:12]} attempt=1 12.3 ms"


def test_a_timed_out_wait_and_a_consumed_update() -> None:
    timed_out = describe(WaitEnded(update_key=KEY, queue=QUEUE, listener="click", taken=None))
    consumed = describe(UpdateTaken(update_key="t" * 64, queue=QUEUE, by=KEY, how="wait"))
    assert timed_out["step"] == "wait timed out"
    assert consumed == {
        "step": "consumed", "update": "t" * 64, "queue": QUEUE, "by": KEY, "how": "wait",
    }
    assert terminal_line(consumed).endswith(f"by={KEY[:12]} (wait)")


@pytest.mark.parametrize(
    ("outcome", "step"), [("error", "retried"), ("timeout", "retried"), ("dead", "dead")]
)
def test_a_failed_run_shows_its_outcome_retry_and_traceback(outcome: str, step: str) -> None:
    error = _boom() if outcome != "timeout" else None
    record = describe(
        RunEnded(
            update_key=KEY, queue=QUEUE, kind="message", attempt=3, outcome=outcome,  # type: ignore[arg-type]
            seconds=1.5, retry_in=4.0 if step == "retried" else None,
            reason="max_attempts" if step == "dead" else None, error=error,
        )
    )
    assert record["step"] == step
    assert record["attempt"] == 3
    line = terminal_line(record)
    assert line.startswith(f"dev: {step} message update={KEY[:12]} attempt=3 1500.0 ms")
    if error is not None:
        assert record["error"] == "ValueError"
        assert "Traceback (most recent call last)" in record["traceback"]
        assert "ValueError: the order book is closed" in record["traceback"]
        assert line.splitlines()[-1] == "ValueError: the order book is closed"
        assert "in _boom" in line
    if step == "retried":
        assert "retry in 4 s" in line
    if step == "dead":
        assert "reason=max_attempts" in line


def test_written_state_is_shown_decrypted_and_a_deleted_one_says_so() -> None:
    written = describe(StateWritten(queue=QUEUE, document=b'{"name": "Kerry", "step": 2}'))
    deleted = describe(StateWritten(queue=QUEUE, document=None))
    assert written["state"] == {"name": "Kerry", "step": 2}
    assert terminal_line(written) == f'dev: state queue={QUEUE[:12]} {{"name": "Kerry", "step": 2}}'
    assert deleted["deleted"] is True
    assert terminal_line(deleted) == f"dev: state queue={QUEUE[:12]} deleted"


def test_an_event_kind_not_known_yet_is_shown_by_its_name() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class LeaseRenewed:
        update_key: str
        queue: str

    record = describe(LeaseRenewed(update_key=KEY, queue=QUEUE))  # type: ignore[arg-type]
    assert record == {"step": "LeaseRenewed", "update": KEY, "queue": QUEUE}
    assert terminal_line(record) == f"dev: LeaseRenewed update={KEY[:12]}"
