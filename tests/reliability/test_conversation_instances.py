"""Conversations across two ``svc serve`` instances on one PostgreSQL schema.

Real processes serving ``_conversations.BOT`` against the socket fake Graph. A
handler that asks and then waits (``ctx.wait_for_reply``) on one instance, past its
deadline and its first lease (renewed while it waits), gets the user's reply that the
other instance recorded (it reads the later rows of its own queue, polling for rows
other processes recorded), answers once, and the reply never runs the ordinary
handler. A burst of five messages of one user, delivered in turn
to both instances, reaches the handler registered with ``coalesce=3.0`` as one call
with the five updates in order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._support import Captured, FakeGraph, ServeProcess

from ._conversations import (
    BotProject,
    bot_project,
    deliver,
    inbox_empty,
    rows,
    sent_texts,
    text,
    wait_for_event,
    wait_until,
)
from .conftest import serve_live

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

USER = "16505550042"
LEASE_MS = 8000  # --handler-timeout 2: the deadline and a half plus 5 s


def two_instances(
    captured: Captured, serving: list[ServeProcess], bot: BotProject, dsn: str, app: str
) -> dict[str, ServeProcess]:
    """Two instances on the schema ``dsn`` pins, by pid (each runs its handlers itself)."""
    started = {}
    for _ in range(2):
        served = serve_live(
            captured,
            serving,
            bot.project,
            *("--database-url-env", "SVC_REL_DB", "--app", app, "--handler-timeout", "2"),
            env={"SVC_REL_DB": dsn},
        )
        started[str(served.process.pid)] = served
    return started


def head_lease(bot: BotProject, dsn: str) -> int:
    """When the lease of the first inbox row ends (epoch ms)."""
    ((until,),) = rows(bot, "SELECT lease_expires_at FROM svc_inbox ORDER BY id LIMIT 1", dsn)
    return int(str(until))


def test_a_listener_on_one_instance_receives_the_reply_delivered_to_the_other_after_its_lease(
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    pg_schema: tuple[str, str],
) -> None:
    dsn, _ = pg_schema
    bot = bot_project(tmp_path, graph.url, captured)
    instances = two_instances(captured, serving, bot, dsn, "bot:talk")
    first = next(iter(instances.values()))
    deliver(first, bot, text(USER, "wamid.ASK1", "ask"))
    waiting = wait_for_event(bot, "waiting", "wamid.ASK1")
    (other,) = [pid for pid in instances if pid != waiting.pid]
    # The wait outlasts the run's deadline (2 s) and its first lease (8 s): the lease is
    # renewed while it waits (to "now + lease", so a lease ending a lease after the first
    # one ends was renewed after the first lapsed), and the other instance never takes it.
    first_lease = head_lease(bot, dsn)
    wait_until(
        lambda: head_lease(bot, dsn) > first_lease + LEASE_MS, "the wait to outlast its lease"
    )

    deliver(instances[other], bot, text(USER, "wamid.NAME1", "Ada"))
    assert bot.recorded_by("wamid.NAME1") == other
    got = wait_for_event(bot, "got", "wamid.ASK1")
    assert (got.pid, got.detail) == (waiting.pid, "wamid.NAME1")  # the waiting run got it
    wait_for_event(bot, "answered", "wamid.ASK1")
    wait_until(lambda: inbox_empty(bot, dsn), "the inbox to empty")
    for served in instances.values():
        assert served.stop() == 0

    assert sent_texts([r.body for r in graph.sends()]) == ["What is your name?", "Hello Ada"]
    # One run (never rerun, never cancelled); the reply never ran the ordinary handler.
    assert [(e.pid, e.message_id) for e in bot.events("start")] == [(waiting.pid, "wamid.ASK1")]


def test_a_burst_of_five_spread_over_two_instances_is_one_call_in_order(
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    pg_schema: tuple[str, str],
) -> None:
    dsn, _ = pg_schema
    bot = bot_project(tmp_path, graph.url, captured)
    instances = list(two_instances(captured, serving, bot, dsn, "bot:burst").values())
    ids = [f"wamid.BURST{n}" for n in range(1, 6)]
    for n, message_id in enumerate(ids):
        deliver(instances[n % 2], bot, text(USER, message_id, f"part {n + 1}"))
    recorders = [bot.recorded_by(message_id) for message_id in ids]
    pids = [str(served.process.pid) for served in instances]
    assert recorders == [pids[n % 2] for n in range(5)]  # spread over both instances

    burst = wait_for_event(bot, "burst", ids[0])
    assert burst.detail == ",".join(ids)
    wait_until(lambda: inbox_empty(bot, dsn), "the inbox to empty")
    for served in instances:
        assert served.stop() == 0

    assert [e.detail for e in bot.events("burst")] == [",".join(ids)]  # one call, in order
    assert sent_texts([r.body for r in graph.sends()]) == ["5 messages, one answer"]
