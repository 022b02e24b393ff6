"""Conversations: the latency a listener adds to a reply's delivery, and what a waiting
conversation costs the store.

Real ``svc serve --dry-run --app convbot:bot`` processes (the dry-run transport answers
the platform; the bot sends nothing), fed signed deliveries on 127.0.0.1 one at a time.
The bot's one message handler notes the wall-clock time it ran (``ran``) or, for a
message ``ask``, waits for the user's reply (``ctx.wait_for_reply``) and notes when it
resumed. In one run, alternated sample by sample so drift hits both alike:

- ``plain``: a delivery's POST sent -> the handler of its message ran (a fresh user each);
- ``listener``: the reply's POST sent (0 to 2 s after the handler began waiting, at
  random) -> the waiting handler resumed with it; ``listener_extra_ms``: the
  listener's p50/p99 minus the plain handler's.

With SQLite (one process: the ingest that records the reply wakes the wait), two
instances on one SQLite file (``sqlite_two_instances``; the other's record wakes the wait
with a datagram), ``svc serve --workers 2`` on one SQLite file (``sqlite_workers_2``; a
connection pinned to each worker) and, when ``SVC_TEST_POSTGRES_URL`` answers, two
instances on one PostgreSQL schema (``NOTIFY``), the reply recorded by the waiting process
(``listener_same_instance``) or by the other one (``listener_other_instance``; without a
wake, found by the wait's poll, every second; the bot notes which process recorded it).
``--baseline DIR`` serves the two SQLite instances from an earlier checkout too (DIR holds
its own ``.venv``), in the same run.

Then ``--waiting`` conversations wait at once (``--handler-concurrency`` above it: a
waiting run holds a run slot) for ``--window`` seconds with the default deadline (30 s:
a lease of 6 s, renewed every third of it while a run lives): per waiting conversation,
the inbox rows, their bytes (SQLite: table and index payload, from ``dbstat``;
PostgreSQL: the heap row, ``pg_column_size``), the lease renewals per minute (from the
median gap between the successive ends of a row's lease, sampled every 0.2 s: a renewal
moves the end to a lease after it) and, on PostgreSQL, the scans of ``svc_inbox`` per
minute over the idle services' (``pg_stat_user_tables``).

Prints one JSON line, with the machine it ran on and how busy the machine was.

    .venv/bin/python bench/conversations.py [--quick] [--samples 40] [--waiting 50]
        [--window 30] [--no-postgres] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import hmac
import itertools
import json
import os
import random
import secrets
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import _proc
import httpx

PHONE = "106540352242922"
WABA = "102290129340398"
APP_SECRET = "bench-conversations-app-secret"
BOT = """
import os
import time
from pathlib import Path

from svc.webhook import DefaultFacade, HandlerContext, MessageUpdate, Update

LOG = Path.cwd() / "events.log"


def note(what: str, mid: str) -> None:
    line = f"{what} {os.getpid()} {mid} {time.time():.6f}\\n"
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


class Noting(DefaultFacade):
    def handles(self, update: Update) -> bool:
        note("recorded", getattr(update, "message_id", None) or "-")
        return super().handles(update)


bot = Noting()


@bot.on("message", context=True)
async def run(ctx: HandlerContext) -> None:
    update = ctx.update
    assert isinstance(update, MessageUpdate)
    if update.text == "ask":
        note("waiting", update.message_id)
        reply = await ctx.wait_for_reply(timeout=3600)
        note("resumed", reply.message_id)
    else:
        note("ran", update.message_id)
"""
CONFIG = {
    "version": 1,
    "defaultProfile": "main",
    "profiles": {
        "main": {
            "platform": {"wabaId": {"env": "SVC_WABA_ID"}, "phoneNumberId": {"env": "SVC_PHONE"}},
            "secrets": {
                "accessToken": {"env": "SVC_ACCESS_TOKEN"},
                "webhookVerifyToken": {"env": "SVC_VERIFY_TOKEN"},
                "webhookAppSecret": {"env": "SVC_APP_SECRET"},
                "serviceBearerToken": {"env": "SVC_SERVICE_TOKEN"},
            },
            "inbox": {"keys": [{"env": "SVC_INBOX_KEY"}]},
        }
    },
}
POLL_S = 1.0  # how often a wait looks for rows other processes recorded
LEASE_S = 6.0  # the default lease (HandlerOptions.lease), renewed every third of it


# --- the served bot ----------------------------------------------------------------------


class Events:
    """``events.log``, read as it grows: (what, pid, message id) -> wall-clock time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.seen: dict[tuple[str, str], tuple[str, float]] = {}

    def _read(self) -> None:
        if not self.path.exists():
            return
        with self.path.open("rb") as log:
            log.seek(self.offset)
            chunk = log.read()
        end = chunk.rfind(b"\n") + 1
        self.offset += end
        for line in chunk[:end].decode().splitlines():
            what, pid, mid, at = line.split(" ")
            self.seen[(what, mid)] = (pid, float(at))

    def wait(self, what: str, mid: str, timeout: float = 60.0) -> tuple[str, float]:
        """(pid, time) of the event, once the bot wrote it."""
        deadline = time.monotonic() + timeout
        while (what, mid) not in self.seen:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {what} for {mid} within {timeout} s")
            time.sleep(0.002)
            self._read()
        return self.seen[(what, mid)]


