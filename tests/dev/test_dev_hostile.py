"""The dev page's actions under hostile bodies: a clear 400 and a session that goes on, never a
500 (any nesting, any JSON value in any field, text UTF-8 cannot carry, ids past 64 bits)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svc._json import MAX_JSON_DEPTH

from .conftest import DevService

pytestmark = pytest.mark.slow

KERRY = {"name": "Kerry", "phone": "16505551234"}
KINDS = [
    "text",
    "reaction",
    "location",
    "contact",
    "button_reply",
    "list_reply",
    "quick_reply",
    "flow",
    "image",
    "document",
]
FIELDS = [
    "text", "emoji", "message_id", "latitude", "longitude", "name", "address", "phone", "id",
    "title", "description", "payload", "response_json", "media_id", "caption", "filename",
]  # fmt: skip
LONE = st.sampled_from(["\ud800", "a\udfffb", "\udbff\udc00\udc00"])
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
    | LONE,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


async def _post(service: DevService, path: str, body: bytes) -> tuple[int, Any]:
    async with service.client() as client:
        response = await client.post(
            path, content=body, headers={"Content-Type": "application/json"}
        )
    # Every answer is ASCII JSON, whatever the body echoes.
    assert response.content, (response.status_code, body[:300])
    return response.status_code, json.loads(response.content.decode("ascii"))


async def _still_answers(service: DevService) -> None:
    text = f"still here {len(service.session.records())}"
    body = json.dumps({"user": KERRY, "action": {"kind": "text", "text": text}}).encode()
    assert (await _post(service, "/dev/api/act", body))[0] == 200
    await service.wait_for(
        lambda r: r["type"] == "send" and f"You said *{text}*" in json.dumps(r.get("payload"))
    )


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 60_000,
        b'{"a":' * 20_000 + b"1" + b"}" * 20_000,
        b'{"user": {"name": "Kerry", "phone": "16505551234"}, "action": '
        + b'{"a":' * (MAX_JSON_DEPTH + 1)
        + b"1"
        + b"}" * (MAX_JSON_DEPTH + 2),
    ],
    ids=["arrays", "objects", "one-past-the-limit"],
)
async def test_a_body_nested_past_the_limit_is_a_400(dev_service: DevService, body: bytes) -> None:
    status, answer = await _post(dev_service, "/dev/api/act", body)
    assert status == 400
    assert f"{MAX_JSON_DEPTH} levels deep" in answer["error"]
    await _still_answers(dev_service)


async def test_a_flow_answer_nested_past_any_limit_is_a_400(dev_service: DevService) -> None:
    action = {"kind": "flow", "response_json": "[" * 4_000}  # the parser's recursion, exhausted
    status, answer = await _post(
        dev_service, "/dev/api/act", json.dumps({"user": KERRY, "action": action}).encode()
    )
    assert (status, answer) == (400, {"error": "response_json must be a JSON object"})
    await _still_answers(dev_service)


@pytest.mark.parametrize("field", ["text", "name"])
async def test_text_utf8_cannot_carry_is_a_400(dev_service: DevService, field: str) -> None:
    user = {**KERRY, "name": "Ker\ud800ry"} if field == "name" else KERRY
    action = {"kind": "text", "text": "hi \ud800" if field == "text" else "hi"}
    status, answer = await _post(
        dev_service, "/dev/api/act", json.dumps({"user": user, "action": action}).encode()
    )
    assert status == 400
    assert answer["error"].startswith(f"{'user.name' if field == 'name' else 'text'} must be")
    await _still_answers(dev_service)


@pytest.mark.parametrize("path", ["/dev/api/dead/retry", "/dev/api/dead/drop"])
@pytest.mark.parametrize("item", [2**63, 2**80, 0, -1, 1.5, "1", True])
async def test_an_id_no_inbox_item_can_have_is_a_400(
    dev_service: DevService, path: str, item: object
) -> None:
    status, answer = await _post(dev_service, path, json.dumps({"id": item}).encode())
    assert (status, answer) == (400, {"error": "id must be an inbox item id"})


async def test_an_open_chat_echoes_any_key_as_ascii_and_refuses_a_long_or_odd_one(
    dev_service: DevService,
) -> None:
    odd = "\x00\ud800"
    assert await _post(dev_service, "/dev/api/open", json.dumps({"chat": odd}).encode()) == (
        200,
        {"open": odd},
    )
    for refused in ("x" * 129, 5, ["a"]):
        status, _ = await _post(
            dev_service, "/dev/api/open", json.dumps({"chat": refused}).encode()
        )
        assert status == 400, refused
    assert await _post(dev_service, "/dev/api/open", b'{"chat": ""}') == (200, {"open": None})


async def test_any_action_is_answered_200_or_400(dev_service: DevService) -> None:
    # Hypothesis drives the examples from a worker thread; each is posted on the test's loop.
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        kind=st.sampled_from(KINDS) | VALUES,
        fields=st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=5),
        user=st.sampled_from([KERRY]) | VALUES,
    )
    def check(kind: Any, fields: dict[str, Any], user: Any) -> None:
        body = json.dumps({"user": user, "action": {**fields, "kind": kind}}).encode()
        status, answer = trio.from_thread.run(_post, dev_service, "/dev/api/act", body)
        assert status in (200, 400), answer
        if status == 400:
            assert isinstance(answer["error"], str) and answer["error"]

    await trio.to_thread.run_sync(check)
    await _still_answers(dev_service)


async def test_after_any_actions_the_page_still_answers(dev_service: DevService) -> None:
    # The property test above shares no service with this one: a fresh one, then a burst of
    # refusals of every kind, then a plain text answered.
    for kind in KINDS:
        body = json.dumps({"user": KERRY, "action": {"kind": kind, "text": "\ud800"}}).encode()
        assert (await _post(dev_service, "/dev/api/act", body))[0] in (200, 400)
    await _still_answers(dev_service)
