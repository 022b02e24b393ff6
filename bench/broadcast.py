"""Paced broadcast throughput against the configured limit, per store.

The service app (``svc.http.create_app``) with its paced sender runs in process
on the real clock; its Graph is an ``httpx.MockTransport`` that answers every
send at once and records when it came, so the figure is the pacing itself.
One broadcast of ``--recipients`` goes through ``POST /api/broadcasts``; the
throughput is the accepted sends over the time from the first to the last, and
``max_in_1s`` the most sends in any one-second window. With SQLite, PostgreSQL
(a throw-away schema, when ``SVC_TEST_POSTGRES_URL`` answers) and two
instances sharing PostgreSQL. Prints one JSON line; target: every throughput
within 5% of the limit. ``max_in_1s`` can pass the limit by a few sends: a send
woken a little late shares its second with the next slots, which the platform's
one-second bucket absorbs.

    .venv/bin/python bench/broadcast.py [--quick] [--rate 80] [--recipients 800]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import trio
from prometheus_client import CollectorRegistry

from svc.http import BroadcastOptions, Profile, ServiceSecrets, create_app
from svc.store import PostgresStore, SqliteStore

TOKEN = "bench-service-token"
PHONE = "106540352242922"
TOLERANCE = 0.05
SECRETS = ServiceSecrets(
    access_token="bench-access-token",
    webhook_verify_token="bench-verify",
    webhook_app_secret="bench-app-secret",
    service_bearer_token=TOKEN,
)


def _transport(times: list[float]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        times.append(time.monotonic())
        return httpx.Response(200, json={"messages": [{"id": f"wamid.B{len(times)}"}]})

    return httpx.MockTransport(handler)


async def _run(stores: list[Any], rate: int, count: int) -> dict[str, Any]:
    times: list[float] = []
    apps = [
        create_app(
            profile=Profile(phone_number_id=PHONE),
            secrets=SECRETS,
            transport=_transport(times),
            store=store,
            metrics_registry=CollectorRegistry(),
            broadcast_options=BroadcastOptions(rate_per_second=rate),
        )
        for store in stores
    ]
    body = {
        "message": {"type": "template", "name": "bench", "languageCode": "en"},
        "recipients": [{"to": f"1650{n:07d}"} for n in range(count)],
    }
    headers = {"Authorization": f"Bearer {TOKEN}", "Idempotency-Key": secrets.token_hex(8)}
    async with apps[0].test_app() as first:
        client = first.test_client()
        if len(apps) > 1:
            async with apps[1].test_app():
                await _drive(client, body, headers)
        else:
            await _drive(client, body, headers)
    assert len(times) == count, (len(times), count)
    span = times[-1] - times[0]
    window = max(sum(1 for t in times[i:] if t < start + 1.0) for i, start in enumerate(times))
    throughput = (count - 1) / span if span > 0 else 0.0
    return {
        "per_s": round(throughput, 2),
        "ratio": round(throughput / rate, 4),
        "max_in_1s": window,
    }


async def _drive(client: Any, body: dict[str, Any], headers: dict[str, str]) -> None:
    answer = await client.post("/api/broadcasts", json=body, headers=headers)
    assert answer.status_code == 202, answer.status_code
    bid = (await answer.get_json())["broadcastId"]
    auth = {"Authorization": headers["Authorization"]}
    while True:
        await trio.sleep(0.2)
        status = await (await client.get(f"/api/broadcasts/{bid}", headers=auth)).get_json()
        if status["state"] == "done":
            return


def _postgres_url() -> str | None:
    url = os.environ.get("SVC_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
    try:
        import psycopg

        psycopg.connect(url, connect_timeout=3).close()
    except Exception:  # noqa: BLE001 - any failure means "no server": reported as skipped
        return None
    return url


async def _postgres(url: str, instances: int, rate: int, count: int) -> dict[str, Any]:
    import psycopg

    schema = f"svc_bench_broadcast_{secrets.token_hex(4)}"
    stores = [PostgresStore(url, schema=schema, min_size=1, max_size=4) for _ in range(instances)]
    try:
        for store in stores:
            await store.migrate()
        return await _run(stores, rate, count)
    finally:
        for store in stores:
            await store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


async def main(args: argparse.Namespace) -> dict[str, Any]:
    rate, count = args.rate, args.recipients
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteStore(Path(folder) / "bench.sqlite3")
        await store.migrate()
        try:
            results["sqlite"] = await _run([store], rate, count)
        finally:
            await store.close()
    url = None if args.no_postgres else _postgres_url()
    if url is None:
        results["postgres"] = "skipped"
    else:
        results["postgres"] = await _postgres(url, 1, rate, count)
        if not args.quick:
            results["postgres_2_instances"] = await _postgres(url, 2, rate, count)
    measured = [r for r in results.values() if isinstance(r, dict)]
    ok = all(abs(1 - r["ratio"]) <= TOLERANCE for r in measured)
    return {
        "bench": "broadcast",
        "rate_per_s": rate,
        "recipients": count,
        **results,
        "target": {"ratio_within": TOLERANCE},
        "ok": ok,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=80)
    parser.add_argument("--recipients", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="200 recipients, one PG instance.")
    parser.add_argument("--no-postgres", action="store_true")
    parsed = parser.parse_args()
    if parsed.recipients is None:
        parsed.recipients = 200 if parsed.quick else 10 * parsed.rate
    print(json.dumps(trio.run(main, parsed)), flush=True)
