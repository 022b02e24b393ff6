"""Crash resume: how long after a kill -9 another process resumes the user's queue.

Two real ``svc serve --dry-run --app convbot:bot`` processes on one store (a SQLite file,
and, when ``SVC_TEST_POSTGRES_URL`` answers, one PostgreSQL schema). Each round posts a
message ``ask``, whose handler notes that it waits for the user; the process that runs it
is killed with SIGKILL; the figure is the time from the kill to the moment the other
process's rerun of that update noted it waits (the lease lapsed, it claimed the head and
ran it from the start). A fresh process replaces the killed one for the next round.
``--baseline DIR`` measures an earlier checkout the same way (DIR holds its own ``.venv``)
in the same run, with fewer kills.

Prints one JSON line: per adapter, the median and maximum seconds over ``--kills`` kills,
and the baseline's with the ratio.

    .venv/bin/python bench/crash_resume.py [--kills 20] [--baseline DIR] [--baseline-kills 3]
        [--no-postgres]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import _proc
from conversations import Events, Sender, project, served


def waiting(events: Events, mid: str, pids: set[int], timeout: float) -> tuple[int, float]:
    """(pid, time) of the first of ``pids`` noted waiting in the run of ``mid``."""
    deadline = time.monotonic() + timeout
    while True:
        found = events.seen.get(("waiting", mid))
        if found is not None and int(found[0]) in pids:
            return int(found[0]), found[1]
        if time.monotonic() > deadline:
            raise RuntimeError(f"no run of {mid} by {sorted(pids)} within {timeout} s")
        time.sleep(0.005)
        events._read()


def measure(python: str, database: list[str], extra_env: dict[str, str], kills: int) -> list[float]:
    """Seconds from each kill of the process running the update to the other's rerun."""
    with tempfile.TemporaryDirectory(prefix="svc-bench-resume-") as tmp:
        folder = Path(tmp)
        env = {**project(folder), **extra_env}
        events, sender = Events(folder / "events.log"), Sender()
        seconds: list[float] = []
        with contextlib.ExitStack() as stack:
            alive = [stack.enter_context(served(python, folder, database, env)) for _ in "ab"]
            try:
                for round_ in range(kills):
                    mid = f"wamid.RESUME{round_:04d}{secrets.token_hex(4)}"
                    sender.post(alive[0][0], sender.user(), mid, "ask")
                    pids = {process.pid for _, process in alive}
                    runner, _ = waiting(events, mid, pids, 30.0)
                    (victim,) = [pair for pair in alive if pair[1].pid == runner]
                    killed = time.time()
                    os.kill(runner, signal.SIGKILL)
                    victim[1].wait()
                    alive.remove(victim)
                    sender.clients.pop(victim[0], None)
                    (survivor,) = alive
                    _, resumed = waiting(events, mid, {survivor[1].pid}, 180.0)
                    seconds.append(resumed - killed)
                    alive.append(stack.enter_context(served(python, folder, database, env)))
            finally:
                sender.close()
    return seconds


def summary(values: list[float]) -> dict[str, Any]:
    return {
        "kills": len(values),
        "median_s": round(statistics.median(values), 2),
        "max_s": round(max(values), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--baseline-kills", type=int, default=3)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    import sys

    pythons = {"current": sys.executable}
    if args.baseline is not None:
        pythons["baseline"] = str(args.baseline / ".venv" / "bin" / "python")
    url = _proc.postgres_url_to_measure(args.no_postgres)
    line: dict[str, Any] = {"bench": "crash_resume", "machine": _proc.machine()}
    adapters: list[tuple[str, list[str], dict[str, str]]] = [
        ("sqlite", ["--database", "svc.db"], {})
    ]
    schemas: list[str] = []
    if url is not None:
        import psycopg

        for name in pythons:
            schema = f"svc_bench_resume_{name}_{secrets.token_hex(4)}"
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f'CREATE SCHEMA "{schema}"')
            schemas.append(schema)
    try:
        for adapter, database, extra in adapters + (
            [("postgres", ["--database-url-env", "SVC_BENCH_DB"], {})] if url else []
        ):
            figures: dict[str, Any] = {}
            for index, (name, python) in enumerate(pythons.items()):
                env = dict(extra)
                if adapter == "postgres" and url is not None:
                    schema = schemas[index]
                    env["SVC_BENCH_DB"] = (
                        f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
                    )
                kills = args.kills if name == "current" else args.baseline_kills
                figures[name] = summary(measure(python, database, env, kills))
            if "baseline" in figures:
                figures["median_ratio_to_baseline"] = round(
                    figures["current"]["median_s"] / figures["baseline"]["median_s"], 3
                )
            line[adapter] = figures
    finally:
        for schema in schemas:
            assert url is not None
            _proc.drop_schema(url, schema)
    line["target"] = "median and maximum under 10 s with the default options"
    line["meets_target"] = all(
        line[a]["current"]["max_s"] < 10 for a in ("sqlite", "postgres") if a in line
    )
    print(json.dumps(line))


if __name__ == "__main__":
    main()
