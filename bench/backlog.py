"""Backlog: what one user's standing backlog costs the claims, its own queue and the others.

Real ``svc serve --dry-run --app convbot:bot`` processes (``conversations.served``: the
config, the signed deliveries and the serving are that bench's) on a SQLite file and, when
``SVC_TEST_POSTGRES_URL`` answers, on a PostgreSQL schema, with a no-op message handler. A
message ``hold NAME`` is the exception: its run sleeps until the file ``release-NAME``
appears (``--handler-timeout 3600``), so the user's later messages stand behind it, waiting,
for as long as a figure needs. Backlogs are filled with signed deliveries of
``--per-delivery`` messages each from one user. The same figures are measured for the
checkout the script runs from (``current``) and for ``--baseline`` (a checkout with its own
``.venv``, default ``../wt-633ed6f``), one after the other in one run:

1. ``claim_ms``: the store's own ``claim_inbox_items`` (limit 8), called from a separate
   process (the checkout's python) against the served database, ``--claims`` times, while
   one user has 0, 1k, 20k or 100k messages waiting behind a held run (nothing is due: the
   claim finds nothing, as the server's own poll does every second): the call's round trip,
   and on PostgreSQL also its statements' executor time alone (``sql``: the sum of the
   durations ``auto_explain`` reports to the probe's connections for the call). On
   PostgreSQL the largest size again after churn (``<size>_churned``: every waiting row
   deleted and inserted again, then ``ANALYZE``, no ``VACUUM``).
2. ``drain_runs_per_s``: one user's queue released with 1k (nothing else waiting) or 20k
   messages behind its held run: runs per second over its first ``--drain-runs`` runs, or
   those done in ``--drain-seconds``.
3. ``others_s``: 300 other users' messages (``--others``, one each, in deliveries of 50),
   the seconds from the first POST until all of them ran, without and with one user's
   50k-message backlog held (the median of ``--others-rounds`` rounds, new users each
   round); ``with_over_without`` is their ratio; then the same backlog released and
   draining while they arrive (``with_50000_draining``, ``draining_over_without``).

Prints one JSON line: each figure as ``{"current": ..., "baseline": ...}``, with the machine,
its load average and how busy it was over the run.

    .venv/bin/python bench/backlog.py [--quick] [--no-postgres] [--no-sqlite]
        [--baseline REV-or-DIR] [--no-baseline] [--sizes 0,1000,20000,100000]
        [--others 300] [--others-backlog 50000] [--others-rounds 5] [--drain 1000,20000]
        [--drain-runs 1000] [--drain-seconds 30] [--claims 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import _proc
import httpx
from conversations import batch, project, served

BOT = """
from pathlib import Path

import trio

from svc.webhook import DefaultFacade, HandlerContext, MessageUpdate

bot = DefaultFacade()


@bot.on("message", context=True)
async def run(ctx: HandlerContext) -> None:
    update = ctx.update
    if isinstance(update, MessageUpdate) and (update.text or "").startswith("hold "):
        release = Path.cwd() / ("release-" + update.text.split(" ", 1)[1])
        while not release.exists():
            await trio.sleep(0.02)
"""
PROBE = """
import json
import re
import sys
import time

import trio

from svc.store import PostgresStore, SqliteStore, utc_now

DURATION = re.compile(r"duration: ([0-9.]+) ms")
EXPLAIN = (
    "%20-csession_preload_libraries%3Dauto_explain%20-cauto_explain.log_min_duration%3D0"
    "%20-cclient_min_messages%3Dlog"
)
notices = []


def hear_notices() -> None:
    # PostgreSQL: auto_explain sends each statement's executor time to the client as a LOG
    # notice; every connection the store opens keeps them here.
    import psycopg

    connect = psycopg.Connection.connect.__func__

    def connect_hearing(cls, *args, **kwargs):
        conn = connect(cls, *args, **kwargs)
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        return conn

    psycopg.Connection.connect = classmethod(connect_hearing)


