"""Signed webhook deliveries, 30% duplicates, concurrently to two instances sharing PostgreSQL.

Every distinct delivery must be handed to the handlers exactly once (counted by
the echo replies the default facade sends to the fake Graph from the inbox after
the answer, ``SVC_ECHO_REPLY=1``) and projected once (counted through ``GET
/api/messages``), and none lost. Each duplicate goes to the other instance than
its original, in the same concurrent stream, and is answered 200 as a duplicate at
once (the run is the inbox's, not the request's). Each delivery is from a user of
its own, so the two instances' inbox workers run them side by side.
Short variant: 1,000 deliveries; ``SVC_RELIABILITY_LONG=1``: 10,000.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests._support import Captured, FakeGraph, ServeProcess, make_project, sign

from ._handlers import inbox_key, wait_until
from .conftest import LONG, in_threads, inbound_text, start_live

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

DELIVERIES = 10_000 if LONG else 1_000
DUPLICATE_SHARE = 0.3


def _plan(total: int, seed: int = 11) -> list[int]:
    """Delivery numbers in sending order: ``distinct`` originals, the rest repeats of them."""
    distinct = total - int(total * DUPLICATE_SHARE)
    rng = random.Random(seed)
    order = list(range(distinct)) + [rng.randrange(distinct) for _ in range(total - distinct)]
    rng.shuffle(order)
    return order


def _projected_inbound(served: ServeProcess) -> list[str]:
    ids: list[str] = []
    cursor: str | None = None
    with served.client() as client:
        while True:
            params = {"limit": "100", **({"cursor": cursor} if cursor else {})}
            page = client.get("/api/messages", params=params)
            assert page.status_code == 200, page.text
            items = page.json()["items"]
            ids += [item["waMessageId"] for item in items if item["direction"] == "inbound"]
            if len(items) < 100:
                return ids
            cursor = str(items[-1]["rowId"])


def test_signed_deliveries_with_duplicates_to_two_instances_are_dispatched_and_projected_once(
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    pg_schema: tuple[str, str],
) -> None:
    dsn, _ = pg_schema
    project = make_project(tmp_path, graph.url)
    captured.secret(inbox_key(project))
    env = {"SVC_REL_DB": dsn, "SVC_ECHO_REPLY": "1"}
    instances = [
        start_live(captured, project, "--database-url-env", "SVC_REL_DB", env=env) for _ in range(2)
    ]
    serving.extend(instances)
    order = _plan(DELIVERIES)
    distinct = len(set(order))
    bodies = {
        n: inbound_text(f"wamid.REL{n:06d}", f"flood {n}", sender=f"1650{n:07d}")
        for n in set(order)
    }
    clients = [
        httpx.Client(base_url=s.url, timeout=60, limits=httpx.Limits(max_connections=32))
        for s in instances
    ]
    # Originals alternate; a repeat goes to the instance its previous copy did not.
    copies: Counter[int] = Counter()
    targets = []
    for number in order:
        copies[number] += 1
        targets.append((number + copies[number]) % 2)

    def deliver(i: int) -> tuple[int, dict[str, object]]:
        body = bodies[order[i]]
        response = clients[targets[i]].post(
            "/webhooks/whatsapp",
            content=body,
            headers={
                "Content-Type": "application/json",
                "X-Hub-Signature-256": sign(body=body, secret=project.secrets["SVC_APP_SECRET"]),
            },
        )
        return response.status_code, response.json()

    started = time.monotonic()
    results = in_threads(len(order), deliver, width=32)
    elapsed = time.monotonic() - started
    for client in clients:
        client.close()
    failures = [r for r in results if not (isinstance(r, tuple) and r[0] == 200)]
    assert failures == []
    dispatched = sum(int(body["dispatched"]) for _, body in results)
    skipped = sum(int(body["skipped"]) for _, body in results)
    assert dispatched == distinct
    assert skipped == len(order) - distinct

    # Run once: one echo reply per distinct delivery, none twice, none missing.
    wait_until(lambda: len(graph.sends()) >= distinct, "every echo", timeout=120)
    ran = time.monotonic() - started
    echoes = Counter(json.loads(r.body)["text"]["body"] for r in graph.sends())
    assert echoes == Counter({f"Echo: flood {n}": 1 for n in range(distinct)})
    # Projected once: every distinct inbound id exactly once, through either instance.
    projected = Counter(_projected_inbound(instances[0]))
    assert projected == Counter({f"wamid.REL{n:06d}": 1 for n in range(distinct)})
    with instances[1].client() as client:
        metrics = client.get("/metrics")
    assert metrics.status_code == 200
    for served in instances:
        assert served.stop() == 0
    assert len(graph.sends()) == distinct  # and none ran again before the end
    print(
        f"webhook flood: deliveries={len(order)} distinct={distinct} "
        f"duplicates={len(order) - distinct} lost=0 answered_in={elapsed:.1f}s"
        f" all_run_in={ran:.1f}s"
    )
