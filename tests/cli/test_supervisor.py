"""The worker supervisor's pure parts: how an exit is named, and the restart limit's window.

Real processes (a worker killed under load, workers dying past the limit) are in
``tests/reliability/test_worker_supervision.py``.
"""

from __future__ import annotations

import signal

from svc.cli._supervisor import RestartPolicy, Supervisor, exit_cause


def test_an_exit_is_named_by_its_signal_or_its_code() -> None:
    assert exit_cause(-signal.SIGKILL) == "SIGKILL"
    assert exit_cause(-signal.SIGSEGV) == "SIGSEGV"
    assert exit_cause(1) == "exit code 1"
    assert exit_cause(0) == "exit code 0"
    assert exit_cause(-200) == "signal 200"
    assert exit_cause(None) == "an unknown cause"


def _supervisor(limit: int, window: float) -> Supervisor:
    return Supervisor(lambda *_: None, 2, RestartPolicy(limit=limit, window=window), print)


def test_the_limit_counts_replacements_within_a_sliding_window() -> None:
    supervisor = _supervisor(limit=2, window=60)
    assert supervisor._may_replace(0.0)
    assert supervisor._may_replace(10.0)
    # A third within 60 s of the first two is refused...
    assert not supervisor._may_replace(59.0)
    # ...and allowed once the first has left the window.
    assert supervisor._may_replace(60.5)
    assert not supervisor._may_replace(61.0)
    assert supervisor._may_replace(125.0)


def test_a_limit_of_zero_replaces_nothing() -> None:
    supervisor = _supervisor(limit=0, window=60)
    assert not supervisor._may_replace(0.0)
    assert not supervisor._may_replace(1000.0)
