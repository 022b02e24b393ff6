"""wrk as the webhook load generator: signed deliveries pre-built here, replayed by ``_replay.lua``.

wrk (C, epoll, one thread) spends a fraction of the CPU that the asyncio load
generator (``_loadgen``) spends per request. On a 2-core machine the load
generator shares the cores with the servers it measures, so its own cost caps
what a two-worker server can show; wrk leaves more of the machine to the server.
wrk runs for a fixed duration, so the request file holds more deliveries than
a run can send, and a run that ran out (``wrapped``) is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import _deliveries

SCRIPT = Path(__file__).resolve().parent / "_replay.lua"


def available() -> bool:
    return shutil.which("wrk") is not None


def _write_requests(path: Path, found: list[_deliveries.Delivery], host: str) -> None:
    with path.open("wb") as out:
        for delivery in found:
            out.write(_deliveries.http_request(delivery, host=host))
            out.write(b"\0")


def _wrk(port: int, requests: Path, *, concurrency: int, seconds: float) -> dict[str, object]:
    done = subprocess.run(
        [
            "wrk",
            "--threads",
            "1",
            "--connections",
            str(concurrency),
            "--duration",
            f"{max(1, round(seconds))}s",
            "--timeout",
            "10s",
            "--script",
            str(SCRIPT),
            f"http://127.0.0.1:{port}/",
        ],
        env={**os.environ, "WRK_REQUESTS": str(requests), "WRK_THREADS": "1"},
        capture_output=True,
        check=True,
        timeout=seconds + 60,
    )
    result: dict[str, object] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return result


def load_webhook(
    port: int,
    *,
    secret: str,
    count: int,
    warmup: int,
    concurrency: int,
    seconds: float,
    run: str,
    cpu: Callable[[], float] | None = None,
    duplicates: float = _deliveries.DUPLICATE_SHARE,
    single_text: bool = False,
) -> dict[str, object]:
    """Warm up with ``warmup`` deliveries, then send for ``seconds`` from ``count`` fresh ones
    (``duplicates`` of them copies of earlier ones; ``single_text``: one text message from a
    user of its own each, as ``_deliveries.deliveries`` makes them).

    Returns ``_loadgen``'s JSON shape plus ``"loadgen": "wrk"``; with ``cpu`` (the
    server's CPU seconds so far), also the server's CPU per request of the timed run.
    """
    host = f"127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="svc-bench-wrk-") as tmp:
        warm = Path(tmp) / "warmup.bin"
        timed = Path(tmp) / "timed.bin"
        warm_found = _deliveries.deliveries(
            warmup, secret, run=f"{run}w", duplicates=duplicates, single_text=single_text
        )
        found = _deliveries.deliveries(
            count, secret, run=run, duplicates=duplicates, single_text=single_text
        )
        _write_requests(warm, warm_found, host)
        _write_requests(timed, found, host)
        _wrk(port, warm, concurrency=concurrency, seconds=1)
        before = cpu() if cpu is not None else 0.0
        result = _wrk(port, timed, concurrency=concurrency, seconds=seconds)
        spent = cpu() - before if cpu is not None else 0.0
    if result["wrapped"]:
        raise RuntimeError(
            f"wrk sent all {count} pre-built deliveries within {seconds} s; raise --count"
        )
    statuses = result["statuses"]
    assert isinstance(statuses, dict)
    result["statuses"] = {k: v for k, v in statuses.items() if v}
    result["loadgen"] = "wrk"
    requests = result["requests"]
    if cpu is not None and isinstance(requests, int) and requests:
        result["server_cpu_us_per_request"] = round(spent / requests * 1e6, 1)
    return result
