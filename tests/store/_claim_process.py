"""Helper run as a separate OS process: claims keys on one SQLite file after a go signal."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime

import trio

from svc.store import Claimed, SqliteStore


async def main(path: str, keys: int) -> None:
    store = SqliteStore(path, busy_timeout_ms=30_000)
    try:
        await store.count_outbox_pending()  # open the connection before the race
        print("ready", flush=True)
        await trio.to_thread.run_sync(sys.stdin.readline)
        claimed = []
        now = datetime.now(UTC)
        for i in range(keys):
            result = await store.claim_service_request(
                idempotency_key=f"key-{i}", request_hash="h", created_at=now
            )
            if result == Claimed():
                claimed.append(i)
        print(json.dumps(claimed), flush=True)
    finally:
        await store.close()


if __name__ == "__main__":
    trio.run(main, sys.argv[1], int(sys.argv[2]))
