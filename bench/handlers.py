"""Handlers in the served service: the webhook answer's latency with handlers of 0, 1 and 5 s.

svc under hypercorn's trio worker with a SQLite file (its writer process, as ``svc
serve`` runs it), fed signed deliveries of one text message each, every one from a
user of its own, no duplicates, by a separate load-generator process on 127.0.0.1.
A message handler's updates are sealed into the store's inbox with the delivery's
record, and the inbox workers of the same process run them after the answer
(``--handler-concurrency`` 8). In one run:

1. the ingestion rate with no handler (closed loop, 32 connections: wrk for
   ``--closed-seconds`` when it is installed, as ``bench/http_ingest.py`` sends, else the
   asyncio generator for ``--count`` deliveries; ``--loadgen`` picks): ``ingestion_rps``;
   the same with a no-op message handler: ``share_kept_with_handlers`` is its rate over
   the first (target: at least 0.8); ``--rounds`` alternated rounds of each, the median
   round reported with every round's figure;
2. in those no-op rounds, the inbox's throughput: ``inbox_runs_per_s``, every delivery's
   run from the first request until the inbox is empty (while ingesting, then after),
   over the no-handler ingestion rate (``inbox_runs_over_ingestion``); the backlog
   left when the load ended, and the runs per second that drained it;
3. in process (``in_process``): svc's ASGI app called directly by 32 concurrent callers
   under trio, its runtime started by the ASGI lifespan, the SQLite writer process beside it,
   with no handler and with the no-op one until its inbox is empty; the app's process CPU a
   delivery (the writer process not counted: served, it has a core of its own) and their
   difference, ``run_us``, which is what a run costs the serving process;
4. at a fixed open-loop rate, half of that no-handler rate, sent by the generator's own
   pacing whatever the answers (latency from each request's scheduled time): the
   answer's p50/p99 with no handler and with a message handler that takes 0 s, 1 s
   and 5 s (``await trio.sleep``). Targets: with the 5 s handler, p99 within 1.2x of the
   no-handler p99 and under 50 ms.

``--baseline DIR`` serves an earlier checkout (DIR holds its own ``.venv``) beside this one:
its closed-loop rounds rotate with these, and its answers with no handler and with the
slowest are measured at the same rate; ``baseline`` holds its figures and
``share_kept_over_baseline`` the ratio of the two shares.

Prints one JSON line, with the machine it ran on and how busy the machine was.

    .venv/bin/python bench/handlers.py [--quick] [--seconds 8] [--delays 0,1,5] [--rounds 3]
        [--loadgen auto|wrk|asyncio] [--closed-seconds 5] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import secrets
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _asgi
import _deliveries
import _proc
import _wrk

SECRET = "bench-app-secret"
CONCURRENCY = 32
P99_RATIO_TARGET = 1.2
P99_MS_TARGET = 50.0
SHARE_KEPT_TARGET = 0.8
DRAIN_SECONDS = 300.0


def _server(port: int, sqlite_path: str, delay: float | None, root: Path = _proc.ROOT) -> list[str]:
    extra = ["--secret", SECRET, "--store", "sqlite", "--sqlite-path", sqlite_path]
    if delay is not None:
        extra += ["--handler-delay", str(delay)]
    return _proc.bench_server("svc", port, *extra, root=root)


def _count(sqlite_path: str, table: str) -> int:
    """The rows of ``table`` in the server's file, read beside the server."""
    conn = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True, timeout=5)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # noqa: S608
    finally:
        conn.close()


def _inbox_left(sqlite_path: str) -> int:
    """Rows still in the inbox (pending, running or dead)."""
    return _count(sqlite_path, "svc_inbox")


