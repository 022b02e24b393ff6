"""The reliability harness: real ``svc serve`` processes, a recording fake Graph, real databases.

Everything talks to 127.0.0.1 only. Every response body, response header, log
line and metric text a test sees goes through :class:`Captured`, and each test
ends with a scan of what it captured for every secret value it used (the
session-wide scan is ``test_zz_secret_scan.py``). ``SVC_RELIABILITY_LONG=1``
selects the long variants (larger counts); CI runs the short ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import queue
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

REPO = Path(__file__).resolve().parents[2]
LONG = os.environ.get("SVC_RELIABILITY_LONG") == "1"
POSTGRES_ENV = "SVC_TEST_POSTGRES_URL"
PHONE_ID = "106540352242922"
WABA_ID = "102290129340398"
SERVING = re.compile(r"^svc: serving (http://\S+?)[, ]")
DRY_RUN_LINE = re.compile(
    r"^dry-run (serviceBearerToken|webhookVerifyToken|webhookAppSecret)=(\S+)$"
)
START_TIMEOUT = 60.0


# --- what the tests saw -------------------------------------------------------------------


class Captured:
    """Every text a test saw from the service: responses, headers, log lines, metrics."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.texts: list[tuple[str, str]] = []
        self.secrets: set[str] = set()

    def add(self, label: str, text: str) -> None:
        with self._lock:
            self.texts.append((label, text))

    def response(self, response: httpx.Response) -> httpx.Response:
        headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
        self.add(
            f"{response.request.method} {response.request.url.path}", headers + "\n" + response.text
        )
        return response

    def secret(self, *values: str) -> None:
        with self._lock:
            self.secrets.update(v for v in values if v)

    def leaks(self) -> list[tuple[str, str]]:
        """(label, secret prefix) for each captured text that holds a secret value."""
        found = []
        with self._lock:
            for label, text in self.texts:
                for value in self.secrets:
                    if value in text:
                        found.append((label, value[:6] + "..."))
        return found

    def size(self) -> int:
        with self._lock:
            return sum(len(text) for _, text in self.texts)


SESSION_CAPTURE = Captured()


@pytest.fixture
def captured() -> Iterator[Captured]:
    """This test's capture; at teardown it must hold no secret value, and joins the session's."""
    capture = Captured()
    yield capture
    leaks = capture.leaks()
    for label, text in capture.texts:
        SESSION_CAPTURE.add(label, text)
    SESSION_CAPTURE.secret(*capture.secrets)
    assert leaks == [], f"secret values leaked into: {leaks}"


# --- svc serve as a real process ----------------------------------------------------------


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Our environment without any SVC_ variable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC_") and k != "PORT"}
    env.update(extra or {})
    return env


@dataclass
class Serve:
    """A running ``svc serve``: its URL, its secrets, and every stderr line so far."""

    process: subprocess.Popen[str]
    capture: Captured
    lines: list[str] = field(default_factory=list)
    url: str = ""
    secrets: dict[str, str] = field(default_factory=dict)
    _queue: queue.Queue[str | None] = field(default_factory=queue.Queue)
    _eof: bool = False

    def _pump(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for_line(
        self, pattern: re.Pattern[str], timeout: float = START_TIMEOUT
    ) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern.pattern}: {self.lines}") from None
            if line is None:
                self._eof = True
                raise AssertionError(f"serve exited before {pattern.pattern}: {self.lines}")
            self._keep(line)
            match = pattern.search(line)
            if match:
                return match

    def _keep(self, line: str) -> None:
        self.lines.append(line)
        if not DRY_RUN_LINE.match(line):  # the dry-run lines print the secrets by design
            self.capture.add("stderr", line)

    def drain(self) -> None:
        """Collect stderr up to EOF (the process has exited or is exiting)."""
        while not self._eof:
            try:
                line = self._queue.get(timeout=10)
            except queue.Empty:
                return
            if line is None:
                self._eof = True
                return
            self._keep(line)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=timeout)
        self.drain()
        self.close()
        return code

    def kill9(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self.drain()
        self.close()

    def close(self) -> None:
        """Keep what is left on stdout, close both pipes (the pump thread has hit EOF)."""
        if self.process.stdout is not None and not self.process.stdout.closed:
            self.capture.add("stdout", self.process.stdout.read())
            self.process.stdout.close()
        if self.process.stderr is not None and not self.process.stderr.closed:
            self.drain()
            self.process.stderr.close()

    @property
    def bearer(self) -> str:
        return self.secrets["serviceBearerToken"]

    @property
    def app_secret(self) -> str:
        return self.secrets["webhookAppSecret"]

    def client(self, timeout: float = 30) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            timeout=timeout,
            headers={"Authorization": f"Bearer {self.bearer}"},
            limits=httpx.Limits(max_connections=64),
            event_hooks={"response": [self._record]},
        )

    def _record(self, response: httpx.Response) -> None:
        response.read()
        self.capture.response(response)


