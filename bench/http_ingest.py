"""Webhook ingestion over HTTP: svc under hypercorn against the server's own ceiling (and pywa).

Signed ~3 KB deliveries (``_deliveries``), 30% duplicates (byte-for-byte copies, as the
platform retries; ``--duplicates 0`` for fresh deliveries only), concurrency 32,
sent by a separate load-generator process to 127.0.0.1: wrk replaying them
(``_wrk``, when wrk is installed) or else the asyncio client (``_loadgen``). In the
same run and in alternating rounds: a bare ASGI app on the same server that
only reads the body and answers 200 (the ceiling), then svc with no store,
with SQLite and with PostgreSQL (a schema of its own on the shared server): ``sqlite`` and
``postgres`` as ``svc serve`` runs them, and each store's writers (``*_thread``: the worker
thread; ``*_process``: the writer process).

``--baseline DIR`` serves an earlier commit in the same rounds: DIR is a checkout of it
with its own virtualenv in ``DIR/.venv`` (``git worktree add DIR COMMIT``, then
``python3 -m venv DIR/.venv && DIR/.venv/bin/pip install -e 'DIR[dev,bench]'``); its
targets (``base_*``: no store, and SQLite and PostgreSQL with the thread and with the
writer process) are measured by the same load generator, and ``compare`` sets each
figure of this code against the baseline's and each writer against the others, round by
round (a pair shares its round's machine).

Prints one JSON line: req/s, p50/p99 per target (the median round) and each
ratio to the ceiling; each store's ratio to no store, overall and per round (rounds
alternate the targets); the round-to-round spread of every target. Targets: no store
>= 0.9 of the ceiling; SQLite >= 0.8 and PostgreSQL >= 0.6 of no store; in process
(``--peer``), SQLite <= 2.5x no store.

``--peer`` adds (a) the app cost alone, in process: svc's ASGI app and pywa's
webhook app (FastAPI) driven directly through ASGI calls with 32 concurrent
callers, in microseconds per delivery; (b) end to end: pywa under uvicorn, and
``svc serve --workers 2`` against ``--workers 1``.

    .venv/bin/python bench/http_ingest.py [--quick] [--peer] [--rounds 3] [--duplicates 0.3]
        [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import _asgi
import _deliveries
import _proc
import _wrk

SECRET = "bench-app-secret"
CONCURRENCY = 32
TARGETS = {"stateless": 0.9}
"""Issue 9's target: svc with no store against the bare server's ceiling."""
STORE_TARGETS = {"sqlite": 0.8, "postgres": 0.6}
"""Issue 25's targets: a durable store against svc with no store, served, same run."""
IN_PROCESS_SQLITE_TARGET = 2.5
"""Issue 25: in process, the SQLite path costs at most this many times the no-store path."""
WORKERS_TARGET = 1.7


def _load_args(count: int, warmup: int, run: str, duplicates: float, secret: str) -> list[str]:
    return [
        "--duplicates",
        str(duplicates),
        "--secret",
        secret,
        "--count",
        str(count),
        "--warmup",
        str(warmup),
        "--concurrency",
        str(CONCURRENCY),
        "--run",
        run,
    ]


def _timed(process: Any, port: int, secret: str, args: argparse.Namespace) -> dict[str, Any]:
    """One timed load against ``port``, plus the server's CPU per request (its process tree).

    With wrk the CPU is read around the timed run alone; the asyncio generator
    runs its warm-up in the same process, so its warm-up requests are counted too.
    """
    run = secrets.token_hex(3)

    def cpu() -> float:
        return _proc.tree_cpu_seconds(process.pid)

    if args.loadgen == "wrk":
        return _wrk.load_webhook(
            port,
            secret=secret,
            count=args.count,
            warmup=args.warmup,
            concurrency=CONCURRENCY,
            seconds=args.seconds,
            run=run,
            cpu=cpu,
            duplicates=args.duplicates,
        )
    load_args = _load_args(args.count, args.warmup, run, args.duplicates, secret)
    before = cpu()
    result = _proc.load("webhook", port, *load_args)
    spent = cpu() - before
    result["loadgen"] = "asyncio"
    result["server_cpu_us_per_request"] = round(
        spent / (int(result["requests"]) + args.warmup) * 1e6, 1
    )
    return result