def _send_closed(
    port: int, count: int, warmup: int, seconds: float | None, cpu: Callable[[], float]
) -> dict[str, Any]:
    """32 connections, each sending on the previous answer: wrk for ``seconds`` (from a pool
    of ``count`` fresh deliveries), or the asyncio generator for ``count`` (``seconds`` None);
    ``requests`` counts the warm-up too, as the server recorded it."""
    run = secrets.token_hex(3)
    if seconds is not None:
        result: dict[str, Any] = _wrk.load_webhook(
            port,
            secret=SECRET,
            count=count,
            warmup=warmup,
            concurrency=CONCURRENCY,
            seconds=seconds,
            run=run,
            cpu=cpu,
            duplicates=0,
            single_text=True,
        )
        return result
    before = cpu()
    result = _proc.load(
        "webhook",
        port,
        *("--secret", SECRET, "--count", str(count), "--warmup", str(warmup)),
        *("--concurrency", str(CONCURRENCY), "--duplicates", "0", "--single-text"),
        *("--run", run),
    )
    result["server_cpu_us_per_request"] = round((cpu() - before) / (count + warmup) * 1e6, 1)
    return result


def _closed_loop(
    argv: list[str],
    port: int,
    count: int,
    warmup: int,
    inbox: str | None = None,
    seconds: float | None = None,
) -> dict[str, Any]:
    """The server's ingestion rate (``_send_closed``) and its CPU per request.

    With ``inbox`` (the server's SQLite file, handlers on), also the time until every
    delivery's run is done: ``inbox_runs_per_s`` from the first request.
    """
    with _proc.server(argv, port=port) as process:
        began = time.perf_counter()
        result = _send_closed(
            port, count, warmup, seconds, lambda: _proc.tree_cpu_seconds(process.pid)
        )
        if inbox is not None:
            loaded = time.perf_counter()
            backlog = left = _inbox_left(inbox)
            while left and time.perf_counter() - loaded < DRAIN_SECONDS:
                time.sleep(0.02)
                left = _inbox_left(inbox)
            drained = time.perf_counter()
            # Every message recorded ran (or is left): the warm-up's too.
            runs = _count(inbox, "svc_webhook_updates") - left
            result["inbox_runs_per_s"] = round(runs / (drained - began), 1)
            result["inbox_backlog_at_load_end"] = backlog
            result["inbox_drain_runs_per_s"] = (
                round((backlog - left) / (drained - loaded), 1) if backlog else None
            )
            result["inbox_left"] = left
    return result


def _in_process(count: int, handler: bool, tmp: str) -> float:
    """The app's process CPU µs a delivery, in process (step 3 of the docstring)."""
    import _serve
    import trio

    path = f"{tmp}/inproc-{secrets.token_hex(3)}.sqlite3"
    store = _serve.open_store("sqlite", sqlite_path=path, pg_url=None, pg_schema=None)
    found = _deliveries.deliveries(
        count, SECRET, run=secrets.token_hex(3), duplicates=0, single_text=True
    )
    callers = _asgi.Callers(found)

    async def main() -> float:
        await store.migrate()
        app = _serve.svc_app(
            secret=SECRET,
            token="bench-service-token",
            store=store,
            handler_delay=0 if handler else None,
        )
        to_app, from_bench = trio.open_memory_channel[dict[str, Any]](1)
        started = trio.Event()
        said: list[str] = []

        async def send(message: dict[str, Any]) -> None:
            said.append(message["type"])
            if message["type"].startswith("lifespan.startup."):
                started.set()

        lifespan = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
        async with trio.open_nursery() as nursery:
            nursery.start_soon(app, lifespan, from_bench.receive, send)
            await to_app.send({"type": "lifespan.startup"})
            await started.wait()
            if said[-1] != "lifespan.startup.complete":
                raise RuntimeError(f"the app did not start: {said[-1]}")
            began = time.process_time()
            async with trio.open_nursery() as callers_nursery:
                for _ in range(CONCURRENCY):
                    callers_nursery.start_soon(callers.call, app)
            while handler and _inbox_left(path):
                await trio.sleep(0.05)
            spent = time.process_time() - began
            await to_app.send({"type": "lifespan.shutdown"})
        await store.close()
        return spent / count * 1e6

    spent = trio.run(main)
    callers.check("svc")
    return spent


