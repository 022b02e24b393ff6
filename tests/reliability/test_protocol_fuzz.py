"""Thousands of malformed and adversarial connections against one real ``svc serve``.

The attacks (``_fuzz.py``: HTTP/2 frames of every type in every stream state,
DATA after the answer, RST/SETTINGS/PING/WINDOW_UPDATE/CONTINUATION/GOAWAY
floods, WebSocket and h2c upgrades with trailing bytes, truncated heads,
pipelined garbage) run from a fixed seed, on 127.0.0.1, 24 at a time. Then the
same process must answer ``/healthz`` and a signed webhook, its open file
descriptors must come back to where they were before the run and its RSS to
within 32 MiB of it. No answer read during the run may be a 500.

The baseline is taken after a few ordinary requests and 24 attacks one at a
time (lazy imports and pools loaded, no concurrency yet). Measured: the run
raises RSS by about 12 MiB (the allocator keeps the high-water mark of 24
concurrent attack connections), and a second run adds nothing.

Short variant: 3,000 connections; ``SVC_RELIABILITY_LONG=1``: 20,000.
``SVC_FUZZ_SEED`` replays another seed.
"""

from __future__ import annotations

import collections
import os
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests._support import (
    PHONE_ID,
    WABA_ID,
    Captured,
    ServeProcess,
    make_project,
    start_serve,
)

from ._fuzz import FRAME_TYPES, STATES, Outcome, attack
from .conftest import LONG, inbound_text, post_webhook

pytestmark = pytest.mark.slow

CONNECTIONS = 20_000 if LONG else 3_000
SEED = int(os.environ.get("SVC_FUZZ_SEED", "20261127"))
WIDTH = 24
RUN_SECONDS = 240 if LONG else 90
SETTLE_SECONDS = 30
MIB = 1024 * 1024
RSS_MARGIN = 32 * MIB


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _settles(measure: Callable[[], int], limit: int, seconds: float) -> int:
    """Poll ``measure`` until it is at most ``limit``; its last value (fails at the deadline)."""
    deadline = time.monotonic() + seconds
    while (value := measure()) > limit:
        assert time.monotonic() < deadline, f"{value} > {limit} after {seconds} s"
        time.sleep(0.2)
    return value


def _steady(measure: Callable[[], int]) -> int:
    """``measure`` once it has not changed for a second (the last value after 10 s)."""
    value, since = measure(), time.monotonic()
    deadline = since + 10
    while time.monotonic() - since < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
        if (now := measure()) != value:
            value, since = now, time.monotonic()
    return value


def _serves(served: ServeProcess, number: int) -> None:
    """Health, a signed webhook with one new message (then stored), and a send: all answered.
    The message is read by its id: the attacks' own sends can fill any first page."""
    message_id = f"wamid.FUZZ{number}"
    hook = post_webhook(served, served.app_secret, inbound_text(message_id, "after the fuzz"))
    with served.client(timeout=10) as client:
        health = client.get("/healthz")
        sent = client.post("/api/messages/text", json={"to": "15551234567", "text": "x"})
        stored = client.get(f"/api/messages/{message_id}")
    assert health.status_code == 200
    assert (hook.status_code, hook.json()["received"]) == (200, 1), hook.text
    assert sent.status_code == 200
    assert stored.status_code == 200, stored.text
    assert (stored.json()["waMessageId"], stored.json()["direction"]) == (message_id, "inbound")


def _attacks(address: tuple[str, int], bearer: str, numbers: range) -> list[Outcome]:
    with ThreadPoolExecutor(WIDTH) as pool:
        return list(pool.map(lambda number: attack(number, SEED, address, bearer), numbers))


def _metric_lines(served: ServeProcess, name: str) -> list[str]:
    with served.client(timeout=10) as client:
        text = client.get("/metrics").text
    return [line for line in text.splitlines() if line.startswith(name + "{")]


def test_protocol_fuzz_leaves_the_process_serving_with_its_fds_and_memory(
    tmp_path: Path, captured: Captured
) -> None:
    project = make_project(tmp_path)
    served = start_serve(
        *project.dry_args(),
        *("--database", "svc.db", "--port", "0", "--body-read-timeout", "5"),
        capture=captured,
        cwd=tmp_path,
        # The delivery names this number: the dry run serves it instead of its placeholder.
        env={"SVC_PHONE_NUMBER_ID": PHONE_ID, "SVC_WABA_ID": WABA_ID},
    )
    try:
        captured.secret(*served.secrets.values())
        pid = served.process.pid
        host, port = served.url.removeprefix("http://").rsplit(":", 1)
        address = (host, int(port))
        # Warm up every path the attacks reach, so lazy imports and pools are in the baseline.
        _serves(served, 0)
        for number in range(-24, 0):
            attack(number, SEED, address, served.bearer)
        fds_before = _steady(lambda: _fds(pid))
        rss_before = _rss(pid)

        started = time.monotonic()
        outcomes = _attacks(address, served.bearer, range(1, CONNECTIONS + 1))
        run_seconds = time.monotonic() - started
        rss_peak = _rss(pid)
        assert served.process.poll() is None, served.lines[-5:]

        families = collections.Counter(family for family, _, _ in outcomes)
        statuses = collections.Counter(status for _, found, _ in outcomes for status in found)
        frames = {pair for _, _, sent in outcomes for pair in sent}
        assert len(outcomes) == CONNECTIONS
        assert statuses[500] == 0, statuses
        assert run_seconds < RUN_SECONDS
        # Every family ran, and the run drew real answers (not only refused connections).
        assert len(families) == 12, families
        # Every frame type was sent on a stream in every state.
        assert frames == {(state, kind) for state in STATES for kind in FRAME_TYPES}
        assert sum(statuses.values()) > CONNECTIONS // 4, statuses

        fds_after = _settles(lambda: _fds(pid), fds_before, SETTLE_SECONDS)
        rss_after = _settles(lambda: _rss(pid), rss_before + RSS_MARGIN, SETTLE_SECONDS)
        _serves(served, 1)
        errors = _metric_lines(served, "svc_connection_errors_total")
        print(
            f"fuzz seed={SEED} connections={CONNECTIONS} run_s={run_seconds:.1f} "
            f"fds={fds_before}->{fds_after} rss_mib={rss_before / MIB:.0f}->"
            f"{rss_peak / MIB:.0f}(peak)->{rss_after / MIB:.0f} "
            f"statuses={dict(sorted(statuses.items()))} families={dict(families)} "
            f"errors={[re.sub(r'^svc_connection_errors_total', '', line) for line in errors]}"
        )
    finally:
        code = served.stop()
    assert code == 0, served.lines[-5:]