def _measure_server(
    argv: list[str], port: int, args: argparse.Namespace, ready: str, cwd: Path = _proc.ROOT
) -> dict[str, Any]:
    with _proc.server(argv, port=port, ready_path=ready, cwd=cwd) as process:
        result = _timed(process, port, SECRET, args)
    # A 503 (the platform retries it) is expected only now and then under load (a busy
    # body reader). Anything beyond a 1% share is an error.
    statuses = result["statuses"]
    if _count_retry_later(result) > 0.01 * sum(int(n) for n in statuses.values()):
        raise RuntimeError(f"unexpected statuses {statuses} from {argv[2:4]}")
    return result


def _count_retry_later(result: dict[str, Any]) -> int:
    """Record in ``result`` how many answers were not 200 (wrk's replay counts them all as
    "other"): the 503s of copies whose run was in progress. No 200 at all is an error."""
    statuses = result["statuses"]
    if "200" not in statuses:
        raise RuntimeError(f"no request answered 200: {statuses}")
    result["retry_later"] = sum(int(n) for status, n in statuses.items() if status != "200")
    return int(result["retry_later"])


def _short(run: dict[str, Any]) -> dict[str, Any]:
    keys = ("rps", "p50_ms", "p99_ms", "rps_rounds", "server_cpu_us_per_request")
    return {k: run[k] for k in keys if k in run}


TARGETS_NEW: dict[str, tuple[str, str | None]] = {
    "stateless": ("none", None),
    "sqlite_thread": ("sqlite", "thread"),
    "sqlite_process": ("sqlite", "process"),
    "postgres_thread": ("postgres", "thread"),
    "postgres_process": ("postgres", "process"),
}
"""This code's targets: (store, writer)."""
SERVE_WRITERS = {"sqlite": "process", "postgres": "process"}
"""The writer ``svc serve`` runs each store with (``--sqlite-writer``, ``--pg-writer``): its
figures are also reported as ``sqlite`` and ``postgres``, held to ``STORE_TARGETS``."""
TARGETS_BASE: dict[str, tuple[str, str | None]] = {
    "base_stateless": ("none", None),
    "base_sqlite_thread": ("sqlite", "thread"),
    "base_sqlite_process": ("sqlite", "process"),
    "base_postgres_thread": ("postgres", "thread"),
    "base_postgres_process": ("postgres", "process"),
}
"""The baseline's targets (``--baseline``): its writer process and its thread, per store."""
PAIRS: dict[str, tuple[str, str]] = {
    "sqlite_process_to_thread": ("sqlite_process", "sqlite_thread"),
    "postgres_process_to_thread": ("postgres_process", "postgres_thread"),
    "sqlite_thread_to_base_sqlite_thread": ("sqlite_thread", "base_sqlite_thread"),
    "sqlite_process_to_base_sqlite_process": ("sqlite_process", "base_sqlite_process"),
    "postgres_thread_to_base_postgres_thread": ("postgres_thread", "base_postgres_thread"),
    "postgres_thread_to_base_postgres_process": ("postgres_thread", "base_postgres_process"),
    "postgres_process_to_base_postgres_process": ("postgres_process", "base_postgres_process"),
    "base_sqlite_process_to_thread": ("base_sqlite_process", "base_sqlite_thread"),
    "base_postgres_process_to_thread": ("base_postgres_process", "base_postgres_thread"),
    "stateless_to_base_stateless": ("stateless", "base_stateless"),
}
"""Figures set against each other round by round (``compare``): writer against writer, and
this code against the baseline."""


