"""A stand-alone outbox worker process for the reliability tests (run as a script).

``python _outbox_worker.py (--sqlite PATH | --dsn-env NAME) --graph URL`` opens
the store, optionally enqueues ``--enqueue N`` items, then runs the real
``run_outbox_worker`` loop, whose handler POSTs each item to the fake Graph.
Its clock is the wall clock plus ``--clock-offset`` seconds (the lease is fixed
at five minutes, so a later worker "after the lease" runs with an offset).
It prints ``handling <id> <lease>`` before each delivery and exits 0 once a
tick finds nothing due.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime, timedelta

import httpx
import trio

from svc.store import (
    OutboxItem,
    OutboxReport,
    OutboxWorkerOptions,
    PostgresStore,
    SqliteStore,
    run_outbox_worker,
)


async def main(args: argparse.Namespace) -> int:
    store = SqliteStore(args.sqlite) if args.sqlite else PostgresStore(os.environ[args.dsn_env])
    offset = timedelta(seconds=args.clock_offset)

    def now() -> datetime:
        return datetime.now(UTC) + offset

    await store.migrate()
    for n in range(args.enqueue):
        await store.enqueue_outbox_item(id=f"item-{n:04d}", payload_hash=f"h{n}", created_at=now())
    async with httpx.AsyncClient(base_url=args.graph, timeout=120) as client:

        async def deliver(item: OutboxItem) -> None:
            print(f"handling {item.id} {item.lease_id}", flush=True)
            response = await client.post("/outbox", json={"id": item.id})
            response.raise_for_status()

        async with trio.open_nursery() as nursery:
            idle = trio.Event()

            def report(tick: OutboxReport) -> None:
                print(f"tick processed={tick.processed} succeeded={tick.succeeded}", flush=True)
                if tick.processed == 0:
                    idle.set()

            # One tick in flight: the test kills the worker with exactly one batch leased.
            options = OutboxWorkerOptions(
                handler=deliver,
                interval=0.02,
                batch_limit=args.batch,
                now=now,
                on_report=report,
                max_ticks_in_flight=1,
            )
            handle = await nursery.start(run_outbox_worker, store, options)
            await idle.wait()
            await handle.stop()
    await store.close()
    print("idle", flush=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sqlite")
    parser.add_argument("--dsn-env")
    parser.add_argument("--graph", required=True)
    parser.add_argument("--enqueue", type=int, default=0)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--clock-offset", type=float, default=0.0)
    sys.exit(trio.run(main, parser.parse_args()))
