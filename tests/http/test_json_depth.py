"""Nesting at any depth gets the success or the surface's documented refusal, never a 500.

One limit (``MAX_JSON_DEPTH``) for every JSON document svc reads, enforced by the
parse: the webhook answers ``400 invalid_json``, the API ``400 malformed_json``,
the Flows endpoint ``421`` (its refusal of anything that is not a Flow request).
The expected answer comes from the document's depth as this file counts it
(a character scan of its own), never from svc's code.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from svc._json import MAX_JSON_DEPTH, JsonTooDeepError, loads_strict
from svc.flows import FlowPrivateKey, FlowRequest, FlowScreen, load_flow_private_key
from svc.http import FlowsEndpoint
from svc.store import SqliteStore
from tests._support import FakeGraphTransport, sign

from ..flows._platform import platform_key, private_pem, seal_request
from .conftest import APP_SECRET, AUTH, AppFactory, fixture, post_webhook

DEPTHS = st.integers(min_value=1, max_value=2000)
KINDS = st.sampled_from(["object", "array"])
HOLE = '"__NEST__"'
FLOWS = "/flows/endpoint"
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def nest(kind: str, depth: int) -> str:
    """``depth`` nested objects (``{"a":{"a":{}}}``) or arrays (``[[[]]]``) as JSON text."""
    if kind == "object":
        return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)
    return "[" * depth + "]" * depth


def depth_of(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON ``text`` (a scan of its own)."""
    deepest = depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def place(document: Any, kind: str, depth: int) -> str:
    """``document`` as JSON with its ``"__NEST__"`` string replaced by the nested value."""
    text = json.dumps(document)
    assert text.count(HOLE) == 1
    return text.replace(HOLE, nest(kind, depth))


@contextlib.asynccontextmanager
async def _maybe_store(with_store: bool) -> AsyncIterator[SqliteStore | None]:
    """A migrated in-memory SQLite store, closed after; None for the stateless runs."""
    if not with_store:
        yield None
        return
    store = SqliteStore(":memory:")
    await store.migrate()
    try:
        yield store
    finally:
        await store.close()


def webhook_body(position: str, kind: str, depth: int) -> str:
    envelope = fixture("message_text.json")
    value = envelope["entry"][0]["changes"][0]["value"]
    if position == "envelope":
        envelope["extra"] = "__NEST__"
    elif position == "message":
        value["messages"][0]["text"]["extra"] = "__NEST__"
    else:  # position == "data": a Flow completion's response_json (a string holding JSON)
        message = value["messages"][0]
        message["type"] = "interactive"
        del message["text"]
        response_json = place({"flow_token": "t", "data": "__NEST__"}, kind, depth)
        message["interactive"] = {
            "type": "nfm_reply",
            "nfm_reply": {"name": "flow", "body": "Sent", "response_json": response_json},
        }
        return json.dumps(envelope)
    return place(envelope, kind, depth)


@pytest.mark.slow
@pytest.mark.parametrize("with_store", [False, True], ids=["stateless", "sqlite"])
@SETTINGS
@given(position=st.sampled_from(["envelope", "message", "data"]), kind=KINDS, depth=DEPTHS)
@example(position="message", kind="array", depth=970)
@example(position="message", kind="object", depth=MAX_JSON_DEPTH - 9)
@example(position="message", kind="object", depth=MAX_JSON_DEPTH - 8)
async def test_a_signed_delivery_at_any_depth_is_200_or_invalid_json(
    make_app: AppFactory, with_store: bool, position: str, kind: str, depth: int
) -> None:
    async with _maybe_store(with_store) as store:
        recording: list[Any] = []

        class Facade:
            def coalesce_for(self, update: Any) -> None:
                return None

            def handles(self, update: Any) -> bool:
                return True

            async def run(self, context: Any) -> None:
                recording.append(context.update)

        client = make_app(store=store, facade=Facade()).test_client()
        text = webhook_body(position, kind, depth)
        response = await post_webhook(client, text.encode())
        if depth_of(text) <= MAX_JSON_DEPTH:
            assert response.status_code == 200, await response.get_data()
            assert (await response.get_json())["received"] == 1
            assert [update.kind for update in recording] == ["message"]
            if position == "data":
                content = recording[0].content
                inner = content.response_json
                # A completion too deep to parse reads as None, the update still runs.
                expected = None if depth_of(inner) > MAX_JSON_DEPTH else json.loads(inner)
                assert content.flow_response == expected
        else:
            assert response.status_code == 400
            assert (await response.get_json())["error"]["code"] == "invalid_json"
            assert recording == []


