"""Scoped clients: one bound id, construction rejections, and edge requests on the wire."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from svc.graph import (
    DEFAULT_API_VERSION,
    GraphClient,
    GraphRequestValidationError,
    GroupClient,
    PhoneNumberClient,
    WABAClient,
)
from svc.graph._send import MessageSender

TOKEN = "EAAG-test-token"


class Recorder:
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json={"success": True})

    def client(self) -> GraphClient:
        return GraphClient(access_token=TOKEN, transport=httpx.MockTransport(self))


SCOPES: list[tuple[type[Any], str]] = [
    (PhoneNumberClient, "phone_number_id"),
    (WABAClient, "waba_id"),
    (GroupClient, "group_id"),
]


@pytest.mark.parametrize(("cls", "field"), SCOPES)
def test_binds_client_and_id(cls: type[Any], field: str) -> None:
    client = Recorder().client()
    scoped = cls(client, **{field: "102290129340398"})
    assert scoped.client is client
    assert getattr(scoped, field) == "102290129340398"
    assert repr(scoped) == f"{cls.__name__}({field}='102290129340398')"
    assert TOKEN not in repr(scoped)


@pytest.mark.parametrize(("cls", "field"), SCOPES)
@pytest.mark.parametrize(
    "bad_id",
    ["", "   ", "\t", ".", "..", "1/2", "1\\2", "1?x", "1#x", "1\x00", "1\n", "%2e%2e", None, 1],
)
def test_rejects_an_empty_or_unsafe_id(cls: type[Any], field: str, bad_id: Any) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        cls(Recorder().client(), **{field: bad_id})
    assert caught.value.field == field


class NoRequest:
    request = "not callable"


@pytest.mark.parametrize(("cls", "field"), SCOPES)
@pytest.mark.parametrize("bad_client", [None, {}, "client", 42, NoRequest(), object()])
def test_rejects_a_client_without_request(cls: type[Any], field: str, bad_client: Any) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        cls(bad_client, **{field: "1"})
    assert caught.value.field == "client"


@pytest.mark.parametrize(("cls", "field"), SCOPES)
def test_id_is_keyword_only(cls: type[Any], field: str) -> None:
    with pytest.raises(TypeError):
        cls(Recorder().client(), "1")


@pytest.mark.parametrize(("cls", "field"), SCOPES)
async def test_request_targets_edges_below_the_id(cls: type[Any], field: str) -> None:
    recorder = Recorder()
    scoped = cls(recorder.client(), **{field: "120363"})
    assert await scoped.request("GET", "invite_link", query={"fields": "link"}) == {"success": True}
    await scoped.request("DELETE")
    await scoped.request("POST", "join_requests", json={"join_requests": ["a"]})
    first, second, third = recorder.requests
    assert (first.method, str(first.url)) == (
        "GET",
        f"https://graph.facebook.com/{DEFAULT_API_VERSION}/120363/invite_link?fields=link",
    )
    prefix = f"/{DEFAULT_API_VERSION}/120363"
    assert (second.method, second.url.raw_path) == ("DELETE", prefix.encode())
    assert (third.method, third.url.raw_path) == ("POST", f"{prefix}/join_requests".encode())
    assert json.loads(third.content) == {"join_requests": ["a"]}
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in recorder.requests)


async def test_id_with_reserved_characters_is_encoded_on_the_wire() -> None:
    recorder = Recorder()
    group = GroupClient(recorder.client(), group_id="group:abc=")
    await group.request("GET")
    assert recorder.requests[0].url.raw_path == f"/{DEFAULT_API_VERSION}/group%3Aabc%3D".encode()


@pytest.mark.parametrize("edge", ["..", "a/../b", "a//b", "a?b", "a#b", "/a", "a/", 3, None])
async def test_unsafe_edges_are_rejected_before_transport(edge: Any) -> None:
    recorder = Recorder()
    waba = WABAClient(recorder.client(), waba_id="1")
    with pytest.raises(GraphRequestValidationError):
        await waba.request("GET", edge)
    assert recorder.requests == []


async def test_phone_number_client_posts_phone_edges_as_json() -> None:
    recorder = Recorder()
    phone = PhoneNumberClient(recorder.client(), phone_number_id="106540352242922")
    assert isinstance(phone, MessageSender)
    payload = {"messaging_product": "whatsapp", "to": "15551234567", "type": "text"}
    assert await phone._post_phone_edge("messages", payload) == {"success": True}
    (request,) = recorder.requests
    assert request.method == "POST"
    assert str(request.url) == f"https://graph.facebook.com/{DEFAULT_API_VERSION}/106540352242922/messages"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == payload


async def test_scoped_client_accepts_any_object_with_request() -> None:
    calls: list[tuple[Any, ...]] = []

    class FakeClient:
        async def request(self, method: str, path: str, **kwargs: Any) -> Any:
            calls.append((method, path, kwargs["json"]))
            return {"ok": True}

    phone = PhoneNumberClient(FakeClient(), phone_number_id="1")  # type: ignore[arg-type]
    assert await phone._post_phone_edge("marketing_messages", {"a": 1}) == {"ok": True}
    assert calls == [("POST", "/1/marketing_messages", {"a": 1})]
