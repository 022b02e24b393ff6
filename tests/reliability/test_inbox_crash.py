"""``kill -9`` of a service running handlers from its inbox: nothing answered 200 is lost,
and no context reply goes out twice.

Real ``svc serve --app bot:bot`` processes (``_handlers.BOT``) against the socket
fake Graph, on a SQLite file and on PostgreSQL. The first process answers the
deliveries (200: their updates are in the inbox) and is killed at one of three
points: right after the answers (the handlers wait on a file the test has not
written), mid-handler (the handler SIGKILLs its own process on its first attempt),
and between the handler's end and its completion mark (``SVC_TEST_FAULT=
kill-after-handler``). A second process on the same database and inbox key runs
every update once the dead process's lease lapses (``--handler-timeout 1``: a lease
of 6.5 s). A context reply is a keyed send: a rerun after the reply gets the first
reply's answer back (by key alone, though its text differs) and the fake Graph
sees the reply once.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from tests._support import Captured, FakeGraph, ServeProcess

from ._handlers import BotProject, Event, bot_project, deliver, ended, run_to_the_end
from .conftest import serve_database, serve_live

pytestmark = pytest.mark.slow

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
A, B = "16505550001", "16505550002"
FLAGS = ("--app", "bot:bot", "--handler-timeout", "1")


@dataclass(frozen=True, kw_only=True)
class _Service:
    """A bot project on ``backend``, and what starts and checks its processes."""

    backend: str
    bot: BotProject
    db: list[str]
    env: dict[str, str]
    captured: Captured
    serving: list[ServeProcess]

    def serve(self, fault: str | None = None) -> ServeProcess:
        self.captured.secret(self.bot.inbox_key)
        extra = {"SVC_TEST_FAULT": fault} if fault is not None else {}
        env = {**self.env, **extra}
        return serve_live(self.captured, self.serving, self.bot.project, *self.db, *FLAGS, env=env)

    def inbox_rows(self) -> list[tuple[object, ...]]:
        query = "SELECT id, status, attempts FROM svc_inbox"
        if self.backend == "sqlite":
            conn = sqlite3.connect(self.bot.root / "svc.db")
            try:
                return list(conn.execute(query).fetchall())
            finally:
                conn.close()
        with psycopg.connect(self.env["SVC_REL_DB"]) as pg:
            return list(pg.execute(query).fetchall())

    def run_to_the_end(self, message_ids: list[str]) -> list[Event]:
        """Restart on the same database and key; wait until every message's run has ended."""
        again = self.serve()
        run_to_the_end(self.bot, message_ids)
        assert again.stop() == 0
        return self.bot.events()


@pytest.fixture
def service(
    backend: str,
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    request: pytest.FixtureRequest,
) -> _Service:
    db, env = serve_database(backend, request)
    bot = bot_project(tmp_path, graph.url)
    return _Service(backend=backend, bot=bot, db=db, env=env, captured=captured, serving=serving)


def _replies(graph: FakeGraph) -> Counter[str]:
    """The fake Graph's sends by the message they answer (``reply to <id> from ...``)."""
    return Counter(json.loads(r.body)["text"]["body"].split()[2] for r in graph.sends())


def _per_user(events: list[Event], what: str = "start") -> dict[str, list[str]]:
    order: dict[str, list[str]] = {}
    for event in events:
        if event.what == what:
            order.setdefault(event.detail, []).append(event.message_id)
    return order


