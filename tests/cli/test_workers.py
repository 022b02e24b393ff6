"""``svc serve --workers 2``: two processes share the socket and the store; /metrics sums them."""

from __future__ import annotations

import re
import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests._support import ServeProcess, start_serve

pytestmark = pytest.mark.slow

HEALTHZ = re.compile(
    r'^http_requests_total\{method="GET",route="/healthz",status_class="2xx"\} (\d+)\.0$', re.M
)


def _healthz(url: str) -> int:
    # A fresh connection per request, so the kernel spreads them over both workers.
    return httpx.get(url + "/healthz", timeout=10).status_code


def test_two_workers_report_the_sum_of_their_counters(
    project: Path, serving: list[ServeProcess]
) -> None:
    served = start_serve(
        "--config",
        str(project / "svc.config.yaml"),
        "--dry-run",
        "--workers",
        "2",
        "--database",
        str(project / "svc.db"),
        "--port",
        "0",
    )
    serving.append(served)
    assert "2 workers" in served.lines[-1]
    token = served.secrets["serviceBearerToken"]
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(_healthz, [served.url] * 40))
    assert statuses == [200] * 40
    totals = set()
    for _ in range(6):
        answer = httpx.get(
            served.url + "/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=10
        )
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/plain")
        found = HEALTHZ.search(answer.text)
        assert found is not None, answer.text
        totals.add(int(found.group(1)))
    # Whichever worker answers, it reports all 40 requests: the sum over both processes.
    assert totals == {40}
    # Both workers answer sends, on the one SQLite store.
    with ThreadPoolExecutor(max_workers=4) as pool:
        sends = list(
            pool.map(
                lambda n: (
                    httpx.post(
                        served.url + "/api/messages/text",
                        json={"to": "15551234567", "text": f"n{n}"},
                        headers={"Authorization": f"Bearer {token}"},
                        timeout=10,
                    ).status_code
                ),
                range(6),
            )
        )
    assert sends == [200] * 6
    listed = httpx.get(
        served.url + "/api/messages", headers={"Authorization": f"Bearer {token}"}, timeout=10
    )
    assert len(listed.json()["items"]) == 6
    assert served.stop(signal.SIGTERM) == 0
    assert served.lines[-1] == "svc: stopped."