def _store_argv(
    store: str, writer: str | None, *, path: str, pg_url: str | None, schema: str | None
) -> list[str]:
    if store == "sqlite":
        extra = ["--store", "sqlite", "--sqlite-path", path]
        return extra + ([] if writer is None else ["--sqlite-writer", writer])
    if store == "postgres":
        assert pg_url is not None and schema is not None
        extra = ["--store", "postgres", "--pg-url", pg_url, "--pg-schema", schema]
        return extra + ([] if writer is None else ["--pg-writer", writer])
    return []


def _spread(values: list[float]) -> float | None:
    """The round-to-round spread of ``values``: (max - min) / median."""
    if len(values) < 2:
        return None
    return round((max(values) - min(values)) / statistics.median(values), 3)


def _compare(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Each pair's req/s ratio, round by round (the same round's two servers): the median,
    the rounds, and whether it is above 1 in every round."""
    out: dict[str, Any] = {}
    for name, (mine, theirs) in PAIRS.items():
        if mine not in runs or theirs not in runs:
            continue
        rounds = [
            round(float(a["rps"]) / float(b["rps"]), 3)
            for a, b in zip(runs[mine], runs[theirs], strict=True)
        ]
        out[name] = {
            "median": round(statistics.median(rounds), 3),
            "rounds": rounds,
            "above_1_every_round": min(rounds) > 1.0,
            "below_1_every_round": max(rounds) < 1.0,
        }
    return out


def measure_against_ceiling(args: argparse.Namespace, pg_url: str | None) -> dict[str, Any]:
    targets: dict[str, tuple[str, str | None]] = {"ceiling": ("none", None)}
    targets.update(TARGETS_NEW)
    if args.baseline is not None:
        targets.update(TARGETS_BASE)
    if pg_url is None:
        targets = {name: t for name, t in targets.items() if t[0] != "postgres"}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in targets}
    with tempfile.TemporaryDirectory(prefix="svc-bench-") as tmp:
        for round_index in range(args.rounds):
            for name, (store, writer) in targets.items():
                port = _proc.free_port()
                root = args.baseline if name.startswith("base_") else _proc.ROOT
                if name == "ceiling":
                    argv = _proc.bench_server("ceiling", port)
                else:
                    argv = _proc.bench_server("svc", port, "--secret", SECRET, root=root)
                schema = f"svc_bench_ingest_{secrets.token_hex(4)}" if store == "postgres" else None
                argv += _store_argv(
                    store,
                    writer,
                    path=f"{tmp}/r{round_index}-{name}.sqlite3",
                    pg_url=pg_url,
                    schema=schema,
                )
                try:
                    runs[name].append(_measure_server(argv, port, args, "/healthz", cwd=root))
                finally:
                    if schema is not None and pg_url is not None:
                        _proc.drop_schema(pg_url, schema)
    result: dict[str, Any] = {name: _short(_proc.median_run(r)) for name, r in runs.items()}
    for name, found in runs.items():
        result[name]["spread"] = _spread([float(run["rps"]) for run in found])
    ceiling = float(result["ceiling"]["rps"])
    for name in runs:
        if name != "ceiling":
            result[name]["ratio_to_ceiling"] = round(float(result[name]["rps"]) / ceiling, 3)
    for name, target in TARGETS.items():
        result[name]["target"] = target
        result[name]["meets_target"] = result[name]["ratio_to_ceiling"] >= target
    for store, writer in SERVE_WRITERS.items():
        if f"{store}_{writer}" in runs:
            runs[store] = runs[f"{store}_{writer}"]
            result[store] = dict(result[f"{store}_{writer}"], writer=writer)
    for name in runs.keys() - {"ceiling", "stateless", "base_stateless"}:
        base = "base_stateless" if name.startswith("base_") else "stateless"
        ratio = float(result[name]["rps"]) / float(result[base]["rps"])
        result[name]["ratio_to_stateless"] = round(ratio, 3)
        rounds = [
            round(float(mine["rps"]) / float(other["rps"]), 3)
            for mine, other in zip(runs[name], runs[base], strict=True)
        ]
        result[name]["ratio_to_stateless_rounds"] = rounds
        result[name]["ratio_to_stateless_spread"] = _spread(rounds)
        if name in STORE_TARGETS:
            result[name]["target_to_stateless"] = STORE_TARGETS[name]
            result[name]["meets_target"] = ratio >= STORE_TARGETS[name]
    result["compare"] = _compare(runs)
    if pg_url is None:
        result["postgres"] = {"skipped": "no PostgreSQL server reachable"}
    return result


# --- (a) app cost alone, in process ------------------------------------------------------


def svc_in_process(
    found: list[_deliveries.Delivery], store_kind: str, tmp: str, sqlite_writer: str = "process"
) -> float:
    """Seconds per delivery through svc's ASGI app under trio, 32 concurrent callers."""
    import _serve
    import trio

    store = _serve.open_store(
        store_kind,
        sqlite_path=f"{tmp}/inproc-{secrets.token_hex(3)}.sqlite3",
        pg_url=None,
        pg_schema=None,
        sqlite_writer=sqlite_writer,
    )
    callers = _asgi.Callers(found)

    async def main() -> float:
        if store is not None:
            await store.migrate()
        app = _serve.svc_app(secret=SECRET, token="bench-service-token", store=store)
        begin = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for _ in range(CONCURRENCY):
                nursery.start_soon(callers.call, app)
        elapsed = time.perf_counter() - begin
        if store is not None:
            await store.close()
        return elapsed

    elapsed = trio.run(main)
    callers.check("svc")
    return elapsed / len(found)