@contextlib.contextmanager
def served(
    python: str, folder: Path, database: list[str], env: dict[str, str], *flags: str
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """``svc serve --dry-run --app convbot:bot`` of ``python``'s svc in ``folder``, with
    ``flags``: (port, process) once it answers; stopped on the way out (if still alive)."""
    port = _proc.free_port()
    argv = [python, "-m", "svc", "serve", "--config", "svc.config.json", "--dry-run"]
    argv += [*database, "--app", "convbot:bot", "--port", str(port), *flags]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SVC_")}
    process = subprocess.Popen(
        argv,
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**clean, **env},
    )
    try:
        _proc.wait_until_up(port, process, path="/healthz", seconds=60.0)
        yield port, process
    finally:
        _proc.stop(process, seconds=15.0)


@contextlib.contextmanager
def serve(
    folder: Path,
    database: list[str],
    env: dict[str, str],
    concurrency: int,
    python: str = sys.executable,
) -> Iterator[tuple[int, int]]:
    """``python``'s (this checkout's) ``served`` with ``--handler-concurrency``: (port, pid)."""
    flags = ("--handler-concurrency", str(concurrency))
    with served(python, folder, database, env, *flags) as (port, process):
        yield port, process.pid


def project(folder: Path) -> dict[str, str]:
    """Write the config and the bot into ``folder``; the environment that serves them."""
    (folder / "svc.config.json").write_text(json.dumps(CONFIG))
    (folder / "convbot.py").write_text(BOT)
    return {
        "SVC_WABA_ID": WABA,
        "SVC_PHONE": PHONE,
        "SVC_ACCESS_TOKEN": "bench-access-token",
        "SVC_VERIFY_TOKEN": "bench-verify-token",
        "SVC_APP_SECRET": APP_SECRET,
        "SVC_SERVICE_TOKEN": "bench-service-token",
        "SVC_INBOX_KEY": base64.b64encode(secrets.token_bytes(32)).decode(),
    }


def delivery(sender: str, mid: str, text: str) -> tuple[bytes, dict[str, str]]:
    """One signed inbound text."""
    return batch([(sender, mid, text)])


