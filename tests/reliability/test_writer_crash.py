"""``kill -9`` of ``svc serve`` leaves no writer process behind, on SQLite and on
PostgreSQL, and a restart records and answers as before; ``--sqlite-writer thread`` and
``--pg-writer thread`` run no child.

``svc serve`` runs each store's webhook writes in a writer process (``--sqlite-writer
process`` and ``--pg-writer process``, the defaults). The writer ends when the server's end
of their socket closes, which the kernel does for a killed server too.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from tests._support import Captured, FakeGraph, ServeProcess, make_project

from .conftest import children, ended, inbound_text, post_webhook, serve_database, start_live

pytestmark = pytest.mark.slow

STORES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


@pytest.mark.parametrize("store", STORES)
def test_kill9_of_the_server_ends_its_writer(
    store: str,
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    request: pytest.FixtureRequest,
) -> None:
    database, env = serve_database(store, request)
    project = make_project(tmp_path, graph.url)
    secret = project.secrets["SVC_APP_SECRET"]
    served = start_live(captured, project, *database, env=env)
    serving.append(served)
    first = inbound_text("wamid.W1", "before the crash")
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
    second = inbound_text("wamid.W2", "after the restart")
    assert post_webhook(again, secret, second).status_code == 200
    assert post_webhook(again, secret, first).status_code == 200  # a redelivery: recorded once
    with again.client() as client:
        listed = client.get("/api/messages", headers={"Authorization": f"Bearer {project.bearer}"})
    assert listed.status_code == 200
    ids = sorted(m["waMessageId"] for m in json.loads(listed.text)["items"])
    assert ids == ["wamid.W1", "wamid.W2"]


@pytest.mark.parametrize("store", STORES)
def test_writer_thread_keeps_the_writes_in_the_server(
    store: str,
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    request: pytest.FixtureRequest,
) -> None:
    database, env = serve_database(store, request)
    writer_flag = "--sqlite-writer" if store == "sqlite" else "--pg-writer"
    project = make_project(tmp_path, graph.url)
    secret = project.secrets["SVC_APP_SECRET"]
    served = start_live(captured, project, *database, writer_flag, "thread", env=env)
    serving.append(served)
    body = inbound_text("wamid.T1", "on the thread")
    assert post_webhook(served, secret, body).status_code == 200
    assert children(served.process.pid) == []