def start_serve(
    capture: Captured,
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    secrets_used: Mapping[str, str] | None = None,
    prefix: Sequence[str] = (),
    preexec_fn: Callable[[], None] | None = None,
) -> Serve:
    """Start ``[PREFIX] python -m svc serve ARGS`` and wait until it says it is serving."""
    process = subprocess.Popen(
        [*prefix, sys.executable, "-m", "svc", "serve", *args],
        preexec_fn=preexec_fn,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=child_env(env),
    )
    served = Serve(process, capture)
    threading.Thread(target=served._pump, daemon=True).start()
    try:
        match = served.wait_for_line(SERVING)
    except AssertionError:
        process.kill()
        process.wait(timeout=30)
        served.close()
        raise
    served.url = match.group(1)
    for line in served.lines:
        found = DRY_RUN_LINE.match(line)
        if found:
            served.secrets[found.group(1)] = found.group(2)
    if secrets_used is not None:
        served.secrets.update(secrets_used)
    capture.secret(*served.secrets.values())
    return served


def run_serve_to_exit(
    capture: Captured,
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    prefix: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run ``[PREFIX] svc serve ARGS`` expecting it to refuse to start; output is captured."""
    result = subprocess.run(
        [*prefix, sys.executable, "-m", "svc", "serve", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=cwd,
        env=child_env(env),
    )
    capture.add("refused stderr", result.stderr)
    capture.add("refused stdout", result.stdout)
    return result


@pytest.fixture
def serving() -> Iterator[list[Serve]]:
    """Processes started by a test; any still running at the end is killed."""
    started: list[Serve] = []
    yield started
    for served in started:
        if served.process.poll() is None:
            served.process.kill()
            served.process.wait(timeout=30)
        served.close()


# --- a project: config file and secrets ---------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Project:
    """A directory with a config (dry run or live against the fake Graph) and its secrets."""

    root: Path
    secrets: dict[str, str]

    @property
    def bearer(self) -> str:
        return self.secrets["SVC_SERVICE_TOKEN"]

    def live_args(self) -> list[str]:
        return ["--config", "svc.config.json", "--live", "--yes-live", "--env-file", ".env.live"]

    def dry_args(self) -> list[str]:
        return ["--config", "svc.config.json", "--dry-run"]

    def used(self) -> dict[str, str]:
        """The four secrets under the names ``Serve.secrets`` uses."""
        return {
            "accessToken": self.secrets["SVC_ACCESS_TOKEN"],
            "webhookVerifyToken": self.secrets["SVC_VERIFY_TOKEN"],
            "webhookAppSecret": self.secrets["SVC_APP_SECRET"],
            "serviceBearerToken": self.secrets["SVC_SERVICE_TOKEN"],
        }


def make_project(root: Path, graph_url: str = "http://127.0.0.1:9") -> Project:
    """Write ``svc.config.json`` and ``.env.live`` (fresh distinctive secrets) under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    config = {
        "version": 1,
        "defaultProfile": "main",
        "profiles": {
            "main": {
                "platform": {
                    "baseUrl": graph_url,
                    "wabaId": {"env": "SVC_WABA_ID"},
                    "phoneNumberId": {"env": "SVC_PHONE_NUMBER_ID"},
                },
                "secrets": {
                    "accessToken": {"env": "SVC_ACCESS_TOKEN"},
                    "webhookVerifyToken": {"env": "SVC_VERIFY_TOKEN"},
                    "webhookAppSecret": {"env": "SVC_APP_SECRET"},
                    "serviceBearerToken": {"env": "SVC_SERVICE_TOKEN"},
                },
            }
        },
    }
    (root / "svc.config.json").write_text(json.dumps(config))
    values = {
        "SVC_ACCESS_TOKEN": "EAAGrel" + secrets.token_hex(12),
        "SVC_VERIFY_TOKEN": "relverify" + secrets.token_hex(12),
        "SVC_APP_SECRET": "relappsecret" + secrets.token_hex(12),
        "SVC_SERVICE_TOKEN": "relbearer" + secrets.token_hex(12),
    }
    lines = [f"{k}={v}" for k, v in values.items()]
    lines += [f"SVC_PHONE_NUMBER_ID={PHONE_ID}", f"SVC_WABA_ID={WABA_ID}"]
    lines += ["SVC_LIVE_ENABLE=1", "SVC_YES_LIVE=1"]
    (root / ".env.live").write_text("\n".join(lines) + "\n")
    return Project(root=root, secrets=values)


def start_live(
    capture: Captured,
    project: Project,
    *database: str,
    env: Mapping[str, str] | None = None,
) -> Serve:
    """A live ``svc serve`` of ``project`` on a free port with ``database`` flags."""
    capture.secret(*project.secrets.values())
    return start_serve(
        capture,
        *project.live_args(),
        *database,
        "--port",
        "0",
        cwd=project.root,
        env={"SVC_LIVE_ENABLE": "1", "SVC_YES_LIVE": "1", **(env or {})},
        secrets_used=project.used(),
    )


def sign(body: bytes, app_secret: str) -> str:
    """The ``X-Hub-Signature-256`` value of ``body``."""
    return "sha256=" + hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()


def inbound_text(message_id: str, text: str, sender: str = "16505551234") -> bytes:
    """A signed-ready webhook envelope with one inbound text message."""
    envelope = {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": WABA_ID,
                "changes": [
                    {
                        "field": "messages",
                        "value": {
                            "messaging_product": "whatsapp",
                            "metadata": {
                                "display_phone_number": "15550783881",
                                "phone_number_id": PHONE_ID,
                            },
                            "contacts": [{"profile": {"name": "Rel"}, "wa_id": sender}],
                            "messages": [
                                {
                                    "from": sender,
                                    "id": message_id,
                                    "timestamp": "1749416383",
                                    "type": "text",
                                    "text": {"body": text},
                                }
                            ],
                        },
                    }
                ],
            }
        ],
    }
    return json.dumps(envelope).encode()