def batch(messages: list[tuple[str, str, str]]) -> tuple[bytes, dict[str, str]]:
    """One signed delivery of inbound texts, each ``(sender, message id, text)``, in order."""
    now = str(int(time.time()))
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": PHONE},
        "contacts": [
            {"profile": {"name": "Bench"}, "wa_id": sender}
            for sender in dict.fromkeys(sender for sender, _, _ in messages)
        ],
        "messages": [
            {"from": sender, "id": mid, "timestamp": now, "type": "text", "text": {"body": text}}
            for sender, mid, text in messages
        ],
    }
    body = json.dumps(
        {
            "object": "whatsapp_business_account",
            "entry": [{"id": WABA, "changes": [{"field": "messages", "value": value}]}],
        }
    ).encode()
    signature = hmac.new(APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-Hub-Signature-256": f"sha256={signature}"}
    return body, headers


class Sender:
    """Keep-alive clients by route: a port, or a connection ``pin`` opened to one worker of
    several on a port; ``post`` returns the wall-clock time it was sent."""

    def __init__(self) -> None:
        self.clients: dict[int | str, httpx.Client] = {}
        self.users = iter(range(10**6))

    def user(self) -> str:
        return f"1650{next(self.users):07d}"

    def pin(self, port: int) -> str:
        """A route of its own: one keep-alive connection (it stays with the worker that
        accepted it)."""
        route = f"{port}/{len(self.clients)}"
        self.clients[route] = httpx.Client(
            base_url=f"http://127.0.0.1:{port}",
            timeout=30,
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        )
        return route

    def post(self, route: int | str, sender: str, mid: str, text: str) -> float:
        client = self.clients.get(route)
        if client is None:
            assert isinstance(route, int)
            client = self.clients[route] = httpx.Client(
                base_url=f"http://127.0.0.1:{route}", timeout=30
            )
        body, headers = delivery(sender, mid, text)
        sent = time.time()
        answer = client.post("/webhooks/whatsapp", content=body, headers=headers)
        if answer.status_code != 200 or answer.json().get("dispatched") != 1:
            raise RuntimeError(f"delivery refused: {answer.status_code}")
        return sent

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


# --- latency -----------------------------------------------------------------------------


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def at(share: float) -> float:
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    return {"p50": round(at(0.5), 2), "p99": round(at(0.99), 2), "max": round(ordered[-1], 2)}


def latency(
    sender: Sender, events: Events, ports: Sequence[int | str], pids: list[str], samples: int
) -> dict[str, Any]:
    """Plain runs and listener resumptions, alternated. With two processes the ask goes to
    each in turn and its reply to the same process or the other, in turn; a sample counts as
    the other's when the process that recorded the reply is not the waiting one."""
    plain: list[float] = []
    same: list[float] = []
    other: list[float] = []
    port_of = dict(zip(pids, ports, strict=True))
    for n in range(samples):
        user, mid = sender.user(), f"wamid.P{n:05d}{secrets.token_hex(3)}"
        sent = sender.post(ports[n % len(ports)], user, mid, "plain")
        plain.append((events.wait("ran", mid)[1] - sent) * 1000)

        user, ask = sender.user(), f"wamid.A{n:05d}{secrets.token_hex(3)}"
        sender.post(ports[n % len(ports)], user, ask, "ask")
        waiter, _ = events.wait("waiting", ask)
        to_other = len(ports) > 1 and n % 2 == 1
        target = next(p for p in pids if p != waiter) if to_other else waiter
        reply = f"wamid.R{n:05d}{secrets.token_hex(3)}"
        # A user answers at any moment of the other instance's poll (not right after it).
        time.sleep(random.uniform(0, 2 * POLL_S))
        sent = sender.post(port_of[target], user, reply, "Ada")
        resumed = (events.wait("resumed", reply)[1] - sent) * 1000
        (other if events.wait("recorded", reply)[0] != waiter else same).append(resumed)
    result: dict[str, Any] = {"plain_ms": percentiles(plain)}
    result["listener_same_instance_ms" if len(ports) > 1 else "listener_ms"] = percentiles(same)
    if other:
        result["listener_other_instance_ms"] = percentiles(other)
    for key in [k for k in result if k.startswith("listener")]:
        name = key.removesuffix("_ms")
        result[f"{name}_extra_ms"] = {
            q: round(result[key][q] - result["plain_ms"][q], 2) for q in ("p50", "p99")
        }
    result["samples_each"] = {"plain": len(plain), "listener": len(same) + len(other)}
    return result


# --- the store's cost of waiting ----------------------------------------------------------


def waiting_cost(
    sender: Sender,
    events: Events,
    ports: list[int],
    count: int,
    window: float,
    query: Callable[[str], list[tuple[Any, ...]]],
    measure: Callable[[], dict[str, float]],
) -> dict[str, Any]:
    """``count`` conversations waiting at once for ``window`` seconds; then their replies."""
    deadline = time.monotonic() + 60
    while query("SELECT count(*) FROM svc_inbox")[0][0]:  # the last completions commit
        if time.monotonic() > deadline:
            raise RuntimeError("the inbox did not empty")
        time.sleep(0.05)
    before = measure()
    asks: list[tuple[str, str]] = []
    for n in range(count):
        user, ask = sender.user(), f"wamid.W{n:05d}{secrets.token_hex(3)}"
        sender.post(ports[n % len(ports)], user, ask, "ask")
        asks.append((user, ask))
    for _, ask in asks:
        events.wait("waiting", ask)
    rows = query("SELECT count(*) FROM svc_inbox")[0][0]
    held = measure()
    leases: dict[int, set[int]] = {}
    begin = time.monotonic()
    while time.monotonic() - begin < window:
        for item, until in query("SELECT id, lease_expires_at FROM svc_inbox"):
            leases.setdefault(int(item), set()).add(int(until))
        time.sleep(0.2)
    spent = time.monotonic() - begin
    after = measure()
    for n, (user, _) in enumerate(asks):
        reply = f"wamid.WR{n:05d}{secrets.token_hex(3)}"
        sender.post(ports[n % len(ports)], user, reply, "done")
        events.wait("resumed", reply)
    # A renewal sets the lease to end a lease after it, so two successive ends of one row's
    # lease are as far apart as its renewals (whatever the window's phase).
    gaps = [
        (later - earlier) / 1000
        for values in leases.values()
        for earlier, later in itertools.pairwise(sorted(values))
    ]
    interval = statistics.median(gaps) if gaps else None
    result: dict[str, Any] = {
        "conversations": count,
        "window_s": round(spent, 1),
        "inbox_rows_per_conversation": round(int(rows) / count, 2),
        "lease_renewal_interval_s": round(interval, 2) if interval else None,
        "lease_renewals_per_min_per_conversation": round(60 / interval, 2) if interval else None,
        "lease_renewals_seen": len(gaps),
    }
    for key, value in held.items():
        if key.endswith("bytes"):
            result[f"{key}_per_conversation"] = round((value - before[key]) / count, 1)
    if "scans" in held:
        waiting_rate = (after["scans"] - held["scans"]) / spent * 60
        idle_rate = before.get("idle_scans_per_min", 0.0)
        result["inbox_scans_per_min_per_conversation"] = round(
            (waiting_rate - idle_rate) / count, 1
        )
        result["inbox_scans_per_min_idle"] = round(idle_rate, 1)
    return result


def sqlite_run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="svc-bench-conversations-") as tmp:
        folder = Path(tmp)
        env = project(folder)
        events, sender = Events(folder / "events.log"), Sender()
        concurrency = args.waiting + 8

        def query(sql: str) -> list[tuple[Any, ...]]:
            conn = sqlite3.connect(folder / "svc.db")
            try:
                return list(conn.execute(sql).fetchall())
            finally:
                conn.close()

        def measure() -> dict[str, float]:
            try:
                ((payload,),) = query(
                    "SELECT sum(payload) FROM dbstat WHERE name IN "
                    "(SELECT name FROM sqlite_master WHERE tbl_name = 'svc_inbox')"
                )
            except sqlite3.OperationalError:  # a SQLite built without dbstat
                return {}
            return {"table_and_index_payload_bytes": float(payload or 0)}

        try:
            with serve(folder, ["--database", "svc.db"], env, concurrency) as (port, pid):
                result = latency(sender, events, [port], [str(pid)], args.samples)
                result["waiting"] = waiting_cost(
                    sender, events, [port], args.waiting, args.window, query, measure
                )
        finally:
            sender.close()
    result["store"] = "sqlite file (writer process), one process"
    return result


