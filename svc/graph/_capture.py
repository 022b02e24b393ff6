"""The capturing dry-run transport: every request the bot makes is kept, told and answered.

``CapturingTransport`` is ``svc.graph.DryRunTransport`` (a real httpx transport that
answers every request itself) that also hands each request's JSON and its answer to a
callback, so ``svc dev`` can draw the bot's sends and ``svc.testing`` can read them.
``fail_next(name)`` makes the next send answer one of the platform errors of ``FAILURES``
instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import httpx

from ._transports import DryRunTransport

__all__ = ["FAILURES", "CapturedRequest", "CapturingTransport", "Failure"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """A platform refusal a capturing transport can make the next send answer."""

    label: str
    status: int
    code: int
    title: str


FAILURES: Final[dict[str, Failure]] = {
    "outside_window": Failure(
        label="outside the 24-hour window (131047)",
        status=400,
        code=131047,
        title="Re-engagement message",
    ),
    "rate_limited": Failure(
        label="rate limited (130429)", status=400, code=130429, title="Rate limit hit"
    ),
    "unavailable": Failure(
        label="recipient unavailable (131026)",
        status=400,
        code=131026,
        title="Message undeliverable",
    ),
    "server_error": Failure(
        label="platform error (HTTP 503)",
        status=503,
        code=2,
        title="Service temporarily unavailable",
    ),
}
"""The failures a capturing transport can answer, by name: the HTTP status and the code."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CapturedRequest:
    """One request the bot made and what the transport answered (no Authorization header)."""

    method: str
    path: str
    payload: Any
    status: int
    answer: Any
    failure: str | None = None

    @property
    def message_id(self) -> str | None:
        """The id the answer gave the sent message, if it was a send that succeeded."""
        messages = self.answer.get("messages") if isinstance(self.answer, dict) else None
        if isinstance(messages, list) and messages and isinstance(messages[0], dict):
            found = messages[0].get("id")
            return found if isinstance(found, str) else None
        return None


def _error_answer(failure: Failure) -> dict[str, Any]:
    return {
        "error": {
            "message": f"({failure.code}) {failure.title}",
            "type": "OAuthException",
            "code": failure.code,
            "error_data": {"messaging_product": "whatsapp", "details": failure.title},
            "fbtrace_id": "DEVFBTRACE",
        }
    }


def _json_or_none(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


class CapturingTransport(DryRunTransport):
    """A dry run that tells ``on_request`` about every request and can fail the next send."""

    def __init__(self, on_request: Callable[[CapturedRequest], None]) -> None:
        super().__init__(keep_last=0)
        self._on_request = on_request
        self._next_failure: str | None = None

    @property
    def next_failure(self) -> str | None:
        """The name of the failure the next send answers, if one is armed."""
        return self._next_failure

    def fail_next(self, name: str | None) -> None:
        """Answer the next send (not a read mark) with ``FAILURES[name]``; None disarms it."""
        if name is not None and name not in FAILURES:
            raise ValueError("unknown failure")
        self._next_failure = name

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        payload = _json_or_none(body)
        is_send = (
            request.url.path.endswith("/messages")
            and isinstance(payload, dict)
            and payload.get("status") != "read"
        )
        failure = self._next_failure if is_send else None
        if failure is not None:
            self._next_failure = None
            refusal = FAILURES[failure]
            response = httpx.Response(
                refusal.status, json=_error_answer(refusal), request=request
            )
        else:
            response = await super().handle_async_request(request)
        await response.aread()
        self._on_request(
            CapturedRequest(
                method=request.method,
                path=request.url.path,
                payload=payload,
                status=response.status_code,
                answer=_json_or_none(response.content),
                failure=failure,
            )
        )
        return response