def pywa_in_process(found: list[_deliveries.Delivery]) -> float:
    """Seconds per delivery through pywa's FastAPI webhook app (asyncio), 32 concurrent callers."""
    import asyncio

    import _serve

    app = _serve.pywa_app(secret=SECRET)
    callers = _asgi.Callers(found)

    async def main() -> float:
        begin = time.perf_counter()
        await asyncio.gather(*(callers.call(app) for _ in range(CONCURRENCY)))
        return time.perf_counter() - begin

    elapsed = asyncio.run(main())
    callers.check("pywa")
    return elapsed / len(found)


def measure_in_process(args: argparse.Namespace) -> dict[str, Any]:
    count = 400 if args.quick else 3_000
    seen: dict[str, list[float]] = {
        "svc_stateless": [],
        "svc_sqlite": [],
        "svc_sqlite_thread": [],
        "pywa": [],
    }
    with tempfile.TemporaryDirectory(prefix="svc-bench-") as tmp:
        for _ in range(args.rounds):
            for name in seen:
                found = _deliveries.deliveries(
                    count, SECRET, run=secrets.token_hex(3), duplicates=args.duplicates
                )
                if name == "pywa":
                    seconds = pywa_in_process(found)
                elif name == "svc_stateless":
                    seconds = svc_in_process(found, "none", tmp)
                else:
                    writer = "thread" if name == "svc_sqlite_thread" else "process"
                    seconds = svc_in_process(found, "sqlite", tmp, sqlite_writer=writer)
                seen[name].append(seconds * 1e6)
    out: dict[str, Any] = {f"{k}_us": round(_proc.med(v), 1) for k, v in seen.items()}
    out["rounds_us"] = {k: [round(x, 1) for x in v] for k, v in seen.items()}
    out["svc_stateless_to_pywa"] = round(out["svc_stateless_us"] / out["pywa_us"], 3)
    out["svc_sqlite_to_pywa"] = round(out["svc_sqlite_us"] / out["pywa_us"], 3)
    out["meets_target"] = out["svc_stateless_to_pywa"] < 1.0
    sqlite_cost = out["svc_sqlite_us"] / out["svc_stateless_us"]
    out["svc_sqlite_to_stateless"] = round(sqlite_cost, 3)
    out["svc_sqlite_to_stateless_rounds"] = [
        round(mine / base, 3)
        for mine, base in zip(seen["svc_sqlite"], seen["svc_stateless"], strict=True)
    ]
    out["svc_sqlite_thread_to_stateless"] = round(
        out["svc_sqlite_thread_us"] / out["svc_stateless_us"], 3
    )
    out["sqlite_target"] = IN_PROCESS_SQLITE_TARGET
    out["sqlite_meets_target"] = sqlite_cost <= IN_PROCESS_SQLITE_TARGET
    return out