# --- the fake Graph API -------------------------------------------------------------------


@dataclass
class GraphRequest:
    method: str
    path: str
    authorization: str
    body: bytes


class FakeGraph:
    """A local Graph API that records every request; ``hold`` makes POSTs wait for ``release``."""

    def __init__(self) -> None:
        self.requests: list[GraphRequest] = []
        self.lock = threading.Lock()
        self.arrived = threading.Semaphore(0)
        self.gate = threading.Event()
        self.gate.set()
        self.delay = 0.0
        self.gate_from = 1  # requests numbered from here on wait at a cleared gate
        self._ids = iter(range(1, 10**9))
        graph = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with graph.lock:
                    graph.requests.append(
                        GraphRequest(
                            method="POST",
                            path=self.path,
                            authorization=self.headers.get("Authorization", ""),
                            body=body,
                        )
                    )
                    number = next(graph._ids)
                graph.arrived.release()
                if number >= graph.gate_from:
                    graph.gate.wait(timeout=60)
                if graph.delay:
                    time.sleep(graph.delay)
                try:
                    to = json.loads(body).get("to", "")
                except ValueError:
                    to = ""
                answer = json.dumps(
                    {
                        "messaging_product": "whatsapp",
                        "contacts": [{"input": to, "wa_id": to}],
                        "messages": [{"id": f"wamid.FAKE{number:08d}"}],
                    }
                ).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except OSError:
                    pass  # the client went away (a killed service)

            def log_message(self, format: str, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def hold(self, from_request: int = 1) -> None:
        """Make request number ``from_request`` (1-based) and later ones wait for ``release``."""
        self.gate_from = from_request
        self.gate.clear()

    def release(self) -> None:
        self.gate.set()

    def wait_for_requests(self, count: int, timeout: float = 30) -> None:
        for _ in range(count):
            assert self.arrived.acquire(timeout=timeout), "the fake Graph got fewer requests"

    def sends(self) -> list[GraphRequest]:
        with self.lock:
            return [r for r in self.requests if r.path.endswith("/messages")]

    def close(self) -> None:
        self.gate.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def graph() -> Iterator[FakeGraph]:
    fake = FakeGraph()
    yield fake
    fake.close()


# --- PostgreSQL ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The shared server's URL; skips when unset, fails when set but unreachable."""
    url = os.environ.get(POSTGRES_ENV, "")
    if not url:
        pytest.skip(f"{POSTGRES_ENV} is not set; the PostgreSQL reliability tests need a server")
    psycopg.connect(url, connect_timeout=5).close()
    return url


def with_search_path(url: str, schema: str) -> str:
    """``url`` with ``options=-c search_path=SCHEMA`` (the CLI takes a DSN, not a schema)."""
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options=-csearch_path%3D{schema}"


@pytest.fixture
def pg_schema(postgres_url: str) -> Iterator[tuple[str, str]]:
    """A fresh schema on the shared server: (DSN pinned to it, schema name); dropped after."""
    schema = f"svc_rel_{secrets.token_hex(5)}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    yield with_search_path(postgres_url, schema), schema
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrivatePostgres:
    """A PostgreSQL server of our own (initdb + pg_ctl on a spare port) that a test may stop."""

    def __init__(self) -> None:
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
        if not found:
            pytest.skip("no pg_ctl under /usr/lib/postgresql/*/bin for a private server")
        self.bin = found[-1].parent
        self.root = Path(tempfile.mkdtemp(prefix="svc-rel-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # initdb refuses to run as root
            shutil.chown(self.root, "postgres", "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres")
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        subprocess.run(
            [*self.as_user, *args], check=True, capture_output=True, timeout=120, cwd=self.root
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def close(self) -> None:
        subprocess.run(
            [
                *self.as_user,
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.data),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
            capture_output=True,
            timeout=60,
            check=False,
        )
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    server.start()
    try:
        yield server
    finally:
        server.close()


# --- small helpers ------------------------------------------------------------------------


def in_threads(count: int, work: Callable[[int], Any], width: int = 50) -> list[Any]:
    """Run ``work(i)`` for i in range(count) on ``width`` threads, started together."""
    results: list[Any] = [None] * count
    start = threading.Barrier(min(width, count))
    numbers: queue.Queue[int] = queue.Queue()
    for i in range(count):
        numbers.put(i)

    def worker() -> None:
        with contextlib.suppress(threading.BrokenBarrierError):
            start.wait(timeout=30)
        while True:
            try:
                i = numbers.get_nowait()
            except queue.Empty:
                return
            try:
                results[i] = work(i)
            except Exception as exc:  # noqa: BLE001 - reported as the item's result
                results[i] = exc

    threads = [threading.Thread(target=worker) for _ in range(min(width, count))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return results


def error_code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = body["error"].get("code")
        return code if isinstance(code, str) else None
    return None
