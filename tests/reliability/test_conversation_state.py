"""``ctx.state`` survives a restart of the service, and is never stored in clear.

A handler keeps a word (reversed: a text no delivery holds) and a counter in the
user's state over two runs; the service stops; no value of any row of any table of
the store holds the word (nor, on SQLite, the database file or its WAL); the
restarted service's next run of that user reads the word and the counter back.
SQLite file and PostgreSQL.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from tests._support import Captured, FakeGraph, ServeProcess

from ._conversations import (
    BotProject,
    bot_project,
    deliver,
    every_value,
    inbox_empty,
    rows,
    text,
    wait_until,
)
from .conftest import serve_database, serve_live

pytestmark = pytest.mark.slow

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
USER = "16505550044"


def _serve(
    captured: Captured,
    serving: list[ServeProcess],
    bot: BotProject,
    db: list[str],
    env: dict[str, str],
) -> ServeProcess:
    return serve_live(captured, serving, bot.project, *db, "--app", "bot:talk", env=env)


def _ended(bot: BotProject, message_id: str, dsn: str | None) -> bool:
    done = any(e.message_id == message_id for e in bot.events("end"))
    return done and inbox_empty(bot, dsn)


@pytest.mark.parametrize("backend", BACKENDS)
def test_user_state_survives_a_restart_and_is_sealed_at_rest(
    backend: str,
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    request: pytest.FixtureRequest,
) -> None:
    db, env = serve_database(backend, request)
    dsn = env.get("SVC_REL_DB")
    bot = bot_project(tmp_path, graph.url, captured)
    word = "quokka" + secrets.token_hex(6)
    kept = word[::-1].encode()  # what the state holds

    served = _serve(captured, serving, bot, db, env)
    for message_id in ("wamid.KEEP1", "wamid.KEEP2"):
        deliver(served, bot, text(USER, message_id, f"remember {word}"))
        wait_until(lambda m=message_id: _ended(bot, m, dsn), f"{message_id} to complete")
    assert served.stop() == 0

    (state,) = rows(bot, "SELECT queue_key, sealed FROM svc_user_state", dsn)
    queue, sealed = state
    assert USER not in str(queue)  # the queue is a hash
    assert kept not in bytes(sealed) and b"times" not in bytes(sealed)
    assert kept not in every_value(bot, dsn)
    if backend == "sqlite":
        for path in tmp_path.glob("svc.db*"):  # the file, its WAL and shared memory
            if path.is_dir():  # svc.db.wake: the processes' wake sockets, no data
                continue
            assert kept not in path.read_bytes(), path.name

    again = _serve(captured, serving, bot, db, env)
    deliver(again, bot, text(USER, "wamid.RECALL1", "recall"))
    wait_until(lambda: _ended(bot, "wamid.RECALL1", dsn), "the recall to complete")
    assert again.stop() == 0
    (recalled,) = bot.events("recalled")
    assert recalled.pid == str(again.process.pid)
    assert recalled.detail == f"{kept.decode()}/2"
