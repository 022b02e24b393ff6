"""Signed deliveries handed to an ASGI app in process, by concurrent callers (no server)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import _deliveries

__all__ = ["Callers", "calls", "scope"]


def scope(delivery: _deliveries.Delivery) -> dict[str, Any]:
    """The ASGI scope of a signed POST of ``delivery`` to the webhook path."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": _deliveries.WEBHOOK_PATH,
        "raw_path": _deliveries.WEBHOOK_PATH.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(delivery.body)).encode()),
            (b"x-hub-signature-256", delivery.signature.encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
        "extensions": {},
    }


def calls(found: list[_deliveries.Delivery]) -> list[tuple[dict[str, Any], Callable[[], Any]]]:
    """(scope, receive) per delivery; statuses are checked by the caller's ``send``."""
    out = []
    for delivery in found:
        message = {"type": "http.request", "body": delivery.body, "more_body": False}

        def make_receive(m: dict[str, Any] = message) -> Callable[[], Any]:
            sent = False

            async def receive() -> dict[str, Any]:
                nonlocal sent
                if sent:
                    return {"type": "http.disconnect"}
                sent = True
                return m

            return receive

        out.append((scope(delivery), make_receive))
    return out


class Callers:
    """Hands the deliveries to an ASGI app from concurrent callers; keeps the answers' statuses.

    Framework-neutral: trio starts ``call`` in a nursery, asyncio gathers it.
    """

    def __init__(self, found: list[_deliveries.Delivery]) -> None:
        self._calls = calls(found)
        self._next = 0
        self.statuses: list[int] = []

    async def _send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.statuses.append(message["status"])

    async def call(self, app: Any) -> None:
        """One caller: take the next delivery until none is left."""
        while self._next < len(self._calls):
            asgi_scope, make_receive = self._calls[self._next]
            self._next += 1
            await app(dict(asgi_scope), make_receive(), self._send)

    def check(self, name: str) -> None:
        if set(self.statuses) != {200} or len(self.statuses) != len(self._calls):
            raise RuntimeError(f"{name} answered {sorted(set(self.statuses))}")
