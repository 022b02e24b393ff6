"""Shared fakes for the admin helper tests: a recording ``httpx.MockTransport`` upstream."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from svc.graph import (
    DEFAULT_API_VERSION,
    AppClient,
    BusinessClient,
    GraphClient,
    GroupClient,
    PhoneNumberClient,
    SolutionClient,
    WABAClient,
)

PHONE_ID = "106540352242922"
WABA_ID = "102290129340398"
GROUP_ID = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD"
BUSINESS_ID = "506914307656634"
APP_ID = "670843887433847"
SOLUTION_ID = "1234567890123456"
VERSION = DEFAULT_API_VERSION


class Upstream:
    """Answers each request with the next canned JSON body and records what was sent."""

    def __init__(self, *answers: Any, status: int = 200) -> None:
        self.answers = list(answers)
        self.status = status
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if self.answers else {"success": True}
        return httpx.Response(self.status, json=answer)

    def client(self) -> GraphClient:
        return GraphClient(access_token="test-token", transport=httpx.MockTransport(self))

    def phone(self) -> PhoneNumberClient:
        return PhoneNumberClient(self.client(), phone_number_id=PHONE_ID)

    def waba(self) -> WABAClient:
        return WABAClient(self.client(), waba_id=WABA_ID)

    def group(self, group_id: str = GROUP_ID) -> GroupClient:
        return GroupClient(self.client(), group_id=group_id)

    def business(self) -> BusinessClient:
        return BusinessClient(self.client(), business_id=BUSINESS_ID)

    def app(self) -> AppClient:
        return AppClient(self.client(), app_id=APP_ID)

    def solution(self) -> SolutionClient:
        return SolutionClient(self.client(), solution_id=SOLUTION_ID)

    @property
    def only(self) -> httpx.Request:
        assert len(self.requests) == 1, f"expected one request, saw {len(self.requests)}"
        return self.requests[0]


def assert_wire(
    request: httpx.Request,
    method: str,
    path: str,
    *,
    query: Mapping[str, str] | None = None,
    body: Any = None,
) -> None:
    """The exact method, path (after the version), query and JSON body of ``request``."""
    assert request.method == method
    assert request.url.raw_path.split(b"?")[0].decode() == f"/{VERSION}{path}"
    assert dict(request.url.params) == dict(query or {})
    assert len(request.url.params.multi_items()) == len(query or {})
    if body is None:
        assert request.content == b""
    else:
        assert request.headers["content-type"] == "application/json"
        assert json.loads(request.content) == body
    assert request.headers["authorization"] == "Bearer test-token"