async def main(kind: str, where: str, rounds: int) -> None:
    if kind == "sqlite":
        store = SqliteStore(where)
    else:
        hear_notices()
        store = PostgresStore(where + EXPLAIN, max_size=2)  # its DSN ends in its options
    claims, sql, claimed = [], [], 0
    try:
        await store.count_outbox_pending()  # the connection opened, untimed
        for _ in range(rounds):
            heard = len(notices)
            began = time.perf_counter()
            got = await store.claim_inbox_items(now=utc_now(), limit=8, lease_ms=6000)
            claims.append((time.perf_counter() - began) * 1000)
            claimed += len(got)
            sql.append(sum(float(m) for n in notices[heard:] for m in DURATION.findall(n)))
    finally:
        await store.close()
    print(json.dumps({"claims_ms": claims, "sql_ms": sql, "claimed": claimed}))


trio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]))
"""
BASELINE = "633ed6f"
OTHERS_PER_DELIVERY = 50
HANDLER_FLAGS = ("--handler-timeout", "3600", "--handler-concurrency", "8")
DEFAULT_BASELINE = Path(__file__).resolve().parent.parent.parent / f"wt-{BASELINE}"


class Database:
    """The served database, as the bench reads it and the probe opens it. The bench's reads
    go over one connection kept open and ask what an index answers: on a two-core host, a
    fresh connection and a count of 50,000 rows every 10 ms would take CPU from the process
    measured."""

    def __init__(self, kind: str, flags: list[str], env: dict[str, str], where: str) -> None:
        self.kind = kind
        self.flags = flags
        self.env = env
        self.where = where
        self._conn: Any = None

    def value(self, sql: str, params: tuple[object, ...] = ()) -> Any:
        """The one value ``sql`` answers (None for an empty aggregate)."""
        if self._conn is None:
            if self.kind == "sqlite":
                uri = f"file:{self.where}?mode=ro"
                self._conn = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)
            else:
                import psycopg

                self._conn = psycopg.connect(self.where, autocommit=True)
        if self.kind == "postgres":
            sql = sql.replace("?", "%s")
        row = self._conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def count(self, sql: str, params: tuple[object, ...] = ()) -> int:
        return int(self.value(sql, params) or 0)

    def inbox(self) -> int:
        return self.count("SELECT count(*) FROM svc_inbox")

    def first_id(self) -> int | None:
        """The lowest id waiting: a queue drains in id order."""
        found = self.value("SELECT min(id) FROM svc_inbox")
        return None if found is None else int(found)

    def others(self, queue: str) -> int:
        """The rows of every queue but ``queue`` (two ranges of the queue index)."""
        return self.count(
            "SELECT count(*) FROM svc_inbox WHERE queue_key < ? OR queue_key > ?", (queue, queue)
        )

    def head_queue(self) -> str:
        """The queue of the lowest id waiting (the held run's)."""
        return str(self.value("SELECT queue_key FROM svc_inbox ORDER BY id LIMIT 1"))

    def running(self) -> int:
        return self.count("SELECT count(*) FROM svc_inbox WHERE status = 'running'")

    def churn(self) -> None:
        """PostgreSQL: every waiting row (behind the held run) deleted and inserted again,
        ids kept, in one transaction, then ``ANALYZE`` and no ``VACUUM``: the dead rows stay."""
        import psycopg

        with psycopg.connect(self.where) as conn:
            conn.execute(
                "CREATE TEMP TABLE churned ON COMMIT DROP AS"
                " SELECT * FROM svc_inbox WHERE status = 'pending'"
            )
            conn.execute("DELETE FROM svc_inbox WHERE status = 'pending'")
            conn.execute("INSERT INTO svc_inbox OVERRIDING SYSTEM VALUE SELECT * FROM churned")
        with psycopg.connect(self.where, autocommit=True) as conn:
            conn.execute("ANALYZE")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


@contextlib.contextmanager
def database(kind: str, folder: Path, url: str | None) -> Iterator[Database]:
    """A fresh SQLite file in ``folder`` or a fresh PostgreSQL schema (dropped after)."""
    if kind == "sqlite":
        path = folder / "svc.db"
        db = Database(kind, ["--database", "svc.db"], {}, str(path))
        try:
            yield db
        finally:
            db.close()
        return
    assert url is not None
    import psycopg

    schema = f"svc_bench_backlog_{secrets.token_hex(4)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"'.encode())
    dsn = f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
    try:
        db = Database(kind, ["--database-url-env", "SVC_BENCH_DB"], {"SVC_BENCH_DB": dsn}, dsn)
        try:
            yield db
        finally:
            db.close()
    finally:
        _proc.drop_schema(url, schema)


def wait_for(what: str, done: Callable[[], bool], seconds: float) -> float:
    """Poll ``done`` every 10 ms; the monotonic time it first held."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {seconds} s")
        time.sleep(0.01)
    return time.monotonic()


class Feed:
    """Signed deliveries to one served process, over one keep-alive connection."""

    def __init__(self, port: int, per_delivery: int) -> None:
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
        self.per_delivery = per_delivery
        self.ids = iter(range(10**9))

    def post(self, messages: list[tuple[str, str]]) -> None:
        """One delivery of ``(sender, text)`` messages."""
        run = secrets.token_hex(3)
        body, headers = batch(
            [(who, f"wamid.B{run}{next(self.ids):09d}", t) for who, t in messages]
        )
        answer = self.client.post("/webhooks/whatsapp", content=body, headers=headers)
        if answer.status_code != 200:
            raise RuntimeError(f"delivery refused: {answer.status_code}")

    def fill(self, user: str, count: int) -> float:
        """``count`` messages of ``user``; the messages recorded per second."""
        began = time.monotonic()
        for start in range(0, count, self.per_delivery):
            self.post([(user, "x")] * min(self.per_delivery, count - start))
        return count / max(time.monotonic() - began, 1e-9)

    def close(self) -> None:
        self.client.close()


def hold(feed: Feed, db: Database, user: str, name: str) -> None:
    """``user``'s first message holds its queue (its run sleeps until released)."""
    running = db.running()
    feed.post([(user, f"hold {name}")])
    wait_for("the held run", lambda: db.running() > running, 60)


def probe(python: str, folder: Path, db: Database, rounds: int) -> dict[str, Any]:
    """``rounds`` claims from a separate process of ``python``'s svc."""
    out = subprocess.run(
        [python, str(folder / "probe.py"), db.kind, db.where, str(rounds)],
        cwd=folder,
        capture_output=True,
        check=True,
        timeout=600,
        env={k: v for k, v in os.environ.items() if not k.startswith("SVC_")},
    )
    raw = json.loads(out.stdout.decode().strip().splitlines()[-1])
    result = {"round_trip": spread(raw["claims_ms"])}
    if db.kind == "postgres":
        result["sql"] = spread(raw["sql_ms"])
    result["claimed"] = raw["claimed"]
    return result


def spread(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    return {
        "p50": round(statistics.median(ordered), 3),
        "p90": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 3),
        "min": round(ordered[0], 3),
        "max": round(ordered[-1], 3),
        "n": len(ordered),
    }


def others(feed: Feed, db: Database, users: str, args: argparse.Namespace, standing: int) -> float:
    """Seconds from the first POST of ``args.others`` other users' messages until all ran:
    the median of ``args.others_rounds`` rounds."""
    return statistics.median(
        others_once(feed, db, f"{users}{n}", args.others, standing)
        for n in range(args.others_rounds)
    )


def others_once(feed: Feed, db: Database, users: str, count: int, standing: int) -> float:
    """Seconds from the first POST of ``count`` other users' messages until all ran."""
    senders = [f"17{users}{n:05d}" for n in range(count)]
    standing_queue = db.head_queue() if standing else ""
    began = time.monotonic()
    for start in range(0, count, OTHERS_PER_DELIVERY):
        feed.post([(who, "hi") for who in senders[start : start + OTHERS_PER_DELIVERY]])
    done = wait_for("the others' runs", lambda: db.others(standing_queue) == 0, 600)
    return round(done - began, 3)


def backlog_run(python: str, kind: str, url: str | None, args: argparse.Namespace) -> dict:
    """Claims at each size and the others' time, on one served process and database."""
    with tempfile.TemporaryDirectory(prefix="svc-bench-backlog-") as tmp:
        folder = Path(tmp)
        env = project(folder)
        (folder / "convbot.py").write_text(BOT)
        (folder / "probe.py").write_text(PROBE)
        result: dict[str, Any] = {"claim_ms": {}, "fill_messages_per_s": []}
        with (
            database(kind, folder, url) as db,
            served(python, folder, db.flags, {**env, **db.env}, *HANDLER_FLAGS) as (port, _),
        ):
            feed = Feed(port, args.per_delivery)
            try:
                if 0 in args.sizes:
                    result["claim_ms"]["0"] = probe(python, folder, db, args.claims)
                result["others_s"] = {"without": others(feed, db, "0", args, 0)}
                hold(feed, db, "15550000001", "x")
                filled = 0
                steps = sorted({*[s for s in args.sizes if s], args.others_backlog})
                for size in steps:
                    rate = feed.fill("15550000001", size - filled)
                    result["fill_messages_per_s"].append(round(rate))
                    filled = size
                    wait_for("the backlog", lambda n=size: db.inbox() >= n + 1, 60)
                    if size in args.sizes:
                        result["claim_ms"][str(size)] = probe(python, folder, db, args.claims)
                    if kind == "postgres" and size == args.sizes[-1]:
                        db.churn()
                        churned = probe(python, folder, db, args.claims)
                        result["claim_ms"][f"{size}_churned"] = churned
                    if size == args.others_backlog:
                        seconds = others(feed, db, "1", args, size + 1)
                        result["others_s"][f"with_{size}"] = seconds
                        result["others_s"]["with_over_without"] = round(
                            seconds / result["others_s"]["without"], 2
                        )
                # The whole backlog released (after the last size: a released queue drains,
                # so no larger size could be filled behind it): the others arrive while it
                # drains.
                (folder / "release-x").touch()
                draining = others(feed, db, "2", args, filled + 1)
                result["others_s"][f"with_{filled}_draining"] = draining
                result["others_s"]["draining_over_without"] = round(
                    draining / result["others_s"]["without"], 2
                )
            finally:
                feed.close()
    return result


def drain_run(
    python: str, kind: str, url: str | None, args: argparse.Namespace, size: int
) -> float:
    """One queue's runs per second once released with ``size`` messages behind it (a fresh
    process and database: nothing else waits)."""
    with tempfile.TemporaryDirectory(prefix="svc-bench-backlog-") as tmp:
        folder = Path(tmp)
        env = project(folder)
        (folder / "convbot.py").write_text(BOT)
        with (
            database(kind, folder, url) as db,
            served(python, folder, db.flags, {**env, **db.env}, *HANDLER_FLAGS) as (port, _),
        ):
            feed = Feed(port, args.per_delivery)
            try:
                hold(feed, db, "15560000001", "d")
                feed.fill("15560000001", size)
                wait_for("the queue", lambda: db.inbox() >= size + 1, 60)
                runs = min(args.drain_runs, size)  # and the held run itself
                first = db.first_id()
                assert first is not None
                (folder / "release-d").touch()
                began = time.monotonic()
                deadline = began + args.drain_seconds
                while time.monotonic() < deadline:
                    lowest = db.first_id()
                    if lowest is None or lowest > first + runs:
                        break
                    time.sleep(0.01)
                end = time.monotonic()
            finally:
                feed.close()
    done = size + 1 if lowest is None else lowest - first
    return round(done / (end - began), 1)


def baseline_python(where: str | None) -> tuple[str, str | None]:
    """The baseline checkout's python and revision (``where``: a folder, or a revision whose
    worktree ``../wt-REV`` exists)."""
    folder = Path(where) if where and Path(where).is_dir() else DEFAULT_BASELINE
    if where and not Path(where).is_dir():
        folder = DEFAULT_BASELINE.parent / f"wt-{where}"
    python = folder / ".venv" / "bin" / "python"
    if not python.exists():
        raise SystemExit(
            f"no baseline checkout at {folder}: git worktree add {folder} {BASELINE} and "
            f"python3 -m venv {folder}/.venv && {folder}/.venv/bin/pip install -e '{folder}[bench]'"
        )
    return str(python), _proc.git_head(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, SQLite-fast")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--no-baseline", action="store_true", help="this checkout alone")
    parser.add_argument("--baseline", default=None, help=f"a checkout or a revision ({BASELINE})")
    parser.add_argument("--sizes", default="0,1000,20000,100000", help="claim backlogs")
    parser.add_argument("--others", type=int, default=300, help="other users, a message each")
    parser.add_argument("--others-backlog", type=int, default=50_000)
    parser.add_argument("--others-rounds", type=int, default=5, help="median of rounds")
    parser.add_argument("--drain", default="1000,20000", help="queue lengths drained")
    parser.add_argument("--drain-runs", type=int, default=1000, help="runs timed per drain")
    parser.add_argument("--drain-seconds", type=float, default=30.0, help="at most, per drain")
    parser.add_argument("--claims", type=int, default=20, help="claims timed per size")
    parser.add_argument("--per-delivery", type=int, default=500, help="messages per delivery")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.others, args.others_backlog, args.drain = "0,200", 50, 200, "20,200"
        args.drain_runs, args.claims, args.per_delivery, args.others_rounds = 20, 5, 200, 2
    args.sizes = sorted(int(part) for part in args.sizes.split(",") if part.strip())
    args.drain = [int(part) for part in args.drain.split(",") if part.strip()]
    pythons = {"current": (sys.executable, _proc.git_head(_proc.ROOT))}
    if not args.no_baseline:
        pythons["baseline"] = baseline_python(args.baseline)
    busy_since, began = _proc.machine_busy_ticks(), time.monotonic()
    line: dict[str, Any] = {
        "bench": "backlog",
        "machine": _proc.machine(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "revisions": {name: revision for name, (_, revision) in pythons.items()},
    }
    url = _proc.postgres_url_to_measure(args.no_postgres)
    for kind in [*([] if args.no_sqlite else ["sqlite"]), *(["postgres"] if url else [])]:
        figures: dict[str, dict[str, Any]] = {}
        for name, (python, _) in pythons.items():
            figures[name] = {
                **backlog_run(python, kind, url, args),
                "drain_runs_per_s": {
                    str(size): drain_run(python, kind, url, args, size) for size in args.drain
                },
            }
        line[kind] = side_by_side(figures)
    if not url:
        line["postgres"] = "skipped"
    line["machine_busy_share"] = _proc.machine_busy_share(busy_since)
    line["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    line["seconds"] = round(time.monotonic() - began, 1)
    print(json.dumps(line), flush=True)


def side_by_side(figures: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``{figure: {size: {"current": ..., "baseline": ...}}}`` from each checkout's figures."""
    current = figures["current"]
    out: dict[str, Any] = {}
    for figure, values in current.items():
        if isinstance(values, dict):
            out[figure] = {
                key: {name: figures[name][figure].get(key) for name in figures} for key in values
            }
        else:
            out[figure] = {name: figures[name][figure] for name in figures}
    return out


if __name__ == "__main__":
    main()
