"""Continued runs (a success completes and claims the next head in one step) over real
``svc serve --app bot:bot`` processes (``_handlers.BOT``), on a SQLite file and on PostgreSQL.

``kill -9`` mid-handler of an item its predecessor's completion claimed: a second process
reruns that item, then the rest, each reply sent once, in order. Two processes on one store
draining one user's queue (two instances on PostgreSQL, ``--workers 2`` on SQLite) never run
two of its items at once (the handler logs its start and end, ``O_APPEND`` across the
processes) and run them in recorded order, each once.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests._support import FakeGraph

from ._handlers import StoreBot, check_user_order, deliver, ended, run_to_the_end
from .conftest import LONG

pytestmark = pytest.mark.slow

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
A = "16505550031"
PER_USER = 120 if LONG else 40


def _replies(graph: FakeGraph) -> Counter[str]:
    """The fake Graph's sends by the message they answer (``reply to <id> from ...``)."""
    return Counter(json.loads(r.body)["text"]["body"].split()[2] for r in graph.sends())


@pytest.mark.parametrize("backend", BACKENDS)
def test_kill9_in_a_continued_run_reruns_that_item_then_the_rest_each_reply_once(
    backend: str, graph: FakeGraph, store_bot: StoreBot
) -> None:
    bot = store_bot
    flags = ("--handler-timeout", "1", "--handler-concurrency", "1")
    first = bot.serve(*flags)
    ids = [f"wamid.A{n}" for n in range(1, 6)]
    steps = ["wait,reply", "reply", "reply,die", "reply", "reply"]
    deliver(first, bot, *((A, mid, step) for mid, step in zip(ids, steps, strict=True)))
    bot.release()  # A1 runs; A2 and A3 come from the completions before them
    assert first.process.wait(timeout=60) == -9  # A3 killed its process after its reply
    first.close()
    assert ended(bot.events()) == ids[:2]
    assert _replies(graph) == Counter(ids[:3])

    again = bot.serve(*flags)
    run_to_the_end(bot, ids)
    assert again.stop() == 0
    events = bot.events()
    assert ended(events) == ids
    starts = [e.message_id for e in events if e.what == "start"]
    assert starts == [*ids[:3], *ids[2:]]  # A3 once more, then the rest
    assert _replies(graph) == Counter(ids)  # A3's rerun got its first reply's answer back
    sent = [e.detail for e in events if e.what == "sent" and e.message_id == "wamid.A3"]
    assert len(sent) == 2 and sent[0] == sent[1] != "-"


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_processes_draining_one_users_queue_never_run_two_of_its_items_at_once(
    backend: str, store_bot: StoreBot
) -> None:
    bot = store_bot
    if backend == "sqlite":
        targets = [bot.serve("--workers", "2", "--handler-timeout", "30")]
    else:
        targets = [bot.serve("--handler-timeout", "30") for _ in range(2)]
    ids = [f"wamid.Q{n}" for n in range(1, PER_USER + 1)]
    for number, start in enumerate(range(0, PER_USER, 5)):  # deliveries to each in turn
        part = ids[start : start + 5]
        deliver(targets[number % len(targets)], bot, *((A, mid, "sleep-0.002") for mid in part))
    run_to_the_end(bot, ids)
    for target in targets:
        assert target.stop() == 0
    # One at a time (no start while another of the user's runs), each once, in order.
    assert check_user_order(bot.events(), {A: ids}) == 1