@pytest.mark.parametrize("backend", BACKENDS)
def test_kill9_right_after_the_answers_then_every_handler_runs_after_the_restart(
    service: _Service, graph: FakeGraph
) -> None:
    bot = service.bot
    first = service.serve()
    deliver(first, bot, (A, "wamid.A1", "wait,reply"), (A, "wamid.A2", "reply"))
    deliver(first, bot, (B, "wamid.B1", "wait,reply"), (A, "wamid.A3", "reply"))
    deliver(first, bot, (B, "wamid.B2", "reply"))
    first.kill9()  # the handlers wait for a file the test has not written
    assert first.process.returncode == -9
    assert ended(bot.events()) == [] and graph.sends() == []

    bot.release()
    events = service.run_to_the_end(
        ["wamid.A1", "wamid.A2", "wamid.A3", "wamid.B1", "wamid.B2"],
    )
    assert Counter(ended(events)) == Counter(
        {"wamid.A1": 1, "wamid.A2": 1, "wamid.A3": 1, "wamid.B1": 1, "wamid.B2": 1}
    )
    assert _per_user(events, "end") == {
        A: ["wamid.A1", "wamid.A2", "wamid.A3"],
        B: ["wamid.B1", "wamid.B2"],
    }
    assert _replies(graph) == Counter(
        {"wamid.A1": 1, "wamid.A2": 1, "wamid.A3": 1, "wamid.B1": 1, "wamid.B2": 1}
    )
    assert service.inbox_rows() == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_kill9_mid_handler_then_the_handler_and_the_users_later_updates_run_after_the_restart(
    service: _Service, graph: FakeGraph
) -> None:
    bot = service.bot
    first = service.serve()
    deliver(first, bot, (A, "wamid.A1", "wait,die,reply"), (A, "wamid.A2", "reply"))
    deliver(first, bot, (A, "wamid.A3", "reply"))
    bot.release()
    assert first.process.wait(timeout=30) == -9  # the handler killed its own process
    first.close()
    assert [e.what for e in bot.events()] == ["start", "die"]
    assert graph.sends() == []

    events = service.run_to_the_end(["wamid.A1", "wamid.A2", "wamid.A3"])
    assert ended(events) == ["wamid.A1", "wamid.A2", "wamid.A3"]
    assert _replies(graph) == Counter({"wamid.A1": 1, "wamid.A2": 1, "wamid.A3": 1})
    assert service.inbox_rows() == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_kill9_between_the_handlers_end_and_its_completion_mark_reruns_it_and_replies_once(
    service: _Service, graph: FakeGraph
) -> None:
    bot = service.bot
    first = service.serve(fault="kill-after-handler")
    deliver(first, bot, (A, "wamid.A1", "reply"), (A, "wamid.A2", "reply"))
    assert first.process.wait(timeout=30) == -9  # after A1's handler, before its mark
    first.close()
    assert ended(bot.events()) == ["wamid.A1"]
    assert _replies(graph) == Counter({"wamid.A1": 1})
    first_pid = bot.events()[0].pid

    events = service.run_to_the_end(["wamid.A1", "wamid.A2"])
    # A1 ran again (its completion was never marked), then A2, in order.
    assert ended(events) == ["wamid.A1", "wamid.A1", "wamid.A2"]
    # The rerun's reply (another text: another process) got the first reply's answer back.
    sent = [e for e in events if e.what == "sent" and e.message_id == "wamid.A1"]
    assert len(sent) == 2 and sent[0].detail == sent[1].detail != "-"
    assert sent[0].pid == first_pid != sent[1].pid
    assert _replies(graph) == Counter({"wamid.A1": 1, "wamid.A2": 1})
    (reply,) = [r for r in graph.sends() if b"wamid.A1" in r.body]
    assert f"from process {first_pid}".encode() in reply.body
    assert service.inbox_rows() == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_kill9_between_a_context_reply_and_the_completion_mark_never_sends_the_reply_twice(
    service: _Service, graph: FakeGraph
) -> None:
    bot = service.bot
    first = service.serve()
    deliver(first, bot, (A, "wamid.A1", "reply,die,reply"), (B, "wamid.B1", "wait,reply"))
    assert first.process.wait(timeout=30) == -9  # killed after A1's first reply
    first.close()
    assert _replies(graph) == Counter({"wamid.A1": 1})

    bot.release()
    events = service.run_to_the_end(["wamid.A1", "wamid.B1"])
    assert Counter(ended(events)) == Counter({"wamid.A1": 1, "wamid.B1": 1})
    sent = [e for e in events if e.what == "sent" and e.message_id == "wamid.A1"]
    # The first reply was answered, then replayed by its key on the rerun; the second
    # reply of the rerun (a new position in the run) went out once.
    assert len(sent) == 3 and sent[0].detail == sent[1].detail != sent[2].detail
    assert _replies(graph) == Counter({"wamid.A1": 2, "wamid.B1": 1})
    assert service.inbox_rows() == []
