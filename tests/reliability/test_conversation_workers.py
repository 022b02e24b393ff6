"""Conversations across the two workers of ``svc serve --workers 2`` on one SQLite file.

A keep-alive connection stays with the worker that accepted it, and a status probe
on it tells which worker that is (``_conversations.Workers``), so a test delivers to
the worker it chooses. A handler waiting in one worker gets the reply the other
worker recorded, and answers once; a burst of five messages delivered in turn to
both workers reaches the handler registered with ``coalesce=3.0`` as one call, in
order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._support import Captured, FakeGraph, ServeProcess

from ._conversations import (
    BotProject,
    Workers,
    bot_project,
    deliver,
    inbox_empty,
    sent_texts,
    text,
    wait_for_event,
    wait_until,
)
from .conftest import serve_live

pytestmark = pytest.mark.slow

USER = "16505550045"


def _two_workers(
    captured: Captured, serving: list[ServeProcess], bot: BotProject, app: str
) -> Workers:
    served = serve_live(
        captured, serving, bot.project, "--database", "svc.db", "--workers", "2", "--app", app
    )
    return Workers(served, bot, captured)


def test_two_workers_a_listener_in_one_gets_the_reply_the_other_recorded(
    tmp_path: Path, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    bot = bot_project(tmp_path, graph.url, captured)
    workers = _two_workers(captured, serving, bot, "bot:talk")
    pids = workers.pids()
    assert str(workers.served.process.pid) not in pids
    deliver(workers.served, bot, text(USER, "wamid.ASK4", "ask"))
    waiting = wait_for_event(bot, "waiting", "wamid.ASK4")
    (other,) = pids - {waiting.pid}

    workers.deliver(other, text(USER, "wamid.NAME4", "Barbara"))
    assert bot.recorded_by("wamid.NAME4") == other
    got = wait_for_event(bot, "got", "wamid.ASK4")
    assert (got.pid, got.detail) == (waiting.pid, "wamid.NAME4")
    wait_for_event(bot, "answered", "wamid.ASK4")
    wait_until(lambda: inbox_empty(bot), "the inbox to empty")
    assert workers.served.stop() == 0

    assert sent_texts([r.body for r in graph.sends()]) == ["What is your name?", "Hello Barbara"]
    assert [e.message_id for e in bot.events("start")] == ["wamid.ASK4"]


def test_two_workers_a_burst_spread_over_both_is_one_call_in_order(
    tmp_path: Path, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    bot = bot_project(tmp_path, graph.url, captured)
    workers = _two_workers(captured, serving, bot, "bot:burst")
    pids = sorted(workers.pids())
    ids = [f"wamid.WBURST{n}" for n in range(1, 6)]
    for n, message_id in enumerate(ids):
        workers.deliver(pids[n % 2], text(USER, message_id, f"part {n + 1}"))
    assert [bot.recorded_by(m) for m in ids] == [pids[n % 2] for n in range(5)]

    burst = wait_for_event(bot, "burst", ids[0])
    assert burst.detail == ",".join(ids)
    wait_until(lambda: inbox_empty(bot), "the inbox to empty")
    assert workers.served.stop() == 0

    assert [e.detail for e in bot.events("burst")] == [",".join(ids)]
    assert sent_texts([r.body for r in graph.sends()]) == ["5 messages, one answer"]
