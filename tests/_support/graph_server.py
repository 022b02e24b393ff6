"""A local Graph API on a real socket, for tests that run ``svc serve`` as a child process.

It records every request and answers sends with a fresh message id; ``hold`` makes
requests wait for ``release`` so a test can act while a send is in flight. (Tests
of an in-process app fake Graph at the transport instead: ``httpx.MockTransport``.)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .graph_limits import GraphLimits


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphRequest:
    method: str
    path: str
    authorization: str
    body: bytes


def fake_message_id(number: int) -> str:
    """The id the fake gives the ``number``-th send (1-based)."""
    return f"wamid.FAKE{number:08d}"


def send_answer(to: object, message_id: str) -> dict[str, Any]:
    """The platform's answer to an accepted send to ``to``: both fakes answer with it."""
    return {
        "messaging_product": "whatsapp",
        "contacts": [{"input": to, "wa_id": to}],
        "messages": [{"id": message_id}],
    }


class FakeGraph:
    """A local Graph API that records every request; ``hold`` makes POSTs wait for ``release``."""

    def __init__(self, message_id: Callable[[int], str] = fake_message_id) -> None:
        self.requests: list[GraphRequest] = []
        self.lock = threading.Lock()
        self.arrived = threading.Semaphore(0)
        self.gate = threading.Event()
        self.gate.set()
        self.delay = 0.0
        self.gate_from = 1  # requests numbered from here on wait at a cleared gate
        self.limits: GraphLimits | None = None  # refuse sends over the platform's limits
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
                refused = (
                    None if graph.limits is None else graph.limits.check(body, time.monotonic())
                )
                if refused is not None:
                    error = json.dumps(GraphLimits.error_body(refused)).encode()
                    self.send_response(GraphLimits.status(refused))
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(error)))
                    self.end_headers()
                    self.wfile.write(error)
                    return
                try:
                    to = json.loads(body).get("to", "")
                except ValueError:
                    to = ""
                answer = json.dumps(send_answer(to, message_id(number))).encode()
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
