"""GraphClient: construction rules, the request on the wire, error mapping, dry runs, runtimes."""

from __future__ import annotations

import asyncio
import json
import traceback
from typing import Any

import httpx
import pytest
import trio

from svc.graph import (
    DEFAULT_API_VERSION,
    DryRunTransport,
    GraphApiError,
    GraphClient,
    GraphError,
    GraphNetworkError,
    GraphRateLimitError,
    GraphRequestValidationError,
    GraphSerializationError,
    InvalidParameterError,
)

TOKEN = "EAAGsecretTOKEN123"


class Recorder:
    """Records every request; answers with ``response`` (or raises ``exc``)."""

    def __init__(self, response: httpx.Response | None = None, exc: Exception | None = None):
        self.requests: list[httpx.Request] = []
        self.response = response
        self.exc = exc

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.exc is not None:
            raise self.exc
        if self.response is not None:
            return self.response
        return httpx.Response(200, json={"id": "1"})

    def client(self, **kwargs: Any) -> GraphClient:
        return GraphClient(access_token=TOKEN, transport=httpx.MockTransport(self), **kwargs)


# --- construction ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "token",
    [
        "",
        " ",
        "   \t ",
        "a" * 4097,
        "abc\rdef",
        "abc\ndef",
        "abc\x00def",
        "abc\x01def",
        "abc\x7fdef",
        " padded",
        "padded ",
        "two words",
        "tökén",
        None,
        123,
        b"EAAG",
    ],
)
def test_access_token_rules(token: Any) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        GraphClient(access_token=token)
    assert caught.value.field == "access_token"
    if isinstance(token, str) and len(token) > 3:
        assert token not in str(caught.value)


def test_access_token_of_4096_characters_is_accepted() -> None:
    GraphClient(access_token="a" * 4096, transport=httpx.MockTransport(Recorder()))


@pytest.mark.parametrize("version", ["v25.0", "v1", "v19.0", "v100.12"])
def test_valid_api_versions(version: str) -> None:
    client = Recorder().client(api_version=version)
    assert client.api_version == version
    assert client.url_for("/me") == httpx.URL(f"https://graph.facebook.com/{version}/me")


@pytest.mark.parametrize(
    "version",
    ["", "25.0", "v", "v25.", "v25.0.1", "V25.0", "v25.0\n", "v25.0 ", " v25.0", "v2\u0665", None],
)
def test_invalid_api_versions(version: Any) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        GraphClient(access_token=TOKEN, api_version=version)
    assert caught.value.field == "api_version"


def test_default_api_version() -> None:
    assert DEFAULT_API_VERSION == "v26.0"
    assert GraphClient(access_token=TOKEN).api_version == "v26.0"


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8080",
        "https://graph.facebook.com/",
        "https://h.test/proxy",
        "https://xn--zz.test/proxy",  # a malformed IDNA label: the host is taken as written
    ],
)
def test_http_and_https_base_urls(base_url: str) -> None:
    client = Recorder().client(base_url=base_url)
    assert str(client.url_for("/me")) == f"{base_url.rstrip('/')}/{DEFAULT_API_VERSION}/me"


@pytest.mark.parametrize(
    "base_url",
    [
        "ftp://graph.facebook.com",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "graph.facebook.com",
        "https://",
        "https://user:pw@graph.facebook.com",
        "https://graph.facebook.com?x=1",
        "https://graph.facebook.com#frag",
        "https://graph.facebook.com\n",
        "",
        None,
    ],
)
def test_other_base_urls_are_rejected(base_url: Any) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        GraphClient(access_token=TOKEN, base_url=base_url)
    assert caught.value.field == "base_url"


def test_transport_must_be_an_async_transport() -> None:
    with pytest.raises(GraphRequestValidationError):
        GraphClient(access_token=TOKEN, transport=object())  # type: ignore[arg-type]


def test_token_never_in_repr_or_str() -> None:
    client = Recorder().client()
    assert TOKEN not in repr(client)
    assert TOKEN not in str(client)
    assert repr(client) == (
        f"GraphClient(api_version='{DEFAULT_API_VERSION}', base_url='https://graph.facebook.com')"
    )


# --- the request on the wire ----------------------------------------------------------


