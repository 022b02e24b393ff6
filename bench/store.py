"""Store benchmark: one JSON line per adapter.

Figures: record_message inserts/s and claim_service_request/s (waves of 50
concurrent callers), record_message/s at a steady concurrency of 32 (the
group-commit figure; on PostgreSQL also the pre-batching path, one transaction
per call, measured in the same run, and their ratio), and list_messages(limit=50)
p50 at 10k and at 1M rows with their ratio, and webhook deliveries/s at
concurrency 32 (1 message + 3 statuses each) as one record_webhook_delivery
call against the separate calls it replaces (record_webhook_event, then the 4
projection calls started together), with their ratio. Targets: ratio <= 1.5 (index-bound,
never a scan), SQLite inserts >= 5,000/s, PostgreSQL record_message at
concurrency 32 >= 5,000/s. PostgreSQL runs when SVC_TEST_POSTGRES_URL is set
(in a throw-away schema). Rows beyond the timed inserts are bulk-loaded with
SQL so the 1M-row point is reached in seconds.

    .venv/bin/python bench/store.py [--rows 1000000] [--adapters sqlite,postgres]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import trio

from svc.store import MessageRecord, PostgresStore, SqliteStore, StatusEvent, _ops
from svc.store import _validate as check

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T0_MS = int(T0.timestamp() * 1000)
CONCURRENCY = 50
STEADY_CONCURRENCY = 32
INSERTS = 5_000
STEADY_INSERTS = 6_000
UNBATCHED_INSERTS = 2_000
CLAIMS = 5_000
LIST_SAMPLES = 400
DELIVERIES = 3_000


def _message(i: int) -> MessageRecord:
    at = T0 + timedelta(milliseconds=i)
    return MessageRecord(
        row_id=f"t{i:09d}",
        wa_message_id=f"wamid.t{i}",
        direction="outbound",
        to_phone="15551234567",
        type="text",
        status="sent",
        created_at=at,
        updated_at=at,
    )


def _delivery(i: int) -> tuple[MessageRecord, tuple[StatusEvent, ...]]:
    """Delivery ``i``: one new inbound message and 'delivered' for three earlier sends."""
    at = T0 + timedelta(seconds=1, milliseconds=i)
    inbound = MessageRecord(
        row_id=f"d{i:09d}",
        wa_message_id=f"wamid.d{i}",
        direction="inbound",
        from_phone="15551234567",
        type="text",
        status="received",
        created_at=at,
        updated_at=at,
    )
    statuses = tuple(
        StatusEvent(
            wa_message_id=f"wamid.t{(3 * i + k) % INSERTS}", status="delivered", timestamp=at
        )
        for k in range(3)
    )
    return inbound, statuses


async def _in_batches(count: int, call: object) -> float:
    """Run ``call(i)`` for i < count, CONCURRENCY callers at a time; return calls/s."""
    started = time.perf_counter()
    for base in range(0, count, CONCURRENCY):
        async with trio.open_nursery() as nursery:
            for i in range(base, min(base + CONCURRENCY, count)):
                nursery.start_soon(call, i)  # type: ignore[arg-type]
    return count / (time.perf_counter() - started)


async def _steady(count: int, call: object, *, workers: int = STEADY_CONCURRENCY) -> float:
    """Run ``call(i)`` for i < count with ``workers`` callers always in flight; return calls/s."""
    numbers = iter(range(count))

    async def worker() -> None:
        for i in numbers:
            await call(i)  # type: ignore[operator]

    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(workers):
            nursery.start_soon(worker)
    return count / (time.perf_counter() - started)


async def _list_p50(store: SqliteStore | PostgresStore, total: int) -> float:
    rng = random.Random(7)
    timings = []
    for n in range(LIST_SAMPLES):
        cursor = None if n % 4 == 0 else f"b{rng.randrange(total):09d}"
        started = time.perf_counter()
        page = await store.list_messages(limit=50, before_row_id=cursor)
        timings.append(time.perf_counter() - started)
        assert page.items
    return statistics.median(timings) * 1000


def _fill_sqlite(path: Path, start: int, stop: int) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        rows = (
            (
                f"b{i:09d}",
                f"wamid.b{i}",
                "inbound" if i % 3 == 0 else "outbound",
                f"1555{i % 10_000:07d}",
                "text",
                "delivered",
                T0_MS - 10_000_000 + i * 7,
            )
            for i in range(start, stop)
        )
        conn.executemany(
            "INSERT INTO svc_messages (row_id, wa_message_id, direction, from_phone, type,"
            " status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            ((*r, r[-1]) for r in rows),
        )
        conn.commit()
        conn.execute("ANALYZE")
    finally:
        conn.close()


def _fill_postgres(url: str, schema: str, start: int, stop: int) -> None:
    with psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}") as conn:
        conn.execute(
            "INSERT INTO svc_messages (row_id, wa_message_id, direction, from_phone, type,"
            " status, created_at, updated_at)"
            " SELECT 'b' || lpad(i::text, 9, '0'), 'wamid.b' || i,"
            "  CASE WHEN i %% 3 = 0 THEN 'inbound' ELSE 'outbound' END,"
            "  '1555' || lpad((i %% 10000)::text, 7, '0'), 'text', 'delivered',"
            "  %(base)s + i * 7, %(base)s + i * 7"
            " FROM generate_series(%(start)s::bigint, %(stop)s::bigint - 1) AS i",
            {"base": T0_MS - 10_000_000, "start": start, "stop": stop},
        )
        conn.execute("VACUUM (ANALYZE) svc_messages")  # hint bits set, as in steady state


async def bench(adapter: str, rows: int, url: str | None) -> dict[str, object]:
    workdir = tempfile.TemporaryDirectory(prefix="svc-bench-")
    schema = f"svc_bench_{secrets.token_hex(4)}"
    path = Path(workdir.name) / "bench.db"
    store: SqliteStore | PostgresStore
    if adapter == "sqlite":
        store = SqliteStore(path)
    else:
        assert url is not None
        store = PostgresStore(url, schema=schema, max_size=10)
    try:
        await store.migrate()

        async def insert(i: int) -> None:
            await store.record_message(_message(i))

        async def claim(i: int) -> None:
            await store.claim_service_request(
                idempotency_key=f"k{i}", request_hash="h", created_at=T0
            )

        async def insert_steady(i: int) -> None:
            await store.record_message(_message(INSERTS + i))

        async def insert_unbatched(i: int) -> None:
            # The pre-batching path: the same operation, one transaction per call.
            values = check.message(_message(INSERTS + STEADY_INSERTS + i))
            await store._call("outbox_failed", lambda s: _ops.record_message(s, values), write=True)

        async def deliver(i: int) -> None:
            inbound, statuses = _delivery(i)
            await store.record_webhook_delivery(
                event_key=f"ev{i}",
                event_hash="h",
                received_at=T0,
                messages=(inbound,),
                statuses=statuses,
            )

        async def deliver_separately(i: int) -> None:
            # The path record_webhook_delivery replaces: the event, then 4 calls at once.
            inbound, statuses = _delivery(DELIVERIES + i)
            await store.record_webhook_event(
                event_key=f"ev{DELIVERIES + i}", event_hash="h", received_at=T0
            )
            async with trio.open_nursery() as nursery:
                nursery.start_soon(store.record_message, inbound)
                for event in statuses:
                    nursery.start_soon(
                        lambda e=event: store.append_message_status(
                            wa_message_id=e.wa_message_id, status=e.status, timestamp=e.timestamp
                        )
                    )

        inserts = await _in_batches(INSERTS, insert)
        claims = await _in_batches(CLAIMS, claim)

        def fill(start: int, stop: int) -> None:
            if adapter == "sqlite":
                _fill_sqlite(path, start, stop)
            else:
                assert url is not None
                _fill_postgres(url, schema, start, stop)

        small = 10_000
        fill(0, small - INSERTS)
        p50_small = await _list_p50(store, small - INSERTS)
        steady = await _steady(STEADY_INSERTS, insert_steady)
        unbatched = None
        if adapter == "postgres":
            unbatched = await _steady(UNBATCHED_INSERTS, insert_unbatched)
        delivered = await _steady(DELIVERIES, deliver)
        separately = await _steady(DELIVERIES, deliver_separately)
        timed = INSERTS + STEADY_INSERTS + (UNBATCHED_INSERTS if unbatched else 0)
        fill(small - INSERTS, rows - timed)
        p50_large = await _list_p50(store, rows - timed)
        ratio = p50_large / p50_small
        steady_figures: dict[str, object] = {
            f"record_message_c{STEADY_CONCURRENCY}_per_s": round(steady)
        }
        if unbatched is not None:
            steady_figures[f"record_message_c{STEADY_CONCURRENCY}_unbatched_per_s"] = round(
                unbatched
            )
            steady_figures["ratio_batched_vs_unbatched"] = round(steady / unbatched, 2)
        steady_figures[f"record_webhook_delivery_c{STEADY_CONCURRENCY}_per_s"] = round(delivered)
        steady_figures[f"event_plus_4_calls_c{STEADY_CONCURRENCY}_per_s"] = round(separately)
        steady_figures["ratio_delivery_vs_separate_calls"] = round(delivered / separately, 2)
        steady_ok = adapter != "postgres" or steady >= 5000
        return {
            "bench": "store",
            "adapter": adapter,
            "concurrency": CONCURRENCY,
            "record_message_per_s": round(inserts),
            "claim_service_request_per_s": round(claims),
            **steady_figures,
            "list_messages_p50_ms_10k": round(p50_small, 3),
            f"list_messages_p50_ms_{rows // 1000}k": round(p50_large, 3),
            "ratio_large_vs_10k": round(ratio, 2),
            "targets": {
                "ratio_max": 1.5,
                "sqlite_inserts_per_s_min": 5000,
                f"postgres_c{STEADY_CONCURRENCY}_inserts_per_s_min": 5000,
            },
            "ok": ratio <= 1.5 and (adapter != "sqlite" or inserts >= 5000) and steady_ok,
        }
    finally:
        await store.close()
        workdir.cleanup()
        if adapter == "postgres" and url is not None:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--adapters", default="sqlite,postgres")
    args = parser.parse_args()
    url = os.environ.get("SVC_TEST_POSTGRES_URL")
    for adapter in args.adapters.split(","):
        if adapter == "postgres" and not url:
            print(json.dumps({"bench": "store", "adapter": adapter, "skipped": "no URL"}))
            continue
        result = trio.run(bench, adapter, args.rows, url)
        print(json.dumps(result), flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
