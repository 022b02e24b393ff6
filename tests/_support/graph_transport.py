"""A fake Graph API at the transport (``httpx.MockTransport``), for tests of an in-process app.

(Tests that run ``svc serve`` as a child process use ``graph_server.FakeGraph``, on a socket.)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from .graph_server import send_answer


@dataclass
class FakeGraphTransport:
    """A transport-level fake of the Graph API that records every request it gets.

    ``answers`` are used first, in order: a response is answered, an exception
    raised (``httpx.ConnectError``: no connection; ``httpx.ReadTimeout``: sent,
    never answered).
    """

    requests: list[httpx.Request] = field(default_factory=list)
    answers: list[httpx.Response | Exception] = field(default_factory=list)
    counter: int = 0

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.answers:
            answer = self.answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer
        self.counter += 1
        body = json.loads(request.content) if request.content else {}
        if request.url.path.endswith("/messages"):
            return httpx.Response(
                200, json=send_answer(body.get("to"), f"wamid.TEST{self.counter}")
            )
        return httpx.Response(200, json={"success": True, "request_id": f"req{self.counter}"})

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handler)

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]
