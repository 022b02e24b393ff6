"""Thread control (pass, take, release) of a conversation shared with Meta's business agent."""

from __future__ import annotations

from typing import Any

import pytest

from svc.graph import GraphApiError, GraphRequestValidationError, ThreadControlResult

from ._admin_wire import PHONE_ID, Upstream, assert_wire

ANSWER = {"messaging_product": "whatsapp"}
USER = "447911123456"
BSUID = "GB.13491208655302741918"


@pytest.mark.parametrize(
    ("call", "kwargs", "body"),
    [
        (
            "pass_thread_control",
            {"to": USER, "target_role": "ai_agent", "metadata": "order K-2041 answered"},
            {
                "to": USER,
                "action": "pass",
                "metadata": "order K-2041 answered",
                "control_pass": {"target_role": "ai_agent"},
            },
        ),
        ("pass_thread_control", {"to": USER}, {"to": USER, "action": "pass"}),
        (
            "take_thread_control",
            {"to": BSUID, "metadata": "escalated"},
            {"recipient": BSUID, "action": "take", "metadata": "escalated"},
        ),
        ("release_thread_control", {"to": USER}, {"to": USER, "action": "release"}),
    ],
)
async def test_each_action_posts_its_exact_body(
    call: str, kwargs: dict[str, Any], body: dict[str, Any]
) -> None:
    upstream = Upstream(ANSWER)
    result = await getattr(upstream.phone(), call)(**kwargs)
    assert_wire(
        upstream.only,
        "POST",
        f"/{PHONE_ID}/thread_control",
        body={"messaging_product": "whatsapp", **body},
    )
    assert result == ThreadControlResult(messaging_product="whatsapp", raw=ANSWER)


@pytest.mark.parametrize(
    ("call", "kwargs", "field"),
    [
        ("pass_thread_control", {"to": "not a number"}, "to"),
        ("pass_thread_control", {"to": USER, "target_role": "human"}, "target_role"),
        ("pass_thread_control", {"to": USER, "metadata": "x" * 2001}, "metadata"),
        ("take_thread_control", {"to": USER, "metadata": "a\nb"}, "metadata"),
    ],
)
async def test_bad_input_is_refused_before_the_transport(
    call: str, kwargs: dict[str, Any], field: str
) -> None:
    upstream = Upstream(ANSWER)
    with pytest.raises(GraphRequestValidationError) as caught:
        await getattr(upstream.phone(), call)(**kwargs)
    assert caught.value.field == field
    assert upstream.requests == []


async def test_a_take_the_platform_refuses_is_a_graph_error() -> None:
    refusal = {"error": {"message": "(#100) take is not permitted", "code": 2494191}}
    upstream = Upstream(refusal, status=400)
    with pytest.raises(GraphApiError) as caught:
        await upstream.phone().take_thread_control(to=USER)
    assert caught.value.code == 2494191
