"""Transports the Graph client runs on: the network, or a dry run that stays in process."""

from __future__ import annotations

import itertools
import secrets

import httpx

from ._builders import is_read_receipt_payload
from ._errors import GraphRequestValidationError
from ._parse import json_object

__all__ = ["DEFAULT_TIMEOUT", "DryRunTransport", "default_transport"]

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
"""Upstream timeouts: 10 s to connect, 30 s for each read, write and pool wait."""

_RUN = secrets.token_hex(8)
"""Random per process, so dry-run ids never repeat across restarts (a store may outlive a run)."""
_COUNTER = itertools.count(1)
"""Shared by every DryRunTransport of the process, so two transports never share an id."""


def default_transport() -> httpx.AsyncBaseTransport:
    """The network transport: TLS verification on, no automatic retries (callers decide)."""
    return httpx.AsyncHTTPTransport(retries=0, http2=False)


class DryRunTransport(httpx.AsyncBaseTransport):
    """Answers every request itself with a synthetic success and never touches the network.

    Each answer carries a unique ``wamid.DRYRUN.<unique>`` message id
    (decisions.md section 5): a 16-hex-digit per-process prefix and a
    process-wide counter. The last ``keep_last`` requests are kept in
    ``requests`` so a dry run can be inspected; their Authorization header is
    dropped before they are kept.
    """

    def __init__(self, *, keep_last: int = 100) -> None:
        if isinstance(keep_last, bool) or not isinstance(keep_last, int) or keep_last < 0:
            raise GraphRequestValidationError(
                "keep_last must be a non-negative integer", field="keep_last"
            )
        self._keep_last = keep_last
        self.requests: list[httpx.Request] = []

    def next_message_id(self) -> str:
        """Return a message id no earlier answer of any dry run has used."""
        return f"wamid.DRYRUN.{_RUN}{next(_COUNTER)}"

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        message_id = self.next_message_id()
        answer: dict[str, object] = {
            "messaging_product": "whatsapp",
            "contacts": _contacts_for(body),
            "messages": [{"id": message_id}],
            "dryRun": True,
        }
        if _is_read_receipt(body):
            answer = {"success": True, "dryRun": True}
        elif not request.url.path.endswith("/messages"):
            # Non-send endpoints (media upload, groups, deletes) read an id, a success
            # flag, a group mutation's request_id or an invite link; the send shape
            # above stays intact.
            answer["id"] = message_id.removeprefix("wamid.")
            answer["success"] = True
            answer["request_id"] = answer["id"]
            if request.url.path.endswith("/invite_link"):
                answer["invite_link"] = f"https://chat.whatsapp.com/{answer['id']}"
        self._keep(request)
        return httpx.Response(200, json=answer, request=request)

    def _keep(self, request: httpx.Request) -> None:
        if self._keep_last == 0:
            return
        headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"authorization"]
        self.requests.append(
            httpx.Request(request.method, request.url, headers=headers, content=request.content)
        )
        del self.requests[: -self._keep_last]


def _is_read_receipt(body: bytes) -> bool:
    """A read receipt answers ``{"success": true}`` upstream, not the send shape."""
    payload = json_object(body)
    return payload is not None and is_read_receipt_payload(payload)


def _contacts_for(body: bytes) -> list[dict[str, str]]:
    payload = json_object(body)
    to = payload.get("to") if payload is not None else None
    if not isinstance(to, str):
        return []
    return [{"input": to, "wa_id": to.lstrip("+")}]