@pytest.mark.slow
@pytest.mark.parametrize("with_store", [False, True], ids=["stateless", "sqlite"])
@SETTINGS
@given(kind=KINDS, depth=DEPTHS, keyed=st.booleans())
@example(kind="array", depth=962, keyed=True)
@example(kind="object", depth=975, keyed=False)
async def test_an_interactive_flow_send_at_any_depth_is_200_or_malformed_json(
    make_app: AppFactory,
    graph: FakeGraphTransport,
    with_store: bool,
    kind: str,
    depth: int,
    keyed: bool,
) -> None:
    async with _maybe_store(with_store) as store:
        client = make_app(store=store).test_client()
        body = {
            "type": "interactiveFlow",
            "to": "15551234567",
            "bodyText": "Book",
            "flowCta": "Go",
            "flowId": "1197715005513101",
            "flowAction": "navigate",
            "screen": "BOOKING",
            "data": {"k": "__NEST__"},
        }
        text = place(body, kind, depth)
        headers = {**AUTH, "Content-Type": "application/json"}
        if keyed:
            headers["Idempotency-Key"] = f"depth-{kind}-{depth}"
        sent_before = len(graph.requests)
        response = await client.post("/api/messages", data=text.encode(), headers=headers)
        if depth_of(text) <= MAX_JSON_DEPTH:
            assert response.status_code == 200, await response.get_data()
            sent = json.loads(graph.requests[-1].content)
            expected = json.loads(text)["data"]
            assert sent["interactive"]["action"]["parameters"]["flow_action_payload"] == {
                "screen": "BOOKING",
                "data": expected,
            }
        else:
            assert response.status_code == 400
            error = (await response.get_json())["error"]
            assert error["code"] == "malformed_json"
            assert error["message"] == (
                f"The request body nests deeper than {MAX_JSON_DEPTH} levels."
            )
            assert len(graph.requests) == sent_before


@pytest.fixture(scope="module")
def flow_key() -> FlowPrivateKey:
    return load_flow_private_key(private_pem(platform_key()))


async def _echo(request: FlowRequest) -> FlowScreen:
    return FlowScreen(screen="NEXT", data={"echo": request.data})


@pytest.mark.slow
@SETTINGS
@given(kind=KINDS, depth=DEPTHS)
@example(kind="object", depth=MAX_JSON_DEPTH - 2)
@example(kind="object", depth=MAX_JSON_DEPTH - 1)
async def test_a_flow_request_at_any_depth_is_answered_or_421(
    make_app: AppFactory, profile: Any, flow_key: FlowPrivateKey, kind: str, depth: int
) -> None:
    app = make_app(
        profile=replace(profile, flows_path=FLOWS),
        flows=FlowsEndpoint(handler=_echo, private_key=flow_key),
    )
    request = {"version": "3.0", "action": "data_exchange", "screen": "S", "flow_token": "t"}
    text = place({**request, "data": {"k": "__NEST__"}}, kind, depth)
    sealed = seal_request(text.encode())
    response = await app.test_client().post(
        FLOWS,
        data=sealed.body,
        headers={"X-Hub-Signature-256": sign(body=sealed.body, secret=APP_SECRET)},
    )
    if depth_of(text) <= MAX_JSON_DEPTH:
        assert response.status_code == 200
        answer = sealed.open_response(await response.get_data())
        assert answer == {"screen": "NEXT", "data": {"echo": json.loads(text)["data"]}}
    else:
        assert response.status_code == 421
        assert await response.get_data() == b"Request decryption failed"


@given(kind=KINDS, depth=DEPTHS, pad=st.sampled_from(["", " ", '"[{"', '"\\"[" ']))
def test_loads_strict_reads_within_the_limit_and_refuses_past_it(
    kind: str, depth: int, pad: str
) -> None:
    """Brackets inside strings never count; the parse's own RecursionError is the same refusal."""
    text = f"[{pad}, {nest(kind, depth)}]" if pad.strip() else nest(kind, depth)
    if depth_of(text) <= MAX_JSON_DEPTH:
        assert loads_strict(text) == json.loads(text)
        assert loads_strict(text.encode()) == json.loads(text)
    else:
        with pytest.raises(JsonTooDeepError):
            loads_strict(text)
