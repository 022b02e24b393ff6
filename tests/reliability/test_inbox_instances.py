"""One inbox, several serving processes: two ``svc serve`` instances on one PostgreSQL
schema, and ``--workers 2`` on one SQLite file.

Deliveries of several users, interleaved, go to either process; each process runs
two handlers at a time (``--handler-concurrency 2``). The first three users' handlers
wait for each other (``meet``), which only the two processes running at once can
satisfy; then every update runs exactly once, one user's updates one at a time in
the order they were recorded, whichever process recorded or ran them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._support import Captured, FakeGraph, ServeProcess

from ._handlers import (
    BotProject,
    Event,
    Message,
    bot_project,
    check_user_order,
    deliver,
    interleaved,
    run_to_the_end,
)
from .conftest import LONG, serve_live, start_live

pytestmark = pytest.mark.slow

USERS = ["16505550021", "16505550022", "16505550023", "16505550024", "16505550025"]
PER_USER = 30 if LONG else 8
FLAGS = ("--app", "bot:bot", "--handler-concurrency", "2", "--handler-timeout", "30")


def _plan() -> tuple[list[list[Message]], dict[str, list[str]]]:
    a, b, c = USERS[:3]
    lead = [(a, "wamid.meetA", "meet-x-3"), (b, "wamid.meetB", "meet-x-3")]
    lead.append((c, "wamid.meetC", "meet-x-3"))
    return interleaved(USERS, PER_USER, lead=lead, text="sleep-0.01", seed=41)


def _deliver_all(
    targets: list[ServeProcess], bot: BotProject, deliveries: list[list[Message]]
) -> None:
    """Each delivery to the next target in turn (a fresh connection each time)."""
    for number, messages in enumerate(deliveries):
        deliver(targets[number % len(targets)], bot, *messages)


def _check(events: list[Event], expected: dict[str, list[str]]) -> set[str]:
    """Order and once-only runs; the meeting handlers ran at once in two processes."""
    most = check_user_order(events, expected)
    assert 3 <= most <= 4  # two processes of two runs each
    met = {e.message_id: e.pid for e in events if e.what == "met"}
    assert set(met) == {"wamid.meetA", "wamid.meetB", "wamid.meetC"}
    assert len(set(met.values())) == 2
    return {e.pid for e in events}


@pytest.mark.postgres
def test_two_instances_on_one_postgres_run_each_update_once_in_per_user_order(
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    pg_schema: tuple[str, str],
) -> None:
    dsn, _ = pg_schema
    env = {"SVC_REL_DB": dsn}
    bot = bot_project(tmp_path, graph.url)
    captured.secret(bot.inbox_key)
    db = ("--database-url-env", "SVC_REL_DB")
    instances = [start_live(captured, bot.project, *db, *FLAGS, env=env) for _ in range(2)]
    serving.extend(instances)
    deliveries, expected = _plan()
    _deliver_all(instances, bot, deliveries)

    every = [message_id for ids in expected.values() for message_id in ids]
    run_to_the_end(bot, every)
    for instance in instances:
        assert instance.stop() == 0
    pids = _check(bot.events(), expected)
    assert pids == {str(instance.process.pid) for instance in instances}
    print(f"inbox two instances postgres: users={len(USERS)} updates={len(every)} runs_twice=0")


def test_two_workers_on_one_sqlite_file_run_each_update_once_in_per_user_order(
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
) -> None:
    bot = bot_project(tmp_path, graph.url)
    captured.secret(bot.inbox_key)
    served = serve_live(
        captured, serving, bot.project, "--database", "svc.db", "--workers", "2", *FLAGS
    )
    deliveries, expected = _plan()
    _deliver_all([served], bot, deliveries)

    every = [message_id for ids in expected.values() for message_id in ids]
    run_to_the_end(bot, every)
    assert served.stop() == 0
    pids = _check(bot.events(), expected)
    assert len(pids) == 2 and str(served.process.pid) not in pids  # the two workers
    print(f"inbox --workers 2 sqlite: users={len(USERS)} updates={len(every)} runs_twice=0")
