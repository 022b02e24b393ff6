"""Retention benchmark: a SQLite file under a sustained webhook flood, with and without pruning.

Each delivery is one ``record_webhook_updates`` of 8 updates (4 inbound
messages, 4 statuses) with their 8 update keys, on a virtual clock of 100
deliveries per second. With retention, ``prune`` runs every ``--prune-every``
deliveries with a horizon of ``--horizon`` virtual seconds for every kind of
record (dedupe keys and messages alike). Printed: the file size (database plus
WAL) at each quarter of the run for both variants, and the ratio of the final
sizes (retention / none).

    .venv/bin/python bench/retention.py [--deliveries 20000] [--quick]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import trio

from svc.store import MessageRecord, SqliteStore, StatusEvent

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RATE = 100


def _size(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


async def _flood(
    path: Path, deliveries: int, retention: bool, args: argparse.Namespace
) -> dict[str, object]:
    store = SqliteStore(path)
    await store.migrate()
    sizes: list[int] = []
    pruned = 0
    started = time.perf_counter()
    try:
        for n in range(deliveries):
            at = T0 + timedelta(seconds=n / RATE)
            messages = [
                MessageRecord(
                    row_id=f"r{n}-{i}",
                    wa_message_id=f"wamid.in{n}-{i}",
                    direction="inbound",
                    from_phone="15551234567",
                    type="text",
                    status="received",
                    created_at=at,
                    updated_at=at,
                )
                for i in range(4)
            ]
            statuses = [
                StatusEvent(wa_message_id=f"wamid.out{n}-{i}", status="delivered", timestamp=at)
                for i in range(4)
            ]
            await store.record_webhook_updates(
                event_key=f"e{n}",
                event_hash="h",
                received_at=at,
                update_keys=[f"m{n}-{i}" for i in range(4)] + [f"s{n}-{i}" for i in range(4)],
                messages=messages,
                statuses=statuses,
            )
            if retention and n % args.prune_every == args.prune_every - 1:
                cutoff = at - timedelta(seconds=args.horizon)
                report = await store.prune(older_than=cutoff, messages_older_than=cutoff)
                pruned += report.total
            if (n + 1) % (deliveries // 4) == 0:
                sizes.append(_size(path))
    finally:
        await store.close()
    return {
        "sizes_bytes": sizes,
        "rows_pruned": pruned,
        "deliveries_per_s": round(deliveries / (time.perf_counter() - started)),
    }


async def main(args: argparse.Namespace) -> None:
    deliveries = 2_000 if args.quick else args.deliveries
    with tempfile.TemporaryDirectory() as folder:
        none = await _flood(Path(folder) / "none.db", deliveries, False, args)
        kept = await _flood(Path(folder) / "kept.db", deliveries, True, args)
    final_none = none["sizes_bytes"][-1]  # type: ignore[index]
    final_kept = kept["sizes_bytes"][-1]  # type: ignore[index]
    print(
        json.dumps(
            {
                "benchmark": "retention",
                "deliveries": deliveries,
                "updates_per_delivery": 8,
                "virtual_rate_per_s": RATE,
                "horizon_s": args.horizon,
                "prune_every": args.prune_every,
                "no_retention": none,
                "retention": kept,
                "ratio_final_size": round(final_kept / final_none, 3),
            }
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--deliveries", type=int, default=20_000)
    parser.add_argument("--horizon", type=float, default=20.0)
    parser.add_argument("--prune-every", type=int, default=500)
    parser.add_argument("--quick", action="store_true")
    trio.run(main, parser.parse_args())