async def test_request_adds_authorization_and_sends_json() -> None:
    recorder = Recorder()
    answer = await recorder.client().request(
        "post",
        "/106540352242922/messages",
        json={"to": "15551234567", "text": {"body": "hé"}},
        headers={"X-Request-Id": "r1"},
    )
    assert answer == {"id": "1"}
    (request,) = recorder.requests
    assert request.method == "POST"
    assert str(request.url) == f"https://graph.facebook.com/{DEFAULT_API_VERSION}/106540352242922/messages"
    assert request.headers.get_list("authorization") == [f"Bearer {TOKEN}"]
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-request-id"] == "r1"
    assert json.loads(request.content) == {"to": "15551234567", "text": {"body": "hé"}}


async def test_requests_carry_the_documented_timeouts() -> None:
    """10 s to connect, 30 s for each read (and write and pool wait), unless the caller sets one."""
    recorder = Recorder()
    await recorder.client().request("GET", "/106540352242922")
    (request,) = recorder.requests
    expected = {"connect": 10.0, "read": 30.0, "write": 30.0, "pool": 30.0}
    assert request.extensions["timeout"] == expected


async def test_content_is_sent_verbatim() -> None:
    recorder = Recorder()
    await recorder.client().request(
        "POST", "/1/media", content=b"\x00raw", headers={"Content-Type": "image/png"}
    )
    (request,) = recorder.requests
    assert request.content == b"\x00raw"
    assert request.headers["content-type"] == "image/png"


async def test_query_none_is_omitted_and_values_are_encoded() -> None:
    recorder = Recorder()
    await recorder.client().request(
        "GET",
        "/1/groups",
        query={
            "fields": "id,subject",
            "after": None,
            "limit": 10,
            "ratio": 0.5,
            "include": False,
            "q": "a b&c=d/é",
        },
    )
    assert str(recorder.requests[0].url) == (
        f"https://graph.facebook.com/{DEFAULT_API_VERSION}/1/groups"
        "?fields=id%2Csubject&limit=10&ratio=0.5&include=false&q=a+b%26c%3Dd%2F%C3%A9"
    )


@pytest.mark.parametrize(
    "name", ["Authorization", "authorization", "AUTHORIZATION", "aUtHoRiZaTiOn"]
)
async def test_caller_authorization_is_rejected_in_any_casing(name: str) -> None:
    recorder = Recorder()
    with pytest.raises(GraphRequestValidationError) as caught:
        await recorder.client().request("GET", "/me", headers={name: "Bearer other"})
    assert caught.value.field == "headers"
    assert recorder.requests == []


@pytest.mark.parametrize(
    "headers",
    [
        {"X-A": "a\rb"},
        {"X-A": "a\nb"},
        {"X-A": "a\x00b"},
        {"X-A\r": "a"},
        {"X\nA": "a"},
        {"X-\x00": "a"},
        {"X A": "a"},
        {"X-A": "é"},
        {"X-A": "a\x01"},
        {"X-A": 1},
        {1: "a"},
    ],
)
async def test_bad_headers_are_rejected_before_transport(headers: Any) -> None:
    recorder = Recorder()
    with pytest.raises(GraphRequestValidationError):
        await recorder.client().request("GET", "/me", headers=headers)
    assert recorder.requests == []


@pytest.mark.parametrize(
    "query",
    [
        {"a": "x\ry"},
        {"a": "x\ny"},
        {"a": "x\x00y"},
        {"a\n": "x"},
        {"a": ["x"]},
        {"a": float("inf")},
        {1: "x"},
        {"": "x"},
        [("a", "x")],
    ],
)
async def test_bad_query_is_rejected_before_transport(query: Any) -> None:
    recorder = Recorder()
    with pytest.raises(GraphRequestValidationError):
        await recorder.client().request("GET", "/me", query=query)
    assert recorder.requests == []


