"""``svc serve`` on PostgreSQL: its writer process ends with a ``kill -9`` of the server, a
restart records and dedupes as before, and ``--pg-writer thread`` runs no child.

``svc serve`` runs PostgreSQL's webhook writes in a writer process (``--pg-writer
process``, the default) on a connection of its own. The writer ends when the server's
end of their socket closes, which the kernel does for a killed server too.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from tests._support import Captured, FakeGraph, ServeProcess, make_project

from .conftest import children, ended, inbound_text, post_webhook, start_live

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def test_kill9_of_the_server_ends_its_postgres_writer(
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    pg_schema: tuple[str, str],
) -> None:
    dsn, _ = pg_schema
    database = ("--database-url-env", "SVC_REL_DB")
    env = {"SVC_REL_DB": dsn}
    project = make_project(tmp_path, graph.url)
    secret = project.secrets["SVC_APP_SECRET"]
    served = start_live(captured, project, *database, env=env)
    serving.append(served)
    first = inbound_text("wamid.P1", "before the crash")
    assert post_webhook(served, secret, first).status_code == 200
    (writer,) = children(served.process.pid)
    served.process.send_signal(signal.SIGKILL)
    assert served.process.wait(timeout=30) == -9
    deadline = time.monotonic() + 10
    while not ended(writer):
        assert time.monotonic() < deadline, "the writer process outlived its server by 10 s"
        time.sleep(0.01)
    served.close()

    again = start_live(captured, project, *database, env=env)
    serving.append(again)
    assert len(children(again.process.pid)) == 1
    second = inbound_text("wamid.P2", "after the restart")
    assert post_webhook(again, secret, second).status_code == 200
    assert post_webhook(again, secret, first).status_code == 200  # a redelivery: recorded once
    with again.client() as client:
        listed = client.get("/api/messages", headers={"Authorization": f"Bearer {project.bearer}"})
    assert listed.status_code == 200
    ids = sorted(m["waMessageId"] for m in json.loads(listed.text)["items"])
    assert ids == ["wamid.P1", "wamid.P2"]


def test_pg_writer_thread_keeps_the_writes_in_the_server(
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    pg_schema: tuple[str, str],
) -> None:
    dsn, _ = pg_schema
    project = make_project(tmp_path, graph.url)
    secret = project.secrets["SVC_APP_SECRET"]
    served = start_live(
        captured,
        project,
        "--database-url-env",
        "SVC_REL_DB",
        "--pg-writer",
        "thread",
        env={"SVC_REL_DB": dsn},
    )
    serving.append(served)
    body = inbound_text("wamid.T1", "on the thread")
    assert post_webhook(served, secret, body).status_code == 200
    assert children(served.process.pid) == []