def sqlite_instances_run(python: str, samples: int) -> dict[str, Any]:
    """The latencies with two instances of ``python``'s svc on one SQLite file."""
    with tempfile.TemporaryDirectory(prefix="svc-bench-conversations-") as tmp:
        folder = Path(tmp)
        env = project(folder)
        events, sender = Events(folder / "events.log"), Sender()
        database = ["--database", "svc.db"]
        try:
            with (
                serve(folder, database, env, 8, python) as (first, pid_a),
                serve(folder, database, env, 8, python) as (second, pid_b),
            ):
                ports, pids = [first, second], [str(pid_a), str(pid_b)]
                result = latency(sender, events, ports, pids, samples)
        finally:
            sender.close()
    result["store"] = "sqlite file (writer process each), two instances"
    return result


def sqlite_workers(args: argparse.Namespace) -> dict[str, Any]:
    """The latencies with ``svc serve --workers 2`` on one SQLite file: a connection pinned
    to each worker (found by which process recorded a plain message sent on it)."""
    with tempfile.TemporaryDirectory(prefix="svc-bench-conversations-") as tmp:
        folder = Path(tmp)
        env = project(folder)
        events, sender = Events(folder / "events.log"), Sender()
        flags = ("--workers", "2", "--handler-concurrency", "8")
        try:
            with served(sys.executable, folder, ["--database", "svc.db"], env, *flags) as (
                port,
                _,
            ):
                route_of: dict[str, int | str] = {}
                for n in range(40):
                    if len(route_of) == 2:
                        break
                    route, mid = sender.pin(port), f"wamid.W{n:05d}{secrets.token_hex(3)}"
                    sender.post(route, sender.user(), mid, "plain")
                    route_of.setdefault(events.wait("recorded", mid)[0], route)
                if len(route_of) != 2:
                    raise RuntimeError(f"reached workers {sorted(route_of)} of 2")
                pids = sorted(route_of)
                result = latency(sender, events, [route_of[p] for p in pids], pids, args.samples)
        finally:
            sender.close()
    result["store"] = "sqlite file (writer process each), svc serve --workers 2"
    return result


