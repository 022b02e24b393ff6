"""Text sends through the service to a local fake Graph: keyed against unkeyed, per store.

The service (``svc.http.create_app`` under hypercorn's trio worker, one
process) points ``Profile(base_url=...)`` at a tiny HTTP server on 127.0.0.1
that answers like Graph's ``/{phone}/messages``. A separate load-generator
process POSTs ``{prefix}/messages/text`` at concurrency 32, every request with
a fresh ``Idempotency-Key`` (keyed) or none (unkeyed), in alternating rounds,
with SQLite and with PostgreSQL (a schema of its own). Prints one JSON line:
sends/s, p50/p99 and the keyed/unkeyed ratio per store (target >= 0.8).

    .venv/bin/python bench/send.py [--quick] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import secrets
import tempfile
from typing import Any

import _proc

TOKEN = "bench-service-token"
CONCURRENCY = 32
TARGET = 0.8


def _one(
    store_args: list[str], graph_port: int, *, keyed: bool, count: int, warmup: int
) -> dict[str, Any]:
    port = _proc.free_port()
    argv = _proc.bench_server(
        "svc", port, "--token", TOKEN, "--base-url", f"http://127.0.0.1:{graph_port}", *store_args
    )
    extra = ["--token", TOKEN, "--count", str(count), "--warmup", str(warmup)]
    extra += ["--concurrency", str(CONCURRENCY), "--run", secrets.token_hex(4)]
    if keyed:
        extra.append("--keyed")
    with _proc.server(argv, port=port) as process:
        before, machine = _proc.tree_cpu_seconds(process.pid), _proc.machine_busy_ticks()
        result = _proc.load("send", port, *extra)
        spent = _proc.tree_cpu_seconds(process.pid) - before
        busy = _proc.machine_busy_share(machine)
    # The load generator builds its requests and warms up inside the same span.
    result["server_cpu_us_per_request"] = round(spent / (count + warmup) * 1e6, 1)
    if busy is not None:
        result["machine_busy_share"] = round(busy, 3)
    if set(result["statuses"]) != {"200"}:
        raise RuntimeError(f"sends answered {result['statuses']}")
    return result


def measure(args: argparse.Namespace, pg_url: str | None) -> dict[str, Any]:
    stores = ["sqlite"] + (["postgres"] if pg_url is not None else [])
    runs: dict[str, list[dict[str, Any]]] = {
        f"{store}_{mode}": [] for store in stores for mode in ("unkeyed", "keyed")
    }
    graph_port = _proc.free_port()
    with (
        tempfile.TemporaryDirectory(prefix="svc-bench-") as tmp,
        _proc.server(_proc.bench_server("fakegraph", graph_port), port=graph_port),
    ):
        for round_index in range(args.rounds):
            for name in runs:
                store, mode = name.split("_")
                schema = None
                if store == "sqlite":
                    path = f"{tmp}/{name}-{round_index}.sqlite3"
                    store_args = ["--store", "sqlite", "--sqlite-path", path]
                else:
                    assert pg_url is not None
                    schema = f"svc_bench_send_{secrets.token_hex(4)}"
                    store_args = ["--store", "postgres", "--pg-url", pg_url, "--pg-schema", schema]
                try:
                    runs[name].append(
                        _one(
                            store_args,
                            graph_port,
                            keyed=mode == "keyed",
                            count=args.count,
                            warmup=args.warmup,
                        )
                    )
                finally:
                    if schema is not None and pg_url is not None:
                        _proc.drop_schema(pg_url, schema)
    out: dict[str, Any] = {}
    for name, found in runs.items():
        middle = _proc.median_run(found)
        keys = ("rps", "p50_ms", "p99_ms", "rps_rounds", "server_cpu_us_per_request")
        out[name] = {k: middle[k] for k in (*keys, "machine_busy_share") if k in middle}
    for store in stores:
        ratio = out[f"{store}_keyed"]["rps"] / out[f"{store}_unkeyed"]["rps"]
        out[f"{store}_keyed_to_unkeyed"] = round(ratio, 3)
        out[f"{store}_meets_target"] = ratio >= TARGET
    if pg_url is None:
        out["postgres"] = {"skipped": "no PostgreSQL server reachable"}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short run (CI smoke)")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.count = args.count or (200 if args.quick else 3_000)
    args.warmup = 50 if args.quick else 400
    pg_url = _proc.postgres_url_to_measure(skip=args.no_postgres)
    line: dict[str, Any] = {
        "bench": "send",
        "quick": args.quick,
        "machine": _proc.machine(),
        "concurrency": CONCURRENCY,
        "requests_per_round": args.count,
        "rounds": args.rounds,
        "target_keyed_to_unkeyed": TARGET,
    }
    line.update(measure(args, pg_url))
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