@pytest.mark.parametrize(
    "path", ["me", "", "/a b", "/a?b", "/a#b", "/a\\b", "/a/../b", "/./a", "//a", "/a/", "/a\n"]
)
async def test_unsafe_paths_are_rejected(path: str) -> None:
    recorder = Recorder()
    with pytest.raises(GraphRequestValidationError) as caught:
        await recorder.client().request("GET", path)
    assert caught.value.field == "path"
    assert recorder.requests == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"method": "GE T"},
        {"method": ""},
        {"method": None},
        {"json": {"a": 1}, "content": b"x"},
        {"json": {"a": object()}},
        {"json": {"a": float("nan")}},
        {"content": "text"},
    ],
)
async def test_bad_method_or_body_is_rejected(kwargs: dict[str, Any]) -> None:
    recorder = Recorder()
    method = kwargs.pop("method", "POST")
    with pytest.raises(GraphRequestValidationError):
        await recorder.client().request(method, "/me", **kwargs)
    assert recorder.requests == []


# --- answers and failures -------------------------------------------------------------


@pytest.mark.parametrize(
    "exc",
    [
        httpx.ConnectError("connection refused to graph.facebook.com"),
        httpx.ReadTimeout("timed out"),
        httpx.RemoteProtocolError("peer closed"),
        OSError("network unreachable"),
    ],
)
async def test_transport_failures_are_network_errors(exc: Exception) -> None:
    client = Recorder(exc=exc).client()
    with pytest.raises(GraphNetworkError) as caught:
        await client.request("GET", "/me")
    error = caught.value
    assert not isinstance(error, GraphApiError)
    assert isinstance(error, GraphError)
    assert str(error) == f"Graph transport failed: {type(exc).__name__}"
    rendered = "".join(traceback.format_exception(error))
    assert TOKEN not in rendered
    assert error.__cause__ is None


@pytest.mark.parametrize(
    "content", [b"not json", b"\xff\xfe", b"{", b"[1, 2]", b'"text"', b"true", b"null"]
)
async def test_2xx_that_is_not_a_json_object_is_a_serialization_error(content: bytes) -> None:
    client = Recorder(httpx.Response(200, content=content)).client()
    with pytest.raises(GraphSerializationError) as caught:
        await client.request("GET", "/me")
    assert not isinstance(caught.value, GraphApiError)


@pytest.mark.parametrize("depth", [65, 970, 5000])
async def test_answers_nested_past_the_json_limit_never_raise_recursion_errors(depth: int) -> None:
    """A 2xx past ``MAX_JSON_DEPTH`` is a serialization error; an error answer that deep is
    still typed from its status (its body unread, as for any body that is not JSON)."""
    deep = b'{"a":' + b"[" * depth + b"]" * depth + b"}"
    with pytest.raises(GraphSerializationError):
        await Recorder(httpx.Response(200, content=deep)).client().request("GET", "/me")
    with pytest.raises(GraphRateLimitError) as caught:
        await Recorder(httpx.Response(429, content=deep)).client().request("GET", "/me")
    assert (caught.value.status, caught.value.code, caught.value.payload) == (429, None, None)


async def test_empty_2xx_body_is_an_empty_object() -> None:
    assert await Recorder(httpx.Response(204)).client().request("DELETE", "/1") == {}


async def test_error_answers_are_typed_and_keep_retry_after() -> None:
    answer = httpx.Response(
        400,
        headers={"Retry-After": "3"},
        json={
            "error": {
                "message": "(#100) Invalid parameter",
                "type": "OAuthException",
                "code": 100,
                "error_subcode": 2494010,
                "fbtrace_id": "AzXy",
            }
        },
    )
    client = Recorder(answer).client()
    with pytest.raises(InvalidParameterError) as caught:
        await client.request("POST", "/1/messages", json={})
    error = caught.value
    assert (error.status, error.code, error.error_subcode) == (400, 100, 2494010)
    assert (error.type, error.fbtrace_id, error.retry_after) == ("OAuthException", "AzXy", "3")
    assert error.upstream_message == "(#100) Invalid parameter"
    assert str(error) == "Graph API error 100/2494010 (HTTP 400)"
    for text in (str(error), repr(error), "".join(traceback.format_exception(error))):
        assert TOKEN not in text


async def test_non_json_error_body_is_still_typed() -> None:
    client = Recorder(httpx.Response(429, text="slow down", headers={"retry-after": "9"})).client()
    with pytest.raises(GraphRateLimitError) as caught:
        await client.request("GET", "/me")
    assert (caught.value.status, caught.value.retry_after, caught.value.payload) == (429, "9", None)