def sqlite_instances(args: argparse.Namespace) -> dict[str, Any]:
    """This checkout's two SQLite instances, and the baseline's with ``--baseline``."""
    result: dict[str, Any] = {"current": sqlite_instances_run(sys.executable, args.samples)}
    result["current"]["revision"] = _proc.git_head(Path(__file__).resolve().parent.parent)
    if args.baseline is not None:
        python = str(args.baseline / ".venv" / "bin" / "python")
        result["baseline"] = sqlite_instances_run(python, args.samples)
        result["baseline"]["revision"] = _proc.git_head(args.baseline)
    return result


def postgres_run(args: argparse.Namespace, url: str) -> dict[str, Any]:
    import psycopg

    schema = f"svc_bench_conv_{secrets.token_hex(4)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    dsn = f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
    try:
        with tempfile.TemporaryDirectory(prefix="svc-bench-conversations-") as tmp:
            folder = Path(tmp)
            env = {**project(folder), "SVC_BENCH_DB": dsn}
            events, sender = Events(folder / "events.log"), Sender()
            database = ["--database-url-env", "SVC_BENCH_DB"]
            concurrency = args.waiting + 8

            def query(sql: str) -> list[tuple[Any, ...]]:
                with psycopg.connect(dsn) as conn:
                    return list(conn.execute(sql.encode()).fetchall())

            def scans() -> float:
                ((count,),) = query(
                    "SELECT coalesce(idx_scan, 0) + coalesce(seq_scan, 0) FROM "
                    "pg_stat_user_tables WHERE relname = 'svc_inbox' "
                    "AND schemaname = current_schema()"
                )
                return float(count)

            def measure() -> dict[str, float]:
                ((row_bytes,),) = query(
                    "SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM svc_inbox t"
                )
                return {"heap_row_bytes": float(row_bytes), "scans": scans()}

            try:
                with (
                    serve(folder, database, env, concurrency) as (first, pid_a),
                    serve(folder, database, env, concurrency) as (second, pid_b),
                ):
                    ports, pids = [first, second], [str(pid_a), str(pid_b)]
                    result = latency(sender, events, ports, pids, args.samples)
                    idle_from, begin = scans(), time.monotonic()
                    time.sleep(args.window)  # the idle services' own scans, for the baseline
                    idle = (scans() - idle_from) / (time.monotonic() - begin) * 60

                    def measure_with_idle() -> dict[str, float]:
                        return {**measure(), "idle_scans_per_min": idle}

                    result["waiting"] = waiting_cost(
                        sender, events, ports, args.waiting, args.window, query, measure_with_idle
                    )
            finally:
                sender.close()
    finally:
        _proc.drop_schema(url, schema)
    result["store"] = "postgresql, two instances on one schema"
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few samples, a short window")
    parser.add_argument("--samples", type=int, default=40, help="samples of each latency")
    parser.add_argument("--waiting", type=int, default=50, help="conversations waiting at once")
    parser.add_argument("--window", type=float, default=30.0, help="seconds they wait")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--baseline", type=Path, default=None, help="an earlier checkout")
    args = parser.parse_args()
    if args.quick:
        args.samples, args.waiting, args.window = 4, 4, 3.0
    busy_since = _proc.machine_busy_ticks()
    line: dict[str, Any] = {
        "bench": "conversations",
        "machine": _proc.machine(),
        "deliveries": "one signed text each, one at a time, keep-alive connections",
        "latency": "POST sent -> the handler noted it ran or resumed (wall clock, one machine)",
        "sqlite": sqlite_run(args),
        "sqlite_two_instances": sqlite_instances(args),
        "sqlite_workers_2": sqlite_workers(args),
    }
    url = _proc.postgres_url_to_measure(args.no_postgres)
    line["postgres"] = postgres_run(args, url) if url else "skipped"
    line["machine_busy_share"] = _proc.machine_busy_share(busy_since)
    line["lease_s"] = LEASE_S
    line["poll_s"] = POLL_S
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