# --- (b) end to end: pywa under uvicorn, svc serve --workers 1 and 2 ---------------------


def _svc_serve_argv(config: Path, port: int, workers: int, database: Path | None) -> list[str]:
    store = [] if database is None else ["--database", str(database)]
    return [
        str(Path(_proc.PYTHON).parent / "svc"),
        "serve",
        "--config",
        str(config),
        "--dry-run",
        "--port",
        str(port),
        "--workers",
        str(workers),
        *store,
    ]


def _serve_workers(
    config: Path, workers: int, args: argparse.Namespace, database: Path | None = None
) -> dict[str, Any]:
    """``svc serve --dry-run --workers N`` (with ``--database``: the workers share one SQLite
    file): its dry-run app secret is read from its stderr."""
    import subprocess

    port = _proc.free_port()
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            _svc_serve_argv(config, port, workers, database),
            cwd=config.parent,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
        try:
            _proc.wait_until_up(process=process, port=port, path="/healthz", seconds=60.0)
            # With several workers the first answer may come before every worker is up.
            time.sleep(0.5 if workers > 1 else 0.0)
            err.seek(0)
            secret = next(
                line.split("=", 1)[1].strip()
                for line in err.read().decode().splitlines()
                if line.startswith("dry-run webhookAppSecret=")
            )
            result = _timed(process, port, secret, args)
        finally:
            _proc.stop(process)
    # With a store, a copy whose updates are running right now is answered 503 (the platform
    # retries it); with two workers that is more often the other worker's run. Counted.
    if _count_retry_later(result) and database is None:
        raise RuntimeError(f"svc serve answered {result['statuses']}")
    return result


def measure_end_to_end(args: argparse.Namespace) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {
        "pywa_uvicorn": [],
        "svc_hypercorn": [],
        "svc_serve_w1": [],
        "svc_serve_w2": [],
        "svc_serve_w1_sqlite": [],
        "svc_serve_w2_sqlite": [],
    }
    with tempfile.TemporaryDirectory(prefix="svc-bench-") as tmp:
        config = Path(tmp) / "svc.config.json"
        _write_config(config)
        for _ in range(args.rounds):
            for name in runs:
                port = _proc.free_port()
                if name == "pywa_uvicorn":
                    argv = _proc.bench_server("pywa", port, "--secret", SECRET)
                    runs[name].append(_measure_server(argv, port, args, "/docs"))
                elif name == "svc_hypercorn":
                    argv = _proc.bench_server("svc", port, "--secret", SECRET)
                    runs[name].append(_measure_server(argv, port, args, "/healthz"))
                else:
                    workers = int(name.split("_")[2][1:])
                    database = None
                    if name.endswith("_sqlite"):
                        database = Path(tmp) / f"{name}-{secrets.token_hex(3)}.sqlite3"
                    runs[name].append(_serve_workers(config, workers, args, database))
    out: dict[str, Any] = {name: _short(_proc.median_run(r)) for name, r in runs.items()}
    out["svc_to_pywa_rps"] = round(out["svc_hypercorn"]["rps"] / out["pywa_uvicorn"]["rps"], 3)
    scale = out["svc_serve_w2"]["rps"] / out["svc_serve_w1"]["rps"]
    out["workers_2_to_1"] = round(scale, 3)
    # Rounds alternate the two, so each round's pair shares the machine's state.
    out["workers_2_to_1_rounds"] = [
        round(float(two["rps"]) / float(one["rps"]), 3)
        for one, two in zip(runs["svc_serve_w1"], runs["svc_serve_w2"], strict=True)
    ]
    out["workers_target"] = WORKERS_TARGET
    out["workers_meets_target"] = scale >= WORKERS_TARGET
    out["workers_2_to_1_sqlite"] = round(
        out["svc_serve_w2_sqlite"]["rps"] / out["svc_serve_w1_sqlite"]["rps"], 3
    )
    out["retry_later"] = {
        name: [int(run.get("retry_later", 0)) for run in found]
        for name, found in runs.items()
        if name.endswith("_sqlite")
    }
    return out


