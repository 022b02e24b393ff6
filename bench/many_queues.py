"""Many queues: a claim's cost when many users' runs are in flight and nothing is due.

Each user has one message, claimed under a long lease (its run in flight, so its queue has
no due head); then ``claim_inbox_items`` (limit 8) is timed ``--claims`` times while nothing
is due, as the runtime's poll and every wake-up call it. A claim reads the due heads by the
``(due_at, id)`` index of ``svc_inbox_heads`` and stops at once; a plan that walks the heads
by id and filters ``due_at`` reads every queue's row first. In process, the store's own
calls (SQLite file, writer thread; PostgreSQL schema when ``SVC_TEST_POSTGRES_URL``
answers), for this checkout (``current``) and ``--baseline`` (a checkout with its own
``.venv``), one after the other in one run.

Prints one JSON line: the p50 and minimum per store and checkout, and the ratio baseline
over current.

    .venv/bin/python bench/many_queues.py [--baseline DIR] [--queues 20000,100000]
        [--claims 50] [--no-postgres]
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import _proc

T0 = datetime(2026, 11, 29, tzinfo=UTC)
CHUNK = 500


async def measure(kind: str, queues: int, claims: int, url: str | None) -> dict[str, float]:
    """The claim times (ms) of one fresh store with ``queues`` runs in flight."""
    from svc.store import InboxRow, PostgresStore, SqliteStore

    with tempfile.TemporaryDirectory(prefix="svc-bench-queues-") as tmp:
        schema = "bench_queues_" + secrets.token_hex(4)
        store: Any
        if kind == "sqlite":
            store = SqliteStore(f"{tmp}/svc.sqlite3", writer="thread")
        else:
            assert url is not None
            store = PostgresStore(url, schema=schema)
        try:
            await store.migrate()
            for start in range(0, queues, CHUNK):
                keys = [f"k{n}" for n in range(start, min(queues, start + CHUNK))]
                await store.record_webhook_updates(
                    event_key=f"d{start}",
                    event_hash="h",
                    received_at=T0,
                    update_keys=keys,
                    inbox=[
                        InboxRow(
                            update_key=key,
                            queue_key=f"q{key}",
                            phone_number_id=None,
                            kind="message",
                            sealed=b"x",
                        )
                        for key in keys
                    ],
                )
            taken = 0
            while taken < queues:
                taken += len(await store.claim_inbox_items(now=T0, limit=1000, lease_ms=3_600_000))
            times: list[float] = []
            for _ in range(claims):
                began = time.perf_counter()
                found = await store.claim_inbox_items(
                    now=T0 + timedelta(seconds=1), limit=8, lease_ms=60_000
                )
                times.append((time.perf_counter() - began) * 1000)
                assert found == []
        finally:
            await store.close()
            if kind == "postgres" and url is not None:
                _proc.drop_schema(url, schema)
    return {"p50": round(statistics.median(times), 3), "min": round(min(times), 3)}


def child(args: argparse.Namespace) -> None:
    import trio

    result = trio.run(measure, args.kind, args.queues_one, args.claims, args.url)
    print(json.dumps(result), flush=True)


def run(python: str, root: Path, kind: str, queues: int, claims: int, url: str | None) -> Any:
    command = [python, str(Path(__file__)), "--child", kind, "--queues-one", str(queues)]
    command += ["--claims", str(claims)] + (["--url", url] if url else [])
    out = subprocess.run(command, cwd=root, capture_output=True, check=True, timeout=1200)
    return json.loads(out.stdout.decode().strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="a checkout with its own .venv")
    parser.add_argument("--queues", default="20000,100000")
    parser.add_argument("--claims", type=int, default=50)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--queues-one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.kind = args.child
        child(args)
        return
    url = _proc.postgres_url_to_measure(args.no_postgres)
    sides = {"current": (sys.executable, _proc.ROOT)}
    if args.baseline:
        folder = Path(args.baseline).resolve()
        sides["baseline"] = (str(folder / ".venv" / "bin" / "python"), folder)
    busy_since = _proc.machine_busy_ticks()
    figures: dict[str, Any] = {}
    for kind in ["sqlite", *(["postgres"] if url else [])]:
        for queues in [int(part) for part in args.queues.split(",") if part.strip()]:
            row: dict[str, Any] = {}
            for name, (python, root) in sides.items():
                row[name] = run(python, root, kind, queues, args.claims, url)
            if "baseline" in row:
                row["baseline_over_current"] = round(
                    row["baseline"]["p50"] / max(row["current"]["p50"], 1e-9), 1
                )
            figures.setdefault(kind, {})[str(queues)] = row
    line = {
        "bench": "many_queues",
        "machine": _proc.machine(),
        "machine_busy_share": _proc.machine_busy_share(busy_since),
        "revisions": {name: _proc.git_head(root) for name, (_, root) in sides.items()},
        "what": "claim_inbox_items (limit 8) with N users' runs in flight, nothing due, ms",
        "claim_ms": figures,
    }
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