def _open_loop(argv: list[str], port: int, rate: float, seconds: float) -> dict[str, Any]:
    """The answers' latency when deliveries arrive at ``rate`` per second, whatever happens."""
    count = max(1, int(rate * seconds))
    warmup = max(1, count // 20)
    with _proc.server(argv, port=port):
        return _proc.load(
            "webhook",
            port,
            *("--secret", SECRET, "--count", str(count), "--warmup", str(warmup)),
            *("--rate", str(rate), "--duplicates", "0", "--single-text"),
            *("--run", secrets.token_hex(3)),
        )


def _short(result: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: result[key] for key in keys if key in result}


def _in_process_line(seen: dict[str, list[float]], count: int) -> dict[str, Any]:
    """The in-process figures: each the median round, with its rounds, and ``run_us``."""
    line: dict[str, Any] = {"deliveries_per_round": count}
    for key, rounds in seen.items():
        line[key] = round(statistics.median(rounds), 1)
        line[f"{key}_rounds"] = [round(value, 1) for value in rounds]
    line["run_us"] = round(line["noop_handler_us"] - line["no_handler_us"], 1)
    line["run_us_rounds"] = [
        round(mine - base, 1)
        for mine, base in zip(seen["noop_handler_us"], seen["no_handler_us"], strict=True)
    ]
    return line


def _closed_figures(
    bare_rounds: list[dict[str, Any]], noop_rounds: list[dict[str, Any]]
) -> dict[str, Any]:
    """The closed loop's figures of one checkout: each the median round, with its rounds."""
    bare, noop = _proc.median_run(bare_rounds), _proc.median_run(noop_rounds)
    return {
        "ingestion_rps": bare["rps"],
        "ingestion_rps_rounds": bare["rps_rounds"],
        "ingestion_rps_noop_handler": noop["rps"],
        "ingestion_rps_noop_handler_rounds": noop["rps_rounds"],
        "server_cpu_us_per_request": {
            "no_handler": bare["server_cpu_us_per_request"],
            "noop_handler_with_its_run": noop["server_cpu_us_per_request"],
        },
        "share_kept_with_handlers": round(float(noop["rps"]) / float(bare["rps"]), 3),
        "share_kept_rounds": [
            round(float(mine["rps"]) / float(base["rps"]), 3)
            for mine, base in zip(noop_rounds, bare_rounds, strict=True)
        ],
        "target_share_kept": SHARE_KEPT_TARGET,
        "inbox_runs_per_s": noop["inbox_runs_per_s"],
        "inbox_runs_per_s_rounds": [r["inbox_runs_per_s"] for r in noop_rounds],
        "inbox_runs_over_ingestion": round(float(noop["inbox_runs_per_s"]) / float(bare["rps"]), 3),
        "inbox_backlog_at_load_end": noop["inbox_backlog_at_load_end"],
        "inbox_drain_runs_per_s": noop["inbox_drain_runs_per_s"],
        "inbox_left": noop["inbox_left"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short phases, 0 s and 1 s only")
    parser.add_argument("--seconds", type=float, default=8.0, help="open-loop sending time")
    parser.add_argument("--count", type=int, default=4000, help="closed-loop deliveries")
    parser.add_argument("--delays", default="0,1,5", help="handler seconds, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="closed-loop rounds of each")
    parser.add_argument(
        "--loadgen",
        choices=("auto", "wrk", "asyncio"),
        default="auto",
        help="closed loop: wrk when installed (auto), else the asyncio load generator",
    )
    parser.add_argument(
        "--closed-seconds", type=float, default=5.0, help="closed-loop seconds per wrk round"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="an earlier checkout (its own .venv): its closed loop and 5 s answers beside these",
    )
    parser.add_argument(
        "--in-process-count", type=int, default=3000, help="deliveries per in-process round"
    )
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.count, args.delays, args.rounds = 2.0, 600, "0,1", 1
        args.closed_seconds, args.in_process_count = 2.0, 300
    if args.loadgen == "auto":
        args.loadgen = "wrk" if _wrk.available() else "asyncio"
    closed_seconds = args.closed_seconds if args.loadgen == "wrk" else None
    # wrk sends for a duration: its pool of fresh deliveries outlasts any rate this reaches.
    pool = int(args.closed_seconds * 6_000) if closed_seconds is not None else args.count
    delays = [float(part) for part in args.delays.split(",") if part.strip()]
    roots = {"current": _proc.ROOT}
    if args.baseline is not None:
        roots["baseline"] = args.baseline.resolve()
    busy_since = _proc.machine_busy_ticks()
    with tempfile.TemporaryDirectory(prefix="svc-bench-handlers-") as tmp:

        def argv(who: str, name: str, delay: float | None) -> tuple[list[str], int]:
            port = _proc.free_port()
            return _server(port, f"{tmp}/{who}-{name}.sqlite3", delay, roots[who]), port

        warmup = max(50, args.count // 10)
        closed: dict[tuple[str, str], list[dict[str, Any]]] = {
            (who, arm): [] for who in roots for arm in ("bare", "noop")
        }
        subjects = list(closed)
        for index in range(args.rounds):
            # Rotated, the first of a round changing each round, so drift hits all alike.
            shift = index % len(subjects)
            for who, arm in subjects[shift:] + subjects[:shift]:
                delay = None if arm == "bare" else 0.0
                name = f"{arm}{index}"
                inbox = None if delay is None else f"{tmp}/{who}-{name}.sqlite3"
                closed[who, arm].append(
                    _closed_loop(*argv(who, name, delay), pool, warmup, inbox, closed_seconds)
                )
        in_process: dict[str, list[float]] = {"no_handler_us": [], "noop_handler_us": []}
        for index in range(args.rounds):
            order = [("no_handler_us", False), ("noop_handler_us", True)]
            for key, handler in order if index % 2 == 0 else order[::-1]:
                in_process[key].append(_in_process(args.in_process_count, handler, tmp))
        rate = round(float(_proc.median_run(closed["current", "bare"])["rps"]) / 2, 1)
        answers: dict[str, dict[str, Any]] = {who: {} for who in roots}
        slowest_delay = max(delays) if delays else None
        for who in roots:
            answers[who]["no_handler"] = _open_loop(
                *argv(who, "open-none", None), rate, args.seconds
            )
            for delay in delays:
                if who == "current" or delay == slowest_delay:
                    answers[who][f"handler_{delay:g}s"] = _open_loop(
                        *argv(who, f"open-{delay:g}", delay), rate, args.seconds
                    )
    keys = ("p50_ms", "p99_ms", "max_ms", "requests", "statuses", "max_send_lag_ms")
    line: dict[str, Any] = {
        "bench": "handlers",
        "machine": _proc.machine(),
        "machine_busy_share": _proc.machine_busy_share(busy_since),
        "store": "sqlite (writer process)",
        "deliveries": "one text message each, a user each, signed, no duplicates",
        "loadgen": f"closed loop: {args.loadgen}, 32 connections; open loop: asyncio, paced",
        "closed_loop": f"{closed_seconds:g} s a round"
        if closed_seconds
        else f"{args.count} deliveries a round",
        **_closed_figures(closed["current", "bare"], closed["current", "noop"]),
        "in_process": _in_process_line(in_process, args.in_process_count),
        "open_loop_rate": rate,
        "open_loop_seconds": args.seconds,
        "answer": {name: _short(result, *keys) for name, result in answers["current"].items()},
    }
    if args.baseline is not None:
        baseline = _closed_figures(closed["baseline", "bare"], closed["baseline", "noop"])
        baseline["answer"] = {
            name: _short(result, *keys) for name, result in answers["baseline"].items()
        }
        line["baseline"] = {"revision": _proc.git_head(args.baseline), **baseline}
        line["share_kept_over_baseline"] = round(
            line["share_kept_with_handlers"] / baseline["share_kept_with_handlers"], 3
        )
    mine = answers["current"]
    base_p99 = float(mine["no_handler"]["p99_ms"])
    slowest = f"handler_{max(delays):g}s" if delays else None
    if slowest is not None:
        p99 = float(mine[slowest]["p99_ms"])
        line["slowest_handler"] = slowest
        line["p99_slowest_over_no_handler"] = round(p99 / base_p99, 2) if base_p99 else None
        line["target_p99_ratio"] = P99_RATIO_TARGET
        line["target_p99_ms"] = P99_MS_TARGET
        line["meets_p99_target"] = p99 <= P99_RATIO_TARGET * base_p99 and p99 <= P99_MS_TARGET
        line["meets_share_target"] = line["share_kept_with_handlers"] >= SHARE_KEPT_TARGET
        line["meets_target"] = line["meets_p99_target"] and line["meets_share_target"]
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
