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


MEDIA_URL = "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1"
JWE = "eyJhbGciOiJSU0EtT0FFUCJ9.a2V5.aXY.Y2lwaGVy.dGFn"
DEFINITION = {"id": "1", "name": "order_update", "language": "en_US", "status": "APPROVED",
              "category": "UTILITY", "components": [{"type": "BODY", "text": "Hi"}]}
SAMPLE_ANSWER: dict[str, Any] = {
    "id": "1", "success": True, "data": [], "messaging_product": "whatsapp",
    "messages": [{"id": "wamid.SAMPLE"}], "contacts": [], "code": "QR1", "request_id": "1",
    "solution_id": "1", "access_token": "token", "expires_at": 1,
    "encrypted_contents": JWE, "url": MEDIA_URL, "sha256": "0" * 64, "mime_type": "image/png",
    "file_size": 1, "h": "2:c2FtcGxl", "file_offset": 0, "invite_link": "https://chat.whatsapp.com/x",
    "calls": [{"id": "wacid.1"}], "status": "APPROVED", "category": "UTILITY",
}


def answer_any(request: httpx.Request) -> httpx.Response:
    """An answer every helper can parse (a media URL gets bytes, listings get their items)."""
    if request.url.host == "lookaside.fbsbx.com":
        return httpx.Response(200, content=b"media-bytes")
    if "/join_requests" in request.url.path:
        return httpx.Response(200, json={**SAMPLE_ANSWER, "approved_join_requests": []})
    if request.url.path.endswith("/message_templates") and request.method == "GET":
        return httpx.Response(200, json={"data": [DEFINITION]})
    return httpx.Response(200, json=SAMPLE_ANSWER)
