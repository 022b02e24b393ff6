"""The endpoint primitive: define-time and call-time rules, and the exact request on the wire."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from svc.graph import (
    DEFAULT_API_VERSION,
    Endpoint,
    GraphClient,
    GraphRequestValidationError,
    InvalidParameterError,
    Param,
)
from svc.graph._endpoint import route

TOKEN = "EAAG-test-token"


class Recorder:
    """A MockTransport handler that records every request and answers a fixed JSON body."""

    def __init__(self, status: int = 200, answer: Any = None) -> None:
        self.requests: list[httpx.Request] = []
        self.bodies: list[bytes] = []
        self.status = status
        self.answer = {"id": "1"} if answer is None else answer

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(await request.aread())
        self.requests.append(request)
        return httpx.Response(self.status, json=self.answer)

    def client(self) -> GraphClient:
        return GraphClient(access_token=TOKEN, transport=httpx.MockTransport(self))


def path_endpoint(**extra: Any) -> Endpoint:
    return Endpoint(
        method="POST",
        path_template="/{phone_number_id}/messages",
        params={"phone_number_id": Param(in_="path")},
        **extra,
    )


# --- define time ----------------------------------------------------------------------


def test_a_valid_definition_freezes_its_params() -> None:
    params = {"id": Param(in_="path"), "fields": Param(in_="query")}
    endpoint = Endpoint(method="GET", path_template="/{id}", params=params)
    params["extra"] = Param(in_="query")
    assert set(endpoint.params) == {"id", "fields"}
    with pytest.raises(TypeError):
        endpoint.params["x"] = Param(in_="query")  # type: ignore[index]
    with pytest.raises(AttributeError):
        endpoint.method = "POST"  # type: ignore[misc]
    assert endpoint.params["id"].is_required
    assert not endpoint.params["fields"].is_required
    assert Param(in_="query", required=True).is_required


@pytest.mark.parametrize("method", ["get", "HEAD", "OPTIONS", "TRACE", "", "POST ", None, 1])
def test_invalid_method_is_rejected(method: Any) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        Endpoint(method=method, path_template="/me")
    assert caught.value.field == "method"


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
def test_every_allowed_method(method: str) -> None:
    assert Endpoint(method=method, path_template="/me").method == method


@pytest.mark.parametrize(
    "template",
    [
        "",
        None,
        b"/me",
        "me",
        "/me\n",
        "/a\x00b",
        "/a\x7f",
        "/{id",
        "/id}",
        "/{{id}}",
        "/{id}}",
        "/}id{",
        "/{}",
        "/{1id}",
        "/{id-x}",
        "/{id}-x",
        "/x{id}",
        "/{a}{b}",
        "/a//b",
        "/a/",
        "/./a",
        "/a/..",
        "/a?b=1",
        "/a#b",
        "/a\\b",
        "/a b",
    ],
)
def test_bad_path_templates_are_rejected(template: Any) -> None:
    with pytest.raises(GraphRequestValidationError):
        Endpoint(method="GET", path_template=template, params={"id": Param(in_="path")})


def test_duplicate_placeholder_is_rejected() -> None:
    with pytest.raises(GraphRequestValidationError, match="duplicate"):
        Endpoint(method="GET", path_template="/{id}/x/{id}", params={"id": Param(in_="path")})


def test_placeholder_without_path_param_is_rejected() -> None:
    with pytest.raises(GraphRequestValidationError, match="placeholder without"):
        Endpoint(method="GET", path_template="/{id}")
    with pytest.raises(GraphRequestValidationError, match="placeholder without"):
        Endpoint(method="GET", path_template="/{id}", params={"id": Param(in_="query")})


def test_path_param_without_placeholder_is_rejected() -> None:
    with pytest.raises(GraphRequestValidationError, match="without a placeholder"):
        Endpoint(method="GET", path_template="/me", params={"id": Param(in_="path")})


@pytest.mark.parametrize(
    "params",
    [
        {"1bad": Param(in_="query")},
        {"has-dash": Param(in_="query")},
        {"": Param(in_="query")},
        {3: Param(in_="query")},
        {"ok": {"in": "query"}},
        {"ok": "query"},
        [("ok", Param(in_="query"))],
    ],
)
def test_invalid_params_are_rejected(params: Any) -> None:
    with pytest.raises(GraphRequestValidationError):
        Endpoint(method="GET", path_template="/me", params=params)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"in_": "body"},
        {"in_": "header"},
        {"in_": "PATH"},
        {"in_": "query", "required": "yes"},
        {"in_": "path", "required": False},
    ],
)
def test_invalid_param_entries_are_rejected(kwargs: dict[str, Any]) -> None:
    with pytest.raises(GraphRequestValidationError):
        Param(**kwargs)


@pytest.mark.parametrize("build_body", ["not callable", 42, {"a": 1}])
def test_non_callable_build_body_is_rejected(build_body: Any) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        path_endpoint(build_body=build_body)
    assert caught.value.field == "build_body"


@pytest.mark.parametrize("content_type", ["", "  ", "text/plain\r\nX: y", 5])
def test_bad_body_content_type_is_rejected(content_type: Any) -> None:
    with pytest.raises(GraphRequestValidationError):
        path_endpoint(body_content_type=content_type)


# --- call time: what goes on the wire -------------------------------------------------


async def test_json_body_path_and_query_on_the_wire() -> None:
    endpoint = Endpoint(
        method="POST",
        path_template="/{phone_number_id}/settings",
        params={
            "phone_number_id": Param(in_="path"),
            "fields": Param(in_="query"),
            "include_sip_credentials": Param(in_="query"),
            "limit": Param(in_="query"),
            "after": Param(in_="query"),
        },
    )
    recorder = Recorder(answer={"success": True})
    answer = await endpoint.call(
        recorder.client(),
        params={
            "phone_number_id": "106540352242922",
            "fields": "calling,storage configuration&x=1",
            "include_sip_credentials": True,
            "limit": 25,
            "after": None,
        },
        body={"storage_configuration": {"status": "default"}, "text": "héllo"},
        headers={"X-Trace": "abc"},
    )
    assert answer == {"success": True}
    (request,) = recorder.requests
    assert request.method == "POST"
    assert str(request.url) == (
        f"https://graph.facebook.com/{DEFAULT_API_VERSION}/106540352242922/settings"
        "?fields=calling%2Cstorage+configuration%26x%3D1&include_sip_credentials=true&limit=25"
    )
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-trace"] == "abc"
    assert json.loads(recorder.bodies[0]) == {
        "storage_configuration": {"status": "default"},
        "text": "héllo",
    }


async def test_list_body_is_json() -> None:
    recorder = Recorder()
    await path_endpoint().call(recorder.client(), params={"phone_number_id": "1"}, body=[1, "a"])
    assert json.loads(recorder.bodies[0]) == [1, "a"]
    assert recorder.requests[0].headers["content-type"] == "application/json"


async def test_body_content_type_overrides_json_default() -> None:
    recorder = Recorder()
    endpoint = path_endpoint(body_content_type="application/vnd.custom+json")
    await endpoint.call(recorder.client(), params={"phone_number_id": "1"}, body={"a": 1})
    assert recorder.requests[0].headers["content-type"] == "application/vnd.custom+json"
    assert json.loads(recorder.bodies[0]) == {"a": 1}


async def test_bytes_body_passes_verbatim() -> None:
    recorder = Recorder()
    raw = b"--b\r\nContent-Disposition: form-data; name=x\r\n\r\n\x00\xff\r\n--b--\r\n"
    endpoint = path_endpoint(body_content_type="multipart/form-data; boundary=b")
    await endpoint.call(recorder.client(), params={"phone_number_id": "1"}, body=raw)
    assert recorder.bodies[0] == raw
    assert recorder.requests[0].headers["content-type"] == "multipart/form-data; boundary=b"


async def test_form_body_as_bytes_with_caller_content_type() -> None:
    recorder = Recorder()
    await path_endpoint().call(
        recorder.client(),
        params={"phone_number_id": "1"},
        body=bytearray(b"a=1&b=%20"),
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert recorder.bodies[0] == b"a=1&b=%20"
    assert recorder.requests[0].headers.get_list("content-type") == [
        "application/x-www-form-urlencoded"
    ]


async def test_stream_body_passes_verbatim() -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b"abc"
        yield b"\x00def"

    recorder = Recorder()
    endpoint = path_endpoint(body_content_type="application/octet-stream")
    await endpoint.call(recorder.client(), params={"phone_number_id": "1"}, body=chunks())
    assert recorder.bodies[0] == b"abc\x00def"
    assert recorder.requests[0].headers["content-type"] == "application/octet-stream"


async def test_no_body_sends_no_content() -> None:
    recorder = Recorder()
    endpoint = Endpoint(method="GET", path_template="/{id}", params={"id": Param(in_="path")})
    await endpoint.call(recorder.client(), params={"id": "media-1"})
    assert recorder.bodies[0] == b""
    assert "content-type" not in recorder.requests[0].headers
    assert recorder.requests[0].url.raw_path == f"/{DEFAULT_API_VERSION}/media-1".encode()


async def test_build_body_maps_the_call_body_to_the_wire() -> None:
    def build(body: Any) -> dict[str, Any]:
        return {"template_ids": body["templateIds"], "messaging_product": "whatsapp"}

    recorder = Recorder()
    endpoint = path_endpoint(build_body=build)
    await endpoint.call(
        recorder.client(), params={"phone_number_id": "1"}, body={"templateIds": ["7"]}
    )
    assert json.loads(recorder.bodies[0]) == {
        "template_ids": ["7"],
        "messaging_product": "whatsapp",
    }


async def test_path_value_is_percent_encoded() -> None:
    recorder = Recorder()
    endpoint = Endpoint(
        method="GET", path_template="/{upload_id}", params={"upload_id": Param(in_="path")}
    )
    await endpoint.call(recorder.client(), params={"upload_id": "upload:MTph dA=="})
    expected = f"/{DEFAULT_API_VERSION}/upload%3AMTph%20dA%3D%3D".encode()
    assert recorder.requests[0].url.raw_path == expected


async def test_upstream_error_is_typed() -> None:
    recorder = Recorder(status=400, answer={"error": {"code": 100, "message": "bad"}})
    with pytest.raises(InvalidParameterError):
        await path_endpoint().call(recorder.client(), params={"phone_number_id": "1"}, body={})


# --- call time: rejections before the transport ---------------------------------------

Call = Callable[[], Any]


def rejections() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("missing path param", {"params": {}}),
        ("path param None", {"params": {"phone_number_id": None}}),
        ("empty path param", {"params": {"phone_number_id": ""}}),
        ("blank path param", {"params": {"phone_number_id": "   "}}),
        ("dot", {"params": {"phone_number_id": "."}}),
        ("dotdot", {"params": {"phone_number_id": ".."}}),
        ("slash", {"params": {"phone_number_id": "1/2"}}),
        ("backslash", {"params": {"phone_number_id": "1\\2"}}),
        ("question", {"params": {"phone_number_id": "1?a=b"}}),
        ("hash", {"params": {"phone_number_id": "1#x"}}),
        ("nul", {"params": {"phone_number_id": "1\x00"}}),
        ("del", {"params": {"phone_number_id": "1\x7f"}}),
        ("int path param", {"params": {"phone_number_id": 123}}),
        ("encoded dot", {"params": {"phone_number_id": "%2e%2e"}}),
        ("double-encoded slash", {"params": {"phone_number_id": "%252f"}}),
        ("unknown param", {"params": {"phone_number_id": "1", "extra": "x"}}),
        ("params not a mapping", {"params": [("phone_number_id", "1")]}),
        ("missing required query", {"params": {"phone_number_id": "1"}, "required": True}),
        ("query CR", {"params": {"phone_number_id": "1", "fields": "a\rb"}}),
        ("query LF", {"params": {"phone_number_id": "1", "fields": "a\nb"}}),
        ("query NUL", {"params": {"phone_number_id": "1", "fields": "a\x00b"}}),
        ("query list", {"params": {"phone_number_id": "1", "fields": ["a"]}}),
        ("query NaN", {"params": {"phone_number_id": "1", "fields": float("nan")}}),
        ("header CR", {"headers": {"X-A": "a\rb"}}),
        ("header LF", {"headers": {"X-A": "a\nb"}}),
        ("header NUL", {"headers": {"X-A": "a\x00b"}}),
        ("header name LF", {"headers": {"X-A\n": "a"}}),
        ("headers not a mapping", {"headers": [("X-A", "a")], "body": {"a": 1}}),
        ("authorization", {"headers": {"Authorization": "Bearer other"}}),
        ("authorization lower", {"headers": {"authorization": "Bearer other"}}),
        ("authorization mixed", {"headers": {"AuThOrIzAtIoN": "x"}}),
        ("string body", {"body": "text"}),
        ("int body", {"body": 5}),
        ("non-JSON body", {"body": {"a": object()}}),
        ("NaN in body", {"body": {"a": float("inf")}}),
        ("build_body refuses", {"body": {}, "build_body": lambda b: b["missing"]}),
    ]


@pytest.mark.parametrize(("label", "case"), rejections(), ids=[r[0] for r in rejections()])
async def test_rejections_happen_before_the_transport(label: str, case: dict[str, Any]) -> None:
    endpoint = Endpoint(
        method="POST",
        path_template="/{phone_number_id}/messages",
        params={
            "phone_number_id": Param(in_="path"),
            "fields": Param(in_="query", required=case.get("required", False)),
        },
        build_body=case.get("build_body"),
    )
    recorder = Recorder()
    with pytest.raises(GraphRequestValidationError):
        await endpoint.call(
            recorder.client(),
            params=case.get("params", {"phone_number_id": "1"}),
            body=case.get("body"),
            headers=case.get("headers"),
        )
    assert recorder.requests == []


# --- property: no input escapes the intended path -------------------------------------

PROPERTY_ENDPOINT = Endpoint(
    method="GET",
    path_template="/prefix/{value}/suffix",
    params={"value": Param(in_="path")},
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(),
        st.text(alphabet=st.sampled_from(list("./\\?#%25eEfFcC0a:@;= \x00\n")), max_size=16),
    )
)
def test_no_path_param_can_leave_its_segment(value: str) -> None:
    recorder = Recorder()

    async def run() -> None:
        try:
            await PROPERTY_ENDPOINT.call(recorder.client(), params={"value": value})
        except GraphRequestValidationError:
            assert recorder.requests == []
            return
        (request,) = recorder.requests
        assert request.url.host == "graph.facebook.com"
        assert request.url.query == b""
        raw_path = request.url.raw_path.decode("ascii")
        segments = raw_path.split("/")
        assert segments[:3] == ["", DEFAULT_API_VERSION, "prefix"]
        assert segments[4:] == ["suffix"]
        assert unquote(segments[3], errors="strict") == value

    trio.run(run)


# --- route: path params from the template ------------------------------------------------


async def test_route_takes_its_path_params_from_the_template() -> None:
    endpoint = route(
        "DELETE", "/{waba_id}/message_templates/{hsm_id}", name=Param(in_="query", required=True)
    )
    assert endpoint == Endpoint(
        method="DELETE",
        path_template="/{waba_id}/message_templates/{hsm_id}",
        params={
            "waba_id": Param(in_="path"),
            "hsm_id": Param(in_="path"),
            "name": Param(in_="query", required=True),
        },
    )
    recorder = Recorder()
    await endpoint.call(
        recorder.client(), params={"waba_id": "7", "hsm_id": "9", "name": "promo"}
    )
    assert recorder.requests[0].url.path.endswith("/7/message_templates/9")
    assert recorder.requests[0].url.params["name"] == "promo"
    with pytest.raises(GraphRequestValidationError) as caught:
        await endpoint.call(recorder.client(), params={"waba_id": "7", "name": "promo"})
    assert caught.value.field == "hsm_id"


def test_route_takes_any_query_name_and_keeps_the_template_rules() -> None:
    endpoint = route("GET", "/{id}", method=Param(in_="query"))
    assert list(endpoint.params) == ["id", "method"]
    with pytest.raises(GraphRequestValidationError) as caught:
        route("GET", "/{id}", id=Param(in_="query"))
    assert caught.value.field == "params"
    with pytest.raises(GraphRequestValidationError) as caught:
        route("GET", "{id}")
    assert caught.value.field == "path_template"
