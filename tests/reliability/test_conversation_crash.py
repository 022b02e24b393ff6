"""``kill -9`` of the instance whose handler waits for the user's reply: the handler is rerun.

The documented rule: the waiting run's lease lapses, its head is claimed again (by
the other instance, or by the restarted service), and the handler runs from the
start. Its first reply (the question) is a keyed send, so the rerun gets the first
answer back and the fake Graph sees the question once; its wait finds the same reply
(nothing a wait takes is gone before the head's completion); the answer after the
wait goes out once; and the reply never runs the ordinary handler.
``--handler-timeout 2`` keeps the lease short (8 s). Killed while waiting (the reply
arrives at the survivor meanwhile), and killed after the wait took the reply (the
handler SIGKILLs its own process), on PostgreSQL with the other instance alive and on
a SQLite file restarted.
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
    sent_texts,
    text,
    wait_for_event,
    wait_until,
)
from .conftest import serve_live
from .test_conversation_instances import two_instances

pytestmark = pytest.mark.slow

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
USER = "16505550043"
LEASE_LAPSES = 60  # a bound for the lease (8 s) to lapse and the head to run again


def _check_rerun(bot: BotProject, graph: FakeGraph, ask: str, reply: str, name: str) -> None:
    """The rule's outcome: two runs of ``ask``, the question once, the answer once."""
    starts = [e.message_id for e in bot.events("start")]
    assert starts == [ask, ask]  # rerun from the start; the reply never ran on its own
    asked = bot.events("asked")
    assert len(asked) == 2 and asked[0].detail == asked[1].detail != "-"  # replayed by key
    got = bot.events("got")
    assert [e.detail for e in got] == [reply] * len(got) and got[-1].pid == asked[1].pid
    assert sent_texts([r.body for r in graph.sends()]) == ["What is your name?", f"Hello {name}"]
    assert len(bot.events("answered")) == 1


@pytest.mark.postgres
def test_kill9_of_the_waiting_instance_then_the_other_reruns_it_and_its_wait_finds_the_reply(
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    pg_schema: tuple[str, str],
) -> None:
    dsn, _ = pg_schema
    bot = bot_project(tmp_path, graph.url, captured)
    instances = two_instances(captured, serving, bot, dsn, "bot:talk")
    deliver(next(iter(instances.values())), bot, text(USER, "wamid.ASK2", "ask"))
    waiting = wait_for_event(bot, "waiting", "wamid.ASK2")
    (survivor,) = [pid for pid in instances if pid != waiting.pid]
    instances[waiting.pid].kill9()
    assert sent_texts([r.body for r in graph.sends()]) == ["What is your name?"]

    deliver(instances[survivor], bot, text(USER, "wamid.NAME2", "Grace"))
    answered = wait_for_event(bot, "answered", "wamid.ASK2", timeout=LEASE_LAPSES)
    assert answered.pid == survivor
    wait_until(lambda: inbox_empty(bot, dsn), "the inbox to empty")
    assert instances[survivor].stop() == 0

    assert [e.pid for e in bot.events("start")] == [waiting.pid, survivor]
    assert [(e.pid, e.detail) for e in bot.events("got")] == [(survivor, "wamid.NAME2")]
    _check_rerun(bot, graph, "wamid.ASK2", "wamid.NAME2", "Grace")


@pytest.mark.parametrize("backend", BACKENDS)
def test_kill9_after_the_wait_took_the_reply_then_the_rerun_takes_it_again_and_answers_once(
    backend: str,
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    request: pytest.FixtureRequest,
) -> None:
    bot = bot_project(tmp_path, graph.url, captured)
    dsn: str | None = None
    if backend == "postgres":
        dsn, _ = request.getfixturevalue("pg_schema")
        instances = two_instances(captured, serving, bot, dsn, "bot:talk")
    else:
        served = _sqlite_instance(captured, serving, bot)
        instances = {str(served.process.pid): served}
    deliver(next(iter(instances.values())), bot, text(USER, "wamid.ASK3", "ask die"))
    waiting = wait_for_event(bot, "waiting", "wamid.ASK3")
    (to,) = [pid for pid in instances if pid != waiting.pid] or [waiting.pid]
    deliver(instances[to], bot, text(USER, "wamid.NAME3", "Linus"))
    dying = instances.pop(waiting.pid)
    assert dying.process.wait(timeout=30) == -9  # after the wait took the reply
    dying.close()
    assert [e.detail for e in bot.events("got")] == ["wamid.NAME3"]
    assert sent_texts([r.body for r in graph.sends()]) == ["What is your name?"]

    if not instances:  # the SQLite service is restarted
        served = _sqlite_instance(captured, serving, bot)
        instances[str(served.process.pid)] = served
    (runner,) = instances
    answered = wait_for_event(bot, "answered", "wamid.ASK3", timeout=LEASE_LAPSES)
    assert answered.pid == runner
    wait_until(lambda: inbox_empty(bot, dsn), "the inbox to empty")
    assert instances[runner].stop() == 0
    _check_rerun(bot, graph, "wamid.ASK3", "wamid.NAME3", "Linus")


def _sqlite_instance(
    captured: Captured, serving: list[ServeProcess], bot: BotProject
) -> ServeProcess:
    return serve_live(
        captured,
        serving,
        bot.project,
        *("--database", "svc.db", "--app", "bot:talk", "--handler-timeout", "2"),
    )