async def test_redirects_are_not_followed() -> None:
    client = Recorder(httpx.Response(302, headers={"Location": "https://evil.test/"})).client()
    with pytest.raises(GraphApiError) as caught:
        await client.request("GET", "/me")
    assert caught.value.status == 302


async def test_stream_yields_the_unread_response() -> None:
    recorder = Recorder(httpx.Response(200, content=b"media-bytes"))
    client = recorder.client()
    async with client.stream("GET", "https://lookaside.fbsbx.com/whatsapp/x") as response:
        assert await response.aread() == b"media-bytes"
    assert recorder.requests[0].headers["authorization"] == f"Bearer {TOKEN}"


# --- dry run --------------------------------------------------------------------------


async def test_dry_run_answers_with_unique_ids_and_no_network() -> None:
    first, second = DryRunTransport(), DryRunTransport()
    ids = []
    for transport in (first, second, first):
        async with GraphClient(access_token=TOKEN, transport=transport) as client:
            answer = await client.request(
                "POST", "/106540352242922/messages", json={"to": "+15551234567"}
            )
        assert answer["dryRun"] is True
        assert answer["messaging_product"] == "whatsapp"
        assert answer["contacts"] == [{"input": "+15551234567", "wa_id": "15551234567"}]
        (message,) = answer["messages"]
        ids.append(message["id"])
    assert all(i.startswith("wamid.DRYRUN.") for i in ids)
    assert len(set(ids)) == 3
    kept = first.requests + second.requests
    assert len(kept) == 3
    assert all("authorization" not in r.headers for r in kept)
    assert str(kept[0].url) == f"https://graph.facebook.com/{DEFAULT_API_VERSION}/106540352242922/messages"


async def test_dry_run_non_send_answers_carry_id_and_success() -> None:
    async with GraphClient(access_token=TOKEN, transport=DryRunTransport()) as client:
        answer = await client.request("DELETE", "/media-1")
    assert answer["success"] is True
    assert answer["id"].startswith("DRYRUN.")


async def test_dry_run_keeps_a_bounded_history() -> None:
    bounded, none = DryRunTransport(keep_last=2), DryRunTransport(keep_last=0)
    for transport in (bounded, none):
        async with GraphClient(access_token=TOKEN, transport=transport) as client:
            for n in range(4):
                await client.request("GET", f"/{n}")
    assert [r.url.path for r in bounded.requests] == [
        f"/{DEFAULT_API_VERSION}/2",
        f"/{DEFAULT_API_VERSION}/3",
    ]
    assert none.requests == []


async def test_dry_run_keeps_the_last_100_by_default() -> None:
    transport = DryRunTransport()
    async with GraphClient(access_token=TOKEN, transport=transport) as client:
        for n in range(101):
            await client.request("GET", f"/{n}")
    assert [r.url.path for r in transport.requests] == [
        f"/{DEFAULT_API_VERSION}/{n}" for n in range(1, 101)
    ]


@pytest.mark.parametrize("keep_last", [-1, True, 1.5])
def test_dry_run_keep_last_must_be_a_count(keep_last: Any) -> None:
    with pytest.raises(GraphRequestValidationError):
        DryRunTransport(keep_last=keep_last)


# --- both runtimes --------------------------------------------------------------------


async def test_runs_under_trio() -> None:
    assert trio.lowlevel.current_trio_token() is not None
    recorder = Recorder()
    async with recorder.client() as client:
        assert await client.request("GET", "/me") == {"id": "1"}
    assert len(recorder.requests) == 1


def test_runs_under_asyncio() -> None:
    recorder = Recorder()

    async def main() -> Any:
        asyncio.get_running_loop()
        async with recorder.client() as client:
            return await client.request("GET", "/me", query={"fields": "id"})

    assert asyncio.run(main()) == {"id": "1"}
    assert str(recorder.requests[0].url) == f"https://graph.facebook.com/{DEFAULT_API_VERSION}/me?fields=id"


async def test_absolute_url_keeps_its_own_query_string() -> None:
    """Media CDN URLs carry their signature in the query; building a request must keep it."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=b"ok")

    client = GraphClient(access_token="EAAGtoken", transport=httpx.MockTransport(handler))
    url = "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1&ext=2&hash=abc"
    async with client.stream("GET", url) as response:
        await response.aread()
    await client.aclose()
    assert str(seen[0].url) == url