def _write_config(path: Path) -> None:
    """A config as ``svc init`` writes it, with literal ids (dry run needs no secrets)."""
    profile = {
        "platform": {
            "apiVersion": "v25.0",
            "baseUrl": "https://graph.facebook.com",
            "wabaId": "102290129340398",
            "phoneNumberId": "106540352242922",
        },
        "webhook": {"path": _deliveries.WEBHOOK_PATH, "maxBodyBytes": 1048576},
        "service": {"host": "127.0.0.1", "port": 8787, "apiPrefix": "/api"},
        "secrets": {
            "accessToken": {"env": "SVC_ACCESS_TOKEN"},
            "webhookVerifyToken": {"env": "SVC_VERIFY_TOKEN"},
            "webhookAppSecret": {"env": "SVC_APP_SECRET"},
            "serviceBearerToken": {"env": "SVC_SERVICE_TOKEN"},
        },
    }
    config = {"version": 1, "defaultProfile": "default", "profiles": {"default": profile}}
    path.write_text(json.dumps(config, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short run (CI smoke)")
    parser.add_argument("--peer", action="store_true", help="add pywa and the workers comparison")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--peer-only", action="store_true", help="--peer without the ceiling part")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="a checkout of an earlier commit with its own .venv, served in the same rounds",
    )
    parser.add_argument(
        "--loadgen",
        choices=("auto", "wrk", "asyncio"),
        default="auto",
        help="wrk when installed (auto), else the asyncio load generator",
    )
    parser.add_argument("--seconds", type=float, default=None, help="timed seconds per wrk run")
    parser.add_argument(
        "--duplicates",
        type=float,
        default=_deliveries.DUPLICATE_SHARE,
        help="share of deliveries that copy an earlier one byte for byte (the platform's"
        " retries; 0 for fresh deliveries only)",
    )
    args = parser.parse_args()
    args.peer = args.peer or args.peer_only
    args.rounds = args.rounds or (1 if args.quick else 3)
    if args.loadgen == "auto":
        args.loadgen = "wrk" if _wrk.available() else "asyncio"
    if args.loadgen == "wrk":
        # wrk runs for a duration; ``count`` is the pool of fresh deliveries it draws from.
        args.seconds = args.seconds or (1.0 if args.quick else 5.0)
        args.count = args.count or int(args.seconds * 12_000)
    else:
        args.count = args.count or (400 if args.quick else 6_000)
    args.warmup = 100 if args.quick else 1_000
    pg_url = _proc.postgres_url_to_measure(skip=args.no_postgres)
    if args.baseline is not None:
        args.baseline = args.baseline.resolve()
    line: dict[str, Any] = {
        "bench": "http_ingest",
        "baseline": None if args.baseline is None else _proc.git_head(args.baseline),
        "quick": args.quick,
        "machine": _proc.machine(),
        "concurrency": CONCURRENCY,
        "duplicates": args.duplicates,
        "body_bytes": sorted({len(d.body) for d in _deliveries.deliveries(8, SECRET)}),
        "loadgen": args.loadgen,
        "requests_per_round": args.count if args.loadgen == "asyncio" else None,
        "seconds_per_round": args.seconds,
        "rounds": args.rounds,
    }
    if not args.peer_only:
        line.update(measure_against_ceiling(args, pg_url))
    if args.peer:
        line["peer_in_process"] = measure_in_process(args)
        line["peer_end_to_end"] = measure_end_to_end(args)
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
