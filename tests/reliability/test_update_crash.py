"""``kill -9`` between recording a webhook delivery and answering it, then a redelivery.

The first process records the delivery (its update keys and the inbox rows of the two
messages the echo reply handles) and is killed before it answers
(``SVC_TEST_FAULT=kill-after-record``, a test-only hook the CLI reads). The restarted
process runs the two waiting echo replies from the inbox by itself; the platform's
redelivery (it got no 200) is a plain duplicate, and a regrouping runs only its new
update. Handler runs are counted by the echo replies the default facade sends to the
fake Graph. SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests._support import Captured, FakeGraph, ServeProcess, make_project

from .conftest import inbound_text, post_webhook, start_live

pytestmark = pytest.mark.slow


def _delivery(*message_ids: str, status_of: str | None = None) -> bytes:
    """One envelope with an inbound text per id (text ``run <id>``), in the given order,
    and a ``delivered`` status of the message ``status_of``."""
    envelope = json.loads(inbound_text(message_ids[0], f"run {message_ids[0]}"))
    value = envelope["entry"][0]["changes"][0]["value"]
    template = value["messages"][0]
    value["messages"] = [
        {**template, "id": message_id, "text": {"body": f"run {message_id}"}}
        for message_id in message_ids
    ]
    if status_of is not None:
        status = {"id": status_of, "status": "delivered", "timestamp": "1749416390"}
        value["statuses"] = [{**status, "recipient_id": template["from"]}]
    return json.dumps(envelope).encode()


def _crash_then_redeliver(
    captured: Captured,
    serving: list[ServeProcess],
    graph: FakeGraph,
    project_dir: Path,
    *db: str,
    env: dict[str, str] | None = None,
) -> None:
    project = make_project(project_dir, graph.url)
    secret = project.secrets["SVC_APP_SECRET"]
    base = {"SVC_ECHO_REPLY": "1", **(env or {})}
    crashing = start_live(
        captured, project, *db, env={**base, "SVC_TEST_FAULT": "kill-after-record"}
    )
    serving.append(crashing)
    body = _delivery("wamid.K1", "wamid.K2", status_of="wamid.OUT1")
    with pytest.raises(httpx.HTTPError):
        post_webhook(crashing, secret, body)
    assert crashing.process.wait(timeout=30) == -9
    crashing.close()
    assert graph.sends() == []  # recorded, never run

    again = start_live(captured, project, *db, env=base)
    serving.append(again)
    graph.wait_for_requests(2)  # the restart runs what was recorded, with no redelivery
    redelivered = post_webhook(again, secret, body)
    assert redelivered.status_code == 200
    assert redelivered.json() == {
        "status": "ok",
        "received": 3,
        "dispatched": 0,
        "skipped": 3,
        "queued": 0,
    }
    regrouped = post_webhook(again, secret, _delivery("wamid.K2", "wamid.K1", "wamid.K3"))
    assert regrouped.json() == {
        "status": "ok",
        "received": 3,
        "dispatched": 1,
        "skipped": 2,
        "queued": 1,
    }
    graph.wait_for_requests(1)
    repeated = post_webhook(again, secret, body)
    assert repeated.json()["dispatched"] == 0
    assert again.stop() == 0

    runs = Counter(json.loads(r.body)["text"]["body"] for r in graph.sends())
    assert runs == Counter(
        {"Echo: run wamid.K1": 1, "Echo: run wamid.K2": 1, "Echo: run wamid.K3": 1}
    )


def test_kill9_between_record_and_dispatch_on_sqlite_runs_the_handlers_on_redelivery(
    tmp_path: Path, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    _crash_then_redeliver(captured, serving, graph, tmp_path, "--database", "svc.db")


@pytest.mark.postgres
def test_kill9_between_record_and_dispatch_on_postgres_runs_the_handlers_on_redelivery(
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    pg_schema: tuple[str, str],
) -> None:
    dsn, _ = pg_schema
    _crash_then_redeliver(
        captured,
        serving,
        graph,
        tmp_path,
        "--database-url-env",
        "SVC_REL_DB",
        env={"SVC_REL_DB": dsn},
    )
